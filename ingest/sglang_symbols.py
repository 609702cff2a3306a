"""Build kb/sglang_symbols.json.gz: which SGLang releases have a module, name, class attribute or parameter.

Run as ``python -m ingest.sglang_symbols [--versions 0.4.1 0.5.9 ...] [--out-dir kb/]``.

For every SGLang release with a cached wheel (default: every cached wheel from 0.4.0 on,
through ``ingest.wheels``) it reads the ``.py`` files under ``sglang/`` from the zip, never
importing them, and records per release:

* every module (a package's ``__init__.py`` is the package; folders without one count too:
  they are importable as namespace packages);
* the names importable from each module: defs, classes, assignments and imports at module
  level, also inside top-level ``if``/``try``/``with`` blocks, plus what ``from M import *``
  brings in from another SGLang module (its ``__all__``, else its public names);
* every module-level class by name (with the modules defining it and its base-class names):
  methods, class-level assignments and annotated fields (dataclass fields, Enum members) and
  ``self.X = ...`` assignments in any of its methods;
* classes, functions and methods of ``sglang.multimodal_gen`` (SGLang Diffusion) under
  "multimodal_gen:Name" keys, apart from the LLM runtime's namesakes;
* parameters (names, which are required, whether ``**kwargs`` is taken) of every module-level
  function, every class's ``__init__`` (a dataclass without one: its fields) and every public
  method (``Engine.generate``).

A file whose content did not change between releases is parsed once; a file that does not
parse is skipped. Every fact is stored once with the releases it holds in, as index ranges
into the release list ("0-5,9,12-33"). ``assistant/symbols.py`` answers from it which
releases have what an ImportError / AttributeError / TypeError says is missing.
"""

from __future__ import annotations

import argparse
import ast
import collections
import datetime
import gzip
import hashlib
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from ingest.sglang_errors import ranges_text
from ingest.wheels import DEFAULT_CACHE_DIR, cached_versions, cached_wheel, read_sources, wheel_metadata

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT_DIR = REPO_ROOT / "kb"
SYMBOLS_FILE = "sglang_symbols.json.gz"
OLDEST_RELEASE = Version("0.4.0")
FORMAT = 1
ROOT = "sglang/"
# Test and benchmark code nobody imports from outside: only whether the module exists is kept.
MODULE_ONLY_PATHS = re.compile(r"^sglang/multimodal_gen/test/|(?<!^sglang)/tests?/|/benchmarks?/")
DATACLASS_DECORATORS = {"dataclass", "dataclasses.dataclass", "pydantic.dataclasses.dataclass"}
SELF_NAMES = {"self", "cls"}
# Base classes whose annotated class attributes are constructor fields, like a dataclass's.
FIELD_RECORD_BASES = {"Struct", "BaseModel"}
# SGLang >= 0.5.20 assembles ServerArgs at import time from namespace classes:
# ``_annotations, ... = collect_input_fields(_INPUT_NAMESPACES)``, then
# ``ServerArgs.__annotations__ = {**_annotations, ...}``; its fields are theirs.
FIELD_COLLECTORS = {"collect_input_fields"}
# SGLang Diffusion (sglang.multimodal_gen) reuses many class names of the LLM runtime (its own
# ServerArgs, SamplingParams, ...): its classes, functions and methods are keyed
# "multimodal_gen:Name" so their facts do not mix with sglang.srt's.
SEPARATE_PACKAGE = "sglang.multimodal_gen."
SEPARATE_PREFIX = "multimodal_gen:"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Signature:
    """Parameter names of one callable (self/cls left out)."""

    params: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    takes_kwargs: bool = False


@dataclass
class ClassFacts:
    bases: tuple[str, ...] = ()
    attributes: set[str] = field(default_factory=set)
    init: Signature | None = None  # own __init__, or a dataclass's own fields
    is_dataclass: bool = False
    fields: Signature | None = None  # annotated class-level fields (a field record's constructor)
    methods: dict[str, Signature] = field(default_factory=dict)  # public methods only


@dataclass
class FileFacts:
    """What one source file defines (the same for every release that ships the same text)."""

    names: set[str] = field(default_factory=set)
    star_imports: list[str] = field(default_factory=list)  # absolute module names
    exported: list[str] | None = None  # a literal __all__
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    functions: dict[str, Signature] = field(default_factory=dict)


