"""Answers after a new-user trial (round 45, ux3), as a user reads them: no guess about who calls a
missing SGLang name when the paste shows no caller; no step asking for what the paste already shows;
the steps that fit the paste (its variant, its release, its backend, its GPU, its program) before or
instead of the ones that do not; and Chinese answers in Chinese."""

from __future__ import annotations

import pytest

from assistant.render import render_text


def _text(answer) -> str:
    return render_text(answer)


# 4: an attribute no release has, with no traceback: nothing shows who asks for it
NO_CALLER_SHOWN = (
    "SGLang 0.5.x serving Qwen2.5-7B on one L40S. After enabling the new option the scheduler crashes with:\n"
    "AttributeError: 'ScheduleBatch' object has no attribute 'prepare_for_lookahead'\n")


def test_a_missing_name_with_no_traceback_does_not_blame_an_outside_tool_or_an_old_release(assistant):
    text = _text(assistant.answer(NO_CALLER_SHOWN))
    line = next(line for line in text.splitlines() if line.startswith("SGLang releases:"))
    assert "prepare_for_lookahead" in line
    assert "verl" not in line and "a release before" not in line   # neither is shown in the paste
    assert "not known" in line and "traceback" in line


def _next_steps(text: str) -> str:
    """The answer's "collect or try next" block, in either language."""
    start = max(text.find("Collect or try next"), text.find("接下来收集或尝试"))
    assert start >= 0, text
    return text[start:]


# 11: the paste shows the request (a curl with its JSON body, client code): no step asks for one
CURL_SHOWN = (
    "Llama-3.1-8B-Instruct served by SGLang returns an empty answer whenever I set a stop string:\n"
    "curl http://127.0.0.1:30001/v1/completions -H \"Content-Type: application/json\" -d '{\"model\": \"llama\", "
    "\"prompt\": \"List three colors:\", \"stop\": [\"\\n\\n\"], \"max_tokens\": 64}'\n"
    "{\"id\":\"9a1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"stop\"}]}\n")
CLIENT_SHOWN = (
    "Since the upgrade my SGLang server gives wrong answers: Qwen2.5-14B replies with gibberish to about half the "
    "requests, sent with:\n"
    "from openai import OpenAI\n"
    "client = OpenAI(base_url=\"http://localhost:30000/v1\", api_key=\"none\")\n"
    "resp = client.chat.completions.create(model=\"default\", messages=[{\"role\": \"user\", \"content\": "
    "\"Name the capital of France.\"}])\n"
    "print(resp.choices[0].message.content)\n")


@pytest.mark.parametrize("paste", [CURL_SHOWN, CLIENT_SHOWN])
def test_no_step_asks_for_a_request_the_paste_already_shows(assistant, paste):
    answer = assistant.answer(paste)
    assert answer.outcome != "fix"
    steps = _next_steps(_text(answer))
    assert "A request that shows it" not in steps


def test_a_report_without_its_request_is_still_asked_for_one():
    from assistant.next_steps import SHOW_A_REQUEST, shows_a_request, steps_for
    assert not shows_a_request(["Qwen2.5-14B replies with gibberish to about half the requests"])
    assert SHOW_A_REQUEST in steps_for([], no_error_lines=True, words="the answers are gibberish")


# 15: an announced error that the paste does not show: only start-up INFO lines and a deprecation
# warning follow the announcement, in Chinese as in English, with or without the word "error"
_STARTUP_ONLY = (
    "[2026-03-02 11:02:11] INFO:     Started server process [4411]\n"
    "[2026-03-02 11:02:11] INFO:     Waiting for application startup.\n"
    "[2026-03-02 11:02:12] INFO:     Application startup complete.\n"
    "[2026-03-02 11:02:13] INFO:     127.0.0.1:40122 - \"GET /model_info HTTP/1.1\" 200 OK\n"
    "/usr/local/lib/python3.10/dist-packages/sglang/srt/entrypoints/openai/serving_chat.py:610: DeprecationWarning: "
    "max_tokens is deprecated in favor of the max_completion_tokens field\n"
    "  max_output_tokens = request.max_completion_tokens or request.max_tokens\n")
_LAUNCH = ("Qwen3-8B on 2x A10 with sglang 0.5.9, launched with python3 -m sglang.launch_server "
           "--model-path /models/Qwen3-8B --tp 2 --port 30010\n")


