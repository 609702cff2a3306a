"""Answers that say which SGLang releases have what an import, attribute or keyword error names.

A caller written for one SGLang release (verl, a script) running on another is told the releases
that fit and what to install, on every surface. Uses the committed kb/sglang_symbols.json.gz; the
facts asserted were read in the release wheels' source."""

from __future__ import annotations

import json

import pytest

from assistant.symbols import DEFAULT_PATH as SYMBOLS_PATH
from tests.conftest import run_ask

pytestmark = pytest.mark.skipif(not SYMBOLS_PATH.exists(), reason="kb/sglang_symbols.json.gz not built")

VERL_IMPORT = """sglang 0.5.4
Traceback (most recent call last):
  File "/opt/verl/verl/workers/rollout/sglang_rollout/sglang_rollout.py", line 12, in <module>
    from sglang.srt.utils import get_ip
ImportError: cannot import name 'get_ip' from 'sglang.srt.utils' (/usr/local/lib/python3.10/site-packages/sglang/srt/utils/__init__.py)"""
OLD_SCRIPT = ("python -m sglang.bench_latency --model-path Qwen/Qwen2-7B-Instruct --batch 32\n"
              "AttributeError: 'ScheduleBatch' object has no attribute 'sample'")


def test_cli_names_the_releases_that_have_the_missing_name(kb_dir):
    result = run_ask("--json", VERL_IMPORT, kb=kb_dir)
    assert result.returncode in (0, 3), result.stderr.decode()
    symbol = json.loads(result.stdout)["symbol"]
    assert (symbol["kind"], symbol["owner"], symbol["name"]) == ("name", "sglang.srt.utils", "get_ip")
    assert symbol["releases"][0] == "0.4.2" and symbol["releases"][-1] == "0.5.2"
    assert symbol["in_user_version"] is False
    assert 'pip install "sglang==0.5.2"' in symbol["advice"]

    text = run_ask(VERL_IMPORT, kb=kb_dir).stdout.decode()
    assert "SGLang releases: `get_ip` can be imported from `sglang.srt.utils` in SGLang 0.4.2–0.5.2" in text


def test_a_name_no_release_has_says_so_and_invents_no_version(assistant):
    answer = assistant.answer(OLD_SCRIPT)
    symbol = answer.to_json()["symbol"]
    assert symbol["releases"] == [] and "No SGLang release 0.4.0–" in symbol["summary"]
    assert 'pip install "sglang==' not in symbol["advice"]


def test_other_libraries_get_no_sglang_releases(assistant):
    answer = assistant.answer("from transformers import Qwen3VLForConditionalGeneration\n"
                              "ImportError: cannot import name 'Qwen3VLForConditionalGeneration' from 'transformers'")
    assert answer.symbol is None and answer.to_json()["symbol"] is None


def test_web_and_slack_show_the_releases(assistant):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_sections

    answer = assistant.answer(VERL_IMPORT)
    page = answer_markdown(answer)
    assert "**SGLang releases:**" in page and "0.4.2–0.5.2" in page
    slack = "\n".join(answer_sections(answer))
    assert "*SGLang releases:*" in slack and "0.4.2–0.5.2" in slack
