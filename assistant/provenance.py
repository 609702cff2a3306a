"""What the registries say about a paste: where its root error comes from, which pin fixes it,
and which SGLang releases have the module, name or argument it says is missing.

`paste_origin(analysis)` looks the root error lines (and the traceback's frames) up in the
message registry (`assistant.origin`): the SGLang module, function and condition that emit the
error, the releases that have it, or the other library the error comes from. The registry is
loaded only when the paste has error lines. `paste_dependency(analysis)` asks
`assistant.deps` for the pin of the user's SGLang release when the paste shows a dependency
problem (a missing module, a version check that failed). `paste_symbol(analysis)` asks
`assistant.symbols` which releases have what an import, attribute or keyword error names (a
caller written for another SGLang release).

Both are computed once per analysis (the answer, the prompt and the renderers share them), and
both are turned into words here, once, so every surface says the same thing.
"""

from __future__ import annotations

import re
from dataclasses import replace

from assistant.components import components_in
from assistant.deps import RUNTIME_EXTRA, DependencyAdvice, dependency_advice
from assistant.environment import named_programs
from assistant.origin import EXCEPTION_LINE, Origin, match_origin
from assistant.paste_cache import per_analysis
from assistant.release_range import dated_environment, message_range, module_of, release_range, source_checkout
from assistant.symbols import ARCHITECTURE_UNSUPPORTED, SymbolHistory, symbol_history
from assistant.trace import HANDLED_RE, Analysis
from assistant.wording import Sentence, in_language

ROOT_KINDS = ("exception", "fatal")
MAX_ROOT_LINES = 8        # the first root errors are what the user asks about
MAX_CONDITION = 300       # characters of the guarding condition shown in an answer
# Entries about a dependency's version: their fix is "install what your SGLang pins".
DEPENDENCY_ENTRIES = frozenset({
    "transformers-version-breaks-sglang-import", "sgl-kernel-version-mismatch",
    "flashinfer-version-mismatch", "vllm-dependency-missing-or-mismatched",
    "downstream-tool-needs-other-sglang", "outlines-version-incompatible",
})

# "Exception: X is installed with version ..." reads like a sentence, so the trace reader may
# file it with the user's words; a line that starts with an exception name is still a log line.
EXCEPTION_START = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*[A-Za-z_]*(?:Error|Exception)\b:")

def root_error_lines(analysis: Analysis) -> list[str]:
    """The traceback's frames (innermost last) and the root error lines, as the registry reads
    them; empty when the paste has no error line."""
    errors = analysis.stopping_errors
    roots = [e.text for e in errors if e.kind in ROOT_KINDS][:MAX_ROOT_LINES]
    if not roots:
        # a warning that says the program handled what it quotes (`Ignore import error when loading
        # ...: tensor model parallel group is not initialized`) raised nothing there to trace
        roots = [e.text for e in errors if not (e.kind == "warning" and HANDLED_RE.search(e.text))][:MAX_ROOT_LINES] \
            or _exception_prose(analysis)
    if not roots:
        return []
    frames = [f'  File "{path}", line 1, in {function}' for path, function in analysis.failure_sites]
    # Python prints the failing statement under the innermost frame: for a bare AssertionError it
    # is the one thing that says which assert failed (other source lines are code, not messages)
    source = innermost_source(analysis) if any(BARE_ASSERTION.match(root) for root in roots) else ""
    if source:
        frames.append(f"    {source}")
    return frames + roots


EXCEPTION_NAME = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]*(?:Error|Exception)\b")
BARE_ASSERTION = re.compile(r"^\s*(?:[\w.]+\.)?AssertionError\s*:?\s*$")
# a traceback frame line as Python prints it (the path and the function are what it names)
FRAME_LINE = re.compile(r'File "([^"]+)", line [^,]+, in ([\w.<>]+)')


def innermost_source(analysis: Analysis) -> str:
    """The source line Python printed under the failing traceback's innermost frame (the failing
    statement: which of a function's asserts failed), "" when the paste does not show it."""
    if not analysis.failure_sites or not analysis.source_lines:
        return ""
    path, function = analysis.failure_sites[-1]
    lines = analysis.masked_lines
    for number in range(len(lines) - 2, -1, -1):
        frame = FRAME_LINE.search(analysis.original(lines[number]))
        if frame and frame.group(1) == path and frame.group(2) == function:
            following = analysis.original(lines[number + 1]).strip()
            # the exception line itself is no source line, even where the reader filed it as one
            printed = (lines[number + 1] in analysis.source_lines and not EXCEPTION_NAME.match(following)
                       and not EXCEPTION_LINE.search(following))
            return following if printed else ""
    return ""


