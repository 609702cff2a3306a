"""`ask kb check` on the real KB and on broken entries."""

import json
import re
import shutil
from pathlib import Path

import pytest

from assistant.flags import FlagRegistry
from assistant.kb import check_entries, load_entries
from tests.conftest import REPO, run_ask

# the shipped entry without its Chinese verify lines and wrong advice: the tests below add English
# items, and a Chinese list must keep the count of the English one
GOOD = re.sub(r"^(?:verify_zh|wrong_advice_zh):\n(?:  .*\n)+", "",
              (REPO / "kb" / "entries" / "flashinfer-jit-missing-cuda-fp8-h.md").read_text(), flags=re.M)


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


def test_a_traceback_frame_without_its_function_is_no_signature(entries):
    # every launch error's traceback passes server_args.py: that frame alone matched any of them
    frame = '  - "File \\"/usr/local/lib/python3.10/dist-packages/sglang/srt/server_args.py\\", line"\n'
    broken = GOOD.replace("signatures:\n", "signatures:\n" + frame, 1)
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(broken)
    report = check_entries(entries)
    assert any("traceback frame without its function" in e for e in report.errors)
    named = GOOD.replace("signatures:\n", "signatures:\n" + frame.replace('line"', 'line 1008, in _chunked_prefix_attn_mha"'), 1)
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(named)
    assert not check_entries(entries).errors


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


# ---------------------------------------------------------------- version boundaries vs the registry

def _with_step(step_yaml: str) -> str:
    return GOOD.replace("fix:\n", "fix:\n" + step_yaml, 1)


def _errors_for(entries: Path, text: str, registry=None) -> list[str]:
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(text)
    return check_entries(entries, registry or FlagRegistry.load()).errors


def test_step_range_running_past_a_flags_last_release_fails(entries):
    # the audited mistake: --enable-ep-moe is deprecated from 0.5.1 and rejected in 0.5.3/0.5.4
    errors = _errors_for(entries, _with_step(
        '  - text: "Enable EP."\n'
        '    commands: ["python3 -m sglang.launch_server --model-path m --tp-size 8 --enable-ep-moe"]\n'
        '    versions: "<0.5.5"\n'))
    assert any("--enable-ep-moe" in e and "should end before 0.5.1" in e for e in errors), errors


def test_step_range_starting_before_a_flags_first_release_fails(entries):
    errors = _errors_for(entries, _with_step(
        '  - text: "Raise the timeout: `--dist-timeout 3600`."\n    versions: ">=0.4.1"\n'))
    assert any("--dist-timeout" in e and "lower bound should be 0.4.4" in e for e in errors), errors


def test_step_range_inside_a_flags_lifetime_passes(entries):
    assert _errors_for(entries, _with_step(
        '  - text: "Raise the timeout: `--dist-timeout 3600`."\n    versions: ">=0.4.4"\n')) == []


def test_step_may_name_the_old_flag_it_replaces(entries):
    assert _errors_for(entries, _with_step(
        '  - text: "Use `--ep-size 8` instead of the deprecated `--enable-ep-moe`."\n'
        '    versions: ">=0.5.1"\n')) == []


def test_flag_missing_in_one_release_inside_the_range_fails(entries, tmp_path):
    # a registry where --foo exists in 0.1.0 and 0.3.0 but not in 0.2.0 in between
    with_foo = {"flags": ["--foo", "--help"]}
    data = {"format": 1, "versions": {"0.1.0": with_foo, "0.2.0": {"flags": ["--help"]}, "0.3.0": with_foo}}
    path = tmp_path / "flags.json"
    path.write_text(json.dumps(data))
    minimal = ('---\nid: flashinfer-jit-missing-cuda-fp8-h\ntitle: "t"\ntitle_zh: "t"\narea: startup\n'
               'signatures: ["x"]\nconfidence: medium\ncause: "c"\n'
               'fix:\n  - text: "Use `--foo`."\n    versions: ">=0.1.0"\n'
               'sources:\n  - url: https://example.com/a\n---\n')
    errors = _errors_for(entries, minimal, FlagRegistry.load(path))
    assert any("--foo" in e and "0.2.0 inside that range do not have" in e for e in errors), errors


