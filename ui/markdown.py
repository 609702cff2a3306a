"""Turn an Answer into the Markdown the web page shows: the chat reply, the sources panel and the
detected environment. Presentation only: every fact comes from the Answer as the library made it.

The outcome is visible first: a fix carries a FIX badge under its title; a lead or unknown is a
heading of its own (`⚠️ LEAD (not confirmed)`, `❔ UNKNOWN: not a known problem`) and has no Fix
section and no command blocks.

Fix commands (a step's lines starting with "    $ ") become ```bash blocks, and a step's YAML,
Python or JSON snippet a block of its own language (`assistant.snippets`); the Gradio chatbot gives
each a copy button. Text that came from the user's log is fenced or put in code spans,
so `*`, `_` and `<` in a trace are shown as written instead of being read as Markdown or HTML.
Everything else that reaches the chat goes through `page_safe`: no raw HTML (an `<img>` in a paste
or a model answer would make the browser fetch any URL), no Markdown images, no control characters,
no secrets.
"""

from __future__ import annotations

import functools
import html
import re

from assistant.answer import Answer, Match
from assistant.control_chars import neutralize
from assistant.provenance import CONDITION_PREFIX, dependency_sentence, symbol_sentence
from assistant.redact import redact
from assistant.snippets import step_parts
from assistant.render import answer_origin_lines, flags_heading
from assistant.text import code_span
from assistant.wording import colon, heading

ECHO_MAX_LINES = 40        # lines of a paste repeated in the user's chat bubble
ECHO_MAX_CHARS = 6000
MODE_LABELS = {"llm": "written by the SGLang model, checked against the knowledge base",
               "extractive": "from the knowledge base"}


# code blocks (possibly indented, as fix commands are) and code spans show their text as written
_CODE_RE = re.compile(r"(`{3,}|~{3,})[^\n]*\n.*?\n[ \t]*\1[ \t]*(?=\n|$)|(`+)[^`\n].*?(?<!`)\2(?!`)", re.S)
_OWN_TAGS_RE = re.compile(r"<(?!/?sub>)")   # <sub> is the answer heading's own markup


def page_safe(markdown: str) -> str:
    """Chat Markdown that can load nothing: outside code, `<` is shown as text (no HTML such as
    <img>, <iframe> or autolinks) and `![...](url)` images become plain text; control characters
    and escape sequences are removed everywhere, and secrets are scrubbed."""
    markdown = redact(neutralize(markdown))
    out, last = [], 0
    for code in _CODE_RE.finditer(markdown):
        out += [_defused(markdown[last:code.start()]), code.group(0)]
        last = code.end()
    out.append(_defused(markdown[last:]))
    return "".join(out)


def _defused(text: str) -> str:
    return _OWN_TAGS_RE.sub("&lt;", text).replace("![", "!\\[")


def _page_safe_result(render, safe=page_safe):
    @functools.wraps(render)
    def wrapper(*args, **kwargs) -> str:
        return safe(render(*args, **kwargs))
    return wrapper


def _neutralized_result(render):
    """For the panels built as escaped HTML: only the control characters need removing."""
    return _page_safe_result(render, neutralize)


