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


def test_entry_whose_error_line_is_in_the_log_is_tried_however_the_scores_rank_it(assistant, monkeypatch):
    # a one-line install error under pages of pip output: the words of the output rank other
    # entries first, and an entry outside the scored pool would never get its signature tried
    import assistant.retrieve as retrieve
    monkeypatch.setattr(retrieve, "CANDIDATES", 1)
    paste = "\n".join([
        "PS C:\\Users\\ops\\src\\sglang> pip install -e \"python[all]\"",
        "Obtaining file:///C:/Users/ops/src/sglang/python",
        "  Installing build dependencies ... done",
        "  Getting requirements to build editable ... done",
        "Collecting aiohttp (from sglang==0.4.6)",
        "  Using cached aiohttp-3.11.18-cp312-cp312-win_amd64.whl.metadata (8.0 kB)",
        "Requirement already satisfied: torch in c:\\python312\\lib\\site-packages (from sglang==0.4.6) (2.6.0)",
        "INFO: pip is looking at multiple versions of sglang[srt] to determine which version is compatible.",
        "ERROR: No matching distribution found for sgl-kernel==0.1.0; extra == \"srt\"",
    ])
    answer = assistant.answer(paste)
    assert [m.id for m in answer.matches][:1] == ["windows-native-unsupported"]


def test_a_line_that_gives_a_field_another_value_does_not_nearly_match():
    # a near match tolerates a missing word, not `bootstrap_room=<n>` for an entry about `bootstrap_room=None`
    from assistant.retrieve import signature_match
    from assistant.text import mask

    signature = "KVTransferError(bootstrap_room=None): Request aborted before the prefill server sent its KV cache"
    same = mask("KVTransferError(bootstrap_room=None): Request aborted before prefill server sent its KV cache").lower()
    other = mask("KVTransferError(bootstrap_room=8812734): Request aborted before prefill server sent its KV cache").lower()
    assert signature_match([signature], (same,), same)[0] > 0
    assert signature_match([signature], (other,), other)[0] == 0
