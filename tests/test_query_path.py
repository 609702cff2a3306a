"""The `ask` query path stays light: no torch, transformers, sentence-transformers, llama-index or
gradio in a process that answers from an existing index (they cost seconds to import)."""

import json
import os
import subprocess
import sys

from tests.conftest import REPO

HEAVY = ("torch", "transformers", "sentence_transformers", "llama_index", "gradio", "openai", "bm25s", "yaml")

PROBE = """
import io, json, sys, contextlib
from ui.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["--no-llm", "--json", sys.argv[1]])
heavy = [m for m in %r if m in sys.modules]
print(json.dumps({"code": code, "heavy": heavy, "top": json.loads(out.getvalue())["matches"][0]["id"]}))
""" % (HEAVY,)


def test_answering_imports_no_heavy_framework(kb_dir):
    env = dict(os.environ, ASK_KB_DIR=str(kb_dir), ASK_NO_LLM="1")
    env.pop("ASK_INDEX_DIR", None)
    result = subprocess.run([sys.executable, "-c", PROBE, "ImportError: libnuma.so.1: cannot open shared object file"],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["code"] == 0 and report["top"] == "libnuma-missing-sgl-kernel"
    assert report["heavy"] == []


def test_help_is_instant():
    result = subprocess.run([sys.executable, "-c", "import sys; from ui.cli import main\n"
                             "try:\n main(['--help'])\nexcept SystemExit: pass\n"
                             f"print([m for m in {HEAVY!r} if m in sys.modules] + "
                             "[m for m in ('numpy', 'faiss', 'onnxruntime') if m in sys.modules])"],
                            capture_output=True, text=True, cwd=REPO, timeout=60)
    assert "usage: ask" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "[]"
