"""Components an entry's own text rules out: its wrong advice blames a library, and the fact that
answers it says that library is not involved ("DeepEP itself never runs", "nothing to do with
NCCL").

A lead on such an entry must not send the user to that library's debugging (DeepEP's fabric tests,
`NVSHMEM_DEBUG`) because their paste names it: the words are there since the user runs with it (a
launch flag, their question), and the entry that best explains their error says it plays no part.
Only the fact's own denial counts, never the claim alone: a claim names the component it wrongly
blames as often as one it blames rightly but with the wrong remedy ("raise the DeepEP timeout").
"""

from __future__ import annotations

import re

from assistant.components import BY_NAME, COMPONENTS, components_in, specific

# right after the component's name: it is denied a part ("DeepEP itself never runs", "NCCL is not
# involved", "flashinfer plays no part")
DENIED_AFTER_RE = re.compile(
    r"^(?:'s)?(?:\s+(?:itself|themselves|here|at all))*\s+(?:"
    r"(?:never|does not|doesn't|did not|didn't) (?:runs?|ran|gets? called|take part|come into play)\b|"
    r"(?:is|are|was|were)(?: never| not|n't) (?:involved|used|called|reached|loaded|the cause|at fault|to blame)\b|"
    r"plays? no (?:part|role)\b|has nothing to do with\b)", re.I)
# right before it: the failure is denied to be its ("nothing to do with DeepEP", "not caused by NCCL")
DENIED_BEFORE_RE = re.compile(r"\b(?:nothing to do with|unrelated to|not caused by|not coming from|not from)\s+(?:the\s+)?$",
                              re.I)


def ruled_out_components(meta: dict) -> frozenset[str]:
    """The specific components the entry says are not involved, with the ones its wrong claim blames
    beside them of the same family (DeepEP never runs: neither does the NVSHMEM the claim names)."""
    out: set[str] = set()
    for advice in meta.get("wrong_advice") or ():
        fact, claim = str(advice.get("fact", "")), str(advice.get("claim", ""))
        denied = {c.name for c in COMPONENTS if c.specific and _denied_in(c.pattern, fact)}
        if not denied:
            continue
        blamed = specific(components_in(claim))
        out |= denied | {name for name in blamed
                         if BY_NAME[name].family in {BY_NAME[d].family for d in denied}}
    return frozenset(out)


def _denied_in(pattern: re.Pattern, text: str) -> bool:
    return any(DENIED_AFTER_RE.search(text[m.end():m.end() + 80]) or DENIED_BEFORE_RE.search(text[max(0, m.start() - 40):m.start()])
               for m in pattern.finditer(text))
