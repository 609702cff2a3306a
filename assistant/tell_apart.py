"""Telling two entries apart that share an error line: the words that mean the sibling's case.

Error 802 `system not yet initialized` is printed by an 8-GPU NVSwitch host whose Fabric Manager is
not running and by a confidential-computing guest (Intel TDX, AMD SEV-SNP) whose GPUs are not yet
ready; the first entry's fix (install Fabric Manager on the host) is wrong for the second. The line
cannot tell them apart, the paste's other words can. An entry names its siblings and those words
(`tell_apart` in its front matter); the decision (`assistant.decision`) then hands a paste that says
one of them to the sibling, and never shows this entry's fix for it.

A user may also say they checked what the entry blames and found it fine ("cat config.json shows
normal JSON" against an entry blaming a config.json that does not parse). An entry lists those
words (`cleared_by`); a paste that says one is outside the entry (`cleared_cause`), which is then
a lead at most, however well its error line matches.
"""

from __future__ import annotations

import re
from functools import lru_cache

from assistant.negation import BEFORE_RE as NEGATED_BEFORE_RE
from assistant.trace import Analysis
from assistant.wording import Sentence


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
            said = _said(word, text)
            if said:
                return sibling["entry"], said
    return None


def _said(word: str, text: str) -> str | None:
    """The word as the text says it, unless the words right before deny it ("not a TDX guest")."""
    for found in _word_re(word).finditer(text):
        if not NEGATED_BEFORE_RE.search(text[max(0, found.start() - 24):found.start()]):
            return found.group(0)
    return None


def cleared_cause(meta: dict, analysis: Analysis) -> Sentence | None:
    """The user says what the entry blames is checked and fine (one of its `cleared_by` words)."""
    words = meta.get("cleared_by") or ()
    if not words:
        return None   # nearly every entry: no need to read the paste
    text = paste_words(analysis)
    for word in words:
        said = _said(word, text)
        if said:
            return Sentence(f"You say \"{said}\": that is what this entry blames, already checked and found fine, "
                            "so its fix is not yours.",
                            f"你说“{said}”：这正是这个条目归咎的地方，你已经检查过且没有问题，所以它的修复方法不适用。")
    return None
