"""The Slack bot as a workspace sees it: signed HTTP requests go to the real Bolt app served on a
loopback port, and everything it says lands in a loopback fake of Slack's Web API
(tests/fake_slack.py), which answers like Slack does, limits and rate limits included."""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import pytest

pytest.importorskip("slack_bolt")

from slack_sdk import WebClient  # noqa: E402

from assistant.config import Settings  # noqa: E402
from assistant.feedback import FeedbackStore  # noqa: E402
from tests.conftest import REPO, run_ask  # noqa: E402
from tests.fake_slack import FakeSlack, block_problems  # noqa: E402
from ui.slack import build_app, make_http_server  # noqa: E402
from ui.slack_format import ACTION_HELPFUL, ACTION_NOT_HELPFUL, answer_messages  # noqa: E402

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
QUIET_SECONDS = 1.0   # how long "no reply" is waited for, after the bot answered something later

LIBNUMA_TRACE = """\
$ HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUv python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --api-key sk-live-0123456789abcdef --port 30000
Traceback (most recent call last):
  File "/usr/local/lib/python3.11/site-packages/sgl_kernel/__init__.py", line 5, in <module>
    from sgl_kernel import common_ops
ImportError: libnuma.so.1: cannot open shared object file: No such file or directory
[sgl_kernel] CRITICAL: Could not load any common_ops library!
"""
SECRETS = ("hf_AbCdEfGhIjKlMnOpQrStUv", "sk-live-0123456789abcdef")
KV_TRACE = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
PORT_TRACE = "OSError: [Errno 98] Address already in use"


def sign(body: bytes, timestamp: int, secret: str = SIGNING_SECRET) -> str:
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass
class Bot:
    """The Bolt app on a loopback port, its fake Slack, and helpers to talk to it like Slack does."""

    url: str
    fake: FakeSlack
    settings: Settings
    event_ids: iter = field(default_factory=lambda: iter(range(1, 10_000)))

    def post(self, body: bytes, content_type: str, headers: dict | None = None,
             secret: str = SIGNING_SECRET, timestamp: int | None = None) -> tuple[int, float]:
        timestamp = int(time.time()) if timestamp is None else timestamp
        all_headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": str(timestamp),
                       "X-Slack-Signature": sign(body, timestamp, secret)}
        all_headers.update(headers or {})
        request = urllib.request.Request(self.url, data=body, headers=all_headers, method="POST")
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, time.monotonic() - started
        except urllib.error.HTTPError as exc:
            return exc.code, time.monotonic() - started

    def event_body(self, event: dict, event_id: str | None = None) -> bytes:
        return json.dumps({
            "token": "unused-legacy-token", "team_id": self.fake.team_id, "api_app_id": "A0ASK",
            "type": "event_callback", "event": event, "event_time": int(time.time()),
            "event_id": event_id or f"Ev{next(self.event_ids):08d}",
            "authorizations": [{"team_id": self.fake.team_id, "user_id": self.fake.bot_user_id,
                                "is_bot": True}],
        }).encode()

    def send_event(self, event: dict, **kwargs) -> tuple[int, float]:
        return self.post(self.event_body(event), "application/json", **kwargs)

    def click(self, message: dict, channel: str, action_id: str, user: str = "UBOB") -> int:
        value = next(e["value"] for b in message["blocks"] if b["type"] == "actions"
                     for e in b["elements"] if e["action_id"] == action_id)
        payload = {
            "type": "block_actions", "api_app_id": "A0ASK", "token": "unused", "trigger_id": "1.2.3",
            "team": {"id": self.fake.team_id}, "user": {"id": user, "username": user.lower()},
            "container": {"type": "message", "message_ts": message["ts"], "channel_id": channel},
            "channel": {"id": channel, "name": "sglang-help"}, "message": message,
            "response_url": f"{self.fake.url}/actions/T0FAKE/1/xyz",
            "actions": [{"type": "button", "action_id": action_id, "block_id": "ask_feedback",
                         "value": value, "action_ts": str(time.time())}],
        }
        body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        return self.post(body, "application/x-www-form-urlencoded")[0]

    # ---- what the channel shows ----

    def placeholders(self) -> list:
        return [c for c in self.fake.calls_to("chat.postMessage") if "Looking" in c.params.get("text", "")]

    def final_message(self, channel: str, thread_ts: str, timeout: float = 30.0) -> dict:
        """Wait for the bot's reply in this thread to be edited from "Looking..." into its answer."""
        def edited():
            for post in self.placeholders():
                if post.params["channel"] == channel and post.params.get("thread_ts") == thread_ts:
                    ts = post.response["ts"]
                    updates = [c for c in self.fake.calls_to("chat.update") if c.params["ts"] == ts]
                    if updates:
                        return {"ts": ts, "text": updates[0].params["text"],
                                "blocks": updates[0].params.get("blocks") or []}
            return None
        return self.fake.wait_for(edited, timeout, f"the answer in thread {thread_ts}")


