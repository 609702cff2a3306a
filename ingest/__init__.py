"""Ingest: turn the KB, document folders and GitHub issues into the index that `ask` queries."""

from __future__ import annotations

from pathlib import Path

from assistant.kb import load_entries
from ingest.documents import Unit, document_units, entry_unit


def collect_units(entries_dir: Path, doc_dirs: list[Path] = (), extra: list[Unit] = ()) -> list[Unit]:
    """KB entries first (curated), then documents, then extra units (e.g. GitHub issues)."""
    units = [entry_unit(e) for e in load_entries(entries_dir)] if Path(entries_dir).exists() else []
    for folder in doc_dirs:
        if Path(folder).is_dir():
            units += document_units(Path(folder))
    return units + list(extra)
