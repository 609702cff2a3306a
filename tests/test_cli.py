"""`ask` as a user runs it: arguments, stdin, --log, --json, exit codes, bad input."""

import json

import pytest

from tests.conftest import REPO, run_ask

# The error messages of the three seed documents, as operators paste them.
SEED_TRACES = {
    "router-worker-startup-timeout": "Router 显示 Timeout 600s waiting for workers [http://10.202.5.87:30000] to become healthy",
    "musa-mtgpu-conf-missing": "decode节点启动报错\nmusa failed with an illegal memory access was encountered\n"
        "Fatal Python error: Segmentation fault",
    "triton-inductor-attrsdescriptor-mismatch": "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "TypeError: AttrsDescriptor.__init__() got an unexpected keyword argument 'divisible_by_16'\n"
        "[2026-05-27 18:34:22] Scheduler or DataParallelController 1880936 terminated with -3",
    "deepep-ibgda-init-failed": "decode 使用 --deepep-mode low_latency 报错\ninit failed for transport: IBGDA",
    "musa-mccl-socket-ifname": "MCCL WARN Bootstrap: no socket interface found\nTransport NetSocket: connection failed",
    "musa-mtshmem-host-hash": "服务日志显示 mtshmem failed to open shared memory slab，导致后面在执行到deep ep的时候dispatch报错",
    "musa-gemv-autotune-privileged": "MUSA dense GEMV autotune profiler returned no GPU kernel time",
    "dp-attention-long-context-oom": 'File "sglang/srt/models/deepseek_v2.py", line 1008, in _chunked_prefix_attn_mha\n'
        "k = torch.empty(...)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.63 GiB. GPU 2 has a "
        "total capacity of 79.11 GiB of which 2.61 GiB is free.\n--dp 16 --enable-dp-attention",
    "flashinfer-jit-missing-cuda-fp8-h": "RuntimeError: Error building extension 'batch_decode_...':\n"
        "/flashinfer/data/include/flashinfer/utils.cuh:21:10: fatal error: cuda_fp8.h: No such file or directory",
    "nccl-segfault-deepseek-multinode": "Caught signal 11 (Segmentation fault: address not mapped to object at "
        "address 0x3)\nncclMemoryPoolAlloc<ncclProxyOp>() (utils.h:280)\n"
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer",
    "pd-mismatched-tp-non-mla": "[TP0] Prefill transfer failed for request rank=0 req.rid='xxx' with exception "
        "KVTransferError: Decode instance could be dead, remote mooncake session 172.17.0.2:16372 is not alive\n"
        "[Decode] Decode transfer failed for request rank=0 with exception KVTransferError: Failed to get kvcache "
        "from prefill instance, it might be dead\nPrefill TP=2, Decode TP=1, Qwen3-32B",
    "tp-memory-capacity-unbalanced": "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.",
    "port-already-in-use": "python3 -m sglang.launch_server --model-path /models/Qwen2-7B-Instruct --port 30000\n"
        "OSError: [Errno 98] Address already in use",
}


@pytest.mark.parametrize("expected", sorted(SEED_TRACES))
def test_seed_error_messages_name_the_right_entry_first(kb_dir, expected):
    result = run_ask("--json", SEED_TRACES[expected], kb=kb_dir)
    assert result.returncode == 0, result.stderr.decode()
    out = json.loads(result.stdout)
    assert out["matches"][0]["id"] == expected
    assert out["abstained"] is False
    assert out["mode"] == "extractive"
    assert set(out["answer"]) >= {"diagnosis", "fix", "warnings", "citations"}
    assert out["answer"]["fix"] and out["answer"]["citations"]
    assert set(out["detected"]) >= {"sglang_version", "torch_version", "cuda_version", "gpu", "flags"}
    assert f"kb:{expected}" in out["answer"]["citations"]


def test_a_consequence_line_is_a_lead_whose_steps_find_the_real_error(kb_dir):
    # `terminated with -3` says a child failed, not why: exit 3, the entry named, its steps next
    result = run_ask("--json", "[2026-05-27 18:34:22] Scheduler or DataParallelController 1880936 terminated with -3",
                     kb=kb_dir)
    assert result.returncode == 3, result.stderr.decode()
    out = json.loads(result.stdout)
    assert out["outcome"] == "lead" and out["abstained"] is True
    assert out["matches"][0]["id"] == "scheduler-sigquit-terminated"
    assert out["answer"]["fix"] == [] and out["next_steps"][0].startswith("Find the first exception")


