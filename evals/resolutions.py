"""`python -m evals resolutions`: how well the resolution of an issue thread is read.

Labelled threads (evals/threads/threads.jsonl, with the repository's releases in releases.json)
are served from the loopback GitHub fake, synced with the real `ask ingest github` code, turned
into units the way the index gets them, and each unit's `resolution` is scored against the label:

    status      resolved / workaround / unresolved as labelled
    mentions    the text an answer shows (steps, notes, fix PR, release, upgrade) contains every
                `must_mention` and none of `must_not_mention` (case-insensitive)
    fix PR      the fix PR, where the label names one
    fixed in    the first release with the fix, where the label names one

A thread is right when all four are. Also reported: the resolving comment, `upgrade_to`, and
releases predicted where the label has none (the label's releases.json may lack the notes).
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from assistant.config import Settings
from ingest.github.client import GitHubClient
from ingest.github.resolution import resolution_text
from ingest.github.store import IssueStore, repo_folder
from ingest.github.sync import sync_repo
from ingest.github_synth import rest_comment, rest_issue
from tests.fake_github import TOKEN, FakeGitHub

ROOT = Path(__file__).resolve().parent
THREADS = ROOT / "threads" / "threads.jsonl"
RELEASES = ROOT / "threads" / "releases.json"
MAINTAINER_ROLES = ("OWNER", "MEMBER", "COLLABORATOR")
# The releases file holds one repository's releases: the one whose threads carry SGLang versions.
RELEASES_REPO = "sgl-project/sglang"


def load_threads(path: Path) -> list[dict]:
    threads = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    threads.append(json.loads(line))
                except ValueError as exc:
                    raise SystemExit(f"{path}, line {number}: not JSON ({exc.msg})") from None
    return threads


def serve(gh: FakeGitHub, threads: list[dict], releases: list[dict]) -> None:
    """The labelled threads as the REST API shows them: issues with their comments, the pull
    requests linked to them (a PR body naming the issue, as GitHub links them), the releases."""
    issue_numbers = {t["number"] for t in threads}
    for t in threads:
        n = t["number"]
        comments = t.get("comments") or []
        author_role = next((c["association"] for c in comments
                            if c["user"] == t["author"] and c["association"] in MAINTAINER_ROLES), "NONE")
        times = [t["created_at"], t.get("closed_at") or "", *[c.get("created_at") or "" for c in comments]]
        gh.issues[n] = rest_issue(n, t["title"], t.get("body") or "", repo=gh.repo, state=t["state"],
                                  state_reason=t.get("state_reason"), labels=t.get("labels") or [],
                                  author=t["author"], association=author_role, created=t["created_at"],
                                  updated=max(times), closed=t.get("closed_at"), comments=len(comments))
        gh.comments[n] = [rest_comment(n, n * 1000 + i, c["body"], c["user"], repo=gh.repo,
                                       association=c["association"], created=c.get("created_at") or t["created_at"])
                          for i, c in enumerate(comments)]
        for pr in t.get("prs") or []:
            number = int(pr["number"])
            if number in issue_numbers or number in gh.issues:
                continue   # a PR number that is also a labelled issue: the issue wins
            when = pr.get("merged_at") or t["created_at"]
            item = rest_issue(number, pr.get("title") or f"PR {number}", f"Fixes #{n}", repo=gh.repo,
                              state="closed" if pr.get("merged_at") else "open", created=when, updated=when,
                              closed=pr.get("merged_at"), pull_request=True)
            item["pull_request"]["merged_at"] = pr.get("merged_at")
            gh.issues[number] = item
            gh.comments[number] = []
    for i, r in enumerate(releases):
        gh.releases.append({**r, "id": 7_000_000 + i, "created_at": r.get("published_at") or "",
                            "html_url": r.get("html_url") or f"https://github.com/{gh.repo}/releases/tag/{r['tag_name']}"})


def extract(threads: list[dict], releases: list[dict]) -> dict[str, dict]:
    """key -> the unit meta (with its resolution) that a real sync of the served threads builds."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for t in threads:
        by_repo[t["key"].split("#")[0]].append(t)
    metas: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"ASK_KB_DIR": tmp})
        for repo, items in by_repo.items():
            with FakeGitHub(repo=repo) as gh:
                serve(gh, items, releases if repo == RELEASES_REPO else [])
                store = IssueStore(repo_folder(settings, repo))
                client = GitHubClient(gh.url, TOKEN)
                try:
                    sync_repo(store, client, repo)
                finally:
                    client.close()
            for unit in store.units(repo):
                metas[f"{repo}#{unit.meta['number']}"] = unit.meta
    return metas


def score_thread(thread: dict, meta: dict | None) -> dict:
    expected = thread["expected"]
    res = (meta or {}).get("resolution") or {}
    text = resolution_text(res).lower() if res else ""
    missing = [m for m in expected.get("must_mention") or [] if m.lower() not in text]
    forbidden = [m for m in expected.get("must_not_mention") or [] if m.lower() in text]
    checks = {
        "status": res.get("status") == expected["status"],
        "mentions": not missing and not forbidden,
        "fix_pr": expected.get("fix_pr") is None or res.get("fix_pr") == expected["fix_pr"],
        "fixed_in": expected.get("fixed_in") is None or res.get("fixed_in") == expected["fixed_in"],
    }
    return {"key": thread["key"], "ok": all(checks.values()), "checks": checks,
            "status": res.get("status"), "expected_status": expected["status"],
            "comment_ok": res.get("comment") == expected.get("resolving_comment"),
            "upgrade_to": res.get("upgrade_to"), "expected_upgrade_to": expected.get("upgrade_to"),
            "fix_pr": res.get("fix_pr"), "expected_fix_pr": expected.get("fix_pr"),
            "fixed_in": res.get("fixed_in"), "expected_fixed_in": expected.get("fixed_in"),
            "missing": missing, "forbidden": forbidden}


