"""Where an error message comes from: the SGLang module, function and condition that emit it.

``match_origin(lines, version)`` looks the user's error lines up in the message registry
``kb/sglang_errors.jsonl.gz`` (built by ``python -m ingest.sglang_errors`` from every release
wheel): every raise / assert / error-or-warning log / failure-reporting info log / argparse
error SGLang, sglang-router and sgl-kernel can emit, as a template with placeholders for the
variable parts, with the releases that contain it. A match gives an ``Origin``: package,
module, ``Class.method``, the guarding condition with a few lines of source, the exception
class or log level, and whether the user's release has this message. When nothing matches but
the traceback frames or a library prefix (``NCCL WARN``, ``torch.OutOfMemoryError``) point to
another library, the ``Origin`` says so (``is_sglang`` False, ``package`` = that library).

What a paste shows besides the message decides between candidates: the traceback (its files
and functions pick one of several copies of a text; a traceback that runs only through another
library means that library raised it, even when SGLang has the same text; a bare
``AssertionError`` is the assert in its innermost SGLang frame), lines a message was wrapped
onto or cut at, the rest of a multi-line message, the exception class printed before it, the
component the paste names, the user's release. A line SGLang prints around another library's
error (a wrapper that quotes it, a crash log after it) does not make SGLang its origin.

Fast by construction: the registry is loaded once (lazily), each message is indexed by its
rarest literal words, and a line is compared with a message by finding its literal pieces in
order (no regex per message). Imports only the stdlib and ``packaging``.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from assistant.generic_lines import is_generic
from assistant.python_messages import python_words, within

from assistant.resources import kb_file

DEFAULT_PATH = kb_file("sglang_errors.jsonl.gz")  # the checkout's kb/, else the one installed with the package
WORD = re.compile(r"[a-z][a-z0-9_]{3,}")  # how a user's (lower-cased) line is split into words
KEY_WORD = re.compile(r"(?<![\w\x00])[a-z][a-z0-9_]{3,}(?![\w\x00])")  # whole words only
MAX_LINE = 2000
MAX_LINES = 400  # a longer paste is cut to its last lines: the error is at the end
FRAME = re.compile(r'File "([^"]+)", line \d+(?:, in ([\w.<>]+))?')
# The last package directory of a path: a source checkout is /sgl-workspace/sglang/python/sglang/srt/...
FRAME_PACKAGE_PATH = re.compile(r"(?:^|.*/)((?:sglang|sglang_router|sgl_kernel)/[\w/]+\.py)$")
SITE_PACKAGE = re.compile(r".*(?:site|dist)-packages/([A-Za-z_][\w]*)")
# Libraries recognised in a frame path outside site-packages (an editable install, an overlay).
LIBRARY_DIR = re.compile(r"/(vllm|transformers|torch|triton|flashinfer|tensorrt_llm|lmdeploy|torch_npu|torch_musa)/")
# An exception line of a traceback ("ValueError: ...", bare "AssertionError"), also inside a log prefix.
EXCEPTION_LINE = re.compile(r"(?:^|\s)((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt))(?::\s|:?\s*$)")
# How a new log record or traceback part starts: "[2025-...", "(Worker pid=1)", "E0414 03:56:41", "INFO ..."
RECORD_START = re.compile(r"^\s*(?:\[|\(|\d{4}-\d\d-\d\d|[EWIF]\d{4} |[A-Z]{4,8}\b|Traceback|\^|```)")
# a bare AssertionError with the assert's source the trace reader put after it (assistant.trace)
ASSERT_SOURCE = re.compile(r"^\s*AssertionError: assert\s+(.+?)\s*$")
MAX_WRAPPED_LINES = 2  # following lines a wrapped message may continue on
CHAINED = re.compile(r"During handling of the above exception|The above exception was the direct cause")
QUOTES_TO_SPACE = str.maketrans({quote: " " for quote in "'\"`\u2018\u2019\u201c\u201d"})
PATH_WORD_STOP = frozenset({"sglang", "srt", "init", "python"})
CONTINUATION_LINES = 8  # paste lines after a hit where the rest of a multi-line message is looked for
EXCEPTION_PREFIX = re.compile(r"^\s*((?:[A-Za-z_]\w*\.)+)([A-Z]\w*(?:Error|Exception|Warning))\b")
# the HTTP server's layers that carry every request's exception up from the application (a
# traceback cut under them has not reached the frame that failed), and Xinference's actor RPC,
# whose frames re-raise the worker process's exception (`raise message.as_instanceof_cause()`)
SERVER_PLUMBING = frozenset({"uvicorn", "starlette", "fastapi", "xoscar"})
SGLANG_PACKAGES = {"sglang": "sglang", "sglang_router": "sglang-router", "sgl_kernel": "sgl-kernel"}
# Library prefixes that name the emitter without any frame (checked on the error lines).
LIBRARY_MARKERS = [
    (re.compile(r"\bNCCL (?:WARN|INFO|ERROR)\b|\bnccl\w*Error\b|NCCL error|ncclUnhandledCudaError", re.I), "nccl"),
    (re.compile(r"torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory", re.I), "torch"),
    (re.compile(r"CUDA error:|CUBLAS_STATUS|cudaError\w*|CUDA driver", re.I), "cuda"),
    (re.compile(r"HIP error|hipError\w*|ROCm", re.I), "rocm"),
    (re.compile(r"\bMUSA error|musaError\w*", re.I), "musa"),
    (re.compile(r"triton\.compiler|triton\.runtime|OutOfResources: out of resource", re.I), "triton"),
    (re.compile(r"\bflashinfer[./]", re.I), "flashinfer"),  # a module or path, not "--disable-flashinfer"
    (re.compile(r"\btransformers\.", re.I), "transformers"),
    (re.compile(r"\bvllm[./]", re.I), "vllm"),
    (re.compile(r"\bhuggingface_hub\.", re.I), "huggingface_hub"),
    (re.compile(r"\btorch\.distributed\.|ProcessGroupNCCL|c10::|c10d", re.I), "torch"),
]  # fmt: skip
SPECIFIC_LITERAL = 20  # literal characters that make a match specific on their own
COVERAGE = 0.5  # ...or the share of the user's message a shorter match must cover
MESSAGE_PREFIX = re.compile(r"^\s*(?:\[[^\]]{0,80}\]\s*)*(?:[\w.]*(?:Error|Exception|Warning)\w*:\s*)?")
# Messages also found in these trees are shown only when the server's code has no match.
SECONDARY_PATHS = ("sglang/multimodal_gen/",)
SPECULATIVE_PATH = "sglang/srt/speculative/"
# how a paste says speculative decoding is on: its flags, algorithms, draft model, its log words
# (a server-args dump prints `speculative_algorithm=None` on every run: that names nothing)
SPECULATIVE_WORDS = re.compile(r"--speculative-|speculative_algorithm='?(?!None)\w|speculative decoding|\beagle|\bmtp\b|"
                               r"nextn|\bdraft|\bspec[_-]?v2\b|medusa|投机", re.I)
PARTIAL_LITERAL = 25  # characters a cut-short line must share with the start of a message
MAX_PARTIAL_TRIES = 100  # candidates tried for cut-short lines: bounds a query's cost
MAX_PARTIAL_LINES = 12  # last error lines a cut-short message is looked for on: bounds it too
EMPTY: frozenset = frozenset()
MIN_CONTINUATION = 8  # literal characters a message's other line needs to be looked for
MIN_WRAPPED = 15  # characters of another error line a wrapper line must quote to count as wrapping it
SEVERITY = {"raise": 3, "assert": 3, "argparse": 3, "critical": 2, "error": 2, "warning": 1, "info": 0}
ERROR_WORDS = re.compile(r"error|exception|warn|fail|fatal|fault|abort|out of memory", re.I)
# Import names whose distribution is named differently.
# Python's import failures name the module they could not import from or find
IMPORT_FAILED_RE = re.compile(r"\b(?:ImportError|ModuleNotFoundError)\b.*?(?:cannot import name '[\w.]+' from '([\w.]+)'|"
                              r"No module named '([\w.]+)')")
IMPORT_TO_PACKAGE = {"flashinfer": "flashinfer-python", "huggingface_hub": "huggingface-hub"}


@dataclass(frozen=True)
class Origin:
    """Where a user's error line comes from, or which non-SGLang library it points to."""

    is_sglang: bool
    package: str  # sglang | sglang-router | sgl-kernel, or the foreign library (torch, nccl, ...)
    matched_line: str = ""  # the user's line this is about
    module: str = ""  # sglang.srt.server_args
    path: str = ""  # sglang/srt/server_args.py
    function: str = ""  # ServerArgs.check_server_args, or <module>
    kind: str = ""  # raise | assert | log | argparse
    exception: str = ""  # ValueError, AssertionError, or the log level (error, warning, ...)
    template: str = ""  # the message with {placeholders}
    condition: str = ""  # source of the test that leads to the message
    context: str = ""  # a few source lines around it (from the newest release that has it)
    line: int = 0  # its line number in the newest release that has it
    releases: tuple[str, ...] = ()  # every registry release of `package` with this exact message
    user_version: str | None = None
    in_user_version: bool | None = None  # None: no version given, or outside the registry's range
    alternatives: int = 0  # other sites with an equally good match (same text elsewhere)
    # a bare AssertionError whose failing assert the paste does not show: how many asserts the
    # function has (then `condition` is empty: naming one of them would be a guess)
    asserts: int = 0
    # the releases of every site the text may come from (this one and its `alternatives`): what
    # dates a paste when nothing tells the sites apart
    text_releases: tuple[str, ...] = ()

    @property
    def first_release(self) -> str | None:
        return self.releases[0] if self.releases else None

    @property
    def last_release(self) -> str | None:
        return self.releases[-1] if self.releases else None

    @property
    def summary(self) -> str:
        if not self.is_sglang:
            return f"not an SGLang message: it comes from {self.package}"
        span = f"{self.first_release}..{self.last_release}" if self.releases else "?"
        where = f"{self.module}.{self.function}" if self.function != "<module>" else self.module
        return f"{self.exception} from {where} (sglang releases {span})"


