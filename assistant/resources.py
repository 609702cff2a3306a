"""Where the knowledge base and its index are, for a checkout and for an installed wheel.

From a checkout (or an editable install) the KB is the checkout's `kb/`, the source of truth, and
the index stays in `kb/index`. An installed wheel carries the same files as the package
`sglang_ask_kb` (pyproject maps `kb/` onto it, so nothing is copied into the repository), read
through importlib.resources; its index and exported query encoder cannot live next to it
(site-packages may be read-only and is replaced on upgrade), so they go to a per-user cache folder
named after the package version and a fingerprint of the indexed KB files: a new version or a
changed KB gets a fresh folder, which the first query builds.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from assistant.errors import AssistantError

CHECKOUT_KB = Path(__file__).resolve().parent.parent / "kb"
KB_PACKAGE = "sglang_ask_kb"
DISTRIBUTION = "sglang-ask"
# The folders the index is built from (ingest.update): a change there needs a new index.
INDEXED_FOLDERS = ("entries", "docs")


class KBUnavailable(AssistantError):
    """The KB folder is missing, empty or unreadable."""


def packaged_kb() -> Path | None:
    """The KB installed with the package (a wheel install), or None when there is none."""
    try:
        root = importlib.resources.files(KB_PACKAGE)
    except (ModuleNotFoundError, NotADirectoryError, FileNotFoundError):
        # an editable install maps the package onto the checkout's kb/ through a path hook,
        # which importlib.resources cannot list: that is the checkout, not a packaged KB
        return None
    # kb/ has no __init__.py, so the package is a namespace package whose files() is a
    # MultiplexedPath; a wheel installs plain files, so its entries/ folder is a real Path.
    entries = root.joinpath("entries")
    if isinstance(entries, Path) and entries.is_dir():
        return entries.parent
    return None


def default_kb_dir() -> Path:
    """The checkout's kb/ when running from a checkout, else the packaged KB. When neither is
    there, where it should be, so the error names the folder that is missing."""
    if (CHECKOUT_KB / "entries").is_dir():
        return CHECKOUT_KB
    packaged = packaged_kb()
    if packaged is not None:
        return packaged
    return CHECKOUT_KB if (CHECKOUT_KB.parent / "pyproject.toml").is_file() else CHECKOUT_KB.parent / KB_PACKAGE


def kb_file(name: str) -> Path:
    """A data file of the default KB (the registries: sglang_flags.json, sglang_deps.json, ...)."""
    return default_kb_dir() / name


def is_packaged(kb_dir: Path) -> bool:
    """True for the KB installed with the package, whose index must go to the user cache; False
    for a checkout's kb/ (also when an editable install maps the package onto it)."""
    if Path(kb_dir).resolve() == CHECKOUT_KB.resolve():
        return False
    packaged = packaged_kb()
    if packaged is None or packaged.resolve() == CHECKOUT_KB.resolve():
        return False
    return Path(kb_dir).resolve() == packaged.resolve()


