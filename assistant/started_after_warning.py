"""A paste whose server came up after the warnings it printed, and that shows no failure.

Entries about a warning that looks alarming (the GB10 capability warning, a kernel-cache notice)
say what the line means and how to find the real failure behind it. When the paste itself shows
the server up after the warning (`The server is fired up and ready to roll!`, or its batch lines)
and no error, there is no failure behind it to find: the warning is harmless for this run, and what
the user asks about (slowness, a hang, wrong output) is what the next steps should serve.
"""

from __future__ import annotations

from assistant.failure_kind import kinds_in
from assistant.trace import Analysis

# what the user tells of that a started server can still not have: a crash or an out-of-memory
# after start-up is a failure the warning may sit before
FAILURE_KINDS = frozenset({"crash", "out of memory", "illegal memory access"})


def started_after_warnings(analysis: Analysis) -> bool:
    """The server started (or served) and every error line in the paste is a warning; the user's
    words tell of no crash or out-of-memory."""
    if not (analysis.ready or analysis.serving_lines):
        return False
    if not analysis.errors or any(error.kind != "warning" for error in analysis.errors):
        return False
    return not (asked_kinds(analysis) & FAILURE_KINDS)


def asked_kinds(analysis: Analysis) -> frozenset[str]:
    """The kinds of failure the user's own words ask about (`slow`, `hang`, `wrong output`)."""
    return kinds_in(analysis.question, *analysis.prose_lines)
