"""The decision between fix, lead and unknown, on traces that look alike on the surface.

A generic line (`Caught signal 11`, `Capture cuda graph failed:`) must not carry a fix when the
rest of the trace points elsewhere; a specific match on the root error must."""

from __future__ import annotations

import pytest

from assistant.components import components_in, conflicts
from assistant.generic_lines import is_generic
from assistant.intent import is_question

pytestmark = pytest.mark.slow

UCX_SEGFAULT = """\
[2025-09-02 11:20:41 TP3] Decode transfer started, backend nixl
[node-7:1883 :0:2011] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x18)
==== backtrace (tid:   2011) ====
 0 0x0000000000042520 __sigaction()  ???:0
 1  /usr/lib/libucs.so.0(ucs_handle_error+0x2dc) [0x7f3a8c1d2e4c]
 2  /usr/lib/libucp.so.0(ucp_worker_progress+0x5a) [0x7f3a8c31a0ba]
 3  /opt/nixl/lib/libnixl.so(nixlUcxEngine::progress()+0x44) [0x7f3a8c5b1f04]
Fatal Python error: Segmentation fault
"""

NCCL_SEGFAULT = """\
[2025-05-10 03:12:09 TP9] Decode batch. #running-req: 41, #token: 52011
Caught signal 11 (Segmentation fault: address not mapped to object at address 0x3)
==== backtrace (tid: 99121) ====
 0 ncclMemoryPoolAlloc<ncclProxyOp>() (utils.h:280)
 1 addProxyOpIfNeeded() enqueue.cc:0
 2 ncclLaunchPrepare() enqueue.cc:0
Fatal Python error: Segmentation fault
"""

MXFP4_CAPTURE = """\
[2025-10-01 08:00:01 TP0] Capture cuda graph begin. This can take up to several minutes.
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 390, in capture
    self.capture_one_batch_size(bs, forward)
  File "/usr/local/lib/python3.12/dist-packages/flashinfer/fused_moe/core.py", line 812, in trtllm_fp4_block_scale_moe
    raise RuntimeError("mxfp4 routing kernel failed: unsupported top_k for tile size 8")
RuntimeError: mxfp4 routing kernel failed: unsupported top_k for tile size 8
Exception: Capture cuda graph failed: mxfp4 routing kernel failed: unsupported top_k for tile size 8
"""


