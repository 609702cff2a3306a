"""Answers that say where the error comes from and which pin fixes a dependency problem.

Uses the committed registries (kb/sglang_errors.jsonl.gz, kb/sglang_deps.json) and the real KB
index; the CLI is run as a user runs it."""

from __future__ import annotations

import json
import re

import pytest

from assistant.origin import DEFAULT_PATH as ERRORS_PATH
from assistant.origin import ErrorRegistry, match_origin
from tests.conftest import REPO, run_ask

pytestmark = pytest.mark.skipif(not ERRORS_PATH.exists(), reason="kb/sglang_errors.jsonl.gz not built")

NOT_ENOUGH_MEMORY = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
TORCH_OOM = """Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 100, in forward
    out = self.model(x)
  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 1736, in _wrapped_call_impl
    return forward_call(*args, **kwargs)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB is free."""
NCCL_WARN = ("node-1:1234:5678 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
             "10.0.0.2<43567> failed : Software caused connection abort")
KERNEL_TOO_OLD = """sglang                    0.5.2
sgl-kernel                0.3.5
Exception: sgl-kernel is installed with version 0.3.5, which is less than the minimum required version 0.3.9.post2. Please reinstall the latest version with `pip install sgl-kernel --force-reinstall`"""
KERNEL_IMPORT = """sglang                    0.5.2
sgl-kernel                0.3.5
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/site-packages/sglang/srt/layers/activation.py", line 40, in <module>
    from sgl_kernel import silu_and_mul
ImportError: cannot import name 'silu_and_mul' from 'sgl_kernel'"""
PIN_SENTENCE = 'your SGLang 0.5.2 pins sgl-kernel==0.3.9.post2; your paste shows 0.3.5'


def _json(*args, kb):
    result = run_ask("--json", *args, kb=kb)
    assert result.returncode in (0, 3), result.stderr.decode()
    return json.loads(result.stdout)


def test_sglang_message_shows_where_it_is_raised_in_text_and_json(kb_dir):
    paste = f"sglang==0.4.6\n{NOT_ENOUGH_MEMORY}"
    origin = _json(paste, kb=kb_dir)["origin"]
    assert origin["is_sglang"] and origin["package"] == "sglang"
    assert origin["module"] == "sglang.srt.model_executor.model_runner"
    assert origin["function"] == "ModelRunner.init_memory_pool" and origin["exception"] == "RuntimeError"
    assert "max_total_num_tokens <= 0" in origin["condition"] and "raise RuntimeError" in origin["context"]
    assert origin["first_release"] == "0.4.0" and "0.4.6" in origin["releases"]
    assert origin["in_user_version"] is True

    text = run_ask(paste, kb=kb_dir).stdout.decode()
    assert ("Where it comes from: SGLang: sglang.srt.model_executor.model_runner:"
            "ModelRunner.init_memory_pool raises RuntimeError") in text
    assert "when: self.max_total_num_tokens <= 0" in text
    assert "your SGLang 0.4.6 has this message" in text


def test_unknown_problem_says_the_emitting_code_after_the_outcome(kb_dir):
    result = run_ask("sglang 0.5.21\nValueError: Only ver=3 is supported for MUSA FA3.", kb=kb_dir)
    text = result.stdout.decode()
    assert text.startswith("UNKNOWN") or text.startswith("LEAD")
    lines = text.splitlines()
    where = next(i for i, line in enumerate(lines) if line.startswith("Where it comes from: SGLang: sglang.srt."))
    # the outcome in words and why come first; where it comes from sits with the root error
    assert lines[1].startswith(("This is not a known problem", "Not confirmed")) and where > 2
    assert "when: ver != 3" in text


# A log copied from the middle of a traceback (no `Traceback ...` header), with Python 3.11's
# markers under each source line, then the scheduler's own re-raise cut off after one frame.
CUT_ASSERT = """SGLang 0.5.3, AWQ MoE checkpoint, fails while loading.
  File "/venv/lib/python3.12/site-packages/sglang/srt/models/qwen3_moe.py", line 105, in __init__
    self.experts = get_moe_impl_class(quant_config)(
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.12/site-packages/sglang/srt/layers/moe/fused_moe_triton/layer.py", line 218, in __init__
    assert self.quant_method is not None
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
AssertionError

[2025-10-06 22:07:49 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2847, in run_scheduler_process
    scheduler = Scheduler("""


