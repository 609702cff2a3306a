"""Pastes a new operator tried (round 28's trial): what each must and must not be answered with.

Each paste is written the way operators paste: a line of their own, a partial log, the traceback.
The assertions are about the outcome and the entry the user is shown, the two things an operator
acts on."""

from __future__ import annotations

import pytest
from pathlib import Path

from assistant.trace import analyze

pytestmark = pytest.mark.slow

OOM_THROUGH_LM_HEAD = """\
[2025-11-03 14:20:07 TP0] Decode batch. #running-req: 212, #token: 481233, token usage: 0.97, cuda graph: True
[2025-11-03 14:20:09 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2640, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 1890, in forward_extend
    return self.model.forward(
  File "/sgl-workspace/sglang/python/sglang/srt/models/llama.py", line 470, in forward
    return self.logits_processor(
  File "/sgl-workspace/sglang/python/sglang/srt/layers/logits_processor.py", line 330, in forward
    logits = self._get_logits(pruned_states, lm_head, logits_metadata)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.93 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but unallocated.
"""

OTHER_JOB_AT_LOAD = """\
[2025-10-01 11:40:02 TP0] Load weight begin. avail mem=6.91 GB
Traceback (most recent call last):
  File "/usr/local/lib/python3.11/site-packages/sglang/srt/model_loader/loader.py", line 380, in load_model
    model = _initialize_model(model_config, self.load_config)
  File "/usr/local/lib/python3.11/site-packages/sglang/srt/layers/linear.py", line 220, in create_weights
    weight = Parameter(torch.empty(sum(output_partition_sizes), input_size_per_partition, dtype=params_dtype))
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1002.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which 6.91 GiB is free. Process 1234 has 72.25 GiB memory in use. Including non-PyTorch memory, this process has 0 bytes memory in use. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.
"""

CTRL_C_ON_STARTUP_HANG = """\
server hangs forever at startup after "Init torch distributed begin", no error. after 20 minutes i hit ctrl-c:
[2025-09-20 14:02:19 TP0] Init torch distributed begin.
[2025-09-20 14:02:20 TP0] sglang is using nccl==2.27.3
^CTraceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/entrypoints/engine.py", line 862, in _launch_subprocesses
    data = scheduler_pipe_readers[i].recv()
  File "/usr/lib/python3.12/multiprocessing/connection.py", line 395, in _recv
    chunk = read(handle, remaining)
KeyboardInterrupt
[2025-09-20 14:23:57] Received sigquit from a child process. It usually means the child failed.
"""

RANK_KILLED_WHILE_LOADING = """\
[2025-10-01 11:40:02 TP0] Load weight begin. avail mem=78.53 GB
Loading pt checkpoint shards:  40% Completed | 12/30 [03:12<04:48, 16.02s/it]
[2025-10-01 11:43:20] Rank 0 scheduler is dead. Please check if there are relevant logs.
[2025-10-01 11:43:21] Exit code: -9
Traceback (most recent call last):
  File "/usr/local/lib/python3.11/site-packages/sglang/srt/entrypoints/engine.py", line 862, in _launch_subprocesses
    data = scheduler_pipe_readers[i].recv()
  File "/usr/lib/python3.11/multiprocessing/connection.py", line 399, in _recv
    raise EOFError
EOFError
"""

CANCELLED_REQUEST = """\
getting 500s on some requests under load, server keeps running:
[2025-11-02 10:11:12] ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/tokenizer_manager.py", line 1441, in _wait_one_response
    await asyncio.wait_for(state.event.wait(), timeout=4)
  File "/usr/lib/python3.10/asyncio/tasks.py", line 445, in wait_for
    return fut.result()
asyncio.exceptions.CancelledError
"""


