"""CPython's own messages for its built-in exceptions, which users quote without the class name.

`'NoneType' object has no attribute 'schema_'`, `f() got an unexpected keyword argument 'x'`,
`list index out of range`, `module 'transformers' has no attribute 'X'`: the interpreter prints the
same words for every such error anywhere.
The trace reader (`assistant.trace`) reads a line quoting one as an exception even without its
class; the origin matcher (`assistant.origin`) does not name an SGLang site for a template whose
only literal words are these. Imports only the stdlib.
"""

from __future__ import annotations

import re

PYTHON_MESSAGE_RE = re.compile(
    r"'\w[\w.]*' object (?:has no attribute '|is not (?:subscriptable|callable|iterable)\b)|"
    # Jinja's undefined value in a chat template: `'dict object' has no attribute 'name'`
    r"'\w+ object' has no attribute '|"
    r"\bgot an unexpected keyword argument '|\bmissing \d+ required (?:positional|keyword-only) arguments?:|"
    r"\btakes \d+ positional arguments? but \d+ (?:were|was) given|^No module named '|"
    r"\bcannot import name '[\w.]+' from '|\b(?:list|tuple|string) index out of range\b|"
    r"\bunsupported operand type\(s\) for |\b(?:not enough|too many) values to unpack \(expected \d+|"
    r"\bobject of type '\w+' has no len\(\)|\bcan only concatenate \w+ \(not \"\w+\"\) to \w+|"
    r"\binvalid literal for int\(\) with base \d+|"
    # a module's missing name (CPython's Objects/moduleobject.c), also mid-import in a cycle
    r"\b(?:partially initialized )?module '[\w.]+'(?: from '[^']*')? has no attribute '|"
    r"\bcannot access submodule '[\w.]+' of module '")
_WORD_RE = re.compile(r"[a-z]+")


def python_words(line: str) -> list[str] | None:
    """The words of the Python message a line quotes (`'NoneType' object has no attribute 'x'` ->
    nonetype, object, has, no, attribute); None when it quotes none."""
    found = PYTHON_MESSAGE_RE.search(line)
    return _WORD_RE.findall(found.group(0).lower()) if found else None


def within(words: list[str], message: list[str]) -> bool:
    """Every one of `words` is in `message`, in the same order (names may sit between them)."""
    rest = iter(message)
    return bool(words) and all(word in rest for word in words)
