"""A generator of realistic SGLang GitHub issues, in the REST API's shape, for the scale benchmark
and the loopback fake of the API used by the tests.

Issues follow SGLang's bug-report form (checklist, description, reproduction, traceback,
`python3 -m sglang.check_env` output) with tracebacks from ~25 failure families, versions, labels,
maintainer answers with fix PRs, "+1" noise, stale-bot comments, and a few 300-comment threads.
Everything is seeded: the same (n, seed) gives the same corpus.

    python -m ingest.github_synth --n 1000 --out issues.jsonl     # an export `ask ingest github --from-export` reads
"""

from __future__ import annotations

import argparse
import json
import random
import re
import zlib
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

REPO = "sgl-project/sglang"
MAINTAINERS = ["kv-cache-maint", "sched-lead", "kernel-owner", "amd-support", "router-dev", "quant-team"]
USERS = [f"user{i:04d}" for i in range(1, 1500)]
BOTS = [("github-actions[bot]", "Bot"), ("stale[bot]", "Bot")]
STALE_MARK = ("This issue has been automatically marked as stale because it has not had recent activity "
              "for 60 days. It will be closed if no further activity occurs. Thank you for your contributions.")
STALE_CLOSE = "This issue was closed because it has been inactive for 14 days since being marked as stale."
VERSIONS = ["0.3.6.post3", "0.4.0.post1", "0.4.1.post7", "0.4.3.post2", "0.4.6.post1", "0.4.7", "0.4.8",
            "0.4.9.post2", "0.4.10.post2", "0.5.0rc0", "0.5.1.post3", "0.5.2", "0.5.3", "0.5.4.post1", "0.5.5"]
TORCH = ["2.4.0+cu121", "2.5.1+cu124", "2.6.0+cu124", "2.7.1+cu126", "2.8.0+cu128", "2.9.1+cu129"]
GPUS = ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA H20", "NVIDIA L40S", "NVIDIA GeForce RTX 4090",
        "NVIDIA H200", "NVIDIA B200", "AMD Instinct MI300X", "NVIDIA A10G"]
MODELS = ["deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1", "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen3-235B-A22B",
          "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1",
          "Qwen/Qwen2.5-VL-7B-Instruct", "google/gemma-3-27b-it", "moonshotai/Kimi-K2-Instruct", "zai-org/GLM-4.5"]
ARCHS = ["Qwen3NextForCausalLM", "MiniMaxM1ForCausalLM", "Ernie4_5_MoeForCausalLM", "HunYuanMoEV1ForCausalLM",
         "Step3VLForConditionalGeneration", "SeedOssForCausalLM", "BailingMoeV2ForCausalLM"]
FLAGS = ["--enable-dp-attention", "--disable-radix-cache", "--speculative-algorithm EAGLE", "--enable-torch-compile",
         "--chunked-prefill-size 8192", "--mem-fraction-static 0.9", "--kv-cache-dtype fp8_e5m2",
         "--attention-backend triton", "--cuda-graph-max-bs 256", "--quantization fp8"]
SRT = "/sgl-workspace/sglang/python/sglang/srt"

