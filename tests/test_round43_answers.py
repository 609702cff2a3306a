"""What a lead or unknown says, from a new-user trial (round 42, ux2), as a user reads it: a warning
the server started after is harmless and the next steps follow the question (slowness); the tail of
a thread dump is asked for what was above it; a component the lead's own entry rules out gets no
next steps; a how-to question names no crash entry; and a Chinese answer's labels, colons, score
line and failure kinds are Chinese."""

from __future__ import annotations

import re

import pytest

from assistant.kb import load_entries
from assistant.render import render_text
from assistant.ruled_out import ruled_out_components
from tests.conftest import REPO

GB10_WARNING = (
    "/home/spark/.sglang/lib/python3.12/site-packages/torch/cuda/__init__.py:283: UserWarning:\n"
    "    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n"
    "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
    "    (8.0) - (12.0)\n")
READY = ("[2026-01-10 10:02:11] Using Torch SDPA backend.\n"
         "[2026-01-10 10:02:40] The server is fired up and ready to roll!\n")
GB10_ENTRY = "dgx-spark-gb10-torch-capability-12-1-warning-harmless"


@pytest.mark.parametrize("question, harmless, started, find_error", [
    ("Image generation with sglang generate (Qwen-Image-2512) on a DGX Spark is slow. The startup log has this "
     "warning, then the server comes up fine. Is the warning the reason it is slow?",
     "the warning is harmless here", "Your server started after it", "Find the first real error"),
    ("DGX Spark 上跑 sglang generate（Qwen-Image-2512）生成图片很慢，启动日志里有下面这个警告，之后服务正常启动了。"
     "这个警告是导致慢的原因吗？",
     "这个警告在这里是无害的", "警告之后你的服务正常启动了", "找警告后面第一个真正的错误"),
])
def test_a_warning_the_server_started_after_is_harmless_and_the_steps_follow_the_question(
        assistant, question, harmless, started, find_error):
    answer = assistant.answer(question + "\n" + GB10_WARNING + READY)
    assert answer.outcome == "lead" and answer.matches[0].id == GB10_ENTRY
    text = render_text(answer, color=False)
    assert harmless in text and started in text and "ready to roll" in text
    assert find_error not in text                     # no startup error to look for
    assert answer.primary_error is None               # a warning is not shown as the root error
    assert any("sglang.bench_serving" in step for step in answer.next_steps)   # slowness: measure it
    assert answer.to_json()["primary_error"] is None


def test_a_warning_before_a_crash_still_gets_the_steps_that_find_the_crash(assistant):
    # the same warning, and the user says the server crashes: the entry's steps find the real error
    answer = assistant.answer("On my DGX Spark the server crashes at startup; the log shows:\n" + GB10_WARNING)
    assert answer.matches and answer.matches[0].id == GB10_ENTRY
    assert not any("sglang.bench_serving" in step for step in answer.next_steps)
    assert "harmless here" not in answer.diagnosis


THREAD_DUMP_TAIL = (
    "Thread 0x0000fe47c000f100 (most recent call first):\n"
    '  File "/usr/lib/python3.12/threading.py", line 359 in wait\n'
    '  File "/usr/lib/python3.12/threading.py", line 655 in wait\n'
    '  File "/usr/local/lib/python3.12/dist-packages/tqdm/_monitor.py", line 60 in run\n')


@pytest.mark.parametrize("words, above, request_words", [
    ("", "The error is above the dump", "A request that shows it"),
    ("服务挂了，最后几行是这样的：\n", "错误在转储的上面", "一个能复现问题的请求"),
])
def test_the_tail_of_a_thread_dump_is_asked_for_the_lines_above_it(assistant, words, above, request_words):
    answer = assistant.answer(words + THREAD_DUMP_TAIL)
    assert answer.outcome != "fix"
    assert above in answer.next_steps[0] and "Fatal Python error" in answer.next_steps[0]
    assert not any(request_words in step for step in answer.next_steps)


def test_a_whole_thread_dump_is_not_asked_for_what_is_above_it(assistant):
    answer = assistant.answer("Fatal Python error: Aborted\n\n" + THREAD_DUMP_TAIL)
    assert not any("The error is above the dump" in step for step in answer.next_steps)


MINIMAX_DEEPEP = ("my MiniMax-M3 server dies with AttributeError: 'bool' object has no attribute "
                  "'num_token_non_padded' after I upgraded to 0.5.18, what do I do? I launch with "
                  "--moe-a2a-backend deepep --tp 8 --ep-size 8 on 8x H20.")


