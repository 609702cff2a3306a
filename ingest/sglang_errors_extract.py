"""Find the user-visible messages one Python source file can emit, by reading its AST.

A *message site* is a ``raise X("...")`` (also an exception built first and raised later:
``return X("...")``, ``err = X("...")``), an ``assert cond, "..."``, a
``logger.error/warning/critical/exception/fatal/warn(...)`` (also ``warning_once``,
``print_warning_once``, ``warnings.warn``), a ``logger.info(...)`` that reports a failure
("Decode out of memory happened"), a ``parser.error("...")`` or an argparse ``choices=``
option (argparse's own "invalid choice" text). For each we keep the message
as a template (f-string fields, ``%`` and ``.format`` placeholders become ``{expr}``; a local
message variable set once before it is written out, f"{msg} ..." is not one placeholder;
``assistant.origin`` matches lines against the literal pieces), the exception class or log
level, the enclosing ``Class.method``, the condition that leads there (the ``if`` test, the
``except`` clause, the assert's test; a bare ``assert x`` is kept with an empty text for it)
and a few lines of source context. ``ingest.sglang_errors`` runs this over every file of
every release and merges the results.
"""

from __future__ import annotations

import ast
import re
import string
from dataclasses import dataclass

LOG_LEVELS = {
    "error": "error",
    "warning": "warning",
    "warn": "warning",
    "critical": "critical",
    "exception": "error",
    "fatal": "critical",
    "warning_once": "warning",
    "error_once": "error",
    "warning_rank0": "warning",
    "warning_once_rank0": "warning",
}
WARNING_HELPERS = {"print_warning_once": "warning", "print_warning": "warning", "print_deprecated_warning": "warning"}
LOGGER_RECEIVER = re.compile(r"(^|\.)(_?logger|_?log|logging|LOGGER|_LOGGER|self\.logger)$", re.I)
PERCENT_FIELD = re.compile(r"%(?:\((\w+)\))?[-#0 +]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[hlL]?([diouxXeEfFgGcrsa%])")
MAX_PLACEHOLDER = 40
MAX_CONDITION = 300
MAX_CONTEXT_LINES = 8
MIN_LITERAL_CHARS = 8  # shorter messages ("{e}", "bad") cannot be told apart from noise
# An exception class by its name: what a constructed-but-not-yet-raised error looks like.
EXCEPTION_CLASS = re.compile(r"^[A-Z]\w*(?:Error|Exception|Warning|Exit)$")
# Info logs are progress chatter; only those that report a failure are messages a user asks about.
FAILURE_WORDS = re.compile(r"error|exception|fail|fatal|fault|abort|out of memory", re.I)


@dataclass(frozen=True)
class MessageSite:
    kind: str  # raise | assert | log | argparse
    exception: str  # exception class, or the log level for kind=log
    template: str  # format-string style: {expr} placeholders, literal braces doubled
    function: str  # Class.method, or <module>
    condition: str
    context: str
    line: int


# --------------------------------------------------------------------------- templates
# A template is a list of parts: str for literal text, Field for a placeholder.


@dataclass(frozen=True)
class Field:
    name: str


class SourceText:
    """A file's text with its lines pre-split: ``ast.get_source_segment`` re-splits per call."""

    def __init__(self, source: str):
        self.source = source
        self.lines = re.split(r"\r\n|\r|\n", source)  # as the tokenizer counts, not str.splitlines
        self.encoded = [line.encode("utf-8") for line in self.lines]  # col offsets count bytes

    def segment(self, node: ast.AST) -> str:
        try:
            first, last = node.lineno - 1, node.end_lineno - 1
            start, end = node.col_offset, node.end_col_offset
        except AttributeError:
            return ""
        if first == last:
            return self.encoded[first][start:end].decode("utf-8", "replace")
        pieces = [self.encoded[first][start:]] + self.encoded[first + 1 : last] + [self.encoded[last][:end]]
        return "\n".join(p.decode("utf-8", "replace") for p in pieces)


def source_of(node: ast.AST, source: SourceText) -> str:
    text = source.segment(node) or ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= MAX_PLACEHOLDER else text[: MAX_PLACEHOLDER - 3] + "..."


