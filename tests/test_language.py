"""Answers in Chinese for an operator who writes Chinese: the entry's title_zh, cause_zh and each
step's text_zh, with commands, flags and versions untouched; English otherwise, or as set."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from assistant.answer import compose_extractive
from assistant.decision import FIX, Decision
from assistant.kb import parse_entry, translation_mismatches
from assistant.retrieve import Hit, Retrieval
from assistant.trace import analyze
from tests.conftest import run_ask

ENTRY = Path(__file__).resolve().parents[1] / "kb" / "entries" / "port-already-in-use.md"
ERROR = "OSError: [Errno 98] Address already in use"


def _translated():
    entry = parse_entry(ENTRY.read_text(encoding="utf-8"))
    first = entry.fix[0]
    zh_step = "找出占用端口的进程：" + " ".join(sorted(_facts_of(first.text)))
    # the second step left untranslated, as an entry translated only in part would be
    return replace(entry, cause_zh="端口已被另一个仍在运行的进程占用。" + " ".join(sorted(_facts_of(entry.cause))),
                   fix=(replace(first, text_zh=zh_step), replace(entry.fix[1], text_zh=None), *entry.fix[2:]))


def _facts_of(text: str) -> set[str]:
    from assistant.kb import _facts

    return _facts(text)


def _answer(question: str, lang: str = "auto"):
    entry = _translated()
    hit = Hit(entry.id, "entry", entry.title, entry.title_zh, None, 2.0, 1.0, 1.0, 1.0, (ERROR,), entry.to_dict())
    return compose_extractive(Retrieval((hit,), Decision(FIX, 0.9), analyze(f"{question}\n{ERROR}")), lang=lang)


def test_a_chinese_question_gets_the_chinese_cause_and_steps_with_commands_unchanged():
    entry = _translated()
    answer = _answer("启动的时候报错了，端口好像被占用了，怎么办？")
    assert answer.language == "zh" and answer.to_json()["language"] == "zh"
    assert answer.diagnosis.startswith(entry.title_zh) and "端口已被另一个仍在运行的进程占用" in answer.diagnosis
    assert answer.fix[0].startswith("找出占用端口的进程")
    for command in entry.fix[0].commands:
        assert f"$ {command}" in answer.fix[0]   # commands are never translated
    # a step without text_zh stays English rather than disappearing
    assert answer.fix[1].split("\n")[0].endswith(entry.fix[1].text)


def test_an_english_question_or_the_en_setting_stays_english():
    entry = _translated()
    assert _answer("the server fails at start, port in use?").diagnosis.startswith(entry.title)
    assert _answer("启动的时候报错了，端口好像被占用了，怎么办？", lang="en").language == "en"
    assert _answer("the server fails at start", lang="zh").language == "zh"


def test_a_translation_that_drops_a_flag_or_version_is_a_kb_problem():
    entry = _translated()
    assert translation_mismatches(entry) == []
    broken = replace(entry, fix=(replace(entry.fix[0], text_zh="找出占用端口的进程。"), *entry.fix[1:]))
    problems = translation_mismatches(broken)
    assert problems and "fix step 1 text_zh lacks what its English text states" in problems[0]
    assert translation_mismatches(replace(entry, cause_zh="English only")) == ["cause_zh has no Chinese in it"]


def test_the_language_setting_is_checked_on_the_command_line(kb_dir):
    result = run_ask("--lang", "fr", ERROR, kb=kb_dir)
    assert result.returncode == 2 and b"invalid choice" in result.stderr
    result = run_ask(ERROR, kb=kb_dir, env={"ASK_LANG": "fr"})
    assert result.returncode == 2 and b"ASK_LANG" in result.stderr
    result = run_ask("--json", "--lang", "en", ERROR, kb=kb_dir)
    assert json.loads(result.stdout)["language"] == "en"


UNKNOWN_TRACE = ("Traceback (most recent call last):\n"
                 '  File "/srv/app/widgets/pool.py", line 88, in rebalance\n'
                 "    raise RuntimeError(\"frobnicator quorum lost in widget pool 7\")\n"
                 "RuntimeError: frobnicator quorum lost in widget pool 7\n")


def test_a_chinese_reader_gets_an_unknown_framed_in_chinese_on_every_surface(assistant):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_sections

    answer = assistant.answer("服务跑了一会儿就挂了，下面是日志，帮忙看看是什么问题\n" + UNKNOWN_TRACE)
    assert answer.outcome == "unknown" and answer.reader_language == "zh"
    text = answer.text
    assert text.splitlines()[0] == "UNKNOWN：不是已知问题"
    assert "这不是已知问题" in answer.diagnosis
    assert "接下来收集或尝试" in text and "Collect or try next" not in text
    assert "RuntimeError: frobnicator quorum lost in widget pool 7" in text   # error lines stay verbatim
    assert "### ❔ UNKNOWN：不是已知问题" in answer_markdown(answer)
    assert "**接下来收集或尝试**" in answer_markdown(answer)
    assert "*接下来收集或尝试*" in "\n".join(answer_sections(answer))
    assert answer.to_json()["reader_language"] == "zh"


def test_an_english_reader_keeps_the_english_frame(assistant):
    answer = assistant.answer("the server died after a while, log below\n" + UNKNOWN_TRACE)
    assert answer.outcome == "unknown" and answer.reader_language == "en"
    assert answer.text.splitlines()[0] == "UNKNOWN: not a known problem"
    assert "Collect or try next" in answer.text and "接下来" not in answer.text


def test_a_chinese_how_to_question_is_answered_as_a_question_in_chinese(assistant):
    answer = assistant.answer("请问怎么开启 EAGLE 投机解码？需要哪些参数？")
    assert answer.question and answer.outcome != "fix"
    assert "使用或配置问题" in answer.text.splitlines()[0]
    assert any(step.startswith("如果照做时遇到错误") for step in answer.next_steps)


def test_a_chinese_fix_has_chinese_section_names(assistant):
    answer = assistant.answer("启动的时候报错了，端口好像被占用了，怎么办？\n" + ERROR)
    assert answer.outcome == "fix" and answer.reader_language == "zh"
    assert "修复步骤:" in answer.text and "\nFix:" not in answer.text
