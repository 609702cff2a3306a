"""Every KB entry is found by its own error lines: `ask` on an entry's signatures (or, for an entry
without error lines, its symptoms) ranks that entry first."""

import pytest

from assistant.decision import engines_of
from assistant.kb import load_entries
from assistant.retrieve import signature_match
from assistant.text import mask
from assistant.trace import analyze_lines
from tests.conftest import REPO

ENTRIES = load_entries(REPO / "kb" / "entries")
BY_ID = {e.id: e for e in ENTRIES}
PLATFORM_LINE = {"amd": "8x MI300X, ROCm 6.3", "musa": "MTT S4000 (Moore Threads), MUSA 4.0", "ascend": "Ascend 910B NPU, CANN 8.0"}
OS_LINE = {"windows": "Windows 11, Python 3.11", "macos": "macOS 15 on a MacBook Pro (Apple M3)",
           "aarch64": "GH200 (aarch64), Ubuntu 24.04", "linux": "Ubuntu 20.04 (x86_64)"}
ENGINE_LINE = "python3 -m sgl_jax.launch_server on a TPU v6e-8"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_entry_ranks_first_on_its_own_signatures(assistant, entry):
    query = "\n".join(entry.signatures or entry.symptoms)
    # a user of an entry about AMD, Moore Threads or Ascend hardware is on that hardware, and a log
    # that shows no hardware is read as NVIDIA's
    platform = [PLATFORM_LINE[h] for h in entry.hardware if h in PLATFORM_LINE]
    if platform and "nvidia" not in entry.hardware:
        query = f"{platform[0]}\n{query}"
    # and a user of an entry about one operating system shows it
    if entry.os:
        query = f"{OS_LINE[entry.os[0]]}\n{query}"
    # and a user of an entry about SGLang-JAX runs SGLang-JAX
    if engines_of(entry.title, entry.components):
        query = f"{ENGINE_LINE}\n{query}"
    answer = assistant.answer(query)
    ranked = [m.id for m in answer.matches]
    # an entry about one cause of a line a broader entry also lists (the router's breaker behind
    # `No available workers (all circuits open or unhealthy)`) is told apart by the paste's words,
    # not by the line: on the line alone it comes right after the entry that owns it
    owner = BY_ID.get(ranked[0]) if ranked else None
    if entry.signatures and owner is not None and owner.id != entry.id and set(entry.signatures) <= set(owner.signatures):
        assert ranked[1] == entry.id, f"{entry.id}: ranked {ranked[:3]}"
        return
    assert ranked and ranked[0] == entry.id, f"{entry.id}: ranked {ranked[:3]}"


def test_entry_whose_error_line_is_in_the_log_is_tried_however_the_scores_rank_it(assistant, monkeypatch):
    # a one-line install error under pages of pip output: the words of the output rank other
    # entries first, and an entry outside the scored pool would never get its signature tried
    import assistant.retrieve as retrieve
    monkeypatch.setattr(retrieve, "CANDIDATES", 1)
    paste = "\n".join([
        "PS C:\\Users\\ops\\src\\sglang> pip install -e \"python[all]\"",
        "Obtaining file:///C:/Users/ops/src/sglang/python",
        "  Installing build dependencies ... done",
        "  Getting requirements to build editable ... done",
        "Collecting aiohttp (from sglang==0.4.6)",
        "  Using cached aiohttp-3.11.18-cp312-cp312-win_amd64.whl.metadata (8.0 kB)",
        "Requirement already satisfied: torch in c:\\python312\\lib\\site-packages (from sglang==0.4.6) (2.6.0)",
        "INFO: pip is looking at multiple versions of sglang[srt] to determine which version is compatible.",
        "ERROR: No matching distribution found for sgl-kernel==0.1.0; extra == \"srt\"",
    ])
    answer = assistant.answer(paste)
    assert [m.id for m in answer.matches][:1] == ["windows-native-unsupported"]


def _near_match(signature: str, line: str) -> float:
    """How well a signature matches one log line on its own (0: no match)."""
    masked = mask(line).lower()
    return signature_match([signature], (masked,), masked)[0]


def _assert_not_fixed_by(assistant, entry_id: str, lines: list[str]) -> None:
    answer = assistant.answer("\n".join(lines))
    assert not (answer.outcome == "fix" and answer.matches[0].id == entry_id)


def test_an_error_about_another_quoted_name_does_not_nearly_match(assistant):
    # `module 'sglang' has no attribute` (the cloned repo shadowing the package) holds every word of
    # `module 'sglang.srt.utils' has no attribute 'get_ip'` (a tool built for another release): the
    # quoted module is what the error is about, so it must agree for a near match
    _assert_not_fixed_by(assistant, "sglang-import-unknown-location", [
        "Traceback (most recent call last):",
        '  File "/opt/app/rollout.py", line 12, in <module>',
        "    ip = sglang.srt.utils.get_ip()",
        "AttributeError: module 'sglang.srt.utils' has no attribute 'get_ip'",
    ])
    shadowed = assistant.answer("AttributeError: module 'sglang' has no attribute 'Engine'")
    assert shadowed.outcome == "fix" and shadowed.matches[0].id == "sglang-import-unknown-location"


