"""What torch's out-of-memory message says about the GPU at the moment of failure.

PyTorch's allocator prints the device's capacity, what was free, what this process held and what
every other process on the device held (from NVML), and how much of its own share was allocated,
reserved but unused (fragmentation) or taken by CUDA-graph pools. Those numbers tell apart causes
that share the words "CUDA out of memory": another job holding the GPU, SGLang's own pools filling
it, one huge allocation. The KB entries explain causes; this module only reads the numbers, so the
reading holds for any OOM, known or not, on CUDA, ROCm (HIP) or MUSA builds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from assistant.failure_kind import kinds_in
from assistant.paste_cache import per_analysis
from assistant.wording import Sentence, in_language

if TYPE_CHECKING:   # for type hints only: the KB schema imports this module, and stays light
    from assistant.trace import Analysis

# whose memory filled the GPU: what an entry about an out-of-memory declares (`gpu_memory_holder:`)
# and what the numbers of the user's message may establish
THIS_PROCESS, OTHER_PROCESSES = "this-process", "other-processes"
MEMORY_HOLDERS = (THIS_PROCESS, OTHER_PROCESSES)
# this process holding this share of the used memory filled the GPU itself
OWN_SHARE = 0.8
# ... or this share, when every other process on it holds no more than a CUDA context
CONTEXTS_BESIDE_SHARE = 0.5

_UNITS = {"bytes": 1 / 2**30, "B": 1 / 2**30, "KiB": 1 / 2**20, "MiB": 1 / 2**10, "GiB": 1.0, "TiB": 2.0**10}
_SIZE = r"(\d+(?:\.\d+)?) ?(bytes|B|KiB|MiB|GiB|TiB)"
_OOM_RE = re.compile(r"\b(?:CUDA|HIP|MUSA|XPU|NPU) out of memory\. Tried to allocate " + _SIZE)
# torch >= 2.1 ("capacty" is 2.1's spelling): "GPU 0 has a total capacity of 23.53 GiB of which 20.38 MiB is free."
_CAPACITY_RE = re.compile(r"GPU (\d+) has a total capac(?:i)?ty of " + _SIZE + r" of which " + _SIZE + r" is free")
# torch < 2.1 and torch_npu: "(GPU 0; 79.15 GiB total capacity; 75.20 GiB already allocated; 1.50 GiB
# free; ...)", torch_npu with "44.10 GiB current active;" between
_OLD_RE = re.compile(r"\((GPU|NPU|XPU) (\d+); " + _SIZE + r" total capacity;(?: [^;()]*;)*? " + _SIZE + r" free")
_THIS_RE = re.compile(r"this process has " + _SIZE + r" memory in use")
_OTHER_RE = re.compile(r"Process (\d+) has " + _SIZE + r" memory in use")
_POOLS_RE = re.compile(r"with " + _SIZE + r" allocated in private pools")
_UNUSED_RE = re.compile(_SIZE + r" is reserved by PyTorch but unallocated")

# another process holding at least this much of the device (GiB, and share of capacity) is not a
# CUDA context or a monitoring tool: it is a job using the memory SGLang planned for
OTHERS_MIN_GIB = 1.0
OTHERS_MIN_SHARE = 0.15
# one request for this share of the device is a single tensor, not a pool running dry
HUGE_SHARE = 0.25
# reserved-but-unallocated memory this large against the request is fragmentation
FRAGMENTED_RATIO = 1.0


def _gib(number: str, unit: str) -> float:
    return float(number) * _UNITS[unit]


@dataclass(frozen=True)
class GpuMemory:
    """The numbers of one out-of-memory message, in GiB (None where the message does not say)."""
    line: str                                   # the message as the user has it
    device: str                                 # GPU, or NPU / XPU as torch_npu / XPU builds say
    gpu: int | None
    requested: float
    capacity: float | None
    free: float | None
    this_process: float | None                  # None when torch could not tell its own process
    others: tuple[tuple[int, float], ...]        # (pid, GiB) of the other processes torch listed
    graph_pools: float | None = None
    unused_reserved: float | None = None
    # the OOM arose in SGLang's tokenizer process (an image processor on the GPU): the other
    # process holding the GPU is SGLang's own scheduler, not a job to stop
    beside_own_scheduler: bool = False

    @property
    def others_total(self) -> float:
        return sum(gib for _, gib in self.others)

    def others_hold_memory(self) -> bool:
        """Another process holds a real share of the device on its own: a job using the memory,
        not the CUDA contexts (about 0.5-2 GiB each) that SGLang's other ranks or its tokenizer
        open on GPU 0. Without 'this process' (torch inside a container often cannot match its
        own PID) the largest listed process is taken to be this one."""
        if not self.capacity or self.beside_own_scheduler:
            return False
        sizes = sorted((gib for _, gib in self.others), reverse=True)
        if self.this_process is None:
            sizes = sizes[1:]
        return bool(sizes) and sizes[0] >= max(OTHERS_MIN_GIB, OTHERS_MIN_SHARE * self.capacity)

    def holder(self) -> str | None:
        """Whose memory filled the GPU, when the numbers say: other processes, this one, or None."""
        if self.others_hold_memory():
            return OTHER_PROCESSES
        if not self.capacity or self.free is None:
            return None
        used = self.capacity - self.free
        if self.this_process is not None:
            own = self.this_process
        elif self.others:   # in a container torch lists its own process as a PID: the largest
            own = max(gib for _, gib in self.others)
        else:
            return None
        if used <= 0:
            return None
        # no other process holds a job's share (checked above): the rest are CUDA contexts, such as
        # the ones the job's other tensor-parallel ranks open on GPU 0, so this process filled it
        return THIS_PROCESS if own >= OWN_SHARE * used or (self.others and own >= CONTEXTS_BESIDE_SHARE * used) else None

    def reading(self, language: str = "en") -> str:
        """The numbers and what they rule in, in one or two sentences, in the reader's language."""
        where = f"{self.device} {self.gpu}" if self.gpu is not None else None
        facts = [Sentence(f"a {_fmt(self.requested)} allocation failed on {where or 'the ' + self.device}",
                          f"在 {where or self.device} 上申请 {_fmt(self.requested)} 失败")]
        if self.capacity is not None:
            free = self.free is not None
            facts[0] = Sentence(facts[0] + f" ({_fmt(self.capacity)} in total" + (f", {_fmt(self.free)} free)" if free else ")"),
                                facts[0].zh + f"（共 {_fmt(self.capacity)}" + (f"，空闲 {_fmt(self.free)}）" if free else "）"))
        if self.this_process is not None:
            facts.append(Sentence(f"this process held {_fmt(self.this_process)}", f"本进程占用 {_fmt(self.this_process)}"))
        if self.others:
            listed = ", ".join(f"process {pid} {_fmt(gib)}" for pid, gib in self.others[:4])
            listed_zh = ", ".join(f"进程 {pid} {_fmt(gib)}" for pid, gib in self.others[:4])
            more = len(self.others) - 4
            own = self.this_process is not None
            facts.append(Sentence(
                f"{'other processes' if own else 'processes on it'} held {_fmt(self.others_total)} "
                f"({listed}{f' and {more} more' if more > 0 else ''})",
                f"{'其他进程' if own else '这块卡上的进程'}占用 {_fmt(self.others_total)}"
                f"（{listed_zh}{f' 等另外 {more} 个' if more > 0 else ''}）"))
            if self.beside_own_scheduler:
                facts.append(Sentence("the error arose in SGLang's tokenizer process, so those include SGLang's own "
                                      "scheduler with its weights and KV cache",
                                      "错误出在 SGLang 的 tokenizer 进程里，所以这些进程包括 SGLang 自己的 scheduler（含权重和 KV cache）"))
        if self.graph_pools:
            facts.append(Sentence(f"CUDA-graph pools {_fmt(self.graph_pools)}", f"CUDA graph 内存池 {_fmt(self.graph_pools)}"))
        if self.unused_reserved:
            facts.append(Sentence(f"{_fmt(self.unused_reserved)} reserved by PyTorch but unallocated",
                                  f"PyTorch 已预留但未分配 {_fmt(self.unused_reserved)}"))
        english = "; ".join(facts) + "."
        reading = Sentence(english[0].upper() + english[1:], "；".join(f.zh for f in facts) + "。")
        verdict = self.verdict()
        if verdict:
            reading = Sentence(f"{reading} {verdict}", reading.zh + verdict.zh)
        return in_language(reading, language)

    def query_words(self) -> str:
        """The verdict in the words an operator would write, for retrieval: the numbers say it,
        the KB's entries and reports say it in words."""
        if self.others_hold_memory():
            return "another process holds most of the GPU memory, this process uses little"
        if self.capacity and self.requested >= HUGE_SHARE * self.capacity:
            return "one very large allocation, a single huge tensor"
        if self._fragmented():
            return "memory fragmentation, reserved but unallocated memory"
        return ""

    def _fragmented(self) -> bool:
        return (self.unused_reserved is not None and self.requested > 0
                and self.unused_reserved >= FRAGMENTED_RATIO * self.requested
                and (self.free is None or self.free < self.requested))

    def verdict(self) -> Sentence | None:
        """What the numbers alone establish, or None when they do not single out a cause."""
        if self.others_hold_memory():
            return Sentence("Other processes hold a large share of this GPU: find them with `nvidia-smi "
                            "--query-compute-apps=pid,process_name,used_memory --format=csv` and stop them or "
                            "move SGLang to a free GPU (CUDA_VISIBLE_DEVICES); if the GPU is shared on purpose "
                            "(a colocated trainer), that process must release its memory before SGLang runs.",
                            "其他进程占用了这块 GPU 的很大一部分：用 `nvidia-smi --query-compute-apps=pid,process_name,"
                            "used_memory --format=csv` 找到它们，停掉它们或把 SGLang 换到空闲的 GPU 上"
                            "（CUDA_VISIBLE_DEVICES）；如果是有意共用这块 GPU（同机部署的训练进程），那个进程必须先释放显存，"
                            "SGLang 才能运行。")
        if self.capacity and self.requested >= HUGE_SHARE * self.capacity:
            share = f"{self.requested / self.capacity:.0%}"
            return Sentence(f"One request for {_fmt(self.requested)} ({share} of the "
                            f"{self.device}) is a single large tensor, not many small ones: at startup the KV-cache "
                            "pool itself (a smaller --mem-fraction-static shrinks it), while serving the logits or "
                            "activations of a very long input (shorter inputs or a smaller --chunked-prefill-size).",
                            f"一次申请 {_fmt(self.requested)}（占 {self.device} 的 {share}）是单个大张量，而不是许多小张量："
                            "启动时是 KV cache 池本身（调小 --mem-fraction-static 会缩小它），服务时是超长输入的 logits 或"
                            "激活（缩短输入或调小 --chunked-prefill-size）。")
        if self._fragmented():
            return Sentence(f"PyTorch had {_fmt(self.unused_reserved)} reserved but unused, more than the request: "
                            "the memory is fragmented rather than exhausted.",
                            f"PyTorch 已预留但未使用 {_fmt(self.unused_reserved)}，比这次申请还多：显存是碎片化了，而不是用完了。")
        return None