def test_a_failed_health_check_is_a_lead_whose_steps_find_what_the_scheduler_was_doing(kb_dir):
    # the probe got nothing back through the scheduler: hung, crashed or busy, which the line does
    # not say; the seed documents' trace gets the entry named and its steps as next steps, no fix
    trace = ("[2025-10-15 10:47:27] Health check failed. Server couldn't get a response from detokenizer for "
             "last 20 seconds. tic start time: 10:47:07. last_heartbeat time: 09:44:42")
    result = run_ask("--json", trace, kb=kb_dir)
    assert result.returncode == 3, result.stderr.decode()
    out = json.loads(result.stdout)
    assert out["outcome"] == "lead" and out["matches"][0]["id"] == "detokenizer-health-check-failed"
    assert out["answer"]["fix"] == [] and out["next_steps"][0].startswith("Read the scheduler log before")


NODE1_404 = """\
2-node deployment of Qwen3-235B (tp 16). node 0 works. But my load balancer also sends to node 1 and those get 404:
node1$ python3 -m sglang.launch_server --model-path /mnt/Qwen3-235B-A22B --tp 16 --dist-init-addr 10.0.0.1:5000 \
--nnodes 2 --node-rank 1 --host 0.0.0.0 --port 30000
[2025-11-06 09:01:12] Dummy health check server started in background thread at 0.0.0.0:30000
$ curl -s http://10.0.0.2:30000/v1/models
{"detail":"Not Found"}
"""


def test_a_leads_entry_is_read_whole_with_ask_kb_show(kb_dir):
    lead = json.loads(run_ask("--json", NODE1_404, kb=kb_dir).stdout)
    assert lead["outcome"] == "lead" and lead["answer"]["fix"] == []
    entry = lead["matches"][0]["id"]
    assert any(f"`ask kb show {entry}` prints its steps" in step for step in lead["next_steps"])
    shown = run_ask("kb", "show", f"kb:{entry}", kb=kb_dir)
    assert shown.returncode == 0, shown.stderr.decode()
    text = shown.stdout.decode()
    assert text.startswith(lead["matches"][0]["title"]) and "Steps:\n  1. " in text and "Sources:" in text
    chinese = run_ask("kb", "show", entry, "--lang", "zh", kb=kb_dir).stdout.decode()
    assert "步骤:" in chinese and "原因:" in chinese
    typo = run_ask("kb", "show", entry[:-3], kb=kb_dir)
    assert typo.returncode == 2 and f"did you mean {entry}".encode() in typo.stderr
    assert len(typo.stderr.decode().strip().splitlines()) == 1


def test_stdin_and_log_file_and_plain_text(kb_dir, tmp_path):
    sample = REPO / "kb" / "samples" / "flashinfer-cuda-fp8.log"
    piped = run_ask(stdin=sample.read_bytes(), kb=kb_dir)
    assert piped.returncode == 0, piped.stderr.decode()
    text = piped.stdout.decode()
    assert "flashinfer-jit-missing-cuda-fp8-h" in text
    assert "Matched in your log:" in text and "cuda_fp8.h" in text
    assert "SGLang 0.4.5" in text and "CUDA 11.7" in text and "--tp 2" in text
    assert "Wrong advice" in text and "SGLANG_DISABLE_FP8" in text
    from_file = run_ask("--log", str(sample), "--json", kb=kb_dir)
    out = json.loads(from_file.stdout)
    assert out["matches"][0]["id"] == "flashinfer-jit-missing-cuda-fp8-h"
    assert out["detected"]["sglang_version"] == "0.4.5" and out["detected"]["cuda_version"] == "11.7"
    assert "cuda_fp8.h" in " ".join(out["matches"][0]["evidence"])


def test_a_seed_document_among_the_sources_is_named_by_its_title(kb_dir):
    # the seed documents the KB was written from are not shipped: a file name alone tells nothing
    result = run_ask("ValueError: Either text, input_ids or input_embeds should be provided.", kb=kb_dir)
    text = result.stdout.decode()
    assert result.returncode == 0 and "Sources:" in text
    seeds = [line for line in text.splitlines() if "seed" in line and "004_8dc5b6d011b9a055" in line]
    assert seeds and all(line.strip().startswith("- seed document 004_8dc5b6d011b9a055.txt: ") for line in seeds)


