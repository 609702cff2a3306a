"""What a user says they do not run (round 47, h8): a feature or library named only inside the
user's negation ("not using EAGLE or any speculative decoding", "没有开 EAGLE", "no DeepEP, no
DeepGEMM", "without --enable-dp-attention") is not what the paste is about; an entry about it is
not the lead, and it is not shown as a failing component. A program's own sentence that names a
feature as off ("LoRA is not enabled") or missing ("No module named 'flashinfer'") is the failure
itself, and still names it."""

from __future__ import annotations

from assistant.components import components_in

LAUNCH = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2\n"
DEVICE_ASSERT = (
    "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [12,0,0], thread: [64,0,0] "
    "Assertion `srcIndex < srcSelectDimSize` failed.\n"
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2300, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/layers/vocab_parallel_embedding.py", line 470, in forward\n'
    "    output_parallel = self.quant_method.embedding(self, masked_input.long())\n"
    "RuntimeError: CUDA error: device-side assert triggered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
SPEC_ENTRY = "speculative-decoding-crash-isolate"

ILLEGAL_ACCESS = (
    "python -m sglang.launch_server --model-path XiaomiMiMo/MiMo-V2-Flash --tp 8 --trust-remote-code\n"
    "\n"
    "[2026-01-10 10:11:12 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2300, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker_overlap_thread.py", line 180, in resolve_last_batch_result\n'
    "    copy_done.synchronize()\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n")


def _led_by(answer, entry: str) -> bool:
    return answer.outcome in ("fix", "lead") and answer.matches[0].id == entry


def test_not_using_eagle_keeps_the_speculative_triage_entry_from_leading(assistant):
    answer = assistant.answer("We are not using EAGLE or any speculative decoding.\n" + LAUNCH + DEVICE_ASSERT)
    assert not _led_by(answer, SPEC_ENTRY)


def test_chinese_negation_of_eagle_counts_as_well(assistant):
    answer = assistant.answer("没有开 EAGLE，单机两卡。\n" + LAUNCH + DEVICE_ASSERT)
    assert not _led_by(answer, SPEC_ENTRY)


def test_libraries_the_title_rules_out_are_not_failing_components(assistant):
    answer = assistant.answer("# Scheduler crashes with illegal memory access on H200 (no DeepEP, no DeepGEMM)\n"
                              + ILLEGAL_ACCESS)
    assert not {"deepep", "deepgemm"} & set(answer.failing_components)


def test_a_library_the_title_names_is_still_a_failing_component(assistant):
    answer = assistant.answer("# Scheduler crashes with illegal memory access on H200 with DeepEP\n" + ILLEGAL_ACCESS)
    assert "deepep" in answer.failing_components


def test_negations_in_words_and_around_flags():
    assert not components_in("No DP attention, just TP 8.")
    assert not components_in("without --enable-dp-attention it still crashes")
    assert not components_in("不开 dp attention 也会崩")
    assert not components_in("没有用 PD 分离")
    assert not components_in("tried with and without EAGLE, both fail")
    # a comma starts a new phrase: what follows it is used
    assert components_in("no DP attention, EAGLE on") == {"speculative"}
    assert "dp-attention" in components_in("python -m sglang.launch_server --enable-dp-attention --dp 8")


def test_program_messages_and_off_flags_are_not_user_negations():
    assert "flashinfer" in components_in("ModuleNotFoundError: No module named 'flashinfer'")
    assert "lora" in components_in("ValueError: LoRA is not enabled. Please launch with --enable-lora")
    assert "speculative" in components_in("the draft has no EAGLE hooks in this release")
    assert "deepep" in components_in("DeepEP is not supported on this GPU")


def test_what_the_user_says_they_do_not_run_is_kept_apart_from_what_they_tried_both_ways():
    from assistant.components import components_denied
    assert components_denied("MiMo with EAGLE crashes. No DP attention, just TP 8.") == {"dp-attention"}
    assert components_denied("不开 dp attention，单机 8 卡") == {"dp-attention"}
    # run both ways: used, only ruled out as the cause
    assert not components_denied("tried with and without EAGLE, both fail")
    # named outside the negation too: used
    assert not components_denied("no DeepEP in the title, but DeepEP frames below")


def test_a_shell_comment_after_the_launch_command_is_no_flag_of_it():
    from assistant.trace import analyze
    analysis = analyze("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 8  # no --enable-dp-attention\n"
                       "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert analysis.environment.flags == ("--model-path Qwen/Qwen3-8B", "--tp 8")
    # a root shell's prompt is no comment
    analysis = analyze("# python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --enable-dp-attention\n"
                       "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert "--enable-dp-attention" in analysis.environment.flags


def test_an_entry_about_a_feature_the_user_says_they_do_not_run_is_ruled_out():
    from assistant.decision import feature_unused
    from assistant.pipeline import lines_from_text
    from assistant.trace import analyze_lines

    meta = {"title": "DP attention with EAGLE crashes in the draft model's forward"}
    denied = analyze_lines(lines_from_text("MiMo with EAGLE crashes at the first request. No DP attention, just TP 8.\n"))
    used = analyze_lines(lines_from_text("MiMo with EAGLE and DP attention crashes at the first request.\n"))
    assert "you say you do not use" in str(feature_unused(meta, denied))
    assert feature_unused(meta, used) is None
