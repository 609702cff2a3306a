"""Reports of an upgrade regression (round 47): a user who says a failure came with a new SGLang
release ("worked on 0.4.6, half the throughput on 0.4.7") is first pointed at bisecting the
releases, unless an entry matches their error line; a release change of another package, or a
user who rules a regression out, is no such report."""

from __future__ import annotations

import pytest

from assistant.pipeline import lines_from_text
from assistant.trace import analyze_lines
from assistant.upgrade import reports_regression

BISECT = "regression-after-sglang-upgrade-bisect"

SLOWER_AFTER_UPGRADE = (
    "Since we moved our Qwen3-32B-FP8 deployment (4x RTX 6000 Ada, --tp-size 4) from SGLang 0.4.6 to 0.4.7 "
    "the decode speed fell from about 75 tok/s to 40 tok/s. Nothing else changed, same launch command:\n"
    "python -m sglang.launch_server --model-path Qwen/Qwen3-32B-FP8 --tp-size 4 --reasoning-parser qwen3\n")

ONE_RELEASE_WORKS = (
    "Our Qwen2.5-72B-Instruct server (--tp 4 on 4x A100) works on 0.5.5, but with 0.5.6 the same command "
    "gives noticeably worse answers on our eval set.\n")

UPGRADED_TO_ONE_RELEASE = (
    "After upgrading to 0.5.10 the EAGLE accept length of GLM-4.5-Air-FP8 stays at 1 and generation is slower; "
    "on the earlier image it was around 3.\n")


@pytest.mark.parametrize("paste", [SLOWER_AFTER_UPGRADE, ONE_RELEASE_WORKS, UPGRADED_TO_ONE_RELEASE])
def test_a_report_that_a_new_release_made_it_worse_leads_with_bisecting_the_releases(assistant, paste):
    answer = assistant.answer(paste)
    assert answer.matches[0].id == BISECT


def test_an_upgrade_report_with_a_known_error_line_keeps_the_entry_for_that_line(assistant):
    paste = ("After upgrading sglang to 0.4.6 the server no longer starts:\n"
             "RuntimeError: flashinfer_python is installed with version 0.2.2, "
             "but sglang requires flashinfer_python with minimum required version 0.2.3\n")
    answer = assistant.answer(paste)
    assert answer.matches[0].id == "flashinfer-version-mismatch"


@pytest.mark.parametrize("paste", [
    # another package's release change
    "Everything was fine with mooncake-transfer-engine 0.3.9; after upgrading mooncake to 0.3.11 every PD request fails.\n",
    # the user rules a regression out
    "The prefill hang shows on v0.5.16 and the same hang was seen on v0.5.14 (not a regression).\n",
    # a release change that broke nothing
    "We upgraded to 0.5.9 last week. How do I set the chunked prefill size for a 32k context?\n",
])
def test_no_regression_is_read_where_the_words_report_none(paste):
    assert not reports_regression(analyze_lines(lines_from_text(paste)))


def test_a_regression_report_told_in_words_gets_the_bisect_entry_as_a_lead_whatever_it_runs_with(assistant):
    # words and a launch command only: the release change is the evidence for the triage entry,
    # and the quantization the run used is no reason against an entry about any regression
    paste = ("[Bug] v0.4.6.post4 run DeepSeek-V3-0324 error\n"
             "sglang v0.4.4 is OK, but v0.4.6 is not.\n"
             "python3 -m sglang.launch_server --quantization fp8 --kv-cache-dtype fp8_e5m2 "
             "--model /models/DeepSeek-V3-0324 --tp 8 --port 80 --disable-cuda-graph\n"
             "Serving DeepSeek-V3-0324 with TP8, FP8 and an fp8_e5m2 KV cache: the same command works "
             "in the v0.4.4 image but fails in v0.4.6.post4.\n")
    answer = assistant.answer(paste)
    assert answer.matches[0].id == BISECT
    assert answer.outcome == "lead"
    assert not any("runs with" in str(reason) or "words only" in str(reason) for reason in answer.reasons)