HIP_CAPTURE_OOM = """\
MI300X, rocm/sgl-dev:v0.4.9.post2-rocm630-mi30x, Llama-3.1-405B-FP8 tp8:
[2025-07-11 02:10:55 TP3] Capture cuda graph begin. This can take up to several minutes. avail mem=3.12 GB
[2025-07-11 02:10:57 TP3] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 333, in __init__
    self.capture()
torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.53 GiB. GPU 3 has a total capacity of 191.98 GiB of which 1.12 GiB is free. Of the allocated memory 184.10 GiB is allocated by PyTorch, with 2.41 GiB allocated in private pools (e.g., HIP Graphs), and 1.20 GiB is reserved by PyTorch but unallocated.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 335, in __init__
    raise Exception(
Exception: Capture cuda graph failed: HIP out of memory. Tried to allocate 1.53 GiB. GPU 3 has a total capacity of 191.98 GiB of which 1.12 GiB is free.
Possible solutions:
1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)
2. set --cuda-graph-max-bs to a smaller value (e.g., 16)
"""

HIP_OOM_IN_CUSTOM_ALLREDUCE = """\
MI250X x4 (gfx90a), building from source, rocm 6.2
[2025-08-20 06:00:10 TP2] Init torch distributed begin.
[2025-08-20 06:00:14 TP2] Scheduler hit an exception: Traceback (most recent call last):
  File "/work/sglang/python/sglang/srt/distributed/parallel_state.py", line 1190, in initialize_model_parallel
    _TP = init_model_parallel_group(
  File "/work/sglang/python/sglang/srt/distributed/device_communicators/custom_all_reduce.py", line 270, in __init__
    self.meta = ops.allocate_meta_buffer(ops.meta_size() + max_size)
RuntimeError: HIP error: out of memory
"""

ZH_SHELL_KILLED = """\
加载 qwen3-235b 的时候进程直接没了，没有任何报错，这是什么原因？
[2025-07-01 13:20:41 TP6] Load weight begin. avail mem=94.21 GB
Loading safetensors checkpoint shards:  12% Completed | 14/118 [00:48<05:59,  3.46s/it]
./start.sh: 第 12 行： 2918331 已杀死               python3 -m sglang.launch_server --model-path /data/models/Qwen3-235B-A22B --tp 8
"""


FLASHINFER_BUILD_NO_NVCC = """\
flashinfer JIT fails at startup, nvcc not found. Do I need the CUDA toolkit?
[2025-08-01 10:11:12 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=10.21 GB
ninja: build stopped: subcommand failed.
RuntimeError: Ninja build failed. Ninja output:
[1/3] /usr/local/cuda/bin/nvcc --generate-dependencies-with-compile --dependency-output batch_prefill.cuda.o.d -gencode=arch=compute_90a,code=sm_90a -c /root/.cache/flashinfer/generated/batch_prefill_with_kv_cache_dtype_q_bf16/batch_prefill.cu -o batch_prefill.cuda.o
FAILED: batch_prefill.cuda.o
/bin/sh: 1: /usr/local/cuda/bin/nvcc: not found
"""


def test_an_oom_passing_through_the_lm_head_is_not_the_lm_head_crash(assistant):
    """Matching a traceback frame says where the error passed, not what it was: an entry whose
    only match is `logits_processor.py ... in forward` cannot be the fix for an OOM."""
    answer = assistant.answer(OOM_THROUGH_LM_HEAD)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "eagle3-spec-v2-logprobs-crash")


def test_another_job_holding_the_gpu_gets_the_other_process_fix_even_at_load(assistant):
    answer = assistant.answer(OTHER_JOB_AT_LOAD)
    assert (answer.outcome, answer.matches[0].id) == ("fix", "oom-gpu-held-by-other-process")
    assert answer.gpu_memory.holder() == "other-processes"


def test_sglang_filling_the_gpu_is_not_blamed_on_another_process(assistant):
    answer = assistant.answer(OOM_THROUGH_LM_HEAD)
    assert answer.matches[0].id != "oom-gpu-held-by-other-process"
    assert answer.gpu_memory.holder() == "this-process"


def test_what_a_ctrl_c_prints_is_not_the_failure(assistant):
    """"Received sigquit" after the user's KeyboardInterrupt is the interrupt's doing: no fix for a
    watchdog timeout, which cannot fire during startup."""
    analysis = analyze(CTRL_C_ON_STARTUP_HANG)
    sigquit = next(e for e in analysis.errors if "sigquit" in e.text)
    assert sigquit.survived
    answer = assistant.answer(CTRL_C_ON_STARTUP_HANG)
    assert answer.outcome != "fix"


