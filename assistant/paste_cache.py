"""One reading of a paste per kind: what the retriever, the decision, the answer and the prompt
all ask of the same analysis (its origin, its dependency pin, its OOM numbers, ...) is computed
once and kept for the few analyses in flight."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from assistant.trace import Analysis

T = TypeVar("T")
MAX_READINGS = 64   # (analysis, kind) pairs kept: a few pastes answered at once, each read a few ways

_cache: OrderedDict[tuple[int, str], tuple[object, object]] = OrderedDict()


def per_analysis(kind: str, analysis: "Analysis", compute: Callable[["Analysis"], T]) -> T:
    """compute(analysis), once per analysis object and kind."""
    key = (id(analysis), kind)
    hit = _cache.get(key)
    if hit is not None and hit[0] is analysis:
        return hit[1]
    value = compute(analysis)
    _cache[key] = (analysis, value)
    while len(_cache) > MAX_READINGS:
        _cache.popitem(last=False)
    return value