@pytest.mark.parametrize("prose, wrong", [
    ("`--ep-size` (SGLang 0.5.5 and later) shards the experts.", "exists from 0.5.5, but its first release is 0.4.1"),
    ("`--dist-timeout` is available from 0.4.5.", "exists from 0.4.5, but its first release is 0.4.4"),
    ("`--enable-ep-moe` no longer exists from 0.5.3.", "is gone from 0.5.3, but it is gone from"),
    ("Use `--dist-timeout 3600` (0.4.5+).", "exists from 0.4.5, but its first release is 0.4.4"),
])
def test_prose_boundary_that_contradicts_the_registry_fails(entries, prose, wrong):
    text = GOOD.replace("wrong_advice:\n", f'wrong_advice:\n  - claim: "x"\n    fact: "{prose}"\n', 1)
    errors = _errors_for(entries, text)
    assert any(wrong in e for e in errors), errors


@pytest.mark.parametrize("prose", [
    "`--dist-timeout` (SGLang 0.4.4 and later) raises the timeout.",
    "`--enable-ep-moe` is deprecated from 0.5.1.",            # about deprecation, not existence
    "`--grammar-backend llguidance` is offered from 0.4.4.",  # dates the value, not the flag
    "From 0.5.1, `--ep-size` alone turns expert parallelism on.",
    "With `--host 0.0.0.0`, from 0.5.10 the warmup URL uses 127.0.0.1.",  # behaviour of a value
])
def test_prose_boundaries_that_agree_or_are_not_about_existence_pass(entries, prose):
    text = GOOD.replace("wrong_advice:\n", f'wrong_advice:\n  - claim: "x"\n    fact: "{prose}"\n', 1)
    assert _errors_for(entries, text) == []


# ---------------------------------------------------------------- caveats on risky steps

def test_caveat_must_be_text(entries):
    errors = _errors_for(entries, _with_step('  - text: "Reboot."\n    caveat: [1, 2]\n'))
    assert any("'caveat' must be a non-empty string" in e for e in errors), errors


def test_diagnosis_must_be_true_or_false(entries):
    errors = _errors_for(entries, GOOD.replace("confidence:", "diagnosis: sometimes\nconfidence:", 1))
    assert any("'diagnosis' must be true or false" in e for e in errors), errors
    assert not _errors_for(entries, GOOD.replace("confidence:", "diagnosis: true\nconfidence:", 1))


def test_gpu_arch_must_name_known_compute_capabilities(entries):
    errors = _errors_for(entries, GOOD.replace("confidence:", "gpu_arch: [blackwell]\nconfidence:", 1))
    assert any("gpu_arch 'blackwell' is not a known NVIDIA compute capability" in e for e in errors), errors
    assert not _errors_for(entries, GOOD.replace("confidence:", "gpu_arch: [sm_120, sm_121]\nconfidence:", 1))


def test_caveat_is_shown_under_its_step_in_the_answer():
    from assistant.answer import compose_extractive
    from assistant.render import render_text
    from assistant.decision import FIX, Decision
    from assistant.retrieve import Hit, Retrieval
    from assistant.trace import analyze

    entry = next(e for e in load_entries(REPO / "kb" / "entries") if e.id == "deepep-ibgda-init-failed")
    hit = Hit(unit_id=entry.id, kind="entry", title=entry.title, title_zh=entry.title_zh, url=None,
              score=1.0, lexical=1.0, dense=1.0, signature=1.0, evidence=(), meta=entry.to_dict())
    retrieval = Retrieval(hits=(hit,), decision=Decision(FIX, 0.9), analysis=analyze(entry.signatures[0]))
    lines = render_text(compose_extractive(retrieval, FlagRegistry.load())).splitlines()
    reboot = next(i for i, line in enumerate(lines) if "update-initramfs" in line)
    assert "! Caution:" in lines[reboot + 1] and "drain" in lines[reboot + 1]
    assert sum("! Caution:" in line for line in lines) == 1  # only the risky step carries one