def test_a_bare_eoferror_after_rank_dead_exit_9_is_the_host_memory_kill(assistant):
    """A bare `EOFError` says only that the pipe to the dead scheduler closed; SGLang's own lines
    before it say why."""
    answer = assistant.answer(RANK_KILLED_WHILE_LOADING)
    assert (answer.outcome, answer.matches[0].id) == ("fix", "host-oom-killed-during-load")


def test_source_code_under_a_frame_is_not_an_error_line():
    """`await asyncio.wait_for(..., timeout=4)` is the frame's source, not a timeout message."""
    analysis = analyze(CANCELLED_REQUEST)
    assert not any("wait_for(" in e.text for e in analysis.errors)


def test_a_cancelled_request_is_not_pinned_on_an_entry_by_one_frame(assistant):
    answer = assistant.answer(CANCELLED_REQUEST)
    assert answer.outcome != "fix"


def test_a_hip_out_of_memory_is_the_same_generic_line_as_cuda_s(assistant):
    """torch on ROCm says `HIP out of memory`: the capture-failure entry is the fix, as for CUDA."""
    answer = assistant.answer(HIP_CAPTURE_OOM)
    assert (answer.outcome, answer.matches[0].id) == ("fix", "cuda-graph-capture-failed")


def test_a_lead_its_own_reasons_contradict_is_not_offered(assistant):
    """A HIP OOM in the custom all-reduce matched only a generic progress line of a multi-node
    hang entry: another kind of failure in another component is no lead, it is unknown."""
    answer = assistant.answer(HIP_OOM_IN_CUSTOM_ALLREDUCE)
    assert answer.outcome == "unknown"


def test_a_zh_cn_shell_kill_report_is_read_as_the_kill():
    analysis = analyze(ZH_SHELL_KILLED)
    assert any(e.text.endswith("Killed") for e in analysis.errors)
    assert analysis.environment.launch_command.startswith("python3 -m sglang.launch_server")


def test_fix_steps_outside_the_releases_the_traceback_dates_are_left_out(assistant):
    """No version line, but the traceback's files exist only in some releases: a step for
    releases outside them is not shown."""
    assert assistant.answer(HIP_CAPTURE_OOM).detected.sglang_version == "0.4.9.post2"   # AMD's image tag
    answer = assistant.answer(HIP_CAPTURE_OOM.split("\n", 1)[1])
    assert answer.detected.sglang_releases == "0.5.13 or earlier"
    assert any(step.startswith("[SGLang <0.5.14]") for step in answer.fix)
    assert not any(step.startswith("[SGLang >=0.5.14]") for step in answer.fix)


def test_where_it_arises_comes_from_the_crash_not_from_a_request_error_it_survived():
    served = "".join(f"[2025-09-14 08:06:{i % 60:02d} TP0] Decode batch. #running-req: 3, #token: 900, "
                     "token usage: 0.01, gen throughput (token/s): 90.0\n" for i in range(30))
    log = ("[2025-09-14 08:05:12] ERROR:    Exception in ASGI application\n"
           "Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_manager.py", line 1441, in _wait_one_response\n'
           "    await asyncio.wait_for(state.event.wait(), timeout=4)\n"
           "asyncio.exceptions.CancelledError\n" + served +
           "[2025-09-14 08:11:20 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler_output_processor_mixin.py", line 300, in process_batch_result_decode\n'
           "    next_token_ids = next_token_ids.tolist()\n"
           "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n")
    analysis = analyze(log)
    assert analysis.frame_files[-1].endswith("scheduler_output_processor_mixin.py")
    assert not any("tokenizer_manager" in f for f in analysis.frame_files)


def test_a_failed_build_fails_in_the_library_whose_source_it_compiles(assistant):
    """The compile command names flashinfer's generated source: the answer is not SGLang's own
    tvm-ffi JIT kernels, which share the `nvcc: not found` line."""
    from assistant.decision import failing_components

    assert "flashinfer" in failing_components(analyze(FLASHINFER_BUILD_NO_NVCC))
    answer = assistant.answer(FLASHINFER_BUILD_NO_NVCC)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "sglang-jit-kernel-tvm-ffi-build-failed")


