"""A loopback stand-in for Slack's Web API and file server, for the Slack bot's tests.

It speaks the HTTP Slack's clients speak (form or JSON bodies, `Authorization: Bearer`, GET for
read methods), answers like Slack does (HTTP 200 with `{"ok": false, "error": ...}` for API
errors, 429 + `Retry-After` when rate limited, the sign-in page for an unauthorised download) and
checks messages against Slack's limits (50 blocks, 3000-character sections, 2000-character button
values, 40k characters of text). It records every call and download so tests can assert what a
user would see in the channel.

    fake = FakeSlack().start()
    client = WebClient(token=fake.bot_token, base_url=fake.api_url)
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_TEXT = 40_000
MAX_BUTTON_VALUE = 2000
SIGN_IN_PAGE = b"<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>"


@dataclass
class Call:
    method: str
    params: dict
    status: int                 # HTTP status the fake answered
    response: dict
    at: float = field(default_factory=time.monotonic)


def block_problems(blocks: list) -> list[str]:
    """Why Slack would refuse these blocks (invalid_blocks), empty when it would take them."""
    problems = []
    if len(blocks) > MAX_BLOCKS:
        problems.append(f"{len(blocks)} blocks, more than {MAX_BLOCKS}")
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "section":
            text = (block.get("text") or {}).get("text", "")
            if not text or len(text) > MAX_SECTION_TEXT:
                problems.append(f"block {i}: section text of {len(text)} characters")
        elif kind == "actions":
            for element in block.get("elements", []):
                if len(element.get("value", "")) > MAX_BUTTON_VALUE:
                    problems.append(f"block {i}: button value over {MAX_BUTTON_VALUE}")
                if not element.get("action_id"):
                    problems.append(f"block {i}: button without action_id")
        elif kind == "context":
            if not block.get("elements") or len(block["elements"]) > 10:
                problems.append(f"block {i}: context needs 1-10 elements")
        elif kind not in ("divider", "header", "rich_text"):
            problems.append(f"block {i}: unknown type {kind!r}")
    return problems


class FakeSlack:
    def __init__(self, bot_token: str = "xoxb-1111-2222-faketoken", bot_user_id: str = "UASKBOT",
                 bot_id: str = "BASKBOT", team_id: str = "T0FAKE", app_token: str = "xapp-1-A0ASK-3333-fake"):
        self.bot_token, self.bot_user_id, self.bot_id, self.team_id = bot_token, bot_user_id, bot_id, team_id
        self.app_token = app_token
        self.socket_url: str | None = None              # apps.connections.open hands this out
        self.calls: list[Call] = []
        self.downloads: list[dict] = []
        self.messages: dict[str, list[dict]] = {}     # channel -> messages, oldest first
        self.files: dict[str, tuple[dict, bytes]] = {}
        self._rate_limits: dict[str, int] = {}          # method -> Retry-After seconds, answered once
        self._ts = itertools.count(1)
        self._file_ids = itertools.count(1)
        self._cond = threading.Condition()
        self._server: ThreadingHTTPServer | None = None

    # ---- lifecycle ----------------------------------------------------------------------------

    def start(self) -> FakeSlack:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                fake._handle(self, "GET")

            def do_POST(self):
                fake._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    # ---- test set-up --------------------------------------------------------------------------

    def new_ts(self) -> str:
        n = next(self._ts)
        return f"{1_700_000_000 + n}.{n:06d}"

    def add_message(self, channel: str, text: str, user: str = "UALICE", thread_ts: str | None = None,
                    files: list[dict] | None = None, bot: bool = False, blocks: list | None = None) -> dict:
        """A message already in the channel (what conversations.replies will serve)."""
        message = {"type": "message", "ts": self.new_ts(), "text": text,
                   "user": self.bot_user_id if bot else user}
        if bot:
            message["bot_id"] = self.bot_id
        if thread_ts:
            message["thread_ts"] = thread_ts
        if files:
            message["files"] = files
        if blocks:
            message["blocks"] = blocks
        with self._cond:
            self.messages.setdefault(channel, []).append(message)
        return message

    def add_file(self, name: str, content: bytes, mimetype: str = "text/plain", filetype: str = "text",
                 size: int | None = None) -> dict:
        """A file as Slack describes it in events and files.info."""
        file_id = f"F{next(self._file_ids):08d}"
        meta = {"id": file_id, "name": name, "title": name, "mimetype": mimetype, "filetype": filetype,
                "size": len(content) if size is None else size, "mode": "hosted", "is_external": False,
                "url_private": f"{self.url}/files-pri/{self.team_id}-{file_id}/{name}",
                "url_private_download": f"{self.url}/files-pri/{self.team_id}-{file_id}/download/{name}"}
        self.files[file_id] = (meta, content)
        return dict(meta)

    def rate_limit_once(self, method: str, retry_after: int = 1) -> None:
        """The next call to `method` gets HTTP 429 with Retry-After, as Slack's rate limiter does."""
        self._rate_limits[method] = retry_after

    # ---- what happened ------------------------------------------------------------------------

    def calls_to(self, method: str, ok_only: bool = True) -> list[Call]:
        with self._cond:
            return [c for c in self.calls if c.method == method and (not ok_only or c.response.get("ok"))]

    def wait_for(self, predicate, timeout: float = 30.0, what: str = "the expected Slack call"):
        """Wait (bounded) until predicate() returns something truthy; return it."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    methods = [(c.method, c.response.get("error")) for c in self.calls]
                    raise AssertionError(f"timed out after {timeout}s waiting for {what}; calls: {methods}")
                self._cond.wait(min(left, 0.2))

    def posted_text(self) -> str:
        """Everything the bot put in Slack, as one string (text and blocks)."""
        with self._cond:
            return "\n".join(json.dumps(c.params, ensure_ascii=False) for c in self.calls
                             if c.method in ("chat.postMessage", "chat.update"))

    # ---- the server ---------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, verb: str) -> None:
        parts = urllib.parse.urlsplit(handler.path)
        body = b""
        if verb == "POST":
            body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        auth = handler.headers.get("Authorization", "")
        if parts.path.startswith("/files-pri/"):
            self._serve_file(handler, parts.path, auth)
            return
        if not parts.path.startswith("/api/"):
            self._send(handler, 404, b"not found", "text/plain")
            return
        method = parts.path[len("/api/"):]
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()}
        if body:
            if handler.headers.get("Content-Type", "").startswith("application/json"):
                params.update(json.loads(body))
            else:
                params.update({k: v[-1] for k, v in urllib.parse.parse_qs(body.decode()).items()})
        for key in ("blocks", "attachments"):
            if isinstance(params.get(key), str):
                params[key] = json.loads(params[key])
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else params.pop("token", "")
        with self._cond:
            retry_after = self._rate_limits.pop(method, None)
            if retry_after is not None:
                status, response, headers = 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)}
            elif method == "apps.connections.open":  # the one method that takes the app-level token
                status, headers = 200, {}
                response = ({"ok": True, "url": self.socket_url} if token == self.app_token and self.socket_url
                            else {"ok": False, "error": "invalid_auth" if token != self.app_token else "not_allowed"})
            elif token != self.bot_token:
                status, response, headers = 200, {"ok": False, "error": "invalid_auth" if token else "not_authed"}, {}
            else:
                status, headers = 200, {}
                response = self._api(method, params)
            self.calls.append(Call(method, params, status, response))
            self._cond.notify_all()
        self._send(handler, status, json.dumps(response).encode(), "application/json; charset=utf-8", headers)

    def _api(self, method: str, p: dict) -> dict:
        if method == "auth.test":
            return {"ok": True, "url": "https://fake-workspace.slack.com/", "team": "Fake", "user": "ask",
                    "team_id": self.team_id, "user_id": self.bot_user_id, "bot_id": self.bot_id,
                    "is_enterprise_install": False}
        if method == "chat.postMessage":
            channel = p.get("channel")
            if not channel:
                return {"ok": False, "error": "channel_not_found"}
            problem = self._message_problem(p)
            if problem:
                return problem
            message = {"type": "message", "ts": self.new_ts(), "user": self.bot_user_id,
                       "bot_id": self.bot_id, "text": p.get("text", ""), "blocks": p.get("blocks") or []}
            if p.get("thread_ts"):
                message["thread_ts"] = p["thread_ts"]
            self.messages.setdefault(channel, []).append(message)
            return {"ok": True, "channel": channel, "ts": message["ts"], "message": message}
        if method == "chat.update":
            message = self._find(p.get("channel"), p.get("ts"))
            if message is None:
                return {"ok": False, "error": "message_not_found"}
            if message.get("user") != self.bot_user_id:
                return {"ok": False, "error": "cant_update_message"}
            problem = self._message_problem(p)
            if problem:
                return problem
            message.update(text=p.get("text", ""), blocks=p.get("blocks") or [])
            return {"ok": True, "channel": p["channel"], "ts": p["ts"], "text": message["text"]}
        if method == "conversations.replies":
            root = self._find(p.get("channel"), p.get("ts"))
            if root is None:
                return {"ok": False, "error": "thread_not_found"}
            thread = [root] + [m for m in self.messages[p["channel"]]
                               if m.get("thread_ts") == root["ts"] and m is not root]
            limit = int(p.get("limit") or 1000)
            return {"ok": True, "messages": thread[:limit], "has_more": len(thread) > limit}
        if method == "files.info":
            entry = self.files.get(p.get("file", ""))
            return {"ok": True, "file": dict(entry[0])} if entry else {"ok": False, "error": "file_not_found"}
        return {"ok": False, "error": "unknown_method"}

    def _message_problem(self, p: dict) -> dict | None:
        if not p.get("text") and not p.get("blocks"):
            return {"ok": False, "error": "no_text"}
        if len(p.get("text") or "") > MAX_TEXT:
            return {"ok": False, "error": "msg_too_long"}
        problems = block_problems(p.get("blocks") or [])
        if problems:
            return {"ok": False, "error": "invalid_blocks", "errors": problems}
        return None

    def _find(self, channel: str | None, ts: str | None) -> dict | None:
        return next((m for m in self.messages.get(channel or "", []) if m["ts"] == ts), None)

    def _serve_file(self, handler, path: str, auth: str) -> None:
        file_id = path.split("/")[2].split("-", 1)[-1]
        authorized = auth == f"Bearer {self.bot_token}"
        with self._cond:
            self.downloads.append({"path": path, "file_id": file_id, "authorized": authorized})
            self._cond.notify_all()
        entry = self.files.get(file_id)
        if not authorized:  # Slack serves its sign-in page, with 200, to a download it cannot authorise
            self._send(handler, 200, SIGN_IN_PAGE, "text/html; charset=utf-8")
        elif entry is None:
            self._send(handler, 404, b"file not found", "text/plain")
        else:
            self._send(handler, 200, entry[1], entry[0]["mimetype"])

    @staticmethod
    def _send(handler, status: int, body: bytes, content_type: str, headers: dict | None = None) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(body)


class FakeSocketMode:
    """Slack's Socket Mode WebSocket endpoint: says hello to the client, pushes envelopes (events,
    interactions) to it and records the acknowledgements it sends back."""

    def __init__(self):
        import asyncio

        self.acks: list[dict] = []
        self.connected = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._sockets: list = []
        self._runner = None
        self._cond = threading.Condition()
        self.port: int | None = None

    def start(self) -> FakeSocketMode:
        started = threading.Event()
        threading.Thread(target=self._run, args=(started,), daemon=True).start()
        if not started.wait(10):
            raise RuntimeError("the fake Socket Mode server did not start")
        return self

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/link/?ticket=fake-ticket&app_id=A0ASK"

    def _run(self, started: threading.Event) -> None:
        import asyncio

        from aiohttp import web

        async def serve():
            app = web.Application()
            app.router.add_get("/link/", self._socket)
            self._runner = web.AppRunner(app)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]
            started.set()

        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(serve())
        self._loop.run_forever()

    async def _socket(self, request):
        from aiohttp import WSMsgType, web

        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0ASK"},
                            "debug_info": {"host": "fake", "approximate_connection_time": 3600}})
        self.connected.set()
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                if "envelope_id" in data:
                    with self._cond:
                        self.acks.append(data)
                        self._cond.notify_all()
        return ws

    def push(self, envelope_type: str, payload: dict, envelope_id: str) -> None:
        """Deliver an envelope as Slack does (events_api, interactive, ...) on the open socket."""
        import asyncio

        envelope = {"envelope_id": envelope_id, "type": envelope_type, "payload": payload,
                    "accepts_response_payload": envelope_type != "events_api", "retry_attempt": 0,
                    "retry_reason": ""}
        asyncio.run_coroutine_threadsafe(self._sockets[-1].send_json(envelope), self._loop).result(5)

    def wait_for_ack(self, envelope_id: str, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [a for a in self.acks if a["envelope_id"] == envelope_id]
                if found:
                    return found[0]
                if time.monotonic() >= deadline:
                    raise AssertionError(f"no ack for envelope {envelope_id}")
                self._cond.wait(0.1)

    def stop(self) -> None:
        import asyncio

        async def close():
            for ws in self._sockets:
                await ws.close()
            if self._runner:
                await self._runner.cleanup()

        try:
            asyncio.run_coroutine_threadsafe(close(), self._loop).result(5)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
