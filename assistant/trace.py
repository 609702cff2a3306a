"""Trace analysis: find the error that matters in a pasted trace or a whole server log, rank the
error lines, and keep the lines retrieval matches; what the user is running (versions, GPU, launch
flags) is read by `assistant.environment` from the same pass.

Works on a stream of lines with bounded memory, so a 50 MB log is triaged rather than embedded:
the same traceback printed by 8 ranks counts once, consequence lines ("terminated with -3") never
outrank the root error, and only a bounded set of distinct interesting lines is kept.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from assistant.commands import SGLANG_MARKER_RE, SGLANG_PROGRAM
from assistant.environment import ACTIVITY_WORD_RE, NOT_SGLANG_NAME, Environment, EnvironmentReader, named_programs
from assistant.generic_lines import SOLUTION_STEP, TORCH_CUDA_NOTES
from assistant.kernel_fault import ASYNC_FAULT_RE, DRIVER_FAULT_RE
from assistant.log_encoding import CARRIED, EXCEPTION_NAME, decoded, plain_text
from assistant.log_prefix import PREFIX_RE
from assistant.python_messages import PYTHON_MESSAGE_RE
from assistant.quoted_line import BACKTICK, DOUBLE, MESSAGE_MARKS, SINGLE, quoted_spans, quotes
from assistant.system_messages import in_c_locale
from assistant.terminal_wrap import unwrapped
from assistant.text import CHINESE_CHAR_RE, mask

MAX_LINE = 2000          # characters kept of one line
MAX_TEMPLATES = 4000     # distinct masked lines remembered for signature matching
MAX_ERRORS = 60          # distinct error lines kept
TAIL_LINES = 40          # the last lines of a log (a hang shows there)
SHORT_PASTE = 30         # a paste this short is all context; a longer log is triaged to its errors
MAX_SHAPES = 20000       # line shapes whose masked form is memoised (see _masked)
PROGRESS_EVERY = 100_000  # lines between two progress callbacks

# PyTorch's notes under every CUDA error (generic_lines) name no failure, so retrieval does not read
# them; their words drew the illegal-access entry, which lists them, to every device-side assert
TORCH_CUDA_NOTE_RE = re.compile(r"\s*(?:" + "|".join(map(re.escape, TORCH_CUDA_NOTES)) + ")")

EXCEPTION_RE = re.compile(
    # `raise Exception("...")` (80 sites in SGLang 0.5.23) prints a bare "Exception: ..."
    r"^(?:(?:[A-Za-z_][\w]*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failed|Failure|Fault|Timeout)|Exception)\b"
    # a class named otherwise is still an exception when its module path is printed with it:
    # `triton.runtime.errors.OutOfResources: out of resource: ...`, `torch._dynamo.exc.Unsupported: ...`
    r"|(?:[a-z_][a-z0-9_]*\.){2,}[A-Z]\w*(?=\(|:\s|:$))"
    r"(?:\(.*\))?(?::|$)"
)
FATAL_RE = re.compile(
    r"fatal error|Fatal Python error|Segmentation fault|signal 11|core dumped|CUDA error|"
    r"NCCL error|out of memory|OutOfMemory|unrecognized arguments|error:|Error:|ERROR|"
    r"[Tt]imed? ?out|Timeout|not supported|\bUnsupported\b|No such file|cannot open shared object|"
    r"undefined symbol|[Ff]ailed to|failed\b|Health check failed|is not alive|Connection refused|"
    r"Connection closed|Address already in use|[Aa]ssertion|illegal memory access|"
    r"no kernel image|not enough memory|Not enough memory|Please install|"
    # the linker's own reason, above the `collect2: error: ld returned 1 exit status` every link failure ends with
    r"\bld(?:\.\w+)?: cannot find\b|undefined reference to|"
    r"hipError|HSA_STATUS_ERROR|Memory access fault by GPU|musa failed|mtshmem|No Device found|Bootstrap:|is not divisible|"
    r"not aligned|is deprecated|could be dead|might be dead|is longer than|exceeds|"
    # SGLang's grammar backends log a constraint they cannot compile with the exception's repr
    # (`Hit invalid ebnf: key_string=..., e=RuntimeError('EBNF parse error ...')`)
    r"\bHit invalid \w+:|\bInvalid grammar request\b|\be=[A-Z]\w*(?:Error|Exception)\(|"
    r"already in use|\bError in request:|\bfail(?:s|ed|ing|ure)?\b|\bcrash|\bhangs?\b|\bstuck\b|\bOOM\b|报错|失败|错误|卡住|崩溃|超时",
)
CONSEQUENCE_RE = re.compile(
    r"terminated with -?\d+|Received sigquit|sigquit from a child|Child process unexpectedly|"
    r"scheduler is dead|exit code|Killed process|KeyboardInterrupt|Shutting down|"
    r"Exception in thread|Traceback \(most recent call last\)|During handling of the above|"
    r"The above exception was the direct cause|^Possible solutions:|" + SOLUTION_STEP,
    re.I,
)
# an exception with no message (`EOFError` from a pipe whose other end died, asyncio's
# `CancelledError`) says a failure travelled here, not what it was; a bare `AssertionError` still
# points at its assert
BARE_EXCEPTION_RE = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*(?!Assertion)[A-Z]\w*(?:Error|Exception)\s*$")
# bash names the signal a job died of before the job's command: `Killed` alone in the foreground,
# `[1]+  Killed      python -m sglang.launch_server ...` for a background job, and
# `./run.sh: line 19: 867080 Killed      python -m ...` from a script. bash pads the signal's name to
# a column, but a script's report copied through a terminal or a CI log often keeps one space
# (`./x.sh: line 48: 28 Killed python3 ...`): after the job or script prefix one space is enough, and
# so it is before a command that starts a program (`Killed python3 -m sglang.launch_server ...`)
SHELL_JOB_STATUS_RE = re.compile(
    r"^(?:(\[\d+\][+-]?\s+|\S+: line \d+:\s+\d+\s+))?"
    r"(Killed|Terminated|Hangup|Quit|Aborted|Segmentation fault|Bus error|Illegal instruction|"
    r"Floating point exception)(?: \(core dumped\))?"
    r"(?:(?:\s{2,}|(?<=\))\s|(?(1)\s|\s(?=(?:\S*/)?(?:python[\d.]*\s+(?:-\S|\S+\.py\b)|(?:torchrun|sglang|nohup|bash|sh)\s+\S))))(\S.*))?$")
_SIGNAL_WORDS = frozenset({"Killed", "Terminated", "Hangup", "Quit", "Aborted", "Segmentation", "Bus", "Illegal",
                           "Floating"})
# sent from outside (the OOM killer, a supervisor, SGLang's own teardown after a child failed):
# they say the process was stopped, not why
_SIGNALS_FROM_OUTSIDE = ("Killed", "Terminated", "Hangup", "Quit")
# an exception the user quotes inside a sentence, in backticks or quotes or to the end of the
# line: "I am getting `ValueError: Out of range float values are not JSON compliant`"
QUOTED_EXCEPTION_RE = re.compile(
    rf"(?:(?<=[`\"'(\s:\u3000-\u303f\u3400-\u9fff\uff00-\uffef\u201c])|^)((?:{EXCEPTION_NAME}|Exception)(?:\([^)]*\))?: "
    r"[^`\"\u201d\u300d]{8,}?)(?=[`\"\u201d\u300d]|\s*$)")
WRAPPER_RE = re.compile(r"^(?:\w+(?:Error|Exception): )?(?:Capture cuda graph failed|Scheduler hit an exception|"
                        r"Scheduler hit an exception in \w+): (.+)$")
# an exception whose message is only where it happened (triton's `CompilationError: at 131:21:`):
# the lines below it hold the source excerpt and then what went wrong
LOCATION_HEADER_RE = re.compile(r"^(?:\w+\.)*\w*(?:Error|Exception): at \d+:\d+:\s*$")
QUOTE_MARK_RE = re.compile(r"^\s*(?:>\s?)+")
# the level field of a logging line at DEBUG: "- name - DEBUG - msg", "DEBUG:root:msg", "[DEBUG] msg"
DEBUG_LEVEL_RE = re.compile(r"^(?:-\s+)?(?:[\w.:]+\s+-\s+)?\[?DEBUG\]?(?:\s+-\s+|:|\s)")
# and Python's warning categories (`hub.py:111: FutureWarning: Using TRANSFORMERS_CACHE is deprecated`)
WARNING_RE = re.compile(r"\bWARN(?:ING)?\b|\bwarn\b|\b[A-Z][A-Za-z]*Warning\b")
# a frame of a native backtrace: "libucs.so.0(ucs_handle_error+0x2dc)", "#3 0x7f.. in ncclX () from ..."
# torch's C++ backtrace under a c10::Error (`frame #3: c10d::ProcessGroupNCCL::... + 0x9a (... libtorch_cuda.so)`)
CPP_FRAME_RE = re.compile(r"^frame #\d+: ")
NATIVE_FRAME_RE = re.compile(r"\.so(?:\.\d+)*\b[^\s]*\(|^\s*#\d+\s+0x[0-9a-f]+|\bin \w+ \(\) from /|\[0x[0-9a-f]+\]")
MAX_SGLANG_FRAMES = 64
BARE_ASSERTION_RE = re.compile(r"^(?:\w+\.)*AssertionError:?\s*$")
# a traceback's frame; faulthandler (a segfault or bus error dump) writes it without the comma
FRAME_RE = re.compile(r'^\s*File "([^"]+)", line \d+,? in (\S+)')
# the last frame of a paste cut mid-line (`  File "sglang/srt/server_args.py",`): its file is still
# the innermost place the call reached; its function is unknown
CUT_FRAME_RE = re.compile(r'^\s*File "([^"]+\.py)",?(?: line \d*)?\s*$')
CUT_FUNCTION = "<cut>"
# IPython's and Jupyter's frames: `File /x/engine.py:121, in Engine.__init__(self, **kwargs)`
# (IPython 8), `/x/engine.py in __init__(self, **kwargs)` (IPython 7), and the notebook cell itself
IPYTHON_FRAME_RE = re.compile(r"^\s*(?:File ([~/\w.\\:-][^\s:]*\.py):\d+, in ([\w.<>]+)\("
                              r"|([~/][^\s:]*\.py) in ([\w.<>]+)\("
                              r"|(Cell In\[\d+\]), line \d+$|(<ipython-input-[\w-]+>) in (<module>))")
# the numbered source lines IPython shows around each frame's line (`----> 121 x = f()`)
IPYTHON_SOURCE_RE = re.compile(r"^\s*(?:-*>\s*)?\d+ ")
# faulthandler's header of one thread's stack, innermost frame first; "Current thread" is the one
# that received the signal
THREAD_STACK_RE = re.compile(r"^(Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):")
# the level field of a logging line below WARNING, with no time stamp before it: "INFO:root:msg",
# "[INFO] msg", "INFO 08-13 01:01:51 msg", glog's "I0813 01:01:51.123 ..."
INFO_LEVEL_RE = re.compile(r"^(?:\[?(?:INFO|NOTICE|TRACE)\]?(?::|\s)|I\d{4} \d\d:\d\d)")
INFO_HINT_RE = re.compile(
    r"Waiting for \d+ workers|Init torch distributed begin|Load weight begin|KV Cache is allocated|"
    r"Capture cuda graph begin|Entering DeepGEMM|Prefill batch|Decode batch|server is fired up|"
    r"KV cache pool is full|Performance is NOT guaranteed|cache hit rate|#cached-token"
)

# a traceback chained to the one before it: its exception was raised while handling (or from) that one
CHAINED_MARKERS = ("During handling of the above", "The above exception was the direct cause")
MAX_CHAIN_LINES = 200   # chained-exception markers kept (a log of many retries repeats them)
# the markers Python 3.11+ prints under a frame's source line (`~~~~~^^^^^^`)
POSITION_MARKER_RE = re.compile(r"^[~^][~^ ]*$")
LOOSE_FLAGS_RE = re.compile(r"^(?:\S+\s+)?--[a-z][\w-]+(?:\s+\S+)?(?:\s+--[a-z][\w-]+(?:\s+[^-\s]\S*)?)+\s*$")
@dataclass(frozen=True)
class ErrorLine:
    text: str        # the line as the user has it, without timestamp prefixes
    masked: str
    line_no: int     # 1-based, first occurrence
    count: int       # how many times it appeared (ranks, retries)
    kind: str        # exception | fatal | warning | consequence
    # not what stopped it: the server went on serving after it, or the user's Ctrl-C caused it
    survived: bool = False


# a line SGLang's own run prints: its module paths, its launcher, its rank prefixes, its kernels
SGLANG_LOG_RE = re.compile(r"sglang[/\\]|\bsglang\.(?:srt|launch_server|lang|bench_\w+|check_env)\b|launch_server|"
                           r"\[TP\d+|\bTP\d+\]|sgl[_-]kernel|/srt/|Scheduler hit an exception", re.I)


@dataclass(frozen=True)
class Analysis:
    errors: tuple[ErrorLine, ...]   # the error that matters first
    frames: tuple[str, ...]         # function names of the first traceback
    question: str                   # the prose around the log (the user's question)
    masked_lines: tuple[str, ...]   # distinct masked lines kept, for signature matching
    environment: Environment
    total_lines: int
    collapsed_repeats: int          # lines dropped as repeats of an earlier one
    log_lines: int = 0              # lines that carry a log prefix (timestamp, [TP0], glog, ray)
    other_software: tuple[str, ...] = ()  # e.g. ("vllm",): the paste comes from another program
    prose_lines: tuple[str, ...] = ()     # masked lines of the user's own words
    user_names: tuple[str, ...] = ()      # SGLang flags / env vars the user wrote (not ours to recommend)
    tail_lines: frozenset = frozenset()   # masked last lines of the log: where a hang stops
    originals: dict = field(default_factory=dict, repr=False)  # masked line -> the user's line

    def original(self, masked_line: str) -> str:
        return self.originals.get(masked_line, masked_line)
    mentions_sglang: bool = False
    plain_lines: tuple[str, ...] = ()  # the first distinct non-error lines (a fallback query)
    # those of them a program logged at an info level (a time stamp or `INFO:` in front: `[2025-08-13
    # 01:01:51] Use flashinfer backend by default.`): the program's words about a healthy step, not
    # the user's, so a component they name is not where the failure is
    logged_lines: frozenset = frozenset()
    # error lines (masked) that came behind a logger's time stamp (`[2026-01-12 10:11:03 TP0] Decode
    # transfer failed ...`): a program's words however much they read like a sentence
    stamped_errors: frozenset = frozenset()
    frame_files: tuple[str, ...] = ()   # file paths of the first traceback's frames, innermost last
    # (file, function) of the failing traceback's frames, innermost last: frames and frame_files
    # drop repeats each on its own, so only these pairs say which function ran in which file
    failure_sites: tuple[tuple[str, str], ...] = ()
    sglang_frames: tuple[tuple[str, str], ...] = ()  # (file, function) of SGLang frames: date the release
    native_lines: tuple[str, ...] = ()  # native backtrace lines (`libucs.so(ucs_handle_error+0x2dc)`)
    source_lines: frozenset = frozenset()   # masked lines that are a traceback frame's source code
    serving_lines: int = 0          # "Prefill batch" / "Decode batch" lines: the server was serving
    ready: bool = False             # "The server is fired up and ready to roll!" is in the paste
    # line numbers of "During handling of the above exception" / "The above exception was the direct
    # cause": an exception after one was raised while handling (or from) the one before it
    chain_lines: tuple[int, ...] = ()
    # the paste ends inside a traceback, before the exception line that says what failed
    traceback_cut: bool = False
    title_line: int = 0   # the line number of a tagged report title (`[Bug] ...`), 0 for none
    # masked errors the paste shows only inside the user's sentences ("fails with `RuntimeError: ...`")
    user_quotes: frozenset = frozenset()
    # what the user's own short lines (title, description, sentences) set off in quote marks (quoted_line)
    quoted_spans: tuple[str, ...] = ()

    def from_title(self, error: ErrorLine) -> bool:
        """The error line is only the report's title: the user's summary, which names the error in
        their words (`[Bug] SGLang encounter Watchdog timeout error on ...`) or with their words
        after it (`ValueError: ... when using online quantization, leading to OOM`)."""
        return error.line_no == self.title_line and error.count == 1

    @property
    def from_other_program(self) -> bool:
        """The paste is another program's: it names one and nothing in it is SGLang's, or the user
        says SGLang is not what ran and no SGLang frame or log line shows (their own words may still
        name SGLang: "not from SGLang", "SGLang runs on the same machine")."""
        if not self.other_software:
            return False
        if not self.mentions_sglang:
            return True
        prose = set(self.prose_lines)
        return (NOT_SGLANG_NAME in self.other_software and not self.sglang_frames
                and not any(SGLANG_LOG_RE.search(line) for line in self.masked_lines[:2000] if line not in prose))

    def innermost(self, count: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The failing traceback's `count` innermost distinct files and functions, innermost last.
        (frames and frame_files keep a name where it first appears, so a file the call passed
        through on its way in, `tokenizer_manager.py` above `utils.py` above it again, would look
        outer than it is.)"""
        files: list[str] = []
        functions: list[str] = []
        for path, function in reversed(self.failure_sites):
            if len(files) < count and path not in files:
                files.insert(0, path)
            if len(functions) < count and function not in functions:
                functions.insert(0, function)
        return tuple(files), tuple(functions)

    @property
    def primary(self) -> ErrorLine | None:
        return self.errors[0] if self.errors else None

    @property
    def root_line(self) -> ErrorLine | None:
        """The error line the answer shows as the root error: the first one that is not the user's
        own telling of the failure (a report's title, a caption, a paragraph: `tells_of_failure`)
        nor a warning the program printed and went on from. None when the paste shows no error line
        of a program."""
        told = [e for e in self.errors if not tells_of_failure(e) and e.kind != "warning"]
        logged = next((e for e in told if not self.from_title(e)), None)
        if logged is not None and told[0] is not logged and self._retells_title(logged, told[0]):
            # the title quotes the program's exception line; a sentence below that names the same
            # exception again is the user's retelling of it, not a line of the program's
            return told[0]
        if logged is not None and logged.kind == "fatal" and looks_like_sentence(logged.text) \
                and logged.masked not in self.stamped_errors:
            quoted = _quoted_errors(logged.text)
            if quoted:
                # the user's sentence quotes the program's line ("Dies at startup with "Capture cuda
                # graph failed: CUDA out of memory"", "fails with `RuntimeError: HIP error: ...`"):
                # the quote, not the sentence around it, is the error to show
                text, kind = quoted[0]
                return ErrorLine(text, mask(text), logged.line_no, logged.count, kind, logged.survived)
        if logged is not None and logged.kind == "consequence" and self.traceback_cut:
            # `Received sigquit from a child process`, `Subprocess scheduler_1 ... crashed with exit
            # code 1` say a child died; the child's own traceback above them, cut before its exception
            # line, holds what failed: that missing line is the root error, not the teardown's
            return None
        if logged is not None or not told:
            return logged
        # the title is all there is: an exception it names is the error, its own words are not
        return told[0] if told[0].kind == "exception" else None

    def _retells_title(self, error: ErrorLine, title: ErrorLine) -> bool:
        """`title` is the report's title naming an exception, and `error` only the user's words naming
        that exception again: a quote in their sentence, or the sentence itself."""
        if not self.from_title(title) or title.kind != "exception":
            return False
        if error.kind == "exception" and title.masked.startswith(error.masked.rstrip(" .")):
            # the user quotes the title's exception whole, without the words the title runs on
            # with ("KeyError: 'rope_scaling' on startup of my finetune"): the quote is the line
            return False
        name = re.match(r"(?:[A-Za-z_]\w*\.)*(\w+)", title.text)
        user_words = error.masked in self.user_quotes or (error.kind == "fatal" and looks_like_sentence(error.text))
        return bool(name) and user_words and re.search(rf"\b{re.escape(name.group(1))}\b", error.text) is not None

    @property
    def stopping_errors(self) -> tuple[ErrorLine, ...]:
        """The errors without those the server went on serving after (all of them when every
        error is such): where the failure comes from."""
        return tuple(e for e in self.errors if not e.survived) or self.errors

    def query_text(self, max_errors: int = 12) -> str:
        """What retrieval sees: the question, the key error lines, the failing frames; the
        distinct lines of the paste when nothing in it looks like an error."""
        parts = [self.question] if self.question else []
        parts += [in_c_locale(e.text) for e in self.errors[:max_errors] if not TORCH_CUDA_NOTE_RE.match(e.text)]
        if not self.errors or self.total_lines <= SHORT_PASTE:
            # in a short paste every line is context
            parts += [line for line in self.plain_lines if not TORCH_CUDA_NOTE_RE.match(line)]
        flags = [f.split()[0] for f in self.environment.flags if f.split()[0] not in ("--model-path", "--model")]
        if flags:
            parts.append(" ".join(dict.fromkeys(flags)))
        if self.frames:
            parts.append(" ".join(f for f in self.frames if not f.startswith("<")))
        if not parts:
            # nothing read as an error, a sentence or context (one configuration dump): the
            # paste's own lines are all there is to search with
            parts = [self.original(line) for line in self.masked_lines[:max_errors]]
        return "\n".join(parts)