def test_a_lead_offers_no_steps_for_a_component_its_entry_rules_out(assistant):
    answer = assistant.answer(MINIMAX_DEEPEP)
    assert answer.outcome == "lead"
    assert answer.matches[0].id == "minimax-m3-deepep-forward-batch-bool-attributeerror"
    steps = " ".join(answer.next_steps)
    assert "[deepep]" not in steps and "NVSHMEM_DEBUG" not in steps and "test_intranode" not in steps


def test_only_a_fact_that_denies_a_component_rules_it_out():
    entries = {e.id: e for e in load_entries(REPO / "kb" / "entries")}

    def meta(entry_id):
        return {"wrong_advice": [{"claim": w.claim, "fact": w.fact} for w in entries[entry_id].wrong_advice]}

    # "DeepEP itself never runs": DeepEP, and the NVSHMEM the wrong claim blames beside it
    assert ruled_out_components(meta("minimax-m3-deepep-forward-batch-bool-attributeerror")) == {"deepep", "nvshmem"}
    # a claim that names DeepEP with a wrong remedy (a longer timeout) does not rule DeepEP out
    assert ruled_out_components(meta("deepep-dispatch-cpu-recv-timeout")) == frozenset()


@pytest.mark.parametrize("question, closest", [
    ("请问 SGLang 0.5.10 怎么开启投机解码（EAGLE3）？需要哪些参数？", "为什么最接近的条目"),
    ("How do I turn on speculative decoding (EAGLE3) in SGLang 0.5.10? Which flags do I need?",
     "Why the closest entry"),
])
def test_a_how_to_question_names_no_error_entry_as_the_closest(assistant, question, closest):
    answer = assistant.answer(question)
    assert answer.question and answer.outcome != "fix"
    assert answer.reasons_title in ("Why there is no fix", "为什么没有修复方法")
    text = render_text(answer, color=False)
    assert closest not in text and "kb:" not in text


WARMUP_403 = (
    "公司内网有代理，服务一启动就被杀掉了，日志如下，这是什么原因？\n"
    "[2025-02-17 11:56:43] Initialization failed. warmup error: Traceback (most recent call last):\n"
    '  File "xxx/python3.11/site-packages/sglang/srt/entrypoints/http_server.py", line 548, in _wait_and_warmup\n'
    '    assert res.status_code == 200, f"{res=}, {res.text=}"\n'
    "AssertionError: res=<Response [403]>, res.text='<html><head><title>403 Forbidden</title></head></html>'\n"
    "Killed\n")


def test_a_chinese_score_line_says_the_entry_confidence_and_mode_in_chinese(assistant):
    answer = assistant.answer(WARMUP_403)
    assert answer.outcome == "fix" and answer.matches[0].id == "warmup-request-through-http-proxy"
    text = render_text(answer, color=False)
    assert "知识库可信度：中高" in text and "模式：知识库原文" in text
    assert "medium-high" not in text and "extractive" not in text


MINERU_SLOW = (
    "MinerU 使用sglang做pdf转换速度很慢\n"
    "WARNING:sglang.srt.models.registry:Ignore import error when loading sglang.srt.models.torch_native_llama. "
    "tensor model parallel group is not initialized\n"
    "[2025-08-13 01:01:51] Attention backend not explicitly specified. Use flashinfer backend by default.\n"
    "[2025-08-13 01:01:51] Init torch distributed begin.\n"
    "[2025-08-13 01:01:52] Init torch distributed ends. mem usage=0.00 GB\n"
    "[2025-08-13 01:01:52] Load weight begin\n")


def test_chinese_labels_end_in_the_full_width_colon_on_every_surface(assistant):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_sections

    # no Chinese label closed by an ASCII colon, in the terminal, the web page or Slack: a fix with
    # its origin, and an unknown with its reasons
    ascii_closed = re.compile(r"[\u4e00-\u9fff）]:(?:\s|\*|$)", re.M)
    fixed = assistant.answer(WARMUP_403)
    assert fixed.reader_language == "zh" and fixed.origin is not None
    answer = assistant.answer(MINERU_SLOW)
    assert answer.reader_language == "zh" and answer.outcome != "fix"
    for shown in (fixed, answer):
        assert not ascii_closed.search(render_text(shown, color=False))
        assert not re.search(r"[\u4e00-\u9fff]:\*\*", answer_markdown(shown))
        assert not re.search(r"[\u4e00-\u9fff]:\*", "\n".join(answer_sections(shown)))
    assert "报错来源：" in render_text(fixed, color=False)
    assert "*报错来源：*" in "\n".join(answer_sections(fixed))
    # failure kinds in a Chinese reason are Chinese words, never the English enum names
    reasons = " ".join(answer.reasons)
    assert not re.search(r"\b(?:slow|hang|crash|wrong output)\b", reasons)
