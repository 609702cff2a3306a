"""The entry offered must be about the user's case (round 30's trial).

- Words alone, with none of the entry's own error lines in the log and the log's root error
  unexplained, are not a lead; a line every crash prints (`Segmentation fault`) does not carry a fix.
- A relay (the warm-up's status check, triton's `CompilationError: at L:C:` header) is not the
  error: the crash or message it relays decides the entry.
- A check SGLang makes for any model is the flag-check entry's, not one model's entry.
- "Why is X so low?" reports a symptom; it is not a how-to question."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

WORDS_ALIKE_OTHER_ERROR = """\
the server died right after start, log below
Traceback (most recent call last):
  File "/srv/app/widgets/pool.py", line 88, in rebalance
    raise RuntimeError("frobnicator quorum lost in widget pool 7")
RuntimeError: frobnicator quorum lost in widget pool 7
"""


def test_words_alone_beside_an_unexplained_error_are_not_a_lead(assistant):
    answer = assistant.answer(WORDS_ALIKE_OTHER_ERROR)
    assert answer.outcome == "unknown"
    assert "frobnicator quorum lost" in answer.primary_error


def test_the_entrys_own_line_in_the_log_still_makes_a_lead_or_fix(assistant):
    # the same story with the warm-up entry's own assertion: now it is about the paste
    answer = assistant.answer(WORDS_ALIKE_OTHER_ERROR.replace(
        'RuntimeError: frobnicator quorum lost in widget pool 7',
        "AssertionError: res=<Response [502]>, res.text=''"))
    assert answer.outcome in ("fix", "lead") and answer.matches[0].id == "warmup-request-through-http-proxy"


MULTINODE_SEGFAULT_ONLY = """\
[Bug] Segmentation fault: address not mapped to object at address 0x17
python3 -m sglang.launch_server --model-path /data/models/DeepSeek-R1-Channel-INT8 --tp 16 --dist-init-addr 10.0.0.1:20000 --nnodes 2 --node-rank 0 --trust-remote-code --quantization w8a8_int8
Segmentation fault: address not mapped to object at address 0x17
"""


def test_a_line_every_crash_prints_does_not_carry_a_fix_on_words_alone(assistant):
    # the multi-node NCCL segfault entry reads like this report, but none of its lines is in it
    answer = assistant.answer(MULTINODE_SEGFAULT_ONLY)
    assert answer.outcome != "fix"
    assert any("None of this entry's error lines occurs in your log" in r for r in answer.reasons)


WARMUP_AFTER_SCHEDULER_CRASH = """\
GPU: RTX 5090, image lmsysorg/sglang:v0.5.9-cu126
[2026-03-11 14:02:11] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)
[2026-03-11 14:02:13 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/attention/flashinfer_backend.py", line 782, in forward_extend
    o = prefill_wrapper_paged.forward(
  File "/usr/local/lib/python3.12/dist-packages/flashinfer/prefill.py", line 2245, in run
    self._cached_module.paged_run(*run_args)
RuntimeError: CUDA error: no kernel image is available for execution on the device
[2026-03-11 14:02:13] Received sigquit from a child process. It usually means the child failed.
[2026-03-11 14:02:14] Initialization failed. warmup error: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/entrypoints/http_server.py", line 1768, in _execute_server_warmup
    assert res.status_code == 200, f"{res.text}"
AssertionError: {"object":"error","message":"Internal server error","type":"InternalServerError","param":null,"code":500}
"""


def test_the_warm_up_check_relays_a_crash_it_does_not_name_a_proxy(assistant):
    answer = assistant.answer(WARMUP_AFTER_SCHEDULER_CRASH)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "warmup-request-through-http-proxy")
    assert answer.matches[0].id == "sgl-kernel-no-kernel-image-new-gpu"


FP8_ON_A100_TRITON = """\
GPU: A100 80GB, model Qwen/Qwen3-30B-A3B-FP8
  File "/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py", line 278, in compile
    module = src.make_ir(options, codegen_fns, module_map, context)
triton.compiler.errors.CompilationError: at 131:21:
                accumulator += tl.dot(a, b) * a_scale[:, None] * b_scale[None, :]
                     ^
type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')
"""


def test_triton_location_header_is_not_the_error_its_message_below_is(assistant):
    answer = assistant.answer(FP8_ON_A100_TRITON)
    assert answer.outcome == "fix" and answer.matches[0].id == "fp8-checkpoint-gpu-without-fp8"


def test_a_backend_refusal_for_any_model_is_not_a_model_specific_fix(assistant):
    answer = assistant.answer(
        "sglang 0.5.9 on 4x H100 SXM\n"
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --tp 4 --attention-backend trtllm_mha\n"
        "ValueError: TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a different backend.")
    assert answer.outcome == "fix" and answer.matches[0].id == "server-args-combination-rejected"
    assert any("TRTLLM MHA backend" in step for step in answer.fix)
    assert not any("Pipeline parallelism" in step for step in answer.fix)   # other checks' steps left out


def test_a_why_question_about_a_bad_number_is_a_report(assistant):
    answer = assistant.answer(
        "Why is my throughput so low? sglang 0.5.5, Llama-3.1-8B on 1x A100, bench_serving gives ~1500 tok/s, "
        "vLLM 2500. Launch: python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
        "--disable-radix-cache --disable-cuda-graph")
    assert not answer.question
    assert answer.matches[0].id == "throughput-below-expectations-benchmark-triage"


LIVENESS_KILL_WHILE_LOADING = """\
$ kubectl describe pod qwen-sglang-6b7c9d-x2 -n llm
    Liveness:   http-get http://:30000/health delay=60s timeout=5s period=10s #success=1 #failure=3
    Last State:     Terminated
      Reason:       Error
      Exit Code:    137
Events:
  Warning  Unhealthy  4m2s (x6 over 13m)    kubelet  Liveness probe failed: Get "http://10.244.3.17:30000/health": dial tcp 10.244.3.17:30000: connect: connection refused
  Normal   Killing    4m2s (x2 over 12m)    kubelet  Container sglang failed liveness probe, will be restarted
$ kubectl logs qwen-sglang-6b7c9d-x2 --previous | tail -1
Loading safetensors checkpoint shards:  25% Completed | 4/16 [01:10<03:30, 17.5s/it]
"""


def test_a_probe_setting_is_configuration_and_the_probe_kill_has_its_entry(assistant):
    answer = assistant.answer(LIVENESS_KILL_WHILE_LOADING)
    assert "Liveness:   http-get" not in (answer.primary_error or "")
    assert answer.outcome == "fix" and answer.matches[0].id == "k8s-liveness-probe-restarts-sglang-while-loading"


def test_another_serving_engines_traceback_gets_no_sglang_fix(assistant):
    # triton's shared-memory error is the same text in every engine: LMDeploy's kernel printed it here
    paste = ("MonkeyOCR with the LMDeploy backend on an RTX 3090:\n"
             "Traceback (most recent call last):\n"
             '  File "/usr/local/lib/python3.10/site-packages/lmdeploy/pytorch/kernels/cuda/pagedattention.py", '
             "line 812, in paged_attention_fwd\n"
             "    _fwd_kernel[grid](q, k, v)\n"
             "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 147456, "
             "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n")
    answer = assistant.answer(paste)
    assert answer.outcome != "fix"
    assert any("lmdeploy" in str(reason) for reason in answer.reasons)


def test_another_cuda_projects_source_build_gets_no_sglang_fix(assistant):
    # every CUDA source build that includes cuda_fp8.h on an old toolkit prints this line, xformers' too
    paste = ("pip install xformers from source on CUDA 11.7 fails:\n"
             "  Building wheel for xformers (setup.py) ... error\n"
             "  /tmp/pip-install-x/xformers/third_party/flash-attention/csrc/flash_attn/src/fp8.cuh:3:10: "
             "fatal error: cuda_fp8.h: No such file or directory\n"
             "  error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n")
    answer = assistant.answer(paste)
    assert answer.outcome != "fix"
    assert any("xformers" in str(reason) for reason in answer.reasons)
    # and what to do next starts with that program, not with SGLang's environment dump
    assert "xformers" in answer.next_steps[0] and "sglang.check_env" not in answer.next_steps[0]


def test_a_training_job_the_user_describes_is_not_another_program(assistant):
    # RL and fine-tuning jobs run SGLang as their rollout engine: the user's word for the job is not
    # a program, while a trainer's own frames in the log are
    described = assistant.answer("用 verl 训练 Qwen2.5-7B 时 rollout 挂了，这是 OOM 吗？\n"
                                 "RuntimeError: CUDA error: uncorrectable ECC error encountered")
    assert described.outcome == "fix" and described.matches[0].id == "gpu-hardware-fault-xid-ecc"
    logged = assistant.answer('Traceback (most recent call last):\n  File "/app/train.py", line 88, in step\n'
                              "    loss.backward()\nRuntimeError: CUDA error: uncorrectable ECC error encountered")
    assert logged.outcome != "fix" and any("loss.backward" in str(r) for r in logged.reasons)
