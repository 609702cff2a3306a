"""Round 48: a report told in the words users use for a launcher that hides SGLang's error ("the
launcher hides error messages: its finally block kills the main process before the traceback
prints") ranks the entry about wrappers hiding SGLang's own error first, not an entry that only
shares the launch command's words."""

from __future__ import annotations

WRAPPER = "wrapper-hides-sglang-error"

LAUNCHER_HIDES_TRACEBACK = (
    "Expose error when launching the sglang server: our trainer's sglang launcher hides error messages, "
    "because its finally block always runs and kills the main process, which prevents the traceback from "
    "printing and makes debugging difficult.\n"
    "(trainer) 20250101-10:00:00.100 LocalLauncher INFO: Starting local process with command: python3 -m "
    "sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30000\n"
    "(trainer) 20250101-10:01:30.200 LocalLauncher INFO: Process exited, stopping all jobs.\n")


def _first_entry(answer):
    """The entry a user sees first in `ask --json`."""
    shown = answer.to_json()
    return shown["matches"][0]["id"] if shown["matches"] else None


def test_a_launcher_that_hides_the_traceback_ranks_the_wrapper_entry_first(assistant):
    assert _first_entry(assistant.answer(LAUNCHER_HIDES_TRACEBACK)) == WRAPPER


def test_the_launcher_report_is_not_told_a_fix_for_another_problem(assistant):
    shown = assistant.answer(LAUNCHER_HIDES_TRACEBACK).to_json()
    assert shown["outcome"] != "fix" or shown["matches"][0]["id"] == WRAPPER
