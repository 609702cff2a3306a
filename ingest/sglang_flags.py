"""Build kb/sglang_flags.json: the launch_server flags and SGLANG_*/SGL_* env vars of each release.

Run as ``python -m ingest.sglang_flags [--versions 0.4.1 0.5.9 ...] [--out kb/sglang_flags.json]``.

For every release it fetches the wheel (``ingest.wheels``: ``pip download --no-deps``, cached)
and reads its sources as a zip, never importing them:

* flags: ``parser.add_argument(...)`` calls reachable from ``ServerArgs.add_cli_args`` in
  ``sglang/srt/server_args.py``, plus, for releases that build the CLI from annotated
  fields (``add_cli_args_from_dataclass``), every ``A[T, "help"]`` / ``A[T, Arg(...)]``
  field of ServerArgs and of the namespace classes it collects (``cli_name``, ``aliases``
  and ``no_cli`` honoured, ``BooleanOptionalAction`` adds ``--no-X``);
* env vars: ``SGLANG_*`` and legacy ``SGL_*`` names in string constants, ``envs.X``
  accesses and ``Envs`` class attributes of every ``.py`` file, plus the deprecation
  shims that rename or retire some of them.

Per release the JSON holds ``flags``, ``deprecated_flags``, ``flag_replacements`` (what a
deprecation help text says to use), ``allow_abbrev``, ``env_vars``, ``legacy_env_vars``,
``deprecated_env_vars`` (old name -> replacement or ""), ``retired_env_vars`` (deprecated
names the release no longer reads itself) and ``sgl_prefix_alias`` (SGL_X is copied to
SGLANG_X at startup). ``assistant/flags.py`` answers questions from it.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import datetime
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from ingest.wheels import DEFAULT_CACHE_DIR, cached_wheel, fetch_wheel, latest_release, read_sources

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "kb" / "sglang_flags.json"
SERVER_ARGS_PATH = "sglang/srt/server_args.py"

# The releases the product must know; the latest PyPI release is appended at run time.
# The in-between ones are cheap and make "which version introduced/removed X" sharper.
DEFAULT_VERSIONS = [
    "0.4.1", "0.4.3", "0.4.5", "0.4.6", "0.4.8", "0.4.10",
    "0.5.1", "0.5.3", "0.5.5", "0.5.6", "0.5.7", "0.5.8", "0.5.9",
    "0.5.10", "0.5.12", "0.5.14", "0.5.16", "0.5.18", "0.5.20", "0.5.22",
]  # fmt: skip

ENV_NAME = re.compile(r"(?<![A-Za-z0-9_])(?:SGLANG|SGL)_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_])")
ENV_NAME_EXACT = re.compile(r"(?:SGLANG|SGL)_[A-Z0-9_]*[A-Z0-9]")
# "Replaces the legacy SGLANG_X env var": the name is mentioned, not read.
LEGACY_MENTION = re.compile(
    r"\b(legacy|deprecated|replaces|instead of)\W+(?:the\W+)?(?:legacy\W+|deprecated\W+)?$", re.I
)
# Names that only appear in docstring examples ("SGLANG_NEW_NAME = EnvBoolWithAlias(...)").
PLACEHOLDER_ENV_NAME = re.compile(r"(?:SGLANG|SGL)_(?:X+|NEW_NAME|OLD_NAME|FOO|BAR)")
# A flag with an optional value: "--attention-backend triton", "--fp8-gemm-backend=cutlass".
FLAG_IN_TEXT = re.compile(
    r"--[a-z0-9](?:[a-z0-9-]|\{[a-z0-9,_-]*\})*(?:=[^\s'\"`,;)]+|"
    r" (?!(?:instead|and|or|to|with|for|in|is|are|flag|option|argument|now|if|when)\b)"
    r"[^\s'\"`,;)-][^\s'\"`,;)]*)?"
)
# Help texts that merely mention another, deprecated flag ("replaces the deprecated
# --grpc-mode") must not mark the flag itself as deprecated.
MENTIONS_OTHER_DEPRECATED = re.compile(r"(replaces|instead of|of) the deprecated", re.I)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- AST helpers


def call_name(node: ast.Call) -> str:
    """The bare name a call is made through: ``f(...)`` -> f, ``a.b.f(...)`` -> f."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def dotted_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted_name(node.value)}.{node.attr}"
    return ""


