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


def test_a_tagged_title_is_not_the_root_error_over_the_logs_own_lines(assistant):
    paste = ("[Bug] [moe] NCCL error and illegal memory access in fused_moe when serving Mixtral-8x7B\n"
             "I launched the server and sent a batch of requests.\n"
             "[2025-06-01 10:00:00 TP0] NCCL error in: /workspace/nccl/src/transport/net.cc:812, unhandled system error\n")
    answer = assistant.answer(paste)
    assert answer.primary_error == "NCCL error in: /workspace/nccl/src/transport/net.cc:812, unhandled system error"


def test_an_exception_in_a_title_with_the_users_words_after_it_gives_way_to_the_quoted_one():
    from assistant.trace import analyze

    paste = ("[Bug] KeyError: 'rope_scaling' on startup of my finetune, making the pod restart forever\n"
             "Starting the server I run into a `KeyError: 'rope_scaling'` and then kubernetes restarts it.\n")
    assert analyze(paste).root_line.text == "KeyError: 'rope_scaling'"


def test_a_title_in_words_is_no_root_error_and_configuration_is_not_where_it_arises(assistant):
    paste = ("[Bug] Scheduler watchdog timeout error with DeepSeek-V3 on 8xH200\n"
             "We serve DeepSeek-V3 and hit this after a few hours.\n"
             "Engine kwargs: {'tp_size': 8, 'attention_backend': 'flashinfer', 'moe_a2a_backend': 'deepep', "
             "'quantization': 'fp8'}, with export SGL_ENABLE_JIT_DEEPGEMM=1\n"
             "(8xH200, flashinfer attention and DeepEP enabled: the run dies with the scheduler watchdog timeout)\n")
    answer = assistant.answer(paste)
    assert answer.primary_error is None
    assert not {"flashinfer", "deepep", "deepgemm", "quantization"} & set(answer.failing_components)
    assert "--tp-size 8" in answer.detected.flags and "--attention-backend flashinfer" in answer.detected.flags


def test_a_hang_told_in_other_words_is_not_asked_for_an_error(assistant):
    paste = ("Requests stall on Qwen2.5-72B after the server sits idle overnight\n"
             "In the morning the first request gets blocked; it is only answered after sending another request. "
             "The server does not print any error while this happens.\n"
             "sglang 0.5.3, 4*A100\n")
    answer = assistant.answer(paste)
    steps = " ".join(answer.next_steps)
    assert "paste the traceback" not in steps and "py-spy dump" in steps


def test_the_sglang_jax_launcher_is_a_launch_command_on_a_tpu(assistant):
    paste = ("KV cache allocation fails on my TPU slice\n"
             "python3 -u -m sgl_jax.launch_server --model-path Qwen/Qwen3-8B --tp-size=8 --device=tpu "
             "--mem-fraction-static=0.05 --jax-precompile-decode-bs-paddings 8\n"
             "ValueError: Not enough memory for the KV cache: increase --mem-fraction-static\n")
    answer = assistant.answer(paste)
    assert "--mem-fraction-static 0.05" in answer.detected.flags
    steps = " ".join(answer.next_steps)
    assert "launch_server ...`) and the model" not in steps and "flashinfer, GPU, driver" not in steps
    assert not any("jax-precompile" in w for w in answer.warnings)


def test_a_cpu_run_and_cards_counted_in_chinese_are_read_as_hardware():
    from assistant.trace import analyze

    cpu = analyze("Running on a Xeon box, Device: CPU (`SGLANG_USE_CPU_ENGINE=1`)\n"
                  "python -m sglang.launch_server --model-path /m/qwen --device cpu\n")
    assert cpu.environment.hardware == "cpu"
    assert analyze("我用双卡3090 跑 Qwen3-32B，启动就报错\n").environment.gpu == "RTX 3090"
    # the word alone names no hardware: CPU offload and CPU threads run beside every GPU
    assert analyze("CPU offload is slow with --cpu-offload-gb 20 on my H100\n").environment.hardware != "cpu"
    # nor does a traceback's source line that keeps a host buffer on a GPU server
    gpu = analyze('Traceback (most recent call last):\n'
                  '  File "/sgl/python/sglang/srt/mem_cache/memory_pool_host.py", line 80, in __init__\n'
                  '    self.kv_buffer = torch.empty(dims, dtype=self.dtype, device="cpu", pin_memory=True)\n'
                  'RuntimeError: CUDA error: out of memory\n')
    assert gpu.environment.hardware != "cpu"


def test_an_sglang_jax_fix_step_is_not_checked_against_sglangs_flags():
    """SGLang-JAX's launcher reads as a launch command in a paste, but its flags are its own: a KB
    step that runs it is not told its flags exist in no SGLang release, while an SGLang launch in
    the same text still is checked."""
    from assistant.commands import launch_command_flags, sglang_names

    step = "`python3 -u -m sgl_jax.launch_server --moe-backend fused --tp-size 4`, or on GPUs `python -m sglang.launch_server --tp-size 2`"
    assert sglang_names(step) == ["--tp-size"]
    assert sglang_names("run it with sgl_jax.launch_server --moe-backend fused") == []
    assert launch_command_flags("python3 -u -m sgl_jax.launch_server --device=tpu --mem-fraction-static=0.1") == [
        ("--device", "tpu"), ("--mem-fraction-static", "0.1")]
