"""Round 49: no confident fix for a different problem.

`no kernel image is available` is printed both by a wheel built without the user's (new) GPU
architecture and by a kernel FlashInfer compiled on the machine itself for the other card of a TP
group that mixes two generations (an RTX 4090 with an RTX 3090). A paste that shows FlashInfer's JIT
cache or its arch list is the second case: it leads to the mixed-GPU entry, never to the new-GPU
wheel fix; the same error on an RTX 5090 keeps that fix.

A training script named as what failed (`sft_train.py`), with nothing of SGLang in the paste, is the
user's training job: the config error it hits inside transformers gets no SGLang fix (`--model-path`
points at a raw checkpoint), only a lead; the same traceback under `sglang.launch_server` keeps it."""

from __future__ import annotations

NEW_GPU = "sgl-kernel-no-kernel-image-new-gpu"
MIXED_TP = "tp-mixed-gpu-architectures-jit-kernel-wrong-arch"

NO_KERNEL_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def _shown(answer):
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"]


def test_a_flashinfer_jit_cache_built_for_the_other_card_is_not_the_new_gpu_wheel_fix(assistant):
    answer = assistant.answer(
        "SGLang with --tp-size 2 on an RTX 4080 and an RTX 3080 in the same box dies at warmup:\n"
        + NO_KERNEL_IMAGE
        + "cuobjdump on ~/.cache/flashinfer/0.6.3/86/sampling.so lists only sm_89 code.\n")
    outcome, shown_id = _shown(answer)
    assert shown_id == MIXED_TP
    assert outcome in ("fix", "lead")


def test_the_same_error_on_a_new_gpu_keeps_the_wheel_fix(assistant):
    answer = assistant.answer("Fresh install on an RTX 5090, the server fails at its first forward:\n"
                              + NO_KERNEL_IMAGE)
    assert _shown(answer) == ("fix", NEW_GPU)


CONFIG_DECODE = (
    '  File "/opt/conda/lib/python3.10/site-packages/transformers/configuration_utils.py", line 705, in _get_config_dict\n'
    "    config_dict = cls._dict_from_json_file(resolved_config_file)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/transformers/configuration_utils.py", line 796, in _dict_from_json_file\n'
    "    text = reader.read()\n"
    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x8b in position 1: invalid start byte\n")
RAW_CHECKPOINT = "model-path-not-hf-model-directory"


def test_a_training_script_with_nothing_of_sglang_gets_no_sglang_fix(assistant):
    answer = assistant.answer("torchrun --nproc_per_node 4 finetune/sft_train.py --model_name_or_path /data/llama-7b "
                              "fails at once:\n" + CONFIG_DECODE)
    shown = answer.to_json()
    assert shown["outcome"] != "fix"
    assert any("sft_train.py" in reason for reason in shown["reasons"])


def test_the_same_traceback_under_sglang_keeps_its_fix(assistant):
    answer = assistant.answer("python -m sglang.launch_server --model-path /data/llama-7b/consolidated.00.pth "
                              "fails at once:\n" + CONFIG_DECODE)
    assert _shown(answer) == ("fix", RAW_CHECKPOINT)
