"""Round 50: confident fixes for a different problem.

- A report told in words, with no error line, says what failed. When the only line of an entry's it
  repeats is a source line the user quoted from SGLang's code, that line shows where they looked,
  not what failed: an entry about a crash is not the fix for a report that the same code path is
  slow. The entry stays the lead, with the reason; a crash report quoting the same line keeps its fix.
- A failure an entry names only to say it is another problem's ("a crash next to it has another
  cause") is not what the entry is about, so a slowness report pasting its warning keeps its steps.
"""

from __future__ import annotations

from assistant.render import render_text

JUMP_FORWARD = "jump-forward-constrained-decoding-crash"

QUOTED_SOURCE_SLOW = (
    "sglang 0.4.1, A10G, --grammar-backend xgrammar. Requests with a json_schema are much slower than the same "
    "requests without one. Reading the code, I suspect the jump-forward step does useless work every step:\n"
    "    def try_jump_forward(self, tokenizer):\n"
    "        s = self.matcher.find_jump_forward_string()\n"
    "        if s:\n"
    "            return [], s\n"
    "        return None\n")

QUOTED_SOURCE_CRASH = (
    "sglang 0.4.1, A10G, --grammar-backend xgrammar. The server crashes on the first json_schema request. "
    "Reading the code, it dies in the jump-forward step:\n"
    "    def try_jump_forward(self, tokenizer):\n"
    "        s = self.matcher.find_jump_forward_string()\n")


def test_a_slowness_report_quoting_an_entrys_source_line_does_not_get_the_crash_fix(assistant):
    shown = assistant.answer(QUOTED_SOURCE_SLOW).to_json()
    assert shown["outcome"] != "fix"
    if shown["matches"] and shown["matches"][0]["id"] == JUMP_FORWARD:
        # the user is told why the closest entry is not the answer
        assert any("slow" in reason and "crash" in reason for reason in shown["reasons"])


def test_a_crash_report_quoting_the_same_line_keeps_the_entrys_fix(assistant):
    shown = assistant.answer(QUOTED_SOURCE_CRASH).to_json()
    assert (shown["outcome"], shown["matches"][0]["id"]) == ("fix", JUMP_FORWARD)


MOE_WARNING_SLOW = (
    "Qwen3-30B-A3B on two L40S, sglang 0.5.9. The first requests are slow, is this warning the reason?\n"
    "[2026-03-11 08:15:40 TP1] Using default MoE kernel config. Performance might be sub-optimal! Config file not "
    "found at /opt/venv/lib/python3.11/site-packages/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_3_1/"
    "E=128,N=384,device_name=NVIDIA_L40S.json, you can create them with "
    "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n")


def test_a_crash_an_entry_names_as_another_problems_is_not_its_kind(assistant):
    # the MoE-config entry's title says "a crash next to it has another cause": that names what it is
    # not about, so a slowness report is not told the entry "is about crash"; an entry that names a
    # crash as its own (the Mamba spec-verify crash) still agrees with a hang (test_round47_words)
    answer = assistant.answer(MOE_WARNING_SLOW)
    shown = answer.to_json()
    assert shown["matches"][0]["id"] == "moe-default-kernel-config-warning"
    assert not any("a different kind of failure" in reason for reason in shown["reasons"])
    assert "tuning_fused_moe_triton.py" in render_text(answer)
