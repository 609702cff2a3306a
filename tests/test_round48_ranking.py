"""Ranking (round 48, h6): a word much of the KB writes, such as `tool_calls`, `response_format` or
`github.com`, is what a report is about, not the error line of one entry. Written by the user, it no
longer counts as partial signature evidence for the one entry whose error line happens to hold it,
so it cannot lift that entry over the one the report describes; a rare identifier (`cuda_fp8.h`)
still counts."""

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
