"""Round 50: reading a real paste right, as a trial of fresh real reports found it wrong.

A GPU driver's kernel-log report (`NVRM: Xid ...`, `amdgpu ... page fault`) was read as no error
line at all; an Intel Xeon server on SGLang's CPU backend (`intel_amx_backend`) was not read as CPU
hardware, so a GPU-only Triton entry led without a word against it; a start-up log that stops after
`Load weight end` / `Mamba Cache is allocated` was not read as start-up, so the answer asked for a
request the server never served; and a script's `./x.sh: line 48: 28 Killed python3 ...` with one
space before the command was not read as the kill it reports. These tests read what the user reads;
the pastes are made up in the shape of such reports."""

from __future__ import annotations

from assistant.render import render_text
from tests.answer_text import next_steps as _steps

AMD_PAGE_FAULT = """Our MI300X node crashed during a benchmark, this is all dmesg has:
[Wed Apr  8 11:02:13 2026] amdgpu 0000:c1:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:169 vmid:2 pasid:32772)
[Wed Apr  8 11:02:13 2026] amdgpu 0000:c1:00.0: amdgpu:  in page starting at address 0x00007f0000000000 from client 10
"""
XID_THEN_EXCEPTION = """[ 8123.456789] NVRM: Xid (PCI:0000:3b:00): 13, pid=40211, name=python3, Graphics Exception: ESR 0x504648
[2026-03-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2400, in event_loop_normal
    next_token_ids = result.next_token_ids.tolist()
RuntimeError: CUDA error: an illegal memory access was encountered
"""
CPU_AMX_TRACEBACK = """[2026-06-15 10:02:11] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/.venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2700, in run_scheduler_process
    scheduler.event_loop_normal()
  File "/opt/.venv/lib/python3.12/site-packages/sglang/srt/layers/attention/intel_amx_backend.py", line 140, in forward_extend
    self.extend_attention_fwd(
  File "/opt/.venv/lib/python3.12/site-packages/sglang/srt/layers/attention/triton_ops/extend_attention.py", line 605, in extend_attention_fwd
    k_extend.stride(0),
AttributeError: 'NoneType' object has no attribute 'stride'
"""
# the CPU server's own ServerArgs dump says `device='cpu'`, whatever frames follow
CPU_SERVER_ARGS = """[2026-06-15 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, device='cpu', attention_backend='torch_native')
[2026-06-15 10:02:11] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/.venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2700, in run_scheduler_process
    scheduler.event_loop_normal()
RuntimeError: could not create a primitive descriptor for a matmul primitive
"""
# a hybrid (GDN / Mamba) model's start-up lines, and nothing after them
STOPS_AFTER_MAMBA_CACHE = """[2025-10-02 09:15:20 TP0] Load weight end. type=Qwen3NextForCausalLM, dtype=torch.bfloat16, avail mem=20.11 GB, mem usage=40.02 GB.
[2025-10-02 09:15:21 TP0] Mamba Cache is allocated. conv_state size: 0.03GB, ssm_state size: 1.20GB
"""
SCRIPT_KILLED = """The server dies while loading, my script prints:
[2025-05-01 10:00:00 TP0] Load weight begin. avail mem=78.50 GB
./start.sh: line 48: 28 Killed python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp 8
"""


def _root(text: str) -> str:
    """The line under "The root error as read from your paste:" ("" when the answer has none)."""
    marker = "The root error as read from your paste:"
    return text.split(marker, 1)[1].strip().splitlines()[0].strip() if marker in text else ""


def test_an_amdgpu_page_fault_in_the_kernel_log_is_the_root_error(assistant):
    text = render_text(assistant.answer(AMD_PAGE_FAULT))
    assert _root(text).startswith("amdgpu 0000:c1:00.0: amdgpu: [gfxhub] page fault")
    # and the step says what that line is, asking for the process's own lines from then
    assert _steps(text)[0].startswith("Your paste shows the GPU driver's own fault report from the kernel log")


def test_an_xid_is_the_root_error_alone_but_never_above_the_servers_python_exception(assistant):
    xid_alone = XID_THEN_EXCEPTION.split("\n", 1)[0]
    assert _root(render_text(assistant.answer(xid_alone))).startswith("NVRM: Xid (PCI:0000:3b:00): 13, pid=40211")
    answer = assistant.answer(XID_THEN_EXCEPTION)
    assert _root(render_text(answer)) == "RuntimeError: CUDA error: an illegal memory access was encountered"


def test_an_intel_amx_cpu_server_rules_out_an_nvidia_only_entry(assistant):
    answer = assistant.answer(CPU_AMX_TRACEBACK)
    text = render_text(answer)
    assert answer.outcome != "fix"
    if "kb:triton-attention-int32-index-overflow-illegal-memory-access" in text:
        assert "Your log is from cpu hardware; this entry is about nvidia." in text
    # the environment step is the CPU backend's, not a GPU's
    environment = next(step for step in _steps(text) if step.startswith("Environment:"))
    assert "lscpu" in environment and "CUDA" not in environment
    environment = next(step for step in _steps(render_text(assistant.answer(CPU_SERVER_ARGS)))
                       if step.startswith("Environment:"))
    assert "lscpu" in environment


def test_a_start_up_log_that_stops_after_the_mamba_cache_line_asks_for_what_follows(assistant):
    text = render_text(assistant.answer(STOPS_AFTER_MAMBA_CACHE))
    steps = _steps(text)
    assert steps[0].startswith("Your log stops while the server starts, after `Mamba Cache is allocated.")
    assert not any(step.startswith("A request that shows it") for step in steps)


def test_a_scripts_single_spaced_kill_report_is_the_error_and_its_command_the_launch(assistant):
    text = render_text(assistant.answer(SCRIPT_KILLED))
    assert _root(text) == "./start.sh: line 48: 28 Killed"
    assert "--model-path Qwen/Qwen3-235B-A22B --tp 8" in text
    assert "with no error line" not in text