class ErrorRegistry:
    """The message registry: rows indexed by their rarest literal word; details read on demand."""

    def __init__(self, header: dict, message_lines: list[bytes], details_path: Path | None = None):
        self.packages: list[str] = header["packages"]
        self.releases: dict[str, list[str]] = header["releases"]
        self.paths: list[str] = header["paths"]
        self.functions: list[str] = header["functions"]
        self.kinds: list[str] = header["kinds"]
        self.col = {name: header["fields"].index(name) for name in header["fields"]}
        self.index: dict[str, list[int]] = header["index"]  # rarest key word -> message numbers
        self.index_more: dict[str, list[int]] = header.get("index_more", {})  # its other key words
        self._lines = message_lines  # one JSON row per message, parsed on first use
        self._rows: dict[int, list] = {}
        self.details_path = details_path
        self._detail_block: int = header.get("detail_block", 1)
        self._detail_offsets: list[int] = header.get("detail_offsets", [])
        self._detail_blocks: dict[int, list[bytes]] = {}
        self._patterns: dict[int, tuple[list[str], int]] = {}
        self._prefix_tokens: dict[int, list] = {}
        self._anchors: dict[int, str] = {}
        self._continuations: dict[int, list[list[str]]] = {}
        self._path_words: dict[int, frozenset] = {}
        self._release_versions = {
            package: [Version(v) for v in names] for package, names in self.releases.items()
        }

    def __len__(self) -> int:
        return len(self._lines)

    def row(self, number: int) -> list:
        row = self._rows.get(number)
        if row is None:
            row = self._rows[number] = json.loads(self._lines[number])
        return row

    @classmethod
    def load(cls, path: str | Path | None = None) -> ErrorRegistry:
        return _load_cached(str(Path(path).resolve()) if path else str(DEFAULT_PATH))

    def pattern(self, number: int) -> tuple[list[str], int]:
        """(literal pieces, literal length) of one message's matching line, made on first use."""
        cached = self._patterns.get(number)
        if cached is None:
            parts = template_parts(self.row(number)[self.col["template"]])
            # quotes are not compared, so they do not count as shared text either
            literal = sum(len(p.translate(DROP_QUOTES).strip()) for p in matching_line(parts) if type(p) is str)
            cached = self._patterns[number] = (pieces_for(matching_line(parts)), literal)
        return cached

    def continuation_patterns(self, number: int) -> list[list[str]]:
        """Literal pieces of a multi-line message's other lines (the ones with enough literal text)."""
        cached = self._continuations.get(number)
        if cached is None:
            parts = template_parts(self.row(number)[self.col["template"]])
            best = matching_line(parts)
            cached = [pieces_for(line) for line in template_lines(parts) if line is not best
                      and sum(len(p.strip()) for p in line if type(p) is str) >= MIN_CONTINUATION]
            self._continuations[number] = [pieces for pieces in cached if pieces]
        return self._continuations[number]

    def path_words(self, number: int) -> frozenset:
        """Words of a message's file path (sglang/srt/constrained/xgrammar_backend.py: constrained,
        xgrammar, backend): a paste that names the component points to its copy of a text."""
        cached = self._path_words.get(number)
        if cached is None:
            path = self.paths[self.row(number)[self.col["path"]]].removesuffix(".py")
            words = {w for part in path.split("/") for w in part.split("_") if len(w) > 3}
            cached = self._path_words[number] = frozenset(words - PATH_WORD_STOP)
        return cached

    def site_in(self, path: str, function: str) -> int | None:
        """The message number of a bare assert (empty text) in `function` of `path`, if any.

        Rows are stored sorted by package, path and line, so a path's rows are found by
        bisection without parsing the others.
        """
        try:
            path_index = self.paths.index(path)
            package_index = self.packages.index(SGLANG_PACKAGES[path.split("/")[0]])
        except (ValueError, KeyError):
            return None
        col = self.col
        low, high = 0, len(self)
        while low < high:
            middle = (low + high) // 2
            row = self.row(middle)
            if (row[col["package"]], row[col["path"]]) < (package_index, path_index):
                low = middle + 1
            else:
                high = middle
        found = None
        for number in range(low, len(self)):
            row = self.row(number)
            if (row[col["package"]], row[col["path"]]) != (package_index, path_index):
                break
            name = self.functions[row[col["function"]]]
            if (name == function or name.endswith("." + function)) and not row[col["template"]]:
                found = number  # one row per function: bare asserts share an empty text
        return found

    def asserts_in(self, path: str, function: str) -> int:
        """How many asserts the registry records in `function` of `path` (its bare asserts count
        as one: they share one row)."""
        number = self.site_in(path, function)
        if number is None:
            return 0
        col, path_index, count = self.col, self.row(number)[self.col["path"]], 0
        for step in (-1, 1):   # the path's rows are contiguous around its bare-assert row
            other = number + (step if step == 1 else 0)
            while 0 <= other < len(self) and self.row(other)[col["path"]] == path_index:
                row = self.row(other)
                name = self.functions[row[col["function"]]]
                if (name == function or name.endswith("." + function)) and self.kinds[row[col["kind"]]].startswith("assert"):
                    count += 1
                other += step
        return count

    def qualified_function(self, function: str) -> str:
        """`Class.method` for a traceback frame's bare `method`, when the registry knows one."""
        names = [name for name in self.functions if name == function or name.endswith("." + function)]
        return names[0] if len(names) == 1 else function

    def release_names(self, number: int) -> tuple[str, ...]:
        row = self.row(number)
        names = self.releases[self.packages[row[self.col["package"]]]]
        return tuple(names[i] for start, end in row[self.col["releases"]] for i in range(start, end + 1))

    def details(self, number: int) -> list:
        """[condition, context, line] of one message: only its gzip member of the file is read."""
        block, position = divmod(number, self._detail_block)
        lines = self._detail_blocks.get(block)
        if lines is None:
            lines = []
            if self.details_path is not None and block + 1 < len(self._detail_offsets):
                start, end = self._detail_offsets[block], self._detail_offsets[block + 1]
                try:
                    with open(self.details_path, "rb") as handle:
                        handle.seek(start)
                        lines = gzip.decompress(handle.read(end - start)).split(b"\n")
                except OSError:
                    lines = []  # details are a nicety: the match itself stands without them
            self._detail_blocks[block] = lines
        if position >= len(lines) or not lines[position]:
            return ["", "", 0]
        return json.loads(lines[position])

    def find(self, lines: list[str]) -> list[tuple[int, int, int]]:
        """(message number, line number, literal length) of every message found on every line.

        A message is tried on a line only if all its key words are there; an error line that no
        whole message matches may be cut short (a terminal or a copy that lost its end): it may
        still match the beginning of a message with two of its key words.
        """
        unquoted = _unquoted(lines)
        # A log repeats its lines: each distinct line is looked at once (its last copy).
        last_copy = {line: number for number, line in enumerate(unquoted)}
        # A long message wrapped onto the next lines (a terminal, an issue's text) is also read
        # joined; a hit on the joined text is a hit on its first line.
        texts = list(unquoted)
        line_of_text = list(range(len(unquoted)))
        for number in last_copy.values():
            if not _may_wrap(lines, number):
                continue
            joined = unquoted[number]
            for following in range(number + 1, min(number + 1 + MAX_WRAPPED_LINES, len(lines))):
                if not _continues(lines[following]):
                    break
                joined = f"{joined} {unquoted[following]}"
                texts.append(joined)
                line_of_text.append(number)
        text_numbers = list(last_copy.values()) + list(range(len(unquoted), len(texts)))
        lines_of_word: dict[str, set[int]] = {}
        words_of_line: dict[int, set[str]] = {}
        for text_number in text_numbers:
            # quotes split words ("didn't" holds the key word "didn"), they are not dropped
            source = lines[text_number] if text_number < len(lines) else texts[text_number]
            words = set(WORD.findall(source.lower().translate(QUOTES_TO_SPACE)))
            if text_number < len(lines):
                words_of_line[text_number] = words
            for word in words:
                lines_of_word.setdefault(word, set()).add(text_number)
        keys_col = self.col["keys"]
        found: list[tuple[int, int, int]] = []
        squeezed: dict[int, str] = {}
        for number in {number for word in lines_of_word for number in self.index.get(word, ())}:
            key_lines = [lines_of_word.get(key, EMPTY) for key in self.row(number)[keys_col]]
            candidates = key_lines[0].intersection(*key_lines[1:])
            if not candidates:
                continue
            pieces, literal = self.pattern(number)
            anchor = self.anchor(number)
            for text_number in sorted(candidates):
                if text_number not in squeezed:
                    squeezed[text_number] = _squeezed(texts[text_number])
                text = squeezed[text_number]
                start = locate(pieces, text) if pieces and anchor in text else None
                if start is None:
                    continue
                first = line_of_text[text_number]
                # a joined text counts only for a message that starts on its first line
                if text_number < len(lines) or start < len(_squeezed(unquoted[first])):
                    found.append((number, first, literal))
        covered = {hit[1] for hit in found}
        # Two of the key words on an error line no whole message matched: maybe it lost the rest.
        # (A message's key words are distinct, so counting postings per line counts its words.)
        shared: dict[tuple[int, int], int] = {}
        uncovered = [n for n in sorted(last_copy.values()) if n not in covered and ERROR_WORDS.search(unquoted[n])]
        for number in uncovered[-MAX_PARTIAL_LINES:]:  # the error is at the end of a paste
            for word in words_of_line[number]:
                for message in (*self.index.get(word, ()), *self.index_more.get(word, ())):
                    shared[message, number] = shared.get((message, number), 0) + 1
        near: dict[int, list[int]] = {}
        for (message, number), count in shared.items():
            if count >= 2:
                near.setdefault(message, []).append(number)
        for message in sorted(near)[:MAX_PARTIAL_TRIES]:
            found.extend(self._cut_short_hits(message, unquoted, sorted(near[message])))
        return found

    def _cut_short_hits(self, number: int, lines: list[str], line_numbers: list[int]) -> list[tuple[int, int, int]]:
        """(number, line number, shared literal length) for each line that ends inside the message."""
        tokens = self.prefix_tokens(number)
        shared = [(line_number, prefix_literal(tokens, lines[line_number].lower())) for line_number in line_numbers]
        return [(number, line_number, literal) for line_number, literal in shared if literal >= PARTIAL_LITERAL]

    def prefix_tokens(self, number: int) -> list:
        """The message's matching line as prefix tokens (see `prefix_tokens_for`), made on first use."""
        cached = self._prefix_tokens.get(number)
        if cached is None:
            cached = self._prefix_tokens[number] = prefix_tokens_for(template_parts(self.row(number)[self.col["template"]]))
        return cached

    def anchor(self, number: int) -> str:
        """The message's longest literal piece: a line without it cannot hold the message, which is
        checked before the pieces are located one by one."""
        cached = self._anchors.get(number)
        if cached is None:
            pieces, _ = self.pattern(number)
            cached = self._anchors[number] = max(pieces, key=len, default="")
        return cached

    def origin(self, number: int, matched_line: str, version: str | None, alternatives: int) -> Origin:
        row = self.row(number)
        col = self.col
        package = self.packages[row[col["package"]]]
        path = self.paths[row[col["path"]]]
        kind, _, exception = self.kinds[row[col["kind"]]].partition(" ")
        releases = self.release_names(number)
        condition, context, line = (self.details(number) + ["", "", 0])[:3]
        return Origin(
            is_sglang=True,
            package=package,
            matched_line=matched_line,
            module=path[:-3].replace("/", ".").removesuffix(".__init__"),
            path=path,
            function=self.functions[row[col["function"]]],
            kind=kind,
            exception=exception,
            template=display_template(row[col["template"]]),
            condition=condition,
            context=context,
            line=line,
            releases=releases,
            user_version=version,
            in_user_version=self.has_release(package, releases, version),
            alternatives=alternatives,
        )

    def has_release(self, package: str, releases: tuple[str, ...], version: str | None) -> bool | None:
        """Whether `version` (0.5.6.post2 counts as 0.5.6) has the message; None if unknowable."""
        if not version or package != "sglang":
            return None
        try:
            wanted = Version(Version(version).base_version)
        except InvalidVersion:
            return None
        known = self._release_versions[package]
        if wanted < known[0] or wanted > known[-1]:
            return None
        # A release between two registry releases is judged by the nearest older one.
        nearest = max(v for v in known if v <= wanted)
        return str(nearest) in releases


