"""Installed like a real CLI: the sdist and the wheel built from the checkout, the wheel installed
into a fresh virtualenv (what `pipx install` does), and `ask` run from another folder with a fresh
HOME answers a trace from the packaged KB, with its index in the user cache.

The fresh virtualenv does not download its dependencies (GBs of torch; the machine is offline but
for PyPI): a `.pth` file puts the project venv's site-packages after the new venv's own, so the
dependencies are the already installed ones while sglang-ask itself — code and KB — comes from the
wheel alone (the checkout is never on its path). The wheel's declared dependency ranges are then
checked against those installed versions (the ones CI tests with, CPU torch included).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

TRACE = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
# What the packaged KB must carry: every data file of kb/ except the built index and synced issues.
NOT_PACKAGED = ("index", "github")


def _checkout_kb_files() -> set[str]:
    kb = REPO / "kb"
    return {p.relative_to(kb).as_posix() for p in kb.rglob("*")
            if p.is_file() and p.relative_to(kb).parts[0] not in NOT_PACKAGED
            and "__pycache__" not in p.parts and not p.name.startswith(".")}


def _checkout_packages() -> set[str]:
    """Every Python package of the checkout that ships (assistant, ingest, ui, evals and below)."""
    return {p.parent.relative_to(REPO).as_posix() for top in ("assistant", "ingest", "ui", "evals")
            for p in (REPO / top).rglob("__init__.py") if "__pycache__" not in p.parts}


def _build(tmp: Path) -> Path:
    """sdist from the checkout, then the wheel from the unpacked sdist (as `python -m build`
    does), without build isolation so nothing is downloaded. Returns the wheel."""
    dist = tmp / "dist"
    build = ("import sys, setuptools.build_meta as b; "
             "print(getattr(b, sys.argv[1])(sys.argv[2]))")
    sdist_name = subprocess.run([sys.executable, "-c", build, "build_sdist", str(dist)], cwd=REPO,
                                capture_output=True, text=True, check=True).stdout.split()[-1]
    with tarfile.open(dist / sdist_name) as archive:
        archive.extractall(tmp / "sdist", filter="data")
    source = tmp / "sdist" / sdist_name.removesuffix(".tar.gz")
    wheel_name = subprocess.run([sys.executable, "-c", build, "build_wheel", str(dist)], cwd=source,
                                capture_output=True, text=True, check=True).stdout.split()[-1]
    return dist / wheel_name


def _fresh_venv(tmp: Path, wheel: Path) -> Path:
    """A new virtualenv holding the wheel, with the project venv's packages as its dependencies."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "_project_venv_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # --no-deps: the dependencies are the project venv's (checked below); --force-reinstall: the
    # project venv's editable sglang-ask is visible too and must not count as installed.
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index",
                    "--no-deps", "--force-reinstall", str(wheel)], check=True, capture_output=True)
    return venv


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    started = time.monotonic()
    wheel = _build(tmp)
    venv = _fresh_venv(tmp, wheel)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ASK_", "XDG_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), ASK_NO_LLM="1", ASK_FEEDBACK_DB=str(tmp / "feedback.sqlite3"),
               PATH=f"{venv / 'bin'}:{env.get('PATH', '')}")

    def ask(*args: str, extra_env: dict | None = None, timeout: float = 300):
        return subprocess.run([str(venv / "bin" / "ask"), *args], cwd=elsewhere, capture_output=True,
                              text=True, timeout=timeout, env={**env, **(extra_env or {})})

    yield {"wheel": wheel, "venv": venv, "home": home, "ask": ask, "tmp": tmp,
           "setup_s": time.monotonic() - started, "python": venv / "bin" / "python", "env": env,
           "elsewhere": elsewhere}
    shutil.rmtree(tmp, ignore_errors=True)


def test_the_wheel_carries_the_code_and_every_kb_data_file(installed):
    import zipfile

    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    packaged_kb = {n.removeprefix("sglang_ask_kb/") for n in names if n.startswith("sglang_ask_kb/")}
    assert _checkout_kb_files() <= packaged_kb, sorted(_checkout_kb_files() - packaged_kb)
    assert not any(n.startswith(("index/", "github/")) for n in packaged_kb)
    packages = {n.rpartition("/")[0] for n in names if n.endswith("/__init__.py")}
    assert _checkout_packages() <= packages, sorted(_checkout_packages() - packages)


