"""A how-to question is answered with the flags it is about, quoted from SGLang's own help text,
and with whether the user's release has them; on every surface, escaped like any other data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.flag_reference import flags_for_question
from assistant.flags import FlagRegistry
from tests.conftest import run_ask


@pytest.fixture(scope="module")
def registry() -> FlagRegistry:
    return FlagRegistry.load()


def _names(question: str, registry: FlagRegistry, version: str | None = None) -> list[str]:
    return [f.name for f in flags_for_question(question, registry, version)]


def test_a_described_feature_gets_its_flags(registry):
    assert "--speculative-algorithm" in _names("How do I enable speculative decoding with EAGLE?", registry)
    assert "--tool-call-parser" in _names("how to enable tool calling for qwen", registry)
    assert {"--nnodes", "--dist-init-addr"} <= set(_names("How do I run DeepSeek-R1 on two nodes?", registry))
    assert _names("Which attention backend should I use on H100?", registry)[0] == "--attention-backend"


def test_a_chinese_question_is_read_through_the_glossary(registry):
    assert "--speculative-algorithm" in _names("如何开启EAGLE投机解码？", registry)
    assert _names("怎么配置PD分离", registry)[0] == "--disaggregation-mode"


def test_a_named_flag_comes_first_with_its_help_and_choices(registry):
    refs = flags_for_question("sglang 怎么设置 --attention-backend 比较合适", registry)
    assert refs[0].name == "--attention-backend"
    assert "attention" in refs[0].help and "triton" in refs[0].choices
    assert refs[0].help_release == registry.latest
    # an abbreviation is the flag it resolves to
    assert _names("what does --mem-fraction do?", registry)[0] == "--mem-fraction-static"


def test_a_flag_the_users_release_lacks_says_so(registry):
    ref = next(f for f in flags_for_question("how do I set --max-lora-rank?", registry, "0.4.6"))
    assert ref.name == "--max-lora-rank" and ref.in_user_release is False
    assert "Not in SGLang 0.4.6: it exists in 0.4.10-" in ref.line("0.4.6")
    assert flags_for_question("how do I set --tp-size?", registry, "0.4.6")[0].in_user_release is True


def test_a_newer_flag_the_help_text_points_to_says_which_releases_have_it(registry):
    """The newest help says `--enable-dp-attention` is deprecated for `--attn-dp-size`, a flag only
    the last releases have: without a version, and on an older one, the answer says so."""
    newest_only = registry.check("--attn-dp-size").versions
    assert newest_only and len(newest_only) < len(registry.versions)
    ref = flags_for_question("how do I enable --enable-dp-attention?", registry)[0]
    assert ref.name == "--enable-dp-attention" and "--attn-dp-size" in ref.help
    assert f"(`--attn-dp-size`: SGLang {newest_only[0]}" in ref.line()
    on_046 = flags_for_question("how do I enable --enable-dp-attention?", registry, "0.4.6")[0]
    assert on_046.in_user_release is True
    assert "(`--attn-dp-size`: SGLang" in on_046.line("0.4.6")
    on_newest = flags_for_question("how do I enable --enable-dp-attention?", registry, newest_only[-1])[0]
    assert "(`--attn-dp-size`" not in on_newest.line(newest_only[-1])


def test_common_words_alone_get_no_flags(registry):
    assert _names("how do I make it faster?", registry) == []
    assert _names("为什么吞吐很低，怎么调优？", registry) == []
    # one word of a long flag name is a coincidence, not the question's subject
    assert "--decoupled-spec-role" not in _names("what role does the system message play?", registry)


def test_a_registry_without_help_texts_gives_none(tmp_path: Path):
    release = {"flags": ["--help", "--speculative-algorithm"], "env_vars": [], "legacy_env_vars": []}
    path = tmp_path / "flags.json"
    path.write_text(json.dumps({"format": 1, "versions": {"0.4.1": release}}))
    assert flags_for_question("how do I enable speculative decoding?", FlagRegistry.load(path)) == []
    assert flags_for_question("how do I enable speculative decoding?", None) == []


QUESTION = "I run sglang 0.4.6. How can I serve a LoRA adapter?"


@pytest.fixture(scope="module")
def question(assistant):
    return assistant.answer(QUESTION)


def test_the_answer_to_a_question_carries_its_flags(question):
    assert question.question and question.outcome in ("lead", "unknown") and question.fix == []
    names = [f.name for f in question.flags]
    assert "--lora-paths" in names and "--enable-lora" in names
    assert "flags below are what SGLang's own help says" in question.diagnosis or question.outcome == "lead"
    target = next(f for f in question.flags if f.name == "--lora-paths")
    assert target.in_user_release is True


def test_cli_text_and_json_show_the_flags(kb_dir):
    text = run_ask(QUESTION, kb=kb_dir)
    assert text.returncode == 3
    out = text.stdout.decode()
    assert "Flags your question is about (help text of SGLang" in out
    assert "`--lora-paths`: The list of LoRA adapters to load." in out
    as_json = json.loads(run_ask(QUESTION, "--json", kb=kb_dir).stdout)
    flag = next(f for f in as_json["flags"] if f["name"] == "--lora-paths")
    assert flag["in_user_release"] is True and flag["help"].startswith("The list of LoRA adapters")
    # an error report gets no flag list
    error = json.loads(run_ask("RuntimeError: Not enough memory. Please try to increase "
                               "--mem-fraction-static.", "--json", kb=kb_dir).stdout)
    assert error["flags"] == []


def test_web_and_slack_show_the_flags_with_the_help_text_escaped(question):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_messages

    page = answer_markdown(question)
    assert "**Flags your question is about" in page and "`--lora-paths`" in page
    # the help text's `<PATH> | <NAME>=<PATH>` is shown as text, not read as HTML tags
    assert "&lt;PATH>" in page and "<PATH>" not in page
    slack = "\n".join(b["text"]["text"] for m in answer_messages(question) for b in m["blocks"]
                      if b["type"] == "section")
    assert "Flags your question is about" in slack and "`--lora-paths`" in slack
    assert "&lt;PATH&gt;" in slack and "<PATH>" not in slack


def test_flag_question_cases_are_valid_and_split(registry):
    from evals.flag_questions import load

    cases = load()
    assert len({c.id for c in cases}) == len(cases) >= 60
    assert {c.split for c in cases} == {"dev", "heldout"}
    latest = registry.releases[registry.latest]
    assert all(flag in latest.flag_help for c in cases for flag in c.flags)
    assert any(not c.flags for c in cases)   # some questions no flag answers


def test_flag_eval_scores_hits_precision_and_quiet():
    from evals.flag_questions import score

    rows = [{"question": True, "expected": ["--a", "--b"], "shown": ["--a", "--x"]},
            {"question": True, "expected": ["--c"], "shown": []},
            {"question": False, "expected": [], "shown": []},
            {"question": True, "expected": [], "shown": ["--y"]}]
    figures = score(rows)
    assert figures["hit"] == 0.5 and figures["recall"] == 1 / 3 and figures["precision"] == 0.5
    assert figures["quiet"] == 0.5 and figures["read_as_question"] == 0.75


def test_an_endpoint_in_the_question_is_not_what_it_asks_about(registry):
    names = _names("can I add and remove LoRA adapters while the server runs, and pick which adapter "
                   "a /v1/chat/completions request uses?", registry)
    assert "--chat-template" not in names and "--completion-template" not in names
    assert any("lora" in name for name in names)


def test_prefill_and_decode_servers_on_one_node_are_pd_disaggregation(registry):
    names = _names("how do I set up 1 prefill + 2 decode servers with the router on a single 8xH100 node?",
                   registry)
    assert names[0] == "--disaggregation-mode"
    assert "--nnodes" not in names
