"""`ask ingest github OWNER/REPO`: sync (or import) a repository's issues into the local cache,
then rebuild the index unless --no-index."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from assistant.config import Settings
from ingest.github.client import DEFAULT_API_URL, MAX_RATE_WAIT, GitHubClient
from ingest.github.errors import GitHubError, Interrupted
from ingest.github.export import import_export
from ingest.github.store import IssueStore, repo_folder
from ingest.github.sync import SyncStats, sync_repo
from ingest.update import ingest_kb

REPO_RE = re.compile(r"^(?:https?://github\.com/)?([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ask ingest github",
        description="Sync a repository's GitHub issues (with comments) into the index: the first run "
                    "fetches everything, later runs only what changed. Interrupted runs resume.")
    parser.add_argument("repo", metavar="OWNER/REPO", help="e.g. sgl-project/sglang")
    parser.add_argument("--token-env", default="GITHUB_TOKEN", metavar="VAR",
                        help="environment variable holding the GitHub token (default GITHUB_TOKEN)")
    parser.add_argument("--api-url", default=DEFAULT_API_URL, metavar="URL",
                        help=f"REST API base URL (default {DEFAULT_API_URL}; GitHub Enterprise: https://HOST/api/v3)")
    parser.add_argument("--from-export", type=Path, metavar="FILE",
                        help="import a file instead of calling the API: REST JSON (array or lines) or "
                             "`gh issue list --state all --limit 100000 --json number,title,body,state,"
                             "stateReason,labels,author,comments,createdAt,updatedAt,closedAt,url`")
    parser.add_argument("--merge", action="store_true",
                        help="with --from-export: keep stored issues the export lacks (default: remove them)")
    parser.add_argument("--full", action="store_true",
                        help="list every issue again and remove deleted or transferred ones")
    parser.add_argument("--max-wait", type=float, default=MAX_RATE_WAIT, metavar="SECONDS",
                        help="longest rate-limit wait before stopping (resume later); default 3600")
    parser.add_argument("--no-index", action="store_true", help="store the issues, do not rebuild the index")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    return parser


def main(argv: list[str], settings: Settings) -> int:
    args = _parser().parse_args(argv)
    m = REPO_RE.match(args.repo.strip())
    if not m:
        print(f"ask ingest github: {args.repo!r} is not OWNER/REPO (e.g. sgl-project/sglang)", file=sys.stderr)
        return 2
    repo = f"{m.group(1)}/{m.group(2)}"

    def say(text: str) -> None:
        if not args.quiet:
            print(f"github {repo}: {text}", file=sys.stderr)

    token = ""
    if args.from_export and not args.from_export.is_file():
        print(f"ask ingest github: --from-export {args.from_export}: no such file", file=sys.stderr)
        return 2
    if not args.from_export:
        token = os.environ.get(args.token_env, "").strip()
        if not token:
            print(f"ask ingest github: set {args.token_env} to a GitHub token (read access to public "
                  "repositories is enough), or import a file with --from-export FILE", file=sys.stderr)
            return 2
    store = IssueStore(repo_folder(settings, repo))
    try:
        with store.lock():
            if args.from_export:
                stats = import_export(store, repo, args.from_export, merge=args.merge)
            else:
                client = GitHubClient(args.api_url, token, token_env=args.token_env, max_wait=args.max_wait, say=say)
                try:
                    stats = sync_repo(store, client, repo, full=args.full, say=say)
                finally:
                    client.close()
    except GitHubError as exc:
        resumable = " Progress is saved: run the same command again to resume." if isinstance(exc, Interrupted) else ""
        print(f"ask ingest github: {exc}.{resumable}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ask ingest github: interrupted. Progress is saved: run the same command again to resume.",
              file=sys.stderr)
        return 130
    print(summary_line(stats, store), file=sys.stderr)
    if args.no_index:
        return 0
    built = ingest_kb(settings, progress=not args.quiet)
    print(f"Indexed {built.units} units ({built.chunks} chunks) into {settings.index_dir}: embedded "
          f"{built.embedded}, reused {built.reused}, removed {built.removed_units} units, {built.seconds:.1f} s"
          + (f", {built.chunks_per_second:.0f} chunks/s" if built.embedded else ""), file=sys.stderr)
    return 0


def summary_line(stats: SyncStats, store: IssueStore) -> str:
    stored = len(store.updated_at())
    parts = [f"{stats.new} new", f"{stats.updated} updated", f"{stats.unchanged} unchanged",
             f"{stats.removed} removed"]
    extra = [f"{stats.pull_requests} pull requests skipped"] if stats.pull_requests else []
    if stats.requests:
        extra.append(f"{stats.requests} requests")
    if stats.retries:
        extra.append(f"{stats.retries} retries")
    if stats.rate_limit_waits:
        extra.append(f"{stats.rate_limit_waits} rate-limit waits")
    if stats.resumed_at_page:
        extra.append(f"resumed at page {stats.resumed_at_page}")
    return (f"GitHub {stats.repo}: {', '.join(parts)} ({', '.join(extra + [f'{stats.seconds:.1f} s'])}); "
            f"{stored} issues stored in {store.folder}")
