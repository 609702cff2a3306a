"""Build kb/sglang_errors.jsonl.gz (where each SGLang message comes from) and kb/sglang_deps.json.

Run as ``python -m ingest.sglang_errors [--versions 0.4.1 0.5.9 ...] [--out-dir kb/]``.

For every SGLang release with a wheel (default: every cached wheel from 0.4.0 on, plus the
latest PyPI release, fetched through ``ingest.wheels``) it reads the ``.py`` files from the
zip, never importing them, and collects every message site (``ingest.sglang_errors_extract``):
raises (also exceptions built to be raised later), asserts, error/warning log calls and info
logs that report a failure, argparse errors. The Python parts of cached
``sglang-router`` and ``sgl-kernel`` wheels are read the same way (their own release lists).
A file whose content did not change between releases is parsed once.

Messages are stored once (kb/sglang_errors.jsonl.gz: template, module, function, kind,
releases, key words; kb/sglang_errors.jsonl.details.gz: condition, source context, line, read
only when a message matched), with the releases they exist in as index ranges into the
package's release list; a site whose text changed is a new message with its own range.
``assistant/origin.py`` matches a user's error lines against it.

``ingest.sglang_errors_deps`` writes the dependency pins of each release next to it.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

from packaging.version import Version

from assistant.origin import key_words, message_shape
from ingest.sglang_errors_deps import DEPS_FILE, OLDEST_RELEASE, build_deps, code_checks
from ingest.sglang_errors_extract import MessageSite, extract_sites
from ingest.wheels import (DEFAULT_CACHE_DIR, cached_versions, cached_wheel, fetch_wheel, latest_release, read_sources,
                          wheel_metadata)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT_DIR = REPO_ROOT / "kb"
# JSON lines, gzip: line 0 a header (tables, release lists, word index), then one line per
# message; the details file has one line per message in the same order. Lines are parsed
# only when a query needs them, which keeps loading fast.
ERRORS_FILE = "sglang_errors.jsonl.gz"
DETAILS_FILE = "sglang_errors.jsonl.details.gz"
DETAIL_BLOCK = 128  # details rows per gzip member: one member is read per matched message
FORMAT = 1
# sgl-kernel wheels are ~500 MB each; only what is already cached is read (see the report).
SIDE_PACKAGES = {
    "sglang-router": ("sglang_router", DEFAULT_CACHE_DIR.parent / "router"),
    "sgl-kernel": ("sgl_kernel", DEFAULT_CACHE_DIR.parent / "sgl-kernel"),
}
# Import roots each package's wheel ships that are its own code (sgl-kernel vendors others).
OWN_ROOTS = {"sglang": ("sglang/",), "sglang-router": ("sglang_router/",), "sgl-kernel": ("sgl_kernel/",)}
# Developer-only code paths: their messages never reach a server user.
SKIPPED_PATHS = re.compile(r"(^|/)(tests?|test_utils?|benchmark|bench)(/|\.py$)|/test_[^/]*\.py$")
STOP_WORDS = frozenset(
    "that this with from have should must when than then only been does were will your please "
    "support supported none true false self".split()
)  # fmt: skip
KEYS_PER_MESSAGE = 3  # all must occur on a fully matching line; a cut-short line needs two
# Row layouts. package/path/function/kind are indices into the document's tables; "kind" is
# "raise ValueError", "assert AssertionError", "log warning", "argparse SystemExit".
INDEX_FIELDS = ["package", "path", "function", "kind", "template", "releases", "keys"]
DETAIL_FIELDS = ["condition", "context", "line"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class MessageTable:
    """Messages of all packages, deduplicated across releases."""

    def __init__(self) -> None:
        self.releases: dict[str, list[str]] = {}
        self.entries: dict[tuple, dict] = {}
        self.site_cache: dict[str, list[MessageSite]] = {}  # content hash -> sites
        self.unparsable: set[str] = set()

    def add_release(self, package: str, version: str, sources: dict[str, str]) -> int:
        release_index = len(self.releases.setdefault(package, []))
        self.releases[package].append(version)
        roots = OWN_ROOTS[package]
        seen: set[tuple] = set()
        for path, source in sources.items():
            if not path.startswith(roots) or SKIPPED_PATHS.search(path):
                continue
            digest = hashlib.sha1(source.encode("utf-8", "surrogatepass")).hexdigest()
            sites = self.site_cache.get(digest)
            if sites is None:
                sites = extract_sites(source, path)
                if sites is None:
                    self.unparsable.add(f"{package} {version} {path}")
                    sites = []
                self.site_cache[digest] = sites
            for site in sites:
                # Same site, same visible text: one message even if a variable was renamed.
                key = (package, path, site.function, site.kind, site.exception, message_shape(site.template))
                if key in seen:
                    continue
                seen.add(key)
                entry = self.entries.setdefault(key, {"releases": []})
                entry["releases"].append(release_index)
                entry["site"] = site  # the newest release's condition, context and line win
        return len(seen)

    def to_json(self) -> tuple[dict, list[list], list[list]]:
        """(header, message rows, detail rows): what matching needs, and what only a match shows."""
        packages = list(self.releases)
        paths = sorted({key[1] for key in self.entries})
        functions = sorted({key[2] for key in self.entries})
        kinds = sorted({f"{key[3]} {key[4]}" for key in self.entries})
        document_frequency = collections.Counter()
        words_of = {}
        for key in self.entries:
            words = key_words(self.entries[key]["site"].template) - STOP_WORDS
            words_of[key] = words
            document_frequency.update(words)
        path_index = {path: i for i, path in enumerate(paths)}
        function_index = {name: i for i, name in enumerate(functions)}
        kind_index = {name: i for i, name in enumerate(kinds)}
        rows, details = [], []
        order = sorted(self.entries, key=lambda k: (packages.index(k[0]), k[1], self.entries[k]["site"].line))
        for key in order:
            entry = self.entries[key]
            site: MessageSite = entry["site"]
            # The rarest words: they select the few messages a line is compared with.
            keys = sorted(words_of[key], key=lambda w: (document_frequency[w], -len(w), w))
            rows.append([
                packages.index(key[0]), path_index[key[1]], function_index[key[2]],
                kind_index[f"{key[3]} {key[4]}"], site.template, ranges(entry["releases"]),
                keys[:KEYS_PER_MESSAGE],
            ])  # fmt: skip
            details.append([site.condition, site.context, site.line])
        index: dict[str, list[int]] = {}  # rarest key word -> messages: finds whole messages
        index_more: dict[str, list[int]] = {}  # the other key words: finds cut-short lines
        for number, row in enumerate(rows):
            for position, word in enumerate(row[-1]):
                (index if position == 0 else index_more).setdefault(word, []).append(number)
        header = {
            "format": FORMAT,
            "generated_by": "python -m ingest.sglang_errors",
            "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "packages": packages,
            "releases": self.releases,
            "paths": paths,
            "functions": functions,
            "kinds": kinds,
            "fields": INDEX_FIELDS,
            "detail_fields": DETAIL_FIELDS,
            "messages": len(rows),
            "index": index,
            "index_more": index_more,
        }
        return header, rows, details


def ranges_text(indices) -> str:
    """{0, 1, 2, 5, 6, 9} -> "0-2,5-6,9" (inclusive release-index ranges)."""
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges(list(indices)))


def ranges(indices: list[int]) -> list[list[int]]:
    """[0, 1, 2, 5, 6] -> [[0, 2], [5, 6]] (inclusive release-index ranges)."""
    out: list[list[int]] = []
    for index in sorted(set(indices)):
        if out and index == out[-1][1] + 1:
            out[-1][1] = index
        else:
            out.append([index, index])
    return out


def sglang_versions(requested: list[str] | None, cache_dir: Path) -> list[str]:
    if requested:
        return sorted({v.lstrip("vV") for v in requested}, key=Version)
    versions = {v for v in cached_versions(cache_dir, "sglang") if Version(v) >= OLDEST_RELEASE}
    latest = latest_release()
    if latest:
        versions.add(latest)
    return sorted(versions, key=Version)


def side_wheel(package: str, version: str) -> Path | None:
    import_name, cache_dir = SIDE_PACKAGES[package]
    return next(iter(sorted(cache_dir.glob(f"{import_name}-{version}-*.whl"))), None)


def build(versions: list[str], cache_dir: Path, side_versions: dict[str, list[str]]) -> tuple[dict, dict]:
    table = MessageTable()
    per_release_deps: dict[str, tuple[str, list[dict]]] = {}
    for number, version in enumerate(versions, 1):
        how = "cached" if cached_wheel(version, cache_dir) else "downloading"
        wheel = fetch_wheel(version, cache_dir)
        sources = read_sources(wheel)
        count = table.add_release("sglang", version, sources)
        per_release_deps[version] = (wheel_metadata(wheel), code_checks(sources))
        log(f"[{number}/{len(versions)}] sglang {version} ({how}): {count} messages, "
            f"{len(table.entries)} distinct so far")  # fmt: skip
    for package, package_versions in side_versions.items():
        for version in package_versions:
            wheel = side_wheel(package, version)
            if wheel is None:
                log(f"{package} {version}: no cached wheel, skipped")
                continue
            count = table.add_release(package, version, read_sources(wheel))
            log(f"{package} {version}: {count} messages")
    for name in sorted(table.unparsable)[:20]:
        log(f"warning: could not parse {name}")
    deps = build_deps(per_release_deps)
    return table.to_json(), deps


def json_lines(items: list) -> bytes:
    """Gzip of one compact JSON document per line, each line ending in a newline."""
    text = "".join(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n" for item in items)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def write_registry(out_dir: Path, header: dict, rows: list[list], details: list[list]) -> tuple[Path, Path]:
    """Write the message file and the details file (gzip members of DETAIL_BLOCK rows each).

    The details file is still one valid gzip stream of JSON lines; the header records where
    each member starts, so the matcher decompresses only the block of a matched message.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    errors_path, details_path = out_dir / ERRORS_FILE, out_dir / DETAILS_FILE
    members, offsets = [], [0]
    for start in range(0, len(details), DETAIL_BLOCK):
        members.append(json_lines(details[start : start + DETAIL_BLOCK]))
        offsets.append(offsets[-1] + len(members[-1]))
    header = {**header, "detail_block": DETAIL_BLOCK, "detail_offsets": offsets}
    errors_path.write_bytes(json_lines([header, *rows]))
    details_path.write_bytes(b"".join(members))
    return errors_path, details_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest.sglang_errors", description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", help="SGLang releases (default: every cached wheel + latest)")
    parser.add_argument("--router-versions", nargs="*", help="sglang-router releases (default: cached wheels)")
    parser.add_argument("--kernel-versions", nargs="*", help="sgl-kernel releases (default: cached wheels)")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    args = parser.parse_args(argv)
    cache_dir = args.cache_dir.expanduser()
    versions = sglang_versions(args.versions, cache_dir)
    side_versions = {
        "sglang-router": args.router_versions
        if args.router_versions is not None
        else cached_versions(SIDE_PACKAGES["sglang-router"][1], "sglang-router"),
        "sgl-kernel": args.kernel_versions
        if args.kernel_versions is not None
        else cached_versions(SIDE_PACKAGES["sgl-kernel"][1], "sgl-kernel"),
    }
    (header, rows, details), deps = build(versions, cache_dir, side_versions)
    errors_path, details_path = write_registry(args.out_dir, header, rows, details)
    deps_path = args.out_dir / DEPS_FILE
    # Releases stay in version order (0.4.9 before 0.4.10); packages are sorted by build_deps.
    deps_path.write_text(json.dumps(deps, indent=1, ensure_ascii=False) + "\n")
    log(f"wrote {errors_path} ({len(rows)} messages, {len(versions)} sglang releases, "
        f"{errors_path.stat().st_size / 1e6:.1f} MB + {details_path.stat().st_size / 1e6:.1f} MB details) "
        f"and {deps_path} ({len(deps['releases'])} releases)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