@pytest.mark.parametrize("announcement, asked", [
    ("服务跑几分钟后就挂了，错误日志如下：", "错误本身"),
    ("服务跑几分钟后就挂了，日志如下：", "错误本身"),
    ("The server dies a few minutes after the first requests, log below:", "The error itself"),
])
def test_an_announced_error_the_paste_does_not_show_is_asked_for(assistant, announcement, asked):
    answer = assistant.answer(_LAUNCH + announcement + "\n" + _STARTUP_ONLY)
    assert answer.outcome != "fix"
    assert asked in _next_steps(_text(answer))


# 13: no version in the paste: it is read as a current release, so a step only for releases older
# than every current one (before 0.4.0) is left out; a paste that shows such a release keeps it
OUTLINES_NO_VERSION = (
    "After pip installing a newer vLLM into the same venv, launching the SGLang server for Mistral-7B fails right "
    "away:\nImportError: cannot import name 'build_regex_from_schema' from 'outlines.fsm.json_schema' "
    "(/opt/venv/lib/python3.11/site-packages/outlines/fsm/json_schema.py)\n")


def test_a_step_for_pre_2024_releases_is_not_shown_to_a_paste_with_no_version(assistant):
    answer = assistant.answer(OUTLINES_NO_VERSION)
    assert answer.outcome == "fix" and answer.matches[0].id == "outlines-version-incompatible"
    fix = "\n".join(answer.fix)
    assert "SGLang 0.1.x" not in fix and "outlines==0.0.30" not in fix   # the `<0.2` step
    assert "SGLang 0.3.x and 0.4.x before 0.4.5" in fix                   # a step for releases users still run


def test_a_step_for_old_releases_fits_a_paste_that_shows_one():
    from assistant.step_versions import step_version_ok
    assert step_version_ok("<0.2", None, None) is False
    assert step_version_ok("<0.2", None, None, old_release_shown=True) is None
    assert step_version_ok("<0.2", "0.1.14", None) is True
    assert step_version_ok(">=0.3,<0.4.5", None, None) is None


# 14b: NIXL over another backend than UCX (its default): no step about UCX's log or transports
NIXL_LIBFABRIC = (
    "PD disaggregation with --disaggregation-transfer-backend nixl on AWS p5 (EFA), NIXL agent set to the "
    "LIBFABRIC backend. The decode server dies when the first KV transfer arrives:\n"
    "2026-01-12 10:11:02 NIXL INFO    _api.py:366 Backend LIBFABRIC was instantiated\n"
    "E0112 10:11:03.221001 libfabric_backend.cpp:902] fi_read failed on rail 3: Input/output error\n"
    "[2026-01-12 10:11:03 TP0] Decode transfer failed for request rid=8f2c: nixl transfer status ERR\n")


def test_nixl_steps_do_not_assume_ucx_when_the_paste_names_another_backend(assistant):
    answer = assistant.answer(NIXL_LIBFABRIC)
    assert answer.outcome != "fix"
    steps = _next_steps(_text(answer))
    assert "[nixl]" in steps and "UCX" not in steps and "ucx_info" not in steps


def test_the_ucx_step_stays_for_nixl_on_its_default_transport():
    from assistant.next_steps import steps_for
    steps = steps_for(["nixl"], paste_text="nixl_agent.cpp:473] registerMem: registration failed")
    assert any("UCX_LOG_LEVEL" in step for step in steps)
    named = steps_for(["nixl"], paste_text="backends = GPUNETIO ... UCX_TLS=rc")   # UCX named too: kept
    assert any("UCX_LOG_LEVEL" in step for step in named)


# 16: the "does your GPU support FP8" step is not for a Hopper paste, and a missing package is not
# a quantization format problem
FP8_ON_HOPPER = (
    "Serving Llama-3.3-70B with FP8 weights on 4x H100 80GB, tp 4. The server stops while loading the weights:\n"
    "  File \"/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/quantization/fp8.py\", line 412, "
    "in process_weights_after_loading\n"
    "    layer.weight_scale_inv = Parameter(weight_scale, requires_grad=False)\n"
    "KeyError: 'weight_scale_inv'\n")
MISSING_QUANT_PACKAGE = (
    "Trying an HQQ-quantized Mistral checkpoint with sglang on an RTX 4090:\n"
    "  File \"/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/quantization/__init__.py\", line 88, "
    "in get_quantization_config\n"
    "    from hqq.core.quantize import HQQLinear\n"
    "ModuleNotFoundError: No module named 'hqq'\n")


