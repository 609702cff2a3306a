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

from assistant.commands import sglang_names
from assistant.kernel_fault import DRIVER_FAULT_RE
from assistant.wording import Sentence

GENERIC = (
    Sentence("Environment: `python3 -m sglang.check_env` (SGLang, torch, CUDA, flashinfer, GPU, driver).",
             "环境信息：`python3 -m sglang.check_env`（SGLang、torch、CUDA、flashinfer、GPU、驱动）。"),
    Sentence("The first error in the full server log, not the last lines: "
             "`grep -n -m1 -E 'Traceback|Error|error:' server.log` and the 30 lines before it.",
             "完整服务日志里的第一个错误，而不是最后几行：`grep -n -m1 -E 'Traceback|Error|error:' server.log` 及其前面 30 行。"),
    Sentence("The exact launch command (`python3 -m sglang.launch_server ...`) and the model: the flags "
             "decide which code paths run.",
             "确切的启动命令（`python3 -m sglang.launch_server ...`）和模型：参数决定走哪条代码路径。"),
)

# the environment step on hardware where CUDA and flashinfer are not what runs
ENVIRONMENT_ON = {
    "ascend": Sentence("Environment: `python3 -m sglang.check_env` and `npu-smi info` (SGLang, torch, torch_npu, "
                       "CANN, NPU driver).",
                       "环境信息：`python3 -m sglang.check_env` 和 `npu-smi info`（SGLang、torch、torch_npu、CANN、NPU 驱动）。"),
    "amd": Sentence("Environment: `python3 -m sglang.check_env` and `amd-smi version` or `rocm-smi --showdriverversion` "
                    "(SGLang, torch, ROCm, aiter, GPU, driver).",
                    "环境信息：`python3 -m sglang.check_env` 和 `amd-smi version` 或 `rocm-smi --showdriverversion`"
                    "（SGLang、torch、ROCm、aiter、GPU、驱动）。"),
    "tpu": Sentence("Environment: `pip show sglang-jax jax jaxlib libtpu` and the TPU type and topology (e.g. v6e-4).",
                    "环境信息：`pip show sglang-jax jax jaxlib libtpu`，以及 TPU 的型号和拓扑（例如 v6e-4）。"),
    "musa": Sentence("Environment: `python3 -m sglang.check_env` and `mthreads-gmi` (SGLang, torch, torch_musa, "
                     "MUSA toolkit, GPU, driver).",
                     "环境信息：`python3 -m sglang.check_env` 和 `mthreads-gmi`（SGLang、torch、torch_musa、MUSA 工具链、GPU、驱动）。"),
    "cpu": Sentence("Environment: `python3 -m sglang.check_env`, `lscpu` (the CPU model and whether it has AMX / "
                    "AVX-512) and `free -g`.",
                    "环境信息：`python3 -m sglang.check_env`、`lscpu`（CPU 型号，是否支持 AMX / AVX-512）和 `free -g`。"),
}


def environment_step(hardware: str | None) -> Sentence:
    """What to collect about the environment, for the hardware the paste runs on."""
    return ENVIRONMENT_ON.get(hardware or "", GENERIC[0])


# instead of "the first error in the log" when the user says the log shows none
QUIET_LOG = Sentence("Your log shows no error, so make it say more: restart with `--log-level debug` (and "
                     "`--log-requests` for wrong output), reproduce, and keep the lines around the moment it goes "
                     "wrong; for a hang, a `py-spy dump` of each scheduler process shows where it waits.",
                     "你的日志里没有报错，那就让它多说一些：加 `--log-level debug` 重启（输出不对时再加 "
                     "`--log-requests`），复现问题，保留出问题那一刻前后的日志；如果是卡住，"
                     "对每个 scheduler 进程做一次 `py-spy dump`，能看到它停在哪里。")
# instead of "the first error in the log" for a report that shows no error at all; the second
# form for a server the user already launches with `--log-requests`
_REQUEST = ("A request that shows it (the `curl` command or client code), what came back and what you expected, "
            "and the server's log lines for that request ({how}).",
            "一个能复现问题的请求（`curl` 命令或客户端代码）、实际返回的内容和你期望的内容，以及服务端处理这个请求时的日志（{how}）。")
SHOW_A_REQUEST = Sentence(_REQUEST[0].format(how="launch with `--log-requests`"),
                          _REQUEST[1].format(how="启动时加 `--log-requests`"))
SHOW_A_LOGGED_REQUEST = Sentence(_REQUEST[0].format(how="your `--log-requests` prints them"),
                                 _REQUEST[1].format(how="你已经加了 `--log-requests`，日志里就有"))
# a request the paste already shows, so the step that asks for one is left out (as the launch
# command's is when the paste has it): a curl to the server, an OpenAI client call or an HTTP post,
# a JSON request body, or a request SGLang logged (`Receive: obj=GenerateReqInput(`)
REQUEST_SHOWN_RE = re.compile(r"\bcurl\b[^\n]*(?:https?://|localhost|\d+\.\d+\.\d+\.\d+|/v1/|/generate)|"
                              r"\.(?:completions|embeddings|responses)\.create\(|\b(?:requests|httpx|aiohttp)\.post\(|"
                              r"['\"](?:messages|prompt|input_ids)['\"]\s*:|\b(?:Receive|Finish): obj=\w+\(")


def shows_a_request(texts) -> bool:
    """The paste shows the request that goes wrong (`REQUEST_SHOWN_RE`)."""
    return any(REQUEST_SHOWN_RE.search(text) for text in texts)
