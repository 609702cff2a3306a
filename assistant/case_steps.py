"""Which of an entry's per-case fix steps fit the paste.

An entry about a class of errors (every flag combination `ServerArgs` rejects) often gives one
step per message: "`tp_size must be divisible by number of nodes`: make `--tp-size` ...". When
the user's message is among them, the steps for the other messages are advice for someone else's
error (and can contradict the user's: "add `--enable-dp-attention`" for a check that rejects it).
A step that opens with quoted messages and a colon is such a case step; it is kept when one of its
messages is in the paste. Steps that open otherwise apply to every case and are always kept, and
when no case step's message is in the paste all of them are kept for a fix (nothing tells which
applies) and none for a lead's next steps (each is about another error than the user's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.model_family import subject_family
from assistant.text import mask, tokenize

# one or more code spans, separated by "/", ",", "or", then (after a remark in parentheses, "(0.5.21
# and later)") the colon that opens the advice
CASE_OPENING_RE = re.compile(r"^\s*((?:`[^`]+`\s*(?:/|,|or)?\s*)+)(?:\([^)]*\)\s*)?:")
CODE_SPAN_RE = re.compile(r"`([^`]+)`")
# a quoted message matches a line holding this share of its words (a message is often quoted
# without its variable part or with `...`)
WORDS_SHARED = 0.8
MIN_WORDS = 3


def case_messages(step_text: str) -> list[str]:
    """The messages a case step opens with, or [] for a step that applies to every case."""
    opening = CASE_OPENING_RE.match(step_text)
    if not opening:
        return []
    return [span for span in CODE_SPAN_RE.findall(opening.group(1)) if len(tokenize(span)) >= MIN_WORDS]


def _in_paste(message: str, lines: Sequence[str], line_tokens: Sequence[frozenset]) -> bool:
    masked = mask(message).lower().strip(" .")
    words = frozenset(tokenize(masked))
    return any(masked in line for line in lines) or any(
        len(words & tokens) >= WORDS_SHARED * len(words) for tokens in line_tokens)


def fitting_steps(steps: Sequence[dict], masked_lines: Sequence[str], strict: bool = False,
                  families: frozenset[str] = frozenset()) -> list[dict]:
    """The steps to show: every general step, and the case steps whose message the paste holds
    (all case steps when it holds none of their messages, unless `strict`: next steps of a lead,
    where a step about another message is never the one to take first); of the steps that open
    with a model family ("GLM-4.5 with the glm45 parser: ..."), those for another family than the
    paste's `families` are left out, unless that leaves none."""
    steps = _for_families(list(steps), families)
    cases = [case_messages(step.get("text", "")) for step in steps]
    if sum(1 for messages in cases if messages) < 2:
        return list(steps)
    lines = [line.lower() for line in masked_lines]
    line_tokens = [frozenset(tokenize(line)) for line in lines]
    fits = [bool(messages) and any(_in_paste(m, lines, line_tokens) for m in messages) for messages in cases]
    if not any(fits) and not strict:
        return list(steps)
    return [step for step, messages, fit in zip(steps, cases, fits) if fit or not messages]


MAX_OPENING = 120   # characters before a step's first colon that can name whom it is for


def _for_families(steps: list[dict], families: frozenset[str]) -> list[dict]:
    if not families:
        return steps
    def other_family(step: dict) -> bool:
        opening = step.get("text", "").split(": ", 1)
        named = subject_family(opening[0]) if len(opening) == 2 and len(opening[0]) <= MAX_OPENING else frozenset()
        return bool(named) and not named & families
    kept = [step for step in steps if not other_family(step)]
    return kept or steps
