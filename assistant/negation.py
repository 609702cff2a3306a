"""Negation scope: the features and libraries a user's words rule out.

Users rule things out in words: "no DP attention", "without --enable-dp-attention", "not using
EAGLE", "CUDA graph disabled does not help", "不开 dp attention", "没有用 PD 分离", "未启用 EAGLE".
A mention inside such a negation is not something the paste is about: it is not a matched keyword
for an entry about it and not where the failure arises. Two readings are kept apart:
- `not_used`: the user does not run it ("no DP attention"), which speaks against an entry about it;
- ruled out as the cause ("tried with and without EAGLE, both fail"): it is run, but plays no part.
Both are left out of what a text names (`meant`).

Program messages are not the user's negation: a flag that turns something off (`--disable-cuda-graph`)
is how the server was run, and "No module named 'flashinfer'", "flashinfer is not supported" or
"cannot find nccl" say the library is missing or refused, which is the failure itself; only words
right before the mention ("no", "without", "not using", "不开", "未启用"), or "disabled"/"off" right
after it with no verb between ("CUDA graph disabled", not "LoRA is not enabled"), count.
"""

from __future__ import annotations

import re

# right before the mention: the user does not use it (a leading article or a verb of use in between)
_BEFORE_EN = (r"(?:(?<![\w-])(?:no|not(?:\s+(?:using|used|use|with|enabled|enabling|running|on|turning\s+on))?|without(?:\s+using)?|"
              r"w/o|(?:never|didn't|did\s+not|don't|do\s+not|doesn't|does\s+not)\s+(?:use|used|enable|enabled|turn\s+on|run|set)|"
              r"isn't\s+(?:used|enabled|on)|turned\s+off|disabled|disabling|neither)\s+(?:an?\s+|the\s+|any\s+)?"
              # one negation over a list of one- or two-word names ("not using EAGLE or any speculative
              # decoding", "neither LoRA nor EAGLE"; a comma alone starts a new phrase: "no DP attention, EAGLE on")
              r"(?:[\w.+-]+(?:\s+[\w.+-]+)?\s*(?:,?\s+(?:or|nor)\s+)(?:an?\s+|the\s+|any\s+)?)?)$")
_BEFORE_ZH = r"(?:没有|沒有|没|未|不|无|非|关闭|关掉|关了|禁用)(?:使用|开启|启用|用|开|打开|是|用到)?(?:了)?\s*$"
BEFORE_RE = re.compile(_BEFORE_EN + "|" + _BEFORE_ZH, re.I)
# right after the mention, with no verb between: the user says it is off ("DP attention disabled",
# "CUDA graph off", "dp attention 没开"); a program's sentence has one ("LoRA is not enabled",
# "Custom allreduce is disabled") and names the failure itself, as do "not supported", "not found"
AFTER_RE = re.compile(r"^\s+(?:disabled|off|turned\s+off|not\s+(?:enabled|used))\b|"
                      r"^\s*(?:没开|没有开|未开启|未启用|关闭|关掉了?|没用|没有用|不开)", re.I)
# after a negation before it, the mention must end the phrase ("no DP attention,", "not using EAGLE",
# "no speculative decoding"): followed by another noun the negation is of that noun, and the
# mention only qualifies it ("no EAGLE hooks", "No CUDA GPUs", "has no SGLang implementation",
# "no NPU build", "without NVSHMEM's headers")
PHRASE_END_RE = re.compile(r"^(?:\s*(?:$|[,.;:)!?\]}，。；：、）]|[\u4e00-\u9fff])|\s+(?:decoding|decode|mode|backend|flags?|options?|"
                           r"feature|at all|and|or|but|nor|either|is|was|were|are|in|on|for|with|to|so|because|since|"
                           r"when|while|here|anymore|yet|enabled|used|involved|both|it|this|that|i|we|they|the|still|"
                           r"also|too|only|just|then|same)\b)", re.I)
# "tried with and without EAGLE", "with or without --enable-dp-attention", "开不开 EAGLE 都", "无论是否开启":
# the user ran both ways, so the feature is ruled out as the cause, though it is used
BOTH_WAYS_RE = re.compile(r"(?:\bwith\s+(?:and|or)\s+without|\bboth\s+with\s+and\s+without|"
                          r"(?:开不开|用不用|开没开|是否开启|是否启用|开启和关闭|开和不开)(?:\s*了)?)\s+(?:the\s+)?$", re.I)
_WINDOW = 40
# a mention inside a launch flag (`--enable-dp-attention`, `--speculative-algorithm`): the flag's head
# before it, with the flags that turn something off apart (group 1)
FLAG_HEAD_RE = re.compile(r"(?<![\w-])--(?:(disable|no)[-_])?(?:[a-z0-9]+[-_])*$", re.I)
FLAG_TAIL_RE = re.compile(r"[\w-]*")


def _before(text: str, start: int) -> str:
    return text[max(0, start - _WINDOW):start]


def both_ways(text: str, start: int) -> bool:
    """The mention at `start` is one the user tried with and without."""
    return bool(BOTH_WAYS_RE.search(_before(text, start)))


def denied(text: str, start: int, end: int) -> bool:
    """The mention text[start:end] is inside the user's negation: not used, or ruled out."""
    flag = FLAG_HEAD_RE.search(text[max(0, start - 30):start])
    if flag:
        if flag.group(1):
            return False   # `--disable-cuda-graph` is how the server ran, not the user's words
        # the user's words are about the flag as a whole ("without --enable-dp-attention")
        start -= len(flag.group(0))
        end += len(FLAG_TAIL_RE.match(text, end).group(0))
    before = _before(text, start)
    if before.endswith(("-", "_", "/", ".")) and not before.endswith("w/"):
        return False   # part of a longer name or path (`no_eagle`, `srt/speculative`)
    # a flag is a whole phrase: what follows it is no noun it qualifies
    ends = bool(flag) or PHRASE_END_RE.match(text[end:end + _WINDOW])
    if (BOTH_WAYS_RE.search(before) or BEFORE_RE.search(before)) and ends:
        return True
    return bool(AFTER_RE.search(text[end:end + _WINDOW]))


def not_used(text: str, start: int, end: int) -> bool:
    """The mention says the user does not run it (not: ran it both ways)."""
    return denied(text, start, end) and not both_ways(text, start)


def meant(pattern: re.Pattern, text: str) -> bool:
    """Some mention of `pattern` in the text is outside every negation."""
    return any(not denied(text, m.start(), m.end()) for m in pattern.finditer(text))


def only_denied(pattern: re.Pattern, text: str) -> bool:
    """The text mentions `pattern`, and every mention is in a negation that says it is not used."""
    found = list(pattern.finditer(text))
    return bool(found) and all(not_used(text, m.start(), m.end()) for m in found)
