"""Dependency problems in a paste, and the exact pip command that fixes them for the user's release.

``dependency_advice(lines, sglang_version)`` finds the line that shows a dependency problem
(``ModuleNotFoundError: No module named 'sgl_kernel'``, ``cannot import name X from Y``,
SGLang's ``assert_pkg_version`` failures, "requires transformers>=...", "version mismatch",
an ``undefined symbol`` in a package's extension), reads the installed versions the paste
shows (``pip list`` / ``pip freeze`` / ``pip show`` / ``python -m sglang.check_env`` lines,
``site-packages/<pkg>-<version>.dist-info`` paths) and looks the package up in
``kb/sglang_deps.json`` (built by ``python -m ingest.sglang_errors`` from each release's wheel
METADATA and import-time version checks) for the user's SGLang release, or the nearest one.
The result is a ``DependencyAdvice`` whose ``install_command`` pins what that release pins.
Imports only the stdlib and ``packaging``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from assistant.resources import kb_file

DEFAULT_PATH = kb_file("sglang_deps.json")  # the checkout's kb/, else the one installed with the package
VERSION_TEXT = r"v?(\d+(?:\.\d+)+(?:[.-]?(?:post|rc|dev|a|b)\d*)*(?:\+[\w.]+)?)"
NAME_TEXT = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"

# Import name -> distribution names to try, in order (the first one the release pins wins).
IMPORT_TO_DISTRIBUTIONS = {
    "sgl_kernel": ["sgl-kernel", "sglang-kernel"],
    "sglang_kernel": ["sglang-kernel", "sgl-kernel"],
    "flashinfer": ["flashinfer-python"],
    "flashinfer_cubin": ["flashinfer-cubin"],
    "decord": ["decord", "decord2"],
    "cv2": ["opencv-python-headless", "opencv-python"],
    "PIL": ["pillow"],
    "yaml": ["pyyaml"],
    "zmq": ["pyzmq"],
    "google": ["protobuf"],
    "sklearn": ["scikit-learn"],
    "cuda": ["cuda-python"],
    "pynvml": ["nvidia-ml-py", "pynvml"],
    "mooncake": ["mooncake-transfer-engine"],
    "deep_gemm": ["deep-gemm", "sgl-kernel"],
    "deep_ep": ["deep-ep"],
    "vllm": ["vllm"],
    "torch_memory_saver": ["torch-memory-saver"],
    "openai_harmony": ["openai-harmony"],
    "prometheus_client": ["prometheus-client"],
    "hf_transfer": ["hf-transfer"],
    "huggingface_hub": ["huggingface-hub"],
    "compressed_tensors": ["compressed-tensors"],
    "partial_json_parser": ["partial-json-parser"],
    "nvidia": ["nvidia-cutlass-dsl"],
}  # fmt: skip
# SGLang's own packages: "No module named 'sglang.srt.x'" is a broken install of SGLang itself.
SGLANG_IMPORTS = {"sglang"}

PROBLEMS = [
    # SGLang's assert_pkg_version (srt/utils): installed too old / not installed.
    ("too old", re.compile(rf"({NAME_TEXT}) is installed with version {VERSION_TEXT}, which is less than "
                           rf"the minimum required version {VERSION_TEXT}")),
    ("missing", re.compile(rf"({NAME_TEXT}) with minimum required version {VERSION_TEXT} is not installed")),
    ("missing", re.compile(r"No module named ['\"]([\w.]+)['\"]")),
    ("incompatible", re.compile(r"cannot import name ['\"]?\w+['\"]? from ['\"]?([\w.]+)")),
    ("incompatible", re.compile(r"(?:site|dist)-packages/([\w]+)/[^\s:]*\.so[^:]*: undefined symbol")),
    ("version check", re.compile(rf"\b({NAME_TEXT}) version mismatch", re.I)),
    ("version check", re.compile(rf"\brequires? ({NAME_TEXT})\s*(?:>=|==|~=|>)\s*\d", re.I)),
    ("version check", re.compile(rf"\b({NAME_TEXT})\s*(?:>=|==|~=)\s*\d[\w.]*\s+is required", re.I)),
    ("version check", re.compile(rf"\b(?:upgrade|update|reinstall) (?:your )?({NAME_TEXT})(?: version)?\b", re.I)),
    ("too old", re.compile(r"(Transformers) does not recognize this architecture")),
]  # fmt: skip
# Words the generic patterns above may capture that are not packages.
NOT_PACKAGES = {"the", "your", "it", "to", "version", "python", "pip", "package", "packages", "this"}
SPECIFIER_ORDER = {"===": 0, "==": 0, "~=": 1, ">=": 2, ">": 3, "<=": 4, "<": 5, "!=": 6}


@dataclass(frozen=True)
class DependencyAdvice:
    """What to install for one dependency problem, pinned as the user's SGLang release pins it."""

    package: str  # distribution name (sgl-kernel, flashinfer-python, transformers, ...)
    problem: str  # missing | too old | incompatible | version check
    matched_line: str  # the user's line that shows the problem
    pinned_spec: str | None  # what the release requires, e.g. "==4.57.1" or ">=0.1.19,<0.2"; None: not a dependency
    installed_version: str | None  # what the paste shows installed, if it does
    sglang_version: str | None  # the user's SGLang version, if the paste shows it
    pins_release: str | None  # the registry release whose pins were used (nearest to sglang_version)
    install_command: str  # e.g. pip install "transformers==4.57.1"
    extra: str | None = None  # the sglang extra that installs it (srt, runtime-common, ...), None: base install
    source: str = ""  # "metadata" or "code:<path>" (an import-time check in SGLang's code)
    satisfied: bool | None = None  # whether installed_version meets pinned_spec