# --------------------------------------------------------------------------- templates -> regex
# Templates are format-string style: {expr} is a placeholder, {{ and }} are literal braces.

TEMPLATE_TOKEN = re.compile(r"\{\{|\}\}|\{[^{}]*\}|[^{}]+|[{}]")
QUOTES = "'\"`\u2018\u2019\u201c\u201d"
DROP_QUOTES = str.maketrans("", "", QUOTES)
WHITESPACE = re.compile(r"\s+")


class Field(str):
    """A placeholder in template parts (a str subclass only to carry its source text)."""


def template_parts(template: str) -> list:
    parts: list = []
    for token in TEMPLATE_TOKEN.findall(template):
        if token in ("{{", "}}"):
            token = token[0]
        elif token.startswith("{") and token.endswith("}") and len(token) > 1:
            parts.append(Field(token[1:-1]))
            continue
        if parts and type(parts[-1]) is str:
            parts[-1] += token
        else:
            parts.append(token)
    return parts


def message_shape(template: str) -> str:
    """The template as a user sees it: placeholders all alike, so renaming a variable in the
    code does not make a new message."""
    return "".join(p if type(p) is str else "{}" for p in template_parts(template))


def display_template(template: str) -> str:
    return "".join(p if type(p) is str else "{" + p + "}" for p in template_parts(template))


