"""Every KB entry is found by its own error lines: `ask` on an entry's signatures (or, for an entry
without error lines, its symptoms) ranks that entry first."""

import pytest

from assistant.kb import load_entries
from tests.conftest import REPO

ENTRIES = load_entries(REPO / "kb" / "entries")
PLATFORM_LINE = {"amd": "8x MI300X, ROCm 6.3", "musa": "MTT S4000 (Moore Threads), MUSA 4.0", "ascend": "Ascend 910B NPU, CANN 8.0"}
OS_LINE = {"windows": "Windows 11, Python 3.11", "macos": "macOS 15 on a MacBook Pro (Apple M3)",
           "aarch64": "GH200 (aarch64), Ubuntu 24.04"}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_entry_ranks_first_on_its_own_signatures(assistant, entry):
    query = "\n".join(entry.signatures or entry.symptoms)
    # a user of an entry about AMD, Moore Threads or Ascend hardware is on that hardware, and a log
    # that shows no hardware is read as NVIDIA's
    platform = [PLATFORM_LINE[h] for h in entry.hardware if h in PLATFORM_LINE]
    if platform and "nvidia" not in entry.hardware:
        query = f"{platform[0]}\n{query}"
    # and a user of an entry about one operating system shows it
    if entry.os:
        query = f"{OS_LINE[entry.os[0]]}\n{query}"
    answer = assistant.answer(query)
    ranked = [m.id for m in answer.matches]
    assert ranked and ranked[0] == entry.id, f"{entry.id}: ranked {ranked[:3]}"