# ---- round 28's second trial: installs, the API, relayed errors ----

OOM_AT_SET_DEVICE = """\
upgraded to 0.5.23 and now it dies at startup:
[2026-11-30 07:01:40 TP3] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py", line 790, in init_torch_distributed
    torch.get_device_module(self.device).set_device(self.gpu_id)
  File "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py", line 567, in set_device
    torch._C._cuda_setDevice(device)
torch.AcceleratorError: CUDA error: out of memory
"""

CONTEXT_LENGTH_VIA_OPENAI = """\
Traceback (most recent call last):
  File "/app/.venv/lib/python3.11/site-packages/openai/_base_client.py", line 1047, in request
    raise self._make_status_error_from_response(err.response) from None
openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': "Requested token count exceeds the model's maximum context length of 32768 tokens. You requested a total of 36864 tokens: 28672 tokens from the input messages and 8192 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.", 'type': 'BadRequestError', 'param': None, 'code': 400}
"""

ONE_LINE_REQUEST_ERROR = """\
custom template for tool calls, sglang 0.5.6:
request fails:
[2025-11-13 03:12:44] Error in request: Conversation roles must alternate user/assistant/user/assistant/...
[2025-11-13 03:12:44] INFO:     172.17.0.1:51066 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error
"""


def test_a_source_line_under_a_frame_is_where_not_what(assistant):
    """`torch._C._cuda_setDevice(device)` is code an OOM passed through: it does not make the
    OOM the 'invalid device ordinal' entry's problem."""
    analysis = analyze(OOM_AT_SET_DEVICE)
    assert analysis.environment.sglang_version == "0.5.23"          # "upgraded to 0.5.23"
    answer = assistant.answer(OOM_AT_SET_DEVICE)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "invalid-device-ordinal-gpus-per-node")


def test_rank_dead_alone_is_no_host_memory_fix_but_with_exit_code_9_it_is(assistant):
    dead = ("[2025-10-01 11:43:20] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"
            "RuntimeError: Rank 0 scheduler is dead. Please check if there are relevant logs.\n")
    assert assistant.answer(dead).outcome != "fix"
    assert assistant.answer(RANK_KILLED_WHILE_LOADING).matches[0].id == "host-oom-killed-during-load"


def test_an_sglang_message_a_client_relays_is_still_sglangs(assistant):
    answer = assistant.answer(CONTEXT_LENGTH_VIA_OPENAI)
    assert answer.origin is not None and answer.origin.is_sglang
    assert answer.origin.function.endswith("_validate_one_request")


def test_a_ray_task_error_is_not_where_the_error_arose():
    from assistant.decision import failing_components

    relayed = ("(RolloutRayActor pid=9140)   File \"/sgl-workspace/sglang/python/sglang/srt/models/qwen3_moe.py\", line 871, in load_weights\n"
               "(RolloutRayActor pid=9140) KeyError: 'model.layers.0.mlp.experts.w13_weight_scale_inv'\n"
               "ray.exceptions.RayTaskError(KeyError): ray::MegatronTrainRayActor.update_weights() (pid=8823, ip=10.1.0.3)\n")
    assert "ray" not in failing_components(analyze(relayed))


def test_sglangs_one_line_request_error_is_the_error_not_the_users_words(assistant):
    analysis = analyze(ONE_LINE_REQUEST_ERROR)
    assert not any(e.text == "request fails:" for e in analysis.errors)
    answer = assistant.answer(ONE_LINE_REQUEST_ERROR)
    assert (answer.outcome, answer.matches[0].id) == ("fix", "chat-template-missing-or-not-found")


def test_a_generated_code_frame_names_no_module():
    trace = ("Traceback (most recent call last):\n"
             '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/server_args.py", line 331, in __post_init__\n'
             "    self._handle_data_parallelism()\n"
             '  File "<string>", line 331, in __init__\n'
             "AssertionError: Please enable dp attention when setting enable_dp_lm_head.\n")
    assert not any(f.startswith("<") for f in analyze(trace).frame_files)