def _share(items: list[bool]) -> float | None:
    return round(sum(items) / len(items), 3) if items else None


def run(threads_path: Path = THREADS, releases_path: Path = RELEASES) -> dict:
    threads = load_threads(threads_path)
    releases = json.loads(Path(releases_path).read_text()) if releases_path and Path(releases_path).exists() else []
    metas = extract(threads, releases)
    rows = [score_thread(t, metas.get(t["key"])) for t in threads]
    labelled = {key: [r for r, t in zip(rows, threads) if t["expected"].get(key) is not None]
                for key in ("fix_pr", "fixed_in", "upgrade_to")}
    confusion = Counter(f"{r['expected_status']}->{r['status']}" for r in rows)
    return {
        "threads": len(rows),
        "accuracy": _share([r["ok"] for r in rows]),
        "status_accuracy": _share([r["checks"]["status"] for r in rows]),
        "mentions_accuracy": _share([r["checks"]["mentions"] for r in rows]),
        "fix_pr_accuracy": _share([r["checks"]["fix_pr"] for r in labelled["fix_pr"]]),
        "fix_pr_labelled": len(labelled["fix_pr"]),
        "fix_pr_unlabelled_predicted": sum(1 for r in rows if r["expected_fix_pr"] is None and r["fix_pr"]),
        "fixed_in_accuracy": _share([r["checks"]["fixed_in"] for r in labelled["fixed_in"]]),
        "fixed_in_labelled": len(labelled["fixed_in"]),
        "fixed_in_unlabelled_predicted": sum(1 for r in rows if r["expected_fixed_in"] is None and r["fixed_in"]),
        "upgrade_to_accuracy": _share([r["upgrade_to"] == r["expected_upgrade_to"] for r in labelled["upgrade_to"]]),
        "resolving_comment_accuracy": _share([r["comment_ok"] for r in rows]),
        "by_status": {s: _share([r["checks"]["status"] for r in rows if r["expected_status"] == s])
                      for s in ("resolved", "workaround", "unresolved")},
        "confusion": dict(sorted(confusion.items())),
        "failures": [r for r in rows if not r["ok"]],
        "source": str(threads_path),
    }


def html_fragment(result: dict) -> str:
    """The scores as an HTML section for the eval report."""
    def pct(value) -> str:
        return "n/a" if value is None else f"{value:.0%}"

    rows = [("Threads right (all checks)", pct(result["accuracy"])), ("Status", pct(result["status_accuracy"])),
            ("Must / must-not mention", pct(result["mentions_accuracy"])),
            (f"Fix PR ({result['fix_pr_labelled']} labelled)", pct(result["fix_pr_accuracy"])),
            (f"Fixed in release ({result['fixed_in_labelled']} labelled)", pct(result["fixed_in_accuracy"])),
            ("Upgrade to (labelled)", pct(result["upgrade_to_accuracy"])),
            ("Resolving comment", pct(result["resolving_comment_accuracy"]))]
    rows += [(f"Status when labelled {s}", pct(v)) for s, v in result["by_status"].items()]
    table = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    failures = "".join(
        f"<li><code>{html.escape(f['key'])}</code>: "
        + html.escape("; ".join(
            [f"status {f['status']} (labelled {f['expected_status']})"] * (not f["checks"]["status"])
            + [f"missing {f['missing']}"] * bool(f["missing"]) + [f"forbidden {f['forbidden']}"] * bool(f["forbidden"])
            + [f"fix PR {f['fix_pr']} (labelled {f['expected_fix_pr']})"] * (not f["checks"]["fix_pr"])
            + [f"fixed in {f['fixed_in']} (labelled {f['expected_fixed_in']})"] * (not f["checks"]["fixed_in"])))
        + "</li>" for f in result["failures"])
    return (f"<section id=\"resolutions\"><h2>Issue resolutions ({result['threads']} labelled threads)</h2>"
            f"<table>{table}</table>"
            + (f"<h3>Wrong</h3><ul>{failures}</ul>" if failures else "") + "</section>")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals resolutions",
                                     description="Score the resolutions read from labelled issue threads.")
    parser.add_argument("--threads", type=Path, default=THREADS, help=f"labelled threads (default {THREADS})")
    parser.add_argument("--releases", type=Path, default=RELEASES, help=f"releases (default {RELEASES})")
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write the HTML fragment here")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = parser.parse_args(argv)
    if not args.threads.is_file():
        print(f"resolutions: {args.threads} does not exist; pass --threads FILE "
              "(e.g. tests/data/threads_sample.jsonl)", file=sys.stderr)
        return 2
    result = run(args.threads, args.releases)
    if args.html:
        args.html.write_text(html_fragment(result), encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 0
    def pct(v):
        return "n/a" if v is None else f"{v:.1%}"
    print(f"{result['threads']} threads from {result['source']}: {pct(result['accuracy'])} right "
          f"(status {pct(result['status_accuracy'])}, mentions {pct(result['mentions_accuracy'])}, "
          f"fix PR {pct(result['fix_pr_accuracy'])} of {result['fix_pr_labelled']}, "
          f"fixed in {pct(result['fixed_in_accuracy'])} of {result['fixed_in_labelled']}; "
          f"resolving comment {pct(result['resolving_comment_accuracy'])})")
    for f in result["failures"]:
        print(f"  wrong: {f['key']} {f['checks']} missing={f['missing']} forbidden={f['forbidden']}")
    return 0
