"""Issues as answers with their resolution: a sync against the loopback GitHub fake stores pull
requests and releases (incrementally), each issue unit carries how its thread was resolved, and
`ask` on a trace only an issue covers prints the resolution's steps, the fix PR and the release
that shipped it, while a thread without a confirmed fix never shows a workaround as the fix."""

from __future__ import annotations

import json
import shutil

import pytest

from assistant.answer import compose_extractive
from assistant.config import Settings
from assistant.decision import FIX, Decision
from assistant.flags import FlagRegistry
from assistant.retrieve import Hit, Retrieval
from assistant.trace import analyze
from evals.resolutions import load_threads, run
from ingest.github import client as github_client
from ingest.github import command as github_command
from ingest.github import store as github_store
from tests.conftest import REPO as SOURCE_REPO
from tests.conftest import run_ask
from tests.fake_github import TOKEN, FakeGitHub

REPO = "sgl-project/sglang"
CONFIDENT = Decision(FIX, 0.9)
SAMPLE = SOURCE_REPO / "tests" / "data" / "threads_sample.jsonl"
WEIGHT_ERROR = "KeyError: 'model.layers.3.mlp.experts.w13_weight_scale_inv'"
WEIGHT_TRACE = f"""```
Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/models/deepseek_v2.py", line 2410, in load_weights
    param = params_dict[name]
{WEIGHT_ERROR}
```"""
CAPTURE_ERROR = "RuntimeError: CUDA error: operation not permitted when stream is capturing"
NCCL_ERROR = ("torch.distributed.DistBackendError: NCCL communicator was aborted on rank 3. Original reason for "
              "failure was: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST)")


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch):
    monkeypatch.setattr(github_client, "BACKOFF_SECONDS", 0.01)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)


@pytest.fixture
def kb(tmp_path):
    root = tmp_path / "kb"
    (root / "entries").mkdir(parents=True)
    shutil.copy(SOURCE_REPO / "kb" / "entries" / "libnuma-missing-sgl-kernel.md", root / "entries")
    return root


def _repository(gh: FakeGitHub) -> None:
    """A fixed bug (PR merged, shipped in 0.4.6), a duplicate report of it still open, a thread
    with only a maintainer's "try this", and one whose only suggestion failed for the reporter."""
    gh.add_release("v0.4.5", "## What's Changed\n* Faster startup in https://github.com/sgl-project/sglang/pull/4100",
                   published_at="2025-04-07T07:35:14Z")
    gh.add_issue(201, "[Bug] KeyError w13_weight_scale_inv loading a block-quantized MoE checkpoint",
                 "Loading with sglang 0.4.5 fails:\n\n" + WEIGHT_TRACE, state="closed", state_reason="completed",
                 labels=["bug", "quant"],
                 comments=[("moe-maint", "MEMBER", "The loader skipped the scale tensors of fused experts; #4244 "
                                                   "should fix it."),
                           ("fp8-user", "NONE", "Any ETA for a release?")])
    gh.add_issue(202, "w13_weight_scale_inv KeyError again", "Same on my side:\n\n" + WEIGHT_TRACE,
                 comments=[("someone", "NONE", "+1")])
    gh.add_pull_request(4244, "Load scale_inv of fused MoE experts", "Fixes #201", merged_at="2025-04-15T00:00:00Z")
    gh.add_release("v0.4.6", "## What's Changed\n* Load scale_inv of fused MoE experts in "
                             "https://github.com/sgl-project/sglang/pull/4244", published_at="2025-04-27T21:07:26Z")
    gh.add_issue(301, "EAGLE: CUDA graph capture fails on H20",
                 f"Speculative decoding does not start:\n\n```\n{CAPTURE_ERROR}\n```",
                 comments=[("graph-maint", "MEMBER", "Could be the graph batch sizes. Try `--cuda-graph-max-bs 16` "
                                                      "and see whether it starts.")])
    gh.add_issue(990302, "NCCL timeout while loading weights on two nodes",
                 f"Both nodes die after ten minutes:\n\n```\n{NCCL_ERROR}\n```", state="closed",
                 state_reason="not_planned", labels=["inactive"],
                 comments=[("another-user", "NONE", "Set `export NCCL_IB_DISABLE=1` before launching, that should help."),
                           ("reporter", "NONE", "Tried `export NCCL_IB_DISABLE=1`, still fails with the same timeout.")])


