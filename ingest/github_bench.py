"""Scale benchmark for GitHub issues: generate N realistic issues, ingest them next to the curated KB,
then measure what a user waits for and what the machine holds.

    python -m ingest.github_bench --n 2000                 real MiniLM embeddings (the int8 encoder `ask ingest` uses)
    python -m ingest.github_bench --n 20000 --encoder hashed

Figures: import time, unit building (cold and cached), embedding throughput (chunks/s), total
build time, index size on disk, peak RSS of the build process, an incremental re-index after 100
issues change and 10 disappear (embedded chunks must equal the changed ones), and query latency
p50 / p95 over ~200 pastes through `Assistant.answer` in a fresh process (with its own peak RSS).

`--encoder hashed` embeds with a feature-hashing stand-in (thousands of chunks/s) so the costs that
do not depend on the model (store, units, BM25, FAISS size and search, memory, query latency) can be
measured at full scale on a small machine; queries still run the real ONNX MiniLM. Its retrieval
quality figures are meaningless and are not printed; the real encoder's throughput comes from a
`--encoder real` run, and the full-scale embedding time is extrapolated from it.
Each phase runs in its own process so peak RSS belongs to that phase (the one-time ONNX export runs
in a child process of the build and is not counted). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
REPO = "sgl-project/sglang"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _size_mb(folder: Path, skip_model: bool = False) -> float:
    """Size of a folder; skip_model leaves out the ONNX query encoder (~90 MB, the same at any N)."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*")
               if p.is_file() and not (skip_model and p.name.startswith("query_"))) / 1e6


class HashedEncoder:
    """A stand-in for MiniLM at ingest: token feature hashing into 384 dims, normalised. The ONNX
    query encoder is still exported from the real model, so queries cost what they really cost."""

    dim = 384

    def __init__(self, model: str):
        self.model = model

    def encode(self, texts: list[str]) -> np.ndarray:
        from assistant.text import tokenize

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in tokenize(text)[:512]:
                h = zlib.crc32(token.encode())
                out[i, h % self.dim] += 1.0 if h & 1 << 20 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def export_onnx(self, folder: Path) -> bool:
        from assistant.embed import SentenceTransformerEncoder

        return SentenceTransformerEncoder(self.model).export_onnx(folder)


# ---- phases (each in its own process) ----------------------------------------------------------

def phase_import(work: Path, n: int, seed: int) -> dict:
    from assistant.config import Settings
    from ingest.github.export import import_export
    from ingest.github.store import IssueStore, repo_folder
    from ingest.github_synth import write_export

    kb = work / "kb"
    shutil.rmtree(kb, ignore_errors=True)
    shutil.copytree(REPO_ROOT / "kb" / "entries", kb / "entries")
    export = work / "export.jsonl"
    t0 = time.perf_counter()
    write_export(export, n, seed)
    generated = time.perf_counter() - t0
    settings = Settings.from_env({"ASK_KB_DIR": str(kb)})
    store = IssueStore(repo_folder(settings, REPO))
    t0 = time.perf_counter()
    stats = import_export(store, REPO, export)
    return {"generate_s": round(generated, 1), "import_s": round(time.perf_counter() - t0, 1),
            "issues": stats.listed, "comments": stats.comments,
            "raw_cache_mb": round(store.issues_path.stat().st_size / 1e6, 1), "peak_rss_mb": round(_peak_rss_mb())}


def _build(work: Path, encoder_kind: str) -> dict:
    from assistant.config import Settings
    from ingest import collect_units
    from ingest.build import build_index
    from ingest.github.store import stored_issue_units

    settings = Settings.from_env({"ASK_KB_DIR": str(work / "kb")})
    t0 = time.perf_counter()
    issues = stored_issue_units(settings)
    units_s = time.perf_counter() - t0
    units = collect_units(settings.entries_dir, [settings.docs_dir], extra=issues)
    encoder = HashedEncoder(settings.embed_model) if encoder_kind == "hashed" else None
    stats = build_index(settings.index_dir, units, settings.embed_model, progress=sys.stderr.isatty(),
                        encoder=encoder)
    return {"units_s": round(units_s, 1), "units": stats.units, "issue_units": len(issues), "chunks": stats.chunks,
            "embedded": stats.embedded, "reused": stats.reused, "removed_units": stats.removed_units,
            "embed_s": round(stats.embed_seconds, 1), "build_s": round(stats.seconds, 1),
            "chunks_per_s": round(stats.chunks_per_second, 1), "index_mb": round(_size_mb(settings.index_dir), 1),
            "index_data_mb": round(_size_mb(settings.index_dir, skip_model=True), 1),
            "peak_rss_mb": round(_peak_rss_mb())}


