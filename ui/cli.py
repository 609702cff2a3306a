"""`ask`: paste an SGLang error trace or a server log, get the fix.

    ask "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    cat server.log | ask
    ask --log server.log --json
    ask ingest [--docs DIR]        build / update the index
    ask ingest github OWNER/REPO   sync GitHub issues into the index
    ask kb check                   validate the knowledge base
    ask kb show ID                 print one entry (a lead's steps, once you have confirmed it)
    ask eval --cases evals/cases   score answers on held-out cases
    ask serve                      the web UI on 127.0.0.1:7860
    ask slack                      the Slack bot
    ask feedback                   export stored thumbs up / down

Exit codes: 0 a known fix, 3 a lead or unknown (no fix shown), 2 usage error, 1 other error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from assistant.config import LANGUAGES, Settings
from assistant.control_chars import neutralize
from assistant.errors import UsageError
from assistant.redact import redact, redact_data
from ui.exits import EXIT_ABSTAIN, EXIT_ERROR, EXIT_OK, run_command
from ui.options import endpoint_options, index_options, settings_from_args

SUBCOMMANDS = ("ingest", "kb", "eval", "serve", "slack", "feedback")


def query_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ask", description=__doc__.split("\n\n")[0],
        epilog="\n".join(__doc__.split("\n\n")[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("text", nargs="*", help="the error text (or pipe it on stdin)")
    parser.add_argument("--log", type=Path, metavar="FILE", help="a whole server log to triage")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    endpoint_options(parser)
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    parser.add_argument("--version", action="store_true",
                        help="the package version, the KB version and the SGLang releases it covers")
    index_options(parser)
    return parser


def _analyze_input(args):
    """The triaged input: TEXT, --log FILE or stdin; a file or stdin is streamed, never read whole."""
    from assistant.pipeline import analyze_file, lines_from_bytes, lines_from_text
    from assistant.trace import analyze_lines

    if args.log:
        if args.text:
            raise UsageError("give either TEXT or --log FILE, not both")
        if args.log.is_dir():
            raise UsageError(f"--log {args.log}: is a folder; give the log file inside it")
        if not args.log.is_file():
            raise UsageError(f"--log {args.log}: no such file")
        progress = _log_progress(args.log.stat().st_size)
        analysis = analyze_file(args.log, progress)
        if progress:
            print(file=sys.stderr)   # end the progress line
    elif args.text:
        analysis = analyze_lines(lines_from_text(" ".join(args.text)))
    elif sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: run `ask \"<error text>\"`, `cat server.log | ask`, or `ask --log FILE`")
    else:
        analysis = analyze_lines(lines_from_bytes(sys.stdin.buffer))
    if analysis.total_lines == 0 or not any(analysis.masked_lines):
        raise UsageError("the input is empty: paste an error trace or pass a log with --log FILE")
    return analysis


def _log_progress(size: int):
    """A progress line on stderr while a log of more than a few MB is triaged (None otherwise)."""
    if size < 4_000_000:
        return None
    started = time.monotonic()

    def show(lines: int, characters: int) -> None:
        done = min(1.0, characters / size)
        elapsed = time.monotonic() - started
        eta = f", ~{elapsed / done - elapsed:.0f} s left" if 0.02 < done < 1.0 else ""
        print(f"\rTriaging the log: {done:4.0%} ({lines:,} lines){eta}   ", end="", file=sys.stderr, flush=True)
    return show


def _make_llm(settings: Settings, stderr):
    if not settings.use_llm:
        return None
    from assistant.llm import SGLangClient

    client = SGLangClient.from_settings(settings)
    if not client.available():
        return None
    return client


def _erase_preview(text: str, stream) -> None:
    """Clear the streamed (already verified) preview from the terminal, so the answer is not
    shown twice; rows count wrapped lines and double-width CJK characters."""
    import shutil
    import unicodedata

    width = max(20, shutil.get_terminal_size().columns)
    rows = sum(max(1, -(-sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)
                        // width)) for line in text.split("\n"))
    stream.write(f"\x1b[{rows - 1}F\x1b[J" if rows > 1 else "\r\x1b[J")
    stream.flush()


def print_version(settings: Settings) -> None:
    """`ask --version`: what a bug report needs, the package, the KB and the registries' releases."""
    from assistant.resources import (default_kb_dir, kb_fingerprint, package_version, registry_coverage,
                                     require_kb)

    print(f"sglang-ask {package_version()}")
    entries = require_kb(settings.kb_dir)
    coverage = registry_coverage(default_kb_dir())
    dated = max((c.generated for c in coverage if c.generated), default="undated")
    print(f"knowledge base: {entries} entries, content {kb_fingerprint(settings.kb_dir)}, data of {dated} "
          f"({settings.kb_dir})")
    built = (settings.index_dir / "manifest.json").exists()
    print(f"index: {settings.index_dir}" + ("" if built else " (not built yet: the first query builds it)"))
    labels = {"sglang_flags.json": "flag registry", "sglang_errors.jsonl.gz": "error origins",
              "sglang_deps.json": "dependency pins"}
    for c in coverage:
        span = (f"SGLang {c.releases[0]} - {c.releases[-1]} ({len(c.releases)} releases)" if c.releases
                else "missing or unreadable")
        print(f"{labels.get(c.name, c.name)}: {span}")


