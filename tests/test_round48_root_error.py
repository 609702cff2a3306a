"""Which line of the paste is the root error (round 48, h9), as the operator sees it in the answer:
an error the user quotes inside their sentence ("dies with "Capture cuda graph failed: ..."") is
shown as that quote, not as the whole sentence around it; a report whose title is the program's
exception keeps that exception as the root when the text below only retells it in the user's words;
and a sentence announcing "the below error" is not itself the error."""

from __future__ import annotations

from assistant.pipeline import lines_from_text
from assistant.trace import analyze_lines


def _root(paste: str) -> str | None:
    root = analyze_lines(lines_from_text(paste)).root_line
    return root.text if root else None


def test_an_error_quoted_in_the_users_sentence_is_shown_without_the_sentence(assistant):
    paste = ("DeepSeek-V3 with MTP plus --enable-torch-compile on 8x H20, sglang 0.5.0rc0. Dies at startup "
             "with \"Capture cuda graph failed: CUDA out of memory\".\n"
             "Without torch compile it starts.\n")
    answer = assistant.answer(paste)
    assert answer.primary_error == "Capture cuda graph failed: CUDA out of memory"


def test_an_exception_quoted_in_backticks_is_the_root_error():
    paste = ("MI250X node, ROCm 6.2.1: even `torch.randn(3).to('cuda')` fails with "
             "`RuntimeError: HIP error: invalid device function`. With AMD_LOG_LEVEL=5:\n"
             ":3:hip_platform.cpp         :715 : 8802962852 us: [pid:19349 tid:0x14dec9d33080] init: "
             "Returned hipErrorNoBinaryForGpu : continue parsing remaining modules\n")
    assert _root(paste) == "RuntimeError: HIP error: invalid device function"


def test_the_titles_exception_is_the_root_when_the_text_only_retells_it(assistant):
    paste = ("[Bug] RuntimeError: RMSNorm failed with error code invalid configuration argument\n"
             "python -m sglang.launch_server --model-path /models/gte-Qwen2-7B-instruct --is-embedding "
             "--tp 2 --dp 2 --enable-dp-attention\n"
             "When using sglang to run the embedding model with the OpenAI SDK, an empty input (input=\"\") "
             "reliably causes a RuntimeError: RMSNorm failed (invalid configuration argument).\n")
    answer = assistant.answer(paste)
    assert answer.primary_error == "RuntimeError: RMSNorm failed with error code invalid configuration argument"


def test_a_sentence_announcing_the_below_error_is_not_the_error():
    paste = ("[BUG]: prefill worker node can't reach decode worker node on multiple nodes\n\n"
             "on node2, can see the below error:\n"
             "2025-04-24T07:42:04.203Z  INFO nixl: NIXL is available\n"
             "2025-04-24T07:42:05.836Z  INFO serving.serve_http: PrefillWorker entrypoint created\n")
    analysis = analyze_lines(lines_from_text(paste))
    assert not any("below error" in e.text for e in analysis.errors)
