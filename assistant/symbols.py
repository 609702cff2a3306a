"""Which SGLang releases have the module, name, attribute or parameter an error says is missing.

A caller written for one SGLang release (verl, slime, a user's script) running against
another fails with ``cannot import name 'get_ip' from 'sglang.srt.utils'``, ``No module named
'sglang.srt.weight_sync'``, ``'ScheduleBatch' object has no attribute 'sample'``,
``Engine.__init__() got an unexpected keyword argument ...`` or ``... missing 1 required
positional argument: ...``. ``symbol_history(lines, user_version)`` finds the first such line
that is about SGLang and looks it up in ``kb/sglang_symbols.json.gz`` (built by
``python -m ingest.sglang_symbols`` from every release wheel): a ``SymbolHistory`` with the
releases that have it, whether the user's release does, one summary sentence and the install
command that fits. ``named_runtime_class(texts, user_version)`` finds the SGLang runtime class a
report with no traceback names (``MambaRadixCache``) and the module that defines it.

Class attributes and ``__init__`` parameters follow base classes by name (a subclass without
its own ``__init__`` takes its base's; a dataclass adds its bases' fields). The registry is
loaded once per process; each record is parsed only when a lookup needs it. Imports only the
stdlib and ``packaging``.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.version import InvalidVersion, Version

from assistant.resources import kb_file
from assistant.wording import Sentence

DEFAULT_PATH = kb_file("sglang_symbols.json.gz")
MAX_LINES = 400  # a longer paste is cut to its last lines: the error is at the end
MAX_BASE_DEPTH = 6
NAME = r"[A-Za-z_][\w]*"
DOTTED = r"[A-Za-z_][\w.]*"
QUALNAME = r"[A-Za-z_][\w.<>]*"
# a model's architecture the running release has no implementation of (group 1: the class)
ARCHITECTURE_UNSUPPORTED = (
    re.compile(rf"Model architectures? \[\s*'({NAME})'"),
    re.compile(rf"\b({NAME}) has no SGL?ang implementation", re.I),
)
LINE_PATTERNS = [
    # the closing quote of the last name may be cut off with the rest of a long line
    ("name", re.compile(rf"cannot import name '({NAME})' from '({DOTTED})(?:'|\s*$)")),
    ("module", re.compile(rf"No module named '({DOTTED})(?:'|\s*$)")),
    ("name", re.compile(rf"module '({DOTTED})' has no attribute '({NAME})(?:'|\s*$)")),
    ("attribute", re.compile(rf"type object '({NAME})' has no attribute '({NAME})(?:'|\s*$)")),
    ("attribute", re.compile(rf"'({NAME})' object has no attribute '({NAME})(?:'|\s*$)")),
    ("parameter", re.compile(rf"({QUALNAME})\(\) got an unexpected keyword argument '({NAME})(?:'|\s*$)")),
    ("required", re.compile(rf"({QUALNAME})\(\) missing \d+ required (?:positional|keyword-only) "
                            rf"arguments?: '({NAME})'")),  # fmt: skip
    *(("model", pattern) for pattern in ARCHITECTURE_UNSUPPORTED),
]
MODELS_PACKAGE = "sglang.srt.models."

SGL_ALIAS = re.compile(r"\bsgl\.[A-Za-z_]")
# Class names other libraries (transformers, vLLM, torch, pydantic) use too: only with "sglang" in the paste.
SHARED_CLASS_SUFFIX = re.compile(
    r"(?:ForCausalLM|ForConditionalGeneration|Config|Model|Attention|MLP|DecoderLayer|Layer|Tokenizer|"
    r"Processor|Params|Output|Input|Module|Linear|Embedding|Norm|Block|Encoder|Decoder)$"
)
GENERIC_NAMES = frozenset(
    "Engine Runtime Server Client Worker Scheduler Router Sampler Request Response LLM EngineArgs "
    "TrainingArguments Tensor Parameter Logger Timer Cache Pool Manager Backend Executor Runner".split()
)  # fmt: skip
GENERIC_FUNCTIONS = frozenset(
    "forward generate main load_weights from_pretrained get_world_size get_rank init_process_group "
    "get_tensor_model_parallel_rank get_tensor_model_parallel_world_size".split()
)  # fmt: skip
# Classes whose __init__(**kwargs) passes every keyword on to another class (Engine(**kw) -> ServerArgs(**kw)).
KWARGS_FORWARDED_TO = {"Engine": "ServerArgs", "Runtime": "ServerArgs"}
# Classes and functions of SGLang Diffusion are keyed apart from the LLM runtime's namesakes.
DIFFUSION_PREFIX = "multimodal_gen:"
# what a quantization method or a loader registers on a torch module at run time
PARAMETER_NAME = re.compile(r"weight|bias|scale|zeros?\b|g_idx|packed|_shape$", re.I)
OTHER_LIBRARY = re.compile(r"\b(?:vllm|transformers|lmdeploy|tensorrt_llm|torch|trl|deepspeed)[./]")


@lru_cache(maxsize=4096)
def parse_ranges(text: str) -> frozenset[int]:
    """"0-2,5,9-10" -> {0, 1, 2, 5, 9, 10}; a leading "!" (required parameter) is ignored."""
    out: set[int] = set()
    for span in text.lstrip("!").split(","):
        if not span:
            continue
        first, _, last = span.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return frozenset(out)


class SymbolRegistry:
    """kb/sglang_symbols.json.gz: release list, modules, names, classes, functions, methods."""

    _loaded: dict[Path, "SymbolRegistry"] = {}

    def __init__(self, document: dict) -> None:
        self.releases: list[str] = document["releases"]
        self.summary: dict = document.get("summary", {})
        self._modules: dict[str, str] = document["modules"]
        self._names: dict[str, str] = document["names"]
        self._classes: dict[str, str] = document["classes"]
        self._functions: dict[str, str] = document["functions"]
        self._methods: dict[str, str] = document["methods"]
        self._records: dict[tuple[str, str], dict] = {}
        self.everything = frozenset(range(len(self.releases)))

    @classmethod
    def load(cls, path: Path | str = DEFAULT_PATH) -> "SymbolRegistry":
        """The registry at path, read once per process."""
        path = Path(path)
        if path not in cls._loaded:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                cls._loaded[path] = cls(json.load(handle))
        return cls._loaded[path]

    def _record(self, table: str, key: str) -> dict | None:
        if (table, key) not in self._records:
            text = getattr(self, f"_{table}").get(key)
            self._records[(table, key)] = json.loads(text) if text is not None else None
        return self._records[(table, key)]

    # Facts, each as the set of release indices it holds in.
    def module(self, name: str) -> frozenset[int]:
        return parse_ranges(self._modules.get(name, ""))

    def name_in_module(self, module: str, name: str) -> frozenset[int]:
        """Releases where ``from module import name`` works (a name or a submodule)."""
        names = self._record("names", module) or {}
        return parse_ranges(names.get(name, "")) | self.module(f"{module}.{name}")

    def has_class(self, name: str) -> bool:
        return name in self._classes

    def has_function(self, name: str) -> bool:
        return name in self._functions

    def class_releases(self, name: str) -> frozenset[int]:
        return frozenset().union(*self.class_module_releases(name).values())

    def class_module_releases(self, name: str) -> dict[str, frozenset[int]]:
        """Each module that defines the class, with the releases where it does."""
        record = self._record("classes", name) or {}
        return {module: parse_ranges(ranges) for module, ranges in record.get("m", {}).items()}

    def attribute(self, class_name: str, attribute: str, depth: int = 0) -> frozenset[int]:
        """Releases where the class (or a base class it has then) has the attribute."""
        record = self._record("classes", class_name)
        if record is None or depth > MAX_BASE_DEPTH:
            return frozenset()
        found = parse_ranges(record.get("a", {}).get(attribute, ""))
        for base, spans in record.get("b", {}).items():
            if base != class_name:
                found |= self.attribute(base, attribute, depth + 1) & parse_ranges(spans)
        return found

    def is_torch_module(self, class_name: str, depth: int = 0) -> bool:
        """Whether the class derives from torch's nn.Module in some release."""
        record = self._record("classes", class_name)
        if record is None or depth > MAX_BASE_DEPTH:
            return False
        bases = [base for base in record.get("b", {}) if base != class_name]
        return any(base.rpartition(".")[2] == "Module" for base in bases) or any(
            self.is_torch_module(base, depth + 1) for base in bases)

    def parameter(self, owner: str, name: str, release: int, depth: int = 0) -> tuple[bool, bool, bool] | None:
        """(takes ``name``, requires it, takes **kwargs) for a function, ``Class.__init__`` or
        ``Class.method`` in one release; None when it does not exist there."""
        if depth > MAX_BASE_DEPTH:
            return None
        class_name, _, method = owner.rpartition(".")
        if not class_name:
            return self._own_parameter(self._record("functions", owner), name, release)
        if method != "__init__":
            own = self._own_parameter(self._record("methods", owner), name, release)
            return own if own is not None else self._base_parameter(class_name, f".{method}", name, release, depth)
        record = self._record("classes", class_name)
        if record is None:
            return None
        own = self._own_parameter(record, name, release)
        if own is not None and release not in parse_ranges(record.get("d", "")):
            found = own
        elif own is None:
            found = self._base_parameter(class_name, ".__init__", name, release, depth)
        else:  # a field record (dataclass, msgspec Struct) also has every base record's fields
            found = own
            for inherited in self._base_parameters(class_name, ".__init__", name, release, depth):
                found = (found[0] or inherited[0], found[1] or inherited[1], found[2] or inherited[2])
        forwarded_to = KWARGS_FORWARDED_TO.get(class_name)
        if found is not None and found[2] and not found[0] and forwarded_to and depth == 0:
            target = self.parameter(f"{forwarded_to}.__init__", name, release, depth + 1)
            if target is not None:
                found = (target[0], target[1], target[2])
        return found

    def _own_parameter(self, record: dict | None, name: str, release: int) -> tuple[bool, bool, bool] | None:
        if record is None or release not in parse_ranges(record.get("s", "")):
            return None
        spans = record.get("p", {}).get(name, "")
        has = release in parse_ranges(spans)
        required = has and (spans.startswith("!") or release in parse_ranges(record.get("q", {}).get(name, "")))
        return has, required, release in parse_ranges(record.get("k", ""))

    def _base_parameter(self, class_name: str, suffix: str, name: str, release: int, depth: int):
        """The first base (in order) that has the callable: what Python's lookup finds."""
        return next(self._base_parameters(class_name, suffix, name, release, depth), None)

    def _base_parameters(self, class_name: str, suffix: str, name: str, release: int, depth: int):
        record = self._record("classes", class_name) or {}
        for base, spans in record.get("b", {}).items():
            if base != class_name and release in parse_ranges(spans):
                found = self.parameter(base + suffix, name, release, depth + 1)
                if found is not None:
                    yield found

    def namespaced(self, owner: str, class_name: bool) -> str:
        """The SGLang Diffusion (sglang.multimodal_gen) key of a class / function, when it has one."""
        head = owner.split(".")[0] if class_name else owner
        keyed = DIFFUSION_PREFIX + owner
        return keyed if (self.has_class if class_name else self.has_function)(DIFFUSION_PREFIX + head) else owner

    def callable_known(self, owner: str) -> bool:
        class_name, _, method = owner.rpartition(".")
        if not class_name:
            return self.has_function(owner)
        return self.has_class(class_name)