# for a server that started and a question about how it runs (`next_for_kind`): a slow server is
# measured and its launch checked for what it turns off, before anything is changed
SLOW_STEPS = (
    Sentence("Measure it: time one request end to end, or run SGLang's benchmark against the running server "
             "(`python3 -m sglang.bench_serving`, `-h` lists its options), and compare with a published figure for "
             "this model on this GPU; say which number is low: time to the first token, tokens per second, or "
             "seconds per image.",
             "先量一下：计时一个请求从发出到完成的时间，或对正在运行的服务跑 SGLang 的 benchmark"
             "（`python3 -m sglang.bench_serving`，`-h` 列出它的参数），再和这个模型在这种 GPU 上公开的数字比较；"
             "说明是哪个数字偏低：首 token 时间、每秒 token 数，还是每张图的秒数。"),
    Sentence("What the launch turns off or caps: `--disable-cuda-graph`, `--disable-radix-cache` or a small "
             "`--max-running-requests` cost speed, and the start-up lines name the attention backend it picked "
             "(a fallback such as torch SDPA is slower than the GPU's own kernels).",
             "启动命令关掉或限制了什么：`--disable-cuda-graph`、`--disable-radix-cache` 或很小的 "
             "`--max-running-requests` 都会降低速度；启动日志会写出它选的注意力后端（torch SDPA 这类回退实现比 GPU 专用内核慢）。"),
    Sentence("Whether the GPU is busy while requests run: `nvidia-smi dmon -s u`; low utilisation points at the "
             "client (too few requests at once) or the CPU side, not at the GPU.",
             "请求运行时 GPU 是否忙：`nvidia-smi dmon -s u`；利用率低说明瓶颈在客户端（同时发出的请求太少）或 CPU 一侧，不在 GPU。"),
)
# the utilisation step on hardware nvidia-smi does not see: each vendor's own monitor
BUSY_ON = {
    "ascend": Sentence("Whether the NPU is busy while requests run: `npu-smi info` (its AICore usage) a few times "
                       "during the load; low usage points at the client (too few requests at once) or the CPU side, "
                       "not at the NPU.",
                       "请求运行时 NPU 是否忙：负载期间多执行几次 `npu-smi info`（看 AICore 利用率）；利用率低说明瓶颈在客户端"
                       "（同时发出的请求太少）或 CPU 一侧，不在 NPU。"),
    "amd": Sentence("Whether the GPU is busy while requests run: `rocm-smi --showuse` (or `amd-smi monitor`); low "
                    "utilisation points at the client (too few requests at once) or the CPU side, not at the GPU.",
                    "请求运行时 GPU 是否忙：`rocm-smi --showuse`（或 `amd-smi monitor`）；利用率低说明瓶颈在客户端"
                    "（同时发出的请求太少）或 CPU 一侧，不在 GPU。"),
    "musa": Sentence("Whether the GPU is busy while requests run: `mthreads-gmi` during the load; low utilisation "
                     "points at the client (too few requests at once) or the CPU side, not at the GPU.",
                     "请求运行时 GPU 是否忙：负载期间查看 `mthreads-gmi`；利用率低说明瓶颈在客户端（同时发出的请求太少）或 CPU 一侧，不在 GPU。"),
}


def slow_steps(hardware: str | None = None) -> list[Sentence]:
    """The steps for a slow server, with the utilisation check of the hardware it runs on."""
    return [*SLOW_STEPS[:2], BUSY_ON.get(hardware or "", SLOW_STEPS[2])]


# for wrong output the paste shows no error for: with the request that shows it, the change that
# makes the answer right says where it goes wrong (a component's logs and connectivity checks
# are for errors, and the report has none)
_BISECT = ("Bisect it with that request: turn off one feature at a time, {named}the radix cache "
           "(`--disable-radix-cache`) and CUDA graphs (`--disable-cuda-graph`); if it began after an upgrade, send the "
           "same request to the release before it. The first change that makes the answer right names the cause.",
           "用这个请求二分排查：一次关掉一个功能，{named}radix cache（`--disable-radix-cache`）和 CUDA graph"
           "（`--disable-cuda-graph`）；如果是升级之后才出现的，把同一个请求发给升级前的版本。"
           "第一个让回答变对的改动就指出了原因。")


def bisect_wrong_output(named=()) -> Sentence:
    """The bisecting step for wrong output, naming first what the user's report names (HiCache's
    storage backend, Mooncake)."""
    names = ", ".join(named)
    return Sentence(_BISECT[0].format(named=f"first what your report names ({names}), then " if names else ""),
                    _BISECT[1].format(named=f"先关你的报告里提到的（{'、'.join(named)}），再关 " if names else ""))


# the kinds of failure whose next steps come from the kind, not from a component, when the paste
# shows no error line of a program: wrong answers and slowness are measured and bisected, not debugged
# through a library's error log
TOLD_KIND_STEPS = ("wrong output", "slow")
# ...unless the user also tells of a failure that has an error to show
ERROR_KINDS = frozenset({"crash", "out of memory", "illegal memory access", "build failure"})

# for a server that started and a paste that asks about nothing that went wrong
NOTHING_FAILED = Sentence("Nothing in your paste failed. If something does go wrong, paste that error (or the request "
                          "that shows it) and the 30 lines before it.",
                          "你贴的内容里没有失败的地方。如果之后出了问题，请贴出那个错误（或能复现它的请求）及其前面 30 行。")
# for a report that tells of an error in words and shows none of its lines
PASTE_THE_ERROR = Sentence("The error itself: your paste tells of it but shows none of its lines; paste the traceback or "
                           "error output and the 30 lines before it (`grep -n -m1 -E 'Traceback|Error|error:' server.log`).",
                           "错误本身：你的内容提到了错误，但没有贴出它的任何一行；请贴出 traceback 或错误输出及其前面 30 行"
                           "（`grep -n -m1 -E 'Traceback|Error|error:' server.log`）。")
# for a traceback the paste cuts off before its exception line: that line is what failed
TRACEBACK_END = Sentence("The end of the traceback: your paste stops inside it, before the exception line that says what "
                         "failed (such as `RuntimeError: ...`); paste the traceback down to that line and the lines after it.",
                         "traceback 的结尾：你贴的内容在 traceback 中间就断了，缺少说明出了什么错的那一行异常（例如 "
                         "`RuntimeError: ...`）；请把 traceback 一直贴到那一行，以及它后面的几行。")
# for a paste that is only the tail of a thread dump (`assistant.thread_dump`): its error is above it
PASTE_ABOVE_THE_DUMP = Sentence(
    "Your paste is the end of a Python thread dump (faulthandler's `Thread 0x... (most recent call first):` blocks), "
    "which only shows where each thread was waiting. The error is above the dump: paste the `Fatal Python error: ...` "
    "line (or faulthandler's `Timeout (...)!` line) and the 30 lines before the first `Thread 0x...` or "
    "`Current thread 0x...` line (`grep -n -m1 -B30 -E 'Fatal Python error|Current thread 0x|^Thread 0x' server.log`).",
    "你贴的是 Python 线程转储（faulthandler 打印的 `Thread 0x... (most recent call first):` 段落）的末尾，它只显示每个线程停在哪里。"
    "错误在转储的上面：请贴出 `Fatal Python error: ...` 这一行（或 faulthandler 的 `Timeout (...)!` 行），以及第一个 "
    "`Thread 0x...` 或 `Current thread 0x...` 行之前的 30 行"
    "（`grep -n -m1 -B30 -E 'Fatal Python error|Current thread 0x|^Thread 0x' server.log`）。")