def _fmt(gib: float | None) -> str:
    if gib is None:
        return "?"
    return f"{gib * 1024:.0f} MiB" if gib < 1 else f"{gib:.2f} GiB"


def parse_oom(text: str) -> GpuMemory | None:
    """The numbers of the out-of-memory message in `text`, or None when it has none."""
    oom = _OOM_RE.search(text)
    if oom is None:
        return None
    tail = text[oom.start():]
    gpu = capacity = free = None
    device = "GPU"
    if m := _CAPACITY_RE.search(tail):
        gpu, capacity, free = int(m.group(1)), _gib(*m.group(2, 3)), _gib(*m.group(4, 5))
    elif m := _OLD_RE.search(tail):
        device, gpu, capacity, free = m.group(1), int(m.group(2)), _gib(*m.group(3, 4)), _gib(*m.group(5, 6))
    this = _THIS_RE.search(tail)
    pools, unused = _POOLS_RE.search(tail), _UNUSED_RE.search(tail)
    return GpuMemory(
        line=text.strip(), device=device, gpu=gpu, requested=_gib(*oom.group(1, 2)), capacity=capacity, free=free,
        this_process=_gib(*this.group(1, 2)) if this else None,
        others=tuple((int(p), _gib(n, u)) for p, n, u in _OTHER_RE.findall(tail)),
        graph_pools=_gib(*pools.group(1, 2)) if pools else None,
        unused_reserved=_gib(*unused.group(1, 2)) if unused else None)


