"""Relays, consequences and callers (round 30's second trial): the error that decides the answer is
the one the failing code raised, not the line that reported or relayed it.

- gloo's `Connection closed by peer` is what a surviving rank prints when another one died.
- A wrapper's prefix (`Failed to load LoRA adapter sql: ...`) relays the reason after it.
- A client's `httpx.HTTPStatusError ... 500` pasted above the server's traceback is not the root.
- Another package importing an SGLang name of another release is the downstream-tool entry's,
  whichever name it is; a frame where an OOM of the entry's kind was raised names the case.
- "worked with 0.4.6.post5 ... (now 0.5.3)": the release it runs now."""

from __future__ import annotations

import pytest

from assistant.trace import analyze

pytestmark = pytest.mark.slow

GLOO_PEER_DIED = """\
prefill-1  | [2025-11-21 08:31:55 TP3] Scheduler hit an exception: Traceback (most recent call last):
prefill-1  |   File "/sgl-workspace/sglang/python/sglang/srt/disaggregation/utils.py", line 60, in poll_and_all_reduce
prefill-1  |     dist.all_reduce(tensor_to_reduce, op=dist.ReduceOp.MIN, group=gloo_group)
prefill-1  | RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.10.0.7]:48213
prefill-1  | [2025-11-21 08:31:55] Received sigquit from a child process. It usually means the child failed.
prefill-1 exited with code 137
"""


def test_a_peer_that_died_is_not_a_model_specific_segfault_fix(assistant):
    answer = assistant.answer(GLOO_PEER_DIED)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "nccl-segfault-deepseek-multinode")


def test_the_reason_after_a_relay_prefix_decides(assistant):
    answer = assistant.answer(
        '{"success":false,"error_message":"Failed to load LoRA adapter sql: Cannot find target module name '
        "for base_model.model.model.layers.0.mlp.down_proj.lora_A.weight in {'v_proj', 'q_proj'}\"}")
    assert answer.outcome == "fix" and answer.matches[0].id == "lora-target-modules-missing"


def test_a_client_relay_above_the_server_traceback_is_not_the_root(assistant):
    answer = assistant.answer(
        "SkyRL with an sglang server started with --dp-size 2 --tp 2. First weight sync:\n"
        "httpx.HTTPStatusError: Server error '500 Internal Server Error' for url "
        "'http://127.0.0.1:30000/update_weights_from_distributed'\n"
        "server:\n"
        "[2025-11-18 21:30:02] Error in request: Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_communicator_mixin.py", '
        "line 500, in update_weights_from_distributed\n"
        "    assert (\n"
        "AssertionError: dp_size must be 1 or dp attention must be enabled for update weights from distributed\n")
    assert answer.outcome == "fix" and answer.matches[0].id == "rl-weight-update-dp-size-replicas-rejected"


VERL_REMOVED_MODULE = """\
verl 0.4.0 worked with sglang 0.4.6.post5. After pip install -U sglang (now 0.5.3):
Traceback (most recent call last):
  File "/workspace/verl/verl/workers/fsdp_workers.py", line 462, in _build_rollout
    from verl.workers.sharding_manager.fsdp_sglang import FSDPSGLangShardingManager
  File "/workspace/verl/verl/workers/sharding_manager/fsdp_sglang.py", line 29, in <module>
    from sglang.srt.patch_torch import monkey_patch_torch_reductions
ModuleNotFoundError: No module named 'sglang.srt.patch_torch'
"""


def test_a_tool_importing_a_name_of_another_release_gets_the_downstream_tool_fix(assistant):
    assert analyze(VERL_REMOVED_MODULE).environment.sglang_version == "0.5.3"   # "now 0.5.3"
    answer = assistant.answer(VERL_REMOVED_MODULE)
    assert answer.outcome == "fix" and answer.matches[0].id == "downstream-tool-needs-other-sglang"
    assert answer.symbol is not None and answer.symbol.in_user_version is False


REQ_TO_TOKEN_OOM = """\
python3 -m sglang.launch_server --model-path meta-llama/Llama-4-Scout-17B-16E-Instruct --tp 8
[2025-10-14 11:52:31 TP0] KV Cache is allocated. #tokens: 2311680, K size: 17.64 GB, V size: 17.64 GB
[2025-10-14 11:52:31 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 1632, in init_memory_pool
    self.req_to_token_pool = ReqToTokenPool(
  File "/sgl-workspace/sglang/python/sglang/srt/mem_cache/memory_pool.py", line 79, in __init__
    self.req_to_token = torch.zeros(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.04 GiB. GPU 0 has a total capacity of 79.19 GiB of which 13.70 GiB is free.
"""


def test_the_frame_an_oom_was_raised_in_names_the_case(assistant):
    answer = assistant.answer(REQ_TO_TOKEN_OOM)
    assert answer.outcome == "fix" and answer.matches[0].id == "huge-context-len-req-to-token-pool-startup-oom"


ROCM_FAULT = """\
[2026-01-10 10:00:01 TP3] Decode batch. #running-req: 40, #token: 90000, token usage: 0.31
Memory access fault by GPU node-5 (Agent handle: 0x55d1c8f0a0c0) on address 0x7f1a2c000000. Reason: Unknown.
[2026-01-10 10:00:02] Rank 3 scheduler is dead. Please check if there are relevant logs.
[2026-01-10 10:00:03] Exit code: -6
"""


def test_a_rocm_memory_fault_line_is_an_error_line_not_a_host_memory_kill(assistant):
    assert any(e.text.startswith("Memory access fault by GPU node-5") for e in analyze(ROCM_FAULT).errors)
    answer = assistant.answer(ROCM_FAULT)
    assert answer.primary_error.startswith("Memory access fault by GPU node-5")
    assert answer.matches[0].id == "rocm-gpu-memory-fault-isolate"


def test_a_kb_source_marker_is_not_shown_to_the_user(assistant):
    answer = assistant.answer("multi-node DeepSeek-V3 crashes with a segfault in ncclMemoryPoolAlloc")
    assert not any("(seed 0" in w for w in answer.warnings)
