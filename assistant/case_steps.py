"""Which of an entry's per-case fix steps fit the paste.

An entry about a class of errors (every flag combination `ServerArgs` rejects) often gives one
step per message: "`tp_size must be divisible by number of nodes`: make `--tp-size` ...". When
the user's message is among them, the steps for the other messages are advice for someone else's
error (and can contradict the user's: "add `--enable-dp-attention`" for a check that rejects it).
A step that opens with quoted messages and a colon is such a case step; it is kept when one of its
messages is in the paste. Steps that open otherwise apply to every case and are always kept, and
when no case step's message is in the paste all of them are kept for a fix (nothing tells which
applies) and none for a lead's next steps (each is about another error than the user's).

An entry that covers several variants of one failure (a build that exits with status 127, 139 or 1)
often opens a step with the variant it is for: "DeepSeek-V4 with `ninja exited with status 139`
...: upgrade", "Status 127 but the command runs `hipcc`: ...", "If the line says `Using default
W8A8 Block FP8 kernel config` ...: ...", "GPUStack: ...". When the paste shows which variant it is
(its exit status, a quoted message, the program that launched SGLang, or simply one of the entry's
own lines), the steps for it come first and the steps opened by another variant come last, each
marked as for another case (`variant_order`): a fix drops none of them, since the paste may not
show every line that tells them apart; a lead's next steps leave them out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.commands import EXTERNAL_PROGRAMS
from assistant.model_family import subject_family
from assistant.program_lines import PATTERNS as LAUNCHER_PATTERNS
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
                  families: frozenset[str] = frozenset(), lines_as_written: Sequence[str] = (),
                  signatures: Sequence[str] = ()) -> list[dict]:
    """The steps to show: every general step, and the case steps whose message the paste holds
    (all case steps when it holds none of their messages, unless `strict`: next steps of a lead,
    where a step about another message is never the one to take first); of the steps that open
    with a model family ("GLM-4.5 with the glm45 parser: ..."), those for another family than the
    paste's `families` are left out, unless that leaves none; the steps for the variant the paste
    shows come first and those for another follow, marked, or are left out when `strict`
    (`variant_order`, which reads exit statuses and programs in the paste's `lines_as_written` and
    knows the paste's variant when it shows one of the entry's own `signatures`)."""
    return variant_order(_fitting(steps, masked_lines, strict, families), masked_lines, lines_as_written,
                         signatures, strict)


def _fitting(steps: Sequence[dict], masked_lines: Sequence[str], strict: bool,
             families: frozenset[str]) -> list[dict]:
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


# an exit status a build or a command reports: "exited with status 139", "[code=139]", "exit code 1",
# "returned non-zero exit status 2"; in a step's opening also "Status 1 (or 139 ...)"
STATUS_RE = re.compile(r"\b(?:status|code|exit code)\s*[=:]?\s*(\d{1,3})\b((?:\s*\(?\s*or\s+\d{1,3}\b)*)", re.I)
OR_NUMBER_RE = re.compile(r"\d{1,3}")
# "olmOCR and other clients that poll the server": a step for more than the program it names
OTHERS_TOO_RE = re.compile(r"\bother\b|其他|等")
COMMAND_WORDS = frozenset({*EXTERNAL_PROGRAMS, "python", "python3", "sglang", "export", "sudo", "cd", "ls", "cat"})
CONDITION_RE = re.compile(r"\s*(?:If|When)\b")
SIBLING_SHARE = 0.4   # of a quoted message's words that a line of the same shape shares with it
VARIANT_OPENING = 160   # characters before a step's first colon that can name the variant it is for
OTHER_VARIANT = ("For another case than your paste shows: ", "适用于另一种情况（不是你贴的这种）：")


@dataclass(frozen=True)
class Variant:
    """What a step's opening says it is for: exit statuses, quoted messages, launching programs."""
    statuses: frozenset[str]
    messages: tuple[str, ...]
    programs: frozenset[str]


def _statuses(text: str) -> frozenset[str]:
    found: set[str] = set()
    for match in STATUS_RE.finditer(text):
        found.add(match.group(1))
        found.update(OR_NUMBER_RE.findall(match.group(2) or ""))
    return frozenset(found)


def _opening(text: str) -> str:
    """A step's words before its first colon outside code spans, or a conditional step's "if"
    clause ("If the line says `...` instead of MoE, ..."); "" when that is too far in."""
    outside = CODE_SPAN_RE.sub(lambda span: "x" * len(span.group(0)), text)
    ends = [outside.find(": ")]
    if CONDITION_RE.match(outside):
        ends.append(outside.find(", "))
    end = min((i for i in ends if i > 0), default=-1)
    return text[:end] if 0 < end <= VARIANT_OPENING else ""