def paste_gpu_memory(analysis: "Analysis") -> GpuMemory | None:
    """The out-of-memory numbers of the error that stopped the run (the most detailed message
    when several ranks printed one); read once per paste, for retrieval, decision and answer."""
    return per_analysis("gpu_memory", analysis, _gpu_memory)


def _gpu_memory(analysis: "Analysis") -> GpuMemory | None:
    found = [m for e in analysis.stopping_errors if (m := parse_oom(e.text)) is not None]
    if not found:
        return None
    memory = max(found, key=lambda m: (m.capacity is not None, len(m.others), m.this_process is not None))
    if memory.others and _in_tokenizer_process(analysis.frame_files):
        return replace(memory, beside_own_scheduler=True)
    return memory


# SGLang's tokenizer process: the request's tokenization and its multimodal processors (which may
# run an image processor on GPU 0, beside the scheduler that holds the model)
TOKENIZER_PROCESS_RE = re.compile(r"sglang[/\\]srt[/\\](?:managers[/\\]tokenizer_manager|multimodal[/\\]processors[/\\])")
SCHEDULER_PROCESS_RE = re.compile(r"sglang[/\\]srt[/\\](?:managers[/\\](?:scheduler|tp_worker)|model_executor[/\\])")


def _in_tokenizer_process(frame_files) -> bool:
    return (any(TOKENIZER_PROCESS_RE.search(f) for f in frame_files)
            and not any(SCHEDULER_PROCESS_RE.search(f) for f in frame_files))