# a CLI flag's name says nothing about failure: `--router-worker-startup-timeout-secs 600` in a
# launch command is not a timeout
FLAG_NAME_RE = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")


# a banner framing a tool's output (`///-----[ERROR][Triton][END]-----`, `===== ERROR =====`)
# says an error is near; the error is the text it frames
_BRACKETED_RE = re.compile(r"\[[^\]]*\]")
_BANNER_WORD_RE = re.compile(r"[A-Za-z\u3400-\u9fff]{2,}")
_LEVEL_WORDS = frozenset("error errors fatal warning warn critical begin beg end start".split())


def _is_banner(line: str) -> bool:
    """A line that holds nothing but punctuation, level words and bracketed tags."""
    words = _BANNER_WORD_RE.findall(_BRACKETED_RE.sub(" ", line))
    return all(word.lower() in _LEVEL_WORDS for word in words)


def _frame(text: str) -> tuple[str, str] | None:
    """(file, function) of a traceback's frame line, Python's or IPython's; IPython's qualified
    `Engine.__init__` is the function name Python prints, `__init__`."""
    frame = FRAME_RE.match(text)
    if frame:
        return frame.group(1), frame.group(2)
    frame = CUT_FRAME_RE.match(text)
    if frame:
        return frame.group(1), CUT_FUNCTION
    if "in " not in text and "Cell In[" not in text:
        return None
    frame = IPYTHON_FRAME_RE.match(text)
    if not frame:
        return None
    path = next(g for g in (frame.group(1), frame.group(3), frame.group(5), frame.group(6)) if g)
    function = frame.group(2) or frame.group(4) or frame.group(7) or "<module>"
    return path, function.rsplit(".", 1)[-1]


