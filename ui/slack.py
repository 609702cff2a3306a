"""`ask slack`: the Slack bot. Mention it with a trace (or DM it, or attach a log) and it answers
in the thread: a "Looking into it..." reply at once, edited into the answer when it is ready.

    SLACK_BOT_TOKEN=xoxb-... SLACK_APP_TOKEN=xapp-... ask slack          # Socket Mode
    SLACK_BOT_TOKEN=xoxb-... SLACK_SIGNING_SECRET=... ask slack --port 3000   # HTTP Events API

What it answers: a mention, a direct message, and a follow-up in a thread where it already
answered (the thread's first message + the follow-up are the query, earlier turns the history).
What it ignores: its own and other bots' messages, channel chatter without a mention, edits, and
Slack's retries of an event it already took. Answers run in Bolt's lazy listeners, so Slack's
3-second acknowledgement always holds; Web API calls that Slack rate-limits are retried after
`Retry-After`. The answer logic is the Assistant's; this module only moves text in and out.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from assistant.config import Settings
from assistant.errors import AssistantError, BinaryInput, UsageError
from assistant.redact import install_log_redaction
from ui.slack_format import (ACTION_HELPFUL, ACTION_NOT_HELPFUL, answer_messages, feedback_recorded,
                             feedback_value, notice, redact, redact_data, slack_to_plain)

log = logging.getLogger("ask.slack")

LOOKING = "Looking into it..."
LOOKING_WITH_LLM = "Looking into it (the knowledge base, then the local model: up to a minute)..."
MAX_FILE_BYTES = 20_000_000   # a bigger log is refused: ask for the part around the first error
FILES_PER_MESSAGE = 3
DOWNLOAD_TIMEOUT = 30.0
THREAD_MESSAGES = 200         # conversations.replies page size: root + the latest replies
HISTORY_TURNS = 8
HISTORY_CHARS = 4000
SEEN_SECONDS = 3600           # Slack retries an event for at most about an hour
REMEMBERED_ANSWERS = 1000     # answers kept for the feedback buttons (the buttons carry the ids too)
EMPTY_INPUT = ("Mention me with the error (paste the traceback or the log lines around it), "
               "or attach the server log as a file.")
HOW_TO_SHRINK = ("attach the part around the first error (`grep -n -m1 -E 'Traceback|Error' server.log` "
                 "and the 30 lines before it), or run `ask --log server.log` locally")


class SeenKeys:
    """Thread-safe "did I already take this?" with a time limit and a size bound."""

    def __init__(self, seconds: float = SEEN_SECONDS, max_items: int = 20_000):
        self.seconds, self.max_items = seconds, max_items
        self._seen: OrderedDict[object, float] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, key) -> bool:
        """True the first time `key` is seen (within the time limit), False after."""
        now = time.monotonic()
        with self._lock:
            while self._seen and (len(self._seen) > self.max_items
                                  or now - next(iter(self._seen.values())) > self.seconds):
                self._seen.popitem(last=False)
            if key in self._seen:
                return False
            self._seen[key] = now
            return True


def _ack(ack) -> None:
    ack()


class SlackBot:
    """The listeners and what they share: the assistant, the feedback store path, what was answered."""

    def __init__(self, assistant, settings: Settings):
        self.assistant = assistant
        self.settings = settings
        self.events = SeenKeys()
        self.messages = SeenKeys()
        self.answers: OrderedDict[str, dict] = OrderedDict()
        self._answers_lock = threading.Lock()
        # Retrieval and the LLM share 2 cores: answering one question at a time is as fast overall
        # and keeps the assistant's models out of concurrent use.
        self._answer_lock = threading.Lock()

    # ---- global middleware ----------------------------------------------------------------------

    def drop_retried_events(self, body, request, next):
        """Slack re-sends an event it thinks we missed (X-Slack-Retry-Num); answer each event once."""
        event_id = body.get("event_id") if isinstance(body, dict) else None
        if event_id and not self.events.claim(event_id):
            from slack_bolt import BoltResponse

            retry = (request.headers.get("x-slack-retry-num") or ["?"])[0]
            log.info("ignoring event %s: already taken (Slack retry %s)", event_id, retry)
            return BoltResponse(status=200, body="")
        return next()

    # ---- events ---------------------------------------------------------------------------------

    def on_mention(self, event, context, client):
        self.answer_message(client, context, event)

    def on_message(self, event, context, client):
        if event.get("subtype") not in (None, "file_share", "thread_broadcast") or event.get("bot_id"):
            return  # edits, joins, deletions and every bot's posts (ours included)
        if not event.get("user") or event.get("user") == context.bot_user_id:
            return
        thread_ts = event.get("thread_ts")
        in_thread = bool(thread_ts) and thread_ts != event.get("ts")
        if event.get("channel_type") == "im":
            if in_thread and not self._asks_something(event):
                return  # "thanks!" in a DM thread needs no answer
            self.answer_message(client, context, event)
            return
        # In channels only a follow-up in a thread the bot answered, without a mention (a mention
        # arrives as app_mention too and is answered there), and only when it asks something.
        if not in_thread or f"<@{context.bot_user_id}>" in (event.get("text") or ""):
            return
        if self._asks_something(event):
            self.answer_message(client, context, event, only_if_bot_in_thread=True)

    def _asks_something(self, event) -> bool:
        from assistant.trace import analyze_lines

        text = slack_to_plain(event.get("text") or "")
        return bool(event.get("files")) or "?" in text or bool(analyze_lines(text.splitlines()).errors)

    def answer_message(self, client, context, event, only_if_bot_in_thread: bool = False) -> None:
        channel, ts = event["channel"], event["ts"]
        thread_ts = event.get("thread_ts") or ts
        placeholder = None
        try:
            thread = None
            if thread_ts != ts:
                try:
                    thread = self._fetch_thread(client, channel, thread_ts)
                except Exception as exc:  # noqa: BLE001
                    if only_if_bot_in_thread:  # nobody asked the bot: no error message in their thread
                        log.warning("cannot read thread %s/%s: %s", channel, thread_ts, _one_line(exc))
                        return
                    raise
                if only_if_bot_in_thread and not any(self._is_bot(m, context) for m in thread):
                    return
            if not self.messages.claim((channel, ts)):
                return  # the same message seen through another event type
            placeholder = client.chat_postMessage(channel=channel, thread_ts=thread_ts,
                                                  **notice(self._looking(), ":mag:"))["ts"]
            lines, history = self._query(client, context, event, thread)
            self._post_answer(client, channel, thread_ts, placeholder, lines, history)
        except UsageError as exc:
            self._say(client, channel, thread_ts, placeholder, notice(str(exc), ":warning:"))
        except AssistantError as exc:
            self._say(client, channel, thread_ts, placeholder,
                      notice(f"Sorry, I could not answer: {exc}", ":x:"))
        except Exception as exc:  # noqa: BLE001 - the channel gets one line, the log the traceback
            log.exception("answering %s/%s failed", channel, ts)
            self._say(client, channel, thread_ts, placeholder, notice(
                f"Sorry, something went wrong while answering ({type(exc).__name__}); "
                "the details are in the bot's log.", ":x:"))

    def _looking(self) -> str:
        return LOOKING_WITH_LLM if getattr(self.assistant, "llm", None) is not None else LOOKING

    def _post_answer(self, client, channel, thread_ts, placeholder, lines, history) -> None:
        from assistant.trace import analyze_lines

        analysis = analyze_lines(lines)
        if analysis.total_lines == 0 or not any(analysis.masked_lines):
            raise UsageError(EMPTY_INPUT)
        with self._answer_lock:
            answer = self.assistant.answer(analysis, history=history)
        key = f"{channel}:{placeholder}"
        self._remember(key, {"question": redact("\n".join(lines))[:100_000],
                             "answer": redact_data(answer.to_json()),
                             "matched_ids": [m.id for m in answer.matches], "mode": answer.mode})
        first, *rest = answer_messages(answer, feedback_value(key, answer))
        client.chat_update(channel=channel, ts=placeholder, **first)
        for payload in rest:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, **payload)

    def _say(self, client, channel, thread_ts, placeholder, payload) -> None:
        try:
            if placeholder:
                client.chat_update(channel=channel, ts=placeholder, **payload)
            else:
                client.chat_postMessage(channel=channel, thread_ts=thread_ts, **payload)
        except Exception as exc:  # noqa: BLE001 - nothing more to tell the user through Slack
            log.warning("could not post to %s: %s", channel, exc)

    # ---- what the question is -------------------------------------------------------------------

    def _fetch_thread(self, client, channel, thread_ts) -> list[dict]:
        reply = client.conversations_replies(channel=channel, ts=thread_ts, limit=THREAD_MESSAGES)
        return list(reply.get("messages") or [])

    @staticmethod
    def _is_bot(message: dict, context) -> bool:
        return bool(message.get("bot_id") and message.get("bot_id") == context.bot_id) or \
            message.get("user") == context.bot_user_id

    def _query(self, client, context, event, thread) -> tuple[list[str], list[dict] | None]:
        """The lines to triage, and the earlier turns: in a thread, its first message (the
        original trace) plus this follow-up; what was said in between becomes the history."""
        current = self._message_lines(client, event)
        if not thread or thread[0].get("ts") == event["ts"]:
            return current, None
        root, *replies = thread
        root_lines = [] if self._is_bot(root, context) else self._message_lines(client, root)
        history = []
        for message in replies:
            if message.get("ts") == event["ts"]:
                break
            content = message_text(message)
            if content:
                history.append({"role": "assistant" if self._is_bot(message, context) else "user",
                                "content": redact(content)[:HISTORY_CHARS]})
        return root_lines + current, history[-HISTORY_TURNS:] or None

    def _message_lines(self, client, message: dict) -> list[str]:
        lines = slack_to_plain(message.get("text") or "").splitlines()
        for file in (message.get("files") or [])[:FILES_PER_MESSAGE]:
            lines += self._file_lines(client, file)
        return lines

    def _file_lines(self, client, file: dict) -> list[str]:
        from assistant.pipeline import lines_from_bytes

        if not file.get("url_private_download") and not file.get("url_private"):
            file = client.files_info(file=file["id"])["file"]  # events may carry only the id
        name = file.get("name") or file.get("title") or file.get("id", "the file")
        size = file.get("size") or 0
        if size > MAX_FILE_BYTES:
            raise UsageError(f"`{name}` is {size / 1e6:.0f} MB; I read logs up to "
                             f"{MAX_FILE_BYTES // 1_000_000} MB: {HOW_TO_SHRINK}.")
        if str(file.get("mimetype", "")).startswith(("image/", "video/", "audio/")):
            raise UsageError(f"`{name}` is {file['mimetype'].split('/')[0]}, not a text log: "
                             "paste the error as text or attach the server log.")
        data = self._download(client, file.get("url_private_download") or file["url_private"], name)
        if not data.strip():
            raise UsageError(f"`{name}` is empty: attach the server log that contains the error.")
        try:   # a compressed log inflates up to the size a plain one may have
            return list(lines_from_bytes(io.BufferedReader(io.BytesIO(data)), max_inflated=MAX_FILE_BYTES))
        except BinaryInput:
            raise UsageError(f"`{name}` looks like binary data (an image or a core dump?), not a text "
                             "log: attach the log as plain text, or paste the error.") from None
        except UsageError as exc:   # a compressed log cut short or too large inflated
            raise UsageError(f"`{name}`: {exc}") from None

    def _download(self, client, url: str, name: str) -> bytes:
        """A Slack-hosted file, fetched with the bot token (files:read), at most MAX_FILE_BYTES."""
        host = urllib.parse.urlsplit(url).hostname or ""
        api_host = urllib.parse.urlsplit(client.base_url).hostname or ""
        if not (host == "slack.com" or host.endswith(".slack.com") or host == api_host):
            raise UsageError(f"`{name}` is not stored on Slack, so I do not fetch it: attach the log itself.")
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {client.token}"})
        try:
            with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response:  # noqa: S310
                data = response.read(MAX_FILE_BYTES + 1)
                content_type = response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            raise UsageError(f"could not download `{name}` from Slack (HTTP {exc.code}).") from None
        except (urllib.error.URLError, OSError) as exc:
            raise UsageError(f"could not download `{name}` from Slack ({getattr(exc, 'reason', exc)}).") from None
        if len(data) > MAX_FILE_BYTES:
            raise UsageError(f"`{name}` is larger than {MAX_FILE_BYTES // 1_000_000} MB: {HOW_TO_SHRINK}.")
        if content_type.startswith("text/html") and not name.lower().endswith((".html", ".htm")):
            # Slack answers a download without a valid token and files:read with its sign-in page
            raise UsageError(f"could not download `{name}`: Slack sent its sign-in page. The app needs "
                             "the files:read scope (reinstall it after adding the scope).")
        return data

    # ---- feedback -------------------------------------------------------------------------------

    def _remember(self, key: str, record: dict) -> None:
        with self._answers_lock:
            self.answers[key] = record
            while len(self.answers) > REMEMBERED_ANSWERS:
                self.answers.popitem(last=False)

    def on_feedback(self, body, action, client):
        from assistant.feedback import FeedbackStore

        helpful = action.get("action_id") == ACTION_HELPFUL
        user = (body.get("user") or {}).get("id")
        message = body.get("message") or {}
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        try:
            value = json.loads(action.get("value") or "{}")
        except ValueError:
            value = {}
        key = value.get("k") or f"{channel}:{message.get('ts')}"
        with self._answers_lock:
            record = self.answers.get(key)
        if record is None:  # answered before the bot restarted: keep what the message shows
            record = {"question": "(not kept: the bot restarted after answering)",
                      "answer": {"text": message_text(message)},
                      "matched_ids": list(value.get("ids") or []), "mode": value.get("m")}
        try:
            FeedbackStore(self.settings.feedback_db).record(
                key, "slack", 1 if helpful else -1, record["question"], record["answer"],
                record["matched_ids"], record["mode"], user=user)
        except Exception:  # noqa: BLE001 - a broken feedback db must not take the bot down
            log.exception("could not store feedback for %s", key)
            return
        if message.get("ts") and message.get("blocks"):
            try:
                client.chat_update(channel=channel, ts=message["ts"], text=message.get("text") or "answer",
                                   blocks=feedback_recorded(message["blocks"], user, helpful))
            except Exception as exc:  # noqa: BLE001 - the rating is stored; the thanks is optional
                log.warning("could not mark feedback on %s: %s", key, exc)


def message_text(message: dict) -> str:
    """What a message says: its sections' text when it has blocks (the bot's answers), else its text."""
    parts = [b["text"]["text"] for b in message.get("blocks") or []
             if b.get("type") == "section" and isinstance(b.get("text"), dict)]
    return slack_to_plain("\n".join(parts) if parts else message.get("text") or "")


def _one_line(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if response is not None and hasattr(response, "get") and response.get("error"):
        return f"Slack said {response.get('error')}"
    if isinstance(exc, urllib.error.URLError):
        return f"cannot reach Slack's Web API ({exc.reason})"
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:200]


def with_rate_limit_retries(client, retries: int = 2):
    """Slack answers 429 + Retry-After when a method is called too often: wait and retry."""
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    if not any(isinstance(h, RateLimitErrorRetryHandler) for h in client.retry_handlers):
        client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=retries))
    return client


def build_app(assistant, settings: Settings, client=None, token: str | None = None,
              signing_secret: str | None = None, socket_mode: bool = False):
    """The Bolt app: listeners wired to a SlackBot. `client` may point at another Web API base URL
    (tests use a loopback fake); tokens default to Slack's usual environment variables."""
    from slack_bolt import App
    from slack_bolt.error import BoltError
    from slack_sdk import WebClient

    token = token or (client.token if client is not None else None) or os.environ.get("SLACK_BOT_TOKEN")
    signing_secret = signing_secret or os.environ.get("SLACK_SIGNING_SECRET") or ""
    if not token:
        raise UsageError("SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...) "
                         "from the app's OAuth & Permissions page")
    if not socket_mode and not signing_secret:
        # an empty secret would make every forged request "verify"
        raise UsageError("SLACK_SIGNING_SECRET is not set: copy it from the app's Basic Information "
                         "page, or use Socket Mode (SLACK_APP_TOKEN, `ask slack --socket`)")
    client = with_rate_limit_retries(client or WebClient(token=token))
    client.token = client.token or token
    try:
        app = App(client=client, signing_secret=signing_secret, name="ask")  # the token is the client's
    except BoltError as exc:
        raise UsageError(f"Slack rejected SLACK_BOT_TOKEN: {' '.join(str(exc).split())[:200]}") from None
    bot = SlackBot(assistant, settings)
    app.use(bot.drop_retried_events)
    app.event("app_mention")(ack=_ack, lazy=[bot.on_mention])
    app.event("message")(ack=_ack, lazy=[bot.on_message])
    app.action(ACTION_HELPFUL)(ack=_ack, lazy=[bot.on_feedback])
    app.action(ACTION_NOT_HELPFUL)(ack=_ack, lazy=[bot.on_feedback])
    app.ask_bot = bot  # for a caller that wants the state (tests, a health page)
    return app


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _LoggingHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
        log.debug("%s %s", self.address_string(), format % args)