# family: title templates, the error (lines of a traceback tail), labels, a maintainer answer
FAMILIES = [
    dict(key="kv-oom", titles=["[Bug] Not enough memory when launching {model} with tp {tp}",
                               "RuntimeError: Not enough memory on {gpu}"],
         frames=[("managers/scheduler.py", "__init__"), ("model_executor/model_runner.py", "init_memory_pool")],
         error="RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
         labels=["bug"], answer="Increase --mem-fraction-static (e.g. 0.88) or lower --max-running-requests; "
                                "the weights leave too little room for the KV cache."),
    dict(key="cuda-oom", titles=["[Bug] CUDA out of memory during prefill with {model}", "OOM under load on {gpu}"],
         frames=[("managers/scheduler.py", "run_batch"), ("model_executor/model_runner.py", "forward_extend")],
         error="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {gib} GiB. GPU {g} has a total "
               "capacity of 79.10 GiB of which {mib} MiB is free.",
         labels=["bug"], answer="Lower --chunked-prefill-size and --mem-fraction-static; activations of long "
                                "prefills need headroom outside the KV cache pool."),
    dict(key="cuda-graph", titles=["Capture cuda graph failed with {model}", "[Bug] cuda graph capture OOM with torch compile"],
         frames=[("model_executor/model_runner.py", "init_cuda_graphs"), ("model_executor/cuda_graph_runner.py", "capture")],
         error="Exception: Capture cuda graph failed: CUDA error: out of memory",
         labels=["bug"], answer="Reduce --cuda-graph-max-bs or --mem-fraction-static, or run with --disable-cuda-graph to confirm."),
    dict(key="nccl-timeout", titles=["NCCL watchdog timeout on 2 nodes with {model}", "[Bug] multi-node hang then NCCL timeout"],
         frames=[("distributed/parallel_state.py", "all_reduce")],
         error="[rank{g}]:[E ProcessGroupNCCL.cpp:616] [Rank {g}] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600{mib} "
               "milliseconds before timing out.",
         labels=["bug", "multi-node"], answer="Set NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME to the interface that "
                                              "connects the nodes; the default picked a docker bridge."),
    dict(key="libnuma", titles=["sgl_kernel import error: libnuma.so.1 missing", "[Bug] Could not load any common_ops library"],
         frames=[("layers/activation.py", "<module>")],
         error="ImportError: libnuma.so.1: cannot open shared object file: No such file or directory",
         labels=["bug", "installation"], answer="Install libnuma1 (apt-get install -y libnuma1) in the image; "
                                                "the sgl-kernel wheel itself is fine."),
    dict(key="flashinfer-jit", titles=["flashinfer JIT fails: cuda_fp8.h not found", "[Bug] ninja build failed in flashinfer"],
         frames=[("layers/attention/flashinfer_backend.py", "__init__")],
         error="/usr/local/lib/python3.10/dist-packages/flashinfer/data/include/flashinfer/vec_dtypes.cuh:21:10: "
               "fatal error: cuda_fp8.h: No such file or directory",
         labels=["bug"], answer="Install the CUDA toolkit headers matching your torch build and set CUDA_HOME; the "
                                "runtime-only image has no cuda_fp8.h."),
    dict(key="illegal-memory", titles=["CUDA illegal memory access with {model} under high concurrency",
                                       "[Bug] illegal memory access in decode"],
         frames=[("managers/scheduler.py", "event_loop_overlap"), ("layers/attention/flashinfer_backend.py", "forward_decode")],
         error="RuntimeError: CUDA error: an illegal memory access was encountered",
         labels=["bug", "high priority"], answer="This is fixed on main; upgrade, or add --disable-overlap-schedule meanwhile."),
    dict(key="arch", titles=["[Feature] Support {arch}", "Model architectures ['{arch}'] are not supported"],
         frames=[("model_executor/model_runner.py", "load_model"), ("model_loader/utils.py", "get_model_architecture")],
         error="ValueError: Model architectures ['{arch}'] are not supported for now. Supported architectures: "
               "dict_keys(['LlamaForCausalLM', 'Qwen2ForCausalLM'])",
         labels=["new-model"], answer="Support for this architecture landed; upgrade to the latest release."),
    dict(key="unrecognized", titles=["launch_server: unrecognized arguments {flag}", "[Bug] flag {flag} removed?"],
         frames=[],
         error="launch_server.py: error: unrecognized arguments: {flag}",
         labels=["bug"], answer="That flag was renamed in a newer release; check `python3 -m sglang.launch_server --help` "
                                "for your version."),
    dict(key="port", titles=["Address already in use when restarting the server", "[Bug] port 30000 busy"],
         frames=[("entrypoints/http_server.py", "launch_server")],
         error="OSError: [Errno 98] Address already in use",
         labels=["bug"], answer="A previous server process still holds the port: kill it or pass another --port."),
    dict(key="context-length", titles=["Input longer than context length with {model}", "[Bug] 400 on long prompts"],
         frames=[("managers/tokenizer_manager.py", "_validate_one_request")],
         error="ValueError: The input ({tokens} tokens) is longer than the model's context length (32768 tokens).",
         labels=["bug"], answer="Pass --context-length with the model's real window, or truncate the prompt."),
    dict(key="weight-key", titles=["KeyError loading FP8 weights of {model}", "[Bug] missing weight_scale_inv"],
         frames=[("model_executor/model_runner.py", "load_model"), ("models/deepseek_v2.py", "load_weights")],
         error="KeyError: 'model.layers.{layer}.mlp.experts.w13_weight_scale_inv'",
         labels=["bug", "quant"], answer="The checkpoint is block-quantized; pass --quantization fp8 and use a release "
                                         "that maps the scale names."),
    dict(key="triton-smem", titles=["triton OutOfResources shared memory on {gpu}", "[Bug] triton kernel fails on RTX"],
         frames=[("layers/attention/triton_ops/decode_attention.py", "decode_attention_fwd")],
         error="triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: {smem}, Hardware "
               "limit: 101376. Reducing block sizes or `num_stages` may help.",
         labels=["bug"], answer="Consumer GPUs have less shared memory; use --attention-backend flashinfer."),
    dict(key="tokenizer", titles=["Can't load tokenizer for {model}", "[Bug] tokenizer error with local path"],
         frames=[("hf_transformers_utils.py", "get_tokenizer")],
         error="OSError: Can't load tokenizer for '{model}'. If you were trying to load it from "
               "'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
         labels=["bug"], answer="Pass --tokenizer-path or fix the local directory; offline mode needs the tokenizer files."),
    dict(key="detokenizer", titles=["Health check failed: detokenizer not responding", "[Bug] server dies after hours"],
         frames=[],
         error="Health check failed. Server couldn't get a response from detokenizer for last 20 seconds.",
         labels=["bug"], answer="The scheduler died earlier; the first traceback in the log is the real error."),
    dict(key="deepep", titles=["DeepEP init failed with IBGDA on {gpu}", "[Bug] deepep normal mode crash"],
         frames=[("layers/moe/token_dispatcher/deepep.py", "__init__")],
         error="RuntimeError: DeepEP error: failed to initialize NVSHMEM IBGDA transport",
         labels=["bug", "deepseek"], answer="Enable IBGDA in the NVIDIA driver options (NVreg_EnableStreamMemOPs=1) and reboot."),
    dict(key="segfault", titles=["Segfault at startup with {model}", "[Bug] Fatal Python error: Segmentation fault"],
         frames=[],
         error="Fatal Python error: Segmentation fault",
         labels=["bug"], answer="Mixed torch / sgl-kernel builds; reinstall both from the same release."),
    dict(key="hip", titles=["HIP error invalid device function on {gpu}", "[Bug] ROCm aiter kernel failure"],
         frames=[("layers/attention/aiter_backend.py", "forward_extend")],
         error="RuntimeError: HIP error: invalid device function",
         labels=["bug", "amd"], answer="The aiter build does not include this gfx target; use the ROCm image for your GPU."),
    dict(key="nan-probs", titles=["probability tensor contains nan with {model}", "[Bug] sampling crash with temperature 0"],
         frames=[("layers/sampler.py", "forward")],
         error="RuntimeError: probability tensor contains either `inf`, `nan` or element < 0",
         labels=["bug"], answer="Fixed by the sampler change; upgrade flashinfer and sglang together."),
    dict(key="lora", titles=["LoRA target modules not found for {model}", "[Bug] lora adapter fails to load"],
         frames=[("lora/lora_manager.py", "init_lora_modules")],
         error="ValueError: Target modules {{'gate_proj', 'up_proj'}} not found in the base model.",
         labels=["bug", "lora"], answer="Pass --lora-target-modules to cover every module your adapters use."),
    dict(key="router", titles=["sglang-router cannot connect to worker", "[Bug] router health check fails"],
         frames=[],
         error="ERROR sglang_router: Failed to connect to worker http://10.0.{g}.{layer}:30000: connection refused",
         labels=["bug", "router"], answer="Start the workers before the router or use --worker-startup-timeout-secs."),
    dict(key="fp8-block", titles=["fp8 block quant with tp {tp} fails", "[Bug] not divisible by weight quantization block_n"],
         frames=[("layers/quantization/fp8.py", "create_weights")],
         error="ValueError: The output_size of gate's and up's weight = 192 is not divisible by weight quantization "
               "block_n = 128.",
         labels=["bug", "quant"], answer="Use a tensor parallel size that divides the intermediate size by 128, e.g. tp 4 or enable EP."),
    dict(key="perf", titles=["[Performance] {model} throughput lower than expected on {gpu}",
                             "Slow decode with {model} at batch size 1"],
         frames=None, error=None, labels=["performance"],
         answer="Try --enable-torch-compile and check that cuda graphs are enabled; share a bench_serving result."),
    dict(key="feature", titles=["[Feature] Support structured outputs with {model}", "[Feature] Expose {flag} in the router"],
         frames=None, error=None, labels=["feature"], answer="Thanks, this is on the roadmap; contributions welcome."),
    dict(key="zh-oom", titles=["[Bug] 启动 {model} 时显存不足", "部署 {model} 报错 Not enough memory"],
         frames=[("managers/scheduler.py", "__init__"), ("model_executor/model_runner.py", "init_memory_pool")],
         error="RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
         labels=["bug"], answer="把 --mem-fraction-static 调到 0.85 左右，或减小 --max-running-requests。"),
]