def flatten_text(node: ast.AST | None) -> str:
    """Best-effort literal text of a string expression (f-strings, +, implicit concat)."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            flatten_text(v) if isinstance(v, ast.Constant) else "{}" for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return flatten_text(node.left) + flatten_text(node.right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    ):
        return flatten_text(node.func.value)
    if isinstance(node, ast.Tuple):
        return " ".join(flatten_text(e) for e in node.elts)
    return ""


def keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def string_list(node: ast.AST | None) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def parse_python(source: str, path: str, warnings: list[str]) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError as error:
        warnings.append(f"cannot parse {path}: {error.msg} (line {error.lineno})")
        return None


# --------------------------------------------------------------------------- flags


@dataclass
class FlagScan:
    flags: set[str] = field(default_factory=set)
    deprecated: set[str] = field(default_factory=set)
    replacements: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def is_deprecation_help(help_text: str) -> bool:
    """True when the help text says the flag itself is deprecated.

    Only the first sentence counts, unless a later one says "this argument will be
    deprecated": later sentences often talk about some other deprecated spelling
    ("... The fallback to that flag for external linkers is deprecated").
    """
    if re.search(r"\bthis (argument|flag|option) (is|will be) deprecated", help_text, re.I):
        return True
    first_sentence = re.split(r"(?<=[.!?])\s", help_text.strip(), maxsplit=1)[0]
    if MENTIONS_OTHER_DEPRECATED.search(first_sentence):
        return False
    return re.search(r"\bdeprecated\b", first_sentence, re.I) is not None


def suggested_replacement(help_text: str) -> str | None:
    """The flag a deprecation help text tells the user to use instead, if it names one."""
    match = re.search(r"\b(?:use|replaced by|in favou?r of)\s+['\"`]?(?=--)", help_text, re.I)
    flag = match and FLAG_IN_TEXT.match(help_text, match.end())
    return flag.group(0).rstrip(".") if flag else None


def record_option(
    scan: FlagScan, names: list[str], action: ast.AST | None, help_text: str, new_flag: str | None
) -> None:
    long_names = [n for n in names if n.startswith("--")]
    scan.flags.update(names)
    action_name = dotted_name(action) if action is not None else ""
    if action_name.endswith("BooleanOptionalAction"):
        scan.flags.update("--no-" + n[2:] for n in long_names)
    if "Deprecated" in action_name or is_deprecation_help(help_text):
        scan.deprecated.update(names)
        replacement = new_flag or suggested_replacement(help_text)
        if replacement:
            for name in names:
                scan.replacements[name] = replacement


def record_add_argument(scan: FlagScan, call: ast.Call) -> None:
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(names) != len(call.args):
        scan.warnings.append(f"add_argument with a non-literal option name at line {call.lineno}")
    names = [n for n in names if n.startswith("-")]
    if not names:
        return
    new_flag = keyword(call, "new_flag")
    record_option(
        scan,
        names,
        keyword(call, "action"),
        flatten_text(keyword(call, "help")),
        flatten_text(new_flag) or None,
    )


def annotated_parts(annotation: ast.AST) -> list[ast.AST] | None:
    """The metadata items of ``A[T, ...]`` / ``Annotated[T, ...]``, else None."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(annotation, ast.Subscript):
        return None
    if dotted_name(annotation.value).split(".")[-1] not in ("A", "Annotated"):
        return None
    items = annotation.slice
    if isinstance(items, ast.Tuple) and len(items.elts) >= 2:
        return items.elts[1:]
    return None