def _squeezed(text: str) -> str:
    """Lower-cased, without quotes, each whitespace run as one space: how a message's literal
    pieces and a user's line are compared (quoting, case and spacing differ between copies)."""
    return WHITESPACE.sub(" ", text.translate(DROP_QUOTES).lower())


def pieces_for(line_parts: list) -> list[str]:
    """The literal pieces of one template line, in order, as `_squeezed` text; placeholders
    (which match anything) at the ends are dropped, those between pieces separate them."""
    parts = list(line_parts)
    while parts and type(parts[0]) is Field:
        parts = parts[1:]
    while parts and type(parts[-1]) is Field:
        parts = parts[:-1]
    return [piece for piece in (_squeezed(p) for p in parts if type(p) is str) if piece]


def locate(pieces: list[str], text: str, start: int = 0) -> int | None:
    """Where the message starts in `text` (`_squeezed`), or None: its pieces in order, anything
    between them. The earliest first piece is the only one to try: a later start leaves less room."""
    first = text.find(pieces[0], start)
    if first == -1:
        return None
    position = first + len(pieces[0])
    for piece in pieces[1:]:
        found = text.find(piece, position)
        if found == -1:
            return None
        position = found + len(piece)
    return first


def template_lines(parts: list) -> list[list]:
    """The template's parts split at its line breaks."""
    lines: list[list] = [[]]
    for part in parts:
        if type(part) is str and "\n" in part:
            pieces = part.split("\n")
            for number, piece in enumerate(pieces):
                if number:
                    lines.append([])
                if piece:
                    lines[-1].append(piece)
        else:
            lines[-1].append(part)
    return lines


