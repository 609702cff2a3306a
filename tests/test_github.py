"""`ask ingest github`: a full sync against a loopback fake of the GitHub REST API (pagination,
pull requests, rate limits, transient errors), resuming after an interruption, incremental
updates, deleted and transferred issues leaving the index, export files, and answers that list
similar reports or are themselves an issue."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from assistant.config import Settings
from ingest.documents import Unit
from ingest.github import client as github_client
from ingest.github import command as github_command
from ingest.github import store as github_store
from ingest.github import units as github_units
from ingest.github_synth import generate, rest_comment, rest_issue
from tests.conftest import REPO as SOURCE_REPO
from tests.conftest import run_ask
from tests.fake_github import TOKEN, FakeGitHub, listing_page

REPO = "sgl-project/sglang"
ENTRIES = ("libnuma-missing-sgl-kernel", "kv-cache-not-enough-memory", "flashinfer-jit-missing-cuda-fp8-h")
LIBNUMA_TRACE = """```
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sgl_kernel/__init__.py", line 5, in <module>
    from sgl_kernel import common_ops
ImportError: libnuma.so.1: cannot open shared object file: No such file or directory
```"""
WEIGHT_TRACE = """```
Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 612, in load_model
    self.model = get_model(model_config=self.model_config, load_config=self.load_config)
  File "/sgl-workspace/sglang/python/sglang/srt/models/deepseek_v2.py", line 2410, in load_weights
    param = params_dict[name]
KeyError: 'model.layers.3.mlp.experts.w13_weight_scale_inv'
```"""


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch):
    monkeypatch.setattr(github_client, "BACKOFF_SECONDS", 0.01)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)


@pytest.fixture
def kb(tmp_path):
    root = tmp_path / "kb"
    (root / "entries").mkdir(parents=True)
    for name in ENTRIES:
        shutil.copy(SOURCE_REPO / "kb" / "entries" / f"{name}.md", root / "entries")
    return root


def sync(kb, gh, *options, capsys=None) -> tuple[int, str]:
    """`ask ingest github` in this process (the fake's data is at hand); returns (exit code, stderr)."""
    code = github_command.main([REPO, "--api-url", gh.url, "--no-index", *options], Settings.from_env({"ASK_KB_DIR": str(kb)}))
    return code, capsys.readouterr().err if capsys else ""


def stored(kb) -> dict[int, Unit]:
    return {u.meta["number"]: u for u in github_store.stored_issue_units(Settings.from_env({"ASK_KB_DIR": str(kb)}))}


def state(kb) -> dict:
    return json.loads((kb / "github" / "sgl-project__sglang" / "state.json").read_text())


def test_full_sync_follows_pages_skips_pull_requests_and_honours_rate_limits(kb, capsys):
    records = list(generate(230, seed=3, pull_request_every=7))
    issues = {r["number"] for r in records if "pull_request" not in r["issue"]}
    prs = len(records) - len(issues)
    long_thread = next(r["number"] for r in records if len(r["comments"]) == 300)
    with FakeGitHub() as gh:
        gh.load_records(records)
        gh.fail(listing_page(2), 502, times=2)                                   # transient: retried
        gh.fail(f"/issues/{long_thread}/comments\\?", 429, headers={"Retry-After": "1"})
        gh.fail(listing_page(3), 403, reset_in=1)                                # primary limit: wait for the reset
        started = time.monotonic()
        code, err = sync(kb, gh, capsys=capsys)
        elapsed = time.monotonic() - started
        assert code == 0, err
        assert gh.listing_pages() == [1, 2, 2, 2, 3, 3]
        assert gh.comment_requests().count(long_thread) == 4              # 300 comments = 3 pages, +1 after the 429
    assert elapsed >= 1.9                                                 # both waits were honoured
    assert f"{len(issues)} new" in err and f"{prs} pull requests skipped" in err and "2 retries" in err
    assert "2 rate-limit waits" in err
    units = stored(kb)
    assert set(units) == issues                                           # no pull request became an issue
    assert units[long_thread].meta["comments_total"] == 300
    assert state(kb)["since"] == max(r["updated_at"] for r in records if r["number"] in issues)
    assert "in_progress" not in state(kb)


def test_interrupted_sync_resumes_where_it_stopped(kb, capsys):
    records = list(generate(250, seed=5))
    order = sorted(records, key=lambda r: (r["updated_at"], r["number"]), reverse=True)
    page3_issue = next(r["number"] for r in order[200:] if r["comments"])
    with FakeGitHub() as gh:
        gh.load_records(records)
        gh.fail(listing_page(2), 503, times=50)                                   # GitHub down for a while
        code, err = sync(kb, gh, capsys=capsys)
        assert code == 1 and "run the same command again to resume" in err and "503" in err
        assert len(err.strip().splitlines()[-1]) < 300
        assert set(stored(kb)) == {r["number"] for r in order[:100]}      # page 1 is kept
        assert "page=2" in state(kb)["in_progress"]["next_url"]

        run1_comments = set(gh.comment_requests())
        gh.faults.clear()
        gh.fail(f"/issues/{page3_issue}/comments\\?", 500, times=50)         # then dies in the middle of page 3
        before = len(gh.requests)
        code, err = sync(kb, gh, capsys=capsys)
        assert code == 1 and "resuming" in err and "page 2" in err
        assert gh.listing_pages()[-2:] == [2, 3]                          # page 1 was not fetched again
        assert run1_comments and not run1_comments & set(gh.comment_requests(before))   # page 1's threads: not again

        gh.faults.clear()
        before = len(gh.requests)
        code, err = sync(kb, gh, capsys=capsys)
        assert code == 0, err
        assert gh.listing_pages()[-1] == 3 and gh.listing_pages().count(1) == 1
        page3 = [r["number"] for r in order[200:]]
        from_failed_on = set(page3[page3.index(page3_issue):])
        assert page3_issue in gh.comment_requests(before)
        assert set(gh.comment_requests(before)) <= from_failed_on      # issues stored before the failure: not again
    assert set(stored(kb)) == {r["number"] for r in records}
    assert "in_progress" not in state(kb)


def test_incremental_sync_fetches_only_changes_and_full_sync_drops_deleted_issues(kb, capsys):
    with FakeGitHub() as gh:
        gh.load_records(generate(40, seed=7))
        assert sync(kb, gh, capsys=capsys)[0] == 0
        cursor = state(kb)["since"]
        gh.add_comment(5, "kv-cache-maint", "MEMBER", "Fixed by #4321, upgrade to 0.5.5.")
        gh.update_issue(7, state="closed", state_reason="completed")
        gh.add_issue(41, "New crash on startup", "```\nRuntimeError: something new broke here\n```")
        gh.delete_issue(10, status=404)
        gh.transfer_issue(11)
        gh.delete_issue(12, status=410)
        gh.requests.clear()
        code, err = sync(kb, gh, capsys=capsys)
        assert code == 0, err
        listing = [r for r in gh.requests if "/issues?" in r]
        assert len(listing) == 1 and "since=" + cursor.replace(":", "%3A") in listing[0]
        assert set(gh.comment_requests()) <= {5, 7, 41}                   # nothing else is fetched
        assert "1 new, 2 updated" in err
        units = stored(kb)
        assert units[5].meta["fix_pr"] == 4321 and units[7].meta["state"] == "closed"
        assert {10, 11, 12} <= set(units)                                 # a listing cannot show deletions...

        code, err = sync(kb, gh, "--full", capsys=capsys)                # ...a full one re-checks them
        assert code == 0 and "3 removed" in err
        assert "#11 is transferred" in err and "#10 is deleted" in err
    units = stored(kb)
    assert not {10, 11, 12} & set(units) and {5, 7, 41} <= set(units) and len(units) == 38


def test_rate_limit_longer_than_max_wait_stops_resumably(kb, capsys):
    with FakeGitHub() as gh:
        gh.load_records(generate(30, seed=1))
        gh.fail(listing_page(1), 403, reset_in=7200)
        code, err = sync(kb, gh, "--max-wait", "5", capsys=capsys)
        assert code == 1 and "rate limit" in err and "resume" in err
        code, err = sync(kb, gh, "--max-wait", "5", capsys=capsys)
        assert code == 0 and "30 new" in err


def test_missing_or_wrong_token_is_a_one_line_error(kb):
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}
    with FakeGitHub() as gh:
        result = run_ask("ingest", "github", REPO, "--api-url", gh.url, kb=kb, env={"GITHUB_TOKEN": ""})
        err = result.stderr.decode()
        assert result.returncode == 2 and "GITHUB_TOKEN" in err and len(err.strip().splitlines()) == 1
        result = run_ask("ingest", "github", REPO, "--api-url", gh.url, "--token-env", "MY_GH",
                         kb=kb, env=env | {"MY_GH": "wrong"})
        err = result.stderr.decode()
        assert result.returncode == 1 and "401" in err and "$MY_GH" in err and "Traceback" not in err
        assert "resume" not in err                                        # nothing to resume: fix the token
        result = run_ask("ingest", "github", "sgl-project/no-such-repo", "--api-url", gh.url, kb=kb)
        err = result.stderr.decode()
        assert result.returncode == 1 and "not found (404)" in err and len(err.strip().splitlines()) == 1
        result = run_ask("ingest", "github", "not a repo", kb=kb)
        assert result.returncode == 2 and "OWNER/REPO" in result.stderr.decode()


