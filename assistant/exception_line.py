"""The exception class at the head of an error line (`ValueError: `, `torch.OutOfMemoryError: `).

Users and relays quote an error's message without its class ("Failed to load LoRA adapter sql:
Cannot find ..."), so what is compared is often the message alone. One pattern of a class name is
kept here; its readings differ only in how much they take off:
- `without_class`: one class (`RuntimeError: ValueError: x` keeps `ValueError: x`);
- `without_class_chain`: every class in a row, with any spaces before the colon;
- `named_class_head`: a real class name only (a bare `error: x` is a log's level, no class).
The lines they read are masked and lower-cased by the caller (`assistant.text.mask`).
"""

from __future__ import annotations

import re

# a dotted name ending in Error/Exception (lower-cased lines)
_CLASS = r"[\w.]*(?:error|exception)"
# the same with a name before its Error/Exception and Python identifiers between the dots
_NAMED_CLASS = r"(?:[a-z_]\w*\.)*[a-z]\w*(?:error|exception)"

_ONE_CLASS_RE = re.compile(rf"^{_CLASS}:\s*")
_CLASS_CHAIN_RE = re.compile(rf"^(?:{_CLASS}\s*:\s*)+")
_NAMED_CLASS_HEAD_RE = re.compile(rf"^{_NAMED_CLASS}:\s+")


def without_class(line: str) -> str:
    """The line without the one exception class it starts with."""
    return _ONE_CLASS_RE.sub("", line, count=1)


def without_class_chain(line: str) -> str:
    """The line without every exception class it starts with (`a.Error: b.Exception : msg` -> `msg`)."""
    return _CLASS_CHAIN_RE.sub("", line, count=1)


def named_class_head(line: str) -> re.Match | None:
    """The `SomeError: ` head of the line when it names a real class and a message follows it."""
    return _NAMED_CLASS_HEAD_RE.match(line)
