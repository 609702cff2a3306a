"""Phase: whether the paste's failure came while the server was starting or after it had served.

The same kill (`Killed`, exit code 137) or NCCL timeout means different things at the two times:
during start-up a process killed by the OOM killer was loading weights into host memory; after
hours of `Decode batch` lines it was growing while serving. An entry about one phase declares it
(`phase: startup` or `phase: serving`); a paste from the other phase then counts against it. A log
shows it served by SGLang's "ready to roll" line or its scheduler's batch lines, and shows it was
starting by the start-up progress lines with neither of those.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.paste_cache import per_analysis

if TYPE_CHECKING:
    from assistant.trace import Analysis

PHASES = ("startup", "serving")
SERVED_BATCHES = 3   # scheduler batch lines that show the server was serving (one may be warm-up)
STARTUP_RE = re.compile(r"Load weight begin|Loading (?:safetensors|pt) checkpoint shards|Init torch distributed begin|"
                        r"Capture (?:piecewise )?cuda graph begin|Memory pool end|Multi-thread loading shards")
MAX_LINES = 5000
WORDS = {"startup": "while the server starts (before it served)", "serving": "after the server had been serving"}


def paste_phase(analysis: "Analysis") -> str | None:
    """"serving" when the log shows the server served, "startup" when it shows start-up progress
    and no serving, None when it shows neither (a bare traceback)."""
    return per_analysis("phase", analysis, _phase)


def _phase(analysis: "Analysis") -> str | None:
    if analysis.ready or analysis.serving_lines >= SERVED_BATCHES:
        return "serving"
    lines = analysis.masked_lines[:MAX_LINES]
    if any(STARTUP_RE.search(line) for line in lines):
        return "startup"
    return None


def phase_conflict(meta: dict, analysis: "Analysis") -> str | None:
    wanted = meta.get("phase")
    shown = paste_phase(analysis) if wanted else None
    if not shown or shown == wanted:
        return None
    evidence = ("it printed `ready to roll` or batch lines" if shown == "serving"
                else "it shows start-up progress and never served")
    return f"This entry is about failures {WORDS[wanted]}; your log fails {WORDS[shown]} ({evidence})."

