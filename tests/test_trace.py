"""Trace analysis: the error that matters, masking, and what the user is running."""

import json
import re
import textwrap

import pytest

from assistant.text import mask, tokenize
from assistant.trace import analyze, analyze_lines

RANK_REPEATS = "\n".join(
    f"[2025-05-05 10:05:0{r} DP{r} TP{r}] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
    f"2.{r}3 GiB. GPU {r} has a total capacity of 79.11 GiB of which 2.{r}1 GiB is free." for r in range(8)
)


def test_the_same_traceback_from_8_ranks_counts_once():
    a = analyze(RANK_REPEATS)
    assert len(a.errors) == 1
    assert a.errors[0].count == 8
    assert a.collapsed_repeats == 7


def test_consequence_line_never_outranks_the_root_error():
    log = "\n".join([
        "[2025-01-01 10:00:00] Load weight begin. avail mem=78.50 GB",
        "[2025-01-01 10:00:05 TP0] Traceback (most recent call last):",
        '[2025-01-01 10:00:05 TP0]   File "/sgl/python/sglang/srt/model_executor/model_runner.py", line 20, in init',
        "[2025-01-01 10:00:05 TP0] ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.",
        "[2025-01-01 10:00:06] Received sigquit from a child process. It usually means the child failed.",
        "[2025-01-01 10:00:06] Scheduler or DataParallelController 1880936 terminated with -3",
    ])
    a = analyze(log)
    assert a.primary.text.startswith("ValueError: The memory capacity is unbalanced")
    assert [e.kind for e in a.errors][-1] == "consequence"
    assert a.frames == ("init",)


def test_first_fatal_error_in_a_long_log_is_found():
    noise = [f"[2025-01-01 10:{i // 60:02d}:{i % 60:02d}] Decode batch. #running-req: {i}, #token: {i * 7}"
             for i in range(3000)]
    log = noise[:1500] + ["RuntimeError: CUDART error: peer access is not supported between these two devices"] + noise[1500:]
    a = analyze("\n".join(log))
    assert a.primary.text.startswith("RuntimeError: CUDART error: peer access")
    assert a.total_lines == 3001


def test_masking_removes_what_varies_between_reports():
    one = mask("[2025-10-15 10:47:27 TP3] Failed to register memory 0x2e1cbac200: Bad address [14] on 10.0.0.12:30000 pid=4242")
    two = mask("[2026-01-02 01:02:03 TP0] Failed to register memory 0x7b375b400000: Bad address [14] on 192.168.1.5:8998 pid=7")
    assert one == two
    assert "<addr>" in one and "<ip>" in one
    assert mask("/usr/local/lib/python3.11/dist-packages/sgl_kernel/common_ops.abi3.so") == "<path>/common_ops.abi3.so"


def test_a_path_a_person_elided_masks_like_the_absolute_path_the_log_printed():
    """A KB line or a pasted traceback writes `File ".../transformers/x.py"`; the log printed the
    absolute path: both mask to `<path>/x.py`, so the line matches as written."""
    elided = mask('File ".../transformers/dynamic_module_utils.py", line 133, in get_relative_imports')
    logged = mask('File "/usr/local/lib/python3.12/dist-packages/transformers/dynamic_module_utils.py", '
                  'line 410, in get_relative_imports')
    assert elided == logged == 'File "<path>/dynamic_module_utils.py", line <n>, in get_relative_imports'
    assert mask("Loading safetensors ... done") == "Loading safetensors ... done"


def test_identifier_aware_tokens():
    tokens = tokenize("fatal error: cuda_fp8.h KVTransferError --tp-size 8 显存不足")
    for whole in ("cuda_fp8.h", "kvtransfererror", "--tp-size"):
        assert whole in tokens
    assert {"kv", "transfer", "error", "cuda", "fp8"} <= set(tokens)
    assert "显存" in tokens and "不足" in tokens


def test_environment_is_read_from_check_env_and_launch_command():
    log = "\n".join([
        "Python: 3.10.12", "CUDA available: True", "GPU 0,1,2,3,4,5,6,7: NVIDIA A100-SXM4-80GB",
        "NVCC: Cuda compilation tools, release 11.7, V11.7.99", "PyTorch: 2.5.1+cu124",
        "sglang: 0.4.5", "flashinfer: 0.2.3",
        "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\",
        "    --tp 8 --enable-dp-attention --mem-fraction-static 0.85",
        "RuntimeError: Error building extension 'batch_decode_with_kv_cache_dtype_q_bf16'",
    ])
    env = analyze(log).environment
    assert env.sglang_version == "0.4.5"
    assert env.torch_version == "2.5.1+cu124"
    assert env.cuda_version == "11.7"
    assert env.flashinfer_version == "0.2.3"
    assert env.gpu.startswith("A100")
    assert env.hardware == "nvidia"
    assert "--tp 8" in env.flags and "--enable-dp-attention" in env.flags
    assert "--mem-fraction-static 0.85" in env.flags


