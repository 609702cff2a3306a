"""Reports told in words (no log): one that repeats the words only a few entries use — a flag, a
field, the entry's own name for what goes wrong, at least one of them from a symptom of the entry —
gets that entry's fix; one that shares only the entry's area (the words of its title) still gets
no fix (`assistant.distinctive_terms`, `assistant.decision`)."""

from __future__ import annotations

import pytest

# the EPLB entry's flags and its observable (the answer goes bad after the rebalance), no log line
EPLB_GARBLED = (
    "Mixtral-8x22B on 8x H20, sglang 0.5.4, tp 8 ep 8, --enable-eplb --eplb-rebalance-num-iterations 200 "
    "--ep-num-redundant-experts 8. Short prompts look fine. With max_tokens 4096 the first part of the reply "
    "reads well and then it goes bad halfway through; the benchmark accuracy falls from 90 to 61.")
# the JSON-schema keywords the grammar backend accepts and does not enforce, named by the user
SCHEMA_KEYWORDS_IGNORED = (
    "sglang 0.5.2 with the default grammar backend, Llama-3.1-8B. My json_schema has \"uniqueItems\": true, "
    "\"multipleOf\": 5 and \"maxLength\": 5 for the strings, but the replies contain duplicate items, numbers "
    "like 12 and strings longer than 5. Status is 200.")


@pytest.mark.parametrize("paste, entry", [
    (EPLB_GARBLED, "eplb-output-garbled-after-rebalance"),
    (SCHEMA_KEYWORDS_IGNORED, "json-schema-unsupported-by-grammar-backend"),
])
def test_a_report_in_words_that_names_the_entrys_distinctive_terms_gets_its_fix(assistant, paste, entry):
    answer = assistant.answer(paste)
    assert answer.matches[0].id == entry
    assert answer.outcome == "fix"


# EPLB too, but slower while it rebalances with correct answers: the EPLB entry's area (its
# title's words), not its case (answers garbled after the rebalance)
EPLB_SLOWER = ("With --enable-eplb on DeepSeek-V3, the server log prints the rebalance message every few minutes "
               "and throughput drops by a third while it runs. Answers stay correct.")


def test_a_report_in_words_that_shares_only_the_entrys_area_gets_no_fix(assistant):
    answer = assistant.answer(EPLB_SLOWER)
    assert answer.outcome != "fix"
