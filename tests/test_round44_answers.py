"""What an answer says, from a new-user trial (round 42, ux2), as a user reads it: next steps come
from where the failure is and from the kind of failure the user tells of, not from a program's info
line or a flag the user never passed; a lead's "would apply if" line fits the program the paste
comes from and the failure the user describes; a YAML, Python or JSON snippet in a fix step is a
block, not a `$` shell command; a warning about advice a fix step also gives says so; and "Where it
comes from" names the package an import error names."""

from __future__ import annotations

import pytest

from assistant.render import render_text

# a MinerU startup log: the user finds it slow; the log's info lines name flashinfer (the backend it
# picked) and the run went on past its registry warning
MINERU_SLOW = (
    "MinerU 使用sglang做pdf转换速度很慢\n"
    "WARNING:sglang.srt.models.registry:Ignore import error when loading sglang.srt.models.torch_native_llama. "
    "tensor model parallel group is not initialized\n"
    "Start init SgLang engine...\n"
    "[2025-08-13 01:01:51] Attention backend not explicitly specified. Use flashinfer backend by default.\n"
    "[2025-08-13 01:01:51] Init torch distributed begin.\n"
    "[2025-08-13 01:01:52] Init torch distributed ends. mem usage=0.00 GB\n"
    "[2025-08-13 01:01:52] Load weight begin\n")


@pytest.mark.parametrize("prefix", ["[2025-08-13 01:01:51] ", "INFO:sglang.srt.server_args:"])
def test_a_component_an_info_line_names_gets_no_next_steps(assistant, prefix):
    paste = MINERU_SLOW.replace("[2025-08-13 01:01:51] Attention backend", prefix + "Attention backend")
    answer = assistant.answer(paste)
    assert answer.outcome != "fix"
    steps = " ".join(answer.next_steps)
    assert "[flashinfer]" not in steps and "FLASHINFER_LOGLEVEL" not in steps
    assert "sglang.bench_serving" in steps            # the user finds it slow: measure it


def test_a_component_the_users_own_words_name_still_gets_its_steps(assistant):
    answer = assistant.answer("The server crashes in flashinfer at the first request, I have no traceback to show.")
    assert answer.outcome != "fix"
    assert any("[flashinfer]" in step for step in answer.next_steps)


HICACHE_MIXUP = (
    "[Bug] maybe hicache mix-up request in new version(0.5.15)\n\n"
    "Have you encountered any mix-up issues with HiCache on the new version(0.5.15)  ? and when i callback to 0.5.13, "
    "not found this mix-up.\n"
    "I've checked the hash algorithm and the read/write of token IDs, and didn't find any issues.\n\n"
    "### Reproduction\n\nPD disagg deploy：\nP/D H200，P use hicache, storage use mooncake with backend .\n"
    "model: GLM5.2\n\n### Environment\n\nsglang: 0.5.15.post1\nflashinfer_python: 0.6.12\n")


def test_wrong_output_gets_a_request_and_bisecting_not_connectivity_checks(assistant):
    answer = assistant.answer(HICACHE_MIXUP)
    assert answer.outcome != "fix"
    steps = " ".join(answer.next_steps)
    assert "ibv_devinfo" not in steps and "reach each other" not in steps   # no connection problem told
    assert "A request that shows it" in answer.next_steps[0]
    assert "Bisect it with that request" in steps and "release before it" in steps
    assert "(mooncake)" in steps                      # what the report names is turned off first


def test_a_connection_failure_with_mooncake_still_gets_its_connectivity_steps(assistant):
    answer = assistant.answer("PD disaggregation with mooncake: the decode server never gets the KV cache, "
                              "the transfer fails and the request errors out. No traceback in the log.")
    assert any(step.startswith(("[mooncake]", "[disaggregation]")) for step in answer.next_steps)


LDCUDA = ("/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status\n")


@pytest.mark.parametrize("paste", [
    "A separate torch.compile script (not SGLang) fails on the same box. How do I fix it?\n" + LDCUDA
    + "`ldconfig -p | grep libcuda` only shows libcuda.so.1.\n",
    "我们没有用 sglang，是单独跑 torch.compile 的脚本报的，麻烦看下怎么解决：\n" + LDCUDA
    + "`ldconfig -p | grep libcuda` 只显示 libcuda.so.1。\n",
])
def test_a_paste_the_user_says_is_not_sglangs_gets_no_sglang_flag_they_never_passed(assistant, paste):
    answer = assistant.answer(paste)
    assert answer.outcome != "fix"
    steps = " ".join(answer.next_steps)
    assert "--enable-torch-compile" not in steps
    assert "TORCHDYNAMO_VERBOSE" in steps             # what helps with their own compile error stays