def test_a_container_tag_or_another_tools_version_is_not_torchs_or_sglangs():
    # NGC's PyTorch container is tagged by year and month; LLaMA-Factory has versions of its own
    env = analyze("DGX Spark, container nvcr.io/nvidia/pytorch:25.09-py3 + pip install sglang==0.5.9\n"
                  "RuntimeError: CUDA error: no kernel image is available for execution on the device").environment
    assert env.torch_version is None
    assert env.sglang_version == "0.5.9"
    env = analyze("LLaMA-Factory 0.9.3 用 sglang 做推理后端，配置了 adapter_name_or_path，但是输出和原模型一模一样").environment
    assert env.sglang_version is None


def test_server_args_dump_gives_flags_when_no_command_is_pasted():
    env = analyze("[2025-01-01] server_args=ServerArgs(model_path='x', tp_size=16, dp_size=2, "
                  "enable_dp_attention=True, disable_cuda_graph=False)").environment
    assert "--tp-size 16" in env.flags and "--enable-dp-attention" in env.flags
    assert not any("cuda-graph" in f for f in env.flags)


def test_amd_and_musa_hardware_detected():
    assert analyze("hipErrorStreamCaptureInvalidated on MI300X").environment.hardware == "amd"
    assert analyze("musa failed with an illegal memory access on MTT S4000").environment.hardware == "musa"


def test_ascend_is_read_from_its_driver_kit_collective_library_and_chip_names():
    # a report that names only Ascend's own parts is from Ascend, not from NVIDIA by default
    assert analyze("Weight loading hangs. HDK Version: 25.5.x").environment.hardware == "ascend"
    assert analyze("Qwen3 served on four 910B cards fails to start").environment.hardware == "ascend"
    assert analyze("export HCCL_CONNECT_TIMEOUT=7200").environment.hardware == "ascend"
    assert analyze("batch size 910, port 19100").environment.hardware is None


def test_the_question_around_the_log_is_kept():
    a = analyze("升级到 0.5.6 之后启动就报错，怎么办？\nImportError: libnuma.so.1: cannot open shared object file")
    assert "怎么办" in a.question
    assert a.primary.text.startswith("ImportError: libnuma.so.1")


def test_a_launch_command_with_timeout_in_a_flag_name_is_not_an_error():
    analysis = analyze("python -m sglang_router.launch_server --router-worker-startup-timeout-secs 600 --dp-size 8\n"
                       "ERROR: health check is pending with error: error sending request for url "
                       "(http://127.0.0.1:31000/health)")
    assert [e.text for e in analysis.errors][:1] == [
        "ERROR: health check is pending with error: error sending request for url (http://127.0.0.1:31000/health)"]



def test_a_log_quoted_in_markdown_is_read_as_the_log():
    # GitHub issues quote logs with "> "; the words that announce them are not the error
    analysis = analyze_lines(["running image `lmsysorg/sglang:v0.5.12-cu130-runtime`", "results in error:",
                              "> ModuleNotFoundError: No module named 'distro'"])
    assert [e.text for e in analysis.errors] == ["ModuleNotFoundError: No module named 'distro'"]
    assert analysis.errors[0].kind == "exception"


def test_words_that_announce_the_error_without_a_colon_are_not_the_error():
    analysis = analyze_lines(["`python -m sglang.launch_server --model-path Mistral-7B-Instruct-v0.2/` fails with", "",
                              "ImportError: cannot import name 'InputMetadata' from 'vllm.model_executor'"])
    assert [e.text for e in analysis.errors] == [
        "ImportError: cannot import name 'InputMetadata' from 'vllm.model_executor'"]
    # nor with one, when the words before are not all plain ("SGLang", a comma)
    analysis = analyze_lines(["When using the SGLang backend, litellm crashes with:",
                              "ValueError: 'list' object has no attribute 'get'"])
    assert [e.text for e in analysis.errors] == ["ValueError: 'list' object has no attribute 'get'"]


def test_a_bare_assertion_error_is_read_with_the_assert_that_failed():
    failed = analyze_lines([
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/moe/ep_moe/layer.py", line 120, in __init__',
        "    assert self.num_experts % self.tp_size == 0",
        "AssertionError",
    ])
    assert failed.primary.text == "AssertionError: assert self.num_experts % self.tp_size == 0"
    # an assert in an outer frame is not the one that failed
    outer = analyze_lines([
        "Traceback (most recent call last):",
        '  File "/x/sglang/srt/managers/scheduler.py", line 10, in run',
        "    assert ready",
        '  File "/x/sglang/srt/managers/scheduler.py", line 20, in step',
        "    check(batch)",
        "AssertionError",
    ])
    assert outer.primary.text == "AssertionError"


