"""The local issue cache of one repository (issues.jsonl, appended as fetched, the last line of a
number wins), its pull requests (pulls.jsonl, the same way) and releases (releases.json), and its
checkpoint (state.json); and every stored issue of every synced repository as index units, cached
per issue line, with the fix PR and the release that shipped it linked in when they are read."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from assistant.config import Settings
from ingest.documents import Unit
from ingest.github.errors import GitHubError
from ingest.github.resolution import link_fix, prs_by_issue
from ingest.github.units import issue_unit, unit_code_version

_LINE_HEAD_RE = re.compile(r'^\{"number": (\d+), "(updated_at|gone)": "([^"]*)"')


def repo_folder(settings: Settings, repo: str) -> Path:
    owner, name = repo.split("/", 1)
    return settings.kb_dir / "github" / f"{owner}__{name}"


class IssueStore:
    """The raw cache (issues.jsonl) and the checkpoint (state.json) of one repository."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.issues_path = self.folder / "issues.jsonl"
        self.state_path = self.folder / "state.json"
        self.pulls_path = self.folder / "pulls.jsonl"
        self.releases_path = self.folder / "releases.json"

    @contextmanager
    def lock(self) -> Iterator[None]:
        """One writer at a time (a cron sync and a manual one must not interleave their lines)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "w") as handle:
            try:
                import fcntl

                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:   # no fcntl (Windows): no lock
                pass
            except OSError:
                raise GitHubError(f"another `ask ingest github` is updating {self.folder}; "
                                  "wait for it to finish") from None
            yield

    # the checkpoint
    def state(self) -> dict:
        try:
            return json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return {}

    def save_state(self, state: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(state, indent=1))
        os.replace(tmp, self.state_path)   # a crash never leaves a half-written checkpoint

    # pull requests and releases: what links an issue to the release that fixed it
    def pulls(self) -> dict[int, dict]:
        """Pull requests seen in the issue listing, number -> {number, title, merged_at, fixes}."""
        pulls: dict[int, dict] = {}
        if self.pulls_path.exists():
            with open(self.pulls_path, encoding="utf-8") as f:
                for line in f:
                    try:
                        record = json.loads(line)
                        pulls[int(record["number"])] = record
                    except (ValueError, KeyError, TypeError):
                        continue   # a line cut by a crash
        return pulls

    def append_pulls(self, records: list[dict]) -> None:
        if records:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(self.pulls_path, "a", encoding="utf-8") as f:
                f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)

    def compact_pulls(self) -> None:
        pulls = self.pulls()
        if pulls:
            tmp = self.pulls_path.with_suffix(".jsonl.tmp")
            tmp.write_text("".join(json.dumps(pulls[n], ensure_ascii=False) + "\n" for n in sorted(pulls)),
                           encoding="utf-8")
            os.replace(tmp, self.pulls_path)

    def releases(self) -> list[dict]:
        try:
            return json.loads(self.releases_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []

    def save_releases(self, releases: list[dict]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.releases_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(releases, ensure_ascii=False, indent=0), encoding="utf-8")
        os.replace(tmp, self.releases_path)

    # the raw cache
    def _latest_offsets(self) -> dict[int, tuple[int, str, bool, int]]:
        """number -> (byte offset of its last line, updated_at or gone reason, is_tombstone, line length)."""
        latest: dict[int, tuple[int, str, bool, int]] = {}
        if not self.issues_path.exists():
            return latest
        with open(self.issues_path, "rb") as f:
            offset = 0
            for raw in f:
                here, offset = offset, offset + len(raw)
                if not raw.endswith(b"\n"):
                    break   # a line cut by a crash: ignore it
                line = raw.decode("utf-8", "replace")
                m = _LINE_HEAD_RE.match(line)
                if m:
                    latest[int(m.group(1))] = (here, m.group(3), m.group(2) == "gone", len(raw))
                    continue
                try:   # a hand-edited or reordered line: parse it whole
                    obj = json.loads(line)
                    n = int(obj["number"])
                except (ValueError, KeyError, TypeError):
                    continue
                latest[n] = (here, obj.get("gone") or obj.get("updated_at") or "", "gone" in obj, len(raw))
        return latest

    def updated_at(self) -> dict[int, str]:
        """What is stored, as number -> updated_at (deleted issues left out)."""
        return {n: v for n, (_, v, gone, _) in self._latest_offsets().items() if not gone}

    def records(self) -> Iterator[dict]:
        """The stored issues, latest version of each, in number order; reads one line at a time."""
        latest = self._latest_offsets()
        if not latest:
            return
        with open(self.issues_path, "rb") as f:
            for n in sorted(latest):
                offset, _, gone, _ = latest[n]
                if gone:
                    continue
                f.seek(offset)
                try:
                    yield json.loads(f.readline())
                except ValueError:
                    continue

    def units(self, repo: str) -> list[Unit]:
        """The stored issues as units. Building a unit costs milliseconds (trace analysis), so units
        are cached in units.cache.jsonl by (issue line, code version): a re-ingest of 20,000
        unchanged issues reads the cache instead of parsing every thread again."""
        latest = self._latest_offsets()
        cache_path = self.folder / "units.cache.jsonl"
        cache: dict[str, dict | None] = {}
        if cache_path.exists():
            with open(cache_path, encoding="utf-8") as f:
                for line in f:
                    try:
                        item = json.loads(line)
                        cache[item["key"]] = item["unit"]
                    except (ValueError, KeyError, TypeError):
                        continue
        fresh: dict[str, dict | None] = {}
        units: list[Unit] = []
        pulls, releases = self.pulls(), self.releases()
        linked = prs_by_issue(pulls)
        with open(self.issues_path, "rb") as f:
            for n in sorted(latest):
                offset, updated, gone, length = latest[n]
                if gone:
                    continue
                key = f"{repo}#{n}:{updated}:{length}:{unit_code_version()}"
                if key in cache:
                    data = cache[key]
                else:
                    f.seek(offset)
                    try:
                        unit = issue_unit(repo, json.loads(f.readline()))
                    except (ValueError, KeyError, TypeError):
                        unit = None   # an unreadable line indexes nothing rather than failing the ingest
                    data = asdict(unit) if unit else None
                fresh[key] = data
                if data:
                    units.append(Unit(**(data | {"meta": link_repository(data["meta"], linked, pulls, releases)})))
        if fresh.keys() != cache.keys():
            tmp = cache_path.with_suffix(".tmp")
            with open(tmp, "w", encoding="utf-8") as out:
                for key, data in fresh.items():
                    out.write(json.dumps({"key": key, "unit": data}, ensure_ascii=False) + "\n")
            os.replace(tmp, cache_path)
        return units

    def append(self, record: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.issues_path, "ab+") as f:
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    f.write(b"\n")   # end a line cut by an earlier crash, so this one stays readable
            f.write(_record_line(record))

    def replace_all(self, records: Iterable[dict]) -> int:
        """Rewrite the cache with exactly these records (compaction, a full export)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.issues_path.with_suffix(".jsonl.tmp")
        count = 0
        with open(tmp, "wb") as out:
            for record in records:
                out.write(_record_line(record))
                count += 1
        os.replace(tmp, self.issues_path)
        return count

    def compact(self) -> None:
        """Drop superseded lines and tombstones, copying the kept lines as they are."""
        latest = self._latest_offsets()
        if not latest:
            return
        with open(self.issues_path, "rb") as f:
            lines = sum(1 for _ in f)
            if lines == len(latest) and not any(gone for _, _, gone, _ in latest.values()):
                return
            tmp = self.issues_path.with_suffix(".jsonl.tmp")
            with open(tmp, "wb") as out:
                for n in sorted(latest):
                    offset, _, gone, _ = latest[n]
                    if not gone:
                        f.seek(offset)
                        out.write(f.readline())
        os.replace(tmp, self.issues_path)


