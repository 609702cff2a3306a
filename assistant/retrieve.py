"""Hybrid retrieval over units: lexical (BM25 on identifier-aware tokens) plus dense (MiniLM),
fused by reciprocal rank, plus a boost for exact signature matches; then the decision to abstain.

Chunks are scored, units are returned: a unit scores as its best chunk. Curated KB entries rank
above documents and issues that say the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from assistant.index import Index
from assistant.text import mask, tokenize
from assistant.trace import Analysis, analyze

RRF_K = 20
CANDIDATES = 60
KIND_PRIOR = {"entry": 1.0, "doc": 0.85, "issue": 0.9}
MODES = ("hybrid", "lexical", "dense")


@dataclass(frozen=True)
class Hit:
    unit_id: str
    kind: str
    title: str
    title_zh: str
    url: str | None
    score: float            # fused score used for ranking
    lexical: float          # best chunk BM25, normalised by the query's best
    dense: float            # best chunk cosine
    signature: float        # 1.0 = a signature line occurs in the user's log
    evidence: tuple[str, ...]
    meta: dict = field(repr=False, default_factory=dict)


@dataclass(frozen=True)
class Retrieval:
    hits: tuple[Hit, ...]
    confidence: float       # 0..1, calibrated on the dev cases
    abstain: bool
    analysis: Analysis


# Abstention, set on evals/cases/dev.jsonl: answer when a signature line of the top hit occurs in
# the log, or when dense similarity and lexical coverage together are high enough. A paste from
# another program (vLLM, a Java app, ...) that never mentions SGLang needs a signature match.
SIGNATURE_OK = 0.6
EVIDENCE_OK = 0.685           # dense cosine + 0.5 * lexical coverage of the query by the hit
COVERAGE_WEIGHT = 0.5


@lru_cache(maxsize=4096)
def _masked_signature(sig: str) -> tuple[str, frozenset]:
    m = mask(sig).lower()
    return m, frozenset(tokenize(m))


def _strip_placeholders(text: str) -> str:
    return re.sub(r"<(?:n|size|ts|ip|addr|hex)>", " ", text)


LINE_WEIGHT = {"exception": 1.0, "fatal": 1.0, "warning": 0.75, "consequence": 0.45}
OTHER_LINE_WEIGHT = 0.7   # a signature can be a plain log line, e.g. where a hang stops


def line_weights(analysis: Analysis) -> dict[str, float]:
    """How much a signature matching each masked line counts: a match on the root error beats a
    match on a consequence line ("terminated with -3") that many problems share."""
    weights = {}
    only_consequences = all(e.kind == "consequence" for e in analysis.errors)
    for rank, err in enumerate(analysis.errors):
        weight = 0.9 if only_consequences else LINE_WEIGHT[err.kind]
        weights[err.masked.lower()] = weight * (1.0 if rank == 0 else 0.95)
    return weights


def signature_match(signatures: list[str], lines: tuple[str, ...], joined: str,
                    weights: dict[str, float] | None = None) -> tuple[float, list[str]]:
    """Best match quality of any signature against the user's masked lines, and the lines."""
    weights = weights or {}
    best, evidence = 0.0, []
    for sig in signatures:
        msig, sig_tokens = _masked_signature(sig)
        core = _strip_placeholders(msig).strip()
        if len(core) < 12:
            continue
        if msig in joined:
            hits = [ln for ln in lines if msig in ln.lower()]
            weight = max((weights.get(ln.lower(), OTHER_LINE_WEIGHT) for ln in hits), default=OTHER_LINE_WEIGHT)
            if weight > best:
                best, evidence = weight, hits[:2]
            elif weight == best:
                evidence += hits[:2]
            continue
        if not sig_tokens or len(sig_tokens) < 4:
            continue
        for ln in lines:
            lt = frozenset(tokenize(ln.lower()))
            overlap = len(sig_tokens & lt) / len(sig_tokens)
            if overlap >= 0.8:
                score = overlap * 0.9 * weights.get(ln.lower(), OTHER_LINE_WEIGHT)
                if score > best:
                    best, evidence = score, [ln]
    return best, list(dict.fromkeys(evidence))