class TemplateBuilder:
    """Turns the message expression of one site into template parts."""

    def __init__(self, source: SourceText, names: dict[str, list[tuple[int, ast.AST]]]):
        self.source = source
        self.names = names  # local name -> [(line, assigned value)] of the enclosing function

    def parts(self, node: ast.AST | None, line: int, depth: int = 0) -> list:
        if node is None or depth > 4:
            return []
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else [Field(repr(node.value))]
        if isinstance(node, ast.JoinedStr):
            out: list = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    out.append(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    out.extend(self.inlined(value, line, depth) or [Field(source_of(value.value, self.source))])
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.parts(node.left, line, depth + 1) + self.parts(node.right, line, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self.parts(node.left, line, depth + 1)
            if len(left) == 1 and isinstance(left[0], str):
                args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
                return self.percent(left[0], args)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
        ):
            base = self.parts(node.func.value, line, depth + 1)
            if len(base) == 1 and isinstance(base[0], str):
                return self.brace_format(base[0], node.args, node.keywords)
        if isinstance(node, ast.Name) and node.id in self.names:
            earlier = [value for at, value in self.names[node.id] if at < line]
            if earlier:
                return self.parts(earlier[-1], line, depth + 1)
        return [Field(source_of(node, self.source))]

    def inlined(self, value: ast.FormattedValue, line: int, depth: int) -> list:
        """The text of a local message variable an f-string embeds (f"{msg} To allow ..."), so
        the message is not masked by a placeholder; [] when it is not such a variable or when it
        is assigned more than once."""
        if value.conversion != -1 or value.format_spec is not None or not isinstance(value.value, ast.Name):
            return []
        if value.value.id not in self.names or len(self.names[value.value.id]) != 1:
            return []  # reassigned (error_message = "" ... error_message = f"..."): value unknown
        assigned_at = self.names[value.value.id][0][0]
        if assigned_at >= line or self.indent(assigned_at) > self.indent(line):
            return []  # set in a nested block (`if ...: error_message = ...`): maybe never set
        parts = self.parts(value.value, line, depth + 1)
        return parts if literal_chars(normalise(parts)) >= MIN_LITERAL_CHARS else []

    def indent(self, line: int) -> int:
        text = self.source.lines[line - 1]
        return len(text) - len(text.lstrip())

    def percent(self, text: str, args: list[ast.AST]) -> list:
        out: list = []
        position = 0
        arg_index = 0
        for match in PERCENT_FIELD.finditer(text):
            out.append(text[position : match.start()])
            position = match.end()
            if match.group(2) == "%":
                out.append("%")
                continue
            if match.group(1):
                out.append(Field(match.group(1)))
            else:
                arg = args[arg_index] if arg_index < len(args) else None
                arg_index += 1
                out.append(Field(source_of(arg, self.source) if arg is not None else "arg"))
        out.append(text[position:])
        return out

    def brace_format(self, text: str, args: list[ast.AST], keywords: list[ast.keyword]) -> list:
        out: list = []
        auto_index = 0
        try:
            pieces = list(string.Formatter().parse(text))
        except ValueError:
            return [text]
        by_name = {k.arg: k.value for k in keywords if k.arg}
        for literal, field_name, _spec, _conversion in pieces:
            out.append(literal)
            if field_name is None:
                continue
            if field_name == "":
                node = args[auto_index] if auto_index < len(args) else None
                auto_index += 1
            elif field_name.isdigit():
                index = int(field_name)
                node = args[index] if index < len(args) else None
            else:
                node = by_name.get(field_name.split(".")[0].split("[")[0])
            out.append(Field(source_of(node, self.source) if node is not None else field_name))
        return out


def normalise(parts: list) -> list:
    """Merge adjacent literals and adjacent fields; drop empty literals."""
    out: list = []
    for part in parts:
        if isinstance(part, str):
            if not part:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += part
                continue
        elif out and isinstance(out[-1], Field):
            continue
        out.append(part)
    return out


def template_text(parts: list) -> str:
    """Format-string style: literal braces doubled, fields as {expr} (braces in expr -> parens).

    ``assistant.origin`` turns this back into parts and builds the search regex from it.
    """
    return "".join(
        p.replace("{", "{{").replace("}", "}}")
        if isinstance(p, str)
        else "{" + p.name.replace("{", "(").replace("}", ")") + "}"
        for p in parts
    )


def literal_chars(parts: list) -> int:
    return sum(len(p.strip()) for p in parts if isinstance(p, str))


# --------------------------------------------------------------------------- walking


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


def assignments(function: ast.AST) -> dict[str, list[tuple[int, ast.AST]]]:
    names: dict[str, list[tuple[int, ast.AST]]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                names.setdefault(target.id, []).append((node.lineno, node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            # msg += "..." : approximate by the concatenation of the last value and the addition
            previous = names.get(node.target.id)
            if previous and isinstance(node.op, ast.Add):
                joined = ast.BinOp(left=previous[-1][1], op=ast.Add(), right=node.value)
                names[node.target.id].append((node.lineno, joined))
    for entries in names.values():
        entries.sort(key=lambda item: item[0])
    return names


STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


class LazyAssignments:
    """Name -> assigned values of one function, computed only if a message refers to a name."""

    def __init__(self, function: ast.AST):
        self.function = function
        self.names: dict | None = None

    def __contains__(self, name: str) -> bool:
        if self.names is None:
            self.names = assignments(self.function)
        return name in self.names

    def __getitem__(self, name: str):
        return self.names[name]


class SiteCollector:
    """Walks one module, keeping the path of (ancestor, field) pairs to each node."""

    def __init__(self, source: str, path: str):
        self.source = SourceText(source)
        self.lines = self.source.lines
        self.path = path
        self.sites: list[MessageSite] = []
        self.scope: list[str] = []
        self.names_stack: list[dict] = [{}]

    # -- guard and context ------------------------------------------------------------
    def guard(self, ancestors: list[tuple[ast.AST, str]]) -> ast.AST | None:
        for node, field in reversed(ancestors):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return None
            if isinstance(node, (ast.If, ast.ExceptHandler, ast.While)) or (
                isinstance(node, ast.Try) and field == "body"
            ):
                return node
        return None

    def condition_text(self, guard: ast.AST | None, ancestors) -> str:
        if guard is None:
            return ""
        field = next(f for n, f in reversed(ancestors) if n is guard)
        if isinstance(guard, (ast.If, ast.While)):
            test = " ".join(self.source.segment(guard.test).split())
            text = f"not ({test})" if field == "orelse" else test
            if isinstance(guard, ast.While):
                text = f"while {text}"
        elif isinstance(guard, ast.ExceptHandler):
            kind = ast.unparse(guard.type) if guard.type is not None else ""
            text = f"except {kind}".strip() + (f" as {guard.name}" if guard.name else "")
        else:
            text = "in try body"
        return text if len(text) <= MAX_CONDITION else text[: MAX_CONDITION - 3] + "..."

    def context_text(self, first_line: int, last_line: int) -> str:
        lines = self.lines[first_line - 1 : last_line]
        if len(lines) > MAX_CONTEXT_LINES:
            lines = lines[:2] + ["    ..."] + lines[-(MAX_CONTEXT_LINES - 3) :]
        indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        return "\n".join(l[indent:].rstrip() for l in lines)

    # -- recording ----------------------------------------------------------------------
    def record(self, kind, exception, parts, node, ancestors, condition=None, guard=None, bare=False):
        parts = normalise(parts)
        if literal_chars(parts) < MIN_LITERAL_CHARS and not bare:
            return
        if guard is None and condition is None:
            guard = self.guard(ancestors)
        if condition is None:
            condition = self.condition_text(guard, ancestors)
        start = guard.lineno if guard is not None else node.lineno
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        if end - start > 30:  # a long if-body: show only the site itself
            start = node.lineno
        self.sites.append(
            MessageSite(
                kind=kind,
                exception=exception,
                template=template_text(parts),
                function=".".join(self.scope) or "<module>",
                condition=condition,
                context=self.context_text(start, end),
                line=node.lineno,
            )
        )

    def builder(self) -> TemplateBuilder:
        return TemplateBuilder(self.source, self.names_stack[-1])

    def visit(self, node: ast.AST, ancestors: list[tuple[ast.AST, str]]) -> None:
        """Statements only: every message site is a statement (raise, assert, a call on its own)."""
        scoped = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if scoped:
            self.scope.append(node.name)
            if not isinstance(node, ast.ClassDef):
                self.names_stack.append(LazyAssignments(node))
        try:
            self.inspect(node, ancestors)
            for field in STATEMENT_FIELDS:
                children = getattr(node, field, None)
                if not children:
                    continue
                ancestors.append((node, field))
                for child in children:
                    self.visit(child, ancestors)
                ancestors.pop()
        finally:
            if scoped:
                self.scope.pop()
                if not isinstance(node, ast.ClassDef):
                    self.names_stack.pop()

    def inspect(self, node: ast.AST, ancestors) -> None:
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            exception = dotted(node.exc.func).split(".")[-1]
            if exception and exception[0].isupper():
                parts = self.builder().parts(node.exc.args[0], node.lineno)
                self.record("raise", exception, parts, node, ancestors)
        elif isinstance(node, ast.Assert):
            # a bare `assert x` prints only "AssertionError": kept (empty text) so a traceback's
            # innermost frame can be named with its Class.method and the condition that failed
            parts = self.builder().parts(node.msg, node.lineno) if node.msg is not None else []
            test = " ".join(self.source.segment(node.test).split())
            condition = test if len(test) <= MAX_CONDITION else test[: MAX_CONDITION - 3] + "..."
            guard = self.guard(ancestors)
            if guard is not None and not isinstance(guard, ast.Try):
                outer = self.condition_text(guard, ancestors)
                condition = f"{condition}  (inside: {outer})" if outer else condition
            self.record("assert", "AssertionError", parts, node, ancestors, condition=condition,
                        bare=node.msg is None)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.inspect_call(node.value, ancestors)
        elif isinstance(node, (ast.Return, ast.Assign)) and self.is_exception_call(node.value):
            # `return RuntimeError(...)` / `error = ValueError(...)`: raised by a caller or later
            exception = dotted(node.value.func).split(".")[-1]
            parts = self.builder().parts(node.value.args[0], node.lineno)
            self.record("raise", exception, parts, node, ancestors)

    @staticmethod
    def is_exception_call(value: ast.AST | None) -> bool:
        return (isinstance(value, ast.Call) and bool(value.args)
                and bool(EXCEPTION_CLASS.match(dotted(value.func).split(".")[-1] or "")))

    def inspect_call(self, node: ast.Call, ancestors) -> None:
        func = node.func
        name = dotted(func)
        receiver = dotted(func.value) if isinstance(func, ast.Attribute) else ""
        is_logger = bool(receiver) and bool(LOGGER_RECEIVER.search(receiver)) and bool(node.args)
        if is_logger and func.attr in LOG_LEVELS:
            self.record_log(LOG_LEVELS[func.attr], node, ancestors)
        elif is_logger and func.attr == "info":
            self.record_log("info", node, ancestors, only_failures=True)
        elif name in WARNING_HELPERS and node.args:
            self.record_log(WARNING_HELPERS[name], node, ancestors)
        elif name == "warnings.warn" and node.args:
            category = dotted(node.args[1]) if len(node.args) > 1 else ""
            for k in node.keywords:
                if k.arg == "category":
                    category = dotted(k.value)
            parts = self.builder().parts(node.args[0], node.lineno)
            self.record("log", category.split(".")[-1] or "UserWarning", parts, node, ancestors)
        elif isinstance(func, ast.Attribute) and func.attr == "error" and "parser" in dotted(func.value):
            parts = self.builder().parts(node.args[0], node.lineno) if node.args else []
            self.record("argparse", "SystemExit", parts, node, ancestors)
        elif isinstance(func, ast.Attribute) and func.attr == "add_argument":
            self.record_choices(node, ancestors)

    def record_log(self, level: str, node: ast.Call, ancestors, only_failures: bool = False) -> None:
        parts = self.builder().parts(node.args[0], node.lineno)
        # logger.error("... %s", value) or msg = "... %s"; logger.error(msg, value)
        if len(node.args) > 1 and len(parts) == 1 and isinstance(parts[0], str) and "%" in parts[0]:
            parts = self.builder().percent(parts[0], node.args[1:])
        if only_failures and not FAILURE_WORDS.search("".join(p for p in parts if isinstance(p, str))):
            return
        self.record("log", level, parts, node, ancestors)

    def record_choices(self, node: ast.Call, ancestors) -> None:
        if not any(k.arg == "choices" for k in node.keywords):
            return
        options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not options or not options[0].startswith("-"):
            return  # a positional argument: argparse names it differently
        # argparse's own wording (Lib/argparse.py) up to the value; what follows it,
        # "(choose from ...)", is worded differently across Python versions.
        parts = [f"argument {'/'.join(options)}: invalid choice: ", Field("value")]
        self.record("argparse", "SystemExit", parts, node, ancestors, condition="value not in choices")


def extract_sites(source: str, path: str) -> list[MessageSite] | None:
    """Every message site of one file, or None when the file does not parse."""
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return None
    collector = SiteCollector(source, path)
    collector.visit(tree, [])
    return collector.sites
