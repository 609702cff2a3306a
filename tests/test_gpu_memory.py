"""What an out-of-memory message's numbers tell an operator, on every surface.

torch prints capacity, free memory, this process's share and every other process's share under
"CUDA out of memory"; the answer reads them so that another job holding the GPU is told apart
from SGLang filling it. Message formats are torch's own (2.0, 2.1+, inside a container, ROCm)."""

from __future__ import annotations

import json

import pytest

from assistant.gpu_memory import parse_oom
from tests.conftest import run_ask

OTHER_JOB = (
    "[2025-03-02 11:20:41 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 1999, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
    "23.53 GiB of which 20.38 MiB is free. Including non-PyTorch memory, this process has 1.81 GiB memory in "
    "use. Process 5403 has 21.69 GiB memory in use. Of the allocated memory 1.34 GiB is allocated by PyTorch, "
    "and 94.59 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
    "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
OWN_MEMORY = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.48 GiB. GPU 1 has a total capacity of "
    "79.15 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 78.02 GiB memory in "
    "use. Of the allocated memory 74.51 GiB is allocated by PyTorch, with 80.15 MiB allocated in private pools "
    "(e.g., CUDA Graphs), and 2.03 GiB is reserved by PyTorch but unallocated.")


def test_another_job_holding_the_gpu_is_named_with_its_share():
    memory = parse_oom(OTHER_JOB)
    assert (memory.gpu, memory.capacity, memory.this_process) == (0, 23.53, 1.81)
    assert memory.others == ((5403, 21.69),) and memory.others_hold_memory()
    assert "other processes held 21.69 GiB (process 5403 21.69 GiB)" in memory.reading()
    assert "nvidia-smi --query-compute-apps" in memory.reading()


def test_sglang_filling_the_gpu_itself_is_not_blamed_on_others():
    memory = parse_oom(OWN_MEMORY)
    assert not memory.others_hold_memory()
    assert memory.graph_pools == pytest.approx(80.15 / 1024) and memory.unused_reserved == 2.03
    # 2.03 GiB reserved-but-unused is more than the 1.48 GiB request: fragmentation, said as such
    assert "fragmented rather than exhausted" in memory.reading()
    assert "Other processes" not in memory.reading()


def test_in_a_container_torch_lists_its_own_process_too():
    """Without "this process" (PID namespaces hide it), one listed process is this one: a single
    big process is SGLang itself, two big ones mean the GPU is shared."""
    alone = parse_oom("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB "
                      "of which 1.94 GiB is free. Process 428408 has 77.15 GiB memory in use.")
    assert alone.this_process is None and not alone.others_hold_memory()
    shared = parse_oom("CUDA out of memory. Tried to allocate 38.00 MiB. GPU 0 has a total capacity of 23.65 GiB "
                       "of which 39.44 MiB is free. Process 21068 has 16.12 GiB memory in use. "
                       "Process 21070 has 6.87 GiB memory in use.")
    assert shared.others_hold_memory()
    assert "processes on it held 22.99 GiB" in shared.reading()


def test_old_torch_and_rocm_messages_are_read():
    old = parse_oom("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
                    "capacity; 75.20 GiB already allocated; 1.50 GiB free; 76.80 GiB reserved in total by PyTorch)")
    assert (old.gpu, old.capacity, old.free, old.requested) == (0, 79.15, 1.50, 2.0)
    hip = parse_oom("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 60.00 GiB. GPU 3 has a total "
                    "capacity of 191.98 GiB of which 40.10 GiB is free.")
    assert hip.gpu == 3 and "single large tensor" in hip.reading()
    npu = parse_oom("RuntimeError: NPU out of memory. Tried to allocate 20.00 GiB (NPU 0; 60.96 GiB total capacity; "
                    "44.10 GiB already allocated; 44.10 GiB current active; 15.20 GiB free; 44.50 GiB reserved in "
                    "total by PyTorch)")
    assert (npu.device, npu.gpu, npu.capacity, npu.free) == ("NPU", 0, 60.96, 15.20)
    assert npu.reading().startswith("A 20.00 GiB allocation failed on NPU 0 (60.96 GiB in total, 15.20 GiB free).")
    assert parse_oom("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.") is None


def test_cli_json_web_and_slack_show_the_reading(kb_dir, assistant):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_sections

    result = run_ask("--json", OTHER_JOB, kb=kb_dir)
    assert result.returncode in (0, 3), result.stderr.decode()
    memory = json.loads(result.stdout)["gpu_memory"]
    assert memory["others_hold_memory"] is True
    assert memory["other_processes"] == [{"pid": 5403, "gib": 21.69}] and memory["this_process_gib"] == 1.81
    assert "GPU memory at the failure: A 20 MiB allocation failed on GPU 0" in run_ask(OTHER_JOB, kb=kb_dir).stdout.decode()

    answer = assistant.answer(OTHER_JOB)
    assert "**GPU memory at the failure:**" in answer_markdown(answer)
    assert "*GPU memory at the failure:*" in "\n".join(answer_sections(answer))
    assert assistant.answer("RuntimeError: Not enough memory. Please try to increase "
                            "--mem-fraction-static.").to_json()["gpu_memory"] is None


NOT_ENOUGH_AFTER_LOAD = (
    "[2025-08-10 10:00:01 TP0] Load weight end. type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, "
    "avail mem=2.10 GB, mem usage=21.43 GB.\n"
    "[2025-08-10 10:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 1290, in init_memory_pool\n'
    '    raise RuntimeError(\n'
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
    "Current value: self.server_args.mem_fraction_static=0.75\n")


def test_weights_that_fill_the_gpu_say_raising_the_fraction_is_no_fix(kb_dir, assistant):
    """21.43 GB of weights on a card with 23.53 GB free: the usual advice (raise
    --mem-fraction-static) cannot work, and the answer says what can."""
    result = run_ask("--json", NOT_ENOUGH_AFTER_LOAD, kb=kb_dir)
    load = json.loads(result.stdout)["load_memory"]
    assert load["weights_fill_gpu"] is True and load["weights_gb"] == 21.43
    assert "raising it is no fix" in load["summary"] and "--tp" in load["summary"]
    # weights that leave room say nothing: the entry's own advice stands
    roomy = NOT_ENOUGH_AFTER_LOAD.replace("avail mem=2.10 GB, mem usage=21.43 GB", "avail mem=60.10 GB, mem usage=15.00 GB")
    assert assistant.answer(roomy).load_memory is None