USER_REPLIES = ["Same error here on {gpu} with sglang {version}.", "+1", "any update?",
                "I see this too, with {model}. Logs below.\n\n```\n{error}\n```",
                "Downgrading to {version} did not help.", "Is there a workaround?", "same",
                "We hit this in production with tp {tp}; restarting helps for a few hours."]


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _uid(login: str) -> int:
    return zlib.crc32(login.encode()) % 100_000_000


def rest_user(login: str, kind: str = "User", uid: int = 1) -> dict:
    return {"login": login, "id": uid, "node_id": f"MDQ6VXNlcj{uid}", "type": kind, "site_admin": False,
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "html_url": f"https://github.com/{login.replace('[bot]', '')}",
            "url": f"https://api.github.com/users/{login}"}


def rest_issue(number: int, title: str, body: str, *, repo: str = REPO, state: str = "open",
               state_reason: str | None = None, labels=(), author: str = "user0001", association: str = "NONE",
               created: str, updated: str, closed: str | None = None, comments: int = 0,
               pull_request: bool = False) -> dict:
    """An issue object as `GET /repos/{owner}/{repo}/issues` returns it."""
    api = f"https://api.github.com/repos/{repo}/issues/{number}"
    issue = {
        "url": api, "repository_url": f"https://api.github.com/repos/{repo}",
        "labels_url": api + "/labels{/name}", "comments_url": api + "/comments", "events_url": api + "/events",
        "html_url": f"https://github.com/{repo}/{'pull' if pull_request else 'issues'}/{number}",
        "id": 2_000_000_000 + number, "node_id": f"I_kwDOK{number:08d}", "number": number, "title": title,
        "user": rest_user(author, uid=_uid(author)),
        "labels": [{"id": 5_000_000 + i, "node_id": f"LA_{name}", "name": name, "color": "d73a4a",
                    "default": name == "bug", "description": ""} for i, name in enumerate(labels)],
        "state": state, "locked": False, "assignee": None, "assignees": [], "milestone": None,
        "comments": comments, "created_at": created, "updated_at": updated, "closed_at": closed,
        "author_association": association, "active_lock_reason": None, "body": body,
        "reactions": {"url": api + "/reactions", "total_count": 0, "+1": 0, "-1": 0},
        "timeline_url": api + "/timeline", "performed_via_github_app": None, "state_reason": state_reason,
    }
    if pull_request:
        issue["pull_request"] = {"url": f"https://api.github.com/repos/{repo}/pulls/{number}",
                                 "html_url": f"https://github.com/{repo}/pull/{number}",
                                 "diff_url": f"https://github.com/{repo}/pull/{number}.diff",
                                 "patch_url": f"https://github.com/{repo}/pull/{number}.patch", "merged_at": None}
        issue.pop("state_reason")
    return issue


