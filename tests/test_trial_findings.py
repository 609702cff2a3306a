"""What new users ran into on real reports (round 40's trials), as they would see it: an upgrade step
shown to the users it is for, Chinese answers to Chinese titles, the root error without the user's
question glued to it, next steps that fit a report with no error line, and where an error comes from
said once, below the outcome."""

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
