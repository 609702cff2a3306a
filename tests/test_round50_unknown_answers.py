"""Round 50: a lead or unknown answer is still useful when the KB does not know the problem.

A trial with real reports the KB lacks (NVIDIA, AMD, Ascend, MUSA, XPU, CPU; English and Chinese)
found answers that said something false or asked for the wrong thing: "It would apply if your log
also shows" a traceback frame or a source line (neither is a message a log prints), two reasons
that contradict each other, a request asked for from a start-up log that never served one, a GPU
driver's fault report called "no error lines", a launch command asked for that the paste shows,
and a triage lead that never asks for the end of the traceback the paste cuts off. These tests
read what the user reads; the pastes are made up in the shape of such reports."""

from __future__ import annotations

from pathlib import Path

from assistant.kb import parse_entry
from assistant.lead_answer import confirm_lines, is_message_line
from assistant.render import render_text
from assistant.retrieve import Hit
from tests.answer_text import next_steps as _steps

KB_ENTRIES = Path(__file__).resolve().parent.parent / "kb" / "entries"

# a start-up log that stops on its progress lines, with no error line after them
STOPS_STARTING = """The server never comes up with my Llama model, it fails every time.
[2025-03-02 08:00:01 TP0] Init torch distributed begin.
[2025-03-02 08:00:03 TP0] Load weight begin. avail mem=78.50 GB
[2025-03-02 08:00:40 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB
[2025-03-02 08:00:41 TP0] Memory pool end. avail mem=8.20 GB
[2025-03-02 08:00:41 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=7.90 GB
"""
# the kernel log of an AMD GPU that faulted, and nothing from the server itself
DRIVER_FAULT = """Our MI300X server died in the middle of a benchmark run, the dmesg output at that time:
[Wed Apr  8 11:02:13 2026] amdgpu 0000:c1:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:169 vmid:2 pasid:32772)
[Wed Apr  8 11:02:13 2026] amdgpu 0000:c1:00.0: amdgpu:  in page starting at address 0x00007f0000000000 from client 10
"""
# the diffusion generator's own command line, then its start-up lines
OTHER_LAUNCHER = """sglang generate --model-path black-forest-labs/FLUX.1-dev --prompt "a red fox" --save-output
[03-01 10:00:00] Automatically enable dit_layerwise_offload for Flux for best performance
[03-01 10:00:02] Running pipeline stages: ['input_validation_stage', 'prompt_encoding_stage_primary']
the image never comes out, it just stops here
"""
# a consequence line, and the scheduler's traceback cut off before its exception line
CONSEQUENCE_AND_CUT_TRACEBACK = """[2025-06-10 12:00:00] Received sigquit from a child process. It usually means the child failed.
[2025-06-10 12:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2400, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 300, in __init__
    self.tp_worker = TpModelWorker(
"""
# start-up info lines of a hybrid GDN model, which bring a GDN entry close in part, no error line
GDN_INFO_LINES = """[2025-10-02 09:15:20 TP1] Load weight end. type=Qwen3NextForCausalLM, dtype=torch.bfloat16, avail mem=20.11 GB, mem usage=40.02 GB.
[2025-10-02 09:15:21 TP1] Hybrid GDN model detected, disable radix cache
[2025-10-02 09:15:21 TP0] Hybrid GDN model detected, disable radix cache
[2025-10-02 09:15:21 TP0] Mamba Cache is allocated. conv_state size: 0.03GB, ssm_state size: 1.20GB
"""


def test_a_start_up_log_that_stops_without_an_error_asks_for_what_follows_its_last_line(assistant):
    answer = assistant.answer(STOPS_STARTING)
    assert answer.outcome != "fix"
    steps = _steps(render_text(answer))
    assert steps[0].startswith("Your log stops while the server starts, after `Capture cuda graph begin.")
    assert "py-spy dump" in steps[0]
    # the server never served, so no request can show the problem
    assert not any(step.startswith("A request that shows it") for step in steps)


def test_a_chinese_reader_gets_where_the_start_up_stopped_in_chinese(assistant):
    answer = assistant.answer("服务每次启动都失败，日志如下：\n" + STOPS_STARTING.split("\n", 1)[1])
    steps = _steps(render_text(answer))
    assert steps[0].startswith("你的日志停在服务启动途中，最后一行是 `Capture cuda graph begin.")


def test_a_gpu_driver_fault_in_the_kernel_log_is_named_not_called_missing(assistant):
    answer = assistant.answer(DRIVER_FAULT)
    assert answer.outcome != "fix"
    text = render_text(answer)
    steps = _steps(text)
    assert steps[0].startswith("Your paste shows the GPU driver's own fault report from the kernel log")
    assert "shows none of its lines" not in text


def test_a_paste_with_another_sglang_launcher_is_not_asked_for_its_launch_command(assistant):
    answer = assistant.answer(OTHER_LAUNCHER)
    assert answer.outcome != "fix"
    assert not any(step.startswith("The exact launch command") for step in _steps(render_text(answer)))


def test_a_consequence_line_beside_a_cut_traceback_asks_for_that_tracebacks_end_first(assistant):
    answer = assistant.answer(CONSEQUENCE_AND_CUT_TRACEBACK)
    assert answer.outcome == "lead"
    assert _steps(render_text(answer))[0].startswith("The end of the traceback: your paste stops inside it")


def test_a_leads_reasons_do_not_contradict_each_other(assistant):
    answer = assistant.answer(GDN_INFO_LINES)
    reasons = answer.to_json()["reasons"]
    assert answer.outcome == "lead"
    says_none = [r for r in reasons if r.startswith("None of this entry's error lines occurs in your log")]
    says_part = [r for r in reasons if "only in part" in r]
    # "none occurs" and "they match in part" are one account, said once
    assert len(says_none) == 1 and says_part == says_none


def test_confirm_lines_are_what_a_log_prints_not_frames_or_source_lines():
    entry = parse_entry((KB_ENTRIES / "cuda-graph-capture-failed.md").read_text(encoding="utf-8"),
                        "cuda-graph-capture-failed.md")
    hit = Hit(unit_id=entry.id, kind="entry", title=entry.title, title_zh=entry.title_zh, url=None, score=0.0,
              lexical=0.0, dense=0.0, signature=0.0, evidence=(), meta={"signatures": list(entry.signatures)})
    confirm = confirm_lines(hit)
    assert not any(line.startswith("(") or line.endswith(",") for line in confirm)
    assert not is_message_line("(sum_len, batch.gathered_buffer.shape[1]),")
    assert not is_message_line('File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/attention/'
                               'triton_ops/extend_attention.py", line 605, in extend_attention_fwd')
    assert is_message_line("Memory access fault by GPU node-2 (Agent handle: 0x5d8b) on address 0x7f00. Reason: Unknown.")
    assert is_message_line("HSA_STATUS_ERROR_MEMORY_FAULT")