def test_generic_lines_are_told_from_specific_ones():
    assert is_generic("Caught signal 11 (Segmentation fault: address not mapped to object at address 0x3)")
    assert is_generic("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert is_generic("Exception: Capture cuda graph failed: CUDA out of memory.")
    assert not is_generic("fatal error: cuda_fp8.h: No such file or directory")
    assert not is_generic("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")
    # printed under every capture failure, and the NCCL watchdog line with its standard details
    assert is_generic("4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)")
    assert is_generic("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, "
                      "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.")
    # torch names every process on the GPU under each OOM, the failing one included
    assert is_generic("Process 6397 has 386.00 MiB memory in use.")
    # torch.compile's wrapper and its advice print under every compiler failure; what it quotes says why
    assert is_generic("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:")
    assert is_generic("You can suppress this exception and fall back to eager by setting:")
    assert not is_generic("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: "
                          "AttributeError: 'AttrsDescriptor' object has no attribute 'divisible_by_16'")
    # torch's shape and index checks: any model, kernel or request with a wrong size prints them
    assert is_generic("RuntimeError: The size of tensor a (96) must match the size of tensor b (90) at "
                      "non-singleton dimension 1")
    assert is_generic("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [0,0,0], "
                      'thread: [64,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.')
    assert is_generic("IndexError: index 256 is out of bounds for dimension 1 with size 256")
    # an HTTP client that reached no server says the server was not there, never why
    assert is_generic("httpx.ConnectError: All connection attempts failed")
    assert is_generic("Server error '503 Service Unavailable' for url 'http://127.0.0.1:30000/generate'")
    assert not is_generic("RuntimeError: No healthy workers available")


def test_components_are_read_from_backtraces_and_conflict_by_family():
    assert {"ucx", "nixl"} <= components_in(UCX_SEGFAULT)
    assert conflicts(frozenset({"ucx", "nixl"}), frozenset({"nccl"})) == {"ucx", "nixl"}
    # Mooncake and NIXL both move KV caches: an entry about one family covers the other
    assert not conflicts(frozenset({"nixl"}), frozenset({"mooncake"}))


def test_sglang_jax_is_read_from_its_paths_tpu_slices_and_libraries():
    for text in ("python grpo_demo_sglang_jax_rollout.py", "Environment: v5e-4", "on a TPU v6e-16",
                 'File "/opt/sglang-jax/python/sgl_jax/srt/layers/moe.py", line 3, in forward'):
        assert "jax" in components_in(text), text
    for text in ("CUDA 12.4 on H100", "version v5-1 of the adapter", "Qwen2-VL v2-8b"):
        assert "jax" not in components_in(text), text


def test_questions_are_not_problem_reports():
    assert is_question("how do I enable speculative decoding with EAGLE?", has_log_errors=False)
    assert is_question("如何开启 DP attention？", has_log_errors=False)
    assert not is_question("the server crashes at startup, how do I fix it?", has_log_errors=False)
    assert not is_question("how do I fix this?", has_log_errors=True)
    # a failure the user wants to avoid is not one they report
    assert is_question("How can I cap image resolution for Qwen2.5-VL so huge images don't blow up memory?",
                       has_log_errors=False)
    assert not is_question("Why does my server crash so often?", has_log_errors=False)
    # asking how to be rid of an error message reports that error, in either language
    assert not is_question("how do I fix 'Address already in use' when starting sglang?", has_log_errors=False)
    assert not is_question("启动时报 Address already in use 怎么办", has_log_errors=False)
    # words inside a flag neither ask (`--enable-...`) nor report; wrong behaviour told plainly reports
    assert not is_question("With --enable-reasoning and --reasoning-parser deepseek-r1 plus a json_schema "
                           "response_format, the JSON ends up in reasoning_content and content is empty.",
                           has_log_errors=False)
    assert is_question("Is --enable-dp-attention supported with Qwen3-MoE?", has_log_errors=False)
    # a Chinese question ends in a full-width question mark; a Chinese symptom is a failure
    assert is_question("想在几张 A100 上同时跑多个副本并自动做负载均衡，一条启动命令能搞定吗？", has_log_errors=False)
    assert not is_question("一发长 prompt 就必崩，是已知问题吗？", has_log_errors=False)
    assert not is_question("升级之后缓存命中率直接掉到 0，这个说法靠谱吗？", has_log_errors=False)
    # a question that only negates sets a constraint; "why ... doesn't", "Can't ...", a failure
    # word, each report one
    assert is_question("Is there an equivalent of max_model_len? The model doesn't fit on my 24GB card, "
                       "but it would with 8k context?", has_log_errors=False)
    assert is_question("What chunked prefill size should I use so decode isn't starved?", has_log_errors=False)
    assert not is_question("Why doesn't the server use the second GPU?", has_log_errors=False)
    assert not is_question("Can't use sglang with flashinfer on a T4, what else can I try?", has_log_errors=False)
    assert not is_question("What does this mean? The server doesn't start and prints an error.",
                           has_log_errors=False)
    # a symptom told inside a question reports it: a setting that does nothing, output that
    # varies or is empty, what was tried and did not help
    assert not is_question("Editing the json changes nothing at all. Where does sglang take the RDMA device from?",
                           has_log_errors=False)
    assert not is_question("Even with temperature 0 the outputs are inconsistent; is there a deterministic mode?",
                           has_log_errors=False)
    assert not is_question("tool_calls 是空的，该用哪个 parser？", has_log_errors=False)
    assert not is_question("请问如何开启 reasoning？加了 --reasoning-parser 这些方法都不行", has_log_errors=False)
    assert is_question("Which --tool-call-parser should I use for Llama 3.1?", has_log_errors=False)
    # a count that stays at nothing or a wait of hours is the symptom, whatever question follows
    assert not is_question("Sending the same prompt again, the cache hit rate stays zero. Is this expected?",
                           has_log_errors=False)
    assert not is_question("The first regex request takes more than an hour. How can it be sped up?",
                           has_log_errors=False)
    assert is_question("How long does a grammar take to compile, a few minutes?", has_log_errors=False)
    # garbled output, and a setting whose answers are the base model's, report a failure
    assert not is_question("Deploying an AWQ model on 8 GPUs with sglang, the outputs are all garbled. Any idea?",
                           has_log_errors=False)
    assert not is_question("The server starts, but the answers are exactly the base model's with my adapter "
                           "set. Do I need --lora-target-modules?", has_log_errors=False)
    assert is_question("Is there a difference between --tp-size and --dp-size for throughput?", has_log_errors=False)


def test_a_traceback_cut_before_its_exception_is_a_report_not_a_question(assistant):
    paste = ("Seen with 32k-token prompts on GB300:\n"
             "[2026-09-03 18:06:13 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
             '  File "/sgl-workspace/sglang/python/sglang/srt/models/deepseek_v2.py", line 1673, in forward\n'
             "    q, kv = self._forward_prepare(\n"
             "  ...\n"
             "Is this the known issue? Should I lower --mem-fraction-static?")
    assert not assistant.retrieve(paste.splitlines()).decision.question


def test_a_segfault_inside_ucx_is_not_answered_with_the_nccl_fix(assistant):
    retrieval = assistant.retrieve(UCX_SEGFAULT.splitlines())
    assert retrieval.outcome != "fix"
    assert not (retrieval.hits and retrieval.hits[0].unit_id == "nccl-segfault-deepseek-multinode"
                and retrieval.outcome == "fix")
    assert {"nixl", "ucx"} & set(retrieval.decision.failing_components)


def test_a_segfault_inside_nccl_is_answered(assistant):
    retrieval = assistant.retrieve(NCCL_SEGFAULT.splitlines())
    assert retrieval.outcome == "fix"
    assert retrieval.hits[0].unit_id == "nccl-segfault-deepseek-multinode"


def test_a_mini_sglang_paste_is_not_answered_with_an_sglang_fix(assistant):
    # mini-sglang is a separate engine with its own flags: SGLang's `--attention-backend` step is not its fix
    paste = ("I deployed `python -m minisgl --model Qwen/Qwen3-0.6B` (mini-sglang) on an RTX 5070 and chat fails:\n"
             "RuntimeError: Error in function 'TllmGenFmhaRunner' at /code/mini-sglang/.venv/lib/python3.12/"
             "site-packages/flashinfer/data/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:30: Unsupported architecture")
    retrieval = assistant.retrieve(paste.splitlines())
    assert retrieval.outcome != "fix"
    assert any("other software" in reason and "minisgl" in reason for reason in retrieval.decision.reasons)
    # the same error from SGLang itself is still answered
    sglang = paste.replace("python -m minisgl", "python -m sglang.launch_server").replace(" (mini-sglang)", "") \
        .replace("mini-sglang", "sglang")
    assert assistant.retrieve(sglang.splitlines()).outcome == "fix"


def test_sglangs_frontend_api_marks_the_paste_as_sglangs(assistant):
    # `import sglang as sgl`: an old release's vLLM import failing under sgl.Runtime is SGLang's problem
    error = ("ImportError: cannot import name '_set_default_torch_dtype' from 'vllm.model_executor.model_loader' "
             "(/usr/local/lib/python3.10/dist-packages/vllm/model_executor/model_loader/__init__.py)")
    paste = f'I start the engine from Python with `rt = sgl.Runtime(model_path="/models/llama-2-7b")` and it fails:\n{error}'
    retrieval = assistant.retrieve(paste.splitlines())
    assert retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "vllm-dependency-missing-or-mismatched"
    # the bare vLLM error alone could be vLLM's own
    assert any("other software" in reason for reason in assistant.retrieve([error]).decision.reasons)


def test_a_wrapped_kernel_error_is_not_the_memory_fix(assistant):
    retrieval = assistant.retrieve(MXFP4_CAPTURE.splitlines())
    assert retrieval.outcome != "fix"
    assert retrieval.decision.reasons


def test_a_how_to_question_gets_no_error_fix(assistant):
    retrieval = assistant.retrieve(["how do I enable speculative decoding with EAGLE?"])
    assert retrieval.outcome != "fix" and retrieval.decision.question


def test_a_question_gets_an_entry_only_when_it_names_its_error(assistant):
    # the speculative-decoding crash entries share the topic words, not the question's subject
    topic = assistant.retrieve(["how do I enable speculative decoding with EAGLE?"])
    assert topic.outcome == "unknown"
    # asking how to get rid of an error reports it, whether it is named in words or quoted with its
    # exception class (the quoted exception is an error line of its own)
    for question in ['How do I get rid of the "loop argument must agree with lock" error when I use '
                     'sgl.Engine in a Jupyter notebook?',
                     "How do I get rid of `ValueError: loop argument must agree with lock` when I "
                     "use sgl.Engine in a Jupyter notebook?"]:
        named = assistant.retrieve([question])
        assert named.outcome == "fix" and not named.decision.question
        assert named.hits[named.decision.top].unit_id == "engine-notebook-event-loop-conflict"


def test_the_bundled_log_is_a_fix(assistant):
    from tests.conftest import REPO

    lines = (REPO / "kb" / "samples" / "flashinfer-cuda-fp8.log").read_text().splitlines()
    retrieval = assistant.retrieve(lines)
    assert retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "flashinfer-jit-missing-cuda-fp8-h"


def test_an_entry_about_a_generic_line_answers_that_line_alone(assistant):
    line = ("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=1, "
            "NumelOut=1, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.")
    retrieval = assistant.retrieve([line])
    assert retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "nccl-watchdog-timeout-while-serving"


def test_a_triage_lead_for_a_paste_with_no_error_line_does_not_speak_of_one(assistant):
    # a slow server is described, not pasted: the triage entry is the lead, and the answer does not
    # claim to explain an "error line" the user never showed
    answer = assistant.answer(["Why is sglang 0.4.6 slower than vllm 0.8.5 for Qwen3-8B in my benchmark? "
                               "Output token throughput is 30% lower at concurrency 64."])
    assert answer.outcome == "lead" and answer.matches[0].id == "throughput-below-expectations-benchmark-triage"
    assert "shows no error line" in answer.diagnosis and "error line means" not in answer.diagnosis
    assert answer.fix == [] and answer.next_steps


def test_a_diagnosis_entry_is_a_lead_whose_steps_find_the_failure(assistant):
    # `terminated with -3` says a child failed, not why: the entry's steps find the real error,
    # and the answer says so instead of presenting them as the fix
    answer = assistant.answer(["Received sigquit from a child process. It usually means the child failed."])
    assert answer.outcome == "lead" and answer.matches[0].id == "scheduler-sigquit-terminated"
    assert answer.fix == [] and "Not the cause yet" in answer.diagnosis
    assert answer.next_steps[0].startswith("Find the first exception in the full log")
    # a specific error behind it is answered by its own entry
    behind = assistant.retrieve(["fatal error: cuda_fp8.h: No such file or directory",
                                 "Received sigquit from a child process. It usually means the child failed."])
    assert behind.outcome == "fix" and behind.hits[behind.decision.top].unit_id == "flashinfer-jit-missing-cuda-fp8-h"


IMA_IN_A_KERNEL = """\
[2025-11-03 09:14:52 TP2] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2712, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 1021, in event_loop_overlap
    batch_result = self.run_batch(batch)
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tp_worker.py", line 288, in forward_batch_generation
    torch.cuda.synchronize()
torch.AcceleratorError: CUDA error: an illegal memory access was encountered
"""


def test_an_entry_about_a_generic_line_is_only_a_lead_when_the_trace_says_more(assistant):
    # the illegal-memory-access entry says what the line means and how to find its cause: for a
    # real traceback that is a lead to follow, not the fix (dozens of kernels end this way)
    retrieval = assistant.retrieve(IMA_IN_A_KERNEL.splitlines())
    assert retrieval.outcome != "fix"
    assert any(h.unit_id == "illegal-memory-access" for h in retrieval.hits[:3])


def test_a_log_without_the_entrys_lines_gets_no_fix_from_words_alone(assistant):
    # log lines that show no error, and the failure told in the user's words: the entries whose
    # words are close have none of their lines in this log, so at most a lead
    text = ("Qwen2-57B-A14B on 4x A100; the server dies right after these lines, no traceback:\n"
            "[2025-08-02 10:01:11 TP0] Load weight end. type=Qwen2MoeForCausalLM, avail mem=30.12 GB\n"
            "[2025-08-02 10:01:12 TP0] Memory pool end. avail mem=8.40 GB\n"
            "[2025-08-02 10:01:12 TP2] Capture cuda graph begin. This can take up to several minutes.\n"
            "[2025-08-02 10:01:13 TP1] Capture cuda graph begin. This can take up to several minutes.\n")
    retrieval = assistant.retrieve(text.splitlines())
    assert retrieval.outcome != "fix"


def test_a_signature_with_a_source_tag_matches_the_line_the_log_prints(assistant):
    # the reader takes "[torch_memory_saver.cpp] " for a log prefix; the entry's line starts with it
    text = ("verl rollout, resume_memory_occupation after the actor update:\n"
            "[torch_memory_saver.cpp] cudaError error: 2 (out of memory)  file=csrc/core.cpp func=resume line=172")
    retrieval = assistant.retrieve(text.splitlines())
    assert retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "torch-memory-saver-cuda-oom"


def test_a_version_outside_the_entry_scope_is_a_lead(assistant):
    # flashinfer 0.0.3's sampling NaN was fixed long ago: on 0.5.9 it is only a lead
    text = ("sglang 0.5.9\nRuntimeError: probability tensor contains either `inf`, `nan` or element < 0")
    retrieval = assistant.retrieve(text.splitlines())
    if retrieval.hits and retrieval.hits[0].unit_id == "flashinfer-0.0.3-sampling-nan":
        assert retrieval.outcome != "fix"


def test_a_post_release_is_inside_an_entry_about_that_post_release(assistant):
    # 0.4.9.post1 shipped without sentencepiece; 0.4.9.post2 put it back: the user's post number decides
    error = "ModuleNotFoundError: No module named 'sentencepiece'"
    broken = assistant.retrieve(["sglang 0.4.9.post1", error])
    assert broken.outcome == "fix" and broken.hits[0].unit_id == "sentencepiece-missing-sglang-0-4-9-post1"
    mended = assistant.retrieve(["sglang 0.4.9.post2", error])
    assert not (mended.outcome == "fix" and mended.hits[0].unit_id == "sentencepiece-missing-sglang-0-4-9-post1")


HICACHE_SEGFAULT = """\
HiCache with Mooncake as the L3 backend: after scaling the store down, every request fails.
2025-11-17 03:25:01] INFO:     10.0.0.8:45974 - "GET /metrics HTTP/1.1" 200 OK
Fatal Python error: Segmentation fault

Thread 0x00007edef7fff640 (most recent call first):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2207 in watchdog_thread
"""


def test_an_entry_about_other_hardware_needs_a_sign_of_it(assistant):
    # a log that names no hardware is most likely from NVIDIA GPUs: the Moore Threads entry that
    # shares the segfault line is not the fix for it, and is once the log shows a MUSA GPU
    retrieval = assistant.retrieve(HICACHE_SEGFAULT.splitlines())
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "musa-mtgpu-conf-missing")
    on_musa = assistant.retrieve(["MTT S4000, decode node after reinstalling the driver:",
                                  "Fatal Python error: Segmentation fault"])
    assert on_musa.hits[0].unit_id == "musa-mtgpu-conf-missing"
    assert not any("nothing in your log shows it" in r for r in on_musa.decision.reasons)


