"""Answers in Chinese for an operator who writes Chinese: the entry's title_zh, cause_zh and each
step's text_zh, with commands, flags and versions untouched; English otherwise, or as set."""

from __future__ import annotations

import json

import pytest
from dataclasses import replace
from pathlib import Path

from assistant.answer import compose_extractive
from assistant.decision import FIX, Decision
from assistant.kb import load_entries, parse_entry, translation_mismatches
from assistant.retrieve import Hit, Retrieval
from assistant.text import CHINESE_CHAR_RE
from assistant.trace import analyze
from tests.conftest import REPO, run_ask


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
    from assistant.kb import stated_facts

    return stated_facts(text)


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


def test_every_shipped_entry_gives_a_chinese_reader_its_cause_and_every_step_in_chinese():
    # a step left in English reads as a gap in the answer; `ask kb check` judges what is there
    entries = load_entries(REPO / "kb" / "entries")
    untranslated = [f"{e.id} step {n}" for e in entries for n, step in enumerate(e.fix, 1) if not step.text_zh]
    assert not untranslated, untranslated[:5]
    assert all(e.title_zh and e.cause_zh for e in entries)
    # how to tell it worked and what not to do, too (a KB check keeps their facts identical)
    unverified = [e.id for e in entries if len(e.verify_zh) != len(e.verify)]
    assert not unverified, unverified[:5]
    wrong = [e.id for e in entries if any(not (w.claim_zh and w.fact_zh) for w in e.wrong_advice)]
    assert not wrong, wrong[:5]
    risks = [f"{e.id} step {n}" for e in entries for n, step in enumerate(e.fix, 1) if step.caveat and not step.caveat_zh]
    assert not risks, risks[:5]


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


def test_a_chinese_reader_gets_the_fix_frame_and_the_memory_reading_in_chinese(assistant):
    from ui.markdown import answer_markdown

    answer = assistant.answer(
        "这个报错是什么原因？\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
        "total capacity of 23.53 GiB of which 20.00 MiB is free. Process 1234 has 20.1 GiB memory in use. "
        "Including non-PyTorch memory, this process has 3.4 GiB memory in use.")
    assert answer.outcome == "fix" and answer.reader_language == "zh"
    assert answer.text.splitlines()[0].startswith("FIX：")
    reading = answer.gpu_memory.reading(answer.reader_language)
    assert "申请 20 MiB 失败" in reading and "allocation failed" not in reading
    assert reading in answer.text and reading in answer_markdown(answer)
    assert "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv" in reading  # commands stay


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
    assert "修复步骤：" in answer.text and "\nFix:" not in answer.text


LEAD_TRACE = ('Traceback (most recent call last):\n'
              '  File "/usr/lib/python3/site-packages/nixl/_api.py", line 88, in transfer\n'
              '    raise RuntimeError(msg)\n'
              'RuntimeError: NIXL_ERR_BACKEND: transfer failed on ucx backend\n')


def test_a_chinese_reader_gets_why_it_is_a_lead_and_what_to_collect_in_chinese(assistant):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_sections

    answer = assistant.answer("sglang 0.5.9 做 PD 分离，传 KV 的时候报错了\n" + LEAD_TRACE)
    assert answer.outcome == "lead" and answer.reader_language == "zh"
    assert answer.reasons and answer.next_steps
    for sentence in (*answer.reasons, *answer.next_steps):
        assert CHINESE_CHAR_RE.search(sentence), sentence
    # the commands and env vars of a next step are the same in both languages
    assert any("`UCX_LOG_LEVEL=debug`" in step for step in answer.next_steps)
    assert "最内层调用栈帧在" in answer.text and "innermost frame" not in answer.text
    assert answer.reasons[0] in answer_markdown(answer)
    assert answer.reasons[0] in "\n".join(answer_sections(answer))