def _thread_record() -> dict:
    body = ("### Describe the bug\n\nsglang 0.5.2 on H100 crashes when loading weights.\n\n" + WEIGHT_TRACE
            + "\n\n### Environment\n\n```\nPython: 3.10.12\nCUDA available: True\nGPU 0,1: NVIDIA H100 80GB HBM3\n"
              "PyTorch: 2.8.0+cu128\nsglang: 0.5.2\nflashinfer_python: 0.4.1\n```")
    comments = []
    for i in range(300):
        if i == 150:
            text, who, assoc = "The checkpoint is block-quantized: pass --quantization fp8.", "kv-cache-maint", "MEMBER"
        elif i % 40 == 39:
            text, who, assoc = github_stale(), "github-actions[bot]", "NONE"
        elif i % 3 == 0:
            text, who, assoc = "+1", f"user{i}", "NONE"
        else:
            text, who, assoc = f"Same here with tp {i % 8 + 1}, log attached.", f"user{i}", "NONE"
        comments.append(rest_comment(77, 1000 + i, text, who, association=assoc, created="2025-05-01T00:00:00Z",
                                     kind="Bot" if "[bot]" in who else "User"))
    comments.append(rest_comment(77, 2000, "Fixed by #4242, released in 0.5.3. Closing.", "sched-lead", association="MEMBER",
                                 created="2025-06-01T00:00:00Z"))
    issue = rest_issue(77, "[Bug] KeyError w13_weight_scale_inv loading DeepSeek FP8", body, state="closed",
                       state_reason="completed", labels=["bug", "quant"], created="2025-04-01T00:00:00Z",
                       updated="2025-06-01T00:00:00Z", closed="2025-06-01T00:00:00Z", comments=len(comments))
    return {"number": 77, "updated_at": issue["updated_at"], "issue": issue, "comments": comments}