def test_a_cut_traceback_names_the_failed_assert_and_its_function(kb_dir):
    answer = _json(CUT_ASSERT, kb=kb_dir)
    origin = answer["origin"]
    assert origin["module"] == "sglang.srt.layers.moe.fused_moe_triton.layer"
    assert origin["function"] == "FusedMoE.__init__" and origin["kind"] == "assert"
    assert origin["condition"] == "self.quant_method is not None"   # the assert the user's frame shows
    text = run_ask(CUT_ASSERT, kb=kb_dir).stdout.decode()
    assert "AssertionError: assert self.quant_method is not None" in text
    assert "scheduler:" not in text.split("Where it comes from:")[1].splitlines()[0]
    assert "your SGLang version is not in the paste" not in text   # it is: 0.5.3


@pytest.mark.parametrize("paste,package", [(TORCH_OOM, "torch"), (NCCL_WARN, "nccl")])
def test_torch_and_nccl_errors_get_no_sglang_origin(kb_dir, paste, package):
    origin = _json(paste, kb=kb_dir)["origin"]
    assert origin is not None and origin["is_sglang"] is False and origin["package"] == package
    assert "module" not in origin
    text = run_ask(paste, kb=kb_dir).stdout.decode()
    assert re.search(rf"not an SGLang message; the (?:frames point|error points) to {package}\b", text)
    assert "Where it comes from: SGLang:" not in text


def test_another_programs_paste_gets_no_sglang_site_for_a_message_they_share(kb_dir):
    # vLLM raises this check in the same words; a vLLM user's error does not come from SGLang's code
    paste = ("Image built from the vllm-gptq Dockerfile, Qwen-14B-Chat-Int4 with vllm --tensor-parallel-size 2:\n"
             "ValueError: The input size is not aligned with the quantized weight shape. "
             "This can be caused by too large tensor parallel size.")
    out = _json(paste, kb=kb_dir)
    assert out["origin"] is None or out["origin"]["is_sglang"] is False
    assert "Where it comes from: SGLang:" not in run_ask(paste, kb=kb_dir).stdout.decode()


def test_dependency_fix_carries_the_exact_pin_and_command(kb_dir):
    out = _json(KERNEL_TOO_OLD, kb=kb_dir)
    dependency = out["dependency"]
    assert dependency["package"] == "sgl-kernel" and dependency["pinned_spec"] == "==0.3.9.post2"
    assert dependency["installed_version"] == "0.3.5" and dependency["satisfied"] is False
    assert dependency["install_command"] == 'pip install "sgl-kernel==0.3.9.post2"'
    assert out["outcome"] == "fix" and out["matches"][0]["id"] == "sgl-kernel-version-mismatch"
    first_step = out["answer"]["fix"][0]
    assert PIN_SENTENCE in first_step and '$ pip install "sgl-kernel==0.3.9.post2"' in first_step


def test_dependency_lead_suggests_the_pin_first(kb_dir):
    out = _json(KERNEL_IMPORT, kb=kb_dir)
    if out["outcome"] == "fix":   # the KB may grow a signature for this import; then it is a fix step
        assert PIN_SENTENCE in out["answer"]["fix"][0]
        return
    assert out["answer"]["fix"] == []
    assert out["next_steps"][0].endswith(PIN_SENTENCE + ': pip install "sgl-kernel==0.3.9.post2"')
    text = run_ask(KERNEL_IMPORT, kb=kb_dir).stdout.decode()
    assert any(line.startswith(f"Dependency: {PIN_SENTENCE}") for line in text.splitlines())


def test_no_pin_is_invented(assistant):
    answer = assistant.answer("sglang==0.5.6\nModuleNotFoundError: No module named 'acme_quantizer'")
    data = answer.to_json()["dependency"]
    assert data["package"] == "acme-quantizer" and data["pinned_spec"] is None
    assert data["install_command"] is None and "no pin is known for acme-quantizer" in data["summary"]
    assert "acme-quantizer==" not in answer.text and 'pip install "acme-quantizer' not in answer.text


def test_web_and_slack_show_the_origin(assistant):
    from ui.markdown import sources_markdown
    from ui.slack_format import answer_sections

    answer = assistant.answer(f"sglang==0.4.6\n{NOT_ENOUGH_MEMORY}")
    panel = sources_markdown(answer)
    assert "Where it comes from" in panel and "ModelRunner.init_memory_pool" in panel
    assert "max_total_num_tokens &lt;= 0" in panel   # the code, escaped, in the panel
    slack = "\n".join(answer_sections(answer))
    assert "*Where it comes from:*" in slack and "ModelRunner.init_memory_pool" in slack