def _exception_prose(analysis: Analysis) -> list[str]:
    """Lines filed as the user's words that start with an exception name (log lines after all)."""
    lines = (analysis.original(masked) for masked in analysis.prose_lines)
    return [line for line in lines if EXCEPTION_START.match(line)][:MAX_ROOT_LINES]


MAX_CONTEXT_LINES = 400   # lines of the paste read for the components it names


def paste_context(analysis: Analysis) -> str:
    """The user's words and the paste's other lines (the launch command, the server's arguments):
    what components and features they name chooses among SGLang's copies of one error text."""
    return "\n".join((analysis.question, *(analysis.original(line) for line in analysis.masked_lines[:MAX_CONTEXT_LINES])))


def _origin(analysis: Analysis) -> Origin | None:
    lines = root_error_lines(analysis)
    if not lines:
        return None
    try:
        origin = match_origin(lines, analysis.environment.sglang_version, context=paste_context(analysis))
    except (OSError, ValueError):
        return None   # no registry built (a stripped install): the answer stands without it
    if (origin is not None and origin.is_sglang and analysis.from_other_program and not analysis.sglang_frames
            and named_programs(analysis.other_software)):
        # another program's paste (vLLM prints many of SGLang's messages word for word): the same
        # text in SGLang's source is not where this user's error came from
        return None
    return origin


def paste_origin(analysis: Analysis) -> Origin | None:
    """Where the paste's root error comes from (an SGLang site or another library), or None."""
    return per_analysis("origin", analysis, _origin)


def _dependency(analysis: Analysis) -> DependencyAdvice | None:
    # the user's own words ("should I upgrade X?") are no evidence; log lines among them are
    prose = set(analysis.prose_lines)
    lines = [text for masked, text in analysis.originals.items()
             if masked not in prose or EXCEPTION_START.match(text)]
    if not lines:
        return None
    if not any(p.search(e.text) for p in ARCHITECTURE_UNSUPPORTED for e in analysis.errors):
        # SGLang warns for every optional model class whose imports fail at startup; that is the
        # cause only when the model's architecture is then reported as unsupported
        lines = [text for text in lines if not OPTIONAL_MODEL_IMPORT_RE.search(text)]
    version = analysis.environment.sglang_version
    releases = None if version else release_range(analysis.sglang_frames)
    dated = (releases.releases, releases.describe()) if releases else None
    try:
        advice = dependency_advice(lines, version, dated=dated)
    except (OSError, ValueError, KeyError):
        return None
    if advice is not None and CUDA_ONLY_PACKAGE_RE.match(advice.package) and _not_cuda(analysis, lines):
        # on an Ascend, AMD or MUSA machine a missing CUDA package means code for NVIDIA GPUs ran
        # by mistake: installing it is not the fix, and the entry about that path says what is
        return None
    return advice


NOT_CUDA = frozenset({"ascend", "amd", "musa"})
NOT_CUDA_COMPONENTS = frozenset({"ascend", "rocm", "aiter", "musa"})
# packages that exist only for NVIDIA's CUDA (`No module named 'cuda'` is cuda-python's)
CUDA_ONLY_PACKAGE_RE = re.compile(r"^(?:cuda-|nvidia-|cupy-cuda|flashinfer|pycuda\b)", re.I)


def _not_cuda(analysis: Analysis, lines: list[str]) -> bool:
    """The paste comes from an Ascend, AMD or MUSA machine: its hardware, or a platform it names
    (`torch_npu`, an `-ascend-a3` image, ROCm): a missing CUDA module votes for NVIDIA, so the
    vote alone cannot say."""
    return (analysis.environment.hardware in NOT_CUDA
            or bool(NOT_CUDA_COMPONENTS & components_in("\n".join((analysis.question, *lines)))))


OPTIONAL_MODEL_IMPORT_RE = re.compile(r"Ignore import error when loading sglang\.srt\.models")


def paste_dependency(analysis: Analysis) -> DependencyAdvice | None:
    """The pin for the dependency problem the paste shows, or None."""
    return per_analysis("dependency", analysis, _dependency)


