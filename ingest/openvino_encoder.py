"""The ingest encoder on OpenVINO: the exported MiniLM with weights and activations in int8.

onnxruntime's int8 copy (assistant.embed) quantizes the weights only and keeps attention in its
own op: about twice the chunks per second of sentence-transformers here. OpenVINO runs a model
quantized whole by NNCF (post-training, calibrated on activations) on the CPU's int8 units (VNNI,
AMX where there is one): on a CPU with those units, four to five times sentence-transformers'
chunks per second, with vectors closer to the reference model's (cosine >= 0.99, measured by
`python -m evals bench` on a Xeon with VNNI); on an AVX2-only CPU it is slower than onnxruntime's
copy and is not used. Queries still run onnxruntime (`ask` starts in half the time without
OpenVINO's import and compile); their vectors agree with these to the same cosine.

The calibration texts are generated SGLang issue threads with a fixed seed (ingest.github_synth),
not the corpus being indexed: the quantized model, and so every vector, is the same whatever the
KB holds. Without openvino and nncf, on a CPU without int8 dot-product instructions (VNNI, AMX),
or if quantizing fails, ingest embeds with onnxruntime's copy.
"""

from __future__ import annotations

import importlib.util
import json
import os
import warnings
from pathlib import Path

import numpy as np

from assistant.embed import ENCODER_CONFIG, ONNX_FILE, TOKENIZER_FILE, encoder_inputs, pool

OPENVINO_FILE = "ingest_encoder_ov_int8.xml"
OPENVINO_WEIGHTS = "ingest_encoder_ov_int8.bin"
OPENVINO_FILES = (OPENVINO_FILE, OPENVINO_WEIGHTS)
CALIBRATION_SEED = 11      # not the seed the bench measures on (5)
CALIBRATION_ISSUES = 48     # their chunks: ~100 texts, 27 batches
CALIBRATION_BATCH = 4
BATCH = 4                  # small batches of similar length: measured faster than 16 or 64 here


# x86 flags of int8 dot-product instructions (/proc/cpuinfo): one instruction per 4 int8 products
INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})


def available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("openvino", "nncf"))


def int8_dot_product_cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """The CPU multiplies int8 in one instruction (VNNI, AMX), which OpenVINO's int8 model needs to
    be the fast path. Without it (AVX2 only: AMD Zen 2/3, Intel before Cascade Lake) OpenVINO
    emulates int8 and onnxruntime's copy is faster: on an AVX2 EPYC, 31.6 chunks/s against 21.2
    (and OpenVINO's float model 23.5). Unknown (no /proc/cpuinfo, another architecture): no."""
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return bool(INT8_DOT_FLAGS & set(line.partition(":")[2].split()))
    except OSError:
        pass
    return False


def calibration_texts() -> list[str]:
    """Chunks of generated issue threads (tracebacks, env dumps, prose, replies), all lengths."""
    from ingest.github.units import issue_unit
    from ingest.github_synth import generate

    texts: list[str] = []
    for record in generate(CALIBRATION_ISSUES, CALIBRATION_SEED):
        unit = issue_unit("sgl-project/sglang", record)
        texts += unit.chunks if unit else []
    return texts


def _tokenizer(folder: Path):
    from tokenizers import Tokenizer

    config = json.loads((folder / ENCODER_CONFIG).read_text())
    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
    tokenizer.enable_truncation(config["max_seq_length"])   # what sentence-transformers keeps
    # lengths padded to a multiple of 32: OpenVINO keeps buffers for every input shape it has run,
    # and one shape per token length grew a build to 3 GB (a multiple of 16: 360 MB). Fewer shapes
    # also run faster (chunks/s at multiples of 8 / 16 / 32 / 64 / 128: 85 / 93 / 94-99 / 96 / 93);
    # padding is masked out of attention and pooling, so the vectors do not change
    tokenizer.enable_padding(pad_to_multiple_of=32)
    return tokenizer, config["pooling"]


def export_openvino(folder: Path) -> bool:
    """Quantize the float export in `folder` to the OpenVINO int8 model; False if that fails."""
    folder = Path(folder)
    if not available() or not (folder / ONNX_FILE).exists():
        return False
    try:
        import logging

        import nncf
        import openvino as ov

        logging.getLogger("nncf").setLevel(logging.ERROR)
        tokenizer, _ = _tokenizer(folder)
        texts = sorted(calibration_texts(), key=len)
        batches = [encoder_inputs(tokenizer, texts[i: i + CALIBRATION_BATCH])
                   for i in range(0, len(texts), CALIBRATION_BATCH)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = ov.Core().read_model(str(folder / ONNX_FILE))
            quantized = nncf.quantize(model, nncf.Dataset(batches), model_type=nncf.ModelType.TRANSFORMER,
                                      subset_size=len(batches))
            ov.save_model(quantized, str(folder / OPENVINO_FILE))
        return True
    except Exception:  # noqa: BLE001 - any quantizer failure means "embed with onnxruntime"
        for name in OPENVINO_FILES:
            (folder / name).unlink(missing_ok=True)
        return False


class OpenVinoIngestEncoder:
    """Normalised sentence vectors from the OpenVINO int8 model, one inference stream per core."""

    def __init__(self, folder: Path, threads: int | None = None):
        import openvino as ov

        # tokenizers' own thread pool and OpenVINO's both alive at interpreter exit abort the
        # process now and then (1 run in 5 here); batches of 4 gain nothing from that pool
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        folder = Path(folder)
        self.tokenizer, self.pooling = _tokenizer(folder)
        streams = max(1, threads or os.cpu_count() or 1)
        core = ov.Core()
        self.model = core.compile_model(str(folder / OPENVINO_FILE), "CPU", {
            "PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": str(streams),
            "INFERENCE_NUM_THREADS": str(streams)})
        self.streams = streams
        self.dim = int(self.model.output(0).get_partial_shape()[-1].get_length())

    def encode(self, texts: list[str], batch_size: int = BATCH) -> np.ndarray:
        """Vectors in the order of `texts`; sorted by length first so a batch is padded to about
        its own length, with one batch per stream in flight while the next is tokenized.

        Each stream's request is waited for and read here, on this thread: no Python callback
        runs on OpenVINO's threads, which aborted the process now and then while a finished
        encoder was torn down (a native abort, no Python frame, seen mid-suite on a VNNI CPU)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        requests = [self.model.create_infer_request() for _ in range(self.streams)]
        in_flight: list[list[int] | None] = [None] * self.streams

        def collect(slot: int) -> None:
            request = requests[slot]
            request.wait()
            mask = request.get_tensor("attention_mask").data
            out[in_flight[slot]] = pool(request.get_output_tensor(0).data, mask, self.pooling)
            in_flight[slot] = None

        for number, start in enumerate(range(0, len(order), batch_size)):
            rows = order[start: start + batch_size]
            inputs = encoder_inputs(self.tokenizer, [texts[i] for i in rows])  # while the streams run
            slot = number % self.streams   # the oldest request: batches only grow longer
            if in_flight[slot] is not None:
                collect(slot)
            requests[slot].start_async(inputs)
            in_flight[slot] = rows
        for slot in range(self.streams):
            if in_flight[slot] is not None:
                collect(slot)
        return out

