"""Where an error message comes from: the SGLang module, function and condition that emit it.

``match_origin(lines, version)`` looks the user's error lines up in the message registry
``kb/sglang_errors.jsonl.gz`` (built by ``python -m ingest.sglang_errors`` from every release
wheel): every raise / assert / error-or-warning log / argparse error SGLang, sglang-router and
sgl-kernel can emit, as a pattern with placeholders for the variable parts, with the releases
that contain it. A match gives an ``Origin``: package, module, ``Class.method``, the guarding
condition with a few lines of source, the exception class or log level, and whether the
user's release has this message. When nothing matches but the traceback frames or a library
prefix (``NCCL WARN``, ``torch.OutOfMemoryError``) point to another library, the ``Origin``
says so (``is_sglang`` False, ``package`` = that library) instead.

Fast by construction: the registry is loaded once (lazily) and each message is indexed by
its rarest literal words, so a query only tries the few patterns whose words occur in the
user's text. Imports only the stdlib and ``packaging``.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.version import InvalidVersion, Version

from assistant.generic_lines import is_generic

from assistant.resources import kb_file

DEFAULT_PATH = kb_file("sglang_errors.jsonl.gz")  # the checkout's kb/, else the one installed with the package
WORD = re.compile(r"[a-z][a-z0-9_]{3,}")  # how a user's (lower-cased) line is split into words
KEY_WORD = re.compile(r"(?<![\w\x00])[a-z][a-z0-9_]{3,}(?![\w\x00])")  # whole words only
MAX_LINE = 2000
MAX_LINES = 400  # a longer paste is cut to its last lines: the error is at the end
FRAME = re.compile(r'File "([^"]+)", line \d+')
FRAME_PACKAGE_PATH = re.compile(r"/((?:sglang|sglang_router|sgl_kernel)/[\w/]+\.py)$")
SITE_PACKAGE = re.compile(r"(?:site|dist)-packages/([A-Za-z_][\w]*)")
EXCEPTION_PREFIX = re.compile(r"^\s*((?:[A-Za-z_]\w*\.)+)([A-Z]\w*(?:Error|Exception|Warning))\b")
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
PARTIAL_LITERAL = 25  # characters a cut-short line must share with the start of a message
MAX_PARTIAL_TRIES = 100  # candidates tried for cut-short lines: bounds a query's cost
EMPTY: frozenset = frozenset()
MAX_PREFIX_TOKENS = 80  # words of a message a cut-short line is compared with
SEVERITY = {"raise": 3, "assert": 3, "argparse": 3, "critical": 2, "error": 2, "warning": 1}
ERROR_WORDS = re.compile(r"error|exception|warn|fail|fatal|fault|abort|out of memory", re.I)
# Import names whose distribution is named differently.
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
        self._patterns: dict[int, tuple[re.Pattern | None, int]] = {}
        self._prefix_patterns: dict[int, tuple[re.Pattern | None, int]] = {}
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

    def pattern(self, number: int) -> tuple[re.Pattern | None, int]:
        """(compiled search regex, literal length) of one message, compiled on first use."""
        cached = self._patterns.get(number)
        if cached is None:
            parts = template_parts(self.row(number)[self.col["template"]])
            regex = pattern_for(parts)
            literal = sum(len(p.strip()) for p in matching_line(parts) if type(p) is str)
            cached = self._patterns[number] = (re.compile(regex, re.I) if regex else None, literal)
        return cached

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
        """(message number, line number, literal length) of every message found in the lines.

        A message is tried on a line only if all its key words are there; when no message
        matches a whole line, a line cut short (a terminal or a copy that lost its end) may
        still match the beginning of a message with two of its key words.
        """
        # A log repeats its lines: each distinct line is looked at once (its last copy).
        last_copy = {line: number for number, line in enumerate(lines)}
        lines_of_word: dict[str, set[int]] = {}
        for line, line_number in last_copy.items():
            for word in set(WORD.findall(line.lower())):
                lines_of_word.setdefault(word, set()).add(line_number)
        keys_col = self.col["keys"]
        found = []
        for number in {number for word in lines_of_word for number in self.index.get(word, ())}:
            key_lines = [lines_of_word.get(key, EMPTY) for key in self.row(number)[keys_col]]
            hit = self._search(number, lines, sorted(key_lines[0].intersection(*key_lines[1:])))
            if hit:
                found.append(hit)
        if found:
            return found
        # Two of the key words on one error line: maybe the line lost the rest.
        error_lines = {n for n in last_copy.values() if ERROR_WORDS.search(lines[n])}
        error_words = {word for word, numbers in lines_of_word.items() if numbers & error_lines}
        candidates = {n for word in error_words for n in (*self.index.get(word, ()), *self.index_more.get(word, ()))}
        tried = 0
        for number in sorted(candidates):
            key_lines = [lines_of_word.get(key, EMPTY) & error_lines for key in self.row(number)[keys_col]]
            near = set()
            for first in range(len(key_lines)):
                for second in range(first + 1, len(key_lines)):
                    near |= key_lines[first] & key_lines[second]
            if not near:
                continue
            tried += 1
            if tried > MAX_PARTIAL_TRIES:
                break
            hit = self._search(number, lines, sorted(near), prefix=True)
            if hit and hit[2] >= PARTIAL_LITERAL:
                found.append(hit)
        return found

    def _search(self, number: int, lines: list[str], line_numbers: list[int], prefix: bool = False):
        """(number, line number, literal length) of the first line the message is on, or None."""
        if not line_numbers:
            return None
        pattern, literal = self.prefix_pattern(number) if prefix else self.pattern(number)
        if pattern is None:
            return None
        for line_number in line_numbers:
            match = pattern.search(lines[line_number])
            if match:
                # A prefix match counts only the message's own words the line has, not the
                # text that filled its placeholders.
                if prefix:
                    literal = len(match.group(0).strip()) - sum(len(g) for g in match.groups() if g)
                return (number, line_number, literal)
        return None

    def prefix_pattern(self, number: int) -> tuple[re.Pattern | None, int]:
        """Regex matching a line that ends somewhere inside the message (compiled on first use)."""
        cached = self._prefix_patterns.get(number)
        if cached is None:
            parts = template_parts(self.row(number)[self.col["template"]])
            regex = prefix_pattern_for(parts)
            cached = self._prefix_patterns[number] = (re.compile(regex, re.I) if regex else None, 0)
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
LITERAL_SPLIT = re.compile("(\\s+|[" + QUOTES + "])")


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


def literal_regex(text: str) -> str:
    """A literal, tolerant of whitespace runs and of quoting (quotes are not compared at all)."""
    out = []
    for token in LITERAL_SPLIT.split(text):
        if not token:
            continue
        if token.isspace():
            out.append(r"\s+")
        elif token in QUOTES:
            continue  # quotes are dropped from both the pattern and the user's line
        else:
            out.append(re.escape(token))
    return "".join(out)


def matching_line(parts: list) -> list:
    """The parts of the template line with the most literal text.

    A multi-line message is printed over several lines of the paste; it is looked for by
    its most specific line. The registry's key words come from this line too.
    """
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
    return max(lines, key=lambda line: sum(len(p.strip()) for p in line if type(p) is str))


def key_words(template: str) -> set[str]:
    """Words of the matching line that any rendering of the message contains whole.

    A word glued to a placeholder ("{prefix}_weight" prints as "model_weight") is not one.
    """
    text = "".join(p if type(p) is str else "\x00" for p in matching_line(template_parts(template)))
    return set(KEY_WORD.findall(text.lower()))


def prefix_pattern_for(parts: list) -> str:
    """Regex for a line cut short inside the message: each next word is optional, and the
    line ends there ("... is not a built-in template" for "... template name or a path.")."""
    parts = matching_line(parts)
    while parts and type(parts[0]) is Field:
        parts = parts[1:]
    tokens: list[str] = []
    for part in parts:
        if type(part) is Field:
            tokens.append(r"(.*?)")  # a group, so the field's text is not counted as shared
            continue
        for word in re.findall(r"\s+|[^\s]+", part.translate(DROP_QUOTES)):
            tokens.append(r"\s+" if word.isspace() else re.escape(word))
    if not tokens:
        return ""
    head, rest = tokens[0], tokens[1:]
    nested = ""
    for token in reversed(rest[:MAX_PREFIX_TOKENS]):
        nested = f"(?:{token}{nested})?"
    return f"{head}{nested}(?:\\.\\.\\.|\u2026)?\\s*$"


def pattern_for(parts: list) -> str:
    """Regex that finds the message inside a log line: fields match anything on the line."""
    parts = matching_line(parts)
    while parts and type(parts[0]) is Field:
        parts = parts[1:]
    while parts and type(parts[-1]) is Field:
        parts = parts[:-1]
    return "".join(literal_regex(p) if type(p) is str else r".*?" for p in parts)


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


def _message_length(line: str) -> int:
    """Length of the message on a log line, without its log prefix and exception class."""
    return len(MESSAGE_PREFIX.sub("", line).strip())


def _is_specific(literal: int, line: str) -> bool:
    """A match must be long, or cover most of the line: "Exception: {e}" explains nothing."""
    return literal >= SPECIFIC_LITERAL or literal >= COVERAGE * _message_length(line)


def _raised_elsewhere(registry: ErrorRegistry, hit: tuple[int, int, int], line: str) -> bool:
    """The line names another library's exception class ("torch.distributed.DistStoreError:
    Timed out after ...") that is not the class this SGLang site raises."""
    prefix = EXCEPTION_PREFIX.match(line)
    if not prefix or prefix.group(1).split(".")[0] in SGLANG_PACKAGES:
        return False
    kind, _, exception = registry.kinds[registry.row(hit[0])[registry.col["kind"]]].partition(" ")
    return kind in ("raise", "assert") and exception != prefix.group(2)


