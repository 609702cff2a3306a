"""Ranking (round 48, h6): words that only name what a report is about are not an entry's error line.

A word much of the KB writes, such as `tool_calls`, `response_format` or `github.com`, written by the
user, no longer counts as partial signature evidence for the one entry whose error line happens to
hold it, so it cannot lift that entry over the one the report describes; a rare identifier
(`cuda_fp8.h`) still counts. And the words of a flag the user names (`--tool-call-parser`) are a
setting, not the words of an error message: they no longer nearly match `No tool call parser found
for tokenizer` and give that entry's fix to every tool-parsing report."""

from __future__ import annotations

# a streaming tool-call report: `tool_calls` is a topic word here, not a quoted error line
STREAMED_INDEX_WRONG = (
    "SGLang 0.4.6, Qwen3 with --tool-call-parser qwen25 and stream=true: multiple tool_calls in one "
    "response get an incorrect index in the stream chunks; the delta content is normal.")

# the user paraphrases the JIT error but keeps the one rare file name of its line
FP8_HEADER_MISSING = "FlashInfer JIT compile of the sampling kernel stops: the header cuda_fp8.h cannot be found by nvcc"


def _hits(assistant, text):
    hits = assistant.retriever.search(text, k=10).hits
    return {h.unit_id: h for h in hits}, [h.unit_id for h in hits]


def test_a_topic_word_is_no_evidence_of_an_entrys_error_line(assistant):
    hits, ranked = _hits(assistant, STREAMED_INDEX_WRONG)
    assert ranked[0] == "streaming-tool-calls-index-is-tools-list-position"
    # the entry about explicit nulls in stream deltas quotes a line holding `tool_calls`: sharing that
    # word alone used to give it signature evidence and the second place
    null_fields = hits.get("openai-stream-delta-explicit-null-fields")
    assert null_fields is None or null_fields.signature == 0.0
    assert "openai-stream-delta-explicit-null-fields" not in ranked[:2]


def test_a_rare_identifier_of_the_error_line_still_counts(assistant):
    hits, ranked = _hits(assistant, FP8_HEADER_MISSING)
    assert ranked[0] == "flashinfer-jit-missing-cuda-fp8-h"
    assert hits["flashinfer-jit-missing-cuda-fp8-h"].signature > 0


# tool-call reports that name the parser flag; neither holds the verl error `No tool call parser found`
PARSER_FLAG_REPORTS = (
    "Serving GLM-4.5-Air with --tool-call-parser glm45 and the tokenizer from the hub: the tool calls are "
    "not parsed, the raw call markup shows up in content instead of tool_calls.",
    "Kimi-K2 launched with --tool-call-parser kimi_k2, the tokenizer strips the special tokens so tool calls "
    "are not parsed and end up in the message content.",
)
VERL_AUTODETECT = "verl-sglang-multiturn-tool-parser-autodetect"


def test_a_flags_words_do_not_match_an_error_line(assistant):
    for report in PARSER_FLAG_REPORTS:
        answer = assistant.answer(report)
        # before, both were a confident fix from the verl parser-autodetect entry
        assert not (answer.outcome == "fix" and answer.matches[0].id == VERL_AUTODETECT)
        hits, _ = _hits(assistant, report)
        assert VERL_AUTODETECT not in hits or hits[VERL_AUTODETECT].signature == 0.0


def test_an_error_line_that_names_the_flag_still_matches(assistant):
    answer = assistant.answer("$ python -m sglang.launch_server --model-path Qwen/QwQ-32B --enable-reasoning\n"
                              "launch_server.py: error: unrecognized arguments: --enable-reasoning")
    assert answer.matches[0].id == "cli-flag-unrecognized"
