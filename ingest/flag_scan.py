"""The launch_server flags of one SGLang release, from its sources: ``parser.add_argument(...)``
calls reachable from ``ServerArgs.add_cli_args`` in ``sglang/srt/server_args.py``, plus, for
releases that build the CLI from annotated fields (``add_cli_args_from_dataclass``), every
``A[T, "help"]`` / ``A[T, Arg(...)]`` field of ServerArgs and of the namespace classes it collects
(``cli_name``, ``aliases`` and ``no_cli`` honoured, ``BooleanOptionalAction`` adds ``--no-X``);
which of them are deprecated, what their help text says to use instead, and each flag's help text
and literal choices (what a how-to answer quotes)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ingest.source_ast import call_name, dotted_name, flatten_text, keyword, parse_python, string_list

SERVER_ARGS_PATH = "sglang/srt/server_args.py"
# A flag with an optional value: "--attention-backend triton", "--fp8-gemm-backend=cutlass".
FLAG_IN_TEXT = re.compile(
    r"--[a-z0-9](?:[a-z0-9-]|\{[a-z0-9,_-]*\})*(?:=[^\s'\"`,;)]+|"
    r" (?!(?:instead|and|or|to|with|for|in|is|are|flag|option|argument|now|if|when)\b)"
    r"[^\s'\"`,;)-][^\s'\"`,;)]*)?"
)
# Help texts that merely mention another, deprecated flag ("replaces the deprecated
# --grpc-mode") must not mark the flag itself as deprecated.
MENTIONS_OTHER_DEPRECATED = re.compile(r"(replaces|instead of|of) the deprecated", re.I)


@dataclass
class FlagScan:
    flags: set[str] = field(default_factory=set)
    deprecated: set[str] = field(default_factory=set)
    replacements: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # keyed by the option's first long name; aliases share it
    help: dict[str, str] = field(default_factory=dict)
    choices: dict[str, list[str]] = field(default_factory=dict)


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
    scan: FlagScan, names: list[str], action: ast.AST | None, help_text: str, new_flag: str | None,
    choices: list[str] | None = None,
) -> None:
    long_names = [n for n in names if n.startswith("--")]
    scan.flags.update(names)
    if long_names and help_text.strip() and long_names[0] not in scan.help:
        scan.help[long_names[0]] = " ".join(help_text.split())
    if long_names and choices:
        scan.choices.setdefault(long_names[0], choices)
    action_name = dotted_name(action) if action is not None else ""
    if action_name.endswith("BooleanOptionalAction"):
        scan.flags.update("--no-" + n[2:] for n in long_names)
    if "Deprecated" in action_name or is_deprecation_help(help_text):
        scan.deprecated.update(names)
        replacement = new_flag or suggested_replacement(help_text)
        if replacement:
            for name in names:
                scan.replacements[name] = replacement


def literal_choices(node: ast.AST | None, resolve=None) -> list[str]:
    """The choices of an option when the source spells them out, directly or as a list bound to
    a name (``resolve`` looks the name up); [] when they are computed (``list(REGISTRY)``)."""
    if isinstance(node, ast.Name) and resolve is not None:
        node = resolve(node.id)
    return string_list(node)


def record_add_argument(scan: FlagScan, call: ast.Call, resolve=None) -> None:
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
        literal_choices(keyword(call, "choices"), resolve),
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


def record_annotated_field(scan: FlagScan, name: str, annotation: ast.AST, resolve=None) -> None:
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
            literal_choices(keyword(arg_call, "choices"), resolve),
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

    def lookup(self, name: str, index: ModuleIndex, table: str) -> tuple[ast.AST, ModuleIndex] | None:
        """A module-level name in one of the module's tables (``classes``, ``assignments``), or in
        the module it is imported from, with the module that defines it."""
        found = getattr(index, table).get(name)
        if found is not None:
            return found, index
        if name in index.imports:
            module_name, original = index.imports[name]
            other = self.module(module_name)
            if other is not None and other is not index:
                return self.lookup(original, other, table)
        return None

    def resolve_class(self, name: str, index: ModuleIndex) -> tuple[ast.ClassDef, ModuleIndex] | None:
        return self.lookup(name, index, "classes")

    def bound_value(self, name: str, index: ModuleIndex) -> ast.AST | None:
        """What a module-level name is bound to, in its module or the one it is imported from."""
        found = self.lookup(name, index, "assignments")
        return found[0] if found else None

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
                record_add_argument(self.scan, node, lambda name: self.bound_value(name, index))
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
                record_annotated_field(self.scan, node.target.id, node.annotation,
                                       lambda name: self.bound_value(name, index))


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
