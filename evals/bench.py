"""`python -m evals bench`: speed and memory figures, each printed with its target.

1. `ask` in a new process (extractive, shipped KB): median wall time, and the ratio to the naive
   path measured in the same run (a process that imports sentence-transformers and llama-index,
   loads the model and the index, and retrieves).
2. A long-running process (UI, Slack) with 50,000 indexed chunks: retrieval + extractive answer
   p50 / p95, and resident memory.
3. Ingest: chunks embedded per second; re-ingesting an unchanged KB.
4. LLM mode (when llama.cpp's server and the SmolLM2 model are installed): prompt size and time to
   the first streamed token.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUERY = ("[2025-06-01 10:00:00 TP0] RuntimeError: CUDART error: peer access is not supported between "
         "these two devices")
NAIVE = r"""
import sys, time
from pathlib import Path
from sentence_transformers import SentenceTransformer
import llama_index.core  # noqa: F401  the framework a naive RAG process would load
from assistant.embed import resolve_model
from assistant.index import Index
model = SentenceTransformer(resolve_model(None), device="cpu")
index = Index.load(Path(sys.argv[1]))
vec = model.encode([sys.argv[2]], normalize_embeddings=True)
scores, rows = index.dense_search(vec[0], 5)
print(index.units[index.chunk_unit[rows[0]]].id)
"""


def _env(**extra) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", ASK_NO_LLM="1")
    env.update(extra)
    return env


def _timed(cmd: list[str], env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, check=True)
    return time.perf_counter() - started


def bench_cli(index_dir: Path, runs: int) -> dict:
    env = _env(ASK_INDEX_DIR=str(index_dir))
    ask = [sys.executable, "-m", "ui.cli", "--no-llm", QUERY]
    _timed(ask, env)  # warm the page cache once
    ask_times = [_timed(ask, env) for _ in range(runs)]
    naive = [sys.executable, "-c", NAIVE, str(index_dir), QUERY]
    naive_times = [_timed(naive, env) for _ in range(max(2, runs // 3))]
    median_ask, median_naive = statistics.median(ask_times), statistics.median(naive_times)
    return {"ask_median_s": round(median_ask, 3), "ask_runs": [round(t, 3) for t in ask_times],
            "naive_median_s": round(median_naive, 3), "ratio": round(median_ask / median_naive, 3)}


def _synthetic_units(n_chunks: int, seed: int = 7):
    """Realistic-looking troubleshooting chunks (log lines, flags, prose) for scale tests."""
    from ingest.documents import Unit

    rng = random.Random(seed)
    errors = ["RuntimeError: CUDA error: an illegal memory access was encountered",
              "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 GiB",
              "NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:{n}, unhandled system error",
              "KVTransferError(bootstrap_room={n}): Request {n} timed out after 300.0s in KVPoll.Bootstrapping",
              "ValueError: Model architectures ['Foo{n}ForCausalLM'] are not supported for now.",
              "AssertionError: num_max_dispatch_tokens_per_rank {n}", "ImportError: libfoo{n}.so: cannot open shared object file"]
    words = ("scheduler decode prefill batch token cache radix memory pool tensor parallel rank node "
             "driver kernel cuda graph capture flashinfer triton mooncake router worker health timeout "
             "quantization fp8 awq expert deepep nvshmem rdma socket gloo launch server model weights").split()
    flags = ["--tp-size", "--dp-size", "--mem-fraction-static", "--chunked-prefill-size", "--enable-dp-attention",
             "--attention-backend", "--cuda-graph-max-bs", "--disaggregation-mode"]
    units, per_unit = [], 4
    for u in range(n_chunks // per_unit):
        chunks = []
        for _ in range(per_unit):
            line = rng.choice(errors).format(n=rng.randint(1, 9999))
            prose = " ".join(rng.choice(words) for _ in range(rng.randint(40, 120)))
            chunks.append(f"{line}\n{prose} {rng.choice(flags)} {rng.randint(1, 64)}")
        units.append(Unit(id=f"synthetic:{u}", kind="doc", title=f"Synthetic report {u}", chunks=chunks,
                          meta={"path": f"synthetic/{u}.md"}))
    return units


class _RandomEncoder:
    """Random unit vectors: FAISS search cost does not depend on what the vectors mean, and
    embedding 50,000 chunks on 2 CPU cores would dominate the benchmark."""

    dim = 384

    def __init__(self):
        import numpy as np

        self.rng = np.random.default_rng(0)

    def encode(self, texts):
        import numpy as np

        v = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


SCALE_PROBE = r"""
import json, statistics, sys, time
from pathlib import Path
from assistant.config import Settings
from assistant.pipeline import Assistant
s = Settings.from_env().with_options(index_dir=Path(sys.argv[1]), use_llm=False)
a = Assistant.from_settings(s)
queries = json.loads(Path(sys.argv[2]).read_text())
for q in queries[:5]:
    a.answer(q)
