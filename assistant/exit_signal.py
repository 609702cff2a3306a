"""How a process died, when the paste says so: the signal behind an exit code.

`Rank 0 scheduler is dead` says only that a scheduler died; the `Exit code: -9` SGLang logs next
to it says how (SIGKILL: the OOM killer, a memory limit), and `-11`, `-7`, `-6` say otherwise (a
segfault, a bus error on a full /dev/shm, an abort). An entry about one way of dying declares it
(`exit_signal:`); the paste's signal then counts for it or against it. SIGQUIT (`terminated with
-3`) is SGLang's own teardown after a child failed, so it says nothing about the cause.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.paste_cache import per_analysis
from assistant.wording import Sentence

if TYPE_CHECKING:
    from assistant.trace import Analysis

SIGNALS = {9: "SIGKILL", 11: "SIGSEGV", 7: "SIGBUS", 6: "SIGABRT"}
EXIT_SIGNALS = tuple(SIGNALS.values())
_NEGATIVE_CODE_RE = re.compile(r"exit ?code:? ?\(?-(\d+)\b|terminated with -(\d+)\b|died .*?\(exit code: -(\d+)\)", re.I)
# a container's status is 128 + the signal (`exited with code 137`, `Exit Code: 137`)
_CONTAINER_CODE_RE = re.compile(r"exit(?:ed with)? code:? (1[3-9]\d)\b", re.I)
_SHELL_RE = {"SIGKILL": re.compile(r"(?:^|\s)Killed(?:\s|$)|OOMKilled|Out of memory: Killed process"),
             "SIGSEGV": re.compile(r"Segmentation fault|SIGSEGV|Caught signal 11"),
             "SIGBUS": re.compile(r"Bus error|SIGBUS|Caught signal 7\b")}
MAX_LINES = 40


def signals_in(lines) -> frozenset[str]:
    found = set()
    for line in lines:
        for m in _NEGATIVE_CODE_RE.finditer(line):
            number = int(next(g for g in m.groups() if g))
            if number in SIGNALS:
                found.add(SIGNALS[number])
        for m in _CONTAINER_CODE_RE.finditer(line):
            if int(m.group(1)) - 128 in SIGNALS:
                found.add(SIGNALS[int(m.group(1)) - 128])
        found |= {name for name, pattern in _SHELL_RE.items() if pattern.search(line)}
    return frozenset(found)


def paste_signals(analysis: "Analysis") -> frozenset[str]:
    """The signals the paste's error lines say a process died of (read once per paste)."""
    return per_analysis("exit_signals", analysis, lambda a: signals_in(e.text for e in a.errors[:MAX_LINES]))


def signal_conflict(meta: dict, analysis: "Analysis") -> str | None:
    wanted = meta.get("exit_signal")
    shown = paste_signals(analysis) if wanted else frozenset()
    if not shown or wanted in shown:
        return None
    died = ", ".join(sorted(shown))
    return Sentence(f"Your process died of {died}; this entry is about {wanted}.",
                    f"你的进程死于 {died}；这个条目讲的是 {wanted}。")


def signal_agrees(meta: dict, analysis: "Analysis") -> bool:
    wanted = meta.get("exit_signal")
    return bool(wanted) and wanted in paste_signals(analysis)