def test_an_english_reader_of_the_same_lead_gets_english_reasons_and_steps(assistant):
    answer = assistant.answer("PD disaggregation on sglang 0.5.9 fails while sending the KV cache\n" + LEAD_TRACE)
    assert answer.outcome == "lead" and answer.reader_language == "en"
    assert answer.reasons and answer.next_steps
    assert not any(CHINESE_CHAR_RE.search(s) for s in (*answer.reasons, *answer.next_steps))
    assert answer.to_json()["reasons"] == answer.reasons


def test_every_next_step_says_the_same_facts_in_chinese():
    from assistant.kb import stated_facts
    from assistant.next_steps import (ENVIRONMENT_ON, GENERIC, PASTE_THE_ERROR, QUIET_LOG, SHOW_A_LOGGED_REQUEST,
                                      SHOW_A_REQUEST, STEPS)

    for step in (*GENERIC, QUIET_LOG, SHOW_A_REQUEST, SHOW_A_LOGGED_REQUEST, PASTE_THE_ERROR, *ENVIRONMENT_ON.values(),
                 *(s for steps in STEPS.values() for s in steps)):
        assert CHINESE_CHAR_RE.search(step.zh), step
        assert stated_facts(step) == stated_facts(step.zh), step


def test_where_an_sglang_error_comes_from_is_told_in_the_readers_language():
    from assistant.origin import Origin
    from assistant.provenance import CONDITION_PREFIX, origin_lines

    origin = Origin(is_sglang=True, package="sglang", module="sglang.srt.server_args",
                    function="ServerArgs.check_server_args", kind="raise", exception="ValueError",
                    condition="self.tp_size % self.pp_size != 0", releases=("0.5.1", "0.5.2", "0.5.3"),
                    user_version="0.5.2", in_user_version=True, alternatives=2)
    english, chinese = origin_lines(origin), origin_lines(origin, "zh")
    assert english[0] == "SGLang: sglang.srt.server_args:ServerArgs.check_server_args raises ValueError"
    assert len(english) == len(chinese)
    for line in chinese:
        assert CHINESE_CHAR_RE.search(line), line
    # the site, the condition and the releases are quoted as they are
    assert "sglang.srt.server_args:ServerArgs.check_server_args" in chinese[0] and "ValueError" in chinese[0]
    assert chinese[1].startswith(CONDITION_PREFIX[1]) and chinese[1].endswith("self.tp_size % self.pp_size != 0")
    assert "0.5.1–0.5.3" in chinese[2] and "0.5.2" in chinese[3]


def _same_facts(sentence):
    """The Chinese version is Chinese and quotes the same versions, names and commands."""
    from assistant.kb import stated_facts

    assert CHINESE_CHAR_RE.search(sentence.zh), sentence
    assert stated_facts(sentence) == stated_facts(sentence.zh), (sentence, sentence.zh)


def test_what_a_release_pins_is_told_in_the_readers_language():
    from assistant.deps import DependencyAdvice
    from assistant.provenance import dependency_sentence

    pinned = DependencyAdvice("transformers", "too old", "ImportError: ...", "==4.56.1", "4.51.0", "0.5.2",
                              "0.5.2", 'pip install "transformers==4.56.1"')
    variants = [
        pinned,
        replace(pinned, installed_version=None, sglang_version=None),
        replace(pinned, sglang_version="0.5.2.post1"),
        replace(pinned, installed_version="4.56.1", satisfied=True),
        replace(pinned, problem="missing", package="xgrammar", pinned_spec="==0.1.24", extra="srt",
                install_command='pip install "xgrammar==0.1.24"'),
        replace(pinned, sglang_version=None, dated="0.5.3 or earlier",
                pins_vary=("0.5.0", "==4.55.0", "0.5.3", "==4.56.2")),
        replace(pinned, problem="missing", package="nixl", pinned_spec=None, install_command="pip install nixl"),
        replace(pinned, problem="missing", pinned_spec=None, listed=True, extra="runtime-common"),
        replace(pinned, pinned_spec=None),
    ]
    for advice in variants:
        for command in (True, False):
            _same_facts(dependency_sentence(advice, command=command))


