"""A caption that lists the configuration ("Setup: DeepGEMM + FlashInfer + FP8 quantization ...") says
what the user runs with, not where the error arises: the answer never tells the user their error
arises in what their caption lists; an entry about none of it is still ruled out, said as "runs with"."""

from __future__ import annotations

CAPTION = "Setup: DeepGEMM + FlashInfer + FP8 quantization on 8xH200, the server crashes during warmup\n"
TRACEBACK_START = (
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2500, in run_scheduler_process\n'
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)\n")
PROGRAM_ERROR = (
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/tokenizer_manager.py", line 300, in __init__\n'
    "    self.tokenizer = get_tokenizer(server_args.tokenizer_path)\n"
    "KeyError: 'model_type'\n")
CAPTIONED_CONFIGURATION = ("flashinfer", "quantization", "deepgemm")


def _arises_in(reasons) -> list[str]:
    return [str(reason) for reason in reasons if "arises in" in str(reason)]


def test_a_configuration_caption_beside_the_programs_error_is_not_where_it_arises(assistant):
    answer = assistant.answer(CAPTION + TRACEBACK_START + PROGRAM_ERROR)
    assert answer.outcome != "fix"
    assert not any(name in " ".join(_arises_in(answer.reasons)) for name in CAPTIONED_CONFIGURATION), answer.reasons
    assert not set(CAPTIONED_CONFIGURATION) & set(answer.failing_components)
    # what the caption lists still rules out an entry about none of it, in words that say so
    assert any("runs with" in str(reason) for reason in answer.reasons), answer.reasons


def test_a_caption_with_a_traceback_cut_before_its_error_is_still_not_said_to_be_where_it_arises(assistant):
    answer = assistant.answer(CAPTION + TRACEBACK_START)
    assert answer.outcome != "fix"
    assert not any(name in " ".join(_arises_in(answer.reasons)) for name in CAPTIONED_CONFIGURATION), answer.reasons
