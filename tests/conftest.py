"""Shared fixtures: a real index built once per session from the repo's KB with the real
embedding model, and a way to run the `ask` CLI as a user would (a new process)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch, tmp_path):
    """No test reads the user's real feedback db or an LLM endpoint by accident."""
    monkeypatch.setenv("ASK_FEEDBACK_DB", str(tmp_path / "feedback.sqlite3"))
    monkeypatch.setenv("ASK_NO_LLM", "1")


@pytest.fixture(scope="session")
def kb_dir(tmp_path_factory) -> Path:
    """A copy of the repo's KB with its index built (real MiniLM, real FAISS)."""
    from assistant.config import Settings
    from ingest.update import ingest_kb

    root = tmp_path_factory.mktemp("kb")
    shutil.copytree(REPO / "kb" / "entries", root / "entries")
    if (REPO / "kb" / "docs").exists():
        shutil.copytree(REPO / "kb" / "docs", root / "docs")
    settings = Settings.from_env({"ASK_KB_DIR": str(root)})
    ingest_kb(settings, progress=False)
    return root


@pytest.fixture(scope="session")
def assistant(kb_dir):
    from assistant.config import Settings
    from assistant.pipeline import Assistant

    settings = Settings.from_env({"ASK_KB_DIR": str(kb_dir), "ASK_NO_LLM": "1"})
    return Assistant.from_settings(settings)


def run_ask(*args: str, kb: Path | None = None, stdin: bytes | None = None, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `ask` in a new process, as a user would."""
    full_env = dict(os.environ)
    full_env.pop("ASK_INDEX_DIR", None)
    full_env["ASK_NO_LLM"] = "1"
    if kb is not None:
        full_env["ASK_KB_DIR"] = str(kb)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "ui.cli", *args], input=stdin,
                          capture_output=True, timeout=timeout, env=full_env, cwd=REPO)
