"""Phase: whether the paste's failure came while the server was starting or after it had served.

The same kill (`Killed`, exit code 137) or NCCL timeout means different things at the two times:
during start-up a process killed by the OOM killer was loading weights into host memory; after
hours of `Decode batch` lines it was growing while serving. An entry about one phase declares it
(`phase: startup` or `phase: serving`); a paste from the other phase then counts against it. A log
shows it served by SGLang's "ready to roll" line or its scheduler's batch lines, and shows it was
starting by the start-up progress lines with neither of those. A paste with no such lines is read
by what the user says ("it OOMs halfway through loading", "after running for two days").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.paste_cache import per_analysis
from assistant.trace import looks_like_sentence
from assistant.wording import Sentence

if TYPE_CHECKING:
    from assistant.trace import Analysis

PHASES = ("startup", "serving")
SERVED_BATCHES = 3   # scheduler batch lines that show the server was serving (one may be warm-up)
# the model runner's and memory pool's progress lines (SGLang 0.5.x `logger.info`): `Init torch
# distributed begin/ends`, `Load weight begin/end`, `KV Cache is allocated`, `Mamba Cache is allocated`
# (hybrid models), `Memory pool end`, `Capture cuda graph begin/end` (`cpu graph`, `npu graph` on
# those devices, `piecewise CUDA graph`)
STARTUP_RE = re.compile(r"Load weight (?:begin|end)|Loading (?:safetensors|pt) checkpoint shards|"
                        r"Init torch distributed (?:begin|ends)|(?:KV|Mamba) Cache is allocated|"
                        r"Capture (?:piecewise )?(?:cuda|CUDA|cpu|npu) graph (?:begin|end)|Memory pool end|"
                        r"Multi-thread loading shards")
# what the user says about when it failed, when the log does not show it
SAID_STARTUP_RE = re.compile(
    r"\b(?:while|during|when|halfway through|in the middle of|before it finishe[sd]) (?:the )?(?:model )?"
    r"(?:loading|load(?:ing)? (?:the )?(?:model|weights?|checkpoint))|\bat (?:start-?up|launch)\b|"
    r"\b(?:during|at) (?:server )?start-?up\b|"
    # "before the checkpoint is really loaded, while creating the FP8 weights"
    r"\bbefore (?:the )?(?:model|weights?|checkpoint) (?:is |are |has |have )?(?:\w+ )?(?:been )?loaded\b|"
    r"\bwhile (?:creating|allocating|initiali[sz]ing) (?:the )?(?:\w+ )?(?:weights|model|KV cache)\b|"
    r"加载(?:模型|权重)?(?:到一半|时|过程中|的时候)|启动(?:时|的时候|过程中)", re.I)
SAID_SERVING_RE = re.compile(
    r"\bafter (?:running|serving|working) (?:fine )?for\b|\bunder (?:heavy |high )?load\b|\bat peak load\b|"
    r"\b(?:been )?(?:up|running|serving(?: traffic)?)(?: fine)? for (?:~|about |over |nearly )?\d+ ?(?:hours?|hrs?|days?)\b|"
    r"\bafter (?:\d+|a few|several|many) (?:hours|days|requests)\b|运行一段时间后|跑了一段时间|服务一段时间后", re.I)
MAX_LINES = 5000
WORDS = {"startup": "while the server starts (before it served)", "serving": "after the server had been serving"}
WORDS_ZH = {"startup": "服务启动期间（尚未开始服务）", "serving": "服务已经运行一段时间之后"}


# "it happens only under load and not at startup", "不是启动时": the user says when it did NOT fail
NEGATED_RE = re.compile(r"(?:\b(?:not|never|no longer|nothing)\s+(?:\w+\s+){0,2}|不是|并非|没有在|不在)$", re.I)


def _said(regex: re.Pattern, words: str) -> bool:
    """Whether the user says it, other than in a negation."""
    return any(not NEGATED_RE.search(words[max(0, m.start() - 30):m.start()]) for m in regex.finditer(words))


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
    words = " ".join((analysis.question, *(line for line in analysis.plain_lines[:40] if looks_like_sentence(line))))
    said_startup, said_serving = _said(SAID_STARTUP_RE, words), _said(SAID_SERVING_RE, words)
    if said_startup != said_serving:
        return "startup" if said_startup else "serving"
    return None


def phase_conflict(meta: dict, analysis: "Analysis") -> str | None:
    wanted = meta.get("phase")
    shown = paste_phase(analysis) if wanted else None
    if not shown or shown == wanted:
        return None
    if analysis.ready or analysis.serving_lines or any(STARTUP_RE.search(line) for line in analysis.masked_lines[:MAX_LINES]):
        evidence = (("it printed `ready to roll` or batch lines", "日志里有 `ready to roll` 或 batch 行")
                    if shown == "serving" else ("it shows start-up progress and never served", "只有启动进度，从未开始服务"))
    else:
        evidence = ("as you describe it", "按你的描述")
    return Sentence(f"This entry is about failures {WORDS[wanted]}; your log fails {WORDS[shown]} ({evidence[0]}).",
                    f"这个条目讲的是{WORDS_ZH[wanted]}的故障；你的日志是在{WORDS_ZH[shown]}出错（{evidence[1]}）。")

