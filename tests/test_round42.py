"""What wrong fixes on labelled reports came from in the decision, as a user sees it: a warning the
run printed and went on from taken as the failure, a paste the user says is not from SGLang given an
SGLang fix, the job's own tensor-parallel ranks on GPU 0 read as another job holding the GPU, and a
start-up phase told only in words; and the Chinese of verify lines and wrong-advice warnings."""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.gpu_memory import THIS_PROCESS, parse_oom
from assistant.kb import EntryError, load_entries, parse_entry, translation_mismatches
from assistant.phase import paste_phase
from assistant.trace import analyze_lines
from tests.conftest import REPO

DEEPEP_NORMAL_LAUNCH = (
    "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3-0324 --tp 8 --ep 8 "
    "--moe-a2a-backend deepep --deepep-mode normal --enable-two-batch-overlap\n"
    "[2026-01-05 10:01:02] WARNING server_args.py:1838: Cuda graph is disabled because deepep_mode=`normal`\n")


def test_a_warning_the_run_went_on_from_is_no_fix_for_the_error_it_died_of(assistant):
    # the warning alone, with a report of slow decoding: the entry about it is the fix
    slow = assistant.answer("Decode is much slower than expected with DeepEP normal mode:\n" + DEEPEP_NORMAL_LAUNCH)
    assert slow.outcome == "fix" and slow.matches[0].id == "deepep-normal-mode-cuda-graph"
    # the same warning above a different failure the user quotes: a lead that says why
    crash = assistant.answer('[Bug] "invalid configuration argument" with two-batch overlap\n' + DEEPEP_NORMAL_LAUNCH)
    assert crash.outcome != "fix"
    assert any("only a warning" in str(reason) and "invalid configuration argument" in str(reason)
               for reason in crash.reasons)


def test_a_paste_the_user_says_is_not_from_sglang_gets_no_sglang_fix(assistant):
    error = ("ValueError: The output_size of gate's and up's weight = 192 is not divisible by weight "
             "quantization block_n = 128.\n")
    ours = assistant.answer("Loading MiniMax-M2.5 FP8 with --tp 8 fails:\n" + error)
    assert ours.outcome == "fix" and ours.matches[0].id == "fp8-block-quant-tp-indivisible"
    theirs = assistant.answer("Running MiniMax-M2.5 FP8 on AMD GPUs with another inference engine (not SGLang) "
                              "at TP 8; model load fails:\n" + error)
    assert theirs.outcome == "lead" and theirs.matches[0].id == "fp8-block-quant-tp-indivisible"
    assert any("does not come from SGLang" in str(reason) for reason in theirs.reasons)
    chinese = assistant.answer("没有用 sglang，用的是别的推理框架，加载模型报错：\n" + error)
    assert chinese.outcome == "lead"
    assert any("不是来自 SGLang" in str(reason) for reason in chinese.reasons)


TP_RANKS_ON_GPU0 = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 38.00 MiB. GPU 0 has a total capacity of "
    "23.65 GiB of which 39.44 MiB is free. Process 20909 has 1.81 GiB memory in use. Process 21069 has 1.87 GiB "
    "memory in use. Process 21071 has 1.87 GiB memory in use. Process 21068 has 16.12 GiB memory in use. "
    "Process 21070 has 1.91 GiB memory in use. Of the allocated memory 1.22 GiB is allocated by PyTorch, and "
    "220.57 MiB is reserved by PyTorch but unallocated.")


def test_the_jobs_own_tensor_parallel_contexts_on_gpu0_are_not_another_job(assistant):
    memory = parse_oom(TP_RANKS_ON_GPU0)
    assert not memory.others_hold_memory() and memory.holder() == THIS_PROCESS
    answer = assistant.answer("Qwen2.5-VL-72B-AWQ on 4x RTX 4090 with --tp 4, sglang 0.4.6.post1: while serving "
                              "image requests GPU 0 memory keeps growing until\n" + TP_RANKS_ON_GPU0)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "oom-gpu-held-by-other-process")
    # a second job of real size still is one
    shared = parse_oom(TP_RANKS_ON_GPU0.replace("Process 21070 has 1.91 GiB", "Process 21070 has 9.91 GiB"))
    assert shared.others_hold_memory()


