"""The three outcomes (fix, lead, unknown) as a user sees them on every surface: the CLI's first
line and exit code, `--json`, the web page, Slack, and the LLM mode's labelling. A lead must never
look like a fix: no Fix section, no copyable fix commands, the entry's steps nowhere."""

from __future__ import annotations

import json

import pytest

from assistant.kb import load_entries
from assistant.render import render_text
from tests.conftest import REPO, run_ask

FIX_LOG = REPO / "kb" / "samples" / "flashinfer-cuda-fp8.log"
FIX_ID = "flashinfer-jit-missing-cuda-fp8-h"

# A known crash on a release that already has its fix: the error line is the entry's, the release
# says it is another cause (a regression or a new path), so the entry is a lead, not the fix.
LEAD_TRACE = """sglang 0.5.12
python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE3 --speculative-draft-model-path yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
[2025-12-02 10:01:12 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/logits_processor.py", line 547, in forward
    aux_pruned_states = torch.cat(aux_pruned_states, dim=-1)
UnboundLocalError: cannot access local variable 'aux_pruned_states' where it is not associated with a value
"""
LEAD_ID = "eagle3-spec-v2-logprobs-crash"
# what the lead entry would tell the user to do, were it shown as the fix
LEAD_FIX_MARKERS = ("unset SGLANG_ENABLE_SPEC_V2", 'pip install -U "sglang>=0.5.11"')

# A NIXL/UCX transfer crash on a disaggregated prefill server: the only line it shares with the KB
# is the generic `Caught signal 11`, and the backtrace is inside libucs / libnixl, not NCCL: the
# multi-node NCCL segfault entry is neither the fix nor a lead.
UCX_TRACE = """sglang 0.5.9
python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --disaggregation-mode prefill --disaggregation-transfer-backend nixl --tp 8
[1733052311.123456] [node1:12345:0]        debug.c:1297 UCX  ERROR Caught signal 11 (Segmentation fault: address not mapped to object at address 0x10)
==== backtrace (tid:  12345) ====
 0  /opt/ucx/lib/libucs.so.0(ucs_handle_error+0x2dc) [0x7f0a1b2c3d4c]
 1  /opt/ucx/lib/libucs.so.0(+0x2e2b1) [0x7f0a1b2c42b1]
 2  /opt/ucx/lib/libucs.so.0(+0x2e4a0) [0x7f0a1b2c44a0]
 3  /opt/nixl/lib/x86_64-linux-gnu/libnixl.so(nixlAgent::postXferReq+0x1a4) [0x7f0a1c000aa4]
=================================
Fatal Python error: Segmentation fault
"""
NCCL_FIX_MARKERS = ("NCCL_SOCKET_IFNAME=<nic>", "all_reduce_perf -b 8")

# An exception raised in a third-party plugin that nothing in the KB knows.
UNKNOWN_TRACE = """sglang 0.5.9
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 2215, in run_scheduler_process
    scheduler.event_loop_normal()
  File "/usr/local/lib/python3.10/site-packages/acme_plugin/hooks.py", line 88, in on_batch
    raise FrobnicatorError(f"quux table {name} exhausted")
acme_plugin.hooks.FrobnicatorError: quux table zeta-7 exhausted
"""
QUESTION = "how do I enable speculative decoding with EAGLE?"


@pytest.fixture(scope="module")
def answers(assistant):
    """The library's answer to each case, as every surface receives it."""
    return {"fix": assistant.answer(FIX_LOG.read_text()), "lead": assistant.answer(LEAD_TRACE),
            "unknown": assistant.answer(UNKNOWN_TRACE), "question": assistant.answer(QUESTION)}


def _shows_lead_fix(text: str) -> list[str]:
    return [m for m in LEAD_FIX_MARKERS if m in text]


# ---- the answer itself ------------------------------------------------------------------------

def test_each_case_gets_its_outcome(answers):
    assert answers["fix"].outcome == "fix" and not answers["fix"].abstained and answers["fix"].fix
    lead = answers["lead"]
    assert lead.outcome == "lead" and lead.abstained and lead.fix == []
    assert lead.matches[0].id == LEAD_ID and lead.reasons
    assert any("0.5.12" in r for r in lead.reasons)              # the release that already has the fix
    # the entry's own line is in the log already: no other line of it is what is missing (the
    # release is), so the lead asks for none
    assert lead.confirm_if == [] and "also shows" not in lead.diagnosis
    assert any(f"kb:{LEAD_ID}" in s for s in lead.next_steps)   # by reference, not its steps
    unknown = answers["unknown"]
    assert unknown.outcome == "unknown" and unknown.fix == [] and unknown.citations == []
    assert unknown.primary_error == "acme_plugin.hooks.FrobnicatorError: quux table zeta-7 exhausted"
    assert unknown.failing_module == "acme_plugin.hooks"
    assert any("pip show acme_plugin" in s for s in unknown.next_steps)
    question = answers["question"]
    assert question.outcome == "unknown" and question.question and question.fix == []
    assert "how-to" in question.diagnosis


