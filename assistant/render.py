"""Render an Answer for a terminal (or any plain-text surface): Markdown-ish, readable uncoloured.

The first line is the outcome (`FIX`, `LEAD (not confirmed)`, `UNKNOWN: not a known problem`); a
lead or unknown shows why, the root error, where it arises and what to collect, never a fix."""

from __future__ import annotations

from assistant.answer import Answer
from assistant.control_chars import neutralize_data
from assistant.provenance import dated_reading, dependency_sentence, origin_lines, releases_zh, symbol_sentence
from assistant.snippets import BLOCK_INDENT, FENCE
from assistant.wording import HEADINGS, Sentence, colon

_BOLD, _DIM, _RED, _YELLOW, _GREEN, _CYAN, _RESET = (
    "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[36m", "\x1b[0m")



def _colon(answer, heading: str, space: bool = False) -> str:
    """A heading with the colon of the reader's language (Chinese uses the full-width one, which
    needs no space after it)."""
    mark = colon(answer.reader_language)
    return heading + mark + (" " if space and mark == ":" else "")

def _detected_line(answer: Answer) -> str:
    env = answer.detected
    zh = answer.reader_language == "zh"   # a Chinese reader's line: 参数, full-width commas and brackets
    parts = []
    if env.sglang_version:
        parts.append(f"SGLang {env.sglang_version}")
    elif env.sglang_releases:
        basis = {"message": "by_message", "both": "by_traceback_and_message"}.get(env.sglang_releases_by,
                                                                               "by_traceback_files")
        if zh:
            parts.append(f"SGLang {releases_zh(env.sglang_releases)}（{answer.label(basis)}）")
        else:
            parts.append(f"SGLang {env.sglang_releases} ({answer.label(basis)})")
    if env.torch_version:
        parts.append(f"torch {env.torch_version}")
    if env.cuda_version:
        parts.append(f"CUDA {env.cuda_version}")
    if env.flashinfer_version:
        parts.append(f"flashinfer {env.flashinfer_version}")
    if env.nccl_version:
        parts.append(f"NCCL {env.nccl_version}")
    if env.cann_version:
        parts.append(f"CANN {env.cann_version}")
    if env.gpu:
        parts.append(env.gpu)
    if env.flags:
        parts.append(("参数：" if zh else "flags: ") + " ".join(env.flags[:14]) + (" ..." if len(env.flags) > 14 else ""))
    return ("，" if zh else ", ").join(parts)


def answer_origin_lines(answer: Answer, language: str | None = None) -> list[str]:
    """The "Where it comes from" lines of an answer, its version sentence read as its Detected line."""
    return origin_lines(answer.origin, answer.reader_language if language is None else language,
                        dated_reading(answer.detected))


_OUTCOME_COLOR = {"fix": _GREEN, "lead": _YELLOW, "unknown": _YELLOW}


def where_line(answer: Answer) -> str:
    """Where the user's error arises: the failing components and the innermost frame's module."""
    parts = []
    if answer.failing_components:
        parts.append(", ".join(answer.failing_components))
    if answer.failing_module:
        parts.append(f"{answer.label('innermost_frame')} {answer.failing_module}"
                     + (f", {answer.failing_function}()" if answer.failing_function else ""))
    if answer.named_class:
        parts.append(f"{answer.named_class[0]} {answer.label('named_in_paste')} {answer.named_class[1]}")
    if answer.fault_note and parts:
        parts.append(answer.fault_note)
    return "; ".join(parts)


