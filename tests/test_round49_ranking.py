"""Round 49: which entry ranks first.

- A paste that names no GPU, whose error line only an AMD/ROCm entry's signature matches (the HSA
  runtime's "Memory access fault by GPU node-N", a Triton conversion error in the ep_moe kernels),
  shows that ROCm entry first: the line is the sign of the platform, not words like "cuda graphs".
  A user who says the machine has no GPU still gets the entry for their platform first.
- An identifier shared with an entry's error line lifts it a little (a paraphrase that keeps
  `cuda_fp8.h`), but an exception's class (`openai_harmony.HarmonyError`, many messages) and the
  interpreter of a site-packages path (`python3.12`, every traceback) are no such identifier.
"""

from __future__ import annotations

from assistant.retrieve import identifier_match

ROCM_FAULT = "rocm-gpu-memory-fault-isolate"
ROCM_EP_MOE = "rocm-ep-moe-triton-f8e4m3fn-unsupported-conversion"
CPU_SETUP = "cpu-backend-device-cpu-setup"

HSA_FAULT = ("Memory access fault by GPU node-3 (Agent handle: 0x55d1c0a4e120) on address 0x7f2a11e00000. "
             "Reason: Page not present or supervisor privilege.\n")


def _first(answer) -> str:
    """The entry a user of `ask --json` sees first."""
    return answer.to_json()["matches"][0]["id"]


def test_a_hsa_memory_fault_with_cuda_graph_words_and_no_gpu_named_shows_the_rocm_entry_first(assistant):
    paste = ("Qwen2.5-7B crashes after a few hundred requests when cuda graphs are on; with "
             "--disable-cuda-graph it runs.\n"
             "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30000\n"
             + HSA_FAULT + "Aborted (core dumped)\n")
    assert _first(assistant.answer(paste)) == ROCM_FAULT


def test_a_triton_f8e4m3fn_conversion_error_in_ep_moe_with_no_platform_named_shows_the_rocm_entry_first(assistant):
    paste = ("Launching DeepSeek-V3 with --enable-ep-moe fails while compiling a kernel:\n"
             "/opt/sglang/python/sglang/srt/layers/moe/ep_moe/kernels.py:512:30: error: "
             "Unsupported conversion from 'f8E4M3FN' to 'f16'\n"
             "triton.compiler.errors.CompilationError: at 40:12:\n")
    assert _first(assistant.answer(paste)) == ROCM_EP_MOE


def test_a_user_who_says_the_machine_has_no_gpu_still_gets_the_cpu_entry_first(assistant):
    paste = "The machine has no GPU (cpu-only VM), I want to run sglang on CPU.\n" + HSA_FAULT
    assert _first(assistant.answer(paste)) == CPU_SETUP


def test_an_exception_class_alone_is_no_partial_evidence_of_an_entrys_error_line():
    signatures = ["openai_harmony.HarmonyError: unexpected tokens remaining in message header"]
    assert identifier_match(signatures, frozenset({"openai_harmony.harmonyerror"})) == 0.0


def test_the_python_version_of_a_traceback_path_is_no_partial_evidence_of_an_entrys_error_line():
    signatures = ['File "/usr/lib/python3.12/site-packages/flashinfer/jit/core.py", line 90, in build']
    assert identifier_match(signatures, frozenset({"python3.12"})) == 0.0


def test_an_identifier_of_the_error_itself_still_counts():
    signatures = ["fatal error: cuda_fp8.h: No such file or directory"]
    assert identifier_match(signatures, frozenset({"cuda_fp8.h"})) > 0.0
