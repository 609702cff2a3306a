"""`python -m evals run`: score the assistant on cases, with baselines measured in the same run.

Configurations (each on the same cases, same machine, same index):
    full                 trace analysis + hybrid retrieval + signature boost (what `ask` does)
    hybrid_no_trace      hybrid retrieval on the raw paste (no triage, no masking of the log)
    lexical              BM25 only, with trace analysis
    dense                embeddings only, with trace analysis
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from assistant.answer import compose_extractive
from assistant.commands import sglang_names
from assistant.config import Settings
from assistant.pipeline import Assistant, lines_from_text
from assistant.trace import analyze_lines
from evals.cases import Case, CaseError, load_cases
from evals.metrics import CaseResult, check_text, summarize
from ingest.update import ingest_kb

BASELINES = {"hybrid_no_trace": ("hybrid", False), "lexical": ("lexical", True), "dense": ("dense", True)}
FLOORS_FILE = Path(__file__).parent / "floors.json"
TABLE_KEYS = ("hit@1", "hit@3", "mrr", "answer_accuracy", "abstain_precision", "abstain_recall",
              "unknown_flags", "latency_p50_ms", "latency_p95_ms")


def unknown_flags(answer: dict, version: str | None, registry, user_names=()) -> list[str]:
    """SGLang flags / env vars recommended in the fix steps that do not exist in the user's
    version (any version when unknown). Names the user wrote themselves are not recommendations;
    deprecated names a release still handles (e.g. "unset the old X") are known names."""
    if registry is None:
        return []
    target = registry.nearest(version) if version else None
    unknown = []
    for name in sglang_names(*answer.get("fix", [])):
        status = registry.check(name, target)
        if name not in user_names and not status.known:
            unknown.append(name)
    return unknown


def _ranked(retrieval) -> list[str]:
    return list(dict.fromkeys(h.unit_id for h in retrieval.hits))


def run_case(assistant: Assistant, case: Case, mode: str = "extractive") -> CaseResult:
    started = time.perf_counter()
    lines = lines_from_text(case.query)
    analysis = analyze_lines(lines)
    answer = assistant.answer(analysis, use_llm=(mode == "llm"))
    latency = (time.perf_counter() - started) * 1000
    body = {"diagnosis": answer.diagnosis, "fix": answer.fix, "warnings": answer.warnings,
            "citations": answer.citations}
    missing, forbidden = check_text(case, body)
    ranked = [m.id for m in answer.matches]
    result = CaseResult(case, ranked, answer.abstained, body, latency,
                        unknown_flags(body, answer.detected.sglang_version, assistant.registry,
                                      analysis.user_names),
                        missing, forbidden, mode=answer.mode)
    return result


def run_baseline(assistant: Assistant, case: Case, name: str) -> CaseResult:
    retrieval_mode, use_trace = BASELINES[name]
    started = time.perf_counter()
    lines = lines_from_text(case.query)
    if use_trace:
        retrieval = assistant.retrieve(lines, mode=retrieval_mode)
    else:
        retrieval = assistant.retriever.search(case.query, k=5, mode=retrieval_mode, use_trace=False)
    answer = compose_extractive(retrieval, assistant.registry, assistant.settings.top_k)
    latency = (time.perf_counter() - started) * 1000
    body = {"diagnosis": answer.diagnosis, "fix": answer.fix, "warnings": answer.warnings,
            "citations": answer.citations}
    missing, forbidden = check_text(case, body)
    return CaseResult(case, _ranked(retrieval), answer.abstained, body, latency,
                      unknown_flags(body, answer.detected.sglang_version, assistant.registry,
                                    retrieval.analysis.user_names),
                      missing, forbidden)


def evaluate(assistant: Assistant, cases: list[Case], mode: str = "extractive",
             baselines: bool = True, progress: bool = False) -> dict:
    per_case = []
    for i, case in enumerate(cases, 1):
        per_case.append(run_case(assistant, case, mode))
        if progress and i % 20 == 0:
            print(f"  {i}/{len(cases)} cases", file=sys.stderr)
    report = {"mode": mode, "metrics": summarize(per_case), "baselines": {},
              "splits": {}, "per_case": [r.to_dict() for r in per_case]}
    for split in sorted({c.split for c in cases}):
        report["splits"][split] = summarize([r for r in per_case if r.case.split == split])
    if baselines:
        for name in BASELINES:
            report["baselines"][name] = summarize([run_baseline(assistant, c, name) for c in cases])
    manifest = assistant.retriever.index.manifest
    report["index"] = {"model": manifest.get("model"), "dim": manifest.get("dim"),
                       "chunks": manifest.get("chunks"), "units": len(manifest.get("units", {}))}
    return report


def format_table(report: dict) -> str:
    rows = [("full (" + report["mode"] + ")", report["metrics"])]
    rows += [(name, m) for name, m in report["baselines"].items()]
    rows += [(f"  split {name}", m) for name, m in report.get("splits", {}).items()]
    header = f"{'configuration':<24}" + "".join(f"{k:>18}" for k in TABLE_KEYS)
    lines = [header, "-" * len(header)]
    for name, m in rows:
        lines.append(f"{name:<24}" + "".join(f"{m[k]:>18}" for k in TABLE_KEYS))
    m = report["metrics"]
    lines.append(f"\n{m['cases']} cases: {m['in_scope']} in scope, {m['out_of_scope']} out of scope; "
                 f"false abstentions {m['false_abstentions']}")
    return "\n".join(lines)


def check_floors(metrics: dict, floors: dict) -> list[str]:
    failures = []
    for key, floor in floors.items():
        if key == "unknown_flags":
            if metrics[key] > floor:
                failures.append(f"{key} = {metrics[key]} > {floor}")
        elif metrics.get(key, 0) < floor:
            failures.append(f"{key} = {metrics[key]} < floor {floor}")
    return failures


def build_assistant(settings: Settings, mode: str):
    assistant = Assistant.from_settings(settings, progress=lambda m: print(m, file=sys.stderr),
                                        build_index=ingest_kb)
    if mode == "llm":
        from assistant.llm import SGLangClient

        client = SGLangClient.from_settings(settings)
        if not client.available():
            raise SystemExit(f"evals: no LLM endpoint answering at {settings.endpoint}")
        assistant.llm = client
    return assistant


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=Path("evals/cases"), help="a .jsonl file or a folder")
    parser.add_argument("--mode", choices=("extractive", "llm"), default="extractive")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the JSON report here")
    parser.add_argument("--html", type=Path, metavar="OUT", help="write the HTML report here "
                        "(default: next to --json, or evals/reports/report.html)")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument("--limit", type=int, help="score only the first N cases (e.g. a slow --mode llm run)")
    parser.add_argument("--check-floors", action="store_true",
                        help=f"exit 1 when the full pipeline is below the floors in {FLOORS_FILE.name}")
    parser.add_argument("--endpoint", help="LLM endpoint for --mode llm (env ASK_ENDPOINT)")
    parser.add_argument("--model", help="model name for --mode llm (env ASK_MODEL)")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.cases)[: args.limit]
    except (CaseError, OSError) as exc:
        print(f"evals: {exc}", file=sys.stderr)
        return 2
    settings = Settings.from_env().with_options(endpoint=args.endpoint, model=args.model,
                                                use_llm=(args.mode == "llm"))
    assistant = build_assistant(settings, args.mode)
    started = time.perf_counter()
    report = evaluate(assistant, cases, args.mode, baselines=not args.no_baselines, progress=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(format_table(report))
    out_json = args.json
    if out_json:
        out_json.parent.mkdir(parents=True, exist_ok=True)
        out_json.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    from evals.report import write_html

    html_path = args.html or (out_json.with_suffix(".html") if out_json else Path("evals/reports/report.html"))
    write_html(report, html_path)
    print(f"\nreports: {out_json or '-'} {html_path}")
    if args.check_floors:
        floors = json.loads(FLOORS_FILE.read_text())
        failures = check_floors(report["metrics"], floors.get(args.mode, floors.get("extractive", {})))
        if failures:
            print("FLOORS FAILED: " + "; ".join(failures), file=sys.stderr)
            return 1
        print("floors ok")
    return 0
