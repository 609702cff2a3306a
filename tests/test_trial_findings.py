"""What new users ran into on real reports (rounds 40 and 41's trials), as they would see it: an
upgrade step shown to the users it is for, Chinese answers to Chinese titles, the root error without
the user's question glued to it, next steps that fit a report with no error line, and where an error
comes from said once, below the outcome; GPUs named in a sentence, a value "stuck at 1" that is no
hang, vLLM's log prefix, flags as the user passed them, a script's indentation kept."""

from __future__ import annotations

from assistant.kb import parse_entry
from assistant.text import join_chinese

MOONCAKE_STUCK = ("SGLang 0.5.10 PD disaggregation with Mooncake RDMA on 4xH200. After one transfer timeout every "
                  "request to that decode fails:\n"
                  "Decode instance could be dead, remote mooncake session 10.0.0.2:17001 is not alive\n")


def test_a_user_below_the_release_that_fixes_it_is_told_to_upgrade_to_it(assistant):
    answer = assistant.answer(MOONCAKE_STUCK)
    assert answer.outcome == "fix" and answer.matches[0].id == "pd-failed-session-sticky"
    assert answer.detected.sglang_version == "0.5.10" and answer.detected.gpu == "H200"
    upgrade = [step for step in answer.fix if step.startswith("Upgrade to 0.5.13")]
    assert upgrade, answer.fix
    # the step's env vars are those of 0.5.13, so it is not left out as unknown to 0.5.10
    assert "SGLANG_ENABLE_FAILED_SESSION_PROBE=true" in upgrade[0]
    assert not any("it was left out" in warning for warning in answer.warnings)


def test_a_user_already_on_the_fixed_release_gets_its_steps_not_the_upgrade(assistant):
    answer = assistant.answer(MOONCAKE_STUCK.replace("0.5.10", "0.5.23"))
    assert answer.outcome == "fix"
    assert not any(step.startswith("Upgrade to 0.5.13") for step in answer.fix)
    assert any("0.5.23" in step and "ON by default" in step for step in answer.fix)


def test_a_report_titled_in_chinese_is_answered_in_chinese(assistant):
    answer = assistant.answer("[Bug] deepseek v4 flash 0731版本启动失败\n"
                              '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 4825, '
                              "in run_scheduler_process\n    scheduler.run_event_loop()\n")
    assert answer.reader_language == "zh"
    assert answer.text.splitlines()[0].startswith(("UNKNOWN：", "LEAD（"))


def test_the_users_question_after_an_error_is_not_part_of_the_root_error(assistant):
    answer = assistant.answer("[rank0]: KeyError: 'text'，怎么解决？")
    assert answer.primary_error == "KeyError: 'text'"
    assert answer.reader_language == "zh"   # the words cut off it are still the user's


def test_a_torch_out_of_memory_line_is_the_error_not_the_users_words(assistant):
    answer = assistant.answer("NPU out of memory. Tried to allocate more than 1EB memory")
    assert answer.primary_error == "NPU out of memory. Tried to allocate more than 1EB memory"


def test_a_report_with_no_error_line_is_asked_for_a_request_not_for_its_logs_first_error(assistant):
    answer = assistant.answer("After upgrading, the model's answers through /v1/chat/completions are repeated "
                              "gibberish for long prompts; short prompts look fine. "
                              "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2")
    assert answer.outcome != "fix"
    steps = " ".join(answer.next_steps)
    assert "`--log-requests`" in steps and "grep -n -m1" not in steps
    assert "The exact launch command" not in steps   # the paste has it


def test_where_a_lead_comes_from_is_said_after_the_outcome_and_its_reasons(assistant):
    answer = assistant.answer("Received sigquit from a child process. It usually means the child failed.\n")
    assert answer.outcome == "lead" and answer.origin is not None
    lines = answer.text.splitlines()
    where = next(i for i, line in enumerate(lines) if line.startswith("Where it comes from:"))
    reasons = next(i for i, line in enumerate(lines) if line.startswith("Why it is only a lead"))
    root = next(i for i, line in enumerate(lines) if line.startswith("The root error as read from your paste"))
    assert lines[1].startswith("Not the cause yet") and reasons < root < where


