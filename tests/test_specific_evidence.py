"""What tells a case apart decides its answer (round 29's trial findings).

- A check SGLang raises while validating flags is one of the class the server-args entry is
  about (`raised_in`): a check the entry lists is its fix; one it does not list is a lead to it
  that says the message names what to change, never a lead to an unrelated entry.
- A fix that rests only on lines many failures print (NCCL's `unhandled system error` and its
  gloss) gives way to the entry that matched the line telling the case apart.
- Lines of the libraries SGLang drives (Mooncake's device errors) and the runtime modules a plain
  install of an old release leaves out are read as the failures they are."""

from __future__ import annotations

import pytest

from assistant.kb import EntryError, parse_entry

pytestmark = pytest.mark.slow

SERVER_ARGS_TRACE = """\
python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp 8 --dp 2 {flags}
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py", line 29, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 5003, in from_cli_args
    return cls(**{{attr: getattr(args, attr) for attr in attrs}})
  File "<string>", line 331, in __init__
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 712, in __post_init__
    self._handle_data_parallelism()
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 2123, in _handle_data_parallelism
    assert (
AssertionError: {message}
"""

NCCL_SOCKET_BETWEEN_CONTAINERS = """\
two node tp16 launch dies on node 1. --dist-init-addr 192.168.10.1:50000
[2025-12-01 11:02:15 TP9] Init torch distributed begin.
node1:2201:2201 [1] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.3<0>
node1:2201:2291 [1] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.17.0.2<45123> failed : Software caused connection abort
[2025-12-01 11:12:17 TP9] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/distributed/parallel_state.py", line 1567, in initialize_model_parallel
    _TP = init_model_parallel_group(
  File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 4986, in barrier
    work = group.barrier(opts=opts)
torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3353, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3
ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
Last error:
socketStartConnect: Connect to 172.17.0.2<45123> failed : Software caused connection abort
"""

MOONCAKE_DEVICE = """\
python3 -m sglang.launch_server --model-path /models/DeepSeek-V3 --disaggregation-mode prefill --disaggregation-transfer-backend mooncake --tp 8
  File "/sgl-workspace/sglang/python/sglang/srt/distributed/device_communicators/mooncake_transfer_engine.py", line 200, in initialize
    raise RuntimeError("Mooncake Transfer Engine initialization failed.")
RuntimeError: Mooncake Transfer Engine initialization failed.
E1215 02:10:44.201932  8812 rdma_context.cpp:93] Failed to open device mlx5_0 on port 1 with GID 3: No such device
"""


def _entry(extra: str) -> str:
    return ("---\nid: x-entry\ntitle: t\ntitle_zh: t\narea: startup\nconfidence: high\ncause: c\n"
            "fix: [a]\nsources: [{seed: s.txt}]\nsymptoms: [s]\n" + extra + "---\n")


def test_a_declared_site_must_be_an_sglang_module():
    assert parse_entry(_entry('raised_in: ["sglang.srt.server_args:ServerArgs"]\n')).raised_in == (
        "sglang.srt.server_args:ServerArgs",)
    with pytest.raises(EntryError, match="raised_in"):
        parse_entry(_entry('raised_in: ["server_args.py"]\n'))


def test_an_unlisted_flag_check_is_a_lead_to_the_server_args_entry(assistant):
    answer = assistant.answer(SERVER_ARGS_TRACE.format(
        flags="--enable-dp-lm-head", message="Please enable dp attention when setting enable_dp_lm_head."))
    assert (answer.outcome, answer.matches[0].id) == ("lead", "server-args-combination-rejected")
    assert any("one of the checks this entry is about" in reason for reason in answer.reasons)


def test_a_listed_flag_check_is_the_fix(assistant):
    answer = assistant.answer(SERVER_ARGS_TRACE.format(
        flags="--nnodes 2", message="multi-node data parallel is not supported unless dp attention!"))
    assert (answer.outcome, answer.matches[0].id) == ("fix", "server-args-combination-rejected")


def test_the_line_that_tells_the_case_apart_beats_a_generic_nccl_error(assistant):
    answer = assistant.answer(NCCL_SOCKET_BETWEEN_CONTAINERS)
    assert (answer.outcome, answer.matches[0].id) == ("fix", "multinode-init-hang-socket-ifname")


def test_mooncake_failing_to_open_the_rdma_device_is_its_entry(assistant):
    answer = assistant.answer(MOONCAKE_DEVICE)
    assert (answer.outcome, answer.matches[0].id) == ("fix", "mooncake-rdma-no-available-rnic")


