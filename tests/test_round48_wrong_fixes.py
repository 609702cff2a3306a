"""Wrong fixes (round 48, h2): a confident fix for a problem the paste does not have is the worst
answer `ask` gives. Three general causes, as a user meets them:

- the paste is another program's (LM Studio, a GPU stress test): its error line is one an SGLang
  entry knows, but the SGLang fix is not the program's;
- the user dates the failure to upgrading another package ("worked with mooncake 0.3.8, fails
  after upgrading it to 0.3.10"): an entry that blames something else explains the line, not the
  change that broke it;
- the entry's fix raises a timeout the paste shows already raised (`timed out after 600.0s` where
  the default is 300 s and the fix sets 600).

Each is then a lead that says why, never the fix; the same lines without that context stay a fix."""

from __future__ import annotations

from assistant.dependency_upgrade import upgraded_package
from assistant.pipeline import lines_from_text
from assistant.trace import analyze_lines

LMSTUDIO = (
    "Chat client pointed at gemma-3-27b-it served by LM Studio; the LM Studio server log shows:\n"
    "Error: Jinja Exception: Conversation roles must alternate user/assistant/user/assistant/...\n")
GPU_BURN = (
    "gpu-burn on an 8x H100 SXM box (driver 570) cannot start although nvidia-smi shows all GPUs:\n"
    "Couldn't init CUDA: Error (gpu_burn-drv.cpp:304): system not yet initialized\n")
MOONCAKE_LINES = (
    "[2026-03-02 10:11:12 TP3] Session 10.0.0.7:17001 failed.\n"
    "[2026-03-02 10:11:12 TP3] Prefill transfer failed for request rank=3 req.rid='abc' req.bootstrap_room=123 "
    "with exception KVTransferError(bootstrap_room=123): Decode instance could be dead, remote mooncake session "
    "10.0.0.7:17001 is not alive\n")
MOONCAKE_UPGRADE = ("PD disaggregation on sglang 0.5.9. It works fine with mooncake-transfer-engine 0.3.8, "
                    "but after I upgraded mooncake to 0.3.10 every request fails:\n" + MOONCAKE_LINES)
MOONCAKE_PLAIN = "PD disaggregation on sglang 0.5.9, every request fails:\n" + MOONCAKE_LINES


def waiting_timeout(seconds: str) -> str:
    return ("PD disaggregation, DeepSeek-V3 1P2D on H200, under load the decode server logs:\n"
            "[2026-03-02 10:11:12 DP0 TP0] Decode transfer failed for request rank=0 decode_req.req.rid='abc' "
            "decode_req.req.bootstrap_room=42 with exception KVTransferError(bootstrap_room=42): "
            f"Request 42 timed out after {seconds}s in KVPoll.WaitingForInput\n")


def _reasons(answer) -> str:
    return " ".join(str(r) for r in answer.to_json().get("reasons") or ())


def test_a_local_llm_app_paste_gets_no_sglang_fix(assistant):
    answer = assistant.answer(LMSTUDIO)
    assert answer.outcome != "fix"
    assert "other software" in _reasons(answer) and "lm studio" in _reasons(answer).lower()


def test_a_gpu_stress_test_paste_gets_no_sglang_fix(assistant):
    answer = assistant.answer(GPU_BURN)
    assert answer.outcome != "fix"
    assert "gpu-burn" in _reasons(answer)


def test_a_failure_dated_to_a_dependency_upgrade_is_not_the_network_fix(assistant):
    answer = assistant.answer(MOONCAKE_UPGRADE)
    assert answer.outcome == "lead"
    assert "until you upgraded mooncake" in _reasons(answer)
    assert "Pin mooncake back" in _reasons(answer)


def test_the_same_lines_without_an_upgrade_stay_a_fix(assistant):
    assert assistant.answer(MOONCAKE_PLAIN).outcome == "fix"


def test_a_timeout_already_raised_is_not_fixed_by_raising_it(assistant):
    answer = assistant.answer(waiting_timeout("600.0"))
    assert answer.outcome == "lead"
    assert answer.matches[0].id == "pd-bootstrap-waiting-timeout"
    assert "already waited 600 s" in _reasons(answer)


def test_the_default_timeout_is_still_fixed_by_raising_it(assistant):
    answer = assistant.answer(waiting_timeout("300.0"))
    assert answer.outcome == "fix" and answer.matches[0].id == "pd-bootstrap-waiting-timeout"
    assert "SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600" in "\n".join(answer.fix)


def _upgraded(text: str) -> str | None:
    return upgraded_package(analyze_lines(lines_from_text(text)))


def test_only_an_upgrade_that_broke_a_working_setup_names_a_package():
    assert _upgraded("It works fine with mooncake-transfer-engine 0.3.8, but after I upgraded mooncake "
                     "to 0.3.10 every request fails") == "mooncake"
    # an upgrade that fixed it, and SGLang's own upgrade (assistant.upgrade's), name none
    assert _upgraded("Upgraded flashinfer to 0.4.1 and now it works fine") is None
    assert _upgraded("sglang 0.5.2 worked fine, after I upgraded sglang to 0.5.4 it crashes") is None
