"""Failure kinds: what sort of failure a text reports — out of memory, an illegal memory access, a
hang, wrong output, slowness, a crash, a build that fails.

Two reports about the same component and in the same words can still be different failures: an
illegal memory access in the DSA indexer is not the indexer's out-of-memory problem, though both
name the indexer. When an entry is matched by words (no error line of its own in the paste), its
failure kind must agree with the user's: the decision (`assistant/decision.py`) counts a paste whose
kinds and the entry's kinds are both known and share none as evidence against the entry. So it
does for a paste with no error line at all, whatever of the entry's lines it repeats: a source line
quoted from SGLang's code says where the user looked, their words say what failed ("slower", not a
crash).

A report whose failure came with a change of SGLang release ("worked on 0.4.6, half the throughput
on 0.4.7") is told by `assistant.upgrade.reports_regression` (it needs the releases the words name,
not a pattern alone). The triage entry such a report is first handled by is the one whose title
says its failure follows an upgrade (`about_upgrade_regression`); ranking puts it forward for it.

Kinds are read the same way from both sides: from the user's root error lines and words, and from
an entry's title, error lines and symptoms (not its cause, which may tell what a failure leads to).
"""

from __future__ import annotations

import re
from functools import lru_cache

KIND_PATTERNS: tuple[tuple[str, re.Pattern], ...] = tuple((name, re.compile(pattern, re.I)) for name, pattern in (
    ("out of memory", r"out of memory|OutOfMemory|\bOOM(?:s|ed)?\b|not enough (?:GPU |device |host )?memory|"
                      r"insufficient (?:GPU |device |host )?memory|memory (?:is )?exhausted|显存不足|内存不足|爆显存|显存溢出"),
    ("illegal memory access", r"illegal memory access|illegal address|misaligned address|非法内存访问|非法地址"),
    # not a number that stays put ("accept length stuck at 1") or output that loops ("stuck in
    # infinite loops"): neither is a process that stops answering
    ("hang", r"\bhang(?:s|ing)?\b|\bhung\b|"
             r"\bstuck\b(?!\s+(?:at|on)\s+(?:\d|zero\b|one\b|the same\b)|\s+in\s+(?:an?\s+)?(?:infinite|endless)\s+(?:loop|repetition))|"
             r"\bfreez(?:e|es|ing)\b|\bfroze\b|deadlock|"
             r"no (?:response|progress|output)\b|not respond\w*|never (?:returns?|finish\w*|complet\w*)|"
             # a request that waits and is served only when another comes ("gets blocked", "stalls",
             # "only gets processed after sending a second request")
             r"\b(?:gets?|got|is|are|was|were|stays?|remains?)\s+blocked\b|\bstall(?:s|ed|ing)?\b|"
             r"\bonly (?:gets? |is )?(?:processed|served|answered|returned|completed|handled)\b[^.;\n]{0,40}"
             r"\bafter (?:sending |I send |we send )?(?:another|a second|a new|the next)\b|"
             r"卡住|卡死|无响应|死锁|阻塞"),
    ("wrong output", r"garbage|gibberish|nonsense|乱码|wrong (?:outputs?|answers?|results?|tokens?)|"
                     r"accuracy (?:drops?|degrad\w*|regress\w*)|incorrect (?:outputs?|answers?|results?)|"
                     r"repetitive|repeat(?:s|ing)? (?:itself|the same)|精度下降|输出错误|"
                     # one request gets another's answer ("hicache mix-up request", "answers mixed up
                     # between samples", "请求串了")
                     r"\b(?:requests?|responses?|answers?|outputs?|results?)\b[^.;\n]{0,30}\bmix(?:ed|es)?[- ]?up\b|"
                     r"\bmix(?:ed)?[- ]?ups?\b[^.;\n]{0,30}\b(?:requests?|responses?|answers?|outputs?|results?|samples?)\b|"
                     r"串了|串号|请求串|结果串"),
    ("slow", r"\bslow(?:er|ly|ness|down)?\b|low (?:throughput|tokens?/s)|"
             r"\b(?:throughput|performance|tokens?/s|speed)\b[^.;\n]{0,40}\b(?:drop\w*|fell|falls?|declin\w*|decreas\w*|regress\w*|degrad\w*)|"
             r"\b(?:drop|declin\w*|decrease|regression|degradation) in (?:throughput|performance|speed)|"
             r"\b(?:throughput|performance|speed|latency)\b (?:is |was |gets? |got |became )?(?:much |far |\d+x )?(?:worse|poor)\b|"
             r"high latency|latency (?:spikes?|regress\w*)|变慢|掉速|性能下降|吞吐.{0,6}(?:下降|降低)|"
             # "生成图片很慢", "速度太慢": the plain Chinese way to say it is slow
             r"(?:很|太|好|非常|特别|比较|有点|超级)慢|速度.{0,4}慢"),
    # the process ends: any error can, so only the words and lines that say so; an out-of-memory
    # or an illegal memory access ends it too, so those kinds agree with it (`kind_conflict`)
    ("crash", r"\bcrash(?:es|ed|ing)?\b|\bsegfault\w*|Segmentation fault|core dumped|"
              r"\bfails? to (?:start|launch|boot)\b|won'?t (?:start|launch)|崩溃|闪退|段错误|"
              # a start-up that failed is a failure even when a workaround then runs slower ("初始化失败;
              # with --disable-cuda-graph it starts, but performance drops"); not a server that only
              # does not come up ("起不来"), which may as well hang
              r"\binitiali[sz]ation fail\w*|\bstart-?up fail\w*|\bfail(?:s|ed)? (?:at|during|on) start-?up\b|"
              r"初始化失败|启动失败|无法启动|"
              r"illegal instruction|\bSIGILL\b|非法指令"),
    # the software never got built: a package's compile or wheel build fails, before anything runs
    # (a kernel that was built and then dies at run time is a crash)
    ("build failure", r"failed to build\b|failed building wheel|could not build wheels|"
                      r"error: subprocess-exited-with-error|CMake Error|ninja: build stopped|"
                      r"error building extension|compilation terminated|编译失败|构建失败|编译报错"),
))
# what a crash report may be told as: the process ran out of memory or hit an illegal access,
# or, seen from a client, its requests hang; a crash still disagrees with slowness or wrong output
CRASH_LIKE = frozenset({"out of memory", "illegal memory access", "hang"})