def github_stale() -> str:
    return ("This issue has been automatically marked as stale because it has not had recent activity. "
            "It will be closed if no further activity occurs.")


def test_issue_unit_drops_bot_noise_caps_long_threads_and_keeps_tracebacks_whole():
    unit = github_units.issue_unit(REPO, _thread_record())
    text = "\n".join(unit.chunks)
    assert unit.id == "gh:sgl-project/sglang#77" and unit.url == "https://github.com/sgl-project/sglang/issues/77"
    assert unit.chunks[0].startswith("[Bug] KeyError w13_weight_scale_inv")
    assert WEIGHT_TRACE.strip("`\n") in unit.chunks[0]                   # the traceback in one piece, first
    assert "marked as stale" not in text and ": +1" not in text          # bots and "+1" are gone
    assert "comments of this thread not indexed" in text and len(unit.chunks) <= github_units.MAX_CHUNKS
    assert "block-quantized" in text                                     # a maintainer answer mid-thread is kept
    assert "CUDA available" not in text and "sglang 0.5.2" in text       # check_env output reduced to one line
    meta = unit.meta
    assert meta["comments_total"] == 301 and meta["bot_comments_dropped"] == 7 and meta["comments_omitted"] > 150
    assert meta["signatures"] == ["KeyError: 'model.layers.3.mlp.experts.w13_weight_scale_inv'"]
    assert meta["versions"][:2] == ["0.5.2", "0.5.3"] and meta["env"]["gpu"].startswith("H100")
    assert meta["maintainer_answered"] and meta["fix_pr"] == 4242 and meta["resolved"]
    assert meta["resolution"]["summary"] == "Fixed by #4242, released in 0.5.3."
    assert (meta["labels"], meta["state"], meta["updated_at"]) == (["bug", "quant"], "closed", "2025-06-01T00:00:00Z")

    stale = _thread_record()
    stale["issue"].update(state_reason="not_planned")
    assert not github_units.issue_unit(REPO, stale).meta["resolved"]          # closed as stale: no confirmed fix
    stale["issue"].update(state="open", state_reason=None)
    assert not github_units.issue_unit(REPO, stale).meta["resolved"]