# for a start-up log that stops, with no error line, after its last progress line
_STOPPED_STARTING = (
    "Your log stops while the server starts, after `{last}`, with no error line: paste what follows that line in the "
    "full log (the traceback or error, and the exit status: `echo $?` right after the command returns). If nothing "
    "follows and the process still runs, it hangs there: `py-spy dump --pid <pid>` of each scheduler process shows "
    "where it waits.",
    "你的日志停在服务启动途中，最后一行是 `{last}`，没有错误行：请贴出完整日志里这一行之后的内容（traceback 或报错，"
    "以及退出状态：命令返回后立刻执行 `echo $?`）。如果之后什么都没有、进程还在运行，说明它卡在那里：对每个 scheduler "
    "进程执行 `py-spy dump --pid <pid>`，能看到它停在哪里。")
LAST_LINE_CHARS = 100


def stopped_starting(last_line: str) -> Sentence:
    """The step for a start-up log that stops after `last_line` with no error in it."""
    last = " ".join(last_line.split())
    last = last if len(last) <= LAST_LINE_CHARS else last[:LAST_LINE_CHARS - 1] + "…"
    last = last.replace("`", "'")
    return Sentence(_STOPPED_STARTING[0].format(last=last), _STOPPED_STARTING[1].format(last=last))


DRIVER_FAULT = Sentence(
    "Your paste shows the GPU driver's own fault report from the kernel log (`NVRM: Xid` or `amdgpu ... page fault`). "
    "A page fault, or Xid 13, 31 or 43, means a kernel running on the GPU touched memory it may not: the SGLang "
    "process's log at the same moment names the kernel, so paste its lines from then (the traceback, or a line such as "
    "`Memory access fault by GPU node-N` or `an illegal memory access was encountered`). Xid 48 or 79, ECC errors or a "
    "GPU reset point at the GPU itself: check its ECC counters (`nvidia-smi -q -d ECC`; `rocm-smi` on AMD).",
    "你贴的是内核日志里 GPU 驱动自己的故障报告（`NVRM: Xid` 或 `amdgpu ... page fault`）。page fault 或 Xid 13、31、43 "
    "表示 GPU 上运行的某个内核访问了不该访问的内存：同一时刻 SGLang 进程的日志会说明是哪个内核，请贴出它那一刻的日志"
    "（traceback，或 `Memory access fault by GPU node-N`、`an illegal memory access was encountered` 这类行）。"
    "Xid 48 或 79、ECC 错误或 GPU reset 指向 GPU 本身：查看它的 ECC 计数（`nvidia-smi -q -d ECC`；AMD 上用 `rocm-smi`）。")


# words that tell of an error the paste should then show: the process fails, crashes or dies
# ("服务跑几分钟就挂了", "the server dies after the first request")
TELLS_OF_ERROR_RE = re.compile(r"\b(?:errors?|exceptions?|traceback|fail(?:s|ed|ing|ure)?|crash(?:es|ed)?|di(?:es|ed)|"
                               r"killed|segfault\w*|(?:goes|went) down)\b|"
                               # a server that does not come up: "we cannot launch it", "won't start"
                               r"\b(?:can(?:no|')t|could(?:n't| not)|unable to|won't|(?:does|did)(?:n't| not))\s+"
                               r"(?:be\s+)?(?:launch|start|load|run|serve|boot)\w*\b(?!\s+(?:fast|quick|well|as\b|at\b))|"
                               r"报错|错误|异常|失败|崩溃|出错|挂了|挂掉|宕机|闪退|段错误|"
                               r"起不来|跑不起来|拉不起来|启动不了|无法启动|不能启动|启动不起来", re.I)
# an error the user quotes in their own words, with no log line of it ("运行后报错 assert cuda_home is not
# None", "it fails with KeyError: 'model.embed_tokens'"): its traceback is what is missing, not the error
ERROR_IN_WORDS_RE = re.compile(r"\bassert\s+[^，。,;\n]{3,80}?(?=\s*(?:[，。,;]|怎么|如何|怎样|what|how|$))|"
                             r"\b[A-Z]\w*(?:Error|Exception)\b(?::\s*[^，。\n]{0,80}?(?=\s*(?:[，。]|怎么|如何|$)))?")
_QUOTED = ("The whole error: your words quote it (`{quoted}`), but the paste has no traceback or log line of it; "
           "paste the traceback down to that line and the 30 lines before it (`grep -n -m1 -B30 -F '{grep}' server.log`).",
           "完整的错误：你在描述里提到了它（`{quoted}`），但没有贴出它所在的 traceback 或日志行；请贴出到这一行为止的 "
           "traceback 及其前面 30 行（`grep -n -m1 -B30 -F '{grep}' server.log`）。")


def quoted_error(words: str) -> str | None:
    """The error the user's words quote (`ERROR_IN_WORDS_RE`), as written, or None."""
    match = ERROR_IN_WORDS_RE.search(words)
    return " ".join(match.group(0).split()).strip(" :：") if match else None


def paste_the_error(words: str) -> Sentence:
    """The step that asks for the error the user tells of: by the words they quote it in, when they
    quote it, so the step does not say the paste shows nothing of it."""
    quoted = quoted_error(words)
    if not quoted:
        return PASTE_THE_ERROR
    quoted = quoted.replace("`", "'")
    grep = quoted.split(":")[0].replace("'", "")[:40]
    return Sentence(_QUOTED[0].format(quoted=quoted, grep=grep), _QUOTED[1].format(quoted=quoted, grep=grep))


# the user's words say the log holds no error ("no errors or warnings in the log", "日志里没有报错")
QUIET_LOG_RE = re.compile(r"\bno (?:errors?|exceptions?|warnings?|traceback)\b|"
                          # "SGLang does not output any error logs", "it never prints an exception"
                          r"\b(?:does|do|did|is|was)(?:n't| not)\s+(?:output|print|show|log|report|throw|raise|giv)\w*\s+"
                          r"(?:any|an|a)?\s*(?:errors?|exceptions?|traceback)\b|"
                          r"\bnever (?:output|print|show|log|report|throw|raise)s?\s+(?:any|an|a)?\s*(?:errors?|exceptions?)\b|"
                          r"\bnothing (?:in|on) the (?:log|console)\b|"
                          r"\bwithout (?:any )?(?:errors?|exceptions?)\b|\blogs? (?:shows?|has|says) nothing\b|"
                          r"没有(?:任何)?(?:报错|错误|异常)|无报错|不报错|日志里?(?:也)?没有?(?:任何)?(?:东西|输出|报错|错误)", re.I)

