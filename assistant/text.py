"""Text normalisation shared by ingest and queries: masking what varies between reports, and
identifier-aware tokens for the lexical index.

Masking turns `Tried to allocate 2.63 GiB ... GPU 2` and `Tried to allocate 1.10 GiB ... GPU 0`
into the same string, so signatures match across reports. Tokens keep identifiers whole
(`cuda_fp8.h`, `KVTransferError`, `--tp-size`) and also emit their parts; Chinese runs become
character bigrams (the CJK analyzer approach: no dictionary to load on the query path).
"""

from __future__ import annotations

import re
from functools import lru_cache

from assistant.system_messages import in_c_locale

_NAMES_LIST_RE = re.compile(r"\[\s*'[^'\]]{1,80}'(?:\s*,\s*'[^'\]]{1,80}')*\s*\]")
_COMMAND_ITEM_RE = re.compile(r"'(?:-|[^']*[/\\])")


def _command_or_paths(quoted_list: str) -> bool:
    """A quoted list holding an option (`'-v'`) or a path is a command's arguments or a list of
    files (`CalledProcessError: Command '['<...>/ptxas', '-v', '--gpu-name=sm_103a']'`): which tool
    ran, with what, is what tells two such failures apart, so it is masked item by item (paths,
    numbers), not collapsed like a list of names (`['Glm4ForCausalLM']`)."""
    return bool(_COMMAND_ITEM_RE.search(quoted_list))


_MASKS = [
    # order matters: the specific shapes before the generic number
    (re.compile(r"\x1b\[[0-9;]*m"), ""),  # ANSI colours
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<ts>"),
    (re.compile(r"\b[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\b"), "<ts>"),  # glog prefix
    (re.compile(r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<ts>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>"),
    (_NAMES_LIST_RE, lambda m: m.group(0) if _command_or_paths(m.group(0)) else "[<names>]"),  # ['Glm4ForCausalLM']
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"\[?\b(?:[0-9a-fA-F]{1,4}:){3,7}[0-9a-fA-F]{1,4}\b\]?"), "<ip>"),
    (re.compile(r"\blocalhost:\d+\b"), "localhost:<port>"),
    # a path a person elided (`File ".../sglang/srt/managers/scheduler.py"`) stands for the
    # absolute one the log printed: the same `<path>/` before the file name
    (re.compile(r"(?<![\w.])\.{3}(?:/[\w.+@-]+)*/"), "<path>/"),
    (re.compile(r"(?:/[\w.+@-]+){2,}/"), "<path>/"),  # directories; keep the file name
    (re.compile(r"\b[0-9a-f]{16,}\b"), "<hex>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s*(?:[KMGT]i?B|bytes|GB|MB)\b", re.I), "<size>"),
    (re.compile(r"\b(?:TP|DP|PP|EP|CP|rank|RANK)[ =:]?\d+\b"), lambda m: re.sub(r"\d+", "<n>", m.group(0))),
    # a field's value below zero keeps its sign (`protected=-12` -> `protected=-<n>`): a count or a
    # size that went negative is a bookkeeping bug of its own, not the line with a positive count
    (re.compile(r"(?<==)-\d+(?:\.\d+)?(?![\w.])"), "-<n>"),
    (re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])"), "<n>"),
]


def mask(line: str) -> str:
    """Replace what varies between two reports of the same error with placeholders; the system's
    messages in a Chinese locale are what varies too (`assistant.system_messages`)."""
    line = in_c_locale(line)
    for pattern, repl in _MASKS:
        line = pattern.sub(repl, line)
    # `Bootstrap : no socket interface found` (NCCL's spacing, kept by its forks) is the same line
    # as `Bootstrap: no socket interface found`
    return " ".join(line.split()).replace(" :", ":")


_CJK = r"[\u3400-\u9fff\uf900-\ufaff]"   # CJK unified ideographs and compatibility ideographs
_WORD_RE = re.compile(
    rf"--?[A-Za-z0-9](?:(?!{_CJK})[\w-])*"   # CLI flags stay whole
    # identifiers, dotted names, file names; a Chinese run glued to one (`sglang时报错flashinfer版本太低`)
    # is words of its own, not part of the identifier (\w takes CJK characters: they are kept out)
    rf"|[A-Za-z_](?:(?!{_CJK})\w)*(?:[.:][A-Za-z0-9_]+)*"
    rf"|{_CJK}+"             # runs of CJK characters
)
_SPLIT_RE = re.compile(r"[._:\-]+")
CHINESE_CHAR_RE = re.compile(r"[\u3400-\u9fff]")   # a Chinese character (CJK unified ideographs)
_CAMEL_RE = re.compile(r"[A-Z]+\d*(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
STOPWORDS = frozenset(
    "a an and are as at be but by for from has have i if in into is it its my of on or our so "
    "that the their then there these this to was we were what when which while will with you "
    "your how why can could does do did not no yes any get got after before also just here "
    "please help thanks hi hello".split()
)


def _cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i: i + 2] for i in range(len(run) - 1)]


MAX_CACHED_WORD = 64   # longer words (hashes, blobs in a paste) are split each time, not kept


def tokenize(text: str) -> list[str]:
    """Lexical tokens: whole identifiers plus their parts, lower-cased; CJK as bigrams."""
    tokens: list[str] = []
    for raw in _WORD_RE.finditer(text):
        word = raw.group(0)
        # a word's tokens never depend on its neighbours, and the same identifiers recur across
        # chunks and log lines: each distinct word is split once
        tokens += _cached_word_tokens(word) if len(word) <= MAX_CACHED_WORD else _word_tokens(word)
    return tokens


def _word_tokens(word: str) -> tuple[str, ...]:
    if "\u3400" <= word[0] <= "\ufaff":
        return tuple(_cjk_bigrams(word))
    if word.startswith("-") and not word.startswith("--"):
        word = word[1:]
    lower = word.lower()
    if lower.isdigit() or len(lower) < 2 or lower in STOPWORDS:
        return ()
    tokens = [lower]
    parts = [p for p in _SPLIT_RE.split(word.lstrip("-")) if p]
    sub: list[str] = []
    for part in parts:
        pieces = _CAMEL_RE.findall(part) if not part.isupper() else [part]
        sub += pieces if len(pieces) > 1 else [part]
    if len(sub) > 1 or (sub and sub[0].lower() != lower):
        tokens += [s.lower() for s in sub if len(s) > 1 and not s.isdigit() and s.lower() not in STOPWORDS]
    return tuple(tokens)


_cached_word_tokens = lru_cache(maxsize=1 << 16)(_word_tokens)


# a space YAML's folding left between two Chinese characters, or after Chinese punctuation
_FOLDED_SPACE_RE = re.compile(r"(?<=[\u3400-\u9fff\u3000-\u303f\uff01-\uff1f）】」』])\s+(?=[\u3400-\u9fff\u3000-\u303f\uff01-\uff1f（【「『])"
                              r"|(?<=[\u3000-\u303f\uff0c\uff1a\uff1b\uff01\uff1f])\s+")


def join_chinese(text: str) -> str:
    """Chinese text written over several lines, joined: Chinese puts no space between characters
    or after its own punctuation (a space beside a Latin word or a code span stays)."""
    return _FOLDED_SPACE_RE.sub("", text.strip())


def code_span(text: str) -> str:
    """Text as one Markdown code span on one line, fenced with more backticks than it holds so
    its own backticks do not end the span early."""
    text = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def has_cjk(text: str) -> bool:
    return CHINESE_CHAR_RE.search(text) is not None