# a C++ exception nobody caught aborts the process: the runtime names its type, then its message
# (`terminate called after throwing an instance of 'tvm::ffi::Error'` / `  what():  TypeAttr ...`).
# The message is the error; the first line only says an exception ended the process.
CPP_TERMINATE_RE = re.compile(r"^\s*terminate called (?:after throwing an instance of|recursively|without an active)")
CPP_WHAT_RE = re.compile(r"^\s*what\(\):\s*\S")
# lines only a program prints, never the user: they end the user's words above them
PROGRAM_LINE_RE = re.compile(r"^\s*(?:terminate called |what\(\):|Fatal Python error:|Current thread 0x|"
                             r"Traceback \(most recent call last\)|"
                             # a level name in capitals opens a logger's or an installer's line (pip's
                             # `ERROR: Cannot install ...`, an image's `WARNING: Detected NVIDIA B200 GPU`)
                             r"(?:INFO|WARNING|WARN|ERROR|CRITICAL|FATAL):\s|"
                             r"Thread 0x[0-9a-f]+ \(most recent call first\)|\*\*\* (?:SIG\w+|Process received signal)|"
                             # the GPU driver's kernel-log lines (`NVRM: Xid ...`, `amdgpu 0000:05:00.0: amdgpu: ...`)
                             r"NVRM: |amdgpu \S+: amdgpu: )")


def _classify(line: str) -> str | None:
    if CARRIED in line:
        return None   # the line that carried an escaped log relays it: the log's own lines say what failed
    line = in_c_locale(line)   # `已杀死` is `Killed`, `段错误` a `Segmentation fault`
    if CPP_WHAT_RE.match(line):
        return "exception"
    if CPP_TERMINATE_RE.match(line):
        return "consequence"
    if DRIVER_FAULT_RE.search(line):
        return "fatal"   # the GPU driver's fault report (`NVRM: Xid ...: 79`, `amdgpu: ... page fault`)
    if CONSEQUENCE_RE.search(line) or BARE_EXCEPTION_RE.match(line):
        return "consequence"
    if EXCEPTION_RE.match(line):
        return "exception"
    if line.endswith(":") and _introduces_output(line):
        return None   # "results in error:", "I got the following error:": the error is the next line
    if _LEAD_IN_RE.search(line) and _wordy(line):
        # a sentence of any length that hands over to the error below it ("When running the image,
        # the container fails to initialize with the following error:") is not that error
        return None
    if _INTRO_TAIL_RE.search(line):
        return None   # "`python -m sglang.launch_server ...` fails with": the error is the next line
    if PROBE_SPEC_RE.match(line):
        return None   # `kubectl describe`'s probe settings (`Liveness: http-get ... timeout=5s`) are configuration
    if "-" in line:
        line = FLAG_NAME_RE.sub(" ", line)
    if FATAL_RE.search(line):
        if _is_banner(line):
            return None
        if LEVEL_WARNING_RE.search(line):
            return "warning"   # the logger's own level says the program went on, whatever the words
        return "warning" if WARNING_RE.search(line) and "error" not in line.lower() else "fatal"
    if WARNING_RE.search(line):
        return "warning"
    if PYTHON_MESSAGE_RE.search(line) and not HANDLED_RE.search(line):
        return "exception"
    return None


# glog's header of an ERROR or FATAL line, with its time or with the time elided (`E0000 ... file.cpp:1105]`)
GLOG_ERROR_RE = re.compile(r"[EF]\d{4} (?:\.{3}|\d\d:\d\d:\d\d)")


# a log line whose level is WARNING, as the logger prints it: Python's default format
# (`WARNING:sglang.srt.models.registry:Ignore import error ...`), glog's `W1215 ...`, the
# ` - WARNING - ` and `| WARNING |` of common formats
LEVEL_WARNING_RE = re.compile(r"^\s*(?:WARN(?:ING)?:[\w.]*:|WARN(?:ING)?\s+-\s|W\d{4} \d\d:\d\d:\d\d)"
                              r"|\s-\s+WARN(?:ING)?\s+-\s|\|\s*WARN(?:ING)?\s*\|")
# a program saying it handled the error (`Ignore import error when loading sglang.srt.models.x:
# cannot import name ...`): what it quotes did not stop anything
HANDLED_RE = re.compile(r"\b(?:[Ii]gnor(?:e|es|ed|ing)|[Ss]kip(?:s|ped|ping)?|[Ff]alling back|[Ff]allback)\b")
# a Python message quoted without its exception class ranks after the exception lines that
# name one (the same error as the traceback printed it) and before the fatal lines
UNNAMED_EXCEPTION_RANK = 0.5
PROBE_SPEC_RE = re.compile(r"^\s*(?:Liveness|Readiness|Startup):\s+(?:http-get|exec|tcp-socket|grpc)\b")
_PRIORITY = {"exception": 0, "fatal": 1, "warning": 2, "consequence": 3}
# SGLang's request log lines (`--log-requests`): `Receive: obj=GenerateReqInput(... text='...')`,
# `Finish: obj=..., out={'text': '...'}`; what they quote is a prompt or an answer
REQUEST_RECORD_RE = re.compile(r"\b(?:Receive|Finish): obj=\w+\(|\bout=\{['\"](?:text|meta_info|output_ids)['\"]|"
                               # a wrapper's or proxy's own request log: `Received request ... text='...'`
                               r"\b[Rr]equests?\b.{0,80}?\b(?:text|prompt|messages|input)=['\"\[]")