def test_a_json_error_body_is_read_as_the_error_not_as_the_users_words():
    # curl prints the server's reply; its message is the error however many plain words it has
    analysis = analyze(
        "$ curl -s localhost:30000/v1/embeddings -d '{\"model\": \"m\", \"input\": \"hi\"}'\n"
        '{"object":"error","message":"This model does not appear to be an embedding model by default. '
        'Please add `--is-embedding` when launching the server or try another model.","type":"BadRequestError",'
        '"param":null,"code":400}\n')
    assert analysis.errors and analysis.errors[0].text.startswith("This model does not appear to be an embedding model")
    assert not analysis.question
    router = analyze('{"error": {"type": "service_unavailable", "message": "No available workers (all circuits open or unhealthy)"}}')
    assert router.errors[0].text.startswith("No available workers")
    # a request body is not an error
    assert not analyze('{"model": "default", "messages": [{"role": "user", "content": "hello there, how are you today"}]}').errors


def test_a_banner_framing_a_tools_output_is_not_the_error():
    # Triton on Ascend frames the compiler's message between two banners; the banner is not the error
    analysis = analyze("\n".join([
        "triton.compiler.errors.MLIRCompilationError:",
        "///------------------[ERROR][Triton][BEG]------------------",
        "[ConvertLinalgRToBinary] encounters error:",
        "bishengir-compile: for the --target option: Cannot find option named 'Ascend910B4-1'!",
        "///------------------[ERROR][Triton][END]------------------",
    ]))
    assert not [e.text for e in analysis.errors if "[Triton]" in e.text]
    assert analysis.primary.text.startswith("triton.compiler.errors.MLIRCompilationError")


def test_a_users_short_remark_is_prose_and_a_programs_short_line_is_not():
    from assistant.trace import looks_like_sentence

    for remark in ("3. crash", "- it hangs", "server crashed", "2) the server gets stuck"):
        assert looks_like_sentence(remark), remark
    for printed in ("Segmentation fault", "Killed", "error: invalid choice", "Aborted (core dumped)",
                    "ValueError: bad value", "ERROR"):
        assert not looks_like_sentence(printed), printed


PLAIN_CRASH = [
    "[2025-09-02 15:32:20 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/lib/python3/site-packages/sglang/srt/managers/scheduler.py", line 2414, in run_scheduler_process',
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
    '  File "/usr/lib/python3/site-packages/sglang/srt/model_executor/model_runner.py", line 300, in init_memory_pool',
    '    raise RuntimeError("Not enough memory. Please try to increase --mem-fraction-static.")',
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
]


@pytest.mark.parametrize("prefix", [
    "Sep  2 15:32:20 gpu-node-7 python3.12[912967]: ",              # journalctl -u sglang
    "2025-09-02T15:32:20+0800 gpu-node-7 python3[912967]: ",         # journalctl -o short-iso
    "sglang_server_1  | ",                                            # docker-compose v1
    "sglang-1  | ",                                                   # docker compose v2
    "2025-09-02T15:32:20.123456789Z ",                                # kubectl logs --timestamps
    "2025-09-02T15:32:20.123456789+00:00 stderr F ",                  # /var/log/pods/... on a node
    "[rank3]: ",                                                      # torchrun
    "(pid=4242) ",                                                    # Ray, unnamed worker
    "(SGLangEngine pid=4242, ip=10.0.0.7) ",                          # Ray actor
    "\x1b[36m(TaskRunner pid=4242)\x1b[0m ",                         # Ray's colours, written to a file
    "[36m(TaskRunner pid=4242)[0m ",                                  # ... pasted where the ESC was lost
    "[1,0]<stderr>:",                                                 # mpirun --tag-output
    "Thu Jan 23 11:55:50 2025[1,0]<stderr>:",                         # ... with --timestamp-output
    "(WorkerDict(rank=5 pod=job-0048) pid=384, ip=10.1.2.3) ",        # Ray actor with a custom repr
    "(worker6, rank=6, pid=33713, ip=10.128.0.37) ",                  # Ray job on a cluster launcher
    "2025-09-02 15:32:20,291 - sglang - INFO - ",                     # Python logging's basicConfig
    "2025-09-02T15:32:20.29Z 2025-09-02 15:32:20,291 - sglang - ERROR - ",   # ... under kubectl
    "  | ",                                                           # an exception group's margin
    "0: ",                                                            # srun --label
])
def test_a_log_collectors_prefix_does_not_hide_the_traceback(prefix):
    plain = analyze_lines(PLAIN_CRASH)
    collected = analyze_lines(prefix + line for line in PLAIN_CRASH)
    assert collected.primary.text == plain.primary.text == \
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    assert collected.frames == plain.frames == ("run_scheduler_process", "init_memory_pool")


def _docker_records(lines):
    records = [json.dumps({"log": line + "\n", "stream": "stderr", "time": "2025-09-02T15:32:20.1Z"})
               for line in lines]
    # Docker splits a line over 16 KiB over records; only the last piece ends in a newline
    head, tail = lines[0][:20], lines[0][20:]
    return [json.dumps({"log": head, "stream": "stderr", "time": "t"}),
            json.dumps({"log": tail + "\n", "stream": "stderr", "time": "t"}), *records[1:]]


