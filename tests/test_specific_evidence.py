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
