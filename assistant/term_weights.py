"""Term statistics that ranking (`assistant.retrieve`) and the abstention decision
(`assistant.decision`) share: IDF over the index's chunks, and the masked, tokenized form of an
entry's signature line."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from assistant.index import Index
from assistant.text import mask, tokenize


@lru_cache(maxsize=4096)
def masked_signature(sig: str) -> tuple[str, frozenset]:
    """A signature line with numbers, paths and addresses masked, lower-cased, and its tokens."""
    m = mask(sig).lower()
    return m, frozenset(tokenize(m))


def max_idf(index: Index) -> float:
    """The IDF of a token no chunk contains: the rarest possible."""
    n = len(index.chunk_unit)
    return float(np.log(1 + (n + 0.5) / 0.5))


def index_idf(index: Index, token: str) -> float:
    """BM25 inverse document frequency of a token the index knows, over its chunks."""
    t = index.vocab[token]
    df = int(index.bm25["indptr"][t + 1] - index.bm25["indptr"][t])
    n = len(index.chunk_unit)
    return float(np.log(1 + (n - df + 0.5) / (df + 0.5)))
