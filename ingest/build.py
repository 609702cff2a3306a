"""Build or update an index from units: embed only what changed, swap the new index in atomically.

Unchanged chunks (same text, same model) reuse their vectors from the previous index, and a text
that occurs in several chunks is embedded once, so re-ingesting an unchanged KB embeds nothing and
never loads sentence-transformers. Embedding runs the int8 model on OpenVINO where the CPU has
int8 dot-product instructions (ingest.openvino_encoder; elsewhere, or without OpenVINO,
onnxruntime's int8 copy of the ONNX export), longest texts
first so the progress bar's ETA errs on the long side. Finished batches are checkpointed
next to the index (`.<index>.embedded/`): an interrupted build, run again, embeds only what was
not finished. The new index is written to a temporary folder and renamed into place; an
interrupted build leaves the previous index as it was. An index this code built from the same units
(the manifest's unit hashes and builder fingerprint) is left untouched: re-ingesting an unchanged KB
only reads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from assistant.embed import ENCODER_CONFIG, INGEST_ONNX_FILE, ONNX_FILE, TOKENIZER_FILE
from assistant.errors import AssistantError
from assistant.index import FORMAT_VERSION, Index, vector_index
from assistant.text import tokenize
from ingest.documents import Unit
from ingest.openvino_encoder import OPENVINO_FILE, OPENVINO_FILES, OpenVinoIngestEncoder
from ingest.openvino_encoder import available as openvino_available
from ingest.openvino_encoder import int8_dot_product_cpu


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


# How chunk vectors are made. Vectors of an index made another way are embedded again, not reused:
# before this, onnxruntime's int8 copy ran texts in batches, and its per-run activation scales
# made a chunk's vector depend on its batch-mates (assistant.embed.OnnxIngestEncoder).
VECTOR_RECIPE = "one-text-per-run"


def _previous_vectors(index_dir: Path, model: str, old_manifest: dict) -> dict[str, np.ndarray]:
    if old_manifest.get("vectors") != VECTOR_RECIPE:
        return {}
    try:
        old = Index.load(index_dir, model)
    except AssistantError:
        return {}
    vectors = old.vectors.reconstruct_n(0, old.vectors.ntotal) if old.vectors.ntotal else []
    return {h: vectors[i] for i, h in enumerate(old.chunk_hashes)}


EMBED_STEP = 64            # chunks per encoder call (and progress-bar update)
CHECKPOINT_CHUNKS = 512   # chunks embedded between two checkpoint writes


class _Checkpoint:
    """Vectors of finished embedding batches, kept beside the index until the build succeeds."""

    def __init__(self, index_dir: Path):
        self.folder = index_dir.with_name(f".{index_dir.name}.embedded")
        self.parts = 0

    def load(self) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for part in sorted(self.folder.glob("part-*.npz")) if self.folder.is_dir() else []:
            try:
                with np.load(part) as data:
                    found.update(zip(data["hashes"].tolist(), data["vectors"]))
            except (OSError, ValueError, KeyError):
                continue   # a part cut short by the interruption: its chunks are embedded again
            self.parts += 1
        return found

    def save(self, hashes: list[str], vectors: np.ndarray) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / f"part-{self.parts:06d}-{os.getpid()}.npz"
        partial = target.with_suffix(".partial")
        with open(partial, "wb") as out:
            np.savez(out, hashes=np.asarray(hashes), vectors=vectors.astype(np.float32))
        os.replace(partial, target)   # a part exists whole or not at all
        self.parts += 1

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _write_lexical(folder: Path, texts: list[str]) -> None:
    import bm25s

    retriever = bm25s.BM25()
    corpus = [tokenize(t) or ["<empty>"] for t in texts]
    retriever.index(corpus, show_progress=False)
    for name in ("data", "indices", "indptr"):
        np.save(folder / f"bm25_{name}.npy", np.asarray(retriever.scores[name]))
    (folder / "vocab.json").write_text(json.dumps(retriever.vocab_dict))


# the code whose output the index files are: a change to any of them rebuilds an unchanged corpus
_BUILDER_SOURCES = ("ingest/build.py", "ingest/documents.py", "assistant/index.py", "assistant/text.py")


def _builder_fingerprint() -> str:
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in _BUILDER_SOURCES:
        try:
            digest.update((root / name).read_bytes())
        except OSError:
            digest.update(name.encode())
    return digest.hexdigest()[:16]


_INDEX_FILES = ("vectors.faiss", "bm25_data.npy", "bm25_indices.npy", "bm25_indptr.npy", "vocab.json",
                "texts.jsonl", "text_offsets.npy", "units.json", "chunks.json")


def _file_stamps(folder: Path) -> dict[str, list[int]] | None:
    """Size and modification time of each index file; None if one is missing."""
    stamps = {}
    for name in (*_INDEX_FILES, ONNX_FILE, INGEST_ONNX_FILE, *OPENVINO_FILES, TOKENIZER_FILE, ENCODER_CONFIG):
        try:
            stat = (folder / name).stat()
        except OSError:
            if name in _INDEX_FILES:
                return None
            continue
        stamps[name] = [stat.st_size, stat.st_mtime_ns]
    return stamps


def _unchanged(index_dir: Path, old_manifest: dict, model: str, records: list[dict], builder: str,
               kb_stamp: str | None) -> bool:
    """The index at `index_dir` was built by this code from exactly these units (a unit's hash
    covers its chunks, in order) and KB files, and none of its files was removed or rewritten
    since (a corrupt file is rebuilt): nothing to do."""
    return (old_manifest.get("format") == FORMAT_VERSION and old_manifest.get("model") == model
            and old_manifest.get("kb_stamp") == kb_stamp
            and list(old_manifest.get("units", {}).items()) == [(r["id"], r["hash"]) for r in records]
            and old_manifest.get("builder") == builder
            and old_manifest.get("files") is not None and _file_stamps(index_dir) == old_manifest["files"])


def build_index(index_dir: Path, units: list[Unit], model: str, progress: bool = True,
                encoder=None, kb_stamp: str | None = None) -> BuildStats:
    """Write the index for `units` at `index_dir`, reusing vectors of unchanged chunks; an index
    built by this code from the same units is left as it is. `kb_stamp` (`assistant.resources.
    kb_stamp` of the KB folder) is kept in the manifest, so that a query can tell the KB changed since."""
    started = time.perf_counter()
    index_dir = Path(index_dir)
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    old_manifest = {}
    if (index_dir / "manifest.json").exists():
        try:
            old_manifest = json.loads((index_dir / "manifest.json").read_text())
        except ValueError:
            old_manifest = {}

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
    builder = _builder_fingerprint()
    removed = len(set(old_manifest.get("units", {})) - seen_ids)
    if _unchanged(index_dir, old_manifest, model, records, builder, kb_stamp):
        _Checkpoint(index_dir).remove()
        return BuildStats(units=len(records), chunks=len(texts), embedded=0, reused=len(texts),
                          seconds=time.perf_counter() - started, embed_seconds=0.0, removed_units=removed)
    previous = _previous_vectors(index_dir, model, old_manifest)

    checkpoint = _Checkpoint(index_dir)
    previous.update(checkpoint.load())
    missing = [i for i, h in enumerate(hashes) if h not in previous]
    first_row: dict[str, int] = {}   # a text in several chunks (quoted logs, bot replies) is embedded once
    for i in missing:
        first_row.setdefault(hashes[i], i)
    todo = sorted(first_row.values(), key=lambda i: -len(texts[i]))
    embed_seconds = 0.0
    dim = old_manifest.get("dim") if old_manifest.get("model") == model else None

    _remove_stale_builds(index_dir)
    tmp = index_dir.with_name(f".{index_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        onnx = _query_encoder(index_dir, tmp, old_manifest, model, encoder, progress=progress)
        vectors = np.zeros((len(texts), dim or 0), dtype=np.float32) if dim else None
        if todo or dim is None:
            if encoder is None:
                encoder = _ingest_encoder(tmp, model, progress)
            dim = encoder.dim
            vectors = np.zeros((len(texts), dim), dtype=np.float32)
            t0 = time.perf_counter()
            bar = None
            if progress and len(todo) > 64:
                from tqdm import tqdm

                # a first build embeds the whole KB: a few minutes on a small CPU, once
                print(f"Embedding {len(todo)} chunks once for the search index (minutes on a CPU; later runs "
                      "reuse it) ...", file=sys.stderr)
                bar = tqdm(total=len(todo), desc="Embedding chunks", unit="chunk", file=sys.stderr)
            unsaved: list[int] = []
            for start in range(0, len(todo), EMBED_STEP):
                rows = todo[start: start + EMBED_STEP]
                vectors[rows] = encoder.encode([texts[i] for i in rows])
                unsaved += rows
                if len(unsaved) >= CHECKPOINT_CHUNKS and start + EMBED_STEP < len(todo):
                    checkpoint.save([hashes[i] for i in unsaved], vectors[unsaved])
                    unsaved = []
                if bar:
                    bar.update(len(rows))
            if bar:
                bar.close()
            embed_seconds = time.perf_counter() - t0
        for i, h in enumerate(hashes):
            if h in previous:
                vectors[i] = previous[h]
            elif first_row.get(h, i) != i:
                vectors[i] = vectors[first_row[h]]
        del previous

        faiss = _faiss()
        faiss.write_index(vector_index(vectors, dim), str(tmp / "vectors.faiss"))
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
        manifest = {
            "format": FORMAT_VERSION, "model": model, "dim": dim, "onnx": onnx, "vectors": VECTOR_RECIPE,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "chunks": len(texts),
            "units": {r["id"]: r["hash"] for r in records},
            "builder": builder, "files": _file_stamps(tmp), "kb_stamp": kb_stamp,
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        _swap_in(tmp, index_dir)
        checkpoint.remove()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return BuildStats(units=len(records), chunks=len(texts), embedded=len(todo),
                      reused=len(texts) - len(missing), seconds=time.perf_counter() - started,
                      embed_seconds=embed_seconds, removed_units=removed)


def _faiss():
    import faiss

    return faiss


def _query_encoder(index_dir: Path, tmp: Path, old_manifest: dict, model: str, encoder,
                   progress: bool = False) -> bool:
    """Carry the ONNX export (with its int8 copies) over from the previous index, or export it
    now: in a child process, so torch's ~0.5 GB never counts against this build's memory."""
    files = (ONNX_FILE, TOKENIZER_FILE, ENCODER_CONFIG)
    if old_manifest.get("model") == model and all((index_dir / f).exists() for f in files):
        for f in (*files, INGEST_ONNX_FILE, *OPENVINO_FILES):
            if (index_dir / f).exists():
                os.link(index_dir / f, tmp / f) if _same_device(index_dir, tmp) else shutil.copy2(index_dir / f, tmp / f)
        if not (tmp / INGEST_ONNX_FILE).exists():
            from assistant.embed import quantize_export

            # an index from before the int8 encoder: queries run it (and ingest without OpenVINO)
            quantize_export(tmp)
        _quantize_for_openvino(tmp, encoder, progress)
        return True
    export = getattr(encoder, "export_onnx", None) if encoder is not None else None
    if export is not None:
        return bool(export(tmp))
    if encoder is not None:
        return False
    if progress:
        print(f"Exporting embedding model {model} to ONNX (once per index) ...", file=sys.stderr)
    child = _in_child("from assistant.embed import export_encoder; "
                      "sys.exit(0 if export_encoder(sys.argv[1], sys.argv[2]) else 3)", model, str(tmp))
    if child.returncode not in (0, 3) and "ModelNotFound" in child.stderr:
        from assistant.embed import SentenceTransformerEncoder

        SentenceTransformerEncoder(model)   # raises the one-line ModelNotFound for the user
    exported = child.returncode == 0 and (tmp / ONNX_FILE).exists()
    if exported:
        _quantize_for_openvino(tmp, encoder, progress)
    return exported


def _quantize_for_openvino(tmp: Path, encoder, progress: bool) -> None:
    """The OpenVINO int8 model, once per export (an index from before it gets it now); a failure
    leaves ingest on onnxruntime's copy."""
    if encoder is not None or (tmp / OPENVINO_FILE).exists() or not _openvino_is_faster():
        return
    if progress:
        print("Quantizing the embedding model for OpenVINO (once per index) ...", file=sys.stderr)
    _in_child("from ingest.openvino_encoder import export_openvino; "
              "sys.exit(0 if export_openvino(sys.argv[1]) else 3)", str(tmp))