# a clause about a failure the user wants to avoid ("to avoid OOM, I set ..."), up to the clause's end
AVOIDED_RE = re.compile(r"\b(?:so(?: that)?|to avoid|to prevent|instead of|without|in case|rather than|so as not to)\b[^.?!;,\n]*",
                        re.I)


def kinds_in(*texts: str) -> frozenset[str]:
    """The failure kinds the texts name; a clause about a failure to avoid ("to avoid OOM") does
    not count."""
    found = set()
    for text in texts:
        if not text:
            continue
        text = AVOIDED_RE.sub(" ", text)
        found |= {name for name, pattern in KIND_PATTERNS
                  if any(not _negated(text, m.start(), m.end()) for m in pattern.finditer(text))}
    return frozenset(found)


# "No OOM in the log", "there is no sign of a hang", "没有 OOM": the user rules that failure out
NEGATION_BEFORE_RE = re.compile(r"(?:\b(?:no|not|never|nor|isn't|wasn't|aren't|didn't|doesn't)\b(?:\s+(?:sign|signs|trace|traces|evidence|of|an?|any|the|real|obvious|actual|visible)){0,3}\s*"
                                r"|(?:没有|不是|并非|并没有|无|未)\s*(?:出现|发生|报)?\s*)$", re.I)


# "a crash next to it has another cause", "an OOM after it is unrelated": the failure is named to
# say it is not this one's
DISOWNED_AFTER_RE = re.compile(r"[^.;:!?\n，。；：！？]{0,40}?\b(?:has|have|had) (?:another|a different|its own|other) causes?\b|"
                               r"[^.;:!?\n，。；：！？]{0,40}?\b(?:is|are) (?:unrelated|another problem)\b|"
                               r"[^。；！？\n]{0,12}?另有原因", re.I)


def _negated(text: str, start: int, end: int | None = None) -> bool:
    """The kind named at `start` is denied in its own clause ("no OOM"), or said to be another
    problem's ("a crash next to it has another cause")."""
    before = re.split(r"[.;:,!?\n，。；：！？]", text[max(0, start - 40):start])[-1]
    if NEGATION_BEFORE_RE.search(before):
        return True
    return end is not None and bool(DISOWNED_AFTER_RE.match(text, end))


@lru_cache(maxsize=4096)
def _entry_kinds(title: str, lines: tuple[str, ...]) -> frozenset[str]:
    return kinds_in(title, *lines)


def entry_kinds(meta: dict) -> frozenset[str]:
    """The kinds of failure an entry is about, from its title, error lines and symptoms."""
    lines = tuple(meta.get("signatures") or ()) + tuple(meta.get("symptoms") or ())
    return _entry_kinds(meta.get("title", ""), lines)


# each kind as a Chinese reader is told it
KIND_ZH = {"out of memory": "显存不足", "illegal memory access": "非法内存访问", "hang": "卡住", "wrong output": "输出错误",
           "slow": "变慢", "crash": "崩溃", "build failure": "编译失败"}


def kinds_zh(kinds) -> str:
    """The kinds, in Chinese, for a reason shown to a Chinese reader."""
    return "、".join(KIND_ZH.get(kind, kind) for kind in sorted(kinds))


def kind_conflict(paste: frozenset[str], entry: frozenset[str]) -> bool:
    """Both sides name a kind of failure, and no kind is shared. A crash is the vaguest kind:
    named alone it agrees with the kinds a crash is told as (`CRASH_LIKE`); next to another kind,
    that kind says what happened."""
    if not paste or not entry or paste & entry:
        return False
    return not ((paste == {"crash"} and entry & CRASH_LIKE) or (entry == {"crash"} and paste & CRASH_LIKE))


# a title about what breaks after an upgrade ("Something that worked on one SGLang release breaks
# after upgrading", "升级 SGLang 后出现回退")
UPGRADE_TITLE_RE = re.compile(r"\b(?:after|since|when) (?:an? |the )?(?:sglang )?upgrad\w*|升级\s*(?:sglang\s*)?(?:后|之后)", re.I)


def about_upgrade_regression(meta: dict) -> bool:
    """A triage entry (`diagnosis`) whose title says its failure follows an upgrade: the entry a
    report of an upgrade regression is handled by when no entry matches its error."""
    return bool(meta.get("diagnosis")) and any(UPGRADE_TITLE_RE.search(meta.get(key) or "") for key in ("title", "title_zh"))
