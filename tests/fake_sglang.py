"""A loopback HTTP server that speaks SGLang's OpenAI-compatible wire protocol, for tests.

It is a real server on 127.0.0.1 (a free port), so the client under test goes through the
`openai` package, HTTP, SSE parsing, timeouts and retries exactly as against SGLang:

    GET  /health                 200 with an empty body (503 while `healthy` is False)
    GET  /v1/models              {"object": "list", "data": [{"id": MODEL, ...}]}
    POST /v1/chat/completions    JSON, or SSE chunks ("data: {...}" ... "data: [DONE]") when
                                 "stream": true; response_format json_schema / json_object
                                 accepted or refused (HTTP 400, as a server without them does)

Behaviour is set per test through attributes (`reply`, `reasoning`, `think_in_content`,
`accepts`, `fail`, `delay`, `api_key`, ...) and every request is recorded in `requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "Qwen/Qwen3-8B"
ALL_FORMATS = frozenset({"json_schema", "json_object", "text", None})


class FakeSGLang:
    """Start with `with FakeSGLang() as fake:`; `fake.url` is the /v1 base URL."""

    def __init__(self, reply: str | Callable[[dict], str] = '{"diagnosis": "ok", "fix": [], '
                 '"warnings": [], "citations": []}', model: str = MODEL):
        self.model = model
        self.reply = reply                  # the content, or a function of the request body
        self.reasoning: str | None = None   # sent as delta.reasoning_content (a reasoning parser)
        self.think_in_content = False       # put `reasoning` inside <think>...</think> instead
        self.accepts = set(ALL_FORMATS)     # response_format types accepted; others get HTTP 400
        self.fail: str | None = None        # "500" | "context" | "garbage" | "hang" | "hang_mid_stream"
        #                                     | "stream_error" | "models_empty" | "keepalive" (only SSE
        #                                     comments, forever) | "empty_chunks" (chunks with no text,
        #                                     forever) | "echo_auth" (a 500 whose text repeats the
        #                                     request's Authorization header, as some proxies do)
        self.fail_times: int | None = None  # fail only this many chat requests, then answer
        self.delay = 0.0                    # seconds between streamed chunks
        self.first_token_delay = 0.0        # seconds before the first chunk
        self.chunk_chars = 4                # characters of content per SSE chunk
        self.healthy = True
        self.has_health = True              # False: /health is 404 (some OpenAI-compatible servers)
        self.api_key: str | None = None
        self.requests: list[dict] = []      # {"path", "body", "headers"} of every request
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeSGLang:
        fake = self

        class Handler(_Handler):
            server_state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeSGLang:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def content_for(self, body: dict) -> str:
        return self.reply(body) if callable(self.reply) else self.reply

    def wait_stopped(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early when the server stops (a hang that ends)."""
        return self._stop.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    server_state: FakeSGLang
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    # ---- helpers -----------------------------------------------------------------------------

    def _send_json(self, status: int, payload, raw: bytes | None = None) -> None:
        body = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        # SGLang's error body (serving_base.create_error_response)
        self._send_json(status, {"object": "error", "message": message, "type": kind,
                                 "param": None, "code": status})

    def _authorized(self) -> bool:
        key = self.server_state.api_key
        if key and self.headers.get("Authorization") != f"Bearer {key}":
            self._send_json(401, {"error": "Unauthorized"})
            return False
        return True

    def _record(self, body=None) -> None:
        self.server_state.requests.append({"path": self.path, "body": body,
                                           "headers": dict(self.headers.items())})

    # ---- routes ------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        state = self.server_state
        self._record()
        if self.path == "/health":
            if not state.has_health:
                return self._send_json(404, {"detail": "Not Found"})
            if not state.healthy:
                return self._send_json(503, None, raw=b"")
            return self._send_json(200, None, raw=b"")
        if self.path == "/v1/models":
            if not self._authorized():
                return None
            data = [] if state.fail == "models_empty" else [
                {"id": state.model, "object": "model", "created": int(time.time()),
                 "owned_by": "sglang", "root": state.model, "max_model_len": 32768}]
            return self._send_json(200, {"object": "list", "data": data})
        return self._send_json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        state = self.server_state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            return self._error(400, "invalid JSON body")
        self._record(body)
        if not self.path.endswith("/chat/completions"):
            return self._send_json(404, {"detail": "Not Found"})
        if not self._authorized():
            return None
        fmt = (body.get("response_format") or {}).get("type")
        if fmt not in state.accepts:
            return self._error(400, f"response_format type {fmt!r} is not supported")
        if body.get("model") != state.model:
            return self._error(404, f"The model `{body.get('model')}` does not exist.", "NotFoundError")
        failing = state.fail and (state.fail_times is None or state.fail_times > 0)
        if failing and state.fail_times is not None:
            state.fail_times -= 1
        fail = state.fail if failing else None
        if fail == "500":
            return self._error(500, "Internal server error: scheduler died", "InternalServerError")
        if fail == "echo_auth":
            return self._error(500, "upstream failed for request with headers: Authorization: "
                                    f"{self.headers.get('Authorization')}; retry later", "InternalServerError")
        if fail == "context":
            return self._error(400, "The input (9000 tokens) is longer than the model's context "
                                    "length (4096 tokens).")
        if fail == "garbage":
            ctype = "text/event-stream" if body.get("stream") else "application/json"
            payload = b"<html>502 Bad Gateway</html>" if not body.get("stream") else (
                b"data: {not json at all\n\ndata: [DONE]\n\n")
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return None
        if fail == "hang":
            state.wait_stopped(60)
            return None
        if body.get("stream"):
            return self._stream(body, fail)
        return self._complete(body)

    def _pieces(self, body: dict) -> tuple[str, str | None]:
        state = self.server_state
        content = state.content_for(body)
        reasoning = state.reasoning
        if reasoning and state.think_in_content:
            content, reasoning = f"<think>{reasoning}</think>\n{content}", None
        return content, reasoning

    def _usage(self, body: dict, content: str) -> dict:
        prompt = max(1, sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4)
        completion = max(1, len(content) // 4)
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}

    def _complete(self, body: dict) -> None:
        content, reasoning = self._pieces(body)
        self._send_json(200, {
            "id": "cmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": self.server_state.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content,
                                                 "reasoning_content": reasoning, "tool_calls": None},
                         "logprobs": None, "finish_reason": "stop", "matched_stop": None}],
            "usage": self._usage(body, content)})

    def _stream(self, body: dict, fail: str | None) -> None:
        state = self.server_state
        content, reasoning = self._pieces(body)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
            payload = {"id": "cmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                       "model": state.model,
                       "choices": [] if usage else [{"index": 0, "delta": delta, "logprobs": None,
                                                     "finish_reason": finish, "matched_stop": None}],
                       "usage": usage}
            return f"data: {json.dumps(payload)}\n\n".encode()

        try:
            if state.first_token_delay and state.wait_stopped(state.first_token_delay):
                return
            self.wfile.write(chunk({"role": "assistant", "content": ""}))
            if fail in ("keepalive", "empty_chunks"):   # alive, but never a word: until stopped
                beat = b": keep-alive\n\n" if fail == "keepalive" else chunk({"content": ""})
                while not state.wait_stopped(0.2):
                    self.wfile.write(beat)
                    self.wfile.flush()
                return
            step = max(1, state.chunk_chars)
            if reasoning:
                for i in range(0, len(reasoning), step):
                    self.wfile.write(chunk({"content": None, "reasoning_content": reasoning[i:i + step]}))
            for n, i in enumerate(range(0, len(content), step)):
                if fail == "hang_mid_stream" and n == 3:
                    self.wfile.flush()
                    state.wait_stopped(60)
                    return
                if fail == "stream_error" and n == 3:
                    err = {"error": {"message": "CUDA out of memory in decode", "code": 500}}
                    self.wfile.write(f"data: {json.dumps(err)}\n\n".encode())
                    return
                self.wfile.write(chunk({"content": content[i:i + step]}))
                self.wfile.flush()
                if state.delay and state.wait_stopped(state.delay):
                    return
            self.wfile.write(chunk({}, finish="stop"))
            if (body.get("stream_options") or {}).get("include_usage"):
                self.wfile.write(chunk({}, usage=self._usage(body, content)))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up: that is the test
            return