@dataclass(frozen=True)
class SymbolHistory:
    """Which SGLang releases have what one error line says is missing."""

    kind: str  # module | name | attribute | parameter | model (an architecture's implementation)
    owner: str  # the module, class, or function (Class.__init__) the name belongs to
    name: str
    releases: tuple[str, ...]  # releases that have it (a parameter: take it; required=True: require it)
    known: bool  # the owner exists in some release
    user_version: str | None
    in_user_version: bool | None  # None when the user's release is unknown or not in the registry
    accepts_any_keyword: bool | None  # parameters: takes **kwargs (user's release, else the newest)
    line: str
    required: bool = False  # "missing ... required argument": the releases that require it
    fitting_releases: tuple[str, ...] = ()  # releases the calling code works with
    registry_releases: tuple[str, ...] = ()
    # who asks for the name: True when the innermost frame is SGLang's own code, False when it is
    # another program's, None when the paste shows no frame (then the answer must not guess)
    sglang_calls: bool | None = None
    # the git checkout SGLang's frames run from (/sgl-workspace/sglang), "" for an installed wheel:
    # a checkout is one development commit, often between two releases, not a mix of two
    checkout: str = ""

    def summary(self) -> Sentence:
        """One sentence: which releases have it (with its Chinese version)."""
        first, last = self.registry_releases[0], self.registry_releases[-1]
        name, owner = f"`{self.name}`", f"`{self.owner}`"
        what = {
            "module": (f"{name} exists", f"{name} 存在"),
            "name": (f"{name} can be imported from {owner}", f"可以从 {owner} 导入 {name}"),
            "attribute": (f"{owner} has the attribute {name}", f"{owner} 有属性 {name}"),
            "parameter": (f"`{self.owner}()` takes the argument {name}", f"`{self.owner}()` 接受参数 {name}"),
            "model": (f"SGLang implements the architecture {name} (in {owner})",
                      f"SGLang 实现了架构 {name}（在 {owner} 里）"),
        }[self.kind]
        if self.required:
            what = (f"`{self.owner}()` requires the argument {name}", f"`{self.owner}()` 必须传参数 {name}")
        if not self.releases and not self.required:
            missing = {
                "module": (f"the module {name}", f"模块 {name}"),
                "name": (f"{name} in {owner}", f"{owner} 里的 {name}"),
                "attribute": (f"the attribute {name} on {owner}", f"{owner} 的属性 {name}"),
                "parameter": (f"the argument {name} in `{self.owner}()`", f"`{self.owner}()` 的参数 {name}"),
            }[self.kind]
            if not self.known and self.kind == "name":
                missing = (missing[0] + f" (nor {owner} itself)", missing[1] + f"（连 {owner} 本身也没有）")
            sentence = (f"No SGLang release {first}–{last} has {missing[0]}: the calling code was written for "
                        f"a release before {first}, a fork or an unreleased development build",
                        f"SGLang {first}–{last} 没有哪个版本有{missing[1]}：调用它的代码是为 {first} 之前的版本、"
                        "某个分支（fork）或未发布的开发版写的")  # fmt: skip
            if self.sglang_calls is None:
                sentence = (f"No SGLang release {first}–{last} has {missing[0]}; with no traceback in your paste, "
                            "which code asks for it is not known: SGLang's own code (a bug of the SGLang you "
                            "run) or a caller written for a fork or an unreleased development build",
                            f"SGLang {first}–{last} 没有哪个版本有{missing[1]}；你贴的内容里没有调用栈，无法判断是谁在用它："
                            "是 SGLang 自己的代码（你所用 SGLang 的 bug），还是为某个分支（fork）或未发布的开发版写的调用方")  # fmt: skip
            if self.sglang_calls:
                sentence = (f"No SGLang release {first}–{last} has {missing[0]}, and the code that asks for it is "
                            "SGLang's own (the innermost frame of your traceback): a bug of the SGLang you run",
                            f"SGLang {first}–{last} 没有哪个版本有{missing[1]}，而要用它的正是 SGLang 自己的代码"
                            "（你的调用栈最内层的帧）：这是你所用 SGLang 的 bug")  # fmt: skip
            if self.kind == "parameter" and self.accepts_any_keyword:
                sentence = (sentence[0] + f" (`{self.owner}()` takes **kwargs, so the keyword is rejected further down)",
                            sentence[1] + f"（`{self.owner}()` 接受 **kwargs，所以这个关键字是在更深处被拒绝的）")
        elif self.required and not self.releases:
            sentence = (f"No SGLang release {first}–{last} requires {name} in `{self.owner}()`",
                        f"SGLang {first}–{last} 没有哪个版本的 `{self.owner}()` 必须传 {name}")
        else:
            when = describe_releases(self.releases, self.registry_releases)
            sentence = (f"{what[0]} {when}", f"{when.zh}，{what[1]}")
            if self.required and self.fitting_releases:
                fitting = describe_releases(self.fitting_releases, self.registry_releases, bare=True)
                sentence = (sentence[0] + f"; {fitting} do not", sentence[1] + f"；{fitting.zh} 不需要")
        user = self._user_clause()
        return Sentence(sentence[0] + user[0] + ".", sentence[1] + user[1] + "。")

    def _user_clause(self) -> tuple[str, str]:
        if not self.user_version:
            return "", ""
        yours = self.user_version
        base = base_release(yours)
        if self.in_user_version is None:
            if base is not None and self.registry_releases and base > Version(self.registry_releases[-1]):
                return (f" (your SGLang {yours} is newer than the releases checked)",
                        f"（你的 SGLang {yours} 比核对过的版本都新）")
            if is_post_release(yours):
                return (f" (your SGLang {yours} is a post release of {base}; only base releases "
                        f"were checked, and {base} and the release after it differ here, so yours may or may "
                        "not have it)",
                        f"（你的 SGLang {yours} 是 {base} 的 post 版本；这里只核对了正式版本，而 {base} "
                        "和它的下一个版本在这一点上不同，所以你的版本可能有也可能没有）")
            return (f" (your SGLang {yours} is not among the releases checked)",
                    f"（你的 SGLang {yours} 不在核对过的版本里）")
        if not self.required:
            return ((f"; your SGLang {yours} has it", f"；你的 SGLang {yours} 有") if self.in_user_version
                    else (f"; your SGLang {yours} does not", f"；你的 SGLang {yours} 没有"))
        fits = self.in_user_version != self.required
        return ((f"; your SGLang {yours} does not require it", f"；你的 SGLang {yours} 不需要它") if fits
                else (f"; your SGLang {yours} does", f"；你的 SGLang {yours} 需要"))

    def advice(self) -> Sentence:
        """What to install (or check) so the caller and SGLang match (with its Chinese version)."""
        fitting = self.fitting_releases
        yours = self.user_version
        if self.kind == "model" and fitting:
            upgrade = f'`pip install -U "sglang>={fitting[0]}"`'
            if self.in_user_version:
                return Sentence(f"Your SGLang {yours} has it, so its code failed to load: look above the "
                                f"error for `Ignore import error when loading {self.owner}`.",
                                f"你的 SGLang {yours} 有它，所以是它的代码没能加载：在报错上方找 "
                                f"`Ignore import error when loading {self.owner}`。")
            if self.in_user_version is False:
                return Sentence(f"Run a release that has it: {upgrade}.", f"换一个有它的版本：{upgrade}。")
            return Sentence(f"Check your release (`pip show sglang`); if it is older than {fitting[0]}: {upgrade}.",
                            f"先确认你的版本（`pip show sglang`）；如果比 {fitting[0]} 旧：{upgrade}。")
        caller = ("or use the release of the calling tool (verl, slime, your script...) made for "
                  + (f"your SGLang {yours}" if yours else "your installed SGLang"))  # fmt: skip
        caller_zh = ("或者换用为" + (f"你的 SGLang {yours}" if yours else "你装的 SGLang")
                     + " 写的调用方（verl、slime、你的脚本……）版本")
        if self.sglang_calls is None:  # no frame shows the caller: say "if", not that a tool calls it
            caller = ("or, if another program (verl, slime, your script...) calls it, use its release made for "
                      + (f"your SGLang {yours}" if yours else "your installed SGLang"))
            caller_zh = ("或者，如果调用它的是别的程序（verl、slime、你的脚本……），换用它为"
                         + (f"你的 SGLang {yours}" if yours else "你装的 SGLang") + " 做的版本")
        if not fitting and self.sglang_calls is None:
            return Sentence("Paste the full traceback: its innermost frame shows whether SGLang's own code or "
                            "another program asks for it.",
                            "请贴出完整的调用栈：最内层的帧能看出要用它的是 SGLang 自己的代码还是别的程序。")
        if not fitting and self.sglang_calls:
            return Sentence("Look for the release whose code no longer asks for it: the fix above when an entry "
                            "matched, else SGLang's issues for this error line.",
                            "找一个调用代码不再用它的版本：匹配到条目时按上面的修复步骤，否则用这行报错去搜 SGLang 的 issue。")
        if self.sglang_calls and self.checkout and fitting:
            return self._checkout_advice()
        if self.sglang_calls:
            # SGLang's own code asks for a name other releases have: files of two releases in one install
            caller = "or, since SGLang's own code asks for it, reinstall SGLang whole: the install mixes two releases' files"
            caller_zh = "或者完整重装 SGLang：调用它的是 SGLang 自己的代码，说明这个安装混有两个版本的文件"
        if not fitting:
            return Sentence("No release in the registry fits the calling code: use the SGLang (an older release, a "
                            f"fork or a development build) it was written for, {caller}.",
                            "版本库里没有哪个版本适合调用它的代码：请用这段代码当初针对的 SGLang"
                            f"（更旧的版本、某个分支或开发版），{caller_zh}。")  # fmt: skip
        if yours and self.user_version_fits():
            check = "`python -c \"import sglang; print(sglang.__version__, sglang.__file__)\"`"
            return Sentence(f"Your SGLang {yours} fits the calling code, so Python is loading another copy: "
                            f"check {check} in the environment that fails.",
                            f"你的 SGLang {yours} 适合调用它的代码，所以 Python 加载的是另一份 SGLang："
                            f"在出错的环境里运行 {check} 看看。")  # fmt: skip
        newest = fitting[-1]
        install = f'pip install "sglang=={newest}"'
        base = base_release(yours) if yours else None
        if base is not None and Version(fitting[0]) > base:
            if newest == self.registry_releases[-1]:
                install = f'pip install -U "sglang>={fitting[0]}"'
            return Sentence(f"Upgrade SGLang to >= {fitting[0]}: `{install}`, {caller}.",
                            f"把 SGLang 升级到 >= {fitting[0]}：`{install}`，{caller_zh}。")
        which = ("does not require it", "不需要它") if self.required else ("has it", "有它")
        return Sentence(f"Install a release that {which[0]}, the newest being {newest}: `{install}`, {caller}.",
                        f"装一个{which[1]}的版本，最新的是 {newest}：`{install}`，{caller_zh}。")

    def _checkout_advice(self) -> Sentence:
        """SGLang's own code, run from a source checkout, asks for what only some releases have: the
        checkout is a development commit before (or after) those releases, not a mixed install."""
        fitting, newest = self.fitting_releases, self.fitting_releases[-1]
        if newest == self.registry_releases[-1]:
            when, when_zh = f"older than {fitting[0]}, the first release that has it", f"比第一个有它的版本 {fitting[0]} 旧"
        else:
            when, when_zh = f"newer than {newest}, the last release that has it", f"比最后一个有它的版本 {newest} 新"
        install = f'pip install "sglang=={newest}"'
        return Sentence(f"Your SGLang runs from a source checkout (`{self.checkout}`), one development commit "
                        f"rather than a release: it is likely {when}, not an install that mixes two releases' "
                        f"files. Update the checkout (`git pull`, then `pip install -e python`) or install a "
                        f"release that has it, the newest being {newest}: `{install}`.",
                        f"你的 SGLang 是从源码仓库（`{self.checkout}`）运行的，是某个开发中的提交而不是正式版本："
                        f"它很可能{when_zh}，并不是安装里混了两个版本的文件。请更新仓库（`git pull`，再 "
                        f"`pip install -e python`），或装一个有它的版本，最新的是 {newest}：`{install}`。")

    def user_version_fits(self) -> bool:
        if self.in_user_version is None:
            return False
        return self.in_user_version != self.required


