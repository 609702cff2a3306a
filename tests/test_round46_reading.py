"""Round 46, reading the paste right: a traceback cut inside its last frame still ends there, a
glog ERROR line is an error whatever its words, a report's title is the user's summary and never
the root error over the log lines, configuration is never where an error arises, a hang told in
other words is still a hang, and the SGLang-JAX launcher with `--flag=value` flags is a launch
command."""

from __future__ import annotations


def test_a_traceback_cut_inside_its_last_frame_arises_in_that_frames_module(assistant):
    paste = ("Server does not start on my box:\n"
             "python -m sglang.launch_server --model-path /m/qwen --port 31000\n"
             "Traceback (most recent call last):\n"
             '  File "sglang/launch_server.py", line 12, in <module>\n'
             "    server_args = prepare_server_args(sys.argv[1:])\n"
             '  File "sglang/srt/configs/model_config.py",\n')
    answer = assistant.answer(paste)
    assert answer.failing_module == "sglang.srt.configs.model_config"


def test_a_relative_package_path_is_named_as_a_module():
    from assistant.lead_answer import innermost_frame

    assert innermost_frame([("sglang/srt/managers/tp_worker.py", "forward")]) == \
        ("sglang.srt.managers.tp_worker", "forward")


def test_a_glog_error_line_with_its_time_elided_is_the_root_error():
    from assistant.trace import analyze

    paste = ("I0000 ... rdma_plugin.cpp:120] plugin loaded\n"
             "E0000 ... rdma_plugin.cpp:877] Can't pin buffer on device 5\n"
             "E1207 10:11:12.345678 agent.cpp:90] pinBuffer: registration failed for every backend\n")
    assert analyze(paste).root_line.text.endswith("Can't pin buffer on device 5")