def test_model_may_cite_the_emitting_code(assistant):
    from assistant.prompt import build_prompt
    from assistant.verify import Verifier

    retrieval = assistant.retrieve(f"sglang==0.4.6\n{NOT_ENOUGH_MEMORY}".splitlines())
    prompt = build_prompt(retrieval, assistant.retriever.index, assistant.registry)
    citation = "origin:sglang.srt.model_executor.model_runner:ModelRunner.init_memory_pool"
    assert citation in [s.citation for s in prompt.sources]
    assert "self.max_total_num_tokens <= 0" in prompt.messages[1]["content"]
    kept, dropped = Verifier(prompt, retrieval, assistant.registry).citations_of(
        [citation, "origin:sglang.srt.model_executor.model_runner", "origin:sglang.srt.made_up:f"])
    assert kept == [citation] and len(dropped) == 1


def test_origin_agrees_compares_emission_sites():
    from assistant.origin_check import origin_agrees

    entry = {"id": "test-not-enough-memory", "signatures": [NOT_ENOUGH_MEMORY]}
    assert origin_agrees(entry, match_origin([NOT_ENOUGH_MEMORY], "0.4.6")) is True
    other = match_origin(["AssertionError: tp_size must be divisible by number of nodes"], "0.5.9")
    assert origin_agrees(entry, other) is False
    assert origin_agrees(entry, match_origin(TORCH_OOM.splitlines())) is None
    assert origin_agrees({"id": "test-nccl", "signatures": [NCCL_WARN]}, other) is None


GOOD = (REPO / "kb" / "entries" / "flashinfer-jit-missing-cuda-fp8-h.md").read_text()


def _with_signature(signature: str, affected: str | None = None) -> str:
    text = GOOD.replace("signatures:\n", f"signatures:\n  - {json.dumps(signature)}\n", 1)
    if affected:
        text = text.replace('  affected: ">=0.4.0"', f'  affected: "{affected}"', 1)
    return text


@pytest.fixture
def entries(tmp_path):
    folder = tmp_path / "kb" / "entries"
    folder.mkdir(parents=True)
    return folder


def test_kb_check_warns_about_a_garbled_sglang_signature(entries):
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(_with_signature(
        "RuntimeError: Not enough memory. Please try to decrease --mem-fraction-static."))
    result = run_ask("kb", "check", kb=entries.parent)
    assert result.returncode == 0, result.stderr.decode()   # a warning does not fail the check
    err = result.stderr.decode()
    assert "warning:" in err and "flashinfer-jit-missing-cuda-fp8-h.md" in err
    assert "'decrease' where SGLang has 'increase'" in err and "ModelRunner.init_memory_pool" in err
    assert b"1 warnings: ok" in result.stdout


def test_kb_check_warns_when_the_message_is_outside_the_entry_versions(entries):
    from assistant.flags import FlagRegistry
    from assistant.kb import check_entries

    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(_with_signature(NOT_ENOUGH_MEMORY, ">=0.5.9"))
    report = check_entries(entries, FlagRegistry.load(), ErrorRegistry.load())
    assert report.ok
    assert any("only in releases 0.4.0–0.5.2" in w and ">=0.5.9" in w for w in report.warnings)


def test_kb_check_warns_when_the_message_appears_only_once_the_problem_is_fixed(entries):
    from assistant.kb import check_entries

    # SGLang prints this message in 0.4.0-0.5.2; an entry fixed in 0.4.0 cannot be about it
    fixed_before = _with_signature(NOT_ENOUGH_MEMORY).replace('  affected: ">=0.4.0"',
                                                              '  affected: ">=0.3.0"\n  fixed: "0.4.0"', 1)
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(fixed_before)
    report = check_entries(entries, None, ErrorRegistry.load())
    assert report.ok
    assert any("only in releases 0.4.0–0.5.2" in w and ">=0.3.0,<0.4.0" in w for w in report.warnings)
    fixed_after = fixed_before.replace('fixed: "0.4.0"', 'fixed: "0.5.3"')
    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(fixed_after)
    assert check_entries(entries, None, ErrorRegistry.load()).warnings == []


def test_kb_check_does_not_judge_other_libraries_lines(entries):
    from assistant.kb import check_entries

    (entries / "flashinfer-jit-missing-cuda-fp8-h.md").write_text(_with_signature(NCCL_WARN))
    report = check_entries(entries, None, ErrorRegistry.load())
    assert report.ok and report.warnings == []
