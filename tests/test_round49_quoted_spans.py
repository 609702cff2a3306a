"""Error lines quoted inside a sentence (issue 14): a span the user sets off in quote marks,
backticks or corner brackets that holds an entry's whole error line counts as that line pasted on
its own, not as words of their sentence; the same words without marks, and generic lines, count as
before."""

from __future__ import annotations

import pytest

from assistant.quoted_line import quoted_spans
from assistant.trace import analyze

DP_LINE = "dp_size must be 1 or dp attention must be enabled for update weights from distributed"
DP_ENTRY = "rl-weight-update-dp-size-replicas-rejected"


def test_the_spans_of_the_users_words_are_read_in_every_kind_of_mark():
    assert analyze(f'Why does sglang say "{DP_LINE}"?').quoted_spans == (DP_LINE,)
    assert quoted_spans(["启动时报「Failed to find C compiler」，怎么办？"]) == ("Failed to find C compiler",)
    assert quoted_spans(["it fails with \u201cFailed to find C compiler\u201d at start"]) == ("Failed to find C compiler",)
    # apostrophes are not quote marks: nothing between "doesn't" and "it's" is a quote
    assert quoted_spans(["it doesn't start and it's the same with --tp 2"]) == ()


@pytest.mark.slow
@pytest.mark.parametrize("question", [
    f'Why does sglang say "{DP_LINE}"?',
    f"RL weight sync fails: `{DP_LINE}` — what now?",
    f"权重同步报错「{DP_LINE}」，怎么办？",
])
def test_an_entrys_line_quoted_in_a_sentence_counts_as_that_line(assistant, question):
    retrieval = assistant.retrieve([question])
    top = retrieval.hits[0]
    assert top.unit_id == DP_ENTRY
    assert retrieval.outcome == "fix"
    # the quote, not the sentence around it, is the line the answer says it matched
    assert top.evidence[0] == DP_LINE
    # as strongly as the line pasted on its own
    alone = assistant.retrieve([DP_LINE]).hits[0]
    assert top.signature == pytest.approx(alone.signature, abs=0.01)


@pytest.mark.slow
def test_the_same_words_without_quote_marks_stay_the_users_sentence(assistant):
    top = assistant.retrieve([f"Why does sglang say {DP_LINE}?"]).hits[0]
    assert top.unit_id == DP_ENTRY
    assert top.signature < 0.3
    assert top.evidence[0].startswith("Why does sglang say")


@pytest.mark.slow
def test_a_line_with_quote_marks_of_its_own_is_still_quoted_whole(assistant):
    # the backticks around `kimi_k2` split the user's quote in two: the line is still theirs, and
    # the entry for the whole line, not the one for its second half, answers
    retrieval = assistant.retrieve(["I keep getting `has model type `kimi_k2` but Transformers does not recognize this "
                                    "architecture` with the Kimi EAGLE3 draft, any idea?"])
    top = retrieval.hits[0]
    assert top.unit_id == "eagle3-mla-draft-kimi-k2-needs-0-5-12"
    assert top.evidence[0] == "has model type `kimi_k2` but Transformers does not recognize this architecture"


@pytest.mark.slow
def test_a_quoted_generic_line_stays_generic(assistant):
    # `no kernel image` is printed by many failures: quoting it does not make it one entry's line
    quoted = assistant.retrieve(["启动时报 `CUDA error: no kernel image is available for execution on the device`"])
    assert quoted.hits[0].signature < 0.3