def run_query(argv: list[str]) -> int:
    parser = query_parser()
    args = parser.parse_args(argv)
    settings = settings_from_args(args)
    if args.version:
        print_version(settings)
        return EXIT_OK
    if args.no_llm:
        settings = settings.with_options(use_llm=False)
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and not args.json)
    analysis = _analyze_input(args)
    from assistant.resources import require_kb

    require_kb(settings.kb_dir)  # one line naming the folder, not a failure deep in the index build
    from assistant.pipeline import Assistant
    from assistant.render import render_text
    from ingest.update import ingest_kb

    assistant = Assistant.from_settings(settings, progress=lambda m: print(m, file=sys.stderr),
                                        build_index=ingest_kb)
    llm = _make_llm(settings, sys.stderr)
    note = None
    if settings.use_llm and llm is None and (args.endpoint or os.environ.get("ASK_ENDPOINT") or args.model):
        note = f"no SGLang endpoint answering at {settings.endpoint}; answering from the KB alone"
    assistant.llm = llm
    streamed = []

    def on_token(token: str) -> None:
        if not args.json:
            streamed.append(token)
            sys.stderr.write(token)
            sys.stderr.flush()

    if llm is not None and not args.json and sys.stderr.isatty():
        # a cold prompt on a busy server can take a while before the first verified piece
        # the model name comes from the server: data, cleaned like any other
        waiting = f"asking {neutralize(llm.model)} at {neutralize(settings.endpoint)} ...\n"
        streamed.append(waiting)
        sys.stderr.write(waiting)
        sys.stderr.flush()
    answer = assistant.answer(analysis, on_token=on_token if llm else None)
    if note and not answer.note:
        answer.note = note
    if streamed and sys.stderr.isatty() and sys.stdout.isatty() and not args.json:
        _erase_preview("".join(streamed), sys.stderr)   # the full answer below replaces it
    elif streamed:
        sys.stderr.write("\n\n")
    # the answer quotes the paste (launch command, evidence lines): its tokens and keys must not
    # travel on when the output is pasted into an issue or a chat
    if args.json:
        print(json.dumps(redact_data(answer.to_json()), ensure_ascii=False, indent=1))
    else:
        print(redact(render_text(answer, color=color)))
    return EXIT_OK if answer.outcome == "fix" else EXIT_ABSTAIN   # a lead is not an answer to act on


def run_kb(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ask kb", description="Knowledge-base tools.")
    sub = parser.add_subparsers(dest="cmd", required=True)
    check = sub.add_parser("check", help="validate every entry (schema, ids, sources, flags)")
    index_options(check)
    show = sub.add_parser("show", help="print one entry: its cause, steps, checks and sources")
    show.add_argument("entry_id", help="the entry's id, as an answer names it (kb:ID or ID)")
    show.add_argument("--lang", choices=LANGUAGES, help="en or zh (env ASK_LANG; auto is English)")
    index_options(show)
    args = parser.parse_args(argv)
    settings = settings_from_args(args)
    if args.cmd == "show":
        return _show_entry(settings, args.entry_id)
    from assistant.flags import FlagRegistry
    from assistant.kb import check_entries
    from assistant.origin import DEFAULT_PATH as MESSAGES_PATH
    from assistant.origin import ErrorRegistry

    # signatures are compared with SGLang's messages when the registry is built (warnings only)
    messages = ErrorRegistry.load() if MESSAGES_PATH.exists() else None
    report = check_entries(settings.entries_dir, FlagRegistry.load(), messages)
    for error in report.errors:
        print(error, file=sys.stderr)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    status = "FAILED" if report.errors else "ok"
    print(f"kb check: {len(report.entries)} entries valid, {len(report.errors)} problems, "
          f"{len(report.warnings)} warnings: {status}")
    return EXIT_OK if report.ok else EXIT_ERROR


def _show_entry(settings: Settings, entry_id: str) -> int:
    import difflib

    from assistant.entry_view import render_entry
    from assistant.kb import load_entries
    from assistant.resources import require_kb

    require_kb(settings.kb_dir)
    entries = {entry.id: entry for entry in load_entries(settings.entries_dir)}
    wanted = entry_id.strip().removeprefix("kb:")
    if wanted not in entries:
        close = difflib.get_close_matches(wanted, list(entries), n=3, cutoff=0.5)
        raise UsageError(f"no entry {neutralize(wanted)!r} in {settings.entries_dir}"
                         + (f"; did you mean {', '.join(close)}?" if close else "; ids are the file names in that folder"))
    print(neutralize(render_entry(entries[wanted], "zh" if settings.lang == "zh" else "en")))
    return EXIT_OK


def run_ingest(argv: list[str]) -> int:
    from ingest.cli import main

    parser = argparse.ArgumentParser(add_help=False)
    index_options(parser)
    args, rest = parser.parse_known_args(argv)
    return main(rest, settings_from_args(args))


def run_eval(argv: list[str]) -> int:
    from evals.run import main

    return main(argv)


def run_serve(argv: list[str]) -> int:
    from ui.web import main

    return main(argv)


def run_slack(argv: list[str]) -> int:
    from ui.slack import main

    return main(argv)


def run_feedback(argv: list[str]) -> int:
    from assistant.feedback import main

    return main(argv, Settings.from_env())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    handlers = {"ingest": run_ingest, "kb": run_kb, "eval": run_eval, "serve": run_serve,
                "slack": run_slack, "feedback": run_feedback}
    if argv and argv[0] in handlers:
        return run_command(lambda: handlers[argv[0]](argv[1:]))
    return run_command(lambda: run_query(argv))


if __name__ == "__main__":
    sys.exit(main())
