"""Which SGLang releases a traceback can come from, read from its frames.

Most pastes do not say which SGLang they come from, but their traceback does: a frame
``File ".../sglang/srt/managers/scheduler_pp_mixin.py", line 122, in event_loop_pp`` exists
only in releases that have that module and that function in it. The releases every SGLang
frame agrees on (from kb/sglang_frames.json.gz, built by ``python -m ingest.sglang_frames``)
bound the user's release: an entry about SGLang <0.2 does not explain a crash inside a module
added in 0.5.4.

The bound is one-sided where the registry cannot see: a module present in its oldest release
(0.4.0) may be older still, and one present in its newest may live on. Frames the registry
does not know (a fork, a checkout newer than the registry, a nested function) are ignored, and
frames that agree on no release give no answer at all.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from assistant.resources import kb_file
from assistant.symbols import parse_ranges

DEFAULT_PATH = kb_file("sglang_frames.json.gz")
# ".../site-packages/sglang/srt/managers/scheduler.py" or ".../sglang/python/sglang/srt/..."
SGLANG_FILE = re.compile(r"(?:^|[/\\])(sglang(?:[/\\][\w.-]+)+?)\.py$")
# stand-ins for the releases the registry does not hold: before its oldest, after its newest
OLDER = tuple(Version(v) for v in ("0.1.0", "0.2.0", "0.3.0", "0.3.6"))
NEWER = tuple(Version(v) for v in ("0.6.0", "1.0.0"))
OLDEST_RELEASE = Version("0.4.0")   # the registries' oldest release: what users run is no older


@dataclass(frozen=True)
class ReleaseRange:
    releases: tuple[str, ...]     # the registry's releases the frames agree on, oldest first
    open_below: bool              # the oldest one is the registry's oldest: older ones fit too
    open_above: bool              # the newest one is the registry's newest: newer ones fit too
    evidence: tuple[str, ...]     # the frames that bound it ("scheduler_pp_mixin.py in event_loop_pp")

    def describe(self) -> str:
        first, last = self.releases[0], self.releases[-1]
        if self.open_below and self.open_above:
            return "any release"
        if self.open_above:
            return f"{first} or later"
        if self.open_below:
            return f"{last} or earlier"
        return first if first == last else f"{first} to {last}"

    def admits(self, spec: str) -> bool:
        """Whether some release in the range is inside a version range (a fix step's `versions`)."""
        candidates = [Version(v) for v in self.releases]
        candidates += list(OLDER) * self.open_below + list(NEWER) * self.open_above
        try:
            return any(spec_contains(spec, v) for v in candidates)
        except InvalidSpecifier:
            return True

    def narrowed(self, other: "ReleaseRange | None") -> "ReleaseRange":
        """The releases both ranges hold (this one when they share none: then one of them is wrong,
        and the frames' range, the caller's, is kept)."""
        if other is None:
            return self
        shared = tuple(release for release in self.releases if release in set(other.releases))
        if not shared:
            return self
        return ReleaseRange(shared, self.open_below and other.open_below, self.open_above and other.open_above,
                            self.evidence)

    def conflict(self, affected: str, fixed: str | None) -> bool:
        """True when no release in the range is one the entry is about (or all have its fix)."""
        candidates = [Version(v) for v in self.releases]
        candidates += list(OLDER) * self.open_below + list(NEWER) * self.open_above
        return not any(scope_fits(v, affected, fixed) is None for v in candidates)


def scope_fits(version: Version, affected: str | None, fixed: str | None) -> str | None:
    """Why a release is outside an entry's versions ("affected" / "fixed"); None when it is
    inside, or when the entry's specifiers do not parse."""
    try:
        if affected and not spec_contains(affected, version):
            return "affected"
        # an entry whose range names release candidates (`>=0.5.2rc0,<=0.5.2rc2`, fixed in 0.5.2)
        # tells them apart from the release they lead to, for its fix too
        keep_pre = _names_pre(fixed) or any(_names_pre(bound.version) for bound in SpecifierSet(affected or ""))
        # an affected range that ends after the fix (`>=0.4.2, <0.5.1`, fixed in 0.4.6) says the
        # problem outlived it on some path: a release inside that range is inside the entry
        outlived = affected and any(bound.operator in ("<", "<=") and Version(bound.version) > Version(fixed)
                                    for bound in SpecifierSet(affected)) if fixed else False
        if fixed and not outlived and _comparable(version, fixed, keep_pre) >= Version(fixed):
            return "fixed"
    except (InvalidSpecifier, InvalidVersion):
        return None
    return None


def spec_contains(spec: str, version: Version) -> bool:
    """Whether a release is inside a version range. A bound that names a post release
    (`==0.4.9.post1`, `>=0.4.10.post2`) tells post releases apart; a bound on a plain release
    counts 0.4.9.post1 as 0.4.9, as the releases' notes do. Pre-releases and local builds count
    as the release they lead to, unless a bound of the range names a pre-release."""
    bounds = SpecifierSet(spec)
    keep_pre = any(_names_pre(bound.version) for bound in bounds)
    return all(bound.contains(_comparable(version, bound.version, keep_pre), prereleases=True) for bound in bounds)


def _names_pre(bound: str | None) -> bool:
    try:
        return bool(bound) and Version(bound).pre is not None
    except InvalidVersion:   # a wildcard bound such as 0.4.*
        return False


def ends_before(spec: str, release: Version) -> bool:
    """Whether a version range ends before `release` (`<0.2`, `<=0.3.6`, `==0.1.14`): no release
    from `release` on is inside it."""
    try:
        return any((bound.operator == "<" and Version(bound.version) <= release)
                   or (bound.operator in ("<=", "==", "===") and Version(bound.version) < release)
                   for bound in SpecifierSet(spec))
    except (InvalidSpecifier, InvalidVersion):
        return False


def _comparable(version: Version, bound: str, keep_pre: bool = False) -> Version:
    base = Version(version.base_version)
    if keep_pre and version.pre is not None:
        return Version(f"{base}{version.pre[0]}{version.pre[1]}")
    try:
        names_post = Version(bound).post is not None
    except InvalidVersion:   # a wildcard bound such as 0.4.*
        names_post = False
    return Version(f"{base}.post{version.post}") if names_post and version.post is not None else base


def dated_environment(analysis):
    """The environment the paste shows; without a version line, the releases its traceback's
    SGLang files exist in (`sglang_releases`)."""
    env = analysis.environment
    if env.sglang_version:
        return env
    releases = release_range(analysis.sglang_frames)
    return replace(env, sglang_releases=releases.describe()) if releases else env


def of_known_releases(frames: tuple[tuple[str, str], ...], path: Path = DEFAULT_PATH) -> bool:
    """Whether every SGLang frame whose module the registry knows names a function that module has
    in some release it holds (0.4.0 on), and at least one does: such a traceback reads as one of
    those releases. A frame of a module or function gone before 0.4.0 (a module the registry does
    not hold at all included) says the paste may be older."""
    table = _Table.load(path)
    known = list(_known_frames(table, frames)) if table is not None else []
    if table is not None and any(module_of(file) and module_of(file) not in table.modules for file, _ in frames):
        return False   # a module no release since 0.4.0 has (`managers/controller/tp_worker.py`): maybe older
    return bool(known) and all(function in functions for _, function, _, functions in known)


def _known_frames(table: "_Table", frames):
    """(module, function, the module's releases, its functions' releases) for each frame whose
    module the registry holds."""
    for file, function in frames:
        module = module_of(file)
        record = table.modules.get(module) if module else None
        if record is not None:
            yield (module, function, *_module_functions(record))


@dataclass(frozen=True)
class _Table:
    releases: tuple[str, ...]
    modules: dict

    @classmethod
    @lru_cache(maxsize=2)
    def load(cls, path: Path = DEFAULT_PATH) -> "_Table | None":
        try:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                document = json.load(handle)
            return cls(tuple(document["releases"]), document["modules"])
        except (OSError, ValueError, KeyError):   # a clone without the table: no inference
            return None


@lru_cache(maxsize=2048)
def _module_functions(record: str) -> tuple[str, dict[str, str]]:
    span, *functions = record.split("\t")
    return span, dict(item.split("=", 1) for item in functions)


def module_of(path: str) -> str | None:
    """"/x/site-packages/sglang/srt/managers/scheduler.py" -> "sglang.srt.managers.scheduler"."""
    match = SGLANG_FILE.search(path.strip())
    if not match:
        return None
    # the last "sglang/" in a checkout path (".../sglang/python/sglang/srt/...") is the package
    parts = re.split(r"[/\\]", match.group(1))
    start = max(i for i, part in enumerate(parts) if part == "sglang")
    parts = parts[start:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


# the layout of SGLang's repositories: each package lives in <repo>/python/<package>/ (sglang,
# sgl_jax, sgl_kernel, sglang_router), so a frame there (not under site-packages) runs a git
# checkout (`pip install -e python`), one commit of the repository
CHECKOUT_PACKAGE_RE = re.compile(r"^(.*?)[/\\]python[/\\]((?:sglang|sgl_jax|sgl_kernel|sglang_router)[/\\])")
INSTALLED_DIR = re.compile(r"[/\\](?:site|dist)-packages[/\\]")


def source_checkout(path: str) -> str | None:
    """The repository directory of an SGLang source checkout a frame's file is in
    ("/sgl-workspace/sglang/python/sglang/srt/x.py" -> "/sgl-workspace/sglang"), None for an
    installed wheel or a path that shows no checkout."""
    path = path.strip()
    if INSTALLED_DIR.search(path):
        return None
    match = CHECKOUT_PACKAGE_RE.match(path)
    return (match.group(1) or "/") if match and match.group(2)[:-1] == "sglang" else None


@lru_cache(maxsize=1024)
def release_range(frames: tuple[tuple[str, str], ...], path: Path = DEFAULT_PATH) -> ReleaseRange | None:
    """The releases that every known SGLang frame ((file, function) pairs) exists in; None when
    the frames say nothing beyond "some release" or contradict each other."""
    table = _Table.load(path)
    if table is None or not frames:
        return None
    everything = frozenset(range(len(table.releases)))
    agreed = everything
    evidence: list[str] = []
    for module, function, span, functions in _known_frames(table, frames):
        releases = parse_ranges(span)
        if function in functions:
            releases &= parse_ranges(functions[function])
        if releases and releases != everything and not releases >= agreed:
            evidence.append(f"{module.rsplit('.', 1)[-1]}.py in {function}")
        agreed &= releases
        if not agreed:
            return None
    if agreed == everything:
        return None
    ordered = sorted(agreed)
    return ReleaseRange(
        releases=tuple(table.releases[i] for i in ordered),
        open_below=ordered[0] == 0, open_above=ordered[-1] == len(table.releases) - 1,
        evidence=tuple(evidence[-3:]))


def message_range(releases, path: Path = DEFAULT_PATH) -> ReleaseRange | None:
    """The releases an SGLang message the paste printed exists in (its origin's releases), as a
    range like the frames give: a message only 0.5.14 and 0.5.15 print dates the run to them."""
    table = _Table.load(path)
    if table is None or not releases:
        return None
    known = [release for release in table.releases if release in set(releases)]
    if not known or len(known) == len(table.releases):
        return None
    return ReleaseRange(releases=tuple(known), open_below=known[0] == table.releases[0],
                        open_above=known[-1] == table.releases[-1], evidence=())
