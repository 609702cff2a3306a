"""`ask kb check` on the real KB and on broken entries."""

import shutil
from pathlib import Path

import pytest

from assistant.flags import FlagRegistry
from assistant.kb import check_entries, load_entries
from tests.conftest import REPO, run_ask

GOOD = (REPO / "kb" / "entries" / "flashinfer-jit-missing-cuda-fp8-h.md").read_text()


@pytest.fixture
def entries(tmp_path) -> Path:
    folder = tmp_path / "kb" / "entries"
    folder.mkdir(parents=True)
    (folder / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(GOOD)
    return folder


def test_the_shipped_kb_passes():
    report = check_entries(REPO / "kb" / "entries", FlagRegistry.load())
    assert report.errors == []
    assert len(report.entries) >= 60


def test_known_problem_ids_are_kept():
    ids = {e.id for e in load_entries(REPO / "kb" / "entries")}
    for known in ("flashinfer-jit-missing-cuda-fp8-h", "tp-memory-capacity-unbalanced",
                  "dp-attention-long-context-oom", "pd-mismatched-tp-non-mla",
                  "nccl-segfault-deepseek-multinode", "router-worker-startup-timeout",
                  "detokenizer-health-check-failed", "deepep-ibgda-init-failed",
                  "musa-mccl-socket-ifname", "video-decord-missing", "radix-cache-prefix-reuse"):
        assert known in ids


def test_made_up_flag_in_a_fix_fails(entries):
    bad = GOOD.replace("id: flashinfer-jit-missing-cuda-fp8-h", "id: made-up-flag").replace(
        'fix:\n', 'fix:\n  - "Relaunch with `--disable-memory-balance-check`."\n', 1)
    (entries / "made-up-flag.md").write_text(bad)
    report = check_entries(entries, FlagRegistry.load())
    assert any("--disable-memory-balance-check" in e and "made-up-flag.md" in e for e in report.errors)


def test_made_up_flag_under_wrong_advice_is_allowed(entries):
    ok = GOOD.replace("wrong_advice:\n", 'wrong_advice:\n  - claim: "Add `--disable-memory-balance-check`."\n'
                                         '    fact: "No such flag exists."\n', 1)
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(ok)
    assert check_entries(entries, FlagRegistry.load()).errors == []


def test_flag_outside_the_step_versions_fails(entries):
    bad = GOOD.replace('fix:\n', 'fix:\n  - text: "Use `--enable-ep-moe`."\n    versions: ">=0.5.9"\n', 1)
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(bad)
    report = check_entries(entries, FlagRegistry.load())
    assert any("--enable-ep-moe" in e for e in report.errors)


def test_duplicate_id_fails(entries):
    (entries / "copy.md").write_text(GOOD)
    report = check_entries(entries)
    assert any("duplicate id 'flashinfer-jit-missing-cuda-fp8-h'" in e for e in report.errors)


def test_missing_source_fails(entries):
    start = GOOD.index("sources:")
    end = GOOD.index("---", start)
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(GOOD[:start] + GOOD[end:])
    report = check_entries(entries)
    assert any("missing required field 'sources'" in e for e in report.errors)


@pytest.mark.parametrize("text, message", [
    ("no front matter here", "no YAML front matter"),
    ("---\nid: [unclosed\n---\n", "not valid YAML"),
    ("---\n- a\n- list\n---\n", "must be a mapping"),
])
def test_malformed_front_matter_fails(entries, text, message):
    (entries / "broken.md").write_text(text)
    report = check_entries(entries)
    assert any(message in e and "broken.md" in e for e in report.errors)


def test_ask_kb_check_cli(entries):
    ok = run_ask("kb", "check", kb=entries.parent)
    assert ok.returncode == 0, ok.stderr.decode()
    assert b"1 entries valid" in ok.stdout
    (entries / "broken.md").write_text("---\nid: broken\n---\n")
    bad = run_ask("kb", "check", kb=entries.parent)
    assert bad.returncode == 1
    assert b"broken.md: missing required field" in bad.stderr