def test_a_startup_progress_line_is_generic():
    assert is_generic("[2025-03-07 23:50:27 TP0] Init torch distributed begin.")
    assert is_generic("[2025-03-07 23:50:27 TP0] Load weight begin. avail mem=22.46 GB")
    assert not is_generic("RuntimeError: Detected mismatch between collectives on ranks")


def test_a_log_that_went_past_the_hang_line_is_not_that_hang(assistant):
    # the multi-node hang entry is about a log that stops at "Init torch distributed begin."; this
    # one went on to load the weights (a wrapper polls meanwhile), so it is at most a lead
    text = ("sglang cant start up in WSL2, 4090; the server task ends when the model has loaded\n"
            "2025-03-07 23:50:27,532 - __main__ - INFO - [2025-03-07 23:50:27 TP0] Init torch distributed begin.\n"
            "2025-03-07 23:50:27,532 - __main__ - WARNING - Attempt 13: Please wait for sglang server to become ready...\n"
            "2025-03-07 23:50:27,727 - __main__ - INFO - [2025-03-07 23:50:27 TP0] Load weight begin. avail mem=22.46 GB\n"
            "2025-03-07 23:50:28,550 - __main__ - WARNING - Attempt 14: Please wait for sglang server to become ready...\n")
    retrieval = assistant.retrieve(text.splitlines())
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "multinode-init-hang-socket-ifname")