class DependencyPins:
    """kb/sglang_deps.json: release -> package -> pin."""

    def __init__(self, data: dict):
        self.releases: dict[str, dict[str, dict]] = data["releases"]
        self.versions = sorted((Version(v) for v in self.releases), key=lambda v: v)

    @classmethod
    def load(cls, path: str | Path | None = None) -> DependencyPins:
        return _load_cached(str(Path(path).resolve()) if path else str(DEFAULT_PATH))

    def nearest_release(self, version: str | None) -> str:
        """The registry release for `version`: exact, else the nearest older one, else the latest."""
        if version:
            try:
                wanted = Version(Version(version).base_version)
            except InvalidVersion:
                wanted = None
            if wanted is not None:
                older = [v for v in self.versions if v <= wanted]
                return str(older[-1] if older else self.versions[0])
        return str(self.versions[-1])

    def pin(self, release: str, package: str) -> dict | None:
        return self.releases[release].get(package)


@lru_cache(maxsize=4)
def _load_cached(path: str) -> DependencyPins:
    with open(path, encoding="utf-8") as handle:
        return DependencyPins(json.load(handle))


def ordered_spec(spec: str) -> str:
    """">=0.7.11,<0.8.0" rather than packaging's "<0.8.0,>=0.7.11": the lower bound reads first."""
    try:
        specifiers = list(SpecifierSet(spec))
    except InvalidSpecifier:
        return spec
    specifiers.sort(key=lambda s: (SPECIFIER_ORDER.get(s.operator, 9), s.version))
    return ",".join(str(s) for s in specifiers)


def install_command(package: str, spec: str | None) -> str:
    if not spec:
        return f'pip install "{package}"'
    return f'pip install "{package}{ordered_spec(spec)}"'


def installed_versions(lines: list[str], names: Iterable[str]) -> dict[str, str]:
    """Versions the paste shows for these distributions (pip list/freeze/show, check_env, paths)."""
    found: dict[str, str] = {}
    for name in names:
        spelled = sorted({name, name.replace("-", "_"), name.replace("_", "-")}, key=len, reverse=True)
        alternatives = "|".join(re.escape(s) for s in spelled)
        patterns = [
            re.compile(rf"^\s*(?:{alternatives})\s*(?:==|:|\s)\s*{VERSION_TEXT}\s*$", re.I),  # pip list, check_env
            re.compile(rf"(?<![\w-])(?:{alternatives})==\s*{VERSION_TEXT}", re.I),  # pip freeze, inline
            re.compile(rf"(?:site|dist)-packages/(?:{alternatives})-{VERSION_TEXT}\.dist-info", re.I),
            re.compile(rf"\b(?:{alternatives})\s+version\s*:?\s*{VERSION_TEXT}", re.I),
        ]
        for number, line in enumerate(lines):
            for pattern in patterns:
                match = pattern.search(line)
                if match:
                    found[name] = match.group(1)
            if re.match(rf"^\s*Name:\s*(?:{alternatives})\s*$", line, re.I) and number + 1 < len(lines):
                show = re.match(rf"^\s*Version:\s*{VERSION_TEXT}", lines[number + 1])
                if show:
                    found[name] = show.group(1)
    return found


