"""Round 49: an entry's scope read against the paste.

- An entry whose cause needs one CUDA major (`cuda: [13]`: CUDA 13 moved the CCCL headers, a CUDA 12
  kernel wheel beside a CUDA 13 torch) gives no confident fix to a paste whose toolkit, runtime or
  wheels are CUDA 12 and that names CUDA 13 nowhere; a paste that shows CUDA 13 still gets it.
- A library an error says is missing (`libnvrtc.so.12: cannot open shared object file`) is what is
  wanted, not the CUDA the paste runs.
- The words "CUDA graph" and torch's `torch.cuda` API are in every ROCm log too (HIP graphs are
  torch.cuda graphs): they do not make a ROCm paste read as NVIDIA.
- `ask kb check` rejects a `cuda` value that is not a CUDA major.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.kb import EntryError, parse_entry
from assistant.trace import analyze

REPO = Path(__file__).resolve().parents[1]
CCCL = "deepep-build-cuda13-cccl-cuda-std-tuple-not-found"
MISMATCH = "sgl-kernel-cuda12-cuda13-mismatch"

CCCL_BUILD = ("Building DeepEP for SGLang from source fails:\n"
              "/opt/nvshmem/include/device_host/nvshmem_tensor.h:37:10: "
              "fatal error: cuda/std/tuple: No such file or directory\n"
              "compilation terminated.\n"
              "error: command '/usr/bin/g++' failed with exit code 1\n")
NVRTC_MISSING = ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B fails at import:\n"
                 "  File \"/usr/local/lib/python3.10/dist-packages/sgl_kernel/__init__.py\", line 5, in <module>\n"
                 "    from sgl_kernel import common_ops\n"
                 "ImportError: libnvrtc.so.12: cannot open shared object file: No such file or directory\n")


def _shown(answer) -> tuple[str, str]:
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"] if shown["matches"] else None


def _fix_for(answer) -> str | None:
    outcome, entry = _shown(answer)
    return entry if outcome == "fix" else None


def test_a_cuda_12_toolkit_gets_no_fix_from_the_cuda_13_cccl_entry(assistant):
    paste = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.8, V12.8.93\n" + CCCL_BUILD
    assert _fix_for(assistant.answer(paste)) != CCCL


def test_a_cuda_13_toolkit_still_gets_the_cccl_fix(assistant):
    paste = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.48\n" + CCCL_BUILD
    assert _shown(assistant.answer(paste))[1] == CCCL


def test_a_cuda_12_torch_gets_no_fix_from_the_cuda_12_13_mismatch_entry(assistant):
    paste = "torch 2.6.0+cu124, sglang 0.5.4\n" + NVRTC_MISSING
    assert _fix_for(assistant.answer(paste)) != MISMATCH


def test_a_cuda_13_torch_beside_the_missing_cuda_12_library_keeps_the_mismatch_entry(assistant):
    paste = "torch 2.9.1+cu130, sglang 0.5.4\n" + NVRTC_MISSING
    assert _shown(assistant.answer(paste))[1] == MISMATCH


def test_the_missing_library_alone_is_no_cuda_version_of_the_paste():
    from assistant.cuda_major import paste_cuda_majors
    assert paste_cuda_majors(analyze(NVRTC_MISSING)) == frozenset()


def test_cuda_graph_words_and_torch_cuda_do_not_make_a_rocm_log_nvidia():
    log = "\n".join(["[2025-06-01 10:00:00 TP0] Capture cuda graph begin. This can take up to several minutes.",
                     "[2025-06-01 10:00:05 TP0] Capture cuda graph end. Time elapsed: 5.1 s",
                     "  File \"/opt/venv/lib/python3.10/site-packages/torch/cuda/graphs.py\", line 88, in replay",
                     "  File \"/opt/venv/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 954, in synchronize",
                     "torch 2.6.0+rocm6.3",
                     "RuntimeError: CUDA graph replay failed"])
    assert analyze(log).environment.hardware == "amd"


def test_a_cuda_error_line_still_reads_as_nvidia():
    assert analyze("RuntimeError: CUDA error: an illegal memory access was encountered").environment.hardware == "nvidia"


@pytest.mark.parametrize("value", ["[14]", "[cu130]", "13"])
def test_kb_check_rejects_a_cuda_value_that_is_not_a_major(value):
    text = (REPO / "kb" / "entries" / f"{CCCL}.md").read_text(encoding="utf-8")
    assert "cuda: [13]" in text
    with pytest.raises(EntryError, match="cuda"):
        parse_entry(text.replace("cuda: [13]", f"cuda: {value}", 1))
