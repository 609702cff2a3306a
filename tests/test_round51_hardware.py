"""Round 51: reading a paste's hardware right.

A MUSA report whose only MUSA word is its runtime's API (`musaGraphDebugDotPrint is not supported`)
got CUDA's environment step, because the MUSA pattern wanted a word boundary after "MUSA"; a
Chinese report that names its card in lower case ("启动后v100无法解析") had no GPU detected, so the
lead was the entry for Blackwell cards. The pastes are made up in the shape of such reports; the two
host-memory cases guard how a killed scheduler is read."""

from __future__ import annotations

from assistant.render import render_text
from tests.answer_text import next_steps as _steps

# a MUSA capture failure: no word "MUSA" on its own, only the runtime's function
MUSA_CAPTURE = """Exception: Capture cuda graph failed: musaGraphInstantiate is not supported now!
Possible solutions:
1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)
2. set --cuda-graph-max-bs to a smaller value (e.g., 16)
"""
# a V100 named in lower case in Chinese words, with the CUDA error of a build without its kernels
LOWER_V100 = """在v100上启动后解析失败，提示：
RuntimeError: CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""
# a lower-case card name inside a path and a model name: not the user's GPU
NOT_A_CARD = """python3 -m sglang.launch_server --model-path /data/h100/Qwen3-8B --served-model-name qwen-a100-tuned
RuntimeError: CUDA error: no kernel image is available for execution on the device
"""


def _detected(text: str) -> str:
    return next((line for line in text.splitlines() if line.startswith(("Detected:", "检测到："))), "")


def test_a_musa_runtime_function_makes_the_steps_musas_not_cudas(assistant):
    answer = assistant.answer(MUSA_CAPTURE)
    steps = _steps(render_text(answer))
    assert any("`mthreads-gmi`" in step for step in steps)
    assert not any("flashinfer" in step or "nvidia-smi" in step for step in steps)


def test_a_musa_capture_failure_keeps_the_capture_bisect_before_the_platform_step(assistant):
    # the platform (MUSA) adds its driver step; it does not push out what to try for the failing part
    steps = _steps(render_text(assistant.answer(MUSA_CAPTURE)))
    assert steps[0].startswith("[cuda-graph]") and "--disable-cuda-graph" in steps[0]
    assert steps[-1].startswith("[musa]")


def test_a_v100_named_in_lower_case_is_the_users_gpu(assistant):
    answer = assistant.answer(LOWER_V100)
    text = render_text(answer)
    assert "V100" in _detected(text)
    # a V100 (sm70) is an old card: not the entry for Blackwell cards without sm_120 kernels
    assert answer.matches[0].id == "flashinfer-unsupported-old-gpu"


def test_a_card_name_inside_a_path_or_model_name_is_not_the_users_gpu(assistant):
    text = render_text(assistant.answer(NOT_A_CARD))
    assert "H100" not in _detected(text) and "A100" not in _detected(text)


# a scheduler that died while loading, and how it died
KILLED_WHILE_LOADING = """[2025-06-01 10:00:00 TP0] Load weight begin. avail mem=78.50 GB
Loading safetensors checkpoint shards:  40% Completed | 12/30 [01:10<01:45,  5.80s/it]
[2025-06-01 10:02:11] Rank 0 scheduler is dead. Please check if there are relevant logs.
[2025-06-01 10:02:12] Exit code: {code}
"""


def test_a_scheduler_killed_from_outside_while_loading_gets_the_host_memory_fix(assistant):
    # `Rank 0 scheduler is dead` is generic, but with SIGKILL (-9) it is what the entry is about
    # (the signal is read by `assistant.exit_signal`, for the entries that declare it)
    answer = assistant.answer(KILLED_WHILE_LOADING.format(code="-9"))
    assert answer.outcome == "fix" and answer.matches[0].id == "host-oom-killed-during-load"


def test_a_scheduler_that_segfaulted_is_not_given_the_host_memory_fix(assistant):
    answer = assistant.answer(KILLED_WHILE_LOADING.format(code="-11"))
    assert answer.outcome != "fix"
