"""Which language an answer is written in: the user's setting, or the language of their words.

Operators paste logs in English whatever they speak; what they write around the log says which
language they read. Entries carry Chinese text (`title_zh`, `cause_zh`, each step's `text_zh`);
what an entry lacks in Chinese stays English, and commands, flags and error lines are never
translated."""

from __future__ import annotations

import re

from assistant.quoted_line import DOUBLE, SINGLE, outside_quotes, quotes
from assistant.system_messages import in_c_locale
from assistant.text import CHINESE_CHAR_RE
from assistant.trace import Analysis

# this many Chinese characters in the user's own words make it a Chinese question
MIN_CHINESE_CHARS = 4
# this many English words, and fewer Chinese characters, make it an English question
LATIN_WORD_RE = re.compile(r"\b[A-Za-z]{2,}\b")
MIN_ENGLISH_WORDS = 3
PATH_RE = re.compile(r"[~.\w-]*(?:/[^\s/'\"]+)+/?")


def answer_language(setting: str, analysis: Analysis) -> str:
    """"zh" or "en": the setting when it is one of them, else (auto) Chinese when the user's
    own words are."""
    if setting in ("en", "zh"):
        return setting
    question = PATH_RE.sub(" ", analysis.question)   # a directory's Chinese name is not the user's words
    if len(CHINESE_CHAR_RE.findall(question)) >= MIN_CHINESE_CHARS:
        return "zh"
    if len(LATIN_WORD_RE.findall(question)) >= MIN_ENGLISH_WORDS:
        return "en"   # the user wrote their question in English
    # no question of theirs: a report's Chinese title can read as its error line (`[Bug] ...
    # 启动失败`) and its Chinese sentences as plain lines, still the user's words; not so what a log
    # line quotes (a prompt in a request log, `text='你好，...'`), a Chinese shell's own message
    # (`没有那个文件或目录`, read in the C locale) or a directory's Chinese name
    lines = (in_c_locale(line) for line in (*analysis.plain_lines, *(e.text for e in analysis.errors)))
    joined = " ".join(lines)
    # (a quoted value is the program's: every single quote is a mark)
    elsewhere = PATH_RE.sub(" ", outside_quotes(joined, quotes(joined, (SINGLE, DOUBLE), 0, apostrophes=True)))
    return "zh" if len(CHINESE_CHAR_RE.findall(elsewhere)) >= MIN_CHINESE_CHARS else "en"