def test_a_crash_inside_ucx_is_not_answered_with_the_nccl_entry(assistant):
    """The issue's own example: `Caught signal 11` is shared, the backtrace is UCX / NIXL: no
    NCCL fix, no NCCL lead; the next steps are UCX's."""
    answer = assistant.answer(UCX_TRACE)
    assert answer.outcome == "unknown" and answer.fix == []
    assert {"nixl", "ucx"} <= set(answer.failing_components)
    assert any("UCX_LOG_LEVEL=debug" in s for s in answer.next_steps)
    assert not [m for m in NCCL_FIX_MARKERS if m in render_text(answer)]


def test_a_report_in_words_gets_the_next_steps_of_the_component_it_names(assistant):
    """No frame or error line says where it fails: the library the user names is where to look
    (bisecting the grammar backend), not only the steps for any SGLang failure."""
    answer = assistant.answer(
        "XGrammar causes gibberish during parallel execution and cuts off other requests. When "
        "several requests hit the chat completions endpoint and one has a JSON schema, the ones "
        "without a schema return random tokens. The outlines backend works fine.")
    assert answer.outcome != "fix" and answer.fix == []
    assert answer.next_steps[0].startswith("[xgrammar]")
    assert any("--grammar-backend" in s for s in answer.next_steps)
    # a model's name is not the component it names: an AWQ checkpoint's OOM gets no quantization steps
    awq = assistant.answer("Qwen2.5-VL-72B-AWQ on 4x RTX 4090 with sglang 0.4.6: the server dies with "
                           "out of memory on GPU 0 after a few image requests, the other GPUs are fine.")
    assert not any(s.startswith("[quantization]") for s in awq.next_steps)


def test_words_alone_confirm_only_an_entry_that_has_no_error_lines(assistant):
    """A report in prose that reads like an entry whose failure prints known lines is a lead that
    names the entry and the line that would confirm it; a symptom the entry has no line for
    (no speed-up from speculative decoding) is answered from the words."""
    lead = assistant.answer(
        "In verl GRPO with the SGLang rollout and enable_memory_saver on, GPU memory is not freed after "
        "release_memory_occupation; nvidia-smi still shows the KV cache held by the rollout workers.")
    assert lead.outcome == "lead" and lead.fix == []
    assert lead.matches[0].id == "torch-memory-saver-not-active"
    assert "ModuleNotFoundError: No module named 'torch_memory_saver'" in lead.confirm_if
    # the line that would confirm it is shown on the terminal and the web page
    from ui.markdown import answer_markdown
    assert "It would apply if your log also shows:" in render_text(lead)
    assert "No module named 'torch_memory_saver'" in answer_markdown(lead)
    assert any("in words only" in r for r in lead.reasons)
    fix = assistant.answer(
        "EAGLE3 speculative decoding on Llama 3.1 8B gives no speedup at all: the accept length stays around "
        "1.1 and throughput is lower than without speculative decoding.")
    assert fix.outcome == "fix" and fix.matches[0].id == "speculative-decoding-no-speedup-low-accept-length"


# ---- CLI ----------------------------------------------------------------------------------------

def test_cli_exit_code_first_line_and_json_per_outcome(kb_dir, tmp_path):
    lead_log = tmp_path / "lead.log"
    lead_log.write_text(LEAD_TRACE)
    unknown_log = tmp_path / "unknown.log"
    unknown_log.write_text(UNKNOWN_TRACE)
    cases = {"fix": ("--log", str(FIX_LOG)), "lead": ("--log", str(lead_log)),
             "unknown": ("--log", str(unknown_log)), "question": (QUESTION,)}
    expected = {"fix": (0, "FIX"), "lead": (3, "LEAD (not confirmed)"),
                "unknown": (3, "UNKNOWN: not a known problem"),
                "question": (3, "UNKNOWN: this reads as a how-to question")}
    for case, args in cases.items():
        code, first_line = expected[case]
        text = run_ask(*args, kb=kb_dir)
        assert text.returncode == code, (case, text.stderr.decode())
        stdout = text.stdout.decode()
        assert stdout.splitlines()[0] == first_line, (case, stdout[:300])
        as_json = run_ask(*args, "--json", kb=kb_dir)
        assert as_json.returncode == code
        out = json.loads(as_json.stdout)
        assert out["outcome"] == ("unknown" if case == "question" else case)
        assert out["abstained"] is (case != "fix")
        if case != "fix":
            assert out["answer"]["fix"] == [] and out["reasons"]
            assert "Fix:" not in stdout and "Collect or try next:" in stdout
    lead_text = run_ask("--log", str(lead_log), kb=kb_dir).stdout.decode()
    assert "Why it is only a lead:" in lead_text and "Where it arises: innermost frame in sglang.srt.layers.logits_processor" in lead_text
    # its own line is in the log: the release is what rules it out, not a missing line
    assert "0.5.12" in lead_text and "It would apply if your log also shows:" not in lead_text
    assert _shows_lead_fix(lead_text) == []


