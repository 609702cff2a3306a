"""Dependency problems in a paste, and the exact pip command that fixes them for the user's release.

``dependency_advice(lines, sglang_version)`` finds the line that shows a dependency problem
(``ModuleNotFoundError: No module named 'sgl_kernel'``, ``cannot import name X from Y``,
SGLang's ``assert_pkg_version`` failures, pip's "sglang X requires vllm<=..., but you have ...",
"version mismatch", an ``undefined symbol`` in a package's compiled extension), reads the
installed versions the paste shows (``pip list`` / ``pip freeze`` / ``pip show`` / ``python -m
sglang.check_env`` lines, ``site-packages/<pkg>-<version>.dist-info`` paths) and looks the
package up in ``kb/sglang_deps.json`` (built by ``python -m ingest.sglang_errors_deps`` from each
release's wheel METADATA and import-time version checks) for the user's SGLang release, or the
nearest one.

The result is a ``DependencyAdvice`` whose ``install_command`` is what an expert would run for
that release: the package with the extras the release asks for (``flashinfer_python[cu13]``),
its companion packages that must carry the same version (``flashinfer-cubin``), one exact
version when the release allows a closed range (``vllm==0.6.4.post1`` for
``>=0.6.3.post1,<=0.6.4.post1``), and the wheel index when PyPI does not carry the right build
(FlashInfer's AOT wheels of the torch 2.4/2.5 era, PyTorch's CUDA-variant wheels). An
``undefined symbol`` from torch's C++ API inside sgl_kernel / flashinfer / vllm means the
extension was built against another torch: the advice is the torch the release pins, or, when
that torch is already installed, reinstalling the extension at the release's pin.
Imports only the stdlib and ``packaging``.
"""

from __future__ import annotations

import json
import re
import shlex
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
    "flashinfer": ["flashinfer-python", "flashinfer"],
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
# Modules a package loads from inside itself (sgl_kernel's loader tries `import common_ops` after
# the real failure): naming them is not naming a missing distribution.
INTERNAL_MODULES = {"common_ops", "flash_ops", "spatial_ops", "moe_ops"}

# "upgrade transformers", "update your flashinfer": the user's words name the package to change.
# Only a package some SGLang release requires counts ("update weights" names none).
UPDATE_VERB_RE = re.compile(rf"\b(?:upgrade|update|reinstall) (?:your )?({NAME_TEXT})(?: version)?\b", re.I)

PROBLEMS = [
    # SGLang's assert_pkg_version (srt/utils): installed too old / not installed. Group 3 / 2 is
    # the minimum the running SGLang checks for.
    ("too old", re.compile(rf"({NAME_TEXT}) is installed with version {VERSION_TEXT}, which is less than "
                           rf"the minimum required version {VERSION_TEXT}")),
    ("missing", re.compile(rf"({NAME_TEXT}) with minimum required version {VERSION_TEXT} is not installed")),
    # pip's resolver after an install: "sglang 0.4.3.post4 requires vllm<=0.7.2,...; extra == "srt",
    # but you have vllm 0.8.2 which is incompatible." (only SGLang's own requirements are ours).
    ("incompatible", re.compile(rf"\bsglang(?:\[[\w,-]+\])? \S+ requires ({NAME_TEXT})(?:\[[^\]]*\])?[^,]*"
                                rf"(?:,[^,]*)*?, but you have \1 {VERSION_TEXT}", re.I)),
    # A compiled extension that cannot find a symbol: group 2 is the symbol.
    ("abi", re.compile(r"(?:(?:site|dist)-packages/|(?<![\w/.-]))([A-Za-z_]\w*)/\S*?\.so\S*?:?\s+"
                       r"undefined symbol:?\s*(\w+)")),
    # FlashInfer's own check that its cubin package matches it.
    ("version check", re.compile(r"(flashinfer)-cubin (?:version )?\([^)]*\) (?:does not match|!=) "
                                 r"flashinfer(?:-python)? (?:version )?\(")),
    ("missing", re.compile(r"No module named ['\"]([\w.]+)['\"]")),
    ("incompatible", re.compile(r"cannot import name ['\"]?\w+['\"]? from ['\"]?([\w.]+)")),
    ("version check", re.compile(rf"\b({NAME_TEXT}) version mismatch", re.I)),
    ("version check", re.compile(rf"\brequires? ({NAME_TEXT})\s*(?:>=|==|~=|>)\s*\d", re.I)),
    ("version check", re.compile(rf"\b({NAME_TEXT})\s*(?:>=|==|~=)\s*\d[\w.]*\s+is required", re.I)),
    ("version check", UPDATE_VERB_RE),
    ("too old", re.compile(r"(Transformers) does not recognize this architecture")),
]  # fmt: skip
# pip's resolver complaining about another package's requirement ("llava 1.2 requires torch==2.1.2,
# but you have torch 2.4.0"): not a pin of the user's SGLang release.
OTHER_PACKAGE_CONFLICT = re.compile(r"^\s*(?!sglang\b)[\w.-]+ \S+ requires .*, but you have ", re.I)
# Words the generic patterns above may capture that are not packages.
NOT_PACKAGES = {"the", "your", "it", "to", "version", "python", "pip", "package", "packages", "this"}
SPECIFIER_ORDER = {"===": 0, "==": 0, "~=": 1, ">=": 2, ">": 3, "<=": 4, "<": 5, "!=": 6}
# Mangled C++ names in torch's own namespaces (c10::, at::, torch::): an extension that misses
# one was compiled against a different torch.
TORCH_SYMBOL = re.compile(r"^_ZN?K?(?:3c10|2at|5torch)")
# CUDA driver/runtime entry points: a missing one is a driver or toolkit problem, not a pin.
CUDA_SYMBOL = re.compile(r"^(?:cu[A-Z]|cuda[A-Z]|nv[A-Z]|nccl)")

