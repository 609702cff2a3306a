"""The words of an entry's own account of its failure (its title and symptoms) that few entries of
the KB use, and which of them a report repeats.

A report told in words shows none of an entry's error lines; what says it is about that entry and
not only its topic is that it repeats words only a few entries use: a flag (`--eplb-rebalance-
num-iterations`), a field (`logit_bias`, `uniqueItems`), a product or platform (`TDX`, `EPYC`),
an observable named the entry's way (`rebalance`, `lookahead`). Words every entry of an area uses
("streaming", "garbled", "crash") say the topic only, and so do words of the title alone: the title
names the entry's area (`--enable-eplb`, `reasoning_effort`); a report of its case also says
something only a symptom of it says (`--eplb-rebalance-num-iterations`, `uniqueItems`, `TDX guest`).
"""

from __future__ import annotations

import weakref
from collections import Counter

from assistant.index import Index
from assistant.term_weights import masked_signature

# a word at most this many entries use is one of the few that name their case
FEW_ENTRIES = 10

_entry_counts: "weakref.WeakKeyDictionary[Index, Counter]" = weakref.WeakKeyDictionary()


def entries_using(index: Index) -> Counter:
    """For each word of the KB, how many entries use it anywhere in their text (read once per index)."""
    counts = _entry_counts.get(index)
    if counts is None:
        counts = Counter()
        for row, unit in enumerate(index.units):
            if unit.kind == "entry":
                counts.update(index.unit_tokens(row))
        _entry_counts[index] = counts
    return counts


def _words(lines) -> frozenset[str]:
    """The words of lines, masked as an entry's lines are matched."""
    words: set[str] = set()
    for line in lines:
        words |= masked_signature(line)[1]
    return frozenset(words)


def repeated_distinctive_words(hit, tokens, index: Index) -> frozenset[str]:
    """The user's words that are words of the hit's own account (title, symptoms) and that at most
    FEW_ENTRIES entries use; none when all of them are words of the title alone (its area)."""
    counts = entries_using(index)
    title = _words([hit.title or ""])
    shared = (title | _words(hit.meta.get("symptoms") or ())) & set(tokens)
    distinctive = frozenset(word for word in shared if counts[word] <= FEW_ENTRIES)
    return distinctive if distinctive - title else frozenset()