def sglang_version_in(lines: list[str]) -> str | None:
    """The SGLang version the paste shows (pip list, check_env, docker tag, banner)."""
    patterns = [
        re.compile(r"^\s*sglang\s*(?:==|:|\s)\s*" + VERSION_TEXT + r"\s*$", re.I),
        re.compile(r"(?<![\w-])sglang==\s*" + VERSION_TEXT, re.I),
        re.compile(r"lmsysorg/sglang:v?" + VERSION_TEXT, re.I),
        re.compile(r"\bsglang(?:\s+version)?\s*[:=]\s*" + VERSION_TEXT, re.I),
        re.compile(r"(?:site|dist)-packages/sglang-" + VERSION_TEXT + r"\.dist-info", re.I),
    ]
    for line in lines:
        for pattern in patterns:
            match = pattern.search(line)
            if match:
                return match.group(1)
    return None


def find_problem(lines: list[str]) -> tuple[str, str, str, re.Match] | None:
    """(import or distribution name, problem, line, match) of the last dependency problem shown."""
    for line in reversed(lines):
        for problem, pattern in PROBLEMS:
            match = pattern.search(line)
            if match:
                name = match.group(1)
                root = name.split(".")[0]
                if root.lower() in NOT_PACKAGES or root in SGLANG_IMPORTS:
                    continue
                return root, problem, line.strip(), match
    return None


def distribution_for(name: str, release_pins: dict[str, dict]) -> str:
    """The distribution an import or package name refers to, preferring one the release pins."""
    candidates = IMPORT_TO_DISTRIBUTIONS.get(name, []) + [canonicalize_name(name)]
    for candidate in candidates:
        if canonicalize_name(candidate) in release_pins:
            return canonicalize_name(candidate)
    return canonicalize_name(candidates[0])


def dependency_advice(
    lines: str | Iterable[str], sglang_version: str | None = None, pins: DependencyPins | None = None
) -> DependencyAdvice | None:
    """Advice for the dependency problem the paste shows, or None when it shows none."""
    lines = lines.splitlines() if isinstance(lines, str) else list(lines)
    found = find_problem(lines)
    if found is None:
        return None
    name, problem, line, match = found
    pins = pins or DependencyPins.load()
    sglang_version = sglang_version or sglang_version_in(lines)
    release = pins.nearest_release(sglang_version)
    release_pins = pins.releases[release]
    package = distribution_for(name, release_pins)
    pin = release_pins.get(package)
    spec = None
    if pin:
        spec = pin["spec"] or next((c["spec"] for c in pin.get("code", []) if c.get("spec")), None) or None
    installed = installed_versions(lines, [package, name]).get(package) or installed_versions(lines, [name]).get(name)
    if installed is None and problem == "too old" and match.re.groups >= 2:
        installed = match.group(2)  # assert_pkg_version states the installed version itself
    return DependencyAdvice(
        package=package,
        problem=problem,
        matched_line=line,
        pinned_spec=ordered_spec(spec) if spec else None,
        installed_version=installed,
        sglang_version=sglang_version,
        pins_release=release,
        install_command=install_command(package, spec),
        extra=pin["extra"] if pin else None,
        source=pin["source"] if pin else "",
        satisfied=satisfies(installed, spec),
    )


def satisfies(installed: str | None, spec: str | None) -> bool | None:
    if not installed or not spec:
        return None
    try:
        return SpecifierSet(spec).contains(Version(installed), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None