# SGLang's own log after loading: "Load weight end. type=..., dtype=..., avail mem=2.10 GB, mem usage=21.43 GB."
_LOAD_END_RE = re.compile(r"Load weight end\..*?avail mem=(\d+(?:\.\d+)?) ?GB, mem usage=(\d+(?:\.\d+)?) ?GB")
# the weights taking this share of what was free before loading leave no room worth a KV cache
WEIGHTS_FILL_SHARE = 0.85
MAX_FRACTION = 0.95   # the highest --mem-fraction-static worth naming (activations need the rest)


@dataclass(frozen=True)
class LoadMemory:
    """What SGLang logged after loading the weights on one GPU (GB, as SGLang prints them)."""
    weights: float
    left: float

    @property
    def before(self) -> float:
        return self.weights + self.left

    def fills(self) -> bool:
        return self.before > 0 and self.weights >= WEIGHTS_FILL_SHARE * self.before

    def reading(self, language: str = "en") -> str:
        reading = Sentence(f"Loading the weights took {self.weights:.2f} GB per GPU; {self.left:.2f} GB of the "
                           f"{self.before:.2f} GB free before loading was left.",
                           f"加载权重每张 GPU 用了 {self.weights:.2f} GB；加载前空闲的 {self.before:.2f} GB 里还剩 "
                           f"{self.left:.2f} GB。")
        if self.fills():
            most = max(0.0, MAX_FRACTION * self.before - self.weights)
            share = f"{self.weights / self.before:.0%}"
            reading = Sentence(
                f"{reading} The weights alone take {share} of it: even --mem-fraction-static "
                f"{MAX_FRACTION} would leave the KV cache about {most:.2f} GB, so raising it is no fix; use "
                "more GPUs (--tp), a quantized or smaller checkpoint, or GPUs with more memory.",
                f"{reading.zh}仅权重就占了其中的 {share}：即使 --mem-fraction-static {MAX_FRACTION}，KV cache 也只剩约 "
                f"{most:.2f} GB，所以调大它不是解决办法；请用更多 GPU（--tp）、量化或更小的 checkpoint，或显存更大的 GPU。")
        return in_language(reading, language)