def record_annotated_field(scan: FlagScan, name: str, annotation: ast.AST) -> None:
    parts = annotated_parts(annotation)
    if parts is None:
        return  # add_cli_args_from_dataclass skips fields without CLI metadata
    arg_call = next((p for p in parts if isinstance(p, ast.Call) and call_name(p) == "Arg"), None)
    help_text = next(
        (p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)), None
    )
    if arg_call is None and help_text is None:
        return
    if arg_call is not None:
        no_cli = keyword(arg_call, "no_cli")
        if isinstance(no_cli, ast.Constant) and no_cli.value is True:
            return
        cli_name = keyword(arg_call, "cli_name")
        primary = (
            cli_name.value if isinstance(cli_name, ast.Constant) else "--" + name.replace("_", "-")
        )
        names = [primary] + string_list(keyword(arg_call, "aliases"))
        action_kwargs = keyword(arg_call, "action_kwargs")
        new_flag = None
        if isinstance(action_kwargs, ast.Dict):
            for key, value in zip(action_kwargs.keys, action_kwargs.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "new_flag":
                    new_flag = flatten_text(value) or None
        record_option(
            scan,
            names,
            keyword(arg_call, "action"),
            flatten_text(keyword(arg_call, "help")),
            new_flag,
        )
    else:
        record_option(scan, ["--" + name.replace("_", "-")], None, help_text or "", None)


class ModuleIndex:
    """Classes, functions and from-imports of one module, for following references."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.functions = {
            n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.imports: dict[str, tuple[str, str]] = {}
        self.assignments: dict[str, ast.AST] = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assignments[target.id] = node.value


class FlagExtractor:
    """Walks ``ServerArgs.add_cli_args`` and the dataclass fields it registers."""

    def __init__(self, sources: dict[str, str], scan: FlagScan):
        self.sources = sources
        self.scan = scan
        self.modules: dict[str, ModuleIndex | None] = {}
        self.visited_functions: set[int] = set()
        self.visited_classes: set[int] = set()

    def module(self, dotted: str) -> ModuleIndex | None:
        if dotted not in self.modules:
            base = dotted.replace(".", "/")
            path = next(
                (p for p in (base + ".py", base + "/__init__.py") if p in self.sources), None
            )
            tree = parse_python(self.sources[path], path, self.scan.warnings) if path else None
            self.modules[dotted] = ModuleIndex(tree) if tree else None
        return self.modules[dotted]

    def resolve_class(
        self, name: str, index: ModuleIndex
    ) -> tuple[ast.ClassDef, ModuleIndex] | None:
        if name in index.classes:
            return index.classes[name], index
        if name in index.imports:
            module_name, original = index.imports[name]
            other = self.module(module_name)
            if other is not None and other is not index:
                return self.resolve_class(original, other)
        return None

    def run(self) -> None:
        index = self.module("sglang.srt.server_args")
        if index is None:
            self.scan.warnings.append(f"{SERVER_ARGS_PATH} is missing or unparsable")
            return
        server_args = index.classes.get("ServerArgs")
        method = server_args and next(
            (
                n
                for n in server_args.body
                if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args"
            ),
            None,
        )
        if method is None:
            self.scan.warnings.append("ServerArgs.add_cli_args not found")
            return
        self.visit_function(method, index, server_args)

    def visit_function(
        self, function: ast.FunctionDef, index: ModuleIndex, owner: ast.ClassDef | None
    ) -> None:
        if id(function) in self.visited_functions:
            return
        self.visited_functions.add(id(function))
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            name = call_name(node)
            if name == "add_argument":
                record_add_argument(self.scan, node)
            elif name == "add_cli_args_from_dataclass" and len(node.args) >= 2:
                target = node.args[1]
                if isinstance(target, ast.Name):
                    self.visit_dataclass(target.id, index)
            elif owner is not None and isinstance(node.func, ast.Attribute):
                helper = next(
                    (n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == name),
                    None,
                )
                if helper is not None:
                    self.visit_function(helper, index, owner)
            elif isinstance(node.func, ast.Name) and name in index.functions:
                self.visit_function(index.functions[name], index, None)

    def visit_dataclass(self, class_name: str, index: ModuleIndex) -> None:
        resolved = self.resolve_class(class_name, index)
        if resolved is None:
            self.scan.warnings.append(f"dataclass {class_name} not found")
            return
        self.visit_class(*resolved)
        if class_name == "ServerArgs":
            # Newer releases assemble ServerArgs from namespace classes at import time:
            # ``collect_input_fields(_INPUT_NAMESPACES)``.
            for node in ast.walk(index.tree):
                if (
                    isinstance(node, ast.Call)
                    and call_name(node) == "collect_input_fields"
                    and node.args
                ):
                    for namespace in self.class_names_in(node.args[0], index):
                        found = self.resolve_class(namespace, index)
                        if found is None:
                            self.scan.warnings.append(f"namespace class {namespace} not found")
                        else:
                            self.visit_class(*found)

    def class_names_in(self, node: ast.AST, index: ModuleIndex) -> list[str]:
        if isinstance(node, ast.Name) and node.id in index.assignments:
            node = index.assignments[node.id]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [e.id for e in node.elts if isinstance(e, ast.Name)]
        self.scan.warnings.append("collect_input_fields argument is not a literal list")
        return []

    def visit_class(self, cls: ast.ClassDef, index: ModuleIndex) -> None:
        if id(cls) in self.visited_classes:
            return
        self.visited_classes.add(id(cls))
        for base in cls.bases:
            if isinstance(base, ast.Name):
                found = self.resolve_class(base.id, index)
                if found is not None:
                    self.visit_class(*found)
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                record_annotated_field(self.scan, node.target.id, node.annotation)


def uses_default_allow_abbrev(sources: dict[str, str]) -> bool:
    """Whether the launch_server parser keeps argparse's prefix matching (allow_abbrev)."""
    text = sources.get(SERVER_ARGS_PATH, "")
    return "allow_abbrev=False" not in text.replace(" ", "")


def extract_flags(sources: dict[str, str]) -> FlagScan:
    scan = FlagScan()
    FlagExtractor(sources, scan).run()
    scan.flags.add("--help")  # argparse adds -h/--help; it matters for prefix ambiguity
    scan.flags.discard("-h")
    scan.flags = {f for f in scan.flags if f.startswith("--")}
    return scan


# --------------------------------------------------------------------------- env vars


@dataclass
class EnvScan:
    names: set[str] = field(default_factory=set)
    legacy_mentions: set[str] = field(default_factory=set)
    # Read by name: Envs attribute, envs.X, os.getenv("X"), os.environ["X"], ...
    read: set[str] = field(default_factory=set)
    whole_strings: set[str] = field(default_factory=set)  # string constants that are exactly a name
    # Python identifiers spelled like env vars (module globals, enum members, class constants):
    # an error message naming one must not turn it into an env var.
    bound: set[str] = field(default_factory=set)
    deprecated: dict[str, str] = field(default_factory=dict)  # old name -> replacement ("" if none)
    sgl_prefix_alias: bool = False
    warnings: list[str] = field(default_factory=list)


def env_names_in_constants(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Env names in string constants: (live mentions, mentions as a legacy/deprecated name)."""
    live: set[str] = set()
    legacy: set[str] = set()
    fragments: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            # f"SGLANG_{x}" or f"SGLANG_FOO{suffix}": the literal part is only a fragment
            for part, following in zip(node.values, node.values[1:], strict=False):
                if isinstance(part, ast.Constant) and isinstance(following, ast.FormattedValue):
                    fragments.add(id(part))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "SGL" in node.value:
            text = node.value
            if id(node) in fragments:
                text = re.sub(r"[A-Z0-9_]+$", "", text)
            for match in ENV_NAME.finditer(text):
                before = text[max(0, match.start() - 40) : match.start()]
                (legacy if LEGACY_MENTION.search(before) else live).add(match.group(0))
    return live, legacy


def is_env_getter(call: ast.Call) -> bool:
    name = call_name(call)
    target = dotted_name(call.func)
    if name in ("get", "pop", "setdefault"):
        return target.endswith("environ." + name)
    return name == "getenv" or re.fullmatch(r"get_\w*env\w*", name) is not None


def is_envs_object(node: ast.AST) -> bool:
    """``envs``, ``lora_envs``, ``self.envs``: the objects SGLang reads env vars through."""
    return dotted_name(node).split(".")[-1].lower().endswith("envs")


def is_envs_class(node: ast.ClassDef) -> bool:
    return node.name.endswith("Envs")


def bound_identifiers(tree: ast.Module) -> set[str]:
    """Env-var-like names bound as Python identifiers outside the Envs registry classes."""
    registry_items = {
        id(item)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and is_envs_class(node)
        for item in node.body
    }
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and id(node) not in registry_items:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    bound.add(target.id)
                elif isinstance(target, ast.Attribute):
                    bound.add(target.attr)
    return {name for name in bound if ENV_NAME_EXACT.fullmatch(name)}


def first_env_constant(nodes: list[ast.AST]) -> str | None:
    for node in nodes:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and ENV_NAME_EXACT.fullmatch(node.value)
        ):
            return node.value
    return None


def parameter_roles(tree: ast.Module, function_name: str) -> tuple[int, int] | None:
    """(old, new) positional indexes of a deprecation helper's parameters.

    E.g. ``_print_deprecated_env(new_name, old_name)`` -> (1, 0).
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function_name:
            params = [a.arg for a in node.args.args]
            old = next((i for i, p in enumerate(params) if "old" in p or "deprecated" in p), None)
            new = next((i for i, p in enumerate(params) if "new" in p or "replacement" in p), None)
            if old is not None and new is not None:
                return old, new
    return None


def replacement_from(node: ast.AST) -> str:
    """What a deprecation entry names: an env var, ``replacement=...``, or a flag in its note."""
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and ENV_NAME_EXACT.fullmatch(node.value)
    ):
        return node.value
    if isinstance(node, ast.Call):
        named = keyword(node, "replacement")
        if isinstance(named, ast.Constant) and isinstance(named.value, str):
            return named.value
    texts = [
        flatten_text(n) for n in ast.walk(node) if isinstance(n, (ast.Constant, ast.JoinedStr))
    ]
    flag = FLAG_IN_TEXT.search(" ".join(texts))
    return flag.group(0) if flag else ""


def scan_env_deprecations(tree: ast.Module, scan: EnvScan) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = call_name(node)
            if "deprecat" in name.lower():
                env_args = [
                    a
                    for a in node.args
                    if isinstance(a, ast.Constant)
                    and isinstance(a.value, str)
                    and ENV_NAME_EXACT.fullmatch(a.value)
                ]
                roles = parameter_roles(tree, name) if len(env_args) >= 2 else None
                if roles and max(roles) < len(node.args):
                    old, new = node.args[roles[0]], node.args[roles[1]]
                    if isinstance(old, ast.Constant) and isinstance(new, ast.Constant):
                        scan.deprecated[old.value] = new.value
                elif len(env_args) == 1 and node.args and node.args[0] is env_args[0]:
                    scan.deprecated[env_args[0].value] = replacement_from(
                        ast.Tuple(elts=node.args[1:], ctx=ast.Load())
                    )
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            old = keyword(node.value, "deprecated_name")
            target = node.targets[0]
            if isinstance(old, ast.Constant) and isinstance(target, ast.Name):
                scan.deprecated[old.value] = target.id
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any("deprecat" in dotted_name(t).lower() for t in targets):
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and isinstance(key.value, str)
                        and ENV_NAME_EXACT.fullmatch(key.value)
                    ):
                        scan.deprecated[key.value] = replacement_from(value)