def test_a_start_up_phase_told_in_words_is_read():
    error = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    told = "The OOM happens before the checkpoint is really loaded, while creating the FP8 weights."
    assert paste_phase(analyze_lines([told, error])) == "startup"
    assert paste_phase(analyze_lines(["The OOM happens after running fine for 3 hours.", error])) == "serving"


ENTRY = """---
id: sample-entry
title: "Sample"
title_zh: "示例"
area: memory
signatures: ["SampleError: boom"]
confidence: high
cause: "Because."
cause_zh: "因为。"
fix:
  - text: "Do `--tp-size 2`."
    text_zh: "使用 `--tp-size 2`。"
verify:
  - "The log shows `ready to roll` on 0.5.9."
wrong_advice:
  - claim: "Set `--mem-fraction-static 0.95`."
    fact: "It does not help on 0.5.9."
verify_zh:
  - "日志在 0.5.9 上出现 `ready to roll`。"
wrong_advice_zh:
  - claim: "设置 `--mem-fraction-static 0.95`。"
    fact: "在 0.5.9 上没用。"
sources:
  - url: https://github.com/sgl-project/sglang/issues/1
---
"""


def test_verify_lines_and_wrong_advice_carry_their_chinese_and_a_changed_fact_is_a_kb_problem():
    entry = parse_entry(ENTRY, "sample.md")
    assert entry.verify_zh == ("日志在 0.5.9 上出现 `ready to roll`。",)
    assert entry.wrong_advice[0].claim_zh.startswith("设置") and translation_mismatches(entry) == []
    broken = replace(entry, verify_zh=("日志出现 ready to roll。",))
    assert any(problem.startswith("verify_zh 1 lacks") for problem in translation_mismatches(broken))
    with pytest.raises(EntryError, match="verify_zh"):
        parse_entry(ENTRY.replace('verify_zh:\n  - "日志在 0.5.9 上出现 `ready to roll`。"\n',
                                  'verify_zh:\n  - "一"\n  - "二"\n'), "sample.md")


def _translated_entry():
    entries = [e for e in load_entries(REPO / "kb" / "entries")
               if e.signatures and e.verify_zh and any(w.claim_zh for w in e.wrong_advice) and not e.diagnosis]
    if not entries:
        pytest.skip("no shipped entry has Chinese verify lines and wrong advice")
    return next(e for e in entries if e.id == "cuda-home-not-set") if any(
        e.id == "cuda-home-not-set" for e in entries) else entries[0]


def test_a_chinese_reader_gets_the_verify_lines_and_wrong_advice_in_chinese(assistant):
    entry = _translated_entry()
    paste = "启动报错了，怎么办？\n" + entry.signatures[0]
    chinese = assistant.answer(paste)
    english = assistant.answer(entry.signatures[0])
    assert chinese.matches[0].id == entry.id == english.matches[0].id
    assert any(entry.verify_zh[0] in step for step in chinese.next_steps)
    assert any(entry.wrong_advice[0].fact_zh in warning for warning in chinese.warnings)
    assert any(entry.verify[0] in step for step in english.next_steps)


LINK_FAILURE = "/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status\n"


@pytest.mark.parametrize("words", [
    "This error is not from SGLang, it comes from a separate torch.compile script on the same box:",
    "这个报错不是 SGLang 的，是我们单独跑 torch.compile 的脚本报的，和 SGLang 在同一台机器上：",
])
def test_saying_it_is_not_sglang_counts_however_it_is_worded(assistant, words):
    answer = assistant.answer(words + "\n" + LINK_FAILURE)
    assert answer.outcome != "fix"
    assert answer.matches and answer.matches[0].id == "triton-launcher-build-failed"
    reasons = " ".join(str(reason) for reason in answer.reasons) + " ".join(r.zh for r in answer.reasons if hasattr(r, "zh"))
    assert "does not come from SGLang" in reasons or "不是来自 SGLang" in reasons
    # the same words about SGLang's own problem do not decline it
    ours = assistant.answer("这不是 sglang 的问题吧？torch.compile 报错：\n" + LINK_FAILURE)
    assert ours.outcome == "fix"