def phase_build(work: Path, encoder_kind: str) -> dict:
    return _build(work, encoder_kind)


def phase_change(work: Path, changed: int, deleted: int, seed: int) -> dict:
    """What a sync of `changed` updated issues and `deleted` removed ones leaves in the store."""
    import random

    from assistant.config import Settings
    from ingest.build import chunk_hash
    from ingest.github.store import IssueStore, _record, _tombstone, repo_folder, stored_issue_units
    from ingest.github_synth import rest_comment

    settings = Settings.from_env({"ASK_KB_DIR": str(work / "kb")})
    store = IssueStore(repo_folder(settings, REPO))
    before = {chunk_hash(settings.embed_model, c) for u in stored_issue_units(settings) for c in u.chunks}
    numbers = sorted(store.updated_at())
    rng = random.Random(seed + 99)
    picked = rng.sample(numbers, changed + deleted)
    wanted = set(picked[:changed])
    records = {r["number"]: r for r in store.records() if r["number"] in wanted}
    for i, number in enumerate(picked[:changed]):
        record = records[number]
        when = "2026-01-01T00:%02d:%02dZ" % (i // 60 % 60, i % 60)
        record["comments"].append(rest_comment(number, 90_000_000 + i, f"Fixed by #{30000 + i}, released in 0.5.6.",
                                               "sched-lead", association="MEMBER", created=when))
        record["issue"].update(updated_at=when, comments=len(record["comments"]))
        store.append(_record(record["issue"], record["comments"]))
    for number in picked[changed:]:
        store.append(_tombstone(number, "deleted"))
    after = {chunk_hash(settings.embed_model, c) for u in stored_issue_units(settings) for c in u.chunks}
    return {"changed_issues": changed, "deleted_issues": deleted, "new_chunk_texts": len(after - before)}


def phase_query(work: Path, count: int, seed: int) -> dict:
    from assistant.config import Settings
    from assistant.pipeline import Assistant
    from ingest.github_synth import queries

    settings = Settings.from_env({"ASK_KB_DIR": str(work / "kb"), "ASK_NO_LLM": "1"})
    t0 = time.perf_counter()
    assistant = Assistant.from_settings(settings)
    load_s = time.perf_counter() - t0
    families = {}
    if (work / "families.json").exists():
        families = {int(k): v for k, v in json.loads((work / "families.json").read_text()).items()}
    cases = [(text, family, None) for text, family in queries(count * 3 // 4, seed)]
    for path in sorted((REPO_ROOT / "evals" / "cases").glob("*.jsonl")):   # real pastes, with expected KB entries
        for line in path.read_text().splitlines():
            case = json.loads(line)
            if len(cases) < count:
                cases.append((case["query"], None, case.get("expected_problem")))
    assistant.answer(cases[0][0])   # warm-up: ONNX session, caches
    latencies, same_family, kb_first, kb_cases, with_similar = [], [], 0, 0, 0
    for text, family, expected in cases:
        t0 = time.perf_counter()
        answer = assistant.answer(text)
        latencies.append((time.perf_counter() - t0) * 1000)
        with_similar += bool(answer.similar_issues)
        if family and families:
            listed = [families.get(m.meta.get("number")) for m in answer.similar_issues]
            same_family += [f == family for f in listed]
        if expected:
            kb_cases += 1
            kb_first += bool(answer.matches) and answer.matches[0].id == expected and not answer.abstained
    q = np.percentile(latencies, [50, 95])
    return {"queries": len(latencies), "load_s": round(load_s, 2), "p50_ms": round(float(q[0]), 1),
            "p95_ms": round(float(q[1]), 1), "max_ms": round(max(latencies), 1),
            "answers_with_similar_reports": round(with_similar / len(latencies), 3),
            "similar_reports_same_family": round(statistics.mean(same_family), 3) if same_family else None,
            "kb_cases": kb_cases, "kb_entry_first": kb_first, "peak_rss_mb": round(_peak_rss_mb())}


def _run_phase(*args: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "ingest.github_bench", "--phase", *args],
                            capture_output=True, text=True, cwd=REPO_ROOT,
                            env=os.environ | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    if result.returncode != 0:
        sys.exit(f"github_bench: phase {args[0]} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest.github_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="issues to generate (default 2000; 20000 for the scale run)")
    parser.add_argument("--encoder", choices=("real", "hashed"), default="real")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--changed", type=int, default=100, help="issues changed for the incremental run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, help="keep the corpus and index here (default: a temporary folder)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the figures as JSON")
    parser.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase:
        name, work, *rest = args.phase
        work = Path(work)
        result = {"import": lambda: phase_import(work, int(rest[0]), int(rest[1])),
                  "build": lambda: phase_build(work, rest[0]),
                  "change": lambda: phase_change(work, int(rest[0]), int(rest[1]), int(rest[2])),
                  "query": lambda: phase_query(work, int(rest[0]), int(rest[1]))}[name]()
        print(json.dumps(result))
        return 0

    work = args.workdir or Path(tempfile.mkdtemp(prefix="ask-github-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    figures: dict = {"n": args.n, "encoder": args.encoder, "cores": os.cpu_count(),
                     "load_avg_start": round(os.getloadavg()[0], 1)}
    say(f"github_bench: {args.n} issues, encoder {args.encoder}, in {work}")
    figures["import"] = _run_phase("import", str(work), str(args.n), str(args.seed))
    from ingest.github_synth import family_of, generate

    (work / "families.json").write_text(json.dumps({r["number"]: family_of(r) for r in generate(args.n, args.seed)}))
    say(f"  imported: {figures['import']}")
    figures["build"] = _run_phase("build", str(work), args.encoder)
    say(f"  first build: {figures['build']}")
    figures["rebuild_unchanged"] = _run_phase("build", str(work), args.encoder)
    say(f"  unchanged re-ingest: {figures['rebuild_unchanged']}")
    deleted = max(1, args.changed // 10)
    figures["change"] = _run_phase("change", str(work), str(args.changed), str(deleted), str(args.seed))
    figures["incremental"] = _run_phase("build", str(work), args.encoder)
    say(f"  after {args.changed} changed / {deleted} deleted issues: {figures['incremental']}")
    figures["query"] = _run_phase("query", str(work), str(args.queries), str(args.seed))
    figures["load_avg_end"] = round(os.getloadavg()[0], 1)
    print(report(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def report(f: dict) -> str:
    b, inc, q, imp, same = f["build"], f["incremental"], f["query"], f["import"], f["rebuild_unchanged"]
    lines = [
        f"GitHub issues at scale: N = {f['n']:,} issues ({imp['comments']:,} comments) + {b['units'] - b['issue_units']} KB "
        f"entries, encoder {f['encoder']}, {f['cores']} cores (load average {f['load_avg_start']} -> {f['load_avg_end']})",
        f"  generate + import        {imp['generate_s']} s + {imp['import_s']} s, raw cache {imp['raw_cache_mb']} MB, "
        f"peak RSS {imp['peak_rss_mb']} MB",
        f"  units (cold / cached)    {b['units_s']} s / {same['units_s']} s",
        f"  first build              {b['chunks']:,} chunks, embedded {b['embedded']:,} in {b['embed_s']} s = "
        f"{b['chunks_per_s']} chunks/s; total {b['build_s']} s",
        f"  index on disk            {b['index_mb']} MB: {b['index_data_mb']} MB of data "
        f"({b['index_data_mb'] / max(1, f['n']) * 1000:.1f} KB per issue) + the ONNX query encoder",
        f"  peak RSS, build          {b['peak_rss_mb']} MB",
        f"  re-ingest, nothing new   embedded {same['embedded']}, {same['build_s']} s",
        f"  {f['change']['changed_issues']} changed + {f['change']['deleted_issues']} deleted issues   "
        f"embedded {inc['embedded']} (new chunk texts: {f['change']['new_chunk_texts']}), removed "
        f"{inc['removed_units']} units, {inc['build_s']} s",
        f"  queries                  {q['queries']} through Assistant.answer: p50 {q['p50_ms']} ms, p95 {q['p95_ms']} ms, "
        f"max {q['max_ms']} ms; index load {q['load_s']} s; peak RSS {q['peak_rss_mb']} MB",
    ]
    if f["encoder"] == "real":
        lines.append(f"  quality                  answers listing similar reports {q['answers_with_similar_reports']:.0%}; "
                     f"listed reports of the query's failure family {q['similar_reports_same_family']:.0%}; "
                     f"KB entry first on {q['kb_entry_first']}/{q['kb_cases']} eval cases")
        if b["chunks_per_s"]:
            per_issue = b["chunks"] / max(1, b["units"])
            lines.append(f"  extrapolated: 20,000 issues ~ {20000 * per_issue:,.0f} chunks ~ "
                         f"{20000 * per_issue / b['chunks_per_s'] / 60:.0f} min of embedding at this rate")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
