"""SGLang release wheels from PyPI: find the latest release, download a wheel once, read its sources.

Wheels are fetched with ``pip download --no-deps`` into a cache directory and reused; their
``.py`` files are read from the zip, never imported. ``ingest.sglang_flags`` scans them for
flags and env vars; other ingest steps may read the same cached wheels.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

DEFAULT_CACHE_DIR = Path("~/.cache/sglang-ask/wheels").expanduser()


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def read_sources(wheel: Path) -> dict[str, str]:
    """Every ``.py`` file of a wheel, path -> text."""
    with zipfile.ZipFile(wheel) as archive:
        return {
            name: archive.read(name).decode("utf-8-sig", errors="replace")  # some files carry a BOM
            for name in archive.namelist()
            if name.endswith(".py")
        }


def pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)


def latest_release() -> str | None:
    """The newest non-prerelease sglang version on PyPI, or None when PyPI cannot be listed."""
    result = pip("index", "versions", "sglang")
    match = re.search(r"Available versions:\s*(.+)", result.stdout)
    if not match:
        log(
            f"warning: could not list sglang releases ({result.stderr.strip().splitlines()[-1:]}); "
            "using the default list only"
        )
        return None
    releases = []
    for text in match.group(1).split(","):
        try:
            version = Version(text.strip())
        except InvalidVersion:
            continue
        if not version.is_prerelease:
            releases.append(version)
    return str(max(releases)) if releases else None


def cached_wheel(version: str, cache_dir: Path) -> Path | None:
    return next(iter(sorted(cache_dir.glob(f"sglang-{version}-*.whl"))), None)


def fetch_wheel(version: str, cache_dir: Path) -> Path:
    """The wheel of one release, downloaded into cache_dir unless it is already there."""
    wheel = cached_wheel(version, cache_dir)
    if wheel:
        return wheel
    cache_dir.mkdir(parents=True, exist_ok=True)
    base = (
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--quiet",
        f"sglang=={version}",
        "-d",
        str(cache_dir),
    )
    result = pip(*base)
    if result.returncode != 0:
        # Newer releases ship CPython-specific wheels; any one of them has the same sources.
        result = pip(*base, "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
                     "--platform", "manylinux_2_34_x86_64")  # fmt: skip
    wheel = cached_wheel(version, cache_dir)
    if result.returncode != 0 or wheel is None:
        last_line = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(
            f"error: pip could not download sglang=={version} ({last_line}); "
            "check that the version exists on PyPI and that PyPI is reachable"
        )
    return wheel
def wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def cached_versions(cache_dir: Path, distribution: str) -> list[str]:
    versions = set()
    for wheel in cache_dir.glob(f"{distribution.replace('-', '_')}-*.whl"):
        versions.add(wheel_version(wheel))
    for wheel in cache_dir.glob(f"{distribution}-*.whl"):
        versions.add(wheel_version(wheel))
    return sorted(versions, key=Version)


def wheel_metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(name).decode("utf-8", errors="replace")


