"""Answers for SGLang-Omni failing to map a model to a pipeline (round 48, h4): `sgl-omni serve`
stopping with `Could not resolve model architecture` gets the entry that says why the config.json
was not read and what to pass instead, and SGLang's own architecture errors do not."""

from __future__ import annotations

ENTRY = "omni-serve-could-not-resolve-model-architecture"

MING = (
    "$ sgl-omni serve --model-path inclusionAI/Ming-flash-omni-2.0 --port 8000\n"
    "Do you wish to run the custom code? [y/N] y\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/sglang-omni/sglang_omni/config/manager.py", line 58, in from_model_path\n'
    "    raise ValueError(\n"
    "ValueError: Could not resolve model architecture for 'inclusionAI/Ming-flash-omni-2.0'. "
    "Use a Hugging Face model id or a local directory with config.json (architectures) "
    "or Mistral params.json (model_type, e.g. voxtral_tts).\n")

# SGLang (not Omni) rejecting an architecture it has no model class for is another failure
SGLANG_ARCH_UNSUPPORTED = (
    "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. "
    "Supported architectures: dict_keys(['LlamaForCausalLM', 'Qwen2ForCausalLM'])\n")


def test_omni_architecture_error_gets_the_local_snapshot_fix(assistant):
    answer = assistant.answer(MING)
    assert answer.outcome == "fix" and answer.matches[0].id == ENTRY
    fix = "\n".join(answer.fix)
    assert "snapshot" in fix and "#275" in fix


def test_sglang_unsupported_architecture_is_not_this_entry(assistant):
    answer = assistant.answer(SGLANG_ARCH_UNSUPPORTED)
    assert not (answer.matches and answer.matches[0].id == ENTRY)