def _frame_paths(lines: list[str]) -> set[str]:
    """Package-relative paths of the traceback frames: sglang/srt/models/qwen2.py."""
    paths = set()
    for line in lines:
        frame = FRAME.search(line)
        if frame:
            inside = FRAME_PACKAGE_PATH.search(frame.group(1))
            if inside:
                paths.add(inside.group(1))
    return paths


def _score(registry: ErrorRegistry, hit: tuple[int, int, int], lines: list[str], version: str | None,
           frame_paths: set[str]):  # fmt: skip
    number, line_number, literal = hit
    row = registry.row(number)
    kind, _, exception = registry.kinds[row[registry.col["kind"]]].partition(" ")
    path = registry.paths[row[registry.col["path"]]]
    names_exception = exception in lines[line_number]
    in_version = bool(version) and bool(registry.has_release(
        registry.packages[row[registry.col["package"]]], registry.release_names(number), version
    ))  # None (release unknown to the registry) sorts as False
    # The user's own traceback naming the file settles which of several copies of a text it
    # is; then the LLM server's code over the diffusion runtime's copy. What stops the server
    # (a raise) is what the user asks about, not a warning logged on the way; among equals,
    # longer literal text is the stronger evidence, then the exception named on the line,
    # the user's release, a message recent releases still have, and the later line (the
    # final error of a traceback).
    newest_release = row[registry.col["releases"]][-1][1]  # still in recent releases: likelier
    return (path in frame_paths, not path.startswith(SECONDARY_PATHS),
            SEVERITY.get(exception, SEVERITY.get(kind, 0)), literal, names_exception, in_version,
            newest_release, line_number)  # fmt: skip