# before the record: then the line reports an error about the request (`Error in request: ...`)
ERROR_BEFORE_RE = re.compile(r"Error|Exception|ERROR|Traceback|[Ff]ailed")
# the scheduler's progress lines: the server was still serving when it printed them
SERVING_RE = re.compile(r"\b(?:Prefill|Decode) batch\b")
SURVIVED_SERVING = 20    # this many progress lines after an error's last occurrence: the server lived on
MAX_TRACEBACKS = 64
MAX_SOURCE_LINES = 400
MAX_TRACEBACK_FRAMES = 200
USER_INTERRUPT_RE = re.compile(r"^\s*KeyboardInterrupt\s*$|^\^C")
SURVIVED_PENALTY = 1.5   # a survived exception ranks after the fatal lines, before the warnings


@dataclass
class _State:
    templates: dict[str, int] = field(default_factory=dict)
    errors: dict[str, list] = field(default_factory=dict)  # masked -> [text, line_no, count, kind]
    frames: list[str] = field(default_factory=list)
    frame_files: list[str] = field(default_factory=list)
    sglang_frames: dict[tuple[str, str], None] = field(default_factory=dict)   # every traceback's
    native: list[str] = field(default_factory=list)
    frames_done: bool = False
    in_traceback: bool = False
    after_frame: bool = False   # the previous line was a traceback frame
    # the frames of the traceback being read, and (exception line, functions, files) of each
    # finished one: when the first traceback is an error the server survived, the failure's are used
    tb_frames: list[str] = field(default_factory=list)
    tb_files: list[str] = field(default_factory=list)
    tracebacks: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    source_lines: set[str] = field(default_factory=set)   # masked lines read as a frame's source code
    prose: list[str] = field(default_factory=list)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    plain: list[str] = field(default_factory=list)
    logged: set[str] = field(default_factory=set)   # the plain lines a program logged (see Analysis)
    stamped: set[str] = field(default_factory=set)  # error lines behind a logger's time stamp (see Analysis)
    last_assert: str | None = None   # the `assert ...` source line a bare AssertionError refers to
    # the failing assert the paste shows with no exception line under it (a traceback cut below
    # its innermost frame's `assert`, an assert quoted as code), and its line number
    open_assert: tuple[str, int] | None = None
    names_assertion: bool = False    # "AssertionError" is somewhere in the paste
    launch: str | None = None
    environment: EnvironmentReader = field(default_factory=EnvironmentReader)
    originals: dict[str, str] = field(default_factory=dict)
    last_was_prose: bool = False   # a question wrapped over several lines continues as prose
    # the user's last line handed over to what follows ("Every request with tools fails:", "I get the
    # following error"): an error line under it is the output it announces, not more of the sentence
    last_prose_announces: bool = False
    last_prose_chinese: bool = False   # ... in its own language: an English line under a Chinese
                                       # sentence is a message the user quotes, not their words
    seen_text: bool = False        # a non-blank line was read: the next one is not the title
    title_line: int = 0            # the first line, when it is a tagged report title
    describing: bool = False       # under a report's "Describe the bug" / "Summary" heading
    # the line right under a report's title: a sentence there says what the report is about, whether
    # or not it talks to the reader ("The launcher hides error messages because ...")
    under_title: bool = False
    in_fence: bool = False         # inside a Markdown code block (the user's log, not their words)
    described: list[str] = field(default_factory=list)   # the report's title and description
    chain_lines: list[int] = field(default_factory=list)   # "During handling of the above exception" lines
    serving_lines: int = 0         # the scheduler's "Prefill batch" / "Decode batch" lines so far
    ready: bool = False            # the server said it is up ("The server is fired up and ready to roll!")
    repeats: int = 0
    total: int = 0
    log_lines: int = 0
    pending_command: str | None = None
    command_quoted: bool = False     # the pending command's first line was quoted in Markdown ("> ")
    loose_flags: str | None = None   # "--tp 16 --dp 16 --enable-dp-attention" pasted without a command
    shapes: dict[str, str | None] = field(default_factory=dict)   # line shape -> masked line
    prefix_ends: dict[str, int] = field(default_factory=dict)      # line shape -> prefix length
    quiet: dict[str, tuple[int, str, str]] = field(default_factory=dict)  # see _quiet_vote
    keep_debug: bool = False
    # in a faulthandler dump: where the current thread's frames go (they come innermost first), or
    # -1 in another thread's stack (not the failing code)
    thread_stack_at: int | None = None
    skipped_debug: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    # `RuntimeError:` with its message on the indented lines below (multiprocessing's bootstrapping
    # error): the header and the message lines read so far
    open_message: tuple[str, list[str]] | None = None
    user_quotes: set[str] = field(default_factory=set)   # masked errors only quoted in the user's sentences


def _job_status(text: str, st: _State) -> bool:
    """Read bash's report of a job killed by a signal: the signal is an error line of its own,
    the command after it the launch command."""
    text = in_c_locale(text)   # `./start.sh: 第 12 行： 2918331 已杀死  python3 ...` from a zh_CN shell
    match = SHELL_JOB_STATUS_RE.match(text)
    if not match:
        return False
    command = match.group(3)
    status = text[:match.start(3)].rstrip() if command else text
    st.last_was_prose = False
    st.tail.append(status)
    _add_error(st, status, "consequence" if match.group(2) in _SIGNALS_FROM_OUTSIDE else "fatal")
    if command and st.launch is None and SGLANG_MARKER_RE.search(command):
        st.launch = command
    return True


# where a command that starts SGLang begins: its program, after any `VAR=value`, `nohup`, `bash -c '`
_PROGRAM_RE = re.compile(SGLANG_PROGRAM)
_SHELL_PREFIX_RE = re.compile(r"(?:\s*(?:[A-Za-z_]\w*=\S*|nohup|sudo|exec|env|time|(?:ba)?sh\s+-c|['\"`]))*\s*")
# what ends the user's words or a shell prompt before the command: "...with Triton 3.5: python3 -m ...",
# `root@host:~# `, `$ `
_COMMAND_INTRO_RE = re.compile(r"(?::|：|[$#>])\s")


def _command_only(text: str) -> str:
    """A line that holds a launch command, without the sentence or the prompt before it (`Launching
    SGLang on a GB300 node ...: python3 -m sglang.launch_server ...`)."""
    program = _PROGRAM_RE.search(text)
    if not program:
        return text
    for intro in reversed(list(_COMMAND_INTRO_RE.finditer(text, 0, program.start()))):
        if _SHELL_PREFIX_RE.fullmatch(text, intro.end(), program.start()):
            return text[intro.end():]
    return text


def _finish_command(st: _State) -> None:
    if st.pending_command and st.launch is None:
        st.launch = st.pending_command
    st.pending_command = None


