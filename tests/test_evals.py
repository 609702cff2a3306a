"""The eval harness as its user sees it: `python -m evals run` on a small case folder writes
per-case outcomes, the decision confusion table, coverage by error class and a risk-coverage PNG;
`--check-floors` fails on a group below its floor; the origin / dependency scores read the
labelled case files."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from evals.cases import CaseError, load_cases
from evals.origin_eval import evaluate_deps, evaluate_origin
from evals.run import main
from tests.conftest import REPO

CUDA_GRAPH_OOM = (
    "sglang 0.5.2 on 1x H100, Llama-3.1-8B, the server dies at startup:\n"
    "[2025-09-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/cuda_graph_runner.py", '
    "line 300, in __init__\n    self.capture()\n"
    "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.11 GiB of which 1.06 GiB is free.\nPossible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
    "3. disable torch compile by not using --enable-torch-compile\n"
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)"
)
NPM = ("npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\n"
       "npm ERR! While resolving: my-app@0.1.0\nnpm ERR! Found: react@18.2.0")


def _write(path: Path, cases: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


@pytest.fixture
def case_sets(tmp_path) -> Path:
    """A `real` folder (labelled like evals/real) and a `cases` folder, two cases each."""
    root = tmp_path / "sets"
    _write(root / "real" / "heldout.jsonl", [
        {"id": "r-graph", "query": CUDA_GRAPH_OOM, "expected_problem": "cuda-graph-capture-failed",
         "related_entry": "cuda-graph-capture-failed", "error_class": "cuda-graph", "coverage": "covered",
         "should_abstain": False},
        {"id": "r-npm", "query": NPM, "expected_problem": None, "related_entry": None,
         "error_class": "other", "coverage": "none", "should_abstain": True}])
    _write(root / "cases" / "dev.jsonl", [
        {"id": "c-graph", "query": CUDA_GRAPH_OOM, "expected_problem": "cuda-graph-capture-failed",
         "must_mention": [["--mem-fraction-static", "--cuda-graph-max-bs"]], "should_abstain": False},
        {"id": "c-npm", "query": NPM, "expected_problem": None, "should_abstain": True}])
    return root


@pytest.fixture
def with_index(kb_dir, monkeypatch):
    monkeypatch.setenv("ASK_KB_DIR", str(kb_dir))
    monkeypatch.delenv("ASK_INDEX_DIR", raising=False)


def test_run_reports_outcomes_confusion_coverage_and_plot(case_sets, with_index, tmp_path, capsys):
    out = tmp_path / "report.json"
    code = main(["--cases", str(case_sets / "real"), str(case_sets / "cases" / "dev.jsonl"),
                 "--json", str(out), "--no-baselines", "--no-extras"])
    assert code == 0
    report = json.loads(out.read_text())
    by_id = {c["id"]: c for c in report["per_case"]}
    assert {c["split"] for c in by_id.values()} == {"real/heldout", "cases/dev"}
    for case in by_id.values():
        assert case["outcome"] in ("fix", "lead", "unknown")
        assert case["abstained"] == (case["outcome"] != "fix")
    # the clear trace is answered with its fix, the npm error is declined: both decisions right
    assert by_id["r-graph"]["outcome"] == "fix" and by_id["r-graph"]["decision_correct"]
    assert by_id["r-npm"]["outcome"] != "fix" and by_id["r-npm"]["decision_correct"]

    split = report["splits"]["real/heldout"]
    assert split["decision_accuracy"] == 1.0
    confusion = split["confusion"]
    assert confusion["expected_fix"]["fix"] == 1 and confusion["expected_fix"]["fix_wrong_entry"] == 0
    assert confusion["expected_decline"]["fix"] == 0
    assert sum(confusion["expected_decline"][o] for o in ("lead", "unknown")) == 1
    assert split["by_error_class"]["cuda-graph"] == {
        "cases": 1, "labelled_fix": 1, "right_fix": 1.0, "relevant": 1.0, "decision_accuracy": 1.0}
    assert split["by_error_class"]["other"]["right_fix"] == 0.0
    assert "hit@1" in report["splits"]["cases/dev"]

    page = out.with_suffix(".html").read_text()
    assert "expected decline" in page and "cuda-graph" in page
    png = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert png and base64.b64decode(png.group(1)).startswith(b"\x89PNG")
    printed = capsys.readouterr().out
    assert "split real/heldout" in printed and "confusion, all cases" in printed


SIGQUIT_ONLY = ("We run sglang with --log-level error in docker. The container exits and `docker logs` "
                "only shows:\n\nReceived sigquit from a child process. It usually means the child failed.\n\n"
                "Nothing else. How do I find out what happened?")


def test_a_case_labelled_with_a_triage_entry_is_right_as_its_lead(tmp_path, with_index):
    """A triage entry (`diagnosis: true`) has next steps, not a fix: the right answer names it as
    a lead, and that lead is a correct decline, not a false abstention."""
    root = tmp_path / "sets"
    _write(root / "real" / "heldout.jsonl", [
        {"id": "r-sigquit", "query": SIGQUIT_ONLY, "expected_problem": "scheduler-sigquit-terminated",
         "error_class": "startup-hang", "coverage": "covered", "should_abstain": False},
        {"id": "r-graph", "query": CUDA_GRAPH_OOM, "expected_problem": "cuda-graph-capture-failed",
         "error_class": "cuda-graph", "coverage": "covered", "should_abstain": False}])
    out = tmp_path / "report.json"
    assert main(["--cases", str(root / "real"), "--json", str(out), "--no-baselines", "--no-extras"]) == 0
    report = json.loads(out.read_text())
    by_id = {c["id"]: c for c in report["per_case"]}
    assert by_id["r-sigquit"]["expected_outcome"] == "lead" and by_id["r-graph"]["expected_outcome"] == "fix"
    assert by_id["r-sigquit"]["outcome"] == "lead" and by_id["r-sigquit"]["decision_correct"]
    m = report["metrics"]
    assert m["triage_cases"] == 1 and m["false_abstentions"] == 0
    assert m["answer_accuracy"] == 1.0 and m["decision_accuracy"] == 1.0
    assert m["abstain_precision"] == 1.0 and m["abstain_recall"] == 1.0
    assert m["confusion"]["expected_decline"]["lead"] == 1 and m["confusion"]["expected_fix"]["fix"] == 1


def test_wrappers_reasks_the_log_under_each_collectors_prefix(case_sets, with_index, tmp_path, capsys):
    from evals.wrappers import COLLECTORS, ENCODINGS, main as wrappers, wrap

    wrapped = wrap(CUDA_GRAPH_OOM, "[rank0]: ").split("\n")
    assert wrapped[0] == CUDA_GRAPH_OOM.split("\n")[0]            # the user's sentence stays as written
    assert all(line.startswith("[rank0]: ") for line in wrapped[1:5])   # traceback to exception line
    assert wrap(NPM, "[rank0]: ") == NPM                          # no traceback, nothing stamped: no log block

    out = tmp_path / "wrappers.json"
    assert wrappers(["--cases", str(case_sets / "real"), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["cases"] == 1 and report["right_fixes_plain"] == 1
    assert set(report["collectors"]) == set(COLLECTORS) | set(ENCODINGS)
    for row in report["collectors"].values():   # the CUDA-graph fix survives every way of collecting
        assert row["cases"] == 1 and row["unchanged"] == 1.0 and row["right_fixes"] == 1
    assert "journald" in capsys.readouterr().out


def test_check_floors_fails_below_a_group_floor_and_names_it(case_sets, with_index, tmp_path, capsys):
    floors = tmp_path / "floors.json"
    floors.write_text(json.dumps({
        "groups": {"real": ["real/heldout"], "absent": ["boundary/heldout"]},
        "extractive": {"real": {"decision_accuracy": 1.01, "unknown_flags": 0},
                       "absent": {"hit@1": 0.5}}}))
    code = main(["--cases", str(case_sets / "real"), "--no-baselines", "--no-extras",
                 "--json", str(tmp_path / "r.json"), "--check-floors", "--floors", str(floors)])
    err = capsys.readouterr().err
    assert code == 1
    assert "real: decision_accuracy = 1.0 < floor 1.01" in err
    assert "'absent' not checked: splits boundary/heldout not in this run" in err


def test_missing_case_path_is_one_line_error(tmp_path, capsys):
    assert main(["--cases", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip()
    assert "does not exist" in err and len(err.splitlines()) == 1


def test_case_split_is_folder_and_stem_and_ids_are_unique_across_sets(case_sets):
    cases = load_cases([case_sets / "real", case_sets / "cases"])
    assert [c.split for c in cases] == ["real/heldout"] * 2 + ["cases/dev"] * 2
    assert cases[0].error_class == "cuda-graph" and cases[0].coverage == "covered"
    _write(case_sets / "boundary" / "dev.jsonl", [{"id": "r-npm", "query": NPM, "expected_problem": None}])
    with pytest.raises(CaseError, match="duplicate case id 'r-npm'"):
        load_cases([case_sets / "real", case_sets / "boundary"])


def test_the_shipped_case_sets_load_with_their_labels():
    cases = load_cases([REPO / "evals" / "cases", REPO / "evals" / "boundary", REPO / "evals" / "real"])
    splits = {c.split for c in cases}
    assert {"cases/heldout", "boundary/heldout", "real/heldout"} <= splits
    real = [c for c in cases if c.split.startswith("real/")]
    assert all(c.error_class and c.coverage in ("covered", "partial", "none") for c in real)
    assert all(c.in_scope == (c.coverage == "covered") for c in real)


def test_origin_score_counts_right_site_and_no_origin_for_other_libraries(tmp_path):
    rows = [json.loads(line) for line in (REPO / "evals" / "origin" / "cases.jsonl").read_text().splitlines()]
    positive = next(r for r in rows if r["id"] == "o-sa-hicache-vs-disable-radix")
    negative = next(r for r in rows if r["id"] == "o-neg-safetensors-header")
    wrong_label = {**positive, "id": "o-wrong-label", "origin_function": "ServerArgs.not_this_one"}
    result = evaluate_origin(_write(tmp_path / "origin.jsonl", [positive, negative, wrong_label]))
    assert result["sglang_messages"] == 2 and result["negatives"] == 1
    assert result["origin_accuracy"] == 0.5 and result["no_origin_accuracy"] == 1.0
    assert [f["id"] for f in result["failures"]] == ["o-wrong-label"]
    assert result["registry_match"] == 1.0


def test_deps_score_treats_equivalent_pip_commands_as_the_same(tmp_path):
    rows = [json.loads(line) for line in (REPO / "evals" / "deps" / "cases.jsonl").read_text().splitlines()]
    # labelled without quotes; the advice quotes the requirement: the same command
    case = next(r for r in rows if r["id"] == "d-pybase64-missing-0410")
    assert case["install_command"] == "pip install pybase64"
    different = {**case, "id": "d-other-pin", "install_command": "pip install 'pybase64==1.4.0'"}
    result = evaluate_deps(_write(tmp_path / "deps.jsonl", [case, different]))
    assert result["package_accuracy"] == 1.0
    assert result["command_accuracy"] == 0.5
    assert [f["id"] for f in result["failures"]] == ["d-other-pin"]


def test_no_kb_entry_rests_on_a_held_out_thread():
    # a held-out report whose thread an entry cites was read while the KB was written: it is no
    # longer unseen and belongs in a dev split
    from assistant.kb import load_entries

    cited = set()
    for entry in load_entries(REPO / "kb" / "entries"):
        for source in entry.sources:
            found = re.search(r"github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull|discussions)/(\d+)", source.url or "")
            if found:
                cited.add(f"{found.group(1)}#{found.group(2)}".lower())
    held_out = {}
    for path in sorted((REPO / "evals").glob("*/heldout*.jsonl")):
        for line in path.read_text().splitlines():
            case = json.loads(line)
            if case.get("source"):
                held_out[case["source"].lower()] = f"{path.parent.name}/{path.stem}: {case['id']}"
    assert cited and held_out
    assert sorted(held_out[s] for s in cited & set(held_out)) == []