def matching_line(parts: list) -> list:
    """The parts of the template line with the most literal text.

    A multi-line message is printed over several lines of the paste; it is looked for by
    its most specific line. The registry's key words come from this line too.
    """
    return max(template_lines(parts), key=lambda line: sum(len(p.strip()) for p in line if type(p) is str))


def key_words(template: str) -> set[str]:
    """Words of the matching line that any rendering of the message contains whole.

    A word glued to a placeholder ("{prefix}_weight" prints as "model_weight") is not one.
    """
    text = "".join(p if type(p) is str else "\x00" for p in matching_line(template_parts(template)))
    return set(KEY_WORD.findall(text.lower()))


def prefix_tokens_for(parts: list) -> list:
    """The matching line as tokens for `prefix_literal`: lower-cased words without quotes, " " for
    a whitespace run, None for a placeholder."""
    parts = matching_line(parts)
    while parts and type(parts[0]) is Field:
        parts = parts[1:]
    tokens: list = []
    for part in parts:
        if type(part) is Field:
            tokens.append(None)
            continue
        for word in re.findall(r"\s+|[^\s]+", part.translate(DROP_QUOTES).lower()):
            tokens.append(" " if word.isspace() else word)
    while tokens and tokens[0] == " ":
        tokens = tokens[1:]
    return tokens


def _ends(line: str, position: int) -> bool:
    return line[position:].strip() in ("", "...", "\u2026")


def prefix_literal(tokens: list, line: str) -> int:
    """Characters of the message a (lower-cased, quote-free) line shares when it ends somewhere
    inside it ("... is not a built-in template" for "... template name or a path."), 0 if none.

    From an occurrence of the first word, the line must follow the message word by word up to
    its end; a placeholder takes the text up to the message's next word (or the rest of the line);
    the placeholder's text is not counted as shared.
    """
    if not tokens or tokens[0] is None:
        return 0
    head = tokens[0]
    start = line.find(head)
    while start != -1:
        position, shared, index = start + len(head), len(head), 1
        while index < len(tokens):
            token = tokens[index]
            if token is None:  # a placeholder: up to the next word, else the rest of the line
                following = next((t for t in tokens[index + 1 :] if t not in (None, " ")), None)
                found = line.find(following, position) if following else -1
                if found == -1:
                    position = len(line)
                    break
                gap = tokens[index + 1] == " "
                position, index = (found, index + 2) if gap and line[found - 1 : found].isspace() else (found, index + 1)
                continue
            if token == " ":
                end = position
                while end < len(line) and line[end].isspace():
                    end += 1
                if end == position:
                    break
                shared, position = shared + 1, end
            elif line.startswith(token, position):
                shared, position = shared + len(token), position + len(token)
            else:
                break
            index += 1
        if _ends(line, position):
            return shared
        start = line.find(head, start + 1)
    return 0


@lru_cache(maxsize=4)
def _load_cached(path: str) -> ErrorRegistry:
    with open(path, "rb") as handle:
        lines = gzip.decompress(handle.read()).rstrip(b"\n").split(b"\n")
    details = Path(path.removesuffix(".gz") + ".details.gz")
    return ErrorRegistry(json.loads(lines[0]), lines[1:], details_path=details)


def _as_lines(lines: str | Iterable[str]) -> list[str]:
    if isinstance(lines, str):
        lines = lines.splitlines()
    out = [line[:MAX_LINE] for line in lines if line.strip()]
    return out[-MAX_LINES:]


def _unquoted(lines: list[str]) -> list[str]:
    """The lines as patterns see them: 'x', "x", `x` and x all read the same."""
    return [line.translate(DROP_QUOTES) for line in lines]


def _may_wrap(lines: list[str], number: int) -> bool:
    """An error message line that may go on over the next lines: not a traceback's code line, not
    a bare exception class."""
    line = lines[number]
    if not ERROR_WORDS.search(line) or FRAME.search(line) or (number and FRAME.search(lines[number - 1])):
        return False
    exception = EXCEPTION_LINE.search(line)
    return not exception or bool(line[exception.end():].strip())


def _continues(line: str) -> bool:
    """A line that may be the rest of the previous one: plain text, not a new log record, frame
    or exception."""
    return bool(line.strip()) and not (FRAME.search(line) or EXCEPTION_LINE.search(line) or RECORD_START.match(line))


def _message_length(line: str) -> int:
    """Length of the message on a log line, without its log prefix and exception class."""
    return len(MESSAGE_PREFIX.sub("", line).strip())


def _is_specific(literal: int, line: str) -> bool:
    """A match must be long, or cover most of the line: "Exception: {e}" explains nothing."""
    return literal >= SPECIFIC_LITERAL or literal >= COVERAGE * _message_length(line)


def _raised_in_innermost_frame(registry: ErrorRegistry, hit: tuple[int, int, int], paste: _Paste) -> bool:
    """The user's traceback ends in the SGLang file that emits this text: then even a short
    template ("NCCL error: {error_str}" in SGLang's NCCL wrapper) is SGLang's message, not the
    library's it quotes."""
    frames = paste.traceback_of(hit[1])
    return bool(frames) and bool(frames[-1].path) and \
        registry.paths[registry.row(hit[0])[registry.col["path"]]] == frames[-1].path


