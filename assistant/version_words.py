"""The two SGLang releases a report compares, read from the user's words.

"Worked on 0.5.3, slower after upgrading to 0.5.6", "从 0.5.3 升级到 0.5.6 之后输出乱码": a report
that speaks of a change (upgrading, downgrading, "used to work", 升级, 回退 ...) and names two
SGLang versions compares them. `compared_versions` gives the pair (older, newer); versions after
another package's name (`flashinfer 0.4.0`, `vllm version 0.8.5`) are not SGLang's.
`failing_version` says which of the two the report is about: the one its words say fails, else the
one it upgraded to, else the newer. `bare_sglang_version` reads a single version from the user's
words the same way (not another package's, the one upgraded to first). The trace reader takes that one as the user's SGLang version
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
    r"uvicorn|uvloop|xinference|swift|ms-swift|modelscope|lmdeploy|ollama|ktransformers|llama-?factory|dynamo|"
    r"gpustack|mineru|olmocr|specforge|areal|miles|docker|ubuntu|tilelang|tvm[-_]ffi|apache-tvm-ffi)(?![\w-])", re.I)
# `name==0.4.0`, `name>=0.4.0`: a pin names its package
PIN_RE = re.compile(r"([A-Za-z][\w.\[\]-]*)\s*(?:===?|>=|<=|~=|@)\s*[vV]?$")
# the words before a version range in a sentence: not a package's name
NOT_A_PACKAGE = frozenset({"to", "from", "on", "than", "version", "versions", "is", "was", "with", "at", "and",
                           "or", "of", "in", "use", "using", "requires", "need", "needs"})
SENTENCE_END_RE = re.compile(r"[;!?。；！？\n]|\.(?!\d)")


def is_sglangs(words: str, start: int) -> bool:
    """Whether the version at `start` is SGLang's: not pinned for another package, and its sentence
    names no other package after its last "sglang"."""
    before = words[max(0, start - 80):start]
    pin = PIN_RE.search(before)
    if pin and pin.group(1).lower() not in NOT_A_PACKAGE:   # "upgraded to >=0.4.6.post3" pins no package "to"
        return pin.group(1).lower().split("[")[0] == "sglang"
    named = PACKAGE_WORD_RE.findall(SENTENCE_END_RE.split(before)[-1])
    return not named or named[-1].lower() == "sglang"


# a clause about a release that fails, and one about a release that works
FAILS_RE = re.compile(r"\b(?:fail\w*|broke\w*|crash\w*|errors?|hang\w*|hung|stuck|slow\w*|wrong|garbl\w*|regress\w*|"
                      r"nan|oom|issues?|problems?|not work\w*|doesn'?t work|stopped working)\b"
                      r"|报错|失败|崩|卡住|卡死|变慢|慢了|乱码|异常|问题|不行|不能用|出错", re.I)
WORKS_RE = re.compile(r"\b(?:works?|worked|working|fine|ok|okay|normal(?:ly)?|no (?:issues?|problems?))\b"
                      r"|正常|没问题|能用|可以用", re.I)
# a clause that says a release does not work, in words FAILS_RE does not take for a failure by themselves:
# "but v0.4.6 is not", "0.5.6 isn't OK", "v0.5.5 no longer works"
NOT_WORKING_RE = re.compile(r"\b(?:is|are|was|were|does|do|did)(?:\s+not|n't)\s*$|"
                            r"\b(?:is|was)(?:\s+not|n't)\s+(?:ok|okay|fine|good|working|normal)\b|"
                            r"\bnot\s+(?:ok|okay|fine|good|normal)\b|\bno longer\s+(?:works?|runs?|starts?|loads?)\b|"
                            r"不正常|不可以", re.I)
CLAUSE_RE = re.compile(r"[,;!?，；。！？\n]|\.(?!\d)|\bbut\b|\bwhile\b|\bwhereas\b|但是?|而|却")
# SGLang's docker image, tag and all (`lmsysorg/sglang:v0.4.6.post4-cu124`, `sglang:v0.5.2rc2-rocm630`):
# the tag's version is the SGLang release the image ships
IMAGE_TAG_RE = re.compile(r"(?<![\w.-])(?:[\w.-]+/)*(?:sglang|sgl-dev):v?(0\.\d{1,2}\.\d{1,2}(?:\.post\d+|rc\d+)?)(?:-[\w.]+)*", re.I)


def image_tags_as_releases(words: str) -> str:
    """The words with each SGLang image tag written as the release it ships (`sglang 0.4.6.post4`),
    so that "from lmsysorg/sglang:v0.4.4-cu124 to lmsysorg/sglang:v0.4.6.post4-cu124" reads as a
    move between two releases."""
    return IMAGE_TAG_RE.sub(lambda m: f"sglang {m.group(1)}", words)


# what precedes the version now running: "upgrading to", "from 0.4.6 to", "now on", "->", "升级到"
UPGRADED_TO_RE = re.compile(r"(?:\bupgrad\w*|\bupdat\w*|\bbump\w*|\bmov\w*|\bswitch\w*|\bmigrat\w*|\bwent)\b[^.;]*?"
                            r"\bto\s+(?:sglang\s*)?v?$|\bfrom\s+v?[\d.]+\w*\s+to\s+v?$|"
                            r"\bnow\s+(?:on|with|using|running)\s+v?$|(?:->|→)\s*v?$|"
                            r"(?:升级到|升到|更新到|换到|换成)\s*(?:sglang\s*)?v?$", re.I)
# a bare version in the user's words, as SGLang's releases are numbered (0.4 to 0.9)
BARE_VERSION_RE = re.compile(r"(?<![\w.])v?(0\.[4-9]\.\d+(?:\.post\d+|rc\d+)?)(?![\w.])")


def upgraded_to(words: str, start: int) -> bool:
    """Whether the version at `start` is the one upgraded (or moved) to."""
    return bool(UPGRADED_TO_RE.search(words[max(0, start - 80):start]))


def bare_sglang_version(prose: list[str]) -> str | None:
    """'升级到 v0.5.9 之后…' / 'after upgrading to 0.5.6': a 0.4-0.9 version in the user's own words
    that no other package claims (`is_sglangs`) is SGLang's; of several, the one upgraded to
    ("worked on 0.4.6, after upgrading to 0.5.9 it fails") is the one that fails."""
    found = [(upgraded_to(line, m.start()), m.group(1))
             for line in prose for m in BARE_VERSION_RE.finditer(line) if is_sglangs(line, m.start())]
    upgraded = [v for to, v in found if to]
    return upgraded[-1] if upgraded else (found[0][1] if found else None)

def compared_versions(words: str, releases: tuple[Version, Version] | None = None) -> tuple[str, str] | None:
    """The two SGLang versions the user's words compare (older, newer), when they speak of a change;
    with `releases` (the oldest and newest release known), only versions in that span count (a
    `0.8.5` in a report about SGLang 0.4.6 is vLLM's)."""
    if not CHANGE_RE.search(words):
        return None
    found: dict[Version, str] = {}
    for match in VERSION_RE.finditer(words):
        if not is_sglangs(words, match.start()):
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
    upgraded = [m.group(1) for m in VERSION_RE.finditer(words) if m.group(1) in pair and upgraded_to(words, m.start())]
    return upgraded[-1] if upgraded else pair[1]
