"""Error origins and dependency advice: where an SGLang message is raised, and what to pip install.

The build test reads two small real release wheels from the cache (skipped when they are not
cached); the others use the committed kb/sglang_errors.jsonl.gz and kb/sglang_deps.json.
"""

from __future__ import annotations

import json
import time

import pytest

from assistant.deps import DependencyPins, dependency_advice
from assistant.origin import DEFAULT_PATH as ERRORS_PATH
from assistant.origin import ErrorRegistry, match_origin
from ingest.wheels import DEFAULT_CACHE_DIR, cached_wheel

NOT_ENOUGH_MEMORY = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."


@pytest.fixture(scope="module")
def small_build(tmp_path_factory):
    if not all(cached_wheel(v, DEFAULT_CACHE_DIR) for v in ("0.4.0", "0.4.1")):
        pytest.skip("sglang 0.4.0/0.4.1 wheels are not cached")
    from ingest.sglang_errors import main

    out_dir = tmp_path_factory.mktemp("kb")
    assert main(["--versions", "0.4.0", "0.4.1", "--router-versions", "--kernel-versions",
                 "--out-dir", str(out_dir)]) == 0  # fmt: skip
    return out_dir


def test_build_from_real_wheels_finds_where_a_message_is_raised(small_build):
    registry = ErrorRegistry.load(small_build / "sglang_errors.jsonl.gz")
    assert registry.releases["sglang"] == ["0.4.0", "0.4.1"]
    origin = match_origin([NOT_ENOUGH_MEMORY], version="0.4.1", registry=registry)
    assert origin.is_sglang
    assert origin.module == "sglang.srt.model_executor.model_runner"
    assert origin.function == "ModelRunner.init_memory_pool"
    assert origin.exception == "RuntimeError"
    assert "max_total_num_tokens <= 0" in origin.condition
    assert origin.releases == ("0.4.0", "0.4.1") and origin.in_user_version is True

    deps = json.loads((small_build / "sglang_deps.json").read_text())
    flashinfer = deps["releases"]["0.4.1"]["flashinfer"]
    assert flashinfer["source"] == "metadata" and flashinfer["spec"]


@pytest.fixture(scope="module")
def registry():
    if not ERRORS_PATH.exists():
        pytest.skip("kb/sglang_errors.jsonl.gz not built")
    return ErrorRegistry.load()


def test_changed_text_is_told_apart_by_release(registry):
    # 0.5.x appends the current value to the message and moved it to a mixin.
    new = match_origin(
        [NOT_ENOUGH_MEMORY + " Current value: self.server_args.mem_fraction_static=0.88"], version="0.5.9"
    )
    assert new.module == "sglang.srt.model_executor.model_runner_kv_cache_mixin"
    assert new.in_user_version is True
    assert "0.4.6" not in new.releases and "0.5.9" in new.releases

    old = match_origin([NOT_ENOUGH_MEMORY], version="0.4.6")
    assert old.module == "sglang.srt.model_executor.model_runner"
    assert "0.4.6" in old.releases and old.in_user_version is True


def test_message_in_a_server_log_is_found_with_variables_and_prefixes(registry):
    line = (
        "[2025-06-01 10:00:00 TP0] Exception: sgl-kernel is installed with version 0.1.0, which is "
        "less than the minimum required version 0.1.1. Please reinstall the latest version with "
        "`pip install sgl-kernel --force-reinstall`"
    )
    origin = match_origin(["Traceback (most recent call last):", line], version="0.4.6.post1")
    assert origin.is_sglang and origin.function == "assert_pkg_version"
    assert origin.module in ("sglang.srt.utils", "sglang.srt.utils.common")
    assert origin.in_user_version is True


def test_message_case_and_quotes_do_not_matter(registry):
    origin = match_origin(['runtimeerror: NOT ENOUGH MEMORY. please try to increase "--mem-fraction-static".'])
    assert origin is not None and origin.is_sglang and "mem-fraction-static" in origin.template


def test_line_cut_short_still_finds_the_message(registry):
    line = "RuntimeError: Chat template configs/chat_templates/zephyr.jinja is not a built-in template"
    origin = match_origin([line], version="0.5.9")
    assert origin is not None and origin.module == "sglang.srt.managers.template_manager"
    assert origin.in_user_version is True
    # Without a version, the newest copy of the text: the module moved in 0.5.16.
    assert match_origin([line]).module == "sglang.srt.parser.template_manager"


def test_argparse_invalid_choice_names_the_flag_definition(registry):
    line = ("launch_server.py: error: argument --kv-cache-dtype: invalid choice: 'fp8' "
            "(choose from 'auto', 'fp8_e5m2', 'fp8_e4m3')")  # fmt: skip
    origin = match_origin([line], version="0.5.9")
    assert origin.kind == "argparse" and origin.module == "sglang.srt.server_args"
    assert "--kv-cache-dtype" in origin.template and "choices" in origin.context