def test_export_files_rest_and_gh_cli(kb, tmp_path, capsys):
    settings = Settings.from_env({"ASK_KB_DIR": str(kb)})
    gh_cli = [{"number": n, "title": f"Crash {n}", "body": LIBNUMA_TRACE, "state": "CLOSED" if n == 1 else "OPEN",
               "stateReason": "COMPLETED" if n == 1 else "", "labels": [{"name": "bug"}],
               "author": {"login": "reporter", "is_bot": False},
               "comments": [{"author": {"login": "kv-cache-maint"}, "authorAssociation": "MEMBER",
                             "body": "Install libnuma1. Fixed by #15355.", "createdAt": "2025-01-02T00:00:00Z",
                             "url": f"https://github.com/{REPO}/issues/{n}#issuecomment-1"},
                            {"author": {"login": "github-actions", "is_bot": True}, "authorAssociation": "NONE",
                             "body": github_stale(), "createdAt": "2025-02-02T00:00:00Z", "url": ""}],
               "createdAt": "2025-01-01T00:00:00Z", "updatedAt": f"2025-03-0{n}T00:00:00Z",
               "closedAt": "2025-03-01T00:00:00Z" if n == 1 else None, "url": f"https://github.com/{REPO}/issues/{n}"}
              for n in (1, 2, 3)]
    path = tmp_path / "gh.json"
    path.write_text(json.dumps(gh_cli))
    assert github_command.main([REPO, "--from-export", str(path), "--no-index"], settings) == 0
    units = stored(kb)
    assert set(units) == {1, 2, 3}
    assert units[1].meta["resolved"] and units[1].meta["fix_pr"] == 15355 and not units[2].meta["resolved"]
    assert units[1].meta["bot_comments_dropped"] == 1 and units[1].meta["labels"] == ["bug"]

    # REST JSON as `gh api --paginate` writes it: arrays back to back; a pull request among them
    pages = [[rest_issue(1, "Crash 1", LIBNUMA_TRACE, created="2025-01-01T00:00:00Z", updated="2025-04-01T00:00:00Z"),
              rest_issue(9, "A PR", "", pull_request=True, created="2025-01-01T00:00:00Z", updated="2025-01-01T00:00:00Z")],
             [rest_issue(2, "Crash 2", LIBNUMA_TRACE, created="2025-01-01T00:00:00Z", updated="2025-03-02T00:00:00Z")]]
    path.write_text("".join(json.dumps(p) for p in pages))
    capsys.readouterr()
    assert github_command.main([REPO, "--from-export", str(path), "--no-index"], settings) == 0
    assert "0 new, 1 updated, 1 unchanged, 1 removed" in capsys.readouterr().err   # #3 is not in the export
    assert stored(kb)[2].meta["comments_total"] == 2      # an unchanged issue keeps the comments a REST export lacks
    assert set(stored(kb)) == {1, 2}
    path.write_text(json.dumps(gh_cli[2:]))
    assert github_command.main([REPO, "--from-export", str(path), "--merge", "--no-index"], settings) == 0
    assert set(stored(kb)) == {1, 2, 3}


def _answer_repo(gh: FakeGitHub) -> None:
    gh.add_issue(101, "sgl_kernel fails to import in python:3.10-slim", "sglang 0.5.2 in a slim image:\n\n" + LIBNUMA_TRACE,
                 state="closed", state_reason="completed", labels=["bug", "installation"],
                 comments=[("user1", "NONE", "+1"),
                           ("kv-cache-maint", "MEMBER", "Install the system package libnuma1 (apt-get install -y "
                                                        "libnuma1). Fixed by #15355, which documents it.")])
    gh.add_issue(102, "libnuma.so.1 missing after upgrade", "Same on sglang 0.5.3:\n\n" + LIBNUMA_TRACE,
                 labels=["bug"], comments=[("user2", "NONE", "any update?")])
    gh.add_issue(103, "KeyError loading DeepSeek-V3 FP8 checkpoint", "With tp 8 on H200:\n\n" + WEIGHT_TRACE,
                 state="closed", state_reason="completed", labels=["bug", "quant"],
                 comments=[("quant-team", "COLLABORATOR", "The checkpoint is block-quantized: pass --quantization "
                                                          "fp8 on sglang 0.5.3 or later."),
                           ("reporter", "NONE", "That works, thanks!")])
    gh.add_issue(104, "[Feature] Support speculative decoding in the router", "Would be nice.", labels=["feature"])
    gh.add_issue(105, "[Fix] libnuma lookup in sgl_kernel", "Fixes #101\n\n" + LIBNUMA_TRACE, pull_request=True)
    gh.add_issue(106, "Server hangs after NCCL init", "```\nInit torch distributed begin.\n```", state="closed",
                 state_reason="not_planned", labels=["inactive"],
                 comments=[("github-actions[bot]", "NONE", github_stale(), "Bot")])


