"""Round 51: "Where it comes from" names the site the paste shows, and a source checkout is no mixed install.

A trial on real reports found three wrong readings of where an error comes from: a bare
`AssertionError` shown with the condition of ANOTHER assert of the same function (the registry
keeps one bare assert per function) although Python 3.11+ printed the failing line under the frame;
`Capture cuda graph failed: ...` with no traceback attributed to a speculative-decoding runner the
user never enabled; and "the install mixes two releases' files" for SGLang run from a git checkout
(frames under <repo>/python/sglang/), which is one development commit, not a mix. The pastes are
made up in the shape of such reports.
"""

from __future__ import annotations

from assistant.provenance import origin_lines, paste_origin, paste_symbol, symbol_sentence
from assistant.trace import analyze

# Python 3.11+: the failing line of a multi-line assert is printed under the innermost frame
MAMBA_ASSERT_311 = """[2026-04-24 12:25:35] Scheduler hit an exception: Traceback (most recent call last):
  File "/home/dev/sglang/python/sglang/srt/managers/scheduler.py", line 3574, in run_scheduler_process
    scheduler = Scheduler(
                ^^^^^^^^^^
  File "/home/dev/sglang/python/sglang/srt/managers/scheduler.py", line 786, in init_cache_with_memory_pool
    self.tree_cache = MambaRadixCache(params)
                      ^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/sglang/python/sglang/srt/mem_cache/mamba_radix_cache.py", line 425, in __init__
    self.page_size == 1
AssertionError
"""
# the same failure as a paste that lost the source lines: nothing says which assert failed
MAMBA_ASSERT_NO_SOURCE = """[2026-04-24 12:25:35] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 3574, in run_scheduler_process
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 786, in init_cache_with_memory_pool
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/mem_cache/mamba_radix_cache.py", line 425, in __init__
AssertionError
"""
CAPTURE_FAILED = """Exception: Capture cuda graph failed: musaGraphDebugDotPrint is not supported now!
Possible solutions:
1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)
4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)
"""
PIECEWISE_ATTRIBUTE = """[2026-06-10 13:08:34 TP7] Piecewise CUDA Graph failed with error: 'TcPiecewiseForwardContext' object has no attribute 'num_tokens'
[2026-06-10 13:08:34 TP5] Scheduler hit an exception: Traceback (most recent call last):
  File "{root}/sglang/srt/managers/scheduler.py", line 4048, in run_scheduler_process
    scheduler = Scheduler(
  File "{root}/sglang/srt/managers/scheduler.py", line 817, in init_model_worker
    self.init_tp_model_worker()
  File "{root}/sglang/srt/model_executor/model_runner.py", line 2101, in init_piecewise_cuda_graphs
    self.piecewise_cuda_graph_runner = PiecewiseCudaGraphRunner(self)
AttributeError: 'TcPiecewiseForwardContext' object has no attribute 'num_tokens'
"""


def where_it_comes_from(paste: str) -> str:
    origin = paste_origin(analyze(paste))
    assert origin is not None
    return "\n".join(origin_lines(origin))


def test_a_bare_assert_shows_the_condition_python_printed_under_its_frame():
    shown = where_it_comes_from(MAMBA_ASSERT_311)
    assert "MambaRadixCache.__init__ fails an assert" in shown
    assert "when: self.page_size == 1" in shown
    assert "isinstance" not in shown   # another assert of the same __init__


def test_a_bare_assert_with_no_source_line_names_the_function_not_one_of_its_asserts():
    shown = where_it_comes_from(MAMBA_ASSERT_NO_SOURCE)
    assert "MambaRadixCache.__init__ fails an assert" in shown
    assert "when: one of its 3 asserts" in shown
    assert "isinstance" not in shown and "page_size" not in shown


def test_a_copy_of_a_text_in_the_speculative_runners_is_not_named_when_the_paste_never_enables_it():
    shown = where_it_comes_from(CAPTURE_FAILED)
    assert "raises Exception" in shown
    assert "speculative" not in shown.splitlines()[0]
    assert "cuda_graph_runner" in shown.splitlines()[0]
    assert "the same text is emitted at 5 other place(s)" in shown


def test_a_paste_that_enables_speculative_decoding_keeps_the_speculative_runner_possible():
    shown = where_it_comes_from("python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE\n"
                                + CAPTURE_FAILED)
    assert "sglang.srt.speculative." in shown.splitlines()[0]


def _symbol_note(root: str) -> str:
    """The symbol note of the piecewise-graph attribute paste with SGLang's files under `root`."""
    history = paste_symbol(analyze(PIECEWISE_ATTRIBUTE.format(root=root)))
    assert history is not None
    return str(symbol_sentence(history))


def test_a_source_checkout_is_not_called_a_mixed_install():
    text = _symbol_note("/home/dev/repos/sglang/python")
    assert "has the attribute `num_tokens` from SGLang 0.5.14 on" in text
    assert "the install mixes two releases' files" not in text
    assert "source checkout (`/home/dev/repos/sglang`)" in text
    assert "likely older than 0.5.14" in text and "git pull" in text


def test_an_installed_wheel_whose_own_code_asks_for_a_newer_name_is_still_a_mixed_install():
    text = _symbol_note("/usr/local/lib/python3.12/dist-packages")
    assert "the install mixes two releases' files" in text
    assert "source checkout" not in text


def test_a_text_several_sites_emit_dates_the_run_by_all_of_their_releases():
    # the chosen runner's copy exists only from 0.5.14 on, but other runners printed the same words
    # since 0.4.7: the message alone does not say the user runs 0.5.14 or later
    from assistant.provenance import dated_paste_environment, dated_reading

    reading = dated_reading(dated_paste_environment(analyze(CAPTURE_FAILED)))
    assert reading is not None
    assert str(reading).startswith("your paste's error message points to SGLang 0.4.7 or later")
