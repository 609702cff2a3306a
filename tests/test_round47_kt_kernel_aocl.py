"""Round 47 (h4): a KTransformers kt-kernel built with the AMD BLIS backend that cannot resolve the
AOCL LPGEMM routine, at import ('undefined symbol: aocl_gemm_s8s8s32os32') or at compile time
(''aocl_gemm_s8s8s32os32' was not declared in this scope'), gets the fix that points the build at
AOCL-BLAS through CMAKE_ARGS, in the user's language."""

from __future__ import annotations

from assistant.render import render_text

ENTRY = "ktransformers-kt-kernel-amd-blis-aocl-gemm-unresolved"

IMPORT_FAILS = (
    "[kt-kernel] Error: AMD CPU 编译成功但提示 undefined symbol: aocl_gemm_s8s8s32os32\n"
    "系统：WSL Ubuntu 24.04，硬件：AMD Ryzen 7 5800H\n"
    "kt-kernel，可以编译成功，但在最终验证时提示异常：\n"
    "python -c \"from kt_kernel import KTMoEWrapper\"\n"
    "ImportError: undefined symbol: aocl_gemm_s8s8s32os32\n")

BUILD_FAILS = (
    "cd ktransformers/kt-kernel && ./install.sh\n"
    "/ktransformers/kt-kernel/operators/moe_kernel/mat_kernel/aocl_kernel/kernel.cpp:46:3: error: "
    "'aocl_gemm_s8s8s32os32' was not declared in this scope\n"
    "   46 |   aocl_gemm_s8s8s32os32(order, op_a, op_b, static_cast<dim_t>(m), static_cast<dim_t>(n),\n")


def _shown(answer):
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"]


def test_kt_kernel_that_cannot_resolve_the_aocl_routine_at_import_gets_the_blis_root_fix_in_chinese(assistant):
    answer = assistant.answer(IMPORT_FAILS)
    assert _shown(answer) == ("fix", ENTRY)
    text = render_text(answer)
    assert "CMAKE_ARGS=\"-DBLIS_ROOT=$AOCL_ROOT\"" in text       # the knob current setup.py still forwards
    assert "通过 CMAKE_ARGS" in text                               # written for the Chinese paste


def test_kt_kernel_build_whose_blis_header_lacks_the_aocl_routine_gets_the_same_fix(assistant):
    answer = assistant.answer(BUILD_FAILS)
    assert _shown(answer) == ("fix", ENTRY)
    assert "aocl_gemm add-on" in render_text(answer)
