"""The Assistant: one object every surface (CLI, web UI, Slack, evals) calls.

input lines -> trace analysis -> hybrid retrieval -> extractive answer -> (optional) LLM answer,
verified against the retrieved sources and the flag registry before it is shown.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from pathlib import Path

from assistant.answer import Answer, compose_extractive
from assistant.config import Settings
from assistant.errors import BinaryInput, UsageError
from assistant.provenance import compute_provenance
from assistant.render import render_text
from assistant.retrieve import Retrieval, Retriever
from assistant.trace import Analysis, analyze_lines

MAX_PASTE_CHARS = 2_000_000   # a paste (UI, Slack, argument) larger than this is refused
BINARY_SAMPLE = 8192


def _mostly_unprintable(text: str) -> bool:
    """More than 10% NULs, control characters or undecodable bytes: not a log."""
    bad = sum(1 for ch in text if ch in "\ufffd\0" or (ord(ch) < 32 and ch not in "\n\r\t\x1b"))
    return bad / max(1, len(text)) > 0.10


def looks_binary(sample: bytes) -> bool:
    return b"\0" in sample or _mostly_unprintable(sample.decode("utf-8", errors="replace"))


def _utf16_encoding(sample: bytes) -> str | None:
    """The UTF-16 codec the bytes are written in, or None: a byte-order mark, or text with a NUL
    in every other byte (what Windows PowerShell 5's `>` and `Out-File` write)."""
    if sample[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    even, odd = sample[0::2], sample[1::2]
    if len(odd) >= 8 and odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if len(odd) >= 8 and even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    return None


def lines_from_bytes(stream: io.BufferedIOBase, max_line: int = 1_000_000,
                     max_inflated: int | None = None) -> Iterable[str]:
    """Decode a byte stream line by line (invalid UTF-8 replaced; UTF-16 when it is that; a
    gzip / bzip2 / xz stream inflated as it is read, up to `max_inflated` bytes,
    MAX_DECOMPRESSED by default), refusing binary data.

    Reads at most `max_line` bytes per line, so memory stays bounded on any input. NUL bytes
    are dropped: a log that logrotate truncated while SGLang kept writing (`copytruncate`) starts
    with a block of them, and the text after it is the log."""
    _skip_nul_bytes(stream)
    sample = stream.peek(BINARY_SAMPLE)[:BINARY_SAMPLE] if hasattr(stream, "peek") else b""
    codec = _decompressor(sample)
    if codec is not None:
        # a rotated log (logrotate's and the kubelet's `.gz`, `.bz2`, `.xz`), read as it inflates
        opener, damaged = codec
        capped = _Capped(opener(stream, "rb"), max_inflated or MAX_DECOMPRESSED, damaged)
        yield from lines_from_bytes(io.BufferedReader(capped), max_line)
        return
    encoding = _utf16_encoding(sample)
    if encoding:
        yield from _utf16_lines(stream, encoding, max_line)
        return
    if looks_binary(sample):
        raise BinaryInput("the input looks like binary data, not a log: paste the text of the error "
                          "or pass a text log with --log FILE")
    while True:
        raw = stream.readline(max_line)
        if not raw:
            return
        yield raw.replace(b"\x00", b"").decode("utf-8", errors="replace")


def _skip_nul_bytes(stream: io.BufferedIOBase) -> None:
    """Consume the NUL bytes a stream starts with (read in blocks; none when it cannot peek)."""
    if not hasattr(stream, "peek"):
        return
    while True:
        head = stream.peek(BINARY_SAMPLE)[:BINARY_SAMPLE]
        nuls = len(head) - len(head.lstrip(b"\x00"))
        if not nuls:
            return
        stream.read(nuls)


MAX_DECOMPRESSED = 4 << 30   # bytes of a compressed log read, at most


def _decompressor(sample: bytes):
    """How to open a gzip / bzip2 / xz stream and the errors a damaged one raises besides OSError
    and EOFError, or None; each codec is imported only when a log needs it (not on start-up)."""
    if sample.startswith(b"\x1f\x8b"):
        import gzip
        import zlib
        return gzip.open, (zlib.error,)
    if sample.startswith(b"BZh"):
        import bz2
        return bz2.open, ()
    if sample.startswith(b"\xfd7zXZ\x00"):
        import lzma
        return lzma.open, (lzma.LZMAError,)
    return None


class _Capped(io.RawIOBase):
    """A decompressed stream that stops with a usage error past `limit` bytes (a decompression
    bomb, or a log too large to read whole: its last part is what matters)."""

    def __init__(self, inner, limit: int, damaged: tuple[type[BaseException], ...]):
        self.inner, self.limit, self.damaged, self.read_so_far = inner, limit, damaged, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            n = self.inner.readinto(buffer)
        except (OSError, EOFError, *self.damaged) as exc:   # a truncated or corrupt archive
            raise UsageError(f"the compressed log cannot be read ({exc}): decompress it and pass the "
                             "text with --log FILE") from exc
        self.read_so_far += n
        if self.read_so_far > self.limit:
            raise UsageError(f"the compressed log inflates to more than {self.limit / 1e6:,.0f} MB: "
                             "pass its last part (zcat FILE | tail -n 200000 | ask)")
        return n


def _utf16_lines(stream: io.BufferedIOBase, encoding: str, max_line: int) -> Iterable[str]:
    text = io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline=None)
    try:
        while True:
            line = text.readline(max_line)
            if not line:
                return
            yield line   # a byte-order mark left in a line goes with the reader's plain_text
    finally:
        text.detach()   # the caller owns the stream and closes it


def lines_from_text(text: str) -> list[str]:
    if "\x00" in text:
        text = text.replace("\x00", "")   # a truncated-and-rewritten log's NUL block (see lines_from_bytes)
    if not text or not text.strip():
        raise UsageError("the input is empty: paste an error trace or pass a log with --log FILE")
    if len(text) > MAX_PASTE_CHARS:
        raise UsageError(f"the paste is {len(text) // 1_000_000} MB, more than "
                         f"{MAX_PASTE_CHARS // 1_000_000} MB: pass the log file with --log FILE")
    if _mostly_unprintable(text[:BINARY_SAMPLE]):
        raise BinaryInput("the input looks like binary data, not a log: paste the text of the error")
    return text.splitlines()


def analyze_file(path: Path, progress: Callable[[int, int], None] | None = None) -> Analysis:
    """Triage a log file as a stream (a 200 MB log is never read whole); `progress(lines,
    characters)` is passed on to analyze_lines."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    with handle:
        return analyze_lines(lines_from_bytes(handle), progress)


class Assistant:
    def __init__(self, retriever: Retriever, registry=None, settings: Settings | None = None, llm=None):
        self.retriever = retriever
        self.registry = registry
        self.settings = settings or Settings()
        self.llm = llm

    @classmethod
    def from_settings(cls, settings: Settings, progress: Callable[[str], None] | None = None,
                      build_index: Callable[[Settings], object] | None = None, llm=None) -> Assistant:
        """The assistant over the index at settings.index_dir. When there is none, `build_index`
        (given by the surface, e.g. ingest.update.ingest_kb) builds it once; without it,
        IndexMissing is raised."""
        from assistant.embed import query_encoder
        from assistant.errors import IndexMissing
        from assistant.flags import FlagRegistry
        from assistant.index import Index

        try:
            index = Index.load(settings.index_dir, settings.embed_model)
        except IndexMissing:
            if build_index is None:
                raise
            if progress:
                progress(f"No index at {settings.index_dir}; building it from {settings.kb_dir} (once)...")
            build_index(settings)
            index = Index.load(settings.index_dir, settings.embed_model)
        else:
            # an edited entry must answer at once: a stale index would keep answering with the old
            # text (or miss a new entry) without a word
            if build_index is not None and _kb_changed_since(index, settings.kb_dir):
                if progress:
                    progress(f"The knowledge base at {settings.kb_dir} changed since its index was built; "
                             "updating the index (only changed entries are embedded)...")
                build_index(settings)
                index = Index.load(settings.index_dir, settings.embed_model)
        encoder = query_encoder(settings.index_dir, settings.embed_model)
        return cls(Retriever(index, encoder), FlagRegistry.load(), settings, llm)

    def retrieve(self, lines: Iterable[str] | Analysis, k: int | None = None, mode: str = "hybrid",
                 use_trace: bool = True, meanwhile: Callable[[Analysis], object] | None = None) -> Retrieval:
        analysis = lines if isinstance(lines, Analysis) else analyze_lines(lines)
        return self.retriever.search(analysis, k=max(k or 0, self.settings.top_k, 5), mode=mode,
                                     use_trace=use_trace, meanwhile=meanwhile)

    def answer(self, source: str | Iterable[str] | Analysis, history: list[dict] | None = None,
               use_llm: bool | None = None, on_token: Callable[[str], None] | None = None) -> Answer:
        """Answer a paste (str), a stream of log lines, or an analysis."""
        if isinstance(source, str):
            source = lines_from_text(source)
        # the answer's registry look-ups run while the query is embedded
        retrieval = self.retrieve(source, meanwhile=compute_provenance)
        answer = compose_extractive(retrieval, self.registry, self.settings.top_k, self.settings.lang)
        want_llm = self.settings.use_llm if use_llm is None else use_llm
        if want_llm and self.llm is not None:
            from assistant.llm_answer import answer_with_llm

            answer = answer_with_llm(self.llm, retrieval, answer, self.registry, self.retriever.index,
                                     history=history, on_token=on_token)
        answer.text = render_text(answer)
        return answer


def _kb_changed_since(index, kb_dir) -> bool:
    """True when a file of the KB folder was added, removed or rewritten since the index was built.
    An index built before the manifest kept its stamp (or from units alone, as tests do) is not
    judged, nor the packaged KB, whose cache folder is already named by its content."""
    from assistant.resources import is_packaged, kb_stamp

    built_from = index.manifest.get("kb_stamp")
    return built_from is not None and not is_packaged(kb_dir) and built_from != kb_stamp(kb_dir)


def llm_assistant(endpoint: str | None = None, model: str | None = None, settings=None,
                  timeout: float | None = None,
                  build_index: Callable[[Settings], object] | None = None) -> Assistant:
    """An Assistant that answers with the model at `endpoint` (the eval harness, UIs).
    Raises EndpointError when no server answers there."""
    from assistant.llm import SGLangClient

    settings = (settings or Settings.from_env()).with_options(
        endpoint=endpoint, model=model, timeout=timeout, use_llm=True)
    client = SGLangClient.from_settings(settings)
    client.ensure_available()
    return Assistant.from_settings(settings, llm=client, build_index=build_index)