def _is_message(span: str) -> bool:
    """A quoted line a program prints (`nvcc: not found`), not a flag with its value
    (`--quantization fp8`) nor a command (`pip install -U sglang`)."""
    words = span.split()
    return (len(words) >= MIN_WORDS and not words[0].startswith(("-", "$"))
            and words[0].lower() not in COMMAND_WORDS)


def _variant(step_text: str) -> Variant:
    opening = _opening(step_text)
    messages = tuple(span for span in CODE_SPAN_RE.findall(opening) if _is_message(span))
    bare = CODE_SPAN_RE.sub(" ", opening)
    programs = (frozenset() if OTHERS_TOO_RE.search(bare)
                else frozenset(name for name, pattern in LAUNCHER_PATTERNS.items() if pattern.search(bare)))
    return Variant(_statuses(opening), messages, programs)


def _sibling(message: str, shown_lines: Sequence[frozenset]) -> bool:
    """A message shaped like one of the entry's own lines the paste shows (`Using default W8A8 Block
    FP8 kernel config` beside `Using default MoE kernel config`): the paste shows that line, so a
    step about the other one is for another case; a message unlike them (`The server is fired up and
    ready to roll!`) is a condition to check, not a variant."""
    words = frozenset(tokenize(mask(message).lower()))
    return bool(words) and any(len(words & line) >= SIBLING_SHARE * len(words) for line in shown_lines)


def variant_order(steps: Sequence[dict], masked_lines: Sequence[str], lines_as_written: Sequence[str],
                  signatures: Sequence[str] = (), strict: bool = False) -> list[dict]:
    """The steps with those for another variant than the paste's last, marked (`OTHER_VARIANT`),
    or left out when `strict` (a lead's next steps); a step whose exit status or program is the
    paste's comes first (one whose quoted message is the paste's stays where the entry puts it: that
    message may be the line every paste of the entry shows). A step is for another variant when its
    opening names an exit status, a quoted message or a launching program and none of them is the
    paste's, while the paste shows which variant it is: another step's variant is the paste's, it
    names one of two or more programs the steps are for, or the step quotes a line shaped like one
    of the entry's own `signatures` that the paste shows (`_sibling`)."""
    lines = [line.lower() for line in masked_lines]
    line_tokens = [frozenset(tokenize(line)) for line in lines]
    written = "\n".join(lines_as_written)
    paste_statuses = _statuses(written)
    variants = [_variant(step.get("text", "")) for step in steps]
    step_programs = frozenset().union(*(v.programs for v in variants)) if variants else frozenset()
    named_programs = frozenset(name for name in step_programs if LAUNCHER_PATTERNS[name].search(written))
    # the paste may come from a launcher no step is for (an AReaL trainer beside steps for xinference
    # and GPUStack): then each program's step is for another case, as when it names one of theirs
    other_launcher = not named_programs and any(pattern.search(written) for name, pattern in LAUNCHER_PATTERNS.items()
                                                if name not in step_programs)
    programs_known = len(step_programs) >= 2 and (bool(named_programs) or other_launcher)
    shown_lines = [" ".join(str(line).split()) for line in signatures]
    shown_lines = [line for line in shown_lines if _in_paste(line, lines, line_tokens)]
    own_lines = [frozenset(tokenize(mask(line).lower())) for line in shown_lines]

    def message_shown(message: str) -> bool:
        # a number in the message tells its case apart (`Hardware limit: 65536` is AMD's LDS, not
        # the 101376 an NVIDIA GPU prints): the paste must show it as written
        if re.search(r"\d", message):
            return message.lower() in written.lower()
        return _in_paste(message, lines, line_tokens) or any(
            len(words & frozenset(tokenize(mask(message).lower()))) >= WORDS_SHARED * len(words)
            for words in own_lines if words)

    def fit(variant: Variant) -> tuple[bool | None, bool]:
        """(whether the step's variant is the paste's, None for a step for every case; whether
        its status or program says so)"""
        programs = variant.programs if programs_known else frozenset()
        if not (variant.statuses or variant.messages or programs):
            return None, False
        strong = bool(variant.statuses & paste_statuses) or bool(programs & named_programs)
        return strong or any(message_shown(m) for m in variant.messages), strong

    fits, strong = zip(*(fit(variant) for variant in variants)) if variants else ((), ())
    shown = True in fits or programs_known
    other = [fit is False and (shown or any(_sibling(m, own_lines) for m in variant.messages))
             for fit, variant in zip(fits, variants)]
    if not any(other):
        return list(steps)
    first = [step for step, promoted in zip(steps, strong) if promoted]
    rest = [step for step, promoted, out in zip(steps, strong, other) if not promoted and not out]
    if strict:
        return first + rest
    marked = [dict(step, text=OTHER_VARIANT[0] + step["text"],
                   **({"text_zh": OTHER_VARIANT[1] + step["text_zh"]} if step.get("text_zh") else {}))
              for step, out in zip(steps, other) if out]
    return first + rest + marked