def module_name(path: str) -> str:
    """sglang/srt/utils/__init__.py -> sglang.srt.utils; sglang/srt/utils.py -> sglang.srt.utils."""
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def signature_of(function: ast.FunctionDef | ast.AsyncFunctionDef, is_method: bool) -> Signature:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    required = [a.arg for i, a in enumerate(positional) if i < first_default]
    required += [a.arg for a, default in zip(args.kwonlyargs, args.kw_defaults) if default is None]
    names = [a.arg for a in positional] + [a.arg for a in args.kwonlyargs]
    if is_method and positional and positional[0].arg in SELF_NAMES:
        names = names[1:]
        required = [name for name in required if name != positional[0].arg]
    return Signature(tuple(names), tuple(required), args.kwarg is not None)


def decorator_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{decorator_name(node.value)}.{node.attr}"
    return ""


def target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in target_names(element)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def flat_body(statements: list[ast.stmt]):
    """Statements of a block, descending into if/try/with blocks (their names are bound too)."""
    for statement in statements:
        yield statement
        if isinstance(statement, ast.If):
            yield from flat_body(statement.body)
            yield from flat_body(statement.orelse)
        elif isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
            yield from flat_body(statement.body)
            for handler in statement.handlers:
                yield from flat_body(handler.body)
            yield from flat_body(statement.orelse)
            yield from flat_body(statement.finalbody)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from flat_body(statement.body)


def is_class_var(annotation: ast.AST) -> bool:
    text = ast.unparse(annotation) if annotation is not None else ""
    return text.startswith(("ClassVar", "typing.ClassVar"))


def class_facts(node: ast.ClassDef) -> ClassFacts:
    facts = ClassFacts(bases=tuple(filter(None, (decorator_name(b).rsplit(".", 1)[-1] for b in node.bases))))
    facts.is_dataclass = (any(decorator_name(d) in DATACLASS_DECORATORS for d in node.decorator_list)
                          or bool(FIELD_RECORD_BASES & set(facts.bases)))  # fmt: skip
    fields: list[tuple[str, bool]] = []  # (name, has default)
    for statement in flat_body(node.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            facts.attributes.add(statement.name)
            if statement.name == "__init__":
                facts.init = signature_of(statement, is_method=True)
            elif not statement.name.startswith("_"):
                is_static = any(decorator_name(d) == "staticmethod" for d in statement.decorator_list)
                facts.methods[statement.name] = signature_of(statement, is_method=not is_static)
            self_name = statement.args.args[0].arg if statement.args.args else "self"
            for inner in ast.walk(statement):
                targets = []
                if isinstance(inner, ast.Assign):
                    targets = inner.targets
                elif isinstance(inner, (ast.AnnAssign, ast.AugAssign)):
                    targets = [inner.target]
                for target in targets:
                    for element in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                        if (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)
                                and element.value.id == self_name):  # fmt: skip
                            facts.attributes.add(element.attr)
        elif isinstance(statement, ast.ClassDef):
            facts.attributes.add(statement.name)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                facts.attributes.update(target_names(target))
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            facts.attributes.add(statement.target.id)
            if not is_class_var(statement.annotation):
                fields.append((statement.target.id, statement.value is not None))
    facts.fields = Signature(tuple(name for name, _ in fields), tuple(name for name, has in fields if not has))
    if facts.is_dataclass and facts.init is None:
        facts.init = facts.fields
    return facts


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def file_facts(source: str, path: str) -> FileFacts | None:
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError):
        return None
    module = module_name(path)
    is_package = path.endswith("__init__.py")
    facts = FileFacts()
    for statement in flat_body(tree.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            facts.names.add(statement.name)
            facts.functions[statement.name] = signature_of(statement, is_method=False)
        elif isinstance(statement, ast.ClassDef):
            facts.names.add(statement.name)
            facts.classes[statement.name] = class_facts(statement)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                facts.names.update(target_names(target))
                if target_names(target) == ["__all__"] and isinstance(statement.value, (ast.List, ast.Tuple)):
                    facts.exported = [e.value for e in statement.value.elts
                                      if isinstance(e, ast.Constant) and isinstance(e.value, str)]  # fmt: skip
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            facts.names.update(target_names(statement.target))
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                facts.names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(statement, ast.ImportFrom):
            source_module = (resolve_relative(module, is_package, statement.level, statement.module)
                             if statement.level else statement.module or "")  # fmt: skip
            for alias in statement.names:
                if alias.name == "*":
                    if source_module.startswith("sglang"):
                        facts.star_imports.append(source_module)
                else:
                    facts.names.add(alias.asname or alias.name)
    add_assembled_fields(tree, facts)
    return facts


def add_assembled_fields(tree: ast.Module, facts: FileFacts) -> None:
    """A class whose ``__annotations__`` are filled from namespace classes (see FIELD_COLLECTORS)
    takes their fields: it becomes a field record with them as bases."""
    lists = {}
    collected_from: list[str] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign):
            continue
        value = statement.value
        if isinstance(value, ast.List) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            lists[statement.targets[0].id] = [e.id for e in value.elts if isinstance(e, ast.Name)]
        elif isinstance(value, ast.Call) and decorator_name(value.func) in FIELD_COLLECTORS and value.args:
            argument = value.args[0]
            if isinstance(argument, ast.Name):
                collected_from = lists.get(argument.id, [])
            elif isinstance(argument, (ast.List, ast.Tuple)):
                collected_from = [e.id for e in argument.elts if isinstance(e, ast.Name)]
        for target in statement.targets:
            if (collected_from and isinstance(target, ast.Attribute) and target.attr == "__annotations__"
                    and isinstance(target.value, ast.Name) and target.value.id in facts.classes):  # fmt: skip
                klass = facts.classes[target.value.id]
                klass.bases = tuple(dict.fromkeys([*klass.bases, *collected_from]))
                if not klass.is_dataclass and klass.init is None:
                    klass.is_dataclass, klass.init = True, klass.fields