def fenced(text: str, language: str = "text") -> str:
    """A code block that no backtick run inside `text` can close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"




def split_step(step: str) -> tuple[str, list[str]]:
    """A fix step -> (its text, its shell commands)."""
    text, blocks = step_parts(step)
    return " ".join(text), [code for language, code in blocks if language == "bash"]


def fix_markdown(steps: list[str]) -> list[str]:
    """Each step's text, then its blocks: the shell commands in a bash block, a YAML, Python or JSON
    snippet in a block of its own language (`assistant.snippets`)."""
    out = []
    for number, step in enumerate(steps, 1):
        text, blocks = step_parts(step)
        out.append(f"{number}. {' '.join(text)}")
        for language, code in blocks:
            out += ["", *("   " + line for line in fenced(code, language).split("\n")), ""]
    return out


OUTCOME_ICONS = {"fix": "✅", "lead": "⚠️", "unknown": "❔"}


def fix_badge(language: str = "en") -> str:
    return f"**✅ FIX** · {heading('fix_badge', language)}"


def outcome_heading(answer: Answer) -> str:
    """The outcome as a heading (a lead or unknown) or a badge under the title (a fix)."""
    icon = OUTCOME_ICONS.get(answer.outcome, "❔")
    return f"### {icon} {answer.headline}" if answer.abstained else fix_badge(answer.reader_language)


def _heading(answer: Answer) -> list[str]:
    if answer.abstained:
        return [outcome_heading(answer)]
    top = answer.matches[0] if answer.matches else None
    if top is None:
        return ["### Answer", fix_badge(answer.reader_language)]
    first, second = top.titles(answer.reader_language)
    lines = [f"### {first}", fix_badge(answer.reader_language)]
    if second:
        lines += ["", second]
    lines += ["", f"<sub>{code_span(top.id)} · match score {top.score:.2f} · answer confidence "
                  f"{answer.confidence:.2f} · KB confidence {top.confidence or 'n/a'} · "
                  f"{MODE_LABELS.get(answer.mode, answer.mode)}</sub>"]
    return lines


def _field(answer: Answer, key: str) -> str:
    """A bold label before its value, with the colon of the reader's language (Chinese uses the
    full-width one, which needs no space after it)."""
    mark = colon(answer.reader_language)
    return f"**{answer.label(key)}{mark}**" + (" " if mark == ":" else "")


@_page_safe_result
def answer_markdown(answer: Answer) -> str:
    """The chat reply: the matched problem, what went wrong, the fix, warnings, next steps."""
    out = _heading(answer)
    if answer.note:
        out += ["", f"> Note: {answer.note}"]
    if answer.abstained:
        return "\n".join(out + _not_confirmed_markdown(answer)).strip()
    words = answer.label
    out += ["", f"**{words('what_went_wrong')}**", "", answer.diagnosis]
    if answer.symbol is not None:
        out += ["", f"{_field(answer, 'releases')}{answer.localized(symbol_sentence(answer.symbol))}"]
    if answer.choice_note:
        out += ["", f"{_field(answer, 'releases')}{answer.choice_note}"]
    if answer.release_change is not None:
        out += ["", f"{_field(answer, 'release_change')}{answer.localized(answer.release_change.sentence())}"]
    out += _memory_markdown(answer)
    if answer.fix:
        out += ["", f"**{words('fix')}**", "", *fix_markdown(answer.fix)]
    if answer.warnings:
        out += ["", f"**{words('warnings')}**", ""] + [f"- ⚠ {w}" for w in answer.warnings]
    if answer.next_steps:
        steps = [s.removeprefix(answer.label("verify_step")) for s in answer.next_steps]
        out += ["", f"**{words('verify')}**", ""] + [f"- {s}" for s in steps]
    if answer.changes:
        out += ["", f"**{words('checked')}**", ""] + [f"- {c}" for c in answer.changes]
    return "\n".join(out).strip()


def _memory_markdown(answer: Answer) -> list[str]:
    """What the paste's memory numbers say (`assistant.gpu_memory`), on every outcome."""
    out = []
    words = answer.label
    if answer.gpu_memory is not None:
        out += ["", f"{_field(answer, 'gpu_at_failure')}{answer.gpu_memory.reading(answer.reader_language)}"]
    if answer.load_memory is not None:
        out += ["", f"{_field(answer, 'gpu_after_load')}{answer.load_memory.reading(answer.reader_language)}"]
    return out


def _not_confirmed_markdown(answer: Answer) -> list[str]:
    """A lead or unknown: what is known, why it is not a fix, what to collect. The entry's steps
    are not shown, and nothing becomes a copyable command block: nothing here is the fix."""
    out = [answer.diagnosis]
    words = answer.label
    if answer.reasons:
        title = answer.reasons_title
        out += ["", f"**{title}**", ""] + [f"- {r}" for r in answer.reasons]
    if answer.confirm_if:
        out += ["", f"**{words('confirm_if')}**", ""]
        out += [f"- {code_span(line)}" for line in answer.confirm_if]
    if answer.primary_error:
        out += ["", f"**{words('root_error')}**", "", fenced(answer.primary_error)]
    where = [code_span(c) for c in answer.failing_components]
    if answer.failing_module:
        where.append(f"{words('innermost_frame')} {code_span(answer.failing_module)}"
                     + (f", {code_span(answer.failing_function + '()')}" if answer.failing_function else ""))
    if answer.named_class:
        where.append(f"{code_span(answer.named_class[0])} {words('named_in_paste')} "
                     f"{code_span(answer.named_class[1])}")
    if answer.fault_note and where:
        where.append(answer.fault_note)
    if where:
        out += ["", f"{_field(answer, 'where_arises')}" + ", ".join(where)]
    out += _provenance_markdown(answer)   # the emitting site and release facts, beside where it arises
    if answer.explanation:
        out += ["", f"**{words('model_reading')}**", "",
                f"> {' '.join(answer.explanation.split())}"]
    if answer.warnings:
        out += ["", f"**{words('warnings')}**", ""] + [f"- ⚠ {w}" for w in answer.warnings]
    if answer.flags:
        out += ["", f"**{flags_heading(answer)}**", ""]
        out += [f"- {answer.localized(f.line(answer.detected.sglang_version))}" for f in answer.flags]
    if answer.next_steps:
        out += ["", f"**{words('collect_next')}**", ""] + [f"- {s}" for s in answer.next_steps]
    if answer.changes:
        out += ["", f"**{words('checked')}**", ""] + [f"- {c}" for c in answer.changes]
    return out