def shown(message: dict) -> str:
    """The mrkdwn a person reads in the message."""
    out = []
    for block in message["blocks"]:
        if isinstance(block.get("text"), dict):
            out.append(block["text"]["text"])
        out += [e.get("text", "") for e in block.get("elements", []) if isinstance(e.get("text"), str)]
    return "\n".join(out)


def wait_until(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


class RecordingAssistant:
    """The real assistant; remembers what it was asked (to check what a thread follow-up sends)."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def answer(self, source, history=None, **kwargs):
        self.calls.append((source, history))
        return self.inner.answer(source, history=history, **kwargs)


class LongAnswerAssistant(RecordingAssistant):
    """The real answer, with a fix long enough that it cannot fit one Slack message."""

    def answer(self, source, history=None, **kwargs):
        answer = super().answer(source, history, **kwargs)
        answer.fix = answer.fix + [f"Step {i}: check the node.\n" + "\n".join(
            f"    $ nvidia-smi --query-gpu=index,name,memory.used --format=csv -i {i} # {'x' * 60}"
            for _ in range(12)) for i in range(1, 61)]
        return answer


def start_bot(assistant, **build_kwargs):
    fake = FakeSlack().start()
    settings = Settings.from_env()  # the test's own feedback db (conftest)
    client = WebClient(token=fake.bot_token, base_url=fake.api_url)
    app = build_app(assistant, settings, client=client, signing_secret=SIGNING_SECRET, **build_kwargs)
    server = make_http_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    bot = Bot(f"http://127.0.0.1:{server.server_port}/slack/events", fake, settings)
    return bot, server


@pytest.fixture
def bot(assistant):
    bot, server = start_bot(assistant)
    yield bot
    server.shutdown()
    server.server_close()
    bot.fake.stop()


@pytest.fixture
def recording_bot(assistant):
    recorder = RecordingAssistant(assistant)
    bot, server = start_bot(recorder)
    bot.assistant = recorder
    yield bot
    server.shutdown()
    server.server_close()
    bot.fake.stop()


def mention(bot: Bot, text: str, channel: str = "C0HELP", files: list | None = None, **kwargs) -> dict:
    event = {"type": "app_mention", "user": "UALICE", "text": f"<@{bot.fake.bot_user_id}> {text}",
             "ts": bot.fake.new_ts(), "channel": channel, "event_ts": "1"}
    if files:
        event["files"] = files
    status, elapsed = bot.send_event(event, **kwargs)
    assert status == 200
    assert elapsed < 3.0, "Slack needs the acknowledgement within 3 seconds"
    return event


def test_mention_gets_a_threaded_answer_without_secrets_or_the_traceback(bot):
    event = mention(bot, "our server dies at startup:\n```" + LIBNUMA_TRACE + "```")
    answer = bot.final_message("C0HELP", event["ts"])

    first_post = bot.placeholders()[0]
    assert first_post.params["thread_ts"] == event["ts"], "the reply goes in the thread, not the channel"
    text = shown(answer)
    assert "libnuma.so.1 is missing" in text and "`libnuma-missing-sgl-kernel`" in text
    assert "```apt-get update &amp;&amp; apt-get install -y libnuma1```" in text, "the fix command is a code block"
    assert "<https://github.com/sgl-project/sglang/pull/15355|sgl-project/sglang#15355" in text
    assert ":warning:" in text  # the entry's wrong-advice warning
    actions = [e["action_id"] for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert actions == [ACTION_HELPFUL, ACTION_NOT_HELPFUL]

    everything_posted = bot.fake.posted_text()
    assert "ImportError: libnuma.so.1" in everything_posted  # the matched line may be quoted...
    for secret in SECRETS:
        assert secret not in everything_posted
    assert "Traceback (most recent call last)" not in everything_posted  # ...the traceback is not
    assert "site-packages/sgl_kernel/__init__.py" not in everything_posted


def test_direct_message_is_answered_and_chatter_and_bots_are_not(bot):
    fake = bot.fake
    # channel chatter without a mention, another bot's DM, a message edit: no reply to any
    bot.send_event({"type": "message", "channel": "C0HELP", "channel_type": "channel", "user": "UALICE",
                    "text": PORT_TRACE, "ts": fake.new_ts()})
    bot.send_event({"type": "message", "subtype": "bot_message", "bot_id": "BOTHER", "channel": "D0ALICE",
                    "channel_type": "im", "text": PORT_TRACE, "ts": fake.new_ts()})
    bot.send_event({"type": "message", "subtype": "message_changed", "channel": "D0ALICE",
                    "channel_type": "im", "message": {"text": PORT_TRACE}, "ts": fake.new_ts()})
    dm = {"type": "message", "channel": "D0ALICE", "channel_type": "im", "user": "UALICE",
          "text": f"help? {PORT_TRACE}", "ts": fake.new_ts()}
    assert bot.send_event(dm)[0] == 200

    answer = bot.final_message("D0ALICE", dm["ts"])
    assert "`port-already-in-use`" in shown(answer)
    time.sleep(QUIET_SECONDS)
    assert [c.params["channel"] for c in bot.placeholders()] == ["D0ALICE"]


def test_thread_follow_up_uses_the_original_trace_and_the_thread_as_history(recording_bot):
    bot, fake = recording_bot, recording_bot.fake
    root = fake.add_message("C0HELP", f"<@{fake.bot_user_id}> {KV_TRACE}")
    fake.add_message("C0HELP", "Not enough memory", bot=True, thread_ts=root["ts"], blocks=[
        {"type": "section", "text": {"type": "mrkdwn", "text": "*Fix*\n1. Raise `--mem-fraction-static`"}}])
    follow = fake.add_message("C0HELP", "I raised --mem-fraction-static to 0.9 and it still fails, what else?",
                              thread_ts=root["ts"])
    thanks = fake.add_message("C0HELP", "ok thanks", thread_ts=root["ts"])
    other_root = fake.add_message("C0HELP", "lunch?", user="UBOB")
    other = fake.add_message("C0HELP", "where do we go?", user="UCAROL", thread_ts=other_root["ts"])
    for message in (thanks, other):  # thanks is no question; the other thread is not the bot's
        bot.send_event({**message, "channel": "C0HELP", "channel_type": "channel"})
    bot.send_event({**follow, "channel": "C0HELP", "channel_type": "channel"})

    answer = bot.final_message("C0HELP", root["ts"])
    assert "`kv-cache-not-enough-memory`" in shown(answer), "the thread's original trace is the query"
    assert any(c.params["ts"] == root["ts"] for c in fake.calls_to("conversations.replies"))
    (analysis, history), = bot.assistant.calls
    assert "still fails" in analysis.question
    assert history == [{"role": "assistant", "content": "*Fix*\n1. Raise `--mem-fraction-static`"}]
    time.sleep(QUIET_SECONDS)
    assert len(bot.placeholders()) == 1


def test_attached_log_is_downloaded_with_the_bot_token_and_triaged(bot):
    fake = bot.fake
    log = (REPO / "kb" / "samples" / "flashinfer-cuda-fp8.log").read_bytes()
    uploaded = fake.add_file("server.log", log)
    # a DM upload whose event carries only the file id (Slack's file_access: check_file_info)
    dm = {"type": "message", "subtype": "file_share", "channel": "D0ALICE", "channel_type": "im",
          "user": "UALICE", "text": "", "ts": fake.new_ts(),
          "files": [{"id": uploaded["id"], "file_access": "check_file_info"}]}
    bot.send_event(dm)

    answer = bot.final_message("D0ALICE", dm["ts"])
    assert "`flashinfer-jit-missing-cuda-fp8-h`" in shown(answer)
    assert fake.calls_to("files.info")
    assert fake.downloads == [{"path": uploaded["url_private_download"].split(fake.url)[1],
                               "file_id": uploaded["id"], "authorized": True}]


def test_binary_and_oversized_attachments_are_refused_with_a_clear_message(bot):
    fake = bot.fake
    log = (REPO / "kb" / "samples" / "flashinfer-cuda-fp8.log").read_bytes()
    packed = fake.add_file("server.log.gz", gzip.compress(log), mimetype="application/gzip", filetype="gzip")
    dump = fake.add_file("core.bin", bytes(range(256)) * 64, mimetype="application/octet-stream")
    bomb = fake.add_file("big.log.gz", gzip.compress(b"INFO tick\n" * 3_000_000), mimetype="application/gzip")
    huge = fake.add_file("huge.log", b"ERROR\n", size=48_000_000)
    packed_event = mention(bot, "see log", files=[packed])
    binary_event = mention(bot, "see log", files=[dump])
    bomb_event = mention(bot, "see log", files=[bomb])
    huge_event = mention(bot, "see log", files=[huge])

    # a rotated, gzipped log is read as it inflates
    assert "`flashinfer-jit-missing-cuda-fp8-h`" in shown(bot.final_message("C0HELP", packed_event["ts"]))
    refused = shown(bot.final_message("C0HELP", binary_event["ts"]))
    assert "`core.bin` looks like binary data" in refused and "plain text" in refused
    inflated = shown(bot.final_message("C0HELP", bomb_event["ts"]))
    assert "`big.log.gz`: the compressed log inflates to more than 20 MB" in inflated
    too_big = shown(bot.final_message("C0HELP", huge_event["ts"]))
    assert "`huge.log` is 48 MB" in too_big and "20 MB" in too_big
    # the bot answers each mention on its own thread, so the downloads may come in any order
    assert sorted(d["file_id"] for d in fake.downloads) == sorted([packed["id"], dump["id"], bomb["id"]]), \
        "the oversized file is not fetched"


def test_feedback_buttons_store_the_rating_and_thank_the_user(bot):
    event = mention(bot, LIBNUMA_TRACE)
    answer = bot.final_message("C0HELP", event["ts"])
    message = {"type": "message", "ts": answer["ts"], "text": answer["text"], "blocks": answer["blocks"],
               "user": bot.fake.bot_user_id, "bot_id": bot.fake.bot_id}

    assert bot.click(message, "C0HELP", ACTION_HELPFUL) == 200
    store = FeedbackStore(bot.settings.feedback_db)
    row, = wait_until(lambda: store.rows())
    assert (row.surface, row.rating, row.user) == ("slack", 1, "UBOB")
    assert row.matched_ids[0] == "libnuma-missing-sgl-kernel"
    assert "ImportError: libnuma.so.1" in row.question
    assert row.answer["matches"][0]["id"] == "libnuma-missing-sgl-kernel"
    assert not any(secret in json.dumps([row.question, row.answer]) for secret in SECRETS)
    thanked = bot.fake.wait_for(lambda: [c for c in bot.fake.calls_to("chat.update")
                                         if c.params["ts"] == answer["ts"] and "marked this answer" in json.dumps(c.params)])
    blocks = thanked[-1].params["blocks"]
    assert not [b for b in blocks if b["type"] == "actions"], "the buttons are replaced by the verdict"
    assert "<@UBOB> marked this answer helpful" in shown({"blocks": blocks})

    assert bot.click(message, "C0HELP", ACTION_NOT_HELPFUL, user="UCAROL") == 200
    wait_until(lambda: [r for r in store.rows() if r.rating == -1])
    assert [r.rating for r in store.rows()] == [-1], "one row per answer, the last rating wins"


def test_forged_or_stale_signatures_get_401_and_no_reply(bot):
    event = {"type": "app_mention", "user": "UALICE", "text": f"<@{bot.fake.bot_user_id}> {KV_TRACE}",
             "ts": bot.fake.new_ts(), "channel": "C0HELP"}
    body = bot.event_body(event)
    assert bot.post(body, "application/json", secret="not-the-signing-secret")[0] == 401
    assert bot.post(body, "application/json", timestamp=int(time.time()) - 600)[0] == 401  # replayed
    assert bot.post(body, "application/json", headers={"X-Slack-Signature": ""})[0] == 401
    tampered = body.replace(b"UALICE", b"UMALLORY")
    assert bot.post(tampered, "application/json", headers={"X-Slack-Signature": sign(body, int(time.time()))})[0] == 401
    time.sleep(QUIET_SECONDS)
    assert not bot.fake.calls_to("chat.postMessage", ok_only=False)


def test_a_retried_event_is_answered_once(bot):
    event = {"type": "app_mention", "user": "UALICE", "text": f"<@{bot.fake.bot_user_id}> {PORT_TRACE}",
             "ts": bot.fake.new_ts(), "channel": "C0HELP"}
    body = bot.event_body(event, event_id="Ev0RETRIED")
    assert bot.post(body, "application/json")[0] == 200
    for attempt in ("1", "2"):
        retry = {"X-Slack-Retry-Num": attempt, "X-Slack-Retry-Reason": "http_timeout"}
        assert bot.post(body, "application/json", headers=retry)[0] == 200
    bot.final_message("C0HELP", event["ts"])
    time.sleep(QUIET_SECONDS)
    assert len(bot.placeholders()) == 1
    assert len(bot.fake.calls_to("chat.update")) == 1


def test_a_rate_limited_post_is_retried_after_retry_after(bot):
    bot.fake.rate_limit_once("chat.postMessage", retry_after=1)
    event = mention(bot, KV_TRACE)
    answer = bot.final_message("C0HELP", event["ts"])
    assert "`kv-cache-not-enough-memory`" in shown(answer)
    limited, posted = bot.fake.calls_to("chat.postMessage", ok_only=False)
    assert (limited.status, limited.response["error"]) == (429, "ratelimited")
    assert posted.response["ok"] and posted.at - limited.at >= 1.0, "waited Retry-After before retrying"


def test_a_long_answer_is_split_into_messages_slack_accepts(assistant):
    long_answers = LongAnswerAssistant(assistant)
    bot, server = start_bot(long_answers)
    try:
        event = mention(bot, KV_TRACE)
        first = bot.final_message("C0HELP", event["ts"])
        def parts_after_the_first():
            posts = [c for c in bot.fake.calls_to("chat.postMessage")
                     if c.params.get("thread_ts") == event["ts"] and "(part " in c.params["text"]]
            last_has_buttons = posts and any(b["type"] == "actions" for b in posts[-1].params["blocks"])
            return posts if last_has_buttons else None

        rest = bot.fake.wait_for(parts_after_the_first, what="the rest of a long answer")
        assert not [c for c in bot.fake.calls if c.response.get("error") == "invalid_blocks"]
        parts = [first] + [c.params for c in rest]
        text = "\n".join(shown(p) for p in parts)
        assert all(f"Step {i}: check the node" in text for i in range(1, 61)), "nothing is lost in the split"
        assert all(not block_problems(p["blocks"]) for p in parts)
        for block in (b for p in parts for b in p["blocks"] if b["type"] == "section"):
            assert block["text"]["text"].count("```") % 2 == 0, "a cut code block is closed and reopened"
        has_buttons = [any(b["type"] == "actions" for b in p["blocks"]) for p in parts]
        assert has_buttons[-1] and not any(has_buttons[:-1]), "the feedback buttons close the answer"
    finally:
        server.shutdown()
        server.server_close()
        bot.fake.stop()


def test_answer_messages_respect_limits_for_a_synthetic_answer(assistant):
    answer = assistant.answer(KV_TRACE)
    answer.diagnosis = "word " * 2000          # one 10k-character paragraph
    answer.warnings = [f"warning {i} " + "y" * 400 for i in range(80)]
    messages = answer_messages(answer, feedback='{"k":"C:1"}')
    assert len(messages) > 1
    assert all(not block_problems(m["blocks"]) and len(m["text"]) < 4000 for m in messages)


def test_ask_slack_without_tokens_says_what_to_set_in_one_line():
    no_tokens = {"SLACK_BOT_TOKEN": "", "SLACK_APP_TOKEN": "", "SLACK_SIGNING_SECRET": ""}
    result = run_ask("slack", env=no_tokens, timeout=60)
    assert result.returncode == 2
    assert result.stderr.decode().strip().count("\n") == 0
    assert "SLACK_APP_TOKEN" in result.stderr.decode() and "SLACK_SIGNING_SECRET" in result.stderr.decode()
    result = run_ask("slack", "--http", env={**no_tokens, "SLACK_SIGNING_SECRET": "s"}, timeout=60)
    assert result.returncode == 2 and "SLACK_BOT_TOKEN is not set" in result.stderr.decode()
    result = run_ask("slack", "--socket", env={**no_tokens, "SLACK_BOT_TOKEN": "xoxb-1-2-3"}, timeout=60)
    assert result.returncode == 2 and "SLACK_APP_TOKEN" in result.stderr.decode()


class BrokenAssistant:
    def answer(self, source, history=None, **kwargs):
        raise RuntimeError('index exploded\nTraceback (most recent call last):\n  File "/srv/ask/x.py", line 1')


def test_failures_and_empty_mentions_become_one_line_messages(assistant):
    bot, server = start_bot(BrokenAssistant())
    try:
        empty = mention(bot, "")
        hint = bot.final_message("C0HELP", empty["ts"])
        assert "Mention me with the error" in hint["text"]
        failed = mention(bot, KV_TRACE)
        oops = bot.final_message("C0HELP", failed["ts"])
        assert oops["text"].startswith("Sorry, something went wrong while answering (RuntimeError)")
        assert "\n" not in shown(oops) and "Traceback" not in bot.fake.posted_text()
    finally:
        server.shutdown()
        server.server_close()
        bot.fake.stop()


def test_socket_mode_answers_a_mention_over_the_websocket(assistant):
    pytest.importorskip("aiohttp")  # the fake's WebSocket server
    from tests.fake_slack import FakeSocketMode
    from ui.slack import socket_mode_handler

    fake, socket = FakeSlack().start(), FakeSocketMode().start()
    fake.socket_url = socket.url
    client = WebClient(token=fake.bot_token, base_url=fake.api_url)
    app = build_app(assistant, Settings.from_env(), client=client, socket_mode=True, signing_secret=None)
    handler = socket_mode_handler(app, fake.app_token, web_client=WebClient(base_url=fake.api_url))
    try:
        handler.connect()
        assert socket.connected.wait(10)
        bot = Bot("", fake, Settings.from_env())
        event = {"type": "app_mention", "user": "UALICE", "text": f"<@{fake.bot_user_id}> {PORT_TRACE}",
                 "ts": fake.new_ts(), "channel": "C0HELP"}
        socket.push("events_api", json.loads(bot.event_body(event)), envelope_id="env-1")
        socket.wait_for_ack("env-1")
        assert "`port-already-in-use`" in shown(bot.final_message("C0HELP", event["ts"]))
    finally:
        socket.stop()  # first: the client then stops at once instead of waiting on a live socket
        handler.close()
        fake.stop()


def test_redaction_hides_secrets_and_keeps_log_numbers_and_kb_text():
    from ui.slack_format import redact

    leaks = {
        "--api-key sk-live-0123456789abcdef": "sk-live", "--api-key=s3cr3t-value": "s3cr3t",
        "HF_TOKEN=hf_AbCdEfGhIjKlMnOp": "hf_AbCd", "Authorization: Bearer abc.def.ghi": "abc.def",
        "password=hunter2": "hunter2", "SLACK_BOT_TOKEN=xoxb-1-2-abcdefghij": "xoxb-1",
        "redis://admin:pa55word@10.0.0.1:6379": "pa55word", '{"api_key": "k-123456"}': "k-123456",
        "export API_KEY='Bearer k-7654321'": "k-7654321", "auth_token = abcdef123456": "abcdef123456",
    }
    for text, secret in leaks.items():
        assert secret not in redact(text), text
    kept = ["Decode batch. #running-req: 1, #token: 342, token usage: 0.01",
            "--max-prefill-tokens 16384 --tokenizer-path /models/tok", "a 64K-token request",
            "--hf-token $HF_TOKEN", 'OpenAI(base_url="http://localhost:30000/v1", api_key="EMPTY")',
            'File "/sgl-workspace/sglang/python/sglang/srt/utils/hf_transformers/config.py", line 336',
            # how-to prose and placeholders about the flag and the header are not secrets
            "a server started with --api-key and a client that sends no key",
            "-H 'Authorization: Bearer <key>'", '-H "Authorization: Bearer $OPENAI_API_KEY"',
            "401 表示 --api-key 与请求携带的密钥不一致", "SGLang with --api-key: POST /v1/responses answers 401",
            # a placeholder after the scheme, and code in a traceback's source line
            "export API_KEY='Bearer <the server key>'", "    offs_token = offs_token.to(tl.int64)",
            # a value too short to be a secret: a placeholder in the KB's text of a log line
            "each `Prefill batch` line shows `#cached-token: N`"]
    assert [redact(t) for t in kept] == kept
    kb_text = "".join(p.read_text() for p in sorted((REPO / "kb" / "entries").glob("*.md")))
    assert redact(kb_text) == kb_text, "the KB's own advice is never mangled"


def test_the_request_url_check_slack_runs_at_setup_is_answered(bot):
    body = json.dumps({"token": "unused", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
                       "type": "url_verification"}).encode()
    timestamp = int(time.time())
    request = urllib.request.Request(bot.url, data=body, method="POST", headers={
        "Content-Type": "application/json", "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": sign(body, timestamp)})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read())["challenge"].startswith("3eZbrw1aBm2r")
