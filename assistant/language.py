"""Which language an answer is written in: the user's setting, or the language of their words.

Operators paste logs in English whatever they speak; what they write around the log says which
language they read. Entries carry Chinese text (`title_zh`, `cause_zh`, each step's `text_zh`);
what an entry lacks in Chinese stays English, and commands, flags and error lines are never
translated."""

from __future__ import annotations

import re

from assistant.text import CHINESE_CHAR_RE
from assistant.trace import Analysis

# this many Chinese characters in the user's own words make it a Chinese question
MIN_CHINESE_CHARS = 4


def answer_language(setting: str, analysis: Analysis) -> str:
    """"zh" or "en": the setting when it is one of them, else (auto) Chinese when the user's
    own words are."""
    if setting in ("en", "zh"):
        return setting
    return "zh" if len(CHINESE_CHAR_RE.findall(analysis.question)) >= MIN_CHINESE_CHARS else "en"