# --------------------------------------------------------------------------- wheel indexes
# The CUDA build PyPI's torch wheel of each minor release carries (PyTorch's release notes; 2.11
# and later are CUDA 13, which SGLang 0.5.11+ also requires with cuda-python>=13.0). A user
# whose torch shows another +cuXXX keeps it with PyTorch's own index.
TORCH_PYPI_CUDA = {"2.4": "cu121", "2.5": "cu124", "2.6": "cu124", "2.7": "cu126", "2.8": "cu128",
                   "2.9": "cu128", "2.11": "cu130", "2.13": "cu130", "2.14": "cu130"}  # fmt: skip
# The torch vllm pins, for releases that leave torch to vllm (0.4.0-0.4.3 pin only vllm).
VLLM_TORCH = {"0.6.3.post1": "2.4.0", "0.6.4.post1": "2.5.1", "0.6.5": "2.5.1", "0.7.2": "2.5.1"}
# FlashInfer's AOT wheels of the torch <= 2.5 era were not on PyPI: FlashInfer documented
# `pip install flashinfer -i <index>/`, SGLang 0.4.3-0.4.5 `--find-links <index>/flashinfer-python`.
FLASHINFER_INDEX = "https://flashinfer.ai/whl/{cuda}/torch{torch}/"
LAST_TORCH_WITHOUT_PYPI_FLASHINFER = Version("2.5.99")
PYTORCH_INDEX = "https://download.pytorch.org/whl/{cuda}"
# sgl-kernel on PyPI is the CUDA 12 build; its CUDA 13 builds are GitHub release assets (SGLang's
# install docs and Dockerfiles install them by URL).
SGL_KERNEL_CU13_WHEEL = ("https://github.com/sgl-project/whl/releases/download/v{version}/"
                         "sgl_kernel-{version}+cu130-cp310-abi3-manylinux2014_{arch}.whl")


