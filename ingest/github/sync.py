"""The incremental sync from the REST API: list issues by update time since the last sync, fetch
the comments of what changed, checkpoint after every listing page so an interrupted sync resumes.
The pull requests the listing mixes in are kept too (merged or not, which issues they fix), and
the releases are listed after the issues, newest first, until one already stored.

The listing is sorted by update time, newest first, with `since=` the newest update of the previous
sync: an issue updated while a sync runs moves to the front (already read), so it is caught by the
next sync instead of pushing an unread issue out of the page window.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from urllib.parse import urlencode

from ingest.github.client import PER_PAGE, GitHubClient, _path
from ingest.github.errors import GitHubError
from ingest.github.resolution import pull_request_record
from ingest.github.store import IssueStore, _record, _tombstone

@dataclass
class SyncStats:
    repo: str
    pages: int = 0
    requests: int = 0
    listed: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    pull_requests: int = 0
    comments: int = 0
    removed: int = 0
    releases: int = 0                 # new releases stored
    retries: int = 0
    rate_limit_waits: int = 0
    resumed_at_page: int | None = None
    since: str | None = None
    seconds: float = 0.0


def sync_repo(store: IssueStore, client: GitHubClient, repo: str, full: bool = False,
              say: Callable[[str], None] = lambda s: None) -> SyncStats:
    """Fetch what changed since the last sync (everything the first time, or with full=True),
    checkpointing after every listing page. Raises GitHubError, leaving the checkpoint to resume."""
    started = time.perf_counter()
    stats = SyncStats(repo=repo)
    state = store.state()
    run = state.get("in_progress")
    if run and (run.get("repo") != repo or (full and not run.get("full"))):
        run = None   # a --full run replaces an interrupted incremental one
    if run:
        stats.resumed_at_page = run["pages"] + 1
        say(f"resuming the interrupted sync of {repo} at listing page {run['pages'] + 1}")
    else:
        since = None if full else state.get("since")
        params = {"state": "all", "sort": "updated", "direction": "desc", "per_page": PER_PAGE}
        if since:
            params["since"] = since
        run = {"repo": repo, "full": since is None, "since": since, "cursor": None, "pages": 0,
               "next_url": f"/repos/{repo}/issues?{urlencode(params)}", "seen": []}
    stats.since = run["since"]
    stored = store.updated_at()
    stored_pulls = {n: pr.get("updated_at") for n, pr in store.pulls().items()}
    seen = set(run["seen"])
    try:
        while run["next_url"]:
            response = client.get(run["next_url"])
            items = response.json()
            if not isinstance(items, list):
                raise GitHubError(f"unexpected answer for {_path(run['next_url'])}: not a list of issues")
            changed = 0
            pulls = []
            for item in items:
                number = int(item["number"])
                seen.add(number)
                stats.listed += 1
                if item.get("pull_request"):
                    stats.pull_requests += 1   # the issues endpoint lists pull requests too
                    if stored_pulls.get(number) != item.get("updated_at"):
                        pulls.append(pull_request_record(item))   # kept: merged_at says what it fixed, when
                        stored_pulls[number] = item.get("updated_at")
                    continue
                updated = str(item.get("updated_at") or "")
                if run["cursor"] is None or updated > run["cursor"]:
                    run["cursor"] = updated
                if stored.get(number) == updated:
                    stats.unchanged += 1
                    continue
                comments = _fetch_comments(client, repo, item) if item.get("comments") else []
                if comments is None:   # deleted between the listing and now
                    continue
                stats.comments += len(comments)
                store.append(_record(item, comments))
                stats.new += number not in stored
                stats.updated += number in stored
                stored[number] = updated
                changed += 1
            store.append_pulls(pulls)
            run["pages"] += 1
            run["next_url"] = response.links.get("next", {}).get("url")
            if run["full"]:
                run["seen"] = sorted(seen)
            store.save_state(state | {"in_progress": run})
            stats.pages += 1
            say(f"page {run['pages']}: {len(items)} listed, {changed} new or changed")
        if run["full"]:
            stats.removed = _drop_missing(store, client, repo, stored, seen, say)
        stats.releases = sync_releases(store, client, repo, full=run["full"])
        if stats.releases:
            say(f"{stats.releases} new releases")
    finally:
        stats.requests, stats.retries = client.requests, client.retries
        stats.rate_limit_waits = client.rate_limit_waits
        stats.seconds = time.perf_counter() - started
    store.compact()
    store.compact_pulls()
    state.pop("in_progress", None)
    state.update(repo=repo, since=run["cursor"] or run["since"], api_url=client.api_url,
                 last_sync=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 last_stats=asdict(stats) | {"seconds": round(stats.seconds, 2)})
    store.save_state(state)
    return stats


def sync_releases(store: IssueStore, client: GitHubClient, repo: str, full: bool = False) -> int:
    """Store the repository's releases (tag, date, notes); returns how many are new. GitHub lists
    them newest first, so an incremental sync stops at the first page holding a stored release;
    a full one re-reads them all (notes edited since, releases deleted)."""
    known = {r["tag_name"]: r for r in store.releases()}
    fetched: dict[str, dict] = {}
    for items, _ in client.pages(f"/repos/{repo}/releases?per_page={PER_PAGE}"):
        if not isinstance(items, list):
            raise GitHubError(f"unexpected answer for /repos/{repo}/releases: not a list of releases")
        records = [release_record(item) for item in items if item.get("tag_name")]
        fetched.update((r["tag_name"], r) for r in records)
        if not full and any(r["tag_name"] in known for r in records):
            break
    merged = fetched if full else known | fetched
    if merged != known:
        store.save_releases(sorted(merged.values(), key=lambda r: r.get("published_at") or "", reverse=True))
    return len(set(fetched) - set(known))


def release_record(item: dict) -> dict:
    return {key: item.get(key) for key in ("tag_name", "name", "published_at", "body", "draft", "prerelease",
                                           "html_url")}


def _fetch_comments(client: GitHubClient, repo: str, issue: dict) -> list[dict] | None:
    url = f"/repos/{repo}/issues/{issue['number']}/comments?per_page={PER_PAGE}"
    comments: list[dict] = []
    while url:
        response = client.get(url, ok=(200, 404, 410))
        if response.status_code != 200:
            return None
        comments += response.json()
        url = response.links.get("next", {}).get("url")
    return comments


def _drop_missing(store: IssueStore, client: GitHubClient, repo: str, stored: dict[int, str],
                  seen: set[int], say) -> int:
    """Stored issues a full listing did not show: ask for each; 404/410 (deleted) or 301
    (transferred) leaves a tombstone, 200 means the listing skipped it and it is stored again."""
    removed = 0
    for number in sorted(set(stored) - seen):
        response = client.get(f"/repos/{repo}/issues/{number}", ok=(200, 301, 404, 410))
        if response.status_code == 200 and not response.json().get("pull_request"):
            item = response.json()
            if stored[number] != item.get("updated_at"):
                store.append(_record(item, _fetch_comments(client, repo, item) or []))
            continue
        reason = "transferred" if response.status_code == 301 else "deleted"
        store.append(_tombstone(number, reason))
        stored.pop(number, None)
        removed += 1
        say(f"#{number} is {reason}: removed")
    return removed
