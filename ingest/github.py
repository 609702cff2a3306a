"""`ask ingest github OWNER/REPO`: keep a local copy of a repository's issues and their comments,
and turn it into index units so answers can list similar reports.

    ask ingest github sgl-project/sglang                  sync from the REST API (token: $GITHUB_TOKEN)
    ask ingest github sgl-project/sglang --full           re-list everything; drop deleted / transferred issues
    ask ingest github sgl-project/sglang --from-export F  import `gh issue list --json ...` or REST JSON

What is stored, under <kb_dir>/github/<owner>__<repo>/:
    issues.jsonl   the raw cache: one line per fetched issue, {"number", "updated_at", "issue": <REST issue>,
                   "comments": [<REST comment>, ...]}, appended as fetched (the last line of a number wins),
                   or a tombstone {"number", "gone": reason}; rewritten compactly after each finished sync
    state.json     the checkpoint: the `since` cursor of the last finished sync, and the listing page in
                   progress, so an interrupted sync resumes where it stopped

The listing is sorted by update time, newest first, with `since=` the newest update of the previous
sync: an issue updated while a sync runs moves to the front (already read), so it is caught by the
next sync instead of pushing an unread issue out of the page window.
"""

from __future__ import annotations

import argparse
import email.utils
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from assistant.config import Settings
from assistant.trace import EXCEPTION_RE, FATAL_RE, SGLANG_VERSION_RES, analyze
from ingest.documents import Unit, _blocks, split_text

DEFAULT_API_URL = "https://api.github.com"
PER_PAGE = 100                    # the REST API's maximum page size
RETRIES = 4                       # per request, for 5xx answers and network errors
BACKOFF_SECONDS = 1.0             # doubled after each failed try
MAX_RATE_WAIT = 3600.0            # the hourly limit always resets within this; past it, stop and resume later
SECONDARY_LIMIT_WAIT = 60.0       # GitHub's advice when a 403/429 names no reset time
MAINTAINER_ROLES = ("OWNER", "MEMBER", "COLLABORATOR")

# Thread cap: a 300-comment thread is mostly "+1" and repeats; the start says what broke, the end
# how it ended, and maintainers' comments in between carry the workarounds.
HEAD_COMMENTS = 15
TAIL_COMMENTS = 10
MIDDLE_MAINTAINER_COMMENTS = 5
MAX_CHUNKS = 24                   # per issue, after the cap
MAX_BLOCK_LINES = 120             # a pasted log longer than this keeps its first and last lines

BOT_LOGINS = frozenset({"github-actions", "stale", "sglang-bot", "dependabot", "codecov", "mergify",
                        "gemini-code-assist", "coderabbitai", "copilot", "allcontributors"})
STALE_RE = re.compile(
    r"automatically (?:been )?marked as stale|has been automatically closed|closed (?:due to|because of|"
    r"because it has been) inactiv|marked as stale because it has not had recent activity|"
    r"This issue has been inactive for|will be closed if no further activity", re.I)
STALE_CLOSE_RE = re.compile(r"has been automatically closed|closed (?:due to|because of|because it has been) inactiv|"
                            r"closing (?:this|it) (?:due to|for) inactiv", re.I)
NOISE_RE = re.compile(r"^\s*(?:\+1|same(?: here| issue| problem| error)?|me too|bump|any updates?\??|"
                      r"any progress\??|following|subscribe|👍)[\s.!]*$", re.I)
