"""Answers after a new-user trial (round 45, ux3), as a user reads them: no guess about who calls a
missing SGLang name when the paste shows no caller; no step asking for what the paste already shows;
the steps that fit the paste (its variant, its release, its backend, its GPU, its program) before or
instead of the ones that do not; and Chinese answers in Chinese."""

from __future__ import annotations

from assistant.render import render_text


def _text(answer) -> str:
    return render_text(answer)


# 4: an attribute no release has, with no traceback: nothing shows who asks for it
NO_CALLER_SHOWN = (
    "SGLang 0.5.x serving Qwen2.5-7B on one L40S. After enabling the new option the scheduler crashes with:\n"
    "AttributeError: 'ScheduleBatch' object has no attribute 'prepare_for_lookahead'\n")


def test_a_missing_name_with_no_traceback_does_not_blame_an_outside_tool_or_an_old_release(assistant):
    text = _text(assistant.answer(NO_CALLER_SHOWN))
    line = next(line for line in text.splitlines() if line.startswith("SGLang releases:"))
    assert "prepare_for_lookahead" in line
    assert "verl" not in line and "a release before" not in line   # neither is shown in the paste
    assert "not known" in line and "traceback" in line
