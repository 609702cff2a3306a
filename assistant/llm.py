"""SGLangClient: the connection to a local SGLang server's OpenAI-compatible API.

    client = SGLangClient.from_settings(settings)      # base URL, model, API key, timeout
    if client.available():                             # GET /health, short timeout, cached
        content, reasoning = client.chat(messages, schema=ANSWER_SCHEMA, on_token=print)

What it takes care of, so callers do not:
- the model name comes from /v1/models unless one is configured;
- structured output: `response_format` json_schema first (SGLang enforces it by constrained
  decoding); a server that refuses it (a 4xx, or llama-cpp-python's HTTP 500 validation error
  naming response_format) gets json_object with the schema (what llama.cpp's server accepts),
  then no response_format (the prompt asks for JSON). What worked is remembered;
- reasoning models: `<think>...</think>` is cut out of the content and `reasoning_content`
  (SGLang's --reasoning-parser) is kept apart; only answer text reaches `on_token`;
- explicit timeouts: connect, per read, and `timeout` as a deadline for the whole chat() call
  (format fallbacks and retries included), kept by a watchdog that cuts the connection whatever
  the server sends: SSE keep-alive comments or empty chunks reset a read timeout, not the deadline;
- one retry of a failed connection or a 5xx, never of a request that timed out;
- every failure becomes `EndpointError` with a one-line message for the user, secrets scrubbed
  (`assistant.redact`): an error page may repeat the request's Authorization header.

`openai` is imported inside the functions that need it: `ask --no-llm` never pays for it.
"""

from __future__ import annotations

import dataclasses
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from assistant.errors import EndpointError
from assistant.redact import redact

DEFAULT_ENDPOINT = "http://127.0.0.1:30000/v1"
HEALTH_TIMEOUT = 2.0         # seconds; a healthy server answers /health at once, even when busy
HEALTH_CACHE_SECONDS = 30.0  # a long-running UI re-probes a server that went away or came back
CONNECT_TIMEOUT = 3.0
MAX_RETRIES = 1
RETRY_BACKOFF = 0.5
MAX_TOKENS = 1024
TEMPERATURE = 0.1            # near-greedy: the answer should follow the sources, not vary
# The order structured output is tried in (see the module docstring).
RESPONSE_FORMATS = ("json_schema", "json_object", "prompt")
CONTEXT_TOO_LONG_RE = re.compile(r"context length|context window|maximum context|too long|"
                                 r"exceeds? the|longer than|n_ctx|max_model_len|prompt is too", re.I)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass
class ChatStats:
    """What the last chat() call took; the eval harness and `ask` report it."""

    model: str
    response_format: str
    first_token_s: float | None    # until the first streamed token (reasoning or answer)
    total_s: float
    prompt_tokens: int | None      # as the server counted them, when it says
    completion_tokens: int | None
    finish_reason: str | None


class _Deadline:
    """The end of one chat() call. `watch(response)` arms a timer that shuts the response's socket
    down at the deadline, which ends a read blocked on a server that only sends keep-alives."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.expired = False
        self._timers: list[threading.Timer] = []

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return self.expired or self.remaining() <= 0

    def watch(self, response) -> None:
        timer = threading.Timer(max(0.0, self.remaining()), self._cut, (response,))
        timer.daemon = True
        timer.start()
        self._timers.append(timer)

    def cancel(self) -> None:
        for timer in self._timers:
            timer.cancel()

    def _cut(self, response) -> None:
        self.expired = True
        stream = getattr(response, "extensions", {}).get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)   # wakes the reader at once; close() would not
            else:
                response.close()
        except OSError:
            pass


class _FormatRejected(Exception):
    """The server refused a response_format (a 4xx before any token): try the next one."""


class ThinkSplitter:
    """Routes streamed text inside <think>...</think> away from the answer, across chunk
    boundaries (a tag can arrive split over two chunks)."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self.inside = False
        self.pending = ""

    def feed(self, text: str) -> tuple[str, str]:
        """-> (answer text, reasoning text) that can be released now."""
        buf, answer, thought = self.pending + text, [], []
        self.pending = ""
        while buf:
            tag = self.CLOSE if self.inside else self.OPEN
            at = buf.find(tag)
            if at >= 0:
                (thought if self.inside else answer).append(buf[:at])
                buf = buf[at + len(tag):]
                self.inside = not self.inside
                continue
            keep = _partial_suffix(buf, tag)   # "...<thi" might be the start of a tag
            (thought if self.inside else answer).append(buf[:len(buf) - keep])
            self.pending = buf[len(buf) - keep:]
            break
        return "".join(answer), "".join(thought)


