"""Questions (issue 14): a how-to question gets no error fix, but a question that holds a known
error line reports that error, and a Chinese question is read the way its English twin is."""

from __future__ import annotations

import pytest

from assistant.intent import is_question

# (English, Chinese) pairs that say the same thing: each pair must be read the same way
REPORTS_IN_BOTH = [
    # a number the user finds bad is a report, not a purpose clause ("so that ...")
    ("Why is my throughput so low with Qwen2.5-7B on one H100?", "为什么 Qwen2.5-7B 在一张 H100 上吞吐这么低？"),
    ("Why is the GPU memory usage so high after warmup?", "为什么预热之后显存占用这么高？"),
    ("Why does the server stop at Capturing cuda graph?", "为什么服务停在 Capturing cuda graph 不动？"),
    ("Why can't the router connect to the workers?", "为什么 router 连不上 worker？"),
    ("Why does the server get killed while loading weights?", "为什么加载权重时服务被 kill 掉？"),
    ("How do I get rid of the warning 'Torch compile is disabled'?", "怎么去掉 'Torch compile is disabled' 这个警告？"),
    ("Does the scheduler leak host memory with --dp-size 2?", "--dp-size 2 时 scheduler 会不会泄漏主机内存？"),
    ("Why does the model give incorrect results with EPLB on?", "为什么开了 EPLB 之后结果不对？"),
]
QUESTIONS_IN_BOTH = [
    ("How do I enable DP attention?", "如何开启 DP attention？"),
    ("Is it possible to run two models on one GPU?", "是否可以在一张卡上跑两个模型？"),
    # a failure the user wants to avoid, in a clause of purpose, is not one they have
    ("How can I cap image resolution for Qwen2.5-VL so huge images don't blow up memory?",
     "如何限制 Qwen2.5-VL 的图片分辨率，以免大图撑爆显存？"),
]


@pytest.mark.parametrize("english, chinese", REPORTS_IN_BOTH)
def test_a_reported_failure_asked_about_is_a_report_in_either_language(english, chinese):
    assert not is_question(english, has_log_errors=False)
    assert not is_question(chinese, has_log_errors=False)


@pytest.mark.parametrize("english, chinese", QUESTIONS_IN_BOTH)
def test_a_how_to_question_is_a_question_in_either_language(english, chinese):
    assert is_question(english, has_log_errors=False)
    assert is_question(chinese, has_log_errors=False)


@pytest.mark.slow
def test_a_question_that_holds_an_entrys_error_line_gets_its_fix(assistant):
    # the user asks about the rule, but quotes the very line SGLang refuses the weight sync with
    retrieval = assistant.retrieve(["Is dp_size==1 really needed? The docs say dp_size must be 1 for update weights "
                                    "from distributed, and our RL server runs --dp-size 2."])
    assert not retrieval.decision.question
    assert retrieval.outcome == "fix"
    assert retrieval.hits[0].unit_id == "rl-weight-update-dp-size-replicas-rejected"


@pytest.mark.slow
def test_a_how_to_question_on_the_same_topic_still_gets_no_fix(assistant):
    retrieval = assistant.retrieve(["How do I sync weights from an RL trainer into an SGLang server started "
                                    "with --dp-size 2?"])
    assert retrieval.decision.question
    assert retrieval.outcome != "fix"


@pytest.mark.slow
def test_a_question_that_quotes_an_entrys_error_line_gets_its_fix(assistant):
    # the line sits inside the question's own sentence, in quote marks: no signature match sees it
    retrieval = assistant.retrieve(["Why does sglang say 'dp_size must be 1 or dp attention must be enabled for "
                                    "update weights from distributed' when verl syncs weights?"])
    assert not retrieval.decision.question
    assert retrieval.outcome == "fix"
    assert retrieval.hits[0].unit_id == "rl-weight-update-dp-size-replicas-rejected"


def test_only_a_quoted_specific_line_of_the_entry_counts():
    from assistant.quoted_line import quotes_entry_line

    meta = {"signatures": ["dp_size must be 1 or dp attention must be enabled for update weights from distributed",
                           "RuntimeError: CUDA error: out of memory"]}
    assert quotes_entry_line(meta, "Why does it say `dp_size must be 1 or dp attention must be enabled for update "
                                   "weights from distributed`?")
    # unquoted words, a short phrase, and a line many failures print name no entry
    assert not quotes_entry_line(meta, "Why must dp_size be 1 for update weights from distributed?")
    assert not quotes_entry_line(meta, "What does 'dp_size must be' mean?")
    assert not quotes_entry_line(meta, "Why do I get 'RuntimeError: CUDA error: out of memory' with --tp 2?")
