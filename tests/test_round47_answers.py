"""Answers after a new-user trial (round 47, h3), as an operator reads them: the commands of a fix
or of the next steps point at the port and host the paste shows the server on, not SGLang's
defaults; and where a `CUDA error: an illegal memory access` arises is told from the frames (a
call that waits for the GPU only noticed a fault of a kernel that ran before it)."""

from __future__ import annotations

from assistant.render import render_text
from assistant.server_address import server_address


# the HTTP port taken: a user on `--port 8000` must check port 8000, not 30000
PORT_8000_TAKEN = (
    "$ python3 -m sglang.launch_server --model-path /data/models/Qwen3-8B --host 0.0.0.0 --port 8000 --tp 2\n"
    "...\n"
    '  File "/usr/local/lib/python3.10/dist-packages/uvicorn/server.py", line 161, in startup\n'
    "    server = await loop.create_server(\n"
    "OSError: [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\n")


def test_fix_commands_use_the_port_the_paste_shows(assistant):
    answer = assistant.answer(PORT_8000_TAKEN)
    assert answer.outcome == "fix" and answer.matches[0].id == "port-already-in-use"
    fix = "\n".join(answer.fix)
    assert "grep ':8000 '" in fix and "lsof -i :8000" in fix
    assert ":30000" not in fix
    verify = "\n".join(answer.next_steps)
    assert "http://127.0.0.1:8000/health" in verify and "30000" not in verify
    # prose that names the default stays true: only commands change
    assert "default 30000" in answer.diagnosis


def test_prose_example_with_a_computed_value_keeps_its_port(assistant):
    step = assistant.answer(PORT_8000_TAKEN).fix[0]
    # "30233-30238 for `--port 30000`" is an example whose numbers are computed from 30000
    assert "30233-30238 for `--port 30000`" in step.splitlines()[0]


def test_a_single_listen_address_replaces_loopback_in_commands():
    address = server_address(["--model-path /m", "--host 10.2.3.4", "--port 8080"], [])
    assert address.applied("Verify: `curl http://127.0.0.1:30000/health` prints 200.") == (
        "Verify: `curl http://10.2.3.4:8080/health` prints 200.")
    assert address.applied("check\n$ curl -s localhost:30000/v1/models") == (
        "check\n$ curl -s 10.2.3.4:8080/v1/models")


def test_a_wildcard_host_keeps_loopback_and_default_port_changes_nothing():
    assert server_address(["--host 0.0.0.0", "--port 8000"], []).applied(
        "`curl http://127.0.0.1:30000/health`") == "`curl http://127.0.0.1:8000/health`"
    assert not server_address(["--host 0.0.0.0"], [])
    assert not server_address(["--port 30000"], [])


def test_a_paste_with_several_servers_keeps_the_commands_as_written():
    lines = ["python -m sglang.launch_server --model-path m --disaggregation-mode prefill --port 30001",
             "python -m sglang.launch_server --model-path m --disaggregation-mode decode --port 30002"]
    assert not server_address([], lines)


def test_uvicorn_start_line_and_server_args_dump_give_the_port():
    assert server_address([], ["INFO:     Uvicorn running on http://0.0.0.0:9316 (Press CTRL+C to quit)"]).port == "9316"
    assert server_address([], ["server_args=ServerArgs(model_path='m', host='127.0.0.1', port=18089, tp_size=4)"]
                          ).port == "18089"


def test_docker_published_port_changes_on_both_sides():
    address = server_address(["--port 8000"], [])
    assert address.applied("run\n$ docker run -p 30000:30000 img") == "run\n$ docker run -p 8000:8000 img"
    assert address.applied("run\n$ python3 -m sglang.launch_server --port 30000") == (
        "run\n$ python3 -m sglang.launch_server --port 8000")


# an illegal memory access raised at `.tolist()` in the scheduler after a decode batch
IMA_AT_TOLIST = """\
[2025-07-28 10:12:01 TP0] Decode batch. #running-req: 12, #token: 20480, token usage: 0.12, cuda graph: True, gen throughput (token/s): 812.33, #queue-req: 0
[2025-07-28 10:12:02 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2569, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 760, in event_loop_overlap
    self.process_batch_result(tmp_batch, tmp_result)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 1744, in process_batch_result
    self.process_batch_result_decode(batch, result, launch_done)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler_output_processor_mixin.py", line 227, in process_batch_result_decode
    next_token_ids = next_token_ids.tolist()
RuntimeError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
"""


def _where(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(("Where it arises", "出错位置")))


def test_illegal_memory_access_at_a_sync_names_the_batch_whose_kernel_faulted(assistant):
    answer = assistant.answer(IMA_AT_TOLIST)
    where = _where(render_text(answer))
    assert "process_batch_result_decode()" in where
    assert "`next_token_ids = next_token_ids.tolist()` waits for the GPU" in where
    assert "decode batch" in where and "CUDA_LAUNCH_BLOCKING=1" in where
    assert answer.to_json()["fault_note"] == answer.fault_note


def test_pytorch_hint_is_not_a_blocking_run_but_the_users_flag_is(assistant):
    assert "was set" not in assistant.answer(IMA_AT_TOLIST).fault_note
    blocking = "CUDA_LAUNCH_BLOCKING=1 python3 -m sglang.launch_server --model-path m\n" + IMA_AT_TOLIST
    assert assistant.answer(blocking).fault_note.startswith("CUDA_LAUNCH_BLOCKING=1 was set")


