"""Build or update an index from units: embed only what changed, swap the new index in atomically.

Unchanged chunks (same text, same model) reuse their vectors from the previous index, so
re-ingesting an unchanged KB embeds nothing and never loads sentence-transformers. The new index
is written to a temporary folder and renamed into place; an interrupted build leaves the previous
index as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from assistant.embed import ENCODER_CONFIG, ONNX_FILE, TOKENIZER_FILE
from assistant.errors import AssistantError
from assistant.index import FORMAT_VERSION, Index
from assistant.text import tokenize
from ingest.documents import Unit


@dataclass
class BuildStats:
    units: int
    chunks: int
    embedded: int
    reused: int
    seconds: float
    embed_seconds: float
    removed_units: int

    @property
    def chunks_per_second(self) -> float:
        return self.embedded / self.embed_seconds if self.embed_seconds > 0 else 0.0


def chunk_hash(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\0{text}".encode("utf-8", "replace")).hexdigest()[:20]


def _previous_vectors(index_dir: Path, model: str) -> dict[str, np.ndarray]:
    try:
        old = Index.load(index_dir, model)
    except AssistantError:
        return {}
    vectors = old.vectors.reconstruct_n(0, old.vectors.ntotal) if old.vectors.ntotal else []
    return {h: vectors[i] for i, h in enumerate(old.chunk_hashes)}


def _write_lexical(folder: Path, texts: list[str]) -> None:
    import bm25s

    retriever = bm25s.BM25()
    corpus = [tokenize(t) or ["<empty>"] for t in texts]
    retriever.index(corpus, show_progress=False)
    for name in ("data", "indices", "indptr"):
        np.save(folder / f"bm25_{name}.npy", np.asarray(retriever.scores[name]))
    (folder / "vocab.json").write_text(json.dumps(retriever.vocab_dict))


def build_index(index_dir: Path, units: list[Unit], model: str, progress: bool = True,
                encoder=None) -> BuildStats:
    """Write the index for `units` at `index_dir`, reusing vectors of unchanged chunks."""
    started = time.perf_counter()
    index_dir = Path(index_dir)
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    old_manifest = {}
    if (index_dir / "manifest.json").exists():
        try:
            old_manifest = json.loads((index_dir / "manifest.json").read_text())
        except ValueError:
            old_manifest = {}
    previous = _previous_vectors(index_dir, model)

    seen_ids: set[str] = set()
    texts, unit_rows, hashes, records = [], [], [], []
    for unit in units:
        if unit.id in seen_ids or not unit.chunks:
            continue
        seen_ids.add(unit.id)
        rows = []
        for text in unit.chunks:
            rows.append(len(texts))
            texts.append(text)
            unit_rows.append(len(records))
            hashes.append(chunk_hash(model, text))
        records.append({"id": unit.id, "kind": unit.kind, "title": unit.title, "title_zh": unit.title_zh,
                        "url": unit.url, "meta": unit.meta, "chunk_rows": rows,
                        "hash": unit.content_hash()})

    missing = [i for i, h in enumerate(hashes) if h not in previous]
    embed_seconds = 0.0
    dim = old_manifest.get("dim") if old_manifest.get("model") == model else None
    vectors = np.zeros((len(texts), dim or 0), dtype=np.float32) if dim else None
    if missing or dim is None:
        if encoder is None:
            if progress:
                print(f"Loading embedding model {model} ...", file=sys.stderr)
            from assistant.embed import SentenceTransformerEncoder

            encoder = SentenceTransformerEncoder(model)
        dim = encoder.dim
        vectors = np.zeros((len(texts), dim), dtype=np.float32)
        t0 = time.perf_counter()
        batch = 64
        bar = None
        if progress and len(missing) > batch:
            from tqdm import tqdm

            bar = tqdm(total=len(missing), desc="Embedding chunks", unit="chunk", file=sys.stderr)
        for start in range(0, len(missing), batch):
            rows = missing[start: start + batch]
            vectors[rows] = encoder.encode([texts[i] for i in rows])
            if bar:
                bar.update(len(rows))
        if bar:
            bar.close()
        embed_seconds = time.perf_counter() - t0
    for i, h in enumerate(hashes):
        if h in previous:
            vectors[i] = previous[h]

    tmp = index_dir.with_name(f".{index_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        import faiss

        flat = faiss.IndexFlatIP(dim)
        if len(texts):
            flat.add(vectors)
        faiss.write_index(flat, str(tmp / "vectors.faiss"))
        _write_lexical(tmp, texts)
        offsets = [0]
        with open(tmp / "texts.jsonl", "wb") as out:
            for text in texts:
                line = (json.dumps(text, ensure_ascii=False) + "\n").encode("utf-8")
                out.write(line)
                offsets.append(offsets[-1] + len(line))
        np.save(tmp / "text_offsets.npy", np.asarray(offsets, dtype=np.int64))
        (tmp / "units.json").write_text(json.dumps(records, ensure_ascii=False))
        (tmp / "chunks.json").write_text(json.dumps({"unit": unit_rows, "hash": hashes}))
        onnx = _query_encoder(index_dir, tmp, old_manifest, model, encoder)
        manifest = {
            "format": FORMAT_VERSION, "model": model, "dim": dim, "onnx": onnx,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "chunks": len(texts),
            "units": {r["id"]: r["hash"] for r in records},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        _swap_in(tmp, index_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    removed = len(set(old_manifest.get("units", {})) - seen_ids)
    return BuildStats(units=len(records), chunks=len(texts), embedded=len(missing),
                      reused=len(texts) - len(missing), seconds=time.perf_counter() - started,
                      embed_seconds=embed_seconds, removed_units=removed)


def _query_encoder(index_dir: Path, tmp: Path, old_manifest: dict, model: str, encoder) -> bool:
    """Carry the ONNX export over from the previous index, or export it now."""
    files = (ONNX_FILE, TOKENIZER_FILE, ENCODER_CONFIG)
    if old_manifest.get("model") == model and all((index_dir / f).exists() for f in files):
        for f in files:
            os.link(index_dir / f, tmp / f) if _same_device(index_dir, tmp) else shutil.copy2(index_dir / f, tmp / f)
        return True
    if encoder is None:
        from assistant.embed import SentenceTransformerEncoder

        encoder = SentenceTransformerEncoder(model)
    export = getattr(encoder, "export_onnx", None)
    return bool(export and export(tmp))


def _same_device(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def _swap_in(tmp: Path, index_dir: Path) -> None:
    old = index_dir.with_name(f".{index_dir.name}.old-{os.getpid()}")
    if index_dir.exists():
        os.rename(index_dir, old)
    os.rename(tmp, index_dir)
    shutil.rmtree(old, ignore_errors=True)


def stats_dict(stats: BuildStats) -> dict:
    return asdict(stats) | {"chunks_per_second": round(stats.chunks_per_second, 1)}
