"""Round 46: entries whose prose tells them apart from a sibling that prints the same error line now
say so in data (`tell_apart`): a paste naming the sibling's case (speculative decoding under a
grammar crash, an RL framework behind `invalid device ordinal`, a PD decode server out of Mamba
slots, a second node behind an NCCL watchdog timeout, an ARM host that pip finds no kernel wheel
for) goes to the sibling and never gets this entry's fix; the same paste without those words still
does."""

from __future__ import annotations

import pytest

GRAMMAR = "grammar-accept-token-crashes-scheduler"
SPEC_GRAMMAR = "spec-decoding-structured-output-crash"
GPUS_PER_NODE = "invalid-device-ordinal-gpus-per-node"
RL_ROLLOUT = "rl-rollout-engine-wrong-gpu-id"
MAMBA_SLOTS = "mamba-ping-pong-slots-exhausted-scheduler-assert"
MAMBA_PD_DECODE = "mamba-pd-decode-pool-ignores-mamba-cache-size"
WATCHDOG = "nccl-watchdog-timeout-while-serving"
PEER_RANK_FAILED = "multinode-peer-rank-failed-timeout"
ARM_INSTALL = "aarch64-gh200-install"
KERNEL_NOT_ON_INDEX = "pip-pinned-sgl-kernel-flashinfer-not-on-index"

GRAMMAR_CRASH = (
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler_output_processor_mixin.py", '
    'line 288, in process_batch_result_decode\n'
    "    req.grammar.accept_token(next_token_id)\n"
    "ValueError: Tokens not accepted: 90210\n")
ORDINAL = (
    '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/model_executor/model_runner.py", line 512, in init_torch_distributed\n'
    "    torch.get_device_module(self.device).set_device(self.gpu_id)\n"
    "RuntimeError: CUDA error: invalid device ordinal\n")
MAMBA_ASSERT = (
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/mem_cache/memory_pool.py", line 230, in alloc\n'
    '    assert mamba_index is not None, "Not enough space for mamba ping pong idx"\n'
    "AssertionError: Not enough space for mamba ping pong idx, try to increase --mamba-full-memory-ratio.\n")
WATCHDOG_LINE = ("[rank5]:[E1130 03:44:10.551 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operation "
                 "timeout: WorkNCCL(SeqNum=91377, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) "
                 "ran for 600112 milliseconds before timing out.\n")
PIP_PIN = ('ERROR: Could not find a version that satisfies the requirement sgl-kernel>=0.0.3.post6; extra == "srt" '
           '(from sglang[srt]) (from versions: none)\n'
           'ERROR: No matching distribution found for sgl-kernel>=0.0.3.post6; extra == "srt"\n')


def _shown(answer):
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"]


@pytest.mark.parametrize("said, error, sibling, entry", [
    ("Llama-3.1-70B with --speculative-algorithm EAGLE and a response_format json_schema request:\n",
     GRAMMAR_CRASH, SPEC_GRAMMAR, GRAMMAR),
    ("开了投机解码（EAGLE3）之后，带 json_schema 的请求让服务挂掉：\n", GRAMMAR_CRASH, SPEC_GRAMMAR, GRAMMAR),
    ("GRPO training with verl, the sglang rollout engine on the second GPU group fails:\n",
     ORDINAL, RL_ROLLOUT, GPUS_PER_NODE),
    ("Qwen3-Next-80B-A3B behind the router, this node runs --disaggregation-mode decode --max-mamba-cache-size 48:\n",
     MAMBA_ASSERT, MAMBA_PD_DECODE, MAMBA_SLOTS),
    ("两台 8 卡机器多机部署 (--nnodes 2)，服务一段时间后:\n", WATCHDOG_LINE, PEER_RANK_FAILED, WATCHDOG),
    ("pip install on our Grace Hopper (GH200) partition:\n", PIP_PIN, ARM_INSTALL, KERNEL_NOT_ON_INDEX),
])
def test_a_paste_naming_the_siblings_case_goes_to_the_sibling_not_this_entrys_fix(assistant, said, error,
                                                                                    sibling, entry):
    # `entry` names the entry whose tell_apart sends the paste away (the ids read in a failure)
    answer = assistant.answer(said + error)
    outcome, shown_id = _shown(answer)
    assert shown_id == sibling, said
    assert outcome in ("fix", "lead")   # the sibling's fix or a lead to it, never this entry's fix


@pytest.mark.parametrize("said, error, entry", [
    ("Llama-3.1-70B behind xgrammar, a response_format json_schema request kills the server:\n", GRAMMAR_CRASH, GRAMMAR),
    ("launch_server --tp 4 inside a Kubernetes pod that was given 2 GPUs:\n", ORDINAL, GPUS_PER_NODE),
    ("Qwen3.5-35B-A3B on one server with --max-mamba-cache-size 32 crashed after an hour:\n", MAMBA_ASSERT, MAMBA_SLOTS),
    ("单机 8 卡 A800，--tp 8，服务一段时间后:\n", WATCHDOG_LINE, WATCHDOG),
    ("pip install on an x86_64 Ubuntu box through the company mirror:\n", PIP_PIN, KERNEL_NOT_ON_INDEX),
])
def test_the_same_error_without_the_siblings_words_keeps_this_entrys_fix(assistant, said, error, entry):
    assert _shown(assistant.answer(said + error)) == ("fix", entry)


def test_a_user_who_says_the_siblings_word_is_not_in_play_keeps_this_entrys_fix(assistant):
    answer = assistant.answer("Plain decoding, no EAGLE, xgrammar with a json_schema request:\n" + GRAMMAR_CRASH)
    assert _shown(answer) == ("fix", GRAMMAR)
