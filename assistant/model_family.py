"""Model families: which model a text is about (DeepSeek, Qwen, GLM, gpt-oss, ...).

Many entries are about one model family's code: its chat template, its tool-call or reasoning
parser, its weight names. Such an entry does not explain the same-looking failure of another
family (a DeepSeek template fix for a GLM paste). A family is named by the model path, by the
architecture SGLang logs (`Qwen2ForCausalLM`) or in words. Families that share one model code are
one group here: Kimi K2 runs DeepSeek V3's architecture, so an entry about DeepSeek V3 can be about
a Kimi paste.
"""

from __future__ import annotations

import re
from functools import lru_cache

# group -> pattern; a group is what may not differ between an entry and a paste
FAMILIES: dict[str, re.Pattern] = {name: re.compile(pattern, re.I) for name, pattern in {
    "deepseek": r"deep[-_ ]?seek|\bdsv[23]\b|\bkimi\b|moonshot",
    "qwen": r"\bqwen|\bqwq\b",
    "glm": r"\bglm|chatglm|zai-org",
    "llama": r"\bllama(?![-_.]?(?:cpp|factory))|\bmeta-llama\b",
    "mistral": r"\bmistral|\bmixtral|\bministral|\bdevstral|\bmagistral",
    "gemma": r"\bgemma",
    "gpt-oss": r"gpt[-_]?oss",
    "minimax": r"\bminimax",
    "phi": r"\bphi-?[234]",
    "internvl": r"\binternvl",
    "llava": r"\bllava",
    "baichuan": r"\bbaichuan",
    "hunyuan": r"\bhunyuan",
    "ernie": r"\bernie",
    "mimo": r"\bmimo\b",
    "grok": r"\bgrok",
    "nemotron": r"\bnemotron",
}.items()}


@lru_cache(maxsize=8192)
def families_in(text: str) -> frozenset[str]:
    """The model families a text names."""
    if not text:
        return frozenset()
    return frozenset(name for name, pattern in FAMILIES.items() if pattern.search(text))


# "models other than gpt-oss", "non-DeepSeek": the family the text excludes
EXCLUDED_RE = re.compile(r"(?:\bnon-|\bother than |\bexcept |\bnot (?:on |for )?)$", re.I)


def title_subject(title: str) -> str:
    """What an entry's title is about: the part before its first colon, without parentheses (a
    parenthesis names examples or sub-cases: "(Qwen3-VL on 0.5.8: ...)")."""
    return re.sub(r"\([^()]*\)?", " ", title).split(": ", 1)[0]


def subject_family(title: str) -> frozenset[str]:
    """The one model family an entry's title is about: named in its subject (before the first
    colon, outside parentheses), not excluded ("other than gpt-oss"), and the only one named there; titles that list
    several families name examples of a wider problem."""
    subject = title_subject(title)
    found = set()
    for name, pattern in FAMILIES.items():
        for match in pattern.finditer(subject):
            if not EXCLUDED_RE.search(subject[max(0, match.start() - 12):match.start()]):
                found.add(name)
    return frozenset(found) if len(found) == 1 else frozenset()

