"""`python -m evals wrappers`: the same log, collected another way, must get the same answer.

Operators paste what their tooling shows: `journalctl -u sglang`, `docker compose logs`,
`kubectl logs --timestamps`, a Kubernetes node's log file, a torchrun or Ray job's output. Each
puts its own prefix before every line. This re-asks every eval case with each such prefix put
before each line of its log (from the first line that is plainly program output, a time-stamped
line, a traceback or an exception, to the last such line; the user's words around it stay as
written) and counts the cases whose outcome and first entry stay what they were without it, and
how many right fixes each collector keeps.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from assistant.config import Settings
from evals.cases import DEFAULT_CASE_SETS, Case, load_cases
from evals.metrics import FIX, CaseResult
from evals.run import build_assistant, run_case

# one example line prefix per collector, as each prints it; the service and actor names do not say
# "sglang", which the reader would rightly take as a sign the log is SGLang's
COLLECTORS = {
    "journald": "Sep 02 15:32:20 gpu-node-7 python3[912967]: ",
    "docker compose": "llm-1  | ",
    "kubectl --timestamps": "2025-09-02T15:32:20.123456789Z ",
    "Kubernetes node log": "2025-09-02T15:32:20.123456789Z stderr F ",
    "torchrun": "[rank0]: ",
    "Ray worker": "(RolloutWorker pid=12345, ip=10.0.0.7) ",
    "Ray worker, in colour": "\x1b[36m(RolloutWorker pid=12345, ip=10.0.0.7)\x1b[0m ",
    "Open MPI": "[1,0]<stderr>:",
    "Slurm srun --label": "0: ",
}


# what marks a line as program output, decided here and not by the reader under test, so that
# every version of the reader is asked about the same lines
_STAMPED_RE = re.compile(r"^\s*(?:\[[^\]]*\d[^\]]*\]|\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\([\w.]+ pid=\d+)")
_TRACEBACK_RE = re.compile(r'^\s*(?:Traceback \(most recent call last\)|File "[^"]+", line \d+|'
                           r'(?:\w+\.)*(?:[A-Z]\w*)?(?:Error|Exception)\b)')


def _program_output(line: str) -> bool:
    """A line no person types: stamped by a logger (a bracket with a digit: a time, a rank, a TP
    number, not an issue title's `[Bug]`; a date; a Ray worker), a traceback's header or frame,
    an exception."""
    return bool(_STAMPED_RE.match(line) or _TRACEBACK_RE.match(line))


def wrap(query: str, prefix: str) -> str:
    """The query with `prefix` before each non-blank line of its log block."""
    lines = query.split("\n")
    marked = [i for i, line in enumerate(lines) if _program_output(line)]
    if not marked:
        return query
    first, last = marked[0], marked[-1]
    return "\n".join(prefix + line if first <= i <= last and line.strip() else line
                     for i, line in enumerate(lines))


def _shown(result: CaseResult) -> tuple[str, str | None]:
    return result.outcome, result.top


def _wrong_fix(result: CaseResult) -> bool:
    return result.outcome == FIX and not result.right_fix


def measure(assistant, cases: list[Case]) -> dict:
    cases = [c for c in cases if wrap(c.query, "x") != c.query]   # only those with a log to wrap
    plain = {c.id: run_case(assistant, c) for c in cases}
    report = {"cases": len(cases), "right_fixes_plain": sum(r.right_fix for r in plain.values()),
              "wrong_fixes_plain": sum(_wrong_fix(r) for r in plain.values()), "collectors": {}}
    for name, prefix in COLLECTORS.items():
        changed, right, wrong = [], 0, 0
        for case in cases:
            result = run_case(assistant, replace(case, query=wrap(case.query, prefix)))
            right += result.right_fix
            wrong += _wrong_fix(result)
            if _shown(result) != _shown(plain[case.id]):
                changed.append({"id": case.id, "plain": _shown(plain[case.id]), "wrapped": _shown(result)})
        report["collectors"][name] = {"unchanged": 1 - len(changed) / max(len(cases), 1),
                                      "right_fixes": right, "wrong_fixes": wrong, "changed": changed}
    return report


def format_report(report: dict) -> str:
    lines = [f"{report['cases']} cases; without a collector prefix: {report['right_fixes_plain']} right fixes, "
             f"{report['wrong_fixes_plain']} wrong fixes",
             f"{'collector':24} {'same answer':>11} {'right fixes':>11} {'wrong fixes':>11}"]
    for name, row in report["collectors"].items():
        lines.append(f"{name:24} {row['unchanged']:11.3f} {row['right_fixes']:11d} {row['wrong_fixes']:11d}")
    changes = Counter((c["plain"][0], c["wrapped"][0]) for row in report["collectors"].values() for c in row["changed"])
    if changes:
        lines.append("changed outcomes: " + ", ".join(f"{a} -> {b}: {n}" for (a, b), n in changes.most_common()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals wrappers", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, nargs="+", default=list(DEFAULT_CASE_SETS))
    parser.add_argument("--limit", type=int, help="only the first N cases")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the report (with every changed case) here")
    args = parser.parse_args(argv)
    cases = load_cases(args.cases)[: args.limit]
    assistant = build_assistant(Settings.from_env(), "extractive")
    report = measure(assistant, cases)
    print(format_report(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