def scan_env_file(tree: ast.Module, scan: EnvScan) -> None:
    live, legacy = env_names_in_constants(tree)
    scan.names.update(live | legacy)
    scan.legacy_mentions.update(legacy - live)
    scan.whole_strings.update(
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and ENV_NAME_EXACT.fullmatch(n.value)
    )
    scan.bound.update(bound_identifiers(tree))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and ENV_NAME_EXACT.fullmatch(node.attr)
            and is_envs_object(node.value)
        ):
            scan.names.add(node.attr)
            scan.read.add(node.attr)
        elif isinstance(node, ast.ClassDef) and is_envs_class(node):
            for item in node.body:
                targets = (
                    item.targets
                    if isinstance(item, ast.Assign)
                    else [item.target]
                    if isinstance(item, ast.AnnAssign)
                    else []
                )
                for target in targets:
                    if isinstance(target, ast.Name) and ENV_NAME_EXACT.fullmatch(target.id):
                        scan.names.add(target.id)
                        scan.read.add(target.id)
        elif isinstance(node, ast.Call) and is_env_getter(node):
            name = first_env_constant(node.args[:1])
            if name:
                scan.read.add(name)
        elif isinstance(node, ast.Subscript) and dotted_name(node.value).endswith("environ"):
            name = first_env_constant([node.slice])
            if name:
                scan.read.add(name)
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In) for op in node.ops):
            if any(dotted_name(c).endswith("environ") for c in node.comparators):
                name = first_env_constant([node.left])
                if name:
                    scan.read.add(name)
        elif isinstance(node, ast.Call) and call_name(node) == "replace" and len(node.args) >= 2:
            # The generic legacy shim: os.environ key.replace("SGL_", "SGLANG_", 1)
            old, new = node.args[0], node.args[1]
            if (
                isinstance(old, ast.Constant)
                and old.value == "SGL_"
                and isinstance(new, ast.Constant)
                and new.value == "SGLANG_"
            ):
                scan.sgl_prefix_alias = True
    scan_env_deprecations(tree, scan)