def test_a_timestamp_with_a_utc_offset_is_a_log_prefix():
    from assistant.trace import analyze_lines

    analysis = analyze_lines([
        "2026-06-17 16:49:19.449931+08:00 - gpustack.worker.backends.sglang - INFO - Starting SGLang model instance",
        "2026-06-17 16:49:28.846297+08:00 - gpustack.worker.backends.sglang - INFO - Creating SGLang container workload"])
    assert analysis.log_lines == 2


def test_an_error_quoted_in_a_debug_line_is_not_the_failure(assistant):
    # the wrapper logged at DEBUG that it handled the error and fell back; the crash is elsewhere
    text = ("Failed to deploy qwen-3.5 on RTX 5090\n"
            "2026-03-04 10:31:39.450688+08:00 - gpustack.worker.backends.base - DEBUG - Failed to get pretrained "
            "config via AutoConfig, falling back to local config.json. Error: The checkpoint you are trying to load "
            "has model type `qwen3_5` but Transformers does not recognize this architecture.\n"
            "[2026-03-04 10:31:59] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 3130, in run_scheduler_process\n')
    retrieval = assistant.retrieve(text.splitlines())
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "transformers-unknown-model-type")
    shown = assistant.retrieve(text.replace(" - DEBUG - ", " - ERROR - ").splitlines())
    assert shown.hits[0].unit_id == "transformers-unknown-model-type"


def test_a_paste_of_only_debug_lines_is_read_not_called_empty(assistant):
    # the user asks what a DEBUG line means: with nothing else pasted, that line is the question
    from assistant.trace import analyze_lines

    line = ("[2026-02-01 10:00:00 TP0] DEBUG FlashInfer workspace size check failed: MNNVLAllReduceFusionWorkspace."
            "is_buffer_size_sufficient() got an unexpected keyword argument 'use_oneshot'")
    assert analyze_lines([line]).masked_lines
    retrieval = assistant.retrieve([line])
    assert retrieval.hits[0].unit_id == "flashinfer-mnnvl-workspace-size-check-use-oneshot"
    assert retrieval.outcome == "lead"   # a diagnosis entry: the real failure is elsewhere
    # beside another line, the DEBUG line is still left out
    assert analyze_lines(["RuntimeError: boom", line]).masked_lines == ("RuntimeError: boom",)


def test_a_flag_named_in_the_entry_ties_a_generic_line_to_it(assistant):
    # `invalid device ordinal` alone is any wrong GPU index; the multi-node flags say which case
    alone = assistant.retrieve(["RuntimeError: CUDA error: invalid device ordinal"])
    assert not (alone.outcome == "fix" and alone.hits[0].unit_id == "invalid-device-ordinal-gpus-per-node")
    launch = "python3 -m sglang.launch_server --model-path /model --tp 16 --dist-init-addr 10.0.0.1:20000 --nnodes 2 --node-rank 0"
    tied = assistant.retrieve([launch, "RuntimeError: CUDA error: invalid device ordinal"])
    assert tied.outcome == "fix" and tied.hits[tied.decision.top].unit_id == "invalid-device-ordinal-gpus-per-node"


def test_a_wrappers_own_check_is_a_fix_and_its_relay_a_lead(assistant):
    # xinference rejecting the model is the failure itself; "Initialization failed" only relays one
    own = assistant.retrieve(["xinference.core.worker: Model qwen3.5 cannot be run on engine SGLang."])
    assert own.outcome == "fix" and own.hits[own.decision.top].unit_id == "xinference-model-not-accepted-by-sglang-engine"
    relay = ["[address=0.0.0.0:37905, pid=4194] RuntimeError: Initialization failed. Please see the error messages above."]
    relayed = assistant.retrieve(relay)
    assert relayed.outcome == "lead" and relayed.hits[0].unit_id == "wrapper-hides-sglang-error"
    behind = assistant.retrieve([*relay, "fatal error: cuda_fp8.h: No such file or directory"])
    assert behind.outcome == "fix" and behind.hits[behind.decision.top].unit_id == "flashinfer-jit-missing-cuda-fp8-h"


@pytest.mark.parametrize("lines", [
    # GCC, glibc and bash in a zh_CN locale, then zh_TW
    ["/usr/local/lib/python3.10/dist-packages/flashinfer/data/include/flashinfer/utils.cuh:21:10: "
     "致命错误：cuda_fp8.h：没有那个文件或目录", "编译中断。"],
    ["/usr/local/lib/python3.10/dist-packages/flashinfer/data/include/flashinfer/utils.cuh:21:10: "
     "嚴重錯誤：cuda_fp8.h：沒有此一檔案或目錄", "編譯終止。"],
])
def test_a_compilers_error_in_a_chinese_locale_is_matched_and_shown_as_pasted(assistant, lines):
    result = assistant.retrieve(lines)
    top = result.hits[result.decision.top]
    assert result.outcome == "fix" and top.unit_id == "flashinfer-jit-missing-cuda-fp8-h"
    assert top.evidence[0] == lines[0]   # the user's own line, not its translation
    assert result.analysis.errors[0].kind == "fatal"   # a log line, not the user's Chinese prose


def test_system_messages_read_in_the_c_locale():
    from assistant.system_messages import in_c_locale

    assert in_c_locale("ImportError: libcuda.so.1: 无法打开共享对象文件: 没有那个文件或目录") == \
        "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory"
    assert in_c_locale("./start.sh: 第 19 行： 867080 已杀死") == "./start.sh: line 19:  867080 Killed"
    assert in_c_locale("段错误 (核心已转储)") == "Segmentation fault (core dumped)"
    assert in_c_locale("collect2: 错误：ld 返回 1") == "collect2: error: ld returned 1 exit status"
    assert in_c_locale("/usr/bin/ld: 对‘cuInit’未定义的引用") == "/usr/bin/ld: undefined reference to `cuInit'"
    line = "Process 42 exited: Segmentation fault"
    assert in_c_locale(line) is line   # no Chinese character: the line itself


KV_ABORTED = """\
[2025-11-05 16:35:02] The server is fired up and ready to roll!
[2025-11-05 16:39:09 TP0] Decode transfer failed for request rank=0 decode_req.req.rid='78fde411' decode_req.req.bootstrap_room=4793981895866140836 with exception KVTransferError(bootstrap_room=4793981895866140836): Aborted by AbortReq.
"""
KV_RELAYED = KV_ABORTED.replace("Aborted by AbortReq.", "Failed to get kvcache from prefill instance, it might be dead")
# the same relay with the transfer engine's own RDMA error beside it
KV_NETWORK = KV_RELAYED + (
    "E1105 16:39:08.512331 4182 worker_pool.cpp:245] Worker: Process failed for slice (opcode: 0, "
    "source_addr: 0x7f2c40000000, length: 65536, dest_addr: 0x7f1a20000000, local_nic: mlx5_0, "
    "peer_nic: 10.0.0.9:15000@mlx5_0, dest_rkey: 1, retry_cnt: 0): local protection error\n")


