"""Generic error lines: lines that many unrelated problems print.

`Caught signal 11`, `CUDA error: an illegal memory access was encountered`, `Capture cuda graph
failed:`, `KVTransferError`, `CUDA out of memory`, `NCCL error`, `Error building extension` — each
is the last word of dozens of different failures. Such a line says *that* something failed, not
*why*; it can never carry a fix on its own. The progress lines every healthy startup prints
(`Init torch distributed begin.`, `Load weight begin.`) are generic too: they say where a log
stopped. The decision (`assistant/decision.py`) asks for what makes a case specific when an
entry matched only lines like these.
"""

from __future__ import annotations

import re
from functools import lru_cache

# a step of the numbered hint list SGLang prints after a failure ("1. set --mem-fraction-static to a
# smaller value", "4. disable CUDA graph by --disable-cuda-graph"): advice, never the error itself
SOLUTION_STEP = r"^\s*\d\.\s*(?:set|disable)\s"
# the flags such a step names are SGLang's suggestions, not what the user turned on
SOLUTION_STEP_RE = re.compile(SOLUTION_STEP, re.I)
# a step that says to turn something off names every optional feature SGLang can think of, on or
# not ("disable torch compile by not using --enable-torch-compile" under any capture failure); a step
# that says to lower a setting names one every launch has
DISABLE_STEP_RE = re.compile(r"^\s*\d\.\s*disable\s", re.I)
# the notes PyTorch prints under every CUDA error it raises, whichever it is (a device-side assert,
# an illegal memory access, a launch failure)
TORCH_CUDA_NOTES = ("CUDA kernel errors might be asynchronously reported",
                    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions")
GENERIC_RE = re.compile(
    r"Caught signal \d+|Segmentation fault|SIGSEGV|SIGABRT|SIGBUS|Fatal Python error|core dumped|"
    r"\bAborted\b|address not mapped to object(?: at address)?|signal \d+|"
    r"CUDA error|HIP error|cudaError\w*|hipError\w*|an illegal memory access was encountered|"
    r"illegal instruction was encountered|unspecified launch failure|device-side assert triggered|"
    rf"misaligned address|{TORCH_CUDA_NOTES[0]}.*|"
    rf"{TORCH_CUDA_NOTES[1]}.*|no kernel image is available for execution on the device|"
    rf"{TORCH_CUDA_NOTES[2]}\.?|"
    r"Capture (?:prefill )?cuda graph failed:?|Possible solutions:?|"
    r"KVTransferError(?:\([^)]*\))?|Failed to get kvcache from prefill instance|(?:could|might) be dead|"
    # torch's allocator message, on every backend it is built for (ROCm prints HIP, MUSA, NPU)
    r"(?:CUDA|HIP|MUSA|XPU|NPU) out of memory\..*|OutOfMemoryError|out of memory|OOM|"
    # torch lists every process on the GPU under each OOM, this one included: who holds memory,
    # not that another process is the cause
    r"Process \d+ has [\d.]+ [KMGT]i?B memory in use\.?|"
    r"NCCL error\w*(?: in: \S+)?|\(?run with NCCL_DEBUG=\w+ for details\)?|nccl\w*Error|unhandled (?:system|cuda) error|ncclInternalError|"
    # torch's gloss of an NCCL result code, printed under every failure with that code: the
    # `NCCL WARN` and `Last error:` lines say which call failed
    r"System call \(e\.g\. socket, malloc\) or external library call failed or device error\.?|"
    r"It can be also caused by unexpected exit of a remote peer.*|"
    r"Error building extension|ninja: build stopped: subcommand failed\.?|CalledProcessError|"
    r"collect2: error: ld returned 1 exit status|"
    r"Scheduler hit an exception|(?:Scheduler or DataParallelController|DataParallelController|Scheduler)(?= \d| terminated)|terminated with -?\d+|Received sigquit from a child process?\.?|"
    r"It usually means (?:the|one) child failed\.?|SIGQUIT received\.?(?: signum=\w+, frame=\w+\.?)?|^Message:|Child process unexpectedly failed|Killed|SIGKILL|"
    r"Health check failed|(?:Connection|Read|Request) (?:refused|reset|timed out|closed)(?: by peer)?|"
    # gloo's socket layer, where a surviving rank notices that another rank died
    r"\[[^\]\s]*gloo/transport/tcp/\w+\.cc:\d+\]|"
    # an HTTP client that reached no server, or a proxy with nothing behind it: says the server was
    # not there, never why
    r"All connection attempts failed|\b50[234] (?:Service Unavailable|Bad Gateway|Gateway Time-?out)|"
    # urllib3's words for the same (requests prints them for any server it cannot reach)
    r"Failed to establish a new connection|\[Errno -?\d+\]|(?:urllib3\.exceptions\.)?(?:NewConnectionError|MaxRetryError)|"
    r"<[\w.]+ object at 0x[0-9a-f]+>|"
    r"timed out|Timeout|Watchdog caught collective operation timeout(?::? WorkNCCL\((?:[^()]|\([^()]*\))*\)(?: ran for \d+ milliseconds before timing out\.?)?)?|AssertionError|"
    r"Triton Error \[CUDA\]|Exception in thread \S+|Traceback \(most recent call last\)|"
    # uvicorn's line over any exception a request handler raised
    r"Exception in ASGI application|"
    # torch.compile's wrapper over whatever its backend raised, and the advice it prints under
    # every such failure: the error it quotes after "raised:" is the one that says why
    r"(?:torch\._dynamo\.exc\.)?BackendCompilerFailed(?::? (?:backend=)?'?[\w.]+'? raised:?)?|"
    r"You can suppress this exception and fall back to eager by setting:?|"
    r"torch\._dynamo\.config\.suppress_errors = True|"
    # SGLang's report that a scheduler child died, whatever killed it (the exit code, if any, says why)
    r"Rank \d+ scheduler is dead\. Please check if there are relevant logs\.?|"
    # and its watchdog's notice (0.5.10+) that a child (`scheduler_3`, `detokenizer`) exited: the
    # exit code says how (-9 killed from outside, -11 a segfault, 1 an exception), the child's own
    # log above says why
    r"Subprocess \w+ \(pid=\d+\) crashed with exit code -?\d+\.?(?: Triggering SIGQUIT for cleanup\.*)?|"
    # torch's shape and index checks: any model, kernel or request with a wrong size prints them
    r"The size of tensor a \(\d+\) must match the size of tensor b \(\d+\) at non-singleton dimension \d+|"
    r"index -?\d+ is out of bounds for dimension \d+ with size \d+|"
    r"(?:/pytorch/)?aten/src/ATen/native/cuda/\w+\.cu:\d+: [\w()]+: block: \[[\d,]+\], thread: \[[\d,]+\] |"
    r"Assertion `[^`]*(?:index out of bounds|srcIndex < srcSelectDimSize|ind < ind_dim_size)[^`]*` failed\.?|"
    r"Please (?:check|see) the (?:error messages? above|log)|Initialization failed|"
    # the warm-up's own check, over any status its request got (a proxy's 502, a crashed scheduler's 500)
    r"assert res\.status_code == 200\b.*|"
    # progress lines every healthy startup prints: they say where a log stopped, never why
    r"(?:Init (?:torch distributed|parallel) (?:begin|ends?)|Load weight (?:begin|end))\.?(?: (?:avail mem|mem usage)=[\d.]+ ?GB)?|"
    r"Capture (?:piecewise )?cuda graph (?:begin|end)\.?|Using model weights format|Memory pool end\.?|"
    # the "Possible solutions:" block SGLang prints under every CUDA graph capture failure
    rf"{SOLUTION_STEP}.*$",
    re.I)
# what may stand around the generic part without making the line specific
NOISE_RE = re.compile(r"https?://\S+|\burl\b|"   # where a client was sending: never what failed
                      r"\b(?:[\w.]*(?:Error|Exception)|RuntimeError|raise|error|failed|at|the|of|with|to|is|"
                      r"was|in|on|by|for|a|an|and|process|rank|tp|gpu|device|<\w+>)\b|[^\w]+|\b0x[0-9a-f]+\b|\b\d+\b",
                      re.I)
MAX_SPECIFIC_WORDS = 2


@lru_cache(maxsize=8192)
def is_generic(line: str) -> bool:
    """True for a line whose content is one of the generic failure phrases above (plus class
    names, numbers, addresses and at most two other words)."""
    if not GENERIC_RE.search(line):
        return False
    return len(specific_words(line)) <= MAX_SPECIFIC_WORDS


def specific_words(line: str) -> list[str]:
    """What a line says beyond the generic failure phrases and the noise around them."""
    return NOISE_RE.sub(" ", GENERIC_RE.sub(" ", line)).split()