def test_a_missing_router_package_is_installed_apart(assistant):
    answer = assistant.answer("sglang 0.5.9 installed with pip install sglang\n"
                              "/usr/bin/python: Error while finding module specification for 'sglang_router.launch_server' "
                              "(ModuleNotFoundError: No module named 'sglang_router')")
    # the KB's entry for the separate router package, or the dependency registry without it
    assert (answer.outcome == "fix" and answer.matches[0].id == "sglang-router-package-not-installed"
            or answer.dependency is not None and answer.dependency.package == "sglang-router")
    assert "pip install sglang-router" in answer.text and 'pip install "sglang[all]"' not in answer.fix[0]


ROCM_TORCH_ON_NVIDIA = """\
I followed an AMD install guide by mistake on this box, now:
$ python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --tp 2
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py", line 372, in _lazy_init
    torch._C._cuda_init()
RuntimeError: No HIP GPUs are available
$ python -c 'import torch;print(torch.__version__, torch.version.hip)'
2.8.0+rocm6.4 6.4.43482
$ nvidia-smi -L
GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-5c1e0000)
GPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-a81f0000)
"""


def test_an_amd_fix_is_not_given_on_a_machine_whose_gpus_are_nvidia(assistant):
    answer = assistant.answer(ROCM_TORCH_ON_NVIDIA)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "rocm-no-hip-gpu-visible-container")
    on_amd = assistant.answer(ROCM_TORCH_ON_NVIDIA.replace("NVIDIA GeForce RTX 4090", "AMD Instinct MI300X")
                              .replace("nvidia-smi -L", "rocm-smi --showproductname"))
    assert on_amd.outcome == "fix" and on_amd.matches[0].id == "rocm-no-hip-gpu-visible-container"


SGL_KERNEL_BUILD_KILLED = """\
Building sgl-kernel from source for sm_120, 64 GB RAM box:
$ cd sgl-kernel && make build
FAILED: CMakeFiles/common_ops.dir/csrc/attention/cutlass_mla_kernel.cu.o
/usr/local/cuda/bin/nvcc -O3 -c /src/sgl-kernel/csrc/attention/cutlass_mla_kernel.cu -o CMakeFiles/common_ops.dir/csrc/attention/cutlass_mla_kernel.cu.o
nvcc error   : 'cicc' died due to signal 9 (Kill signal)
ninja: build stopped: subcommand failed.
*** CMake build failed
error: subprocess-exited-with-error
ERROR: Failed building wheel for sgl-kernel
Failed to build sgl-kernel
"""


def test_a_source_file_the_build_compiles_does_not_overrule_the_builds_own_failure(assistant):
    answer = assistant.answer(SGL_KERNEL_BUILD_KILLED)
    assert answer.outcome == "fix" and answer.matches[0].id == "sgl-kernel-source-build-failed"


CAPTURE_HINTS_ONLY = """\
Exception: Capture cuda graph failed: Triton Error [CUDA]: an illegal memory access was encountered
Possible solutions:
1. disable cuda graph by --disable-cuda-graph
2. set --mem-fraction-static to a smaller value
3. disable torch compile by not using --enable-torch-compile
DeepSeek-V2.5 --tp 8 --enable-mla.
"""


def test_the_flags_sglang_suggests_under_a_failure_are_not_the_users():
    names = analyze(CAPTURE_HINTS_ONLY).user_names
    assert "--enable-torch-compile" not in names and "--disable-cuda-graph" not in names
    assert "--enable-mla" in names   # the user's own words still count


def test_a_feature_sglang_only_advises_to_turn_off_does_not_show_it_was_on(assistant):
    """SGLang's hint list under every capture failure says to stop using torch.compile whether it
    is on or not: that line alone must not pin the crash on torch.compile."""
    hinted = assistant.retrieve(CAPTURE_HINTS_ONLY.splitlines())
    assert not (hinted.outcome == "fix" and hinted.hits[0].unit_id == "cuda-graph-capture-torch-compile")
    launched = assistant.retrieve((CAPTURE_HINTS_ONLY + "python -m sglang.launch_server --model-path "
                                   "deepseek-ai/DeepSeek-V2-Lite --enable-torch-compile\n").splitlines())
    assert launched.outcome == "fix" and launched.hits[0].unit_id == "cuda-graph-capture-torch-compile"


