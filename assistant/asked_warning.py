"""The warning a user asks about ("is the warning related?", "前面还有一个 warning 不知道有没有关系"),
when a knowledge-base entry says that warning is harmless.

The answer is about the error; the user's own question about a warning next to it would otherwise go
unanswered, with the entry that explains the warning only among the other candidates. When the
user's words ask whether a warning matters and an entry whose title calls its line harmless (not an
error, a performance warning, safe to ignore) matched a line of the paste, the answer says so in
one sentence and names that entry.
"""

from __future__ import annotations

import re

from assistant.retrieve import Hit, Retrieval
from assistant.wording import Sentence

_WARNING = r"(?:warnings?|警告|告警)"
_ASKS = (r"(?:related|relevant|matters?|harmless|the cause|caus(?:e|es|ing) (?:it|this)|safe to ignore|"
         r"有没有关系|有关系|有关吗|相关|有没有影响|有影响|影响|要紧|要不要紧|正常吗|是不是原因|能不能忽略|可以忽略吗)")
ASKS_ABOUT_WARNING_RE = re.compile(rf"{_WARNING}[^.。?？!！\n]{{0,40}}?{_ASKS}|{_ASKS}[^.。?？!！\n]{{0,40}}?{_WARNING}", re.I)
# an entry whose title calls its line harmless
HARMLESS_TITLE_RE = re.compile(r"\bharmless\b|\bnot an error\b|\bcan be (?:safely )?ignored\b|\bbenign\b|"
                               r"\bperformance warning\b|无害|可以忽略|而非报错|不是报错", re.I)
MAX_QUOTED = 90   # characters of the warning line quoted in the sentence


def harmless_warning_note(retrieval: Retrieval) -> Sentence | None:
    """One sentence naming the entry that says the warning the user asks about is harmless, or
    None when they ask about no warning, or no such entry matched a line of their paste (the top
    match itself explains it already when it is that entry)."""
    analysis = retrieval.analysis
    words = "\n".join((analysis.question, *analysis.prose_lines))
    if not ASKS_ABOUT_WARNING_RE.search(words):
        return None
    hit = next((hit for hit in retrieval.hits[1:] if _harmless(hit)), None)
    if hit is None:
        return None
    line = " ".join(hit.evidence[0].split())
    quoted = line if len(line) <= MAX_QUOTED else line[:MAX_QUOTED].rsplit(" ", 1)[0] + " ..."
    return Sentence(f"The warning you ask about (`{quoted}`) is harmless: kb:{hit.unit_id} explains it "
                    f"(`ask kb show {hit.unit_id}`); on its own it makes nothing fail.",
                    f"你问到的警告（`{quoted}`）是无害的：kb:{hit.unit_id} 解释了它"
                    f"（`ask kb show {hit.unit_id}`）；它本身不会导致任何失败。")


def _harmless(hit: Hit) -> bool:
    return hit.kind == "entry" and bool(hit.evidence) and bool(HARMLESS_TITLE_RE.search(hit.title or ""))
