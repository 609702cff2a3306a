"""Reading whole server logs as operators paste them (round 29's second trial).

A request SGLang logs quotes the user's prompt and the model's answer: an error message quoted
there is data, not the server's error, nor a version the user runs. A C++ backtrace's frames say
where, not what. A log that logrotate truncated while SGLang wrote starts with NUL bytes. Whether
the server had served before it failed decides which entry of a kill or timeout applies."""

from __future__ import annotations

import io

import pytest

from assistant.phase import paste_phase
from assistant.pipeline import lines_from_bytes
from assistant.trace import analyze

SERVING = "".join(
    f"[2025-10-20 01:07:{i:02d} TP0] Decode batch. #running-req: 15, #token: 218304, token usage: 0.49, "
    f"cuda graph: True, gen throughput (token/s): 2296.78, #queue-req: 2, \n" for i in range(10))

PROMPT_QUOTES_AN_ERROR = """\
[2025-10-02 04:12:56] Receive: obj=GenerateReqInput(rid='8a1f', text='<|im_start|>user\\nMy app fails with "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static." and I run pip install sglang==0.1.0, why?<|im_end|>', sampling_params={'temperature': 0.7}, stream=True)
[2025-10-02 04:12:56 TP0] Prefill batch. #new-seq: 1, #new-token: 311, #cached-token: 0, token usage: 0.02, #running-req: 3, #queue-req: 0, 
[2025-10-02 04:12:58 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/layers/attention/flashinfer_backend.py", line 512, in forward_extend
    o = prefill_wrapper_paged.forward(
RuntimeError: CUDA error: an illegal memory access was encountered
"""

KILLED_AFTER_SERVING = """\
[2025-10-20 01:00:05 TP0] Load weight begin. avail mem=78.49 GB
[2025-10-20 01:00:35 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=63.46 GB, mem usage=15.03 GB.
[2025-10-20 01:01:02] The server is fired up and ready to roll!
""" + SERVING + """\
[2025-10-20 03:12:44] Child process unexpectedly failed with an exit code 9. pid=18833
Killed
[Mon Oct 20 03:12:44 2025] Out of memory: Killed process 18833 (sglang::schedul) total-vm:182233412kB, anon-rss:118223104kB, file-rss:102400kB, shmem-rss:0kB, UID:0 pgtables:240812kB oom_score_adj:0
"""

WATCHDOG_BACKTRACE = """\
[rank2]:[E0812 09:32:37.412886731 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=884213, OpType=ALLREDUCE, NumelIn=8192, NumelOut=8192, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.
Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f2b1a5785e8 in /usr/local/lib/python3.12/dist-packages/torch/lib/libc10.so)
frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x23d (0x7f2ad4a6fa6d in /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so)
"""


def test_a_logged_prompt_is_data_not_the_servers_error_or_version():
    analysis = analyze(PROMPT_QUOTES_AN_ERROR)
    assert not any("Not enough memory" in e.text for e in analysis.errors)
    assert analysis.environment.sglang_version != "0.1.0"
    assert analysis.errors[0].text.startswith("RuntimeError: CUDA error: an illegal memory access")


@pytest.mark.slow
def test_a_logged_prompt_does_not_choose_the_fix(assistant):
    answer = assistant.answer(PROMPT_QUOTES_AN_ERROR)
    assert answer.matches[0].id != "kv-cache-not-enough-memory"
    # an illegal memory access inside flashinfer is still one: its diagnosis is the lead
    assert (answer.outcome, answer.matches[0].id) == ("lead", "illegal-memory-access")


def test_a_cpp_backtrace_frame_is_not_the_root_error():
    analysis = analyze(WATCHDOG_BACKTRACE)
    assert not any(e.text.startswith("frame #") for e in analysis.errors)
    assert any(line.startswith("frame #1: c10d::ProcessGroupNCCL") for line in analysis.native_lines)


def test_a_log_that_starts_with_a_block_of_nul_bytes_is_read():
    data = b"\x00" * 70000 + b"[2025-10-01 10:00:00] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"
    lines = list(lines_from_bytes(io.BufferedReader(io.BytesIO(data))))
    assert lines and "Not enough memory" in lines[0]


def test_whether_the_server_served_before_it_failed():
    assert paste_phase(analyze(KILLED_AFTER_SERVING)) == "serving"
    starting = KILLED_AFTER_SERVING.split("[2025-10-20 01:01:02]")[0] + "Killed\n"
    assert paste_phase(analyze(starting)) == "startup"
    assert paste_phase(analyze("Killed\n")) is None