# ---- round 35's trial: negations, out-of-memory frames, NCCL forks' spacing, wrapped messages ----

def test_a_failure_the_user_rules_out_is_not_the_one_they_report():
    from assistant.failure_kind import kinds_in

    assert kinds_in("It served fine for ~3 hours then every rank printed this. No OOM in log.") == frozenset()
    assert kinds_in("there is no sign of an OOM, the server just hangs") == {"hang"}
    assert kinds_in("没有 OOM，但是卡住了") == {"hang"}
    # a denial of something else is no denial of the failure
    assert kinds_in("I have no idea why it OOMs") == {"out of memory"}


HIP_OOM_IN_FP8_LINEAR = """\
MI300X x1, Llama-3.3-70B-Instruct FP8, --mem-fraction-static 0.95 --chunked-prefill-size 32768. Runs fine at low load, then during our load test (long prompts) it died:
[2025-11-02 15:22:11 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1021, in event_loop_overlap
    batch_result = self.run_batch(batch)
  File "/sgl-workspace/sglang/python/sglang/srt/models/llama.py", line 185, in forward
    gate_up, _ = self.gate_up_proj(x)
  File "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/fp8_utils.py", line 560, in apply_fp8_linear
    output = torch._scaled_mm(
torch.OutOfMemoryError: HIP out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of 191.98 GiB of which 2.11 GiB is free. Of the allocated memory 183.40 GiB is allocated by PyTorch, and 1.92 GiB is reserved by PyTorch but unallocated.
"""


def test_memory_runs_out_wherever_the_next_allocation_is(assistant):
    """The FP8 linear is where the allocation failed, not what failed: the serving OOM is the fix."""
    answer = assistant.answer(HIP_OOM_IN_FP8_LINEAR)
    assert answer.outcome == "fix" and answer.matches[0].id == "runtime-oom-prefill-decode"


MCCL_BOOTSTRAP = """\
两台 S4000 服务器多机跑 tp16，一直起不来。机器上有 bond0、docker0、eth0、ib0 好几块网卡。
python3 -m sglang.launch_server --model-path /data/Qwen-32B --device musa --tp 16 --nnodes 2 --node-rank 1 --dist-init-addr 10.20.1.11:5000
[2025-11-02 11:02:40 TP8] Init torch distributed begin.
mt-node2:3411:3411 [0] MCCL INFO Bootstrap : Using docker0:172.17.0.1<0>
mt-node2:3411:3411 [0] MCCL WARN Bootstrap : no socket interface found
RuntimeError: MCCL error in: /home/torch_musa/csrc/distributed/ProcessGroupMCCL.cpp:1691, remote process exited or there was a network error, MCCL version 2.11.4
"""


def test_a_line_printed_with_a_space_before_its_colon_is_the_same_line(assistant):
    answer = assistant.answer(MCCL_BOOTSTRAP)
    assert answer.outcome == "fix" and answer.matches[0].id == "musa-mccl-socket-ifname"


MAIN_GUARD = """\
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/entrypoints/engine.py", line 708, in _launch_subprocesses
    proc.start()
  File "/usr/lib/python3.10/multiprocessing/spawn.py", line 134, in _check_not_importing_main
    raise RuntimeError('''
RuntimeError: 
        An attempt has been made to start a new process before the
        current process has finished its bootstrapping phase.

        This probably means that you are not using fork to start your
        child processes and you have forgotten to use the proper idiom
        in the main module:
"""


def test_an_exception_whose_message_starts_on_the_next_line_is_read_whole(assistant):
    first = analyze(MAIN_GUARD).errors[0].text
    assert first.startswith("RuntimeError: An attempt has been made to start a new process before the current")
    answer = assistant.answer(MAIN_GUARD)
    assert answer.outcome == "fix" and answer.matches[0].id == "engine-script-missing-main-guard"


