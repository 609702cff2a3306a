"""Which of an entry's error lines belong to the program the paste comes from.

Some entries cover one situation across several programs: "a framework that launches SGLang hides
its error" lists xinference's `Initialization failed`, GPUStack's `Inference server exited or
unhealthy.`, AReaL's `server launch failed` and olmOCR's retries side by side. A lead on such an
entry says which line would confirm it; a GPUStack user is not helped by xinference's line, which
their log can never show.

The entry does not say in a field which line is whose, but its own text does: a line names its
program (`gpustack.worker.backends.base - ERROR - ...`), or a symptom or step that names the program
quotes the line ("GPUStack marks an SGLang deployment failed ('Inference server exited or
unhealthy.')"). The programs are the entry's one-word keywords (`GPUStack`, `olmOCR`, `xinference`)
that tie some of its lines, and not all, to themselves.
"""

from __future__ import annotations

import re
from functools import lru_cache

from assistant.text import mask

# a keyword that can name a program: one word, not SGLang's own names (every line is SGLang's)
PROGRAM_WORD_RE = re.compile(r"[A-Za-z][\w.-]{3,}")
OWN_NAMES_RE = re.compile(r"sglang|sgl[._-]|launch_server", re.I)


def _word(term: str) -> re.Pattern:
    return re.compile(rf"(?<![\w-]){re.escape(term)}(?![\w-])", re.I)


@lru_cache(maxsize=512)
def _owners(signatures: tuple[str, ...], keywords: tuple[str, ...], texts: tuple[str, ...]) -> tuple[frozenset, ...]:
    """For each signature, the program words that tie it to a program."""
    terms = {k.lower() for k in keywords if PROGRAM_WORD_RE.fullmatch(k) and not OWN_NAMES_RE.search(k)}
    patterns = {term: _word(term) for term in terms}
    masked_texts = [(text, mask(" ".join(text.split())).lower()) for text in texts]
    owners = []
    for signature in signatures:
        line = " ".join(signature.split())
        core = mask(line).lower()
        own = {term for term, pattern in patterns.items() if pattern.search(line)}
        for text, masked in masked_texts:
            if len(core) >= 12 and core in masked:
                own |= {term for term, pattern in patterns.items() if pattern.search(text)}
        owners.append(frozenset(own))
    # a word that ties every line to itself tells none of them apart
    common = frozenset.intersection(*owners) if owners else frozenset()
    return tuple(own - common for own in owners)


def program_signatures(meta: dict, paste_text: str) -> list[str] | None:
    """The entry's signatures tied to a program the paste names, in the entry's order; None when
    the paste names none of the programs the entry ties lines to (then every line may apply)."""
    signatures = tuple(str(s) for s in meta.get("signatures") or ())
    texts = tuple(str(s) for s in meta.get("symptoms") or ()) + tuple(
        str(step.get("text", "")) for step in meta.get("fix") or () if isinstance(step, dict))
    owners = _owners(signatures, tuple(str(k) for k in meta.get("keywords") or ()), texts)
    programs = set().union(*owners) if owners else set()
    named = {term for term in programs if _word(term).search(paste_text)}
    if not named:
        return None
    return [signature for signature, own in zip(signatures, owners) if own & named]
