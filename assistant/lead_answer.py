"""The answer when no known fix matched: a lead (plausibly related, not confirmed) or unknown.

Such an answer never presents an entry's steps as the fix. It says plainly what the outcome is
and why (the decision's reasons), and gives what is known for certain: the root error as read,
where it arises (the failing components, the module of the innermost frame, or with no traceback
the module of an SGLang class the paste names), the detected
version and flags, similar GitHub reports, and two or three things to collect or try next for
that component (`assistant.next_steps`). A lead also says what in the user's log would confirm
it: one of the entry's own error lines that the log does not show yet; a lead on a diagnosis
entry shows that entry's steps as the next steps (they find the failure, they do not fix it),
unless the paste shows the server up after the warning the entry explains and no failure: then the
warning is harmless and the next steps serve what the user asks about (`assistant.started_after_warning`).
A component the lead's own entry rules out (`assistant.ruled_out`) gets no next steps. A how-to
question gets the related reading and the flags it is about with SGLang's own help text
(`assistant.flag_reference`), no fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant.case_steps import fitting_steps
from assistant.commands import FLAG_RE, SGLANG_LAUNCH_RE, sglang_names
from assistant.components import components_in, named_in_order, specific
from assistant.decision import LEAD, PART_MATCH_REASON, ROOT_KINDS, UNKNOWN, paste_kinds, specific_signatures, without_configuration
from assistant.decision import failing_components as components_of
from assistant.environment import named_programs, program_names
from assistant.failure_kind import kinds_in
from assistant.flag_reference import FlagReference, flags_for_question
from assistant.generic_lines import is_generic, specific_words
from assistant.program_lines import program_signatures
from assistant.release_range import CHECKOUT_PACKAGE_RE
from assistant.gpu_arch import paste_archs
from assistant.next_steps import (BUILD_RE, MISSING_PACKAGE_RE, QUIET_LOG_RE, TRACEBACK_END, environment_step,
                                  for_version, next_for_kind, shows_a_request, steps_for)
from assistant.kernel_fault import DRIVER_FAULT_RE
from assistant.named_identifiers import named_in
from assistant.phase import paste_phase
from assistant.retrieve import Hit, Retrieval
from assistant.ruled_out import ruled_out_components
from assistant.started_after_warning import asked_kinds, started_after_warnings
from assistant.step_versions import step_version_ok
from assistant.symbols import named_runtime_class
from assistant.tell_apart import cleared_cause
from assistant.thread_dump import is_thread_dump_tail
from assistant.text import CHINESE_CHAR_RE, STOPWORDS, mask, tokenize
from assistant.trace import CUT_FRAME_RE, FRAME_RE, Analysis, looks_like_sentence, tells_of_failure
from assistant.wording import Sentence, in_language


@dataclass
class NotConfirmed:
    """What `assistant.answer` puts into the Answer of a lead or unknown (no fix, no citations)."""
    outcome: str
    diagnosis: str
    next_steps: list[str]
    reasons: list[str]
    question: bool
    failing_components: list[str]
    failing_module: str | None
    failing_function: str | None = None   # the innermost frame's function (`_handle_abort_req`)
    confirm_if: list[str] = field(default_factory=list)
    named_class: tuple[str, str] | None = None   # (class, module) the paste names, with no traceback
    flags: list[FlagReference] = field(default_factory=list)   # a question's flags, with their help
    no_failure: bool = False   # the paste shows no failure (warnings, then the server up): no root error to show

# components that are not specific but still say where to look (cuda-graph: bisect the capture)
GENERAL_WITH_STEPS = ("cuda-graph", "cuda")
NAMED_COMPONENTS = 2   # components a report names in words whose next steps are offered
CONFIRM_LINES = 2
PACKAGE_ROOTS = ("site-packages/", "dist-packages/")


# frames that only pass a call through (a decorator, a module's __call__): a traceback cut off
# right under one of them has not reached the code that failed, so the frame above says more
PASS_THROUGH_MODULES = frozenset({
    "torch.utils._contextlib", "torch.nn.modules.module", "torch.autograd.grad_mode",
    "torch._dynamo.eval_frame", "contextlib", "functools", "runpy",
})


# a program's line that only announces the traceback printed under it (`ERROR:    Exception in
# ASGI application`, `Scheduler hit an exception: Traceback ...`, `Exception in thread Thread-3:`):
# when that traceback is cut before its exception line, the failure itself is not in the paste
ANNOUNCES_TRACEBACK_RE = re.compile(
    r"^(?:\W*\w+:\s*)?(?:Exception in (?:ASGI application|thread\b.*|callback\b.*)"
    r"|.*\bhit an exception:?(?:\s*Traceback \(most recent call last\):?)?)\s*$")


# the HTTP server's layers (uvicorn's protocol, Starlette's middleware, FastAPI's routing) that
# carry every request's exception up from the application's code: never where it failed
SERVER_PLUMBING = frozenset({"uvicorn", "starlette", "fastapi"})


def innermost_frame(sites) -> tuple[str | None, str | None]:
    """(module, function) of the innermost traceback frame (`acme_plugin.hooks`, `on_batch`); the
    module is the file's path when it is not inside an installed package or an SGLang checkout; a
    pass-through wrapper frame (`torch.utils._contextlib`) gives way to the frame that called it.
    `sites` are (file, function) pairs, innermost last."""
    frames = [(_module_of(path), function) for path, function in sites]
    for module, function in reversed(frames):
        if module not in PASS_THROUGH_MODULES and module.split(".")[0] not in SERVER_PLUMBING:
            return module, _function_name(function)
    if frames and all(module.split(".")[0] in SERVER_PLUMBING for module, _ in frames):
        return None, None   # a traceback cut before it reached the application's own frames
    return (frames[-1][0], _function_name(frames[-1][1])) if frames else (None, None)


def _function_name(function: str) -> str | None:
    return None if function.startswith("<") else function   # `<module>`, `<lambda>`: no name to search for


PACKAGE_PATH_RE = re.compile(r"(?:sglang|sgl_jax|sgl_kernel|sglang_router)/")


def _module_of(path: str) -> str:
    path = path.replace("\\", "/")
    relative = None
    for root in PACKAGE_ROOTS:
        if root in path:
            relative = path.rsplit(root, 1)[1]
    checkout = CHECKOUT_PACKAGE_RE.match(path) if relative is None else None
    if checkout:   # a source checkout (/sgl-workspace/sglang/python/sglang, sglang-jax/python/sgl_jax)
        relative = path[checkout.start(2):]
    elif relative is None and PACKAGE_PATH_RE.match(path):
        relative = path   # a path printed relative to the package's parent (`sglang/srt/server_args.py`)
    if relative is None and "/lib/python3" in path:   # the standard library (/usr/lib/python3.10/runpy.py)
        relative = path.split("/lib/python3", 1)[1].split("/", 1)[-1]
    if relative is None or not relative.endswith(".py"):
        return path
    module = relative[:-3].removesuffix("/__init__").strip("/")
    return module.replace("/", ".") or path


def confirm_lines(hit: Hit, user_flags: frozenset = frozenset(), paste_text: str = "",
                  closeness: "Closeness | None" = None) -> list[str]:
    """The hit's own specific error lines that the user's log does not show (yet): seeing one of
    them would make the lead the explanation. Only log lines: a symptom is a description, which a
    log never shows word for word (`confirm_symptom`). None when one of its own specific lines is
    in the log already: then no further line is what is missing (the lead's reasons say what is).
    A line about a flag the user never passed (`unrecognized arguments: --enable-reasoning`) is one
    reporter's case, not what would confirm theirs; nor is a line of another program than the one
    the paste comes from, when the entry ties its lines to programs (`assistant.program_lines`):
    a GPUStack log never shows xinference's line. The lines closest to what the paste shows and
    tells of come first (`Closeness`); the entry's own order breaks ties."""
    if own_line_shown(hit):
        return []
    programs = program_signatures(hit.meta, paste_text) if paste_text else None
    if programs is not None:
        out = _confirm_from(hit, programs, user_flags, closeness)
        if out:
            return out
    return _confirm_from(hit, hit.meta.get("signatures") or (), user_flags, closeness)


def message_words(line: str) -> frozenset[str]:
    """The content words of an error line beyond its generic phrases, longer than three letters."""
    return frozenset(word for word in _content_words(" ".join(specific_words(line))) if len(word) > 3)


@dataclass(frozen=True)
class Closeness:
    """What a paste shows and tells of, to order an entry's lines by: an entry about several
    variants (an Ascend start-up failure: a missing `torch_npu`, an NPU OOM, a graph capture error)
    lists them in no order of the user's, and the line offered as what would confirm it should be the
    variant the paste is about. Terms: the specific terms of the paste (`specific_terms`); words:
    the content words of its root error lines; kinds: the failure kinds it reports."""
    terms: frozenset = frozenset()
    words: frozenset = frozenset()
    kinds: frozenset = frozenset()

    def of(self, line: str) -> int:
        """How many of the paste's terms, root-error words and failure kinds a line shares; a shared
        term or kind counts double, as one names the variant where a word may not."""
        return (2 * len(specific_terms(line) & self.terms) + len(message_words(line) & self.words)
                + 2 * len(kinds_in(line) & self.kinds))


# a source line an entry quotes from its traceback (`(sum_len, batch.gathered_buffer.shape[1]),`,
# `output = flash_attn_varlen_func(`): the call that failed, not a message a log prints by itself
CODE_FRAGMENT_RE = re.compile(r"^[(\[{)\]}]|[,(\[{\\]$|^(?:return|raise|def|if|for|with)\b|^(?:self\.)?\w+\s*=[^=]")
# a frame as py-spy or a profiler prints it (`replay (npu_graph_runner.py:412)`, cut or whole), or the
# tail of a traceback's frame line (`in npu_format_cast`): where a thread was, which another
# reporter's dump shows as well as this one's
FRAME_SUMMARY_RE = re.compile(r"^(?:in\s+[\w.<>]+|[\w.<>]+\s+\([\w./\\-]+\.py(?::\d+)?\)?)$")


def is_message_line(line: str) -> bool:
    """A line a program prints as its message (`Memory access fault by GPU node-2`,
    `HSA_STATUS_ERROR_MEMORY_FAULT`), not a traceback frame (`File ".../extend_attention.py", line
    605, in extend_attention_fwd`, whose path is another reporter's install) nor a source line the
    traceback quotes under a frame: seeing one of those confirms nothing about the error."""
    line = line.strip()
    return not (FRAME_RE.match(line) or CUT_FRAME_RE.match(line) or line.startswith('File "')
                or CODE_FRAGMENT_RE.search(line) or FRAME_SUMMARY_RE.match(line))


def _confirm_from(hit: Hit, signatures, user_flags: frozenset, closeness: Closeness | None = None) -> list[str]:
    shown = {mask(line).lower() for line in hit.evidence}
    candidates = []
    for line in signatures:
        line = " ".join(str(line).split())
        masked = mask(line).lower()
        if len(line) < 12 or is_generic(line) or any(masked in seen for seen in shown) or not is_message_line(line):
            continue
        if any(flag not in user_flags for flag in FLAG_RE.findall(line)):
            continue
        candidates.append((line, masked))
    if closeness is not None:
        candidates.sort(key=lambda pair: -closeness.of(pair[0]))   # stable: the entry's order on a tie
    out = []
    for line, masked in candidates:
        if any(masked in mask(kept).lower() or mask(kept).lower() in masked for kept in out):
            continue   # the same line with and without its exception class: one is enough
        out.append(line)
        if len(out) == CONFIRM_LINES:
            break
    return out


def own_line_shown(hit: Hit) -> bool:
    """One of the hit's own specific error lines is in the user's log."""
    return bool(specific_signatures(hit))


def confirm_symptom(hit: Hit, chinese: bool = False, words: str = "", paste: str = "",
                    error_lines: tuple[str, ...] = ()) -> str | None:
    """The entry's described symptom closest to the user's `words` (the most words in common; the
    first one on a tie), for an entry with no error line to look for; for a Chinese answer its
    symptoms written in Chinese, when it has any. The symptom must share a specific term with the
    `paste` (with `words` when no paste is given): a flag, a component, an exception, an identifier
    like `fp8_e4m3`, `sageattn3`, an acronym like `NVML`, `OOM`, or a word of the paste's
    `error_lines` beyond their generic failure phrases. Common words alone ("capture", "startup",
    "batch") do not tie a report to one of the entry's variants, and offering a variant the report
    never names (FA3 with an FP8 KV cache, to a report with neither) misleads: None then."""
    symptoms = [" ".join(str(s).split()) for s in hit.meta.get("symptoms") or ()]
    if chinese and any(CHINESE_CHAR_RE.search(s) for s in symptoms):
        symptoms = [s for s in symptoms if CHINESE_CHAR_RE.search(s)]
    if not symptoms:
        return None
    terms = {symptom: specific_terms(symptom) for symptom in symptoms}
    shown = specific_terms(paste or words)
    error_words = {word for line in error_lines for word in _content_words(" ".join(specific_words(line)))
                   if len(word) > 3}
    said = _content_words(words)
    # among the symptoms that share one, the closest to the user's words (max keeps the first of equals)
    tied = [symptom for symptom in symptoms if terms[symptom] & shown or _content_words(symptom) & error_words]
    return max(tied, key=lambda symptom: len(said & _content_words(symptom))) if tied else None


# exceptions every kind of failure raises: they tell no variant from another
GENERIC_EXCEPTIONS = frozenset({"exception", "error", "runtimeerror", "assertionerror"})
EXCEPTION_WORD_RE = re.compile(r"\b\w*(?:Error|Exception)\b")
# an identifier, a model or GPU name, a dtype: letters with digits or underscores (`fp8_e4m3`, `fa3`,
# `sageattn3`, `H100`, `two_batch_overlap`), not a number or a plain word
IDENTIFIER_RE = re.compile(r"\b(?=[A-Za-z0-9_]*[A-Za-z])(?=[A-Za-z0-9_]*[0-9_])[A-Za-z][A-Za-z0-9_]*[A-Za-z0-9]\b")


# a name in capitals (`NVML`, `OOM`, `TBO`, `CJK`), as written: "dp=8" in a sentence is not one;
# those every SGLang report names tell nothing apart
ACRONYM_RE = re.compile(r"\b[A-Z][A-Z0-9]*[A-Z][A-Z0-9]*\b")
COMMON_ACRONYMS = frozenset({"gpu", "gpus", "cpu", "cuda", "api", "http", "url", "sglang", "llm", "id", "io", "ok",
                             "tp", "ip", "os", "ai"})


def specific_terms(text: str) -> set[str]:
    """The terms of a text that name something particular: its flags, environment variables and the
    tools it names (`assistant.named_identifiers.named_in`: `nvidia-smi` is one name, not two common
    words), specific components, exception classes and identifiers, lowercased."""
    if not text:
        return set()
    terms = {flag.lower() for flag in FLAG_RE.findall(text)} | set(named_in(text))
    terms |= {f"component:{name}" for name in specific(components_in(text))}
    terms |= {word.lower() for word in EXCEPTION_WORD_RE.findall(text)} - GENERIC_EXCEPTIONS
    terms |= {word.lower() for word in IDENTIFIER_RE.findall(text) if len(word) > 2}
    terms |= {word.lower() for word in ACRONYM_RE.findall(text)} - COMMON_ACRONYMS
    return terms


def _frame_or_source(line: str, analysis: Analysis) -> bool:
    """A traceback's frame line, or a source line under one."""
    return bool(FRAME_RE.match(line) or CUT_FRAME_RE.match(line)) or mask(line) in analysis.source_lines


def _content_words(text: str) -> set[str]:
    return {token for token in tokenize(text) if token not in STOPWORDS and len(token) > 1} if text else set()



NONE_OCCURS = "None of this entry's error lines occurs in your log."
# the two reasons above said at once: the entry's lines resemble the paste's, none occurs in it
NONE_OCCURS_PART_MATCH = Sentence(
    "None of this entry's error lines occurs in your log; they resemble your paste only in part, not closely "
    "enough to name it as the fix.",
    "这个条目的错误行没有一行出现在你的日志里；它们和你贴的内容只部分相似，还不足以当作修复方法。")


def _consistent(reasons: list) -> list:
    """The decision's reasons as one account: "its error lines match your paste only in part" beside
    "none of its error lines occurs in your log" reads as a contradiction (a line that matches in
    part does not occur whole), so the two become one sentence that says both."""
    if PART_MATCH_REASON in reasons and NONE_OCCURS in reasons:
        at = reasons.index(PART_MATCH_REASON)
        reasons = [r for r in reasons if r != NONE_OCCURS and r != PART_MATCH_REASON]
        reasons.insert(min(at, len(reasons)), NONE_OCCURS_PART_MATCH)
    return reasons


def where_to_look(retrieval: Retrieval) -> list[str]:
    """Components for the next steps: the specific failing ones, then general ones with steps."""
    specific = list(retrieval.decision.failing_components)
    general = components_of(retrieval.analysis)
    return specific + [name for name in GENERAL_WITH_STEPS if name in general and name not in specific]


def _reference(match) -> str:   # an assistant.answer.Match
    return f"kb:{match.id}" if match.kind == "entry" else (match.url or match.id)


# packages whose frames are ordinary in an SGLang trace: the error is not "in another package"
OWN_PACKAGES = ("sglang", "sgl_kernel", "torch", "triton", "transformers", "flashinfer", "threading",
                "multiprocessing", "asyncio", "concurrent", "uvloop", "fastapi", "starlette", "uvicorn")


# actor frameworks whose frames only re-raise an exception from another process (xoscar's
# `raise message.as_instanceof_cause()` under Xinference, Ray's `raise value.as_instanceof_cause()`):
# their version is not what failed, the remote process's log is where the error is
RELAY_PACKAGES = frozenset({"xoscar", "ray"})


def outside_package(module: str | None) -> str | None:
    """The top-level package of the innermost frame when it is neither SGLang nor one of the
    libraries it runs on (a plugin, the user's own code)."""
    if not module or "/" in module:
        return None
    package = module.split(".")[0]
    return None if package in OWN_PACKAGES else package


def _quoted_en(title: str) -> str:
    """A title in quotes, unless it opens with a quote of its own (a title that quotes the line it
    is about): then as it is, so two quotes do not follow each other."""
    return title if title[:1] in "\"'“" else f"\"{title}\""


def _quoted_zh(title: str) -> str:
    """A title in Chinese quotes; one that opens with a quote of its own gets corner brackets, so
    two opening quotes do not follow each other."""
    return f"「{title}」" if title[:1] in "\"'“" else f"“{title}”"


def _paste_texts(analysis: Analysis | None) -> tuple[str, ...]:
    """The user's words and the paste's lines as they wrote them."""
    if analysis is None:
        return ()
    return (analysis.question, *(analysis.original(line) for line in analysis.masked_lines[:3000]))


def _request_shown(analysis: Analysis | None) -> bool:
    """The paste shows the request that goes wrong, in the user's words or among its lines."""
    return shows_a_request(_paste_texts(analysis))


def _stopped_after(analysis: Analysis) -> str | None:
    """The last line of a start-up log (`assistant.phase`: start-up progress, no serving) that
    shows no error: where the start stopped, with nothing after it to say why."""
    if analysis.root_line is not None or analysis.failure_sites or analysis.errors or not analysis.masked_lines:
        return None
    if paste_phase(analysis) != "startup":
        return None
    return analysis.original(analysis.masked_lines[-1])


def _next_steps(components: list[str], module: str | None, version: str | None, registry,
                language: str = "en", quiet_log: bool = False, programs: tuple[str, ...] = (),
                analysis: Analysis | None = None) -> list[str]:
    known_command = analysis is not None and bool(analysis.environment.launch_command or analysis.environment.flags
                                                  or any(SGLANG_LAUNCH_RE.search(text) for text in _paste_texts(analysis)))
    # warnings and the user's own telling of the failure are not the error they tell of: a paste
    # that announces an error and shows only those still lacks it
    no_error_lines = (analysis is not None and (analysis.root_line is None or DRIVER_FAULT_RE.search(analysis.root_line.text))
                      and not analysis.failure_sites and not programs)
    hardware = analysis.environment.hardware if analysis is not None else None
    # the user's words, with their sentences the reader took for error lines ("Kimi-K2.5 failed to start
    # on A2."): those tell of the failure whose error the paste then lacks
    words = (" ".join((analysis.question, *analysis.plain_lines[:20],
                       *(error.text for error in analysis.errors[:20] if tells_of_failure(error))))
             if analysis is not None else "")
    building = analysis is not None and any(BUILD_RE.search(analysis.original(line)) for line in analysis.masked_lines[:3000])
    # what the user tells of decides the steps when no program's error line shows where it fails
    told = (asked_kinds(analysis) if analysis is not None and analysis.root_line is None and not analysis.failure_sites
            and not programs else frozenset())
    steps = for_version(steps_for(components, quiet_log=quiet_log, known_command=known_command,
                                  no_error_lines=no_error_lines, hardware=hardware,
                                  user_flags=analysis.user_names if analysis is not None else (), words=words,
                                  building=building, told=told, request_shown=_request_shown(analysis),
                                  paste_text="\n".join(_paste_texts(analysis)),
                                  gpu_archs=paste_archs(analysis) if analysis is not None else frozenset(),
                                  missing_package=analysis is not None and analysis.root_line is not None
                                  and bool(MISSING_PACKAGE_RE.search(analysis.root_line.text)),
                                  traceback_cut=analysis is not None and analysis.traceback_cut
                                  and (analysis.root_line is None
                                       or bool(ANNOUNCES_TRACEBACK_RE.search(analysis.root_line.text))),
                                  dump_tail=analysis is not None and is_thread_dump_tail(analysis.masked_lines,
                                                                                         bool(analysis.errors)),
                                  stopped_after=_stopped_after(analysis) if analysis is not None and not quiet_log
                                  else None),
                        version, registry)
    if programs:
        # the paste is another program's: its own tracker first; SGLang's steps only if it is involved,
        # and none that changes an SGLang flag the user never passed (`Rerun without
        # --enable-torch-compile` for a stand-alone torch.compile script): they run no SGLang with it
        passed = {*analysis.user_names, *(flag for text in analysis.environment.flags for flag in FLAG_RE.findall(text))}
        steps = [step for step in steps if all(name in passed for name in sglang_names(step))]
        named = program_names(programs)
        if not named:   # the user says it is not SGLang's and names no program
            steps.insert(0, Sentence("You say this paste does not come from SGLang: the issue tracker and documentation "
                                     "of the program that printed it are the place for this error. If SGLang runs in "
                                     "the same job, paste SGLang's own server log: the steps below are for that.",
                                     "你说明贴的内容不是来自 SGLang：这个错误应该去打印它的那个程序的 issue 和文档里查。"
                                     "如果同一个任务里也跑着 SGLang，请贴出 SGLang 自己的服务日志：下面的步骤是针对它的。"))
        else:
            steps.insert(0, Sentence(f"Your paste comes from {', '.join(named)}: its own issue tracker and documentation are "
                                     "the place for this error. If SGLang runs in the same job (a rollout engine, a "
                                     "server behind it), paste SGLang's own server log: the steps below are for that.",
                                     f"你贴的内容来自 {'、'.join(named)}：这个错误应该去它自己的 issue 和文档里查。如果同一个任务里也跑着 "
                                     "SGLang（作为 rollout 引擎，或在它后面提供服务），请贴出 SGLang 自己的服务日志：下面的步骤是针对它的。"))
    # a build's innermost frames are the build machinery's (setuptools' `run_command`), not the failure
    package = outside_package(module) if not components and not building else None
    if package in RELAY_PACKAGES:
        steps.insert(0, Sentence(f"The innermost frame is in `{package}`, which only passes on an error raised in "
                                 "another process (the worker that loads or runs the model): that process's own log "
                                 "holds the first error and its traceback; paste those lines.",
                                 f"最内层的调用栈帧在 `{package}` 里，它只是把另一个进程（加载或运行模型的 worker）里"
                                 "抛出的错误转发过来：第一个错误和它的 traceback 在那个进程自己的日志里，请贴出那几行。"))
        steps = steps[:3]
    elif package:
        steps.insert(0, Sentence(f"The innermost frame is in `{package}`, outside SGLang: its version "
                                 f"(`pip show {package}`) and whether that version works with your SGLang release.",
                                 f"最内层的调用栈帧在 SGLang 之外的 `{package}` 里：看它的版本（`pip show {package}`），"
                                 "以及这个版本能否和你的 SGLang 版本一起用。"))
        steps = steps[:3]
    if environment_step(hardware) not in steps and not any("check_env" in s for s in steps) \
            and "jax" not in components:   # (TPUs: no CUDA to check)
        steps.append(environment_step(hardware))   # the versions answer half the questions that follow
    return [in_language(step, language) for step in steps]


DIAGNOSTIC_STEPS = 4


def diagnostic_steps(meta: dict, version: str | None, registry, masked_lines=(), language: str = "en",
                     lines_as_written=()) -> list[str]:
    """A diagnosis entry's own steps for the user's release (they find the failure; they are not
    its fix), the first few, one line each: their commands stay inline, never a fix's command block.
    A step about another message than the paste's is left out (`assistant.case_steps`). A Chinese
    reader gets each step's `text_zh` where the entry has it."""
    zh = language == "zh"
    steps = []
    for step in fitting_steps(meta.get("fix") or (), masked_lines, strict=True, lines_as_written=lines_as_written,
                              signatures=meta.get("signatures") or ()):
        applies = step_version_ok(step.get("versions"), version, registry, step["text"])
        if applies is False:
            continue
        text = (step.get("text_zh") or step["text"]) if zh else step["text"]
        line = (f"[SGLang {step['versions']}] " if step.get("versions") and applies is None else "") + text
        if step.get("commands"):
            line += (" 命令：" if zh else " Commands: ") + "; ".join(f"`{command}`" for command in step["commands"])
        if step.get("caveat"):
            line += f"（注意：{step.get('caveat_zh') or step['caveat']}）" if zh else f" (Caution: {step['caveat']})"
        steps.append(line)
    return steps[:DIAGNOSTIC_STEPS]


ASK_FOR_ERROR = ("If you hit an error while doing this, paste the full error and your launch command.",
                 "如果照做时遇到错误，请贴出完整的报错和启动命令。")
ASK_FOR_FIRST_ERROR = ("Paste the first error those steps turn up: it has its own fix.",
                       "请贴出这些步骤找到的第一个错误：它有自己的修复方法。")
UNIT_KINDS = {"entry": ("entry", "条目"), "issue": ("GitHub issue", "GitHub issue")}


def not_confirmed(retrieval: Retrieval, matches: list, registry=None, language: str = "en") -> NotConfirmed:
    """The content of a lead or unknown answer; `matches` are the answer's Match objects, best
    first (the lead is the first). Our own sentences are in the reader's `language` ("en"/"zh");
    what they quote (titles, error lines, commands) stays as written."""
    zh = language == "zh"

    def say(pair: tuple[str, str]) -> str:
        return pair[1] if zh else pair[0]

    decision = retrieval.decision
    analysis = retrieval.analysis
    version = analysis.environment.sglang_version
    outcome = LEAD if decision.outcome == LEAD and retrieval.hits and matches else UNKNOWN
    components = where_to_look(retrieval)
    # with no program's line to read (no root error, frame or native backtrace), what the decision
    # found on "error lines" came from the user's own title or caption: what they ran with
    # ("flashinfer attention, JIT DeepGEMM enabled"), not where it fails
    told_only = analysis.root_line is None and not analysis.failure_sites and not analysis.native_lines
    arises = [] if told_only else list(decision.failing_components)
    if told_only:
        components = [name for name in components if name not in decision.failing_components]
    module, function = innermost_frame(analysis.failure_sites)
    quiet_log = not analysis.errors and bool(QUIET_LOG_RE.search(analysis.question))
    programs = named_programs(analysis.other_software[:3]) if analysis.from_other_program else ()
    named = None
    if module is None and not decision.question:
        try:
            named = named_runtime_class((analysis.question, *(e.text for e in analysis.errors[:20]),
                                         *analysis.plain_lines), version)
        except (OSError, ValueError, KeyError):
            named = None   # no symbol registry (a stripped install): the answer stands without it
        if named and not components:
            # the named class's package says which component's next steps apply (mooncake, deepep)
            components = sorted(specific(components_in(named[1])))
    if module is None and not arises and not named and not decision.question:
        # a report told in words ("XGrammar outputs gibberish under load"): no frame or error
        # line says where it fails, the components the user names are the best place to look; not
        # those a program's info line names (`Use flashinfer backend by default.`): that step went well
        sentences = [line for line in analysis.plain_lines
                     if looks_like_sentence(line) and line not in analysis.logged_lines]
        # a report that is only its title or caption ("PD with mooncake: the transfer fails") names
        # where to look in it; beside the user's other words, a caption lists what they ran with
        told = ([without_configuration(error.text) for error in analysis.errors[:5]
                 if tells_of_failure(error) or analysis.from_title(error)]
                if told_only and not analysis.question.strip() and not sentences else [])
        words = " ".join((analysis.question, *told, *sentences))
        said = [c for c in named_in_order(words) if c not in components]
        components = said[:NAMED_COMPONENTS] + components
    reasons = _consistent(list(decision.reasons))
    cleared = cleared_cause(matches[0].meta, analysis) if matches and matches[0].kind == "entry" else None
    if cleared is not None and cleared not in reasons:
        # the decision may reach this entry by way of another (`tell_apart` hands a paste to it) and
        # then says only why it was handed on; the user's own words that cleared it say why it is no fix
        reasons.append(cleared)
    known = dict(reasons=[in_language(reason, language) for reason in reasons], question=decision.question,
                 failing_components=arises, failing_module=module,
                 failing_function=function,
                 named_class=named)
    if decision.question:
        known["flags"] = flags_for_question(analysis.question, registry, version)
    if outcome == LEAD and decision.question:
        top = matches[0]
        diagnosis = say(("This reads as a how-to or configuration question, not an error report, so no "
                         f"fix is given. Related reading: {top.title} ({_reference(top)}).",
                         f"这是使用或配置问题，不是错误报告，所以不给修复步骤。相关阅读：{top.title_zh or top.title}（{_reference(top)}）。"))
        links = [s for s in top.sources if s.startswith(("http://", "https://"))][:2]
        steps = [say((f"Read {_reference(top)} ({top.title}) and its sources.",
                      f"阅读 {_reference(top)}（{top.title_zh or top.title}）及其来源。"))]
        steps += [say((f"Source: {url}", f"来源：{url}")) for url in links]
        steps.append(say(ASK_FOR_ERROR))
        return NotConfirmed(outcome, diagnosis, steps, **known)
    if outcome == LEAD and decision.diagnosis and not decision.checked_at and started_after_warnings(analysis):
        # the entry finds the failure behind a warning; the paste shows the server up after it and
        # no failure: nothing to find, and the user's own question decides the next steps
        top = matches[0]
        started = (("your paste shows `The server is fired up and ready to roll!`", "你贴的内容里有 `The server is fired up and ready to roll!`")
                   if analysis.ready else ("your paste shows it serving batches", "你贴的内容里有它处理 batch 的日志"))
        diagnosis = say((
            f"Not the cause: {_quoted_en(top.title)} ({_reference(top)}) explains the warning in your paste. Your server "
            f"started after it ({started[0]}) and your paste shows no failure, so the warning is harmless here "
            "and there is nothing to fix; the steps below are for what you ask about.",
            f"不是原因：条目{_quoted_zh(top.title_zh or top.title)}（{_reference(top)}）解释了你贴的内容里的警告。"
            f"警告之后你的服务正常启动了（{started[1]}），而且没有任何失败，所以这个警告在这里是无害的，没有需要修复的东西；"
            "下面的步骤针对你问的问题。"))
        known["reasons"] = [in_language(Sentence(
            "Your paste shows only a warning, and the server started after it: there is no failure behind it for "
            "this entry's steps to find.",
            "你贴的内容里只有警告，而且之后服务正常启动了：没有需要这个条目的步骤去查找的故障。"), language)]
        steps = for_version(next_for_kind(asked_kinds(analysis), analysis.environment.hardware, analysis.user_names,
                                          request_shown=_request_shown(analysis)),
                            version, registry)
        return NotConfirmed(outcome, diagnosis, [in_language(step, language) for step in steps], no_failure=True,
                            **known)
    if outcome == LEAD and decision.diagnosis:
        top = matches[0]
        if decision.checked_at:
            diagnosis = say((
                f"Your error is a check SGLang makes ({decision.checked_at}) of the kind {_quoted_en(top.title)} "
                f"({_reference(top)}) is about, but not one it lists: the message itself names what "
                "to change, and the steps below say how to read it.",
                f"你的错误来自 SGLang 的一项检查（{decision.checked_at}），属于“{top.title_zh or top.title}”（{_reference(top)}）"
                "讲的那一类，但不是它列出的那几项：报错信息本身说明了要改什么，下面的步骤说明如何解读。"))
        elif analysis.errors:
            diagnosis = say((
                f"Not the cause yet: {_quoted_en(top.title)} ({_reference(top)}) says what your error line "
                "means and how to find the failure behind it. That failure is not in your paste, so "
                "no fix is given; the steps below find it.",
                f"这还不是根本原因：条目{_quoted_zh(top.title_zh or top.title)}（{_reference(top)}）说明了你的错误行是什么意思，以及如何找到它背后的故障。"
                "那个故障不在你贴的内容里，所以不给修复步骤；下面的步骤用来找到它。"))
        else:
            diagnosis = say((
                f"Not the cause yet: {_quoted_en(top.title)} ({_reference(top)}) is about what you describe and "
                "says how to find what is behind it. Your paste shows no error line, so no fix is given; "
                "the steps below find where it goes wrong.",
                f"这还不是根本原因：条目{_quoted_zh(top.title_zh or top.title)}（{_reference(top)}）与你描述的情况有关，并说明了如何找到背后的原因。"
                "你贴的内容里没有错误行，所以不给修复步骤；下面的步骤用来找到出错的地方。"))
        steps = diagnostic_steps(retrieval.hits[0].meta, version, registry, analysis.masked_lines, language,
                                 lines_as_written=_paste_texts(analysis))
        if analysis.traceback_cut and not decision.checked_at:
            # the failure behind the consequence line is the traceback the paste cuts off: its end
            # says what failed, before any search of the full log
            steps.insert(0, in_language(TRACEBACK_END, language))
        if not decision.checked_at:
            steps.append(say(ASK_FOR_FIRST_ERROR))
        return NotConfirmed(outcome, diagnosis, steps, **known)
    if outcome == LEAD:
        top = matches[0]
        # the failure the user describes chose the lead: its symptom closest to their words would
        # confirm it, not the entry's first error line, which may be another variant's
        told = " ".join((analysis.question, *(line for line in analysis.plain_lines if line not in analysis.logged_lines),
                         *(e.text for e in analysis.errors[:20] if tells_of_failure(e))))
        paste_text = " ".join((analysis.question, *analysis.plain_lines, *(e.text for e in analysis.errors[:20])))
        # what the paste says, without the traceback's frames and source lines: where a call passed
        # (`capture_one_batch_size`, `run_once`) is the same in every variant of a failure there
        said_text = " ".join((analysis.question, *analysis.environment.flags, *analysis.user_names,
                              *(line for line in analysis.plain_lines if not _frame_or_source(line, analysis)),
                              *(e.text for e in analysis.errors[:20])))
        roots = [e.text for e in analysis.errors if e.kind in ROOT_KINDS][:3]
        closeness = Closeness(frozenset(specific_terms(said_text)),
                              frozenset(word for line in roots for word in message_words(line)),
                              paste_kinds(analysis))
        confirm = [] if decision.described else confirm_lines(retrieval.hits[0], frozenset(
            flag for text in (*analysis.user_names, *analysis.environment.flags) for flag in FLAG_RE.findall(text)),
            paste_text, closeness)
        what = say(UNIT_KINDS.get(top.kind, ("document", "文档")))
        diagnosis = say((f"Not confirmed: the closest known problem is the {what} {_quoted_en(top.title)} "
                         f"({_reference(top)}), but it does not fit your log well enough to be the fix.",
                         f"未确认：最接近的已知问题是{what}“{top.title_zh or top.title}”（{_reference(top)}），"
                         "但它和你的日志不够吻合，不能当作修复方法。"))
        error_lines = tuple(e.text for e in analysis.errors[:20] if not tells_of_failure(e))
        symptom = (confirm_symptom(retrieval.hits[0], words=told, paste=said_text, error_lines=error_lines)
                   if not confirm and (decision.described or not own_line_shown(retrieval.hits[0])) else None)
        if confirm:
            diagnosis += say((f" If your log also shows `{confirm[0]}`, this {what} applies.",
                              f"如果你的日志里还有 `{confirm[0]}`，这个{what}就适用。"))
        elif symptom:
            symptom_zh = confirm_symptom(retrieval.hits[0], chinese=True, words=told, paste=said_text,
                                         error_lines=error_lines)
            diagnosis += say((f" It applies if what you see is this: {symptom}.",
                              f"如果你看到的现象是这样，它就适用：{symptom_zh or symptom}。"))
        # the lead's own text may say a component the paste names plays no part (its wrong advice
        # blames DeepEP, its fact says DeepEP never runs): that component's debugging is no next step
        excluded = ruled_out_components(retrieval.hits[0].meta) if top.kind == "entry" else frozenset()
        steps = _next_steps([name for name in components if name not in excluded], module, version, registry,
                            language, quiet_log, programs, analysis)
        # the steps stay out of a lead's answer; a user who confirms an entry reads them apart. A
        # paste from another program alone cannot confirm an SGLang entry: no such pointer then
        where = ((f": `ask kb show {top.id}` prints its steps (they are", f"：`ask kb show {top.id} --lang zh` 会列出它的步骤（")
                 if top.kind == "entry" else (" (its steps are", "（"))
        if not programs:
            steps.append(say((f"If it is confirmed, follow {_reference(top)}{where[0]} not shown here as the fix).",
                              f"如果确认是它，按 {_reference(top)} 处理{where[1]}这里不把它的步骤当作修复方法展示）。")))
        return NotConfirmed(outcome, diagnosis, steps, confirm_if=confirm, **known)
    if decision.question:
        diagnosis = say((
            "This reads as a how-to or configuration question, not an error report. The "
            "knowledge base holds fixes for errors, not a guide to this; "
            + ("the flags below are what SGLang's own help says about it, and its documentation "
               "(server arguments, features) has the rest." if known["flags"] else
               "SGLang's documentation (server arguments, features) is the place for it."),
            "这是使用或配置问题，不是错误报告。知识库收录的是错误的修复方法，不是这类问题的使用指南；"
            + ("下面的参数说明来自 SGLang 自带的帮助，其余内容见 SGLang 文档（server arguments、features）。"
               if known["flags"] else "请查阅 SGLang 文档（server arguments、features）。")))
        steps = [say(ASK_FOR_ERROR),
                 say(("The flags of your release: `python3 -m sglang.launch_server --help`.",
                      "你所用版本的全部参数：`python3 -m sglang.launch_server --help`。"))]
        return NotConfirmed(outcome, diagnosis, steps, **known)
    closest = ", ".join(f"{m.id} ({m.score:.2f})" for m in matches[:3])
    diagnosis = say((
        "This is not a known problem: nothing in the knowledge base matches what you pasted well "
        f"enough (confidence {retrieval.confidence:.2f}), so no fix is suggested."
        + (f" Closest entries, not a match: {closest}." if closest else ""),
        f"这不是已知问题：知识库里没有和你贴的内容足够吻合的条目（置信度 {retrieval.confidence:.2f}），所以不给修复建议。"
        + (f"最接近但不匹配的条目：{closest}。" if closest else "")))
    return NotConfirmed(outcome, diagnosis, _next_steps(components, module, version, registry, language, quiet_log, programs,
                                                        analysis),
                        **known)