def test_a_runtime_module_missing_after_a_plain_old_install_is_the_missing_extra(assistant):
    answer = assistant.answer("pip install sglang==0.5.2, then the server fails at start:\n"
                              "Traceback (most recent call last):\n"
                              '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/constrained/xgrammar_backend.py", line 21, in <module>\n'
                              "    import xgrammar\n"
                              "ModuleNotFoundError: No module named 'xgrammar'\n")
    assert (answer.outcome, answer.matches[0].id) == ("fix", "sglang-installed-without-runtime-extra")


AWQ_FLOAT32 = """\
python -m sglang.launch_server --model-path TheBloke/Mistral-7B-Instruct-v0.2-AWQ --dtype float32 --port 30000
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_loader/loader.py", line 243, in _get_quantization_config
    raise ValueError(
ValueError: torch.float32 is not supported for quantization method awq. Supported dtypes: [torch.float16]
"""


def test_a_near_match_is_shown_beside_the_users_line_not_claimed_as_it(assistant):
    answer = assistant.answer(AWQ_FLOAT32)
    reasons = " ".join(answer.reasons)
    assert "torch.float32 is not supported" in reasons        # the user's own line is quoted
    assert "is in your paste" not in reasons


def test_an_admin_endpoints_json_error_body_is_the_error_not_a_question(assistant):
    body = ('{"success":false,"error_message":"LoRA adapter sql contains target modules [\'down_proj\', \'up_proj\'] '
            "that are not included in the specified --lora-target-modules ['q_proj', 'v_proj']. Please update "
            "--lora-target-modules to include all required modules: ['down_proj', 'q_proj', 'up_proj', 'v_proj'], "
            'or use \'all\' to enable all supported modules.","loaded_adapters":{}}')
    answer = assistant.answer(body)
    assert (answer.outcome, answer.matches[0].id) == ("fix", "lora-target-modules-missing")


def test_a_report_that_ends_in_a_question_is_still_a_report(assistant):
    answer = assistant.answer(
        "Streaming with stream_options={\"include_usage\": true} against sglang 0.4.6, the last chunk has "
        "\"usage\": null, so LiteLLM cost tracking shows 0 tokens. Non-streaming requests have usage. "
        "Is this a bug in sglang?")
    assert not answer.question
    assert answer.matches[0].id == "openai-stream-usage-null-include-usage"


STARTUP_THEN_BAD_IMAGE = """\
[2025-11-02 10:00:01] server_args=ServerArgs(model_path='Qwen/Qwen2.5-VL-7B-Instruct', tp_size=1)
[2025-11-02 10:00:05 TP0] Init torch distributed begin.
[2025-11-02 10:00:06 TP0] Init torch distributed ends. mem usage=0.00 GB
[2025-11-02 10:00:40 TP0] Load weight end. type=Qwen2_5_VLForConditionalGeneration, dtype=torch.bfloat16, avail mem=62.13 GB, mem usage=15.82 GB.
[2025-11-02 10:01:02] The server is fired up and ready to roll!
[2025-11-02 10:03:17] Error in request: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/utils/common.py", line 927, in load_image
    raise ValueError(f"Invalid image: {image_file}")
ValueError: Invalid image: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA
"""


def test_a_startup_progress_line_is_no_lead_beside_a_specific_error_it_does_not_explain(assistant):
    answer = assistant.answer(STARTUP_THEN_BAD_IMAGE)
    assert not (answer.outcome != "unknown" and answer.matches[0].id == "multinode-init-hang-socket-ifname")


def test_a_fix_shows_the_step_for_the_users_check_not_the_other_checks(assistant):
    answer = assistant.answer(
        "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3-0324 --tp 8 --dp 8 "
        "--enable-dp-attention --speculative-algorithm NGRAM --trust-remote-code\n"
        "ValueError: Currently ngram speculative decoding does not support dp attention.\n")
    assert (answer.outcome, answer.matches[0].id) == ("fix", "server-args-combination-rejected")
    steps = "\n".join(answer.fix)
    assert "ngram speculative decoding does not support dp attention" in steps
    # steps keyed to other checks' messages are someone else's fix (one says to add DP attention)
    assert "tp_size must be divisible by number of nodes" not in steps
    assert "multi-node data parallel is not supported" not in steps


def test_a_leads_next_steps_leave_out_steps_for_other_checks(assistant):
    answer = assistant.answer(SERVER_ARGS_TRACE.format(
        flags="--enable-dp-lm-head", message="Please enable dp attention when setting enable_dp_lm_head."))
    steps = "\n".join(answer.next_steps)
    assert "assert/ValueError text names the two settings" in steps
    assert "chunked_prefill_size must be divisible by page_size" not in steps