# a package being built from source (pip / uv / setup.py / CMake), not a server that failed: its
# steps ask for the compiler's error and the build tools, not the server log and launch command
BUILD_RE = re.compile(r"Building wheels? for |Failed to build |subprocess-exited-with-error|Getting requirements to build|"
                      r"setup\.py (?:bdist_wheel|build|install|develop)|CMake Error|The build backend returned an error|"
                      r"Building editable for |Preparing metadata \(pyproject\.toml\)|error: command '[^']*(?:gcc|g\+\+|nvcc|c\+\+)' failed|"
                      # setuptools' build commands in a traceback, and pip's isolated build environment
                      r"pip-build-env-|setuptools[/\\](?:command[/\\](?:bdist_wheel|build_ext|build_py|develop)|_distutils[/\\]command[/\\]build)")
BUILD_STEPS = (
    Sentence("The build's own first error: rerun the install verbosely (`pip install -v .` or `uv pip install -v .`) and "
             "paste the first compiler or CMake error, not the last lines (`grep -n -m1 -E 'error:|CMake Error' build.log`).",
             "构建自己的第一个错误：加 `-v` 重新安装（`pip install -v .` 或 `uv pip install -v .`），贴出第一个编译器或 "
             "CMake 报错，而不是最后几行（`grep -n -m1 -E 'error:|CMake Error' build.log`）。"),
    Sentence("The build tools and what they build against: `cmake --version`, `gcc --version`, `nvcc --version` and "
             "`python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'`.",
             "构建工具以及构建所依赖的版本：`cmake --version`、`gcc --version`、`nvcc --version` 和 "
             "`python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'`。"),
    Sentence("Whether a prebuilt wheel fits your platform (Python version, CUDA, CPU architecture), so nothing needs "
             "building: `pip download --no-deps <package>` shows the wheel pip would pick.",
             "有没有适合你平台（Python 版本、CUDA、CPU 架构）的预编译 wheel，这样就不用自己构建："
             "`pip download --no-deps <package>` 会显示 pip 会选哪个 wheel。"),
)

# a component's steps about its default transport are for another setup when the paste names one of
# the component's other backends and never the default: NIXL runs over UCX unless its agent is given
# another plugin (`backends = "GPUNETIO"`, libfabric, GDS)
DEFAULT_TRANSPORT: dict[str, tuple[re.Pattern, re.Pattern]] = {
    "nixl": (re.compile(r"\bUCX", re.I),   # UCX, UCX_TLS, ucx_info
             re.compile(r"\b(?:GPUNETIO|LIBFABRIC|GDS(?:_MT)?|UCCL|HF3FS)\b|gpunetio_backend|libfabric_backend", re.I)),
}


def transport_ruled_out(component: str, step: str, paste_text: str) -> bool:
    """The step is about the component's default transport, and the paste names another of its
    backends and not the default (`DEFAULT_TRANSPORT`)."""
    default, others = DEFAULT_TRANSPORT.get(component, (None, None))
    return (default is not None and bool(default.search(step)) and bool(others.search(paste_text))
            and not default.search(paste_text))


FORMAT_ON_GPU = Sentence("Whether your GPU supports the format (e.g. FP8 needs compute capability 8.9 or newer): "
                         "`nvidia-smi --query-gpu=name,compute_cap --format=csv`.",
                         "你的 GPU 是否支持这种格式（例如 FP8 需要计算能力 8.9 或更新）："
                         "`nvidia-smi --query-gpu=name,compute_cap --format=csv`。")
# a step that checks the GPU against a minimum compute capability says nothing when every GPU the
# paste shows is at or above it: FP8 runs from Ada (8.9) on, FP4 from Blackwell (10.0)
FP4_RE = re.compile(r"\b(?:nv|mx)?fp4\b|\bw4a4\b", re.I)


def needed_capability(step: str, paste_text: str) -> int | None:
    """The compute capability a GPU check step asks about, for the formats the paste names."""
    if step != FORMAT_ON_GPU:
        return None
    return 100 if FP4_RE.search(paste_text) else 89


# the root error says a package is not installed ("No module named 'bitsandbytes'", "Please install
# bitsandbytes>=0.44.0"): of a component's steps only those about what is installed (`pip show`)
# apply, not the ones about how it runs (a format, a GPU, a config)
MISSING_PACKAGE_RE = re.compile(r"No module named ['\"]|\bModuleNotFoundError\b|\bPlease install\b|"
                                r"\bis not installed\b|\brequires? the \S+ (?:package|library)\b", re.I)
INSTALLED_STEP_RE = re.compile(r"\bpip3? (?:show|list|install)\b")


def step_fits(component: str, step: str, paste_text: str = "", gpu_archs=frozenset(),
              missing_package: bool = False) -> bool:
    """Whether a component's step fits the paste: not about a transport the paste's backend rules
    out, not a GPU check every GPU it shows passes, and for a missing package only about what is
    installed."""
    if transport_ruled_out(component, step, paste_text):
        return False
    needed = needed_capability(step, paste_text)
    if needed is not None and gpu_archs and min(gpu_archs) >= needed:
        return False
    return not missing_package or bool(INSTALLED_STEP_RE.search(step))


