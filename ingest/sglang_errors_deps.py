"""The dependency pins of each SGLang release: wheel METADATA plus the version checks in its code.

``Requires-Dist`` lines give the pins, per extra (``srt``, ``all``, ``runtime_common``, ...);
an extra that pulls in another one (``sglang[runtime_common]; extra == "srt"``) is resolved, so
a package lists every extra that installs it. Import-time checks in the code add minimums
the metadata may not state: ``assert_pkg_version("sgl-kernel", "0.1.0", ...)``,
``check_pkg_version_at_least(...)`` and ``if torch.__version__ < "2.5": raise ...``-style
guards. ``ingest.sglang_errors`` writes the result as kb/sglang_deps.json:
release -> package -> {spec, extra, extras, pip_extras?, source: "metadata" | "code:<path>", ...}.
``python -m ingest.sglang_errors_deps`` rebuilds only that file from the cached wheels (the full
``python -m ingest.sglang_errors`` also rebuilds the message registry, which takes much longer).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from email.parser import Parser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

DEFAULT_OUT_DIR = Path(__file__).resolve().parent.parent / "kb"
DEPS_FILE = "sglang_deps.json"
OLDEST_RELEASE = Version("0.4.0")   # the oldest release the registries read

EXTRA_MARKER = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")
EXTRA_CLAUSE = re.compile(r"""\s*(?:\band\s+)?\(?\s*extra\s*==\s*['"][^'"]+['"]\s*\)?(?:\s+and\b)?""")
# Extras listed first win when a package is pinned differently in several extras.
EXTRA_PRIORITY = ["srt", "runtime-common", "all", "blackwell", "srt-hip", "srt-npu", "srt-xpu", "srt-hpu", "srt-cpu"]
CODE_CHECK_HINT = re.compile(r"assert_pkg_version|check_pkg_version|__version__|version\(")
VERSION_FUNCTIONS = {"version", "parse", "Version", "parse_version"}
# Import name -> distribution name, for `X.__version__` checks.
MODULE_DISTRIBUTIONS = {
    "torch": "torch", "triton": "triton", "transformers": "transformers",
    "flashinfer": "flashinfer-python", "flash_attn": "flash-attn", "bitsandbytes": "bitsandbytes",
    "vllm": "vllm", "xgrammar": "xgrammar", "outlines": "outlines", "sgl_kernel": "sgl-kernel",
    "deep_gemm": "deep-gemm", "deep_ep": "deep-ep", "mooncake": "mooncake-transfer-engine",
    "llguidance": "llguidance", "torchao": "torchao", "numpy": "numpy", "gguf": "gguf",
    "huggingface_hub": "huggingface-hub", "aiter": "aiter", "mlx": "mlx", "peft": "peft",
}  # fmt: skip
# What a failing check means: `installed < v` raising -> the code needs ">= v".
INVERSE_OPS = {ast.Lt: ">=", ast.LtE: ">", ast.Gt: "<=", ast.GtE: "<"}


def requirements(metadata: str) -> list[Requirement]:
    out = []
    for line in Parser().parsestr(metadata).get_all("Requires-Dist") or []:
        try:
            out.append(Requirement(line))
        except InvalidRequirement:
            continue
    return out


def metadata_pins(metadata: str) -> dict[str, dict]:
    """package -> {spec, extra, extras, source, marker?} from one wheel's METADATA."""
    direct: dict[str | None, list[Requirement]] = {}
    includes: dict[str, set[str]] = {}
    for requirement in requirements(metadata):
        marker = str(requirement.marker) if requirement.marker else ""
        extra_match = EXTRA_MARKER.search(marker)
        extra = canonicalize_name(extra_match.group(1)) if extra_match else None
        if canonicalize_name(requirement.name) == "sglang":
            if extra:
                includes.setdefault(extra, set()).update(canonicalize_name(e) for e in requirement.extras)
            continue
        direct.setdefault(extra, []).append(requirement)

    def reached(extra: str, seen: frozenset = frozenset()) -> set[str]:
        """The extras one extra installs, itself included."""
        out = {extra}
        for inner in includes.get(extra, ()):
            if inner not in seen:
                out |= reached(inner, seen | {extra})
        return out

    all_extras = set(includes) | {e for e in direct if e}
    installed_by = {extra: reached(extra) for extra in all_extras}

    def rank(extra: str | None) -> tuple:
        if extra is None:
            return (0, 0, "")
        return (1, EXTRA_PRIORITY.index(extra) if extra in EXTRA_PRIORITY else len(EXTRA_PRIORITY), extra)

    pins: dict[str, dict] = {}
    for extra in sorted(direct, key=rank):
        for requirement in direct[extra]:
            name = canonicalize_name(requirement.name)
            spec = str(requirement.specifier)
            marker = EXTRA_CLAUSE.sub("", str(requirement.marker)).strip() if requirement.marker else ""
            pulled_in_by = sorted(e for e, reach in installed_by.items() if extra in reach) if extra else []
            entry = pins.get(name)
            if entry is None:
                entry = pins[name] = {"spec": spec, "extra": extra, "extras": pulled_in_by, "source": "metadata"}
                if requirement.extras:
                    # The package's own extras select a build (flashinfer_python[cu13]): an install
                    # command without them gets another variant.
                    entry["pip_extras"] = sorted(requirement.extras)
                if marker:
                    entry["marker"] = marker
                continue
            entry["extras"] = sorted(set(entry["extras"]) | set(pulled_in_by))
            if spec != entry["spec"] or marker != entry.get("marker", ""):
                variant = {"spec": spec, "extra": extra}
                if marker:
                    variant["marker"] = marker
                if variant not in entry.setdefault("variants", []):
                    entry["variants"].append(variant)
    return pins


