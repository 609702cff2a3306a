"""Answers after a new-user trial (round 42, ux2), as a user reads them: the same transformers message
is recognised whatever path it quotes; an SGLang env var or flag that only one entry names leads to
that entry; and the facts a paste states (flags of a ServerArgs dump, the GPU, the NCCL version) are
read as the user wrote them."""

from __future__ import annotations

import pytest

from assistant.quoted_paths import line_with_paths_as_placeholders, signature_paths
from assistant.render import render_text

# A4: a web UI loading CLIP from the Windows Hugging Face cache; the quoted path is a directory
CONFIG_NOT_JSON_WINDOWS = (
    "Starting the webui suddenly fails while loading openai/clip-vit-large-patch14 from the Hugging Face cache, "
    "without any change on my side:\n"
    "[Bug]: OSError: It looks like the config file at 'C:\\Users\\.cache\\huggingface\\transformers\\' "
    "is not a valid JSON file.\n")


def test_the_config_json_message_is_recognised_whatever_path_it_quotes(assistant):
    answer = assistant.answer(CONFIG_NOT_JSON_WINDOWS)
    assert answer.matches and answer.matches[0].id == "hf-config-json-malformed"
    assert answer.outcome in ("fix", "lead")


def test_a_quoted_weights_file_is_still_not_the_config_json_entrys_error(assistant):
    # the entry's own distinction: a quoted weights file means --model-path points at that file
    answer = assistant.answer("OSError: It looks like the config file at '/data/out/full_sft_768.pth' "
                              "is not a valid JSON file.\n")
    assert not (answer.outcome == "fix" and answer.matches[0].id == "hf-config-json-malformed")


@pytest.mark.parametrize("line, fits", [
    ("at 'c:\\users\\me\\.cache\\huggingface\\transformers\\' is not", True),   # a directory
    ("at '<path>/config.json' is not", True),                                      # the same file
    ("at '/srv/models/qwen2.5-7b' is not", True),                                  # a model directory
    ("at '<path>/pytorch_model.bin' is not", False),                               # another file
    ("at 'https://huggingface.co/x/config.json' is not", False),                   # a URL, no path
])
def test_a_quoted_path_stands_for_any_path_but_another_file(line, fits):
    sig, files = signature_paths("at '<path>/config.json' is not")
    assert (line_with_paths_as_placeholders(line, files) == sig) is fits


# A6: a report about the one env var that a single tool-call entry is about; other tool-call entries
# share more of its words
FORWARD_UNKNOWN_TOOLS = (
    "[Bug] GLM streaming parsers forward unknown tools when SGLANG_FORWARD_UNKNOWN_TOOLS is disabled\n\n"
    "With `SGLANG_FORWARD_UNKNOWN_TOOLS=false` (the default), one-shot parsing drops calls whose function name is "
    "not present in the supplied tool list. The GLM-4 and GLM-4.7 streaming paths do not apply the same policy: "
    "they emit the undeclared name and arguments to the client.\n\n"
    "Reproduced on commit `86b044c`, with `SGLANG_FORWARD_UNKNOWN_TOOLS=false` and a tool list containing only `known`.\n\n"
    "Feed each input character by character to `parse_streaming_increment()`:\n\n"
    "| Detector | Input |\n| --- | --- |\n| `Glm4MoeDetector` | `<tool_call>unknown\\n</tool_call>` |\n"
    "| `Glm47MoeDetector` | `<tool_call>unknown</tool_call>` |\n\n"
    "Both streaming parsers emit:\n\n```text\n[(0, \"unknown\", \"\"), (0, None, \"{}\")]\n```\n\n"
    "For the same declared-tool list and default policy, one-shot `detect_and_parse()` returns no calls.\n")


def test_the_env_var_only_one_entry_names_leads_to_that_entry(assistant):
    answer = assistant.answer(FORWARD_UNKNOWN_TOOLS)
    assert answer.outcome != "fix"
    assert answer.matches[0].id == "tool-call-unknown-function-name-dropped"


def test_an_identifier_many_entries_name_points_at_none_of_them():
    from assistant.named_identifiers import NAMED_IDENTIFIER_BOOST, NamedIdentifiers

    named = NamedIdentifiers([(0, "Tool calls dropped when SGLANG_FORWARD_UNKNOWN_TOOLS is off", {}),
                              *((i, "Out of memory", {"keywords": ["--mem-fraction-static"]}) for i in range(1, 11))])
    boosts = named.boosts(frozenset({"SGLANG_FORWARD_UNKNOWN_TOOLS", "--mem-fraction-static"}))
    assert boosts == {0: NAMED_IDENTIFIER_BOOST}      # ten entries name the flag: it points at none
    assert named.candidates(frozenset({"--mem-fraction-static"})) == []
    two = NamedIdentifiers([(0, "NCCL_CUMEM_HOST_ENABLE=0 fixes it", {}), (1, "About NCCL_CUMEM_HOST_ENABLE", {})])
    assert two.boosts(frozenset({"NCCL_CUMEM_HOST_ENABLE"})) == {0: NAMED_IDENTIFIER_BOOST / 2, 1: NAMED_IDENTIFIER_BOOST / 2}


