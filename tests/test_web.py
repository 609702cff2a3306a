"""The web UI through Gradio's own API (gradio_client), as many users at once would use it: a
pasted trace, a dropped log, follow-ups, 20 concurrent sessions, bad input, the model's banner
and streaming, and the `ask serve` command itself."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import REPO

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
ARTIFACTS = REPO / "tests" / "artifacts"

LIBNUMA = "ImportError: libnuma.so.1: cannot open shared object file: No such file or directory"
KV_TRACE = ("sglang 0.5.9\n"
            "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 16 --dp 16\n"
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")
# Traces (signature matches) and prose questions (dense + lexical, no signature): 10 queries.
PROSE = ["my server crashes under heavy load with dp attention enabled, why?",
         "how do I make outputs deterministic at temperature zero?",
         "the router says worker startup timed out after loading",
         "disaggregation bootstrap waiting forever on decode side",
         "why is the health endpoint body empty?"]


# ---- helpers shared with test_web_browser.py ------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(assistant, settings, **options):
    """The page of ui.web, launched as `ask serve` does, on a free loopback port."""
    from ui.web import build_demo, launch

    demo = build_demo(assistant, settings, **options)
    port = free_port()
    launch(demo, port=port, block=False, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


def message_text(message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))


def ask(client, text: str = "", files: list | None = None, chat: list | None = None):
    """-> (chat messages, sources markdown, detected markdown) once the answer is complete.
    An API caller sends the chat so far, as the page does."""
    _box, chat, sources, detected = client.predict({"text": text, "files": files or []}, chat or [],
                                                   api_name="/ask")
    return chat, sources, detected


def web_settings(assistant, tmp_path: Path):
    return replace(assistant.settings, feedback_db=tmp_path / "feedback.sqlite3", use_llm=False)


# ---- fixtures -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def web_url(assistant, tmp_path_factory):
    with serving(assistant, web_settings(assistant, tmp_path_factory.mktemp("web"))) as url:
        yield url


@pytest.fixture
def client(web_url):
    from gradio_client import Client

    return Client(web_url, verbose=False)


# ---- answers --------------------------------------------------------------------------------------

def test_pasted_trace_gets_the_fix_with_copyable_commands_and_sources(client):
    chat, sources, detected = ask(client, LIBNUMA)
    assert [m["role"] for m in chat] == ["user", "assistant"]
    assert LIBNUMA in message_text(chat[0])
    reply = message_text(chat[1])
    assert reply.startswith("### sgl-kernel cannot load common_ops")
    assert "**Fix**" in reply and "```bash\n   apt-get update && apt-get install -y libnuma1\n   ```" in reply
    assert "**Warnings**" in reply and "Wrong advice" in reply
    assert "Traceback" not in reply
    assert "libnuma-missing-sgl-kernel</b> · KB entry · score" in sources
    assert "confidence medium-high" in sources
    assert 'href="https://github.com/sgl-project/sglang/pull/15355"' in sources
    assert "Nothing detected" in detected


def test_detected_versions_gpu_and_flags_are_shown(client):
    chat, _sources, detected = ask(client, KV_TRACE)
    assert message_text(chat[1]).startswith("### Not enough memory")
    assert "**SGLang**: `0.5.9`" in detected
    assert "`--tp 16`" in detected and "`--dp 16`" in detected


def test_dropped_log_file_is_triaged(client, tmp_path):
    from gradio_client import handle_file

    log = tmp_path / "server.log"
    noise = "".join(f"[2025-10-15 10:{i // 60:02d}:{i % 60:02d}] Decode batch. #running-req: 3\n" for i in range(3000))
    log.write_text(noise + "[2025-10-15 11:00:00 TP0] " + LIBNUMA + "\n" + noise)
    chat, sources, _ = ask(client, "", [handle_file(str(log))])
    assert "Attached log: `server.log`" in message_text(chat[0])
    assert message_text(chat[1]).startswith("### sgl-kernel cannot load common_ops")
    assert "libnuma-missing-sgl-kernel" in sources


def test_follow_up_is_asked_about_the_earlier_trace(client):
    chat, _, _ = ask(client, KV_TRACE)
    chat, sources, _ = ask(client, "what value should I try instead?", chat=chat)
    assert len(chat) == 4                                   # the conversation is kept
    assert message_text(chat[3]).startswith("### Not enough memory")
    assert "kv-cache-not-enough-memory" in sources
    chat, _, _ = ask(client, LIBNUMA, chat=chat)            # a new error starts a new topic
    assert message_text(chat[5]).startswith("### sgl-kernel cannot load common_ops")


# ---- bad input: one clear line, never a traceback -------------------------------------------------

def test_oversized_paste_gets_a_clear_message(client):
    chat, _, _ = ask(client, (LIBNUMA + "\n") * 30_000)    # ~2.5 MB
    reply = message_text(chat[-1])
    assert reply.startswith("⚠ the paste is 2 MB, more than 2 MB")
    assert "drop the log file" in reply and "--log" not in reply and "\n" not in reply


def test_binary_upload_gets_a_clear_message(client, tmp_path):
    from gradio_client import handle_file

    blob = tmp_path / "core.dump"
    blob.write_bytes(bytes(range(256)) * 64)
    chat, _, _ = ask(client, "", [handle_file(str(blob))])
    reply = message_text(chat[-1])
    assert reply.startswith("⚠ core.dump: the input looks like binary data, not a log")
    assert "Traceback" not in reply and "\n" not in reply


def test_empty_message_and_empty_file(client, tmp_path):
    from gradio_client import handle_file

    chat, _, _ = ask(client, "   ")
    assert message_text(chat[-1]).startswith("⚠ the message is empty")
    empty = tmp_path / "empty.log"
    empty.write_text("")
    chat, _, _ = ask(client, "", [handle_file(str(empty))])
    assert message_text(chat[-1]) == "⚠ empty.log is empty: drop the server log that contains the error"


def test_unexpected_failure_is_one_line_without_details(tmp_path):
    from gradio_client import Client

    from assistant.config import Settings

    class Broken:
        llm = None

        def answer(self, *args, **kwargs):
            raise RuntimeError("boom in /srv/secret/path.py")

    with serving(Broken(), Settings(feedback_db=tmp_path / "fb.sqlite3", use_llm=False)) as url:
        chat, _, _ = ask(Client(url, verbose=False), LIBNUMA)
    reply = message_text(chat[-1])
    assert reply.startswith("⚠ Something went wrong while answering (RuntimeError)")
    assert "secret" not in reply and "Traceback" not in reply


# ---- many users at once ---------------------------------------------------------------------------

def test_twenty_concurrent_sessions_get_correct_answers(web_url, assistant):
    from gradio_client import Client

    from ui.web import EXAMPLES

    queries = [text for _, text in EXAMPLES] + PROSE
    expected = {}
    for q in queries:   # what the library answers, one query at a time
        answer = assistant.answer(q)
        expected[q] = ([m.id for m in answer.matches], answer.abstained, answer.confidence)
    results, errors, latencies = {}, [], []

    def session(i: int) -> None:
        query = queries[i % len(queries)]
        try:
            client = Client(web_url, verbose=False)
            asked = time.monotonic()
            chat, sources, _ = ask(client, query)
            latencies.append(time.monotonic() - asked)
            results[i] = (query, chat, sources)
        except Exception as exc:  # noqa: BLE001 - counted and reported below
            errors.append(f"session {i}: {type(exc).__name__}: {exc}")

    started = time.monotonic()
    threads = [threading.Thread(target=session, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    wall = time.monotonic() - started
    ARTIFACTS.mkdir(exist_ok=True)
    latencies.sort()
    (ARTIFACTS / "web_concurrency.json").write_text(json.dumps(
        {"sessions": 20, "wall_seconds": round(wall, 2), "errors": errors,
         "answer_seconds_median": round(latencies[len(latencies) // 2], 2) if latencies else None,
         "answer_seconds_max": round(latencies[-1], 2) if latencies else None}, indent=1))
    assert errors == [] and len(results) == 20
    for query, chat, sources in results.values():
        ids, abstained, confidence = expected[query]
        assert len(chat) == 2 and query.strip() in message_text(chat[0])   # no other session's turns
        reply = message_text(chat[1])
        assert not reply.startswith("⚠"), reply
        if abstained:
            assert reply.startswith(("### ⚠️ LEAD (not confirmed)", "### ❔ UNKNOWN: not a known problem",
                                     "### ❔ UNKNOWN: this reads as a how-to question"))
        else:
            assert f"`{ids[0]}` · match score" in reply and f"answer confidence {confidence:.2f}" in reply
        assert f"<b>1. {ids[0]}</b>" in sources
    for label_id, (_, text) in zip(["libnuma-missing-sgl-kernel", "kv-cache-not-enough-memory",
                                    "cli-flag-unrecognized", "docker-shm-nccl-unhandled-system-error",
                                    "port-already-in-use"], EXAMPLES):
        assert expected[text][0][0] == label_id and not expected[text][1]   # the examples are right
    assert wall < 60


# ---- the SGLang model: banner, streaming, history -------------------------------------------------

def test_model_answers_stream_in_and_follow_ups_carry_the_conversation(assistant, tmp_path):
    from gradio_client import Client

    from assistant.llm import SGLangClient
    from assistant.pipeline import Assistant
    from tests.fake_sglang import FakeSGLang

    good = {"diagnosis": "Your log shows --tp 16 with --dp 16: the weights fill the static memory pool "
                         "and leave no room for the KV cache.",
            "fix": ["Raise `--mem-fraction-static` (e.g. 0.88) so the KV cache pool gets memory."],
            "warnings": [], "citations": ["kb:kv-cache-not-enough-memory"]}
    with FakeSGLang(reply=json.dumps(good)) as fake:
        fake.delay = 0.01   # a model writing, not a reply in one piece
        settings = replace(assistant.settings, endpoint=fake.url, use_llm=True,
                           feedback_db=tmp_path / "fb.sqlite3")
        bot = Assistant(assistant.retriever, assistant.registry, settings,
                        llm=SGLangClient(fake.url, timeout=10))
        with serving(bot, settings) as url:
            with urllib.request.urlopen(url + "config") as response:
                config = response.read().decode()
            assert "Answers are written by the SGLang model" in config and fake.model in config
            client = Client(url, verbose=False)
            job = client.submit({"text": KV_TRACE, "files": []}, api_name="/ask")
            partial = [message_text(out[1][-1]) for out in job]
            final = job.result()[1]
            assert any(p.startswith("_The SGLang model is writing") and "What went wrong: Your log shows"
                       in p for p in partial)
            reply = message_text(final[-1])
            assert "written by the SGLang model" in reply
            assert "Your log shows --tp 16 with --dp 16" in reply
            chat, _, _ = ask(client, "What if I use --tp 8 instead?", chat=final)
            assert len(chat) == 4 and "Your log shows" in message_text(chat[3])
        second = fake.chat_requests[-1]["messages"][1]["content"]
        assert "<conversation>" in second and "--tp 8 instead" in second
        assert "Not enough memory" in second                # the earlier trace, asked about again


def test_banner_says_kb_alone_when_no_model_answers(assistant, tmp_path):
    from assistant.llm import SGLangClient
    from ui.web import mode_banner

    settings = replace(assistant.settings, endpoint=f"http://127.0.0.1:{free_port()}/v1", use_llm=True)
    bot = replace_llm(assistant, SGLangClient(settings.endpoint, timeout=2))
    assert "Answers come from the knowledge base alone: no LLM server answering" in mode_banner(bot, settings)
    off = replace(settings, use_llm=False)
    assert "turned off" in mode_banner(replace_llm(assistant, None), off)


def replace_llm(assistant, llm):
    from assistant.pipeline import Assistant

    return Assistant(assistant.retriever, assistant.registry, assistant.settings, llm=llm)


# ---- the command ------------------------------------------------------------------------------------

def test_ask_serve_starts_the_page(kb_dir, tmp_path):
    port = free_port()
    env = dict(os.environ, ASK_KB_DIR=str(kb_dir), ASK_FEEDBACK_DB=str(tmp_path / "fb.sqlite3"),
               GRADIO_ANALYTICS_ENABLED="False")
    env.pop("ASK_INDEX_DIR", None)
    server = subprocess.Popen([sys.executable, "-m", "ui.cli", "serve", "--no-llm", "--port", str(port)],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline, page = time.monotonic() + 90, None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    page = response.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert page is not None, server.stdout.read().decode() if server.poll() is not None else "no page"
        assert '"title":"ask · SGLang troubleshooting"' in page
    finally:
        server.terminate()
        output = server.communicate(timeout=20)[0].decode()
    assert f"the web UI is at http://127.0.0.1:{port}" in output
    assert "Traceback" not in output