def test_a_traceback_frame_in_launch_server_is_not_the_launch_command(assistant):
    answer = assistant.answer(
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/launch_server.py", line 14, in <module>\n'
        "    launch_server(server_args)\n"
        "ValueError: frobnicate failed\n")
    assert answer.detected.launch_command is None and answer.detected.flags == ()


def test_chinese_text_folded_over_lines_keeps_no_stray_spaces():
    assert join_chinese("来记录 token 级指标。 embedding 服务的输出") == "来记录 token 级指标。embedding 服务的输出"
    assert join_chinese("都不再被处理， 新请求看起来就挂住了") == "都不再被处理，新请求看起来就挂住了"
    assert join_chinese("设置 `--tp 2` 之后") == "设置 `--tp 2` 之后"
    entry = parse_entry("""---
id: folded-zh
title: "A title"
title_zh: "标题"
area: startup
signatures: ["frobnicate failed"]
confidence: medium
cause: >
  Why.
cause_zh: >
  第一行，
  第二行 （说明）
fix:
  - text: "Do it."
    text_zh: "照做。 然后 重启"
sources:
  - url: https://github.com/sgl-project/sglang/issues/1
---
""")
    assert entry.cause_zh == "第一行，第二行（说明）"
    assert entry.fix[0].text_zh == "照做。然后重启"


def test_a_score_line_and_the_cause_are_not_repeated_in_a_chinese_fix(assistant):
    answer = assistant.answer("启动的时候报错了，端口好像被占用了，怎么办？\nOSError: [Errno 98] Address already in use")
    assert answer.outcome == "fix" and answer.reader_language == "zh"
    text = answer.text
    assert "匹配分" in text and "match score" not in text
    title_zh = answer.matches[0].title_zh
    assert text.count(title_zh) == 1


def test_an_ascend_report_is_asked_for_the_npu_environment_not_cuda(assistant):
    answer = assistant.answer("sglang on Ascend 910B, --device npu, the server dies:\n"
                              "RuntimeError: frobnicator quorum lost in widget pool 7\n")
    assert answer.outcome == "unknown" and answer.detected.hardware == "ascend"
    assert any("npu-smi info" in step for step in answer.next_steps)
    assert not any("flashinfer, GPU, driver" in step for step in answer.next_steps)


def test_a_chinese_prompt_quoted_in_an_english_log_keeps_the_answer_english(assistant):
    answer = assistant.answer("[2025-01-01 10:00:00] Receive: obj=GenerateReqInput(text='你好，请介绍一下你自己', "
                              "sampling_params={'max_new_tokens': 128}, rid='abc')\n"
                              "RuntimeError: frobnicator quorum lost in widget pool 7\n")
    assert answer.reader_language == "en"


def test_a_chinese_shell_message_or_folder_name_keeps_an_english_question_english(assistant):
    shell = assistant.answer("my server fails to load the model, any idea?\n"
                             "FileNotFoundError: [Errno 2] 没有那个文件或目录: '/models/qwen/config.json'")
    folder = assistant.answer("load fails for /data/千问模型目录/Qwen3-8B\n"
                              "OSError: Can not find /data/千问模型目录/Qwen3-8B/config.json")
    assert shell.reader_language == "en" and folder.reader_language == "en"


# round 41's trial