def separate_namespace(module: str) -> bool:
    return module.startswith(SEPARATE_PACKAGE)


class SymbolTable:
    """Facts of all releases; every fact maps to the release indices it holds in."""

    def __init__(self) -> None:
        self.releases: list[str] = []
        self.file_cache: dict[str, FileFacts | None] = {}
        self.unparsable: list[str] = []
        self.modules = collections.defaultdict(list)
        self.names = collections.defaultdict(lambda: collections.defaultdict(list))
        self.classes = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
        self.functions = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
        self.methods = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
        self.with_all_extra: list[int] = []

    def add_release(self, version: str, sources: dict[str, str], metadata: str = "") -> dict[str, int]:
        index = len(self.releases)
        self.releases.append(version)
        if re.search(r"^Provides-Extra:\s*all\s*$", metadata, re.M):
            self.with_all_extra.append(index)
        per_module: dict[str, FileFacts] = {}
        for path, source in sources.items():
            if not path.startswith(ROOT):
                continue
            digest = hashlib.sha1(source.encode("utf-8", "surrogatepass")).hexdigest() + path
            if digest not in self.file_cache:
                self.file_cache[digest] = file_facts(source, path)
            facts = self.file_cache[digest]
            if facts is None:
                self.unparsable.append(f"{version} {path}")
                continue
            per_module[module_name(path)] = facts
        modules = set(per_module)
        per_module = {m: f for m, f in per_module.items() if not MODULE_ONLY_PATHS.search(m.replace(".", "/") + "/")}
        for name in list(modules):  # parents are importable even without an __init__.py
            parts = name.split(".")
            modules.update(".".join(parts[:i]) for i in range(1, len(parts)))
        for name in modules:
            self.modules[name].append(index)
        for module in per_module:
            for name in exported_names(module, per_module, set()):
                self.names[module][name].append(index)
        separate_classes = {name for module, facts in per_module.items() if separate_namespace(module)
                            for name in facts.classes}  # fmt: skip
        for module, facts in per_module.items():
            prefix = SEPARATE_PREFIX if separate_namespace(module) else ""
            for class_name, klass in facts.classes.items():
                record = self.classes[prefix + class_name]
                record["m"][module].append(index)
                for base in klass.bases:
                    record["b"][prefix + base if prefix and base in separate_classes else base].append(index)
                for attribute in klass.attributes:
                    record["a"][attribute].append(index)
                if klass.is_dataclass:
                    record["d"][""].append(index)
                if klass.init is not None:
                    add_signature(record, klass.init, index)
                for method, signature in klass.methods.items():
                    method_record = self.methods[f"{prefix}{class_name}.{method}"]
                    add_signature(method_record, signature, index)
            for function, signature in facts.functions.items():
                record = self.functions[prefix + function]
                record["m"][module].append(index)
                add_signature(record, signature, index)
        return {"modules": len(modules), "files": len(per_module)}

    def to_json(self) -> dict:
        names = {module: compact({name: ranges_text(v) for name, v in sorted(table.items())})
                 for module, table in sorted(self.names.items())}  # fmt: skip
        return {
            "format": FORMAT,
            "generated_by": "python -m ingest.sglang_symbols",
            "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "releases": self.releases,
            "all_extra": ranges_text(self.with_all_extra),
            "summary": {
                "releases": len(self.releases),
                "modules": len(self.modules),
                "names": sum(len(t) for t in self.names.values()),
                "classes": len(self.classes),
                "functions": len(self.functions),
                "methods": len(self.methods),
            },
            "modules": {name: ranges_text(v) for name, v in sorted(self.modules.items())},
            "names": names,
            "classes": pack(self.classes),
            "functions": pack(self.functions),
            "methods": pack(self.methods),
        }