STEPS: dict[str, tuple[Sentence, ...]] = {
    "nccl": (
        Sentence("NCCL's own log: rerun with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` and look for the "
                 "first `NCCL WARN` line on every rank.",
                 "NCCL 自己的日志：用 `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` 重跑，在每个 rank 上找第一行 `NCCL WARN`。"),
        Sentence("Test the fabric without SGLang: nccl-tests `all_reduce_perf -b 8 -e 1G -f 2 -g 1` across "
                 "the same GPUs / nodes.",
                 "不经 SGLang 测试互联：在同样的 GPU / 节点上跑 nccl-tests `all_reduce_perf -b 8 -e 1G -f 2 -g 1`。"),
        Sentence("Rule out SGLang's custom all-reduce: rerun with `--disable-custom-all-reduce`.",
                 "排除 SGLang 的自定义 all-reduce：加 `--disable-custom-all-reduce` 重跑。"),
    ),
    "rccl": (
        Sentence("RCCL's own log: rerun with `NCCL_DEBUG=INFO` (RCCL reads the NCCL_ variables).",
                 "RCCL 自己的日志：用 `NCCL_DEBUG=INFO` 重跑（RCCL 读取 NCCL_ 开头的环境变量）。"),
        Sentence("Test the fabric without SGLang: rccl-tests `all_reduce_perf` on the same GPUs.",
                 "不经 SGLang 测试互联：在同样的 GPU 上跑 rccl-tests `all_reduce_perf`。"),
        Sentence("Rule out SGLang's custom all-reduce: rerun with `--disable-custom-all-reduce`.",
                 "排除 SGLang 的自定义 all-reduce：加 `--disable-custom-all-reduce` 重跑。"),
    ),
    "custom-allreduce": (
        Sentence("Rerun with `--disable-custom-all-reduce`: if the error goes away, it is in the custom "
                 "all-reduce kernel, not in NCCL.",
                 "加 `--disable-custom-all-reduce` 重跑：如果错误消失，问题在自定义 all-reduce 内核，不在 NCCL。"),
        Sentence("Check peer-to-peer access between the GPUs: `nvidia-smi topo -m`.",
                 "检查 GPU 之间的 P2P 访问：`nvidia-smi topo -m`。"),
    ),
    "ucx": (
        Sentence("UCX's own log: rerun with `UCX_LOG_LEVEL=debug` and keep the lines before the crash.",
                 "UCX 自己的日志：用 `UCX_LOG_LEVEL=debug` 重跑，保留崩溃前的日志行。"),
        Sentence("The transports UCX sees on this node: `ucx_info -d` (and `ucx_info -v` for its version).",
                 "UCX 在这台机器上看到的传输方式：`ucx_info -d`（版本用 `ucx_info -v`）。"),
        Sentence("The NIXL / UCX versions on both prefill and decode nodes (`pip list | grep -i -E 'nixl|ucx'`): "
                 "they must match.",
                 "prefill 和 decode 节点上的 NIXL / UCX 版本（`pip list | grep -i -E 'nixl|ucx'`）：两边必须一致。"),
    ),
    "nixl": (
        Sentence("UCX (NIXL's default transport) log: rerun with `UCX_LOG_LEVEL=debug`, and `ucx_info -d` "
                 "for the transports it finds.",
                 "UCX（NIXL 默认的传输层）日志：用 `UCX_LOG_LEVEL=debug` 重跑，并用 `ucx_info -d` 查看它找到的传输方式。"),
        Sentence("The NIXL version on the prefill and the decode nodes (`pip show nixl`): they must match.",
                 "prefill 和 decode 节点上的 NIXL 版本（`pip show nixl`）：两边必须一致。"),
        Sentence("Bisect the transfer backend: try `--disaggregation-transfer-backend mooncake` on both sides.",
                 "二分排查传输后端：两边都试试 `--disaggregation-transfer-backend mooncake`。"),
    ),
    # Mooncake moves KV caches for PD disaggregation and is HiCache's storage backend
    "mooncake": (
        Sentence("The RDMA devices Mooncake uses: `ibv_devinfo`, and the devices it is given: "
                 "`--disaggregation-ib-device` on the prefill and decode servers (PD), or `device_name` in "
                 "the Mooncake store config (HiCache).",
                 "Mooncake 用的 RDMA 设备：`ibv_devinfo`，以及给它指定的设备：prefill 和 decode 服务上的 `--disaggregation-ib-device`（PD），或 Mooncake store 配置里的 `device_name`（HiCache）。"),
        Sentence("The Mooncake version on every node: `pip show mooncake-transfer-engine`.",
                 "每个节点上的 Mooncake 版本：`pip show mooncake-transfer-engine`。"),
        Sentence("Whether the hosts reach each other: the bootstrap port between prefill and decode (PD), or "
                 "the Mooncake master and metadata server (HiCache); firewall and container network included.",
                 "主机之间是否互通：prefill 和 decode 之间的 bootstrap 端口（PD），或 Mooncake master 和元数据服务（HiCache）；包括防火墙和容器网络。"),
    ),
    "disaggregation": (
        Sentence("Both sides' logs, prefill and decode, from the same minute: the first error is often on "
                 "the other server.",
                 "同一分钟内 prefill 和 decode 两边的日志：第一个错误常常在另一台服务上。"),
        Sentence("The transfer backend and devices on both sides: `--disaggregation-transfer-backend`, "
                 "`--disaggregation-ib-device`.",
                 "两边的传输后端和设备：`--disaggregation-transfer-backend`、`--disaggregation-ib-device`。"),
    ),
    "nvshmem": (
        Sentence("NVSHMEM's own log: rerun with `NVSHMEM_DEBUG=INFO`.",
                 "NVSHMEM 自己的日志：用 `NVSHMEM_DEBUG=INFO` 重跑。"),
        Sentence("Whether the GPUs and NICs support GPUDirect RDMA / IBGDA: `nvidia-smi topo -m`, `ibv_devinfo`.",
                 "GPU 和网卡是否支持 GPUDirect RDMA / IBGDA：`nvidia-smi topo -m`、`ibv_devinfo`。"),
    ),
    "deepep": (
        Sentence("DeepEP's own tests on the same nodes (`tests/test_intranode.py`, `tests/test_low_latency.py` "
                 "in the DeepEP repository) tell a fabric problem from an SGLang one.",
                 "在同样的节点上跑 DeepEP 自带的测试（DeepEP 仓库里的 `tests/test_intranode.py`、`tests/test_low_latency.py`），区分是互联问题还是 SGLang 问题。"),
        Sentence("Bisect the mode: rerun with `--deepep-mode normal` instead of `low_latency` (or the reverse).",
                 "二分排查模式：用 `--deepep-mode normal` 代替 `low_latency` 重跑（或反过来）。"),
        Sentence("NVSHMEM's log: `NVSHMEM_DEBUG=INFO`.",
                 "NVSHMEM 的日志：`NVSHMEM_DEBUG=INFO`。"),
    ),
    "deepgemm": (
        Sentence("The DeepGEMM version and the GPU (DeepGEMM needs Hopper or newer): `python3 -m sglang.check_env`.",
                 "DeepGEMM 版本和 GPU（DeepGEMM 需要 Hopper 或更新的架构）：`python3 -m sglang.check_env`。"),
        Sentence("Whether its JIT cache is stale: the first DeepGEMM compile lines in the log.",
                 "它的 JIT 缓存是否过期：看日志里最早的 DeepGEMM 编译行。"),
    ),
    "flashinfer": (
        Sentence("FlashInfer's API log: rerun with `FLASHINFER_LOGLEVEL=3` (`FLASHINFER_LOGDEST=stderr`) to see "
                 "the call that fails and its inputs.",
                 "FlashInfer 的 API 日志：用 `FLASHINFER_LOGLEVEL=3`（`FLASHINFER_LOGDEST=stderr`）重跑，看出错的调用及其输入。"),
        Sentence("The flashinfer version against what your SGLang pins: `pip list | grep -i flashinfer`.",
                 "flashinfer 版本是否与你的 SGLang 锁定的一致：`pip list | grep -i flashinfer`。"),
        Sentence("A stale JIT build: move `~/.cache/flashinfer` away and rerun; or bisect with "
                 "`--attention-backend triton`.",
                 "过期的 JIT 编译产物：把 `~/.cache/flashinfer` 移走后重跑；或用 `--attention-backend triton` 二分排查。"),
    ),
    "flashattention": (
        Sentence("Bisect the attention backend: rerun with `--attention-backend flashinfer` or `triton`.",
                 "二分排查注意力后端：用 `--attention-backend flashinfer` 或 `triton` 重跑。"),
        Sentence("The sgl-kernel version against what your SGLang pins: `pip show sgl-kernel`.",
                 "sgl-kernel 版本是否与你的 SGLang 锁定的一致：`pip show sgl-kernel`。"),
    ),
    "sgl-kernel": (
        Sentence("The sgl-kernel and torch versions against what your SGLang pins: `pip show sgl-kernel torch`.",
                 "sgl-kernel 和 torch 版本是否与你的 SGLang 锁定的一致：`pip show sgl-kernel torch`。"),
        Sentence("Whether it loads on its own: `python3 -c \"import sgl_kernel\"` (the first error is the useful one).",
                 "单独能否加载：`python3 -c \"import sgl_kernel\"`（有用的是第一个错误）。"),
        Sentence("The GPU architecture the wheel was built for vs yours: `nvidia-smi --query-gpu=name,compute_cap --format=csv`.",
                 "wheel 编译时针对的 GPU 架构和你的是否一致：`nvidia-smi --query-gpu=name,compute_cap --format=csv`。"),
    ),
    "triton": (
        Sentence("The triton and torch versions: `pip show triton torch` (they must be the pair torch ships with).",
                 "triton 和 torch 版本：`pip show triton torch`（必须是 torch 自带的那一对）。"),
        Sentence("A stale kernel cache: move `~/.triton/cache` away and rerun.",
                 "过期的内核缓存：把 `~/.triton/cache` 移走后重跑。"),
        Sentence("Bisect: rerun with `--disable-cuda-graph`, and with another `--attention-backend`.",
                 "二分排查：加 `--disable-cuda-graph` 重跑，再换一个 `--attention-backend` 重跑。"),
    ),
    "torch-compile": (
        Sentence("Rerun without `--enable-torch-compile`: if the error goes away, it is in compilation.",
                 "去掉 `--enable-torch-compile` 重跑：如果错误消失，问题在编译。"),
        Sentence("Dynamo's detail: rerun with `TORCHDYNAMO_VERBOSE=1` for the full compile traceback.",
                 "Dynamo 的详细信息：用 `TORCHDYNAMO_VERBOSE=1` 重跑，拿到完整的编译调用栈。"),
        Sentence("The torch and triton versions: `pip show torch triton`.",
                 "torch 和 triton 版本：`pip show torch triton`。"),
    ),
    "cuda-graph": (
        Sentence("Bisect: rerun with `--disable-cuda-graph`; if it then works, the failure is in graph capture.",
                 "二分排查：加 `--disable-cuda-graph` 重跑；如果能跑通，故障在 CUDA graph 捕获。"),
        Sentence("Capture fewer batch sizes: a smaller `--cuda-graph-max-bs`.",
                 "少捕获一些 batch size：调小 `--cuda-graph-max-bs`。"),
        Sentence("The first error before the capture failed, with `CUDA_LAUNCH_BLOCKING=1` for a CUDA error.",
                 "捕获失败之前的第一个错误；如果是 CUDA 错误，用 `CUDA_LAUNCH_BLOCKING=1` 重跑。"),
    ),
    "cuda": (
        Sentence("Where the CUDA error really happens: rerun with `CUDA_LAUNCH_BLOCKING=1` (slow, but the "
                 "traceback then points at the failing kernel).",
                 "CUDA 错误真正发生在哪里：用 `CUDA_LAUNCH_BLOCKING=1` 重跑（会变慢，但调用栈会指向出错的内核）。"),
        Sentence("Driver and CUDA versions: `nvidia-smi` and `python3 -m sglang.check_env`.",
                 "驱动和 CUDA 版本：`nvidia-smi` 和 `python3 -m sglang.check_env`。"),
        Sentence("Bisect: rerun with `--disable-cuda-graph`.",
                 "二分排查：加 `--disable-cuda-graph` 重跑。"),
    ),
    # Ascend NPUs: CANN's own log, synchronous operator launches, and HCCL's links between NPUs
    "ascend": (
        Sentence("CANN's own log (the plog files under `~/ascend/log/debug/plog/`, or rerun with "
                 "`ASCEND_SLOG_PRINT_TO_STDOUT=1`): find the first `[ERROR]` line and its code (`EI` codes such as "
                 "`EI0006` come from HCCL; `EZ9999` is an inner error, usually an operator's).",
                 "CANN 自己的日志（`~/ascend/log/debug/plog/` 下的 plog 文件，或用 `ASCEND_SLOG_PRINT_TO_STDOUT=1` 重跑）："
                 "找第一行 `[ERROR]` 及其错误码（`EI0006` 等 `EI` 开头的来自 HCCL；`EZ9999` 是内部错误，通常来自算子）。"),
        Sentence("Where the NPU error really happens: rerun once with `ASCEND_LAUNCH_BLOCKING=1` (operators run "
                 "synchronously, so the traceback points at the failing one; slow, for debugging only).",
                 "NPU 错误真正发生在哪里：用 `ASCEND_LAUNCH_BLOCKING=1` 重跑一次（算子同步执行，调用栈会指向出错的那个；"
                 "会变慢，只用于排查）。"),
        Sentence("For an HCCL (multi-NPU) error, the NPU links on every node: `hccn_tool -i <device id> -link -g` "
                 "for each device, and `npu-smi info` for their health.",
                 "如果是 HCCL（多卡通信）错误，检查每个节点的 NPU 链路：对每个 device 执行 `hccn_tool -i <device id> -link -g`，"
                 "并用 `npu-smi info` 查看它们的健康状态。"),
    ),
    "rocm": (
        Sentence("ROCm, driver and GPU: `rocm-smi` and `python3 -m sglang.check_env`.",
                 "ROCm、驱动和 GPU：`rocm-smi` 和 `python3 -m sglang.check_env`。"),
        Sentence("Where the HIP error really happens: rerun with `HIP_LAUNCH_BLOCKING=1`.",
                 "HIP 错误真正发生在哪里：用 `HIP_LAUNCH_BLOCKING=1` 重跑。"),
    ),
    "aiter": (
        Sentence("The aiter version against what your SGLang image ships: `pip show aiter`.",
                 "aiter 版本是否与你的 SGLang 镜像自带的一致：`pip show aiter`。"),
        Sentence("Bisect: rerun with another `--attention-backend` (e.g. `triton`).",
                 "二分排查：换一个 `--attention-backend`（例如 `triton`）重跑。"),
    ),
    "musa": (
        Sentence("MUSA driver and toolkit: `mthreads-gmi` and `python3 -m sglang.check_env`.",
                 "MUSA 驱动和工具链：`mthreads-gmi` 和 `python3 -m sglang.check_env`。"),
        Sentence("The torch_musa version against what your SGLang build expects.",
                 "torch_musa 版本是否与你的 SGLang 构建要求的一致。"),
    ),
    "tokenizer": (
        Sentence("Whether the model has a chat template: `chat_template` in its `tokenizer_config.json`; "
                 "if not, pass one with `--chat-template`.",
                 "模型是否带聊天模板：看它 `tokenizer_config.json` 里的 `chat_template`；没有的话用 `--chat-template` 指定一个。"),
        Sentence("Load the tokenizer alone: `python3 -c \"from transformers import AutoTokenizer; "
                 "AutoTokenizer.from_pretrained('<model>')\"`.",
                 "单独加载分词器：`python3 -c \"from transformers import AutoTokenizer; AutoTokenizer.from_pretrained('<model>')\"`。"),
        Sentence("The transformers version: `pip show transformers`.",
                 "transformers 版本：`pip show transformers`。"),
    ),
    "transformers": (
        Sentence("The transformers version against what your SGLang pins: `pip show transformers`.",
                 "transformers 版本是否与你的 SGLang 锁定的一致：`pip show transformers`。"),
        Sentence("Whether the model's config loads alone: `python3 -c \"from transformers import AutoConfig; "
                 "AutoConfig.from_pretrained('<model>')\"`.",
                 "模型配置能否单独加载：`python3 -c \"from transformers import AutoConfig; AutoConfig.from_pretrained('<model>')\"`。"),
    ),
    # SGLang-JAX runs on TPUs through JAX/XLA: none of CUDA, flashinfer or check_env applies
    "jax": (
        Sentence("The versions that decide it: `pip show sglang-jax jax jaxlib libtpu` (its `tpu` extra pins the "
                 "JAX release it was built for).",
                 "决定问题的版本：`pip show sglang-jax jax jaxlib libtpu`（它的 `tpu` extra 锁定了它所适配的 JAX 版本）。"),
        Sentence("The TPU type and topology (`v6e-8`, `v5p-16`) and the launch command: the mesh and "
                 "parallelism flags must fit that topology.",
                 "TPU 型号和拓扑（`v6e-8`、`v5p-16`）以及启动命令：mesh 和并行参数必须和这个拓扑对得上。"),
        Sentence("SGLang-JAX is a separate code base: search and report in its own tracker, "
                 "https://github.com/sgl-project/sglang-jax/issues.",
                 "SGLang-JAX 是独立的代码库：请在它自己的 issue 里搜索和报告，https://github.com/sgl-project/sglang-jax/issues。"),
    ),
    "router": (
        Sentence("Each worker's health, bypassing the router: `curl http://<worker>:<port>/health`.",
                 "绕过 router 检查每个 worker 的健康状态：`curl http://<worker>:<port>/health`。"),
        Sentence("The router and SGLang versions: `pip show sglang-router sglang`.",
                 "router 和 SGLang 版本：`pip show sglang-router sglang`。"),
        Sentence("The router's log from start-up: it names workers it could not reach.",
                 "router 从启动开始的日志：里面会写出它连不上的 worker。"),
    ),
    "xgrammar": (
        Sentence("Bisect the grammar backend: rerun with `--grammar-backend outlines` (or `llguidance`).",
                 "二分排查语法后端：用 `--grammar-backend outlines`（或 `llguidance`）重跑。"),
        Sentence("The xgrammar version against what your SGLang pins: `pip show xgrammar`.",
                 "xgrammar 版本是否与你的 SGLang 锁定的一致：`pip show xgrammar`。"),
    ),
    "speculative": (
        Sentence("Bisect: rerun without `--speculative-algorithm` and the other speculative flags; if it then "
                 "works, the draft model or its settings are the cause.",
                 "二分排查：去掉 `--speculative-algorithm` 和其他投机解码参数重跑；如果能跑通，原因在草稿模型或它的设置。"),
        Sentence("Whether the draft model fits the target model (same vocabulary and hidden size).",
                 "草稿模型和目标模型是否匹配（词表和 hidden size 相同）。"),
    ),
    "quantization": (
        Sentence("The checkpoint's `quantization_config` in its `config.json`, and the `--quantization` flag if set.",
                 "checkpoint 的 `config.json` 里的 `quantization_config`，以及设置了的 `--quantization` 参数。"),
        FORMAT_ON_GPU,
    ),
    "model-loader": (
        Sentence("Whether every weight file downloaded completely: the sizes in the model folder against the hub.",
                 "每个权重文件是否下载完整：对比模型目录里的文件大小和 hub 上的。"),
        Sentence("Free host memory and disk while loading: `free -g`, `df -h`.",
                 "加载时主机的空闲内存和磁盘：`free -g`、`df -h`。"),
    ),
    "lora": (
        Sentence("The LoRA adapter's `adapter_config.json` (target modules, rank) against the base model.",
                 "LoRA 适配器的 `adapter_config.json`（target modules、rank）是否和基础模型对得上。"),
        Sentence("Bisect: rerun without the adapters.",
                 "二分排查：不加载适配器重跑。"),
    ),
    "multimodal": (
        Sentence("Whether the same request works with text only: then the image / video input is the cause.",
                 "同样的请求只发文本能否成功：能的话，原因在图片 / 视频输入。"),
        Sentence("The transformers version: `pip show transformers` (processors change between releases).",
                 "transformers 版本：`pip show transformers`（processor 在不同版本之间会变）。"),
    ),
}