def paste_load_memory(analysis: "Analysis") -> LoadMemory | None:
    """SGLang's after-loading memory line, when the paste failed on memory and the weights filled
    the GPU (the one reading that changes the advice: raising --mem-fraction-static cannot help)."""
    # an out of memory, not any line naming memory ("The memory capacity is unbalanced")
    if not any("out of memory" in kinds_in(e.text) for e in analysis.stopping_errors[:5]):
        return None
    for line in analysis.originals.values():
        m = _LOAD_END_RE.search(line)
        if m:
            load = LoadMemory(weights=float(m.group(2)), left=float(m.group(1)))
            return load if load.fills() else None
    return None


def holder_conflict(meta: dict, analysis: "Analysis") -> str | None:
    """The entry is about an out-of-memory of one holder; the user's numbers show the other."""
    wanted = meta.get("gpu_memory_holder")
    memory = paste_gpu_memory(analysis) if wanted else None
    shown = memory.holder() if memory is not None else None
    if not shown or shown == wanted:
        return None
    if shown == OTHER_PROCESSES:
        return Sentence(f"Your out-of-memory message shows other processes holding {_fmt(memory.others_total)} of the "
                        "GPU; this entry is about SGLang's own memory use.",
                        f"你的显存不足报错显示其他进程占用了 {_fmt(memory.others_total)} 显存；这个条目讲的是 SGLang 自身的显存占用。")
    return Sentence("Your out-of-memory message shows this process holding most of the GPU's used memory; this "
                    "entry is about memory held by other processes.",
                    "你的显存不足报错显示已用显存大多被这个进程自己占着；这个条目讲的是其他进程占用的显存。")


def holder_agrees(meta: dict, analysis: "Analysis") -> bool:
    """The user's numbers show other processes holding the GPU, as the entry says. Only that
    holder tells a case apart: this process filling the GPU is what nearly every OOM shows, so it
    agrees with every entry about one (the activations, the graphs, the logprobs, the KV pool)."""
    wanted = meta.get("gpu_memory_holder")
    memory = paste_gpu_memory(analysis) if wanted == OTHER_PROCESSES else None
    return memory is not None and memory.holder() == wanted


def load_memory_json(load: LoadMemory | None) -> dict | None:
    if load is None:
        return None
    return {"weights_gb": load.weights, "left_gb": load.left, "weights_fill_gpu": load.fills(),
            "summary": load.reading()}


def gpu_memory_json(memory: GpuMemory | None) -> dict | None:
    if memory is None:
        return None
    return {"gpu": memory.gpu, "requested_gib": round(memory.requested, 3),
            "capacity_gib": _round(memory.capacity), "free_gib": _round(memory.free),
            "this_process_gib": _round(memory.this_process),
            "other_processes": [{"pid": pid, "gib": round(gib, 3)} for pid, gib in memory.others],
            "graph_pools_gib": _round(memory.graph_pools),
            "unused_reserved_gib": _round(memory.unused_reserved),
            "others_hold_memory": memory.others_hold_memory(), "summary": memory.reading()}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
