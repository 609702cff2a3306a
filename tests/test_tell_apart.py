"""Two entries that share an error line, told apart by the paste's other words (`tell_apart`):
error 802 in a confidential-computing guest is not the NVSwitch host's missing Fabric Manager, so
that guest never gets the host's fix; a host that says nothing of the kind still does."""

from __future__ import annotations

import re

from assistant.kb import check_entries
from tests.conftest import REPO
from tests.test_kb import GOOD

FABRIC_MANAGER = "cuda-802-system-not-initialized-fabric-manager"
CC_GUEST = "cuda-802-confidential-computing-gpu-not-ready"
ERROR_802 = "cudaGetDeviceCount returned 802\n-> system not yet initialized\n"


def test_a_confidential_computing_guest_gets_the_guests_lead_not_the_hosts_fix(assistant):
    for words in ("Our H100s run in CC mode inside a TDX virtual machine; after the attestation step torch "
                  "cannot start:\n",
                  "在 SEV-SNP 机密计算虚拟机里跑 sglang，H100 开了 CC 模式，启动时报错：\n"):
        answer = assistant.answer(words + ERROR_802)
        assert answer.outcome == "lead", words
        assert answer.matches[0].id == CC_GUEST
        assert not any("fabricmanager" in " ".join(step.commands) for step in answer.fix)


def test_a_host_that_names_no_guest_still_gets_the_fabric_manager_fix(assistant):
    answer = assistant.answer("8x H100 SXM HGX server, driver 550.54.15, started sglang:\n"
                              "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized\n")
    assert answer.outcome == "fix" and answer.matches[0].id == FABRIC_MANAGER
    # nor does a user who says it is no such guest
    answer = assistant.answer("This is bare metal, not a TDX guest. 8x H100 SXM:\n"
                              "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized\n")
    assert answer.outcome == "fix" and answer.matches[0].id == FABRIC_MANAGER


def test_kb_check_rejects_a_tell_apart_naming_no_entry_or_no_words(tmp_path):
    folder = tmp_path / "entries"
    folder.mkdir()
    name = "flashinfer-jit-missing-cuda-fp8-h.md"
    with_sibling = GOOD.replace("hardware:", "tell_apart:\n  - entry: no-such-entry\n    words: [TDX]\nhardware:", 1)
    (folder / name).write_text(with_sibling)
    assert any("tell_apart names 'no-such-entry', which is no entry" in e for e in check_entries(folder).errors)
    (folder / name).write_text(re.sub(r"words: \[TDX\]", "words: []", with_sibling))
    assert any("needs at least one non-empty word" in e for e in check_entries(folder).errors)


def test_the_shipped_tell_apart_siblings_exist():
    report = check_entries(REPO / "kb" / "entries")
    assert not [e for e in report.errors if "tell_apart" in e]
    assert any(entry.tell_apart for entry in report.entries)