def _body(lines):
    return {"object": "error", "message": "\n".join(lines), "type": "InternalServerError", "param": None,
            "code": 500}


@pytest.mark.parametrize("encode", [
    _docker_records,                                                             # docker json-file
    lambda lines: [json.dumps({"__REALTIME_TIMESTAMP": "1756827140123456", "_SYSTEMD_UNIT": "llm.service",
                               "MESSAGE": line}) for line in lines],             # journalctl -o json
    lambda lines: ["2025-09-02T15:32:20Z " + json.dumps(
        {"asctime": "2025-09-02 15:32:20", "levelname": "ERROR", "message": lines[0].split("] ", 1)[1],
         "exc_info": "\n".join(lines[1:])})],                                    # a JSON logger, under kubectl
    lambda lines: [json.dumps(_body(lines))],                                    # an error body, escaped
    lambda lines: ["openai.InternalServerError: Error code: 500 - " + repr(_body(lines))],  # its repr
    lambda lines: ["Error: " + repr(_body(lines))[:-12]],                        # ... cut short
    lambda lines: [" ".join(line.strip() for line in lines)],                    # line breaks lost
], ids=["docker", "journald-json", "json-logger", "escaped-body", "repr", "repr-cut", "flattened"])
def test_an_encoded_or_flattened_log_is_read_as_its_lines(encode):
    plain = analyze_lines(PLAIN_CRASH)
    encoded = analyze_lines(encode(PLAIN_CRASH))
    assert encoded.primary.text == plain.primary.text == \
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    assert encoded.frames == plain.frames == ("run_scheduler_process", "init_memory_pool")


def test_a_flattened_log_is_cut_at_its_time_stamps_and_a_framed_out_traceback_at_its_exception():
    flat = ("[2025-07-29 15:06:50 TP0] Scheduler hit an exception: Traceback (most recent call last): ... "
            "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
            "[2025-07-29 15:06:51] Received sigquit from a child process. It usually means the child failed. "
            "[2025-07-29 15:06:51] Scheduler or DataParallelController 867 terminated with -3")
    analysis = analyze_lines([flat])
    assert analysis.primary.text == ("ValueError: The memory capacity is unbalanced. "
                                     "Some GPUs may be occupied by other processes.")
    assert [e.kind for e in analysis.errors] == ["exception", "consequence", "consequence"]


LONG_CRASH = [
    "[2025-09-02 15:32:18 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, "
    "avail mem=12.31 GB, mem usage=64.20 GB.",
    "[2025-09-02 15:32:19 TP0] KV Cache is allocated. #tokens: 421388, KV size: 27.59 GB, "
    "the pool leaves 1.02 GB for activations and graphs",
    *PLAIN_CRASH,
]


@pytest.mark.parametrize("width", [80, 120])
def test_a_log_cut_at_a_terminals_width_is_joined_again(width):
    cut = [line[i:i + width] for line in LONG_CRASH for i in range(0, len(line), width)]
    assert max(map(len, cut)) == width and len(cut) > len(LONG_CRASH)
    plain, joined = analyze_lines(LONG_CRASH), analyze_lines(cut)
    assert joined.primary.text == plain.primary.text == \
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    assert joined.frames == plain.frames == ("run_scheduler_process", "init_memory_pool")


def test_a_cut_far_into_a_long_log_is_joined_with_the_width_read_at_its_start(monkeypatch):
    from assistant import terminal_wrap

    monkeypatch.setattr(terminal_wrap, "SAMPLE_LINES", 30)
    lines = [f"[2025-09-02 15:32:{i % 60:02d} TP0] Decode batch. #running-req: {i}, gen throughput "
             f"(token/s): 12{i:03d}.00, #queue-req: 0 and some padding to be long" for i in range(40)]
    # progress bars exactly as wide as the window: each one a line, not the tail of the one before
    bars = [f"Loading safetensors checkpoint shards: {12 * k:3d}% Completed | {k}/8 [00:0{k}<00:21, 2.7]  "
            for k in range(1, 4)]
    assert {len(bar) for bar in bars} == {80}
    log = bars + [piece for line in lines + PLAIN_CRASH for piece in (line[:80], line[80:]) if piece]
    read = list(terminal_wrap.unwrapped(log))
    assert read[:3] == bars and read[-len(PLAIN_CRASH):] == PLAIN_CRASH   # the crash is past the 30th line
    assert analyze_lines(log).frames == analyze_lines(PLAIN_CRASH).frames


# what a terminal shows in colour: a logger's stamp, a frame's file, the exception's name
COLOURED = re.compile(r'^\[[^]]+\]|RuntimeError(?=:)|(?<=File ")[^"]+')