def test_a_generic_exceptions_own_message_must_be_explained(assistant):
    """`KVTransferError(...)` is the kind of failure; what follows its colon is which one. An abort
    is not the RDMA network failure, though both raise KVTransferError in a PD log."""
    aborted = assistant.retrieve(KV_ABORTED.splitlines())
    assert aborted.outcome != "fix"
    # the lead either says the RDMA entry does not explain the abort, or is the PD triage entry
    # that says what an abort means
    shown = aborted.hits[aborted.decision.top]
    assert (any("Aborted by AbortReq" in r for r in aborted.decision.reasons)
            or "Aborted by AbortReq." in shown.meta.get("signatures", ()))
    network = assistant.retrieve(KV_NETWORK.splitlines())
    assert network.outcome == "fix"
    assert network.hits[network.decision.top].unit_id == "pd-kv-transfer-network"
    # the decode side's relay alone says the prefill failed, not why: where to look, not a fix
    relayed = assistant.retrieve(KV_RELAYED.splitlines())
    assert relayed.outcome != "fix"


CLIENT_REFUSED = """\
sglang.launch_server crashes intermittently under load (`Connection refused`)
Error: ('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))
Error: HTTPConnectionPool(host='10.0.0.8', port=30033): Max retries exceeded with url: /v1/chat/completions (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f607c17e250>: Failed to establish a new connection: [Errno 111] Connection refused'))
"""


def test_a_client_that_lost_the_server_gets_no_fix_from_an_entry_on_the_same_line(assistant):
    """The client's refusal relays a failure the paste does not show: an entry that matched only
    that same line (a PD bootstrap port, say) is not promoted over the diagnosis to a fix."""
    retrieval = assistant.retrieve(CLIENT_REFUSED.splitlines())
    assert retrieval.outcome != "fix"


BARE_REFUSAL = """\
requests.exceptions.ConnectionError: HTTPConnectionPool(host='10.0.0.12', port=30000): Max retries exceeded with url: /v1/chat/completions (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f2b1c3d9e50>: Failed to establish a new connection: [Errno 111] Connection refused'))
"""


def test_urllib3s_refusal_alone_is_no_pd_bootstrap_fix(assistant):
    """Any HTTP client that reaches no server prints urllib3's `Failed to establish a new
    connection: [Errno 111] Connection refused`; a PD bootstrap entry that lists the line is not
    the fix for a chat client's refusal."""
    retrieval = assistant.retrieve(BARE_REFUSAL.splitlines())
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "pd-bootstrap-port-mismatch"), \
        [h.unit_id for h in retrieval.hits[:3]]


SLOW_TOKENIZER_LLGUIDANCE = """\
[2025-06-01 10:00:09 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "{root}/srt/managers/scheduler.py", line 2010, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, pp_rank, dp_rank)
  File "{root}/srt/constrained/llguidance_backend.py", line 126, in __init__
    self.llguidance_tokenizer = llguidance.hf.from_tokenizer(self.tokenizer, None)
  File "/usr/local/lib/python3.10/dist-packages/llguidance/hf.py", line 30, in from_tokenizer
    raise ValueError("Only fast tokenizers are supported")
ValueError: Only fast tokenizers are supported
"""


def test_an_entry_about_sglang_jax_needs_a_paste_from_sglang_jax(assistant):
    """llguidance prints the same line under SGLang and SGLang-JAX; the SGLang-JAX entry (its
    builds, its fix) answers only a paste that shows SGLang-JAX, as an AMD entry needs AMD."""
    jax_id = "sglang-jax-llguidance-only-fast-tokenizers"
    cuda = assistant.retrieve(SLOW_TOKENIZER_LLGUIDANCE.format(
        root="/usr/local/lib/python3.10/dist-packages/sglang").splitlines())
    assert not (cuda.outcome == "fix" and cuda.hits[0].unit_id == jax_id)
    jax = assistant.retrieve(SLOW_TOKENIZER_LLGUIDANCE.format(
        root="/home/user/sglang-jax/python/sgl_jax").splitlines())
    assert jax.outcome == "fix" and jax.hits[0].unit_id == jax_id, jax.decision.reasons


TORCH_OOM_WITH_PROCESS_LIST = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 1502, in forward_extend
    return self.model.forward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 150.00 MiB. GPU 0 has a total capacity of 23.52 GiB of which 125.38 MiB is free. Process 6397 has 386.00 MiB memory in use. Including non-PyTorch memory, this process has 22.98 GiB memory in use. Of the allocated memory 17.72 GiB is allocated by PyTorch, and 213.98 MiB is reserved by PyTorch but unallocated.