MAX_STEPS = 3
# where a failure runs rather than what failed: an NPU, a ROCm GPU, a MUSA GPU
PLATFORMS = frozenset({"ascend", "rocm", "musa"})
FLAG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")


def steps_for(components, limit: int = MAX_STEPS, quiet_log: bool = False, known_command: bool = False,
              no_error_lines: bool = False, hardware: str | None = None,
              user_flags=frozenset(), words: str = "", building: bool = False,
              traceback_cut: bool = False, dump_tail: bool = False, told=frozenset(),
              request_shown: bool = False, paste_text: str = "", gpu_archs=frozenset(),
              missing_package: bool = False, stopped_after: str | None = None) -> list[Sentence]:
    """Up to `limit` things to collect or try for the first component that has steps, then the
    generic ones to fill up; each says which component it is for. `quiet_log`: the user says the
    log shows no error, so the step that looks for the first one asks for more log instead;
    `no_error_lines`: the report shows no error at all, so it asks for the error when the user's
    `words` tell of one, else (wrong output, a slow or silent server) for a request that shows it;
    `known_command`: the paste has the launch command already; `user_flags`: the flags they pass;
    `building`: the paste is a package built from source (`BUILD_RE`), so its steps come first;
    `traceback_cut`: the paste's traceback stops before its exception line and shows no other
    error, so the first thing to ask for is the end of that traceback;
    `dump_tail`: the paste is only the end of a thread dump (`assistant.thread_dump`), so the first
    thing to get is what was above it, not a request that shows a problem;
    `told`: the kinds of failure the user tells of when the paste shows no error of a program: wrong
    output or slowness gets the steps for that kind (`kind_steps`), not a component's;
    `request_shown`: the paste shows the request (`shows_a_request`), so none is asked for;
    `paste_text`, `gpu_archs` (the compute capabilities of the GPUs it shows), `missing_package`
    (its root error says a package is not installed): what leaves out a component's step that does
    not fit (`step_fits`);
    `stopped_after`: the last line of a start-up log that shows no error (`assistant.phase`): what
    follows that line is the thing to get, not a request (the server never served one);
    a GPU driver's fault report in the paste (`DRIVER_FAULT_RE`) is the error it shows, so the
    step asks for the process's own lines at that moment, not for an error it lacks.
    What is missing (the traceback's end, the error) comes first: it is the one thing to go on."""
    if building:
        return list(BUILD_STEPS[:limit])
    error_untold = no_error_lines and not quiet_log and bool(TELLS_OF_ERROR_RE.search(words))
    driver_fault = no_error_lines and bool(DRIVER_FAULT_RE.search(paste_text))
    missing = (TRACEBACK_END if traceback_cut else PASTE_ABOVE_THE_DUMP if dump_tail
               else DRIVER_FAULT if driver_fault
               else stopped_starting(stopped_after) if no_error_lines and stopped_after
               else paste_the_error(words) if error_untold else None)
    kind = next((k for k in TOLD_KIND_STEPS if k in told), None) if not told & ERROR_KINDS else None
    if kind and not (traceback_cut or dump_tail or driver_fault):
        steps = kind_steps(kind, [name for name in components if name in STEPS], user_flags, request_shown,
                           hardware)
        # a log the user says shows no error: make it say more about the wrong answer
        steps = steps + [QUIET_LOG] if quiet_log and kind == "wrong output" else steps
        # a failure told beside the slowness ("初始化失败; with --disable-cuda-graph it starts, but slower"):
        # its error is the first thing to get, the slowness is the price of the workaround
        return ([missing] + steps if missing else steps)[:limit]
    first = {}   # is a platform -> the steps of the first such component that has any
    for name in components:
        own = [Sentence(f"[{name}] {s}", f"[{name}] {s.zh}") for s in STEPS.get(name, ())
               if step_fits(name, s, paste_text, gpu_archs, missing_package)]
        if own:
            first.setdefault(name in PLATFORMS, own)
    if first:
        # the component that failed says what to try; the platform it failed on adds its first
        # step (its driver and toolkit), not its whole list in place of the component's
        component, platform = first.get(False, []), first.get(True, [])
        own = component[:limit - 1] + platform[:1] if component and platform else component or platform
        return ([missing] + own if missing else own)[:limit]
    request = None if request_shown else SHOW_A_LOGGED_REQUEST if "--log-requests" in user_flags else SHOW_A_REQUEST
    first_error = (missing or (QUIET_LOG if quiet_log else request if no_error_lines else GENERIC[1]))
    # what was cut off (the traceback's end, what was above a thread dump) is the one thing to go on
    generic = ([first_error, environment_step(hardware)] if missing
               else [environment_step(hardware), first_error])
    generic = [step for step in generic if step is not None]
    generic += [] if known_command else [GENERIC[2]]
    return generic[:limit]


