"""Round 47: a report told in words that restates an entry's own account of its failure (its title
and one of its symptoms: the flag, the exact observable) gets that entry's fix once its words come
close to the bar, instead of a lead that is only "close in words"; a report from the same setup
that shares only the topic ("the reasoning output looks odd", "the Mamba cache hangs") still gets
a lead, never a fix."""

from __future__ import annotations

import pytest

CONTENT_NULL = "reasoning-parser-content-null"

SETUP = ("We run QwQ-32B on two A100s for an internal chatbot used by the support team, started with "
         "--reasoning-parser. ")
RESTATED = SETUP + ("The replies come back with content null; the entire answer is in reasoning_content instead, "
                    "so our frontend shows an empty bubble and the support people complain every morning.")
TOPIC_ONLY = SETUP + "The reasoning output looks odd to the support people now and then."


def _shown(answer):
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"] if shown["matches"] else None


def test_a_words_only_report_restating_the_entrys_symptom_gets_its_fix(assistant):
    assert _shown(assistant.answer(RESTATED)) == ("fix", CONTENT_NULL)


def test_the_same_setup_telling_only_the_topic_gets_the_entry_as_a_lead(assistant):
    assert _shown(assistant.answer(TOPIC_ONLY)) == ("lead", CONTENT_NULL)


@pytest.mark.parametrize("topic_only", [
    "A Qwen3-Next server with the Mamba radix cache hangs sometimes under load.",
    "Mamba radix cache: the server hangs.",
])
def test_a_report_sharing_only_the_topic_still_gets_a_lead(assistant, topic_only):
    assert _shown(assistant.answer(topic_only))[0] == "lead"
