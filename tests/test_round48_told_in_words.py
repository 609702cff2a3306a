"""Round 48: a report whose pasted traceback is cut off before its error line (it ends on a frame,
its source line or `...`) and whose only error line is the user's own (the title quoting the
message, a sentence) is judged on its words, as a report in words: the entry's error lines are
missing because they were cut, not because the run did not print them. So a title that quotes an
entry's message gets that entry's fix instead of "none of this entry's error lines occurs in your
log"; a cut traceback that draws an entry only by its frames (where it failed, not what) gets no
fix."""

from __future__ import annotations

MINICPMV = "minicpmv-version-not-supported"

FRAMES = """[2025-09-02 10:11:12] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 2510, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/opt/venv/lib/python3.10/site-packages/sglang/srt/model_executor/model_runner.py", line 280, in initialize
    self.load_model()
"""
TITLE_QUOTES_ERROR = ("Currently, MiniCPMV only supports versions 2.6???\n"
                      "python -m sglang.launch_server --model-path openbmb/MiniCPM-V-4_5 --trust-remote-code\n"
                      + FRAMES)
KERNELS = "hf-kernels-015-revision-or-version-required"
# the user elides the rest of the traceback (`...`) under a title that names the conflict
TITLE_NAMES_CONFLICT = """[Bug] kernels 0.15.2 conflicts with transformers 5.6.0 after pip install sglang
$ python3 -m sglang.launch_server --help
Traceback (most recent call last):
  File "/venv/lib/python3.12/site-packages/sglang/__init__.py", line 31, in <module>
    _apply_hf_patches()
  File "/venv/lib/python3.12/site-packages/sglang/srt/utils/hf_transformers_patches.py", line 59, in apply_all
    _patch_removed_symbols()
  ...
"""
FRAMES_ONLY = ("Piecewise graph compilation for prefill on our NPU box: capture breaks once num_tokens reaches 2048\n"
               "python -m sglang.launch_server --model-path /models/Qwen3-8B --device npu --attention-backend ascend "
               "--tp-size 4 --enable-piecewise-cuda-graph\n") + """[2025-11-19 07:27:12 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/home/sglang/python/sglang/srt/model_executor/piecewise_cuda_graph_runner.py", line 215, in __init__
    self.capture()
  File "/home/sglang/python/sglang/srt/model_executor/piecewise_cuda_graph_runner.py", line 324, in capture
    self.capture_one_batch_size(num_tokens)
  File "/home/sglang/python/sglang/srt/model_executor/piecewise_cuda_graph_runner.py", line 414, in run_once
    self.model_runner.mo...
"""


def _shown(answer):
    """What a user reads in `ask --json`: the outcome, the entry it is about and the reasons."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"] if shown["matches"] else None, shown["reasons"]


def test_a_cut_traceback_under_a_title_quoting_the_error_gets_the_entrys_fix(assistant):
    outcome, top, reasons = _shown(assistant.answer(TITLE_QUOTES_ERROR))
    assert (outcome, top) == ("fix", MINICPMV)
    assert not any("None of this entry's error lines" in reason for reason in reasons)


def test_a_traceback_the_user_elides_under_a_title_naming_the_conflict_gets_its_fix(assistant):
    assert _shown(assistant.answer(TITLE_NAMES_CONFLICT))[:2] == ("fix", KERNELS)


def test_a_cut_traceback_that_draws_an_entry_only_by_its_frames_gets_no_fix(assistant):
    assert _shown(assistant.answer(FRAMES_ONLY))[0] != "fix"