def describe_releases(releases: tuple[str, ...], everything: tuple[str, ...], bare: bool = False) -> Sentence:
    """"in SGLang 0.4.0–0.5.2 (not from 0.5.3 on)", "from SGLang 0.4.10 on", "in SGLang 0.4.3–0.4.6 and 0.5.1"
    (with its Chinese version)."""
    positions = sorted(everything.index(r) for r in releases)
    spans: list[list[int]] = []
    for position in positions:
        if spans and position == spans[-1][1] + 1:
            spans[-1][1] = position
        else:
            spans.append([position, position])
    texts = [everything[a] if a == b else f"{everything[a]}–{everything[b]}" for a, b in spans]
    listed = texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]
    listed_zh = "、".join(texts)
    if bare:
        return Sentence(f"SGLang {listed}", f"SGLang {listed_zh}")
    last = len(everything) - 1
    if len(spans) == 1 and spans[0] == [0, last]:
        return Sentence(f"in every SGLang release checked ({listed})", f"在核对过的每个 SGLang 版本里（{listed_zh}）")
    if len(spans) == 1 and spans[0][1] == last:
        start = everything[spans[0][0]]
        return Sentence(f"from SGLang {start} on", f"从 SGLang {start} 起")
    if spans[-1][1] < last:
        after = everything[spans[-1][1] + 1]
        return Sentence(f"in SGLang {listed} (not from {after} on)", f"在 SGLang {listed_zh} 里（从 {after} 起没有）")
    return Sentence(f"in SGLang {listed}", f"在 SGLang {listed_zh} 里")


