"""A loopback fake of the GitHub REST API (the issue endpoints `ask ingest github` uses), a real HTTP
server on 127.0.0.1 serving issue and comment objects in the API's shape, with what makes a sync
hard: pagination by Link header (page/per_page, at most 100), `since` filtering and sort order,
pull requests mixed into the issue listing (merged ones with `pull_request.merged_at`), the
releases listing (newest first, paginated like the issues), rate-limit headers on every answer, 401 without the
token, 404/410 for deleted and 301 for transferred issues, and scripted failures (5xx, 403/429
rate limits with Retry-After or X-RateLimit-Reset).

    with FakeGitHub() as gh:
        gh.add_issue(1, "title", "body", comments=[("user", "NONE", "text")])
        gh.fail(listing_page(2), 502, times=2)
        gh.add_pull_request(2, "Fix the crash", "Fixes #1", merged_at="2025-03-02T00:00:00Z")
        gh.add_release("v0.4.6", "* Fix the crash in https://github.com/sgl-project/sglang/pull/2")
        ... ask ingest github sgl-project/sglang --api-url {gh.url}
"""

from __future__ import annotations

import email.utils
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

from ingest.github_synth import rest_comment, rest_issue

TOKEN = "ghp_test_token_0123456789"


def listing_page(page: int) -> str:
    """A fault pattern for one page of the issue listing (not of a comment listing)."""
    return rf"/issues\?.*\bpage={page}\b" if page > 1 else r"/issues\?(?!.*\bpage=)"


@dataclass
class Fault:
    match: str                 # a regular expression searched in "path?query"
    status: int
    times: int                 # how many matching requests fail (then it is spent)
    headers: dict = field(default_factory=dict)
    message: str = "Server Error"
    reset_in: float | None = None   # X-RateLimit-Remaining: 0 and Reset = now + reset_in
    body: bytes | None = None       # a raw body instead of the error object (truncated JSON, ...)