def test_the_linkers_reason_is_the_root_error_not_collect2(assistant):
    answer = assistant.answer(LINK_FAILURE)
    assert answer.primary_error == "/usr/bin/ld: cannot find -lcuda"
    assert answer.outcome == "fix" and answer.matches[0].id == "triton-launcher-build-failed"


def test_a_chinese_fix_shows_caveats_and_headings_in_chinese(assistant):
    from assistant.render import render_text

    entry = {e.id: e for e in load_entries(REPO / "kb" / "entries")}["ascend-torch-npu-abi-mismatch-undefined-symbol"]
    risky = next(step for step in entry.fix if step.caveat)
    chinese = assistant.answer("昇腾上启动就报这个错，怎么办？\n" + entry.signatures[0])
    assert chinese.outcome == "fix" and chinese.matches[0].id == entry.id
    text = render_text(chinese, color=False)
    assert "修复步骤：" in text and "修复步骤:" not in text
    assert "! 注意：" in text and "! Caution:" not in text
    assert any(f"! 注意：{risky.caveat_zh}" in step for step in chinese.fix)
    english = assistant.answer("On Ascend the launch fails with:\n" + entry.signatures[0])
    assert any(f"! Caution: {risky.caveat}" in step for step in english.fix)
    assert "Fix:" in render_text(english, color=False)


def test_a_failed_source_build_is_asked_for_the_compiler_error_not_a_server_log(assistant):
    build = ("Building wheel for kt-kernel (pyproject.toml) ... error\n"
             "  error: subprocess-exited-with-error\n"
             '    File "/tmp/pip-build-env-7g91tvhj/overlay/lib/python3.12/site-packages/setuptools/command/bdist_wheel.py", '
             "line 370, in run\n"
             '      self.run_command("build")\n'
             "  CMake Error at CMakeLists.txt:12 (project): No CMAKE_CUDA_COMPILER could be found.\n"
             "ERROR: Failed to build installable wheels for some pyproject.toml based projects (kt-kernel)\n")
    answer = assistant.answer(build)
    assert answer.outcome != "fix"
    steps = " ".join(answer.next_steps)
    assert "pip install -v ." in steps and "cmake --version" in steps
    assert "launch_server" not in steps and "pip show setuptools" not in steps


def test_steps_for_releases_that_never_print_the_message_are_left_out(assistant):
    # `extra_buffer needs CUDA/MUSA/NPU (FLA).` exists only in 0.5.14-0.5.15: the step for the
    # 0.5.7-0.5.13 flag name cannot apply to this run, though the paste names no version
    answer = assistant.answer("Qwen3.5 on AMD MI35x (gfx950), ROCm, no mamba strategy flag passed; the server exits at "
                              "startup before loading weights:\nAssertionError: extra_buffer needs CUDA/MUSA/NPU (FLA).\n")
    assert answer.outcome == "fix" and answer.matches[0].id == "mamba-radix-cache-page-size"
    assert not any("[SGLang >=0.5.7,<0.5.14]" in step for step in answer.fix)
    assert any("[SGLang >=0.5.14]" in step for step in answer.fix)


def test_a_checkpoints_format_suffix_is_not_where_it_fails():
    from assistant.decision import failing_components

    analysis = analyze_lines(["GLM-5.2-FP8 failed to start with TP8CP8PP2 on H20"])
    assert "quantization" not in failing_components(analysis)
    assert "quantization" in failing_components(analyze_lines(["ValueError: fp8 block quant requires block_n"]))
