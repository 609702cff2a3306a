"""Round 50 review leftovers, as a user sees them.

A GPU name is read only in the shapes real cards have: a link to a source line that an Ascend, ROCm
or MUSA report gives (`memory_pool_npu.py#L112`, `custom_all_reduce.py#L120`) names no NVIDIA card,
so `ask --json` does not report one and a ROCm paste is not turned into an NVIDIA one; Intel's Arc
B70 is no NVIDIA card either. Real names (`8x L40S`, `在L20上面`, `B30A`) still are.

An error message the user quotes in their sentence is read between one pair of marks: a backtick
inside a double-quoted message (`"RuntimeError: HIP error: `hipErrorNoBinaryForGpu` ..."`) is part
of it, not its end.
"""

from __future__ import annotations

import pytest

from assistant.trace import analyze

ASCEND_LINKED_LINE = (
    "Deploying Qwen3.5-122B on A2 (910B3) per the Ascend example, the NPU runs out of memory: the linear "
    "attention layer also calls set_kv_buffer (python/sglang/srt/hardware_backend/npu/memory_pool_npu.py#L112).\n"
    "[2026-03-03 03:53:36 TP2] Scheduler hit an exception: Traceback (most recent call last):\n"
    "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 2; 60.96 GiB total capacity)\n")
ROCM_LINKED_LINE = (
    "ROCm 6.3, the GPU faults in the custom all-reduce, see "
    "python/sglang/srt/distributed/device_communicators/custom_all_reduce.py#L120\n"
    "RuntimeError: HIP error: an illegal memory access was encountered\n")
MUSA_LINKED_LINE = (
    "sglang on Moore Threads cards: the device is not found (see utils.py#L40 for the GPU check)\n"
    "RuntimeError: MUSA error: invalid device ordinal\n")


def _detected(answer) -> tuple[str | None, str | None]:
    """What `ask --json` reports of the user's machine: the GPU it read and the hardware family."""
    detected = answer.to_json()["detected"]
    return detected.get("gpu"), detected.get("hardware")


def test_an_ascend_report_that_links_a_source_line_names_no_nvidia_card(assistant):
    assert _detected(assistant.answer(ASCEND_LINKED_LINE)) == (None, "ascend")


def test_a_rocm_paste_that_links_a_source_line_stays_a_rocm_paste(assistant):
    # the line anchor was read as an NVIDIA "L120", which then outvoted the ROCm words
    assert _detected(assistant.answer(ROCM_LINKED_LINE)) == (None, "amd")


def test_a_musa_paste_that_links_a_source_line_names_no_nvidia_card():
    environment = analyze(MUSA_LINKED_LINE).environment
    assert (environment.gpu, environment.hardware) == (None, "musa")


def test_intels_arc_card_is_no_nvidia_card():
    assert analyze("Garbage output on an Intel Arc Pro B70 GPU with the intel_xpu attention backend").environment.gpu is None


@pytest.mark.parametrize("paste, gpu", [
    ("Serving on 8x L40S: RuntimeError: CUDA error: out of memory", "L40S"),
    ("部署在L20上面，RuntimeError: CUDA error: out of memory", "L20"),
    ("GPU: 8x B30A (Blackwell)\nRuntimeError: CUDA error: out of memory", "B30A"),
    ("P/D on H20, RuntimeError: CUDA error: out of memory", "H20"),
    ("NVIDIA A10G, RuntimeError: CUDA error: out of memory", "A10G"),
])
def test_real_nvidia_cards_are_still_named(paste, gpu):
    environment = analyze(paste).environment
    assert (environment.gpu, environment.hardware) == (gpu, "nvidia")


def test_a_quoted_message_holding_backticks_is_read_whole():
    root = analyze('Startup fails with "RuntimeError: HIP error: `hipErrorNoBinaryForGpu` on gfx1100" every time').root_line
    assert root.text == "RuntimeError: HIP error: `hipErrorNoBinaryForGpu` on gfx1100"


def test_a_quoted_message_whose_closing_quote_is_straight_is_still_read():
    root = analyze("The server dies at startup with \u201cCapture cuda graph failed: CUDA out of memory\" on 0.5.2").root_line
    assert root.text == "Capture cuda graph failed: CUDA out of memory"
