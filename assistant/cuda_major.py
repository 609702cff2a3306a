"""Which CUDA major a paste runs on, and whether an entry's cause needs another one.

A few failures exist under one CUDA major only: CUDA 13 moved the CCCL headers (`cuda/std/tuple`)
out of `include/`, the nixl-cu13 wheel's UCX misses its CUDA modules, a CUDA 12 kernel wheel cannot
find `libnvrtc.so.12` next to a CUDA 13 torch. Such an entry declares the major its cause needs
(`cuda: [13]` in its front matter). The paste's major is read from what reports the CUDA it runs:
the toolkit or runtime version (`nvcc ... release 12.4`, check_env's `CUDA Runtime 12.4`, `CUDA
12.4`) and a wheel's local version (`torch 2.6.0+cu124`), not from a library an error says is
missing (`libnvrtc.so.12: cannot open shared object file` names what is wanted, not what is there).
When the paste shows a major, names the entry's nowhere (not `cu130`, `.so.13`, `CUDA 13`,
`nvidia-*-cu13`, `cuda-python 13`), the entry's cause cannot be the user's (`assistant.decision`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice

from assistant.paste_cache import per_analysis
from assistant.trace import Analysis
from assistant.wording import Sentence

MAX_LINES = 3000
# a wheel's local version or an image tag: `+cu124`, `-cu130-`, `cu128` in an index URL
WHEEL_CUDA_RE = re.compile(r"(?<![A-Za-z0-9])\+?cu(1[0-3])(\d)(?!\d)", re.I)


@lru_cache(maxsize=None)
def _named_re(major: int) -> re.Pattern:
    """Anything that names CUDA `major`: a version, a wheel or image tag, a library, a package."""
    return re.compile(rf"(?<![A-Za-z0-9.])(?:cu{major}\d?|cuda[-_ ]?(?:version\s*:?\s*|runtime\s*:?\s*|toolkit\s*)?{major}"
                      rf"(?:\.\d+)*|release {major}\.\d)(?![\d])|\.so\.{major}\b|"
                      rf"cuda-(?:python|bindings|toolkit)\s*(?:==|>=|\s)\s*{major}\b|nvidia-[\w-]+-cu{major}\b",
                      re.I)


def _paste_text(analysis: Analysis) -> str:
    return "\n".join((analysis.question, *islice(analysis.originals.values(), MAX_LINES)))


def _paste_majors(analysis: Analysis) -> frozenset[int]:
    found = set()
    version = analysis.environment.cuda_version
    if version and version.split(".")[0].isdigit():
        found.add(int(version.split(".")[0]))
    found |= {int(m.group(1)) for m in WHEEL_CUDA_RE.finditer(_paste_text(analysis))}
    return frozenset(found)


def paste_cuda_majors(analysis: Analysis) -> frozenset[int]:
    """The CUDA majors the paste shows its toolkit, runtime or wheels built for, read once per paste."""
    return per_analysis("cuda_major", analysis, _paste_majors)


def entry_cuda_majors(meta: dict) -> frozenset[int]:
    """The CUDA majors an entry declares its cause needs (`cuda: [13]`)."""
    return frozenset(int(v) for v in meta.get("cuda") or () if str(v).isdigit())


def cuda_conflict(meta: dict, analysis: Analysis) -> Sentence | None:
    """The entry's cause needs a CUDA major the paste does not run and names nowhere."""
    wanted = entry_cuda_majors(meta)
    if not wanted:
        return None   # nearly every entry: no need to read the paste
    shown = paste_cuda_majors(analysis)
    if not shown or shown & wanted:
        return None
    text = _paste_text(analysis)
    if any(_named_re(major).search(text) for major in wanted):
        return None   # a CUDA 13 wheel or library beside a CUDA 12 toolkit: a mixed environment
    theirs = ", ".join(f"CUDA {m}" for m in sorted(shown))
    ours = ", ".join(f"CUDA {m}" for m in sorted(wanted))
    return Sentence(f"Your paste shows {theirs} and names {ours} nowhere; this entry's cause needs {ours}.",
                    f"你贴的内容显示的是 {theirs}，没有任何地方提到 {ours}；这个条目的原因需要 {ours}。")
