"""`python -m evals wrappers`: the same log, collected another way, must get the same answer.

Operators paste what their tooling shows: `journalctl -u sglang`, `docker compose logs`,
`kubectl logs --timestamps`, a Kubernetes node's log file, a torchrun or Ray job's output. Each
puts its own prefix before every line. Others hand over the log encoded: Docker's `json-file`
log, `journalctl -o json`, an HTTP error body or a Python repr that carries the traceback as one
escaped string, a traceback whose line breaks a web form turned into spaces, one copied out of a
rendered page or a chat whose spaces came as no-break spaces, or one in a terminal's colours. This
re-asks every eval case with its log (from the first line that is plainly program output, a time-stamped line,
a traceback or an exception, to the last such line; the user's words around it stay as written)
collected each such way, and counts the cases whose outcome and first entry stay what they were,
and how many right fixes each way keeps.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
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
_TIME = "2025-09-02T15:32:20.123456789Z"


def _json_records(lines: list[str], record) -> list[str]:
    return [json.dumps(record(line)) for line in lines]


def _escaped_body(lines: list[str]) -> list[str]:
    if len(lines) < 2:
        return lines
    return [json.dumps({"object": "error", "message": "\n".join(lines), "type": "InternalServerError",
                        "param": None, "code": 500})]


def _python_repr(lines: list[str]) -> list[str]:   # how the openai client prints a server's error
    if len(lines) < 2:
        return lines
    return ["openai.InternalServerError: Error code: 500 - "
            + repr({"object": "error", "message": "\n".join(lines), "type": "InternalServerError",
                    "param": None, "code": 500})]


def _cut_at(width: int):
    """What a terminal `width` columns wide shows of the lines, copied from its screen."""
    def cut(lines: list[str]) -> list[str]:
        return [line[i:i + width] for line in lines for i in range(0, max(len(line), 1), width)]
    return cut


_FRAME = re.compile(r'^(\s*)File "([^"]+)", line (\d+), in (\S+)\s*$')
_EXCEPTION_NAME = re.compile(r"^\s*((?:\w+\.)*[A-Z]\w*(?:Error|Exception))\b")


def _ipython(lines: list[str]) -> list[str]:
    """The block's tracebacks as a Jupyter notebook shows them: the exception's name before the
    header, `File path:N, in f(...)` frames, the failing source line numbered after an arrow."""
    names = [m.group(1) for m in map(_EXCEPTION_NAME.match, lines) if m]
    out, number = [], None
    for line in lines:
        frame = _FRAME.match(line)
        if frame:
            number = frame.group(3)
            out += ["", f"File {frame.group(2)}:{number}, in {frame.group(4)}(*args, **kwargs)"]
        elif number and line.startswith("    ") and line.strip():
            out.append(f"--> {number} {line.strip()}")
            number = None
        elif "Traceback (most recent call last):" in line:
            head = line.split("Traceback (most recent call last):")[0].rstrip()
            out += [head] if head else []
            out += ["-" * 75, f"{names[-1] if names else 'Exception':42}Traceback (most recent call last)"]
        else:
            out.append(line)
            number = None
    return out


def _coloured(line: str) -> str:
    """The line as Python 3.13 prints a traceback to a terminal (frames' file, number and function,
    the exception's name and message in colour) and a coloured logger its time stamp."""
    frame = _FRAME.match(line)
    if frame:
        indent, path, number, function = frame.groups()
        return (f'{indent}File "\x1b[35m{path}\x1b[0m", line \x1b[35m{number}\x1b[0m, '
                f"in \x1b[35m{function}\x1b[0m")
    exception = _EXCEPTION_NAME.match(line)
    if exception:
        start, end = exception.span(1)
        rest = line[end:]
        message = f": \x1b[35m{rest[2:]}\x1b[0m" if rest.startswith(": ") else rest
        return f"{line[:start]}\x1b[1;35m{line[start:end]}\x1b[0m{message}"
    return _STAMPED_RE.sub(lambda m: f"\x1b[32m{m.group(0)}\x1b[0m", line, count=1)


# the whole log block re-encoded, as tools that do not print line by line hand it over
ENCODINGS = {
    "Jupyter / IPython": lambda lines: _ipython(lines) if any(map(_FRAME.match, lines)) else lines,
    "terminal, 80 columns": _cut_at(80),
    "Windows console, 120 columns": _cut_at(120),
    "Docker json-file": lambda lines: _json_records(
        lines, lambda line: {"log": line + "\n", "stream": "stderr", "time": _TIME}),
    "journalctl -o json": lambda lines: _json_records(
        lines, lambda line: {"__REALTIME_TIMESTAMP": "1756827140123456", "_SYSTEMD_UNIT": "llm.service",
                             "PRIORITY": "6", "MESSAGE": line}),
    "error body, escaped": _escaped_body,
    "Python repr of an error": _python_repr,
    "line breaks lost": lambda lines: [" ".join(line.strip() for line in lines if line.strip())]
    if len(lines) > 1 else lines,
    # copied out of a rendered page or a chat app (a web UI, Slack, Feishu, a wiki)
    "no-break spaces": lambda lines: [line.replace(" ", "\u00a0") for line in lines],
    # a terminal's colours kept (`docker logs` of a container started with -t, `script`)
    "colours kept": lambda lines: [_coloured(line) for line in lines],
    "colours, escape lost": lambda lines: [_coloured(line).replace("\x1b", "") for line in lines],
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
    return encode(query, lambda block: [prefix + line if line.strip() else line for line in block])


def encode(query: str, transform: Callable[[list[str]], list[str]]) -> str:
    """The query with its log block (first to last line of program output) transformed."""
    lines = query.split("\n")
    marked = [i for i, line in enumerate(lines) if _program_output(line)]
    if not marked:
        return query
    first, last = marked[0], marked[-1]
    return "\n".join([*lines[:first], *transform(lines[first:last + 1]), *lines[last + 1:]])


def _ways() -> dict[str, Callable[[str], str]]:
    ways = {name: (lambda q, p=prefix: wrap(q, p)) for name, prefix in COLLECTORS.items()}
    ways.update({name: (lambda q, t=transform: encode(q, t)) for name, transform in ENCODINGS.items()})
    return ways


def _shown(result: CaseResult) -> tuple[str, str | None]:
    return result.outcome, result.top


def _wrong_fix(result: CaseResult) -> bool:
    return result.outcome == FIX and not result.right_fix


def measure(assistant, cases: list[Case]) -> dict:
    cases = [c for c in cases if wrap(c.query, "x") != c.query]   # only those with a log to wrap
    plain = {c.id: run_case(assistant, c) for c in cases}
    report = {"cases": len(cases), "right_fixes_plain": sum(r.right_fix for r in plain.values()),
              "wrong_fixes_plain": sum(_wrong_fix(r) for r in plain.values()), "collectors": {}}
    for name, collect in _ways().items():
        changed, right, wrong, right_plain, wrong_plain, asked = [], 0, 0, 0, 0, 0
        for case in cases:
            query = collect(case.query)
            if query == case.query:
                continue   # one line has no line breaks to escape or lose
            asked += 1
            result = run_case(assistant, replace(case, query=query))
            right += result.right_fix
            wrong += _wrong_fix(result)
            right_plain += plain[case.id].right_fix
            wrong_plain += _wrong_fix(plain[case.id])
            if _shown(result) != _shown(plain[case.id]):
                changed.append({"id": case.id, "plain": _shown(plain[case.id]), "wrapped": _shown(result)})
        report["collectors"][name] = {"cases": asked, "unchanged": 1 - len(changed) / max(asked, 1),
                                      "right_fixes": right, "wrong_fixes": wrong,
                                      "right_fixes_plain": right_plain, "wrong_fixes_plain": wrong_plain,
                                      "changed": changed}
    return report


def format_report(report: dict) -> str:
    lines = [f"{report['cases']} cases with a log; as pasted: {report['right_fixes_plain']} right fixes, "
             f"{report['wrong_fixes_plain']} wrong fixes",
             f"{'collected as':30} {'cases':>6} {'same answer':>11} {'right fixes':>16} {'wrong fixes':>16}"]
    for name, row in report["collectors"].items():
        lines.append(f"{name:30} {row['cases']:6d} {row['unchanged']:11.3f} "
                     f"{row['right_fixes']:>7d} of {row['right_fixes_plain']:<5d} "
                     f"{row['wrong_fixes']:>7d} (was {row['wrong_fixes_plain']})")
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