def test_which_releases_have_a_missing_name_is_told_in_the_readers_language():
    from assistant.provenance import symbol_sentence
    from assistant.symbols import DEFAULT_PATH, symbol_history

    if not DEFAULT_PATH.exists():
        pytest.skip("kb/sglang_symbols.json.gz not built")
    lines = [
        ("ImportError: cannot import name 'get_ip' from 'sglang.srt.utils'", "0.5.6"),
        ("ImportError: cannot import name 'get_ip' from 'sglang.srt.utils'", "0.4.6"),
        ("ModuleNotFoundError: No module named 'sglang.srt.weight_sync'", "0.4.6"),
        ("ModuleNotFoundError: No module named 'sglang.srt.weight_sync'", None),
        ("ValueError: Qwen3NextForCausalLM has no SGlang implementation and the Transformers "
         "implementation is not compatible with SGLang.", "0.4.10"),
        ("ModuleNotFoundError: No module named 'sglang.srt.no_such_module_anywhere'", "0.5.2"),
        ("AttributeError: module 'sglang.srt.utils' has no attribute 'is_hip'", "0.4.9.post6"),
    ]
    for line, version in lines:
        history = symbol_history(["Traceback (most recent call last):", line], user_version=version)
        assert history is not None, line
        _same_facts(history.summary())
        _same_facts(history.advice())
        _same_facts(symbol_sentence(history))


def test_a_chinese_reader_is_told_what_to_install_in_chinese(assistant):
    from ui.markdown import answer_markdown

    trace = ("Traceback (most recent call last):\n"
             '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/entrypoints/http_server.py", '
             "line 44, in <module>\n"
             "ImportError: cannot import name 'AutoImageProcessor' from 'transformers'\n")
    answer = assistant.answer("启动 sglang 0.5.2 报错，怎么办？\n" + trace)
    assert answer.reader_language == "zh" and answer.dependency is not None
    shown = answer.text + answer_markdown(answer)
    assert "锁定 transformers==4.56.1" in shown and 'pip install "transformers==4.56.1"' in shown
    assert "your SGLang 0.5.2 pins" not in shown and "Install what your release pins" not in shown
    english = assistant.answer("sglang 0.5.2 fails at start\n" + trace)
    assert "your SGLang 0.5.2 pins transformers==4.56.1" in english.text


def test_a_chinese_reader_is_warned_about_their_own_flags_in_chinese(assistant):
    launch = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --enable-ep-moe --tp 8\nsglang 0.5.6\n"
    chinese = assistant.answer("启动就报端口被占用，怎么办？\nOSError: [Errno 98] Address already in use\n" + launch)
    english = assistant.answer("It fails at start.\nOSError: [Errno 98] Address already in use\n" + launch)
    warned = [w for w in chinese.warnings if "--enable-ep-moe" in w]
    assert warned and warned[0].startswith("你的启动命令用了 --enable-ep-moe，而 SGLang 0.5.6 不接受它")
    assert "0.4.1-0.5.4" in warned[0] and "--ep-size N" in warned[0]
    assert any(w.startswith("Your launch command uses --enable-ep-moe, which SGLang 0.5.6 does not accept")
               for w in english.warnings)
    assert any(step.startswith("验证：") for step in chinese.next_steps)


def test_a_chinese_lead_describes_the_symptom_in_chinese_when_the_entry_has_it(assistant):
    """An entry with no error line is confirmed by what the user sees: a Chinese reader is told it
    in the entry's own Chinese words, not in its English ones."""
    answer = assistant.answer("用 sglang_router 在一台 CPU 服务器上起了 4 个 DP 副本，跑几秒就全卡住了")
    assert answer.outcome == "lead" and answer.reader_language == "zh"
    assert "如果你看到的现象是这样，它就适用：同一台 CPU 服务器上" in answer.text