def test_plain_text_of_an_unknown_names_the_root_error_and_where(answers):
    text = render_text(answers["unknown"])
    assert text.splitlines()[0] == "UNKNOWN: not a known problem"
    assert "This is not a known problem" in text
    assert "acme_plugin.hooks.FrobnicatorError: quux table zeta-7 exhausted" in text
    assert "Where it arises: innermost frame in acme_plugin.hooks, on_batch()" in text
    assert "Detected: SGLang 0.5.9" in text


# A traceback cut off right under torch's decorator frame: that frame only passes the call on.
CUT_TRACE = """sglang 0.5.9
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 1418, in run_event_loop
    dispatch_event_loop(self)
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 3925, in dispatch_event_loop
    scheduler.event_loop_pp()
  File "/usr/local/lib/python3.12/dist-packages/torch/utils/_contextlib.py", line 124, in decorate_context
    return func(*args, **kwargs)
"""


def test_where_it_arises_skips_a_wrapper_frame_the_trace_was_cut_under(assistant):
    answer = assistant.answer(CUT_TRACE)
    assert answer.outcome != "fix"
    assert answer.failing_module == "sglang.srt.managers.scheduler"
    assert answer.failing_function == "dispatch_event_loop"
    assert "innermost frame in sglang.srt.managers.scheduler, dispatch_event_loop()" in render_text(answer)


# The call leaves tokenizer_manager.py for a dispatcher in utils.py and comes back into it, where it
# fails: that file is the innermost frame, and SGLang's TokenizerManager process is not a tokenizer.
ABORT_TRACE = """[2026-01-09 02:11:40] TokenizerManager hit an exception: Traceback (most recent call last):
  File "/root/sglang/python/sglang/srt/managers/tokenizer_manager.py", line 2217, in print_exception_wrapper
    await func()
  File "/root/sglang/python/sglang/srt/managers/tokenizer_manager.py", line 1375, in handle_loop
    self._result_dispatcher(recv_obj)
  File "/root/sglang/python/sglang/utils.py", line 496, in __call__
    return fn(obj)
  File "/root/sglang/python/sglang/srt/managers/tokenizer_manager.py", line 1807, in _handle_abort_req
    "output_ids": [output_ids[-1]] if is_stream else output_ids,
IndexError: list index out of range
"""


def test_the_abort_before_the_first_token_crash_is_a_known_fix(assistant):
    answer = assistant.answer(ABORT_TRACE)
    assert answer.outcome == "fix"
    assert answer.matches[0].id == "tokenizer-manager-abort-stream-before-first-token-indexerror"


# the same file and function, another line failing in them: no entry knows it
OTHER_ABORT_TRACE = (ABORT_TRACE.replace("/root/sglang/python/sglang/", "/usr/local/lib/python3.10/dist-packages/sglang/")
                     .replace('"output_ids": [output_ids[-1]] if is_stream else output_ids,',
                              "meta = state.meta_info_cache[rid]"))


def test_where_it_arises_is_the_frame_nearest_the_error_even_in_a_file_met_before(assistant):
    answer = assistant.answer(OTHER_ABORT_TRACE)
    assert answer.outcome != "fix"
    assert answer.failing_module == "sglang.srt.managers.tokenizer_manager"
    assert answer.failing_function == "_handle_abort_req"
    assert "tokenizer" not in answer.failing_components
    assert not any(s.startswith("[tokenizer]") for s in answer.next_steps)   # no chat-template advice
    assert "innermost frame in sglang.srt.managers.tokenizer_manager, _handle_abort_req()" in render_text(answer)