def provenance_lines(answer: Answer, c) -> list[str]:
    """"Where it comes from:" (the emitting SGLang site, or the other library) and, for a lead or
    unknown, the dependency pin: the facts the registries give even when no entry matched."""
    out: list[str] = []

    def h(key: str) -> str:
        return c(_BOLD, _colon(answer, answer.label(key), space=True))

    if answer.origin is not None:
        first, *rest = answer_origin_lines(answer)
        out += [h("where_from") + first] + [f"  {line}" for line in rest]
    if answer.symbol is not None:
        out += ([""] if out else []) + [h("releases") + answer.localized(symbol_sentence(answer.symbol))]
    if answer.choice_note:
        out += ([""] if out else []) + [h("releases") + answer.choice_note]
    if answer.release_change is not None:
        out += ([""] if out else []) + [h("release_change") + answer.localized(answer.release_change.sentence())]
    if answer.gpu_memory is not None:
        out += ([""] if out else []) + [h("gpu_at_failure") + answer.gpu_memory.reading(answer.reader_language)]
    if answer.load_memory is not None:
        out += ([""] if out else []) + [h("gpu_after_load") + answer.load_memory.reading(answer.reader_language)]
    if answer.dependency is not None and answer.abstained:
        out += ([""] if out else []) + [h("dependency") + answer.localized(dependency_sentence(answer.dependency))]
    return out


def _not_confirmed_lines(answer: Answer, detected: str, c) -> list[str]:
    """A lead or unknown: the outcome in words and why, then what is known (the root error, where it
    arises and comes from) and what to collect; no fix."""
    known = provenance_lines(answer, c)
    words = answer.label
    out = [answer.diagnosis]
    if answer.reasons:
        title = answer.reasons_title
        out += ["", c(_BOLD, _colon(answer, title))] + [f"  - {r}" for r in answer.reasons]
    if answer.confirm_if:
        out += ["", c(_BOLD, _colon(answer, words("confirm_if")))] + [f"  > {line}" for line in answer.confirm_if]
    if answer.primary_error:
        out += ["", c(_BOLD, _colon(answer, words("root_error"))), f"  {answer.primary_error}"]
    where = where_line(answer)
    if where:
        out += ["", c(_BOLD, _colon(answer, words("where_arises"), space=True)) + where]
    if known:   # the emitting site and the release facts, beside where it arises
        out += [""] + known
    if detected:
        out += ["", c(_BOLD, _colon(answer, words("detected"), space=True)) + detected]
    if answer.explanation:
        out += ["", c(_BOLD, _colon(answer, words("model_reading"))),
                f"  {answer.explanation}"]
    if answer.flags:
        out += ["", c(_BOLD, _colon(answer, flags_heading(answer)))]
        out += [f"  - {answer.localized(f.line(answer.detected.sglang_version))}" for f in answer.flags]
    if answer.next_steps:
        out += ["", c(_BOLD, _colon(answer, words("collect_next")))] + [f"  - {s}" for s in answer.next_steps]
    return out


def flags_heading(answer: Answer) -> str:
    """The heading over a question's flags: whose help text it is, and how to see the user's own."""
    release = answer.flags[0].help_release
    if answer.reader_language == "zh":
        return (f"与你的问题有关的参数（SGLang {release} 的帮助文本；"
                "`python3 -m sglang.launch_server --help` 显示你所用版本的）")
    return (f"Flags your question is about (help text of SGLang {release}; "
            "`python3 -m sglang.launch_server --help` shows your release's)")


