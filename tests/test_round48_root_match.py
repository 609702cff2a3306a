"""A root error the entry's own account quotes whole (round 48, h1): an entry whose title or
symptom quotes the paste's root error — the same message once numbers and paths are masked — is
the fix even when none of its signature lines (frames, source lines) is in the paste; a quote of
one identifier, or of a shorter message the paste's line goes on from, is not the error, and an
entry that lists its error messages as lines is matched on those lines only."""

from __future__ import annotations

from assistant.entry_account import account_quotes

# NGRAM with the torch_native backend dies in warmup; the frames shown are not the ones the entry lists
NGRAM_TORCH_NATIVE = (
    "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --speculative-algorithm NGRAM "
    "--attention-backend torch_native --port 30000\n"
    "[2026-03-02 10:11:12] INFO:     Application startup complete.\n"
    "[2026-03-02 10:11:14] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/attention/torch_native_backend.py", '
    "line 210, in forward_extend\n"
    "    self._run_sdpa_forward_extend(\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/attention/torch_native_backend.py", '
    "line 98, in _run_sdpa_forward_extend\n"
    "    prefix_len = int(extend_prefix_lens.shape[0])\n"
    "AttributeError: 'NoneType' object has no attribute 'shape'\n")

# DP attention with dp < tp: PyTorch's reduce-scatter size check, reached through other frames
DP_ATTENTION_GATHER = (
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --enable-dp-attention --tp 8 --dp 4 "
    "--moe-runner-backend flashinfer_trtllm\n"
    "[2026-01-20 08:00:01 TP3] Running FlashInfer autotune...\n"
    "[2026-01-20 08:00:05 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/layers/communicator.py", line 612, in _scattered_to_tp_attn_full\n'
    "    dp_gather_partial(hidden_states, local_hidden_states, forward_batch)\n"
    '  File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 4405, '
    "in reduce_scatter_tensor\n"
    "    work = group._reduce_scatter_base(output, input, opts)\n"
    "ValueError: input tensor must be the same size as output size times world size\n")


def test_root_error_quoted_in_the_entry_title_is_its_fix(assistant):
    answer = assistant.answer(NGRAM_TORCH_NATIVE)
    assert answer.matches[0].id == "spec-decoding-torch-native-attention-unsupported"
    assert answer.outcome == "fix"
    assert not any("None of this entry's error lines" in str(reason) for reason in answer.reasons)


def test_root_error_quoted_in_a_symptom_is_its_fix(assistant):
    answer = assistant.answer(DP_ATTENTION_GATHER)
    assert answer.matches[0].id == "dp-attention-attn-tp-gather-size-mismatch"
    assert answer.outcome == "fix"


def test_numbers_and_exception_class_do_not_matter():
    meta = {"title": "Triton kernel out of shared memory",
            "symptoms": ["dies with `triton.runtime.errors.OutOfResources: out of resource: shared memory, "
                         "Required: 147456, Hardware limit: 101376` on a 100 KB GPU"]}
    assert account_quotes(meta, "OutOfResources: out of resource: shared memory, Required: 81920, Hardware limit: 65536")


def test_a_quoted_identifier_is_not_the_error():
    meta = {"title": "`torch_memory_saver` is not active", "symptoms": ["the `enable_memory_saver` flag does nothing"]}
    assert not account_quotes(meta, "NameError: name 'torch_memory_saver' is not defined")


def test_a_shorter_message_the_line_goes_on_from_is_not_the_error():
    meta = {"title": "Prefill runs out of KV slots",
            "symptoms": ["the scheduler raises `Prefill out of memory. Try to lower your batch size.`"]}
    assert account_quotes(meta, "RuntimeError: Prefill out of memory. Try to lower your batch size.")
    assert not account_quotes(meta, "RuntimeError: Prefill out of memory. Try to lower your batch size. "
                                    "Try to allocate 4096 tokens. Hybrid ratio is 0.5.")


def test_a_short_message_names_too_little():
    meta = {"title": "x", "symptoms": ["the process prints `RuntimeError: Killed` and exits"]}
    assert not account_quotes(meta, "RuntimeError: Killed")


def test_an_entry_listing_its_error_messages_is_matched_on_them_only():
    meta = {"title": "Triton kernel out of shared memory",
            "signatures": ["triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 106496"],
            "symptoms": ["dies with `OutOfResources: shared memory, Required: 147456, Hardware limit: 101376`"]}
    assert not account_quotes(meta, "OutOfResources: shared memory, Required: 81920, Hardware limit: 65536")
    frames_only = dict(meta, signatures=['File ".../triton/compiler/compiler.py", line 390, in _init_handles'])
    assert account_quotes(frames_only, "OutOfResources: shared memory, Required: 81920, Hardware limit: 65536")