def _settings(kb) -> Settings:
    return Settings.from_env({"ASK_KB_DIR": str(kb)})


def test_sync_stores_pull_requests_and_releases_and_links_the_fix_release(kb):
    with FakeGitHub() as gh:
        for n in range(120):   # old releases: the listing takes two pages of 100
            gh.add_release(f"v0.0.{n}", "old", published_at=f"2023-01-01T00:{n // 60:02d}:{n % 60:02d}Z")
        _repository(gh)
        assert github_command.main([REPO, "--api-url", gh.url, "--no-index"], _settings(kb)) == 0
        assert len(gh.release_requests()) == 2
        units = {u.meta["number"]: u for u in github_store.stored_issue_units(_settings(kb))}
        fixed = units[201].meta["resolution"]
        assert fixed["status"] == "resolved" and fixed["fix_pr"] == 4244 and fixed["fixed_in"] == "0.4.6"
        assert fixed["fixed_in_basis"] == "notes" and fixed["upgrade_to"] == "0.4.6"
        assert any("#4244" in s["text"] for s in fixed["steps"])
        assert units[301].meta["resolution"]["status"] == "workaround"
        unresolved = units[990302].meta["resolution"]
        assert unresolved["status"] == "unresolved" and not unresolved["steps"]
        assert any("still fails" in n for n in unresolved["notes"])
        assert 4244 not in units                                            # a pull request is no report

        # a new release arrives: the next sync reads the first releases page only, and the fix of a
        # newly merged PR is dated by it (its notes do not name the PR)
        gh.add_pull_request(4400, "Capture graphs of EAGLE drafts", "Fixes #301", merged_at="2025-05-01T00:00:00Z")
        gh.add_release("v0.4.7", "## What's Changed\n* many things", published_at="2025-06-10T08:56:38Z")
        gh.requests.clear()
        assert github_command.main([REPO, "--api-url", gh.url, "--no-index"], _settings(kb)) == 0
        assert len(gh.release_requests()) == 1                              # stopped at a stored release
    stored = json.loads((kb / "github" / "sgl-project__sglang" / "releases.json").read_text())
    assert stored[0]["tag_name"] == "v0.4.7" and {"v0.4.5", "v0.4.6", "v0.0.0"} <= {r["tag_name"] for r in stored}
    assert len(stored) == 123
    linked = {u.meta["number"]: u for u in github_store.stored_issue_units(_settings(kb))}[301].meta["resolution"]
    assert linked["status"] == "resolved" and linked["fix_pr"] == 4400
    assert (linked["fixed_in"], linked["fixed_in_basis"]) == ("0.4.7", "date")


def _issue_hit(number: int, title: str, resolution: dict, state: str = "closed") -> Hit:
    meta = {"number": number, "repo": REPO, "state": state, "state_reason": "completed", "labels": [],
            "resolution": resolution, "signatures": [WEIGHT_ERROR], "resolved": state == "closed"}
    return Hit(f"gh:{REPO}#{number}", "issue", title, "", f"https://github.com/{REPO}/issues/{number}",
               1.0, 1.0, 1.0, 1.0, (WEIGHT_ERROR,), meta)


def test_an_issue_step_with_a_flag_the_users_version_lacks_is_left_out():
    registry = FlagRegistry.load()
    old, new = registry.versions[0], registry.latest
    flag = next(f for f in sorted(registry.releases[new].flags) if f.startswith("--")
                and not registry.check(f, old).known and "-" in f[2:])
    resolution = {"status": "resolved", "comment": 0, "comment_url": None, "by": {"login": "m", "role": "maintainer"},
                  "steps": [{"text": f"Launch with `{flag} 2`.", "commands": [f"{flag} 2"]},
                            {"text": "Remove the stale cache directory.", "commands": []}],
                  "fix_pr": None, "fixed_in": None, "upgrade_to": None, "notes": [], "related": []}
    analysis = analyze(f"sglang: {old}\n{WEIGHT_ERROR}")
    retrieval = Retrieval((_issue_hit(501, "A report", resolution),), CONFIDENT, analysis)
    answer = compose_extractive(retrieval, registry)
    assert len(answer.fix) == 1 and "stale cache" in answer.fix[0] and flag not in "\n".join(answer.fix)
    assert any(flag in w and old in w and "left out" in w for w in answer.warnings)
    assert len(compose_extractive(Retrieval((_issue_hit(501, "A report", resolution),), CONFIDENT,
                                            analyze(f"sglang: {new}\n{WEIGHT_ERROR}")), registry).fix) == 2