def _symbol(analysis: Analysis) -> SymbolHistory | None:
    lines = root_error_lines(analysis)
    if not lines:
        return None
    try:   # the title often says which tool calls SGLang; it only helps tell SGLang's names apart
        history = symbol_history([*lines, analysis.question], analysis.environment.sglang_version)
    except (OSError, ValueError, KeyError):
        return None   # no symbol registry (a stripped install): the answer stands without it
    if history is not None and analysis.failure_sites:
        innermost = analysis.failure_sites[-1][0]
        history = replace(history, sglang_calls=module_of(innermost) is not None,
                          checkout=source_checkout(innermost) or "")
    return history


def paste_symbol(analysis: Analysis) -> SymbolHistory | None:
    """Which releases have the SGLang module, name or argument the paste's error says is missing."""
    return per_analysis("symbol", analysis, _symbol)


def compute_provenance(analysis: Analysis) -> None:
    """Look up origin, dependency and symbol now (the answer reads them from the cache): the
    retriever runs this while the query is being embedded in another thread."""
    paste_origin(analysis)
    paste_dependency(analysis)
    paste_symbol(analysis)


def symbol_sentence(history: SymbolHistory) -> Sentence:
    """The release facts and what to install, in one line for every surface."""
    summary, advice = history.summary(), history.advice()
    return Sentence(f"{summary} {advice}", f"{summary.zh}{advice.zh}")


def symbol_json(history: SymbolHistory | None) -> dict | None:
    if history is None:
        return None
    return {"kind": history.kind, "owner": history.owner, "name": history.name,
            "releases": list(history.releases), "user_version": history.user_version,
            "in_user_version": history.in_user_version, "line": history.line,
            "summary": history.summary(), "advice": history.advice()}


# ---- JSON ----------------------------------------------------------------------------------

def origin_json(origin: Origin | None) -> dict | None:
    if origin is None:
        return None
    if not origin.is_sglang:
        return {"is_sglang": False, "package": origin.package, "matched_line": origin.matched_line,
                "summary": origin_headline(origin)}
    return {"is_sglang": True, "package": origin.package, "module": origin.module,
            "path": origin.path, "function": origin.function, "kind": origin.kind,
            "exception": origin.exception, "condition": origin.condition, "context": origin.context,
            "line": origin.line, "template": origin.template, "matched_line": origin.matched_line,
            "releases": list(origin.releases), "first_release": origin.first_release,
            "last_release": origin.last_release, "user_version": origin.user_version,
            "in_user_version": origin.in_user_version, "alternatives": origin.alternatives,
            "asserts": origin.asserts,
            "citation": origin_citation(origin), "summary": origin_headline(origin)}


def dependency_json(advice: DependencyAdvice | None) -> dict | None:
    if advice is None:
        return None
    return {"package": advice.package, "problem": advice.problem, "matched_line": advice.matched_line,
            "pinned_spec": advice.pinned_spec, "installed_version": advice.installed_version,
            "sglang_version": advice.sglang_version, "pins_release": advice.pins_release,
            "install_command": advice.install_command if advice.pinned_spec else None,
            "extra": advice.extra, "source": advice.source, "satisfied": advice.satisfied,
            "listed": advice.listed, "summary": dependency_sentence(advice)}


# ---- words -----------------------------------------------------------------------------------

def origin_citation(origin: Origin) -> str:
    """How an answer cites the emission site: origin:<module>:<function>."""
    return f"origin:{origin.module}:{origin.function}"


def site(origin: Origin) -> str:
    return f"{origin.module}:{origin.function}"


def release_span(releases, language: str = "en") -> str:
    """"0.4.0–0.5.2 (13 releases)", or the one release."""
    if len(releases) == 1:
        return releases[0]
    if not releases:
        return "无" if language == "zh" else "none"
    count = f"（共 {len(releases)} 个版本）" if language == "zh" else f" ({len(releases)} releases)"
    return f"{releases[0]}–{releases[-1]}{count}"


def _how(origin: Origin) -> Sentence:
    if origin.kind == "raise":
        return (Sentence(f"raises {origin.exception}", f"抛出 {origin.exception}") if origin.exception
                else Sentence("raises", "抛出异常"))
    if origin.kind == "assert":
        return Sentence("fails an assert (AssertionError)", "断言失败（AssertionError）")
    if origin.kind == "argparse":
        return Sentence("rejects a command-line argument (argparse exits)", "拒绝了一个命令行参数（argparse 退出）")
    level = origin.exception or "error"
    return Sentence(f"logs it at {level} level", f"以 {level} 级别记录日志")