def render_text(answer: Answer, color: bool = False) -> str:
    def c(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    answer = neutralize_data(answer)   # escapes from a paste or the model: only our colours reach the terminal
    words = answer.label
    out: list[str] = [c(_OUTCOME_COLOR.get(answer.outcome, _YELLOW) + _BOLD, answer.headline)]
    if answer.note:
        out.append(c(_DIM, f"note: {answer.note}"))
    detected = _detected_line(answer)
    if answer.abstained:
        out += _not_confirmed_lines(answer, detected, c)
    else:
        top = answer.matches[0] if answer.matches else None
        if top:
            first, second = top.titles(answer.reader_language)
            out.append(c(_GREEN + _BOLD, f"{first}") + c(_DIM, f"  [{top.id}]"))
            if second:
                out.append(second)
            out.append(c(_DIM, answer.label("score_line").format(
                score=f"{top.score:.2f}", confidence=f"{answer.confidence:.2f}",
                kb=answer.label(f"confidence_{top.confidence}") if f"confidence_{top.confidence}" in HEADINGS
                else top.confidence,
                mode=answer.label(f"mode_{answer.mode}") if f"mode_{answer.mode}" in HEADINGS else answer.mode)))
            if top.evidence:
                out += ["", c(_BOLD, _colon(answer, words("matched")))] + [f"  > {e}" for e in top.evidence]
        if detected:
            out += ["", c(_BOLD, _colon(answer, words("detected"), space=True)) + detected]
        out += ["", c(_BOLD, _colon(answer, words("what_went_wrong"))), f"  {_without_title(answer.diagnosis, top)}"]
        known = provenance_lines(answer, c)
        if known:
            out += [""] + known
        if answer.fix:
            out += ["", c(_BOLD, _colon(answer, words("fix")))]
            for i, step in enumerate(answer.fix, 1):
                first, *rest = step.split("\n")
                out.append(f"  {i}. {first}")
                out += [c(_CYAN, line) for line in _step_lines(rest)]
        if answer.next_steps:
            out += ["", c(_BOLD, _colon(answer, words("verify_next")))] + [f"  - {s}" for s in answer.next_steps]
    if answer.warnings:
        out += ["", c(_RED + _BOLD, _colon(answer, words("warnings")))] + [f"  ! {w}" for w in answer.warnings]
    if answer.changes:
        out += ["", c(_BOLD, _colon(answer, words("checked")))] + [f"  * {ch}" for ch in answer.changes]
    if answer.citations:
        out += ["", c(_BOLD, _colon(answer, words("sources")))] + [f"  - {s}" for s in citation_labels(answer)]
    others = answer.matches[1:] if not answer.abstained else []
    if others:
        out += ["", c(_DIM, _colon(answer, words("other_candidates"), space=True) + "; ".join(f"{m.id} ({m.score:.2f})" for m in others))]
    if answer.similar_issues:
        out += ["", c(_BOLD, _colon(answer, words("similar")))]
        for m in answer.similar_issues:
            meta = m.meta
            labels = ",".join(meta.get("labels", [])[:4])
            out.append(f"  - #{meta.get('number', '?')} {m.title} [{meta.get('state', '?')}"
                       f"{', ' + labels if labels else ''}; updated {str(meta.get('updated_at', '?'))[:10]}] {m.url or ''}")
    return "\n".join(out)


def _without_title(diagnosis: str, top) -> str:
    """The cause under "What went wrong": the entry's title is printed just above it already."""
    for title in (top.title, top.title_zh) if top else ():
        if title and diagnosis.startswith(title) and diagnosis[len(title):].strip(".。 "):
            return diagnosis[len(title):].lstrip(".。 ")
    return diagnosis


def _step_lines(lines: list[str]) -> list[str]:
    """A fix step's command, snippet and caution lines under its number: a command's `$` and a
    snippet's fence (`assistant.snippets`) line up under the step's text, a snippet's lines keep
    their own indentation inside it, and the further lines of a multi-line shell command (a heredoc)
    stay under the command's first line."""
    out, in_snippet = [], False
    for line in lines:
        fence = line.startswith(BLOCK_INDENT + FENCE)
        if in_snippet or fence or (line.startswith("    ") and line[4:6] in ("$ ", "! ")):
            out.append(f"     {line[4:]}" if line.startswith(BLOCK_INDENT) else f"     {line}".rstrip())
        else:
            out.append(f"       {line}")
        if fence:
            in_snippet = not in_snippet
    return out


def citation_labels(answer: Answer) -> list[str]:
    """The answer's sources as a reader can use them: a seed document (one of the documents the KB
    was written from, not shipped) is named with its title, not by its file name alone."""
    titles: dict[str, str] = {}
    for match in answer.matches:   # best first: the entry cited names its own part of a shared seed
        for source in match.meta.get("sources") or []:
            if isinstance(source, dict) and source.get("seed"):
                titles.setdefault(source["seed"], source.get("title") or "")
    labels = []
    for citation in answer.citations:
        if citation.startswith("seed:"):
            seed = citation[len("seed:"):]
            title = titles.get(seed)
            citation = f"seed document {seed}" + (f": {title}" if title else "")
        labels.append(citation)
    return labels