def test_the_resolved_report_of_the_same_error_leads_and_the_others_are_named():
    open_one = _issue_hit(602, "Same KeyError, open", {"status": "unresolved", "steps": [], "notes": []}, state="open")
    fixed = _issue_hit(601, "KeyError fixed", {"status": "resolved", "steps": [{"text": "Upgrade.", "commands": []}],
                                                "fix_pr": 4244, "fixed_in": "0.4.6", "upgrade_to": "0.4.6"})
    analysis = analyze(f"sglang==0.4.3\n{WEIGHT_ERROR}")
    answer = compose_extractive(Retrieval((open_one, fixed), CONFIDENT, analysis, (open_one, fixed)))
    assert answer.matches[0].id == f"gh:{REPO}#601"
    assert "Fixed by #4244, released in 0.4.6: upgrade from your 0.4.3." in answer.fix[-1]
    assert "#602 (still open)" in answer.diagnosis
    assert f"gh:{REPO}#601" not in [m.id for m in answer.similar_issues]


def test_sample_threads_score_through_the_fake():
    assert len(load_threads(SAMPLE)) == 5
    result = run(SAMPLE, SOURCE_REPO / "evals" / "threads" / "missing-releases.json")
    assert result["threads"] == 5 and result["status_accuracy"] == 1.0 and result["mentions_accuracy"] == 1.0
    assert result["fix_pr_accuracy"] == 1.0


@pytest.mark.slow
def test_ask_prints_the_resolution_with_pr_and_release_and_never_a_workaround_as_the_fix(kb):
    with FakeGitHub() as gh:
        _repository(gh)
        result = run_ask("ingest", "github", REPO, "--api-url", gh.url, "--quiet", kb=kb,
                         env={"GITHUB_TOKEN": TOKEN}, timeout=600)
    assert result.returncode == 0, result.stderr.decode()

    # the resolved thread: its step, the fix PR and its release against the user's version
    result = run_ask(f"sglang: 0.4.3\n{WEIGHT_TRACE}", kb=kb)
    text = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()
    fix = text[text.index("Fix:"):]
    assert "#4244 should fix it" in fix and "Unconfirmed" not in fix
    assert "Fixed by #4244, released in 0.4.6: upgrade from your 0.4.3." in fix
    assert 'pip install -U "sglang>=0.4.6"' in fix
    assert f"github.com/{REPO}/issues/201" in text and "#202 (still open)" in text

    # a maintainer's untested suggestion on an open thread: labelled, never the confirmed fix
    answer = json.loads(run_ask("--json", f"```\n{CAPTURE_ERROR}\n```", kb=kb).stdout)
    assert answer["matches"][0]["id"] == f"gh:{REPO}#301" and not answer["abstained"]
    assert answer["answer"]["fix"] and all(s.startswith("Unconfirmed workaround: ") for s in answer["answer"]["fix"])
    assert "still open without a confirmed fix" in answer["answer"]["diagnosis"]
    assert "resolved" not in answer["answer"]["diagnosis"].lower()
    assert any("Nobody in #301 confirmed" in w for w in answer["answer"]["warnings"])

    # the only suggestion failed for the reporter: no fix at all, the dispute is shown
    answer = json.loads(run_ask("--json", f"```\n{NCCL_ERROR}\n```", kb=kb).stdout)
    assert answer["matches"][0]["id"] == f"gh:{REPO}#990302"
    assert answer["answer"]["fix"] == [] and "no fix in the thread" in answer["answer"]["diagnosis"]
    assert "NCCL_IB_DISABLE" not in " ".join(answer["answer"]["fix"] + [answer["answer"]["diagnosis"]])
    assert any("still fails" in s for s in answer["next_steps"])