def link_repository(meta: dict, linked: dict[int, list[dict]], pulls: dict[int, dict], releases: list[dict]) -> dict:
    """An issue unit's meta with what the repository knows added to its resolution: the merged PR
    that fixed it and the release that shipped it. Done when units are read, not cached with them:
    a new release or a merged PR changes it without re-reading 20,000 threads."""
    resolution = meta.get("resolution")
    if not isinstance(resolution, dict):
        return meta
    closed_completed = meta.get("state") == "closed" and meta.get("state_reason") in (None, "completed")
    resolution = link_fix(resolution, closed_completed, linked.get(int(meta["number"]), []), pulls, releases)
    return meta | {"resolution": resolution, "fix_pr": resolution.get("fix_pr") or meta.get("fix_pr")}


def _record(issue: dict, comments: list[dict]) -> dict:
    return {"number": int(issue["number"]), "updated_at": str(issue.get("updated_at") or ""),
            "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "issue": issue, "comments": comments}


def _tombstone(number: int, reason: str) -> dict:
    return {"number": int(number), "gone": reason}


def _record_line(record: dict) -> bytes:
    # number and updated_at first: the loader reads them from the line's start without parsing it
    head = {"number": record["number"]}
    head["gone" if "gone" in record else "updated_at"] = record.get("gone") or record.get("updated_at", "")
    return (json.dumps(head | record, ensure_ascii=False) + "\n").encode("utf-8")


def stored_repos(settings: Settings) -> list[tuple[str, IssueStore]]:
    root = settings.kb_dir / "github"
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(p for p in root.iterdir() if (p / "issues.jsonl").exists()):
        store = IssueStore(folder)
        repo = store.state().get("repo") or folder.name.replace("__", "/", 1)
        out.append((repo, store))
    return out


def stored_issue_units(settings: Settings) -> list[Unit]:
    """Every stored issue of every synced repository, as units for the index."""
    units = []
    for repo, store in stored_repos(settings):
        units += store.units(repo)
    return units
