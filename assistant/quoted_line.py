"""What the user quoted: the spans they set off in quote marks, backticks or corner brackets, the
marks that count, the length of their sentence around a quote, and whether a quote is one of an
entry's own error lines: "why does sglang say 'dp_size must be 1 or dp attention must be enabled
for update weights from distributed'?".

A question that quotes the error it got reports that error, whatever words ask about it. The
quote is told by its marks; it is the entry's line when, numbers and paths masked, one holds the
other and the quoted part is a line's worth of words, not a phrase many lines share. A generic line
(`CUDA out of memory`) names no entry. The trace reader (an error message quoted in a sentence, a
program's own quoted values), retrieval (`retrieve.quoted_signature_match`), the answer's language
(quoted values are not the user's words), an entry's account (the messages its title quotes) and
the decision (an error the user quotes that the entry does not explain) read quotes through this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from assistant.generic_lines import is_generic
from assistant.term_weights import masked_signature, signature_text
from assistant.text import CHINESE_CHAR_RE, mask

# the marks a span is set off with: (the marks that open it, the marks that close it)
BACKTICK, DOUBLE, SINGLE = ("`", "`"), ('"', '"'), ("'", "'")
CURLY_DOUBLE, CURLY_SINGLE, CORNER = ("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u300c", "\u300d")
ALL_MARKS = (BACKTICK, DOUBLE, SINGLE, CURLY_DOUBLE, CURLY_SINGLE, CORNER)
# double quotes, straight or curly on either side: a pasted message's closing quote is often not
# the opening's twin (“Capture cuda graph failed: CUDA out of memory")
ANY_DOUBLE = ('"\u201c', '"\u201d')
# the marks around a quoted error message: a Python message holds single quotes of its own (`got an
# unexpected keyword argument 'residual'`), so they cannot be the user's marks around it
MESSAGE_MARKS = (BACKTICK, ANY_DOUBLE)
# a quote shorter than this is a name or a word, not a line
MIN_QUOTED_CHARS = 12
# the share of an entry's error line a quote must hold when the user quotes only part of it
MIN_QUOTED_SHARE = 0.6
MIN_QUOTED_WORDS = 5
# words of the user's own around their quotes: a short sentence around a quote asks about it; a
# longer description of a setup quotes one symptom among those its words tell
MAX_WORDS_AROUND = 12


class Quote(NamedTuple):
    text: str    # what stands between the marks, as written
    start: int   # where the opening mark is
    end: int     # just after the closing mark


@lru_cache(maxsize=None)
def _quote_re(marks: tuple[tuple[str, str], ...], min_chars: int, apostrophes: bool) -> re.Pattern:
    alternatives = []
    for opening, closing in marks:
        opening, closing = re.escape(opening), re.escape(closing)
        quote = f"[{opening}]([^{closing}\\n]{{{min_chars},}})[{closing}]"
        if opening == "'" and not apostrophes:
            # a single quote with a Latin letter on its outer side is an apostrophe ("doesn't", "it's")
            quote = f"(?<![A-Za-z]){quote}(?![A-Za-z])"
        alternatives.append(quote)
    return re.compile("|".join(alternatives))


def quotes(text: str, marks: tuple[tuple[str, str], ...] = ALL_MARKS, min_chars: int = MIN_QUOTED_CHARS, pos: int = 0,
           apostrophes: bool = False) -> list[Quote]:
    """The spans `text` sets off in `marks` (from `pos` on), each on one line and between an opening
    mark and a closing mark of its pair. `apostrophes` takes every single quote as a mark, as a program
    quotes a value (`'Foo' object has no attribute 'bar'`)."""
    return [Quote(m.group(m.lastindex), m.start(), m.end())
            for m in _quote_re(tuple(marks), min_chars, apostrophes).finditer(text, pos)]


def quoted_spans(lines) -> tuple[str, ...]:
    """The spans the user's own short sentences set off in quote marks, backticks or corner
    brackets, as they wrote them: an error line they quote and ask about ("why does sglang say
    'dp_size must be 1 ...'?", 启动时报「Failed to find C compiler」，怎么办？)."""
    spans = []
    for line in lines:
        found = quotes(line)
        if found and words_around(line, found) <= MAX_WORDS_AROUND:
            spans += [q.text.strip() for q in found if q.text.strip()]
    return tuple(dict.fromkeys(spans))


# an error message the user quotes in their own words opens with a letter and is a line's worth of
# them: `[Bug] "invalid configuration argument" during ...`, 报错「Failed to find C compiler」
MAX_MESSAGE_CHARS = 120
QUOTED_MESSAGE_MARKS = (BACKTICK, ANY_DOUBLE, SINGLE, CURLY_SINGLE, CORNER)


def quoted_messages(words: str) -> list[str]:
    """The error messages the user's words quote, as written: spans that open with a letter and
    are no longer than a line. A message holds single quotes of its own (`got an unexpected keyword
    argument 'residual'`): inside double quotes or backticks they are part of it."""
    return [q.text for q in quotes(words, QUOTED_MESSAGE_MARKS)
            if q.text[:1].isascii() and q.text[:1].isalpha() and len(q.text) <= MAX_MESSAGE_CHARS]


def outside_quotes(text: str, found: list[Quote]) -> str:
    """The text with each of its quotes `found`, marks and all, replaced by a space."""
    edges = [0, *(at for q in found for at in (q.start, q.end)), len(text)]
    return " ".join(text[edges[i]:edges[i + 1]] for i in range(0, len(edges), 2))


def words_around(line: str, found: list[Quote]) -> int:
    """The words of a line outside its quotes; a Chinese character counts as half a word."""
    around = outside_quotes(line, found)
    return len(around.split()) + len(CHINESE_CHAR_RE.findall(around)) // 2


def quotable_lines(signatures) -> Iterator[tuple[str, str]]:
    """An entry's error lines a quote can name, each with its masked form: not the generic ones
    every crash prints."""
    for sig in signatures or ():
        if not is_generic(signature_text(sig)):
            yield sig, masked_signature(sig)[0]


def quotes_entry_line(meta: dict, words: str) -> bool:
    """True when `words` (the user's own) quote one of the entry's specific error lines."""
    found = [mask(q.text).lower().strip(" .,;:?!") for q in quotes(words)]
    found = [q for q in found if len(q.split()) >= MIN_QUOTED_WORDS]
    if not found:
        return False
    return any(line in quote or (quote in line and len(quote) >= MIN_QUOTED_SHARE * len(line))
               for _, line in quotable_lines(meta.get("signatures")) for quote in found)
