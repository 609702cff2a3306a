"""Round 48: Chinese written straight against a Latin word (`启动sglang时报错flashinfer版本太低`, no
space between them, as Chinese users type) still counts as Chinese words: the entry whose keywords
say it in Chinese ranks first, rather than the paste's words being swallowed into one long token."""

from __future__ import annotations

GLUED = "用官方镜像启动sglang时报错flashinfer版本太低\n"
SPACED = "用官方镜像启动 sglang 时报错 flashinfer 版本太低\n"


def _first_entry(answer):
    shown = answer.to_json()
    return shown["matches"][0]["id"] if shown["matches"] else None


def test_chinese_glued_to_a_package_name_reaches_the_entry_that_says_it_in_chinese(assistant):
    assert _first_entry(assistant.answer(GLUED)) == "flashinfer-version-mismatch"


def test_glued_and_spaced_writing_rank_the_same_entry_first(assistant):
    assert _first_entry(assistant.answer(GLUED)) == _first_entry(assistant.answer(SPACED))
