"""Turn sources into units and chunks: KB entries, document folders (Markdown, text, HTML).

A unit is what retrieval returns (an entry, a document, an issue); chunks are what gets embedded.
Document chunking uses llama-index's Markdown parser for sections, then splits long sections on
blank lines without cutting a fenced code block or a Python traceback, unless the block is longer
than MAX_CHUNK_CHARS: then it is cut on lines (a single huge line on characters) like any long
text, so a 5 MB issue body or log never becomes one 5 MB chunk.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from assistant.kb import Entry

DOC_SUFFIXES = {".md", ".markdown", ".txt", ".log", ".html", ".htm", ".rst"}
CHUNK_CHARS = 1500   # soft limit for a document chunk; code blocks and tracebacks may exceed it
MAX_CHUNK_CHARS = 4 * CHUNK_CHARS   # hard limit: a longer block is cut (bounds index and ingest memory)
MAX_DOC_BYTES = 5_000_000


@dataclass
class Unit:
    id: str
    kind: str                     # entry | doc | issue
    title: str
    chunks: list[str]
    url: str | None = None
    title_zh: str = ""
    meta: dict = field(default_factory=dict)   # entry fields, issue metadata, doc path

    def content_hash(self) -> str:
        h = hashlib.sha256()
        for part in (self.id, self.kind, self.title, self.title_zh, self.url or "", repr(sorted(self.meta.items())), *self.chunks):
            h.update(part.encode("utf-8", "replace"))
            h.update(b"\0")
        return h.hexdigest()[:16]


def entry_unit(entry: Entry) -> Unit:
    head = "\n".join(p for p in (entry.title, entry.title_zh, *entry.signatures, *entry.symptoms,
                                 " ".join(entry.keywords)) if p)
    body = "\n".join(p for p in (entry.title, entry.cause, *(s.text for s in entry.fix),
                                 *(c for s in entry.fix for c in s.commands), entry.notes) if p)
    return Unit(id=entry.id, kind="entry", title=entry.title, title_zh=entry.title_zh,
                chunks=[head, body], meta=entry.to_dict())


# ---- documents -------------------------------------------------------------------------------

_FENCE_RE = re.compile(r"^(```|~~~)")


def _blocks(text: str) -> list[str]:
    """Paragraph-level blocks; a fenced block or a traceback is one block however long."""
    blocks: list[str] = []
    current: list[str] = []
    in_fence = in_traceback = False
    for line in text.splitlines():
        if _FENCE_RE.match(line.strip()):
            current.append(line)
            in_fence = not in_fence
            if not in_fence:
                blocks.append("\n".join(current))
                current = []
            continue
        if in_fence:
            current.append(line)
            continue
        if line.strip().startswith("Traceback (most recent call last)"):
            if current:
                blocks.append("\n".join(current))
            current, in_traceback = [line], True
            continue
        if in_traceback:
            current.append(line)
            if line and not line.startswith((" ", "\t")) and not line.startswith("Traceback"):
                blocks.append("\n".join(current))  # the exception line closes the traceback
                current, in_traceback = [], False
            continue
        if not line.strip():
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def bounded_chunks(text: str, limit: int = MAX_CHUNK_CHARS, piece: int = CHUNK_CHARS) -> list[str]:
    """[text] when it fits `limit`; else pieces of about `piece` characters cut on lines, and a
    line longer than `piece` cut on characters."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.split("\n"):
        while len(line) > piece:
            if current:
                pieces.append("\n".join(current))
                current, size = [], 0
            pieces.append(line[:piece])
            line = line[piece:]
        if current and size + len(line) + 1 > piece:
            pieces.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        pieces.append("\n".join(current))
    return pieces


def split_text(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    chunks: list[str] = []
    current = ""
    for block in (part for whole in _blocks(text) for part in bounded_chunks(whole)):
        if current and len(current) + len(block) + 2 > limit:
            chunks.append(current)
            current = ""
        current = f"{current}\n\n{block}" if current else block
    if current.strip():
        chunks.append(current)
    return chunks


def split_markdown(text: str) -> list[str]:
    """Sections by heading (llama-index), each split further without breaking code blocks."""
    from llama_index.core import Document
    from llama_index.core.node_parser import MarkdownNodeParser

    nodes = MarkdownNodeParser(include_metadata=False).get_nodes_from_documents([Document(text=text)])
    chunks: list[str] = []
    for node in nodes:
        section = node.get_content()
        chunks += [section] if len(section) <= CHUNK_CHARS else split_text(section)
    return [c for c in chunks if c.strip()]


class _HTMLText(HTMLParser):
    """HTML to Markdown-ish text: headings become '#', <pre> becomes a fenced block."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "nav", "footer"):
            self.skip += 1
        elif tag == "pre":
            self.pre += 1
            self.out.append("\n```\n")
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in ("p", "div", "li", "br", "tr", "section", "article"):
            self.out.append("\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "nav", "footer"):
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.out.append("\n```\n")
        elif re.fullmatch(r"h[1-6]|p", tag):
            self.out.append("\n\n")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data if self.pre else re.sub(r"[ \t\r\n]+", " ", data))


def html_to_markdown(text: str) -> str:
    parser = _HTMLText()
    parser.feed(text)
    return html.unescape(re.sub(r"\n{3,}", "\n\n", "".join(parser.out))).strip()


def _title(text: str, path: Path) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:120]
    return path.stem


def document_unit(path: Path, root: Path) -> Unit | None:
    """A document file as a unit, or None when it is empty, binary or too large."""
    data = path.read_bytes()[: MAX_DOC_BYTES + 1]
    if not data.strip() or len(data) > MAX_DOC_BYTES or b"\0" in data[:4096]:
        return None
    text = data.decode("utf-8", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        text = html_to_markdown(text)
    chunks = split_markdown(text) if path.suffix.lower() in (".md", ".markdown", ".html", ".htm") \
        else split_text(text)
    if not chunks:
        return None
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
    return Unit(id=f"doc:{rel}", kind="doc", title=_title(text, path), chunks=chunks,
                meta={"path": rel, "source": path.name})


def document_units(folder: Path) -> list[Unit]:
    folder = Path(folder)
    units = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in DOC_SUFFIXES):
        if path.name.lower() == "readme.md" and path.parent == folder:
            continue
        unit = document_unit(path, folder)
        if unit:
            units.append(unit)
    return units
