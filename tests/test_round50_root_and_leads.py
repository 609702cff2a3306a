"""Round 50: a lead or unknown names the right root error, one version reading, and no unrelated symptom.

A trial on real reports the KB lacks found three things a user reads wrong: the teardown line
`Received sigquit from a child process` (or SGLang 0.5.10+'s `Subprocess scheduler_N ... crashed
with exit code 1. Triggering SIGQUIT for cleanup...`) shown as the root error above a scheduler's
traceback that the paste cuts before its exception line; "your SGLang version is not in the paste"
beside "Detected: SGLang 0.5.7 or later (by the files in your traceback)"; and a lead offering "It
applies if what you see is this: FA3 ... with an FP8 KV cache" to a report naming neither. The
pastes are made up in the shape of such reports."""

from __future__ import annotations

from assistant.render import render_text
from ui.markdown import answer_markdown

# the parent's teardown line, then the failing scheduler's traceback, cut before its exception line
SIGQUIT_ABOVE_CUT_TRACEBACK = """[2026-01-10 09:12:40] Received sigquit from a child process. It usually means the child failed.
[2026-01-10 09:12:40 TP1 EP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 2853, in run_scheduler_process
    scheduler = Scheduler(
                ^^^^^^^^^^
  File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 314, in __init__
    self.init_model_worker()
  File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 452, in init_model_worker
    self.tp_worker = TpModelWorker(
                     ^^^^^^^^^^^^^^
  File "/opt/sglang/python/sglang/srt/managers/tp_worker.py", line 253, in __init__
    self._model_runner = ModelRunner(
                         ^^^^^^^^^^^^
"""
# SGLang 0.5.10+'s watchdog line under the same kind of cut traceback
WATCHDOG_BELOW_CUT_TRACEBACK = """[2026-03-02 10:11:15 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2853, in run_scheduler_process
    scheduler = Scheduler(
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 314, in __init__
    self.init_model_worker()
[2026-03-02 10:11:16] Subprocess scheduler_1 (pid=4211) crashed with exit code 1. Triggering SIGQUIT for cleanup...
"""
# nothing but the teardown lines: they are all the paste shows
SIGQUIT_ALONE = """[2026-01-10 09:12:38 TP0] Load weight begin. avail mem=78.84 GB
[2026-01-10 09:12:40 TP0] Child process unexpectedly failed with an exit code 9. pid=4211
[2026-01-10 09:12:40] Received sigquit from a child process. It usually means the child failed.
"""
# a multi-node DP/TP start-up whose scheduler fails in CUDA graph capture; no attention backend,
# no KV cache dtype, the traceback cut inside capture
CAPTURE_CUT = """In the 2x8xH100 environment, when dp=4 and tp=16, the following error occurs:
[2025-04-23 03:12:13 DP1 TP5] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 275, in __init__
    self.capture()
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 359, in capture
    ) = self.capture_one_batch_size(bs, forward)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 451, in capture_one_batch_size
    run_once()
"""


def test_the_teardown_line_is_not_the_root_error_above_a_cut_scheduler_traceback(assistant):
    answer = assistant.answer(SIGQUIT_ABOVE_CUT_TRACEBACK)
    assert answer.outcome in ("lead", "unknown")
    assert answer.primary_error is None
    text = render_text(answer, color=False)
    assert "The root error as read from your paste" not in text
    # what is asked for first is the traceback's missing end, where the child's failure is
    assert answer.next_steps[0].startswith("The end of the traceback")


def test_the_watchdog_line_of_newer_releases_is_not_the_root_error_either(assistant):
    answer = assistant.answer(WATCHDOG_BELOW_CUT_TRACEBACK)
    assert answer.primary_error is None
    assert "The root error as read from your paste" not in render_text(answer, color=False)


def test_a_teardown_line_is_the_root_error_when_the_paste_shows_nothing_else(assistant):
    answer = assistant.answer(SIGQUIT_ALONE)
    assert answer.primary_error == "Child process unexpectedly failed with an exit code 9. pid=4211"


def test_the_version_sentence_says_what_the_detected_line_reads(assistant):
    answer = assistant.answer(SIGQUIT_ABOVE_CUT_TRACEBACK)
    assert answer.detected.sglang_releases == "0.5.7 or later"
    for text in (render_text(answer, color=False), answer_markdown(answer)):
        assert "your SGLang version is not in the paste" not in text
        assert "your paste's frames point to SGLang 0.5.7 or later" in text


def test_a_version_read_from_the_message_alone_says_so(assistant):
    answer = assistant.answer(WATCHDOG_BELOW_CUT_TRACEBACK)
    text = render_text(answer, color=False)
    assert "Detected: SGLang 0.5.10 or later (by the releases that print your SGLang message)" in text
    assert "your paste's error message points to SGLang 0.5.10 or later" in text
    assert "not in the paste" not in text


def test_a_chinese_reader_reads_the_same_range(assistant):
    answer = assistant.answer("两张 A100 上启动服务时报错，日志如下：\n" + SIGQUIT_ABOVE_CUT_TRACEBACK)
    assert answer.reader_language == "zh"
    text = render_text(answer, color=False)
    assert "你贴的内容里没有 SGLang 版本" not in text
    assert "从你贴的调用栈的文件看，SGLang 是 0.5.7 及之后" in text


def test_a_lead_offers_no_variant_the_report_never_names(assistant):
    answer = assistant.answer(CAPTURE_CUT)
    assert answer.outcome in ("lead", "unknown")
    text = render_text(answer, color=False)
    assert "It applies if what you see is this" not in text
    assert "FA3" not in answer.diagnosis and "FP8" not in answer.diagnosis


def test_the_models_origin_source_reads_the_version_as_the_answer_does(assistant):
    # with an LLM endpoint the model reads the same "Where it comes from" facts; it must not be told
    # the version is unknown when the traceback's files date it
    from assistant.prompt import origin_source
    paste = SIGQUIT_ABOVE_CUT_TRACEBACK + "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"
    source = origin_source(assistant.retrieve(paste.splitlines()))
    assert source is not None
    assert "not in the paste" not in source.text
    assert "point to SGLang" in source.text