def _openvino_is_faster() -> bool:
    """OpenVINO's int8 model is the fast ingest path where it is installed and the CPU has int8
    dot-product instructions; elsewhere onnxruntime's copy is (ingest.openvino_encoder)."""
    return openvino_available() and int8_dot_product_cpu()


def _in_child(code: str, *args: str) -> subprocess.CompletedProcess:
    """Run an export step in a child process: torch and the quantizer never enter this build's
    memory."""
    return subprocess.run([sys.executable, "-c", "import sys; " + code, *args],
                          cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True)


def _ingest_encoder(tmp: Path, model: str, progress: bool):
    """The OpenVINO int8 encoder when it was quantized, else onnxruntime's int8 copy of the
    export, else sentence-transformers."""
    if (tmp / OPENVINO_FILE).exists() and _openvino_is_faster():
        try:
            return OpenVinoIngestEncoder(tmp)
        except Exception:  # noqa: BLE001 - a model OpenVINO cannot compile here: onnxruntime embeds
            pass
    if (tmp / ONNX_FILE).exists():
        from assistant.embed import OnnxIngestEncoder

        return OnnxIngestEncoder(tmp)
    if progress:
        print(f"Loading embedding model {model} ...", file=sys.stderr)
    from assistant.embed import SentenceTransformerEncoder

    return SentenceTransformerEncoder(model)


def _remove_stale_builds(index_dir: Path) -> None:
    """Temporary folders of builds that were killed outright (no `finally` ran)."""
    for stale in index_dir.parent.glob(f".{index_dir.name}.tmp-*"):
        pid = stale.name.rsplit("-", 1)[-1]
        try:
            os.kill(int(pid), 0)
        except (ValueError, ProcessLookupError):
            shutil.rmtree(stale, ignore_errors=True)
        except PermissionError:
            pass   # another user's live process


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
