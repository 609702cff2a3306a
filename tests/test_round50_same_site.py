"""Round 50: an entry knows its error in every release's wording, not only the one it was written from.

SGLang rewords a message between releases while the check that raises it stays where it was. The
message registry lists, for every KB entry, the other releases' wordings of the entry's own
messages (same module and function, same condition or the same exception with most words shared,
never printed by one release together). Where the entry's cause holds for those releases the
wording is now one of its signatures (and a fix step that opens with the message names both
wordings), so a user on that release gets the entry's answer:

- 0.5.18+ `ModelOptFp8Config only supports regular FP8 quantization, but found 'NVFP4'` is the
  ModelOpt FP8 check that 0.5.1-0.5.17 worded `... only supports static FP8 quantization ...`;
- 0.4.0-0.4.3 `ValueError: Abort request <rid>` is the client-disconnect check that later
  releases word `Request is disconnected from the client side ... Abort request`.
"""

from __future__ import annotations

QUANT_CONFLICT = "quantization-arg-conflicts-with-checkpoint"
CLIENT_DISCONNECT = "client-disconnect-request-aborted"

NVFP4_WITH_FP8_CONFIG = (
    "sglang 0.5.18, launching an NVFP4 DeepSeek-R1 checkpoint with --quantization modelopt --tp 4 on 4x B200:\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_loader/loader.py", line 187, in _get_quantization_config\n'
    "    return quant_cls.from_config(hf_quant_config)\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/quantization/modelopt_quant.py", line 466, in from_config\n'
    "    raise ValueError(\n"
    "ValueError: ModelOptFp8Config only supports regular FP8 quantization, but found 'NVFP4'. Use the native "
    "'mxfp8' quantization method for MXFP8 or ModelOptFp4Config for FP4.\n")

OLD_CLIENT_ABORT = (
    "sglang 0.4.2 behind our gateway; under load the server log fills with these:\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/tokenizer_manager.py", line 422, in _wait_one_response\n'
    '    raise ValueError(f"Abort request {obj.rid}")\n'
    "ValueError: Abort request 5c1f0e2b9a7d4c3e8f6a1b2c3d4e5f60\n")


def _shown(assistant, paste: str) -> dict:
    return assistant.answer(paste).to_json()


def test_the_0_5_18_wording_of_the_modelopt_fp8_check_gets_the_modelopt_step_as_its_own_case(assistant):
    answer = assistant.answer(NVFP4_WITH_FP8_CONFIG)
    shown = answer.to_json()
    assert shown["outcome"] == "fix"
    assert shown["matches"][0]["id"] == QUANT_CONFLICT
    assert "ModelOptFp8Config only supports regular FP8 quantization" in " ".join(shown["matches"][0]["evidence"])
    # the step for the ModelOpt check is the user's case, not one "for another case than your paste shows"
    modelopt_steps = [step for step in answer.fix if "ModelOptFp8Config only supports" in step]
    assert modelopt_steps and all(step.startswith("`ModelOptFp8Config") for step in modelopt_steps)
    assert any("--quantization modelopt_fp4" in step for step in modelopt_steps)


def test_the_0_4_2_wording_of_the_client_disconnect_check_gets_its_fix(assistant):
    shown = _shown(assistant, OLD_CLIENT_ABORT)
    assert shown["outcome"] == "fix"
    assert shown["matches"][0]["id"] == CLIENT_DISCONNECT