def is_post_release(version: str) -> bool:
    """0.4.9.post6 (or another release after its base): the registry holds base releases only."""
    base = base_release(version)
    try:
        return base is not None and Version(version.strip().lstrip("vV")) > base
    except InvalidVersion:
        return False


def base_release(version: str | None) -> Version | None:
    try:
        return Version(Version(version.strip().lstrip("vV")).base_version) if version else None
    except InvalidVersion:
        return None


def is_sglang_module(name: str) -> bool:
    return name == "sglang" or name.startswith("sglang.")


def class_words(name: str) -> list[str]:
    """The capitalised words a class name runs together: MambaRadixCache -> Mamba, Radix, Cache."""
    return re.findall(r"[A-Z][a-z0-9]+|[A-Z]+(?![a-z])", name)


def distinctive_class(name: str) -> bool:
    name = name.removeprefix(DIFFUSION_PREFIX)
    return len(class_words(name)) >= 2 and name not in GENERIC_NAMES and not SHARED_CLASS_SUFFIX.search(name)


def distinctive_function(name: str) -> bool:
    name = name.removeprefix(DIFFUSION_PREFIX)
    return "_" in name.strip("_") and len(name) >= 12 and name not in GENERIC_FUNCTIONS


def owner_is_sglang(owner: str, registry: SymbolRegistry, mentions_sglang: bool, other_library: bool) -> bool:
    """A class / function name counts as SGLang's when the registry knows it and either the paste
    mentions sglang or the name is distinctive (and no other library's frames are all there is)."""
    class_name, _, method = owner.rpartition(".")
    if class_name:
        known, distinctive = registry.has_class(class_name), distinctive_class(class_name)
    else:
        known, distinctive = registry.has_function(owner), distinctive_function(owner)
    if not known:
        return False
    return mentions_sglang or (distinctive and not other_library)


