"""Which NVIDIA GPU generation a paste runs on, and whether an entry is about another one.

Some failures belong to one generation: kernels built without Blackwell's sm_120 fail on an RTX 5090
and on nothing older, a wheel that dropped Turing fails on a T4 and on nothing newer. Both print
`no kernel image is available for execution on the device`. An entry about one generation declares
it (`gpu_arch: [sm_120, sm_121]` in its front matter); the paste's generations are read from the
GPU names and the device capabilities it shows (`Tesla T4`, `4x H100`, `RTX 5090`,
`compute capability 8.9`), not from the `sm_90` an error message says a kernel needs. When the
paste shows some and none is the entry's, the entry is about other hardware: its fix is not the
user's (`assistant.decision`). A paste that shows no NVIDIA GPU, or GPUs of several generations,
is no conflict.
"""

from __future__ import annotations

import re
from itertools import islice

from assistant.paste_cache import per_analysis
from assistant.trace import Analysis
from assistant.wording import Sentence

# GPU names (as operators and tools print them) -> compute capability, newest names first so that
# `RTX PRO 6000` is not read as an `RTX 6000`, `GB200` not as a `B200`, `H200` not as `H20`
GPU_ARCH = (
    (r"RTX\s?PRO\s?[456]000(?:\s?Blackwell)?|RTX\s?50[5-9]0(?:\s?Ti)?|GeForce\s?RTX\s?50\d0", 120),
    (r"DGX\s?Spark|GB10\b", 121),
    (r"GB300|B300", 103),
    (r"GB200|B200|B100", 100),
    (r"GH200|H200|H100|H800|H20\b|H20[- ]|H200", 90),
    (r"L40S?|L4\b|L20\b|RTX\s?40[5-9]0(?:\s?Ti)?|RTX\s?[456]000\s?Ada|RTX\s?6000\s?Ada", 89),
    (r"Jetson\s?(?:AGX\s?)?Orin|\bOrin\b", 87),
    (r"A10G?\b|A40\b|A16\b|A2\b|RTX\s?30[5-9]0(?:\s?Ti)?|RTX\s?A[2456]000", 86),
    (r"A100|A800|A30\b", 80),
    (r"\bT4\b|RTX\s?20[6-8]0(?:\s?(?:Ti|Super))?|Quadro\s?RTX|TITAN\s?RTX", 75),
    (r"Jetson\s?(?:AGX\s?)?Xavier|\bXavier\b", 72),
    (r"V100|TITAN\s?V\b", 70),
    (r"P100", 60),
    (r"P40|P4\b|GTX\s?10[5-8]0", 61),
)
GPU_ARCH_RES = tuple((re.compile(r"(?<![\w-])(?:" + names + r")", re.I), sm) for names, sm in GPU_ARCH)
# the device's own capability as tools print it: `compute capability 8.9`, `capability (7, 5)`,
# `Current capability: 75`. A bare `sm_90` is not read: error messages name the generation a
# kernel needs ("only supported on sm90 and above"), which is not the user's GPU
SM_RE = re.compile(r"(?:compute )?capability:?\s*\(?(\d{1,2})[.,]\s*(\d)\b|Current capability:\s*(\d{2,3})\b", re.I)
KNOWN_ARCHS = frozenset(sm for _, sm in GPU_ARCH) | {50, 52, 53}
GENERATION = {60: "Pascal", 61: "Pascal", 70: "Volta", 72: "Volta (Xavier)", 75: "Turing", 80: "Ampere",
              86: "Ampere", 87: "Ampere (Orin)", 89: "Ada", 90: "Hopper", 100: "Blackwell", 103: "Blackwell Ultra",
              120: "Blackwell (RTX 50 / RTX PRO)", 121: "Blackwell (DGX Spark)"}
MAX_LINES = 3000


def archs_in(text: str) -> frozenset[int]:
    """The compute capabilities a text names, by GPU name or number."""
    found = {sm for regex, sm in GPU_ARCH_RES if regex.search(text)}
    for match in SM_RE.finditer(text):
        number = int(match.group(3)) if match.group(3) else int(match.group(1)) * 10 + int(match.group(2))
        if number in KNOWN_ARCHS:
            found.add(number)
    return frozenset(found)


def _paste_archs(analysis: Analysis) -> frozenset[int]:
    lines = islice(analysis.originals.values(), MAX_LINES)
    return archs_in("\n".join((analysis.question, analysis.environment.gpu or "", *lines)))


def paste_archs(analysis: Analysis) -> frozenset[int]:
    """The NVIDIA GPU generations the paste shows (compute capabilities), read once per paste."""
    if analysis.environment.hardware not in (None, "nvidia"):
        return frozenset()
    return per_analysis("gpu_arch", analysis, _paste_archs)


def entry_archs(meta: dict) -> frozenset[int]:
    """The compute capabilities an entry declares it is about (`gpu_arch: [sm_120]`)."""
    out = set()
    for value in meta.get("gpu_arch") or ():
        match = re.fullmatch(r"sm_?(\d{2,3})", str(value).strip(), re.I)
        if match:
            out.add(int(match.group(1)))
    return frozenset(out)


def _names(archs) -> str:
    return ", ".join(f"{GENERATION.get(sm, 'sm_' + str(sm))} (sm_{sm})" for sm in sorted(archs))


def arch_conflict(meta: dict, analysis: Analysis) -> Sentence | None:
    """The entry is about GPU generations the paste does not run on."""
    wanted = entry_archs(meta)
    if not wanted:
        return None   # nearly every entry: no need to read the paste
    shown = paste_archs(analysis)
    if not shown or shown & wanted:
        return None
    return Sentence(f"Your GPUs are {_names(shown)}; this entry is about {_names(wanted)}.",
                    f"你的 GPU 是 {_names(shown)}；这个条目讲的是 {_names(wanted)}。")
