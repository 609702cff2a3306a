"""How the paste is read, as a user sees it in the answer (round 43 of the new-user trial): the
flags of a launch command a shell quotes or a pasted line cuts off, the model path of a ServerArgs
dump, the root error without the user's sentence after it, a report's title or a caption never
shown as the root error, and a traceback cut before its exception line asked for its end."""

from __future__ import annotations

QUOTED_BY_BASH = ("Loading the quantized model fails.\n"
                  "nohup bash -c 'CUDA_VISIBLE_DEVICES=1 sglang serve \\\n"
                  "  --model-path qwen2_5_vl_7b/ \\\n"
                  "  --tp 1 \\\n"
                  "  --enable-multimodal' \\\n"
                  "  > ./local.log 2>&1 &\n")


def test_the_last_flag_of_a_command_quoted_for_bash_is_read(assistant):
    answer = assistant.answer(QUOTED_BY_BASH)
    assert answer.detected.flags == ("--model-path qwen2_5_vl_7b/", "--tp 1", "--enable-multimodal")
    # the redirect on the continuation line is the command's, not a Markdown quote mark
    assert answer.detected.launch_command.endswith("--enable-multimodal' > ./local.log 2>&1 &")
    assert "--enable-multimodal" in answer.text.split("Detected:")[1].splitlines()[0]


def test_a_quoted_value_keeps_its_quotes(assistant):
    answer = assistant.answer("python -m sglang.launch_server --model-path /m --chat-template='chatml'\n"
                              "RuntimeError: frobnicator quorum lost in widget pool 7\n")
    assert "--chat-template 'chatml'" in answer.detected.flags


def test_a_flag_cut_off_by_the_end_of_the_pasted_line_is_not_shown(assistant):
    answer = assistant.answer(
        "Failed to deploy.\n"
        "2026-01-29 11:29:45 - gpustack.worker.backends.sglang - INFO - With image: x, arguments: "
        "[python -m sglang.launch_server --model-path /data/models/Qwen3-30B --contex\n")
    assert answer.detected.flags == ("--model-path /data/models/Qwen3-30B",)
    assert "--contex" not in answer.text.split("Detected:")[1].splitlines()[0]


def test_a_whole_flag_at_the_end_of_a_line_stays(assistant):
    answer = assistant.answer("python -m sglang.launch_server --model-path /m --enable-dp-attention\n"
                              "RuntimeError: frobnicator quorum lost in widget pool 7\n")
    assert answer.detected.flags == ("--model-path /m", "--enable-dp-attention")


def test_the_model_path_of_a_server_args_dump_is_detected(assistant):
    answer = assistant.answer(
        "[2025-02-17 11:56:21] server_args=ServerArgs(model_path='/models/Qwen2.5-7B-Instruct', host='0.0.0.0', "
        "port=30000, tp_size=1, mem_fraction_static=0.88)\n"
        "RuntimeError: frobnicator quorum lost in widget pool 7\n")
    assert answer.detected.flags == ("--model-path /models/Qwen2.5-7B-Instruct", "--mem-fraction-static 0.88")
