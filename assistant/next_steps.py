"""What to collect or try next when no known fix matched, per component the error comes from.

When the answer is a lead or unknown, the useful reply is not a guess at a fix but the two or three
things that would tell the cause apart for the library where the error arises: NCCL's own debug
log for a collective, UCX's for a transfer crash, a run without CUDA graphs to bisect a capture
failure. `steps_for(components)` picks them from one table, most specific component first, and
falls back to steps that help with any SGLang failure.

Component names are those of `assistant.components`. Every SGLang flag named here exists in some
release (tests/test_outcomes.py checks it); `for_version` renames or drops what the user's release
does not accept (`--cuda-graph-max-bs` became `--cuda-graph-max-bs-decode`).
"""

from __future__ import annotations

import re

GENERIC = (
    "Environment: `python3 -m sglang.check_env` (SGLang, torch, CUDA, flashinfer, GPU, driver).",
    "The first error in the full server log, not the last lines: "
    "`grep -n -m1 -E 'Traceback|Error|error:' server.log` and the 30 lines before it.",
    "The exact launch command (`python3 -m sglang.launch_server ...`) and the model: the flags "
    "decide which code paths run.",
)

STEPS: dict[str, tuple[str, ...]] = {
    "nccl": (
        "NCCL's own log: rerun with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` and look for the "
        "first `NCCL WARN` line on every rank.",
        "Test the fabric without SGLang: nccl-tests `all_reduce_perf -b 8 -e 1G -f 2 -g 1` across "
        "the same GPUs / nodes.",
        "Rule out SGLang's custom all-reduce: rerun with `--disable-custom-all-reduce`.",
    ),
    "rccl": (
        "RCCL's own log: rerun with `NCCL_DEBUG=INFO` (RCCL reads the NCCL_ variables).",
        "Test the fabric without SGLang: rccl-tests `all_reduce_perf` on the same GPUs.",
        "Rule out SGLang's custom all-reduce: rerun with `--disable-custom-all-reduce`.",
    ),
    "custom-allreduce": (
        "Rerun with `--disable-custom-all-reduce`: if the error goes away, it is in the custom "
        "all-reduce kernel, not in NCCL.",
        "Check peer-to-peer access between the GPUs: `nvidia-smi topo -m`.",
    ),
    "ucx": (
        "UCX's own log: rerun with `UCX_LOG_LEVEL=debug` and keep the lines before the crash.",
        "The transports UCX sees on this node: `ucx_info -d` (and `ucx_info -v` for its version).",
        "The NIXL / UCX versions on both prefill and decode nodes (`pip list | grep -i -E 'nixl|ucx'`): "
        "they must match.",
    ),
    "nixl": (
        "UCX (NIXL's default transport) log: rerun with `UCX_LOG_LEVEL=debug`, and `ucx_info -d` "
        "for the transports it finds.",
        "The NIXL version on the prefill and the decode nodes (`pip show nixl`): they must match.",
        "Bisect the transfer backend: try `--disaggregation-transfer-backend mooncake` on both sides.",
    ),
    # Mooncake moves KV caches for PD disaggregation and is HiCache's storage backend
    "mooncake": (
        "The RDMA devices Mooncake uses: `ibv_devinfo`, and the devices it is given: "
        "`--disaggregation-ib-device` on the prefill and decode servers (PD), or `device_name` in "
        "the Mooncake store config (HiCache).",
        "The Mooncake version on every node: `pip show mooncake-transfer-engine`.",
        "Whether the hosts reach each other: the bootstrap port between prefill and decode (PD), or "
        "the Mooncake master and metadata server (HiCache); firewall and container network included.",
    ),
    "disaggregation": (
        "Both sides' logs, prefill and decode, from the same minute: the first error is often on "
        "the other server.",
        "The transfer backend and devices on both sides: `--disaggregation-transfer-backend`, "
        "`--disaggregation-ib-device`.",
    ),
    "nvshmem": (
        "NVSHMEM's own log: rerun with `NVSHMEM_DEBUG=INFO`.",
        "Whether the GPUs and NICs support GPUDirect RDMA / IBGDA: `nvidia-smi topo -m`, `ibv_devinfo`.",
    ),
    "deepep": (
        "DeepEP's own tests on the same nodes (`tests/test_intranode.py`, `tests/test_low_latency.py` "
        "in the DeepEP repository) tell a fabric problem from an SGLang one.",
        "Bisect the mode: rerun with `--deepep-mode normal` instead of `low_latency` (or the reverse).",
        "NVSHMEM's log: `NVSHMEM_DEBUG=INFO`.",
    ),
    "deepgemm": (
        "The DeepGEMM version and the GPU (DeepGEMM needs Hopper or newer): `python3 -m sglang.check_env`.",
        "Whether its JIT cache is stale: the first DeepGEMM compile lines in the log.",
    ),
    "flashinfer": (
        "FlashInfer's API log: rerun with `FLASHINFER_LOGLEVEL=3` (`FLASHINFER_LOGDEST=stderr`) to see "
        "the call that fails and its inputs.",
        "The flashinfer version against what your SGLang pins: `pip list | grep -i flashinfer`.",
        "A stale JIT build: move `~/.cache/flashinfer` away and rerun; or bisect with "
        "`--attention-backend triton`.",
    ),
    "flashattention": (
        "Bisect the attention backend: rerun with `--attention-backend flashinfer` or `triton`.",
        "The sgl-kernel version against what your SGLang pins: `pip show sgl-kernel`.",
    ),
    "sgl-kernel": (
        "The sgl-kernel and torch versions against what your SGLang pins: `pip show sgl-kernel torch`.",
        "Whether it loads on its own: `python3 -c \"import sgl_kernel\"` (the first error is the useful one).",
        "The GPU architecture the wheel was built for vs yours: `nvidia-smi --query-gpu=name,compute_cap --format=csv`.",
    ),
    "triton": (
        "The triton and torch versions: `pip show triton torch` (they must be the pair torch ships with).",
        "A stale kernel cache: move `~/.triton/cache` away and rerun.",
        "Bisect: rerun with `--disable-cuda-graph`, and with another `--attention-backend`.",
    ),
    "torch-compile": (
        "Rerun without `--enable-torch-compile`: if the error goes away, it is in compilation.",
        "Dynamo's detail: rerun with `TORCHDYNAMO_VERBOSE=1` for the full compile traceback.",
        "The torch and triton versions: `pip show torch triton`.",
    ),
    "cuda-graph": (
        "Bisect: rerun with `--disable-cuda-graph`; if it then works, the failure is in graph capture.",
        "Capture fewer batch sizes: a smaller `--cuda-graph-max-bs`.",
        "The first error before the capture failed, with `CUDA_LAUNCH_BLOCKING=1` for a CUDA error.",
    ),
    "cuda": (
        "Where the CUDA error really happens: rerun with `CUDA_LAUNCH_BLOCKING=1` (slow, but the "
        "traceback then points at the failing kernel).",
        "Driver and CUDA versions: `nvidia-smi` and `python3 -m sglang.check_env`.",
        "Bisect: rerun with `--disable-cuda-graph`.",
    ),
    "rocm": (
        "ROCm, driver and GPU: `rocm-smi` and `python3 -m sglang.check_env`.",
        "Where the HIP error really happens: rerun with `HIP_LAUNCH_BLOCKING=1`.",
    ),
    "aiter": (
        "The aiter version against what your SGLang image ships: `pip show aiter`.",
        "Bisect: rerun with another `--attention-backend` (e.g. `triton`).",
    ),
    "musa": (
        "MUSA driver and toolkit: `mthreads-gmi` and `python3 -m sglang.check_env`.",
        "The torch_musa version against what your SGLang build expects.",
    ),
    "tokenizer": (
        "Whether the model has a chat template: `chat_template` in its `tokenizer_config.json`; "
        "if not, pass one with `--chat-template`.",
        "Load the tokenizer alone: `python3 -c \"from transformers import AutoTokenizer; "
        "AutoTokenizer.from_pretrained('<model>')\"`.",
        "The transformers version: `pip show transformers`.",
    ),
    "transformers": (
        "The transformers version against what your SGLang pins: `pip show transformers`.",
        "Whether the model's config loads alone: `python3 -c \"from transformers import AutoConfig; "
        "AutoConfig.from_pretrained('<model>')\"`.",
    ),
    "router": (
        "Each worker's health, bypassing the router: `curl http://<worker>:<port>/health`.",
        "The router and SGLang versions: `pip show sglang-router sglang`.",
        "The router's log from start-up: it names workers it could not reach.",
    ),
    "xgrammar": (
        "Bisect the grammar backend: rerun with `--grammar-backend outlines` (or `llguidance`).",
        "The xgrammar version against what your SGLang pins: `pip show xgrammar`.",
    ),
    "speculative": (
        "Bisect: rerun without `--speculative-algorithm` and the other speculative flags; if it then "
        "works, the draft model or its settings are the cause.",
        "Whether the draft model fits the target model (same vocabulary and hidden size).",
    ),
    "quantization": (
        "The checkpoint's `quantization_config` in its `config.json`, and the `--quantization` flag if set.",
        "Whether your GPU supports the format (e.g. FP8 needs compute capability 8.9 or newer): "
        "`nvidia-smi --query-gpu=name,compute_cap --format=csv`.",
    ),
    "model-loader": (
        "Whether every weight file downloaded completely: the sizes in the model folder against the hub.",
        "Free host memory and disk while loading: `free -g`, `df -h`.",
    ),
    "lora": (
        "The LoRA adapter's `adapter_config.json` (target modules, rank) against the base model.",
        "Bisect: rerun without the adapters.",
    ),
    "multimodal": (
        "Whether the same request works with text only: then the image / video input is the cause.",
        "The transformers version: `pip show transformers` (processors change between releases).",
    ),
}

MAX_STEPS = 3
FLAG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")


def steps_for(components, limit: int = MAX_STEPS) -> list[str]:
    """Up to `limit` things to collect or try for the first component that has steps, then the
    generic ones to fill up; each says which component it is for."""
    for name in components:
        steps = STEPS.get(name)
        if steps:
            return [f"[{name}] {s}" for s in steps[:limit]]
    return list(GENERIC[:limit])


def for_version(steps: list[str], version: str | None, registry) -> list[str]:
    """The steps as the user's SGLang version spells its flags: a renamed flag is replaced by the
    registry's replacement, a step with a flag that has none is left out. Unchanged when the
    version or the registry is unknown."""
    if registry is None or not version:
        return steps
    release = registry.nearest(version)
    out = []
    for step in steps:
        for name in dict.fromkeys(FLAG_RE.findall(step)):
            status = registry.check(name, release)
            if status.exists:
                continue
            replacement = (status.replacement or "").split()
            if len(replacement) != 1:   # no single flag to use instead: the step does not apply
                step = None
                break
            step = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", replacement[0], step)
        if step:
            out.append(step)
    return out