def test_an_entry_about_another_model_familys_template_is_not_the_fix(assistant):
    answer = assistant.answer(
        "GLM-4.5-Air 用 sglang 0.5.3 部署，多轮工具调用第二轮请求报 400：\n"
        '{"object":"error","message":"can only concatenate str (not \\"dict\\") to str","type":"BadRequestError","param":null,"code":400}\n'
        "第二轮 messages 里带了上一轮 assistant 的 tool_calls，arguments 我传的是 dict 而不是 JSON 字符串。\n")
    assert not (answer.outcome == "fix" and answer.matches[0].id == "deepseek-tool-history-arguments-dict-template-concat")


def test_a_flag_keeps_every_value_it_was_given():
    from assistant.commands import launch_command_flags

    flags = dict(launch_command_flags(
        "python3 -m sglang.launch_server --model-path m --lora-target-modules q_proj v_proj --tp 8 and then it fails"))
    assert flags["--lora-target-modules"] == "q_proj v_proj"
    assert flags["--tp"] == "8"      # the sentence after the command is not a value


def test_a_command_quoted_in_a_sentence_ends_where_the_sentence_goes_on(assistant):
    answer = assistant.answer(
        "用 python3 -m sglang.launch_server --model-path /models/qwen3-0.6b --port 8000 启动后报错，"
        "加上 --enable-dp-attention（官方示例）也一样。\n"
        "ImportError: libnvrtc.so.12: cannot open shared object file: No such file or directory")
    flags = " ".join(answer.detected.flags)
    assert "--model-path /models/qwen3-0.6b" in flags and "--port 8000" in flags
    assert "启动" not in flags and "ImportError" not in flags
    from assistant.commands import launch_command_flags
    pairs = launch_command_flags("python3 -m sglang.launch_server --model-path m --disable-cuda-graph. Then it works")
    assert pairs == [("--model-path", "m"), ("--disable-cuda-graph", None)]


def test_an_entry_about_a_feature_the_launch_command_leaves_off_is_contradicted():
    from assistant.decision import feature_unused
    from assistant.trace import analyze

    meta = {"title": "EAGLE3 speculative decoding crashes when requests ask for logprobs"}
    without = analyze("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp 2\n"
                      "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert feature_unused(meta, without)
    with_eagle = analyze("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
                         "--speculative-algorithm EAGLE3 --speculative-draft-model-path d\n"
                         "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert feature_unused(meta, with_eagle) is None
    # no launch command shown: what it turns on is unknown
    assert feature_unused(meta, analyze("RuntimeError: CUDA error: an illegal memory access was encountered\n")) is None


def test_model_families_are_read_from_the_model_path_and_grouped():
    from assistant.decision import family_conflict
    from assistant.trace import analyze

    deepseek = {"title": "DeepSeek V3 chat template fails on dict tool-call arguments: the template concatenates"}
    kimi = analyze("python3 -m sglang.launch_server --model-path moonshotai/Kimi-K2-Instruct --tp 8\nValueError: x y z\n")
    glm = analyze("python3 -m sglang.launch_server --model-path zai-org/GLM-4.5-Air --tp 4\nValueError: x y z\n")
    assert family_conflict(deepseek, kimi) is None      # Kimi K2 runs DeepSeek V3's architecture
    assert "glm" in family_conflict(deepseek, glm)
    tool = {"title": "LLaMA-Factory fails importing SGLang internals"}
    assert family_conflict(tool, glm) is None            # a tool's name is not a model family


def test_a_chinese_symptom_report_reaches_the_english_entry(assistant):
    answer = assistant.answer(
        'Qwen3-32B 用 sglang 0.5.3 部署，启动参数加了 --reasoning-parser qwen3。请求里传了 "chat_template_kwargs": '
        '{"enable_thinking": false}，返回的 message.content 是 null，整个回答都在 reasoning_content 里面，这是为什么？\n'
        '{"choices":[{"message":{"role":"assistant","content":null,"reasoning_content":"北京是中国的首都。",'
        '"tool_calls":null},"finish_reason":"stop"}]}\n')
    assert answer.matches[0].id == "reasoning-parser-content-null"
    assert answer.outcome == "fix"


def test_multi_node_dp_attention_without_a_rendezvous_address(assistant):
    answer = assistant.answer(
        "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 16 --dp 16 --enable-dp-attention "
        "--nnodes 2 --node-rank 0 --trust-remote-code\n"
        "Traceback (most recent call last):\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/server_args.py", line 5653, in init_new\n'
        '    elif server_args.dist_init_addr.startswith("["):  # ipv6 address\n'
        "AttributeError: 'NoneType' object has no attribute 'startswith'\n")
    assert (answer.outcome, answer.matches[0].id) == ("fix", "multinode-dist-init-addr-missing")
    assert "--dist-init-addr" in "\n".join(answer.fix)