def foreign_origin(lines: list[str]) -> Origin | None:
    """The non-SGLang library the innermost traceback frame or an error prefix points to."""
    innermost = None
    for line in lines:
        frame = FRAME.search(line)
        if frame:
            package = SITE_PACKAGE.search(frame.group(1))
            innermost = (package.group(1) if package else None, line)
    if innermost and innermost[0] and innermost[0] not in SGLANG_PACKAGES:
        name = innermost[0]
        return Origin(is_sglang=False, package=IMPORT_TO_PACKAGE.get(name, name), matched_line=innermost[1].strip())
    # Raised in SGLang's frame or no frames at all: a C++/CUDA error surfaces through Python
    # code that only called the library, so the error text itself names the emitter.
    for line in reversed(lines):
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
    lines: str | Iterable[str], version: str | None = None, registry: ErrorRegistry | None = None
) -> Origin | None:
    """The origin of the user's error lines: an SGLang message site, another library, or None."""
    lines = _as_lines(lines)
    if not lines:
        return None
    registry = registry or ErrorRegistry.load()
    hits = [
        hit
        for hit in registry.find(_unquoted(lines))
        if _is_specific(hit[2], lines[hit[1]]) and not _raised_elsewhere(registry, hit, lines[hit[1]])
    ]
    # a wrapper or consequence line SGLang prints around any failure ("Scheduler hit an
    # exception:", "Capture cuda graph failed:", "Received sigquit") is SGLang's text, but the
    # error it wraps is the one asked about: with any other error line present, it is not the origin
    # a warning SGLang logged on the way is not the origin of a crash another line reports
    hit_lines = {hit[1] for hit in hits}
    others = [line for i, line in enumerate(lines) if i not in hit_lines and ERROR_WORDS.search(line)
              and not FRAME.search(line)]
    if others:
        hits = [hit for hit in hits if not is_generic(lines[hit[1]])
                and SEVERITY.get(registry.kinds[registry.row(hit[0])[registry.col["kind"]]].partition(" ")[2], 3) > 1]
    if hits:
        frame_paths = _frame_paths(lines)
        best = max(hits, key=lambda hit: _score(registry, hit, lines, version, frame_paths))
        same_text = sum(
            1 for hit in hits if hit[2] == best[2] and hit[0] != best[0] and hit[1] == best[1]
        )
        return registry.origin(best[0], lines[best[1]].strip(), version, same_text)
    return foreign_origin(lines)
