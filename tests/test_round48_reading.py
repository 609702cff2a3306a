"""Reading the paste (round 48, h3), as an operator sees the answer: the error line pasted under
their lead-in ("every request fails:") is shown as the root error, not swallowed into their
sentence; a sentence that only announces the error below it is not shown as the error; a release
sentence written under the error counts as the user's report of a regression; and a device-side
assert's answer says which kernel check failed, or where the kernel printed it."""

from __future__ import annotations

from assistant.pipeline import lines_from_text
from assistant.trace import analyze_lines
from assistant.upgrade import reports_regression

BISECT = "regression-after-sglang-upgrade-bisect"


def test_a_runtime_error_under_the_users_lead_in_is_the_root_error(assistant):
    paste = ("We serve Qwen3-32B with --tp 2 on two H100s and after an hour of traffic every request fails:\n"
             "CUDA error: an illegal memory access was encountered\n")
    answer = assistant.answer(paste)
    assert answer.primary_error == "CUDA error: an illegal memory access was encountered"
    assert answer.matches[0].id == "illegal-memory-access"


def test_a_line_announced_without_a_colon_is_the_program_output(assistant):
    paste = ("When I launch the server with --tp 2 I get the following error\n"
             "NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error\n")
    answer = assistant.answer(paste)
    assert answer.primary_error.startswith("NCCL error in: /pytorch/torch/csrc/distributed/c10d/")


def test_an_installers_level_line_is_never_the_users_words(assistant):
    paste = ("hi, I run `lmsysorg/sglang:latest` on B200 with driver 570, cuda 12.8, the container gets exception:\n"
             "WARNING: Detected NVIDIA B200 GPU, which is not yet supported in this version of the container\n"
             "ERROR: No supported GPU(s) detected to run this container\n")
    answer = assistant.answer(paste)
    assert answer.primary_error == "ERROR: No supported GPU(s) detected to run this container"


def test_a_traceback_header_under_a_lead_in_opens_the_traceback():
    paste = ("I launch the server with --skip-tokenizer-init and every OpenAI request raises an error.\n"
             "This error on the server side is:\n"
             "Traceback (most recent call last):\n"
             '  File "/env/lib/python3.10/site-packages/sglang/srt/entrypoints/openai/serving_base.py", line 45, '
             "in handle_request\n"
             "    return await self._handle_non_streaming_request(\n"
             "AttributeError: 'NoneType' object has no attribute 'decode'\n")
    analysis = analyze_lines(lines_from_text(paste))
    assert not any("Traceback" in line for line in analysis.prose_lines)
    assert analysis.frames == ("handle_request",)


def test_a_sentence_announcing_the_error_below_is_not_read_as_the_error():
    paste = ("When running the SGLang Docker image (lmsysorg/sglang:v0.4.5-cu121), the container fails to "
             "initialize with the following error:\n"
             "Traceback (most recent call last):\n"
             '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
             "    return _run_code(code, main_globals, None,\n")
    analysis = analyze_lines(lines_from_text(paste))
    assert analysis.root_line is None   # the traceback is cut above its exception: no root error to show
    assert "fails to initialize" not in " ".join(e.text for e in analysis.errors)


def test_a_release_sentence_under_the_error_reports_a_regression(assistant):
    paste = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
             "Works on 0.5.1, broken on 0.5.2.\n")
    answer = assistant.answer(paste)
    assert answer.release_change is not None
    assert (answer.release_change.older, answer.release_change.newer) == ("0.5.1", "0.5.2")


def test_an_upgrade_told_under_the_error_puts_bisecting_among_the_leads(assistant):
    paste = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
             "This happens only after upgrading to 0.5.2, worked on 0.5.1\n")
    analysis = analyze_lines(lines_from_text(paste))
    assert reports_regression(analysis)   # the pasted error is what happens since the upgrade
    answer = assistant.answer(paste)
    assert answer.outcome == "lead"
    assert BISECT in [match.id for match in answer.matches[:3]]


def test_a_release_named_with_no_change_is_still_no_regression():
    paste = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
             "I am on sglang 0.5.2 with two H100s.\n")
    assert not reports_regression(analyze_lines(lines_from_text(paste)))


def test_an_index_assert_is_read_as_an_index_past_its_table(assistant):
    paste = ("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [0,0,0], thread: [64,0,0] "
             'Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.\n'
             "[2025-06-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
             '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2200, in run_batch\n'
             "    batch_result = self.draft_worker.forward_batch_speculative_generation(batch)\n"
             '  File "/sgl-workspace/sglang/python/sglang/srt/speculative/eagle_worker.py", line 300, in draft\n'
             "    next_token_ids = next_token_ids.tolist()\n"
             "RuntimeError: CUDA error: device-side assert triggered\n")
    answer = assistant.answer(paste)
    assert "IndexKernel.cu" in answer.fault_note
    assert "vocabulary" in answer.fault_note


def test_a_bare_device_side_assert_says_where_the_kernel_printed_its_check(assistant):
    paste = ("[2025-03-01 20:34:50 TP6] Scheduler hit an exception: Traceback (most recent call last):\n"
             '  File "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker_overlap_thread.py", line 196, '
             "in forward_batch_generation\n"
             "    self.scheduler_stream.synchronize()\n"
             '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/streams.py", line 100, in synchronize\n'
             "    super().synchronize()\n"
             "RuntimeError: CUDA error: device-side assert triggered\n"
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
    answer = assistant.answer(paste)
    assert "not a memory fault" in answer.fault_note
    assert "grep -m3 'Assertion'" in answer.fault_note
    # where it was noticed is still told
    assert "self.scheduler_stream.synchronize()" in answer.fault_note
