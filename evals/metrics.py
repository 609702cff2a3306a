"""Scoring: retrieval ranks, answer accuracy, the three-way decision, abstention, coverage by
error class, risk-coverage, invented flags, latency.

The decision is right when the assistant names the right fix (outcome `fix`, the expected entry on
top) or declines (`lead` / `unknown`) where no fix is expected. Declining is "abstaining".
A case labelled with a triage entry (`diagnosis: true` in the KB: what a line means and how to
find the failure behind it) expects a `lead` naming that entry: the KB has next steps for it, not
a fix, so the assistant is right to decline a fix and wrong to name any.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from evals.cases import Case

FIX, LEAD, UNKNOWN = "fix", "lead", "unknown"
OUTCOMES = (FIX, LEAD, UNKNOWN)


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
    outcome: str = ""          # fix | lead | unknown; empty: derived from `abstained`
    confidence: float = 0.0    # the assistant's confidence in its decision, 0..1
    expected_outcome: str = FIX   # lead when the expected entry is a triage entry

    def __post_init__(self) -> None:
        if not self.outcome:
            self.outcome = UNKNOWN if self.abstained else FIX
        self.abstained = self.outcome != FIX

    @property
    def top(self) -> str | None:
        """The entry the answer names: the fix, or the lead."""
        return self.ranked[0] if self.ranked else None

    @property
    def rank(self) -> int | None:
        exp = self.case.expected_problem
        return self.ranked.index(exp) + 1 if exp in self.ranked else None

    @property
    def expects_fix(self) -> bool:
        return self.case.in_scope and self.expected_outcome == FIX

    @property
    def should_decline(self) -> bool:
        return self.case.should_abstain or not self.expects_fix

    @property
    def right_fix(self) -> bool:
        return self.outcome == FIX and self.expects_fix and self.rank == 1

    @property
    def right_answer(self) -> bool:
        """The expected entry on top with the outcome its label calls for (a fix, or the lead
        of a triage entry)."""
        return self.case.in_scope and self.rank == 1 and self.outcome == self.expected_outcome

    @property
    def decision_correct(self) -> bool:
        return self.right_answer if self.case.in_scope else self.outcome != FIX

    @property
    def relevant(self) -> bool:
        """The entry named as the fix or the lead is the case's fix or its related entry
        (an `unknown` answer names none)."""
        return self.outcome != UNKNOWN and self.top in self.case.relevant_entries

    @property
    def answer_correct(self) -> bool:
        if self.missing or self.forbidden:
            return False
        if not self.expects_fix:
            return self.right_answer
        if self.abstained:
            return False
        # with nothing required to be mentioned, only the right entry makes the answer right
        return bool(self.case.must_mention) or self.rank == 1

    def to_dict(self) -> dict:
        return {"id": self.case.id, "split": self.case.split, "kind": self.case.kind,
                "expected": self.case.expected_problem, "expected_outcome": self.expected_outcome,
                "related_entry": self.case.related_entry,
                "error_class": self.case.error_class, "coverage": self.case.coverage,
                "ranked": self.ranked, "outcome": self.outcome, "abstained": self.abstained,
                "confidence": round(self.confidence, 3), "answer": self.answer,
                "latency_ms": round(self.latency_ms, 2), "unknown_flags": self.unknown_flags,
                "missing": self.missing, "forbidden": self.forbidden, "mode": self.mode,
                "correct": self.answer_correct if self.case.in_scope else None,
                "decision_correct": self.decision_correct}


def check_text(case: Case, answer: dict) -> tuple[list[list[str]], list[str]]:
    """must_mention groups missing from, and must_not_mention strings present in, what the answer
    shows: diagnosis + fix, and a lead's next steps (a triage entry's steps are shown as those)."""
    text = (answer.get("diagnosis", "") + "\n" + "\n".join(answer.get("fix", []))
            + "\n" + "\n".join(answer.get("next_steps", []))).lower()
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


def _share(part: int, whole: int, empty: float | None = 0.0) -> float | None:
    return round(part / whole, 4) if whole else empty


def confusion(results: list[CaseResult]) -> dict:
    """Expected fix / decline x outcome fix / lead / unknown; an expected fix answered with a
    fix for the wrong entry is also counted apart (`fix_wrong_entry`, part of `fix`). A case
    whose label is a triage entry expects a decline (its lead)."""
    table = {"expected_fix": dict.fromkeys(OUTCOMES, 0), "expected_decline": dict.fromkeys(OUTCOMES, 0)}
    table["expected_fix"]["fix_wrong_entry"] = 0
    for r in results:
        row = table["expected_fix" if r.expects_fix else "expected_decline"]
        row[r.outcome] = row.get(r.outcome, 0) + 1
        if r.expects_fix and r.outcome == FIX and not r.right_fix:
            row["fix_wrong_entry"] += 1
    return table


def coverage_by(results: list[CaseResult], key: str) -> dict:
    """Per value of a case label (error_class, coverage): cases, share answered with the right
    fix, share where the named fix or lead is at least relevant."""
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        value = getattr(r.case, key)
        if value:
            groups[value].append(r)
    table = {}
    for value, rs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        table[value] = {"cases": len(rs), "labelled_fix": sum(1 for r in rs if r.case.in_scope),
                        "right_fix": _share(sum(r.right_fix for r in rs), len(rs)),
                        "relevant": _share(sum(r.relevant for r in rs), len(rs)),
                        "decision_accuracy": _share(sum(r.decision_correct for r in rs), len(rs))}
    return table


def risk_coverage(results: list[CaseResult]) -> list[dict]:
    """Sweeping a confidence threshold over the `fix` answers: for each threshold, the share of
    all cases answered as fix (coverage) and the share of those that are the right fix."""
    fixes = sorted((r for r in results if r.outcome == FIX), key=lambda r: -r.confidence)
    points, right = [], 0
    for i, r in enumerate(fixes, 1):
        right += r.right_fix
        # one point per distinct threshold: after the last case of a confidence value
        if i == len(fixes) or fixes[i].confidence != r.confidence:
            points.append({"threshold": round(r.confidence, 3), "coverage": _share(i, len(results)),
                           "accuracy": _share(right, i), "answered": i})
    return points


def summarize(results: list[CaseResult]) -> dict:
    in_scope = [r for r in results if r.case.in_scope]
    n = len(in_scope)
    hit1 = sum(1 for r in in_scope if r.rank == 1)
    hit3 = sum(1 for r in in_scope if r.rank is not None and r.rank <= 3)
    mrr = sum(1.0 / r.rank for r in in_scope if r.rank) / n if n else None
    accurate = sum(1 for r in in_scope if r.answer_correct)
    should = [r for r in results if r.should_decline]
    did = [r for r in results if r.abstained]
    both = [r for r in did if r.should_decline]
    latencies = [r.latency_ms for r in results]
    outcomes = Counter(r.outcome for r in results)
    return {
        "cases": len(results), "in_scope": n, "out_of_scope": len(results) - n,
        # the in-scope measures are None (not measured) for a split with no in-scope case
        "hit@1": _share(hit1, n, empty=None),
        "hit@3": _share(hit3, n, empty=None),
        "mrr": round(mrr, 4) if n else None,
        "answer_accuracy": _share(accurate, n, empty=None),
        "decision_accuracy": _share(sum(r.decision_correct for r in results), len(results)),
        "abstain_precision": _share(len(both), len(did), empty=1.0),
        "abstain_recall": _share(len(both), len(should), empty=1.0),
        "false_abstentions": sum(1 for r in in_scope if r.abstained and r.expects_fix),
        "triage_cases": sum(1 for r in in_scope if not r.expects_fix),
        "wrong_fixes": sum(1 for r in results if r.outcome == FIX and not r.right_fix),
        "fix": outcomes[FIX], "lead": outcomes[LEAD], "unknown": outcomes[UNKNOWN],
        "unknown_flags": sum(len(r.unknown_flags) for r in results),
        "latency_p50_ms": round(_percentile(latencies, 0.5), 2),
        "latency_p95_ms": round(_percentile(latencies, 0.95), 2),
    }


def detailed(results: list[CaseResult]) -> dict:
    """summarize() plus the confusion table and, where cases carry the labels, coverage by
    error class, by coverage label and by kind of paste, and the risk-coverage points."""
    out = summarize(results)
    out["confusion"] = confusion(results)
    if any(r.case.error_class for r in results):
        out["by_error_class"] = coverage_by(results, "error_class")
        out["by_coverage"] = coverage_by(results, "coverage")
    if any(r.case.kind for r in results):
        out["by_kind"] = coverage_by(results, "kind")   # trace, question, log, out_of_scope
    out["risk_coverage"] = risk_coverage(results)
    return out
