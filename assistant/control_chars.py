"""Control characters and terminal escape sequences out of text before it reaches a terminal,
Slack or the web page: the one function render and every surface use (and the trace reader, for
a coloured log's lines).

A paste, a log, an issue or the model's output can carry sequences a terminal obeys: set the
window title (OSC 0/2), write the clipboard (OSC 52), hyperlinks (OSC 8), clear the screen, move
the cursor to overwrite what was printed, or switch character sets. `neutralize` removes whole
escape sequences (CSI, OSC, DCS/APC/PM/SOS strings, two-character escapes), C1 controls, the
other C0 controls (a lone BEL, backspace, carriage return that rewinds a line) and bidirectional
overrides that make text read differently from what it is. Newlines and tabs stay.
"""

from __future__ import annotations

import dataclasses
import re

_ESCAPE_SEQUENCE_RE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"                          # CSI: colours, cursor, clear screen
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)"  # OSC / DCS / SOS / PM / APC strings
    r"|\x1b[ -/]*[0-~]?",                                        # other escapes (charset, reset, ...)
    re.S)
# C0 except \t and \n, DEL, C1, and the bidi controls (U+202A-202E, U+2066-2069, U+200E/F, U+061C)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def neutralize(text: str) -> str:
    """`text` with escape sequences and control characters removed (\\r\\n becomes \\n)."""
    if not text or (text.isprintable() and "\x1b" not in text):
        return text
    text = text.replace("\r\n", "\n")
    text = _ESCAPE_SEQUENCE_RE.sub("", text)
    return _CONTROL_RE.sub("", text)


def neutralize_data(value):
    """`neutralize` applied to every string in a dataclass, list, tuple or dict (a copy)."""
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, list):
        return [neutralize_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(neutralize_data(v) for v in value)
    if isinstance(value, dict):
        return {k: neutralize_data(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: neutralize_data(getattr(value, f.name))
                   for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    return value