def _provenance_markdown(answer: Answer) -> list[str]:
    """For a lead or unknown, where the error comes from and the dependency pin, beside where it
    arises: what the registries know for certain when no entry is the fix."""
    out = []
    words = answer.label
    if answer.origin is not None:
        first, *rest = answer_origin_lines(answer)
        out += ["", f"{_field(answer, 'where_from')}{code_span(first)}"]
        out += [f"- {code_span(r) if r.startswith(CONDITION_PREFIX) else r}" for r in rest]
    if answer.symbol is not None:
        out += ["", f"{_field(answer, 'releases')}{answer.localized(symbol_sentence(answer.symbol))}"]
    if answer.choice_note:
        out += ["", f"{_field(answer, 'releases')}{answer.choice_note}"]
    if answer.release_change is not None:
        out += ["", f"{_field(answer, 'release_change')}{answer.localized(answer.release_change.sentence())}"]
    out += _memory_markdown(answer)
    if answer.dependency is not None:
        out += ["", f"{_field(answer, 'dependency')}{code_span(answer.localized(dependency_sentence(answer.dependency)))}"]
    return out


def origin_source_markdown(answer: Answer) -> str:
    """The emitting site as a block of the sources panel: module:function, the condition and the
    source lines around it, the releases that have the message."""
    origin = answer.origin
    first, *rest = answer_origin_lines(answer, "en")
    body = [f"<p>{html.escape(line)}</p>" for line in rest if not line.startswith(CONDITION_PREFIX)]
    if origin.is_sglang and origin.context:
        where = f"{origin.path}, line {origin.line}" if origin.line else origin.path
        body.append(f"<p>Source ({html.escape(where)}, newest release with it):</p>"
                    f"<pre>{html.escape(origin.context)}</pre>")
    elif origin.is_sglang and origin.condition:
        body.append(f"<p>Condition:</p><pre>{html.escape(origin.condition)}</pre>")
    return (f'<details class="source" open><summary><b>Where it comes from</b> · {html.escape(first)}'
            "</summary>" + "".join(body) + "</details>")


def _links(match: Match) -> list[str]:
    urls = [s for s in match.sources if s.startswith(("http://", "https://"))]
    if match.url and match.url not in urls:
        urls.insert(0, match.url)
    titles = {s.get("url"): s.get("title") for s in match.meta.get("sources", []) if isinstance(s, dict)}
    return [f'<a href="{html.escape(u, quote=True)}" target="_blank" rel="noopener">'
            f"{html.escape(titles.get(u) or u)}</a>" for u in urls]


def _state(match: Match) -> str:
    if match.kind == "entry":
        return f"confidence {match.confidence or 'n/a'}"
    state = match.meta.get("state") or match.confidence or "n/a"
    resolved = " (resolved)" if match.meta.get("resolved") else ""
    return f"state {state}{resolved}"


KIND_LABELS = {"entry": "KB entry", "issue": "GitHub issue", "doc": "document"}


