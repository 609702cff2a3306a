"""Round 51: a lead must not point the user the wrong way.

A trial on real reports found two leads/readings a user would report as wrong: a whole start-up log
was pointed at an entry although the decision's own reasons said its only close line was not the
error that stopped the run and the user's release was outside the entry's range (nothing tied the
entry to the failure); and a start-up failure told beside the slowness of its workaround
("初始化失败；加上 --disable-cuda-graph 后能启动，但性能下降") was read as slowness only, so the answer
asked how slow it was and called an Ascend start-up entry "another kind of failure". The pastes
are made up in the shape of such reports."""

from __future__ import annotations

from assistant.failure_kind import kinds_in
from assistant.render import render_text
from tests.answer_text import next_steps as _steps

# a start-up log that stops with no error; its one line close to an entry is a progress line, and
# the installed release is older than the entry's range
_LOG = """环境
sglang                    {version}
sgl-kernel                0.3.21
python -m sglang.launch_server --model-path /data/Qwen3.5-397B-A17B-FP8 --tp-size 2 --max-running-requests 1 --disable-cuda-graph
需要加--disable-cuda-graph 才能启动 但还是会报错
[2026-02-27 17:10:27 TP0] Load weight end. elapsed=653.47 s, type=Qwen3_5MoeForConditionalGeneration, dtype=torch.bfloat16, avail mem=19.08 GB, mem usage=3.76 GB.
[2026-02-27 17:10:28 TP0] Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, ssm_state size: 7.29GB
[2026-02-27 17:10:28 TP0] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB
[2026-02-27 17:10:28 TP0] Memory pool end. avail mem=4.02 GB
[2026-02-27 17:10:29 TP0] max_total_num_tokens=580364, chunked_prefill_size=2048, max_prefill_tokens=16384, max_running_requests=1, context_len=8192, available_gpu_mem=3.63 GB
"""
# an Ascend server that fails to initialise and starts, slower, only without graphs
NPU_INIT_FAILS_THEN_SLOW = """环境信息
- Device: Ascend Atlas 800I A2 (single card)
- Model: Qwen/Qwen3-0.6B
python3 -m sglang.launch_server --model-path Qwen/Qwen3-0.6B --device npu --attention-backend ascend
结果：初始化失败。加上 --disable-cuda-graph 后服务正常启动，/generate 可用，但性能下降。
"""
ENTRY = "max-running-requests-reduced-below-requested"


def test_an_entry_tied_only_by_a_line_away_from_the_failure_and_outside_its_releases_is_not_a_lead(assistant):
    answer = assistant.answer(_LOG.format(version="0.5.9"))
    assert answer.outcome == "unknown"
    text = render_text(answer)
    # named only as the closest entry that does not match, with both reasons
    assert f"最接近但不匹配的条目：{ENTRY}" in text
    assert "那不是让服务停下的错误" in text
    assert "这个条目讲的是 SGLang >=0.5.10；你的日志显示是 0.5.9。" in text
    assert not text.startswith("LEAD")


def test_the_same_log_within_the_entrys_releases_is_still_a_lead(assistant):
    answer = assistant.answer(_LOG.format(version="0.5.10"))
    assert answer.outcome == "lead"
    assert answer.matches[0].id == ENTRY


def test_a_start_up_failure_beside_slowness_is_read_as_both():
    assert kinds_in("结果：初始化失败。加上 --disable-cuda-graph 后服务正常启动，但性能下降。") == {"crash", "slow"}
    assert "crash" in kinds_in("SGLang on Ascend NPU fails at startup, in NPU graph capture")
    assert kinds_in("加上 --disable-cuda-graph 后性能下降") == {"slow"}


def test_an_npu_start_up_failure_beside_slowness_asks_for_the_error_and_is_not_called_slowness(assistant):
    answer = assistant.answer(NPU_INIT_FAILS_THEN_SLOW)
    assert answer.outcome != "fix"
    text = render_text(answer)
    steps = _steps(text)
    assert steps[0].startswith("错误本身：")
    # the start-up failure's steps (the NPU's own logs), not how to measure a slow server
    assert any(step.startswith("[ascend]") for step in steps)
    assert not any(step.startswith("先量一下") for step in steps)
    assert "你报告的是变慢" not in text