def test_where_an_import_error_comes_from_names_the_package_it_names_not_the_platform(assistant):
    answer = assistant.answer(
        "lmsysorg/sglang:v0.5.10-rocm720-mi35x, SGLANG_USE_AITER=1, started from /sgl-workspace: every model "
        "fails at import.\n"
        "ImportError: cannot import name 'dynamic_per_tensor_quant' from 'aiter' (unknown location)\n")
    where = next(line for line in render_text(answer, color=False).splitlines()
                 if line.startswith("Where it comes from"))
    assert where.endswith("points to aiter") and "rocm" not in where


NCCL_217 = ("NeMo-RL DPO on 8x L4 (PCIe, no P2P). NCCL_P2P_DISABLE=1 does not help; the job fails with:\n\n"
            "Cuda failure 217 'peer access is not supported between these two devices'\n")


def test_a_yaml_snippet_in_a_fix_step_is_a_block_not_a_shell_command(assistant):
    from ui.markdown import fix_markdown

    answer = assistant.answer(NCCL_217)
    assert answer.outcome == "fix" and answer.matches[0].id == "nccl-cumem-host-shm-peer-access-unsupported"
    text = render_text(answer, color=False)
    assert "$ export NCCL_CUMEM_HOST_ENABLE=0" in text               # the shell command keeps its `$`
    assert "$ # Ray runtime_env.yaml" not in text
    lines = text.splitlines()
    fence = lines.index("     ```yaml")
    assert lines[fence + 1:fence + 5] == ["     # Ray runtime_env.yaml:", "     env_vars:",
                                          '       NCCL_CUMEM_HOST_ENABLE: "0"', "     ```"]
    page = "\n".join(fix_markdown(answer.fix))
    assert "```yaml\n   # Ray runtime_env.yaml:\n   env_vars:" in page
    assert "```bash\n   export NCCL_CUMEM_HOST_ENABLE=0\n   ```" in page   # YAML is not in the bash block


@pytest.mark.parametrize("command, language", [
    ('# Ray runtime_env.yaml:\nenv_vars:\n  NCCL_CUMEM_HOST_ENABLE: "0"', "yaml"),
    ('args: ["--dist-init-addr", "$(LWS_LEADER_ADDRESS):20000"]', "yaml"),
    ("import sglang as sgl\nllm = sgl.Engine(model_path='<model>')", "python"),
    ('client.chat.completions.create(model="<served-model-name>:<adapter-name>", messages=msgs)', "python"),
    ('{"file_path_prefix": "/3fs/stage/sglang/hicache", "file_size": ..., "numjobs": ...}', "json"),
    ("export NCCL_CUMEM_HOST_ENABLE=0", None),
    ("python3 - <<'EOF'\nimport json\nprint(json.dumps({}))\nEOF", None),
    ("FOO=1 python3 -m sglang.launch_server --model-path <model>", None),
    ("[ -f /etc/os-release ] && cat /etc/os-release", None),
])
def test_which_commands_are_shown_as_snippets_rather_than_shell(command, language):
    from assistant.snippets import snippet_language

    assert snippet_language(command) == language


GB300_TRITON = ("Launching SGLang on a GB300 node (aarch64, sm_103) from a late-2025 image whose torch comes with "
                "Triton 3.5: python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B\n"
                "The whole process aborts as soon as the first Triton kernel is compiled:\n"
                "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.tcgen05.wait.st\n"
                "Fatal Python error: Aborted\n")


def test_a_warning_about_advice_a_fix_step_also_gives_says_the_step_uses_it_its_own_way(assistant):
    answer = assistant.answer(GB300_TRITON)
    assert answer.outcome == "fix" and answer.matches[0].id == "triton-3-5-0-sm103-tcgen05-llvm-cannot-select"
    assert any("export TRITON_PTXAS_PATH=" in step for step in answer.fix)
    ptxas = next(w for w in answer.warnings if "TRITON_PTXAS_PATH" in w)
    assert ptxas.startswith("Wrong advice in circulation (a fix step above also uses `TRITON_PTXAS_PATH`, "
                            "its own way: follow the step, not this claim): ")
    # a claim about what no fix step uses keeps the plain label
    assert any(w.startswith("Wrong advice in circulation: Add `--disable-cuda-graph`") for w in answer.warnings)


