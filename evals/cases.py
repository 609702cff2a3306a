"""Eval cases: JSONL, one case a line, in case-set folders (`evals/cases`, `evals/boundary`,
`evals/real`); a case's split is `<folder>/<file stem>`, e.g. `real/heldout`.

{"id", "query", "expected_problem": KB id or null, "must_mention": [[str, ...], ...],
 "must_not_mention": [str, ...], "should_abstain": bool}
and, where a case set labels them:
    "kind"            trace | question | log | out_of_scope
    "related_entry"   a KB entry about the same area that is not the fix (boundary, real)
    "lookalike_of"    the entry this out-of-scope case resembles (boundary)
    "error_class"     the kind of error (real: gpu-oom, nccl-distributed, ...)
    "coverage"        covered | partial | none: how much of it the KB covers (real)
Other fields are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CASE_SETS = (Path("evals/cases"), Path("evals/boundary"), Path("evals/real"))


@dataclass(frozen=True)
class Case:
    id: str
    query: str
    expected_problem: str | None
    must_mention: tuple[tuple[str, ...], ...]
    must_not_mention: tuple[str, ...]
    should_abstain: bool
    split: str = ""          # <folder>/<file stem>: cases/heldout, real/dev, ...
    lang: str = ""
    kind: str = ""
    related_entry: str | None = None
    lookalike_of: str | None = None
    error_class: str | None = None
    coverage: str | None = None

    @property
    def in_scope(self) -> bool:
        return self.expected_problem is not None

    @property
    def relevant_entries(self) -> frozenset[str]:
        """Entries that are at least relevant to the case: the fix, or the related entry."""
        return frozenset(e for e in (self.expected_problem, self.related_entry) if e)


class CaseError(ValueError):
    pass


def _optional(raw: dict, key: str) -> str | None:
    value = raw.get(key)
    return str(value) if value else None


def _case(raw: dict, split: str) -> Case:
    return Case(
        id=str(raw["id"]), query=str(raw["query"]),
        expected_problem=raw.get("expected_problem") or None,
        must_mention=tuple(tuple(str(s) for s in (g if isinstance(g, list) else [g]))
                           for g in raw.get("must_mention") or []),
        must_not_mention=tuple(str(s) for s in raw.get("must_not_mention") or []),
        should_abstain=bool(raw.get("should_abstain", False)),
        split=split, lang=str(raw.get("lang", "")), kind=str(raw.get("kind", "")),
        related_entry=_optional(raw, "related_entry"), lookalike_of=_optional(raw, "lookalike_of"),
        error_class=_optional(raw, "error_class"), coverage=_optional(raw, "coverage"),
    )


def case_files(path: Path) -> list[Path]:
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise CaseError(f"no .jsonl case files in {path}; pass a folder of cases or a .jsonl file")
        return files
    if not path.is_file():
        raise CaseError(f"{path} does not exist; pass a folder of cases or a .jsonl file")
    return [path]


def load_cases(paths: Path | Iterable[Path]) -> list[Case]:
    """Cases from .jsonl files and/or every .jsonl file of folders, in the order given."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    cases, seen = [], {}
    for file in dict.fromkeys(f.resolve() for p in paths for f in case_files(p)):
        split = f"{file.parent.name}/{file.stem}"
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                case = _case(json.loads(line), split)
            except (ValueError, KeyError, TypeError) as exc:
                raise CaseError(f"{file}:{n}: not a valid case ({exc})") from exc
            if case.id in seen:
                raise CaseError(f"{file}:{n}: duplicate case id {case.id!r} (also in {seen[case.id]})")
            seen[case.id] = split
            cases.append(case)
    return cases