def _callable_name(qualname: str) -> str:
    """Engine.__init__ -> Engine.__init__; a.<locals>.B.__init__ -> B.__init__; f -> f."""
    parts = [p for p in qualname.split(".") if p and not p.startswith("<")]
    return ".".join(parts[-2:]) if len(parts) >= 2 else (parts[0] if parts else "")


def symbol_history(lines: Iterable[str], user_version: str | None = None,
                   registry: SymbolRegistry | None = None) -> SymbolHistory | None:  # fmt: skip
    """The release history of what the first SGLang-related ImportError / AttributeError /
    TypeError line of a paste says is missing; None when no line is about SGLang."""
    lines = [line for line in lines if isinstance(line, str)][-MAX_LINES:]
    candidates = [(line, kind, match) for line in lines if "'" in line or "implementation" in line.lower()
                  for kind, pattern in LINE_PATTERNS if (match := pattern.search(line))]  # fmt: skip
    if not candidates:
        return None
    registry = registry or SymbolRegistry.load()
    text = "\n".join(lines)
    # `import sglang as sgl` is how SGLang's own examples call it: sgl.Engine(...), sgl.Runtime(...)
    mentions_sglang = "sglang" in text.lower() or SGL_ALIAS.search(text) is not None
    other_library = bool(OTHER_LIBRARY.search(text)) and not mentions_sglang
    for line, kind, match in candidates:
        found = _lookup(kind, match, line, registry, mentions_sglang, other_library, user_version,
                        diffusion="multimodal_gen" in text)
        if found is not None:
            return found
    return None