class FakeGitHub:
    def __init__(self, repo: str = "sgl-project/sglang", token: str = TOKEN):
        self.repo = repo
        self.token = token
        self.issues: dict[int, dict] = {}
        self.comments: dict[int, list[dict]] = {}
        self.releases: list[dict] = []
        self.gone: dict[int, int] = {}          # number -> 404 / 410 (deleted) or 301 (transferred)
        self.faults: list[Fault] = []
        self.requests: list[str] = []           # "path?query" of every request, in order
        self.remaining = 5000
        self._clock = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
        self._next_comment = 9_000_000
        self._lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    # ---- data ------------------------------------------------------------------------------
    def tick(self) -> str:
        """A new, later timestamp (each change moves the issue's updated_at forward)."""
        self._clock += timedelta(minutes=7)
        return self._clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    def add_issue(self, number: int, title: str, body: str = "", *, state: str = "open",
                  state_reason: str | None = None, labels=(), author: str = "reporter",
                  comments=(), pull_request: bool = False) -> dict:
        """comments: (login, author_association, body) or (login, association, body, 'Bot')."""
        created = self.tick()
        issue = rest_issue(number, title, body, repo=self.repo, state=state, state_reason=state_reason,
                           labels=list(labels), author=author, created=created, updated=created,
                           closed=created if state == "closed" else None, pull_request=pull_request)
        self.issues[number] = issue
        self.comments[number] = []
        for c in comments:
            self.add_comment(number, *c)
        return issue

    def add_pull_request(self, number: int, title: str, body: str = "", *, merged_at: str | None = None,
                         author: str = "contributor") -> dict:
        """A pull request as the issue listing shows it; merged_at set means it was merged."""
        pr = self.add_issue(number, title, body, state="closed" if merged_at else "open", author=author,
                            pull_request=True)
        pr["pull_request"]["merged_at"] = merged_at
        if merged_at:
            pr["closed_at"] = merged_at
        return pr

    def add_release(self, tag: str, body: str = "", *, published_at: str | None = None, name: str | None = None,
                    draft: bool = False, prerelease: bool = False) -> dict:
        """A release as `GET /repos/{owner}/{repo}/releases` returns it (published now unless given)."""
        published = published_at or self.tick()
        release = {"url": f"https://api.github.com/repos/{self.repo}/releases/{len(self.releases) + 1}",
                   "html_url": f"https://github.com/{self.repo}/releases/tag/{tag}", "id": 7_000_000 + len(self.releases),
                   "tag_name": tag, "name": name or f"Release {tag}", "draft": draft, "prerelease": prerelease,
                   "created_at": published, "published_at": None if draft else published, "body": body,
                   "author": {"login": "release-bot", "type": "User"}, "assets": []}
        self.releases.append(release)
        return release

    def release_requests(self) -> list[str]:
        return [r for r in self.requests if urlsplit(r).path == f"/repos/{self.repo}/releases"]

    def load_records(self, records) -> None:
        """Serve records of ingest.github_synth.generate as they are."""
        for r in records:
            self.issues[r["number"]] = r["issue"]
            self.comments[r["number"]] = r["comments"]
            latest = datetime.strptime(r["issue"]["updated_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
            self._clock = max(self._clock, latest)   # later changes must be newer than all of these

    def add_comment(self, number: int, login: str, association: str, body: str, kind: str = "User") -> None:
        self._next_comment += 1
        when = self.tick()
        self.comments[number].append(rest_comment(number, self._next_comment, body, login, repo=self.repo,
                                                  kind=kind, association=association, created=when))
        self.issues[number].update(comments=len(self.comments[number]), updated_at=when)

    def update_issue(self, number: int, **changes) -> None:
        when = self.tick()
        if changes.get("state") == "closed":
            changes.setdefault("closed_at", when)
        self.issues[number].update(changes, updated_at=when)

    def delete_issue(self, number: int, status: int = 404) -> None:
        self.issues.pop(number)
        self.gone[number] = status

    def transfer_issue(self, number: int) -> None:
        self.delete_issue(number, status=301)

    def fail(self, match: str, status: int, times: int = 1, headers: dict | None = None,
             message: str = "Server Error", reset_in: float | None = None, body: bytes | None = None) -> None:
        self.faults.append(Fault(match, status, times, dict(headers or {}), message, reset_in, body))

    def listing_pages(self) -> list[int]:
        """The page numbers of the issue listing requested so far."""
        return [int(parse_qs(urlsplit(r).query).get("page", ["1"])[0])
                for r in self.requests if urlsplit(r).path == f"/repos/{self.repo}/issues"]

    def comment_requests(self, start: int = 0) -> list[int]:
        """Issue numbers whose comments were requested (from request number `start` on)."""
        return [int(m.group(1)) for r in self.requests[start:]
                if (m := re.match(rf"/repos/{re.escape(self.repo)}/issues/(\d+)/comments", r))]

    # ---- server ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 - http.server's name
                fake._handle(self)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _send(self, h: BaseHTTPRequestHandler, status: int, payload, headers: dict | None = None) -> None:
        body = json.dumps(payload).encode()
        h.send_response(status)
        base = {"Content-Type": "application/json; charset=utf-8", "Content-Length": str(len(body)),
                "Date": email.utils.formatdate(usegmt=True), "X-GitHub-Api-Version-Selected": "2022-11-28",
                "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": str(self.remaining),
                "X-RateLimit-Reset": str(int(time.time()) + 3600), "X-RateLimit-Used": str(5000 - self.remaining),
                "X-RateLimit-Resource": "core"}
        for k, v in (base | (headers or {})).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        with self._lock:
            self.requests.append(h.path)
            self.remaining = max(0, self.remaining - 1)
            fault = next((f for f in self.faults if f.times > 0 and re.search(f.match, h.path)), None)
            if fault:
                fault.times -= 1
        auth = h.headers.get("Authorization", "")
        if auth not in (f"Bearer {self.token}", f"token {self.token}"):
            return self._send(h, 401, {"message": "Bad credentials" if auth else "Requires authentication",
                                       "documentation_url": "https://docs.github.com/rest", "status": "401"})
        if fault and fault.body is not None:
            h.send_response(fault.status)
            for k, v in {"Content-Type": "application/json", "Content-Length": str(len(fault.body))}.items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(fault.body)
            return None
        if fault:
            headers = dict(fault.headers)
            if fault.reset_in is not None:
                headers |= {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time() + fault.reset_in))}
            message = fault.message
            if fault.status in (403, 429) and message == "Server Error":
                message = "API rate limit exceeded for user ID 1."
            return self._send(h, fault.status, {"message": message,
                                                "documentation_url": "https://docs.github.com/rest"}, headers)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        base = f"/repos/{self.repo}/issues"
        if parts.path == base:
            return self._listing(h, query)
        if parts.path == f"/repos/{self.repo}/releases":   # newest first, as GitHub lists them
            newest_first = sorted(self.releases, key=lambda r: (r["created_at"], r["id"]), reverse=True)
            return self._paginate(h, parts.path, query, newest_first)
        m = re.fullmatch(re.escape(base) + r"/(\d+)(/comments)?", parts.path)
        if not m:
            return self._send(h, 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        number = int(m.group(1))
        if number in self.gone:
            status = self.gone[number]
            if status == 301:
                moved = f"{self.url}/repositories/999/issues/{number}"
                return self._send(h, 301, {"message": "Moved Permanently", "url": moved}, {"Location": moved})
            return self._send(h, status, {"message": "Not Found" if status == 404 else "This issue was deleted"})
        if number not in self.issues:
            return self._send(h, 404, {"message": "Not Found"})
        if not m.group(2):
            return self._send(h, 200, self.issues[number])
        self._paginate(h, parts.path, query, self.comments.get(number, []))

    def _listing(self, h, query: dict) -> None:
        items = list(self.issues.values())
        if query.get("state", "open") != "all":
            items = [i for i in items if i["state"] == query.get("state", "open")]
        if query.get("since"):
            items = [i for i in items if i["updated_at"] >= query["since"]]
        key = "updated_at" if query.get("sort") == "updated" else "created_at"
        items.sort(key=lambda i: (i[key], i["number"]), reverse=query.get("direction", "desc") == "desc")
        self._paginate(h, f"/repos/{self.repo}/issues", query, items)

    def _paginate(self, h, path: str, query: dict, items: list) -> None:
        per_page = max(1, min(100, int(query.get("per_page", 30))))
        page = max(1, int(query.get("page", 1)))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]

        def link(p: int) -> str:
            return f"<{self.url}{path}?{urlencode(query | {'page': p})}>"
        rels = []
        if page < last:
            rels += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        if page > 1:
            rels += [f'{link(1)}; rel="first"', f'{link(page - 1)}; rel="prev"']
        self._send(h, 200, chunk, {"Link": ", ".join(rels)} if rels else None)