@pytest.mark.slow
def test_answers_list_similar_reports_and_an_issue_can_be_the_answer(kb):
    with FakeGitHub() as gh:
        _answer_repo(gh)
        result = run_ask("ingest", "github", REPO, "--api-url", gh.url, "--quiet", kb=kb,
                         env={"GITHUB_TOKEN": TOKEN}, timeout=600)
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "5 new" in err and "1 pull requests skipped" in err and "Indexed 8 units" in err

    # a KB entry says the same thing as issues 101 and 102: the entry answers, the issues are listed
    result = run_ask("--json", "ImportError: libnuma.so.1: cannot open shared object file: No such file or directory",
                     kb=kb)
    answer = json.loads(result.stdout)
    assert answer["matches"][0]["id"] == "libnuma-missing-sgl-kernel" and not answer["abstained"]
    similar = [(s["number"], s["state"]) for s in answer["similar_issues"]]
    assert similar[:2] == [(101, "closed"), (102, "open")]               # the resolved report ranks first
    assert 105 not in [n for n, _ in similar]                             # pull requests are not reports
    first = answer["similar_issues"][0]
    assert first["labels"] == ["bug", "installation"] and first["resolved"] is True
    assert first["url"] == f"https://github.com/{REPO}/issues/101" and first["updated_at"].startswith("2025-")

    result = run_ask("ImportError: libnuma.so.1: cannot open shared object file", kb=kb)
    text = result.stdout.decode()
    assert result.returncode == 0 and "Similar reports:" in text
    fix_at, similar_at = text.index("Fix:"), text.index("Similar reports:")
    assert fix_at < similar_at
    line = next(ln for ln in text[similar_at:].splitlines() if "#101" in ln)
    assert "[closed, bug,installation; updated 2025-" in line and f"github.com/{REPO}/issues/101" in line

    # no KB entry knows this error: the resolved issue is the answer
    result = run_ask("--json", "KeyError: 'model.layers.3.mlp.experts.w13_weight_scale_inv'", kb=kb)
    answer = json.loads(result.stdout)
    assert result.returncode == 0 and not answer["abstained"]
    assert answer["matches"][0]["id"] == "gh:sgl-project/sglang#103" and answer["matches"][0]["kind"] == "issue"
    assert "block-quantized" in answer["answer"]["diagnosis"]
    assert f"https://github.com/{REPO}/issues/103" in answer["answer"]["fix"][0]


@pytest.mark.slow
def test_reindex_embeds_only_changed_issues_and_drops_removed_ones(kb, capsys):
    from assistant.index import Index
    from ingest.build import chunk_hash

    settings = Settings.from_env({"ASK_KB_DIR": str(kb)})
    with FakeGitHub() as gh:
        gh.load_records(generate(40, seed=11))
        assert github_command.main([REPO, "--api-url", gh.url, "--quiet"], settings) == 0
        before = {h for u in github_store.stored_issue_units(settings) for h in (chunk_hash(settings.embed_model, c) for c in u.chunks)}
        for n in (3, 8, 13, 21, 34):
            gh.add_comment(n, "sched-lead", "MEMBER", f"Fixed by #{5000 + n}; upgrade to 0.5.5.")
        gh.delete_issue(2)
        gh.transfer_issue(30)
        capsys.readouterr()
        assert github_command.main([REPO, "--api-url", gh.url, "--full", "--quiet"], settings) == 0
    err = capsys.readouterr().err
    after = [chunk_hash(settings.embed_model, c) for u in github_store.stored_issue_units(settings) for c in u.chunks]
    changed = len(set(after) - before)
    assert 5 <= changed <= 10                                             # the new comments' chunks, no more
    assert f"embedded {changed}," in err and "removed 2 units" in err
    index = Index.load(settings.index_dir)
    assert f"gh:{REPO}#2" not in index.unit_by_id and f"gh:{REPO}#30" not in index.unit_by_id
    assert index.units[index.unit_by_id[f"gh:{REPO}#13"]].meta["fix_pr"] == 5013


def test_a_second_sync_of_the_same_repository_is_refused_while_one_runs(kb, capsys):
    store = github_store.IssueStore(github_store.repo_folder(Settings.from_env({"ASK_KB_DIR": str(kb)}), REPO))
    with FakeGitHub() as gh, store.lock():
        code, err = sync(kb, gh, capsys=capsys)
    assert code == 1 and "another `ask ingest github` is updating" in err and not gh.requests