def _lookup(kind, match, line, registry: SymbolRegistry, mentions_sglang, other_library, user_version,
            diffusion=False):
    indices: frozenset[int]
    fitting: frozenset[int] | None = None
    accepts_any = None
    required = False
    if kind == "model":
        name = match.group(1)
        if not mentions_sglang:
            return None   # vLLM prints the same "Model architectures [...] are not supported"
        spans = {module: releases for module, releases in registry.class_module_releases(name).items()
                 if module.startswith(MODELS_PACKAGE) and releases}
        if not spans:
            return None   # no release implements it: the model is unsupported, not newer than the release
        user = _user_index(registry, user_version)
        owner = next((module for module, releases in spans.items() if user in releases),
                     max(spans, key=lambda module: max(spans[module])))
        indices, known = frozenset().union(*spans.values()), True
        fitting = indices
    elif kind == "module":
        name = match.group(1)
        if not is_sglang_module(name) or name == "sglang":
            return None  # "No module named 'sglang'": SGLang is not installed, not a version mismatch
        owner = name.rpartition(".")[0]
        indices, known = registry.module(name), bool(registry.module(owner))
    elif kind == "name" and match.re is LINE_PATTERNS[0][1]:
        name, owner = match.group(1), match.group(2)
        if not is_sglang_module(owner):
            return None
        indices, known = registry.name_in_module(owner, name), bool(registry.module(owner))
    elif kind == "name":
        owner, name = match.group(1), match.group(2)
        if not is_sglang_module(owner):
            return None
        indices, known = registry.name_in_module(owner, name), bool(registry.module(owner))
    elif kind == "attribute":
        owner, name = match.group(1), match.group(2)
        key = registry.namespaced(owner, class_name=True) if diffusion else owner
        if not owner_is_sglang(f"{key}.x", registry, mentions_sglang, other_library):
            return None
        indices, known = registry.attribute(key, name), True
        if not indices and PARAMETER_NAME.search(name) and registry.is_torch_module(key):
            # a torch module also has the parameters and submodules registered on it at run time
            # (a quantization method's create_weights adds `weight`): reading the source cannot
            # tell that no release has one
            return None
    else:
        owner = _callable_name(match.group(1))
        name = match.group(2)
        if not owner or owner == "__init__" or not owner_is_sglang(owner, registry, mentions_sglang, other_library):
            return None
        if diffusion:
            owner = registry.namespaced(owner, class_name="." in owner)
        known = registry.callable_known(owner)
        states = {r: registry.parameter(owner, name, r) for r in range(len(registry.releases))}
        states = {r: state for r, state in states.items() if state is not None}
        required = kind == "required"
        if required:
            indices = frozenset(r for r, state in states.items() if state[1])
            fitting = frozenset(r for r, state in states.items() if not state[1])
        else:
            indices = frozenset(r for r, state in states.items() if state[0])
        kind = "parameter"
        user_index = _user_index(registry, user_version)
        probe = user_index if user_index in states else max(states, default=None)
        accepts_any = states[probe][2] if probe is not None else None
    owner = owner.removeprefix(DIFFUSION_PREFIX)
    releases = tuple(registry.releases[i] for i in sorted(indices))
    fitting_releases = releases if fitting is None else tuple(registry.releases[i] for i in sorted(fitting))
    user_index = _user_index(registry, user_version)
    return SymbolHistory(
        kind=kind, owner=owner, name=name, releases=releases, known=known, user_version=user_version,
        in_user_version=_in_user_release(indices, user_index, user_version, len(registry.releases)),
        accepts_any_keyword=accepts_any, line=line.strip(), required=required,
        fitting_releases=fitting_releases, registry_releases=tuple(registry.releases),
    )  # fmt: skip