def test_installed_ask_answers_from_another_folder_with_a_fresh_home(installed):
    where = subprocess.run([str(installed["python"]), "-c", "import assistant; print(assistant.__file__)"],
                           cwd=installed["elsewhere"], env=installed["env"], capture_output=True, text=True)
    assert str(installed["venv"]) in where.stdout, where.stdout + where.stderr

    started = time.monotonic()
    first = installed["ask"]("--json", TRACE)
    first_s = time.monotonic() - started
    assert first.returncode == 0, first.stderr
    assert "kv-cache-not-enough-memory" in first.stdout
    assert "building it" in first.stderr  # the one-time index build says so

    # the index and the exported query encoder are in the user cache, not in site-packages
    cache = installed["home"] / ".cache" / "sglang-ask" / "index"
    [index] = list(cache.iterdir())
    assert (index / "manifest.json").exists() and (index / "query_encoder.onnx").exists()
    assert not list(installed["venv"].rglob("manifest.json"))

    started = time.monotonic()
    second = installed["ask"]("--json", TRACE)
    second_s = time.monotonic() - started
    assert second.returncode == 0 and "building" not in second.stderr, second.stderr
    assert "kv-cache-not-enough-memory" in second.stdout
    print(f"\nwheel setup {installed['setup_s']:.1f}s, first answer (builds the index) {first_s:.1f}s, "
          f"second {second_s:.1f}s")


def test_version_names_the_package_the_kb_and_the_registry_releases(installed):
    result = installed["ask"]("--version")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("sglang-ask 0.") or out.startswith("sglang-ask 1.")
    entries = len(list((REPO / "kb" / "entries").glob("*.md")))
    assert f"{entries} entries" in out
    assert "0.4." in out and "0.5." in out  # the flag registry's first and last releases


def test_an_empty_kb_folder_gives_one_line_with_the_folder_and_the_fix(installed):
    empty = installed["tmp"] / "empty-kb"
    empty.mkdir()
    result = installed["ask"](TRACE, extra_env={"ASK_KB_DIR": str(empty)})
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(empty) in lines[0] and "ASK_KB_DIR" in lines[0], result.stderr
    assert "unexpected error" not in result.stderr


def test_declared_dependency_ranges_accept_the_tested_environment(installed):
    """No exact pins: the wheel's requirements are satisfied by what CI installs (CPU torch)."""
    check = ("import importlib.metadata as m\n"
             "from packaging.requirements import Requirement\n"
             "bad = []\n"
             "for text in m.requires('sglang-ask') or []:\n"
             "    r = Requirement(text)\n"
             "    if r.marker and not r.marker.evaluate({'extra': ''}):\n"
             "        continue\n"
             "    if '==' in str(r.specifier) and r.name in ('torch', 'transformers'):\n"
             "        bad.append(f'{r} is an exact pin')\n"
             "    try:\n"
             "        have = m.version(r.name)\n"
             "    except m.PackageNotFoundError:\n"
             "        bad.append(f'{r.name} missing'); continue\n"
             "    if not r.specifier.contains(have, prereleases=True):\n"
             "        bad.append(f'{r} but {have} installed')\n"
             "print('\\n'.join(bad))\n")
    result = subprocess.run([str(installed["python"]), "-c", check], cwd=installed["elsewhere"],
                            env=installed["env"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_the_cached_index_follows_the_kb_content_and_old_ones_are_removed(tmp_path, monkeypatch):
    """A changed KB (or package version) gets a new cache folder; the old ~90 MB one goes."""
    from assistant.resources import cached_index_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    kb = tmp_path / "kb"
    (kb / "entries").mkdir(parents=True)
    (kb / "entries" / "a.md").write_text("---\nid: a\n---\n")
    first = cached_index_dir(kb)
    assert first.parent == tmp_path / "cache" / "sglang-ask" / "index"
    first.mkdir(parents=True)
    (first / "manifest.json").write_text("{}")
    assert cached_index_dir(kb) == first and first.exists()  # unchanged KB: same folder, kept

    (kb / "entries" / "a.md").write_text("---\nid: a\ntitle: changed\n---\n")
    second = cached_index_dir(kb)
    assert second != first and not first.exists()
