"""Which of an entry's error lines belong to the program the paste comes from.

Some entries cover one situation across several programs: "a framework that launches SGLang hides
its error" lists xinference's `Initialization failed`, GPUStack's `Inference server exited or
unhealthy.`, AReaL's `server launch failed` and olmOCR's retries side by side. A lead on such an
entry says which line would confirm it; a GPUStack user is not helped by xinference's line, which
their log can never show.

The entry does not say in a field which line is whose, but its own text does: a line names its
program (`gpustack.worker.backends.base - ERROR - ...`), or a symptom or step that names the program
quotes the line ("GPUStack marks an SGLang deployment failed ('Inference server exited or
unhealthy.')"). The programs are those that start SGLang for their user (`LAUNCHERS`); an entry
that ties its lines to two or more of them is chosen from by the one the paste names.
"""

from __future__ import annotations

import re
from functools import lru_cache

from assistant.text import mask

# the programs that start SGLang for their user and print their own lines around its failure:
# serving layers, RL trainers, document pipelines (their names as the KB writes them)
LAUNCHERS = ("xinference", "gpustack", "olmocr", "mineru", "dynamo", "fastchat", "ms-swift", "swift", "verl",
             "slime", "areal", "openrlhf", "llamafactory", "llama-factory", "nemo-rl", "trl", "ktransformers",
             "lws", "rbg", "kserve", "triton-inference-server", "ray serve", "litellm", "dify", "open-webui")


def _word(term: str) -> re.Pattern:
    return re.compile(rf"(?<![\w-]){re.escape(term)}(?![\w-])", re.I)


PATTERNS = {name: _word(name) for name in LAUNCHERS}


@lru_cache(maxsize=512)
def _owners(signatures: tuple[str, ...], texts: tuple[str, ...]) -> tuple[frozenset, ...]:
    """For each signature, the launchers the entry ties it to: named on the line itself, or in a
    symptom or step that quotes the line."""
    named_texts = [(frozenset(name for name, pattern in PATTERNS.items() if pattern.search(text)),
                    mask(" ".join(text.split())).lower()) for text in texts]
    owners = []
    for signature in signatures:
        line = " ".join(signature.split())
        core = mask(line).lower()
        own = {name for name, pattern in PATTERNS.items() if pattern.search(line)}
        for names, masked in named_texts:
            if names and len(core) >= 12 and core in masked:
                own |= names
        owners.append(frozenset(own))
    return tuple(owners)


def program_signatures(meta: dict, paste_text: str) -> list[str] | None:
    """The entry's signatures tied to a program the paste names, in the entry's order; None when
    the entry ties its lines to fewer than two programs, or the paste names none of them (then
    every line may apply)."""
    signatures = tuple(str(s) for s in meta.get("signatures") or ())
    texts = tuple(str(s) for s in meta.get("symptoms") or ()) + tuple(
        str(step.get("text", "")) for step in meta.get("fix") or () if isinstance(step, dict))
    owners = _owners(signatures, texts)
    programs = set().union(*owners) if owners else set()
    if len(programs) < 2:
        return None   # an entry about one program's lines (a package's own messages): nothing to choose
    named = {term for term in programs if PATTERNS[term].search(paste_text)}
    if not named:
        return None
    return [signature for signature, own in zip(signatures, owners) if own & named]