def origin_headline(origin: Origin) -> Sentence:
    """One line: who emits the error."""
    if not origin.is_sglang:
        frames = origin.matched_line.startswith("File ")
        what = "the frames point to" if frames else "the error points to"
        what_zh = "调用栈指向" if frames else "错误指向"
        return Sentence(f"not an SGLang message; {what} {origin.package}",
                        f"不是 SGLang 的报错；{what_zh} {origin.package}")
    label = "SGLang" if origin.package == "sglang" else origin.package
    how = _how(origin)
    return Sentence(f"{label}: {site(origin)} {how}", f"{label}：{site(origin)} {how.zh}")


# the line of `origin_lines` that quotes the condition under which the message is emitted
CONDITION_PREFIX = ("when: ", "条件：")


# `ReleaseRange.describe`'s words, as a Chinese reader reads them
_RELEASES_ZH = ((re.compile(r"^any release$"), "任意版本"), (re.compile(r"^(\S+) or later$"), r"\1 及之后"),
                (re.compile(r"^(\S+) or earlier$"), r"\1 及之前"), (re.compile(r"^(\S+) to (\S+)$"), r"\1 至 \2"))


def releases_zh(described: str) -> str:
    """A release range as `ReleaseRange.describe` words it (`0.5.20 or earlier`), in Chinese."""
    for pattern, replacement in _RELEASES_ZH:
        if pattern.match(described):
            return pattern.sub(replacement, described)
    return described


# what the paste's version reading rests on, as the version sentence of "Where it comes from" says it
_DATED_BY = {"traceback": ("your paste's frames point to", "从你贴的调用栈的文件看"),
             "message": ("your paste's error message points to", "从你贴的报错文字看"),
             "both": ("your paste's frames and error message point to", "从你贴的调用栈的文件和报错文字看")}


def dated_reading(env) -> Sentence | None:
    """The user's SGLang release as the Detected line reads it from a paste with no version line
    ("your paste's frames point to SGLang 0.5.7 or later"); None when the paste gives the version or
    nothing dates it. "Where it comes from" says this, never "not in the paste" beside a Detected
    line that names a range."""
    if env is None or env.sglang_version or not env.sglang_releases:
        return None
    en, zh = _DATED_BY.get(env.sglang_releases_by, _DATED_BY["traceback"])
    check = "`python3 -m sglang.check_env`"
    return Sentence(f"{en} SGLang {env.sglang_releases} ({check} gives the exact version)",
                    f"{zh}，SGLang 是 {releases_zh(env.sglang_releases)}（{check} 可给出确切版本）")


def origin_lines(origin: Origin, language: str = "en", dated: Sentence | None = None) -> list[str]:
    """The "Where it comes from" block as plain lines in the reader's language: site, condition,
    releases, user's version (`dated`: what the answer's Detected line reads of it when the paste
    has no version line, so the two never disagree)."""
    if not origin.is_sglang:
        return [in_language(origin_headline(origin), language)]
    lines = [origin_headline(origin)]
    if origin.condition:
        condition = " ".join(origin.condition.split())
        if len(condition) > MAX_CONDITION:
            condition = condition[:MAX_CONDITION] + "…"
        lines.append(Sentence(CONDITION_PREFIX[0] + condition, CONDITION_PREFIX[1] + condition))
    package = "SGLang" if origin.package == "sglang" else origin.package
    lines.append(Sentence(f"in {package} releases {release_span(origin.releases)}",
                          f"出现在 {package} 版本 {release_span(origin.releases, 'zh')}") if origin.releases
                 else Sentence(f"in no {package} release of the registry", f"版本库里没有哪个 {package} 版本有它"))
    if origin.user_version and origin.in_user_version is True:
        lines.append(Sentence(f"your SGLang {origin.user_version} has this message",
                              f"你的 SGLang {origin.user_version} 有这条报错"))
    elif origin.user_version and origin.in_user_version is False:
        lines.append(Sentence(f"your SGLang {origin.user_version} does not have this exact message: the text "
                              "changed, or the log is from another release than the one detected",
                              f"你的 SGLang {origin.user_version} 没有一字不差的这条报错：要么文字改过，"
                              "要么日志来自另一个版本，而不是检测到的这个"))
    elif origin.package == "sglang" and not origin.user_version:
        lines.append(dated or Sentence("your SGLang version is not in the paste (add `python3 -m sglang.check_env`)",
                              "你贴的内容里没有 SGLang 版本（请附上 `python3 -m sglang.check_env` 的输出）"))
    if origin.kind == "assert" and origin.asserts > 1 and not origin.condition:
        lines.append(Sentence(f"{CONDITION_PREFIX[0]}one of its {origin.asserts} asserts; the source line Python "
                              "prints under that frame of the traceback says which",
                              f"{CONDITION_PREFIX[1]}它的 {origin.asserts} 个断言之一；调用栈里这一帧下面 Python "
                              "打印的源码行能说明是哪一个"))
    if origin.alternatives:
        lines.append(Sentence(f"the same text is emitted at {origin.alternatives} other place(s); a traceback "
                              "frame would tell which",
                              f"同样的文字还在另外 {origin.alternatives} 处发出；调用栈帧能说明是哪一处"))
    return [in_language(line, language) for line in lines]


