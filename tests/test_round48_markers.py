"""Round 48 (h12): an error message copied without its exception class
(`AutoImageProcessor.register() got multiple values for argument 'exist_ok'`) is still the entry's
error, when the message is specific; a generic message alone (`CUDA error: an illegal memory access
was encountered`) stays as weak as before."""

from __future__ import annotations

TRANSFORMERS = "transformers-version-breaks-sglang-import"


def test_a_message_copied_without_its_class_gets_the_entrys_fix(assistant):
    paste = ("GLM-4.6V with `sglang serve --model-path /models/GLM-4.6V`, sglang 0.5.8, transformers 5.1.0. "
             "It fails while importing sglang.srt.configs:\n\n"
             "AutoImageProcessor.register() got multiple values for argument 'exist_ok'\n")
    shown = assistant.answer(paste).to_json()
    assert (shown["outcome"], shown["matches"][0]["id"]) == ("fix", TRANSFORMERS)


def test_a_message_after_another_exception_class_is_not_taken_for_the_entrys_error():
    from assistant.decision import SIGNATURE_OK
    from assistant.retrieve import signature_match
    from assistant.term_weights import masked_signature

    sig = "TypeError: AutoImageProcessor.register() got multiple values for argument 'exist_ok'"
    other = masked_signature("ValueError: AutoImageProcessor.register() got multiple values for argument 'exist_ok'")[0]
    assert signature_match([sig], (other,), other)[0] < SIGNATURE_OK
    copied = masked_signature("AutoImageProcessor.register() got multiple values for argument 'exist_ok'")[0]
    assert signature_match([sig], (copied,), copied)[0] >= SIGNATURE_OK


def test_a_generic_message_without_its_class_stays_weak():
    from assistant.decision import SIGNATURE_OK
    from assistant.retrieve import signature_match
    from assistant.term_weights import masked_signature

    sig = "RuntimeError: CUDA error: an illegal memory access was encountered"
    copied = masked_signature("CUDA error: an illegal memory access was encountered")[0]
    assert signature_match([sig], (copied,), copied)[0] < SIGNATURE_OK