def extract_env_vars(sources: dict[str, str]) -> EnvScan:
    scan = EnvScan()
    for path, source in sources.items():
        if "SGL" not in source:
            continue
        tree = parse_python(source, path, scan.warnings)
        if tree is None:
            scan.warnings[-1] += "; fell back to a regex scan"
            scan.names.update(ENV_NAME.findall(source))
            continue
        scan_env_file(tree, scan)
    scan.names -= scan.bound - scan.read - scan.whole_strings
    for name in scan.legacy_mentions - scan.read - scan.whole_strings:
        scan.deprecated.setdefault(name, "")
    scan.names = {n for n in scan.names if not PLACEHOLDER_ENV_NAME.fullmatch(n)}
    return scan


# --------------------------------------------------------------------------- one wheel


def extract_from_wheel(wheel: Path | str) -> dict:
    """The registry entry of one release, read statically from its wheel."""
    return scan_wheel(Path(wheel))[0]


def scan_wheel(wheel: Path) -> tuple[dict, list[str]]:
    """The registry entry of one release and the extraction warnings."""
    sources = read_sources(wheel)
    flags = extract_flags(sources)
    envs = extract_env_vars(sources)
    retired = {name for name in envs.deprecated if name not in envs.read}
    entry = {
        "flags": sorted(flags.flags),
        "deprecated_flags": sorted(flags.deprecated & flags.flags),
        "flag_replacements": dict(sorted(flags.replacements.items())),
        "allow_abbrev": uses_default_allow_abbrev(sources),
        "env_vars": sorted(n for n in envs.names if n.startswith("SGLANG_")),
        "legacy_env_vars": sorted(n for n in envs.names if n.startswith("SGL_")),
        "deprecated_env_vars": dict(sorted(envs.deprecated.items())),
        "retired_env_vars": sorted(retired),
        "sgl_prefix_alias": envs.sgl_prefix_alias,
    }
    return entry, flags.warnings + envs.warnings