def _pin_words(advice: DependencyAdvice) -> Sentence:
    """"pins sgl-kernel==0.3.9.post2" or "requires llguidance>=0.7.11,<0.8.0"."""
    spec = advice.pinned_spec or ""
    pinned = f"{advice.package}{spec}"
    if spec.startswith(("==", "===")):
        return Sentence(f"pins {pinned}", f"锁定 {pinned}")
    return Sentence(f"requires {pinned}", f"要求 {pinned}")


def _release_words(advice: DependencyAdvice) -> Sentence:
    if advice.dated and not advice.sglang_version:
        return Sentence(f"your traceback dates your SGLang to {advice.dated} (`pip show sglang` tells which); "
                        f"{advice.pins_release}",
                        f"从调用栈看你的 SGLang 是 {advice.dated}（`pip show sglang` 可以确认）；{advice.pins_release}")
    if advice.sglang_version and advice.pins_release and advice.sglang_version != advice.pins_release:
        return Sentence(f"your SGLang {advice.sglang_version} (the requirements of {advice.pins_release})",
                        f"你的 SGLang {advice.sglang_version}（按 {advice.pins_release} 的依赖要求）")
    if advice.sglang_version:
        return Sentence(f"your SGLang {advice.sglang_version}", f"你的 SGLang {advice.sglang_version}")
    return Sentence(f"your paste does not show your SGLang version (`pip show sglang`); the newest release "
                    f"in the registry, {advice.pins_release},",
                    f"你贴的内容里没有 SGLang 版本（`pip show sglang`）；版本库里最新的 {advice.pins_release}")


# companions SGLang's docs install with their own pip command (no release pins them)
SEPARATE_INSTALLS = frozenset({"sglang-router", "mooncake-transfer-engine", "nixl"})