def test_release_without_the_message_is_reported(registry):
    origin = match_origin(
        [NOT_ENOUGH_MEMORY + " Current value: self.server_args.mem_fraction_static=0.88"], version="0.4.1"
    )
    # The longer 0.5 text is the best match, and 0.4.1 does not have that exact text.
    assert origin.in_user_version is False


def test_traceback_frame_picks_which_of_many_copies_raised_it(registry):
    # Many model files log the same text; the user's traceback names the file.
    lines = [
        '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/models/ernie45_vl.py", line 813, in load_weights',
        "[2025-06-01 10:00:00 TP0] Parameter model.layers.0.mlp.weight not found in params_dict",
    ]
    origin = match_origin(lines, version="0.5.9")
    assert origin.path == "sglang/srt/models/ernie45_vl.py"
    # the frame settled which copy it is: no "a traceback frame would tell which" for this user
    assert origin.alternatives == 0
    assert match_origin(lines[1:], version="0.5.9").alternatives > 0


def test_generic_text_is_not_claimed_as_an_sglang_message(registry):
    # SGLang logs "Exception: {e}" somewhere, but that says nothing about this error.
    assert match_origin(["Exception: connect: Connection refused"]) is None


def test_python_interpreter_text_is_not_claimed_by_an_sglang_getattr(registry):
    # SGLang's __getattr__ overrides raise "'{cls}' object has no attribute '{name}'", the same
    # words Python prints for any missing attribute: the registry must not name them as the origin
    assert match_origin(["AttributeError: 'NoneType' object has no attribute 'dcp_local_prefix_kv_indices'"]) is None
    assert match_origin(["TypeError: HiRadixCache.__init__() got an unexpected keyword argument 'page_size'"]) is None
    # Jinja's undefined value in a chat template says the same words with the type inside the quotes
    assert match_origin(["Jinja template error ('dict object' has no attribute 'name')"]) is None
    assert match_origin(["jinja2.exceptions.UndefinedError: 'dict object' has no attribute 'name'"]).package == "jinja2"
    # a message with words of SGLang's own still finds its site
    assert match_origin([NOT_ENOUGH_MEMORY]) is not None


def test_torch_and_nccl_errors_are_not_sglang_messages(registry):
    torch_trace = [
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 100, in forward',
        "    out = self.model(x)",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 1736, in _wrapped_call_impl',
        "    return forward_call(*args, **kwargs)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 1.06 GiB is free.",
    ]
    origin = match_origin(torch_trace, version="0.5.9")
    assert origin is not None and not origin.is_sglang and origin.package == "torch"

    nccl = ["node-1:1234:5678 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43567> failed : Software caused connection abort"]
    origin = match_origin(nccl)
    assert origin is not None and not origin.is_sglang and origin.package == "nccl"


