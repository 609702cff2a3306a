"""`python -m evals run`: score the assistant on cases, with baselines measured in the same run.

Cases come from case-set folders (default: evals/cases, evals/boundary, evals/real); metrics are
reported for all cases, per split (`real/heldout`, ...) and per split group (evals/floors.json),
plus, unless --no-extras, the error-origin, dependency and issue-resolution scores
(evals/origin_eval.py).

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
from functools import lru_cache
from pathlib import Path

from packaging.version import InvalidVersion, Version

from assistant.answer import CAUTION_PREFIX, compose_extractive
from assistant.commands import sglang_names
from assistant.config import Settings
from assistant.pipeline import Assistant, lines_from_text
from assistant.step_versions import UPGRADE_TO_RE
from assistant.trace import analyze_lines
from evals.cases import DEFAULT_CASE_SETS, Case, CaseError, load_cases
from evals.metrics import FIX, LEAD, CaseResult, check_text, detailed, summarize
from ingest.update import ingest_kb

BASELINES = {"hybrid_no_trace": ("hybrid", False), "lexical": ("lexical", True), "dense": ("dense", True)}
FLOORS_FILE = Path(__file__).parent / "floors.json"
# metric -> column header of the terminal table
TABLE_KEYS = {"hit@1": "hit@1", "hit@3": "hit@3", "mrr": "mrr", "answer_accuracy": "ans.acc",
              "decision_accuracy": "dec.acc", "abstain_precision": "abst.P", "abstain_recall": "abst.R",
              "unknown_flags": "unk.flag", "latency_p50_ms": "p50 ms", "latency_p95_ms": "p95 ms"}


def unknown_flags(answer: dict, version: str | None, registry, user_names=()) -> list[str]:
    """SGLang flags / env vars recommended in the fix steps that do not exist in the user's
    version (any version when unknown). Names the user wrote themselves are not recommendations;
    deprecated names a release still handles (e.g. "unset the old X") are known names."""
    if registry is None:
        return []
    target = registry.nearest(version) if version else None
    unknown = []
    # a caution under a step ("! Caution: --privileged gives the container ...") warns about a
    # command's risk; it recommends nothing
    steps = ["\n".join(line for line in step.splitlines() if not line.strip().startswith(CAUTION_PREFIX))
             for step in answer.get("fix", [])]
    for step in steps:
        # a step that leads to a later release is checked against that release
        goal = UPGRADE_TO_RE.search(step)
        step_target = registry.nearest(goal.group(1)) if goal and version and _newer(goal.group(1), version) else target
        for name in sglang_names(step):
            status = registry.check(name, step_target or target)
            if name not in user_names and not status.known and name not in unknown:
                unknown.append(name)
    return unknown


def _newer(release: str, version: str) -> bool:
    try:
        return Version(release) > Version(version)
    except InvalidVersion:
        return False


def _ranked(retrieval) -> list[str]:
    return list(dict.fromkeys(h.unit_id for h in retrieval.hits))


def _outcome(answer, retrieval=None) -> str:
    """The answer's outcome (fix | lead | unknown); an Answer that lacks one takes the
    retrieval's decision, and failing that its abstention."""
    outcome = getattr(answer, "outcome", None) or getattr(retrieval, "outcome", None)
    return outcome or ("unknown" if answer.abstained else "fix")


@lru_cache(maxsize=1)   # one index per run
def triage_entries(index) -> frozenset[str]:
    """The index's triage entries (`diagnosis: true`, the flag the decision reads): a case
    labelled with one expects their lead."""
    return frozenset(u.id for u in index.units if u.kind == "entry" and u.meta.get("diagnosis"))


def _expected_outcome(assistant: Assistant, case: Case) -> str:
    return LEAD if case.expected_problem in triage_entries(assistant.retriever.index) else FIX


def _result(case: Case, answer, ranked: list[str], latency: float, registry, user_names,
            expected_outcome: str, retrieval=None) -> CaseResult:
    body = {"diagnosis": answer.diagnosis, "fix": answer.fix, "next_steps": answer.next_steps,
            "warnings": answer.warnings, "citations": answer.citations}
    missing, forbidden = check_text(case, body)
    confidence = getattr(answer, "confidence", None)
    if confidence is None and retrieval is not None:
        confidence = retrieval.confidence
    return CaseResult(case, ranked, answer.abstained, body, latency,
                      unknown_flags(body, answer.detected.sglang_version, registry, user_names),
                      missing, forbidden, mode=getattr(answer, "mode", "extractive"),
                      outcome=_outcome(answer, retrieval), confidence=float(confidence or 0.0),
                      expected_outcome=expected_outcome)