# A report in words, no traceback: it names the SGLang class where the hang is (the module comes
# from the release registry, for the user's release).
NAMED_CLASS_REPORT = """sglang 0.5.9
After a few minutes of concurrent streams every scheduler rank sits at 99% CPU and no request
returns. py-spy shows all of them inside PrefillAdder.add_one_req(), looping
on every tick.
"""


def test_unknown_report_without_traceback_says_where_the_class_it_names_lives(assistant):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_messages

    answer = assistant.answer(NAMED_CLASS_REPORT)
    assert answer.outcome != "fix" and answer.failing_module is None
    assert answer.named_class == ("PrefillAdder", "sglang.srt.managers.schedule_policy")
    assert answer.to_json()["named_class"] == {"class": "PrefillAdder",
                                               "module": "sglang.srt.managers.schedule_policy"}
    where = "PrefillAdder (named in your paste) is in sglang.srt.managers.schedule_policy"
    assert f"Where it arises: {where}" in render_text(answer)
    assert "`sglang.srt.managers.schedule_policy`" in answer_markdown(answer)
    slack = [b["text"]["text"] for m in answer_messages(answer) for b in m["blocks"] if b["type"] == "section"]
    assert any(t.startswith("*Where it arises:*") and "schedule_policy" in t for t in slack)
    # an exception class every library has, a class the openai client owns too (SGLang's is outside
    # its runtime), and product names in a sentence say nothing
    other = assistant.answer("sglang 0.5.9\nthe client raised InternalError() and OpenAI(base_url=url) "
                             "returned nothing for DeepSeek on FlashInfer")
    assert other.named_class is None


# ---- web ----------------------------------------------------------------------------------------

def test_web_markdown_lead_does_not_look_like_a_fix(answers):
    from ui.markdown import answer_markdown, history_text, sources_markdown

    fix = answer_markdown(answers["fix"])
    assert "**✅ FIX**" in fix.split("\n")[1] and "**Fix**" in fix and "```bash" in fix
    lead = answer_markdown(answers["lead"])
    assert lead.startswith("### ⚠️ LEAD (not confirmed)")
    assert "**Fix**" not in lead and "```bash" not in lead and "✅" not in lead
    assert "**Why it is only a lead**" in lead and "0.5.12" in lead
    assert _shows_lead_fix(lead) == []
    assert "Lead (not confirmed)" in sources_markdown(answers["lead"])
    assert history_text(answers["lead"]).startswith("[LEAD (not confirmed)]")
    unknown = answer_markdown(answers["unknown"])
    assert unknown.startswith("### ❔ UNKNOWN: not a known problem") and "`acme_plugin.hooks`" in unknown
    assert answer_markdown(answers["question"]).startswith("### ❔ UNKNOWN: this reads as a how-to")


def test_web_page_shows_the_outcome(assistant, tmp_path):
    from gradio_client import Client

    from tests.test_web import ask, message_text, serving, web_settings

    with serving(assistant, web_settings(assistant, tmp_path)) as url:
        client = Client(url, verbose=False)
        chat, sources, _ = ask(client, LEAD_TRACE)
        reply = message_text(chat[1])
        assert reply.startswith("### ⚠️ LEAD (not confirmed)") and "**Fix**" not in reply
        assert f"{LEAD_ID}</b>" in sources and "Lead (not confirmed)" in sources
        chat, _, _ = ask(client, FIX_LOG.read_text())
        assert "**✅ FIX**" in message_text(chat[1])


# ---- Slack --------------------------------------------------------------------------------------

def test_slack_lead_header_and_no_fix(answers):
    from ui.slack_format import answer_messages

    def texts(answer) -> list[str]:
        return [b["text"]["text"] for m in answer_messages(answer) for b in m["blocks"]
                if b["type"] == "section"]

    lead_messages = answer_messages(answers["lead"])
    lead = texts(answers["lead"])
    assert lead[0].startswith("*:warning: LEAD (not confirmed)*")
    assert lead_messages[0]["text"].startswith("LEAD (not confirmed): ")
    assert "*Fix*" not in lead and not any(t.startswith("1. ") for t in lead)
    assert _shows_lead_fix("\n".join(lead)) == []
    assert any("*Why it is only a lead*" in t for t in lead)
    footer = lead_messages[-1]["blocks"][-1]["elements"][0]["text"]
    assert footer.startswith("LEAD (not confirmed)")
    unknown = texts(answers["unknown"])
    assert unknown[0].startswith("*:grey_question: UNKNOWN: not a known problem*")
    fix = texts(answers["fix"])
    assert fix[0].startswith("*:white_check_mark: FIX: ") and "*Fix*" in fix