def _feed(raw: str, st: _State) -> None:
    st.total += 1
    line = raw.rstrip("\r\n")[:MAX_LINE]
    quoted = line.lstrip().startswith(">")
    if quoted and (st.pending_command is None or st.command_quoted):
        # a log quoted in Markdown ("> ModuleNotFoundError: ..."); under a shell command's `\` the
        # `>` is the command's redirect (`  > ./local.log 2>&1 &`), unless the command was quoted too
        line = QUOTE_MARK_RE.sub("", line)
    if st.open_message is not None:
        if _indented(line, st) and line.strip() and len(st.open_message[1]) < MESSAGE_LINES:
            body = line[_prefix_end(line, st):].strip()
            st.open_message[1].append(body)
            _remember(st, mask(body), body)
            return
        if line.strip() or st.open_message[1]:
            _close_message(st)
    if not line.strip():
        st.last_was_prose = False  # a blank line ends the user's paragraph
        return
    title, st.seen_text = not st.seen_text, True   # a report's first line is its title
    if title and ISSUE_TAG_RE.match(line.strip()):
        st.title_line = st.total
    under_title, st.under_title = st.under_title, title and _title_of(line.strip()) is not None
    if st.pending_command is not None:
        st.pending_command += " " + line.strip().rstrip("\\").strip()
        if not line.rstrip().endswith("\\"):
            _finish_command(st)
        return
    shape = _shape(line)   # see _masked
    if "AssertionError" in line:
        st.names_assertion = True
    if "batch" in line and SERVING_RE.search(line):
        st.serving_lines += 1
    elif "ready to roll" in line:
        st.ready = True
    quiet = st.quiet.get(shape)
    if quiet is not None:   # see _quiet_vote: this line only counts
        end, masked, vote = quiet
        st.log_lines += 1   # a quiet shape has a log prefix
        if vote:
            st.environment.add_vote(vote)
        st.last_was_prose = False
        st.tail.append(line[end:].strip())
        st.templates[masked] += 1
        st.repeats += 1
        if masked in st.errors:
            st.errors[masked][2] += 1
            st.errors[masked][4] = st.serving_lines
        return
    record = REQUEST_RECORD_RE.search(line) if ("obj=" in line or "out={" in line or "equest" in line) else None
    if record and not ERROR_BEFORE_RE.search(line, 0, record.start()):
        # a request SGLang logs (`--log-requests`): the user's prompt and the model's answer are
        # data; an error message quoted in them is not the server's, nor a version in them its own
        st.log_lines += 1
        st.last_was_prose = False
        return
    st.environment.read(line, shape)
    end = _prefix_end(line, st, shape)
    text = line[end:].strip()
    text_shape = shape[end:].strip()
    if end and line[:end].strip():
        st.log_lines += 1
    if text[:1] in "^~" and POSITION_MARKER_RE.match(text):
        return   # Python 3.11's markers under a frame's source: the assert above them still fails
    if (len(text) < 40 or "  " in text or "dumped) " in text or ": line " in text[:60] or text[:1] == "["
            or text.split(" ", 1)[0] in _SIGNAL_WORDS) and _job_status(text, st):
        return
    # cheap substring tests first: the regexes behind them run on every line of a 200 MB log
    if st.launch is None and st.loose_flags is None and "--" in text and LOOSE_FLAGS_RE.match(text):
        st.loose_flags = text
    if st.launch is None and ("sglang" in text or "launch_server" in text) and SGLANG_MARKER_RE.search(text) \
            and not text.startswith("File "):   # a traceback's frame in launch_server.py is not the command
        st.pending_command = _command_only(text).rstrip("\\").strip()
        st.command_quoted = quoted
        if not line.rstrip().endswith("\\"):
            _finish_command(st)
    if not st.keep_debug and "DEBUG" in text[:80] and DEBUG_LEVEL_RE.match(text):
        st.skipped_debug.append(raw)
        return   # a DEBUG line records what the program handled ("falling back to ..."), not the failure
    st.tail.append(text)
    if text.startswith("{"):
        message = json_error_message(text)
        if message:
            # a server's JSON error body (curl output): its message is the error, whatever its words
            st.last_was_prose = False
            if len(st.templates) < MAX_TEMPLATES:
                _remember(st, _masked(text, st, text_shape), text)
            _add_error(st, message, _classify(message) or "exception")
            return
    if text.startswith("```"):
        st.in_fence = not st.in_fence
    heading = HEADING_RE.match(text)
    if heading:
        st.describing = bool(DESCRIPTION_HEADING_RE.search(heading.group(1)))
    prose = (not st.in_traceback and text == line.strip() and not EXCEPTION_RE.match(text)
             and not PROGRAM_LINE_RE.match(text)
             and (_looks_like_prose(text) or (st.last_was_prose and _wordy(text) and _same_script(st, text)
                                              and not (st.last_prose_announces and _program_output(text)))))
    if not prose and not st.in_traceback and len(st.described) < 20:
        # the report's title and description are the user's summary (read into the question), but
        # the line is matched as the log line it may quote: the rest of this function as before
        summary = (_title_of(line.strip()) if title else
                   text if (st.describing or under_title) and not st.in_fence and not heading and text == line.strip()
                   and _wordy(text) and _classify(text) is None else None)
        if summary and summary not in st.described:
            st.described.append(summary)
    st.last_was_prose = prose
    st.last_prose_chinese = prose and bool(CHINESE_CHAR_RE.search(text))
    st.last_prose_announces = prose and bool(_ANNOUNCES_RE.search(text))
    if prose:
        if text not in st.prose and len(st.prose) < 60:
            st.prose.append(text)  # the user's own words: matched only weakly as log lines
            if len(st.templates) < MAX_TEMPLATES:
                _remember(st, mask(text), text)
        for error in QUOTED_EXCEPTION_RE.findall(text) if "Error" in text or "Exception" in text else ():
            _add_user_quote(st, error.rstrip(" .,;"), "exception")   # "I am getting `ValueError: ...`"
        return
    masked = _masked(text, st, text_shape)
    if masked in st.templates:
        st.templates[masked] += 1
        st.repeats += 1
        if masked in st.errors:
            st.errors[masked][2] += 1
        vote = _quiet_vote(st, line, text, text_shape, shape)
        if vote is not None and len(st.quiet) < MAX_SHAPES:
            st.quiet[shape] = (end, masked, vote)
        return
    if len(st.templates) < MAX_TEMPLATES:
        _remember(st, masked, text)
    frame = _frame(text)
    if not frame:
        thread = THREAD_STACK_RE.match(text)
        if thread:   # a faulthandler stack follows; only the current thread's is the failure
            st.thread_stack_at = len(st.frames) if thread.group(1) == "Current thread" else -1
            return
        st.thread_stack_at = None
    if text.startswith(CHAINED_MARKERS) and len(st.chain_lines) < MAX_CHAIN_LINES:
        st.chain_lines.append(st.total)
    if text.startswith(("Traceback (most recent call last)", *CHAINED_MARKERS)) or \
            text.endswith(("Traceback (most recent call last):", "Traceback (most recent call last)")):
        if not st.in_traceback and "Traceback" in text:
            st.tb_frames, st.tb_files = [], []
        st.in_traceback = True
        return
    if ("ServerArgs(" in text or text.count("=") > 8) and not EXCEPTION_RE.match(text) and not _wordy(text):
        # a configuration dump, not an error (it says "timeout=" and "log_level="); an exception
        # about ServerArgs ("ServerArgs() got multiple values for keyword argument") is the error
        return
    if frame and frame[0].startswith("<"):
        # `File "<string>"` (a dataclass's generated __init__), `<frozen runpy>`: code with no
        # module behind it, so no component, package or release to read from it
        st.last_assert, st.after_frame = None, True
        return
    if frame:
        st.last_assert = None
        if st.in_traceback:
            st.open_assert = None   # an assert in an outer frame is where the call went on, not what failed
        path, function = frame
        if st.thread_stack_at is None and not st.in_traceback:
            # a paste cut above its `Traceback (most recent call last):` header: the frames still
            # open a traceback, which its exception line closes, so a second one (the next rank's,
            # the scheduler's re-raise) is not read as more of the first
            st.in_traceback = True
            st.tb_frames, st.tb_files = [], []
        if "sglang" in path and len(st.sglang_frames) < MAX_SGLANG_FRAMES:
            st.sglang_frames[(path, function)] = None
        if st.thread_stack_at is not None:
            if st.thread_stack_at >= 0 and not st.frames_done:   # outermost first, as a traceback
                st.frames.insert(st.thread_stack_at, function)
                st.frame_files.insert(st.thread_stack_at, path)
        elif not st.frames_done:
            st.frames.append(function)
            st.frame_files.append(path)
        if st.thread_stack_at is None and len(st.tb_frames) < MAX_TRACEBACK_FRAMES:
            st.tb_frames.append(function)
            st.tb_files.append(path)
        st.after_frame = True
        return
    # the line under a frame is its source code (`await asyncio.wait_for(..., timeout=4)`), not
    # a message, unless the traceback was cut and the exception follows the frame directly
    source, st.after_frame = st.after_frame, False
    if st.in_traceback and st.frames and IPYTHON_SOURCE_RE.match(text):
        return
    if len(st.native) < 40 and NATIVE_FRAME_RE.search(text):
        st.native.append(text)
    if CPP_FRAME_RE.match(text):
        # a C++ backtrace's frame (`frame #0: c10::Error::Error(...)`): where, never what failed
        if len(st.native) < 40 and not NATIVE_FRAME_RE.search(text):
            st.native.append(text)
        return
    kind = _classify(text)
    if kind is None and GLOG_ERROR_RE.match(text):
        # glog's level letter is the error mark of a C++ library's line whatever its words, in a
        # header the paste elided (`E0000 ... gpunetio_backend.cpp:1105] Can't register memory for
        # unknown device 3`, `E1104 06:35:19.118512 nixl_agent.cpp:473]` without its thread id), which
        # the reader does not strip as a log prefix. (A whole glog header is stripped; its line counts
        # by its words, as before: so read, `received packet mismatch` lines on dev took a right fix
        # from an entry whose error lines do not name them.)
        kind = "fatal"
    if source and kind != "exception":
        kind = None
    if kind == "exception" and _unnamed_exception(text):
        # "run glm4.1v ... meet error "got an unexpected keyword argument 'residual'"": the
        # message the user quotes, not their sentence around it
        text = next((q.text for q in quotes(text, MESSAGE_MARKS, MIN_QUOTED_ERROR) if PYTHON_MESSAGE_RE.search(q.text)), text)
        masked = mask(text)
    if source and len(st.source_lines) < MAX_SOURCE_LINES:
        st.source_lines.add(masked)
    if kind is None:
        if len(st.plain) < 40:
            st.plain.append(text)
            if (end and line[:end].strip()) or INFO_LEVEL_RE.match(text):
                st.logged.add(text)
        # only the source line right above the exception is the failing assert
        st.last_assert = text if st.in_traceback and text.startswith("assert ") else None
        code = text.strip("`").strip()
        if code.startswith("assert ") and (st.in_traceback or text != code or st.in_fence):
            st.open_assert = (code, st.total)
        return
    if kind == "exception" and st.last_assert and BARE_ASSERTION_RE.match(text):
        # a bare AssertionError says only that an assert failed; the source line above says which
        text = f"AssertionError: {st.last_assert}"
        masked = mask(text)
    st.last_assert = None
    # a bare `EOFError` or `KeyboardInterrupt` is a consequence, and still ends its traceback
    if st.in_traceback and (kind == "exception" or BARE_EXCEPTION_RE.match(text) or USER_INTERRUPT_RE.match(text)):
        st.in_traceback = False
        st.open_assert = None   # the exception line says what the assert's line raised
        if st.frames:
            st.frames_done = True
        if st.tb_frames and len(st.tracebacks) < MAX_TRACEBACKS:
            st.tracebacks.append((st.total, tuple(st.tb_frames), tuple(st.tb_files)))
    if kind == "exception" and LOCATION_HEADER_RE.match(text):
        kind = "consequence"   # triton prints the source excerpt, then the error, below this header
    if kind == "exception" and EMPTY_MESSAGE_RE.match(text):
        st.open_message = (text.rstrip(), [])   # its message follows on the lines below
        return
    inner = WRAPPER_RE.match(text)
    if inner and inner.group(1).strip():
        # the wrapper names where it failed, the inner error says why: match on both, rank the inner first
        _add_error(st, inner.group(1).strip(), _classify(inner.group(1).strip()) or "fatal")
        kind = "consequence"
    if end and LOGGER_STAMP_RE.search(line[:end]):
        st.stamped.add(masked or mask(text))
    st.user_quotes.discard(masked or mask(text))   # the program printed it too
    _add_error(st, text, kind, masked)