def test_no_fp8_support_check_for_a_gpu_that_has_fp8(assistant):
    answer = assistant.answer(FP8_ON_HOPPER)
    assert answer.outcome != "fix"
    steps = _next_steps(_text(answer))
    assert "[quantization]" in steps and "compute capability 8.9" not in steps


def test_no_quantization_format_steps_for_a_package_that_is_not_installed(assistant):
    answer = assistant.answer(MISSING_QUANT_PACKAGE)
    assert answer.outcome != "fix"
    steps = _next_steps(_text(answer))
    assert "[quantization]" not in steps


def test_the_gpu_format_check_stays_where_the_gpu_may_lack_the_format():
    from assistant.next_steps import FORMAT_ON_GPU, step_fits
    assert step_fits("quantization", FORMAT_ON_GPU, "FP8 on a T4", gpu_archs=frozenset({75}))
    assert step_fits("quantization", FORMAT_ON_GPU, "an NVFP4 checkpoint on H100", gpu_archs=frozenset({90}))
    assert step_fits("quantization", FORMAT_ON_GPU, "FP8, no GPU named")
    assert not step_fits("quantization", FORMAT_ON_GPU, "FP8 on B200", gpu_archs=frozenset({100}))


# 12: an entry that covers several exit statuses of one build: the step for the status the paste
# shows comes first; a step opened by another status comes last, marked, never dropped
HIPCC_ON_NVIDIA = (
    "sglang 0.5.15 on 8x H200, Qwen3-235B. The scheduler dies while CUDA graphs are captured; this box once had "
    "ROCm installed.\n"
    "[1/2] /opt/rocm/bin/hipcc -fPIC -O3 --offload-arch=gfx942 -I/usr/local/lib/python3.12/dist-packages/tvm_ffi/"
    "include -c /root/.cache/tvm-ffi/sgl_kernel_jit_rope/cuda_0.cu -o cuda_0.o\n"
    "FAILED: [code=127] cuda_0.o\n"
    "/bin/sh: 1: /opt/rocm/bin/hipcc: not found\n"
    "RuntimeError: ninja exited with status 127\n")


def test_the_step_for_the_status_the_paste_shows_comes_first(assistant):
    answer = assistant.answer(HIPCC_ON_NVIDIA)
    assert answer.outcome == "fix" and answer.matches[0].id == "sglang-jit-kernel-tvm-ffi-build-failed"
    assert answer.fix[0].startswith("Status 127 but the ninja command line runs `/opt/rocm/bin/hipcc`")
    other = [step for step in answer.fix if "Status 1 (or 139" in step]
    assert other and other[0].startswith("For another case than your paste shows: ") and answer.fix[-1] == other[0]


def test_steps_keep_their_order_when_no_variant_is_the_pastes():
    from assistant.case_steps import variant_order
    steps = [{"text": "Read the log: it names the cause."},
             {"text": "Status 127 with `nvcc: not found` in the output: install a toolkit."},
             {"text": "Status 139: upgrade."}]
    assert variant_order(steps, ["runtimeerror: something else"], ["RuntimeError: something else"]) == steps
    ordered = variant_order(steps, ["failed: [code=<n>] cuda_0.o"], ["FAILED: [code=139] cuda_0.o"])
    assert [step["text"] for step in ordered][:2] == ["Status 139: upgrade.", "Read the log: it names the cause."]
    assert ordered[2]["text"].startswith("For another case than your paste shows: Status 127")


# 17: a multi-program entry's diagnosis steps: the steps for the program the paste comes from, not
# another program's; a step about another line than the entry's line the paste shows is left out
GPUSTACK_DEPLOYMENT = (
    "Deploying Qwen2.5-VL-32B with the SGLang backend in GPUStack v0.7 on 2x L40S, the model instance goes to "
    "error state:\n"
    "2026-02-03T08:14:55+00:00 - gpustack.worker.backends.base - INFO - Creating SGLang container workload\n"
    "2026-02-03T08:19:56+00:00 - gpustack.worker.serve_manager - ERROR - Inference server exited or unhealthy.\n")