def test_illegal_memory_access_in_a_kernel_call_says_it_may_be_an_earlier_kernels(assistant):
    paste = IMA_AT_TOLIST.replace("    next_token_ids = next_token_ids.tolist()\n",
                                  "    next_token_ids = next_token_ids.tolist()\n"
                                  '  File "/usr/local/lib/python3.10/dist-packages/flashinfer/decode.py", line 1150, in run\n'
                                  "    self._cached_module.run(\n")
    note = assistant.answer(paste).fault_note
    assert "may be an earlier kernel's" in note and "decode batch" in note


def test_other_errors_get_no_fault_note(assistant):
    assert assistant.answer(PORT_8000_TAKEN).fault_note is None


def test_chinese_reader_gets_the_fault_note_in_chinese(assistant):
    answer = assistant.answer("服务跑了一会儿就崩了，日志如下：\n" + IMA_AT_TOLIST)
    assert "在等待 GPU" in _where(render_text(answer))


# a device-side assert raised in torch's `Stream.synchronize`: the program's call that waited is named
ASSERT_IN_TORCH_SYNC = """\
  File "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker_overlap_thread.py", line 196, in forward_batch_generation
    self.scheduler_stream.synchronize()
  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/streams.py", line 100, in synchronize
    super().synchronize()
RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""


def test_a_fault_noticed_in_torchs_synchronize_names_the_callers_wait(assistant):
    note = assistant.answer(ASSERT_IN_TORCH_SYNC).fault_note
    assert "`self.scheduler_stream.synchronize()` waits for the GPU" in note
    assert "super()" not in note


# the user's caption over a log that has no error line of its own
CAPTION_OVER_INFO_LOG = """\
Two nodes, the prefill worker never gets an answer from the decode worker.
on node2, can see the below error:
2025-04-24T07:42:05.876Z  INFO watcher._start: service started
2025-04-24T07:42:11.770Z  INFO serve.worker: Registering component PrefillWorker
"""


def test_the_users_caption_is_not_shown_as_the_root_error(assistant):
    answer = assistant.answer(CAPTION_OVER_INFO_LOG)
    assert answer.outcome != "fix"
    assert answer.primary_error is None
    assert "can see the below error" not in render_text(answer).split("Collect or try next")[0].split("\n", 1)[1]


def test_a_real_exception_line_ending_with_a_colon_is_still_the_root_error():
    from assistant.answer import CAPTION_RE
    assert not CAPTION_RE.search("RuntimeError: Failed with the following error:")
    assert not CAPTION_RE.search("Exception in thread Thread-1:")
    assert CAPTION_RE.search("报错如下：")


# Xinference: xoscar re-raises the worker's error; its version is not what failed
XOSCAR_RELAY = """\
2026-03-04 16:08:49,905 xinference.core.worker 454551 ERROR    Leave launch_builtin_model, error: [address=0.0.0.0:33449, pid=456725] Engine core initialization failed. See root cause above.
Traceback (most recent call last):
  File "/opt/x/lib/python3.12/site-packages/xinference/core/worker.py", line 1595, in launch_builtin_model
    await model_ref.load()
  File "/opt/x/lib/python3.12/site-packages/xoscar/backends/context.py", line 262, in send
    return self._process_result_message(result)
  File "/opt/x/lib/python3.12/site-packages/xoscar/backends/context.py", line 111, in _process_result_message
    raise message.as_instanceof_cause()
"""


def test_an_actor_frameworks_relay_frame_sends_the_user_to_the_workers_log(assistant):
    steps = "\n".join(assistant.answer(XOSCAR_RELAY).next_steps)
    assert "only passes on an error raised in another process" in steps
    assert "pip show xoscar" not in steps


# an HTTP 500 whose traceback the user cut while it was still in uvicorn's layers
ASGI_CUT = """\
[2025-06-11 06:19:30] INFO:     172.20.0.1:40106 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error
[2025-06-11 06:19:30] ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "/root/anaconda3/envs/sglang/lib/python3.12/site-packages/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi
    result = await app(  # type: ignore[func-returns-value]
  File "/root/anaconda3/envs/sglang/lib/python3.12/site-packages/uvicorn/middleware/proxy_headers.py", line 60, in __call__
    return await self.app(scope, receive, send)
"""


def test_an_http_servers_layers_are_not_where_a_request_failed(assistant):
    answer = assistant.answer(ASGI_CUT)
    assert answer.failing_module is None
    assert answer.origin is None or answer.origin.package != "uvicorn"
    assert "uvicorn" not in render_text(answer).split("Collect or try next")[0].split("\n", 2)[2]


def test_a_cut_traceback_under_an_announcing_line_asks_for_its_end(assistant):
    steps = assistant.answer(ASGI_CUT).next_steps
    assert steps[0].startswith("The end of the traceback")


def test_a_router_in_the_paste_keeps_the_commands_as_written():
    lines = ["python -m sglang_router.launch_router --worker-urls http://127.0.0.1:30000 --port 8000"]
    assert not server_address([], lines)


def test_an_actor_frameworks_relay_frame_is_not_where_the_error_comes_from(assistant):
    origin = assistant.answer(XOSCAR_RELAY).origin
    assert origin is None or origin.package != "xoscar"
