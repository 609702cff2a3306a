"""Answers for NCCL init failing because NCCL_NET names a network whose plugin did not load
(round 48, h4): the warning `Error: network gIB not found.` gets the entry's fix, and NCCL's routine
`NET/Plugin: No plugin found` INFO lines alone (printed on every host without an external plugin)
do not."""

from __future__ import annotations

ENTRY = "nccl-net-network-not-found-plugin-not-loaded"

# a GKE A3 Ultra pod: the gIB plugin failed to load, NCCL_NET=gIB then names no network
GIB_NOT_FOUND = (
    "node-0:565:565 [7] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)\n"
    "node-0:565:565 [7] NCCL INFO NET/Plugin: Plugin load returned 2 : /lib/x86_64-linux-gnu/libc.so.6: "
    "version `GLIBC_2.32' not found (required by /usr/local/nvidia/lib64/libnccl-net.so) : when loading libnccl-net.so\n"
    "node-0:565:565 [7] NCCL INFO NET/Plugin: Using internal network plugin.\n"
    "node-0:558:558 [2] net.cc:579 NCCL WARN Error: network gIB not found.\n"
    "node-0:558:558 [2] NCCL INFO init.cc:321 -> 5\n"
    "[2025-04-12 09:01:07 DP0 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/distributed/device_communicators/pynccl.py", line 108, in __init__\n'
    "    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(\n"
    "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n")

# NCCL_NET=IB in a container without an RDMA device
IB_NOT_FOUND = (
    "host:101:101 [0] NCCL INFO NET/IB : No device found.\n"
    "host:101:101 [0] net.cc:613 NCCL WARN Error: network IB not found.\n"
    "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n")

# the same INFO lines on a healthy host that then fails for another reason
PLUGIN_INFO_ONLY = (
    "node17-2:36748:36748 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)\n"
    "node17-2:36748:36748 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open "
    "shared object file: No such file or directory : when loading libnccl-net.so\n"
    "node17-2:36748:36748 [0] NCCL INFO NET/Plugin: Using internal network plugin.\n"
    "node17-2:36748:36748 [0] NCCL INFO Using network Socket\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 350, in NCCL_CHECK\n'
    '    raise RuntimeError(f"NCCL error: {error_str}")\n'
    "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n")


def test_gib_network_not_found_gets_the_plugin_fix(assistant):
    answer = assistant.answer(GIB_NOT_FOUND)
    assert answer.outcome == "fix" and answer.matches[0].id == ENTRY
    fix = "\n".join(answer.fix)
    # the user is told to read why the plugin failed and either load it or drop NCCL_NET
    assert "NET/Plugin" in fix and "unset NCCL_NET" in fix
    assert any("network gIB not found" in line for line in answer.matches[0].evidence)


def test_ib_network_not_found_is_the_same_class(assistant):
    answer = assistant.answer(IB_NOT_FOUND)
    assert answer.matches[0].id == ENTRY and answer.outcome == "fix"


def test_routine_no_plugin_found_lines_are_not_this_failure(assistant):
    answer = assistant.answer(PLUGIN_INFO_ONLY)
    assert not (answer.outcome == "fix" and answer.matches and answer.matches[0].id == ENTRY)
