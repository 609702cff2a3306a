"""Where an asynchronous GPU kernel fault arises, as the traceback's frames tell it.

`CUDA error: an illegal memory access was encountered` (error 700), a device-side assert, a
misaligned address or an unspecified launch failure is raised by the first call after the faulting
kernel that waits for the GPU, not by the kernel: PyTorch says so under the error ("might be
asynchronously reported at some other API call"). The innermost frame is then where the fault was
noticed. When its source line waits for the GPU (`next_token_ids.tolist()`, `.item()`,
`stream.synchronize()`), the kernel that faulted ran before it, in the batch the log shows last
(the decode or prefill forward, a CUDA-graph capture); when it launches work itself, the fault may
still be an earlier kernel's. Only with `CUDA_LAUNCH_BLOCKING=1` (`AMD_SERIALIZE_KERNEL=3` on ROCm)
set by the user is the innermost frame the faulting call.

A device-side assert is no memory fault: a check inside a kernel failed, and the kernel printed
which one (`IndexKernel.cu:93: operator(): block: [0,0,0], thread: [64,0,0] Assertion `-sizes[i]
<= index && index < sizes[i] && "index out of bounds"` failed.`) above the traceback. An index
check means an index beyond its table: in serving, most often a token id at or past the embedding's
vocabulary (a tokenizer or draft model whose vocabulary differs from the model's) or a slot index
past its pool. The note names the check when the paste shows it, and where to find it when not.

The GPU driver reports such a fault too, in the kernel log (`dmesg`): NVIDIA's `NVRM: Xid (PCI:...): 79,
...`, amdgpu's `[gfxhub0] retry page fault ...`, a GPU reset. That line is an error of the paste like
the process's own (`DRIVER_FAULT_RE`), ranked below the Python exceptions, below the process's own
report of the fault and below what the process printed after it (`trace._driver_fault_ranks`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.wording import Sentence

# the GPU driver's own report of a fault, from the kernel log (`dmesg`): NVIDIA's Xid, amdgpu's page
# fault or reset. It is the error of a GPU crash, seen from the driver; the process's log says which kernel
DRIVER_FAULT_RE = re.compile(r"\bNVRM: Xid\b|\bamdgpu\b.*\b(?:page fault|PROTECTION_FAULT|GPU reset|timeout)\b", re.I)

ASYNC_FAULT_RE = re.compile(
    r"an illegal memory access was encountered|cudaErrorIllegalAddress|misaligned address|"
    r"unspecified launch failure|device-side assert triggered|an illegal instruction was encountered|"
    r"hipErrorIllegalAddress|Memory access fault by GPU", re.I)
# the user ran with kernels serialised; PyTorch's own hint ("consider passing ...") is no such run
BLOCKING_RE = re.compile(r"CUDA_LAUNCH_BLOCKING\s*=\s*['\"]?1|AMD_SERIALIZE_KERNEL\s*=\s*['\"]?3")
HINT_RE = re.compile(r"consider passing|For debugging", re.I)
FRAME_RE = re.compile(r'^\s*File "[^"]*", line [^,]*, in (\S+)')
# a call that waits for the GPU: a copy to the host or an explicit synchronisation
SYNC_CALL_RE = re.compile(r"\.(?:tolist|item|cpu|numpy|synchronize|wait)\(|\.to\(\s*['\"]cpu|torch\.cuda\.synchronize|"
                          r"\bsynchronize\(\)")
SYNC_FUNCTIONS = frozenset({"synchronize", "tolist", "item", "wait", "wait_stream"})
CAPTURE_RE = re.compile(r"capture", re.I)
BATCH_RE = re.compile(r"\b(Decode|Prefill) batch\b")


TORCH_FILE_RE = re.compile(r"[/\\]torch[/\\]")


def _source_of_innermost(analysis, root: str) -> tuple[str | None, str | None]:
    """(function, source line) of the last frame printed before the root error line; a frame of
    torch's own (`torch/cuda/streams.py`, `super().synchronize()`) gives way to its caller, whose
    line says which of the program's calls waited (`self.scheduler_stream.synchronize()`)."""
    lines = analysis.masked_lines
    try:
        end = lines.index(root)
    except ValueError:
        return None, None
    frames = []
    for i in range(end):
        frame = FRAME_RE.match(lines[i])
        if frame:
            source = lines[i + 1] if i + 1 < end and not FRAME_RE.match(lines[i + 1]) else None
            frames.append((frame.group(1), source, TORCH_FILE_RE.search(analysis.original(lines[i])) is not None))
    if not frames:
        return None, None
    function, source, in_torch = frames[-1]
    if in_torch and function in SYNC_FUNCTIONS:
        caller = next((f for f in reversed(frames[:-1]) if not f[2]), None)
        if caller is not None and caller[1]:
            return function, caller[1]
    return function, source


def _where_batch(masked_lines: Sequence[str], root: str, functions: Sequence[str]) -> Sentence | None:
    """The work the faulting kernel belonged to: a CUDA-graph capture its frames show, else the
    last batch the log shows before the error."""
    if any(CAPTURE_RE.search(function) for function in functions):
        return Sentence("while capturing CUDA graphs at start-up", "启动时捕获 CUDA graph 的过程中")
    end = masked_lines.index(root) if root in masked_lines else len(masked_lines)
    for line in reversed(masked_lines[:end]):
        batch = BATCH_RE.search(line)
        if batch:
            return (Sentence("in the forward pass of a decode batch (the log's last batch line)",
                             "在 decode batch 的前向计算中（日志最后一条 batch 行）")
                    if batch.group(1) == "Decode" else
                    Sentence("in the forward pass of a prefill batch (the log's last batch line)",
                             "在 prefill batch 的前向计算中（日志最后一条 batch 行）"))
    return None