def for_version(steps: list[Sentence], version: str | None, registry) -> list[Sentence]:
    """The steps as the user's SGLang version spells its flags: a renamed flag is replaced by the
    registry's replacement, a step with a flag that has none is left out. Unchanged when the
    version or the registry is unknown."""
    if registry is None or not version:
        return steps
    release = registry.nearest(version)
    out = []
    for step in steps:
        # only SGLang's flags: `py-spy dump --pid`, `nvidia-smi --query-gpu` are other tools' own
        for name in (name for name in sglang_names(step) if name.startswith("--")):
            status = registry.check(name, release)
            if status.exists:
                continue
            replacement = (status.replacement or "").split()
            if len(replacement) != 1:   # no single flag to use instead: the step does not apply
                step = None
                break
            flag = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
            step = Sentence(flag.sub(replacement[0], step), flag.sub(replacement[0], step.zh))
        if step:
            out.append(step)
    return out


def kind_steps(kind: str, named=(), user_flags=frozenset(), request_shown: bool = False,
               hardware: str | None = None) -> list[Sentence]:
    """The steps for wrong output (a request that shows it, unless the paste has one, then
    bisecting with it) or slowness (measure it, then what the launch turns off, then whether the
    `hardware` is busy)."""
    if kind == "slow":
        return slow_steps(hardware)
    request = SHOW_A_LOGGED_REQUEST if "--log-requests" in user_flags else SHOW_A_REQUEST
    return ([] if request_shown else [request]) + [bisect_wrong_output(named)]


def next_for_kind(kinds, hardware: str | None = None, user_flags=frozenset(), limit: int = MAX_STEPS,
                  request_shown: bool = False, paste_text: str = "", gpu_archs=frozenset(),
              missing_package: bool = False) -> list[Sentence]:
    """Next steps for a server that started and a user who asks about how it runs: by the kind of
    problem their words name (`assistant.failure_kind`): measuring for slowness, a dump of where it
    waits for a hang, the request for wrong output; with none, that nothing failed. The environment
    step closes the list."""
    request = SHOW_A_LOGGED_REQUEST if "--log-requests" in user_flags else SHOW_A_REQUEST
    if "slow" in kinds:
        steps = slow_steps(hardware)
    elif "hang" in kinds:
        steps = [QUIET_LOG]
    elif "wrong output" in kinds:
        steps = [] if request_shown else [request]
    else:
        steps = [NOTHING_FAILED]
    return steps[:limit] + [environment_step(hardware)]
