"""Round 51: a lead or unknown answer is still useful when the KB does not know the problem.

A second trial with real reports the KB lacks (Ascend, NVIDIA, AMD, MUSA; verl, MinerU, AReaL,
ktransformers users; English and Chinese; whole logs and words-only reports) found answers that
asked for the wrong thing or lost the right one: a server that "fails to start" got asked for a
request that shows it (a sentence the reader took for an error line hid the words that tell of the
failure), an error quoted in the user's words was called "none of its lines shown", a start-up log
that stops lost its "what follows that line" step once a version was known (the step's
`py-spy dump --pid` was checked as if `--pid` were an SGLang flag), an Ascend user who reports a
start-up failure and slowness after its workaround got only slowness steps with `nvidia-smi`, an
HCCL error got no Ascend steps at all, a py-spy frame was offered as a line that would confirm a
lead, `nvidia-smi` did not tie a report to an entry's symptom, and a Chinese report that a flag
"still has to be given by hand" was read as a how-to question. These tests read what the user
reads; the pastes are made up in the shape of such reports."""

from __future__ import annotations

from assistant.intent import is_question
from assistant.lead_answer import confirm_symptom, is_message_line, specific_terms
from assistant.render import render_text
from assistant.retrieve import Hit
from tests.answer_text import next_steps as _steps

# a words-only report that the server does not start on an Ascend machine, nothing else pasted
FAILS_TO_START = """Llama-3-70B failed to start on our Atlas 800I A2 box.
We used the lmsysorg/sglang cann8.5.0 image and followed the Ascend guide.
"""
# "cannot launch" and the launch command, no error line
CANNOT_LAUNCH = """We cannot launch Qwen3-235B with the merged NPU commit, following the install guide.
python -m sglang.launch_server --model-path /data/Qwen3-235B --device npu --attention-backend ascend --tp-size 16
"""
# the error quoted inside the user's Chinese words, no log line of it
QUOTED_IN_WORDS = """4090 上用 sglang 部署 Qwen2-VL 跑不起来：
python3 -m sglang.launch_server --model-path Qwen/Qwen2-VL-7B-Instruct --attention-backend flashinfer --port 8000
运行后报错 assert cuda_home is not None 怎么办？
"""
# a start-up failure on an NPU, worked around at the cost of speed
NPU_FAILS_THEN_SLOW = """环境：Ascend Atlas 800I A2 单卡，模型 Qwen3-8B
python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --device npu --attention-backend ascend
结果：初始化失败。加上 --disable-cuda-graph 后服务能启动，但是吞吐很低，性能下降很多。
"""
# only slowness on an NPU
NPU_SLOW = """在 910B 上用 sglang 跑 Qwen3-8B 很慢，吞吐只有 A100 的三分之一，怎么回事？
python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --device npu --attention-backend ascend
"""
# a start-up log with the installed versions, stopping on its last progress line
VERSIONED_LOG_STOPS = """sglang                    0.5.9
sgl-kernel                0.3.21
加了 --disable-cuda-graph 也还是会报错
[2026-02-27 17:10:27 TP0] Load weight end. elapsed=653.47 s, type=Qwen3_5MoeForConditionalGeneration, dtype=torch.bfloat16, avail mem=19.08 GB, mem usage=3.76 GB.
[2026-02-27 17:10:28 TP0] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB
[2026-02-27 17:10:28 TP0] Memory pool end. avail mem=4.02 GB
[2026-02-27 17:10:29 TP0] max_total_num_tokens=580364, chunked_prefill_size=2048, max_prefill_tokens=16384, max_running_requests=1, context_len=8192, available_gpu_mem=3.63 GB
"""
# an RL trainer's HCCL failure on Ascend A2: torch's FSDP frames, no SGLang line
HCCL_IN_TRAINER = """Ascend A2 上训练报错 HCCL error code 5：
(TaskRunner pid=3707097)   File "/home/user/miniconda3/envs/rl/lib/python3.10/site-packages/torch/distributed/fsdp/wrap.py", line 551, in _recursive_wrap
(TaskRunner pid=3707097)     return _wrap(module, wrapper_cls, **kwargs), nonwrapped_numel
(TaskRunner pid=3707097) RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:148 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 5
"""
# the report that a backend still needs the quantization flag given by hand
STILL_NEEDS_FLAG = """[Bug] sglang中使用 export SGLANG_NPU_FUSED_MOE_MODE=2 --moe-a2a-backend ascend_fuseep 还需要在配置中显式加quantization参数
export SGLANG_SET_CPU_AFFINITY=1
export HCCL_BUFFSIZE=800
"""


def test_a_server_that_fails_to_start_is_asked_for_its_error_not_for_a_request(assistant):
    for paste in (FAILS_TO_START, CANNOT_LAUNCH):
        answer = assistant.answer(paste)
        assert answer.outcome != "fix"
        steps = _steps(render_text(answer))
        assert steps[0].startswith("The error itself: your paste tells of it but shows none of its lines")
        # the server never came up: no request can show the problem
        assert not any(step.startswith("A request that shows it") for step in steps)


