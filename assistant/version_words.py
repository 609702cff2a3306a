"""The two SGLang releases a report compares, read from the user's words.

"Worked on 0.5.3, slower after upgrading to 0.5.6", "从 0.5.3 升级到 0.5.6 之后输出乱码": a report
that speaks of a change (upgrading, downgrading, "used to work", 升级, 回退 ...) and names two
SGLang versions compares them. `compared_versions` gives the pair (older, newer); versions after
another package's name (`flashinfer 0.4.0`, `vllm version 0.8.5`) are not SGLang's.
`failing_version` says which of the two the report is about: the one its words say fails, else the
one it upgraded to, else the newer. The trace reader takes that one as the user's SGLang version
(`assistant.environment`): in "worked on 0.5.5, broken on 0.5.6" the user's problem is 0.5.6's.
Imports only the stdlib and ``packaging``.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

CHANGE_RE = re.compile(
    r"\b(?:upgrad\w*|downgrad\w*|updat(?:e|ed|ing)|bump\w*|regress\w*|roll(?:ed|ing)? back|revert\w*|"
    r"switch(?:ed|ing)? (?:from|to|back)|mov(?:e|ed|ing) (?:from|to)|migrat\w*|used to|work(?:s|ed|ing)?|"
    r"fine|ok|okay|normal(?:ly)?|since|after|newer|older|previous|between)\b"
    r"|升级|降级|更新|回退|换到|换成|切到|之前|以前|正常|之后|以后|新版|旧版",
    re.I)
VERSION_RE = re.compile(r"(?<![\w.])[vV]?(0\.\d{1,2}\.\d{1,2}(?:\.post\d+|rc\d+)?)(?![\w.]*\d)")
# the packages a report names beside SGLang: a version whose sentence names one of them after the
# last "sglang" is that package's ("sglang 0.5.6 with flashinfer 0.4.0", "upgraded vllm to version 0.8.5")
PACKAGE_WORD_RE = re.compile(
    r"(?<![\w-])(sglang|flashinfer|sgl[-_]kernel|sglang[-_]kernel|kernel|torch|pytorch|transformers|vllm|cuda|"
    r"triton|xgrammar|nccl|python|driver|lmcache|mooncake|nixl|deepep|deep_gemm|router|gateway|openai|ray|verl|"
    r"slime|cutlass|outlines|llguidance|torchao|tokenizers|huggingface_hub|accelerate|numpy|pydantic|fastapi|"
    r"uvicorn|uvloop|xinference|swift|ms-swift|modelscope|lmdeploy|ollama|ktransformers|llamafactory|dynamo|"
    r"gpustack|mineru|olmocr|specforge|areal|miles|docker|ubuntu|tilelang|tvm[-_]ffi|apache-tvm-ffi)(?![\w-])", re.I)
# `name==0.4.0`, `name>=0.4.0`: a pin names its package
PIN_RE = re.compile(r"([A-Za-z][\w.\[\]-]*)\s*(?:===?|>=|<=|~=|@)\s*[vV]?$")
SENTENCE_END_RE = re.compile(r"[;!?。；！？\n]|\.(?!\d)")


def _is_sglangs(words: str, start: int) -> bool:
    """Whether the version at `start` is SGLang's: not pinned for another package, and its sentence
    names no other package after its last "sglang"."""
    before = words[max(0, start - 80):start]
    pin = PIN_RE.search(before)
    if pin:
        return pin.group(1).lower().split("[")[0] == "sglang"
    named = PACKAGE_WORD_RE.findall(SENTENCE_END_RE.split(before)[-1])
    return not named or named[-1].lower() == "sglang"


# a clause about a release that fails, and one about a release that works
FAILS_RE = re.compile(r"\b(?:fail\w*|broke\w*|crash\w*|errors?|hang\w*|hung|stuck|slow\w*|wrong|garbl\w*|regress\w*|"
                      r"nan|oom|issues?|problems?|not work\w*|doesn'?t work|stopped working)\b"
                      r"|报错|失败|崩|卡住|卡死|变慢|慢了|乱码|异常|问题|不行|不能用|出错", re.I)
WORKS_RE = re.compile(r"\b(?:works?|worked|working|fine|ok|okay|normal(?:ly)?|no (?:issues?|problems?))\b"
                      r"|正常|没问题|能用|可以用", re.I)
CLAUSE_RE = re.compile(r"[,;!?，；。！？\n]|\.(?!\d)|\bbut\b|\bwhile\b|\bwhereas\b|但是?|而|却")
UPGRADED_TO_RE = re.compile(r"(?:upgrad\w*|updat\w*|bump\w*|mov\w*|switch\w*|migrat\w*)\b[^,;.]{0,30}?\bto\s+"
                            r"(?:sglang\s*)?[vV]?(0\.\d{1,2}\.\d{1,2}(?:\.post\d+|rc\d+)?)"
                            r"|(?:升级|更新|换)到\s*(?:sglang\s*)?[vV]?(0\.\d{1,2}\.\d{1,2}(?:\.post\d+|rc\d+)?)", re.I)


def compared_versions(words: str, releases: tuple[Version, Version] | None = None) -> tuple[str, str] | None:
    """The two SGLang versions the user's words compare (older, newer), when they speak of a change;
    with `releases` (the oldest and newest release known), only versions in that span count (a
    `0.8.5` in a report about SGLang 0.4.6 is vLLM's)."""
    if not CHANGE_RE.search(words):
        return None
    found: dict[Version, str] = {}
    for match in VERSION_RE.finditer(words):
        if not _is_sglangs(words, match.start()):
            continue
        try:
            version = Version(match.group(1))
        except InvalidVersion:
            continue
        if releases is None or releases[0] <= Version(version.base_version) <= releases[1]:
            found.setdefault(version, match.group(1))
    if len(found) < 2:
        return None
    ordered = sorted(found)
    return found[ordered[0]], found[ordered[-1]]




def failing_version(words: str, pair: tuple[str, str]) -> str:
    """Which of the two compared versions the report is about: the one a clause says fails (and
    none says works), else the one it upgraded to, else the newer."""
    fails, works = set(), set()
    for clause in CLAUSE_RE.split(words):
        named = {match.group(1) for match in VERSION_RE.finditer(clause)} & set(pair)
        if len(named) != 1:
            continue
        (version,) = named
        if FAILS_RE.search(clause):
            fails.add(version)
        elif WORKS_RE.search(clause):
            works.add(version)
    failing = (fails - works) or (set(pair) - works if works and len(works) == 1 else set())
    if len(failing) == 1:
        return failing.pop()
    upgraded = UPGRADED_TO_RE.search(words)
    target = upgraded and (upgraded.group(1) or upgraded.group(2))
    return target if target in pair else pair[1]
