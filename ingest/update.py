"""Build or update the index from the KB entries, kb/docs plus remembered document folders, and the
stored GitHub issues; only changed content is embedded again."""

from __future__ import annotations

from pathlib import Path

from assistant.config import Settings
from assistant.resources import kb_stamp
from ingest import collect_units
from ingest.build import BuildStats, build_index


def ingest_kb(settings: Settings, doc_dirs: list[Path] | None = None, progress: bool = True,
              extra_units=()) -> BuildStats:
    """Rebuild the index from the KB (entries + kb/docs + extra folders), embedding only changes."""
    dirs = [settings.docs_dir, *(doc_dirs or [])]
    dirs += _remembered_doc_dirs(settings)
    units = collect_units(settings.entries_dir, dirs, extra=list(extra_units) + _github_units(settings))
    stats = build_index(settings.index_dir, units, settings.embed_model, progress=progress,
                        kb_stamp=kb_stamp(settings.kb_dir))
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
        from ingest.github.store import stored_issue_units
    except ImportError:
        return []
    return stored_issue_units(settings)
