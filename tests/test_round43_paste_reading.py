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
    # the host the user set is read too (round 45); the default port is not
    assert answer.detected.flags == ("--model-path /models/Qwen2.5-7B-Instruct", "--host 0.0.0.0",
                                     "--mem-fraction-static 0.88")


def test_the_users_sentence_after_an_exception_is_not_part_of_the_root_error(assistant):
    answer = assistant.answer("my MiniMax-M3 server dies with AttributeError: 'bool' object has no attribute "
                              "'num_token_non_padded' after I upgraded to 0.5.18, what do I do? I launch with "
                              "--moe-a2a-backend deepep --tp 8 on 8x H20.")
    assert answer.primary_error == "AttributeError: 'bool' object has no attribute 'num_token_non_padded'"
    assert answer.detected.sglang_version == "0.5.18"   # the words cut off it are still the user's
    # on an exception line of its own too
    alone = assistant.answer("RuntimeError: frobnicator quorum lost in widget pool 7 when I run with --tp 2, any idea?")
    assert alone.primary_error == "RuntimeError: frobnicator quorum lost in widget pool 7"


def test_a_message_with_commas_and_after_in_it_stays_whole(assistant):
    answer = assistant.answer("RuntimeError: frobnicator expected 2 shards, got 3 after 5 retries, giving up\n")
    assert answer.primary_error == "RuntimeError: frobnicator expected 2 shards, got 3 after 5 retries, giving up"


def test_a_reports_title_or_paragraph_is_not_shown_as_the_root_error(assistant):
    answer = assistant.answer(
        "[Bug] After using H200*8 to deploy DeepSeekR1, the large stress test model crashes\n\n"
        "Running the stress test on a frobnicator build. The process crashes with a RuntimeError inside the "
        "widget pool, the backend it picks by default on this GPU.\n")
    assert answer.primary_error is None
    assert "The root error as read from your paste" not in answer.text


CUT_TRACEBACK = ('  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 315, in __init__\n'
                 "    self.tp_worker = TpWorkerClass(\n"
                 '  File "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker.py", line 84, in __init__\n'
                 "    self.model_runner = ModelRunner(\n"
                 "                        ^^^^^^^^^^^^\n")


def test_a_traceback_cut_before_its_exception_line_is_asked_for_its_end(assistant):
    answer = assistant.answer("[Bug] Deepseek v3 0324 cannot start\n\ncrash info\n```\n" + CUT_TRACEBACK)
    assert answer.primary_error is None   # not the caption "crash info"
    assert "The root error as read from your paste" not in answer.text
    assert answer.next_steps[0].startswith("The end of the traceback: your paste stops inside it")


def test_a_cut_traceback_is_asked_for_in_chinese_for_a_chinese_reader(assistant):
    answer = assistant.answer("DeepSeek V3 启动不了，报错信息如下：\n" + CUT_TRACEBACK)
    assert answer.reader_language == "zh"
    assert answer.primary_error is None
    assert answer.next_steps[0].startswith("traceback 的结尾：你贴的内容在 traceback 中间就断了")


def test_a_line_logged_at_warning_level_is_a_warning_whatever_its_words():
    """Python logging's default format keeps the level: `WARNING:sglang.srt.models.registry:Ignore
    import error ... is not initialized` is the registry going on, not an error that stopped it."""
    from assistant.trace import analyze

    paste = ("MinerU with the sglang engine is very slow, the log stops here:\n"
             "WARNING:sglang.srt.models.registry:Ignore import error when loading "
             "sglang.srt.models.torch_native_llama. tensor model parallel group is not initialized\n"
             "[2025-06-01 10:00:02] Load weight begin. avail mem=20.1 GB\n")
    analysis = analyze(paste)
    assert [e.kind for e in analysis.errors] == ["warning"]
    assert analysis.root_line is None


def test_a_warning_that_says_it_handled_an_error_is_not_traced_as_a_failed_assert(assistant):
    """`Ignore import error when loading ...: tensor model parallel group is not initialized` quotes
    an assert's message, but the registry went on: no "fails an assert" origin for it."""
    paste = ("MinerU with the sglang engine is very slow, the log stops here:\n"
             "WARNING:sglang.srt.models.registry:Ignore import error when loading "
             "sglang.srt.models.torch_native_llama. tensor model parallel group is not initialized\n"
             "[2025-06-01 10:00:02] Load weight begin. avail mem=20.1 GB\n")
    answer = assistant.answer(paste)
    assert answer.origin is None or "assert" not in str(answer.origin).lower()