def _python_words_only(registry: ErrorRegistry, hit: tuple[int, int, int], line: str) -> bool:
    """The user's line quotes one of the interpreter's own messages and the SGLang template has no
    literal words beyond it (a `__getattr__` raising `'{cls}' object has no attribute '{name}'`):
    Python prints the same words for every such error, so they name no site."""
    quoted = python_words(line)
    if quoted is None:
        return False
    pieces, _ = registry.pattern(hit[0])
    return within(re.findall(r"[a-z]+", " ".join(pieces).lower()), quoted)


def _raised_elsewhere(registry: ErrorRegistry, hit: tuple[int, int, int], line: str) -> bool:
    """The line names another library's exception class ("torch.distributed.DistStoreError:
    Timed out after ...") that is not the class this SGLang site raises."""
    prefix = EXCEPTION_PREFIX.match(line)
    if not prefix or prefix.group(1).split(".")[0] in SGLANG_PACKAGES or relayed(line):
        return False
    kind, _, exception = registry.kinds[registry.row(hit[0])[registry.col["kind"]]].partition(" ")
    return kind in ("raise", "assert") and exception != prefix.group(2)


class _Frame(NamedTuple):
    """One `File "...", line N, in f` line of a pasted traceback."""

    line: int  # its line number in the paste
    path: str  # package-relative path of an SGLang frame (sglang/srt/models/qwen2.py), else ""
    package: str  # import root of a library frame (torch, vllm), "" when unknown
    function: str
    source: str = ""  # the source line Python printed under it (`self.page_size == 1`), if any


class _Paste:
    """What a paste shows besides its message lines: traceback frames, where each traceback
    starts, its words. Computed once per query."""

    def __init__(self, lines: list[str], context: str = ""):
        self.lines = lines
        self.context = context   # the rest of the paste (the user's words, the command): names only
        self.frames: list[_Frame] = []
        self.boundaries: list[int] = []  # exception lines and "During handling..." lines
        for number, line in enumerate(lines):
            frame = FRAME.search(line)
            if frame:
                path, function = frame.group(1), frame.group(2) or ""
                inside = FRAME_PACKAGE_PATH.match(path)
                site = SITE_PACKAGE.match(path) or LIBRARY_DIR.search(path)
                self.frames.append(_Frame(number, inside.group(1) if inside else "",
                                          site.group(1) if site else "", function, _source_under(lines, number)))
            elif EXCEPTION_LINE.search(line) or CHAINED.search(line):
                self.boundaries.append(number)
        self.frame_lines = {frame.line for frame in self.frames}
        self.frame_paths = {frame.path for frame in self.frames if frame.path}
        self.frame_functions = {(frame.path, frame.function) for frame in self.frames if frame.path}
        self._words: set[str] | None = None

    @cached_property
    def names_speculative(self) -> bool:
        return any(SPECULATIVE_WORDS.search(line) for line in self.lines) or bool(SPECULATIVE_WORDS.search(self.context))

    @property
    def words(self) -> set[str]:
        if self._words is None:
            text = "\n".join((*self.lines, self.context)).lower().translate(QUOTES_TO_SPACE)
            self._words = {w for word in WORD.findall(text) for w in (word, *word.split("_")) if len(w) > 3}
        return self._words

    def traceback_of(self, line: int) -> list[_Frame]:
        """The frames of the traceback that ends at `line` (after the previous exception line)."""
        start = max((b for b in self.boundaries if b < line), default=-1)
        return [frame for frame in self.frames if start < frame.line < line]


# the markers Python 3.11+ prints under a frame's source line (`~~~~^^^^`)
POSITION_MARKER = re.compile(r"^\s*[~^][~^ ]*$")
# what is left of an assert's source line once its keyword, brackets and commas are dropped:
# `assert (` alone (the first line of a multi-line assert) says nothing of its test
ASSERT_WRAPPING = re.compile(r"^\s*(?:assert\b)?[\s(]*|[\s,(]*$")


def _source_under(lines: list[str], number: int) -> str:
    """The source line Python printed under the frame at `number`: the next line, when it is
    not another frame, an exception line or a log record."""
    following = lines[number + 1] if number + 1 < len(lines) else ""
    if (not following.strip() or FRAME.search(following) or EXCEPTION_LINE.search(following)
            or POSITION_MARKER.match(following) or CHAINED.search(following) or not following[:1].isspace()):
        return ""
    return following.strip()


def _assert_test(source: str) -> str:
    """The test an assert's printed source line shows (`assert x == 1` or a multi-line assert's
    `self.page_size == 1`), "" when the line shows none of it."""
    test = ASSERT_WRAPPING.sub("", source)
    return test if any(c.isalnum() for c in test) else ""


def _library(frame: _Frame) -> bool:
    return bool(frame.package) and frame.package not in SGLANG_PACKAGES


def _misplaced_exception_text(registry: ErrorRegistry, hit: tuple[int, int, int], line: str) -> bool:
    """A raised message prints right after its class ("ValueError: <message>"): other words in
    between ("ValueError: Warning: <message>") mean another text that contains this one."""
    row = registry.row(hit[0])
    kind, _, exception = registry.kinds[row[registry.col["kind"]]].partition(" ")
    parts = template_parts(row[registry.col["template"]])
    if kind not in ("raise", "assert") or not parts or type(parts[0]) is Field:
        return False  # a message that starts with a placeholder may start with anything
    text = _squeezed(line)
    named = text.find(exception.lower() + ":")
    if named == -1 or (named and (text[named - 1].isalnum() or text[named - 1] == "_")):
        return False
    after = named + len(exception) + 1 + (text[named + len(exception) + 1 : named + len(exception) + 2] == " ")
    pieces, _ = registry.pattern(hit[0])
    start = locate(pieces, text, after) if pieces else None
    # punctuation may stand between: several arguments print as a tuple, "('...', '...')"
    return start is not None and any(c.isalnum() for c in text[after:start])


def _raised_by_library(registry: ErrorRegistry, hit: tuple[int, int, int], paste: _Paste) -> bool:
    """The traceback that ends at the line runs through another library and never through
    SGLang: vLLM's copy of a text SGLang also has raised it, not SGLang. A client or Ray that
    relays the server's error (`openai.BadRequestError: Error code: 400 - {... 'Requested token
    count exceeds ...'}`, a `RayTaskError`) raised nothing of its own: the message is SGLang's."""
    kind = registry.kinds[registry.row(hit[0])[registry.col["kind"]]].split(" ")[0]
    if kind not in ("raise", "assert") or relayed(paste.lines[hit[1]]):
        return False
    frames = paste.traceback_of(hit[1])
    return bool(frames) and not any(f.path for f in frames) and any(_library(f) for f in frames)


