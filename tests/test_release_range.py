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


def test_frames_of_known_releases_tell_a_current_traceback_from_an_old_one():
    from assistant.release_range import of_known_releases

    current = (("/x/sglang/srt/managers/scheduler.py", "event_loop_normal"),
               ("/x/sglang/srt/managers/schedule_batch.py", "prepare_for_extend"))
    assert of_known_releases(current)
    # the router/model_rpc modules of 0.1.x are gone from every release the registry holds
    old = (("/sglang/python/sglang/srt/managers/router/model_rpc.py", "forward_step"),)
    assert not of_known_releases(old)
    # a known module with a function it never had in 0.4.0+ may be older code
    assert not of_known_releases(current + (("/x/sglang/srt/managers/scheduler.py", "no_such_fn"),))
    assert not of_known_releases(())


OPEN_BELOW_TRACEBACK = """\
[2025-04-23 21:31:41 TP2] Scheduler hit an exception: Traceback (most recent call last):
  File "/env/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 618, in event_loop_normal
    batch = self.get_next_batch_to_run()
  File "/env/lib/python3.10/site-packages/sglang/srt/managers/schedule_batch.py", line 1138, in prepare_for_extend
    write_req_to_token_pool_triton[(bs,)](
  File "/env/lib/python3.10/site-packages/triton/runtime/jit.py", line 345, in <lambda>
    return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)
"""


@pytest.mark.slow
def test_an_entry_about_pre_0_4_releases_is_no_lead_for_a_traceback_of_current_code(assistant):
    # the frames exist in 0.4.0 (so the registry cannot rule out an older release), but a
    # traceback of code every current release has is read as a current one, as a paste with no
    # version is: an entry about 0.2.x, matched by words alone, is not pointed at
    retrieval = assistant.retrieve(OPEN_BELOW_TRACEBACK.splitlines())
    # the closest entry by words is bench_latency's KV-pool crash of SGLang 0.2.9 and older
    assert retrieval.hits[0].unit_id == "bench-latency-nonetype-evict-kv-pool-too-small"
    assert retrieval.outcome == "unknown"
    assert any("older than every release since 0.4.0" in r and "0.4.0 or later" in r
               for r in retrieval.decision.reasons)


def test_a_release_inside_the_affected_range_is_in_scope_even_after_a_partial_fix():
    from packaging.version import Version

    from assistant.release_range import scope_fits
    # one path was fixed in 0.4.6, another stayed broken until 0.5.1: 0.4.6.post5 is still affected
    assert scope_fits(Version("0.4.6.post5"), ">=0.4.2, <0.5.1", "0.4.6") is None
    assert scope_fits(Version("0.5.2"), ">=0.4.2, <0.5.1", "0.4.6") == "affected"
    # an entry without such a range: a release at or after the fix is fixed
    assert scope_fits(Version("0.5.10"), None, "0.5.9") == "fixed"
    assert scope_fits(Version("0.5.10"), ">=0.5.0", "0.5.9") == "fixed"


WARMUP_403_NO_VERSION = """\
The server quits by itself right after start-up, no version line in my log:
[2025-02-20 09:10:11] Initialization failed. warmup error: Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/entrypoints/http_server.py", line 548, in _wait_and_warmup
    assert res.status_code == 200, f"{res=}, {res.text=}"
AssertionError: res=<Response [403]>, res.text='<html><body>403 Forbidden</body></html>'
Killed
"""


def test_the_detected_releases_and_the_message_origin_tell_one_range(assistant):
    """The traceback's file dates the run to 0.4.2 or later, the assertion's wording exists only up to
    0.4.8: the Detected line says the range both allow, as 'Where it comes from' does."""
    from assistant.render import render_text

    answer = assistant.answer(WARMUP_403_NO_VERSION)
    assert answer.detected.sglang_releases == "0.4.2 to 0.4.8"
    assert answer.detected.sglang_releases_by == "both"
    text = render_text(answer)
    assert "SGLang 0.4.2 to 0.4.8 (by the files in your traceback and the releases that print its message)" in text


def test_a_chinese_answer_says_the_detected_releases_in_chinese(assistant):
    from assistant.render import render_text

    text = render_text(assistant.answer("服务启动后自己退出了，日志里没有版本号，怎么办？\n" + WARMUP_403_NO_VERSION))
    assert "SGLang 0.4.2 至 0.4.8" in text and "or later" not in text and " to 0.4.8" not in text