@pytest.mark.parametrize("copy", [
    lambda line: line.replace(" ", "\u00a0"),                  # every space a no-break space
    lambda line: line.replace("  ", "\u00a0 "),                # indentation only, as HTML keeps it
    lambda line: "\ufeff" + line.replace("Error", "Err\u200bor").replace(" ", "\u3000", 1),
    # Python 3.13's coloured traceback and a coloured logger's stamp, then the same once a web form
    # dropped the escape character
    lambda line: COLOURED.sub(lambda m: f"\x1b[1;35m{m.group(0)}\x1b[0m", line),
    lambda line: COLOURED.sub(lambda m: f"[32m{m.group(0)}[0m", line),
], ids=["nbsp", "nbsp-indent", "zero-width-and-ideographic", "colours", "colours-escape-lost"])
def test_a_log_copied_from_a_page_a_chat_or_a_coloured_terminal_reads_as_the_plain_one(copy):
    plain, copied = analyze_lines(LONG_CRASH), analyze_lines([copy(line) for line in LONG_CRASH])
    assert copied.primary.text == plain.primary.text
    assert copied.frames == plain.frames == ("run_scheduler_process", "init_memory_pool")


GDN_ASSERT = ("AssertionError: triton or trtllm_mha backend are the only supported backends on Blackwell "
              "GPUs for hybrid GDN models, use --attention-backend triton or --attention-backend "
              "trtllm_mha to specify the backend.")


@pytest.mark.parametrize("width", [80, 120])
def test_an_error_line_cut_at_a_default_terminal_width_is_joined_when_it_is_the_only_cut(width):
    # the user's own sentence is longer than the window (typed, not copied); only the exception was cut
    paste = ["Qwen3-Next-80B on four B200 dies at startup with --attention-backend flashinfer, while the "
             "same launch works on H100. Which backend should I use?", "",
             "Traceback (most recent call last):",
             '  File "sglang/srt/model_executor/model_runner.py", line 1702, in init_attention_backend',
             "    assert self.server_args.attention_backend in (",
             *(GDN_ASSERT[i:i + width] for i in range(0, len(GDN_ASSERT), width))]
    assert sum(len(line) == width for line in paste) <= 2
    assert analyze_lines(paste).primary.text == GDN_ASSERT


@pytest.mark.parametrize("head", [
    "[HiCache] The output turns to garbage once L3 pages are read back from Mooncake!",   # an issue's title
    "[2025-11-02 10:12:01 TP0] Load weight end. type=Glm4MoeForCausalLM, mem=19.62 GB",
])
def test_a_line_as_wide_as_a_terminal_is_not_joined_with_a_longer_line_after_it(head):
    from assistant.terminal_wrap import unwrapped

    assert len(head) == 80
    issue = [head, "With HiCache and the Mooncake storage backend, answers are fine until the cache is "
                   "loaded from L3; from then on they mix random tokens, broken code and special characters.",
             "[2025-11-02 10:12:02 TP0] Prefill batch. #new-seq: 1, #new-token: 8192"]
    assert list(unwrapped(issue)) == issue


def test_lines_of_one_length_that_were_not_cut_stay_apart():
    from assistant.terminal_wrap import unwrapped

    template = [f"Loading model.layers.25.block_sparse_moe.experts.{e}.w{w}.weight" for e in range(4) for w in (1, 2, 3)]
    # a paragraph wrapped at words, four of its lines as long as the widest
    prose = textwrap.wrap(
        "We run sglang 0.5.4 with Mistral-Small-24B on two L40S cards with --tp 2 and the server dies right at "
        "startup. The CUDA runtime says that the two devices cannot access each other's memory, and --tp 1 on "
        "either GPU works fine. We think it is the PCIe topology of the Proxmox host, because the same image "
        "works on a bare-metal machine with the same cards and the same driver, and someone on a forum said that "
        "adding --disable-cuda-graph fixes these startup failures on consumer cards, which did not help us at "
        "all. What else can we try before we move the cards?", 87)
    assert sum(len(line) == 87 for line in prose) == 4
    # a traceback's frames as long as each other, each followed by its (indented) source line
    frames = []
    for module, function in (("scheduler", "run_scheduler_process"), ("tp_worker", "__init__"),
                             ("model_runner", "load_model")):
        head = f'  File "/usr/lib/python3/site-packages/sglang/srt/managers/{module}.py", line 1816, in {function}'
        frames += [head + "_" * (110 - len(head)), "    self.worker = TpModelWorker(server_args, gpu_id, tp_rank)"]
    assert sum(len(line) == 110 for line in frames) == 3
    for lines in (template, prose, frames):
        assert list(unwrapped(lines)) == lines