"""


def test_the_process_list_under_every_torch_oom_is_not_another_process_holding_the_gpu(assistant):
    """torch lists the GPU's processes under every OOM; that list alone does not make the
    'another process holds the GPU' entry the fix (here this process holds 23 of 23.5 GiB)."""
    retrieval = assistant.retrieve(TORCH_OOM_WITH_PROCESS_LIST.splitlines())
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "oom-gpu-held-by-other-process")


UNRELATED_INDEX_ERROR = """\
[Bug] IndexError: list index out of range
python3 -m sglang.launch_server --model-path lmms-lab/llava-onevision-qwen2-7b-ov --port=30000 --chat-template=chatml-llava
[17:39:10] server_args=ServerArgs(model_path='lmms-lab/llava-onevision-qwen2-7b-ov', tokenizer_path='lmms-lab/llava-onevision-qwen2-7b-ov', tokenizer_mode='auto', skip_tokenizer_init=False, load_format='auto', dtype='auto', kv_cache_dtype='auto', trust_remote_code=False, context_length=None, quantization=None, served_model_name='lmms-lab/llava-onevision-qwen2-7b-ov', chat_template='chatml-llava', is_embedding=False, host='127.0.0.1', port=30000)
"""


def test_a_paste_only_loosely_like_an_entry_is_unknown_not_a_lead(assistant):
    """A lead must be plausibly related: a bare IndexError from a LLaVA launch shares only a few
    words with any entry (the reranker entry's `input_type=list`), so it is unknown."""
    retrieval = assistant.retrieve(UNRELATED_INDEX_ERROR.splitlines())
    assert retrieval.outcome == "unknown", (retrieval.outcome, [h.unit_id for h in retrieval.hits[:2]])


SGL_JAX_OOM = """\
[2025-10-02 08:11:41] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/sgl_jax/srt/managers/scheduler.py", line 1609, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args)
  File "/opt/venv/lib/python3.12/site-packages/sgl_jax/srt/model_executor/model_runner.py", line 212, in init_memory_pool
    self.token_to_kv_pool = MHATokenToKVPool(
jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 1.50G. That was not possible. There are 1.20G free.
RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.
"""


def test_a_sglang_jax_trace_is_not_answered_with_a_cuda_runtime_fix(assistant):
    # SGLang-JAX (TPU) is another code base that prints some of SGLang's messages: its XLA
    # allocation failure is read as such (component `jax`) and answered with the SGLang-JAX
    # triage, not with the CUDA runtime's KV-cache fix that shares the last line
    assert "jax" in components_in('File "/opt/venv/lib/python3.12/site-packages/sgl_jax/srt/managers/scheduler.py"')
    retrieval = assistant.retrieve(SGL_JAX_OOM.splitlines())
    assert retrieval.outcome != "fix"
    assert "sglang-jax-tpu-failure-triage" in [hit.unit_id for hit in retrieval.hits[:3]]


SHAPE_THEN_KEYERROR = """\
[2025-03-02 10:01:11 TP0] Load weight begin. avail mem=77.51 GB
RuntimeError: The size of tensor a (256) must match the size of tensor b (2048) at non-singleton dimension 0
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/models/deepseek_v2.py", line 1380, in load_weights
    param = params_dict[name]
KeyError: 'model.layers.8.self_attn.kv_a_proj_with_mqa.weight'
"""


def test_a_torch_shape_check_printed_first_does_not_hide_the_error_an_entry_explains(assistant):
    # the shape mismatch is what any wrong size prints; the missing parameter names the checkpoint
    retrieval = assistant.retrieve(SHAPE_THEN_KEYERROR.splitlines())
    assert retrieval.hits[0].unit_id == "weight-loading-keyerror-param-mismatch"
    assert retrieval.outcome == "fix"


CAPTURE_WRAPPED = """\
[2025-09-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
Exception: Capture cuda graph failed: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
Possible solutions:
1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)
"""


def test_a_wrapper_header_ending_in_a_colon_must_explain_what_follows(assistant):
    """`Capture cuda graph failed:` ends in its own colon; what follows it is which failure. No
    memory fix for it: the lead says the entry does not explain that message."""
    wrapped = assistant.answer(CAPTURE_WRAPPED)
    assert wrapped.outcome == "lead" and not wrapped.fix
    # the reasons say the entry does not explain that message, or that none of its lines is there
    explained = any("Expected all tensors" in r and "explain" in r for r in wrapped.reasons)
    assert explained or "None of this entry's error lines occurs in your log." in wrapped.reasons


def test_the_checkpoint_named_on_an_error_line_is_not_where_it_failed():
    """`...-8B-AWQ` says what the model is; the failure is in the chat-template code the line names."""
    from assistant.decision import failing_components
    from assistant.trace import analyze

    told = ("TypeError: expected string or bytes-like object, got 'dict' in template_manager._detect_reasoning_pattern "
            "when loading solidrust/Hermes-3-Llama-3.1-8B-AWQ\n"
            "Other models (e.g. Qwen3-0.6B-AWQ) load fine.")
    assert "quantization" not in failing_components(analyze(told))
    raised = "ValueError: The input size is not aligned with the quantized weight shape. in awq.py"
    assert "quantization" in failing_components(analyze(raised))


@pytest.mark.parametrize("paste", ["ERROR: x", "sglang error", "RuntimeError: something failed"])
def test_a_paste_that_only_says_it_failed_is_pointed_at_no_entry(assistant, paste):
    assert assistant.retrieve([paste]).outcome == "unknown"


def test_one_telling_word_is_still_a_lead(assistant):
    killed = assistant.retrieve(["Killed"])
    assert killed.outcome == "lead" and killed.hits[0].unit_id == "host-oom-killed-during-load"


def test_the_piecewise_graphs_own_context_error_is_its_fix(assistant):
    pcg = ("[2026-06-10 13:08:34 TP7] Piecewise CUDA Graph failed with error: "
           "'TcPiecewiseForwardContext' object has no attribute 'num_tokens'\n"
           "AttributeError: 'TcPiecewiseForwardContext' object has no attribute 'num_tokens'")
    fixed = assistant.retrieve(pcg.splitlines())
    assert fixed.outcome == "fix" and fixed.hits[fixed.decision.top].unit_id == "piecewise-cuda-graph-failed"


DSA_INDEXER_IMA = """\
DeepSeek-V3.2 on 8x H200, sglang 0.5.9: long-context requests (about 100k tokens) crash the server
during prefill with an illegal memory access inside the DSA indexer (fp8_paged_mqa_logits in deep_gemm).
Short prompts work. torch.cuda.memory shows plenty of free memory when it happens.
"""


def test_failure_kinds_are_read_from_words_and_lines():
    from assistant.failure_kind import kind_conflict, kinds_in

    assert kinds_in("RuntimeError: CUDA error: an illegal memory access was encountered") == {"illegal memory access"}
    assert kinds_in("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB") == {"out of memory"}
    assert kinds_in("after the upgrade output throughput for long outputs dropped sharply") == {"slow"}
    assert kinds_in("the server hangs after the first request") == {"hang"}
    # a failure the user set something up to avoid is not the one they report
    assert kinds_in("to avoid OOM I lowered --mem-fraction-static, but now the output is gibberish") == {"wrong output"}
    assert kind_conflict(frozenset({"illegal memory access"}), frozenset({"out of memory"}))
    assert not kind_conflict(frozenset({"hang", "out of memory"}), frozenset({"out of memory"}))
    assert not kind_conflict(frozenset(), frozenset({"out of memory"}))


def test_a_report_of_another_kind_of_failure_is_not_the_entrys_fix(assistant):
    # same component, same kernel, same words as the indexer out-of-memory entry: a different failure
    retrieval = assistant.retrieve(DSA_INDEXER_IMA.splitlines())
    top = retrieval.hits[retrieval.decision.top].unit_id if retrieval.hits else None
    assert not (retrieval.outcome == "fix" and top == "dsa-indexer-mqa-logits-long-prefill-oom")
    if top == "dsa-indexer-mqa-logits-long-prefill-oom":
        assert any("different kind of failure" in r for r in retrieval.decision.reasons)


def test_a_launch_command_is_not_an_error_line(assistant):
    # `--disable-cuda-graph` holds every word of the hint SGLang prints under a capture failure
    paste = ["run eagle speculative decoding error!",
             "CUDA_VISIBLE_DEVICES=0,1,3,7 python -m sglang.launch_server --model /models/Meta-Llama-3.1-70B-Instruct "
             "--tp 4 --speculative-algo EAGLE --speculative-draft /models/EAGLE-LLaMA3-70B --mem-fraction 0.7 "
             "--disable-cuda-graph",
             "I got an error like this (screenshot), please help."]
    retrieval = assistant.retrieve(paste)
    assert all(h.signature < 0.6 for h in retrieval.hits if h.unit_id == "cuda-graph-capture-failed")
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "cuda-graph-capture-failed")


