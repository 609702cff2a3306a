"""Scoring: retrieval ranks, answer accuracy, abstention, invented flags, latency."""

from __future__ import annotations

from dataclasses import dataclass, field

from evals.cases import Case


@dataclass
class CaseResult:
    case: Case
    ranked: list[str]          # distinct unit ids, best first
    abstained: bool
    answer: dict               # diagnosis, fix, warnings, citations
    latency_ms: float
    unknown_flags: list[str] = field(default_factory=list)
    missing: list[list[str]] = field(default_factory=list)   # must_mention groups not found
    forbidden: list[str] = field(default_factory=list)        # must_not_mention strings found
    mode: str = "extractive"

    @property
    def rank(self) -> int | None:
        exp = self.case.expected_problem
        return self.ranked.index(exp) + 1 if exp in self.ranked else None

    @property
    def answer_correct(self) -> bool:
        if self.abstained or self.missing or self.forbidden:
            return False
        # with nothing required to be mentioned, only the right entry makes the answer right
        return bool(self.case.must_mention) or self.rank == 1

    def to_dict(self) -> dict:
        return {"id": self.case.id, "split": self.case.split, "expected": self.case.expected_problem,
                "ranked": self.ranked, "abstained": self.abstained, "answer": self.answer,
                "latency_ms": round(self.latency_ms, 2), "unknown_flags": self.unknown_flags,
                "missing": self.missing, "forbidden": self.forbidden, "mode": self.mode,
                "correct": self.answer_correct if self.case.in_scope else None}


def check_text(case: Case, answer: dict) -> tuple[list[list[str]], list[str]]:
    """must_mention groups missing from, and must_not_mention strings present in, diagnosis + fix."""
    text = (answer.get("diagnosis", "") + "\n" + "\n".join(answer.get("fix", []))).lower()
    missing = [list(g) for g in case.must_mention if not any(s.lower() in text for s in g)]
    forbidden = [s for s in case.must_not_mention if s.lower() in text]
    return missing, forbidden


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def summarize(results: list[CaseResult]) -> dict:
    in_scope = [r for r in results if r.case.in_scope]
    n = len(in_scope)
    hit1 = sum(1 for r in in_scope if r.rank == 1)
    hit3 = sum(1 for r in in_scope if r.rank is not None and r.rank <= 3)
    mrr = sum(1.0 / r.rank for r in in_scope if r.rank) / n if n else 0.0
    accurate = sum(1 for r in in_scope if r.answer_correct)
    should = [r for r in results if r.case.should_abstain]
    did = [r for r in results if r.abstained]
    both = [r for r in results if r.abstained and r.case.should_abstain]
    latencies = [r.latency_ms for r in results]
    return {
        "cases": len(results), "in_scope": n, "out_of_scope": len(results) - n,
        "hit@1": round(hit1 / n, 4) if n else 0.0,
        "hit@3": round(hit3 / n, 4) if n else 0.0,
        "mrr": round(mrr, 4),
        "answer_accuracy": round(accurate / n, 4) if n else 0.0,
        "abstain_precision": round(len(both) / len(did), 4) if did else 1.0,
        "abstain_recall": round(len(both) / len(should), 4) if should else 1.0,
        "false_abstentions": sum(1 for r in in_scope if r.abstained),
        "unknown_flags": sum(len(r.unknown_flags) for r in results),
        "latency_p50_ms": round(_percentile(latencies, 0.5), 2),
        "latency_p95_ms": round(_percentile(latencies, 0.95), 2),
    }