def test_an_error_quoted_in_the_users_words_is_asked_for_by_those_words(assistant):
    answer = assistant.answer(QUOTED_IN_WORDS)
    assert answer.outcome != "fix"
    text = render_text(answer)
    steps = _steps(text)
    assert steps[0].startswith("完整的错误：你在描述里提到了它（`assert cuda_home is not None`）")
    assert "grep -n -m1 -B30 -F 'assert cuda_home is not None' server.log" in steps[0]
    # the words do quote it: "none of its lines" would be false
    assert "你的内容提到了错误，但没有贴出它的任何一行" not in text


def test_a_start_up_failure_told_beside_slowness_on_an_npu_asks_for_the_error_and_never_for_nvidia_smi(assistant):
    answer = assistant.answer(NPU_FAILS_THEN_SLOW)
    steps = _steps(render_text(answer))
    assert steps[0].startswith("错误本身：你的内容提到了错误，但没有贴出它的任何一行")
    assert not any("nvidia-smi" in step for step in steps)


def test_a_slow_npu_server_is_checked_with_npu_smi(assistant):
    answer = assistant.answer(NPU_SLOW)
    steps = _steps(render_text(answer))
    assert any(step.startswith("请求运行时 NPU 是否忙：") and "`npu-smi info`" in step for step in steps)
    assert not any("nvidia-smi" in step for step in steps)


def test_a_start_up_log_that_stops_keeps_its_step_when_the_version_is_known(assistant):
    answer = assistant.answer(VERSIONED_LOG_STOPS)
    assert answer.detected.sglang_version == "0.5.9"
    steps = _steps(render_text(answer))
    # `py-spy dump --pid` is py-spy's flag, not an SGLang flag 0.5.9 lacks
    assert any(step.startswith("你的日志停在服务启动途中，最后一行是 `max_total_num_tokens=580364")
               and "py-spy dump --pid <pid>" in step for step in steps)


def test_an_hccl_error_gets_the_ascend_steps(assistant):
    answer = assistant.answer(HCCL_IN_TRAINER)
    assert answer.outcome != "fix"
    steps = _steps(render_text(answer))
    assert any(step.startswith("[ascend] CANN 自己的日志") and "ASCEND_SLOG_PRINT_TO_STDOUT=1" in step and "plog" in step for step in steps)
    assert any("ASCEND_LAUNCH_BLOCKING=1" in step for step in steps)
    assert any("hccn_tool -i <device id> -link -g" in step for step in steps)
    # an RL trainer's traceback: no SGLang launch command to ask for ahead of these
    assert not any("python3 -m sglang.launch_server" in step for step in steps)


def test_a_report_that_a_flag_still_has_to_be_given_by_hand_is_not_a_how_to_question(assistant):
    assert not is_question("用 ascend_fuseep 还需要在配置中显式加 quantization 参数", False)
    assert not is_question("with this backend the flag still has to be passed explicitly", False)
    # asked, it stays a question
    assert is_question("是否还需要显式加 quantization 参数？", False)
    answer = assistant.answer(STILL_NEEDS_FLAG)
    assert answer.to_json()["question"] is False
    assert "这是使用或配置问题" not in render_text(answer)


def test_frames_a_profiler_prints_are_not_lines_that_confirm_a_lead():
    assert not is_message_line("replay (npu_graph_runner.py")
    assert not is_message_line("replay (sglang/srt/model_executor/npu_graph_runner.py:412)")
    assert not is_message_line("in npu_format_cast")
    assert is_message_line("NameError: name 'torch_npu' is not defined")


def test_a_tool_the_report_names_ties_it_to_the_entrys_symptom_that_names_it():
    assert "nvidia-smi" in specific_terms("`nvidia-smi` in the container stopped working")
    assert "npu-smi" in specific_terms("npu-smi info lists no process")
    hit = Hit(unit_id="gpus-lost", kind="entry", title="GPUs lost inside a long-running container", title_zh=None, url=None,
              score=0.0, lexical=0.0, dense=0.0, signature=0.0, evidence=(),
              meta={"symptoms": ["the first request hangs forever after a restart",
                                 "`nvidia-smi` inside the container fails while the host's works"]})
    words = "after two days nvidia-smi in my container stopped working"
    assert confirm_symptom(hit, words=words) == "`nvidia-smi` inside the container fails while the host's works"


# an RL trainer that launches SGLang reports only that the launch failed
TRAINER_LAUNCH_FAILED = """Training stops right at the start:
  File "/workspace/AReaL/areal/engine/sglang_remote.py", line 112, in initialize
    raise RuntimeError("server launch failed")
RuntimeError: server launch failed
"""


def test_a_launchers_lead_leaves_out_the_steps_for_other_launchers(assistant):
    answer = assistant.answer(TRAINER_LAUNCH_FAILED)
    assert answer.outcome == "lead"
    steps = _steps(render_text(answer))
    assert steps[0].startswith("Find SGLang's own output")
    # the paste comes from AReaL: xinference's virtualenv and GPUStack's UI are someone else's case
    assert not any(step.startswith(("xinference with", "GPUStack:")) for step in steps)