FIX_PR_RES = [
    # "fixed by #123", "should be resolved in https://github.com/o/r/pull/123", "closes #123"
    re.compile(r"\b(?:fix(?:e[sd])?|resolve[sd]?|close[sd]?|address(?:e[sd])?|solved)\b(?:(?!\bnot\b|n't)[^.\n]){0,40}?"
               r"(?:#|github\.com/[\w.-]+/[\w.-]+/pull/)(\d+)", re.I),
    # "#123 fixes it", "PR #123 should resolve this"
    re.compile(r"(?:github\.com/[\w.-]+/[\w.-]+/pull/|#)(\d+)(?:(?!\bnot\b|n't)[^.\n]){0,30}?"
               r"\b(?:fix(?:e[sd])?|resolve[sd]?)\b", re.I),
]
REPO_RE = re.compile(r"^(?:https?://github\.com/)?([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
GENERIC_ERRORS = re.compile(r"Exception in ASGI application|Scheduler hit an exception|^ERROR:\s*$|"
                            r"^Error:?\s*$|Traceback|subprocess\.CalledProcessError", re.I)


class GitHubError(Exception):
    """A sync failure with a one-line message (a bad token, an unknown repository, a bad file)."""


class Interrupted(GitHubError):
    """GitHub stayed unreachable or kept failing: running the command again resumes the sync."""


class RateLimited(Interrupted):
    pass


# ---- storage -----------------------------------------------------------------------------------

_LINE_HEAD_RE = re.compile(r'^\{"number": (\d+), "(updated_at|gone)": "([^"]*)"')


def repo_folder(settings: Settings, repo: str) -> Path:
    owner, name = repo.split("/", 1)
    return settings.kb_dir / "github" / f"{owner}__{name}"


class IssueStore:
    """The raw cache (issues.jsonl) and the checkpoint (state.json) of one repository."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.issues_path = self.folder / "issues.jsonl"
        self.state_path = self.folder / "state.json"

    @contextmanager
    def lock(self) -> Iterator[None]:
        """One writer at a time (a cron sync and a manual one must not interleave their lines)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "w") as handle:
            try:
                import fcntl

                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:   # no fcntl (Windows): no lock
                pass
            except OSError:
                raise GitHubError(f"another `ask ingest github` is updating {self.folder}; "
                                  "wait for it to finish") from None
            yield

    # the checkpoint
    def state(self) -> dict:
        try:
            return json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return {}

    def save_state(self, state: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(state, indent=1))
        os.replace(tmp, self.state_path)   # a crash never leaves a half-written checkpoint

    # the raw cache
    def _latest_offsets(self) -> dict[int, tuple[int, str, bool, int]]:
        """number -> (byte offset of its last line, updated_at or gone reason, is_tombstone, line length)."""
        latest: dict[int, tuple[int, str, bool, int]] = {}
        if not self.issues_path.exists():
            return latest
        with open(self.issues_path, "rb") as f:
            offset = 0
            for raw in f:
                here, offset = offset, offset + len(raw)
                if not raw.endswith(b"\n"):
                    break   # a line cut by a crash: ignore it
                line = raw.decode("utf-8", "replace")
                m = _LINE_HEAD_RE.match(line)
                if m:
                    latest[int(m.group(1))] = (here, m.group(3), m.group(2) == "gone", len(raw))
                    continue
                try:   # a hand-edited or reordered line: parse it whole
                    obj = json.loads(line)
                    n = int(obj["number"])
                except (ValueError, KeyError, TypeError):
                    continue
                latest[n] = (here, obj.get("gone") or obj.get("updated_at") or "", "gone" in obj, len(raw))
        return latest

    def updated_at(self) -> dict[int, str]:
        """What is stored, as number -> updated_at (deleted issues left out)."""
        return {n: v for n, (_, v, gone, _) in self._latest_offsets().items() if not gone}

    def records(self) -> Iterator[dict]:
        """The stored issues, latest version of each, in number order; reads one line at a time."""
        latest = self._latest_offsets()
        if not latest:
            return
        with open(self.issues_path, "rb") as f:
            for n in sorted(latest):
                offset, _, gone, _ = latest[n]
                if gone:
                    continue
                f.seek(offset)
                try:
                    yield json.loads(f.readline())
                except ValueError:
                    continue

    def units(self, repo: str) -> list[Unit]:
        """The stored issues as units. Building a unit costs milliseconds (trace analysis), so units
        are cached in units.cache.jsonl by (issue line, code version): a re-ingest of 20,000
        unchanged issues reads the cache instead of parsing every thread again."""
        latest = self._latest_offsets()
        cache_path = self.folder / "units.cache.jsonl"
        cache: dict[str, dict | None] = {}
        if cache_path.exists():
            with open(cache_path, encoding="utf-8") as f:
                for line in f:
                    try:
                        item = json.loads(line)
                        cache[item["key"]] = item["unit"]
                    except (ValueError, KeyError, TypeError):
                        continue
        fresh: dict[str, dict | None] = {}
        units: list[Unit] = []
        with open(self.issues_path, "rb") as f:
            for n in sorted(latest):
                offset, updated, gone, length = latest[n]
                if gone:
                    continue
                key = f"{repo}#{n}:{updated}:{length}:{_unit_code_version()}"
                if key in cache:
                    data = cache[key]
                else:
                    f.seek(offset)
                    try:
                        unit = issue_unit(repo, json.loads(f.readline()))
                    except (ValueError, KeyError, TypeError):
                        unit = None   # an unreadable line indexes nothing rather than failing the ingest
                    data = asdict(unit) if unit else None
                fresh[key] = data
                if data:
                    units.append(Unit(**data))
        if fresh.keys() != cache.keys():
            tmp = cache_path.with_suffix(".tmp")
            with open(tmp, "w", encoding="utf-8") as out:
                for key, data in fresh.items():
                    out.write(json.dumps({"key": key, "unit": data}, ensure_ascii=False) + "\n")
            os.replace(tmp, cache_path)
        return units

    def append(self, record: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.issues_path, "ab+") as f:
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    f.write(b"\n")   # end a line cut by an earlier crash, so this one stays readable
            f.write(_record_line(record))

    def replace_all(self, records: Iterable[dict]) -> int:
        """Rewrite the cache with exactly these records (compaction, a full export)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.issues_path.with_suffix(".jsonl.tmp")
        count = 0
        with open(tmp, "wb") as out:
            for record in records:
                out.write(_record_line(record))
                count += 1
        os.replace(tmp, self.issues_path)
        return count

    def compact(self) -> None:
        """Drop superseded lines and tombstones, copying the kept lines as they are."""
        latest = self._latest_offsets()
        if not latest:
            return
        with open(self.issues_path, "rb") as f:
            lines = sum(1 for _ in f)
            if lines == len(latest) and not any(gone for _, _, gone, _ in latest.values()):
                return
            tmp = self.issues_path.with_suffix(".jsonl.tmp")
            with open(tmp, "wb") as out:
                for n in sorted(latest):
                    offset, _, gone, _ = latest[n]
                    if not gone:
                        f.seek(offset)
                        out.write(f.readline())
        os.replace(tmp, self.issues_path)


def _record(issue: dict, comments: list[dict]) -> dict:
    return {"number": int(issue["number"]), "updated_at": str(issue.get("updated_at") or ""),
            "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "issue": issue, "comments": comments}


def _tombstone(number: int, reason: str) -> dict:
    return {"number": int(number), "gone": reason}


def _record_line(record: dict) -> bytes:
    # number and updated_at first: the loader reads them from the line's start without parsing it
    head = {"number": record["number"]}
    head["gone" if "gone" in record else "updated_at"] = record.get("gone") or record.get("updated_at", "")
    return (json.dumps(head | record, ensure_ascii=False) + "\n").encode("utf-8")


# ---- the REST client ---------------------------------------------------------------------------

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
    retries: int = 0
    rate_limit_waits: int = 0
    resumed_at_page: int | None = None
    since: str | None = None
    seconds: float = 0.0


class GitHubClient:
    """GET with pagination, retries of transient errors, and rate limits honoured."""

    def __init__(self, api_url: str, token: str, token_env: str = "GITHUB_TOKEN",
                 max_wait: float = MAX_RATE_WAIT, say: Callable[[str], None] = lambda s: None,
                 sleep: Callable[[float], None] = time.sleep):
        import httpx

        self.api_url = api_url.rstrip("/")
        self.token_env = token_env
        self.max_wait = max_wait
        self.say = say
        self.sleep = sleep
        self.requests = self.retries = self.rate_limit_waits = 0
        self._paused_until: float | None = None
        self.http = httpx.Client(
            base_url=self.api_url, timeout=httpx.Timeout(30.0, connect=10.0), follow_redirects=False,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "sglang-ask"})

    def close(self) -> None:
        self.http.close()

    def get(self, url: str, ok: tuple[int, ...] = (200,)):
        """The response to GET url (relative to the API URL, or a `next` link); statuses outside
        `ok` raise GitHubError once retries and rate-limit waits are used up."""
        import httpx

        if url.startswith("http") and urlsplit(url).netloc != urlsplit(self.api_url).netloc:
            raise GitHubError(f"GitHub sent a link to another host ({urlsplit(url).netloc}); not following it")
        failures = waits = 0
        while True:
            self._wait_for_reset()
            try:
                response = self.http.get(url)
            except httpx.TransportError as exc:
                failures += 1
                if failures > RETRIES:
                    raise Interrupted(f"cannot reach {self.api_url} ({type(exc).__name__}: {exc})") from exc
                self._backoff(failures, type(exc).__name__)
                continue
            self.requests += 1
            self._note_remaining(response)
            status = response.status_code
            if status in ok:
                return response
            if status in (403, 429):
                wait = rate_limit_wait(response)
                if wait is not None:
                    waits += 1
                    if wait > self.max_wait or waits > 10:
                        resume = time.strftime("%H:%M", time.localtime(time.time() + wait))
                        raise RateLimited(f"GitHub rate limit reached; it resets in {wait / 60:.0f} min "
                                          f"(about {resume})")
                    self.rate_limit_waits += 1
                    self.say(f"rate limited ({status}): waiting {wait:.0f} s as GitHub asks")
                    self.sleep(wait)
                    continue
            if status in (500, 502, 503, 504):
                failures += 1
                if failures > RETRIES:
                    raise Interrupted(f"GitHub answered {status} {_message(response)} for {_path(url)} "
                                      f"{failures} times")
                self._backoff(failures, str(status))
                continue
            if status == 401:
                raise GitHubError(f"GitHub rejected the token in ${self.token_env} "
                                  f"(401 {_message(response) or 'Bad credentials'})")
            if status == 404:
                raise GitHubError(f"{_path(url)} was not found (404): check OWNER/REPO and --api-url, "
                                  f"and that the token in ${self.token_env} can read the repository")
            raise GitHubError(f"GitHub answered {status} {_message(response)} for {_path(url)}".rstrip())

    def pages(self, url: str) -> Iterator[tuple[list, str | None]]:
        """Each page of a listing with the URL of the next one (from the Link header)."""
        while url:
            response = self.get(url)
            next_url = response.links.get("next", {}).get("url")
            yield response.json(), next_url
            url = next_url

    def _backoff(self, failures: int, why: str) -> None:
        self.retries += 1
        delay = BACKOFF_SECONDS * 2 ** (failures - 1)
        self.say(f"transient error ({why}): retry {failures}/{RETRIES} in {delay:.1f} s")
        self.sleep(delay)

    def _note_remaining(self, response) -> None:
        """Remaining 0 on a good answer: pause before the next request instead of hitting 403."""
        if response.status_code < 400 and response.headers.get("x-ratelimit-remaining") == "0":
            wait = rate_limit_wait(response, force=True)
            if wait:
                self._paused_until = time.monotonic() + wait

    def _wait_for_reset(self) -> None:
        if self._paused_until is None:
            return
        wait = self._paused_until - time.monotonic()
        self._paused_until = None
        if wait <= 0:
            return
        if wait > self.max_wait:
            raise RateLimited(f"GitHub rate limit used up; it resets in {wait / 60:.0f} min")
        self.rate_limit_waits += 1
        self.say(f"rate limit used up: waiting {wait:.0f} s for the reset")
        self.sleep(wait)


def rate_limit_wait(response, force: bool = False) -> float | None:
    """Seconds to wait before retrying a rate-limited answer, or None when it is not a rate limit."""
    headers = response.headers
    retry_after = headers.get("retry-after")
    if retry_after:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            when = email.utils.parsedate_to_datetime(retry_after)
            return max(0.0, when.timestamp() - time.time()) if when else SECONDARY_LIMIT_WAIT
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
        # measure against the server's clock (Date header) so a skewed local clock does not matter
        server_now = time.time()
        if headers.get("date"):
            try:
                server_now = email.utils.parsedate_to_datetime(headers["date"]).timestamp()
            except (TypeError, ValueError):
                pass
        try:
            return max(0.0, float(headers["x-ratelimit-reset"]) - server_now) + 1.0
        except ValueError:
            return SECONDARY_LIMIT_WAIT
    if force:
        return None
    if response.status_code == 429 or "rate limit" in _message(response).lower():
        return SECONDARY_LIMIT_WAIT
    return None


def _message(response) -> str:
    try:
        data = response.json()
    except ValueError:
        return ""
    return str(data.get("message", ""))[:200] if isinstance(data, dict) else ""


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


# ---- the sync ----------------------------------------------------------------------------------

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
    seen = set(run["seen"])
    try:
        while run["next_url"]:
            response = client.get(run["next_url"])
            items = response.json()
            if not isinstance(items, list):
                raise GitHubError(f"unexpected answer for {_path(run['next_url'])}: not a list of issues")
            changed = 0
            for item in items:
                number = int(item["number"])
                seen.add(number)
                stats.listed += 1
                if item.get("pull_request"):
                    stats.pull_requests += 1   # the issues endpoint lists pull requests too
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
            run["pages"] += 1
            run["next_url"] = response.links.get("next", {}).get("url")
            if run["full"]:
                run["seen"] = sorted(seen)
            store.save_state(state | {"in_progress": run})
            stats.pages += 1
            say(f"page {run['pages']}: {len(items)} listed, {changed} new or changed")
        if run["full"]:
            stats.removed = _drop_missing(store, client, repo, stored, seen, say)
    finally:
        stats.requests, stats.retries = client.requests, client.retries
        stats.rate_limit_waits = client.rate_limit_waits
        stats.seconds = time.perf_counter() - started
    store.compact()
    state.pop("in_progress", None)
    state.update(repo=repo, since=run["cursor"] or run["since"], api_url=client.api_url,
                 last_sync=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 last_stats=asdict(stats) | {"seconds": round(stats.seconds, 2)})
    store.save_state(state)
    return stats


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


# ---- export files ------------------------------------------------------------------------------

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


# ---- issues as index units ---------------------------------------------------------------------

_FENCED_RE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)
_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_DETAILS_RE = re.compile(r"</?(?:details|summary)>", re.I)
_CHECKLIST_RE = re.compile(r"^(?:#+\s*Checklist\s*|\s*[-*] \[[ xX]\] .*)\n?", re.M)


def _login(obj: dict) -> str:
    return str((obj.get("user") or {}).get("login") or "ghost")


def is_bot_comment(comment: dict) -> bool:
    user = comment.get("user") or {}
    login = str(user.get("login") or "").lower()
    return (user.get("type") == "Bot" or login.endswith("[bot]") or login in BOT_LOGINS
            or bool(STALE_RE.search(comment.get("body") or "")))


def _is_maintainer(comment: dict, author: str) -> bool:
    return comment.get("author_association") in MAINTAINER_ROLES and _login(comment) != author


def _clean(text: str) -> str:
    """Drop template comments, checklists and <details> tags that issue forms leave in bodies."""
    text = _HTML_COMMENT_RE.sub("", text.replace("\r\n", "\n"))
    text = _CHECKLIST_RE.sub("", text)   # the bug form's checklist says nothing about the bug
    return _DETAILS_RE.sub("", text).strip()


def _trim_long_blocks(text: str) -> str:
    """A pasted log of thousands of lines keeps its head and its end (where the error is)."""
    def trim(m: re.Match) -> str:
        lines = m.group(0).split("\n")
        if len(lines) <= MAX_BLOCK_LINES:
            return m.group(0)
        head, tail = lines[:40], lines[-(MAX_BLOCK_LINES - 40):]
        return "\n".join(head + [f"... ({len(lines) - len(head) - len(tail)} lines omitted) ..."] + tail)
    return _FENCED_RE.sub(trim, text)


_ENV_KEYS_RE = re.compile(r"^\s*(?:Python|CUDA available|GPU \d[\d,]*|CUDA_HOME|NVCC|CUDA Driver Version|PyTorch|"
                          r"sglang|sgl_kernel|flashinfer(?:_python)?|triton|transformers|torchao|numpy|"
                          r"NVIDIA Topology|ulimit soft|Hypervisor vendor)\s*:", re.M)


def _summarize_env_blocks(body: str, analysis) -> str:
    """`python3 -m sglang.check_env` output is near-identical in every report: it would make all
    issues look alike to the embedding. One line with the versions says what matters in it."""
    env = analysis.environment

    def summarize(m: re.Match) -> str:
        if len(_ENV_KEYS_RE.findall(m.group(0))) < 4:
            return m.group(0)
        parts = [f"sglang {env.sglang_version}" if env.sglang_version else "",
                 f"torch {env.torch_version}" if env.torch_version else "",
                 f"CUDA {env.cuda_version}" if env.cuda_version else "",
                 f"flashinfer {env.flashinfer_version}" if env.flashinfer_version else "", env.gpu or ""]
        return "Environment: " + ", ".join(p for p in parts if p)
    return _FENCED_RE.sub(summarize, body)


def _is_error_block(block: str) -> bool:
    return any(EXCEPTION_RE.match(ln.strip()) or FATAL_RE.search(ln) for ln in block.splitlines()[:400])


def _first_error_block(body: str) -> str:
    for block in _blocks(body):
        starts_code = block.lstrip().startswith(("```", "~~~", "Traceback"))
        if starts_code and _is_error_block(block):
            return block
    return ""


def issue_signatures(body: str, analysis=None, limit: int = 3) -> list[str]:
    """The error lines of the issue's pasted logs, so a user's log can match them exactly."""
    analysis = analysis or analyze(body)
    code = "\n".join(m.group(0) for m in _FENCED_RE.finditer(body)) or body
    out = []
    for error in analysis.errors:
        text = error.text.strip().strip("`").strip()
        if error.kind not in ("exception", "fatal") or len(text) < 20 or GENERIC_ERRORS.search(text) \
                or text not in code:   # prose that says "failed to start" is not a signature
            continue
        out.append(text[:300])
        if len(out) == limit:
            break
    return out


FIXED_IN_RE = re.compile(r"\b(?:fixed in|upgrade to|upgrading to|released in|available in|landed in|works (?:in|on)|"
                         r"sglang\s*>=)\s*(?:sglang\s*)?v?(\d+\.\d+\.\d+(?:\.?post\d+|rc\d+)?)", re.I)


def _versions(texts: Iterable[str]) -> list[str]:
    """SGLang versions the thread names: "sglang 0.5.2", check_env output, "fixed in 0.5.3"."""
    found: list[str] = []
    for text in texts:
        for regex in (*SGLANG_VERSION_RES, FIXED_IN_RE):
            for m in regex.finditer(text):
                if m.group(1) not in found:
                    found.append(m.group(1))
    return found[:6]


def _fix_pr(texts: Iterable[str], own_number: int) -> int | None:
    """The last pull request a comment says fixes the issue."""
    fix = None
    for text in texts:
        for regex in FIX_PR_RES:
            for m in regex.finditer(text):
                if int(m.group(1)) != own_number:
                    fix = int(m.group(1))
    return fix


def _first_sentence(text: str) -> str:
    prose = _FENCED_RE.sub(" ", text)
    prose = " ".join(ln.strip() for ln in prose.splitlines() if ln.strip() and not ln.lstrip().startswith(">"))
    m = re.match(r"(.{12,}?[.!?])(?:\s|$)", prose)
    sentence = (m.group(1) if m else prose).strip()
    return sentence[:200] + ("..." if len(sentence) > 200 else "")


def _cap_thread(comments: list[dict], author: str) -> tuple[list[dict], int]:
    cap = HEAD_COMMENTS + TAIL_COMMENTS
    if len(comments) <= cap + MIDDLE_MAINTAINER_COMMENTS:
        return comments, 0
    middle = comments[HEAD_COMMENTS:-TAIL_COMMENTS]
    answers = [c for c in middle if _is_maintainer(c, author)][-MIDDLE_MAINTAINER_COMMENTS:]
    kept = comments[:HEAD_COMMENTS] + answers + comments[-TAIL_COMMENTS:]
    return kept, len(comments) - len(kept)


def issue_unit(repo: str, record: dict) -> Unit | None:
    """An issue and its discussion as one unit; None for pull requests."""
    issue = record["issue"]
    if issue.get("pull_request"):
        return None
    number = int(issue["number"])
    title = " ".join(str(issue.get("title") or "").split()) or f"Issue #{number}"
    author = _login(issue)
    body = _trim_long_blocks(_clean(str(issue.get("body") or "")))
    all_comments = record.get("comments") or []
    human = [c for c in all_comments if not is_bot_comment(c)]
    bots = len(all_comments) - len(human)
    comments = [c for c in human if not NOISE_RE.match(c.get("body") or "")]
    shown, omitted = _cap_thread(comments, author)
    maintainer = [c for c in comments if _is_maintainer(c, author)]

    analysis = analyze(body)
    body = _summarize_env_blocks(body, analysis)
    signatures = issue_signatures(body, analysis)
    first_error = _first_error_block(body)
    head = [title]
    if first_error and len(first_error) > 1200:
        head += signatures   # the embedding reads ~250 tokens: put the error lines where it looks
    head.append(first_error or (split_text(body)[:1] or [""])[0])
    chunks = ["\n".join(p for p in head if p)]
    rest = body.replace(first_error, "", 1) if first_error else "\n\n".join(split_text(body)[1:])
    thread = [rest] if rest.strip() else []   # packed with the first comments: fewer, fuller chunks
    for i, comment in enumerate(shown):
        if omitted and i == HEAD_COMMENTS:
            thread.append(f"[... {omitted} comments of this thread not indexed ...]")
        role = (comment.get("author_association") or "NONE").lower()
        thread.append(f"{_login(comment)} ({role}): {_trim_long_blocks(_clean(comment.get('body') or ''))}")
    chunks += split_text("\n\n".join(thread)) if thread else []
    chunks = [c for c in chunks if c.strip()]
    if len(chunks) > MAX_CHUNKS:   # keep the start and the end of the discussion
        chunks = chunks[: MAX_CHUNKS - 6] + chunks[-6:]

    state = str(issue.get("state") or "open").lower()
    state_reason = (issue.get("state_reason") or "").lower() or None
    texts = [body] + [c.get("body") or "" for c in comments]
    fix_pr = _fix_pr(texts, number)
    stale_closed = bool(state == "closed" and all_comments and STALE_CLOSE_RE.search(all_comments[-1].get("body") or ""))
    resolved = bool(state == "closed" and state_reason in (None, "completed") and not stale_closed
                    and (maintainer or fix_pr))
    resolution = ""
    if resolved:
        answers = [c for c in maintainer if not (c.get("body") or "").rstrip().endswith("?")]   # not "which version?"
        sentence = _first_sentence(answers[-1].get("body") or "") if answers else ""
        pr_note = f"Fixed by PR #{fix_pr}." if fix_pr and f"#{fix_pr}" not in sentence and f"/{fix_pr}" not in sentence else ""
        resolution = " ".join(p for p in (sentence, pr_note) if p)
    env = analysis.environment
    meta = {
        "number": number, "repo": repo, "state": state, "state_reason": state_reason,
        "labels": [label["name"] if isinstance(label, dict) else str(label) for label in issue.get("labels") or []],
        "created_at": issue.get("created_at"), "updated_at": issue.get("updated_at"),
        "closed_at": issue.get("closed_at"), "author": author,
        "versions": _versions([title, *texts]),
        "env": {k: v for k, v in (("torch", env.torch_version), ("cuda", env.cuda_version),
                                  ("gpu", env.gpu), ("hardware", env.hardware)) if v},
        "maintainer_answered": bool(maintainer), "fix_pr": fix_pr, "resolved": resolved,
        "resolution": resolution, "signatures": signatures,
        "comments_total": len(all_comments), "comments_indexed": len(shown),
        "bot_comments_dropped": bots, "comments_omitted": omitted,
    }
    return Unit(id=f"gh:{repo}#{number}", kind="issue", title=title, chunks=chunks,
                url=issue.get("html_url"), meta=meta)


def stored_repos(settings: Settings) -> list[tuple[str, IssueStore]]:
    root = settings.kb_dir / "github"
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(p for p in root.iterdir() if (p / "issues.jsonl").exists()):
        store = IssueStore(folder)
        repo = store.state().get("repo") or folder.name.replace("__", "/", 1)
        out.append((repo, store))
    return out


def stored_issue_units(settings: Settings) -> list[Unit]:
    """Every stored issue of every synced repository, as units for the index."""
    units = []
    for repo, store in stored_repos(settings):
        units += store.units(repo)
    return units


@lru_cache(maxsize=1)
def _unit_code_version() -> str:
    """Changes whenever the code that shapes units does, so cached units are rebuilt."""
    import assistant.trace
    import ingest.documents

    h = hashlib.sha256()
    for module in (sys.modules[__name__], assistant.trace, ingest.documents):
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()[:12]


# ---- the command -------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ask ingest github",
        description="Sync a repository's GitHub issues (with comments) into the index: the first run "
                    "fetches everything, later runs only what changed. Interrupted runs resume.")
    parser.add_argument("repo", metavar="OWNER/REPO", help="e.g. sgl-project/sglang")
    parser.add_argument("--token-env", default="GITHUB_TOKEN", metavar="VAR",
                        help="environment variable holding the GitHub token (default GITHUB_TOKEN)")
    parser.add_argument("--api-url", default=DEFAULT_API_URL, metavar="URL",
                        help=f"REST API base URL (default {DEFAULT_API_URL}; GitHub Enterprise: https://HOST/api/v3)")
    parser.add_argument("--from-export", type=Path, metavar="FILE",
                        help="import a file instead of calling the API: REST JSON (array or lines) or "
                             "`gh issue list --state all --limit 100000 --json number,title,body,state,"
                             "stateReason,labels,author,comments,createdAt,updatedAt,closedAt,url`")
    parser.add_argument("--merge", action="store_true",
                        help="with --from-export: keep stored issues the export lacks (default: remove them)")
    parser.add_argument("--full", action="store_true",
                        help="list every issue again and remove deleted or transferred ones")
    parser.add_argument("--max-wait", type=float, default=MAX_RATE_WAIT, metavar="SECONDS",
                        help="longest rate-limit wait before stopping (resume later); default 3600")
    parser.add_argument("--no-index", action="store_true", help="store the issues, do not rebuild the index")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    return parser


def main(argv: list[str], settings: Settings) -> int:
    args = _parser().parse_args(argv)
    m = REPO_RE.match(args.repo.strip())
    if not m:
        print(f"ask ingest github: {args.repo!r} is not OWNER/REPO (e.g. sgl-project/sglang)", file=sys.stderr)
        return 2
    repo = f"{m.group(1)}/{m.group(2)}"

    def say(text: str) -> None:
        if not args.quiet:
            print(f"github {repo}: {text}", file=sys.stderr)

    token = ""
    if args.from_export and not args.from_export.is_file():
        print(f"ask ingest github: --from-export {args.from_export}: no such file", file=sys.stderr)
        return 2
    if not args.from_export:
        token = os.environ.get(args.token_env, "").strip()
        if not token:
            print(f"ask ingest github: set {args.token_env} to a GitHub token (read access to public "
                  "repositories is enough), or import a file with --from-export FILE", file=sys.stderr)
            return 2
    store = IssueStore(repo_folder(settings, repo))
    try:
        with store.lock():
            if args.from_export:
                stats = import_export(store, repo, args.from_export, merge=args.merge)
            else:
                client = GitHubClient(args.api_url, token, token_env=args.token_env, max_wait=args.max_wait, say=say)
                try:
                    stats = sync_repo(store, client, repo, full=args.full, say=say)
                finally:
                    client.close()
    except GitHubError as exc:
        resumable = " Progress is saved: run the same command again to resume." if isinstance(exc, Interrupted) else ""
        print(f"ask ingest github: {exc}.{resumable}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ask ingest github: interrupted. Progress is saved: run the same command again to resume.",
              file=sys.stderr)
        return 130
    print(summary_line(stats, store), file=sys.stderr)
    if args.no_index:
        return 0
    from ingest.cli import ingest_kb

    built = ingest_kb(settings, progress=not args.quiet)
    print(f"Indexed {built.units} units ({built.chunks} chunks) into {settings.index_dir}: embedded "
          f"{built.embedded}, reused {built.reused}, removed {built.removed_units} units, {built.seconds:.1f} s"
          + (f", {built.chunks_per_second:.0f} chunks/s" if built.embedded else ""), file=sys.stderr)
    return 0


def summary_line(stats: SyncStats, store: IssueStore) -> str:
    stored = len(store.updated_at())
    parts = [f"{stats.new} new", f"{stats.updated} updated", f"{stats.unchanged} unchanged",
             f"{stats.removed} removed"]
    extra = [f"{stats.pull_requests} pull requests skipped"] if stats.pull_requests else []
    if stats.requests:
        extra.append(f"{stats.requests} requests")
    if stats.retries:
        extra.append(f"{stats.retries} retries")
    if stats.rate_limit_waits:
        extra.append(f"{stats.rate_limit_waits} rate-limit waits")
    if stats.resumed_at_page:
        extra.append(f"resumed at page {stats.resumed_at_page}")
    return (f"GitHub {stats.repo}: {', '.join(parts)} ({', '.join(extra + [f'{stats.seconds:.1f} s'])}); "
            f"{stored} issues stored in {store.folder}")
