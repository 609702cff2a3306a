"""Components: which library or SGLang subsystem a piece of text is about.

The same generic line ("Caught signal 11", "an illegal memory access") is printed by failures in
many libraries; what tells two such cases apart is *where* the error arises. This module names
that place from text — an error line, a traceback's file paths, a native library in a backtrace —
with one table of components, so the user's failing component and the components a KB entry is
about are read the same way and can be compared.

Components come in two strengths: a `specific` component (nixl, DeepEP, flashinfer, ...) tells
cases apart; a `general` one (torch, CUDA, SGLang's scheduler) appears in almost every trace and
never counts as a conflict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from assistant.negation import denied, meant, only_denied


@dataclass(frozen=True)
class Component:
    name: str
    pattern: re.Pattern
    specific: bool = True
    family: str = ""    # components of one family do not conflict (ucx and nixl run together)
    # a user who names it in words means it; not so for words that are mostly part of a model's
    # name or a comparison ("Qwen2-VL-AWQ", "FP8", "works in transformers", "unlike vLLM")
    in_words: bool = True

    def found_in(self, text: str) -> bool:
        # a mention only inside the user's negation ("no DP attention", "不开 EAGLE") is not one
        return bool(self.pattern.search(text)) and meant(self.pattern, text)


# MUSA's own names: the word, its runtime's camel-case API (`musaGraphDebugDotPrint`, `musaMalloc`,
# `musaErrorMemoryAllocation`), torch's plugin (`torch_musa`), `MUSA_VISIBLE_DEVICES` and the
# driver's tool (`mthreads-gmi`); not a word that merely begins with the letters (`Musashi`)
MUSA_HINT = r"\bMUSA(?:\b|_)|(?-i:\bmusa[A-Z]\w*)|\btorch_musa\b|\bmthreads-gmi\b"


def _c(name: str, pattern: str, specific: bool = True, family: str = "", in_words: bool = True) -> Component:
    return Component(name, re.compile(pattern, re.I), specific, family or name, in_words)


# Order does not matter; names are what entries and answers show.
COMPONENTS: tuple[Component, ...] = (
    _c("nixl", r"\bnixl|libnixl", family="kv-transfer"),
    _c("ucx", r"\blibuc[spmt]\b|\bucs_\w+|\bucp_\w+|\bUCX\b|libucs", family="kv-transfer"),
    _c("mooncake", r"mooncake|transfer_engine|\bTransferEngine\b", family="kv-transfer"),
    _c("nccl", r"\bnccl|libnccl|NCCL WARN|NCCL INFO|ProcessGroupNCCL", family="collectives"),
    _c("rccl", r"\brccl\b|librccl", family="collectives"),
    _c("mccl", r"\bmccl\b", family="collectives", in_words=False),
    _c("custom-allreduce", r"custom_all_reduce|custom allreduce|CustomAllreduce|custom_ar", family="collectives"),
    _c("nvshmem", r"nvshmem|\bibgda\b|IBGDA", family="deepep"),
    _c("deepep", r"deep_ep|\bDeepEP\b|deepep", family="deepep"),
    _c("deepgemm", r"deep_gemm|DeepGEMM|deepgemm", family="deepgemm"),
    _c("flashinfer", r"flashinfer"),
    _c("flashattention", r"flash_attn|flash-attn|flashattention|\bfa3\b|sgl_kernel/flash_attn"),
    _c("sgl-kernel", r"sgl[_-]kernel|common_ops"),
    _c("triton", r"[/\\]triton[/\\]|\btriton\.(?:compiler|runtime|language)|TritonError|triton_kernels|"
                 r"triton\s+(?:kernel|compil)|\bAttrsDescriptor\b"),
    _c("torch-compile", r"torch[/\\._]_?(?:inductor|dynamo)|torch[._-]compile|TorchDynamo|\binductor\b"),
    _c("cutlass", r"cutlass", in_words=False),
    _c("cublas", r"CUBLAS_STATUS|cublas(?:Lt)?\w*", in_words=False),
    _c("cudnn", r"CUDNN_STATUS|cudnn", in_words=False),
    _c("flaggems", r"flag_gems|FlagGems", in_words=False),
    _c("aiter", r"\baiter\b", family="rocm"),
    _c("rocm", r"\bROCm\b|\bhip(?:Error|Malloc|Memcpy|Graph)\w*|\bHIP error|HSA_STATUS|amdgpu|\bgfx9\d\w\b|"
               r"\bMI\d{3}[A-Z]?\b|TensileLibrary|rocblas|hipblas", family="rocm"),
    _c("musa", MUSA_HINT + r"|mtgpu|mtshmem|\bMTT\b", family="musa"),
    _c("ascend", r"\bAscend\b|\bnpu\b|torch_npu|\bCANN\b|\bhccl\b", family="ascend"),
    # SGLang-JAX: another code base (TPU, XLA), not SGLang's CUDA runtime
    # (Google's TPU slices are named v5e-4, v6e-16, v4-8; Tunix and Pallas are JAX's RL library and kernels)
    _c("jax", r"sgl[_-]jax|sglang[_-]jax|\bjaxlib\b|[/\\]jax[/\\]|XlaRuntimeError|\blibtpu\b|\bTPU|"
              r"\bv(?:[567][ep]|4)-(?:4|8|16|32|64|128|256)\b|\btunix\b|\bpallas\b", family="jax",
       in_words=False),
    _c("xgrammar", r"xgrammar", family="grammar"),
    _c("outlines", r"\boutlines\b", family="grammar"),
    _c("llguidance", r"llguidance", family="grammar"),
    _c("transformers", r"[/\\]transformers[/\\]|\btransformers\b|AutoConfig|AutoTokenizer|PreTrainedTokenizer",
       in_words=False),
    # not SGLang's own processes named after it (tokenizer_manager.py, detokenizer_manager.py,
    # tokenizer_communicator_mixin.py): requests fail there for every kind of reason
    _c("tokenizer", r"tokeniz(?!er_manager|er_communicator)|chat[_ ]template|jinja", family="tokenizer",
       in_words=False),
    _c("vllm", r"\bvllm\b", family="vllm", in_words=False),
    _c("router", r"sglang[_-]router|sgl[_-]router|sgl-model-gateway|model_gateway|\breqwest\b|\bhyper::"),
    _c("ray", r"\bray\b[/\\.]|\bray\.|raylet", in_words=False),
    _c("decord", r"\bdecord\b", family="multimodal", in_words=False),
    _c("multimodal", r"multimodal|mm_utils|image_processor|processor_class|\bvision\b|qwen2_vl|qwen2_5_vl|"
                     r"\bpixel_values\b|mm_inputs", family="multimodal", in_words=False),
    _c("lora", r"\blora\b|lora_manager|lora_path|LoRA", family="lora"),
    _c("speculative", r"speculative|eagle|\bspec_info\b|draft[_ ]model|\bMTP\b|NEXTN", family="speculative"),
    _c("disaggregation", r"disaggregation|PD\s?分离|KVTransfer|kv_transfer|bootstrap[_ ]server|bootstrap_room|"
                         r"KVPoll|prefill[_ ]server|decode[_ ]server", family="kv-transfer"),
    # not the unquantized method every bf16 layer runs (`layers/quantization/unquant.py`,
    # `UnquantizedLinearMethod`): an OOM in its matmul is no quantization failure
    _c("quantization", r"(?<!un)quantiz(?!ation[/\\.]unquant\b)|\bfp8\b|\bfp4\b|mxfp4|nvfp4|\bawq\b|\bgptq\b|"
                       r"\bw8a8\b|compressed[-_]tensors|modelopt|marlin|block_n|block_k", family="quantization",
       in_words=False),
    _c("model-loader", r"model_loader|weight_utils|load_weights|safetensors|\.bin\b|weight_loader|"
                       r"hf_transfer|snapshot_download|huggingface_hub", family="model-loading", in_words=False),
    # DP attention: what a run turns on (`--enable-dp-attention`), never where an error arises, so
    # general; read so a user's "no DP attention" can speak against an entry about it
    _c("dp-attention", r"dp[_ -]?attention|\bDP[- ]attn\b|DP\s?注意力", specific=False),
    # not torch's OOM accounting, "allocated in private pools (e.g., CUDA Graphs)", on every OOM
    _c("cuda-graph", r"(?<!e\.g\., )cuda[_ ]graph|cuda_graph_runner|CudaGraph", specific=False),
    _c("torch", r"[/\\]torch[/\\]|\btorch\.", specific=False),
    _c("cuda", r"\bCUDA\b|libcuda|cudaError|cuda_runtime", specific=False),
    _c("sglang", r"sglang[/\\.]|\bSGLang\b|scheduler|tokenizer_manager|detokenizer", specific=False),
)
BY_NAME = {c.name: c for c in COMPONENTS}


@lru_cache(maxsize=16384)
def components_in(text: str) -> frozenset[str]:
    """Names of the components a text mentions (one line, a frame path, an entry's fields)."""
    if not text:
        return frozenset()
    return frozenset(c.name for c in COMPONENTS if c.found_in(text))


def named_in_order(text: str) -> list[str]:
    """The specific components a user's words name and mean (`in_words`), in the order they first
    name them (a report's title names what it is about before the details)."""
    found = []
    for name in specific(components_in(text)):
        if not BY_NAME[name].in_words:
            continue
        said = [m for m in BY_NAME[name].pattern.finditer(text) if not denied(text, m.start(), m.end())]
        if said:   # "No speculative decoding." names what the user does not use
            found.append((said[0].start(), name))
    return [name for _, name in sorted(found)]


def specific(names) -> frozenset[str]:
    return frozenset(n for n in names if BY_NAME[n].specific)


def families(names) -> frozenset[str]:
    return frozenset(BY_NAME[n].family for n in names)


def conflicts(user: frozenset[str], entry: frozenset[str]) -> frozenset[str]:
    """The user's specific components that an entry about `entry` does not cover, by family:
    an entry about NCCL says nothing about a crash inside UCX, one about Mooncake does (both move
    KV caches between servers, and the entry names the family)."""
    covered = families(entry)
    return frozenset(n for n in specific(user) if BY_NAME[n].family not in covered)


def components_denied(text: str) -> frozenset[str]:
    """The components a user's words say they do not run ("no DP attention", "not using EAGLE",
    "不开 dp attention"): named only inside such a negation. A component tried both ways ("with and
    without EAGLE") is run, so not among them, though it is no keyword either (`components_in`)."""
    if not text:
        return frozenset()
    return frozenset(c.name for c in COMPONENTS if only_denied(c.pattern, text))