def run_case(assistant: Assistant, case: Case, mode: str = "extractive") -> CaseResult:
    started = time.perf_counter()
    lines = lines_from_text(case.query)
    analysis = analyze_lines(lines)
    answer = assistant.answer(analysis, use_llm=(mode == "llm"))
    latency = (time.perf_counter() - started) * 1000
    return _result(case, answer, [m.id for m in answer.matches], latency, assistant.registry,
                   analysis.user_names, _expected_outcome(assistant, case))


def run_baseline(assistant: Assistant, case: Case, name: str) -> CaseResult:
    retrieval_mode, use_trace = BASELINES[name]
    started = time.perf_counter()
    lines = lines_from_text(case.query)
    if use_trace:
        retrieval = assistant.retrieve(lines, mode=retrieval_mode)
    else:
        retrieval = assistant.retriever.search(case.query, k=5, mode=retrieval_mode, use_trace=False)
    answer = compose_extractive(retrieval, assistant.registry, assistant.settings.top_k, assistant.settings.lang)
    latency = (time.perf_counter() - started) * 1000
    result = _result(case, answer, _ranked(retrieval), latency, assistant.registry,
                     retrieval.analysis.user_names, _expected_outcome(assistant, case), retrieval)
    result.mode = "extractive"
    return result


def load_floors(path: Path = FLOORS_FILE) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def evaluate(assistant: Assistant, cases: list[Case], mode: str = "extractive",
             baselines: bool = True, progress: bool = False, groups: dict | None = None) -> dict:
    """Score every case; metrics for all of them, per split and per split group (a group is
    scored when at least one of its splits is in the run; `complete` says whether all are)."""
    per_case = []
    for i, case in enumerate(cases, 1):
        per_case.append(run_case(assistant, case, mode))
        if progress and i % 50 == 0:
            print(f"  {i}/{len(cases)} cases", file=sys.stderr)
    groups = load_floors().get("groups", {}) if groups is None else groups
    splits = sorted({c.split for c in cases})
    report = {"mode": mode, "metrics": detailed(per_case), "baselines": {}, "splits": {}, "groups": {},
              "per_case": [r.to_dict() for r in per_case]}
    for split in splits:
        report["splits"][split] = detailed([r for r in per_case if r.case.split == split])
    for name, members in groups.items():
        present = [s for s in members if s in splits]
        if present:
            report["groups"][name] = {**detailed([r for r in per_case if r.case.split in present]),
                                      "splits": present, "complete": len(present) == len(members),
                                      "missing_splits": [s for s in members if s not in splits]}
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
    rows += [(f"  group {name}" + ("" if m["complete"] else " (partial)"), m)
             for name, m in report.get("groups", {}).items()]
    rows += [(f"  split {name}", m) for name, m in report.get("splits", {}).items()]
    header = f"{'configuration':<28}{'cases':>6}" + "".join(f"{TABLE_KEYS[k]:>9}" for k in TABLE_KEYS)
    lines = [header, "-" * len(header)]
    for name, m in rows:
        lines.append(f"{name:<28}{m['cases']:>6}" + "".join(f"{_cell(m.get(k)):>9}" for k in TABLE_KEYS))
    m = report["metrics"]
    lines.append(f"\n{m['cases']} cases: {m['in_scope']} in scope ({m['triage_cases']} expect a triage "
                 f"entry's lead), {m['out_of_scope']} out of scope; "
                 f"outcomes fix {m['fix']}, lead {m['lead']}, unknown {m['unknown']}; "
                 f"false abstentions {m['false_abstentions']}, wrong fixes {m['wrong_fixes']}")
    for name, g in [("all cases", m)] + [(f"group {k}", v) for k, v in report.get("groups", {}).items()]:
        c = g["confusion"]
        lines.append(f"confusion, {name}: expected fix -> fix {c['expected_fix']['fix']} "
                     f"(wrong entry {c['expected_fix']['fix_wrong_entry']}), lead {c['expected_fix']['lead']}, "
                     f"unknown {c['expected_fix']['unknown']}; expected decline -> fix "
                     f"{c['expected_decline']['fix']}, lead {c['expected_decline']['lead']}, "
                     f"unknown {c['expected_decline']['unknown']}")
    return "\n".join(lines)


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return "-" if value is None else str(value)


