"""The on-disk index: what `ask ingest` writes and every query reads.

Layout of an index folder:
    manifest.json         format version, embedding model, dimension, per-unit content hashes
    units.json            the units (entries, documents, issues) with their data
    chunks.json           chunk -> unit row, chunk content hash
    texts.jsonl           chunk texts, read lazily through text_offsets.npy
    vectors.faiss         one normalised vector per chunk (inner product = cosine)
    bm25_*.npy, vocab.json  the lexical index (bm25s scores as CSC arrays)
    query_encoder.*       the ONNX export of the embedding model for fast queries
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assistant.errors import IndexError_, IndexMismatch, IndexMissing

FORMAT_VERSION = 1
REBUILD_HINT = "run `ask ingest` to rebuild it"


@dataclass
class UnitRecord:
    id: str
    kind: str
    title: str
    title_zh: str
    url: str | None
    meta: dict
    chunk_rows: list[int]
    hash: str


class Index:
    def __init__(self, folder: Path, manifest: dict, units: list[UnitRecord], chunk_unit: np.ndarray,
                 chunk_hashes: list[str], vectors, bm25: dict, vocab: dict[str, int], offsets: np.ndarray):
        self.folder = folder
        self.manifest = manifest
        self.units = units
        self.unit_by_id = {u.id: i for i, u in enumerate(units)}
        self.chunk_unit = chunk_unit
        self.chunk_hashes = chunk_hashes
        self.vectors = vectors
        self.bm25 = bm25
        self.vocab = vocab
        self.offsets = offsets
        self._texts = None
        # first chunk row of each unit; build_index writes a unit's chunks contiguously
        self.unit_starts = np.array([u.chunk_rows[0] for u in units], dtype=np.int64)
        self._texts_lock = threading.Lock()   # one file position shared by concurrent queries

    @property
    def model(self) -> str:
        return self.manifest["model"]

    @classmethod
    def load(cls, folder: Path, model: str | None = None) -> Index:
        """Open an index; raises IndexMissing / IndexMismatch / IndexError_ with the fix."""
        folder = Path(folder)
        manifest_path = folder / "manifest.json"
        if not manifest_path.exists():
            raise IndexMissing(f"no index at {folder}: {REBUILD_HINT}")
        try:
            manifest = json.loads(manifest_path.read_text())
            if manifest.get("format") != FORMAT_VERSION:
                raise IndexMismatch(f"the index at {folder} has format {manifest.get('format')!r}, this "
                                    f"version reads format {FORMAT_VERSION}: {REBUILD_HINT}")
            if model is not None and manifest.get("model") != model:
                raise IndexMismatch(f"the index at {folder} was built with embedding model "
                                    f"{manifest.get('model')!r}, not {model!r}: {REBUILD_HINT}")
            import faiss

            # one query at a time: OpenMP threads only add waiting on a busy 2-core machine
            faiss.omp_set_num_threads(1)
            units = [UnitRecord(**u) for u in json.loads((folder / "units.json").read_text())]
            chunks = json.loads((folder / "chunks.json").read_text())
            vectors = faiss.read_index(str(folder / "vectors.faiss"))
            bm25 = {name: np.load(folder / f"bm25_{name}.npy") for name in ("data", "indices", "indptr")}
            vocab = json.loads((folder / "vocab.json").read_text())
            offsets = np.load(folder / "text_offsets.npy")
        except (IndexMismatch, IndexMissing):
            raise
        except Exception as exc:  # noqa: BLE001 - any unreadable file means a corrupt index
            raise IndexError_(f"the index at {folder} is corrupt or incomplete "
                              f"({type(exc).__name__}): {REBUILD_HINT}") from exc
        n = len(chunks["unit"])
        if vectors.ntotal != n or vectors.d != manifest.get("dim") or len(offsets) != n + 1:
            raise IndexError_(f"the index at {folder} is inconsistent (vectors {vectors.ntotal}, "
                              f"chunks {n}): {REBUILD_HINT}")
        return cls(folder, manifest, units, np.asarray(chunks["unit"], dtype=np.int32),
                   chunks["hash"], vectors, bm25, vocab, offsets)

    # ---- search primitives ----------------------------------------------------------------

    def lexical_scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every chunk for the distinct query tokens."""
        scores = np.zeros(len(self.chunk_unit), dtype=np.float32)
        data, indices, indptr = self.bm25["data"], self.bm25["indices"], self.bm25["indptr"]
        for token in dict.fromkeys(tokens):
            t = self.vocab.get(token)
            if t is None:
                continue
            lo, hi = indptr[t], indptr[t + 1]
            scores[indices[lo:hi]] += data[lo:hi]  # a posting list names each chunk once
        return scores

    def unit_max(self, chunk_scores: np.ndarray) -> np.ndarray:
        """Per unit, the best score of its chunks (a unit's chunks are contiguous rows)."""
        if not len(chunk_scores):
            return np.zeros(len(self.units), dtype=np.float32)
        return np.maximum.reduceat(chunk_scores, self.unit_starts).astype(np.float32)

    def dense_search(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, self.vectors.ntotal)
        if k <= 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        scores, rows = self.vectors.search(np.asarray(vector, dtype=np.float32).reshape(1, -1), k)
        keep = rows[0] >= 0
        return scores[0][keep], rows[0][keep]

    def chunk_text(self, row: int) -> str:
        with self._texts_lock:
            if self._texts is None:
                self._texts = open(self.folder / "texts.jsonl", "rb")  # noqa: SIM115 - kept open for reads
            self._texts.seek(int(self.offsets[row]))
            line = self._texts.readline()
        return json.loads(line)
