"""Telling two entries apart that share an error line: the words that mean the sibling's case.

Error 802 `system not yet initialized` is printed by an 8-GPU NVSwitch host whose Fabric Manager is
not running and by a confidential-computing guest (Intel TDX, AMD SEV-SNP) whose GPUs are not yet
ready; the first entry's fix (install Fabric Manager on the host) is wrong for the second. The line
cannot tell them apart, the paste's other words can. An entry names its siblings and those words
(`tell_apart` in its front matter); the decision (`assistant.decision`) then hands a paste that says
one of them to the sibling, and never shows this entry's fix for it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from assistant.components import NEGATED_RE
from assistant.trace import Analysis


@lru_cache(maxsize=1024)
def _word_re(word: str) -> re.Pattern:
    # a Latin word stands alone (`TDX`, not inside `TDXL`); a Chinese one anywhere
    if re.search(r"[A-Za-z0-9]", word):
        return re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", re.I)
    return re.compile(re.escape(word))


def paste_words(analysis: Analysis) -> str:
    """Everything the user pasted and wrote, as one text."""
    return "\n".join((analysis.question, *analysis.plain_lines, *(e.text for e in analysis.errors)))


def pointed_sibling(meta: dict, analysis: Analysis) -> tuple[str, str] | None:
    """(sibling entry id, the word in the paste that points to it) for the first sibling the paste
    names a word of, unless the user says they do not use it ("not a TDX guest"); None otherwise."""
    siblings = meta.get("tell_apart") or ()
    if not siblings:
        return None
    text = paste_words(analysis)
    for sibling in siblings:
        for word in sibling.get("words") or ():
            for found in _word_re(word).finditer(text):
                if not NEGATED_RE.search(text[max(0, found.start() - 24):found.start()]):
                    return sibling["entry"], found.group(0)
    return None
