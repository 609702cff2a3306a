"""Term statistics that ranking (`assistant.retrieve`) and the abstention decision
(`assistant.decision`) share: IDF over the index's chunks, and the masked, tokenized form of an
entry's signature line."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from assistant.index import Index
from assistant.text import mask, tokenize
from assistant.log_prefix import PREFIX_RE


def signature_text(sig: str) -> str:
    """The part of a signature line that is matched: a leading tag the trace reader takes for a
    log prefix (`[torch_memory_saver.cpp] `) is cut as it is cut from the user's lines, or the
    two could never match."""
    prefix = PREFIX_RE.match(sig)
    return sig[prefix.end():] if prefix and sig[prefix.end():].strip() else sig


@lru_cache(maxsize=4096)
def masked_signature(sig: str) -> tuple[str, frozenset]:
    """A signature line (see signature_text) with numbers, paths and addresses masked,
    lower-cased, and its tokens."""
    m = mask(signature_text(sig)).lower()
    return m, frozenset(tokenize(m))


def max_idf(index: Index) -> float:
    """The IDF of a token no chunk contains: the rarest possible."""
    n = len(index.chunk_unit)
    return float(np.log(1 + (n + 0.5) / 0.5))


def token_idf(index: Index, token: str) -> float:
    """IDF of any token: a token no chunk holds counts as the rarest (max_idf)."""
    return index_idf(index, token) if token in index.vocab else max_idf(index)


def index_idf(index: Index, token: str) -> float:
    """BM25 inverse document frequency of a token the index knows, over its chunks."""
    t = index.vocab[token]
    df = int(index.bm25["indptr"][t + 1] - index.bm25["indptr"][t])
    n = len(index.chunk_unit)
    return float(np.log(1 + (n - df + 0.5) / (df + 0.5)))