# argparse's own exit line: `<prog>: error: <message>` (`launch_server.py: error: unrecognized
# arguments: --x`) comes from the parser, not from a raise or log that happens to word it alike
PARSER_EXIT_RE = re.compile(r"^\s*[\w./-]+: error: ")


def _parser_exit_line(registry: ErrorRegistry, hit: tuple[int, int, int], line: str) -> bool:
    kind = registry.kinds[registry.row(hit[0])[registry.col["kind"]]].split(" ")[0]
    return kind != "argparse" and bool(PARSER_EXIT_RE.match(line))


# exceptions that carry a server's or a remote worker's error to the caller: their message is the
# other side's text (Ray's own failures, `RaySystemError`, and a client's connection errors are not)
RELAY_RE = re.compile(r"^\s*(?:ray\.exceptions\.RayTaskError\b|openai\.\w+Error: Error code: \d{3}\b|"
                      r"httpx\.HTTPStatusError\b|requests\.exceptions\.HTTPError\b|litellm\.\w+Error\b)")


def relayed(line: str) -> bool:
    """The line is an exception that only carries another side's error (a client's HTTP error, Ray's task error)."""
    return bool(RELAY_RE.match(line))


def _message(line: str) -> str:
    return MESSAGE_PREFIX.sub("", line).strip()


def _foreign_errors(paste: _Paste, uncovered: list[int]) -> list[int]:
    """Lines among `uncovered` that report another library's error: a library-named exception
    (triton.runtime.errors.OutOfResources: ...), an exception raised in a library's frames, an
    error line with a library marker (NCCL WARN, CUDA error:)."""
    foreign = []
    for number in uncovered:
        line = paste.lines[number]
        prefix = EXCEPTION_PREFIX.match(line)
        if prefix and prefix.group(1).split(".")[0] not in SGLANG_PACKAGES:
            foreign.append(number)
        elif EXCEPTION_LINE.search(line) and (frames := paste.traceback_of(number)) and _library(frames[-1]):
            foreign.append(number)
        elif any(marker.search(line) for marker, _ in LIBRARY_MARKERS):
            foreign.append(number)
    return foreign


def _score(registry: ErrorRegistry, hit: tuple[int, int, int], paste: _Paste, version: str | None):
    number, line_number, literal = hit
    row = registry.row(number)
    kind, _, exception = registry.kinds[row[registry.col["kind"]]].partition(" ")
    path = registry.paths[row[registry.col["path"]]]
    function = registry.functions[row[registry.col["function"]]].rsplit(".", 1)[-1]
    names_exception = exception in paste.lines[line_number]
    in_version = bool(version) and bool(registry.has_release(
        registry.packages[row[registry.col["package"]]], registry.release_names(number), version
    ))  # None (release unknown to the registry) sorts as False
    following = paste.lines[line_number + 1 : line_number + 1 + CONTINUATION_LINES]
    following = [_squeezed(line) for line in following]
    continued = sum(1 for pieces in registry.continuation_patterns(number)
                    if any(locate(pieces, line) is not None for line in following))
    newest_release = row[registry.col["releases"]][-1][1]  # still in recent releases: likelier
    # The user's own traceback naming the file (and the function) settles which of several
    # copies of a text it is; then the LLM server's code over the diffusion runtime's copy.
    # What stops the server (a raise) is what the user asks about, not a warning logged on the
    # way; among equals, longer literal text is the stronger evidence, then the rest of a
    # multi-line message on the next lines, the exception named on the line, the user's
    # release, a component the paste names, a message recent releases still have, and the
    # later line (the final error of a traceback).
    # The speculative-decoding runners run only with speculative decoding on: when the paste never
    # names it, their copy of a text (`Capture cuda graph failed`) is less likely than the main runner's.
    unnamed_feature = path.startswith(SPECULATIVE_PATH) and not paste.names_speculative
    return (path in paste.frame_paths, (path, function) in paste.frame_functions,
            not path.startswith(SECONDARY_PATHS), SEVERITY.get(exception, SEVERITY.get(kind, 0)), literal,
            continued, names_exception, in_version, len(registry.path_words(number) & paste.words),
            not unnamed_feature, newest_release, line_number, -number)  # fmt: skip


def _bare_assert_origin(registry: ErrorRegistry, paste: _Paste, version: str | None) -> Origin | None:
    """A bare `AssertionError` (an assert without a message) raised in SGLang's own frame: the
    origin is that assert, which the traceback's innermost frame names."""
    for number in range(len(paste.lines) - 1, -1, -1):
        line = paste.lines[number]
        exception = EXCEPTION_LINE.search(line)
        stated = ASSERT_SOURCE.match(line)   # the trace reader names the assert from its source line
        if not exception or (line[exception.end():].strip() and not stated):
            continue
        frames = paste.traceback_of(number)
        if frames and frames[-1].path:
            path, function = frames[-1].path, frames[-1].function
            site = registry.site_in(path, function) if "Assert" in line else None
            # the source line Python printed under the innermost frame is the assert that failed
            # (a multi-line assert shows only the line it stopped on: `self.page_size == 1`)
            printed = stated.group(1) if stated else _assert_test(frames[-1].source) if "Assert" in line else ""
            if site is not None:
                found = registry.origin(site, line.strip(), version, 0)
                # the registry keeps one bare assert per function: its condition may be another
                # assert's, while the user's traceback shows which one failed
                if printed:
                    return replace(found, condition=printed, context=frames[-1].source or stated.group(0).strip(), line=0)
                asserts = registry.asserts_in(path, function)
                # several asserts and nothing says which: name the function, not one of them
                return replace(found, condition="", context="", line=0, asserts=asserts) if asserts > 1 else found
            root = path.split("/")[0]
            return Origin(is_sglang=True, package=SGLANG_PACKAGES[root], matched_line=line.strip(),
                          module=path[:-3].replace("/", ".").removesuffix(".__init__"), path=path,
                          function=registry.qualified_function(function), kind="assert" if "Assert" in line else "raise",
                          exception=exception.group(1).split(".")[-1], user_version=version,
                          condition=printed)
        return None
    return None


