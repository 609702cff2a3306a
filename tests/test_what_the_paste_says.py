"""What the paste says about the failure, read as the operator meant it (round 31's trials).

- The operator's one-line summary above the log ("4x RTX 4090, sglang 0.5.9, --tp 2 crashes
  immediately") is not the log's root error.
- A Python warning (`hub.py:111: FutureWarning: ...`) is a warning, not the error.
- The unquantized method every bf16 layer runs (`layers/quantization/unquant.py`) is not where a
  quantization failure arises.
- NCCL's own `nNodes 1` says the launch runs on one node: a multi-node entry does not fit it.
- An error of no kind of its own (`CUDA error: invalid argument`) raised in an entry's function,
  among the traceback's innermost frames, is that entry's case.
- An out-of-memory raised in SGLang's tokenizer process (an image processor on GPU 0) lists SGLang's
  own scheduler as the other process holding the GPU: that is no job to stop.
- An exception raised while handling another ("During handling of the above exception") is that
  one's failure: the entry that explains the second explains the first.
"""

from __future__ import annotations

import pytest

from assistant.decision import failing_components, root_error
from assistant.trace import analyze

SUMMARY_ABOVE_SEGFAULT = """\
4x RTX 4090 workstation (no NVLink), sglang 0.5.9, --tp 2 crashes immediately, --tp 1 works.

[2025-12-10 18:30:21 TP0] Init torch distributed begin.
Fatal Python error: Segmentation fault

Thread 0x00007f3b2a3ff740 (most recent call first):
  File "/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 404 in ncclCommInitRank
  File "/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/pynccl.py", line 115 in __init__
  File "/venv/lib/python3.12/site-packages/sglang/srt/distributed/parallel_state.py", line 280 in __init__
[2025-12-10 18:30:23] Rank 0 scheduler is dead. Please check if there are relevant logs.
"""


def test_the_operators_summary_line_is_not_the_root_error():
    root = root_error(analyze(SUMMARY_ABOVE_SEGFAULT))
    assert root is None or not root.text.startswith("4x RTX 4090")
    # alone, the summary is all there is to read
    alone = analyze("sglang 0.5.9 --tp 2 crashes immediately, --tp 1 works\nSegmentation fault (core dumped)\n")
    assert alone.errors


@pytest.mark.slow
def test_a_summary_above_the_log_does_not_stop_the_fix_the_log_shows(assistant):
    answer = assistant.answer(SUMMARY_ABOVE_SEGFAULT)
    assert answer.outcome == "fix" and answer.matches[0].id == "pynccl-comm-init-segfault-gpu-p2p"
    assert not any("4x RTX 4090" in reason for reason in answer.reasons)


def test_a_python_warning_is_a_warning_not_the_error():
    log = ("/usr/local/lib/python3.12/dist-packages/transformers/utils/hub.py:111: FutureWarning: Using "
           "`TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.\n"
           "[2025-12-10 18:30:21 TP0] Init torch distributed begin.\n")
    errors = analyze(log).errors
    assert errors and all(e.kind == "warning" for e in errors)
    assert "transformers" not in failing_components(analyze(log))


def test_the_unquantized_layer_is_not_a_quantization_failure():
    trace = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/linear.py", line 432, in forward
    output_parallel = self.quant_method.apply(self, input_, bias)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/quantization/unquant.py", line 131, in apply
    return F.linear(x, layer.weight, bias)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is free.
"""
    assert "quantization" not in failing_components(analyze(trace))
    fp8 = trace.replace("unquant.py", "fp8.py").replace("F.linear(x, layer.weight, bias)", "apply_fp8_linear(x)")
    assert "quantization" in failing_components(analyze(fp8))


SINGLE_NODE_RCCL_HANG = """\
MI300X x8 bare metal, ROCm 6.3, sglang 0.5.5. TP8 start hangs forever, TP1 works.
[2025-11-21 09:00:04 TP0] Init torch distributed begin.
[2025-11-21 09:00:04 TP5] Init torch distributed begin.
mi300x-b07:2211:2211 [0] NCCL INFO Bootstrap : Using eno8303:10.3.1.17<0>
mi300x-b07:2211:2211 [0] NCCL INFO comm 0x5640c12f9a80 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0
mi300x-b07:2211:2211 [0] NCCL INFO P2P Chunksize set to 131072
"""


@pytest.mark.slow
def test_nccls_node_count_rules_out_a_multi_node_fix(assistant):
    answer = assistant.answer(SINGLE_NODE_RCCL_HANG)
    assert not (answer.outcome == "fix" and answer.matches[0].id == "multinode-init-hang-socket-ifname")
    two_nodes = assistant.answer(SINGLE_NODE_RCCL_HANG.replace("nNodes 1 localRanks 8", "nNodes 2 localRanks 4")
                                 .replace("MI300X x8 bare metal", "2 nodes of MI300X x4"))
    assert two_nodes.matches[0].id == "multinode-init-hang-socket-ifname"


CHAINED = """\
trying Qwen3-Next-80B-A3B-Instruct on our sglang 0.4.9.post6 image (transformers 4.53.2)
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/transformers/models/auto/configuration_auto.py", line 1271, in from_pretrained
    config_class = CONFIG_MAPPING[config_dict["model_type"]]
  File "/usr/local/lib/python3.10/dist-packages/transformers/models/auto/configuration_auto.py", line 966, in __getitem__
    raise KeyError(key)
