"""Round 51: where an error comes from, and which line a lead says would confirm it.

Python's own `module 'x' has no attribute 'y'` (CPython's Objects/moduleobject.c, also its
"partially initialized module" form in an import cycle) is the interpreter's wording for any module:
a paste quoting it for `transformers` is not given an SGLang module's `__getattr__` as its origin.

A lead about several variants of a failure offers, as the line that would confirm it, the variant
closest to what the paste shows and tells of, not simply the entry's first line: an Ascend start-up
failure that goes away with `--disable-cuda-graph` is offered the NPU graph capture error, not the
missing-`torch_npu` NameError listed first.
"""

from __future__ import annotations

from assistant.python_messages import python_words, within

TRANSFORMERS_MODULE_ATTRIBUTE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/models/qwen2.py", line 5, in <module>\n'
    "    from transformers import Qwen3Config\n"
    "AttributeError: module 'transformers' has no attribute 'Qwen3Config'\n")

ASCEND_STARTUP_WITHOUT_GRAPH = (
    "Environment: Ascend Atlas 800I A2, one card, backend ascend (NPU), model Qwen/Qwen3-0.6B\n"
    "python3 -m sglang.launch_server --model-path Qwen/Qwen3-0.6B --device npu --attention-backend ascend\n"
    "Result: initialization failed. With --disable-cuda-graph added the server starts and /generate "
    "works, but it is slower.\n")


def test_python_reads_a_module_attribute_error_as_its_own_words():
    # the words an SGLang module's `__getattr__` template shares with it name no site
    template = ["module", "has", "no", "attribute"]
    plain = python_words("AttributeError: module 'transformers' has no attribute 'Qwen3Config'")
    cycle = python_words("AttributeError: partially initialized module 'sglang.srt.utils' has no attribute "
                         "'get_bool_env_var' (most likely due to a circular import)")
    assert plain is not None and within(template, plain)
    assert cycle is not None and within(template, cycle)


def test_a_transformers_module_attribute_error_is_given_no_sglang_origin(assistant):
    answer = assistant.answer(TRANSFORMERS_MODULE_ATTRIBUTE)
    assert "Where it comes from: SGLang" not in answer.text
    assert "__getattr__" not in answer.text
    assert "Where it arises: transformers" in answer.text


def test_an_ascend_startup_failure_fixed_by_disabling_graphs_is_offered_the_capture_error(assistant):
    answer = assistant.answer(ASCEND_STARTUP_WITHOUT_GRAPH)
    assert answer.to_json()["matches"][0]["id"] == "ascend-npu-serving-failure-isolate"
    confirm = answer.to_json()["confirm_if"]
    assert confirm and "AclmdlRICaptureEnd" in confirm[0]
    assert "would apply if your log also shows:\n  > NPU function error: c10_npu::acl::AclmdlRICaptureEnd" in answer.text