def test_a_gpu_named_in_a_sentence_is_detected(assistant):
    said = {"It fails on 8*H20 with tp 8: RuntimeError: boom": "H20",
            "我在H20上面跑 DeepSeek-R1 就报错 RuntimeError: boom": "H20",
            "The server crashes on A800. RuntimeError: boom": "A800",
            "I run it on two RTX 4090s (tp 2) and get RuntimeError: boom": "RTX 4090",
            "两张 4090 跑 tp2 报错 RuntimeError: boom": "RTX 4090"}
    for paste, gpu in said.items():
        assert assistant.answer(paste).detected.gpu == gpu, paste
    # a model's active-parameter part is still no GPU
    assert assistant.answer("Qwen3-235B-A22B on 4 GPUs: RuntimeError: boom").detected.gpu is None


def test_a_value_stuck_at_one_after_an_upgrade_is_no_hang_and_no_how_to_question(assistant):
    english = assistant.answer("After upgrading to 0.5.10, the speculative accept length is stuck at 1 with "
                               "GLM-4.5-Air FP8 and MTP.")
    assert not any("hang" in str(reason) for reason in english.reasons)
    chinese = assistant.answer("从 0.5.9 升级到 0.5.10 之后，GLM-4.5-Air FP8 开 MTP 的接受长度一直是 1，这是怎么回事？")
    assert chinese.reader_language == "zh"
    assert "使用或配置问题" not in chinese.text.splitlines()[0]


def test_the_load_memory_reading_comes_only_with_an_out_of_memory(assistant):
    imbalance = ("[2025-04-02 10:00:01 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, "
                 "avail mem=12.02 GB, mem usage=68.91 GB.\n"
                 "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.\n")
    answer = assistant.answer(imbalance)
    assert answer.outcome == "fix" and answer.matches[0].id == "tp-memory-capacity-unbalanced"
    assert answer.load_memory is None and "--mem-fraction-static 0.95" not in answer.text


def test_vllm_log_prefixes_are_taken_off_before_the_root_error_is_read(assistant):
    prefix = "(EngineCore_1 pid=2345) ERROR 07-13 10:41:52 [core.py:588] "
    paste = "".join(prefix + line + "\n" for line in (
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/v1/engine/core.py", line 300, in execute_dummy_batch',
        '    self.model_executor.collective_rpc("execute_dummy_batch")',
        "RuntimeError: Worker failed with error 'Connection closed by peer [192.168.2.2]:39075', please check "
        "the stack trace above for the root cause"))
    answer = assistant.answer(paste)
    assert answer.primary_error.startswith("RuntimeError: Worker failed with error")


def test_detected_flags_leave_out_elisions_and_repeats_and_keep_placeholders(assistant):
    # a placeholder stands for the value the flag was given (round 47): shown as written
    answer = assistant.answer(
        "python3 -m sglang.launch_server --model-path {{model_path}} --tp-size 8 --enable-deterministic-inference ... "
        "--enable-deterministic-inference\nRuntimeError: boom\n")
    assert list(answer.detected.flags) == ["--model-path {{model_path}}", "--tp-size 8",
                                           "--enable-deterministic-inference"]


def test_a_user_who_already_logs_requests_is_not_told_to_launch_with_it(assistant):
    answer = assistant.answer("The model's answers are repeated gibberish for long prompts; short prompts look fine.\n"
                              "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --log-requests --log-level debug")
    steps = " ".join(answer.next_steps)
    assert "your `--log-requests` prints them" in steps and "launch with `--log-requests`" not in steps


def test_a_version_range_upgraded_to_is_the_users_not_the_one_that_worked(assistant):
    answer = assistant.answer("after upgrade sglang to >=0.4.6.post3, deepgemm failed to compile. "
                              "it works well on sglang==0.4.6.post2\nRuntimeError: Failed to compile DeepGEMM kernel")
    assert answer.detected.sglang_version == "0.4.6.post3"


def test_an_error_told_in_words_only_is_asked_for(assistant):
    answer = assistant.answer("Qwen2 with tp 4 on a recent main. Weights load fine on every rank, then the TP workers "
                              "fail with an NCCL error during CUDA graph capture; possibly related to "
                              "CUDA_VISIBLE_DEVICES (bisected to PR #5728).")
    assert answer.outcome != "fix"
    assert answer.primary_error is None
    assert answer.next_steps[0].startswith("The error itself: your paste tells of it")


