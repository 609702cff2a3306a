"""Round 51: failures Ascend NPU and Intel CPU users report that the KB lacked.

- A PD decode server on Ascend dies the first time it has to retract a request: before 0.5.15
  the NPU KV pools could not back a retracted request up to CPU (`'NPUMLATokenToKVPool' object
  has no attribute 'kv_buffer'` up to 0.5.12, a TypeError about `mamba_indices` in 0.5.13-0.5.14).
  The answer names the upgrade, not a generic memory tweak.
- On CPU, a linear-attention model (Qwen3.5, Qwen3-Next) crashes on its first request with
  `Torch not compiled with CUDA enabled` from `_get_sm_count`: the gated RMSNorm has a CPU kernel
  only with AMX and the CPU sgl-kernel, otherwise it takes the GPU Triton path.
- DeepSeek-V4 on NPU calls `torch.ops.custom` operators; a missing one is the same package
  mismatch as a missing `torch.ops.npu` operator, so it gets the kernel-package fix, with
  the step for the CANN custom-op package.
"""

from __future__ import annotations

from assistant.render import render_text

RETRACT = "ascend-pd-decode-retract-npu-kv-pool-cpu-copy"
CPU_GATED_NORM = "cpu-linear-attention-gated-norm-torch-not-compiled-cuda"
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

CPU_GATED = (
    "SGLANG_USE_CPU_ENGINE=1 python -m sglang.launch_server --model-path Qwen/Qwen3.5-4B --device cpu --host 0.0.0.0\n"
    "[2026-06-06 10:02:11] The server is fired up and ready to roll!\n"
    "[2026-06-06 10:02:40] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/opt/.venv/lib/python3.12/site-packages/sglang/srt/layers/attention/fla/layernorm_gated.py", '
    "line 240, in _layer_norm_fwd\n"
    "    rows_per_block = calc_rows_per_block(M, x.device)\n"
    '  File "/opt/.venv/lib/python3.12/site-packages/sglang/srt/layers/attention/fla/layernorm_gated.py", '
    "line 175, in _get_sm_count\n"
    "    props = torch.cuda.get_device_properties(device)\n"
    "AssertionError: Torch not compiled with CUDA enabled\n")

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


def test_cpu_gated_norm_cuda_assertion_gets_the_amx_fix(assistant):
    answer = assistant.answer(CPU_GATED)
    assert _shown(answer) == ("fix", CPU_GATED_NORM)
    assert "_is_amx_tile_supported" in render_text(answer)


def test_missing_custom_npu_operator_gets_the_kernel_package_fix(assistant):
    answer = assistant.answer(CUSTOM_OP)
    assert _shown(answer) == ("fix", KERNEL_PACKAGES)
    assert "set_env.bash" in render_text(answer)
