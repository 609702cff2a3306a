"""Build kb/sglang_flags.json: the launch_server flags and SGLANG_*/SGL_* env vars of each release.

Run as ``python -m ingest.sglang_flags [--versions 0.4.1 0.5.9 ...] [--out kb/sglang_flags.json]``.

For every release it fetches the wheel (``ingest.wheels``: ``pip download --no-deps``, cached)
and reads its sources as a zip, never importing them:

* flags (``ingest.flag_scan``): ``parser.add_argument(...)`` calls reachable from ``ServerArgs.add_cli_args`` in
  ``sglang/srt/server_args.py``, plus, for releases that build the CLI from annotated
  fields (``add_cli_args_from_dataclass``), every ``A[T, "help"]`` / ``A[T, Arg(...)]``
  field of ServerArgs and of the namespace classes it collects (``cli_name``, ``aliases``
  and ``no_cli`` honoured, ``BooleanOptionalAction`` adds ``--no-X``);
* env vars (``ingest.env_scan``): ``SGLANG_*`` and legacy ``SGL_*`` names in string constants, ``envs.X``
  accesses and ``Envs`` class attributes of every ``.py`` file, plus the deprecation
  shims that rename or retire some of them.

Per release the JSON holds ``flags``, ``deprecated_flags``, ``flag_replacements`` (what a
deprecation help text says to use), ``allow_abbrev``, ``env_vars``, ``legacy_env_vars``,
``deprecated_env_vars`` (old name -> replacement or ""), ``retired_env_vars`` (deprecated
names the release no longer reads itself) and ``sgl_prefix_alias`` (SGL_X is copied to
SGLANG_X at startup); every release has ``flag_choices`` (each flag's literal choices) and the
newest release also ``flag_help`` (each flag's help text, which a how-to answer quotes). ``assistant/flags.py``
answers questions from it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import sys
from pathlib import Path

from packaging.version import Version

from ingest.env_scan import extract_env_vars
from ingest.flag_scan import extract_flags, uses_default_allow_abbrev
from ingest.wheels import DEFAULT_CACHE_DIR, cached_wheel, fetch_wheel, latest_release, read_sources

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "kb" / "sglang_flags.json"

# The releases the product must know; the latest PyPI release is appended at run time.
# The in-between ones are cheap and make "which version introduced/removed X" sharper.
DEFAULT_VERSIONS = [
    "0.4.1", "0.4.3", "0.4.5", "0.4.6", "0.4.8", "0.4.10",
    "0.5.1", "0.5.3", "0.5.5", "0.5.6", "0.5.7", "0.5.8", "0.5.9",
    "0.5.10", "0.5.12", "0.5.14", "0.5.16", "0.5.18", "0.5.20", "0.5.22",
]  # fmt: skip


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def extract_from_wheel(wheel: Path | str) -> dict:
    """The registry entry of one release, read statically from its wheel."""
    return scan_wheel(Path(wheel))[0]


def scan_wheel(wheel: Path) -> tuple[dict, list[str]]:
    """The registry entry of one release and the extraction warnings."""
    sources = read_sources(wheel)
    flags = extract_flags(sources)
    envs = extract_env_vars(sources)
    retired = {name for name in envs.deprecated if name not in envs.read}
    entry = {
        "flags": sorted(flags.flags),
        "deprecated_flags": sorted(flags.deprecated & flags.flags),
        "flag_replacements": dict(sorted(flags.replacements.items())),
        "allow_abbrev": uses_default_allow_abbrev(sources),
        "env_vars": sorted(n for n in envs.names if n.startswith("SGLANG_")),
        "legacy_env_vars": sorted(n for n in envs.names if n.startswith("SGL_")),
        "deprecated_env_vars": dict(sorted(envs.deprecated.items())),
        "retired_env_vars": sorted(retired),
        "sgl_prefix_alias": envs.sgl_prefix_alias,
        "flag_help": dict(sorted(flags.help.items())),
        "flag_choices": dict(sorted(flags.choices.items())),
    }
    return entry, flags.warnings + envs.warnings


def build(versions: list[str], cache_dir: Path) -> dict:
    wheels = {}
    for number, version in enumerate(versions, 1):
        how = "cached wheel" if cached_wheel(version, cache_dir) else "downloading wheel"
        log(f"[{number}/{len(versions)}] sglang {version}: {how}")
        wheels[version] = fetch_wheel(version, cache_dir)
    entries = {}
    # Parsing every source file of a release is CPU-bound; one release per core.
    with concurrent.futures.ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = {pool.submit(scan_wheel, wheel): version for version, wheel in wheels.items()}
        for number, future in enumerate(concurrent.futures.as_completed(futures), 1):
            version = futures[future]
            entry, warnings = future.result()
            log(f"[{number}/{len(versions)}] sglang {version}: {len(entry['flags'])} flags "
                f"({len(entry['deprecated_flags'])} deprecated), {len(entry['env_vars'])} SGLANG_* "
                f"and {len(entry['legacy_env_vars'])} SGL_* env vars")  # fmt: skip
            for warning in warnings:
                log(f"    warning: {warning}")
            entries[version] = entry
    for version in versions[:-1]:
        # help texts are quoted from the newest release only: they would triple the file; the
        # choices are small and differ by release (a value one release rejects, another accepts)
        entries[version].pop("flag_help", None)
    return {
        "format": 1,
        "generated_by": "python -m ingest.sglang_flags",
        "generated_at": datetime.date.today().isoformat(),
        "versions": {version: entries[version] for version in versions},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ingest.sglang_flags", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--versions",
        nargs="+",
        help="SGLang releases to scan (default: a built-in list plus the latest PyPI release)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output JSON path")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=DEFAULT_CACHE_DIR,
        help="where downloaded wheels are kept and reused",
    )
    args = parser.parse_args(argv)

    versions = [v.lstrip("vV") for v in args.versions] if args.versions else list(DEFAULT_VERSIONS)
    if not args.versions:
        latest = latest_release()
        if latest and latest not in versions:
            versions.append(latest)
    versions = sorted(set(versions), key=Version)

    registry = build(versions, args.cache_dir.expanduser())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(registry, indent=1, sort_keys=False) + "\n")
    log(f"wrote {args.out} ({len(versions)} releases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
