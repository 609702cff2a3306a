"""Build kb/sglang_frames.json.gz: for every SGLang module, the releases it exists in and the
releases each function and method defined in it exists in.

Run as ``python -m ingest.sglang_frames`` (``python -m ingest.sglang_symbols`` runs it too). It is
derived from kb/sglang_symbols.json.gz, never from the wheels, and is what
``assistant/release_range.py`` reads to tell from a traceback's frames
(``File ".../sglang/srt/managers/scheduler_pp_mixin.py", line 122, in event_loop_pp``) which
releases the user can be running: a small table read in milliseconds, where the full registry
takes a third of a second.

A method's releases are the union over the classes of that name defined in the module (the
registry keys classes by name, not by module), so a range is never narrower than the truth.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from assistant.symbols import parse_ranges
from ingest.sglang_errors import ranges_text

DEFAULT_OUT_DIR = Path(__file__).resolve().parent.parent / "kb"
SYMBOLS_FILE = "sglang_symbols.json.gz"   # ingest.sglang_symbols writes it and then calls write_frames
FRAMES_FILE = "sglang_frames.json.gz"
FORMAT = 1


def frame_table(symbols: dict) -> dict:
    """{"releases": [...], "modules": {module: "<releases>\\t<function>=<releases>\\t..."}}, releases
    as index ranges into the release list ("0-5,9")."""
    defined: dict[str, dict[str, set[int]]] = {}

    def add(module: str, name: str, releases: set[int]) -> None:
        if releases:
            defined.setdefault(module, {}).setdefault(name, set()).update(releases)

    for key, text in symbols["functions"].items():
        name = key.split(":", 1)[-1]   # SGLang Diffusion's are keyed "multimodal_gen:Name"
        for module, span in json.loads(text).get("m", {}).items():
            add(module, name, parse_ranges(span))
    methods = symbols["methods"]
    for key, text in symbols["classes"].items():
        record = json.loads(text)
        for module, span in record.get("m", {}).items():
            in_module = parse_ranges(span)
            for attribute, attribute_span in record.get("a", {}).items():
                if f"{key}.{attribute}" in methods:   # methods only, not fields and self.X
                    add(module, attribute, in_module & parse_ranges(attribute_span))
    modules = {}
    for module, span in sorted(symbols["modules"].items()):
        functions = defined.get(module, {})
        # one string per module, split only when a traceback names it: loads in a few ms
        modules[module] = "\t".join([span] + [f"{name}={ranges_text(functions[name])}" for name in sorted(functions)])
    return {"format": FORMAT, "releases": symbols["releases"], "modules": modules}


def write_frames(out_dir: Path, symbols: dict) -> Path:
    path = out_dir / FRAMES_FILE
    text = json.dumps(frame_table(symbols), ensure_ascii=False, separators=(",", ":"))
    path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest.sglang_frames", description=__doc__.splitlines()[0])
    parser.add_argument("--kb-dir", type=Path, default=DEFAULT_OUT_DIR,
                        help=f"folder holding {SYMBOLS_FILE}; {FRAMES_FILE} is written beside it")
    args = parser.parse_args(argv)
    source = args.kb_dir / SYMBOLS_FILE
    if not source.exists():
        print(f"error: {source} not found; build it with python -m ingest.sglang_symbols", file=sys.stderr)
        return 2
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        symbols = json.load(handle)
    path = write_frames(args.kb_dir, symbols)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB, {len(symbols['modules'])} modules)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