@dataclass(frozen=True)
class DependencyAdvice:
    """What to install for one dependency problem, pinned as the user's SGLang release pins it."""

    package: str  # distribution name (sgl-kernel, flashinfer-python, transformers, ...)
    problem: str  # missing | too old | incompatible | version check | abi
    matched_line: str  # the user's line that shows the problem
    pinned_spec: str | None  # what the release requires, e.g. "==4.57.1" or ">=0.1.19,<0.2"; None: not a dependency
    installed_version: str | None  # what the paste shows installed, if it does
    sglang_version: str | None  # the user's SGLang version, if the paste shows it
    pins_release: str | None  # the registry release whose pins were used (nearest to sglang_version)
    install_command: str  # e.g. pip install "transformers==4.57.1"
    extra: str | None = None  # the sglang extra that installs it (srt, runtime-common, ...), None: base install
    source: str = ""  # "metadata", "code:<path>" (an import-time check), or "message" (the check's own minimum)
    satisfied: bool | None = None  # whether installed_version meets pinned_spec
    reason: str = ""  # why this package, when it is not the one the error names (an ABI mismatch)
    dated: str | None = None  # without a version line: the releases the traceback dates SGLang to ("0.5.3 or earlier")
    # those releases pin the package differently: (oldest release, its spec, newest release, its spec); no command then
    pins_vary: tuple[str, str, str, str] | None = None
    listed: bool = False  # the release requires the package (with or without a version)


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

    def release_checking(self, package: str, minimum: str) -> str | None:
        """The newest release that pins or checks `package` at exactly `minimum` (a message's own
        minimum names the release when the paste does not)."""
        for version in reversed(self.versions):
            pin = self.releases[str(version)].get(package)
            if pin and any(_exact_or_minimum(spec) == minimum for spec in _specs_of(pin)):
                return str(version)
        return None

    def pin(self, release: str, package: str) -> dict | None:
        return self.releases[release].get(package)


@lru_cache(maxsize=4)
def _load_cached(path: str) -> DependencyPins:
    with open(path, encoding="utf-8") as handle:
        return DependencyPins(json.load(handle))


def _specs_of(pin: dict) -> list[str]:
    return [pin.get("spec") or ""] + [c.get("spec") or "" for c in pin.get("code", [])]


def _exact_or_minimum(spec: str) -> str | None:
    """"0.6.3" for "==0.6.3" or ">=0.6.3"; None for anything else."""
    match = re.fullmatch(r"(?:==|>=)\s*([^,<>=!~\s]+)", spec.strip())
    return match.group(1) if match else None


def ordered_spec(spec: str) -> str:
    """">=0.7.11,<0.8.0" rather than packaging's "<0.8.0,>=0.7.11": the lower bound reads first."""
    try:
        specifiers = list(SpecifierSet(spec))
    except InvalidSpecifier:
        return spec
    specifiers.sort(key=lambda s: (SPECIFIER_ORDER.get(s.operator, 9), s.version))
    return ",".join(str(s) for s in specifiers)


def install_spec(spec: str | None) -> str | None:
    """The specifier to install: a range closed at the top (<=X) installs X, the newest version
    the release was tested with; anything else is installed as the release states it."""
    if not spec:
        return None
    try:
        specifiers = list(SpecifierSet(spec))
    except InvalidSpecifier:
        return spec
    ceilings = [s.version for s in specifiers if s.operator == "<="]
    if ceilings and SpecifierSet(spec).contains(ceilings[0], prereleases=True):
        return f"=={ceilings[0]}"
    return ordered_spec(spec)


def requirement(package: str, spec: str | None, extras: Iterable[str] = ()) -> str:
    """One shell word: "flashinfer_python[cu13]==0.6.12", quoted because of [ ] < > =."""
    extras = sorted(extras)
    text = package + (f"[{','.join(extras)}]" if extras else "") + (spec or "")
    return f'"{text}"' if re.search(r"[\[\]<>=!~*, ]", text) else shlex.quote(text)


def install_command(package: str, spec: str | None, extras: Iterable[str] = (),
                    companions: Iterable[tuple[str, str]] = (), options: Iterable[str] = ()) -> str:
    words = ["pip", "install", requirement(package, spec, extras)]
    words += [requirement(name, companion_spec) for name, companion_spec in companions]
    return " ".join(words + list(options))


# --------------------------------------------------------------------------- reading the paste