def rest_comment(number: int, cid: int, body: str, login: str, *, repo: str = REPO, kind: str = "User",
                 association: str = "NONE", created: str) -> dict:
    """A comment object as `GET /repos/{owner}/{repo}/issues/{n}/comments` returns it."""
    return {"url": f"https://api.github.com/repos/{repo}/issues/comments/{cid}",
            "html_url": f"https://github.com/{repo}/issues/{number}#issuecomment-{cid}",
            "issue_url": f"https://api.github.com/repos/{repo}/issues/{number}", "id": cid,
            "node_id": f"IC_kwDOK{cid}", "user": rest_user(login, kind, uid=_uid(login)),
            "created_at": created, "updated_at": created, "author_association": association, "body": body,
            "reactions": {"total_count": 0}, "performed_via_github_app": None}


def _traceback(rng: random.Random, family: dict, error: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for path, func in family["frames"] or []:
        lines += [f'  File "{SRT}/{path}", line {rng.randint(80, 2400)}, in {func}',
                  f"    {func.lstrip('_')}(self, {rng.choice(['server_args', 'batch', 'forward_batch', 'model_config'])})"]
    if len(lines) == 1:
        return f"[{_ts(datetime(2025, 1, 1) + timedelta(seconds=rng.randint(0, 9_000_000)))} TP0] {error}"
    return "\n".join(lines + [error])


def _env_block(rng: random.Random, version: str, gpu: str) -> str:
    torch = rng.choice(TORCH)
    cuda = f"{torch[-3:-1]}.{torch[-1]}" if "+cu" in torch else "12.4"
    count = rng.choice([1, 2, 4, 8])
    return "\n".join([
        "Python: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0]", "CUDA available: True",
        f"GPU 0{',' + str(count - 1) if count > 1 else ''}: {gpu}", "GPU 0 Compute Capability: 9.0",
        "CUDA_HOME: /usr/local/cuda", f"NVCC: Cuda compilation tools, release {cuda}, V{cuda}.131",
        f"CUDA Driver Version: {rng.choice(['535.183.01', '550.90.07', '570.124.06'])}",
        f"PyTorch: {torch}", f"sglang: {version}", f"sgl_kernel: {rng.choice(['0.1.4', '0.2.7', '0.3.9.post2'])}",
        f"flashinfer_python: {rng.choice(['0.2.0.post2', '0.2.5', '0.2.11.post3', '0.4.1'])}",
        "triton: 3.1.0", "transformers: 4.51.1", "NVIDIA Topology:", "\tGPU0\tGPU1\tCPU Affinity",
        "GPU0\t X \tNV18\t0-47", "ulimit soft: 1048576"])


def _fill(template: str, ctx: dict) -> str:
    return template.format(**ctx)


def generate(n: int, seed: int = 0, repo: str = REPO, start: int = 1, long_thread_every: int = 5000,
             pull_request_every: int = 0) -> Iterator[dict]:
    """n issues as cache records {"number", "updated_at", "issue", "comments"}, oldest first."""
    rng = random.Random(seed)
    t0 = datetime(2024, 1, 2, 8, 0, tzinfo=timezone.utc)
    span = timedelta(days=660)
    long_threads = {start + i for i in range(n // 3, n, long_thread_every)} if n >= 50 else set()
    cid = 1_000_000 * (seed + 1)
    for i in range(n):
        number = start + i
        created = t0 + span * (i / max(n, 1)) + timedelta(minutes=rng.randint(0, 600))
        if pull_request_every and number % pull_request_every == 0 and number not in long_threads:
            title = f"[Fix] {rng.choice(['scheduler', 'router', 'kernel', 'docs'])}: small fix #{number}"
            issue = rest_issue(number, title, "Fixes a bug.", repo=repo, created=_ts(created),
                               updated=_ts(created + timedelta(hours=3)), author=rng.choice(MAINTAINERS),
                               association="MEMBER", pull_request=True)
            yield {"number": number, "updated_at": issue["updated_at"], "issue": issue, "comments": []}
            continue
        family = rng.choice(FAMILIES)
        version, gpu, model = rng.choice(VERSIONS), rng.choice(GPUS), rng.choice(MODELS)
        ctx = dict(model=model, gpu=gpu, version=version, tp=rng.choice([1, 2, 4, 8, 16]), g=rng.randint(0, 7),
                   gib=f"{rng.uniform(0.1, 20):.2f}", mib=rng.randint(10, 900), seq=rng.randint(1, 90000),
                   arch=rng.choice(ARCHS), flag=rng.choice(FLAGS).split()[0], tokens=rng.randint(33000, 200000),
                   layer=rng.randint(0, 60), smem=rng.choice([106496, 131072, 163840]))
        error = _fill(family["error"], ctx) if family["error"] else ""
        ctx["error"] = error
        title = _fill(rng.choice(family["titles"]), ctx)
        launch = f"python3 -m sglang.launch_server --model-path {model} --tp {ctx['tp']} " + \
            " ".join(rng.sample(FLAGS, rng.randint(0, 3)))
        parts = ["### Checklist", "", "- [x] 1. I have searched related issues but cannot get the expected help.",
                 "- [x] 2. The bug has not been fixed in the latest version.", "", "### Describe the bug", ""]
        parts.append(rng.choice([f"When I launch {model} on {gpu} the server crashes.",
                                 f"After upgrading to sglang {version}, startup fails.",
                                 "The server runs for a while under load and then dies.",
                                 f"Running {model} with tp {ctx['tp']} gives the error below."]))
        if error:
            parts += ["", "```", _traceback(rng, family, error), "```"]
        if rng.random() < 0.02:   # someone pastes a whole server log
            parts += ["", "<details><summary>full log</summary>", "", "```"]
            parts += [f"[2025-03-01 10:{k // 60 % 60:02d}:{k % 60:02d} TP0] Decode batch. #running-req: {k % 50}, "
                      f"#token: {k * 37}, token usage: 0.{k % 99:02d}, gen throughput (token/s): {k % 3000}"
                      for k in range(rng.randint(200, 2000))]
            parts += [error or "done", "```", "</details>"]
        parts += ["", "### Reproduction", "", "```bash", launch, "```", "", "### Environment", "", "```",
                  _env_block(rng, version, gpu), "```"]
        body = "\n".join(parts)

        # the discussion
        roll = rng.random()
        count = 300 if number in long_threads else (0 if roll < 0.25 else rng.randint(1, 3) if roll < 0.65
                                                     else rng.randint(4, 10) if roll < 0.9 else rng.randint(11, 40))
        outcome = rng.random()   # closed+answered / stale-closed / open
        closed_answered, stale = outcome < 0.5, 0.5 <= outcome < 0.7 and count < 300   # busy threads do not go stale
        moment = created
        comments = []
        author = rng.choice(USERS)
        answer_at = rng.randint(0, count - 1) if count and closed_answered else -1
        for k in range(count):
            moment += timedelta(minutes=rng.randint(5, 600)) if count > 40 else timedelta(hours=rng.randint(1, 96))
            cid += 1
            if k == answer_at or (count > 10 and rng.random() < 0.05):
                pr = number + rng.randint(5, 4000)
                text = _fill(family["answer"], ctx) if k == answer_at else \
                    rng.choice(["Can you share the full log?", "Which version are you on?",
                                "Please try the latest release."])
                if k == answer_at and rng.random() < 0.6:
                    text += rng.choice([f" Fixed by #{pr}.", f" This should be resolved in https://github.com/{repo}/pull/{pr}.",
                                        f" See #{pr}, which fixes it."])
                comments.append(rest_comment(number, cid, text, rng.choice(MAINTAINERS), repo=repo,
                                             association=rng.choice(["MEMBER", "COLLABORATOR"]), created=_ts(moment)))
            elif count > 10 and rng.random() < 0.03:
                bot, kind = rng.choice(BOTS)
                comments.append(rest_comment(number, cid, STALE_MARK, bot, repo=repo, kind=kind, association="NONE",
                                             created=_ts(moment)))
            else:
                text = _fill(rng.choice(USER_REPLIES[:3] + USER_REPLIES[4:] if not error else USER_REPLIES), ctx)
                who = author if rng.random() < 0.3 else rng.choice(USERS)
                comments.append(rest_comment(number, cid, text, who, repo=repo, created=_ts(moment)))
        state, reason, closed = "open", None, None
        labels = list(family["labels"])
        if closed_answered and count:
            state, reason = "closed", "completed"
        elif stale:
            for text in (STALE_MARK, STALE_CLOSE):
                moment += timedelta(days=rng.randint(14, 60))
                cid += 1
                comments.append(rest_comment(number, cid, text, "github-actions[bot]", repo=repo, kind="Bot",
                                             created=_ts(moment)))
            state, reason = "closed", "not_planned"
            labels.append("inactive")
        if state == "closed":
            moment += timedelta(hours=rng.randint(1, 48))
            closed = _ts(moment)
        updated = _ts(moment + timedelta(minutes=rng.randint(1, 30)))
        issue = rest_issue(number, title, body, repo=repo, state=state, state_reason=reason, labels=labels,
                           author=author, created=_ts(created), updated=updated, closed=closed,
                           comments=len(comments))
        yield {"number": number, "updated_at": updated, "issue": issue, "comments": comments}


def family_of(record: dict) -> str:
    """The failure family a generated issue was drawn from (its title template tells)."""
    title = record["issue"]["title"]
    for family in FAMILIES:
        for template in family["titles"]:
            fixed = [part for part in re.split(r"\{\w+\}", template) if part.strip()]
            if all(part in title for part in fixed):
                return family["key"]
    return "?"


def queries(n: int, seed: int = 1) -> list[tuple[str, str]]:
    """n user pastes (an error line, sometimes with a traceback and a question) and the family each
    comes from, drawn with other model / GPU / number values than the issues have."""
    rng = random.Random(10_000 + seed)
    with_errors = [f for f in FAMILIES if f["error"]]
    out = []
    for _ in range(n):
        family = rng.choice(with_errors)
        ctx = dict(model=rng.choice(MODELS), gpu=rng.choice(GPUS), version=rng.choice(VERSIONS), tp=rng.choice([2, 4, 8]),
                   g=rng.randint(0, 7), gib=f"{rng.uniform(0.1, 20):.2f}", mib=rng.randint(10, 900),
                   seq=rng.randint(1, 90000), arch=rng.choice(ARCHS), flag=rng.choice(FLAGS).split()[0],
                   tokens=rng.randint(33000, 200000), layer=rng.randint(0, 60), smem=rng.choice([106496, 131072]))
        error = _fill(family["error"], ctx)
        style = rng.random()
        if style < 0.4:
            text = error
        elif style < 0.8:
            text = _traceback(rng, family, error)
        else:
            text = f"sglang {ctx['version']} with {ctx['model']} on {ctx['gpu']}, what does this mean?\n{error}"
        out.append((text, family["key"]))
    return out


def write_export(path, n: int, seed: int = 0, **kwargs) -> int:
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for record in generate(n, seed, **kwargs):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest.github_synth", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="number of issues (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="JSON-lines file to write")
    args = parser.parse_args(argv)
    print(f"wrote {write_export(args.out, args.n, args.seed)} issues to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