def test_a_flag_in_the_launch_command_is_configuration_not_evidence():
    from assistant.named_identifiers import paste_identifiers
    from assistant.retrieve import _is_command

    lines = ["python -m sglang.launch_server --model /m --kt-weight-path /w --kt-method RAWINT4",
             "the server stops after SGLANG_ENABLE_JIT_DEEPGEMM=0 and --enable-dp-attention"]
    assert paste_identifiers(lines, _is_command) == {"SGLANG_ENABLE_JIT_DEEPGEMM", "--enable-dp-attention"}


def test_variables_a_launcher_sets_in_its_command_line_are_configuration():
    from assistant.named_identifiers import paste_identifiers
    from assistant.retrieve import _is_command

    line = ("(AReaL) 20251231-02:44:48.724 LocalLauncher INFO: Starting local process with command: "
            "TOKENIZERS_PARALLELISM=true PYTORCH_KERNEL_CACHE_PATH=/tmp/k/ TRITON_CACHE_DIR=/tmp/t")
    assert paste_identifiers([line], _is_command) == frozenset()
    assert paste_identifiers(["With `SGLANG_FORWARD_UNKNOWN_TOOLS=false` the call is dropped"], _is_command) \
        == {"SGLANG_FORWARD_UNKNOWN_TOOLS"}


# B14: what the paste states about the setup, read as written

def _detected(text: str):
    from assistant.trace import analyze
    return analyze(text).environment


def test_a_server_args_dump_gives_the_host_the_user_set_not_the_defaults():
    env = _detected("[2025-02-17 11:56:21] server_args=ServerArgs(model_path='/models/Qwen2.5-7B-Instruct', "
                    "host='0.0.0.0', port=30000, tp_size=1, mem_fraction_static=0.88)\n")
    assert env.flags == ("--model-path /models/Qwen2.5-7B-Instruct", "--host 0.0.0.0", "--mem-fraction-static 0.88")


def test_server_args_fields_copied_without_their_dump_are_flags():
    env = _detected("sglang                                 0.5.10\n\n"
                    "ep_size=32, moe_a2a_backend='deepep', moe_runner_backend='auto', deepep_mode='auto'\n")
    assert env.flags == ("--ep-size 32", "--moe-a2a-backend deepep")


def test_the_launch_command_is_the_command_without_the_users_sentence_before_it():
    env = _detected("Launching SGLang on a GB300 node (aarch64, sm_103) from a late-2025 image whose torch comes with "
                    "Triton 3.5: python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B\n"
                    "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.tcgen05.wait.st\n")
    assert env.launch_command == "python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B"
    assert env.gpu == "GB300"


@pytest.mark.parametrize("text, gpu", [
    ("PD disagg deploy：\nP/D H200，P use hicache, storage use mooncake with backend .\n", "H200"),
    ("lmsysorg/sglang:v0.5.10-rocm720-mi35x, SGLANG_USE_AITER=1, started from /sgl-workspace\n", "MI35x"),
    ("NeMo RL DPO on 8x L4 fails with unhandled cuda error\n", "L4"),
    ("NVIDIA L40S, the server dies at startup\n", "L40S"),
    ("see the stack in L4 of my notes, it fails at import\n", None),     # a line number, not a GPU
    ("Regression on RTX Pro 6000 with ktransformers\n", "RTX Pro 6000"),
])
def test_gpus_are_read_where_they_are_named_and_only_there(text, gpu):
    assert _detected(text).gpu == gpu


def test_nccl_and_cann_versions_are_detected_and_shown(assistant):
    env = _detected("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3699, unhandled cuda "
                    "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3\n")
    assert env.nccl_version == "2.27.3"
    assert _detected("Ascend env:\ncann                                   8.5.0\ntorch_npu   2.8.0.post2\n").cann_version \
        == "8.5.0"
    from assistant.render import render_text
    answer = assistant.answer("Ascend env:\ncann                                   8.5.0\n"
                              "RuntimeError: NPU out of memory. Tried to allocate 5503.00 GiB\n")
    assert "CANN 8.5.0" in render_text(answer)


# A3 (in part): the sentence under a report's title says what it is about, though it talks to no one
def test_the_sentence_under_a_reports_title_is_the_users_words():
    from assistant.trace import analyze

    analysis = analyze("chore: Expose error when lauch sglang server\n"
                       "The current `sglang_lancher` hides error messages because finally always executes → kills "
                       "the main process → prevents traceback printing, making debugging difficult\n"
                       "(AReaL) 20251231-02:44:48.700 PlatformInit INFO: Detected CUDA device: NVIDIA A800-SXM4-80GB\n")
    assert "hides error messages" in analysis.question
    assert "PlatformInit" not in analysis.question