def test_a_jupyter_traceback_gives_its_frames_and_its_exception():
    notebook = [
        "---------------------------------------------------------------------------",
        "RuntimeError                              Traceback (most recent call last)",
        "Cell In[3], line 3",
        "      1 import sglang as sgl",
        '----> 3 llm = sgl.Engine(model_path="Qwen/Qwen2.5-7B-Instruct")',
        "",
        "File /opt/conda/lib/python3.11/site-packages/sglang/srt/entrypoints/engine.py:121, in Engine.__init__(self, **kwargs)",
        "--> 121 tokenizer_manager, scheduler_info = _launch_subprocesses(server_args=server_args)",
        "",
        "File ~/.local/lib/python3.11/site-packages/sglang/srt/entrypoints/engine.py:651, in _launch_subprocesses(server_args)",
        "    650         proc.kill()",
        '--> 651 raise RuntimeError("Initialization failed. Please see the error messages above.")',
        "",
        "RuntimeError: Initialization failed. Please see the error messages above.",
    ]
    analysis = analyze_lines(notebook)
    assert analysis.frames == ("<module>", "__init__", "_launch_subprocesses")
    assert ("/opt/conda/lib/python3.11/site-packages/sglang/srt/entrypoints/engine.py", "__init__") in analysis.sglang_frames
    # the numbered source lines and the header are no errors; the exception is the only one
    assert [e.text for e in analysis.errors] == ["RuntimeError: Initialization failed. Please see the error messages above."]
    # IPython 7's frames name the file first
    old = analyze_lines(["/usr/lib/python3.8/site-packages/sglang/srt/server.py in __init__(self, *args, **kwargs)",
                         "ValueError: bad"])
    assert old.frames == ("__init__",)


def test_lines_that_only_look_encoded_are_read_as_written():
    from assistant.log_encoding import decoded

    body = '{"object": "error", "message": "The model `qwen` does not exist.", "code": 404}'
    windows = r"pip wrote C:\new\nvidia\notes.txt and C:\new\nightly\x.whl"
    not_a_record = '{"model": "qwen", "messages": [{"role": "user", "content": "hi\\nthere"}]}'
    # `--log-requests` logs the prompt, which may quote a traceback: it is the user's text, not a log
    request = ("[2025-09-02 15:32:20] Receive: obj=GenerateReqInput(rid='9f2c', text='Fix this:\\nTraceback "
               "(most recent call last):\\n  File \"app.py\", line 3, in <module>\\nKeyError: 1\\n', stream=True)")
    flat_prompt = ('{"model": "qwen", "prompt": "Fix this: Traceback (most recent call last): File \\"a.py\\", '
                   'line 3, in <module> KeyError: 1"}')
    for line in (body, windows, not_a_record, request, flat_prompt, "Traceback (most recent call last):"):
        assert list(decoded([line])) == [line]
    # an API's error body is no log record: its message is still the error
    assert analyze_lines([body]).primary.text == "The model `qwen` does not exist."


def test_a_time_stamp_keeps_the_first_word_of_the_line_behind_it():
    # `kubectl logs --timestamps` puts the time before every line; "File", "Traceback" and the
    # program's own level name are the program's words
    analysis = analyze_lines(["2025-09-02T15:32:20Z Traceback (most recent call last):",
                              '2025-09-02T15:32:20Z   File "/x/sglang/srt/server_args.py", line 9, in check',
                              "2025-09-02T15:32:20Z ValueError: bad value",
                              "2025-09-02T15:32:21Z ERROR: the server exited"])
    assert analysis.frames == ("check",)
    assert analysis.primary.text == "ValueError: bad value"
    assert "ERROR: the server exited" in [e.text for e in analysis.errors]


def test_a_bare_exception_ends_the_traceback_as_its_error():
    # `raise Exception("...")` prints "Exception: ..." with no subclass name before it
    analysis = analyze_lines(["Traceback (most recent call last):",
                              '  File "/x/sglang/srt/model_loader/loader.py", line 9, in load_model',
                              "Exception: Some weights are not initialized from checkpoints",
                              "[2025-09-02 15:32:21] Received sigquit from a child process. It usually means the child failed."])
    assert analysis.primary.text == "Exception: Some weights are not initialized from checkpoints"
    assert analysis.primary.kind == "exception"


def test_a_faulthandler_dump_gives_the_current_threads_frames_outermost_first():
    # a segfault / bus error dump: innermost frame first, no comma before "in", other threads after
    analysis = analyze_lines([
        "Fatal Python error: Bus error",
        "",
        "Current thread 0x00007769465bb740 (most recent call first):",
        '  File "/venv/lib/python3.12/site-packages/sglang/srt/layers/linear.py", line 1254 in weight_loader',
        '  File "/venv/lib/python3.12/site-packages/sglang/srt/models/qwen3.py", line 318 in load_weights',
        '  File "/venv/lib/python3.12/site-packages/sglang/srt/model_loader/loader.py", line 377 in load_model',
        "",
        "Thread 0x00007768f1ffb640 (most recent call first):",
        '  File "/usr/lib/python3.12/threading.py", line 359 in wait',
        '  File "/usr/lib/python3.12/threading.py", line 1012 in run',
    ])
    assert analysis.frames == ("load_model", "load_weights", "weight_loader")
    assert analysis.primary.text == "Fatal Python error: Bus error"