def foreign_origin(lines: list[str]) -> Origin | None:
    """The non-SGLang library the innermost traceback frame or an error prefix points to."""
    innermost = None
    for line in lines:
        frame = FRAME.search(line)
        if frame:
            package = SITE_PACKAGE.match(frame.group(1))
            if package and package.group(1) in SERVER_PLUMBING:
                continue   # it only carries another layer's or process's exception up
            innermost = (package.group(1) if package else None, line)
    if innermost and innermost[0] and innermost[0] not in SGLANG_PACKAGES:
        name = innermost[0]
        return Origin(is_sglang=False, package=IMPORT_TO_PACKAGE.get(name, name), matched_line=innermost[1].strip())
    # Raised in SGLang's frame or no frames at all: a failed import names the package it could
    # not import from (`cannot import name 'x' from 'aiter'`), whatever platform word another line
    # has (`rocm720` in an image tag the user quotes)
    for line in lines:
        imported = IMPORT_FAILED_RE.search(line)
        root = (imported.group(1) or imported.group(2)).split(".")[0] if imported else None
        if root and root not in SGLANG_PACKAGES and not relayed(line):
            return Origin(is_sglang=False, package=IMPORT_TO_PACKAGE.get(root, root), matched_line=line.strip())
    # Otherwise a C++/CUDA error surfaces through Python code that only called the library, so the
    # error text itself names the emitter.
    for line in reversed(lines):
        if relayed(line):
            continue   # the client or Ray only carried it: the error is the other side's
        prefix = EXCEPTION_PREFIX.match(line)
        if prefix:
            root = prefix.group(1).split(".")[0]
            if root not in SGLANG_PACKAGES and root != "builtins":
                return Origin(is_sglang=False, package=IMPORT_TO_PACKAGE.get(root, root), matched_line=line.strip())
        if not ERROR_WORDS.search(line):
            continue  # "attention_backend='flashinfer'" in an args dump names no culprit
        for marker, package in LIBRARY_MARKERS:
            if marker.search(line):
                return Origin(is_sglang=False, package=package, matched_line=line.strip())
    return None


def match_origin(
    lines: str | Iterable[str], version: str | None = None, registry: ErrorRegistry | None = None,
    context: str = "",
) -> Origin | None:
    """The origin of the user's error lines: an SGLang message site, another library, or None.
    `context` (the rest of the paste: the user's words, the launch command) is read only for the
    components and features it names, which choose among copies of one text."""
    lines = _as_lines(lines)
    if not lines:
        return None
    registry = registry or ErrorRegistry.load()
    paste = _Paste(lines, context)
    hits = [
        hit
        for hit in registry.find(lines)
        if ((_is_specific(hit[2], lines[hit[1]]) and not _python_words_only(registry, hit, lines[hit[1]]))
            or _raised_in_innermost_frame(registry, hit, paste))
        and not _raised_elsewhere(registry, hit, lines[hit[1]])
        and not _raised_by_library(registry, hit, paste) and not _misplaced_exception_text(registry, hit, lines[hit[1]])
        and not _parser_exit_line(registry, hit, lines[hit[1]])
    ]
    covered = {hit[1] for hit in hits}
    uncovered = [i for i, line in enumerate(lines)
                 if i not in covered and i not in paste.frame_lines and ERROR_WORDS.search(line)]
    if uncovered and hits:
        foreign = _foreign_errors(paste, uncovered)
        foreign_messages = [m for m in (_message(lines[i]) for i in foreign) if len(m) >= MIN_WRAPPED]

        def consequence(hit: tuple[int, int, int]) -> bool:
            kind, _, level = registry.kinds[registry.row(hit[0])[registry.col["kind"]]].partition(" ")
            line = lines[hit[1]]
            # a wrapper or consequence line SGLang prints around any failure ("Scheduler hit an
            # exception:", "Received sigquit") is SGLang's text, but the error it wraps is the one
            # asked about; a warning logged on the way is not the origin of a crash another line
            # reports; a line that quotes another library's error ("Capture cuda graph failed:
            # <CUDA error>") wraps it; and what SGLang logs while that error stops it follows from it
            # a generic text is still the raise itself when the traceback ends in the file emitting it
            generic = is_generic(line) and not _raised_in_innermost_frame(registry, hit, paste)
            return (generic or SEVERITY.get(level, 3) <= 1
                    or any(message in line for message in foreign_messages)
                    or (bool(foreign) and kind == "log"))

        hits = [hit for hit in hits if not consequence(hit)]
    if hits:
        # One line has one emitter: the message that explains most of it (a specific log that
        # quotes a caught exception, not that exception), unless the traceback names the file.
        def on_line(hit: tuple[int, int, int]) -> tuple[bool, int]:
            return registry.paths[registry.row(hit[0])[registry.col["path"]]] in paste.frame_paths, hit[2]

        best_on_line: dict[int, tuple[bool, int]] = {}
        for hit in hits:
            best_on_line[hit[1]] = max(best_on_line.get(hit[1], on_line(hit)), on_line(hit))
        chosen = [hit for hit in hits if on_line(hit) == best_on_line[hit[1]]]
        best = max(chosen, key=lambda hit: _score(registry, hit, paste, version))
        # when the traceback names the file and function, it has told which of the places it is
        def framed(hit: tuple[int, int, int]) -> bool:
            row = registry.row(hit[0])
            function = registry.functions[row[registry.col["function"]]].rsplit(".", 1)[-1]
            return (registry.paths[row[registry.col["path"]]], function) in paste.frame_functions

        told = framed(best)
        others = {hit[0] for hit in hits if hit[2] == best[2] and hit[0] != best[0] and hit[1] == best[1]
                  and not (told and not framed(hit))}
        found = registry.origin(best[0], lines[best[1]].strip(), version, len(others))
        if not others:
            return found
        releases = set(found.releases).union(*(registry.release_names(number) for number in others))
        return replace(found, text_releases=tuple(sorted(releases, key=Version)))
    return _bare_assert_origin(registry, paste, version) or foreign_origin(lines)
