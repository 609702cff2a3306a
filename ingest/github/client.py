"""The GitHub REST client: GET with pagination, retries of transient errors, and rate limits
honoured (a primary limit is waited out up to a maximum, then the sync stops to be resumed).
A 200 whose body is not the JSON the API sends (truncated, or a list of non-objects, as a proxy
or a cut connection can leave it) stops the sync resumably, naming GitHub and the URL."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from assistant.redact import redact
from ingest.github.errors import GitHubError, Interrupted, RateLimited

DEFAULT_API_URL = "https://api.github.com"
PER_PAGE = 100                    # the REST API's maximum page size
RETRIES = 4                       # per request, for 5xx answers and network errors
BACKOFF_SECONDS = 1.0             # doubled after each failed try
MAX_RATE_WAIT = 3600.0            # the hourly limit always resets within this; past it, stop and resume later
SECONDARY_LIMIT_WAIT = 60.0       # GitHub's advice when a 403/429 names no reset time


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
                if status == 200:
                    _check_json(response, url)
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


def _check_json(response, url: str) -> None:
    """The body of a 200 parses as JSON and a listing holds objects; else Interrupted (the next
    run asks again), so a bad answer is never half-read into the cache."""
    problem = None
    try:
        data = json.loads(response.content)
    except (ValueError, UnicodeDecodeError) as exc:
        problem = f"truncated or invalid JSON: {' '.join(str(exc).split())[:80]}"
    else:
        if isinstance(data, list) and not all(isinstance(item, dict) for item in data):
            problem = "a list that holds non-objects"
    if problem:
        raise Interrupted(f"GitHub sent an unreadable answer for {_path(url)} ({problem})")


def _message(response) -> str:
    try:
        data = response.json()
    except ValueError:
        return ""
    return redact(str(data.get("message", ""))[:200]) if isinstance(data, dict) else ""


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")
