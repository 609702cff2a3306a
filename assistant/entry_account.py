"""Does an entry's own account of its failure quote a given error line whole?

An entry lists the lines its failure prints as `signatures`, which retrieval looks for in the
paste; its title and symptoms tell the failure in sentences, and often quote its error message
there in backticks or double quotes (`AttributeError: 'NoneType' object has no attribute 'shape'`
raised in the torch_native backend). When such a quote holds the paste's whole root error — the
same message once numbers, paths and ids are masked and the exception class is set aside — the
entry says what that error is as surely as a signature line would: that none of its signature
lines is in the log (they are often the frames or the source line around the error) is then no
evidence against it.

Only for an entry that names its error message in its account alone, its signature lines being
frames and source lines (where the failure passes): one that lists its error messages as lines
says by that which variants of the message are its case, and a paste showing another is not.
Only a whole message counts: a quote of one identifier (`torch_memory_saver`) or of a shorter
message the paste's line goes on from names a topic, not this error.
"""

from __future__ import annotations

from functools import lru_cache

from assistant.exception_line import without_class_chain
from assistant.quoted_line import BACKTICK, DOUBLE, quotes
from assistant.text import mask, tokenize
from assistant.trace import analyze_lines

# a message shorter than this names too little to be one failure's (`Killed`, `Segmentation fault`)
MESSAGE_TOKENS = 4


def message(line: str) -> str:
    """The error's message: masked, lower-cased, without its exception class or closing stop."""
    return without_class_chain(mask(line).lower()).strip(" .")


@lru_cache(maxsize=4096)
def _quoted_messages(title: str, symptoms: tuple[str, ...]) -> tuple[str, ...]:
    found = []
    for text in (title, *symptoms):
        for quote in quotes(text, (BACKTICK, DOUBLE)):   # a code span or a double-quoted string
            quoted = message(quote.text)
            if len(tokenize(quoted)) >= MESSAGE_TOKENS:
                found.append(quoted)
    return tuple(found)


@lru_cache(maxsize=4096)
def _lists_error_lines(signatures: tuple[str, ...]) -> bool:
    """Some signature line is an error or warning message, not a frame, source line or path."""
    return any(analyze_lines([line]).errors for line in signatures)


def account_quotes(meta: dict, line: str) -> bool:
    """The entry's title or one of its symptoms quotes the whole message of `line`, and its
    signature lines list no error message of their own."""
    if _lists_error_lines(tuple(meta.get("signatures") or ())):
        return False
    wanted = message(line)
    if len(tokenize(wanted)) < MESSAGE_TOKENS:
        return False
    return any(wanted in quoted for quoted in _quoted_messages(meta.get("title") or "", tuple(meta.get("symptoms") or ())))