def test_a_sglang_jax_failure_gets_steps_for_jax_and_tpus_not_cuda(assistant):
    answer = assistant.answer(
        "Traceback (most recent call last):\n"
        '  File "/home/u/sglang-jax/python/sgl_jax/srt/managers/scheduler.py", line 812, in run_scheduler_process\n'
        "    scheduler = Scheduler(server_args)\n"
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer\n")
    assert answer.outcome != "fix"
    assert answer.failing_module == "sgl_jax.srt.managers.scheduler"
    steps = " ".join(answer.next_steps)
    assert "pip show sglang-jax" in steps and "check_env" not in steps


def test_a_multi_line_command_keeps_its_own_indentation_in_the_terminal(assistant):
    answer = assistant.answer("NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'\n"
                              "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
                              "unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
                              "Last error:\nCuda failure 217 'peer access is not supported between these two devices'\n")
    assert answer.matches[0].id == "nccl-cumem-host-shm-peer-access-unsupported"
    lines = answer.text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "env_vars:")
    assert lines[at + 1].startswith(lines[at][:len(lines[at]) - len(lines[at].lstrip())] + "  NCCL_CUMEM_HOST_ENABLE")


def test_a_how_to_question_about_hicache_gets_its_switch_and_storage_flags(assistant):
    answer = assistant.answer("怎么在 SGLang 0.5.9 里开启 HiCache，并且用 Mooncake 做 L3 存储？")
    names = [flag.name for flag in answer.flags]
    assert "--enable-hierarchical-cache" in names and "--hicache-storage-backend" in names


def test_a_fix_leaves_out_the_steps_for_another_model_family(assistant):
    said = ("function call cannot output in a streaming manner: with stream=true and tools, nothing arrives while the "
            "model writes the call, then one chunk carries the function name and all of the arguments. Launched with "
            "--tool-call-parser {parser}.")
    deepseek = assistant.answer("DeepSeek V3.2 " + said.format(parser="deepseekv32"))
    assert deepseek.outcome == "fix" and deepseek.matches[0].id == "tool-call-streaming-arguments-arrive-in-one-chunk"
    assert any(step.startswith("DeepSeek-V3.2") for step in deepseek.fix)
    assert not any(step.startswith("GLM-4.5") for step in deepseek.fix)
    glm = assistant.answer("GLM-4.6 " + said.format(parser="glm45"))
    assert glm.matches[0].id == "tool-call-streaming-arguments-arrive-in-one-chunk"
    if glm.outcome == "fix":
        assert not any(step.startswith("DeepSeek-V3.2") for step in glm.fix)


def test_a_machine_the_user_says_has_no_gpu_gets_no_fix_for_nvidia_hardware(assistant):
    error = "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
    on_gpu = assistant.answer(error)
    assert on_gpu.outcome == "fix" and on_gpu.matches[0].id == "cuda-home-not-set"
    laptop = assistant.answer("Trying SGLang on my laptop, which has no NVIDIA GPU; the first run fails with:\n" + error)
    assert laptop.outcome != "fix"
    assert any("no GPU" in str(reason) for reason in laptop.reasons)


# round 42's trial

def test_gpu_names_written_the_way_vendors_and_users_write_them_are_detected():
    from assistant.trace import analyze

    said = {"1x RTX Pro 6000 Workstation Edition 96gb\nRuntimeError: boom": "RTX Pro 6000",
            "DPO training on 8x L4 GPUs with the sglang rollout\nRuntimeError: boom": "L4",
            "Qwen3.5 on AMD MI35x (gfx950), ROCm 7\nRuntimeError: boom": "MI35x"}
    for paste, gpu in said.items():
        assert analyze(paste).environment.gpu == gpu, paste
