"""Turn an Answer into Slack messages: mrkdwn blocks with the fix in code blocks, sources as
`<url|title>` links and feedback buttons, split to fit Slack's limits; and read Slack's text back.

The outcome leads every answer: `FIX: <title>`, `LEAD (not confirmed)` or `UNKNOWN: not a known
problem` in the first section, the fallback text and the footer; a lead or unknown has no Fix
section and no fix commands.

Everything the bot posts goes through `redact`, so a token or password that a user pasted along
with their log is never echoed into the channel. The answer quotes at most the matched error
lines (`Match.evidence`), never the user's traceback.
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse

from assistant.answer import Answer
from assistant.control_chars import neutralize
from assistant.provenance import CONDITION_PREFIX, dependency_sentence, symbol_sentence
from assistant.render import answer_origin_lines, flags_heading
from assistant.wording import colon
from assistant.snippets import step_parts
from assistant.redact import REDACTED, redact, redact_data  # noqa: F401 - the library's one scrubber, re-exported

# Slack's documented limits: 3000 characters in a section's text, 50 blocks in a message, and
# 2000 characters in a button value. Messages are kept well under the 40k-character message cap so
# one answer reads as a few short posts rather than one wall.
SECTION_CHARS = 3000
BLOCKS_PER_MESSAGE = 45
CHARS_PER_MESSAGE = 11_000
BUTTON_VALUE_CHARS = 2000
EVIDENCE_LINES = 5
EVIDENCE_CHARS = 300
FALLBACK_CHARS = 300

FEEDBACK_BLOCK_ID = "ask_feedback"
ACTION_HELPFUL = "ask_feedback_up"
ACTION_NOT_HELPFUL = "ask_feedback_down"

# ---- reading Slack's text ------------------------------------------------------------------------

_MENTION_RE = re.compile(r"<[@!][^>]*>")
_LINK_RE = re.compile(r"<((?:https?|mailto|ftp)://?[^>|]*)(?:\|([^>]*))?>")
_CHANNEL_RE = re.compile(r"<#[A-Z0-9]+(?:\|([^>]*))?>")


def slack_to_plain(text: str) -> str:
    """A Slack message as the user typed it: mentions dropped, links and escapes undone, code
    fences removed (a trace pasted in ``` reads as plain log lines)."""
    text = _MENTION_RE.sub("", text or "")
    text = _CHANNEL_RE.sub(lambda m: "#" + (m.group(1) or "channel"), text)
    text = _LINK_RE.sub(lambda m: m.group(2) or m.group(1), text)
    text = text.replace("```", "\n")
    return html.unescape(text).strip()


# ---- writing mrkdwn ------------------------------------------------------------------------------

def escape(text: str) -> str:
    """Slack treats &, < and > as control characters in every text field, code blocks included.
    Control characters and escape sequences (from a paste, an issue or the model) are removed."""
    return neutralize(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_MD_LINK_RE = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
_MD_BOLD_RE = re.compile(r"\*\*(.+?)\*\*")


def md_to_mrkdwn(text: str) -> str:
    """The KB's Markdown (bold, links, `code`) as Slack mrkdwn, secrets redacted, escaped."""
    text = escape(redact(text))
    text = _MD_LINK_RE.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", text)
    return _MD_BOLD_RE.sub(r"*\1*", text)


def link(url: str, label: str | None = None) -> str:
    label = label or short_label(url)
    return f"<{escape(url)}|{escape(label).replace('|', '¦')}>"


def short_label(url: str) -> str:
    """owner/repo#123 for GitHub issues and PRs, host/path otherwise."""
    parts = urllib.parse.urlsplit(url)
    m = re.match(r"^/([^/]+)/([^/]+)/(?:issues|pull|discussions)/(\d+)", parts.path)
    if parts.netloc.endswith("github.com") and m:
        return f"{m.group(1)}/{m.group(2)}#{m.group(3)}"
    text = (parts.netloc + parts.path).rstrip("/")
    return text if len(text) <= 70 else text[:67] + "..."


def _code_block(lines: list[str]) -> str:
    return "```" + escape(redact("\n".join(lines))) + "```"


def _fix_step(number: int, step: str) -> str:
    """A fix step: its text, then its shell commands in one code block and each YAML, Python or
    JSON snippet in its own (`assistant.snippets`)."""
    text_lines, blocks = step_parts(step)
    out = f"{number}. " + md_to_mrkdwn(" ".join(text_lines))
    for _, code in blocks:
        out += "\n" + _code_block(code.split("\n"))
    return out


def detected_line(answer: Answer) -> str:
    env = answer.detected
    parts = [f"{name} {value}" for name, value in (
        ("SGLang", env.sglang_version), ("torch", env.torch_version), ("CUDA", env.cuda_version),
        ("flashinfer", env.flashinfer_version), ("NCCL", env.nccl_version), ("CANN", env.cann_version)) if value]
    if env.gpu:
        parts.append(env.gpu)
    if env.flags:
        shown = " ".join(env.flags[:14]) + (" ..." if len(env.flags) > 14 else "")
        parts.append(f"flags: `{shown}`")
    return redact(", ".join(parts))


def _source_links(answer: Answer) -> list[str]:
    titles = {m.url: m.title for m in answer.matches + answer.similar_issues if m.url}
    for m in answer.matches:
        if m.kind == "entry":
            for source in m.meta.get("sources", []):
                if source.get("url") and source.get("title"):
                    titles.setdefault(source["url"], source["title"])
    out = []
    for citation in answer.citations:
        if citation.startswith(("http://", "https://")):
            title = titles.get(citation)
            label = f"{short_label(citation)}: {title}" if title else short_label(citation)
            out.append("• " + link(citation, label))
        elif citation.startswith("kb:"):
            out.append(f"• knowledge base entry `{escape(citation[3:])}`")
        elif citation.startswith("seed:"):
            out.append(f"• seed document `{escape(citation[5:])}` (in the knowledge base)")
        else:
            out.append("• " + escape(redact(citation)))
    return out


OUTCOME_EMOJI = {"lead": ":warning:", "unknown": ":grey_question:"}


def _not_confirmed_sections(answer: Answer) -> list[str]:
    """A lead or unknown: the outcome as the header, why, the root error and where it arises; the
    entry's steps are not shown, so nothing here reads as the fix."""
    emoji = OUTCOME_EMOJI.get(answer.outcome, ":grey_question:")
    known = provenance_section(answer, dependency=True)
    sections = [f"*{emoji} {escape(answer.headline)}*\n" + md_to_mrkdwn(answer.diagnosis)]
    words = answer.label
    if answer.reasons:
        title = f"*{escape(answer.reasons_title)}*"
        sections.append(title + "\n" + "\n".join("• " + md_to_mrkdwn(r) for r in answer.reasons))
    if answer.confirm_if:
        sections.append(f"*{words('confirm_if')}{colon(answer.reader_language)}*\n" + "\n".join(
            f"> `{escape(redact(line[:EVIDENCE_CHARS]))}`" for line in answer.confirm_if))
    if answer.primary_error:
        sections.append(f"*{words('root_error')}{colon(answer.reader_language)}*\n"
                        + _code_block([answer.primary_error[:EVIDENCE_CHARS]]))
    where = [f"`{escape(c)}`" for c in answer.failing_components]
    if answer.failing_module:
        where.append(f"{words('innermost_frame')} `{escape(redact(answer.failing_module))}`"
                     + (f", `{escape(redact(answer.failing_function))}()`" if answer.failing_function else ""))
    if answer.named_class:
        where.append(f"`{escape(answer.named_class[0])}` {words('named_in_paste')} "
                     f"`{escape(answer.named_class[1])}`")
    if answer.fault_note and where:
        where.append(escape(answer.fault_note))
    if where:
        sections.append(f"*{words('where_arises')}{colon(answer.reader_language)}* " + ", ".join(where))
    if known:   # the emitting site and release facts, beside where it arises
        sections.append(known)
    if answer.explanation:
        sections.append(f"*{words('model_reading')}*\n"
                        + md_to_mrkdwn(answer.explanation))
    return sections


def provenance_section(answer: Answer, dependency: bool = False) -> str:
    """"Where it comes from" (the emitting site or the other library) and the dependency pin."""
    parts = []
    words = answer.label
    if answer.origin is not None:
        first, *rest = answer_origin_lines(answer)
        code = [f"`{escape(line)}`" if line.startswith(CONDITION_PREFIX) else escape(line) for line in rest]
        parts.append(f"*{words('where_from')}{colon(answer.reader_language)}* `{escape(first)}`" + "".join(f"\n• {line}" for line in code))
    if answer.symbol is not None:
        parts.append(f"*{words('releases')}{colon(answer.reader_language)}* {escape(redact(answer.localized(symbol_sentence(answer.symbol))))}")
    if answer.choice_note:
        parts.append(f"*{words('releases')}{colon(answer.reader_language)}* {md_to_mrkdwn(answer.choice_note)}")
    if answer.release_change is not None:
        said = answer.localized(answer.release_change.sentence())
        parts.append(f"*{words('release_change')}{colon(answer.reader_language)}* {escape(redact(said))}")
    if answer.gpu_memory is not None:
        parts.append(f"*{words('gpu_at_failure')}{colon(answer.reader_language)}* {escape(answer.gpu_memory.reading(answer.reader_language))}")
    if answer.load_memory is not None:
        parts.append(f"*{words('gpu_after_load')}{colon(answer.reader_language)}* {escape(answer.load_memory.reading(answer.reader_language))}")
    if dependency and answer.dependency is not None:
        said = answer.localized(dependency_sentence(answer.dependency))
        parts.append(f"*{words('dependency')}{colon(answer.reader_language)}* `{escape(redact(said))}`")
    return "\n".join(parts)


def answer_sections(answer: Answer) -> list[str]:
    """The answer as mrkdwn sections, in reading order (each may still be longer than a block)."""
    sections: list[str] = []
    words = answer.label
    if answer.abstained:
        sections += _not_confirmed_sections(answer)
    else:
        top = answer.matches[0] if answer.matches else None
        if top:
            first, second = top.titles(answer.reader_language)
            head = f"*:white_check_mark: FIX: {escape(first)}*  `{escape(top.id)}`"
            if second:
                head += "\n" + escape(second)
            sections.append(head)
            if top.evidence:
                # a raw ">" opens a quote; only "<" and "&" start Slack's control sequences
                quoted = [f"> `{escape(redact(line[:EVIDENCE_CHARS]))}`" for line in top.evidence[:EVIDENCE_LINES]]
                sections.append(f"*{words('matched')}{colon(answer.reader_language)}*\n" + "\n".join(quoted))
        sections.append(f"*{words('what_went_wrong')}*\n" + md_to_mrkdwn(answer.diagnosis))
        known = provenance_section(answer)
        if known:
            sections.append(known)
        if answer.fix:
            sections.append(f"*{words('fix')}*")
            sections += [_fix_step(i, step) for i, step in enumerate(answer.fix, 1)]
    detected = detected_line(answer)
    if detected:
        sections.append(f"*{words('detected')}{colon(answer.reader_language)}* " + escape(detected))
    if answer.flags:
        version = answer.detected.sglang_version
        sections.append(f"*{md_to_mrkdwn(flags_heading(answer))}*\n"
                        + "\n".join("• " + md_to_mrkdwn(answer.localized(f.line(version))) for f in answer.flags))
    if answer.next_steps:
        title = f"*{words('collect_next' if answer.abstained else 'verify')}*"
        steps = [s.removeprefix(answer.label("verify_step")) for s in answer.next_steps]
        sections.append(title + "\n" + "\n".join("• " + md_to_mrkdwn(s) for s in steps))
    if answer.warnings:
        sections.append(f"*{words('warnings')}*\n" + "\n".join(":warning: " + md_to_mrkdwn(w) for w in answer.warnings))
    if answer.changes:
        sections.append(f"*{words('checked')}*\n" + "\n".join("• " + md_to_mrkdwn(c) for c in answer.changes))
    sources = _source_links(answer)
    if sources:
        sections.append(f"*{words('sources')}*\n" + "\n".join(sources))
    if answer.similar_issues:
        lines = []
        for m in answer.similar_issues:
            state = m.meta.get("state")
            lines.append("• " + (link(m.url, f"{short_label(m.url)}: {m.title}") if m.url else escape(m.title))
                         + (f" ({escape(state)})" if state else ""))
        sections.append(f"*{words('similar')}*\n" + "\n".join(lines))
    return sections


def _split_long(section: str, limit: int = SECTION_CHARS) -> list[str]:
    """Cut a section on line boundaries; a code block cut in two is closed and reopened, so both
    halves still render as code."""
    if len(section) <= limit:
        return [section]
    budget = limit - 8  # room for the ``` that closes and reopens a cut code block
    lines = []
    for line in section.split("\n"):
        while len(line) > budget:  # one very long line: cut it too, between words when it can
            cut = line.rfind(" ", budget // 2, budget)
            cut = cut if cut > 0 else budget
            lines.append(line[:cut])
            line = line[cut:].lstrip(" ")
        lines.append(line)
    pieces, current, in_code = [], "", False
    for line in lines:
        if current and len(current) + 1 + len(line) > budget:
            pieces.append(current + ("```" if in_code else ""))
            current = ("```" if in_code else "") + line
        else:
            current = f"{current}\n{line}" if current else line
        if line.count("```") % 2:
            in_code = not in_code
    pieces.append(current)
    return [p for p in pieces if p.strip("`\n ")]


def feedback_value(answer_key: str, answer: Answer) -> str:
    """What the buttons carry: enough to record feedback even after the bot restarted."""
    data = {"k": answer_key, "ids": [m.id for m in answer.matches][:5], "m": answer.mode}
    value = json.dumps(data, separators=(",", ":"))
    return value if len(value) <= BUTTON_VALUE_CHARS else json.dumps({"k": answer_key[:1900]})


def feedback_block(value: str) -> dict:
    return {"type": "actions", "block_id": FEEDBACK_BLOCK_ID, "elements": [
        {"type": "button", "action_id": ACTION_HELPFUL, "style": "primary", "value": value,
         "text": {"type": "plain_text", "text": ":thumbsup: Helpful", "emoji": True}},
        {"type": "button", "action_id": ACTION_NOT_HELPFUL, "value": value,
         "text": {"type": "plain_text", "text": ":thumbsdown: Not helpful", "emoji": True}},
    ]}


def footer(answer: Answer) -> dict:
    bits = [answer.headline,
            "answered from the knowledge base" if answer.mode == "extractive" else f"mode: {answer.mode}",
            f"confidence {answer.confidence:.2f}"]
    if answer.note:
        bits.append(redact(answer.note))
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": escape(" · ".join(bits))[:SECTION_CHARS]}]}


def fallback_text(answer: Answer) -> str:
    """The notification / screen-reader text of a message (the blocks are what people read)."""
    if answer.outcome == "lead" and answer.matches:
        text = f"{answer.headline}: {answer.matches[0].title}"
    elif answer.abstained or not answer.matches:
        text = f"{answer.headline}: no fix in the knowledge base for this trace."
    else:
        text = f"FIX: {answer.matches[0].title}"
    return escape(redact(text))[:FALLBACK_CHARS]


def answer_messages(answer: Answer, feedback: str | None = None) -> list[dict]:
    """The answer as one or more chat.postMessage payloads ({"text", "blocks"}), each within
    Slack's limits. The feedback buttons (when `feedback` is a button value) close the last one."""
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": piece}}
              for section in answer_sections(answer) for piece in _split_long(section)]
    blocks.append(footer(answer))
    if feedback is not None:
        blocks.append(feedback_block(feedback))
    messages: list[list[dict]] = [[]]
    size = 0
    for block in blocks:
        chars = len(json.dumps(block, ensure_ascii=False))
        if messages[-1] and (len(messages[-1]) >= BLOCKS_PER_MESSAGE or size + chars > CHARS_PER_MESSAGE):
            messages.append([])
            size = 0
        messages[-1].append(block)
        size += chars
    text = fallback_text(answer)
    return [{"text": text if i == 0 else f"{text} (part {i + 1})", "blocks": b} for i, b in enumerate(messages)]


def notice(text: str, emoji: str = ":warning:") -> dict:
    """A one-line message (looking..., an error) as a payload."""
    line = " ".join(redact(text).split())[:SECTION_CHARS - 20]
    return {"text": escape(line), "blocks": [{"type": "section", "text": {"type": "mrkdwn",
                                                                           "text": f"{emoji} {escape(line)}"}}]}


def feedback_recorded(blocks: list[dict], user: str, helpful: bool) -> list[dict]:
    """The answer's blocks with the buttons replaced by who rated it (so nobody rates twice by
    accident, and the channel sees the answer was checked)."""
    verdict = "helpful :thumbsup:" if helpful else "not helpful :thumbsdown: (thanks, it helps fix the KB)"
    note = {"type": "context", "block_id": FEEDBACK_BLOCK_ID,
            "elements": [{"type": "mrkdwn", "text": f"<@{user}> marked this answer {verdict}"}]}
    out = [b for b in blocks if b.get("block_id") != FEEDBACK_BLOCK_ID]
    return out + [note]