ROCM_LIBCUDA = """\
MI300X host, ROCm 6.3, rocm-smi shows all 8 GPUs.
$ python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct
[2025-11-03 10:12:01] WARNING HIPAllocatorConfig.h:29: expandable_segments not supported on this platform
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sgl_kernel/__init__.py", line 5, in <module>
    from sgl_kernel import common_ops
ImportError: libcuda.so.1: cannot open shared object file: No such file or directory
"""


def test_an_entry_about_the_users_hardware_ranks_before_one_about_other_hardware(assistant):
    # the NVIDIA-only missing-libcuda entry shares the error line; the user is on AMD
    retrieval = assistant.retrieve(ROCM_LIBCUDA.splitlines())
    ranked = [h.unit_id for h in retrieval.hits]
    assert "rocm-cuda-build-of-sglang-installed" in ranked
    if "libcuda-so-not-found" in ranked:
        assert ranked.index("rocm-cuda-build-of-sglang-installed") < ranked.index("libcuda-so-not-found")
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "libcuda-so-not-found")


def test_a_report_in_prose_that_only_shares_an_entrys_topic_is_a_lead(assistant):
    # no error line: the words are about prompts near the context length, like the entry for the
    # request SGLang rejects, but the failure told is a crash, which that entry's steps do not fix
    text = ("Qwen3-Coder-480B crashes when the prompt is close to the context length (about 255k tokens "
            "of 262k): the server dies instead of rejecting the request. SGLang 0.5.5, TP8.")
    retrieval = assistant.retrieve([text])
    assert retrieval.outcome == "lead", (retrieval.outcome, [h.unit_id for h in retrieval.hits[:2]])
    assert retrieval.hits[retrieval.decision.top].unit_id == "context-length-exceeded"


def test_a_step_of_the_users_reproduction_is_not_an_error_line(assistant):
    # "3. crash" is the user's list, not a line a program printed: it is no root error that the
    # entry about the words must explain
    paste = ["sglang serve says --model-path is required although my config file sets it",
             "I keep the server settings in a YAML file with `model-path: Qwen/Qwen3-8B` in it.",
             "Steps:", "1. write server.yaml with model-path", "2. run `sglang serve --config server.yaml`",
             "3. crash",
             "The same file works with `python3 -m sglang.launch_server --config server.yaml`."]
    retrieval = assistant.retrieve(paste)
    assert retrieval.hits[0].unit_id == "sglang-serve-config-file-needs-model-path"
    assert retrieval.outcome == "fix", retrieval.decision.reasons


def test_flags_in_a_launch_command_are_not_the_words_of_an_error_line(assistant):
    # the capture-failure entry's lines name `--enable-torch-compile`; a user who set that flag
    # and reports a tool-call problem has not printed that error
    paste = ["Tool calls break on the second turn with Kimi-K2: the model's tool call comes back as plain "
             "text after a tool result is sent.",
             "python3 -m sglang.launch_server --model-path moonshotai/Kimi-K2-Instruct --tp 16 --nnodes 2 "
             "--node-rank 0 --trust-remote-code --enable-torch-compile --mem-fraction-static 0.9 "
             "--tool-call-parser kimi_k2"]
    retrieval = assistant.retrieve(paste)
    assert all(h.signature == 0 for h in retrieval.hits if h.unit_id == "cuda-graph-capture-failed")
    assert retrieval.hits[0].unit_id.startswith("kimi-k2") or "tool-call" in retrieval.hits[0].unit_id


def test_the_host_platform_is_read_from_paths_and_wheel_tags():
    from assistant.host_platform import platforms_in
    assert platforms_in(r'File "C:\Users\me\venv\Lib\site-packages\sglang\launch_server.py"') == {"windows"}
    assert platforms_in("aiohttp-3.11.18-cp313-cp313-win_amd64.whl") == {"windows"}
    assert platforms_in("sgl_kernel-0.3.5-cp39-abi3-macosx_15_0_arm64.whl") == {"macos"}
    assert platforms_in("/Users/me/miniconda3/lib/python3.11/site-packages/sglang/srt/utils.py") == {"macos"}
    assert platforms_in("GH200 480GB, Linux 6.8 aarch64") == {"aarch64"}
    # WSL is Linux, and a Linux x86 log shows no platform at all
    assert platforms_in("Ubuntu 22.04 under Windows Subsystem for Linux") == frozenset()
    assert platforms_in("/usr/local/lib/python3.10/dist-packages/sglang/srt/server_args.py") == frozenset()
    # SGLang run inside WSL2 is on Linux, even when the user names Windows as the host; a Windows
    # shell prompt still shows native Windows, and so does a user who says they do not use WSL
    assert platforms_in("Running SGLang inside WSL2 on Windows 11, RTX 4090") == frozenset()
    assert platforms_in("WSL2 Ubuntu 22.04 on Windows 11") == frozenset()
    assert platforms_in("Windows 11, not using WSL: pip install sglang fails") == {"windows"}
    assert platforms_in("installing with WSL on Windows 11\n(venv) C:\\work\\ocr>pip install sgl-kernel") == {"windows"}


WINDOWS_PROSE = """\
Trouble installing
pip install sgl-kernel --force-reinstall --no-deps
(I also tried building it from the sgl-kernel folder with pip install .)
sgl-kernel never gets installed.
Microsoft Windows 11 Pro 10.0.22631
CUDA 12.8, PyTorch 2.6.0+cu126
"""


def test_installing_sglang_on_native_windows_gets_the_windows_fix(assistant):
    # no error line at all: the other entries share the pip words, the host is what explains it
    retrieval = assistant.retrieve(WINDOWS_PROSE.splitlines())
    assert retrieval.outcome == "fix"
    assert retrieval.hits[0].unit_id == "windows-native-unsupported"
    # the same report from inside WSL2 is a Linux install: no Windows fix for it
    in_wsl = WINDOWS_PROSE.replace("Microsoft Windows 11 Pro 10.0.22631", "inside WSL2 on Windows 11")
    retrieval = assistant.retrieve(in_wsl.splitlines())
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "windows-native-unsupported")


MAC_PIP = """\
pip install "sglang[all]" on my MacBook Pro (M3), Python 3.11 from Homebrew
Collecting sglang[all]
  Using cached sglang-0.5.3-py3-none-any.whl.metadata (24 kB)
ERROR: Could not find a version that satisfies the requirement sgl-kernel==0.3.13 (from sglang[all]) (from versions: none)
ERROR: No matching distribution found for sgl-kernel==0.3.13
"""


def test_an_entry_about_another_operating_system_is_not_the_fix(assistant):
    # the same pip line as on Windows and on ARM servers; the paste is from a Mac
    retrieval = assistant.retrieve(MAC_PIP.splitlines())
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id in
                ("windows-native-unsupported", "aarch64-gh200-install"))
    ranked = [h.unit_id for h in retrieval.hits]
    assert "macos-apple-silicon-install-mlx" in ranked
    for other in ("windows-native-unsupported", "aarch64-gh200-install"):
        if other in ranked:
            assert ranked.index("macos-apple-silicon-install-mlx") < ranked.index(other)


