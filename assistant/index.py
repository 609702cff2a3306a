"""The on-disk index: what `ask ingest` writes and every query reads.

Layout of an index folder:
    manifest.json         format version, embedding model, dimension, per-unit content hashes
    units.json            the units (entries, documents, issues) with their data
    chunks.json           chunk -> unit row, chunk content hash
    texts.jsonl           chunk texts, read lazily through text_offsets.npy
    vectors.faiss         one normalised vector per chunk (inner product = cosine): exact (flat)
                          search up to IVF_MIN_CHUNKS chunks, an inverted-file index past that
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

# Exact search costs ~0.07 ms per 1,000 chunks (3.5 ms at 50k, 35 ms at 500k). Past IVF_MIN_CHUNKS
# the vectors are split into ~sqrt(n) k-means cells and a query scans the 1/4 of cells nearest to
# it: ~0.8 ms at 50k on a shared 2-core machine, finding 99% of the exact top 10 (`python -m evals
# bench`; scanning 1/8 found 98% once the KB grew to 315 entries, and 1/6 found 97% at 467 entries,
# whose vectors the bench blends).
# HNSW was measured too: with many near-duplicate chunks (the same error reported again and
# again) it found 95-98% of the exact top 10 at twice the cost.
IVF_MIN_CHUNKS = 40_000
IVF_PROBED_SHARE = 4   # a query scans 1/4 of the cells
# A token in more chunks than this ("error", "cuda" in a big issue corpus) adds only its
# IMPACT_HEAD strongest postings to every chunk's score, then the RESCORED best chunks get the
# rest of their exact score: a query no longer walks hundreds of thousands of postings. Below
# the cut-off one numpy scatter-add (~1 ms per 50k postings) is cheaper than the bookkeeping.
COMMON_TOKEN_POSTINGS = 100_000
IMPACT_HEAD = 4_000
RESCORED = 2_000
UNIT_TOKEN_CACHE = 4_096   # units whose token sets stay cached (entries are asked again and again)


def vector_index(vectors: np.ndarray, dim: int):
    """The FAISS index for these normalised vectors: flat (exact) or IVF past IVF_MIN_CHUNKS."""
    import os

    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if len(vectors) < IVF_MIN_CHUNKS:
        index = faiss.IndexFlatIP(dim)
    else:
        faiss.omp_set_num_threads(os.cpu_count() or 1)   # training uses every core
        cells = int(np.sqrt(len(vectors)))
        # the factory's index owns its quantizer (one built in Python is freed under it)
        index = faiss.index_factory(dim, f"IVF{cells},Flat", faiss.METRIC_INNER_PRODUCT)
        sample = np.random.default_rng(0).choice(len(vectors), min(len(vectors), cells * 64), replace=False)
        index.train(vectors[np.sort(sample)])
        index.nprobe = max(1, cells // IVF_PROBED_SHARE)
    if len(vectors):
        index.add(vectors)
    return _with_direct_map(index)


def _with_direct_map(index):
    """An IVF index answers reconstruct(row) (reused vectors, exact cosines of KB chunks) only
    with its row -> cell map."""
    import faiss

    if hasattr(index, "nprobe"):
        ivf = faiss.extract_index_ivf(index)
        if ivf.direct_map.type == faiss.DirectMap.NoMap:
            ivf.make_direct_map()
    return index


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
        self._heads: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}   # see _impact_head
        self._unit_tokens: dict[int, frozenset] = {}   # see unit_tokens

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
            vectors = _with_direct_map(vectors)   # read_index returns the concrete type already
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
        """BM25 score of every chunk for the distinct query tokens (exact for the best chunks;
        see COMMON_TOKEN_POSTINGS)."""
        scores = np.zeros(len(self.chunk_unit), dtype=np.float32)
        data, indices, indptr = self.bm25["data"], self.bm25["indices"], self.bm25["indptr"]
        common = []
        for token in dict.fromkeys(tokens):
            t = self.vocab.get(token)
            if t is None:
                continue
            lo, hi = indptr[t], indptr[t + 1]
            if hi - lo > COMMON_TOKEN_POSTINGS:
                rows, values, _ = self._impact_head(t)
                scores[rows] += values
                common.append(t)
            else:
                scores[indices[lo:hi]] += data[lo:hi]  # a posting list names each chunk once
        if common and len(scores) > RESCORED:
            # partition the negated scores: with most chunks at 0, selecting from the top end
            # of the unnegated array measured 43 ms against 4 ms at 500k chunks
            best = np.argpartition(-scores, RESCORED)[:RESCORED]
            for t in common:   # what the head left out, for the best chunks only
                lo, hi = indptr[t], indptr[t + 1]
                rows, values = indices[lo:hi], data[lo:hi]   # rows ascending within a column
                at = np.minimum(np.searchsorted(rows, best), len(rows) - 1)
                left_out = (rows[at] == best) & (values[at] < self._impact_head(t)[2])
                scores[best[left_out]] += values[at[left_out]]
        return scores

    def _impact_head(self, t: int) -> tuple[np.ndarray, np.ndarray, float]:
        """A common token's strongest postings: (rows, scores) of every posting scoring at least
        its IMPACT_HEAD-th best, and that threshold (cached: computed once per token)."""
        head = self._heads.get(t)
        if head is None:
            lo, hi = self.bm25["indptr"][t], self.bm25["indptr"][t + 1]
            values = self.bm25["data"][lo:hi]
            threshold = float(np.partition(values, len(values) - IMPACT_HEAD)[len(values) - IMPACT_HEAD])
            strongest = np.flatnonzero(values >= threshold)   # ties at the threshold all go in
            head = self._heads[t] = (self.bm25["indices"][lo:hi][strongest], values[strongest], threshold)
        return head

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

    def unit_tokens(self, unit_row: int) -> frozenset:
        """Every lexical token of a unit's chunks (read and tokenised once per unit: the decision
        asks it of the same few entries query after query)."""
        tokens = self._unit_tokens.get(unit_row)
        if tokens is None:
            from assistant.text import tokenize

            found: set[str] = set()
            for row in self.units[unit_row].chunk_rows:
                found.update(tokenize(self.chunk_text(row)))
            tokens = self._unit_tokens[unit_row] = frozenset(found)
            if len(self._unit_tokens) > UNIT_TOKEN_CACHE:   # issues: a corpus of 100k units
                with self._texts_lock:
                    self._unit_tokens.pop(next(iter(self._unit_tokens)), None)
        return tokens

    def chunk_text(self, row: int) -> str:
        with self._texts_lock:
            if self._texts is None:
                self._texts = open(self.folder / "texts.jsonl", "rb")  # noqa: SIM115 - kept open for reads
            self._texts.seek(int(self.offsets[row]))
            line = self._texts.readline()
        return json.loads(line)