GPUSTACK_DEPLOY = (
    "Failed to deploy model with SGLang 0.5.8/0.5.7\nGPUStack version 36700af\nGPU Ascend 910B2\n"
    "Deploy Qwen/Qwen3-30B-A3B-Instruct-2507 using sglang 0.5.8/0.5.7\nFailed to deploy.\n"
    "2026-01-29 11:29:45.409872+08:00 - gpustack.worker.backends.sglang - INFO - Starting SGLang model instance: "
    "qwen3-30b-a3b-instruct-2507-lgMuu\n"
    "2026-01-29 11:29:45.965384+08:00 - gpustack.worker.backends.sglang - INFO - Creating SGLang container workload: "
    "qwen3-30b-a3b-instruct-2507-lgMuu\n")
WRAPPER_ENTRY = "wrapper-hides-sglang-error"


def test_a_leads_confirm_lines_are_those_of_the_program_the_paste_comes_from(assistant):
    answer = assistant.answer(GPUSTACK_DEPLOY)
    assert answer.outcome == "lead" and answer.matches[0].id == WRAPPER_ENTRY
    assert answer.confirm_if and all("Inference server exited" in line or "gpustack" in line
                                     for line in answer.confirm_if)
    text = render_text(answer, color=False)
    # sgl.Runtime's and the RL launchers' lines cannot appear in a GPUStack log
    assert "Server failed to start within the timeout period" not in text
    assert "server launch failed" not in text


WRAPPERS_META = {
    "signatures": ["RuntimeError: Initialization failed. Please see the error messages above.",
                   "Inference server exited or unhealthy.",
                   "Attempt 1: Unexpected status code 503"],
    "symptoms": ["xinference web UI shows 'Initialization failed' when launching a model",
                 "GPUStack marks a deployment failed ('Inference server exited or unhealthy.')",
                 "olmOCR keeps logging 'Attempt 1: Unexpected status code 503'"],
    "keywords": ["xinference", "GPUStack", "olmOCR", "wrapper"],
}


@pytest.mark.parametrize("paste, lines", [
    ("GPUStack 0.7 deploy failed", ["Inference server exited or unhealthy."]),
    ("olmocr pipeline never starts", ["Attempt 1: Unexpected status code 503"]),
    ("my own launcher script fails", None),     # no program the entry names: every line may apply
])
def test_an_entrys_lines_are_tied_to_the_programs_its_own_text_names(paste, lines):
    from assistant.program_lines import program_signatures

    assert program_signatures(WRAPPERS_META, paste) == lines


SAGEATTENTION_CRASH = (
    "Running sglang generate on an NVIDIA DGX Spark (GB10, Blackwell) with Qwen-Image-2512, with sageattn3 1.0.0 "
    "installed from the SageAttention3 blackwell repo (sageattn3_blackwell), SGLang 0.5.7. The process crashes with a "
    "RuntimeError inside SageAttention3, the attention backend SGLang Diffusion picks by default on this GPU (the log "
    "says 'Using Sage Attention 3 backend').\n\n"
    'sglang generate --model-path ./Qwen-Image --prompt "Draw a picture of LA in the rain."\n'
    "/home/spark/.sglang/lib/python3.12/site-packages/torch/cuda/__init__.py:283: UserWarning:\n"
    "    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n"
    "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
    "    (8.0) - (12.0)\n")


def test_a_lead_chosen_for_the_described_failure_is_confirmed_by_that_failure_not_another_variants_line(assistant):
    answer = assistant.answer(SAGEATTENTION_CRASH)
    assert answer.outcome == "lead"
    assert answer.matches[0].id == "diffusion-sm120-flash-attn-sgl-kernel-unsupported"
    text = render_text(answer, color=False)
    # the entry's first line is the RTX 5090 / FA3 variant's, not the SageAttention3 crash described
    assert "flash_attn at sgl-kernel is only supported" not in " ".join(answer.confirm_if)
    assert "It applies if what you see is this: " in answer.diagnosis
    shown = answer.diagnosis.split("It applies if what you see is this: ", 1)[1]
    assert "crashes with a RuntimeError inside SageAttention3" in shown
    assert "It would apply if your log also shows" not in text