def compact(value) -> str:
    """One record as its own JSON text: the reader parses only the records a lookup needs."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def pack(table) -> dict[str, str]:
    """Class / function / method records: {kind: {name: ranges}} or {flat kind: ranges}.

    A parameter required in exactly the releases it exists in is written "!ranges" and left
    out of q (most are), which keeps the file small; q keeps the other required ones.
    """
    packed = {}
    for key, record in sorted(table.items()):
        out = {}
        for kind, values in sorted(record.items()):
            if kind in FLAT_KINDS:
                out[kind] = ranges_text(values[""])
            else:
                out[kind] = {name: ranges_text(v) for name, v in sorted(values.items())}
        required = out.pop("q", {})
        for name, spans in required.items():
            if out.get("p", {}).get(name) == spans:
                out["p"][name] = "!" + spans
            else:
                out.setdefault("q", {})[name] = spans
        packed[key] = compact(out)
    return packed


# Record kinds whose value is one release set (not a table of name -> releases).
# s: releases with an own signature; k: releases taking **kwargs; d: releases where it is a dataclass.
FLAT_KINDS = {"s", "k", "d"}


def add_signature(record, signature: Signature, index: int) -> None:
    """p: parameter names, q: required ones, s/k as in FLAT_KINDS."""
    record["s"][""].append(index)
    if signature.takes_kwargs:
        record["k"][""].append(index)
    for name in signature.params:
        record["p"][name].append(index)
    for name in signature.required:
        record["q"][name].append(index)


def exported_names(module: str, per_module: dict[str, FileFacts], visiting: set[str]) -> set[str]:
    """Names importable from a module: its own plus what its star imports bring."""
    facts = per_module[module]
    names = set(facts.names)
    visiting = visiting | {module}
    for source in facts.star_imports:
        if source in per_module and source not in visiting:
            other = per_module[source]
            if other.exported is not None:
                names.update(other.exported)
            else:
                names.update(n for n in exported_names(source, per_module, visiting) if not n.startswith("_"))
    return names


def sglang_versions(requested: list[str] | None, cache_dir: Path) -> list[str]:
    if requested:
        return sorted({v.lstrip("vV") for v in requested}, key=Version)
    return [v for v in cached_versions(cache_dir, "sglang") if Version(v) >= OLDEST_RELEASE]


def build(versions: list[str], cache_dir: Path) -> dict:
    table = SymbolTable()
    for number, version in enumerate(versions, 1):
        wheel = cached_wheel(version, cache_dir)
        if wheel is None:
            raise SystemExit(f"error: no cached wheel for sglang {version} in {cache_dir}; "
                             "run python -m ingest.sglang_errors --versions {version} to download it")  # fmt: skip
        counts = table.add_release(version, read_sources(wheel), wheel_metadata(wheel))
        log(f"[{number}/{len(versions)}] sglang {version}: {counts['files']} files, {counts['modules']} modules")
    for name in table.unparsable[:20]:
        log(f"warning: could not parse {name}")
    return table.to_json()


def write_symbols(out_dir: Path, document: dict) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / SYMBOLS_FILE
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest.sglang_symbols", description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", help="SGLang releases (default: every cached wheel from 0.4.0 on)")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    args = parser.parse_args(argv)
    cache_dir = args.cache_dir.expanduser()
    versions = sglang_versions(args.versions, cache_dir)
    if not versions:
        raise SystemExit(f"error: no cached sglang wheels in {cache_dir}; pass --versions to name some")
    started = time.monotonic()
    document = build(versions, cache_dir)
    path = write_symbols(args.out_dir, document)
    from ingest.sglang_frames import write_frames   # the small table tracebacks are dated with

    write_frames(args.out_dir, document)
    log(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB, {len(versions)} releases, "
        f"{json.dumps(document['summary'])}) in {time.monotonic() - started:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