def test_an_entry_about_another_setup_gives_way_to_the_next_that_fits(assistant):
    """The several-nodes entry is ruled out on one node: the single-node serving entry is the lead."""
    log = (Path(__file__).parent / "data" / "nccl-watchdog-one-node-serving.log").read_text()
    answer = assistant.answer(log)
    assert answer.outcome == "lead" and answer.matches[0].id == "nccl-watchdog-timeout-while-serving"


def test_a_crash_the_user_says_came_after_hours_of_serving_is_no_startup_failure(assistant):
    """The MUSA driver-config entry is about decode nodes that crash at start-up: a server that
    served for hours and crashed at peak load is not its case."""
    from assistant.phase import paste_phase

    log = (Path(__file__).parent / "data" / "musa-ima-after-hours-serving.log").read_text()
    assert paste_phase(analyze(log)) == "serving"
    answer = assistant.answer(log)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "musa-mtgpu-conf-missing")


KT_KERNEL_BUILD_FAILS = """\
Building kt-kernel from source on a Xeon box fails, the CPU has AVX2 but no AVX-512:
$ uv pip install .
   Building kt-kernel @ file:///opt/ktransformers/kt-kernel
  × Failed to build `kt-kernel @ file:///opt/ktransformers/kt-kernel`
  ├─▶ The build backend returned an error
  ╰─▶ Call to `setuptools.build_meta.build_wheel` failed (exit status: 1)
"""


def test_a_package_that_fails_to_build_is_not_a_kernel_that_dies_at_run_time(assistant):
    """A kt-kernel build failure shares words (kt-kernel, AVX) with the entry about built kernels
    dying with SIGILL, but a build that fails is another kind of failure than a crash."""
    answer = assistant.answer(KT_KERNEL_BUILD_FAILS)
    assert answer.outcome == "unknown"
    assert any("build failure" in str(reason) for reason in answer.reasons)


MULTILINE_LAUNCH_NO_ERROR = """\
Regression: the server no longer reads the Kimi K2.6 config on launch
Built from source with install.sh in a new venv
1x RTX Pro 6000 96GB
PYTORCH_ALLOC_CONF=expandable_segments:True \\
SGLANG_ENABLE_JIT_DEEPGEMM=0 \\
python -m sglang.launch_server \\
  --host 0.0.0.0 \\
  --model /data/models/Kimi-K2.6 \\
  --kt-method RAWINT4 \\
  --kt-weight-path /data/models/Kimi-K2.6 \\
  --kt-cpuinfer 64 \\
  --trust-remote-code
"""


def test_flags_of_a_launch_command_over_several_lines_are_not_half_an_error_line(assistant):
    """`--kt-weight-path` set on a continuation line of the command is configuration: it does not
    make the paste "match in part" the entry whose error line is `unrecognized arguments:
    --kt-weight-path`."""
    answer = assistant.answer(MULTILINE_LAUNCH_NO_ERROR)
    assert answer.outcome != "fix"
    assert not any("only in part" in str(reason) for reason in answer.reasons)


SPARK_WARNING_THEN_DESCRIBED_CRASH = """\
On a DGX Spark (GB10) I run sglang generate with Qwen-Image-2512 and sageattn3 installed from the
SageAttention3 blackwell repo; generation crashes with a RuntimeError inside SageAttention3, which
SGLang Diffusion picks as its attention backend on this GPU by default.

sglang generate --model-path ./Qwen-Image --prompt "a lighthouse at dusk"
/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:283: UserWarning:
    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.
    Minimum and Maximum cuda capability supported by this version of PyTorch is
    (8.0) - (12.0)
"""


def test_a_harmless_warning_does_not_hide_the_crash_the_user_describes(assistant):
    """The GB10 capability warning has a diagnosis entry, but the user describes a crash in
    SageAttention3: the entry about that crash is the lead, and the reason names the warning's entry."""
    answer = assistant.answer(SPARK_WARNING_THEN_DESCRIBED_CRASH)
    assert answer.outcome == "lead"
    assert answer.matches[0].id == "diffusion-sm120-flash-attn-sgl-kernel-unsupported"
    assert any("dgx-spark-gb10-torch-capability-12-1-warning-harmless" in str(r) for r in answer.reasons)
    # the warning the run went on from is not shown as the root error
    assert "UserWarning" not in (answer.primary_error or "")