def _add_user_quote(st: _State, text: str, kind: str) -> None:
    """An error line the user quotes in a sentence: an error like any, remembered as only theirs
    unless the program's own lines show it too."""
    masked = mask(text)
    if masked not in st.errors:
        st.user_quotes.add(masked)
    _add_error(st, text, kind, masked)


# an exception whose message starts on the next line (`RuntimeError: ` then an indented paragraph)
EMPTY_MESSAGE_RE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s*$")
MESSAGE_LINES = 4   # of such a message: its first sentence is what identifies it


# a time of day in a line's prefix: a logger wrote it (a person's `[Bug]` or `[Question]` has none)
LOGGER_STAMP_RE = re.compile(r"\d{1,2}:\d\d:\d\d")


def _prefix_end(line: str, st: _State, shape: str | None = None) -> int:
    """Where the line's log prefixes (`log_prefix`) end."""
    shape = _shape(line) if shape is None else shape
    # PREFIX_RE treats every digit alike, so a line and its shape lose the same prefix
    end = st.prefix_ends.get(shape)
    if end is None:
        match = PREFIX_RE.match(shape)
        end = match.end() if match else 0
        if len(st.prefix_ends) < MAX_SHAPES:
            st.prefix_ends[shape] = end
    return end


def _indented(line: str, st: _State) -> bool:
    """The program indented the line: a message's next line (`RuntimeError: ` then its paragraph).
    Behind a log prefix (Ray's `(SGLangEngine pid=42) `, which every line of the job carries) the
    indentation is what follows the prefix's own one space."""
    end = _prefix_end(line, st)
    head = len(line[:end].rstrip())
    if not head:
        return line[:1] in (" ", "\t")
    gap = line[head:end] if end < len(line) else ""
    return "\t" in gap or len(gap) >= 2


def _close_message(st: _State) -> None:
    header, lines = st.open_message
    st.open_message = None
    _add_error(st, (header + " " + " ".join(lines))[:MAX_LINE].strip(), "exception")


_DIGITS_TO_FIVE = bytes.maketrans(b"0123456789", b"5555555555")


def _shape(line: str) -> str:
    """The line with every ASCII digit made a 5 (through bytes: ten times str.translate's speed;
    UTF-8 never puts an ASCII digit inside a multi-byte character)."""
    return line.encode("utf-8", "surrogatepass").translate(_DIGITS_TO_FIVE).decode("utf-8", "surrogatepass")


def _quiet_vote(st: _State, line: str, text: str, text_shape: str, shape: str) -> str | None:
    """For a shape whose later lines can only be counted (the hours of decode-batch and HTTP lines
    of a 200 MB log), the hardware vote each of them casts ("" for none); else None. A shape
    qualifies when, for any line of it, each step of _feed before the repeat count is a no-op or
    gives this line's result: a log prefix rules out the user's prose; no `--`, `sglang` or
    `launch_server` rules out a launch command; the environment reader takes at most a vote
    (decided by the shape); no `0x` (shape `5x`) or colour code, and a digit-free memo, mean
    _masked gives every line of the shape this line's masked form."""
    if (st.pending_command is None and text != line.strip()
            and "--" not in text and "sglang" not in text and "launch_server" not in text
            and "5x" not in text_shape and "\x1b" not in text_shape
            and isinstance(st.shapes.get(text_shape), str)):
        return st.environment.shape_vote(shape)
    return None


def _masked(text: str, st: _State, shape: str) -> str:
    """mask(text), memoised on the line's shape: the line with every ASCII digit made a 5.

    Every masking pattern treats all digits alike (\\d, \\w, [0-9a-f]) except the literal 0 of "0x",
    so masking a line and its shape make the same edits at the same places; when no digit survives
    in the masked shape, the two results are equal. The thousands of "Decode batch. #token: 31542"
    lines of a server log have a few dozen shapes, so mask's 14 regexes run a few dozen times."""
    if "0x" in text or "\x1b" in text:   # "0x" is literal in a pattern; removed colour codes join text
        return mask(text)
    masked = st.shapes.get(shape, False)
    if masked is False:
        masked = mask(shape)
        if "5" in masked:   # a digit kept (sm_90, Qwen2): this shape's lines mask differently
            masked = None
        if len(st.shapes) < MAX_SHAPES:
            st.shapes[shape] = masked
    return mask(text) if masked is None else masked


def _remember(st: _State, masked: str, text: str) -> None:
    """Keep a distinct line (masked, for matching) and how the user wrote it (for evidence)."""
    if masked not in st.templates:
        st.templates[masked] = 1
        st.originals[masked] = text


# the user's Chinese words after an error quoted in their sentence: `KeyError: 'text'，怎么解决？`
_CHINESE_AFTER_ERROR_RE = re.compile(r"\s*[，。？！；]\s*(?=[^，。？！；]*[\u3400-\u9fff]).*$")


def _without_chinese_tail(text: str) -> str:
    """An error line without the Chinese sentence the user glued to it after full-width
    punctuation; a message that is Chinese itself (a zh_CN system message) stays whole."""
    cut = _CHINESE_AFTER_ERROR_RE.search(text)
    if cut is None or CHINESE_CHAR_RE.search(text, 0, cut.start()) or not text[:cut.start()].strip():
        return text
    return text[:cut.start()]


# where the user's sentence goes on after an exception they quote on the same line ("... no attribute
# 'num_token_non_padded' after I upgraded to 0.5.18, what do I do?"): a clause in the first person
# (programs do not say "I", nor "after we"), or a question put to the reader. A comma or an "after"
# alone is no such clause: messages have them ("expected 2, got 3", "after 3 retries").
_USER_CLAUSE_RE = re.compile(
    r"[\s,;.!]+(?=(?:(?i:after|when|since|while|because|once|but|and|so|then|whenever|every time|as soon as)\s+"
    r"(?:I|we|my|our)(?:'m|'ve|'d|'ll|'re)?|I(?:'m|'ve|'d|'ll)?|[Mm]y)\s)"
    r"|[,;.!]\s+(?=(?i:so\s+|and\s+|but\s+)?(?i:what|how|why|any\s*(?:one|body|idea|ideas|help|suggestions?)|"
    r"can\s+(?:you|someone|anyone)|could\s+(?:you|someone|anyone)|please\s+help|is\s+(?:this|there|it)|"
    r"does\s+anyone)\b[^.!]*\?)")


def _without_english_tail(text: str) -> str:
    """An exception line without the user's English sentence that goes on after its message on the
    same line; the message as raised (what the class and the words inside quotes say) stays whole."""
    start = text.find(": ") + 2
    if start < 2:
        return text
    # (the program's own quotes: every single quote is a mark, even where a word goes on after it)
    quoted = [(q.start, q.end) for q in quotes(text, (SINGLE, DOUBLE, BACKTICK), 0, start, apostrophes=True)]
    for clause in _USER_CLAUSE_RE.finditer(text, start):
        if not any(a <= clause.start() < b for a, b in quoted):
            return text[:clause.start()].rstrip(" ,;") if clause.start() > start else text
    return text


def _add_error(st: _State, text: str, kind: str, masked: str | None = None) -> None:
    if "，" in text or "。" in text or "？" in text or "！" in text or "；" in text:
        shorter = _without_chinese_tail(text)
        if shorter != text:
            st.prose.append(text[len(shorter):].lstrip(" ，。？！；"))   # the user's words, still theirs
            text, masked = shorter, None
    if kind == "exception" and " " in text:
        shorter = _without_english_tail(text)
        if shorter != text:
            tail = text[len(shorter):].lstrip(" ,;.!")
            if not any(tail in words for words in st.prose[-3:]):
                st.prose.append(tail)   # the user's words, still theirs (unless their line is kept whole)
            text, masked = shorter, None
    masked = masked or mask(text)
    if masked in st.errors:
        st.errors[masked][2] += 1
        st.errors[masked][4] = st.serving_lines
        return
    if len(st.templates) < MAX_TEMPLATES:
        _remember(st, masked, text)
    if len(st.errors) < MAX_ERRORS or kind in ("exception", "fatal"):
        if len(st.errors) >= MAX_ERRORS * 2:
            return
        # [text, first line, count, kind, serving lines seen at its last occurrence]
        st.errors[masked] = [text, st.total, 1, kind, st.serving_lines]


# {"object":"error","message":...} (SGLang's OpenAI API), {"error":{"message":...}} (OpenAI, the
# router), {"detail":...} (FastAPI), {"success":false,"error_message":...} (SGLang's admin
# endpoints: /load_lora_adapter, /update_weights_from_disk, ...); double quotes as sent, single
# quotes as Python prints a dict
_JSON_ERROR_RE = re.compile(r"""^\{\s*['"](?:object['"]\s*:\s*['"]error|error|detail)['"]|"""
                            r"""^\{[^{}]*?['"]success['"]\s*:\s*(?:false|False)\b|"""
                            # /generate's reply to a request the server aborted: the reason is its message
                            r"""^\{.*?['"]finish_reason['"]\s*:\s*\{\s*['"]type['"]\s*:\s*['"]abort['"]""")
_JSON_MESSAGE_RE = re.compile(r"""['"](?:message|msg|detail|error|error_message)['"]\s*:\s*(?:"((?:[^"\\]|\\.)+)"|'((?:[^'\\]|\\.)+)')""")


