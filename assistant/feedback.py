"""Thumbs up / down on answers, stored in SQLite, exported with `ask feedback`.

Every surface (web UI, Slack, CLI) records the question, the answer it showed, the matched KB ids
and the rating, so entries that users mark wrong can be found and fixed. One row per answer:
rating again on the same answer replaces the earlier rating (last write wins).
"""

from __future__ import annotations

import argparse
import csv
import json
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from assistant.errors import AssistantError

SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    answer_key   TEXT PRIMARY KEY,   -- surface-specific id of the answer shown (message ts, uuid)
    surface      TEXT NOT NULL,      -- web | slack | cli
    created_at   REAL NOT NULL,
    rating       INTEGER NOT NULL,   -- +1 helpful, -1 not helpful
    question     TEXT NOT NULL,
    answer_json  TEXT NOT NULL,
    matched_ids  TEXT NOT NULL,      -- JSON list of KB entry / issue ids, best first
    mode         TEXT,
    comment      TEXT,
    user         TEXT
);
CREATE INDEX IF NOT EXISTS feedback_created ON feedback(created_at);
"""


@dataclass(frozen=True)
class FeedbackRow:
    answer_key: str
    surface: str
    created_at: float
    rating: int
    question: str
    answer: dict
    matched_ids: list[str]
    mode: str | None
    comment: str | None
    user: str | None


class FeedbackUnavailable(AssistantError):
    """The feedback database cannot be opened (corrupt, not a database, unwritable folder)."""


class FeedbackStore:
    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._create()
        except (sqlite3.DatabaseError, OSError) as exc:
            raise FeedbackUnavailable(
                f"the feedback database {self.path} is unreadable ({exc}): move it aside with "
                f"`mv {self.path} {self.path}.broken` (a new one is made on the next start)") from exc

    def _create(self) -> None:
        with self._connect() as db:
            db.executescript(SCHEMA)
            # WAL lets the UI and the Slack bot read while one writes. The mode is stored in the
            # file, so it is set once here: switching it needs an exclusive lock that the busy
            # timeout does not wait for, so doing it on every connection failed under concurrency.
            try:
                db.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:
                pass  # another process holds the database; it already set (or will set) the mode

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def record(self, answer_key: str, surface: str, rating: int, question: str, answer: dict,
               matched_ids: list[str], mode: str | None = None, comment: str | None = None,
               user: str | None = None) -> None:
        if rating not in (1, -1):
            raise ValueError("rating is +1 (helpful) or -1 (not helpful)")
        with self._connect() as db:
            db.execute(
                "INSERT INTO feedback VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(answer_key) DO UPDATE SET "
                "rating=excluded.rating, created_at=excluded.created_at, comment=excluded.comment",
                (answer_key, surface, time.time(), rating, question[:100_000],
                 json.dumps(answer, ensure_ascii=False)[:500_000], json.dumps(matched_ids), mode,
                 comment, user),
            )

    def rows(self, rating: int | None = None) -> list[FeedbackRow]:
        query = "SELECT * FROM feedback" + (" WHERE rating = ?" if rating else "") + " ORDER BY created_at"
        with self._connect() as db:
            cur = db.execute(query, (rating,) if rating else ())
            return [FeedbackRow(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), json.loads(r[6]),
                                r[7], r[8], r[9]) for r in cur.fetchall()]

    def summary(self) -> dict[str, dict[str, int]]:
        """Per matched top id: how many helpful / not helpful ratings."""
        out: dict[str, dict[str, int]] = {}
        for row in self.rows():
            top = row.matched_ids[0] if row.matched_ids else "(no match)"
            counts = out.setdefault(top, {"up": 0, "down": 0})
            counts["up" if row.rating > 0 else "down"] += 1
        return out


def main(argv: list[str], settings) -> int:
    parser = argparse.ArgumentParser(prog="ask feedback",
                                     description="Export the thumbs up / down users gave to answers.")
    parser.add_argument("--format", choices=("jsonl", "csv", "summary"), default="jsonl")
    parser.add_argument("--only", choices=("up", "down"), help="only helpful / not helpful answers")
    parser.add_argument("--db", type=Path, help="feedback database (env ASK_FEEDBACK_DB)")
    args = parser.parse_args(argv)
    path = args.db or settings.feedback_db
    if not Path(path).exists():
        print(f"ask feedback: no feedback stored yet at {path}", file=sys.stderr)
        return 0
    store = FeedbackStore(path)
    if args.format == "summary":
        for top, counts in sorted(store.summary().items(), key=lambda kv: -kv[1]["down"]):
            print(f"{top}\t+{counts['up']}\t-{counts['down']}")
        return 0
    rows = store.rows({"up": 1, "down": -1}.get(args.only))
    if args.format == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(["answer_key", "surface", "created_at", "rating", "matched_ids", "question", "comment"])
        for r in rows:
            writer.writerow([r.answer_key, r.surface, r.created_at, r.rating, " ".join(r.matched_ids),
                             r.question, r.comment or ""])
        return 0
    for r in rows:
        print(json.dumps({"answer_key": r.answer_key, "surface": r.surface, "created_at": r.created_at,
                          "rating": r.rating, "matched_ids": r.matched_ids, "question": r.question,
                          "answer": r.answer, "mode": r.mode, "comment": r.comment, "user": r.user},
                         ensure_ascii=False))
    return 0