KeyError: 'qwen3_next'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/hf_transformers_utils.py", line 119, in get_config
    config = AutoConfig.from_pretrained(
  File "/usr/local/lib/python3.10/dist-packages/transformers/models/auto/configuration_auto.py", line 1273, in from_pretrained
    raise ValueError(
ValueError: The checkpoint you are trying to load has model type `qwen3_next` but Transformers does not recognize this architecture.
"""


@pytest.mark.slow
def test_the_error_raised_while_handling_the_first_explains_it(assistant):
    answer = assistant.answer(CHAINED)
    assert answer.outcome == "fix" and answer.matches[0].id == "transformers-unknown-model-type"
    # two unrelated tracebacks one after the other are not a chain
    unchained = CHAINED.replace("During handling of the above exception, another exception occurred:", "")
    assert assistant.answer(unchained).outcome != "fix"


RAISED_IN_REGISTER_GRAPH_BUFFERS = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 466, in capture
    ), graph_capture() as graph_capture_context:
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/distributed/device_communicators/custom_all_reduce.py", line 257, in capture
    self.register_graph_buffers()
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/distributed/device_communicators/custom_all_reduce.py", line 302, in register_graph_buffers
    ops.register_graph_buffers(self._ptr, handles, offsets)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/distributed/device_communicators/custom_all_reduce_utils.py", line 412, in register_graph_buffers
    torch.ops.sgl_kernel.register_graph_buffers(fa, handles, offsets)
  File "/usr/local/lib/python3.10/dist-packages/torch/_ops.py", line 1243, in __call__
    return self._op(*args, **(kwargs or {}))
RuntimeError: CUDA error: invalid argument
"""
DEEPER = """\
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/logits_processor.py", line 301, in forward
    logits = self._get_logits(hidden_states, lm_head)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/vocab_parallel_embedding.py", line 488, in forward
    output = self.quant_method.apply(self, input_)
  File "/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py", line 2380, in linear
    return torch._C._nn.linear(input, weight, bias)
"""


@pytest.mark.slow
def test_a_kindless_error_raised_in_the_entrys_function_is_its_case(assistant):
    answer = assistant.answer(RAISED_IN_REGISTER_GRAPH_BUFFERS)
    assert answer.outcome == "fix" and answer.matches[0].id == "custom-allreduce-graph-capture-invalid-argument"
    # the same error raised far below that frame, in other code, is not told apart by it
    passed_through = RAISED_IN_REGISTER_GRAPH_BUFFERS.replace(
        '  File "/usr/local/lib/python3.10/dist-packages/torch/_ops.py"', DEEPER + '  File "/usr/local/lib/python3.10/dist-packages/torch/_ops.py"')
    assert assistant.answer(passed_through).outcome != "fix"


IMAGE_PROCESSOR_OOM = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_manager.py", line 692, in _tokenize_one_request
    mm_inputs: Dict = await self.mm_data_processor.process(
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/multimodal/processors/base_processor.py", line 612, in process_mm_data
    result = processor.__call__(
  File "/usr/local/lib/python3.12/dist-packages/transformers/image_processing_utils_fast.py", line 437, in rescale_and_normalize
    images = self.normalize(images.to(dtype=torch.float32), image_mean, image_std)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.09 GiB. GPU 0 has a total capacity of 23.53 GiB of which 312.44 MiB is free. Process 40112 has 17.21 GiB memory in use. Including non-PyTorch memory, this process has 5.81 GiB memory in use.
"""


def test_the_scheduler_beside_the_tokenizer_process_is_not_another_job():
    from assistant.gpu_memory import paste_gpu_memory

    memory = paste_gpu_memory(analyze(IMAGE_PROCESSOR_OOM))
    assert not memory.others_hold_memory()
    assert "SGLang's own scheduler" in memory.reading() and "stop them" not in memory.reading()
    # the same numbers in the scheduler's own traceback do show another job on the GPU
    in_scheduler = IMAGE_PROCESSOR_OOM.replace("sglang/srt/managers/tokenizer_manager.py", "sglang/srt/managers/scheduler.py")
    assert paste_gpu_memory(analyze(in_scheduler)).others_hold_memory()


NO_KERNEL_IMAGE = ("RuntimeError: RMSNorm failed with error code no kernel image is available for execution "
                   "on the device\n")


def test_the_gpu_generation_the_paste_runs_on_decides_between_old_and_new_gpu_entries(assistant):
    from assistant.gpu_arch import archs_in

    # the user's GPUs by name or device capability; the generation an error says a kernel needs is not theirs
    assert archs_in("4x Tesla T4 (sm_75)") == {75} and archs_in("RTX PRO 6000 Blackwell") == {120}
    assert archs_in("GB200 NVL72") == {100} and archs_in("compute capability 8.9") == {89}
    assert archs_in("flash_attn at sgl-kernel is only supported on sm90 and above") == frozenset()
    new_gpu = assistant.answer("Fresh install on an RTX 5090, sglang 0.5.2, it dies at the first request:\n"
                               + NO_KERNEL_IMAGE)
    assert new_gpu.outcome == "fix" and new_gpu.matches[0].id == "sgl-kernel-no-kernel-image-new-gpu"
    old_gpu = assistant.answer("4x Tesla T4, sglang 0.5.2, it dies at the first request:\n" + NO_KERNEL_IMAGE)
    assert not (old_gpu.outcome == "fix" and old_gpu.matches[0].id == "sgl-kernel-no-kernel-image-new-gpu")
    assert any("Turing (sm_75)" in reason for reason in old_gpu.reasons) or \
        old_gpu.matches[0].id != "sgl-kernel-no-kernel-image-new-gpu"


RESOLVER_CONFLICT = (
    'Trying to have both vllm and sglang in one env for A/B tests:\n'
    '$ pip install "sglang==0.5.6" "vllm==0.10.1.1"\n'
    '...\n'
    'ERROR: Cannot install sglang==0.5.6 and vllm==0.10.1.1 because these package versions have conflicting dependencies.\n'
    '\n'
    'The conflict is caused by:\n'
    '    sglang 0.5.6 depends on torch==2.9.1\n'
    '    vllm 0.10.1.1 depends on torch==2.7.1\n'
    '\n'
    'To fix this you could try to:\n'
    "1. loosen the range of package versions you've specified\n"
    '2. remove package versions to allow pip to attempt to solve the dependency conflict\n'
    '\n'
    'ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts\n'
    'Which sglang version uses torch 2.7.x?\n'
)


def test_the_packages_a_resolver_conflict_names_are_not_where_it_fails(assistant):
    answer = assistant.answer(RESOLVER_CONFLICT)
    assert "vllm" not in answer.failing_components
    assert answer.outcome == "fix" and answer.matches[0].id == "sglang-exact-pins-resolver-conflict"


def test_a_hardware_fault_beside_an_illegal_memory_access_is_the_cause(assistant):
    answer = assistant.answer(
        "[2025-11-02 03:12:40 TP5] Scheduler hit an exception: Traceback (most recent call last):\n"
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n"
        "$ dmesg -T | grep Xid\n"
        "[Sun Nov  2 03:12:44 2025] NVRM: Xid (PCI:0000:9d:00): 48, pid=2291311, name=sglang::schedul, An "
        "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 7, "
        "subpartition 0.\n")
    assert answer.outcome == "fix" and answer.matches[0].id == "gpu-hardware-fault-xid-ecc"


def test_a_report_whose_log_shows_no_error_is_not_told_to_find_the_first_error(assistant):
    quiet = assistant.answer(
        "GLM-4.5V on 8x H100 (--tp 8). On sglang 0.5.5 image answers are fine. After moving to 0.5.6 the same "
        "image+prompt gives garbage: repeated fragments, random Chinese/English mix. No errors or warnings in the log.\n"
        "Launch: python3 -m sglang.launch_server --model-path zai-org/GLM-4.5V --tp 8 --port 30000\n")
    assert quiet.abstained and quiet.detected.sglang_version == "0.5.6"
    assert any("--log-level debug" in step for step in quiet.next_steps)
    assert not any("grep -n -m1" in step for step in quiet.next_steps)
