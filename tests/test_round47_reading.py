"""Reading a paste after a new-user trial (round 47, h6), as an operator sees it: the failing
`assert` the program shows is the root error, not the user's sentence naming the AssertionError;
every line of a Ray job (`(SGLangEngine pid=42) `, `(raylet, ip=...) `, a job platform's
`[<time>] <pod> >> ` in front) is read behind its prefix, so a cut traceback or a message on the
lines below its exception is seen as such; and a placeholder a launch command carries
(`--model-path <MODEL_PATH>`) is the flag's value, shown as written."""

from __future__ import annotations

from assistant.render import render_text
from assistant.server_address import server_address
from assistant.trace import analyze

# a report that names the AssertionError in its title and quotes the failing assert as code
ASSERT_QUOTED = (
    "Loading the draft model crashes with AssertionError in load_column_parallel_weight.\n"
    "\n"
    "**Actual:**\n"
    "`AssertionError` at `sglang/srt/layers/parameter.py:218` due to a shape mismatch:\n"
    "`assert param_data.shape == loaded_weight.shape`\n")

# the traceback pasted down to the innermost frame's assert, the exception line left out
ASSERT_CUT = (
    "The scheduler dies with an AssertionError while it loads the weights.\n"
    "```\n"
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/model_loader/loader.py", line 420, in load_weights\n'
    "    weight_loader(param, loaded_weight, shard_id)\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/layers/parameter.py", line 218, in load_merged_column_weight\n'
    "    assert param_data.shape == loaded_weight.shape\n"
    "```\n")


def test_a_quoted_assert_is_the_root_error_not_the_users_sentence(assistant):
    answer = assistant.answer(ASSERT_QUOTED)
    text = render_text(answer, color=False)
    root = text.split("The root error as read from your paste:", 1)[1].splitlines()[1].strip()
    assert root == "AssertionError: assert param_data.shape == loaded_weight.shape"


def test_the_innermost_frames_assert_of_a_cut_traceback_is_the_root_error():
    assert analyze(ASSERT_CUT).root_line.text == "AssertionError: assert param_data.shape == loaded_weight.shape"


def test_an_assert_in_an_outer_frame_is_not_what_failed():
    paste = ASSERT_CUT.replace(
        "    weight_loader(param, loaded_weight, shard_id)\n", "    assert loaded_weight is not None\n").replace(
        "    assert param_data.shape == loaded_weight.shape\n", "    param_data.copy_(loaded_weight)\n")
    root = analyze(paste).root_line
    assert root is None or "assert loaded_weight is not None" not in root.text


def test_an_assert_the_paste_does_not_say_failed_is_no_error():
    # a cut traceback that names no AssertionError: the assert line is only where it stopped
    paste = ASSERT_CUT.replace("The scheduler dies with an AssertionError while it loads the weights.\n", "")
    assert not any("assert param_data" in error.text for error in analyze(paste).errors)


# a slime/verl job: every line carries the platform's collector prefix and Ray's actor prefix
RAY_CUT = "".join(
    f"[2025-12-18T16:24:02+08:00] rl-job-20251218-3da56-cfcd2 >> (SGLangEngine pid=3111) {line}\n" for line in (
        "[2025-12-18 08:24:01 TP7] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2683, in run_scheduler_process',
        "    scheduler.event_loop_normal()",
        '  File "/usr/local/lib/python3.12/dist-packages/torch/utils/_contextlib.py", line 120, in decorate_context',
        "    return func(*args, **kwargs)"))


def test_a_ray_job_platform_traceback_cut_off_is_read_as_cut(assistant):
    answer = assistant.answer("When I train with a draft model the rollout engine dies:\n```\n" + RAY_CUT)
    steps = "\n".join(answer.next_steps)
    assert "The end of the traceback" in steps
    assert "shows none of its lines" not in steps


def test_rays_own_processes_prefix_is_a_log_prefix():
    paste = ("\x1b[33m(raylet, ip=10.0.0.7)\x1b[0m [2025-12-18 08:24:01] Traceback (most recent call last):\n"
             '(raylet, ip=10.0.0.7)   File "/usr/lib/python3/dist-packages/sglang/srt/entrypoints/engine.py", '
             "line 120, in _launch\n"
             "(raylet, ip=10.0.0.7)     proc.start()\n")
    assert analyze(paste).traceback_cut


def test_a_message_on_the_lines_below_its_exception_is_read_behind_rays_prefix():
    paste = ("(SGLangEngine pid=42) RuntimeError: \n"
             "(SGLangEngine pid=42)         An attempt has been made to start a new process before the\n"
             "(SGLangEngine pid=42)         current process has finished its bootstrapping phase.\n")
    assert analyze(paste).root_line.text == ("RuntimeError: An attempt has been made to start a new process "
                                            "before the current process has finished its bootstrapping phase.")


def test_placeholders_are_the_flags_values_as_written(assistant):
    for placeholder in ("<MODEL_PATH>", "$MODEL", "/path/to/model", "${MODEL_DIR}", "<your model path>"):
        answer = assistant.answer(f"`python3 -m sglang.launch_server --model-path {placeholder} --tp 2 --port 21000`\n"
                                  "RuntimeError: boom\n")
        assert list(answer.detected.flags)[:2] == [f"--model-path {placeholder}", "--tp 2"], placeholder
        assert f"flags: --model-path {placeholder} --tp 2" in render_text(answer, color=False)


def test_a_placeholder_port_is_no_port_to_put_in_commands():
    assert not server_address(["--model-path /m", "--port {{port}}"], [])