def installed_versions(lines: list[str], names: Iterable[str]) -> dict[str, str]:
    """Versions the paste shows for these distributions (pip list/freeze/show, check_env, paths,
    prose such as "torch 2.8.0+cu128"); on one line the last mention wins."""
    found: dict[str, str] = {}
    for name in names:
        spelled = {name, name.replace("-", "_"), name.replace("_", "-")}
        if canonicalize_name(name) == "torch":
            spelled.add("PyTorch")  # python -m sglang.check_env
        alternatives = "|".join(re.escape(s) for s in sorted(spelled, key=len, reverse=True))
        patterns = [
            re.compile(rf"^\s*(?:{alternatives})\s*(?:==|:|\s)\s*{VERSION_TEXT}\s*$", re.I),  # pip list, check_env
            re.compile(rf"(?<![\w-])(?:{alternatives})==\s*{VERSION_TEXT}", re.I),  # pip freeze, inline
            re.compile(rf"(?:site|dist)-packages/(?:{alternatives})-{VERSION_TEXT}\.dist-info", re.I),
            re.compile(rf"\b(?:{alternatives})\s+version\s*:?\s*{VERSION_TEXT}", re.I),
            re.compile(rf"(?<![\w./-])(?:{alternatives}) +{VERSION_TEXT}(?![\w.])", re.I),  # prose, "you have X 1.2"
        ]
        for number, line in enumerate(lines):
            best: tuple[int, str] | None = None
            for pattern in patterns:
                for match in pattern.finditer(line):
                    if best is None or match.start() >= best[0]:
                        best = (match.start(), match.group(1))
            if best:
                found[name] = best[1]
            if re.match(rf"^\s*Name:\s*(?:{alternatives})\s*$", line, re.I) and number + 1 < len(lines):
                show = re.match(rf"^\s*Version:\s*{VERSION_TEXT}", lines[number + 1])
                if show:
                    found[name] = show.group(1)
    return found


