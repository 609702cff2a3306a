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