@pytest.mark.parametrize("line", ["[mooncake] Traceback (most recent call last):",
                                  "[main] Traceback (most recent call last):",
                                  "\x1b[0m\x1b[36m(pid=7)\x1b[0m Traceback (most recent call last):"])
def test_a_bracketed_tag_or_colour_code_is_cut_whole(line):
    from assistant.log_prefix import PREFIX_RE

    assert line[PREFIX_RE.match(line).end():] == "Traceback (most recent call last):"


@pytest.mark.parametrize("step", ["1: start the server", "3: crash", "404: Not Found"])
def test_a_users_numbered_step_is_not_a_slurm_label(step):
    from assistant.log_prefix import PREFIX_RE

    assert PREFIX_RE.match(step).end() == 0


def test_an_exception_about_server_args_is_the_error_not_a_configuration_dump():
    analysis = analyze_lines([
        "Traceback (most recent call last):",
        '  File "/venv/lib/python3.10/site-packages/fastchat/serve/sglang_worker.py", line 290, in <module>',
        "TypeError: sglang.srt.server_args.ServerArgs() got multiple values for keyword argument 'log_level'"])
    assert analysis.primary.text.startswith("TypeError: sglang.srt.server_args.ServerArgs() got multiple values")


def test_an_exception_whose_class_is_not_named_error_is_read_as_the_error_not_as_prose():
    # Triton's `OutOfResources` ends in no Error suffix and its message reads like a sentence
    # ("... may help."); with its module path printed it is still the exception
    a = analyze(textwrap.dedent("""\
        GLM-4.5-Air-FP8 with --tp-size 4; the server runs for a while and then dies:
        triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 147456, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.
        [2025-07-29 15:06:51] Received sigquit from a child process. It usually means the child failed.
        """))
    assert a.primary.text.startswith("triton.runtime.errors.OutOfResources: out of resource: shared memory")
    assert "OutOfResources" not in a.question
    torch_compile = analyze("torch._dynamo.exc.Unsupported: call_function UserDefinedObjectVariable(Foo) [] {}")
    assert torch_compile.primary.kind == "exception"
    # a module path without a colon after the class is no exception
    assert not analyze("see sglang.srt.models.Qwen2ForCausalLM for the model code").errors


@pytest.mark.parametrize("line", [
    "Killed",
    "[1]+  Killed                  python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8",
    "./run.sh: line 19: 867080 Killed                  python -m sglang.launch_server --model-path m --tp 8",
])
def test_a_job_bash_reports_killed_is_an_error_line_and_its_command_the_launch(line):
    a = analyze("Loading safetensors checkpoint shards:  45% Completed | 18/40 [01:02<01:17,  3.52s/it]\n" + line)
    assert a.primary is not None and a.primary.text.endswith("Killed")
    assert a.primary.kind == "consequence"   # a signal from outside says the job stopped, not why
    if "launch_server" in line:
        assert "--tp 8" in a.environment.flags


def test_a_job_killed_after_the_real_error_leaves_that_error_first():
    a = analyze(textwrap.dedent("""\
        ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.
        [1]+  Segmentation fault (core dumped) python3 -m sglang.launch_server --model-path m
        ./run.sh: line 4: 12 Killed                  python -m sglang.launch_server --model-path m
        """))
    assert a.primary.text.startswith("ValueError: The memory capacity is unbalanced")
    kinds = {e.text: e.kind for e in a.errors}
    assert kinds["./run.sh: line 4: 12 Killed"] == "consequence"
    assert kinds["Segmentation fault (core dumped)"] == "fatal"   # the job crashed itself


@pytest.mark.parametrize("sentence, error", [
    ("When I am trying to dump logprobs, I am getting `ValueError: Out of range float values are not JSON compliant`",
     "ValueError: Out of range float values are not JSON compliant"),
    ("I deploy Qwen3-235B on H20 and an \u201cRuntimeError: RMSNorm failed with error code invalid configuration "
     "argument\u201d error occurs, any idea?", "RuntimeError: RMSNorm failed with error code invalid configuration argument"),
    ("在jupyter中使用离线推理, 会遇到ValueError: loop argument must agree with lock",
     "ValueError: loop argument must agree with lock"),
])
def test_an_exception_quoted_in_the_users_sentence_is_an_error_line(sentence, error):
    a = analyze(sentence)
    assert a.primary is not None and a.primary.text == error
    assert a.primary.kind == "exception"
    assert a.question   # the sentence itself stays the user's words


def test_a_sentence_that_only_names_an_exception_class_quotes_no_error():
    a = analyze("I think we should catch every ValueError in the client. Is there a way to do that?")
    assert not [e for e in a.errors if e.kind == "exception"]