def test_tokens_and_keys_in_the_paste_are_not_echoed_back(kb_dir):
    # the answer quotes the launch command and the error lines; users paste it into issues
    paste = ("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
             "--api-key sk-sglang-SuperSecret-42 --port 30000\n"
             "OSError: You are trying to access a gated repo. 401 Client Error for url with token "
             "hf_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789\n").encode()
    for args in ((), ("--json",)):
        out = run_ask(*args, stdin=paste, kb=kb_dir)
        text = out.stdout.decode()
        assert text.strip() and "SuperSecret" not in text and "hf_QwErTy" not in text, args
        assert "[redacted]" in text
    assert "--port 30000" in run_ask(stdin=paste, kb=kb_dir).stdout.decode()   # the rest stays as written


def test_version_specific_fix_for_the_users_version(kb_dir):
    old = run_ask("--json", "sglang 0.5.6\nValueError: The memory capacity is unbalanced. Some GPUs may be "
                  "occupied by other processes.", kb=kb_dir)
    new = run_ask("--json", "sglang 0.5.9\nRuntimeError: The memory capacity is unbalanced. Some GPUs may be "
                  "occupied by other processes.", kb=kb_dir)
    old_fix = "\n".join(json.loads(old.stdout)["answer"]["fix"])
    new_fix = "\n".join(json.loads(new.stdout)["answer"]["fix"])
    assert "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK" in old_fix
    assert "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK" not in old_fix
    assert "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=false" in new_fix
    assert "--disable-memory-balance-check" not in old_fix + new_fix


def test_users_own_flag_that_their_version_lacks_is_warned(kb_dir):
    result = run_ask("--json", "sglang==0.5.9\npython3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 "
                     "--tp 16 --enable-ep-moe\nlaunch_server.py: error: unrecognized arguments: --enable-ep-moe",
                     kb=kb_dir)
    out = json.loads(result.stdout)
    assert out["matches"][0]["id"] == "cli-flag-unrecognized"
    assert any("--enable-ep-moe" in w and "0.5.9" in w for w in out["answer"]["warnings"])
    assert not any("--tp " in w for w in out["answer"]["warnings"])  # --tp is a valid abbreviation


def test_no_match_abstains_with_what_to_collect(kb_dir):
    result = run_ask("--json", "Exception in thread \"main\" java.lang.NullPointerException\n"
                     "    at com.acme.billing.InvoiceService.total(InvoiceService.java:42)", kb=kb_dir)
    assert result.returncode == 3
    out = json.loads(result.stdout)
    assert out["abstained"] is True
    assert out["answer"]["fix"] == []
    assert any("sglang.check_env" in s for s in out["next_steps"])
    plain = run_ask("Exception in thread \"main\" java.lang.NullPointerException", kb=kb_dir)
    assert plain.returncode == 3
    assert plain.stdout.startswith(b"UNKNOWN: not a known problem\n") and b"check_env" in plain.stdout


@pytest.mark.parametrize("args, stdin", [((), b""), (("   ",), None), ((), b"\n\n  \n")])
def test_empty_input_is_a_usage_error(kb_dir, args, stdin):
    result = run_ask(*args, stdin=stdin if stdin is not None else b"", kb=kb_dir)
    assert result.returncode == 2
    assert b"empty" in result.stderr or b"no input" in result.stderr
    assert b"Traceback" not in result.stderr


def test_binary_and_invalid_utf8_input(kb_dir, tmp_path):
    binary = run_ask(stdin=bytes(range(256)) * 64, kb=kb_dir)
    assert binary.returncode == 2 and b"binary" in binary.stderr and b"Traceback" not in binary.stderr
    latin1 = "RuntimeError: CUDART error: peer access is not supported between these two devices \xe9\xe8".encode("latin-1")
    result = run_ask("--json", stdin=latin1, kb=kb_dir)
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout)["matches"][0]["id"] == "custom-allreduce-p2p-unsupported"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_utf16_log_as_windows_powershell_writes_it_gets_the_same_fix(kb_dir, tmp_path, encoding):
    # PowerShell 5's `docker logs sglang > server.log` writes UTF-16LE with a BOM (`utf-16` here);
    # some tools write it without
    log = tmp_path / "server.log"
    log.write_bytes((REPO / "kb" / "samples" / "flashinfer-cuda-fp8.log").read_text().encode(encoding))
    result = run_ask("--log", str(log), "--json", kb=kb_dir)
    assert result.returncode == 0, result.stderr.decode()
    out = json.loads(result.stdout)
    assert out["matches"][0]["id"] == "flashinfer-jit-missing-cuda-fp8-h"
    assert out["detected"]["sglang_version"] == "0.4.5"


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_rotated_compressed_log_is_read_as_it_inflates(kb_dir, tmp_path, suffix):
    import bz2
    import gzip
    import lzma

    compress = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix]
    sample = (REPO / "kb" / "samples" / "flashinfer-cuda-fp8.log").read_bytes()
    log = tmp_path / f"server.log.1{suffix}"
    log.write_bytes(compress(sample))
    result = run_ask("--log", str(log), "--json", kb=kb_dir)
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout)["matches"][0]["id"] == "flashinfer-jit-missing-cuda-fp8-h"
    cut = tmp_path / f"cut.log{suffix}"
    cut.write_bytes(compress(sample)[:200])   # copied while still being written
    corrupt = bytearray(compress(sample * 20))
    for i in range(40, len(corrupt) - 40, 7):
        corrupt[i] ^= 0x55
    bad = tmp_path / f"bad.log{suffix}"
    bad.write_bytes(bytes(corrupt))
    for broken_log in (cut, bad):
        broken = run_ask("--log", str(broken_log), kb=kb_dir)
        assert broken.returncode == 2 and b"the compressed log cannot be read" in broken.stderr