# the line a CUDA kernel prints when its assert fails: `<file>.cu:<line>: <function>: block: [...],
# thread: [...] Assertion `<condition>` failed.` (once per failing thread)
KERNEL_ASSERT_RE = re.compile(r"([\w-]+\.cuh?):\d+: .{0,200}?Assertion `(.+?)` failed")
DEVICE_ASSERT_RE = re.compile(r"device-side assert(?:ion)? triggered", re.I)
# PyTorch's bounds checks in its indexing, gather and index_select kernels
INDEX_CHECK_RE = re.compile(r"index out of bounds|srcIndex < srcSelectDimSize|ind < ind_dim_size|idx_dim < index_size")


def assert_note(analysis) -> Sentence | None:
    """Which check a device-side assert failed, read from the kernel's own assert line; where to
    find that line when the paste shows only `device-side assert triggered`; None for another error."""
    root = analysis.root_line
    if root is None:
        return None
    lines = [root.text, *(e.text for e in analysis.errors)]
    found = next((m for m in map(KERNEL_ASSERT_RE.search, lines) if m), None)
    if found is None and not DEVICE_ASSERT_RE.search(root.text):
        return None
    if found is None:
        return Sentence(
            "a device-side assert is a check inside a kernel that failed, not a memory fault: the kernel printed "
            "which check above the traceback (`<file>.cu:<line>: ... Assertion `<condition>` failed.`, once per GPU "
            "thread; `grep -m3 'Assertion' server.log`); an `index out of bounds` check there means a token id or "
            "slot index past its table, most often a vocabulary that differs between the tokenizer, a draft model "
            "and the model",
            "device-side assert 是内核里的一个检查没有通过，不是显存访问错误：内核在调用栈上方打印了是哪个检查"
            "（`<file>.cu:<line>: ... Assertion `<condition>` failed.`，每个 GPU 线程一行；`grep -m3 'Assertion' server.log`）；"
            "如果是 `index out of bounds` 检查，说明 token id 或 slot 下标超出了表的范围，最常见的是分词器、草稿模型和模型的词表不一致")
    kernel, condition = found.group(1), found.group(2)
    if INDEX_CHECK_RE.search(condition):
        return Sentence(
            f"the assert in `{kernel}` is PyTorch's bounds check of an index (`{condition}`): an index past its "
            "table reached an indexing kernel, in serving most often a token id at or past the embedding's "
            "vocabulary (a tokenizer or a draft model whose vocabulary differs from the model's) or a slot index "
            "past its pool",
            f"`{kernel}` 里的 assert 是 PyTorch 对下标的越界检查（`{condition}`）：有下标超出了表的范围，"
            "在推理服务中最常见的是 token id 达到或超过 embedding 的词表大小（分词器或草稿模型的词表与模型不一致），"
            "或 slot 下标超出了池的大小")
    return Sentence(f"the kernel's own assert in `{kernel}` failed: `{condition}`",
                    f"`{kernel}` 内核自己的 assert 没有通过：`{condition}`")


def fault_note(analysis) -> Sentence | None:
    """What the frames say of where an asynchronous kernel fault arises, and for a device-side
    assert which check failed; None for another error."""
    checked = assert_note(analysis)
    where = _where_noticed(analysis)
    if checked is None or where is None:
        return checked or where
    return Sentence(f"{checked}; {where}", f"{checked.zh}；{where.zh}")


def _where_noticed(analysis) -> Sentence | None:
    root = analysis.root_line
    if root is None or not ASYNC_FAULT_RE.search(root.text) or not analysis.failure_sites:
        return None
    lines = analysis.masked_lines
    said = [analysis.question, *(analysis.original(line) for line in lines)]
    if any(BLOCKING_RE.search(line) and not HINT_RE.search(line) for line in said):
        return Sentence("CUDA_LAUNCH_BLOCKING=1 was set, so the innermost frame is the call that faulted.",
                        "设置了 CUDA_LAUNCH_BLOCKING=1，所以最内层调用栈帧就是出错的那个调用。")
    function, source = _source_of_innermost(analysis, root.masked)
    functions = [function for _, function in analysis.failure_sites]
    where = _where_batch(lines, root.masked, functions)
    if (source and SYNC_CALL_RE.search(source)) or (function in SYNC_FUNCTIONS):
        call = f"`{source.strip()}`" if source else f"{function}()"
        en = (f"the innermost frame only noticed the fault: {call} waits for the GPU, and CUDA reports a kernel's "
              "fault at the next such wait. The kernel that faulted ran before it")
        zh = (f"最内层调用栈帧只是发现了这个错误：{call} 在等待 GPU，而 CUDA 会在下一次等待时才报告内核的错误。"
              "真正出错的内核在它之前就已运行")
        if where is not None:
            en, zh = f"{en}, {str(where)}", f"{zh}，{where.zh}"
        return Sentence(f"{en}; a rerun with CUDA_LAUNCH_BLOCKING=1 names it.",
                        f"{zh}；加上 CUDA_LAUNCH_BLOCKING=1 重跑一次即可定位到它。")
    en = ("without CUDA_LAUNCH_BLOCKING=1 the innermost frame is where the fault was reported, which may be an "
          "earlier kernel's on the same stream")
    zh = "没有设置 CUDA_LAUNCH_BLOCKING=1 时，最内层调用栈帧只是报告错误的位置，错误可能来自同一 stream 上更早的内核"
    if where is not None:
        en, zh = f"{en} ({str(where)})", f"{zh}（{where.zh}）"
    return Sentence(f"{en}; a rerun with CUDA_LAUNCH_BLOCKING=1 names the kernel.",
                    f"{zh}；加上 CUDA_LAUNCH_BLOCKING=1 重跑一次即可定位到出错的内核。")
