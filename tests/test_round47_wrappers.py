"""SGLang 0.5.10+'s subprocess watchdog line and regression reports (round 47).

`Subprocess scheduler_0 (pid=...) crashed with exit code 1. Triggering SIGQUIT for cleanup...` only
says that a child process is gone: under a real error it must not pull the entry about consequence
lines above the entry for that error, and alone it gets that entry as a lead that says what the
exit code means. A report that one SGLang release works and another "is not", or that compares two
docker image tags, is a regression report."""

from __future__ import annotations

import pytest

from assistant.generic_lines import is_generic
from assistant.pipeline import lines_from_text
from assistant.trace import analyze_lines
from assistant.upgrade import reports_regression

SIGQUIT_ENTRY = "scheduler-sigquit-terminated"
WATCHDOG_LINE = "[2026-04-20 11:02:14] Subprocess scheduler_0 (pid=5120) crashed with exit code {code}. Triggering SIGQUIT for cleanup..."

OOM_THEN_WATCHDOG = (
    "[2026-04-20 11:02:13 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2950, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/layers/logits_processor.py", line 412, in forward\n'
    "    logits = torch.matmul(hidden_states, lm_head.weight.T)\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.50 GiB. GPU 0 has a total capacity of "
    "79.19 GiB of which 3.10 GiB is free. Including non-PyTorch memory, this process has 76.07 GiB memory in use. "
    "Of the allocated memory 70.12 GiB is allocated by PyTorch, and 4.40 GiB is reserved by PyTorch but unallocated.\n"
    + WATCHDOG_LINE.format(code=1) + "\n"
    "[2026-04-20 11:02:14] Received sigquit from a child process. It usually means the child failed.\n"
    "[2026-04-20 11:02:15] Subprocess scheduler_1 (pid=5121) crashed with exit code -3. Triggering SIGQUIT for cleanup...\n")


def test_the_watchdog_line_is_a_generic_line_for_any_child_and_exit_code():
    assert is_generic(WATCHDOG_LINE.format(code=-9))
    assert is_generic("Subprocess detokenizer (pid=77) crashed with exit code -11. Triggering SIGQUIT for cleanup...")


def test_an_out_of_memory_error_above_the_watchdog_lines_keeps_the_memory_entry_first(assistant):
    answer = assistant.answer(OOM_THEN_WATCHDOG)
    assert answer.matches[0].id == "runtime-oom-prefill-decode"
    assert SIGQUIT_ENTRY not in [m.id for m in answer.matches[:2]]
    assert answer.primary_error.startswith("torch.OutOfMemoryError: CUDA out of memory.")


def test_the_watchdog_line_alone_leads_to_the_earlier_error_and_reads_the_exit_code(assistant):
    answer = assistant.answer(WATCHDOG_LINE.format(code=-9) + "\n")
    assert answer.outcome == "lead"
    assert answer.matches[0].id == SIGQUIT_ENTRY
    assert "-9: killed from outside" in answer.text
    assert "1: the child exited after a Python error" in answer.text


@pytest.mark.parametrize("paste", [
    "sglang v0.4.4 is OK, but v0.4.6 is not.\n",
    "v0.5.4 works, v0.5.5 no longer works with this model.\n",
    "We switched the image from lmsysorg/sglang:v0.4.4-cu124 to lmsysorg/sglang:v0.4.6.post4-cu124 "
    "and now startup hangs.\n",
])
def test_a_working_and_a_failing_sglang_release_is_a_regression_report(paste):
    assert reports_regression(analyze_lines(lines_from_text(paste)))


@pytest.mark.parametrize("paste", [
    "mooncake 0.3.9 is OK, but mooncake 0.3.11 is not.\n",          # another package's releases
    "sglang v0.4.4 is OK, and v0.4.6 is fine too.\n",                 # nothing failed
    "I'm running lmsysorg/sglang:v0.4.6.post4-cu124 and lmsysorg/sglang:v0.4.4-cu124 on two clusters.\n",
])
def test_no_regression_is_read_where_the_words_compare_no_working_and_failing_release(paste):
    assert not reports_regression(analyze_lines(lines_from_text(paste)))
