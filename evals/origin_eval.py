"""Origin, dependency and symbol scores: where an error message comes from, what to install, and
which releases have what an import or attribute error names.

    origin   `assistant.origin.match_origin` on evals/origin/cases.jsonl. A case whose error line
             SGLang emits (`sglang_message` true) is right when the origin is that SGLang module
             and function; any other case is right when no SGLang origin is claimed (SGLang does
             not emit that message). Also: the share of SGLang error lines that, alone, match any
             message of the registry, and the share of negatives whose library is named.
             Scored with the release the paste shows (None when it shows none, as a user's
             paste would be answered); also with the release the label was written for
             (`labelled_at`) given, which tells release ambiguity from wrong matches.
    deps     `assistant.deps.dependency_advice` on evals/deps/cases.jsonl: right package, pinned
             spec and install command. The release is the one the paste shows, else the one the
             reporter ran (`labelled_at`, from the report's date): the pins are labelled for it.
    symbols  `assistant.symbols.symbol_history` on evals/symbols/cases.jsonl: right module / name /
             attribute / parameter read from the error line, and exactly the labelled releases
             that have it (labelled from the release sources); for another library's error, no
             SGLang answer at all.
    resolutions  evals/resolutions.py's accuracy on its labelled threads, when that module exists.

`run_extras()` runs them all; each part that cannot run says why instead of failing the eval.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent
ORIGIN_CASES = ROOT / "origin" / "cases.jsonl"
DEPS_CASES = ROOT / "deps" / "cases.jsonl"
SYMBOL_CASES = ROOT / "symbols" / "cases.jsonl"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _module_name(path_or_module: str | None) -> str:
    """sglang/srt/server_args.py and sglang.srt.server_args name the same module."""
    text = (path_or_module or "").strip()
    return text.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def _same_function(found: str, expected: str | None) -> bool:
    """The labelled function, or a function defined inside it under that name (a label may give
    `smart_resize` for `Processor.process.smart_resize`); no label means module level."""
    expected = expected or "<module>"
    return found == expected or found.endswith("." + expected)


def score_origin(case: dict, origin) -> dict:
    claimed = origin is not None and origin.is_sglang
    found = {"package": origin.package if origin else None,
             "module": origin.module if claimed else None,
             "function": origin.function if claimed else None}
    if case["sglang_message"]:
        ok = (claimed and _module_name(origin.module) == _module_name(case["origin_module"])
              and _same_function(origin.function, case["origin_function"]))
    else:
        ok = not claimed
    return {"id": case["id"], "sglang_message": case["sglang_message"], "ok": bool(ok),
            "expected": {"package": case.get("origin_package"), "module": case.get("origin_module"),
                         "function": case.get("origin_function")}, "found": found}


def _matched(lines, version: str | None):
    """(match_origin's answer, None), or (None, the crash as text): a crash is a wrong answer
    that the report shows, never the end of the eval."""
    from assistant.origin import match_origin

    try:
        return match_origin(lines, version), None
    except Exception as exc:   # noqa: BLE001 - see the docstring
        return None, f"{type(exc).__name__}: {exc}"


def evaluate_origin(path: Path = ORIGIN_CASES) -> dict:
    rows, with_release, crashes = [], [], []
    registry_hits = library_named = 0
    for case in _rows(path):
        origin, error = _matched(case["query"], case.get("sglang_version"))
        rows.append(score_origin(case, origin))
        if error:
            rows[-1]["error"] = error
            crashes.append(f"{case['id']}: {error}")
        if case["sglang_message"]:
            labelled, _ = _matched(case["query"], case.get("sglang_version") or case.get("labelled_at"))
            with_release.append(score_origin(case, labelled)["ok"])
            alone, error = _matched([case["error_line"]], case.get("sglang_version"))
            registry_hits += alone is not None and alone.is_sglang
            if error:
                crashes.append(f"{case['id']} (error line alone): {error}")
        elif origin is not None and origin.package == case.get("origin_package"):
            library_named += 1
    positives = [r for r in rows if r["sglang_message"]]
    negatives = [r for r in rows if not r["sglang_message"]]
    return {
        "cases": len(rows), "sglang_messages": len(positives), "negatives": len(negatives),
        "accuracy": _share(sum(r["ok"] for r in rows), len(rows)),
        "origin_accuracy": _share(sum(r["ok"] for r in positives), len(positives)),
        "origin_accuracy_labelled_release": _share(sum(with_release), len(with_release)),
        "no_origin_accuracy": _share(sum(r["ok"] for r in negatives), len(negatives)),
        "false_sglang_origins": sum(1 for r in negatives if not r["ok"]),
        "crashes": len(crashes), "crash_messages": crashes,
        "registry_match": _share(registry_hits, len(positives)),
        "library_named": _share(library_named, len(negatives)),
        "failures": [r for r in rows if not r["ok"]],
        "source": str(path),
    }


def _package(name: str | None) -> str | None:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name) if name else None


def _spec(spec: str | None) -> frozenset | None:
    """A specifier as a set of clauses: ">=1,<2" and "<2, >=1" are the same pin."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not spec:
        return None
    try:
        return frozenset(str(s) for s in SpecifierSet(spec))
    except InvalidSpecifier:
        return frozenset([spec.replace(" ", "")])


def _command(command: str | None):
    """What a pip command installs, and from where: the requirements (name, extras, specifier)
    and the index options; quoting and name spelling (flashinfer_python / flashinfer-python) do
    not matter, a missing package, extra, pin or index URL does."""
    import shlex

    from packaging.requirements import InvalidRequirement, Requirement

    if not command:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    requirements, options, i = set(), set(), 0
    words = [w for w in words if w not in ("pip", "pip3", "install", "python", "python3", "-m")]
    while i < len(words):
        word = words[i]
        if word.startswith("-"):
            flag, _, value = word.partition("=")
            if not value and flag in ("-i", "--index-url", "--extra-index-url", "-f", "--find-links"):
                value, i = (words[i + 1] if i + 1 < len(words) else ""), i + 1
            options.add((flag.replace("--index-url", "-i").replace("--find-links", "-f"), value.rstrip("/")))
        else:
            try:
                req = Requirement(word)
                requirements.add((_package(req.name), frozenset(req.extras), _spec(str(req.specifier))))
            except InvalidRequirement:
                requirements.add((word, frozenset(), None))
        i += 1
    return frozenset(requirements), frozenset(options)


def evaluate_deps(path: Path = DEPS_CASES) -> dict:
    from assistant.deps import dependency_advice

    rows = []
    for case in _rows(path):
        try:
            advice = dependency_advice(case["query"], case.get("sglang_version") or case.get("labelled_at"))
            error = None
        except Exception as exc:   # noqa: BLE001 - a crash is a wrong answer, shown in the report
            advice, error = None, f"{type(exc).__name__}: {exc}"
        found = {"package": advice.package if advice else None,
                 "pinned_spec": advice.pinned_spec if advice else None,
                 "install_command": advice.install_command if advice else None}
        checks = {"package": _package(found["package"]) == _package(case.get("package")),
                  "pinned_spec": _spec(found["pinned_spec"]) == _spec(case.get("pinned_spec")),
                  "install_command": _command(found["install_command"]) == _command(case.get("install_command"))}
        if error:
            found["error"] = error
        rows.append({"id": case["id"], "ok": all(checks.values()), "checks": checks, "found": found,
                     "expected": {key: case.get(key) for key in found}})
    n = len(rows)
    return {
        "cases": n,
        "accuracy": _share(sum(r["ok"] for r in rows), n),
        "package_accuracy": _share(sum(r["checks"]["package"] for r in rows), n),
        "spec_accuracy": _share(sum(r["checks"]["pinned_spec"] for r in rows), n),
        "command_accuracy": _share(sum(r["checks"]["install_command"] for r in rows), n),
        "no_advice": sum(1 for r in rows if r["found"]["package"] is None),
        "failures": [r for r in rows if not r["ok"]],
        "source": str(path),
    }


def _owner(text: str | None) -> str:
    """`Engine.__init__`, `Engine()` and `Engine` name the same owner of a parameter."""
    return (text or "").strip().removesuffix("()").removesuffix(".__init__").removeprefix("multimodal_gen:")


def evaluate_symbols(path: Path = SYMBOL_CASES) -> dict:
    from assistant.symbols import symbol_history

    rows = []
    for case in _rows(path):
        lines = case["query"].splitlines()
        try:
            found, error = symbol_history(lines, case.get("sglang_version")), None
        except Exception as exc:   # noqa: BLE001 - a crash is a wrong answer, shown in the report
            found, error = None, f"{type(exc).__name__}: {exc}"
        if case.get("not_sglang"):
            checks = {"no_answer": found is None}
        else:
            same = found is not None and found.kind == case["kind"] and (
                found.name in (case.get("owner"), case.get("name")) if case["kind"] == "module"
                else found.name == case.get("name") and _owner(found.owner) == _owner(case.get("owner")))
            checks = {"symbol": bool(same), "releases": bool(same) and list(found.releases) == list(case["releases"])}
        row = {"id": case["id"], "ok": all(checks.values()), "checks": checks, "not_sglang": bool(case.get("not_sglang")),
               "expected": {k: case.get(k) for k in ("kind", "owner", "name", "releases")},
               "found": None if found is None else {"kind": found.kind, "owner": found.owner, "name": found.name,
                                                    "releases": list(found.releases)}}
        if error:
            row["error"] = error
        rows.append(row)
    positives = [r for r in rows if not r["not_sglang"]]
    negatives = [r for r in rows if r["not_sglang"]]
    return {
        "cases": len(rows), "sglang_cases": len(positives), "negatives": len(negatives),
        "accuracy": _share(sum(r["ok"] for r in rows), len(rows)),
        "symbol_accuracy": _share(sum(r["checks"]["symbol"] for r in positives), len(positives)),
        "release_accuracy": _share(sum(r["checks"]["releases"] for r in positives), len(positives)),
        "no_answer_accuracy": _share(sum(r["ok"] for r in negatives), len(negatives)),
        "failures": [r for r in rows if not r["ok"]],
        "source": str(path),
    }


def evaluate_resolutions() -> dict:
    try:
        from evals import resolutions
    except ImportError as exc:
        return {"error": f"evals/resolutions.py not available ({exc})"}
    result = resolutions.run()
    fragment = getattr(resolutions, "html_fragment", None)
    return {**result, "html": fragment(result) if fragment else ""}


def _guarded(part) -> dict:
    """A part's scores, or why it could not run: an extra never stops the main eval."""
    try:
        return part()
    except Exception as exc:   # noqa: BLE001 - reported in the output, the eval goes on
        return {"error": f"{type(exc).__name__}: {exc}"}


def run_extras(origin_path: Path = ORIGIN_CASES, deps_path: Path = DEPS_CASES,
               resolutions: bool = True, symbols_path: Path = SYMBOL_CASES) -> dict:
    extras = {"origin": _guarded(lambda: evaluate_origin(origin_path)),
              "deps": _guarded(lambda: evaluate_deps(deps_path))}
    if symbols_path.exists():
        extras["symbols"] = _guarded(lambda: evaluate_symbols(symbols_path))
    if resolutions:
        extras["resolutions"] = _guarded(evaluate_resolutions)
    return extras


def _pct(value) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _part_line(name: str, part: dict | None, describe) -> str:
    """One extra as a terminal line, why it was not measured, or "" when it did not run."""
    if not part:
        return ""
    return f"{name}: not measured ({part['error']})" if "error" in part else describe(part)


def format_extras(extras: dict) -> str:
    """The extras as lines for the terminal."""
    lines = [_part_line("origin", extras.get("origin"), lambda d: (
        f"origin ({d['cases']} cases): right module+function {_pct(d['origin_accuracy'])} of "
        f"{d['sglang_messages']} SGLang messages ({_pct(d.get('origin_accuracy_labelled_release'))} given the "
        f"labelled release); no SGLang origin claimed {_pct(d['no_origin_accuracy'])} of {d['negatives']} other "
        f"messages; SGLang error lines matching a registry message {_pct(d['registry_match'])}"
        + (f"; match_origin crashed {d['crashes']} time(s)" if d.get("crashes") else "")))]
    lines += [_part_line("deps", extras.get("deps"), lambda d: (
                  f"deps ({d['cases']} cases): all right {_pct(d['accuracy'])}; package "
                  f"{_pct(d['package_accuracy'])}, pinned spec {_pct(d['spec_accuracy'])}, "
                  f"install command {_pct(d['command_accuracy'])}")),
              _part_line("symbols", extras.get("symbols"), lambda d: (
                  f"symbols ({d['cases']} cases): right symbol {_pct(d['symbol_accuracy'])} and exact "
                  f"releases {_pct(d['release_accuracy'])} of {d['sglang_cases']} SGLang errors; no SGLang "
                  f"answer for {_pct(d['no_answer_accuracy'])} of {d['negatives']} other libraries' errors")),
              _part_line("resolutions", extras.get("resolutions"), lambda d: (
                  f"resolutions ({d['threads']} threads): right {_pct(d['accuracy'])} "
                  f"(status {_pct(d.get('status_accuracy'))})"))]
    lines = [line for line in lines if line]
    return "\n".join(lines)


def html_section(extras: dict) -> str:
    """The extras as HTML sections for the eval report."""
    parts = []
    origin = extras.get("origin")
    if origin:
        if "error" in origin:
            parts.append(f"<h2>Error origin</h2><p>not measured: {html.escape(origin['error'])}</p>")
        else:
            rows = [("Right SGLang module and function", origin["origin_accuracy"], origin["sglang_messages"]),
                    ("... with the labelled release given", origin.get("origin_accuracy_labelled_release"),
                     origin["sglang_messages"]),
                    ("No SGLang origin for a message SGLang does not emit", origin["no_origin_accuracy"], origin["negatives"]),
                    ("SGLang error line alone matches a registry message", origin["registry_match"], origin["sglang_messages"]),
                    ("Other library named (negatives)", origin["library_named"], origin["negatives"]),
                    ("All origin cases", origin["accuracy"], origin["cases"])]
            fails = "".join(f"<li><code>{html.escape(f['id'])}</code>: expected {html.escape(str(f['expected']))}, "
                            f"found {html.escape(str(f['found']))}</li>" for f in origin["failures"])
            crashes = "".join(f"<li>{html.escape(c)}</li>" for c in origin.get("crash_messages", []))
            parts.append("<h2>Error origin</h2>" + _share_table(rows)
                         + (f"<h3>match_origin crashed</h3><ul>{crashes}</ul>" if crashes else "")
                         + (f"<h3>Wrong ({len(origin['failures'])})</h3><ul>{fails}</ul>" if fails else ""))
    deps = extras.get("deps")
    if deps:
        parts.append(_part_html("Dependencies", deps, lambda d: [
            ("Package", d["package_accuracy"], d["cases"]), ("Pinned spec", d["spec_accuracy"], d["cases"]),
            ("Install command", d["command_accuracy"], d["cases"]), ("All three", d["accuracy"], d["cases"])]))
    sym = extras.get("symbols")
    if sym:
        parts.append(_part_html("SGLang releases of a missing symbol", sym, lambda d: [
            ("Right module / name / attribute / parameter", d["symbol_accuracy"], d["sglang_cases"]),
            ("Exactly the labelled releases", d["release_accuracy"], d["sglang_cases"]),
            ("No SGLang answer for another library's error", d["no_answer_accuracy"], d["negatives"]),
            ("All symbol cases", d["accuracy"], d["cases"])]))
    res = extras.get("resolutions")
    if res:
        if "error" in res:
            parts.append(f"<h2>Issue resolutions</h2><p>not measured: {html.escape(res['error'])}</p>")
        else:
            parts.append(res.get("html") or f"<h2>Issue resolutions</h2><p>accuracy {_pct(res['accuracy'])}</p>")
    return "".join(parts)


def _part_html(title: str, part: dict, rows_of) -> str:
    """One extra's section: its share table and its wrong cases, or why it was not measured."""
    if "error" in part:
        return f"<h2>{title}</h2><p>not measured: {html.escape(part['error'])}</p>"
    fails = "".join(f"<li><code>{html.escape(f['id'])}</code>: expected {html.escape(str(f['expected']))}, "
                    f"found {html.escape(str(f['found']))}</li>" for f in part["failures"])
    return (f"<h2>{title}</h2>" + _share_table(rows_of(part))
            + (f"<h3>Wrong ({len(part['failures'])})</h3><ul>{fails}</ul>" if fails else ""))


def _share_table(rows) -> str:
    body = "".join(f"<tr><td>{html.escape(name)}</td><td>{_pct(value)}</td><td>{n}</td></tr>"
                   for name, value, n in rows)
    return f"<table><tr><th>measure</th><th>share</th><th>of cases</th></tr>{body}</table>"