times = []
for q in queries:
    t = time.perf_counter(); a.answer(q); times.append((time.perf_counter() - t) * 1000)
times.sort()
# VmHWM is this process's own peak; ru_maxrss would carry the parent's peak across exec on Linux
peak_kb = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
print(json.dumps({"p50_ms": statistics.median(times), "p95_ms": times[int(len(times) * 0.95) - 1],
                  "maxrss_mb": peak_kb / 1024,
                  "units": len(a.retriever.index.units), "chunks": len(a.retriever.index.chunk_unit)}))
"""


def bench_scale(kb_units, n_chunks: int, workdir: Path) -> dict:
    from ingest.build import build_index

    index_dir = workdir / "scale-index"
    started = time.perf_counter()
    # the KB entries embedded for real, the synthetic bulk with random vectors (see _RandomEncoder)
    from assistant.embed import SentenceTransformerEncoder

    real = SentenceTransformerEncoder()
    build_index(index_dir, kb_units, "all-MiniLM-L6-v2", progress=False, encoder=real)
    build_index(index_dir, kb_units + _synthetic_units(n_chunks), "all-MiniLM-L6-v2", progress=False,
                encoder=_RandomEncoder())
    build_s = time.perf_counter() - started
    cases = [json.loads(line)["query"] for f in sorted((REPO / "evals" / "cases").glob("*.jsonl"))
             for line in f.read_text().splitlines() if line.strip()]
    queries = workdir / "queries.json"
    queries.write_text(json.dumps(cases[:200]))
    probe = subprocess.run([sys.executable, "-c", SCALE_PROBE, str(index_dir), str(queries)],
                           env=_env(), cwd=REPO, capture_output=True, text=True, check=True)
    result = json.loads(probe.stdout)
    size = sum(p.stat().st_size for p in index_dir.iterdir())
    result.update({"build_s": round(build_s, 1), "index_mb": round(size / 1e6, 1)})
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}


def bench_ingest(workdir: Path) -> dict:
    kb = workdir / "kb"
    shutil.copytree(REPO / "kb" / "entries", kb / "entries")
    env = _env(ASK_KB_DIR=str(kb))
    started = time.perf_counter()
    first = subprocess.run([sys.executable, "-m", "ui.cli", "ingest"], env=env, cwd=REPO,
                           capture_output=True, text=True, check=True)
    first_s = time.perf_counter() - started
    again = [_timed([sys.executable, "-m", "ui.cli", "ingest", "--quiet"], env) for _ in range(3)]
    line = [ln for ln in first.stderr.splitlines() if ln.startswith("Indexed")][-1]
    rate = line.rsplit(",", 1)[-1].strip() if "chunks/s" in line else "?"
    return {"first_ingest_s": round(first_s, 1), "embed_rate": rate, "summary": line,
            "reingest_unchanged_s": round(statistics.median(again), 2)}


def bench_llm() -> dict | None:
    """Prompt size (estimated tokens, against the budget) and time to the first streamed token
    from llama.cpp's server with SmolLM2 (the integration tests' SGLang stand-in)."""
    try:
        from tests.llamacpp import llama_server  # started the same way the integration test does
    except ImportError:
        return None
    try:
        with llama_server() as base_url:
            from assistant.config import Settings
            from assistant.llm import SGLangClient
            from assistant.pipeline import Assistant
            from assistant.prompt import PROMPT_BUDGET, build_prompt
            from assistant.trace import analyze
            from ingest.update import ingest_kb

            # a cold 1.4k-token prompt on 2 CPU cores takes a while: this measures, it does not time out
            settings = Settings.from_env().with_options(endpoint=base_url, timeout=600.0)
            client = SGLangClient.from_settings(settings)
            assistant = Assistant.from_settings(settings, build_index=ingest_kb)
            assistant.llm = client
            trace = "sglang 0.4.6\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
            retrieval = assistant.retrieve(analyze(trace))
            prompt = build_prompt(retrieval, assistant.retriever.index, assistant.registry)
            started = time.perf_counter()
            answer = assistant.answer(trace, use_llm=True)
            stats = client.last_stats
            return {"prompt_tokens_estimated": prompt.tokens.get("total"), "prompt_budget": PROMPT_BUDGET,
                    "ttft_s": round(stats.first_token_s, 2) if stats and stats.first_token_s else None,
                    "total_s": round(time.perf_counter() - started, 2), "mode": answer.mode,
                    "note": answer.note}
    except Exception as exc:  # noqa: BLE001 - the benchmark reports, it does not crash
        return {"error": f"{type(exc).__name__}: {exc}"}


def _line(name: str, value, target: str, ok: bool | None) -> str:
    mark = "" if ok is None else ("  ok" if ok else "  MISSED")
    return f"{name:<48}{str(value):>14}   target {target}{mark}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="new-process `ask` runs for the median")
    parser.add_argument("--chunks", type=int, default=50_000, help="indexed chunks for the scale figures")
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    from assistant.config import Settings
    from ingest import collect_units
    from ingest.update import ingest_kb

    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="ask-bench-") as tmp:
        workdir = Path(tmp)
        print("ingest ...", file=sys.stderr)
        figures["ingest"] = bench_ingest(workdir)
        settings = Settings.from_env({"ASK_KB_DIR": str(workdir / "kb")})
        ingest_kb(settings, progress=False)
        print("ask in a new process ...", file=sys.stderr)
        figures["cli"] = bench_cli(settings.index_dir, args.runs)
        print(f"scale: {args.chunks} chunks ...", file=sys.stderr)
        figures["scale"] = bench_scale(collect_units(settings.entries_dir), args.chunks, workdir)
    if not args.skip_llm:
        print("llm ...", file=sys.stderr)
        figures["llm"] = bench_llm()
    cli, scale, ing = figures["cli"], figures["scale"], figures["ingest"]
    print()
    print(_line("ask, new process, median (s)", cli["ask_median_s"], "<= 1.0", cli["ask_median_s"] <= 1.0))
    print(_line("naive path, new process, median (s)", cli["naive_median_s"], "(reference)", None))
    print(_line("ask / naive", cli["ratio"], "<= 0.2", cli["ratio"] <= 0.2))
    print(_line(f"retrieval+answer p50 at {scale['chunks']} chunks (ms)", round(scale["p50_ms"], 1), "<= 30", scale["p50_ms"] <= 30))
    print(_line(f"retrieval+answer p95 at {scale['chunks']} chunks (ms)", round(scale["p95_ms"], 1), "<= 80", scale["p95_ms"] <= 80))
    print(_line(f"resident memory at {scale['chunks']} chunks (MB)", round(scale["maxrss_mb"]), "<= 400", scale["maxrss_mb"] <= 400))
    print(_line("index size on disk at that size (MB)", scale["index_mb"], "(reported)", None))
    print(_line("ingest: embedding rate", ing["embed_rate"], "(reported)", None))
    print(_line("re-ingest of an unchanged KB (s)", ing["reingest_unchanged_s"], "<= 2", ing["reingest_unchanged_s"] <= 2))
    llm = figures.get("llm")
    if llm and "error" not in llm:
        print(_line("LLM mode: prompt tokens (estimated)", llm.get("prompt_tokens_estimated"),
                    f"<= {llm.get('prompt_budget')}", (llm.get("prompt_tokens_estimated") or 0) <= llm.get("prompt_budget", 0)))
        print(_line("LLM mode: time to first token, llama.cpp (s)", llm.get("ttft_s"), "(reported)", None))
        print(_line("LLM mode: total answer time (s)", llm.get("total_s"), "(reported)", None))
    elif llm:
        print(f"LLM mode: not measured ({llm['error']})")
    elif args.skip_llm:
        print("LLM mode: skipped (--skip-llm)")
    else:
        print("LLM mode: not measured (llama.cpp stand-in not installed)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0
