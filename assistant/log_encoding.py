"""Logs that reach the user encoded or flattened, read back into the program's own lines.

The trace reader needs one program line per line: a traceback's `File "..."` frames, the
exception, a logger's stamped lines. Three ways a log loses that shape on its way to a paste
(a terminal's cut at its width is `assistant.terminal_wrap`'s):

- **one JSON record per line**: Docker's default `json-file` driver (`{"log": "...\\n", "stream":
  "stderr", "time": ...}`, a line over 16 KiB split over records that do not end in a newline),
  fluent-bit and Kubernetes log shippers, `journalctl -o json` (`MESSAGE`), Loki's `logcli
  --output=jsonl` (`line`), Google Cloud's export (`textPayload`), Elastic (`message`), Python's
  JSON loggers and structlog (`message` / `event`, with the traceback under `exc_info` or
  `exception`). A record is read when it has a message field and a field only log records have
  (a time, a level, a stream); an API's error body (`{"object": "error", "message": ...}`) is no
  record and is read as written.
- **a whole log escaped into one string**: an HTTP error body or a Python repr that carries a
  traceback (`Error code: 500 - {'object': 'error', 'message': 'Traceback ...\\n  File ...'}`),
  a JSON field copied out of a log viewer. The literal `\\n` escapes become lines again when at
  least two of the pieces are program output (a traceback's header, a frame, an exception, a
  stamped line), so a Windows path's `C:\\new` stays as it is, and never in a logged request
  (`Receive: obj=GenerateReqInput(text='...')`), whose text is a prompt. The line that carried the log
  follows its lines, with `<the log above>` where the log was: a relay, not an error of its own.
- **a traceback or log whose newlines were lost** (a web form, a chat message, a table cell):
  `Traceback (most recent call last): File "a.py", line 3, in main foo() RuntimeError: bar` on
  one line is cut again before each frame and before the exception after the last frame; a long
  line holding three or more logger time stamps, before each stamp.

Two carriers add characters of their own, which `plain_text(lines)` takes out again so that
`File "..."` and the error lines read as the program printed them:
- a log copied out of a rendered page or a chat (a web UI, Slack, Feishu, WeChat, a wiki) often
  keeps its words but not its spaces: runs of them, or all of them, come as no-break spaces, and
  zero-width characters ride along;
- a coloured log (a logger writing to a terminal, `docker logs` of a container started with `-t`,
  `script`) carries escape sequences around its words, `\x1b[31mRuntimeError\x1b[0m`, or their
  remains once a web form dropped the escape character (`[31mRuntimeError[0m`).

`decoded(lines)` and `plain_text(lines)` are generators: a 200 MB log is read as it streams,
one line at a time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from assistant.control_chars import neutralize
from assistant.log_prefix import PREFIX_RE

# the field that holds a record's message, by the shipper that writes it (first present wins)
_MESSAGE_KEYS = ("log", "MESSAGE", "message", "msg", "textPayload", "line", "@message", "event")
# fields only a log record has: a record carrying none of them is data (an API's error body)
_RECORD_KEYS = frozenset({
    "time", "timestamp", "@timestamp", "ts", "stream", "level", "levelname", "severity", "logger",
    "logger_name", "name", "asctime", "__REALTIME_TIMESTAMP", "_SYSTEMD_UNIT", "_PID", "SYSLOG_IDENTIFIER",
    "kubernetes", "container_name", "labels", "resource", "insertId", "logName", "host", "hostname",
})
# where JSON loggers put a traceback beside the message
_EXCEPTION_KEYS = ("exc_info", "exception", "exc_text", "stack_trace", "stacktrace", "traceback", "stack")
# Docker splits a line longer than 16 KiB over records; their pieces are joined up to this size
_MAX_JOINED = 1 << 20
# a line longer than this is not parsed (a JSON document of many megabytes is not a log record)
_MAX_DECODED = 4 << 20
# nor a Python literal longer than this (its syntax tree costs far more than its text)
_MAX_PARSED = 1 << 20

_ESCAPED_NEWLINE_RE = re.compile(r"(?<!\\)(?:\\\\)*(?:\\r)?\\n")
_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[nrt\"'\\])")
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\"}
# what stands in a carrier's line for the log it carried, which is read as the lines before it: the
# trace reader takes a line holding it for a relay of those lines, not an error of its own
CARRIED = "<the log above>"
# a logged request (`--log-requests`' `Receive: obj=GenerateReqInput(text='...')`, a client's
# JSON body): the escaped text is the user's prompt, which may well quote a traceback, not a log
_REQUEST_KEYS = frozenset({"messages", "prompt", "input", "text", "input_ids"})
_REQUEST_RE = re.compile(r"\bobj=\w*(?:ReqInput|Request)\(|['\"](?:messages|prompt|input)['\"]\s*:")
# an exception's (dotted) class name
EXCEPTION_NAME = r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b"
# the start of a traceback's header or frame, of an exception
_PROGRAM_LINE_RE = re.compile(rf"^\s*(?:Traceback \(most recent call last\)|File \"|{EXCEPTION_NAME})")
# what follows the end of an escaped string in a dict or JSON literal, perhaps cut short:
# `', 'code': 500}`, `", "param": nu`
_KEY_VALUE = r"""\s*,\s*["']?[\w.@-]+["']?\s*:\s*(?:"[^"]*"?|'[^']*'?|[\w.+-]*)"""
_LITERAL_TAIL_RE = re.compile(rf"""(?<!\\)["'](?:(?:{_KEY_VALUE})+\s*,?\s*[}}\])]*|\s*[}}\])]+)\s*$""")

# a traceback on one line: its header, or a frame, then a frame or the exception on the same line
_FLAT_TRACEBACK_RE = re.compile(
    r"(?:Traceback \(most recent call last\):?|File \"[^\"]+\", line \d+,? in [\w<>.]+)\s+"
    r"(?:File \"|\S.*?\b[A-Z]\w*(?:Error|Exception)\b:|\S.*?\sFile \"[^\"]+\", line \d+)")
# a logger's time stamp inside a line: `[2025-07-29 15:06:51`, `2025-07-29 15:06:51,123 -`
_STAMP = r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d"
_STAMP_RE = re.compile(rf"(?:^|\s){_STAMP}")
# several log lines run together are a line longer than this with this many stamps in it
_FLAT_MIN = 200
_FLAT_STAMPS = 3
_FLAT_CUT_RE = re.compile(
    r"\s+(?=File \"[^\"]+\", line \d+"
    r"|Traceback \(most recent call last\)"
    r"|During handling of the above exception"
    rf"|The above exception was the direct cause|{_STAMP})")
_HEADER_RE = re.compile(r"^Traceback \(most recent call last\):?")
_FRAME_HEAD_RE = re.compile(r"^File \"[^\"]+\", line \d+(?:, in [\w<>.]+)?")
# an exception's name and colon (or nothing after it), where a flattened frame's code ends
_EXCEPTION_START = rf"{EXCEPTION_NAME}(?::|\s*$)"
_EXCEPTION_START_RE = re.compile(_EXCEPTION_START)
_FLAT_EXCEPTION_RE = re.compile(rf"\s(?={_EXCEPTION_START})")


# no-break, figure, narrow and the typographic spaces, the ideographic space; zero-width ones and
# the byte-order mark (a paste that began a file) are dropped
_SPACES = {**{cp: " " for cp in (0x00A0, 0x2007, 0x202F, 0x3000, *range(0x2000, 0x200B))},
           **{cp: None for cp in (0x200B, 0x2060, 0xFEFF)}}


# a colour code whose escape character was lost; it counts only on a line that also resets the
# colour (`[0m`, `[m`), as every coloured line does; a `[5m]` in a message, `[mooncake]`, stay
_BARE_SGR_RE = re.compile(r"\[(?:\d{1,3}(?:;\d{1,3})*m(?!\])|m(?![\w\]-]))")


def plain_text(lines: Iterable[str]) -> Iterator[str]:
    """The lines without the escape sequences a terminal's colours leave and with every kind of
    space a page or a chat puts for a space made a plain one."""
    for line in lines:
        if "\x1b" in line or "\x9b" in line:
            line = neutralize(line)
        elif "[0m" in line or "[m" in line:
            line = _BARE_SGR_RE.sub("", line)
        yield line if line.isascii() else line.translate(_SPACES)


def decoded(lines: Iterable[str]) -> Iterator[str]:
    """The program's lines of a paste or log, whatever of the three encodings it came in."""
    pending = ""   # a Docker record's piece of a long line, waiting for the rest
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not pending and "{" not in line and "\\n" not in line and len(line) <= _FLAT_MIN \
                and 'File "' not in line and "Traceback (most" not in line:
            yield line   # nearly every line of a log: nothing to decode
            continue
        record = _record_text(line) if "{" in line and len(line) < _MAX_DECODED else None
        if record is not None:
            text, ends_line = record
            pending += text
            if ends_line or len(pending) > _MAX_JOINED:
                yield from pending.rstrip("\n").split("\n")
                pending = ""
            continue
        if pending:
            yield from pending.split("\n")
            pending = ""
        yield from _unescaped(line)
    if pending:
        yield from pending.rstrip("\n").split("\n")


def _record_text(line: str) -> tuple[str, bool] | None:
    """A JSON log record's message (and traceback), and whether it ends its line; None for
    anything that is not a log record."""
    if "{" not in line:
        return None
    # `kubectl logs --timestamps` and the like put their prefix before the record
    stripped = line[PREFIX_RE.match(line).end():].strip() if not line.startswith("{") else line.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        record = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or not _RECORD_KEYS.intersection(record):
        return None
    message = next((record[k] for k in _MESSAGE_KEYS if isinstance(record.get(k), str)), None)
    if message is None:
        return None
    # Docker's record holds the line with its newline; a piece of a long line has none
    ends_line = "log" not in record or message.endswith("\n") or not message
    extra = [record[k] for k in _EXCEPTION_KEYS if isinstance(record.get(k), str) and record[k].strip()]
    if extra:
        message = message.rstrip("\n") + "\n" + "\n".join(x.rstrip("\n") for x in extra) + "\n"
    return message, ends_line


def _unescaped(line: str) -> list[str]:
    """A line whose escaped newlines hold a log, as that log's lines; a flattened traceback or log,
    cut again; any other line (a logged request before its text, say) as it is."""
    escape = _ESCAPED_NEWLINE_RE.search(line) if "\\n" in line and len(line) < _MAX_DECODED else None
    if escape:
        pieces = _from_literal(line)
        if pieces is None and not _REQUEST_RE.search(line, 0, _string_start(line, escape.start())):
            pieces = _from_escapes(line)
        if pieces and sum(1 for p in pieces if is_program_line(p)) >= 2:
            return pieces
    flat = _FLAT_TRACEBACK_RE.search(line) if 'File "' in line or "Traceback (most" in line else None
    if flat and _REQUEST_RE.search(line, 0, flat.start()):
        return [line]
    if flat or (len(line) > _FLAT_MIN and len(_STAMP_RE.findall(line)) >= _FLAT_STAMPS
                and not _REQUEST_RE.search(line)):
        return _unflattened(line)
    return [line]


def _from_literal(line: str) -> list[str] | None:
    """The line's dict / JSON literal parsed: the lines of its multi-line strings, then the text
    around the literal, which carried them. The carrier comes last, as what it carries happened
    first: the client's `InternalServerError: Error code: 500` reports the server's traceback."""
    start = min((i for i in (line.find("{"), line.find("[")) if i >= 0), default=-1)
    end = max(line.rfind("}"), line.rfind("]"))
    if start < 0 or end <= start:
        return None
    if _REQUEST_RE.search(line, 0, start):
        return None
    literal = line[start:end + 1]
    try:
        value = json.loads(literal)
    except (ValueError, RecursionError):
        if len(literal) > _MAX_PARSED:
            return None
        import ast   # a Python literal is rare; its parser is not loaded on start-up

        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    rest: list[str] = []

    def collect(v) -> None:
        if isinstance(v, str) and "\n" in v:
            rest.extend(v.split("\n"))
        elif isinstance(v, dict):
            for key, x in v.items():
                if key not in _REQUEST_KEYS:   # a request's prompt, not a log
                    collect(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                collect(x)

    collect(value)
    if not rest:
        return None
    around = (line[:start] + line[end + 1:]).strip()
    # a bare body is dropped; a carrier keeps its own words, not the body's field names
    return [*rest, *([line[:start] + CARRIED + line[end + 1:]] if around else [])]


def is_program_line(piece: str) -> bool:
    """A traceback's header or frame, an exception, or a line behind a logger's or collector's
    prefix (a time stamp, `[TP0]`, a Ray worker's `(pid=...)`)."""
    end = PREFIX_RE.match(piece).end()
    return bool(piece[:end].strip() and piece[end:].strip()) or bool(_PROGRAM_LINE_RE.match(piece))


def _from_escapes(line: str) -> list[str]:
    """The line unescaped by hand and cut at its newlines (a literal cut short or not parseable):
    the string's lines, then its carrier, the text before the quote that opens the string; the
    end of the enclosing literal is dropped from the last piece."""
    opening = _string_start(line, _ESCAPED_NEWLINE_RE.search(line).start())
    carrier, escaped = (line[:opening], line[opening + 1:]) if opening >= 0 else ("", line)
    pieces = _ESCAPE_RE.sub(_unescape_one, escaped).split("\n")
    pieces[-1] = _LITERAL_TAIL_RE.sub("", pieces[-1])
    return [*(p.rstrip("\r") for p in pieces), *([carrier + CARRIED] if carrier.strip() else [])]


def _string_start(line: str, escape_at: int) -> int:
    """Where the quoted string that holds the escape at `escape_at` opens (-1: no quote before it);
    what comes before is the string's carrier."""
    return max(line.rfind('"', 0, escape_at), line.rfind("'", 0, escape_at))


def _unescape_one(match: re.Match) -> str:
    code = match.group(1)
    if code[0] in "ux" and len(code) > 1:
        return chr(int(code[1:], 16))
    return _SIMPLE_ESCAPES[code]


def _unflattened(line: str) -> list[str]:
    """A log or traceback whose line breaks became spaces, cut again before every stamped line,
    traceback header and frame; each frame's code apart from its `File "...", line N, in f` head,
    and the exception apart from the code of the last frame before it (or from the header, when
    the frames were left out)."""
    pieces = _FLAT_CUT_RE.split(line)
    lines: list[str] = []
    for i, piece in enumerate(pieces):
        head = _FRAME_HEAD_RE.match(piece) or _HEADER_RE.match(piece)
        if not head:
            lines.append(piece)
            continue
        lines.append(("  " if head.re is _FRAME_HEAD_RE else "") + head.group(0))
        code = piece[head.end():].strip()
        if not code:
            continue
        last_frame = i + 1 == len(pieces) or not _FRAME_HEAD_RE.match(pieces[i + 1])
        parts = _FLAT_EXCEPTION_RE.split(" " + code, maxsplit=1) if last_frame else [code]
        parts = [p.strip() for p in parts if p.strip()]
        if head.re is _FRAME_HEAD_RE and parts and not _EXCEPTION_START_RE.match(parts[0]):
            lines.append("    " + parts.pop(0))
        lines.extend(parts)
    return lines