def test_a_reader_that_stops_early_gets_no_error_message(kb_dir):
    # `ask ... | head -1`: the pipe closes before the answer is written
    import os
    import subprocess
    import sys

    env = {**os.environ, "ASK_KB_DIR": str(kb_dir), "ASK_NO_LLM": "1"}
    env.pop("ASK_INDEX_DIR", None)
    process = subprocess.Popen([sys.executable, "-m", "ui.cli", "--log", "kb/samples/flashinfer-cuda-fp8.log"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    process.stdout.close()
    assert process.wait(timeout=120) == 141
    assert process.stderr.read() == b""


def test_missing_log_file_is_a_usage_error(kb_dir, tmp_path):
    result = run_ask("--log", str(tmp_path / "nope.log"), kb=kb_dir)
    assert result.returncode == 2 and b"no such file" in result.stderr


@pytest.mark.parametrize("args, env, says", [
    (("--log", "FOLDER"), {}, b"is a folder"),
    (("--endpoint", "notaurl", "port in use"), {}, b"not an http(s) URL"),
    (("--top-k", "0", "port in use"), {}, b"show at least 1 match"),
    (("port in use",), {"ASK_TOP_K": "abc"}, b"ASK_TOP_K='abc' is not a whole number"),
    (("port in use",), {"ASK_TIMEOUT": "soon"}, b"ASK_TIMEOUT='soon' is not a number"),
])
def test_a_bad_option_or_setting_is_a_one_line_usage_error(kb_dir, tmp_path, args, env, says):
    args = tuple(str(tmp_path) if a == "FOLDER" else a for a in args)
    result = run_ask(*args, kb=kb_dir, env=env)
    assert result.returncode == 2 and says in result.stderr and b"unexpected error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_50mb_log_is_triaged_with_bounded_memory(kb_dir, tmp_path):
    log = tmp_path / "huge.log"
    filler = "".join(f"[2025-06-01 12:{i % 60:02d}:{i % 60:02d} TP{i % 8}] Decode batch. #running-req: {i % 97}, "
                     f"#token: {i * 13 % 99991}, token usage: 0.{i % 97:02d}, gen throughput (token/s): {i % 500}.1\n"
                     for i in range(4000))
    with open(log, "w") as out:
        while out.tell() < 25_000_000:
            out.write(filler)
        out.write("[2025-06-01 13:00:00 TP3] RuntimeError: CUDART error: peer access is not supported between these two devices\n")
        while out.tell() < 50_000_000:
            out.write(filler)
    script = ("import resource, subprocess, sys, json; "
              "p = subprocess.run([sys.executable, '-m', 'ui.cli', '--json', '--log', sys.argv[1]], capture_output=True); "
              "print(json.dumps({'rc': p.returncode, 'out': p.stdout.decode(), 'err': p.stderr.decode(), "
              "'maxrss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))")
    import os
    import subprocess
    import sys

    env = dict(os.environ, ASK_KB_DIR=str(kb_dir), ASK_NO_LLM="1")
    probe = subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True, env=env, cwd=REPO, timeout=600)
    report = json.loads(probe.stdout)
    assert report["rc"] == 0, report["err"]
    out = json.loads(report["out"])
    assert out["matches"][0]["id"] == "custom-allreduce-p2p-unsupported"
    assert report["maxrss_kb"] < 700_000  # the 50 MB log is streamed, never held whole