def _partial_suffix(text: str, tag: str) -> int:
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


def split_reasoning(content: str) -> tuple[str, str]:
    """(answer, reasoning) of a whole reply. Handles `<think>..</think>` and a reply whose
    opening tag was in the prompt (Qwen3's template), i.e. that has only `</think>`."""
    thoughts = re.findall(r"<think>(.*?)(?:</think>|\Z)", content, flags=re.S)
    answer = re.sub(r"<think>.*?(?:</think>|\Z)", "", content, flags=re.S)
    if "</think>" in answer:
        before, _, answer = answer.rpartition("</think>")
        thoughts.insert(0, before)
    return answer.strip(), "\n".join(t.strip() for t in thoughts if t.strip())


def response_format_for(kind: str, schema: dict, name: str = "answer") -> dict | None:
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if kind == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


class SGLangClient:
    def __init__(self, endpoint: str = DEFAULT_ENDPOINT, model: str | None = None,
                 api_key: str | None = None, timeout: float = 60.0, max_retries: int = MAX_RETRIES,
                 max_tokens: int = MAX_TOKENS, health_timeout: float = HEALTH_TIMEOUT):
        self.base_url = endpoint.rstrip("/")
        self.configured_model = model
        self.api_key = api_key
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.health_timeout = health_timeout
        self.response_format: str | None = None   # what worked, once known
        self.unavailable_reason: str | None = None
        self.last_stats: ChatStats | None = None
        self._health: tuple[bool, float] | None = None
        self._model: str | None = model
        self._openai = None

    @classmethod
    def from_settings(cls, settings) -> SGLangClient:
        return cls(endpoint=settings.endpoint or DEFAULT_ENDPOINT, model=settings.model,
                   api_key=settings.api_key, timeout=settings.timeout)

    def __repr__(self) -> str:
        return f"SGLangClient({self.base_url!r}, model={self._model!r})"

    @property
    def last_usage(self) -> dict:
        """The last call's figures as a dict (the benchmark reports them)."""
        return dataclasses.asdict(self.last_stats) if self.last_stats else {}

    # ---- health --------------------------------------------------------------------------------

    @property
    def server_root(self) -> str:
        """http://host:port of the API (SGLang serves /health next to /v1)."""
        parts = urllib.parse.urlsplit(self.base_url)
        path = re.sub(r"/v1$", "", parts.path.rstrip("/"))
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))

    def available(self) -> bool:
        """Is a server answering? GET /health (SGLang: 200, empty body) with a short timeout;
        a server without /health is asked for /v1/models instead. Cached for a while."""
        now = time.monotonic()
        if self._health is not None and now - self._health[1] < HEALTH_CACHE_SECONDS:
            return self._health[0]
        ok, reason = self._probe()
        self._health = (ok, now)
        self.unavailable_reason = reason
        return ok

    def ensure_available(self) -> None:
        if not self.available():
            raise EndpointError(self.unavailable_reason or f"no LLM endpoint at {self.base_url}")

    def _probe(self) -> tuple[bool, str | None]:
        status = self._get_status(self.server_root + "/health")
        if status == 404:   # an OpenAI-compatible server without /health
            status = self._get_status(self.base_url + "/models")
        if status == 200:
            return True, None
        if status is None:
            return False, (f"no LLM server answering at {self.base_url}: start one (python -m "
                           "sglang.launch_server --model-path ... --port 30000) or pass --endpoint")
        if status in (401, 403):
            return False, (f"the LLM server at {self.base_url} refused the API key: pass its "
                           "--api-key with --api-key or ASK_API_KEY")
        return False, (f"the LLM server at {self.base_url} is not ready (HTTP {status} from "
                       "/health): wait for it to finish loading or check its log")

    def _get_status(self, url: str) -> int | None:
        request = urllib.request.Request(url, headers=self._auth_headers())
        try:
            with self._opener().open(request, timeout=self.health_timeout) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def _opener(self) -> urllib.request.OpenerDirector:
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        if host in LOOPBACK_HOSTS:   # a proxy from the environment must not see local traffic
            return urllib.request.build_opener(urllib.request.ProxyHandler({}))
        return urllib.request.build_opener()

    def _auth_headers(self) -> dict:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    # ---- the openai client and the model --------------------------------------------------------

    def _client(self):
        if self._openai is None:
            import openai

            self._openai = openai.OpenAI(
                base_url=self.base_url, api_key=self.api_key or "EMPTY", max_retries=0,
                timeout=openai.Timeout(self.timeout, connect=min(CONNECT_TIMEOUT, self.timeout)))
        return self._openai

    @property
    def model(self) -> str:
        """The configured model, or the first one the server lists at /v1/models."""
        if self._model is None:
            try:
                listed = [m.id for m in self._client().models.list()]
            except Exception as exc:  # noqa: BLE001 - any failure is the endpoint's
                raise self._endpoint_error(exc) from exc
            if not listed:
                raise EndpointError(f"the LLM server at {self.base_url} lists no model at /models: "
                                    "pass --model NAME")
            self._model = listed[0]
        return self._model

    # ---- chat ----------------------------------------------------------------------------------

    def chat(self, messages: list[dict], schema: dict | None = None,
             on_token: Callable[[str], None] | None = None,
             max_tokens: int | None = None) -> tuple[str, str]:
        """Stream one chat completion; -> (answer content, reasoning). `on_token` receives the
        answer text as it arrives (never the reasoning). The whole call ends by `timeout`
        seconds. Raises EndpointError, its message scrubbed of secrets."""
        deadline = _Deadline(self.timeout)
        try:
            return self._chat(messages, schema, on_token, max_tokens, deadline)
        except EndpointError as exc:
            raise EndpointError(self.scrub(str(exc))) from exc
        finally:
            deadline.cancel()

    def scrub(self, text: str) -> str:
        """`text` without the API key or any other secret (server text can repeat them)."""
        return redact(text, secrets=[self.api_key])

    def _chat(self, messages, schema, on_token, max_tokens, deadline: _Deadline) -> tuple[str, str]:
        if schema is None:
            return self._chat_with_retries(messages, "prompt", None, on_token, max_tokens, deadline)
        start = RESPONSE_FORMATS.index(self.response_format) if self.response_format else 0
        rejected = []
        for kind in RESPONSE_FORMATS[start:]:
            try:
                result = self._chat_with_retries(messages, kind, schema, on_token, max_tokens, deadline)
            except _FormatRejected as exc:
                rejected.append(f"{kind}: {exc}")
                continue
            self.response_format = kind
            return result
        raise EndpointError(f"the LLM server at {self.base_url} refused the request "
                            f"({rejected[-1][:160]})")

    def _chat_with_retries(self, messages, kind, schema, on_token, max_tokens,
                           deadline: _Deadline) -> tuple[str, str]:
        import openai

        retryable = (openai.InternalServerError, openai.RateLimitError, openai.APIConnectionError)
        streamed = []

        def forward(text: str) -> None:
            streamed.append(text)
            if on_token:
                on_token(text)

        for attempt in range(self.max_retries + 1):
            try:
                return self._stream(messages, kind, schema, forward, max_tokens, deadline)
            except _FormatRejected:
                raise
            except EndpointError:
                raise
            except openai.APITimeoutError as exc:   # a slow model stays slow: do not retry
                raise self._endpoint_error(exc) from exc
            except retryable as exc:
                if deadline.passed():
                    raise self._deadline_error(streamed) from exc
                if streamed or attempt >= self.max_retries:
                    raise self._endpoint_error(exc) from exc
                self._health = None
                time.sleep(RETRY_BACKOFF * (attempt + 1))
            except Exception as exc:  # noqa: BLE001 - garbage, protocol errors: the endpoint's fault
                if deadline.passed():
                    raise self._deadline_error(streamed) from exc
                raise self._endpoint_error(exc) from exc
        raise EndpointError(f"the LLM server at {self.base_url} failed")  # not reached

    def _stream(self, messages, kind, schema, forward, max_tokens, deadline: _Deadline) -> tuple[str, str]:
        import openai

        started = time.monotonic()
        if deadline.passed():
            raise self._deadline_error([])
        body = {"stream_options": {"include_usage": True}}
        fmt = response_format_for(kind, schema) if schema else None
        if fmt:
            body["response_format"] = fmt
        model = self.model
        left = max(0.05, deadline.remaining())
        try:
            stream = self._client().chat.completions.create(
                model=model, messages=messages, stream=True, temperature=TEMPERATURE,
                max_tokens=max_tokens or self.max_tokens, extra_body=body,
                timeout=openai.Timeout(left, connect=min(CONNECT_TIMEOUT, left)))
        except openai.APIStatusError as exc:
            if fmt and _rejects_format(exc):
                raise _FormatRejected(_error_message(exc)) from exc
            raise
        deadline.watch(stream.response)
        splitter = ThinkSplitter()
        answer, reasoning = [], []
        first_token = finish = usage = None
        with stream:
            for chunk in stream:
                if getattr(chunk, "usage", None):
                    usage = chunk.usage
                for choice in chunk.choices or []:
                    delta = choice.delta
                    thought = getattr(delta, "reasoning_content", None) or ""
                    text, in_think = splitter.feed(delta.content or "") if delta.content else ("", "")
                    if (thought or text or in_think) and first_token is None:
                        first_token = time.monotonic() - started
                    reasoning += [thought, in_think]
                    if text:
                        answer.append(text)
                        forward(text)
                    finish = choice.finish_reason or finish
                if deadline.passed():
                    raise self._deadline_error(answer)
        if deadline.expired:   # the watchdog ended the stream: what arrived is cut short
            raise self._deadline_error(answer)
        content, inline_thought = split_reasoning("".join(answer) + splitter.pending)
        self.last_stats = ChatStats(
            model=model, response_format=kind, first_token_s=first_token,
            total_s=time.monotonic() - started,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None), finish_reason=finish)
        thoughts = "".join(reasoning).strip()
        if inline_thought:
            thoughts = (thoughts + "\n" + inline_thought).strip()
        if not content and finish == "length":
            raise EndpointError(f"the model at {self.base_url} used all {max_tokens or self.max_tokens} "
                                "tokens before answering: raise its limit or use a non-reasoning model")
        return content, thoughts

    # ---- errors --------------------------------------------------------------------------------

    def _deadline_error(self, written: list[str]) -> EndpointError:
        if any(written):
            return EndpointError(f"the model at {self.base_url} was still writing after "
                                 f"{self.timeout:g}s: raise --timeout or use a faster model")
        return EndpointError(f"the LLM server at {self.base_url} sent no answer within "
                             f"{self.timeout:g}s: raise --timeout or check the server's log")

    def _endpoint_error(self, exc: Exception) -> EndpointError:
        """One line for the user: what happened and what to do."""
        import openai

        where = self.base_url
        if isinstance(exc, EndpointError):
            return exc
        if isinstance(exc, openai.APITimeoutError):
            return EndpointError(f"the LLM server at {where} did not answer within "
                                 f"{self.timeout:.0f}s: raise --timeout or check the server")
        if isinstance(exc, openai.APIConnectionError):
            self._health = None
            return EndpointError(f"lost the connection to the LLM server at {where}: is it still running?")
        if isinstance(exc, openai.APIStatusError):
            message = _error_message(exc)
            if exc.status_code in (401, 403):
                return EndpointError(f"the LLM server at {where} refused the API key: pass its "
                                     "--api-key with --api-key or ASK_API_KEY")
            if _context_too_long(exc):
                return EndpointError("the prompt is longer than the model's context window: start "
                                     "the server with a larger --context-length")
            if exc.status_code == 404:
                return EndpointError(f"the LLM server at {where} answered 404 ({message[:100]}): "
                                     "check --endpoint and --model")
            return EndpointError(f"the LLM server at {where} failed with HTTP {exc.status_code} "
                                 f"({message[:100]}): check its log")
        if isinstance(exc, openai.APIError):   # an error event inside the stream
            return EndpointError(f"the LLM server at {where} reported an error while answering "
                                 f"({_one_line(str(exc.message))[:100]}): check its log")
        return EndpointError(f"the LLM server at {where} sent a malformed response "
                             f"({type(exc).__name__}): is --endpoint an OpenAI-compatible API?")


def _error_message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message") or body.get("detail") or body.get("error") or body
        if isinstance(message, dict):
            message = message.get("message") or json.dumps(message)
        return _one_line(str(message))
    return _one_line(str(getattr(exc, "message", exc)))


def _rejects_format(exc) -> bool:
    """A refusal of the response_format: a 4xx (SGLang, vLLM), or a validation error that names
    it, which llama-cpp-python's server returns as HTTP 500."""
    if _context_too_long(exc):
        return False
    if exc.status_code in (400, 415, 422, 501):
        return True
    return bool(re.search(r"response_format|json_schema", _error_message(exc)))


def _context_too_long(exc) -> bool:
    return getattr(exc, "status_code", None) in (400, 413, 422) and bool(
        CONTEXT_TOO_LONG_RE.search(_error_message(exc)))


def _one_line(text: str) -> str:
    return " ".join(text.split())
