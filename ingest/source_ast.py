"""Reading Python source statically (never importing it): names of calls and attributes, the text
of string expressions, keyword arguments, and parsing with a warning instead of a crash."""

from __future__ import annotations

import ast


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
