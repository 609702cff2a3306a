"""`python -m evals flags`: does a how-to question get the flags that answer it?

`evals/flag_questions/cases.jsonl` holds how-to and configuration questions, in English and
Chinese, each labelled (by a helper who did not see `assistant/flag_reference.py`) with the
launch_server flags that answer it, or none when no flag does (a request-format question). Each
question is asked as a user asks it (`Assistant.answer`) and scored on the flags the answer lists:

- hit: at least one labelled flag is listed (questions with labels);
- recall / precision: labelled flags listed, of all labelled; listed flags that are labelled;
- quiet: no flag listed, for the questions no flag answers;
- asked as a question: the answer read the paste as a how-to question (no error fix).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from assistant.config import Settings
from evals.run import build_assistant

CASES = Path(__file__).resolve().parent / "flag_questions" / "cases.jsonl"


@dataclass(frozen=True)
class FlagQuestion:
    id: str
    split: str
    question: str
    flags: tuple[str, ...]


def load(path: Path = CASES) -> list[FlagQuestion]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            out.append(FlagQuestion(raw["id"], raw.get("split", "dev"), raw["question"], tuple(raw["flags"])))
        except (ValueError, KeyError, TypeError) as error:
            raise SystemExit(f"{path}:{number}: not a flag question ({error}); fix or remove the line") from None
    return out


def score(rows: list[dict]) -> dict:
    """The figures of one group of answered questions (`rows` from `measure`)."""
    labelled = [r for r in rows if r["expected"]]
    unlabelled = [r for r in rows if not r["expected"]]
    listed = sum(len(r["shown"]) for r in labelled)
    expected = sum(len(r["expected"]) for r in labelled)
    right = sum(len(set(r["shown"]) & set(r["expected"])) for r in labelled)
    return {
        "questions": len(rows),
        "read_as_question": sum(r["question"] for r in rows) / max(len(rows), 1),
        "hit": sum(bool(set(r["shown"]) & set(r["expected"])) for r in labelled) / max(len(labelled), 1),
        "recall": right / max(expected, 1),
        "precision": right / max(listed, 1),
        "quiet": sum(not r["shown"] for r in unlabelled) / max(len(unlabelled), 1),
        "with_labels": len(labelled),
        "without_labels": len(unlabelled),
    }


def measure(assistant, questions: list[FlagQuestion]) -> dict:
    rows = []
    for q in questions:
        answer = assistant.answer(q.question, use_llm=False)
        rows.append({"id": q.id, "split": q.split, "question": answer.question,
                     "expected": list(q.flags), "shown": [f.name for f in answer.flags]})
    splits = sorted({r["split"] for r in rows})
    return {"all": score(rows), "splits": {s: score([r for r in rows if r["split"] == s]) for s in splits},
            "per_question": rows}


def format_report(report: dict) -> str:
    lines = [f"{'split':10} {'questions':>9} {'as question':>11} {'hit':>6} {'recall':>6} {'precision':>9} {'quiet':>6}"]
    for name, row in [("all", report["all"]), *report["splits"].items()]:
        lines.append(f"{name:10} {row['questions']:9d} {row['read_as_question']:11.3f} {row['hit']:6.3f} "
                     f"{row['recall']:6.3f} {row['precision']:9.3f} {row['quiet']:6.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals flags", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the report, every question included")
    args = parser.parse_args(argv)
    assistant = build_assistant(Settings.from_env(), "extractive")
    report = measure(assistant, load(args.cases))
    print(format_report(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
