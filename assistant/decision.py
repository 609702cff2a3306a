"""The decision to answer or abstain: how confident the top retrieved hit is (0..1), and whether
that is enough to show its fix. Retrieval ranks (`assistant.retrieve`); this module decides.

Hits are `assistant.retrieve.Hit` objects, used by their fields only (unit_id, score, dense,
signature, meta), so this module does not import retrieval.
"""

from __future__ import annotations

from assistant.index import Index
from assistant.term_weights import index_idf, masked_signature
from assistant.text import tokenize
from assistant.trace import Analysis

# Abstention, set on evals/cases/dev.jsonl: answer when a signature line of the top hit occurs in
# the log, or when dense similarity and lexical coverage together are high enough. A paste from
# another program (vLLM, a Java app, ...) that never mentions SGLang needs a signature match.
SIGNATURE_OK = 0.6
# evidence = dense cosine + 0.5 * query covered by the hit + 0.5 * the hit's error line covered by
# the query + how far the hit is ahead of the second (a clear winner, not one of many near-misses)
EVIDENCE_OK = 0.93
COVERAGE_WEIGHT = 0.5
SIGNATURE_COVERAGE_WEIGHT = 0.5


def decide(hits, tokens, index, analysis: Analysis | None = None, idf=None) -> tuple[float, bool]:
    """Confidence in the top hit (0..1) and whether to abstain."""
    if not hits:
        return 0.0, True
    top = hits[0]
    # a paste from another program (a training job, vLLM, a Java app) that never mentions SGLang:
    # even a matching error line (a PyTorch OOM) does not make an SGLang fix apply
    foreign = analysis is not None and bool(analysis.other_software) and not analysis.mentions_sglang
    if top.signature >= SIGNATURE_OK:
        confidence = round(min(1.0, 0.8 + 0.2 * top.signature), 3)
        return (min(confidence, 0.5), True) if foreign else (confidence, False)
    margin = top.score - (hits[1].score if len(hits) > 1 else 0.0)
    evidence = (top.dense + COVERAGE_WEIGHT * _coverage(top, tokens, index, idf)
                + SIGNATURE_COVERAGE_WEIGHT * signature_coverage(top, tokens, idf) + margin)
    confidence = max(0.0, min(0.79, 0.6 + (evidence - EVIDENCE_OK) / 2))
    if foreign:
        confidence = min(confidence, 0.5)
    return round(confidence, 3), evidence < EVIDENCE_OK or bool(foreign)


def signature_coverage(hit, tokens: list[str], idf=None) -> float:
    """How much of the hit's best error line (or symptom) the user's words contain, weighted by
    rarity: a paraphrase of `peer access is not supported` still covers most of it."""
    idf = idf or (lambda token: 1.0)
    query = set(tokens)
    best = 0.0
    for line in hit.meta.get("signatures") or hit.meta.get("symptoms") or []:
        _, sig_tokens = masked_signature(line)
        total = sum(idf(t) for t in sig_tokens)
        if total:
            best = max(best, sum(idf(t) for t in sig_tokens if t in query) / total)
    return best


def _coverage(hit, tokens: list[str], index: Index, idf=None) -> float:
    """Share of the query's distinctive tokens that the hit's text contains."""
    distinct = [t for t in dict.fromkeys(tokens) if t in index.vocab]
    if not distinct:
        return 0.0
    unit = index.units[index.unit_by_id[hit.unit_id]]
    text_tokens = set()
    for row in unit.chunk_rows:
        text_tokens.update(tokenize(index.chunk_text(row)))
    idf = idf or (lambda token: index_idf(index, token))
    idf_weight = [(t, idf(t)) for t in distinct]
    total = sum(w for _, w in idf_weight)
    got = sum(w for t, w in idf_weight if t in text_tokens)
    return got / total if total else 0.0
