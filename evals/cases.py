"""Eval cases: JSONL, one case a line (fields beyond these are ignored).

{"id", "query", "expected_problem": KB id or null, "must_mention": [[str, ...], ...],
 "must_not_mention": [str, ...], "should_abstain": bool}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Case:
    id: str
    query: str
    expected_problem: str | None
    must_mention: tuple[tuple[str, ...], ...]
    must_not_mention: tuple[str, ...]
    should_abstain: bool
    split: str = ""          # file stem: dev, heldout, ...
    lang: str = ""

    @property
    def in_scope(self) -> bool:
        return self.expected_problem is not None


class CaseError(ValueError):
    pass


def load_cases(path: Path) -> list[Case]:
    """Cases from a .jsonl file or every .jsonl file of a folder."""
    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise CaseError(f"no .jsonl case files in {path}")
    cases, seen = [], set()
    for file in files:
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                case = Case(
                    id=str(raw["id"]), query=str(raw["query"]),
                    expected_problem=raw.get("expected_problem") or None,
                    must_mention=tuple(tuple(str(s) for s in (g if isinstance(g, list) else [g]))
                                       for g in raw.get("must_mention") or []),
                    must_not_mention=tuple(str(s) for s in raw.get("must_not_mention") or []),
                    should_abstain=bool(raw.get("should_abstain", False)),
                    split=file.stem, lang=str(raw.get("lang", "")),
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise CaseError(f"{file}:{n}: not a valid case ({exc})") from exc
            if case.id in seen:
                raise CaseError(f"{file}:{n}: duplicate case id {case.id!r}")
            seen.add(case.id)
            cases.append(case)
    return cases