def source_markdown(rank: int, match: Match, opened: bool = False) -> str:
    """One source as a collapsible block: the summary line has its score, confidence or state."""
    name = f"#{match.meta['number']} " if match.kind == "issue" and match.meta.get("number") else ""
    summary = (f"<b>{rank}. {html.escape(name + match.id)}</b> · {KIND_LABELS.get(match.kind, match.kind)}"
               f" · score {match.score:.2f} · {_state(match)}")
    body = [f"<p>{html.escape(match.title)}</p>"]
    if match.title_zh:
        body.append(f"<p>{html.escape(match.title_zh)}</p>")
    if match.evidence:
        body.append("<p>Matched in your log:</p><pre>" + html.escape("\n".join(match.evidence)) + "</pre>")
    if match.meta.get("labels"):
        body.append(f"<p>Labels: {html.escape(', '.join(match.meta['labels'][:6]))}</p>")
    links = _links(match)
    other = [s for s in match.sources if not s.startswith(("http://", "https://"))]
    if links:
        body.append("<p>Links: " + " · ".join(links) + "</p>")
    if other:
        body.append("<p>Also from: " + html.escape("; ".join(other)) + "</p>")
    return (f'<details class="source"{" open" if opened else ""}><summary>{summary}</summary>'
            + "".join(body) + "</details>")


@_neutralized_result
def sources_markdown(answer: Answer | None) -> str:
    """The sources panel: the matched entries (best first), then similar GitHub reports."""
    if answer is None:
        return "Sources appear here: each matched KB entry or issue with its score, confidence and link."
    out = []
    # for a fix the entry is the source; for a lead or unknown where the error comes from leads
    if answer.origin is not None and answer.outcome != "fix":
        out += [origin_source_markdown(answer), ""]
    if answer.matches:
        heading = {"fix": "Matched", "lead": "Lead (not confirmed) and other candidates"}.get(
            answer.outcome, "Closest entries (not a match)")
        out += [f"**{heading}**", ""]
        out += [source_markdown(i, m) for i, m in enumerate(answer.matches, 1)]
    seen = {m.id for m in answer.matches}
    similar = [m for m in answer.similar_issues if m.id not in seen]
    if similar:
        out += ["", "**Similar reports**", ""]
        out += [source_markdown(i, m) for i, m in enumerate(similar, len(answer.matches) + 1)]
    if answer.origin is not None and answer.outcome == "fix":
        out += ["", origin_source_markdown(answer)]
    return "\n".join(out) if out else "No sources matched this question."


@_neutralized_result
def detected_markdown(answer: Answer | None) -> str:
    """What the trace says about the user's setup (versions, GPU, launch flags)."""
    if answer is None:
        return "Versions, GPU and launch flags found in your trace appear here."
    env = answer.detected
    rows = [("SGLang", env.sglang_version), ("torch", env.torch_version), ("CUDA", env.cuda_version),
            ("flashinfer", env.flashinfer_version), ("NCCL", env.nccl_version), ("CANN", env.cann_version),
            ("GPU", env.gpu), ("hardware", env.hardware)]
    found = [(k, v) for k, v in rows if v]
    out = [f"- **{k}**: {code_span(v)}" for k, v in found]
    if env.flags:
        out.append("- **flags**: " + " ".join(code_span(f) for f in env.flags[:20])
                   + (" …" if len(env.flags) > 20 else ""))
    if not out:
        return ("Nothing detected. Paste the output of `python3 -m sglang.check_env` and your launch "
                "command with the error to get version-aware fixes.")
    return "\n".join(out)


@_page_safe_result
def question_markdown(text: str, file_name: str | None = None, file_size: int | None = None) -> str:
    """The user's chat bubble: prose as written, a trace in a code block, a file by its name."""
    parts = []
    if text.strip():
        lines = text.strip("\n").split("\n")
        looks_like_log = len(lines) > 1 or bool(re.search(r"Error|error:|Traceback|Exception|\$ ", text))
        if looks_like_log:
            shown = "\n".join(lines[:ECHO_MAX_LINES])[:ECHO_MAX_CHARS]
            more = len(lines) - len(shown.split("\n"))
            parts.append(fenced(shown) + (f"\n\n… {more} more lines" if more > 0 else ""))
        else:
            parts.append(text.strip())
    if file_name:
        size = f" ({_size(file_size)})" if file_size is not None else ""
        parts.append(f"Attached log: {code_span(file_name)}{size}")
    return "\n\n".join(parts)


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


def history_text(answer: Answer) -> str:
    """A compact version of an answer for the conversation history the model sees."""
    steps = "; ".join(split_step(s)[0] for s in answer.fix)
    outcome = "" if answer.outcome == "fix" else f"[{answer.headline}] "
    return outcome + answer.diagnosis + (f" Fix: {steps}" if steps else "")
