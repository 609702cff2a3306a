"""Exact identifiers a paste shares with the entries that name them: an environment variable
(`SGLANG_FORWARD_UNKNOWN_TOOLS`, `NCCL_CUMEM_HOST_ENABLE`) or a flag (`--enable-dp-attention`).

Word overlap treats `SGLANG_FORWARD_UNKNOWN_TOOLS` as a few more words among the many a report on
tool calls shares with every tool-call entry. Yet an identifier is a name, not a word: when the
user writes the one variable that a single entry is about, that is strong evidence for that entry.
Its strength is split among the entries that name it in their title, keywords or error lines: one
entry gets all of it, two get half each. An identifier more than MAX_NAMERS entries name
(`--reasoning-parser`, `CUDA_VISIBLE_DEVICES`) is a subject of its own: it points at none of them,
and even a small share tipped the order among the entries about that subject. Only the user's
words and error lines count: a flag in their launch command is configuration, which says what ran,
not what failed (`assistant.retrieve._is_command`), and so is a line that sets several environment
variables at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

# an environment variable: capitals with at least one underscore (`SGLANG_USE_AITER`, `HF_TOKEN`)
ENV_VAR_RE = re.compile(r"(?<![\w.-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w.])")
# a long flag (`--moe-a2a-backend`), as written before `=` or a value
FLAG_NAME_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])")
# a line that sets several variables (`A=1 B=2 python ...`, a launcher's "Starting process with
# command: ..." line): the environment the program ran in, like a launch command's flags
ASSIGNMENT_RE = re.compile(r"(?<![\w.-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*=\S")
MIN_LENGTH = 6   # `TP_SIZE`-like short names and `--tp` say little on their own
# the most a paste's shared identifiers add to an entry's score: about the margin by which word
# overlap puts one entry of a family (tool calls, MoE backends) above its siblings. On the dev
# cases 0.1 also cut the margin of a right fix whose runner-up names the flag the user tried
# (a lead instead); 0.08 kept it and still ranks the entry the identifier points at first
NAMED_IDENTIFIER_BOOST = 0.08
MAX_NAMERS = 3


def identifiers_in(text: str) -> frozenset[str]:
    """The environment variables and flags a text names, as written (flags lower-cased)."""
    found = {m for m in ENV_VAR_RE.findall(text) if len(m) >= MIN_LENGTH}
    found |= {m.lower() for m in FLAG_NAME_RE.findall(text) if len(m) >= MIN_LENGTH}
    return frozenset(found)


# the command-line tools a report names when it says what it saw (`nvidia-smi` shows the memory held,
# `npu-smi info` lists no process, `py-spy dump` shows where it waits): each is a name, as an
# identifier is, not the two common words ("nvidia", "smi") a tokenizer splits it into
TOOL_NAME_RE = re.compile(r"(?<![\w-])(?:nvidia-smi|rocm-smi|amd-smi|npu-smi|xpu-smi|hl-smi|mthreads-gmi|dcgmi|"
                          r"py-spy|hccn_tool|ibv_devinfo|ucx_info|nvidia-ctk|nvidia-container-cli)(?![\w-])", re.I)


def named_in(text: str) -> frozenset[str]:
    """What a text names that tells one report from another: its environment variables and flags
    (`identifiers_in`, whatever their length) and the diagnostic tools it names, lower-cased."""
    found = {m.lower() for m in ENV_VAR_RE.findall(text)} | {m.lower() for m in FLAG_NAME_RE.findall(text)}
    return frozenset(found | {m.lower() for m in TOOL_NAME_RE.findall(text)})


def entry_identifiers(title: str, meta: dict) -> frozenset[str]:
    """What an entry names in its title, keywords and error lines."""
    parts = [title, *(str(k) for k in meta.get("keywords") or ()), *(str(s) for s in meta.get("signatures") or ())]
    return identifiers_in("\n".join(parts))


class NamedIdentifiers:
    """Which entries name each identifier, built once per index."""

    def __init__(self, entries: Iterable[tuple[int, str, dict]]):
        self.named_by: dict[str, list[int]] = {}
        for unit, title, meta in entries:
            for name in entry_identifiers(title, meta):
                self.named_by.setdefault(name, []).append(unit)

    def boosts(self, paste_identifiers: frozenset[str]) -> dict[int, float]:
        """Each entry's share of the evidence the paste's identifiers give, as a score to add."""
        shares: dict[int, float] = {}
        for name in paste_identifiers:
            namers = self.named_by.get(name, ())
            if len(namers) > MAX_NAMERS:
                continue
            for unit in namers:
                shares[unit] = shares.get(unit, 0.0) + 1.0 / len(namers)
        return {unit: NAMED_IDENTIFIER_BOOST * min(1.0, share) for unit, share in shares.items()}

    def candidates(self, paste_identifiers: frozenset[str]) -> list[int]:
        """The entries that name an identifier of the paste few other entries name."""
        return [unit for name in sorted(paste_identifiers)
                for unit in self.named_by.get(name, ()) if len(self.named_by[name]) <= MAX_NAMERS]


def paste_identifiers(lines: Iterable[str], is_command: Callable[[str], bool]) -> frozenset[str]:
    """The identifiers the user's words and log lines name outside launch commands."""
    found: set[str] = set()
    for line in lines:
        if ("_" in line or "--" in line) and not is_command(line) and len(ASSIGNMENT_RE.findall(line)) < 2:
            found |= identifiers_in(line)
    return frozenset(found)