def test_an_error_the_server_returned_as_json_is_answered_like_a_logged_one(assistant):
    paste = [
        "$ curl -s http://127.0.0.1:30000/v1/chat/completions -d '{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}'",
        '{"object":"error","message":"The engine initialized with skip_tokenizer_init=True cannot accept text prompts. '
        'Please provide input_ids or re-initialize the engine with skip_tokenizer_init=False.","type":"BadRequestError",'
        '"param":null,"code":400}',
        '[2026-03-02 10:11:12] INFO:     127.0.0.1:40112 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request',
    ]
    retrieval = assistant.retrieve(paste)
    assert retrieval.outcome == "fix" and retrieval.hits[0].unit_id == "skip-tokenizer-init-text-and-openai-api"


def test_an_entry_about_a_2024_release_needs_the_paste_to_show_that_release(assistant):
    # flashinfer 0.0.3 broke sampling under SGLang 0.1.x; today the same line has other causes
    error = "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0"
    unshown = assistant.retrieve(["Qwen3 NEXTN on two nodes, after a few hundred requests:", error])
    assert not (unshown.outcome == "fix" and unshown.hits[0].unit_id == "flashinfer-0.0.3-sampling-nan")
    shown = assistant.retrieve(["sglang 0.1.14", "flashinfer 0.0.3", error])
    assert shown.outcome == "fix" and shown.hits[0].unit_id == "flashinfer-0.0.3-sampling-nan"


@pytest.mark.parametrize("prefix", ["Sep 02 15:32:20 gpu-node-7 python3[912967]: ", "sglang-1  | ",
                                    "2025-09-02T15:32:20.123456789Z ", "[rank0]: "])
@pytest.mark.parametrize("error", ["RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
                                   "RuntimeError: The size of tensor a (4) must match the size of tensor b (8) "
                                   "at non-singleton dimension 0"])
def test_a_log_from_journald_compose_kubectl_or_torchrun_gets_the_plain_logs_answer(assistant, prefix, error):
    from assistant.trace import analyze_lines

    log = ["[2025-09-02 15:32:20 TP0] Scheduler hit an exception: Traceback (most recent call last):",
           '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2414, '
           'in run_scheduler_process',
           '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 300, '
           'in init_memory_pool',
           "    raise RuntimeError(message)",
           error]

    def shown(lines):
        answer = assistant.answer(analyze_lines(lines))
        return (answer.outcome, answer.matches[0].id if answer.matches else None, answer.primary_error,
                answer.failing_module, answer.detected.sglang_releases)

    plain = shown(log)
    assert plain[2] == error and plain[4]   # the releases that have these frames
    assert shown([prefix + line for line in log]) == plain


@pytest.mark.parametrize("killed", [
    "Killed",
    "[1]+  Killed                  python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8",
])
def test_a_job_the_shell_reports_killed_while_loading_points_at_host_memory(assistant, killed):
    # bash's `Killed` is SIGKILL from outside: during weight loading, most often the OOM killer;
    # it can also be SGLang's own teardown, so it is a lead to confirm, not the fix
    paste = ["Loading safetensors checkpoint shards:  45% Completed | 18/40 [01:02<01:17,  3.52s/it]", killed]
    retrieval = assistant.retrieve(paste)
    assert retrieval.hits[0].unit_id == "host-oom-killed-during-load"
    assert retrieval.outcome == "lead"


QUOTED_IN_A_SENTENCE = """\
The latest docker image fails with `Failed to find C compiler` error, I am assuming due to the switch from devel to runtime images.
[2025-03-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1800, in run_scheduler_process
    scheduler.event_loop_overlap()
"""


def test_a_line_quoted_above_a_traceback_cut_before_its_error_is_not_denied(assistant):
    # the user quotes the entry's line in a sentence above a traceback cut before its exception:
    # with no line the program printed saying what failed, their words tell the error the traceback
    # was cut from (round 48: judged as a report in words). Here the words stay below the bar, so a
    # lead that says its lines match in part, neither "not in your log" nor "not the error that
    # stopped it"
    retrieval = assistant.retrieve(QUOTED_IN_A_SENTENCE.splitlines())
    assert retrieval.hits[0].unit_id == "triton-launcher-build-failed" and retrieval.outcome == "lead"
    reasons = " ".join(retrieval.decision.reasons)
    assert "match your paste only in part" in reasons
    assert "None of this entry's error lines occurs" not in reasons and "not the error that stopped it" not in reasons


DUPLICATE_GPU = """\
sgl.Engine(tp_size=2) inside a Ray actor in our rollout code; NCCL init fails:
[2025-11-02 13:00:05 TP1] Init torch distributed begin.
gpu-host-3:88211:88640 [1] init.cc:1012 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1b000
[2025-11-02 13:00:06 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 402, in NCCL_CHECK
    raise RuntimeError(f"NCCL error: {error_str}")
RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)
"""


def test_a_line_every_launch_prints_is_no_fix_beside_a_specific_line_of_the_same_library(assistant):
    # the multi-node interface entry matched `Init torch distributed begin.` and is about NCCL, but
    # NCCL's own warning says which failure it was (two ranks on one GPU), and the entry does not
    # explain it: no fix, and no lead that points at the network
    retrieval = assistant.retrieve(DUPLICATE_GPU.splitlines())
    assert not (retrieval.outcome == "fix" and retrieval.hits[0].unit_id.startswith("multinode"))
    assert not (retrieval.outcome == "lead" and retrieval.hits[0].unit_id == "multinode-init-hang-socket-ifname")


AMD_SHARED_MEMORY = """\
MI300X x8, rocm/sgl-dev image, DeepSeek-V3 tp 8; the first long request kills the server:
[2025-11-02 10:00:01] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=8, device='cuda', attention_backend='triton')
[2025-11-02 10:05:12 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/layers/attention/triton_ops/extend_attention.py", line 512, in extend_attention_fwd
  File "/usr/local/lib/python3.12/dist-packages/triton/compiler/compiler.py", line 412, in _init_handles
    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")
triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 81920, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.
"""


def test_cuda_words_in_a_rocm_log_are_no_sign_of_nvidia(assistant):
    # ROCm builds of torch call the device 'cuda': the NVIDIA entry about the same Triton line does
    # not fit an MI300X, the ROCm one does
    retrieval = assistant.retrieve(AMD_SHARED_MEMORY.splitlines())
    assert retrieval.hits[0].unit_id == "rocm-triton-shared-memory-64kb-lds"


def test_a_flag_the_report_quotes_is_not_where_its_error_arises():
    from assistant.decision import failing_components
    from assistant.trace import analyze

    analysis = analyze(
        "DeepSeek-V4 with --tp 8 --enable-dp-attention --moe-a2a-backend deepep and DeepGEMM 2.4.2 "
        "installed: the scheduler crashes during the DeepGEMM JIT warmup with\n"
        "TypeError: m_grouped_fp8_fp4_gemm_nt_contiguous(): incompatible function arguments.")
    assert "deepep" not in failing_components(analysis)