def package_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def kb_fingerprint(kb_dir: Path) -> str:
    """A short hash of the files the index is built from (paths and contents)."""
    digest = hashlib.sha256()
    for folder in INDEXED_FOLDERS:
        root = Path(kb_dir) / folder
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            digest.update(path.relative_to(kb_dir).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def kb_stamp(kb_dir: Path) -> str:
    """A short hash of the names, sizes and modification times of the files the index is built
    from: read on every question of an editable KB, so it stats the files (a few ms) where
    `kb_fingerprint` reads them all."""
    rows: list[str] = []
    for folder in INDEXED_FOLDERS:
        root = os.path.join(kb_dir, folder)
        if os.path.isdir(root):
            rows += _file_stats(root, str(kb_dir))
    return hashlib.sha256("\n".join(sorted(rows)).encode()).hexdigest()[:12]


def _file_stats(folder: str, base: str) -> list[str]:
    rows = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                rows += _file_stats(entry.path, base)
            elif entry.is_file():
                stat = entry.stat()
                rows.append(f"{os.path.relpath(entry.path, base)}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return rows


def cache_root() -> Path:
    """The per-user cache folder (~/.cache/sglang-ask on Linux)."""
    import platformdirs

    return platformdirs.user_cache_path("sglang-ask")


def cached_index_dir(kb_dir: Path) -> Path:
    """The cache folder for the index of a packaged KB: one per package version and KB content.
    When it does not exist yet (a new version or KB), the folders of earlier ones are removed:
    they are ~90 MB each (mostly the ONNX query encoder) and nothing reads them any more."""
    parent = cache_root() / "index"
    folder = parent / f"{package_version()}-{kb_fingerprint(kb_dir)}"
    if not folder.exists() and parent.is_dir():
        for stale in parent.iterdir():
            if stale.is_dir() and stale.name[:1].isdigit() and (stale / "manifest.json").exists():
                shutil.rmtree(stale, ignore_errors=True)
    return folder


def default_index_dir(kb_dir: Path) -> Path:
    """<kb>/index for a KB the user edits (a checkout, ASK_KB_DIR); the user cache for the
    packaged one, never site-packages."""
    return cached_index_dir(kb_dir) if is_packaged(kb_dir) else Path(kb_dir) / "index"


def require_kb(kb_dir: Path) -> int:
    """The number of entries in a KB folder; KBUnavailable (one line naming the folder and the
    fix) when it is missing, unreadable or holds no entries."""
    kb_dir = Path(kb_dir)
    entries = kb_dir / "entries"
    if kb_dir == default_kb_dir() and kb_dir != CHECKOUT_KB:
        fix = "the KB installed with sglang-ask is damaged: reinstall it (pipx reinstall sglang-ask)"
    else:
        fix = "point ASK_KB_DIR or --kb-dir at a knowledge base folder (one with entries/*.md)"
    if not kb_dir.is_dir():
        raise KBUnavailable(f"the knowledge base folder {kb_dir} does not exist: {fix}")
    if entries.is_dir() and not os.access(entries, os.R_OK | os.X_OK):
        raise KBUnavailable(f"cannot read the knowledge base at {kb_dir} (permission denied on "
                            f"{entries}): {fix}")
    count = sum(1 for p in entries.glob("*.md") if not p.name.startswith("_")) if entries.is_dir() else 0
    if count == 0:
        raise KBUnavailable(f"the knowledge base at {kb_dir} has no entries ({entries}/*.md): {fix}")
    return count


@dataclass(frozen=True)
class RegistryCoverage:
    """Which SGLang releases one registry file covers (for `ask --version`)."""

    name: str                      # file name in the KB folder
    releases: tuple[str, ...]      # sorted oldest first; empty when missing or unreadable
    generated: str | None = None   # the generated_at date the file records, if any


def _release_key(version: str):
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def registry_coverage(kb_dir: Path) -> list[RegistryCoverage]:
    """The releases of the flag registry, the error-origin registry and the dependency pins."""
    import gzip
    import json

    def read(name: str, open_first_line=False) -> dict:
        path = Path(kb_dir) / name
        try:
            if open_first_line:  # a JSON-lines file whose first line is its header
                with gzip.open(path, "rt", encoding="utf-8") as handle:
                    return json.loads(handle.readline())
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, EOFError):
            return {}

    flags = read("sglang_flags.json")
    errors = read("sglang_errors.jsonl.gz", open_first_line=True)
    deps = read("sglang_deps.json")
    error_releases = errors.get("releases", {})
    found = [
        ("sglang_flags.json", flags.get("versions", {}), flags.get("generated_at")),
        ("sglang_errors.jsonl.gz", error_releases.get("sglang", []) if isinstance(error_releases, dict)
         else error_releases, errors.get("generated_at")),
        ("sglang_deps.json", deps.get("releases", {}), deps.get("generated_at")),
    ]
    return [RegistryCoverage(name, tuple(sorted(map(str, releases), key=_release_key)),
                             str(generated)[:10] if generated else None)
            for name, releases, generated in found]