# ---- LLM mode -----------------------------------------------------------------------------------

@pytest.fixture
def fake_llm():
    from tests.fake_sglang import FakeSGLang

    reply = {"diagnosis": "The logits processor reads aux_pruned_states on a path that never set it, "
                          "so this release still has a variant of the speculative-decoding bug.",
             "fix": ["Set `NCCL_SOCKET_IFNAME=eth0` and restart."],
             "warnings": ["Do not upgrade NCCL."], "citations": [f"kb:{LEAD_ID}"]}
    with FakeSGLang(reply=json.dumps(reply)) as server:
        yield server


def _with_llm(assistant, fake):
    from assistant.llm import SGLangClient
    from assistant.pipeline import Assistant

    # the fake answers at once; the generous timeout is for a CI machine loaded by other work
    # (5 s once ran out under load and turned the answer extractive)
    return Assistant(assistant.retriever, assistant.registry, assistant.settings,
                     llm=SGLangClient(fake.url, timeout=30.0))


def test_llm_explains_a_lead_labelled_and_keeps_the_outcome(assistant, fake_llm):
    from ui.markdown import answer_markdown
    from ui.slack_format import answer_messages

    answer = _with_llm(assistant, fake_llm).answer(LEAD_TRACE, use_llm=True)
    prompt = fake_llm.chat_requests[0]["messages"][1]["content"]
    assert "No known fix in the knowledge base matched this error" in prompt
    assert answer.outcome == "lead" and answer.abstained and answer.fix == [] and answer.mode == "llm"
    assert answer.explanation.startswith("The logits processor reads aux_pruned_states")
    assert "not from the knowledge base" in answer.note
    assert "NCCL_SOCKET_IFNAME=eth0" not in json.dumps(answer.to_json())   # the model's fix: dropped
    assert answer.to_json()["explanation_source"] == "not from the knowledge base"
    assert "(not from the knowledge base)" in render_text(answer)
    assert "(not from the knowledge base)" in answer_markdown(answer)
    slack = json.dumps(answer_messages(answer))
    assert "(not from the knowledge base)" in slack and "NCCL_SOCKET_IFNAME=eth0" not in slack


def test_llm_gets_no_sources_for_an_unknown_and_is_not_asked_a_question(assistant, fake_llm):
    bot = _with_llm(assistant, fake_llm)
    answer = bot.answer(UNKNOWN_TRACE, use_llm=True)
    prompt = fake_llm.chat_requests[0]["messages"][1]["content"]
    assert "<source id=" not in prompt and "no source explains it" in prompt
    assert answer.outcome == "unknown" and answer.fix == [] and answer.explanation
    asked = len(fake_llm.chat_requests)
    question = bot.answer(QUESTION, use_llm=True)
    assert len(fake_llm.chat_requests) == asked and question.explanation is None
    assert question.outcome == "unknown" and question.fix == []


def test_next_steps_name_only_flags_the_users_sglang_has():
    from assistant.commands import sglang_names
    from assistant.flags import FlagRegistry
    from assistant.next_steps import GENERIC, STEPS, for_version

    registry = FlagRegistry.load()
    texts = [s for steps in STEPS.values() for s in steps] + list(GENERIC)
    unknown = sorted({n for n in sglang_names(*texts) if not registry.check(n).exists})
    assert unknown == []
    # a renamed flag is spelled as the user's release spells it
    capture = STEPS["cuda-graph"]
    assert any("`--cuda-graph-max-bs`" in s for s in for_version(list(capture), "0.5.9", registry))
    newest = for_version(list(capture), registry.latest, registry)
    assert any("`--cuda-graph-max-bs-decode`" in s for s in newest)
    assert not any("`--cuda-graph-max-bs`" in s for s in newest)



def test_a_lead_quotes_only_log_lines_as_what_the_log_would_show(assistant):
    # the OOM entry's specific line is a description ("the server starts fine but crashes ..."):
    # it is offered as what the user would see, never as a line their log would print
    oom = ("[2025-07-07 08:00:31 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 505, '
           "in load_model\n    self.model = get_model(\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity "
           "of 79.19 GiB of which 1.02 GiB is free. Process 77123 has 41.30 GiB memory in use.")
    lead = assistant.answer(oom)
    assert lead.outcome == "lead"
    symptoms = set()
    for entry in load_entries(REPO / "kb" / "entries"):
        symptoms |= {" ".join(s.split()) for s in entry.symptoms}
    assert not symptoms & set(lead.confirm_if)
    assert "If your log also shows `the" not in lead.text
