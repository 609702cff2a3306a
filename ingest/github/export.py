"""Importing an export file instead of calling the API: REST JSON (arrays or lines), this cache's
own lines, or `gh issue list --json ...` output; the export is taken as the whole repository
unless merged."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from ingest.github.errors import GitHubError
from ingest.github.store import IssueStore, _record, _record_line
from ingest.github.sync import SyncStats

def read_export(path: Path) -> Iterator[dict]:
    """Records from an export: a REST JSON array (or `gh api --paginate` concatenated arrays),
    JSON lines of REST issues or of this cache, or `gh issue list --json ...` output. JSON lines
    are read one at a time, so a large export does not have to fit in memory as objects."""
    with open(path, encoding="utf-8", errors="replace") as f:
        first_line = f.readline()
        f.seek(0)
        try:
            json_lines = isinstance(json.loads(first_line), dict)
        except ValueError:
            json_lines = False
        if json_lines:
            for number, line in enumerate(f, 1):
                if line.strip():
                    yield from _export_records(_parse(line, path, number))
            return
        text = f.read()
    decoder = json.JSONDecoder()
    pos, end = 0, len(text)
    while pos < end:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos < end:
            try:
                value, pos = decoder.raw_decode(text, pos)
            except ValueError as exc:
                raise GitHubError(f"{path} is not JSON or JSON lines ({exc})") from None
            yield from _export_records(value)


def _parse(line: str, path: Path, number: int):
    try:
        return json.loads(line)
    except ValueError as exc:
        raise GitHubError(f"{path}, line {number}: not JSON ({exc.msg})") from None


def _export_records(value) -> Iterator[dict]:
    if isinstance(value, dict) and isinstance(value.get("issues"), list):
        value = value["issues"]
    for obj in value if isinstance(value, list) else [value]:
        record = export_record(obj) if isinstance(obj, dict) else None
        if record:
            yield record


def export_record(obj: dict) -> dict | None:
    """One exported issue as a cache record, or None for pull requests and tombstones."""
    if "gone" in obj:
        return None
    if isinstance(obj.get("issue"), dict):   # this cache's own lines
        issue, comments = obj["issue"], obj.get("comments") or []
    elif "createdAt" in obj or "updatedAt" in obj or "stateReason" in obj:   # gh CLI
        issue, comments = _from_gh(obj)
    else:   # a REST issue, comments either absent (a count) or inlined as a list
        issue = dict(obj)
        comments = obj["comments"] if isinstance(obj.get("comments"), list) else obj.get("comments_data") or []
        issue.pop("comments_data", None)
        issue["comments"] = len(comments) if isinstance(obj.get("comments"), list) else obj.get("comments", 0)
    if issue.get("pull_request") or "number" not in issue:
        return None
    return _record(issue, comments)


def _gh_user(author) -> dict:
    author = author or {}
    return {"login": author.get("login", "ghost"),
            "type": "Bot" if author.get("is_bot") or author.get("isBot") else "User"}


def _from_gh(obj: dict) -> tuple[dict, list[dict]]:
    labels = [{"name": label["name"] if isinstance(label, dict) else str(label)} for label in obj.get("labels") or []]
    comments = [{"user": _gh_user(c.get("author")), "author_association": c.get("authorAssociation") or "NONE",
                 "body": c.get("body") or "", "created_at": c.get("createdAt"), "html_url": c.get("url")}
                for c in obj.get("comments") or [] if isinstance(c, dict)]
    issue = {"number": obj["number"], "title": obj.get("title") or "", "body": obj.get("body") or "",
             "state": (obj.get("state") or "open").lower(),
             "state_reason": (obj.get("stateReason") or "").lower() or None,
             "labels": labels, "created_at": obj.get("createdAt"), "updated_at": obj.get("updatedAt"),
             "closed_at": obj.get("closedAt"), "html_url": obj.get("url"), "user": _gh_user(obj.get("author")),
             "author_association": obj.get("authorAssociation") or "NONE", "comments": len(comments)}
    return issue, comments


def import_export(store: IssueStore, repo: str, path: Path, merge: bool = False) -> SyncStats:
    """Store an export. It is taken as the whole repository: stored issues it lacks are removed,
    unless merge=True. An issue whose updated_at did not change keeps its stored line (with the
    comments an earlier sync fetched, which a REST issue export does not carry)."""
    started = time.perf_counter()
    stats = SyncStats(repo=repo)
    previous = store._latest_offsets()
    prefix = f"github.com/{repo}/".lower()
    seen: set[int] = set()
    other_repos = 0
    store.folder.mkdir(parents=True, exist_ok=True)
    tmp = store.issues_path.with_suffix(".jsonl.tmp")
    old = open(store.issues_path, "rb") if previous else None   # noqa: SIM115 - closed below
    try:
        with open(tmp, "wb") as out:
            for record in read_export(path):
                if prefix not in str(record["issue"].get("html_url") or prefix).lower():
                    other_repos += 1
                    continue
                number = record["number"]
                before = previous.get(number)
                first = number not in seen   # an export may list an issue twice: the last line wins
                seen.add(number)
                stats.listed += first
                stats.comments += len(record["comments"]) if first else 0
                if before and not before[2] and before[1] == record["updated_at"]:
                    stats.unchanged += first
                    old.seek(before[0])
                    out.write(old.readline())
                    continue
                stats.new += first and (not before or before[2])
                stats.updated += first and bool(before and not before[2])
                out.write(_record_line(record))
            live = {n for n, (_, _, gone, _) in previous.items() if not gone}
            if merge:
                for n in sorted(live - seen):
                    old.seek(previous[n][0])
                    out.write(old.readline())
            else:
                stats.removed = len(live - seen)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        if old:
            old.close()
    if not seen:
        tmp.unlink(missing_ok=True)
        raise GitHubError(f"{path} holds no issues of {repo}" + (f" ({other_repos} of other repositories)"
                                                                 if other_repos else ""))
    os.replace(tmp, store.issues_path)
    state = store.state()
    state.update(repo=repo, last_import={"file": str(Path(path).resolve()),
                                         "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    store.save_state(state)
    stats.seconds = time.perf_counter() - started
    return stats