def build(versions: list[str], cache_dir: Path) -> dict:
    wheels = {}
    for number, version in enumerate(versions, 1):
        how = "cached wheel" if cached_wheel(version, cache_dir) else "downloading wheel"
        log(f"[{number}/{len(versions)}] sglang {version}: {how}")
        wheels[version] = fetch_wheel(version, cache_dir)
    entries = {}
    # Parsing every source file of a release is CPU-bound; one release per core.
    with concurrent.futures.ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = {pool.submit(scan_wheel, wheel): version for version, wheel in wheels.items()}
        for number, future in enumerate(concurrent.futures.as_completed(futures), 1):
            version = futures[future]
            entry, warnings = future.result()
            log(f"[{number}/{len(versions)}] sglang {version}: {len(entry['flags'])} flags "
                f"({len(entry['deprecated_flags'])} deprecated), {len(entry['env_vars'])} SGLANG_* "
                f"and {len(entry['legacy_env_vars'])} SGL_* env vars")  # fmt: skip
            for warning in warnings:
                log(f"    warning: {warning}")
            entries[version] = entry
    return {
        "format": 1,
        "generated_by": "python -m ingest.sglang_flags",
        "generated_at": datetime.date.today().isoformat(),
        "versions": {version: entries[version] for version in versions},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ingest.sglang_flags", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--versions",
        nargs="+",
        help="SGLang releases to scan (default: a built-in list plus the latest PyPI release)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output JSON path")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=DEFAULT_CACHE_DIR,
        help="where downloaded wheels are kept and reused",
    )
    args = parser.parse_args(argv)

    versions = [v.lstrip("vV") for v in args.versions] if args.versions else list(DEFAULT_VERSIONS)
    if not args.versions:
        latest = latest_release()
        if latest and latest not in versions:
            versions.append(latest)
    versions = sorted(set(versions), key=Version)

    registry = build(versions, args.cache_dir.expanduser())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(registry, indent=1, sort_keys=False) + "\n")
    log(f"wrote {args.out} ({len(versions)} releases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
