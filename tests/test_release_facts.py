"""What an answer states about releases, platforms and phases must hold for the user's own case
(round 30's trial): a fact from the wrong release, platform or phase sends an operator the wrong way
even when the right entry is found.

- An `invalid choice` answer says which releases accept the value; a how-to quotes the choices of
  the user's release.
- A post release (0.4.9.post6) is not read as its base release when the two around it differ.
- A package the release requires without a version is "required, unpinned", never "not listed".
- Python's `Requires-Python` and a Mac's `arm64` decide which install entry applies.
- What the user says about when it failed ("halfway through loading") counts as phase."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_an_invalid_choice_says_which_releases_accept_the_value(assistant):
    answer = assistant.answer(
        "sglang 0.5.2\n"
        "launch_server.py: error: argument --attention-backend: invalid choice: 'fa4' (choose from "
        "'triton', 'torch_native', 'fa3', 'flashinfer')")
    assert answer.outcome == "fix" and answer.matches[0].id == "flag-invalid-choice"
    assert "`fa4` is a choice of `--attention-backend` in SGLang 0.5.3-" in answer.choice_note
    assert "your SGLang 0.5.2 does not accept it: upgrade to 0.5.3" in answer.choice_note
    assert "SGLang releases: `fa4`" in answer.text
    made_up = assistant.answer("launch_server.py: error: argument --kv-cache-dtype: invalid choice: "
                               "'fp8_e5m3' (choose from 'auto', 'fp8_e5m2', 'fp8_e4m3')")
    assert "not a choice of `--kv-cache-dtype` in any SGLang release" in made_up.choice_note


def test_releases_that_build_a_flags_choices_at_run_time_are_not_said_to_reject_the_value(assistant):
    # the literal choices of --speculative-algorithm stop at 0.5.11; later releases still take NGRAM
    answer = assistant.answer(
        "sglang 0.5.2\n"
        "launch_server.py: error: argument --speculative-algorithm: invalid choice: 'NGRAM' (choose from "
        "'EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE')")
    note = answer.choice_note
    assert "`NGRAM` is a choice of `--speculative-algorithm` in SGLang 0.5.3-0.5.11 (from 0.5.12 on" in note
    assert "later releases are not known here" in note and "upgrade to 0.5.3 or later" in note


def test_a_how_to_quotes_the_choices_of_the_users_release(assistant):
    answer = assistant.answer("sglang 0.5.9: which --kv-cache-dtype value do I use for an FP8 KV cache?")
    kv = next(f for f in answer.flags if f.name == "--kv-cache-dtype")
    line = kv.line("0.5.9")
    assert "Choices in SGLang 0.5.9:" in line and "fp4_e2m1" in line and "nvfp4" not in line.split("Choices")[1]


def test_one_model_over_several_gpus_is_answered_with_tensor_parallelism(assistant):
    for question in ("How do I run one model across two GPUs with sglang? Which flag do I need?",
                     "请问 sglang 怎么用两张卡跑一个模型？需要加什么参数？"):
        answer = assistant.answer(question)
        assert answer.question and "--tp-size" in [f.name for f in answer.flags][:2]


VERL_POST_RELEASE = """\
(WorkerDict pid=49102)   File "/workspace/verl/verl/workers/rollout/sglang_rollout/sglang_rollout.py", line 40, in <module>
(WorkerDict pid=49102)     from sglang.srt.utils import (
(WorkerDict pid=49102) ImportError: cannot import name 'maybe_set_triton_cache_manager' from 'sglang.srt.utils' (/usr/local/lib/python3.10/dist-packages/sglang/srt/utils.py)
verl 0.4.1, sglang {version}
"""


def test_a_post_release_is_not_claimed_to_have_what_its_base_release_has(assistant):
    post = assistant.answer(VERL_POST_RELEASE.format(version="0.4.9.post6"))
    assert post.symbol is not None and post.symbol.in_user_version is None
    assert "has it" not in post.symbol.summary() and "loading another copy" not in post.symbol.advice()
    assert "post release of 0.4.9" in post.symbol.summary()
    newer = assistant.answer(VERL_POST_RELEASE.format(version="0.4.10"))
    assert newer.symbol.in_user_version is False


def test_a_required_but_unpinned_package_is_not_called_unlisted(assistant):
    answer = assistant.answer(
        '  File "/app/.venv/lib/python3.12/site-packages/sglang/srt/utils/common.py", line 79, in <module>\n'
        "    import pybase64\n"
        "ModuleNotFoundError: No module named 'pybase64'\n"
        "pip show sglang: Version: 0.5.23\n")
    sentence = answer.to_json()["dependency"]["summary"] if answer.to_json().get("dependency") else ""
    assert answer.dependency is not None and answer.dependency.listed
    assert "does not list" not in sentence and "requires pybase64" in sentence


def test_python_too_old_for_the_release_gets_the_python_entry(assistant):
    answer = assistant.answer(
        "$ python --version\nPython 3.10.12\n$ pip install \"sglang==0.5.23\"\n"
        "ERROR: Ignored the following versions that require a different python version: "
        "0.5.22 Requires-Python >=3.11; 0.5.23 Requires-Python >=3.11\n"
        "ERROR: Could not find a version that satisfies the requirement sglang==0.5.23 (from versions: 0.5.20, 0.5.21)\n"
        "ERROR: No matching distribution found for sglang==0.5.23\n")
    assert answer.outcome == "fix" and answer.matches[0].id == "sglang-install-python-version-no-wheel"


MAC_INSTALL = """\
$ uname -a
Darwin Lis-MacBook-Pro.local 24.2.0 Darwin Kernel Version 24.2.0: root:xnu-11215.61.5~2/RELEASE_ARM64_T6031 arm64
$ pip install "sglang[all]"
ERROR: Could not find a version that satisfies the requirement sgl-kernel==0.3.21 (from sglang[all]) (from versions: none)
ERROR: No matching distribution found for sgl-kernel==0.3.21
"""


def test_a_mac_is_not_an_arm_server_nor_an_old_linux(assistant):
    from assistant.host_platform import platforms_in

    assert platforms_in(MAC_INSTALL) == {"macos"}
    assert platforms_in("Linux gh200-node 6.8.0 aarch64 GNU/Linux") == {"aarch64"}
    answer = assistant.answer(MAC_INSTALL)
    assert answer.matches[0].id == "macos-apple-silicon-install-mlx"
    assert not (answer.outcome == "fix" and answer.matches[0].id in
                ("aarch64-gh200-install", "sglang-wheel-glibc-rust-protoc-build"))


def test_an_oom_the_user_says_came_while_loading_is_not_the_serving_oom_fix(assistant):
    answer = assistant.answer(
        "The machine has 8x A6000 but sglang only uses the first GPU; it OOMs halfway through loading "
        "while the other GPUs stay empty. Command: python -m sglang.launch_server --model-path "
        "Qwen/Qwen2.5-72B-Instruct --port 8000\n\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 232.00 MiB. GPU 0 has a total capacity "
        "of 47.41 GiB of which 151.75 MiB is free. Including non-PyTorch memory, this process has 47.25 GiB "
        "memory in use.\n")
    assert not (answer.outcome == "fix" and answer.matches[0].id == "runtime-oom-prefill-decode")


def test_a_list_of_choices_or_platforms_does_not_name_the_users_hardware():
    from assistant.trace import analyze

    choices = analyze("launch_server.py: error: argument --attention-backend: invalid choice: 'fa4' "
                      "(choose from 'triton', 'fa3', 'flashinfer', 'ascend')\nGPU: B200")
    assert choices.environment.hardware != "ascend"
    accelerators = analyze("RuntimeError: No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) is available.")
    assert accelerators.environment.hardware not in ("musa", "ascend")
    assert analyze("mccl init failed on MTT S4000").environment.hardware == "musa"


def test_argparse_exit_lines_are_not_attributed_to_a_look_alike_raise(assistant):
    answer = assistant.answer("sglang 0.5.9\n$ python -m sglang.launch_server --model-path x --enable-ep-moe\n"
                              "launch_server.py: error: unrecognized arguments: --enable-ep-moe")
    assert answer.matches[0].id == "cli-flag-unrecognized"
    assert answer.origin is None or "multimodal_gen" not in (answer.origin.module or "")


def test_a_package_too_old_at_startup_gets_the_pin_of_the_users_release_as_the_first_step(assistant):
    answer = assistant.answer(
        "sglang 0.4.6.post1, Qwen3-30B-A3B fails to start:\n"
        "ValueError: The checkpoint you are trying to load has model type `qwen3_moe` but Transformers does not "
        "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
        "version of Transformers is out of date.")
    assert answer.outcome == "fix" and answer.matches[0].id == "transformers-unknown-model-type"
    assert 'pip install "transformers==4.51.1"' in answer.fix[0]
