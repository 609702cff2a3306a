"""Error lines that failed to match their entry's own signature after normalisation (round 48, h7):
a negative count lost its minus sign to masking, and a wide terminal cut the exception inside a
word."""

from __future__ import annotations

from assistant.terminal_wrap import unwrapped
from assistant.text import mask

NEGATIVE_ENTRY = "pd-decode-radix-cache-with-kv-offload-negative-protected"
IDLE_LEAK_ENTRY = "kv-pool-memory-leak-detected-idle"
DISPATCH_ENTRY = "flashinfer-0-0-4-failed-to-dispatch-gqa-group-size"

DECODE_LAUNCH = ("python3 -m sglang.launch_server --model-path moonshotai/Kimi-K2-Instruct --disaggregation-mode decode "
                 "--disaggregation-decode-enable-radix-cache --disaggregation-decode-enable-offload-kvcache --tp 8\n")
LEAK_TRACE = (
    "[2026-06-10 08:01:02 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 3120, in run_scheduler_process\n'
    "    scheduler.event_loop_normal_disagg_decode()\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler_components/invariant_checker.py", line 470, in _report_leak\n'
    "    raise_error_or_warn(\n")
NEGATIVE_LEAK = ("ValueError: pool memory leak detected! [full] total=412000, available=411968, evictable=0, "
                 "protected=-32, session_held=0, uncached=0\n")
POSITIVE_LEAK = ("ValueError: pool memory leak detected! [full] total=412000, available=400000, evictable=11968, "
                 "protected=32, session_held=0, uncached=0\n")

DISPATCH_LINE = ("RuntimeError: BatchPrefillWithPagedKVCachePyTorchWrapper::Forward(at::Tensor, at::Tensor, at::Tensor, "
                 "at::Tensor, at::Tensor, at::Tensor, bool, unsigned int, bool, float, float, float, bool)::<lambda()>::"
                 "<lambda()>::<lambda()>::<lambda()>::<lambda()> failed to dispatch group_size 3")
DISPATCH_HEAD = (
    "Qwen1.5-72B-Chat on 4x A100 with SGLang 0.1.17 and --enable-flashinfer crashes on the first request:\n"
    '  File "/opt/conda/lib/python3.10/site-packages/sglang/srt/layers/radix_attention.py", line 92, in prefill_forward_flashinfer\n'
    "    o = input_metadata.prefill_wrapper.forward(\n")


def _cut_inside(line: str, word: str, at: int) -> str:
    """The line as a window as wide as its first piece shows it: cut `at` characters into `word`."""
    cut = line.index(word) + at
    return line[:cut] + "\n" + line[cut:] + "\n"


def test_a_negative_protected_count_gets_the_decode_offload_fix(assistant):
    answer = assistant.answer(DECODE_LAUNCH + LEAK_TRACE + NEGATIVE_LEAK)
    assert answer.outcome == "fix"
    assert answer.matches[0].id == NEGATIVE_ENTRY


def test_the_negative_line_wrapped_at_a_comma_in_an_issue_still_gets_the_fix(assistant):
    pasted = NEGATIVE_LEAK.replace(" evictable=", "\nevictable=")
    answer = assistant.answer("Decode worker dies right after the first request returns "
                              "(decode radix cache + decode KV offload on):\n\n" + pasted)
    assert answer.outcome == "fix"
    assert answer.matches[0].id == NEGATIVE_ENTRY


def test_a_positive_protected_count_is_not_the_negative_count_bug(assistant):
    answer = assistant.answer(DECODE_LAUNCH + LEAK_TRACE + POSITIVE_LEAK)
    assert not (answer.outcome == "fix" and answer.matches[0].id == NEGATIVE_ENTRY)
    assert answer.matches[0].id == IDLE_LEAK_ENTRY


def test_masking_keeps_the_minus_sign_of_a_fields_value():
    assert mask("protected=-12, session_held=0") == "protected=-<n>, session_held=<n>"
    assert mask("protected=-12") != mask("protected=12")
    # an exit code is negative whichever signal it names: nothing to tell apart there
    assert mask("terminated with -9") == mask("terminated with -3") == "terminated with <n>"


def test_an_exception_a_wide_terminal_cut_inside_a_word_gets_its_fix(assistant):
    answer = assistant.answer(DISPATCH_HEAD + _cut_inside(DISPATCH_LINE, "group_size", 4))
    assert answer.outcome == "fix"
    assert answer.matches[0].id == DISPATCH_ENTRY


def test_a_cut_inside_a_word_is_joined_again():
    lines = (DISPATCH_HEAD + _cut_inside(DISPATCH_LINE, "group_size", 4)).splitlines()
    assert DISPATCH_LINE in list(unwrapped(lines))


def test_a_line_of_its_own_after_the_longest_line_is_not_joined():
    # NCCL ends its reason with the version and prints the error name on the next line
    lines = ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
             "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
             "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
             "Last error:"]
    assert list(unwrapped(lines)) == lines



def test_a_frame_cut_inside_its_path_is_joined_again():
    frame = ('  File "/mnt/shared/home/research-user/miniconda3/envs/sglang-0.4.6-cuda12.4-flashinfer/lib/python3.11/'
             'site-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 325, in __init__')
    cut = frame.index("model_executor") + 5   # a maximised window ends inside `model_executor`
    lines = ["Traceback (most recent call last):", frame[:cut], frame[cut:], "    self.capture()",
             "RuntimeError: CUDA error: out of memory"]
    assert frame in list(unwrapped(lines))