def check_floors(metrics: dict, floors: dict) -> list[str]:
    failures = []
    for key, floor in floors.items():
        if key == "unknown_flags":
            if metrics[key] > floor:
                failures.append(f"{key} = {metrics[key]} > {floor}")
        elif metrics.get(key) is None:
            failures.append(f"{key} not measured (no case it applies to)")
        elif metrics[key] < floor:
            failures.append(f"{key} = {metrics[key]} < floor {floor}")
    return failures


def check_group_floors(report: dict, floors: dict, mode: str) -> tuple[list[str], list[str]]:
    """(failures, notes): each group's floors against the group's metrics in this run. A group
    whose splits are not all in the run is not checked (a note says so)."""
    by_group = floors.get(mode, floors.get("extractive", {}))
    failures, notes = [], []
    for name, group_floors in by_group.items():
        group = report.get("groups", {}).get(name)
        if group is None or not group["complete"]:
            missing = group["missing_splits"] if group else floors.get("groups", {}).get(name, [])
            notes.append(f"floors of group {name!r} not checked: splits {', '.join(missing)} not in this run")
            continue
        failures += [f"{name}: {f}" for f in check_floors(group, group_floors)]
    return failures, notes


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
    parser.add_argument("--cases", type=Path, nargs="+", default=list(DEFAULT_CASE_SETS),
                        help=".jsonl files and/or folders of them (default: %(default)s)")
    parser.add_argument("--mode", choices=("extractive", "llm"), default="extractive")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the JSON report here")
    parser.add_argument("--html", type=Path, metavar="OUT", help="write the HTML report here "
                        "(default: next to --json, or evals/reports/report.html)")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument("--no-extras", action="store_true",
                        help="skip the error-origin, dependency and issue-resolution scores")
    parser.add_argument("--limit", type=int, help="score only the first N cases (e.g. a slow --mode llm run)")
    parser.add_argument("--check-floors", action="store_true",
                        help="exit 1 when a split group is below its floors (see --floors)")
    parser.add_argument("--floors", type=Path, default=FLOORS_FILE,
                        help="split groups and their floors (default: evals/floors.json)")
    parser.add_argument("--endpoint", help="LLM endpoint for --mode llm (env ASK_ENDPOINT)")
    parser.add_argument("--model", help="model name for --mode llm (env ASK_MODEL)")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.cases)[: args.limit]
        floors = load_floors(args.floors)
    except (CaseError, OSError, ValueError) as exc:
        print(f"evals: {exc}", file=sys.stderr)
        return 2
    settings = Settings.from_env().with_options(endpoint=args.endpoint, model=args.model,
                                                use_llm=(args.mode == "llm"))
    assistant = build_assistant(settings, args.mode)
    started = time.perf_counter()
    report = evaluate(assistant, cases, args.mode, baselines=not args.no_baselines, progress=True,
                      groups=floors.get("groups", {}))
    if not args.no_extras:
        from evals.origin_eval import format_extras, run_extras

        report["extras"] = run_extras()
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(format_table(report))
    if report.get("extras"):
        print("\n" + format_extras(report["extras"]))
    out_json = args.json
    if out_json:
        out_json.parent.mkdir(parents=True, exist_ok=True)
        out_json.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    from evals.report import write_html

    html_path = args.html or (out_json.with_suffix(".html") if out_json else Path("evals/reports/report.html"))
    write_html(report, html_path)
    print(f"\nreports: {out_json or '-'} {html_path}")
    if args.check_floors:
        failures, notes = check_group_floors(report, floors, args.mode)
        for note in notes:
            print(note, file=sys.stderr)
        if failures:
            print("FLOORS FAILED: " + "; ".join(failures), file=sys.stderr)
            return 1
        print("floors ok")
    return 0
