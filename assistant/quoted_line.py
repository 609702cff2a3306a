"""An entry's own error line that the user quotes inside a question: "why does sglang say
'dp_size must be 1 or dp attention must be enabled for update weights from distributed'?".

A question that quotes the error it got reports that error, whatever words ask about it. The
quote is told by its marks (quotes, backticks); it is the entry's line when, numbers and paths
masked, one holds the other and the quoted part is a line's worth of words, not a phrase many lines
share. A generic line (`CUDA out of memory`) names no entry.
"""

from __future__ import annotations

import re

from assistant.generic_lines import is_generic
from assistant.term_weights import masked_signature, signature_text
from assistant.text import CHINESE_CHAR_RE, mask

# a span between matching quote marks, backticks or corner brackets, on one line; a single quote
# with a Latin letter on its outer side is an apostrophe ("doesn't", "it's"), not a mark
QUOTED_RE = re.compile(r"`([^`\n]{12,})`|\"([^\"\n]{12,})\"|(?<![A-Za-z])'([^'\n]{12,})'(?![A-Za-z])"
                       r"|\u201c([^\u201d\n]{12,})\u201d|\u2018([^\u2019\n]{12,})\u2019|\u300c([^\u300d\n]{12,})\u300d")
# the share of an entry's error line a quote must hold when the user quotes only part of it
MIN_QUOTED_SHARE = 0.6
MIN_QUOTED_WORDS = 5


# words of the user's own around their quotes: a short sentence around a quote asks about it; a
# longer description of a setup quotes one symptom among those its words tell
MAX_WORDS_AROUND = 12


def quoted_spans(lines) -> tuple[str, ...]:
    """The spans the user's own short sentences set off in quote marks, backticks or corner
    brackets, as they wrote them: an error line they quote and ask about ("why does sglang say
    'dp_size must be 1 ...'?", 启动时报「Failed to find C compiler」，怎么办？)."""
    return tuple(dict.fromkeys(span.strip() for line in lines if _words_around(line) <= MAX_WORDS_AROUND
                               for m in QUOTED_RE.finditer(line) for span in m.groups() if span and span.strip()))


def _words_around(line: str) -> int:
    """The words of a line outside its quotes; a Chinese character counts as half a word."""
    around = QUOTED_RE.sub(" ", line)
    return len(around.split()) + len(CHINESE_CHAR_RE.findall(around)) // 2


def quotes_entry_line(meta: dict, words: str) -> bool:
    """True when `words` (the user's own) quote one of the entry's specific error lines."""
    quotes = [mask(span).lower().strip(" .,;:?!") for m in QUOTED_RE.finditer(words) for span in m.groups() if span]
    quotes = [q for q in quotes if len(q.split()) >= MIN_QUOTED_WORDS]
    if not quotes:
        return False
    for sig in meta.get("signatures") or ():
        if is_generic(signature_text(sig)):
            continue
        line = masked_signature(sig)[0]
        if any(line in quote or (quote in line and len(quote) >= MIN_QUOTED_SHARE * len(line)) for quote in quotes):
            return True
    return False