# a class name in prose or a log line: two or more capitalised words run together (`MambaRadixCache`)
CLASS_WORD_RE = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+|[A-Z]+(?![a-z]))+\b")
EXCEPTION_CLASS = re.compile(r"(?:Error|Exception|Warning|Exit)$")
RUNTIME_PACKAGE = "sglang.srt."


def named_runtime_class(texts: Iterable[str], user_version: str | None = None,
                        path: Path | str = DEFAULT_PATH) -> tuple[str, str] | None:
    """The first class of SGLang's runtime that the user's words or log lines name, as
    (class, module), for a paste with no traceback: a report that `MambaRadixCache.sanity_check()`
    spins says where it arises as clearly as a frame would. The module is the one that defines the
    class in the user's release, else in the newest release that has it. Exception classes (any
    library raises its own `InternalError`) and classes outside the runtime (`OpenAI` is also the
    openai client's) do not count."""
    names = [name for text in texts for name in _code_like_classes(text or "")]
    if not names:
        return None   # the registry costs ~0.4 s to load: not for prose that names no code
    registry = SymbolRegistry.load(path)
    user = _user_index(registry, user_version)
    for name in names:
        if registry.has_class(name):
            module = _defining_module(registry, name, user)
            if module and module.startswith(RUNTIME_PACKAGE):
                return name, module
    return None