def test_when_the_user_says_it_did_not_fail_is_not_when_it_failed():
    said = "Can anyone help? The server gets killed only under concurrent traffic and {}.\nKilled\n"
    assert paste_phase(analyze(said.format("not at startup"))) is None
    assert paste_phase(analyze(said.format("always at startup"))) == "startup"
    assert paste_phase(analyze("服务不是启动时挂的，是跑了一段时间后挂的\nKilled\n")) == "serving"


@pytest.mark.slow
def test_a_kill_after_hours_of_serving_is_not_the_load_time_kill(assistant):
    answer = assistant.answer(KILLED_AFTER_SERVING)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "host-oom-killed-during-load")
    assert answer.matches[0].id == "container-oom-killed-while-serving"


def test_a_models_active_parameter_count_is_not_a_gpu():
    assert analyze("8 GPUs serving Qwen/Qwen3-235B-A22B\nValueError: boom").environment.gpu is None
    assert analyze("8x A100 GPU\nValueError: boom").environment.gpu == "A100"


def test_a_gpu_a_message_requires_is_not_the_users_gpu():
    required = ("RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability"
                " >= 9.0 or 8.9, or ROCm MI300+")
    assert analyze(required).environment.gpu is None
    assert analyze("on 8x MI300X\n" + required).environment.gpu == "MI300X"


def test_a_radeon_named_as_the_users_gpu_makes_the_paste_amd():
    assert analyze("2x AMD Radeon PRO W7900 GPUs\nValueError: boom").environment.hardware == "amd"
    assert analyze("8x H100 GPU\nValueError: boom").environment.hardware != "amd"


def test_an_nccl_host_prefix_is_not_a_second_node():
    from assistant.decision import _several_nodes
    host_prefix = ("node7:2211:2211 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>\n"
                   "node7:2211:2290 [0] NCCL WARN socketStartConnect: Connect to 10.0.0.7<45121> failed\n")
    assert not _several_nodes(analyze(host_prefix), {})
    assert _several_nodes(analyze("the hang happens on node 1 only\n" + host_prefix), {})


@pytest.mark.slow
def test_a_tools_own_sglang_version_gate_is_the_downstream_entry(assistant):
    answer = assistant.answer(
        "Traceback (most recent call last):\n"
        '  File "/home/user/LLaMA-Factory/src/llamafactory/extras/misc.py", line 95, in check_version\n'
        "    require_version(requirement, hint)\n"
        '  File "/opt/conda/lib/python3.11/site-packages/transformers/utils/versions.py", line 44, in _compare_versions\n'
        "    raise ImportError(\n"
        "ImportError: sglang>=0.4.5 is required for a normal functioning of this module, but found sglang==0.4.3.post2.\n")
    assert (answer.outcome, answer.matches[0].id) == ("fix", "downstream-tool-needs-other-sglang")


@pytest.mark.slow
def test_a_single_machine_hang_is_not_pinned_on_the_multi_node_entry(assistant):
    answer = assistant.answer(
        "single machine, 4x L40S, it hangs forever here:\n"
        "$ python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct-AWQ --tp 4 --port 30000\n"
        "[2025-10-01 10:00:11 TP0] Init torch distributed begin.\n"
        "[2025-10-01 10:00:11 TP1] Init torch distributed begin.\n"
        "[2025-10-01 10:00:13 TP0] sglang is using nccl==2.27.3\n")
    assert not (answer.outcome != "unknown" and answer.matches[0].id == "multinode-init-hang-socket-ifname")


@pytest.mark.slow
def test_a_gpu_that_fell_off_the_bus_is_a_hardware_fault_not_a_kernel_to_debug(assistant):
    answer = assistant.answer(
        "[2025-12-03 04:10:53 TP2] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 812, in replay\n'
        "    self.graphs[self.bs].replay()\n"
        "torch.AcceleratorError: CUDA error: unspecified launch failure\n"
        "$ dmesg | grep -i nvrm | tail -1\n"
        "[1822331.118236] NVRM: Xid (PCI:0000:41:00): 79, pid=0, name=, GPU has fallen off the bus.\n")
    assert (answer.outcome, answer.matches[0].id) == ("fix", "gpu-hardware-fault-xid-ecc")


def test_sglangs_error_about_a_request_is_still_an_error():
    analysis = analyze("[2025-11-13 03:12:44] Error in request: Invalid request obj=GenerateReqInput(text='hi') "
                       "ValueError: bad sampling params")
    assert analysis.errors and analysis.errors[0].text.startswith("Error in request:")
