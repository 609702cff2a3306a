"""Round 51: failures Ascend NPU users hit that the KB lacked, by how often they are reported.

- A PD decode server on Ascend dies the first time it has to retract a request: before 0.5.15
  the NPU KV pools could not back a retracted request up to CPU (`'NPUMLATokenToKVPool' object
  has no attribute 'kv_buffer'` up to 0.5.12, a TypeError about `mamba_indices` in 0.5.13-0.5.14).
  The answer names the upgrade, not a generic memory tweak.
- DeepSeek-V4 on NPU calls `torch.ops.custom` operators; a missing one is the same package
  mismatch as a missing `torch.ops.npu` operator, so it leads to the kernel-package entry.
"""

from __future__ import annotations

from assistant.render import render_text

RETRACT = "ascend-pd-decode-retract-npu-kv-pool-cpu-copy"
KERNEL_PACKAGES = "ascend-npu-kernel-package-older-than-sglang"

KV_BUFFER = (
    "python -m sglang.launch_server --model-path /models/glm-5-w8a8 --device npu --attention-backend ascend "
    "--disaggregation-mode decode --quantization modelslim --moe-a2a-backend deepep --tp-size 16\n"
    "[2026-05-10 08:12:40 DP3 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/python3.11.14/lib/python3.11/site-packages/sglang/srt/managers/schedule_batch.py", '
    "line 2249, in release_req\n"
    "    req.offload_kv_cache(\n"
    '  File "/usr/local/python3.11.14/lib/python3.11/site-packages/sglang/srt/mem_cache/memory_pool.py", '
    "line 1706, in get_cpu_copy\n"
    "    kv_cpu = self.kv_buffer[layer_id][chunk_indices].to(\n"
    "AttributeError: 'NPUMLATokenToKVPool' object has no attribute 'kv_buffer'\n")

MAMBA_KEYWORD = (
    "python -m sglang.launch_server --model-path /models/DeepSeek-R1-w8a8 --device npu --attention-backend ascend "
    "--disaggregation-mode decode\n"
    "TypeError: NPUMLATokenToKVPool.get_cpu_copy() got an unexpected keyword argument 'mamba_indices'\n")

CUSTOM_OP = (
    "source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
    "python -m sglang.launch_server --model-path /models/DeepSeek-V4-Flash-w8a8 --device npu "
    "--attention-backend ascend --quantization modelslim --tp-size 16\n"
    "AttributeError: '_OpNamespace' 'custom' object has no attribute 'npu_hc_pre'\n")


def _shown(answer) -> tuple[str, str | None]:
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"] if shown["matches"] else None


def test_npu_decode_retract_kv_buffer_gets_the_upgrade_fix(assistant):
    answer = assistant.answer(KV_BUFFER)
    assert _shown(answer) == ("fix", RETRACT)
    assert "0.5.15" in render_text(answer)


def test_npu_decode_retract_mamba_keyword_gets_the_same_fix(assistant):
    assert _shown(assistant.answer(MAMBA_KEYWORD)) == ("fix", RETRACT)


def test_missing_custom_npu_operator_points_to_the_kernel_package_entry(assistant):
    answer = assistant.answer(CUSTOM_OP)
    assert _shown(answer)[1] == KERNEL_PACKAGES
    assert "set_env.bash" in render_text(answer)