def test_nccl_error_raised_by_sglangs_own_nccl_wrapper_is_sglangs(registry):
    """SGLang's pynccl wrapper turns a failed NCCL call into `NCCL error: <NCCL's words>`: with the
    traceback ending in that wrapper, the short template is SGLang's raise, not NCCL's log line."""
    trace = [
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/distributed/device_communicators/pynccl.py", line 99, in __init__',
        "    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(",
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 280, in NCCL_CHECK',
        '    raise RuntimeError(f"NCCL error: {error_str}")',
        "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    ]
    origin = match_origin(trace, version="0.5.9")
    assert origin.is_sglang and origin.module == "sglang.srt.distributed.device_communicators.pynccl_wrapper"
    assert origin.function == "NCCLLibrary.NCCL_CHECK"
    # without the traceback the same words stay NCCL's
    origin = match_origin(["RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"])
    assert origin is None or not origin.is_sglang


def test_lookups_are_fast(registry):
    lines = [NOT_ENOUGH_MEMORY] + [f"[2025-06-01 10:00:{i:02d}] Decode batch. #running-req: {i}, #token: 1234" for i in range(60)]
    match_origin(lines)  # warm the pattern cache
    start = time.perf_counter()
    for _ in range(10):
        match_origin(lines)
    assert (time.perf_counter() - start) / 10 < 0.05  # a 60-line paste in well under the 5 ms target x10


def test_source_checkout_traceback_picks_the_copy_in_its_file(registry):
    # Installed from source, the path holds "sglang" twice; the frame still names the file.
    lines = [
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/schedule_batch.py", line 1006, in alloc_paged_token_slots_extend',
        "    raise RuntimeError(error_msg)",
        "RuntimeError: Prefill out of memory. Try to lower your batch size.",
    ]
    origin = match_origin(lines)
    assert origin.path == "sglang/srt/managers/schedule_batch.py"
    assert origin.function == "ScheduleBatch.alloc_paged_token_slots_extend"


def test_text_sglang_copied_but_another_library_raised_is_not_sglang(registry):
    error = ("RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', "
             "'Current capability: 75.')")  # fmt: skip
    assert match_origin([error]).is_sglang  # SGLang's compressed-tensors code has the same text
    vllm_trace = [
        '  File "/root/miniconda3/lib/python3.12/site-packages/vllm/model_executor/models/llama.py", line 150, in __init__',
        "    self.qkv_proj = QKVParallelLinear(",
        '  File "/root/miniconda3/lib/python3.12/site-packages/vllm/model_executor/layers/linear.py", line 884, in __init__',
        "    super().__init__(input_size=input_size,",
        error,
    ]
    origin = match_origin(vllm_trace)
    assert origin is not None and not origin.is_sglang and origin.package == "vllm"


def test_library_crash_is_not_blamed_on_the_lines_sglang_logs_after_it(registry):
    lines = [
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 147456, Hardware limit: "
        "101376. Reducing block sizes or `num_stages` may help.",
        "[2025-07-29 15:06:51] Received sigquit from a child process. It usually means the child failed.",
        "[2025-07-29 15:06:51] Dumping requests before crash. self.crash_dump_folder=None",
    ]
    origin = match_origin(lines)
    assert origin is not None and not origin.is_sglang and origin.package == "triton"


def test_message_wrapped_over_several_lines_is_found(registry):
    lines = [
        "ValueError: DeepEP v2 MoE is not validated for 'Qwen4ExpForConditionalGeneration'.",
        "The model package must register its architecture with register_deepep_v2_model,",
        "because its combine and post-expert reduction semantics must be validated first.",
    ]
    origin = match_origin(lines)
    assert origin.module == "sglang.srt.arg_groups.moe_hook" and origin.exception == "ValueError"


def test_bare_assert_is_traced_to_the_assert_in_its_frame(registry):
    lines = [
        "[TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File ".../sglang/srt/lora/lora_manager.py", line 282, in fetch_new_loras',
        "    assert len(cur_uids) <= self.max_loras_per_batch",
        "AssertionError",
    ]
    origin = match_origin(lines, version="0.5.10")
    assert origin.is_sglang and origin.function == "LoRAManager.fetch_new_loras"
    assert "max_loras_per_batch" in origin.condition


def test_error_built_in_a_helper_and_raised_by_its_caller_is_found(registry):
    line = ("RuntimeError: Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 "
            "(SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.")  # fmt: skip
    origin = match_origin([line])
    assert origin.function == "_scheduler_died_error" and origin.exception == "RuntimeError"


def test_info_log_that_reports_a_failure_is_found(registry):
    line = "[2025-03-07 21:49:45 TP9] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.1919"
    origin = match_origin([line], version="0.4.3")
    assert origin.function == "Scheduler.update_running_batch" and origin.exception == "info"


@pytest.fixture(scope="module")
def pins():
    try:
        return DependencyPins.load()
    except FileNotFoundError:
        pytest.skip("kb/sglang_deps.json not built")


def test_missing_kernel_package_gets_the_release_pin(pins):
    trace = [
        "sglang                    0.5.6",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/site-packages/sglang/srt/layers/activation.py", line 40, in <module>',
        "    from sgl_kernel import silu_and_mul",
        "ModuleNotFoundError: No module named 'sgl_kernel'",
    ]
    advice = dependency_advice(trace)
    assert advice.package == "sgl-kernel" and advice.problem == "missing"
    assert advice.sglang_version == "0.5.6" and advice.pins_release == "0.5.6"
    assert advice.install_command == 'pip install "sgl-kernel==0.3.18.post2"'


def test_too_old_flashinfer_reads_installed_version_from_the_message(pins):
    line = (
        "Exception: flashinfer_python is installed with version 0.2.2, which is less than the minimum "
        "required version 0.2.3. Please uninstall the old version and reinstall the latest version"
    )
    advice = dependency_advice([line], sglang_version="0.4.6.post1")
    assert advice.package == "flashinfer-python"
    assert advice.installed_version == "0.2.2" and advice.satisfied is False
    assert advice.install_command == 'pip install "flashinfer-python==0.2.3"'


def test_transformers_too_old_for_a_model_uses_pip_list_version(pins):
    paste = """transformers              4.50.0
sglang                    0.4.6.post1
ValueError: The checkpoint you are trying to load has model type `qwen3` but Transformers does not recognize this architecture."""
    advice = dependency_advice(paste)
    assert advice.package == "transformers" and advice.installed_version == "4.50.0"
    assert advice.pins_release == "0.4.6" and advice.extra == "runtime-common"
    assert advice.install_command == 'pip install "transformers==4.51.1"'


def test_range_pin_is_written_lower_bound_first(pins):
    advice = dependency_advice(["ModuleNotFoundError: No module named 'llguidance'"], sglang_version="0.5.6")
    assert advice.install_command == 'pip install "llguidance>=0.7.11,<0.8.0"'


def test_unrelated_trace_gets_no_dependency_advice(pins):
    assert dependency_advice([NOT_ENOUGH_MEMORY]) is None