def _code_like_classes(text: str) -> list[str]:
    """Class-like names written as code: three or more capitalised words run together
    (`MambaRadixCache`), or two followed by an attribute or a call or inside backticks
    (`TokenizerManager.handle_loop`, `` `ModelRunner` ``); "DeepSeek" or "FlashInfer" in a
    sentence are names, not code."""
    found = []
    for match in CLASS_WORD_RE.finditer(text):
        name = match.group(0)
        if EXCEPTION_CLASS.search(name) or not distinctive_class(name):
            continue
        words = len(class_words(name))
        after = text[match.end():match.end() + 1]
        before = text[match.start() - 1:match.start()] if match.start() else ""
        if words >= 3 or after in (".", "(") or (before == after == "`"):
            found.append(name)
    return found


def _defining_module(registry: SymbolRegistry, name: str, user: int | None) -> str | None:
    spans = {module: releases for module, releases in registry.class_module_releases(name).items() if releases}
    if not spans:
        return None
    if user is not None:
        mine = [module for module, releases in spans.items() if user in releases]
        if mine:
            return mine[0]
    return max(spans, key=lambda module: max(spans[module]))


def _in_user_release(indices: frozenset[int], user_index: int | None, user_version: str | None,
                     count: int) -> bool | None:
    """Whether the user's release has it. The registry holds base releases only: a post release
    (0.4.9.post6) lies between its base (0.4.9) and the next release (0.4.10), so it is known only
    when those two agree; else None (a change inside the post series cannot be told)."""
    if user_index is None:
        return None
    has = user_index in indices
    if is_post_release(user_version) and user_index + 1 < count and ((user_index + 1) in indices) != has:
        return None
    return has


def _user_index(registry: SymbolRegistry, user_version: str | None) -> int | None:
    base = base_release(user_version)
    if base is None:
        return None
    return _release_positions(tuple(registry.releases)).get(base)


@lru_cache(maxsize=8)
def _release_positions(releases: tuple[str, ...]) -> dict[Version, int]:
    return {Version(release): position for position, release in enumerate(releases)}