def test_a_log_line_whose_only_talking_words_are_in_its_exception_is_not_prose():
    # "could" and "might" belong to the program's message, not to the user
    line = ("Decode transfer failed for request rank=0 with exception KVTransferError: Failed to get "
            "kvcache from prefill instance, it might be dead")
    a = analyze(line)
    assert not a.prose_lines
    assert a.errors and a.errors[0].text == line
    # a sentence of the user's that quotes the same exception stays theirs
    said = analyze("Could anyone help? I keep getting `KVTransferError: Failed to get kvcache from prefill instance`")
    assert said.prose_lines



def test_an_english_message_under_a_chinese_sentence_is_the_error_not_the_users_words():
    a = analyze("docker 容器版本的 sglang 启动 minicpm3-4b 失败\n"
                "Model architectures ['MiniCPM'] are not supported for now. Supported architectures: "
                "['AquilaModel', 'LlamaForCausalLM', 'MiniCPMForCausalLM']")
    assert a.errors and a.errors[0].text.startswith("Model architectures ['MiniCPM'] are not supported")
    assert len(a.prose_lines) == 1
    # a Chinese sentence wrapped over two lines is still the user's, line by line
    wrapped = analyze("升级之后服务启动就卡住了，日志最后一行停在加载权重，\n"
                      "等了半个小时也没有任何报错，请问应该怎么排查？")
    assert len(wrapped.prose_lines) == 2 and not wrapped.errors


GITHUB_REPORT = """[Bug] regression after upgrading sglang 0.5.1 -> 0.5.2: output throughput halved

### Describe the bug

Output throughput was halved after the upgrade to 0.5.2; nothing else was changed (same model, same flags, same GPUs).

### Reproduction

```
python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 4 --port 30000
```

### Environment

Python: 3.12.3
"""


def test_a_reports_title_and_description_are_its_question_whatever_their_grammar():
    # neither line talks to anyone ("I", "we", "?"), yet they are the user's summary of the problem
    analysis = analyze(GITHUB_REPORT)
    assert analysis.question.startswith("regression after upgrading sglang 0.5.1 -> 0.5.2")
    assert "Output throughput was halved after the upgrade" in analysis.question
    # the code block and the other sections are not the user's words
    assert "launch_server" not in analysis.question and "Python: 3.12.3" not in analysis.question


def test_a_title_that_is_an_error_line_stays_the_error():
    analysis = analyze("[Bug] ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.\n"
                       "\n### Describe the bug\n\nServer fails at startup on 8 GPUs.\n")
    assert analysis.primary.text.startswith("ValueError: The memory capacity is unbalanced")
    assert "ValueError" not in analysis.question


def test_an_uncaught_cpp_exception_is_read_from_its_what_line_even_under_the_users_words():
    from assistant.decision import root_error

    analysis = analyze(
        "Serving DeepSeek-V4-Flash on GB200 with TP=4 fails during model loading. All TP scheduler ranks abort:\n"
        "terminate called after throwing an instance of 'tvm::ffi::Error'\n"
        "  what():  TypeAttr `__ffi_repr__` is already registered for type index 130\n"
        "Fatal Python error: Aborted\n"
        "RuntimeError: Rank 1 scheduler died during initialization (exit code: -6)\n")
    # the runtime's lines are the program's, not more of the user's sentence
    assert not any("what():" in line or "Fatal Python error" in line for line in analysis.prose_lines)
    assert root_error(analysis).text.startswith("what():  TypeAttr `__ffi_repr__` is already registered")
    kinds = {e.text.split(" ")[0]: e.kind for e in analysis.errors}
    assert kinds["terminate"] == "consequence"


def test_a_python_message_quoted_without_its_class_is_the_root_error():
    report = "\n".join([
        "Kimi-K2.5 with --dcp-size 2 crashes on prefix-cached extend batches:",
        "",
        "'NoneType' object has no attribute 'dcp_local_prefix_kv_indices'",
    ])
    assert analyze(report).primary.text == "'NoneType' object has no attribute 'dcp_local_prefix_kv_indices'"
    titled = "[Bug] HiRadixCache.__init__() got an unexpected keyword argument 'token_to_kv_pool_allocator'"
    assert analyze(titled).primary is not None


def test_the_traceback_exception_outranks_the_same_message_quoted_in_a_title():
    report = "\n".join([
        "'Runtime' object has no attribute 'cache_prefix'",
        "Traceback (most recent call last):",
        '  File "/x/run.py", line 3, in <module>',
        "AttributeError: 'Runtime' object has no attribute 'cache_prefix'",
    ])
    assert analyze(report).primary.text.startswith("AttributeError: ")


def test_an_import_error_the_program_says_it_ignored_is_not_the_failure():
    log = "\n".join([
        "[2026-05-01 15:16:15 TP2] Ignore import error when loading sglang.srt.models.mixtral: "
        "cannot import name 'gptq_marlin_repack' from 'sgl_kernel'",
        "[2026-05-01 15:16:20 TP2] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    ])
    errors = analyze(log).errors
    assert errors[0].text.startswith("RuntimeError: Not enough memory")
    assert not any("Ignore import error" in e.text for e in errors)
