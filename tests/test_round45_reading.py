"""Round 45, reading what the paste holds: a model name or checkpoint path that says `finetuned`
names what was trained before, not a training job running now, so the answer is not capped at a
lead as if SGLang ran inside a trainer."""

from __future__ import annotations

ERROR = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
QUOTED = ('Getting the warning "Request length is longer than the KV cache pool size or the max context '
          'length. Truncated" although I set context_length=8192 for the server.\n')


def test_a_finetuned_model_name_is_not_a_training_job(assistant):
    for model in ("someorg/Qwen2.5-32B-Instruct-finetuned-AWQ", "/ckpt/finetuned/qwen2-7b"):
        answer = assistant.answer(f"{QUOTED}model: {model}\n")
        assert answer.outcome == "fix", (model, answer.outcome)
        assert answer.matches[0].id == "context-length-exceeded"


def test_a_trainer_log_still_reads_as_a_training_job(assistant):
    paste = ("$ torchrun --nproc-per-node 8 finetune_qwen.py --lr 1e-5\n"
             "Traceback (most recent call last):\n"
             '  File "/work/finetune_qwen.py", line 88, in <module>\n'
             "    trainer.train()\n"
             f"{ERROR}\n")
    assert assistant.answer(paste).outcome != "fix"


PTXAS = ("subprocess.CalledProcessError: Command '['/usr/local/lib/python3.12/dist-packages/triton/backends/nvidia/"
         "bin/ptxas', '-lineinfo', '-v', '--gpu-name=sm_103a', '/tmp/tmp3cgjm1ct.ptx', '-o', "
         "'/tmp/tmp3cgjm1ct.ptx.o']' returned non-zero exit status 255.")


def test_a_failed_commands_arguments_are_kept_a_list_of_names_is_not():
    """Which tool failed, with which options, tells two `CalledProcessError`s apart; the classes
    a checkpoint lists are what varies between two reports of one error."""
    from assistant.text import mask

    assert "--gpu-name=sm_103a" in mask(PTXAS) and "ptxas" in mask(PTXAS)
    assert mask(PTXAS) != mask(PTXAS.replace("ptxas', '-lineinfo', '-v', '--gpu-name=sm_103a'", "ninja', '-v'"))
    assert mask("architectures ['Glm4ForCausalLM', 'Glm4Model'] are not supported") == \
        mask("architectures ['Qwen3ForCausalLM'] are not supported")


def test_the_failed_ptxas_command_on_a_new_gpu_is_the_bundled_ptxas_fix(assistant):
    answer = assistant.answer(f"[rank0]: Traceback (most recent call last):\n{PTXAS}\n")
    assert answer.outcome == "fix" and answer.matches[0].id == "triton-bundled-ptxas-too-old-new-gpu"


def test_a_launch_command_in_a_code_span_keeps_its_last_value_without_the_backtick():
    from assistant.commands import launch_command_flags

    pairs = launch_command_flags("Launch the server using `python3 -m sglang.launch_server --port 30000 "
                                 "--model-path openai/gpt-oss-120b --grammar-backend xgrammar`")
    assert pairs[-1] == ("--grammar-backend", "xgrammar")


MOE_WARNING = ("[2025-09-16 19:22:04 TP1] Using default MoE kernel config. Performance might be sub-optimal! "
               "Config file not found at /sgl/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_4_0/"
               "E=512,N=128,device_name=NVIDIA_H100_80GB_HBM3.json, you can create them with "
               "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n")


def test_a_title_that_opens_with_a_quote_is_not_quoted_twice(assistant):
    from assistant.render import render_text

    answer = assistant.answer("Qwen3-Next does not work on my H100 box, the log ends here:\n" + MOE_WARNING)
    assert '""' not in render_text(answer)


def test_a_chinese_readers_detected_line_is_written_in_chinese(assistant):
    from assistant.render import render_text

    answer = assistant.answer("升级之后启动就报这个错，怎么办？\n"
                              "$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2\n"
                              "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n")
    detected = next(line for line in render_text(answer).splitlines() if line.startswith("检测到"))
    assert "参数：--model-path Qwen/Qwen3-8B --tp 2" in detected and "flags:" not in detected


def test_a_dependency_without_a_pin_is_said_once(assistant):
    from assistant.render import render_text

    answer = assistant.answer("sglang==0.5.6\nModuleNotFoundError: No module named 'acme_quantizer'")
    assert answer.abstained
    assert render_text(answer).count("no pin is known for acme-quantizer") == 1


def test_update_weights_names_no_package(assistant):
    """`update weights` is an RL trainer's operation, not a package to upgrade; `upgrade
    transformers` still names one."""
    answer = assistant.answer("[Bug] DeepSeek 3.1T update weights error\n"
                              "I hit a shape mismatch when updating weights in buckets from verl.\n"
                              "RuntimeError: The size of tensor a (7168) must match the size of tensor b (3584) "
                              "at non-singleton dimension 0\n")
    assert answer.dependency is None and "weights" not in (answer.to_json()["dependency"] or {})
    from assistant.deps import dependency_advice

    assert dependency_advice(["sglang==0.5.6", "Please upgrade transformers to load this model"]).package == "transformers"


NO_CUDA_MODULE = ("Traceback (most recent call last):\n"
                  '  File "/sgl/python/sglang/srt/layers/attention/fla/chunk.py", line 5, in <module>\n'
                  "    import cuda\n"
                  "ModuleNotFoundError: No module named 'cuda'\n")


def test_an_ascend_paste_is_not_told_to_install_a_cuda_package(assistant):
    """On an NPU a missing CUDA module means NVIDIA-only code ran by mistake; on an NVIDIA machine
    the missing package is still named with its install command."""
    ascend = assistant.answer("sglang 0.5.6 (image sglang:v0.5.6-ascend-a3) on Atlas 800 A3 with torch_npu\n" + NO_CUDA_MODULE)
    assert ascend.dependency is None and "pip install cuda-python" not in ascend.text
    nvidia = assistant.answer("sglang 0.5.6 on 8x H100\n" + NO_CUDA_MODULE)
    assert nvidia.dependency is not None and nvidia.dependency.package == "cuda-python"