def sglang_version_in(lines: list[str]) -> str | None:
    """The SGLang version the paste shows (pip list, check_env, docker tag, banner, pip resolver)."""
    patterns = [
        re.compile(r"^\s*sglang\s*(?:==|:|\s)\s*" + VERSION_TEXT + r"\s*$", re.I),
        re.compile(r"(?<![\w-])sglang==\s*" + VERSION_TEXT, re.I),
        re.compile(r"lmsysorg/sglang:v?" + VERSION_TEXT, re.I),
        re.compile(r"\bsglang(?:\s+version)?\s*[:=]\s*" + VERSION_TEXT, re.I),
        re.compile(r"(?:site|dist)-packages/sglang-" + VERSION_TEXT + r"\.dist-info", re.I),
        re.compile(r"\bsglang(?:\[[\w,-]+\])? " + VERSION_TEXT + r" (?:requires|depends on)\b", re.I),
        re.compile(r"^\s*sglang\s+" + VERSION_TEXT + r"\s+/", re.I),  # pip list of an editable install
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
        if OTHER_PACKAGE_CONFLICT.search(line):
            continue
        for problem, pattern in PROBLEMS:
            match = pattern.search(line)
            if match:
                name = match.group(1)
                root = name.split(".")[0]
                if root.lower() in NOT_PACKAGES or root in SGLANG_IMPORTS or root in INTERNAL_MODULES:
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


def message_minimum(problem: str, match: re.Match) -> str | None:
    """The minimum version an assert_pkg_version message states, if the line is one."""
    if problem == "too old" and match.re.groups >= 3:
        return match.group(3)
    if problem == "missing" and match.re.groups >= 2:
        return match.group(2)
    return None


def spec_of(pin: dict | None) -> str | None:
    if not pin:
        return None
    return pin["spec"] or next((c["spec"] for c in pin.get("code", []) if c.get("spec")), None) or None


def companions(package: str, spec: str | None, release_pins: dict[str, dict]) -> list[tuple[str, str]]:
    """Packages of the same project the release pins at the same exact version as `package`
    (flashinfer-python and flashinfer-cubin must match): they are installed together."""
    version = _exact_or_minimum(spec or "") if (spec or "").startswith("==") else None
    pinned = _exact_or_minimum(release_pins.get(package, {}).get("spec") or "")
    if not version or not pinned:
        return []
    project = package.split("-")[0]
    out = []
    for name, pin in sorted(release_pins.items()):
        if name != package and name.split("-")[0] == project and pin.get("spec") == f"=={pinned}" \
                and pin.get("extra") == release_pins[package].get("extra"):
            out.append((name, f"=={version}"))
    return out


# --------------------------------------------------------------------------- wheel indexes


def torch_minor(version: str | None) -> str | None:
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def cuda_tag(version: str | None) -> str | None:
    """"cu128" from "2.8.0+cu128"."""
    match = re.search(r"\+(cu\d+)", version or "")
    return match.group(1) if match else None


def release_torch(release_pins: dict[str, dict]) -> str | None:
    """The torch a release installs: its own pin, else the one its vllm pin brings."""
    torch = _exact_or_minimum((release_pins.get("torch") or {}).get("spec") or "")
    if torch:
        return torch
    vllm = (release_pins.get("vllm") or {}).get("spec") or ""
    floors = [s.version for s in SpecifierSet(vllm) if s.operator in (">=", "==")] if vllm else []
    return VLLM_TORCH.get(floors[0]) if floors else None


def index_options(package: str, spec: str | None, release_pins: dict[str, dict],
                  torch_installed: str | None) -> list[str]:
    """The index a package's right build lives on, when plain PyPI would install another one."""
    if package == "torch":
        wanted = cuda_tag(torch_installed)
        default = TORCH_PYPI_CUDA.get(torch_minor(_exact_or_minimum(spec or "")) or "")
        if wanted and default and wanted != default:
            return ["--index-url", PYTORCH_INDEX.format(cuda=wanted)]
        return []
    if package not in ("flashinfer", "flashinfer-python"):
        return []
    torch = torch_installed or release_torch(release_pins)
    minor = torch_minor(torch)
    if not minor or Version(minor) > LAST_TORCH_WITHOUT_PYPI_FLASHINFER:
        return []
    cuda = cuda_tag(torch_installed) or TORCH_PYPI_CUDA.get(minor)
    if not cuda:
        return []
    url = FLASHINFER_INDEX.format(cuda=cuda, torch=minor)
    if package == "flashinfer":
        return ["-i", url]
    return ["--find-links", url + "flashinfer-python"]


def cuda13_kernel_wheel(package: str, spec: str | None, release_pins: dict[str, dict],
                        torch_installed: str | None, lines: list[str]) -> str | None:
    """The CUDA 13 sgl-kernel wheel URL when the user's torch is a CUDA 13 build but the
    release's sgl-kernel on PyPI is the CUDA 12 one (a CUDA 12 kernel cannot load next to it)."""
    version = _exact_or_minimum(spec or "") if (spec or "").startswith("==") else None
    wanted = cuda_tag(torch_installed) or ""
    default = TORCH_PYPI_CUDA.get(torch_minor(release_torch(release_pins)) or "", "")
    if package != "sgl-kernel" or not version or not wanted.startswith("cu13") or not default.startswith("cu12"):
        return None
    arch = "aarch64" if any(re.search(r"\b(?:aarch64|arm64)\b", line) for line in lines) else "x86_64"
    return SGL_KERNEL_CU13_WHEEL.format(version=version, arch=arch)


# --------------------------------------------------------------------------- the advice


def abi_culprit(import_name: str, symbol: str, lines: list[str],
                release_pins: dict[str, dict]) -> tuple[str, str] | None:
    """(what to install, why) for an extension that misses `symbol`; None for a CUDA driver
    symbol (a driver or toolkit older than the build needs: no pip pin fixes it)."""
    if CUDA_SYMBOL.match(symbol):
        return None
    extension = distribution_for(import_name, release_pins)
    if not TORCH_SYMBOL.match(symbol):
        return extension, f"{extension} was built from other sources than the ones installed: reinstall it"
    torch_release = release_torch(release_pins)
    torch_spec = spec_of(release_pins.get("torch")) or (f"=={torch_release}" if torch_release else None)
    if torch_spec and not satisfies(installed_versions(lines, ["torch"]).get("torch"), torch_spec):
        return "torch", f"{extension} was built against torch {torch_spec.lstrip('=')}, not the torch installed"
    return extension, f"{extension} was built against another torch than the one installed: reinstall it"


def release_spec(package: str, release_pins: dict[str, dict], minimum: str | None) -> tuple[str | None, str]:
    """(specifier, source) the user's release asks for `package`."""
    pin = release_pins.get(package)
    spec, source = spec_of(pin), (pin["source"] if pin else "")
    if package == "torch" and not spec and release_torch(release_pins):
        spec, source = f"=={release_torch(release_pins)}", "metadata:vllm"  # torch comes with the pinned vllm
    if minimum and spec and not satisfies(minimum, spec):
        try:
            newer = Version(minimum) > max(Version(s.version) for s in SpecifierSet(spec))
        except (InvalidSpecifier, InvalidVersion, ValueError):
            newer = False
        if newer:
            # The running SGLang checks for more than the nearest registry release pins: it is a
            # later build (a post release, main, a vendor image). SGLang keeps its pin equal to
            # its check, so the check's minimum is the pin.
            spec, source = f"=={minimum}", "message"
    return spec, source


def dependency_advice(
    lines: str | Iterable[str], sglang_version: str | None = None, pins: DependencyPins | None = None,
    dated: tuple[tuple[str, ...], str] | None = None,
) -> DependencyAdvice | None:
    """Advice for the dependency problem the paste shows, or None when it shows none.

    `dated` is (releases, words) when the paste shows no version but its traceback's SGLang files
    exist only in some releases: the pin is theirs, not the newest release's, and when they pin
    the package differently no version is given (the user's release decides which)."""
    lines = lines.splitlines() if isinstance(lines, str) else list(lines)
    found = find_problem(lines)
    if found is None:
        return None
    name, problem, line, match = found
    pins = pins or DependencyPins.load()
    sglang_version = sglang_version or sglang_version_in(lines)
    minimum = message_minimum(problem, match)
    dated_releases = [pins.nearest_release(r) for r in dated[0]] if dated and not sglang_version else []
    release = dated_releases[-1] if dated_releases else pins.nearest_release(sglang_version)
    if not sglang_version and minimum:
        release = pins.release_checking(distribution_for(name, pins.releases[release]), minimum) or release
    release_pins = pins.releases[release]
    if match.re is UPDATE_VERB_RE and not any(distribution_for(name, required) in required
                                             for required in pins.releases.values()):
        return None
    reason = ""
    if problem == "abi":
        culprit = abi_culprit(name, match.group(2), lines, release_pins)
        if culprit is None:
            return None
        name, reason = culprit
    package = distribution_for(name, release_pins)
    pin = release_pins.get(package)
    spec, source = release_spec(package, release_pins, minimum)
    pins_vary = None
    if dated_releases and source != "message":
        specs = {r: release_spec(package, pins.releases[r], minimum)[0] for r in dict.fromkeys(dated_releases)}
        pinned = [r for r, s in specs.items() if s]
        if len({specs[r] for r in pinned}) > 1:
            first, last = pinned[0], pinned[-1]
            pins_vary = (first, ordered_spec(specs[first]), last, ordered_spec(specs[last]))
            spec = None   # which one is the user's release's: no version is guessed
    installed = installed_versions(lines, [package, name]).get(package) or installed_versions(lines, [name]).get(name)
    if installed is None and problem in ("too old", "incompatible") and match.re.groups >= 2:
        installed = match.group(2)  # assert_pkg_version / pip's "but you have X 1.2" state it themselves
    torch_installed = installed if package == "torch" else installed_versions(lines, ["torch"]).get("torch")
    reinstall = bool(reason) and package != "torch"  # the extension's version is right, its build is not
    options = (["--force-reinstall"] if reinstall else []) + index_options(package, spec, release_pins, torch_installed)
    command_spec = install_spec(spec)
    wheel = cuda13_kernel_wheel(package, command_spec, release_pins, torch_installed, lines)
    if wheel:
        command = install_command(wheel, None, options=options)
    else:
        command = install_command(package, command_spec, (pin or {}).get("pip_extras", ()),
                                  companions(package, command_spec, release_pins), options)
    return DependencyAdvice(
        package=package,
        problem=problem,
        matched_line=line,
        pinned_spec=ordered_spec(spec) if spec else None,
        installed_version=installed,
        sglang_version=sglang_version,
        pins_release=release,
        install_command=command,
        extra=pin["extra"] if pin else None,
        source=source,
        satisfied=None if reinstall else satisfies(installed, spec),
        reason=reason,
        dated=dated[1] if dated_releases else None,
        pins_vary=pins_vary,
        listed=pin is not None,
    )


RUNTIME_EXTRA = "runtime-common"   # the extra `sglang[srt]` pulls in (releases up to 0.5.2)


def satisfies(installed: str | None, spec: str | None) -> bool | None:
    if not installed or not spec:
        return None
    try:
        return SpecifierSet(spec).contains(Version(installed), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None
