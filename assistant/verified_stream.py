"""Streaming the model's answer as it is written, verified: the JSON is read token by token and
each finished piece (a diagnosis sentence, a fix step, a warning) is checked by the Verifier
before it is passed on. Raw tokens are never shown."""

from __future__ import annotations

import json
from collections.abc import Callable

from assistant.verify import Verifier, split_sentences


class VerifiedStream:
    """Reads the model's JSON as it streams and passes each finished piece, verified, to `emit`:
    diagnosis sentence by sentence, then each fix step and warning. Raw tokens are never shown."""

    def __init__(self, verifier: Verifier, emit: Callable[[str], None], chinese: bool = False):
        self.verifier = verifier
        self.emit = emit
        self.labels = (("问题：", "修复：", "注意：") if chinese
                       else ("What went wrong: ", "Fix:", "Warnings:"))
        self.stack: list[str] = []
        self.in_string = self.escape = self.is_key = False
        self.expect_key = False
        self.raw: list[str] = []
        self.key: str | None = None
        self.diagnosis_sent = 0
        self.shown = {"diagnosis": False, "fix": 0, "warnings": 0}
        self.line_start = True

    def feed(self, text: str) -> None:
        for ch in text:
            if self.in_string:
                self._string_char(ch)
            elif ch in "{[":
                self.stack.append(ch)
                self.expect_key = ch == "{"
            elif ch in "}]":
                if self.stack:
                    self.stack.pop()
            elif ch == ":":
                self.expect_key = False
            elif ch == ",":
                self.expect_key = bool(self.stack) and self.stack[-1] == "{"
            elif ch == '"' and self.stack:
                self.in_string, self.raw = True, []
                self.is_key = self.stack[-1] == "{" and self.expect_key

    def _string_char(self, ch: str) -> None:
        if self.escape:
            self.raw.append(ch)
            self.escape = False
        elif ch == "\\":
            self.raw.append(ch)
            self.escape = True
        elif ch == '"':
            self.in_string = False
            self._string_done(_decode("".join(self.raw)))
        else:
            self.raw.append(ch)
            if self._in_diagnosis() and (ch in "。！？" or (ch.isspace() and len(self.raw) > 1
                                                          and self.raw[-2] in ".!?")):
                self._diagnosis_sentences(_decode("".join(self.raw)), final=False)

    def _in_diagnosis(self) -> bool:
        return len(self.stack) == 1 and not self.is_key and self.key == "diagnosis"

    def _string_done(self, value: str) -> None:
        if self.is_key:
            if len(self.stack) == 1:
                self.key = value
            return
        if self._in_diagnosis():
            self._diagnosis_sentences(value, final=True)
        elif len(self.stack) == 2 and self.stack[-1] == "[" and self.key in ("fix", "warnings"):
            self._item(self.key, value)

    def _diagnosis_sentences(self, text: str, final: bool) -> None:
        sentences = split_sentences(text[self.diagnosis_sent:])
        if not final:
            if len(sentences) < 2:
                return
            sentences = sentences[:-1]   # the last one may still be growing
        for sentence in sentences:
            verdict = self.verifier.piece(sentence, "diagnosis sentence")
            if verdict.text:
                self._out(("" if self.shown["diagnosis"] else self.labels[0]) + verdict.text + " ")
                self.shown["diagnosis"] = True
        if final:
            self.diagnosis_sent = len(text)
        else:   # up to the end of the last sentence shown; the rest is still growing
            self.diagnosis_sent = text.find(sentences[-1], self.diagnosis_sent) + len(sentences[-1])

    def _item(self, key: str, value: str) -> None:
        where = "fix step" if key == "fix" else "warning"
        verdict = self.verifier.piece(value, where)
        if not verdict.text:
            return
        if not self.shown[key]:
            header = self.labels[1] if key == "fix" else self.labels[2]
            self._out(("\n" if self.line_start else "\n\n") + header + "\n")
        self.shown[key] += 1
        bullet = f"{self.shown[key]}." if key == "fix" else "!"
        self._out(f"  {bullet} {verdict.text}\n")

    def _out(self, text: str) -> None:
        self.emit(text)
        self.line_start = text.endswith("\n")


def _decode(raw: str) -> str:
    for cut in (raw, raw[: raw.rfind("\\")] if "\\" in raw[-6:] else raw):
        try:
            return json.loads(f'"{cut}"')
        except json.JSONDecodeError:
            continue
    return raw
