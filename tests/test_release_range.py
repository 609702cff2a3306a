"""A paste without a version line is dated by the SGLang files in its traceback, and an entry
about releases the traceback cannot come from is not given as the fix."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from assistant.release_range import module_of, release_range

REPO = Path(__file__).resolve().parent.parent
PP_MIXIN = ("/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler_pp_mixin.py", "event_loop_pp")
# event_loop_pp was a Scheduler method in 0.4.7-0.5.3, then moved into the mixin
OLD_SCHEDULER = ("/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", "event_loop_pp")

MODERN_SAMPLING_NAN = """\
[2026-04-13 10:35:45 PP1 TP7] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 3495, in dispatch_event_loop
    scheduler.event_loop_pp()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler_pp_mixin.py", line 122, in event_loop_pp
    d2h_event.synchronize()
RuntimeError: probability tensor contains either `inf`, `nan` or element < 0
"""


def test_a_file_path_names_its_module_in_a_wheel_and_in_a_checkout():
    assert module_of(PP_MIXIN[0]) == "sglang.srt.managers.scheduler_pp_mixin"
    assert module_of("/sgl-workspace/sglang/python/sglang/srt/layers/__init__.py") == "sglang.srt.layers"
    assert module_of(r"C:\venv\Lib\site-packages\sglang\launch_server.py") == "sglang.launch_server"
    assert module_of("/usr/lib/python3/dist-packages/torch/nn/modules/module.py") is None


def test_frames_bound_the_release_and_say_which_frame_did():
    newer = release_range((PP_MIXIN,))
    assert newer.releases[0] == "0.5.4" and newer.open_above and not newer.open_below
    assert newer.describe() == "0.5.4 or later"
    assert newer.evidence == ("scheduler_pp_mixin.py in event_loop_pp",)
    older = release_range((OLD_SCHEDULER,))
    assert (older.releases[0], older.releases[-1]) == ("0.4.7", "0.5.3")
    assert older.describe() == "0.4.7 to 0.5.3"


def test_frames_that_say_nothing_or_disagree_give_no_range():
    assert release_range(()) is None
    # a module every release has, with a function every release has: no information
    assert release_range((("/x/sglang/srt/managers/scheduler.py", "run_scheduler_process"),)) is None
    # a fork's module the registry never saw is ignored
    assert release_range((("/x/sglang/srt/my_fork_patch.py", "go"),)) is None
    # two frames that cannot both hold (a patched checkout, two installs in one log)
    assert release_range((PP_MIXIN, OLD_SCHEDULER)) is None


def test_a_range_conflicts_with_an_entry_only_when_no_release_in_it_fits():
    newer = release_range((PP_MIXIN,))
    assert newer.conflict("<0.2", None)
    assert newer.conflict("", "0.5.0")        # fixed before the oldest release the frames allow
    assert not newer.conflict(">=0.4.0", None)
    assert not newer.conflict("", "0.5.9")    # 0.5.4-0.5.8 still have the bug
    # open below: a range that reaches the registry's oldest release may be older still
    oldest = release_range((("/x/sglang/srt/managers/scheduler.py", "event_loop_normal"),
                            ("/x/sglang/srt/layers/sampler.py", "forward")))
    assert oldest is None or not oldest.conflict("<0.2", None)


def test_the_shipped_frame_table_is_derived_from_the_shipped_symbol_registry():
    from ingest.sglang_frames import frame_table

    with gzip.open(REPO / "kb" / "sglang_symbols.json.gz", "rt", encoding="utf-8") as handle:
        symbols = json.load(handle)
    with gzip.open(REPO / "kb" / "sglang_frames.json.gz", "rt", encoding="utf-8") as handle:
        shipped = json.load(handle)
    assert shipped == frame_table(symbols), "re-run: python -m ingest.sglang_frames"


@pytest.mark.slow
def test_an_entry_about_old_releases_is_no_fix_for_a_modern_traceback(assistant):
    from assistant.render import render_text

    # with no release shown, an entry about 2024's releases is a lead; with 0.1.x shown, the fix
    error = "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0"
    alone = assistant.retrieve([error])
    assert alone.hits[0].unit_id == "flashinfer-0.0.3-sampling-nan" and alone.outcome == "lead"
    dated = assistant.retrieve(["sglang 0.1.14", error])
    assert dated.hits[0].unit_id == "flashinfer-0.0.3-sampling-nan" and dated.outcome == "fix"

    modern = assistant.retrieve(MODERN_SAMPLING_NAN.splitlines())
    assert modern.outcome != "fix"
    assert any("comes from SGLang 0.5.10 or later" in r and "<0.2" in r for r in modern.decision.reasons)

    text = render_text(assistant.answer(MODERN_SAMPLING_NAN))
    assert "SGLang 0.5.10 or later (by the files in your traceback)" in text