# --------------------------------------------------------------------------- code checks


def string_value(node: ast.AST) -> str | None:
    """'1.2' from "1.2", version.parse("1.2"), Version("1.2")."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Call) and len(node.args) == 1:
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if func in VERSION_FUNCTIONS:
            return string_value(node.args[0])
    return None


def checked_package(node: ast.AST) -> str | None:
    """The distribution a version expression reads: torch.__version__, version("flashinfer_python")."""
    if isinstance(node, ast.Attribute) and node.attr == "__version__" and isinstance(node.value, ast.Name):
        return MODULE_DISTRIBUTIONS.get(node.value.id)
    if isinstance(node, ast.Call) and len(node.args) == 1:
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if func == "version":
            value = string_value(node.args[0])
            return canonicalize_name(value) if value else None
        if func in VERSION_FUNCTIONS:
            return checked_package(node.args[0])
    return None


def raises_or_warns(statements: list[ast.stmt]) -> bool:
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Raise):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in ("error", "warning", "warn", "critical"):
                    return True
    return False


def code_checks(sources: dict[str, str]) -> list[dict]:
    """Version requirements SGLang's own code enforces (sglang/ files only)."""
    found: list[dict] = []
    for path, source in sources.items():
        if not path.startswith("sglang/") or "/test" in path or not CODE_CHECK_HINT.search(source):
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in ("assert_pkg_version", "check_pkg_version_at_least") and len(node.args) >= 2:
                    package, minimum = string_value(node.args[0]), string_value(node.args[1])
                    if package and minimum:
                        check = {"package": canonicalize_name(package), "spec": f">={minimum}",
                                 "source": f"code:{path}", "check": name, "line": node.lineno}  # fmt: skip
                        if len(node.args) > 2:
                            hint = string_value(node.args[2])
                            if hint:
                                check["hint"] = hint
                        found.append(check)
            elif isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
                compare = node.test
                if len(compare.ops) != 1 or type(compare.ops[0]) not in INVERSE_OPS:
                    continue
                package = checked_package(compare.left)
                bound = string_value(compare.comparators[0])
                if not package or not bound or not raises_or_warns(node.body):
                    continue
                found.append({"package": package, "spec": f"{INVERSE_OPS[type(compare.ops[0])]}{bound}",
                              "source": f"code:{path}", "check": ast.unparse(compare), "line": node.lineno})  # fmt: skip
    found.sort(key=lambda c: (c["package"], c["source"], c["line"]))
    return found


def release_deps(metadata: str, checks: list[dict]) -> dict[str, dict]:
    """package -> entry; a package only the code checks gets a code entry of its own."""
    pins = metadata_pins(metadata)
    for check in checks:
        code = {k: check[k] for k in ("spec", "source", "check", "line", "hint") if k in check}
        entry = pins.get(check["package"])
        if entry is None:
            entry = pins[check["package"]] = {"spec": check["spec"], "extra": None, "extras": [],
                                              "source": check["source"]}  # fmt: skip
        if code not in entry.setdefault("code", []):
            entry["code"].append(code)
    return dict(sorted(pins.items()))


def build_deps(per_release: dict[str, tuple[str, list[dict]]]) -> dict:
    """{"releases": {version: {package: entry}}} from (METADATA text, code checks) per release."""
    return {
        "format": 1,
        "generated_by": "python -m ingest.sglang_errors",
        "releases": {version: release_deps(metadata, checks) for version, (metadata, checks) in per_release.items()},
    }


def main(argv: list[str] | None = None) -> int:
    """Rebuild kb/sglang_deps.json alone from the cached sglang wheels (no download, no registry)."""
    from ingest.wheels import DEFAULT_CACHE_DIR, cached_versions, cached_wheel, read_sources, wheel_metadata

    parser = argparse.ArgumentParser(prog="python -m ingest.sglang_errors_deps", description=main.__doc__)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    args = parser.parse_args(argv)
    cache_dir = args.cache_dir.expanduser()
    versions = [v for v in cached_versions(cache_dir, "sglang") if Version(v) >= OLDEST_RELEASE]
    if not versions:
        print(f"no cached sglang wheels in {cache_dir}: run python -m ingest.sglang_errors first", file=sys.stderr)
        return 1
    per_release = {}
    for version in versions:
        wheel = cached_wheel(version, cache_dir)
        per_release[version] = (wheel_metadata(wheel), code_checks(read_sources(wheel)))
    deps = build_deps(per_release)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    deps_path = args.out_dir / DEPS_FILE
    deps_path.write_text(json.dumps(deps, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {deps_path} ({len(deps['releases'])} releases)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