class Retriever:
    def __init__(self, index: Index, encoder):
        self.index = index
        self.encoder = encoder

    def search(self, text_or_analysis, k: int = 5, mode: str = "hybrid", use_trace: bool = True) -> Retrieval:
        analysis = text_or_analysis if isinstance(text_or_analysis, Analysis) else analyze(text_or_analysis)
        if use_trace:
            query = analysis.query_text()
            lines = analysis.masked_lines
        else:  # baseline: the raw paste, no triage
            raw = text_or_analysis if isinstance(text_or_analysis, str) else analysis.query_text()
            query = raw[:4000]
            lines = tuple(mask(ln) for ln in raw.splitlines()[:400])
        n_units = len(self.index.units)
        lex_unit = np.zeros(n_units, dtype=np.float32)
        dense_unit = np.zeros(n_units, dtype=np.float32)
        tokens = tokenize(query)
        if mode in ("hybrid", "lexical") and tokens:
            chunk_scores = self.index.lexical_scores(tokens)
            np.maximum.at(lex_unit, self.index.chunk_unit, chunk_scores)
        if mode in ("hybrid", "dense") and query.strip():
            vec = self.encoder.encode([_dense_query(analysis, query, use_trace)])[0]
            scores, rows = self.index.dense_search(vec, CANDIDATES * 4)
            np.maximum.at(dense_unit, self.index.chunk_unit[rows], scores)
        lex_top = float(lex_unit.max()) if n_units else 0.0
        lex_norm = lex_unit / lex_top if lex_top > 0 else lex_unit

        candidates: set[int] = set()
        fused: dict[int, float] = {}
        for scores in ((lex_unit,) if mode == "lexical" else (dense_unit,) if mode == "dense"
                       else (lex_unit, dense_unit)):
            order = np.argsort(-scores)[:CANDIDATES]
            for rank, u in enumerate(order):
                if scores[u] <= 0:
                    break
                candidates.add(int(u))
                fused[int(u)] = fused.get(int(u), 0.0) + 1.0 / (RRF_K + rank + 1)
        max_fused = (2 if mode == "hybrid" else 1) / (RRF_K + 1)
        joined = "\n".join(lines).lower()
        weights = line_weights(analysis) if use_trace else {}
        hits = []
        for u in candidates:
            unit = self.index.units[u]
            sigs = unit.meta.get("signatures") or []
            sig, evidence = signature_match(sigs, lines, joined, weights) if sigs else (0.0, [])
            if not evidence:
                evidence = _overlap_evidence(unit, analysis)
            score = (fused.get(u, 0.0) / max_fused + sig) * KIND_PRIOR.get(unit.kind, 0.8)
            score *= _issue_prior(unit.meta) if unit.kind == "issue" else 1.0
            hits.append(Hit(unit.id, unit.kind, unit.title, unit.title_zh, unit.url, round(score, 4),
                            round(float(lex_norm[u]), 4), round(float(dense_unit[u]), 4),
                            round(sig, 3), tuple(evidence[:3]), unit.meta))
        hits.sort(key=lambda h: -h.score)
        hits = hits[:k]
        confidence, abstain = decide(hits, tokens, self.index, analysis)
        return Retrieval(tuple(hits), confidence, abstain, analysis)


def _dense_query(analysis: Analysis, query: str, use_trace: bool) -> str:
    if not use_trace:
        return query[:2000]
    parts = [e.text for e in analysis.errors if e.kind in ("exception", "fatal")][:3]
    if not parts:
        parts = [e.text for e in analysis.errors[:3]]
    if analysis.question:
        parts.insert(0, analysis.question[:500])
    return "\n".join(parts) or query[:2000]


def _overlap_evidence(unit, analysis: Analysis) -> list[str]:
    terms = set(tokenize(" ".join([unit.title, *(unit.meta.get("keywords") or [])])))
    scored = []
    for e in analysis.errors[:20]:
        overlap = len(terms & set(tokenize(e.text)))
        if overlap >= 2:
            scored.append((overlap, e.text))
    scored.sort(key=lambda x: -x[0])
    return [t for _, t in scored[:2]]


def _issue_prior(meta: dict) -> float:
    if meta.get("state") == "closed" and meta.get("resolved"):
        return 1.0
    if meta.get("state") == "closed":
        return 0.9
    return 0.8


def decide(hits, tokens, index, analysis: Analysis | None = None) -> tuple[float, bool]:
    """Confidence in the top hit (0..1) and whether to abstain."""
    if not hits:
        return 0.0, True
    top = hits[0]
    if top.signature >= SIGNATURE_OK:
        return round(0.8 + 0.2 * top.signature, 3), False
    evidence = top.dense + COVERAGE_WEIGHT * _coverage(top, tokens, index)
    foreign = analysis is not None and analysis.other_software and not analysis.mentions_sglang
    confidence = max(0.0, min(0.79, 0.6 + (evidence - EVIDENCE_OK)))
    if foreign:
        confidence = min(confidence, 0.5)
    return round(confidence, 3), evidence < EVIDENCE_OK or bool(foreign)


def _coverage(hit: Hit, tokens: list[str], index: Index) -> float:
    """Share of the query's distinctive tokens that the hit's text contains."""
    distinct = [t for t in dict.fromkeys(tokens) if t in index.vocab]
    if not distinct:
        return 0.0
    unit = index.units[index.unit_by_id[hit.unit_id]]
    text_tokens = set()
    for row in unit.chunk_rows:
        text_tokens.update(tokenize(index.chunk_text(row)))
    idf_weight = [(t, _idf(index, t)) for t in distinct]
    total = sum(w for _, w in idf_weight)
    got = sum(w for t, w in idf_weight if t in text_tokens)
    return got / total if total else 0.0


def _idf(index: Index, token: str) -> float:
    t = index.vocab[token]
    df = int(index.bm25["indptr"][t + 1] - index.bm25["indptr"][t])
    n = len(index.chunk_unit)
    return float(np.log(1 + (n - df + 0.5) / (df + 0.5)))