def json_error_message(text: str) -> str | None:
    """The message of a JSON error body pasted as a line, or None for any other line."""
    if not _JSON_ERROR_RE.match(text):
        return None
    found = _JSON_MESSAGE_RE.search(text)
    if not found:
        return None
    raw = found.group(1) if found.group(1) is not None else found.group(2)
    try:
        message = json.loads(f'"{raw}"') if found.group(1) is not None else raw
    except ValueError:
        message = raw
    message = message.strip()
    return message if len(message) >= 8 else None


_CONVERSATION_RE = re.compile(
    r"\b(?:I|I'm|I've|we|we're|my|our|me|us|you|anyone|any idea|help|please|how|why|what|"
    r"after|when I|tried|trying|getting|seems?|happens?|should|could|does|is there|"
    # a reporter's guesses and bisects ("possibly related to ...", "bisected to PR #5728")
    r"possibly|probably|perhaps|bisect(?:ed|ing)?|suspect(?:ed|s)?)\b|\?\s*$", re.I)


_PROGRAM_ADVICE_RE = re.compile(
    r"\bTried to allocate\b|\b[Pp]lease (?:try|set|increase|reduce|decrease|lower|use|check|make sure|consider|"
    r"install|upgrade|pass|specify|report|refer|see|run|add|enable|disable|file|open)\b|"
    # SGLang's and the OpenAI server's words to the client ("You requested a total of 43778 tokens")
    r"\bYou (?:requested|passed|provided|specified)\b")


# a report's own structure: its title (`[Bug] v0.4.3 performance degradation 2x8xH100`) and the
# section where its author describes the problem in their words, whatever the grammar
# (every tag of it: `[Bug] [deepseekv4] ...`)
ISSUE_TAG_RE = re.compile(r"^\[(?:bug|feature|usage|question|bugfix|fix|feat|rfc|help|performance|perf)[^\]]{0,20}\]"
                          r"(?:\s*\[[^\]]{1,30}\])*\s*|^(?:bug|issue)\s*:\s*", re.I)
HEADING_RE = re.compile(r"^#{1,6}\s+(.+)$")
DESCRIPTION_HEADING_RE = re.compile(r"describe|description|summary|problem|what happened|motivation|"
                                    r"current behaviou?r|\bissue\b|问题|描述|现象", re.I)


def _title_of(line: str) -> str | None:
    """The first line of a paste as a report's title, without its tag: tagged `[Bug] ...`, or a
    few plain words with no log prefix, path or exception in them; None for any other line."""
    tagged = ISSUE_TAG_RE.match(line)
    rest = line[tagged.end():].strip() if tagged else line
    # a title may quote a Python message without its class: it is still the report's summary
    if not rest or (_classify(rest) is not None and not _unnamed_exception(rest)) or len(rest) > 200:
        return None
    if tagged:
        return rest if len(rest.split()) >= 2 else None
    return rest if _wordy(rest) and not re.search(r"[/\\=]|--|\.py\b", rest) else None


def _wordy(text: str) -> bool:
    words = text.split()
    plain = sum(1 for w in words if re.fullmatch(r"[\"'(]?[A-Za-z][A-Za-z'\-]*[,.;:?!)\"']*", w))
    return len(words) >= 4 and plain / len(words) >= 0.6


_INTRO_WORDS = frozenset("error errors exception traceback log logs output message messages below following".split())
_PLAIN_WORD_RE = re.compile(r"(?:I|[A-Z]?[a-z'’]+)[,.]?")


# a line that ends by announcing what follows ("... crashes with", "... fails with:")
_INTRO_TAIL_RE = re.compile(r"\b(?:fail(?:s|ed)?|errors?(?: out)?|errored(?: out)?|crash(?:es|ed)?|dies|died|"
                            r"exit(?:s|ed)?|aborts?|aborted)\s+(?:with|like this|as follows|below)\s*[.,:]?$", re.I)


# the end of a sentence that names the output below it ("I get the following error", "the server
# prints this message", "报错如下"); with a bare colon, the end of any sentence that hands over to it
_LEAD_IN_RE = re.compile(r"(?:\b(?:following|this|these|same|below)\s+(?:[\w-]+\s+)?(?:errors?|exceptions?|tracebacks?|"
                         r"logs?|output|messages?|stack ?traces?)|\b(?:as follows|below)|如下)\s*[:：.,。，]?$", re.I)
_ANNOUNCES_RE = re.compile(rf"[:：]\s*$|{_LEAD_IN_RE.pattern}", re.I)


# a runtime's own error code opening the line: `CUDA error: ...`, `NCCL error in: ...`, `HIP error: ...`
_RUNTIME_CODE_RE = re.compile(r"^[A-Z][A-Za-z]*[A-Z] error(?: in)?: ")


def _program_output(text: str) -> bool:
    """An error line as a program prints it, not as a person words it: a runtime's error code at its
    start, or few plain words among codes, paths and braces (`Error code: 500 - {'object': 'error',
    ...}`, `api_server.py: error: argument --tool-call-parser: invalid choice`). A message in plain
    words under a lead-in may still be the user's retelling, and is read as their words."""
    return _classify(text) is not None and (bool(_RUNTIME_CODE_RE.match(text)) or not _wordy(text))


def _introduces_output(text: str) -> bool:
    """A few plain words ending in a colon that announce the error or log below them."""
    words = text[:-1].split()
    if len(text) > 80 or not 1 <= len(words) <= 10 or not all(_PLAIN_WORD_RE.fullmatch(w) for w in words):
        return False
    # "the log below:", or a remark as short as "request fails:" / "then it crashes:"
    return (any(w.lower().strip(",.") in _INTRO_WORDS for w in words)
            or (len(words) <= 4 and all(_LOWER_WORD_RE.fullmatch(w) for w in words)))


# a reproduction step or a bare remark in the user's words: "3. crash", "- it hangs", "server crashed"
_ENUMERATOR_RE = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|[-*•])\s+")
_LOWER_WORD_RE = re.compile(r"[a-z][a-z'\-]*[,.;!?]?")


def _short_remark(text: str) -> bool:
    """A few lowercase plain words, optionally after a list marker. Programs print their failures
    with a capital, a code or a path (`Segmentation fault`, `Killed`, `error: ...`); a user's step
    list does not."""
    stripped = _ENUMERATOR_RE.sub("", text, count=1)
    words = stripped.split()
    limit = 6 if stripped != text else 3
    return 1 <= len(words) <= limit and all(_LOWER_WORD_RE.fullmatch(w) for w in words)


# the words a person tells a failure with ("the model crashes", "crash info", "it gets stuck"): a
# line is an error line by them alone only when a program printed it
# ("dies with the scheduler watchdog timeout", "encounter a Watchdog timeout error": a timeout with an
# article before it, which a program's `Watchdog timeout (self.watchdog_timeout=300)` never has)
NARRATIVE_FAILURE_RE = re.compile(r"\b(?:[Ff]ail(?:s|ed|ing|ure)?|[Cc]rash\w*|[Hh]angs?|[Ss]tuck|dies|died)\b|"
                                  r"\b(?:[Aa]n?|[Tt]he)\s+(?:[\w-]+\s+){0,2}time-?outs?\b(?!\s*[:(=])|"
                                  r"报错|失败|错误|卡住|崩溃|超时")


def tells_of_failure(error: ErrorLine) -> bool:
    """An error line that is the user's own words telling of a failure, not a program's line: a
    sentence (a title, a caption, a paragraph) that is fatal only by a word like "crashes" and
    quotes no error ("The process crashes with a RuntimeError inside SageAttention3")."""
    text = error.text
    return (error.kind == "fatal" and looks_like_sentence(text) and not QUOTED_EXCEPTION_RE.search(text)
            and not DRIVER_FAULT_RE.search(text)
            and not SOURCE_LOCATION_RE.search(text)
            and not FATAL_RE.search(FLAG_NAME_RE.sub(" ", NARRATIVE_FAILURE_RE.sub(" ", text))))


# where a program's own log line was written from (`rdma_context.cpp:93]`, `ibrc.cpp:418:`): a
# person telling of a failure does not cite a source line
SOURCE_LOCATION_RE = re.compile(r"\b[\w-]+\.(?:cpp|cc|cxx|cu|c|h|hpp|py|rs|go):\d+\b")


def looks_like_sentence(text: str) -> bool:
    """Mostly plain words, as a person writes (a title, a question, a step), not a log line."""
    return (_wordy(text) or _short_remark(text)) and not EXCEPTION_RE.match(text)


def _same_script(st: _State, text: str) -> bool:
    """Whether a line can continue the user's last sentence: a Chinese sentence is not continued
    by a line without a Chinese character (`docker容器版本的sglang不支持minicpm3-4b` then `Model
    architectures ['MiniCPM'] are not supported for now. ...`)."""
    return not st.last_prose_chinese or bool(CHINESE_CHAR_RE.search(text))


def _looks_like_prose(text: str) -> bool:
    """A line of the user's own words (their question, what they did), not of a log: Chinese
    sentences, or English sentences that talk to someone. A system message printed in a Chinese
    locale (`段错误`, `致命错误：...：没有那个文件或目录`) is read as the C locale prints it."""
    text = in_c_locale(text)
    if CHINESE_CHAR_RE.search(text):
        return not re.search(r"^\S+(?:Error|Exception)\b", text)
    words = text.split()
    if len(words) < 5 or re.search(r"[=\[\]{}<>|\\]{2,}|^\s*(?:at |File \")", text):
        return False
    plain = sum(1 for w in words if re.fullmatch(r"[A-Za-z(][a-z'\-]*[,.;:?!)]?", w))
    if plain / len(words) < 0.6:
        return False
    if "Error" in text or "Exception" in text:
        # words inside a program's message ("Decode instance could be dead") are not the user's
        text = QUOTED_EXCEPTION_RE.sub(" ", text)
    # nor are the words programs address their user with (`Tried to allocate 2.00 GiB`,
    # `Please try to increase --mem-fraction-static`)
    return bool(_CONVERSATION_RE.search(_PROGRAM_ADVICE_RE.sub(" ", text)))


