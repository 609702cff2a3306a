"""Round 49: three leftovers a user notices in the answer.

- A CUDA device-side assert is not an illegal memory access: PyTorch prints the same three notes
  under both ("CUDA kernel errors might be asynchronously reported ...", "For debugging consider
  passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` ..."), and those notes alone
  made the illegal-access entry the lead of every device-side assert. The answer now leads with
  what the assert says; an illegal memory access under the same notes keeps its entry.
- A paste handed from one entry to a sibling (`tell_apart`) that the user has already cleared
  ("cat config.json shows normal JSON") says both: why it was handed on and the user's words that
  cleared it.
- SGLang 0.3.4.post2-0.3.5.post1 warned `skip invalid json schema: json_schema=...` for a schema
  outlines could not compile: that warning is the json-schema entry's, on those releases too.
"""

from __future__ import annotations

from assistant.render import render_text

ILLEGAL_ACCESS = "illegal-memory-access"
CONFIG_JSON = "hf-config-json-malformed"
JSON_SCHEMA = "json-schema-unsupported-by-grammar-backend"

CUDA_ERROR_TRACE = (
    "[2025-06-11 08:14:02 TP0] Prefill batch. #new-seq: 1, #new-token: 812, #cached-token: 0, token usage: 0.02, "
    "#running-req: 0, #queue-req: 0\n"
    "[2025-06-11 08:14:02 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2310, in run_scheduler_process\n'
    "    scheduler.event_loop_normal()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 660, in event_loop_normal\n'
    "    result = self.run_batch(batch)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 1120, in sample\n'
    "    next_token_ids = next_token_ids.tolist()\n"
    "RuntimeError: CUDA error: {error}\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")

CONFIG_TRACE = (
    "sglang.launch_server stops at once, although cat config.json shows normal JSON (I opened it by hand):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/transformers/configuration_utils.py", line 662, in _get_config_dict\n'
    "    config_dict = cls._dict_from_json_file(resolved_config_file)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/transformers/configuration_utils.py", line 760, in _dict_from_json_file\n'
    "    return json.loads(text)\n"
    "OSError: It looks like the config file at '/models/Qwen2.5-14B-Instruct/config.json' is not a valid JSON file.\n")


def test_a_device_side_assert_is_not_led_by_the_illegal_memory_access_entry(assistant):
    answer = assistant.answer(CUDA_ERROR_TRACE.format(error="device-side assert triggered"))
    shown = answer.to_json()
    assert not (shown["outcome"] in ("fix", "lead") and shown["matches"][0]["id"] == ILLEGAL_ACCESS)
    # what the user reads instead: the assert is a failed check inside a kernel, and where to find it
    assert "a device-side assert is a check inside a kernel that failed, not a memory fault" in render_text(answer)


def test_an_illegal_memory_access_under_the_same_notes_keeps_its_entry(assistant):
    shown = assistant.answer(CUDA_ERROR_TRACE.format(error="an illegal memory access was encountered")).to_json()
    assert shown["matches"][0]["id"] == ILLEGAL_ACCESS


def test_a_paste_handed_to_an_entry_the_user_cleared_says_why_it_was_cleared(assistant):
    shown = assistant.answer(CONFIG_TRACE).to_json()
    assert shown["outcome"] != "fix" and shown["matches"][0]["id"] == CONFIG_JSON
    assert any('"shows normal JSON"' in reason for reason in shown["reasons"])


def test_sglang_0_3_5s_skip_invalid_json_schema_warning_is_the_json_schema_entrys(assistant):
    shown = assistant.answer(
        "Structured output ignores my schema on sglang 0.3.5, the server log only says:\n"
        "[2024-11-12 10:21:33 TP0] skip invalid json schema: json_schema={\"type\": \"object\", \"properties\": "
        "{\"when\": {\"type\": \"string\", \"format\": \"date-time\"}}}, "
        "e=NotImplementedError('Format date-time is not supported')\n").to_json()
    assert (shown["outcome"], shown["matches"][0]["id"]) == ("fix", JSON_SCHEMA)