def test_a_missing_file_or_program_is_told_apart_by_its_name(assistant):
    # `No such file or directory: 'sglang'` (no `sglang` command: an old release or a slim image)
    # holds every word but one of flashinfer's JIT failing to find nvcc
    _assert_not_fixed_by(assistant, "sglang-cli-command-not-found", [
        'sglang 0.5.4.post1 on a runtime-only CUDA image. The first request kills the server:',
        '  File "/usr/local/lib/python3.10/dist-packages/flashinfer/jit/cpp_ext.py", line 92, in get_cuda_path',
        '    nvcc_version = subprocess.check_output([nvcc, "--version"])',
        "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'",
    ])
    assert _near_match("bash: sglang: command not found", "/bin/bash: line 1: nvcc: command not found") == 0
    assert _near_match("bash: sglang: command not found", "/bin/bash: line 1: sglang: command not found") > 0


def test_a_package_pip_cannot_find_is_told_apart_by_its_name(assistant):
    # pip finding no release of an old vllm pin of the HIP extra holds every word of pip finding
    # no sglang 0.5.11 wheel on an old glibc; the package is what the line is about
    _assert_not_fixed_by(assistant, "sglang-wheel-glibc-rust-protoc-build", [
        "Installing SGLang from source with the HIP extra on 8x MI300X:",
        'ERROR: No matching distribution found for vllm==0.6.3.post2.dev1; extra == "srt-hip"',
    ])
    signature = "ERROR: No matching distribution found for sglang==0.5.11"
    assert _near_match(signature, "ERROR: No matching distribution found for vllm==0.6.3.post2.dev1") == 0
    assert _near_match(signature, "ERROR: No matching distribution found for sglang==0.5.12") > 0


def test_the_same_words_in_another_order_do_not_nearly_match(assistant):
    # SGLang warns both ways round: more placeholders than images (the entry's 500) and more
    # images than placeholders (images ignored, no error); a bag of words cannot tell them apart
    _assert_not_fixed_by(assistant, "vlm-image-placeholder-count-mismatch", [
        "[2025-07-25 20:20:27] The server is fired up and ready to roll!",
        "[2025-07-25 20:20:30] Warning: More image data items provided than corresponding tokens found in the prompt.",
    ])
    signature = "Mismatch: More 'IMAGE' tokens found than corresponding data provided."
    assert _near_match(
        signature, "Warning: More image data items provided than corresponding tokens found in the prompt.") == 0
    assert _near_match(signature, "Mismatch: More image tokens found than corresponding data items provided.") > 0


def test_a_line_that_gives_a_field_another_value_does_not_nearly_match():
    # a near match tolerates a missing word, not `bootstrap_room=<n>` for an entry about `bootstrap_room=None`
    signature = "KVTransferError(bootstrap_room=None): Request aborted before the prefill server sent its KV cache"
    tail = ": Request aborted before prefill server sent its KV cache"
    assert _near_match(signature, "KVTransferError(bootstrap_room=None)" + tail) > 0
    assert _near_match(signature, "KVTransferError(bootstrap_room=8812734)" + tail) == 0


def test_a_report_whose_summary_is_in_its_title_and_description_ranks_by_them(assistant):
    # a GitHub-style report with no error line: its title and "Describe the bug" section say it is
    # a regression after an upgrade; the launch command and environment below say little
    from tests.test_trace import GITHUB_REPORT

    answer = assistant.answer(GITHUB_REPORT)
    assert [m.id for m in answer.matches][:1] == ["regression-after-sglang-upgrade-bisect"]
    assert answer.outcome == "lead"   # a triage entry: next steps, not a fix


def test_an_error_the_server_went_on_serving_after_is_not_what_stopped_it(assistant):
    # one request rejected early in a long-running server's log, then hours of serving, then the
    # crash: the answer is about the crash
    rejected = ["[2025-09-01 05:33:20] ERROR:    Exception in ASGI application",
                "ValueError: The input (40960 tokens) is longer than the model's context length (32768 tokens)."]
    serving = [f"[2025-09-01 06:{i:02d}:00 TP0] Decode batch. #running-req: 12, #token: 8000, token usage: 0.10, "
               f"gen throughput (token/s): 900.00, #queue-req: 0" for i in range(40)]
    crash = ["[2025-09-02 02:13:59 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
             "[2025-09-02 02:14:01] Received sigquit from a child process. It usually means the child failed.",
             "Killed"]
    answer = assistant.answer("\n".join(rejected + serving + crash))
    assert answer.matches[0].id == "scheduler-watchdog-timeout", [m.id for m in answer.matches]
    # without the serving in between, the rejected request is as likely the cause: it is not demoted
    assert analyze_lines(rejected + crash).errors[0].text.startswith("ValueError")