def make_http_server(app, host: str = "127.0.0.1", port: int = 3000, path: str = "/slack/events"):
    """A threaded HTTP server for the Events API and interactivity (Bolt verifies the signatures).
    Call `.serve_forever()`; `port=0` picks a free port (`.server_port`)."""
    from slack_bolt.adapter.wsgi import SlackRequestHandler

    return make_server(host, port, SlackRequestHandler(app, path), server_class=_ThreadingWSGIServer,
                       handler_class=_LoggingHandler)


def socket_mode_handler(app, app_token: str, web_client=None):
    """Socket Mode: the bot dials out to Slack over a WebSocket (no public URL, no signatures:
    the app-level token authenticates the connection). `.connect()` returns, `.start()` blocks."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    return SocketModeHandler(app, app_token, web_client=web_client)


def choose_mode(args, environ) -> str:
    if args.socket:
        return "socket"
    if args.http:
        return "http"
    if environ.get("SLACK_APP_TOKEN"):
        return "socket"
    if environ.get("SLACK_SIGNING_SECRET"):
        return "http"
    raise UsageError("set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP Events API) "
                     "next to SLACK_BOT_TOKEN; see ui/slack_manifest.yaml")


def check_tokens(mode: str, environ) -> None:
    bot_token = environ.get("SLACK_BOT_TOKEN", "")
    if not bot_token:
        raise UsageError("SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...) from "
                         "the app's OAuth & Permissions page")
    if not bot_token.startswith("xoxb-"):
        raise UsageError("SLACK_BOT_TOKEN should be a bot token (xoxb-...), from OAuth & Permissions")
    if mode == "socket":
        app_token = environ.get("SLACK_APP_TOKEN", "")
        if not app_token:
            raise UsageError("Socket Mode needs SLACK_APP_TOKEN: create an app-level token with the "
                             "connections:write scope on the app's Basic Information page")
        if not app_token.startswith("xapp-"):
            raise UsageError("SLACK_APP_TOKEN should be an app-level token (xapp-...), from Basic Information")
    elif not environ.get("SLACK_SIGNING_SECRET"):
        raise UsageError("HTTP mode needs SLACK_SIGNING_SECRET: copy it from the app's Basic Information page")


def verify_bot_token(token: str, client=None) -> dict:
    """auth.test: is the token good, and which bot is it? One-line errors otherwise."""
    from slack_sdk import WebClient

    client = client or WebClient(token=token, timeout=15)
    try:
        return client.auth_test().data
    except Exception as exc:  # noqa: BLE001 - SlackApiError or a network error, said in one line
        raise UsageError(f"SLACK_BOT_TOKEN check (auth.test) failed: {_one_line(exc)}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ask slack", description="The Slack bot: answers SGLang traces where it is mentioned, in "
        "DMs, and in threads it answered. Mode: Socket Mode when SLACK_APP_TOKEN is set, else HTTP.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--socket", action="store_true", help="Socket Mode (needs SLACK_APP_TOKEN)")
    mode.add_argument("--http", action="store_true", help="HTTP Events API (needs SLACK_SIGNING_SECRET)")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP mode: address to listen on "
                                                             "(put a TLS reverse proxy in front)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 3000),
                        help="HTTP mode: port (default 3000, env PORT)")
    parser.add_argument("--path", default="/slack/events", help="HTTP mode: request URL path")
    parser.add_argument("--no-llm", action="store_true", help="answer from the KB alone (env ASK_NO_LLM=1)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    chosen = choose_mode(args, os.environ)
    check_tokens(chosen, os.environ)  # before loading anything slow
    verify_bot_token(os.environ["SLACK_BOT_TOKEN"])  # fail fast, before the index loads
    logging.basicConfig(level=logging.DEBUG if os.environ.get("ASK_DEBUG") else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    install_log_redaction()   # tokens in an exception's text (Slack's, the model server's) stay out of the log

    from assistant.pipeline import Assistant
    from ingest.update import ingest_kb

    settings = Settings.from_env()
    if args.no_llm:
        settings = settings.with_options(use_llm=False)
    assistant = Assistant.from_settings(settings, progress=lambda m: print(m, file=sys.stderr),
                                        build_index=ingest_kb)
    if settings.use_llm:
        from assistant.llm import SGLangClient

        llm = SGLangClient.from_settings(settings)
        if llm.available():
            assistant.llm = llm
        else:
            log.info("no SGLang endpoint at %s: answering from the knowledge base alone", settings.endpoint)
    app = build_app(assistant, settings, socket_mode=chosen == "socket")

    if chosen == "socket":
        handler = socket_mode_handler(app, os.environ["SLACK_APP_TOKEN"])
        try:
            handler.connect()
        except Exception as exc:  # noqa: BLE001 - SlackApiError (bad token) or no network: one line
            raise UsageError(f"cannot open a Socket Mode connection: {_one_line(exc)}") from None
        print("ask slack: connected in Socket Mode; mention the bot in a channel it was invited to",
              file=sys.stderr)
        threading.Event().wait()  # the handler's threads answer; Ctrl-C stops
        return 0
    try:
        server = make_http_server(app, args.host, args.port, args.path)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port} ({exc.strerror}): pass --port") from None
    print(f"ask slack: listening on http://{args.host}:{server.server_port}{args.path} "
          "(set it as the Request URL for events and interactivity)", file=sys.stderr)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
