"""What the user is running, read from the lines of a paste: SGLang / torch / CUDA / flashinfer
versions, the GPU and hardware family, the launch flags (from the command, a ServerArgs dump or
flags pasted alone), the SGLang names the user wrote, and whether the paste is from SGLang at all
or from another program.

`EnvironmentReader.read` sees each line once (bounded memory); `environment()` gives the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant.commands import launch_command_flags
from assistant.components import MUSA_HINT
from assistant.generic_lines import SOLUTION_STEP_RE
from assistant.version_words import bare_sglang_version, compared_versions, failing_version

_VERSION = r"v?(\d+\.\d+(?:\.\d+)?(?:\.?post\d+|rc\d+|\.dev\d+)?)"
SGLANG_VERSION_RES = [
    # "worked with sglang 0.4.6.post5; after pip install -U sglang (now 0.5.3)": the release it runs now
    re.compile(r"\bsglang\b[^\n]{0,80}?\bnow\s+(?:on\s+|at\s+)?v?(\d+\.\d+\.\d+(?:\.post\d+|rc\d+)?)\b", re.I),
    # "upgraded sglang from 0.4.6 to 0.5.9": the release it runs now
    re.compile(r"\bsglang\s+(?:from\s+v?\d+\.\d+\S*\s+)?to\s+" + _VERSION + r"\b", re.I),
    re.compile(r"\bsglang(?![-_](?:router|kernel))\s*(?:==|:|\s)\s*" + _VERSION + r"\b", re.I),
    re.compile(r"\bsglang(?![-_](?:router|kernel))\s+version\s*:?\s*" + _VERSION, re.I),
    # the images SGLang and AMD publish name the release in the tag (`rocm/sgl-dev:v0.4.9.post2-rocm630-mi30x`)
    re.compile(r"(?:lmsysorg|rocm)/(?:sglang|sgl-dev)[\w-]*:v?(\d+\.\d+\.\d+(?:\.post\d+)?)", re.I),
    re.compile(r"\bSGLang\s+v(\d+\.\d+\.\d+(?:\.post\d+)?)"),
]
PIP_SHOW_SGLANG_RE = re.compile(r"\bpip3?\s+show\s+sglang(?![-_\w])|^\s*Name:\s*sglang\s*$", re.I)
PIP_SHOW_VERSION_RE = re.compile(r"^Version:\s*" + _VERSION + r"\s*$")
# torch's releases are 1.x and 2.x: NGC's `nvcr.io/nvidia/pytorch:25.09-py3` names a container
TORCH_VERSION_RES = [re.compile(r"\b(?:torch|PyTorch)\s*(?:==|:|\s|version\s*:?\s*)\s*v?([12]\.\d+(?:\.\d+)?(?:\+\w+)?)(?![\d-])",
                                re.I)]
CUDA_TOOLKIT_RES = [
    re.compile(r"Cuda compilation tools, release (\d+\.\d+)"),
    re.compile(r"\bNVCC\b[^\n]*?release (\d+\.\d+)"),
    re.compile(r"\bCUDA(?:[ _]?(?:toolkit|runtime|Version|version))?\s*[:=]?\s*(\d{2}\.\d)\b"),
    re.compile(r"/usr/local/cuda-(\d{2}\.\d)\b"),
]
TORCH_CUDA_RE = re.compile(r"\+cu(\d{2,3})\b")
# NCCL's own banner (`NCCL version 2.21.5+cuda12.4`, also in torch's `NCCL error ..., NCCL version
# 2.27.3`), the pip wheel (`nvidia-nccl-cu12 2.27.3`) or the user's words (`NCCL 2.27.3`)
NCCL_VERSION_RES = [re.compile(r"\bNCCL(?:\s+version)?\s*:?\s*v?(\d+\.\d+\.\d+)\b"),
                    re.compile(r"\bnvidia-nccl-cu\d+\s*(?:==|\s)\s*(\d+\.\d+\.\d+)\b")]
# Ascend's CANN toolkit: `pip list`-style `cann   8.5.0`, `CANN version: 8.3.RC1`, an image tag `-cann8.2.rc1-`
CANN_VERSION_RES = [re.compile(r"(?<![\w.+])cann(?:[-_ ]?version)?\s*(?:==|:|\s)?\s*v?(\d+\.\d+(?:\.(?:rc)?\d+)?)(?![\w])",
                               re.I)]
FLASHINFER_VERSION_RES = [re.compile(r"\bflashinfer(?:[-_]python)?\s*(?:==|:|\s|version\s*:?\s*)\s*" + _VERSION, re.I)]
# NVIDIA's data-center cards by the numbers they are sold under (`A10G`, `L40S`, `H20`, `B200`, a
# market's variant `B30A`), not any letter and digits: `#L112` (a source line in an Ascend report),
# Intel's Arc `B580` and `B70` are no such card; nor is a name right after `#`, a link's line anchor
# (`memory_pool.py#L40`)
DATA_CENTER_GPU = r"(?:(?:A(?:10|16|30|40|100|800)|B[123]00|H(?:20|[128]00)|L(?:20|40))[A-Z]?|B\d0[A-Z])"
GPU_RE = re.compile(
    r"(?:(?<![A-Za-z0-9_#])|(?<=\d[x×]))(?:NVIDIA\s+|AMD\s+|Instinct\s+)*(?:GeForce\s+|Tesla\s+|Radeon\s+(?:PRO\s+)?)?"
    r"(RTX\s?(?:PRO\s|Pro\s)?\d{4}(?:\s?Ti)?|GB(?:10|[23]00)|DGX\s?Spark|" + DATA_CENTER_GPU + r"(?:[- ](?:SXM\d?|PCIe|NVL)(?:\d-\d+GB)?)?(?:[- ]\d+GB)?|"
    r"T4|L4|V100(?:[- ]SXM\d)?(?:[- ]\d+GB)?|MI\d{3}[A-Z]?|MI\d{2}[xX]|W7900|RX\s?\d{4}\s?XT|R9700|MTT\s?S\d{3,4}|"
    r"Ascend\s?\d{3}[A-Z]?\d?|Atlas\s?\d{3}[A-Z]?\d?)"
    # a plural ("two RTX 4090s") or Chinese right after the name ("在H20上面") still ends it
    r"(?=s?(?![A-Za-z0-9_]))"
)
# data-center GPU names that mean nothing else in a paste: read without a GPU word ("P/D H200，P use hicache").
# Shorter names (`L4`, `A10`, `T4`) need one: `L4` is also a line number, `A10` a paper size
NVIDIA_STANDALONE_GPU = r"GB[23]00|[ABH][18]00|H200|H20|B[23]00"
STANDALONE_GPU_RE = re.compile(rf"(?:{NVIDIA_STANDALONE_GPU}|MI3\d{{2}}X)$")
# the GPU an AMD image is built for (`lmsysorg/sglang:v0.5.10-rocm720-mi35x`, `rocm/sgl-dev:...-mi30x`)
IMAGE_GPU_RE = re.compile(r"(?:lmsysorg|rocm)/(?:sglang|sgl-dev)[\w-]*:[\w.-]*-(mi\d{2}x)\b", re.I)
# a GPU named in a sentence with no GPU word: "on A800.", "8*H20", "在H20上面"
ON_GPU_RE = re.compile(r"(?:\b(?:on|with|using|across)\s+(?:an?\s+|one\s+|two\s+|four\s+|eight\s+)?|"
                       r"\d\s?[*×x]\s?|[在用]\s?)$", re.I)
# a data-center card a user types in lower case in their words ("启动后v100无法解析", "on a100"): only
# names no other word, path or model name ends or starts with (`/data/h100/`, `ckpt_v100`,
# `llama-a100-tuned`, `api/v100` are not cards)
# (ASCII letters and digits only: a Chinese word stands right against the name)
LOWER_CASE_GPU_RE = re.compile(r"(?<![A-Za-z0-9_#/.\-])(v100|a100|a800|h100|h800|h200)(?![A-Za-z0-9_/\-]|\.[A-Za-z0-9])")
# a consumer card counted in Chinese without its "RTX": "两张 4090"
# (or by its number of cards: "双卡3090", "4卡4090")
COUNTED_CARD_RE = re.compile(r"(?:(?:\d+|[一两二三四五六七八九十])\s?[张块台]|(?:\d+|[单双两一二三四五六七八九十])\s?卡)"
                             r"\s?(?:RTX\s?)?([2345]0[5-9]0(?:\s?Ti)?)(?!\d)")
# a model name's active-parameter part (`Qwen3-235B-A22B`, `Qwen3-30B-A3B`): not an A-series GPU.
# A name followed by "+" is a requirement (torch: "compute capability >= 9.0 or 8.9, or ROCm MI300+"), not the user's GPU
MODEL_NAME_PART_RE = re.compile(r"\d+(?:\.\d+)?[BbMm]-$")
GPU_CONTEXT_RE = re.compile(r"GPU|NVIDIA|DGX|AMD|Instinct|Radeon|MTT|Ascend|Atlas|[×x]\s?\d|\d\s?[×x]|device|card|显卡|卡", re.I)
# mini-sglang (`python -m minisgl`) is a separate small engine: its flags and code are not SGLang's
MINI_SGLANG = r"\bmini[-_ ]?sglang\b|\bminisgl\b"
MINI_SGLANG_RE = re.compile(MINI_SGLANG, re.I)
# words that name an activity, not a program: "训练" (training), a training job, fine-tuning. A
# word inside a model name or path (`Llama-3.3-70B-Instruct-abliterated-finetuned-GPTQ-Int8`,
# `/ckpt/finetuned/`) names what was trained earlier, not a job running now.
ACTIVITY_WORDS = r"训练|training (?:job|run|script)|(?<![A-Za-z0-9/.\-])fine-?tun(?!\w*[/\-])"
# Another program's own log or stack trace: SGLang fixes do not apply unless a signature matches.
OTHER_SOFTWARE_RE = re.compile(
    r"\bvllm\b|\bvLLM\b|text[-_]generation[-_](?:launcher|router|inference|server)|\bTGI\b|llama\.cpp|llama-server|\bollama\b|"
    r"tensorrt_llm|TensorRT-LLM|tritonserver|\bMindIE\b|\blmdeploy\b|\bDeepSpeed\b|\bjava\.lang\.|\bat com\.|"
    # other CUDA projects whose source builds print the same compiler errors, and other MLX servers
    r"\bxformers\b|transformer_engine|TransformerEngine|FasterTransformer|\bvmlx\b|"
    # local LLM apps that run their own engine (not ones that can run SGLang or another engine as their
    # backend: GPUStack, LocalAI, Xinference, text-generation-webui), and programs that run CUDA
    # kernels of their own: a GPU stress test, mamba_ssm
    r"\bLM ?Studio\b|\blocalGPT\b|\bgpt4all\b|\bkoboldcpp\b|"
    r"\bmlc[-_]llm\b|\bgpu[-_]burn\b|\bmamba_ssm\b|"
    r"\bnpm ERR|node_modules|webpack|\bpanic: |goroutine \d+|\bcargo\b|rustc|\bkeras\b|tensorflow|"
    r"\bjax\b|\bcelery\b|\bdjango\b|\bpostgres|\bmysql\b|\bnginx\b|CrashLoopBackOff|ImagePullBackOff|"
    r"\bredis\b|\bkafka\b|MPS backend|\bdiffusers\b|ComfyUI|Trainer\b|trainer\.train|accelerate launch|"
    r"DistributedDataParallel|\bFSDP\b|pytorch_lightning|lightning\.|loss\.backward|optimizer\.step|"
    # a training script named as what failed (`sft_train.py`, `train_ddp.py`, `finetune.py`): the
    # program is the user's training job (not `pretrained.py`: the word must stand alone in the name)
    r"(?<![\w.-])(?:\w+_)?(?:train|finetune|sft)(?:_\w+)?\.py\b|"
    + ACTIVITY_WORDS + "|" + MINI_SGLANG,
    re.I)
ACTIVITY_WORD_RE = re.compile(ACTIVITY_WORDS, re.I)


def named_programs(other_software) -> tuple[str, ...]:
    """The other programs among what `OTHER_SOFTWARE_RE` found, without its activity words."""
    return tuple(name for name in other_software if not ACTIVITY_WORD_RE.search(name))


def program_names(other_software) -> tuple[str, ...]:
    """The programs a reader is told the paste comes from: the named ones, without the user's
    own "not SGLang" (which names no program)."""
    return tuple(name for name in named_programs(other_software) if name != NOT_SGLANG_NAME)


# "没有用 sglang" / "not using sglang": a mention that says the paste is NOT from SGLang
NEGATED_SGLANG_RE = re.compile(r"(?:没有用|没用|不是|并非|没有使用|not using|not|without|no|isn't|wasn't)\s*(?:the\s+)?sglang", re.I)
# the user saying outright that SGLang is not what ran: "(not SGLang)", "no SGLang involved", "没有用 sglang"
NOT_SGLANG_RE = re.compile(r"\((?:not|no)\s+SGLang\b|\bno\s+SGLang\s+(?:involved|at all|here)\b|"
                           r"\bwithout\s+(?:using\s+)?SGLang\b|\bnot\s+using\s+SGLang\b|\bnothing to do with SGLang\b|"
                           r"\b(?:is\s+not|isn'?t|was\s+not|wasn'?t)\s+(?:from|in|printed by|raised by)\s+SGLang\b|"
                           r"\bnot\s+(?:from|printed by|raised by)\s+SGLang\b|"
                           # "not SGLang's problem" blames something else in an SGLang run: not this
                           r"没有?(?:使)?用\s*sglang|不是\s*sglang\s*(?:的(?!问题|bug|锅|原因|错)|报的|打印的|产生的)|"
                           r"[和与跟]\s*sglang\s*无关", re.I)
# the key other_software keeps for it; never shown as a program's name (`program_names` leaves it out)
NOT_SGLANG_NAME = "a program you say is not SGLang"
USER_NAME_RE = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*|\b(?:SGLANG|SGL)_[A-Z0-9_]*[A-Z0-9]\b")
# `sgl.Runtime(`, `sgl.gen(`: the frontend API, imported as `import sglang as sgl`
SGLANG_HINT_RE = re.compile(r"sglang|sgl[_-]kernel|\bsgl\.[A-Za-z_]|launch_server|/srt/|\bSGLANG_|\bSGL_|\[TP\d+|\bTP\d+\]|"
                            r"Scheduler hit an exception|DataParallelController|detokenizer", re.I)
HARDWARE_HINTS = [
    ("musa", re.compile(MUSA_HINT + r"|mtgpu|\bMTT\b|\bmccl\b|mtshmem|mt_peermem|Moore Threads|摩尔线程", re.I)),
    # an image tag spells CANN with its version (`sglang:main-cann8.5.0-a3`)
    # HDK is Ascend's driver and firmware kit, HCCL its collective library, 910A/B/C its chips
    ("ascend", re.compile(r"\bAscend\b|\bNPU\b|npu-smi|\bCANN(?:\b|(?=\d))|\bAtlas \d|\bHDK\b|\bHCCL(?:\b|_)|"
                          r"\b910[ABC]\d?\b|昇腾", re.I)),
    # the HSA runtime's own fault report (`Memory access fault by GPU node-5 (Agent handle: ...)`) is ROCm's
    # and the amdgpu kernel driver's (`amdgpu 0000:05:00.0: amdgpu: [gfxhub0] retry page fault ...`)
    ("amd", re.compile(r"\bROCm(?:\b|(?=\d))|\bHIP\b|hipError|\bMI\d{3}|aiter|\bgfx9\d\w\b|HSA_STATUS|rocm-smi|"
                       r"Memory access fault by GPU node-\d|\bamdgpu\b", re.I)),
    # not torch's `torch.cuda` API or the words "CUDA graph": ROCm builds of torch keep both (HIP graphs
    # are torch.cuda graphs), so a ROCm log is full of them
    # (and NVIDIA's kernel driver, `NVRM: Xid (PCI:0000:3b:00): 79, ...`); its cards by the names that
    # mean nothing else (`H100`, `B200`; not `A10` or `L4`, which a paste also uses for other things)
    ("nvidia", re.compile(r"\bNVIDIA\b|(?<!torch[./])\bCUDA\b(?![\s-]*graphs?\b)|\bnccl\b|nvidia-smi|"
                          rf"\b(?:{NVIDIA_STANDALONE_GPU})\b|\bNVRM\b", re.I)),
    # Google's TPUs (SGLang-JAX): the device flag, the runtime library, a slice's name (`tpu-v6e-4`,
    # `TPU v5e`); not the word "TPU" alone, which also names a count of tokens
    ("tpu", re.compile(r"--device[= ]tpu\b|\blibtpu\b|\btpu[-_ ]?v[4-7][ep]?\b|\bsgl[-_]jax\b", re.I)),
    # SGLang's CPU backend: its device flag, its switch, a report's `Device: CPU` line, its Xeon AMX
    # attention backend (`intel_amx`, `intel_amx_backend.py`, used only with `--device cpu`), the
    # check that picks it (`cpu_has_amx_support`), a ServerArgs dump's `device='cpu'`; not "CPU" alone (host memory, CPU offload and CPU
    # threads run beside every GPU), nor code's `device="cpu"` (a traceback's source line that pins a
    # host buffer on a GPU server), nor "AMX" or "oneDNN" alone (KTransformers runs AMX CPU experts
    # beside GPUs; Intel's XPUs use oneDNN)
    ("cpu", re.compile(r"--device[= ]cpu\b|\bSGLANG_USE_CPU_ENGINE=1\b|^\s*(?:[-*]\s*)?device\s*[:：]\s*cpu\b|"
                       r"\bintel_amx(?:_backend)?\b|\bcpu_has_amx_support\b|\bServerArgs\(.*?\bdevice='cpu'", re.I)),
]
# Cheap prefilters (plain substring tests, ~0.1 us each) in front of the case-insensitive regexes
# above, which cost 20-100 us a line: a 200 MB log has ~1.5M lines. Each tuple lists lower-case
# substrings one of which every match contains; KEEP THEM IN STEP WITH THE REGEX WHEN EDITING IT.
# They hold for ASCII lines; a non-ASCII line (re.I folds some Unicode letters onto ASCII ones)
# always runs the regex.
# The tests run once per line *shape* (every ASCII digit made a 5: the thousands of decode-batch
# lines of a log have a few dozen shapes), so keys with digits are written in that form.
HARDWARE_KEYS = {
    "musa": ("musa", "mthreads", "mtgpu", "mtt", "mccl", "mtshmem", "mt_peermem", "moore threads"),
    "ascend": ("ascend", "npu", "cann", "atlas", "hdk", "hccl", "555a", "555b", "555c"),
    "amd": ("rocm", "hip", "mi", "aiter", "gfx5", "hsa_status", "memory access fault by gpu node", "amdgpu"),
    "nvidia": ("nvidia", "cuda", "nccl", "h555", "a555", "h55", "b555", "nvrm"),
    "tpu": ("tpu", "sgl-jax", "sgl_jax"),
    "cpu": ("cpu", "intel_amx"),
}
OTHER_SOFTWARE_KEYS = (
    "vllm", "generation", "tgi", "llama", "ollama", "tensorrt", "tritonserver", "mindie", "lmdeploy", "deepspeed",
    "xformers", "transformer_engine", "transformerengine", "fastertransformer", "vmlx",
    "lm studio", "lmstudio", "localgpt", "gpt5all", "koboldcpp",   # (gpt4all in shape form)
    "mlc-llm", "mlc_llm", "gpu-burn", "gpu_burn", "mamba_ssm",
    "java.lang.", "at com.", "npm err", "node_modules", "webpack", "panic: ", "goroutine", "cargo",
    "rustc", "keras", "tensorflow", "jax", "celery", "django", "postgres", "mysql", "nginx",
    "backoff", "redis", "kafka", "mps backend", "diffusers", "comfyui", "trainer", "accelerate launch",
    "distributeddataparallel", "fsdp", "lightning", "loss.backward", "optimizer.step", "training ",
    "train", "finetune", "sft",
    "fine", "minisgl", "mini-sglang", "mini_sglang", "mini sglang",
)
SGLANG_HINT_KEYS = ("sgl", "launch_server", "/srt/", "tp", "scheduler", "dataparallelcontroller", "detokenizer")
# every GPU name GPU_RE captures contains one of these, in shape form (case-sensitive, like GPU_RE)
GPU_NAME_HINT_RE = re.compile(r"[ABHL]55|[vah]555|L5|RTX|RX|GB5|T5|V555|MI5|W5555|R5555|MTT|Ascend|Atlas|DGX|[张块台卡]\s?5555")
CUDA_TOOLKIT_KEYS = ("CUDA", "NVCC", "Cuda compilation", "/usr/local/cuda-")   # case-sensitive
DIGITS_TO_FIVE = str.maketrans("0123456789", "5555555555")
MAX_SHAPES = 50000
_CUDA, _GPU, _SGLANG_HINT, _OTHER = 1, 2, 4, 8
_HARDWARE_BIT = {name: 16 << i for i, name in enumerate(HARDWARE_KEYS)}
_ALL = (1 << (4 + len(HARDWARE_KEYS))) - 1


# the only HARDWARE_HINTS alternatives that name a digit literally (gfx9.., H100, 910B, ...), in shape form
HARDWARE_DIGIT_KEYS = ("gfx5", "h55", "a555", "b555", "555a", "555b", "555c")


def _possible(shape: str) -> tuple[int, str | None]:
    """Which of the regexes below could match a line of this shape (a bit each), and the hardware
    vote of every line of this shape ("" for none; None when it depends on the digits)."""
    low = shape.lower()
    if not low.isascii():
        return _ALL, None   # re.I folds some Unicode letters onto ASCII ones: no shortcut
    bits = _CUDA if any(key in shape for key in CUDA_TOOLKIT_KEYS) else 0
    bits |= _GPU if GPU_NAME_HINT_RE.search(shape) else 0
    bits |= _SGLANG_HINT if any(key in low for key in SGLANG_HINT_KEYS) else 0
    bits |= _OTHER if any(key in low for key in OTHER_SOFTWARE_KEYS) else 0
    for name, keys in HARDWARE_KEYS.items():
        bits |= _HARDWARE_BIT[name] if any(key in low for key in keys) else 0
    vote = None
    if not any(key in low for key in HARDWARE_DIGIT_KEYS):
        # what is left of the regexes treats every digit alike (\b, \d, \w): the shape decides
        vote = hardware_vote(shape, bits)
    return bits, vote


# a list of choices or of platforms names every option, not the user's hardware (`invalid choice:
# 'fa4' (choose from ..., 'ascend')`, `No accelerator (CUDA, XPU, HPU, NPU, MUSA, MPS) is available`)
CHOICES_RE = re.compile(r"choose from|invalid choice|Choices:|must be one of|one of \[", re.I)


def hardware_vote(text: str, bits: int) -> str:
    """The hardware family a line names ("" for none): one family, outside a list of choices."""
    named = [name for name, regex in HARDWARE_HINTS if bits & _HARDWARE_BIT[name] and regex.search(text)]
    if len(named) != 1 or CHOICES_RE.search(text):
        return ""
    return named[0]
SERVER_ARGS_KEYS = (
    "model_path", "host", "port", "tp_size", "dp_size", "ep_size", "pp_size", "nnodes", "enable_dp_attention", "attention_backend",
    "mem_fraction_static", "chunked_prefill_size", "cuda_graph_max_bs", "disaggregation_mode",
    "disaggregation_transfer_backend", "quantization", "kv_cache_dtype", "enable_torch_compile",
    "disable_cuda_graph", "moe_a2a_backend", "deepep_mode", "speculative_algorithm", "context_length",
)
# values that are a field's default in every release: a dump prints them whatever the user set
SERVER_ARGS_DEFAULTS = {"host": ("127.0.0.1",), "port": ("30000",)}
# a fragment of a ServerArgs dump the user copied without its `ServerArgs(` (`ep_size=32,
# moe_a2a_backend='deepep', deepep_mode='auto'`): two of its fields at least
SERVER_ARGS_FIELD_RE = re.compile(r"(?<![\w.])(?:" + "|".join(SERVER_ARGS_KEYS) + r")=[^,)\s]")
KWARGS_FIELD_RE = re.compile(r"['\"](\w+)['\"]:\s*")


@dataclass(frozen=True)
class Environment:
    sglang_version: str | None = None
    torch_version: str | None = None
    cuda_version: str | None = None
    flashinfer_version: str | None = None
    nccl_version: str | None = None
    cann_version: str | None = None   # Ascend's toolkit
    gpu: str | None = None
    hardware: str | None = None  # nvidia / amd / musa / ascend
    flags: tuple[str, ...] = ()  # "--tp 8", "--enable-dp-attention", as the user wrote them
    launch_command: str | None = None
    sglang_releases: str | None = None   # no version line: what the traceback's frames allow
    # what dated it: "traceback" (its SGLang files), "message" (the releases that print its SGLang
    # message) or "both"
    sglang_releases_by: str | None = None

    def to_dict(self) -> dict:
        return {"sglang_version": self.sglang_version, "torch_version": self.torch_version,
                "cuda_version": self.cuda_version, "flashinfer_version": self.flashinfer_version,
                "nccl_version": self.nccl_version, "cann_version": self.cann_version,
                "gpu": self.gpu, "hardware": self.hardware, "flags": list(self.flags),
                "launch_command": self.launch_command, "sglang_releases": self.sglang_releases,
                "sglang_releases_by": self.sglang_releases_by}


def _first(res, text):
    for regex in res:
        m = regex.search(text)
        if m:
            return m.group(1)
    return None


@dataclass
class EnvironmentReader:
    """Collects environment facts line by line; `environment()` resolves them into an Environment."""

    env: dict = field(default_factory=dict)
    hardware_votes: dict[str, int] = field(default_factory=dict)
    other_software: dict[str, int] = field(default_factory=dict)
    user_names: dict[str, int] = field(default_factory=dict)
    mentions_sglang: bool = False
    server_args: str | None = None
    shapes: dict[str, tuple] = field(default_factory=dict)   # line shape -> _possible(shape)
    pip_show_left: int = 0   # lines of `pip show sglang` output still to read for its Version line

    def shape_vote(self, shape: str) -> str | None:
        """When read() takes nothing from a line of this shape but a hardware vote, that vote ("" for
        none), the same for every line of the shape from now on; None when it may take more. Each
        test of read() is decided by the shape's letters, by a bit of _possible, or by a fact
        already found for good (mentions_sglang)."""
        known = self.shapes.get(shape)
        if known is None:
            known = _possible(shape)
        possible, vote = known
        low = shape.lower()
        # the SGLang hint only counts until SGLang is mentioned once ("TP0", "http" hold "tp")
        settled = _SGLANG_HINT if self.mentions_sglang else 0
        if (vote is None or possible & (_CUDA | _GPU | _SGLANG_HINT | _OTHER) & ~settled or "sglang" in low
                or "torch" in low or "flashinfer" in low or "--" in shape or "SGL" in shape
                or "ServerArgs(" in shape or "': " in shape or "nccl" in low or "cann" in low or "-mi" in low
                or _server_args_fragment_hint(shape)):
            return None
        return vote

    def add_vote(self, vote: str) -> None:
        self.hardware_votes[vote] = self.hardware_votes.get(vote, 0) + 1

    def read(self, line: str, shape: str | None = None) -> None:
        """Take in one line; `shape` is the line with every ASCII digit made a 5, if the caller
        has it already."""
        env = self.env
        low = line.lower()
        shape = line.translate(DIGITS_TO_FIVE) if shape is None else shape
        known = self.shapes.get(shape)
        if known is None:
            known = _possible(shape)
            if len(self.shapes) < MAX_SHAPES:
                self.shapes[shape] = known
        possible, vote = known
        if ("sglang" in low or "sgl-dev:" in low) and "sglang_version" not in env:
            v = _first(SGLANG_VERSION_RES, line)
            if v:
                env["sglang_version"] = v
            elif PIP_SHOW_SGLANG_RE.search(line):
                self.pip_show_left = 4
        elif self.pip_show_left:
            # `pip show sglang` prints the version on a line of its own: "Version: 0.4.10"
            self.pip_show_left -= 1
            version = PIP_SHOW_VERSION_RE.match(line.strip())
            if version and "sglang_version" not in env:
                env["sglang_version"], self.pip_show_left = version.group(1), 0
        if ("torch" in low) and "torch_version" not in env:
            v = _first(TORCH_VERSION_RES, line)
            if v and not v.startswith(("0.", "1.0")):
                env["torch_version"] = v
        # CUDA_TOOLKIT_RES are case-sensitive: "cuda graph" in every decode line cannot match
        if possible & _CUDA:
            v = _first(CUDA_TOOLKIT_RES, line)
            if v and ("cuda_version" not in env or "release" in line):
                env["cuda_version"] = v
        if "flashinfer" in low and "flashinfer_version" not in env:
            v = _first(FLASHINFER_VERSION_RES, line)
            if v:
                env["flashinfer_version"] = v
        if "nccl" in low and "nccl_version" not in env:
            v = _first(NCCL_VERSION_RES, line)
            if v:
                env["nccl_version"] = v
        if "cann" in low and "cann_version" not in env:
            v = _first(CANN_VERSION_RES, line)
            if v:
                env["cann_version"] = v
        if "gpu" not in env and "-mi" in low:
            image = IMAGE_GPU_RE.search(line)
            if image:
                env["gpu"] = image.group(1).upper()[:-1] + "x"
        if "gpu" not in env and possible & _GPU:
            context = GPU_CONTEXT_RE.search(line)
            m = next((m for m in GPU_RE.finditer(line) if not MODEL_NAME_PART_RE.search(line, 0, m.start())
                      and not line.startswith("+", m.end())
                      and (context or ON_GPU_RE.search(line[:m.start()]) or STANDALONE_GPU_RE.match(m.group(1)))),
                     None)
            counted = None if m else COUNTED_CARD_RE.search(line)
            lower = None if m or counted else LOWER_CASE_GPU_RE.search(line)
            if m:
                env["gpu"] = " ".join(m.group(1).split())
            elif counted:
                env["gpu"] = "RTX " + " ".join(counted.group(1).split())
            elif lower:
                env["gpu"] = lower.group(1).upper()
        if vote is None:
            vote = hardware_vote(line, possible)
        if vote:
            self.add_vote(vote)
        if ("--" in line or "SGL" in line) and len(self.user_names) < 200 and not SOLUTION_STEP_RE.match(line):
            for name in USER_NAME_RE.findall(line):
                self.user_names[name.split("=")[0]] = 1
        if not self.mentions_sglang and possible & _SGLANG_HINT \
                and SGLANG_HINT_RE.search(MINI_SGLANG_RE.sub(" ", NEGATED_SGLANG_RE.sub(" ", line))):
            self.mentions_sglang = True
        if len(self.other_software) < 8 and possible & _OTHER:
            for m in OTHER_SOFTWARE_RE.finditer(line):
                self.other_software[m.group(0).lower()] = 1
        if "sglang" in low and len(self.other_software) < 8 and NOT_SGLANG_RE.search(line):
            self.other_software[NOT_SGLANG_NAME] = 1
        if "ServerArgs(" in line and self.server_args is None:
            self.server_args = line[line.index("ServerArgs("):][:20000]
        elif self.server_args is None and _server_args_fragment_hint(line) and len(SERVER_ARGS_FIELD_RE.findall(line)) >= 2:
            self.server_args = line[:20000]
        elif self.server_args is None and "': " in line:
            # an engine's kwargs printed as a dict (`{'tp_size': 4, 'mem_fraction_static': 0.9}`):
            # the same fields as a ServerArgs dump, in a dict's spelling
            fields = KWARGS_FIELD_RE.sub(r"\1=", line[:20000])
            if len(SERVER_ARGS_FIELD_RE.findall(fields)) >= 2:
                self.server_args = fields

    def environment(self, prose: list[str], launch: str | None, loose_flags: str | None,
                    sentences: tuple[str, ...] = ()) -> Environment:
        """The versions, GPU and flags found; `prose` is the user's own lines (a bare version in
        them is SGLang's), `launch` the launch command seen, `loose_flags` flags pasted alone,
        `sentences` lines read as errors that are sentences (a one-line report's words)."""
        env = dict(self.env)
        if "sglang_version" not in env:
            bare = bare_sglang_version(prose)
            if bare:
                env["sglang_version"] = bare
        words = " ".join((*prose, *sentences))
        compared = compared_versions(words)
        if compared and env.get("sglang_version") in (None, *compared):
            # "worked on 0.5.5, broken on 0.5.6": the user's problem is the release that fails
            env["sglang_version"] = failing_version(words, compared)
        if "cuda_version" not in env and env.get("torch_version"):
            m = TORCH_CUDA_RE.search(env["torch_version"])
            if m:
                digits = m.group(1)
                env["cuda_version"] = f"{digits[:-1]}.{digits[-1]}"
        flags: list[str] = []
        if launch:
            flags = [f if v is None else f"{f} {v}" for f, v in _without_cut_flag(launch, launch_command_flags(launch))]
        elif self.server_args:
            flags = _server_args_flags(self.server_args)
        elif loose_flags:
            flags = [f if v is None else f"{f} {v}"
                     for f, v in launch_command_flags("sglang.launch_server " + loose_flags)]
        hardware = max(self.hardware_votes, key=self.hardware_votes.get) if self.hardware_votes else None
        if env.get("gpu") and gpu_vendor(env["gpu"]) == "amd":
            hardware = "amd"
        elif env.get("gpu") and hardware == "amd" and gpu_vendor(env["gpu"]) == "nvidia":
            # the NVIDIA GPU the paste names outweighs ROCm words (a ROCm torch installed by mistake,
            # an old `/opt/rocm` hipcc on an H200 box); other families' votes stand, since an NVIDIA
            # name is also what an unknown card's name reads as
            hardware = "nvidia"
        return Environment(
            sglang_version=env.get("sglang_version"), torch_version=env.get("torch_version"),
            cuda_version=env.get("cuda_version"), flashinfer_version=env.get("flashinfer_version"),
            nccl_version=env.get("nccl_version"), cann_version=env.get("cann_version"),
            gpu=env.get("gpu"), hardware=hardware, flags=tuple(flags), launch_command=launch,
        )


def gpu_vendor(gpu: str) -> str:
    """The hardware family of a GPU name GPU_RE read."""
    if gpu.startswith(("MI", "W7900", "RX", "R9700")):
        return "amd"
    if gpu.startswith("MTT"):
        return "musa"
    if gpu.startswith(("Ascend", "Atlas")):
        return "ascend"
    return "nvidia"


def _without_cut_flag(command: str, pairs: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """The command's (flag, value) pairs without a last flag that the end of the pasted line cut
    mid-word (`... --model-path /m --contex`): what the user ran had another flag there, which
    this one would misname."""
    if not pairs or pairs[-1][1] is not None or not command.rstrip().endswith(pairs[-1][0]):
        return pairs
    from assistant.flags import FlagRegistry   # the registry is read only for such a command

    try:
        cut = FlagRegistry.load().cut_short(pairs[-1][0])
    except (OSError, ValueError):
        return pairs   # no registry (a stripped install): the flag stays as written
    return pairs[:-1] if cut else pairs


def _server_args_fragment_hint(line: str) -> bool:
    """Whether a line may hold a fragment of a ServerArgs dump (a cheap test before the regex)."""
    return "=" in line and ("_size=" in line or "_backend=" in line or "model_path=" in line or "_mode=" in line)


def _server_args_flags(server_args: str) -> list[str]:
    flags = []
    for key in SERVER_ARGS_KEYS:
        m = re.search(rf"\b{key}=([^,)]+)", server_args)
        if not m:
            continue
        value = m.group(1).strip().rstrip("}").strip().strip("'\"")   # (a kwargs dict's last item ends in `}`)
        if value in ("None", "False", "0", "1", "auto", "") or value in SERVER_ARGS_DEFAULTS.get(key, ()):
            continue  # defaults say nothing about the setup
        flag = "--" + key.replace("_", "-")
        flags.append(flag if value == "True" else f"{flag} {value}")
    return flags


