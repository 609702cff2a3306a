"""Other wordings of a known cause (round 48, h5): the line an older release prints for the same
check, or the Python error the same missing package raises before SGLang checked for it, gets the
entry's fix, as the line the entry was written from does."""

from __future__ import annotations

# SGLang 0.4.2-0.4.5 swallow the failed `import torch_memory_saver` and then fail on the missing
# name when the memory saver is enabled (0.4.6 and later log "... is not installed" instead)
TMS_NAMEERROR = (
    "Running the verl rollout on SGLang 0.4.4.post3 (ROCm image) with enable_memory_saver=True:\n"
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/engine.py", line 499, in _launch_subprocesses\n'
    "    with memory_saver_adapter.configure_subprocess():\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/torch_memory_saver_adapter.py", line 48, in configure_subprocess\n'
    "    return torch_memory_saver.configure_subprocess()\n"
    "NameError: name 'torch_memory_saver' is not defined\n")

# 0.4.6-0.5.2 word the prefill's failed registration "Prefill Failed to register ..." (0.5.3 and
# later: "Prefill instance failed to register ...")
PD_REGISTER_OLD = (
    "[2025-07-01 10:00:00 TP0] Prefill Failed to register to bootstrap server: "
    "HTTPConnectionPool(host='10.0.0.5', port=8998): Max retries exceeded with url: /route "
    "(Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))\n")

# 0.4.2-0.4.10 word the ModelOpt FP8 config's check without naming ModelOptFp4Config
MODELOPT_OLD = (
    "python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct-FP4 --tp 1\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/quantization/modelopt_quant.py", line 112, in from_config\n'
    "    raise ValueError(\n"
    "ValueError: ModelOpt only supports static FP8 quantization in SGLang. "
    "Check the `hf_quant_config.json` file for your model's configuration.\n")


def test_nameerror_of_the_swallowed_import_gets_the_memory_saver_fix(assistant):
    answer = assistant.answer(TMS_NAMEERROR)
    assert answer.outcome == "fix" and answer.matches[0].id == "torch-memory-saver-not-active"
    fix = "\n".join(answer.fix)
    assert "AMD ROCm" in fix and "`--enable-memory-saver`" in fix


def test_older_registration_wording_gets_the_bootstrap_fix(assistant):
    answer = assistant.answer(PD_REGISTER_OLD)
    assert answer.outcome == "fix" and answer.matches[0].id == "pd-bootstrap-port-mismatch"
    assert "--disaggregation-bootstrap-port" in "\n".join(answer.fix)


def test_older_modelopt_fp8_wording_gets_the_fp4_flag(assistant):
    answer = assistant.answer(MODELOPT_OLD)
    assert answer.outcome == "fix" and answer.matches[0].id == "quantization-arg-conflicts-with-checkpoint"
    assert "--quantization modelopt_fp4" in "\n".join(answer.fix)
