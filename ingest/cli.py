"""`ask ingest`: build or update the index from the KB entries, document folders and GitHub data."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assistant.config import Settings
from ingest.update import ingest_kb


def main(argv: list[str], settings: Settings) -> int:
    if argv and argv[0] == "github":
        from ingest.github.command import main as github_main

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