def _other_software(st) -> tuple[str, ...]:
    """The other programs the paste shows. A training or fine-tuning word counts only when the log
    says it (a trainer's frames, a training script's own lines): in the user's own words it tells
    what the job is, and RL and fine-tuning jobs run SGLang as their rollout or serving engine."""
    found = tuple(st.environment.other_software)
    words = (*st.described, *st.prose)
    own = {mask(line) for line in words}
    logged = " ".join(line for line in st.templates if line not in own)
    if ACTIVITY_WORD_RE.search(logged) or not ACTIVITY_WORD_RE.search(" ".join(words)):
        return found
    return named_programs(found)


def analyze_lines(lines: Iterable[str], progress: Callable[[int, int], None] | None = None) -> Analysis:
    """Triage a stream of lines (a pasted trace or a whole log) with bounded memory.

    `progress(lines, characters)` is called every PROGRESS_EVERY lines and at the end; the caller
    decides what to show (this module prints nothing)."""
    st = _State()
    # a page's spaces and a terminal's colours, cut at a terminal's width, JSON records, escaped or
    # flattened: back to the program's lines
    lines = decoded(unwrapped(plain_text(lines)))
    if progress is None:
        for raw in lines:
            _feed(raw, st)
    else:
        characters = 0
        for raw in lines:
            _feed(raw, st)
            characters += len(raw)
            if st.total % PROGRESS_EVERY == 0:
                progress(st.total, characters)
        progress(st.total, characters)
    if st.open_message is not None:
        _close_message(st)
    if st.skipped_debug and not st.templates and not st.tail:
        # the paste is nothing but DEBUG lines: the user is asking about them, so read them
        total, st.keep_debug = st.total, True
        for raw in st.skipped_debug:
            _feed(raw, st)
        st.total = total
    _finish_command(st)
    _assert_as_error(st)
    # an error the server kept serving after (a rejected request hours before the crash) did not
    # stop it: it goes after the errors that did, whatever its kind
    survived = {k for k, v in st.errors.items() if st.serving_lines - v[4] >= SURVIVED_SERVING}
    # what a run prints after the user pressed Ctrl-C (SGLang's "Received sigquit from a child
    # process", asyncio's CancelledError) is the interrupt's doing, not the failure: a hang
    interrupts = [v[1] for v in st.errors.values() if USER_INTERRUPT_RE.search(v[0])]
    if interrupts:
        survived |= {k for k, v in st.errors.items() if v[1] > min(interrupts)}
    if all(k in survived or v[3] == "warning" for k, v in st.errors.items()):
        survived = set()   # nothing else failed: what the server survived is all there is to go on
    driver = _driver_fault_ranks(st.errors)
    ordered = sorted(st.errors.items(), key=lambda kv: (
        driver.get(kv[0], _PRIORITY[kv[1][3]]) + SURVIVED_PENALTY * (kv[0] in survived)
        + UNNAMED_EXCEPTION_RANK * (kv[1][3] == "exception" and _unnamed_exception(kv[1][0])), kv[1][1]))
    errors = tuple(ErrorLine(text=v[0], masked=k, line_no=v[1], count=v[2], kind=v[3], survived=k in survived)
                   for k, v in ordered)
    frames, frame_files = _failure_frames(st, errors)
    tail = [mask(t) for t in st.tail]
    for masked, text in zip(tail, st.tail):
        st.originals.setdefault(masked, text)
    kept = list(st.templates) + tail
    return Analysis(
        errors=errors,
        frames=tuple(dict.fromkeys(frames))[-12:],
        frame_files=tuple(dict.fromkeys(frame_files))[-12:],
        failure_sites=tuple(zip(frame_files, frames))[-12:],
        sglang_frames=tuple(st.sglang_frames),
        native_lines=tuple(st.native),
        source_lines=frozenset(st.source_lines),
        question=" ".join((*st.described, *st.prose))[:2000],
        masked_lines=tuple(dict.fromkeys(kept)),
        plain_lines=tuple(st.plain),
        logged_lines=frozenset(st.logged),
        stamped_errors=frozenset(st.stamped),
        other_software=_other_software(st),
        prose_lines=tuple(mask(p) for p in st.prose),
        user_names=tuple(st.environment.user_names),
        tail_lines=frozenset(tail),
        originals=st.originals,
        mentions_sglang=st.environment.mentions_sglang,
        environment=st.environment.environment([*st.described, *st.prose], st.launch, st.loose_flags,
                                               tuple(e.text for e in errors[:20] if looks_like_sentence(e.text))),
        total_lines=st.total,
        collapsed_repeats=st.repeats,
        log_lines=st.log_lines,
        serving_lines=st.serving_lines,
        ready=st.ready,
        chain_lines=tuple(st.chain_lines),
        traceback_cut=st.in_traceback and bool(st.tb_frames),
        title_line=st.title_line,
        user_quotes=frozenset(st.user_quotes),
        quoted_spans=quoted_spans((*st.described, *st.prose)),
    )


# a GPU driver's fault report ranks after the Python exceptions (the server's own account of the
# failure) and, when nothing of the process's follows it, before its other fatal lines: it is what
# the crash was (a page fault, a GPU fallen off the bus), the process's earlier lines are not
DRIVER_FAULT_ROOT_RANK = 0.9
DRIVER_FAULT_BEHIND_RANK = 1.5   # the process printed an error after it: that line says more


def _driver_fault_ranks(errors: dict[str, list]) -> dict[str, float]:
    """The rank of each GPU driver fault line (`DRIVER_FAULT_RE`) among the errors: a root unless
    an exception or fatal line of the process comes after it (the process's own account, such as
    `Memory access fault by GPU node-2` or a traceback's exception, names the kernel)."""
    faults = {k: v for k, v in errors.items() if v[3] == "fatal" and DRIVER_FAULT_RE.search(v[0])}
    if not faults:
        return {}
    process = [v for k, v in errors.items() if k not in faults and v[3] in ("exception", "fatal")
               and not tells_of_failure(ErrorLine(v[0], k, v[1], v[2], v[3]))]
    if any(ASYNC_FAULT_RE.search(v[0]) for v in process):
        # the process's own report of the fault (`Memory access fault by GPU node-2`, `illegal memory
        # access`), wherever the user pasted the kernel log beside it
        return dict.fromkeys(faults, DRIVER_FAULT_BEHIND_RANK)
    return {k: DRIVER_FAULT_BEHIND_RANK if any(p[1] > v[1] for p in process) else DRIVER_FAULT_ROOT_RANK
            for k, v in faults.items()}


def _assert_as_error(st: _State) -> None:
    """The failing assert is the program's error line when the paste says an AssertionError was
    raised but shows no exception line of its own: its innermost frame's `assert param_data.shape
    == loaded_weight.shape` (the traceback cut below it) or that line quoted as code. It, not the
    user's sentence naming the AssertionError, says which check failed."""
    if st.open_assert is None or not st.names_assertion:
        return
    if any(v[3] == "exception" and re.match(r"(?:\w+\.)*AssertionError\b", v[0]) for v in st.errors.values()):
        return
    code, line_no = st.open_assert
    text = f"AssertionError: {code}"
    masked = mask(text)
    if masked not in st.errors:
        st.errors[masked] = [text, line_no, 1, "exception", st.serving_lines]


# a quoted error line holds a class and its message: longer than a quoted name
MIN_QUOTED_ERROR = 8


def _quoted_errors(sentence: str) -> list[tuple[str, str]]:
    """The error lines a sentence quotes in quote marks or backticks, with their kind: an exception
    with its class (`RuntimeError: HIP error: invalid device function`), or a span that reads as a
    program's error line rather than more of the user's words (`"Capture cuda graph failed: CUDA out
    of memory"`). Words after an exception without quote marks ("secondary errors like RuntimeError:
    ...") may be the user's summary, and stay in their sentence."""
    found = []
    for quote in quotes(sentence, MESSAGE_MARKS, MIN_QUOTED_ERROR):
        span = quote.text.strip(" .,;")
        kind = _classify(span)
        if ": " not in span:
            continue   # a bare class name (`AssertionError`) says less than the lines around it
        if kind == "exception" and EXCEPTION_RE.match(span) or \
                kind == "fatal" and not tells_of_failure(ErrorLine(span, "", 0, 1, kind)):
            found.append((span, kind))
    return found


def _unnamed_exception(text: str) -> bool:
    """A Python message without the exception class that raised it."""
    return not EXCEPTION_RE.match(text) and not QUOTED_EXCEPTION_RE.search(text) and bool(PYTHON_MESSAGE_RE.search(text))


def _failure_frames(st: _State, errors: tuple[ErrorLine, ...]) -> tuple[list[str], list[str]]:
    """The first traceback's frames, unless its exception is one the server went on serving
    after: then those of the traceback that ends in the first error that stopped it."""
    survived_at = {e.line_no for e in errors if e.survived}
    if not st.tracebacks or st.tracebacks[0][0] not in survived_at:
        return st.frames, st.frame_files
    stopping = {e.line_no for e in errors if not e.survived and e.kind == "exception"}
    for line_no, frames, files in st.tracebacks:
        if line_no in stopping:
            return list(frames), list(files)
    return st.frames, st.frame_files


def analyze(text: str) -> Analysis:
    return analyze_lines(text.splitlines())
