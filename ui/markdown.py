"""Turn an Answer into the Markdown the web page shows: the chat reply, the sources panel and the
detected environment. Presentation only: every fact comes from the Answer as the library made it.

Fix commands (a step's lines starting with "    $ ") become ```bash blocks, which the Gradio
chatbot gives a copy button. Text that came from the user's log is fenced or put in code spans,
so `*`, `_` and `<` in a trace are shown as written instead of being read as Markdown or HTML.
"""

from __future__ import annotations

import html
import re

from assistant.answer import Answer, Match

COMMAND_PREFIX = "    $ "
ECHO_MAX_LINES = 40        # lines of a paste repeated in the user's chat bubble
ECHO_MAX_CHARS = 6000
MODE_LABELS = {"llm": "written by the SGLang model, checked against the knowledge base",
               "extractive": "from the knowledge base"}


def fenced(text: str, language: str = "text") -> str:
    """A code block that no backtick run inside `text` can close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def code_span(text: str) -> str:
    text = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def split_step(step: str) -> tuple[str, list[str]]:
    """A fix step -> (its text, its shell commands)."""
    text, commands = [], []
    for line in step.split("\n"):
        if line.startswith(COMMAND_PREFIX):
            commands.append(line[len(COMMAND_PREFIX):])
        else:
            text.append(line.strip())
    return " ".join(t for t in text if t), commands


def fix_markdown(steps: list[str]) -> list[str]:
    out = []
    for number, step in enumerate(steps, 1):
        text, commands = split_step(step)
        out.append(f"{number}. {text}")
        for command_block in ([fenced("\n".join(commands), "bash")] if commands else []):
            out += ["", *("   " + line for line in command_block.split("\n")), ""]
    return out


def _heading(answer: Answer) -> list[str]:
    if answer.abstained:
        return ["### No confident match in the knowledge base"]
    top = answer.matches[0] if answer.matches else None
    if top is None:
        return ["### Answer"]
    lines = [f"### {top.title}"]
    if top.title_zh:
        lines.append(top.title_zh)
    lines += ["", f"<sub>{code_span(top.id)} · match score {top.score:.2f} · answer confidence "
                  f"{answer.confidence:.2f} · KB confidence {top.confidence or 'n/a'} · "
                  f"{MODE_LABELS.get(answer.mode, answer.mode)}</sub>"]
    return lines


def answer_markdown(answer: Answer) -> str:
    """The chat reply: the matched problem, what went wrong, the fix, warnings, next steps."""
    out = _heading(answer)
    if answer.note:
        out += ["", f"> Note: {answer.note}"]
    out += ["", "**What went wrong**", "", answer.diagnosis]
    if answer.abstained and answer.primary_error:
        out += ["", "**The error that matters in your log**", "", fenced(answer.primary_error)]
    if answer.fix:
        out += ["", "**Fix**", "", *fix_markdown(answer.fix)]
    if answer.warnings:
        out += ["", "**Warnings**", ""] + [f"- ⚠ {w}" for w in answer.warnings]
    if answer.next_steps:
        label = "Collect next" if answer.abstained else "Verify"
        steps = [s.removeprefix("Verify: ") for s in answer.next_steps]
        out += ["", f"**{label}**", ""] + [f"- {s}" for s in steps]
    if answer.changes:
        out += ["", "**Checked before display**", ""] + [f"- {c}" for c in answer.changes]
    return "\n".join(out).strip()


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


def sources_markdown(answer: Answer | None) -> str:
    """The sources panel: the matched entries (best first), then similar GitHub reports."""
    if answer is None:
        return "Sources appear here: each matched KB entry or issue with its score, confidence and link."
    out = []
    if answer.matches:
        heading = "Closest entries (not a match)" if answer.abstained else "Matched"
        out += [f"**{heading}**", ""]
        out += [source_markdown(i, m) for i, m in enumerate(answer.matches, 1)]
    seen = {m.id for m in answer.matches}
    similar = [m for m in answer.similar_issues if m.id not in seen]
    if similar:
        out += ["", "**Similar reports**", ""]
        out += [source_markdown(i, m) for i, m in enumerate(similar, len(answer.matches) + 1)]
    return "\n".join(out) if out else "No sources matched this question."


def detected_markdown(answer: Answer | None) -> str:
    """What the trace says about the user's setup (versions, GPU, launch flags)."""
    if answer is None:
        return "Versions, GPU and launch flags found in your trace appear here."
    env = answer.detected
    rows = [("SGLang", env.sglang_version), ("torch", env.torch_version), ("CUDA", env.cuda_version),
            ("flashinfer", env.flashinfer_version), ("GPU", env.gpu), ("hardware", env.hardware)]
    found = [(k, v) for k, v in rows if v]
    out = [f"- **{k}**: {code_span(v)}" for k, v in found]
    if env.flags:
        out.append("- **flags**: " + " ".join(code_span(f) for f in env.flags[:20])
                   + (" …" if len(env.flags) > 20 else ""))
    if not out:
        return ("Nothing detected. Paste the output of `python3 -m sglang.check_env` and your launch "
                "command with the error to get version-aware fixes.")
    return "\n".join(out)


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
    return answer.diagnosis + (f" Fix: {steps}" if steps else "")
