"""`ask ingest`: build or update the index from the KB entries, document folders and GitHub data."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assistant.config import Settings
from ingest import collect_units
from ingest.build import BuildStats, build_index


def ingest_kb(settings: Settings, doc_dirs: list[Path] | None = None, progress: bool = True,
              extra_units=()) -> BuildStats:
    """Rebuild the index from the KB (entries + kb/docs + extra folders), embedding only changes."""
    dirs = [settings.docs_dir, *(doc_dirs or [])]
    dirs += _remembered_doc_dirs(settings)
    units = collect_units(settings.entries_dir, dirs, extra=list(extra_units) + _github_units(settings))
    stats = build_index(settings.index_dir, units, settings.embed_model, progress=progress)
    _remember_doc_dirs(settings, doc_dirs or [])
    return stats


def _remembered_doc_dirs(settings: Settings) -> list[Path]:
    path = settings.index_dir.parent / ".ask-doc-dirs"
    if not path.exists():
        return []
    return [Path(line) for line in path.read_text().splitlines() if line.strip() and Path(line).is_dir()]


def _remember_doc_dirs(settings: Settings, doc_dirs: list[Path]) -> None:
    if not doc_dirs:
        return
    path = settings.index_dir.parent / ".ask-doc-dirs"
    known = [str(p) for p in _remembered_doc_dirs(settings)]
    known += [str(Path(d).resolve()) for d in doc_dirs if str(Path(d).resolve()) not in known]
    path.write_text("\n".join(known) + "\n")


def _github_units(settings: Settings) -> list:
    try:
        from ingest.github import stored_issue_units
    except ImportError:
        return []
    return stored_issue_units(settings)


def main(argv: list[str], settings: Settings) -> int:
    if argv and argv[0] == "github":
        from ingest.github import main as github_main

        return github_main(argv[1:], settings)
    parser = argparse.ArgumentParser(
        prog="ask ingest",
        description="Build or update the index from kb/entries, kb/docs and any --docs folders. "
                    "Unchanged content is not embedded again.")
    parser.add_argument("--docs", action="append", type=Path, default=[], metavar="DIR",
                        help="a folder of Markdown / text / HTML troubleshooting documents (repeatable; remembered)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    for folder in args.docs:
        if not folder.is_dir():
            print(f"ask ingest: {folder} is not a folder", file=sys.stderr)
            return 2
    stats = ingest_kb(settings, args.docs, progress=not args.quiet)
    print(f"Indexed {stats.units} units ({stats.chunks} chunks) into {settings.index_dir}: "
          f"embedded {stats.embedded}, reused {stats.reused}, removed {stats.removed_units} units, "
          f"{stats.seconds:.1f} s" + (f", {stats.chunks_per_second:.0f} chunks/s" if stats.embedded else ""),
          file=sys.stderr)
    return 0
