"""The SGLANG_* and legacy SGL_* environment variables of one SGLang release, from its sources:
names in string constants, ``envs.X`` accesses and ``Envs`` class attributes of every ``.py``
file, plus the deprecation shims that rename or retire some of them, and whether SGL_X is copied
to SGLANG_X at startup."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ingest.flag_scan import FLAG_IN_TEXT
from ingest.source_ast import call_name, dotted_name, flatten_text, keyword, parse_python

ENV_NAME = re.compile(r"(?<![A-Za-z0-9_])(?:SGLANG|SGL)_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_])")
ENV_NAME_EXACT = re.compile(r"(?:SGLANG|SGL)_[A-Z0-9_]*[A-Z0-9]")
# "Replaces the legacy SGLANG_X env var": the name is mentioned, not read.
LEGACY_MENTION = re.compile(
    r"\b(legacy|deprecated|replaces|instead of)\W+(?:the\W+)?(?:legacy\W+|deprecated\W+)?$", re.I
)
# Names that only appear in docstring examples ("SGLANG_NEW_NAME = EnvBoolWithAlias(...)").
PLACEHOLDER_ENV_NAME = re.compile(r"(?:SGLANG|SGL)_(?:X+|NEW_NAME|OLD_NAME|FOO|BAR)")


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