def dependency_sentence(advice: DependencyAdvice, command: bool = True) -> Sentence:
    """'your SGLang 0.5.2 pins sgl-kernel==0.3.9.post2; your paste shows 0.3.5: pip install "..."'
    (without the command when it is shown apart), with its Chinese version. A package the release
    does not pin gets no version: no pin is invented."""
    release, package = _release_words(advice), advice.package
    if advice.pins_vary:
        first, first_spec, last, last_spec = advice.pins_vary
        return Sentence(
            f"your traceback dates your SGLang to {advice.dated}, and those releases pin {package} "
            f"differently (from {package}{first_spec} in {first} to {package}{last_spec} in {last}): "
            f"run `pip show sglang`, then install the {package} version your release pins",
            f"从调用栈看你的 SGLang 是 {advice.dated}，而这些版本锁定的 {package} 不同"
            f"（从 {first} 的 {package}{first_spec} 到 {last} 的 {package}{last_spec}）："
            f"先运行 `pip show sglang`，再安装你的版本锁定的 {package} 版本")
    if not advice.pinned_spec:
        if advice.problem == "missing" and package in SEPARATE_INSTALLS:
            # a companion SGLang's docs install apart: installing it is the step
            return Sentence(f"{release} does not list {package} among its requirements, so it is installed "
                            f"apart: `pip install {package}` (no version is pinned)",
                            f"{release.zh} 的依赖里没有 {package}，它要单独安装：`pip install {package}`（没有锁定版本）")
        if advice.listed:
            extra = f" (in its `{advice.extra}` extra)" if advice.extra else ""
            extra_zh = f"（在它的 `{advice.extra}` extra 里）" if advice.extra else ""
            install = command and advice.problem == "missing"
            return Sentence(f"{release} requires {package}{extra} without pinning a version, so no version "
                            "is suggested" + (f": `{advice.install_command}` installs it" if install else ""),
                            f"{release.zh} 需要 {package}{extra_zh}，但没有锁定版本，所以这里不建议具体版本"
                            + (f"：`{advice.install_command}` 可以安装它" if install else ""))
        return Sentence(f"no pin is known for {package}: {release} does not list it among its "
                        "requirements, so no version is suggested",
                        f"不知道 {package} 应锁定的版本：{release.zh} 的依赖里没有它，所以这里不建议具体版本")
    pin = _pin_words(advice)
    shown = (Sentence(f"your paste shows {advice.installed_version}", f"你贴的内容显示装的是 {advice.installed_version}")
             if advice.installed_version
             else Sentence("your paste does not show the installed version", "你贴的内容里看不出装的是哪个版本"))
    if advice.satisfied is True:
        return Sentence(f"{release} {pin}; {shown}, which meets it: the version is not what fails here",
                        f"{release.zh} {pin.zh}；{shown.zh}，符合要求：出问题的不是这个版本")
    tail = (f": {advice.install_command}", f"：{advice.install_command}") if command else (".", "。")
    if advice.problem == "missing" and advice.extra == RUNTIME_EXTRA:
        # up to 0.5.2 the runtime (xgrammar, uvloop, ...) came only with the srt extra: one missing
        # module usually means the rest are missing too
        return Sentence(f"{release} {pin} in its runtime (the `srt` extra), which a plain `pip install "
                        "sglang` of that release leaves out; if more runtime modules are missing, that is "
                        "kb:sglang-installed-without-runtime-extra; for this one" + tail[0],
                        f"{release.zh} 在运行时依赖（`srt` extra）里{pin.zh}，而那个版本的 `pip install sglang` "
                        "不会装上它；如果还缺别的运行时模块，那就是 kb:sglang-installed-without-runtime-extra；"
                        "单装这一个" + tail[1])
    return Sentence(f"{release} {pin}; {shown}" + tail[0], f"{release.zh} {pin.zh}；{shown.zh}" + tail[1])


def is_dependency_entry(meta: dict, advice: DependencyAdvice | None) -> bool:
    """Is the answer's entry about a dependency's version (its fix is the pin)?"""
    if meta.get("id") in DEPENDENCY_ENTRIES:
        return True
    # an install entry, or a startup failure of a package that is too old or missing (`transformers
    # does not recognize this architecture`): the pin of the user's release is the first step
    if advice is None or not (meta.get("area") == "install"
                              or (meta.get("area") == "startup" and advice.problem in ("too old", "missing"))):
        return False
    names = {advice.package, advice.package.replace("-", "_")}
    text = " ".join([meta.get("title", ""), *(meta.get("signatures") or ()),
                     *(meta.get("keywords") or ())]).lower()
    return any(name.lower() in text for name in names)


def paste_releases(analysis: Analysis) -> tuple:
    """(the releases the paste's run can be, what dated it) with no version line: the releases
    its traceback's SGLang files exist in, narrowed to those that print its SGLang message (only
    0.5.14 and 0.5.15 print `extra_buffer needs CUDA/MUSA/NPU (FLA).`); (None, None) when neither
    says anything."""
    frames = release_range(analysis.sglang_frames)
    origin = paste_origin(analysis)
    # a text several sites emit dates the run only by all of their releases
    said = message_range(origin.text_releases or origin.releases) if origin is not None and origin.is_sglang else None
    if frames is None:
        return said, ("message" if said else None)
    narrowed = frames.narrowed(said)
    return narrowed, ("both" if narrowed.releases != frames.releases else "traceback")


def dated_paste_environment(analysis: Analysis):
    """The environment the paste shows, dated by `paste_releases` when it has no version line:
    the Detected line and the origin's releases then tell one range."""
    env = dated_environment(analysis)
    if env.sglang_version:
        return env
    releases, basis = paste_releases(analysis)
    return replace(env, sglang_releases=releases.describe(), sglang_releases_by=basis) if releases else env