MOE_WARNING_ONLY = (
    "Qwen3-30B-A3B on one RTX 4090, sglang 0.5.10. Is this warning why the first requests are slow?\n"
    "[2026-04-01 10:02:11 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config file not "
    "found at /usr/local/lib/python3.12/dist-packages/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_4_0/"
    "E=128,N=768,device_name=NVIDIA_GeForce_RTX_4090.json, you can create them with "
    "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n")


def test_a_wrapper_lead_gives_the_steps_of_the_program_the_paste_comes_from(assistant):
    answer = assistant.answer(GPUSTACK_DEPLOYMENT)
    assert answer.outcome == "lead" and answer.matches[0].id == "wrapper-hides-sglang-error"
    steps = _next_steps(_text(answer))
    assert "GPUStack: " in steps.splitlines()[1]      # its own program's step first
    assert "xinference with XINFERENCE_ENABLE_VIRTUAL_ENV" not in steps


def test_a_warning_lead_leaves_out_the_step_about_another_warning_line(assistant):
    answer = assistant.answer(MOE_WARNING_ONLY)
    assert answer.matches[0].id == "moe-default-kernel-config-warning"
    steps = _next_steps(_text(answer))
    assert "tuning_fused_moe_triton.py" in steps
    assert "W8A8 Block FP8" not in steps


# 24: Chinese answers in Chinese: a flag's releases said in Chinese after a full stop (SGLang's own
# help text stays as it is), and a Chinese FIX shows its Chinese title first
def test_a_flags_releases_are_said_in_chinese_after_a_full_stop():
    from assistant.flag_reference import FlagReference
    from assistant.wording import in_language
    flag = FlagReference(name="--disaggregation-mode", help="Only used for PD disaggregation. If not specified, "
                         "it is not PD disaggregated", choices=(), help_release="0.5.23", in_user_release=None,
                         releases="0.4.5-0.5.23", all_releases=False)
    line = flag.line()
    assert line.endswith("it is not PD disaggregated. In SGLang 0.4.5-0.5.23.")
    zh = in_language(line, "zh")
    assert zh.endswith("it is not PD disaggregated. SGLang 0.4.5-0.5.23 中可用。") and "In SGLang" not in zh


def test_a_chinese_how_to_question_gets_its_flag_releases_in_chinese(assistant):
    answer = assistant.answer("请问 PD 分离模式下怎么设置 prefill 和 decode 服务？需要加哪些参数？")
    assert answer.reader_language == "zh" and answer.flags
    text = _text(answer)
    assert "In SGLang" not in text and "中可用" in text


def test_a_chinese_fix_shows_the_chinese_title_first(assistant):
    answer = assistant.answer("服务启动不了，端口被占用了吗？\nOSError: [Errno 98] Address already in use\n")
    assert answer.outcome == "fix" and answer.reader_language == "zh"
    lines = _text(answer).splitlines()
    top = answer.matches[0]
    assert lines[1].startswith(top.title_zh) and lines[2] == top.title


# 26: the user asks whether a warning next to the error matters; an entry says it is harmless
_MOE_WARNING = (
    "[2026-04-01 10:02:11 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config file not "
    "found at /usr/local/lib/python3.12/dist-packages/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_4_0/"
    "E=128,N=768,device_name=NVIDIA_GeForce_RTX_4090.json, you can create them with "
    "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n"
    "[2026-04-01 10:02:15] ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): "
    "address already in use\n")


@pytest.mark.parametrize("question, said", [
    ("Qwen3-30B-A3B will not start on 2x RTX 4090 with sglang 0.5.10. Is the warning before the error related?",
     "The warning you ask about"),
    ("Qwen3-30B-A3B 在两张 4090 上启动失败（sglang 0.5.10），报错前面那个 warning 有没有关系？", "你问到的警告"),
])
def test_a_question_about_a_harmless_warning_is_answered(assistant, question, said):
    answer = assistant.answer(question + "\n" + _MOE_WARNING)
    assert answer.outcome == "fix" and answer.matches[0].id == "port-already-in-use"
    note = next(w for w in answer.warnings if said in w)
    assert "kb:moe-default-kernel-config-warning" in note and "Using default MoE kernel config" in note


def test_no_warning_sentence_when_the_user_does_not_ask_about_one(assistant):
    answer = assistant.answer("Qwen3-30B-A3B will not start on 2x RTX 4090 with sglang 0.5.10.\n" + _MOE_WARNING)
    assert not any("The warning you ask about" in w for w in answer.warnings)
