"""SGLang flag / env-var registry: no fix may recommend a flag or variable that does not exist.

Answers, offline and fast, whether a ``launch_server`` flag (``--tp-size``) or an
``SGLANG_*`` / legacy ``SGL_*`` environment variable exists in a given SGLang release,
what argparse resolves it to (``--tp`` -> ``--tp-size``), whether it is deprecated, and
what to use instead. Backed by ``kb/sglang_flags.json`` (built by
``python -m ingest.sglang_flags``), loaded once. Imports only the stdlib and
``packaging`` because it sits on the hot path of the CLI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from assistant.resources import kb_file
from assistant.wording import Sentence

DEFAULT_PATH = kb_file("sglang_flags.json")  # the checkout's kb/, else the one installed with the package

SGLANG_ENV_PREFIXES = ("SGLANG_", "SGL_")
OUT_OF_SCOPE_NOTE = Sentence("not an SGLang variable; not checked", "不是 SGLang 的变量；未检查")
DASHES_NOT_UNDERSCORES = "option names use dashes, not underscores"
REBUILD_HINT = "rebuild it with `python -m ingest.sglang_flags`"

FLAG_PATTERN = r"(?<![\w-])--[a-z0-9]+(?:[-_][a-z0-9]+)*"
ENV_PATTERN = r"(?<![A-Za-z0-9_])(?:SGLANG|SGL)_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_])"
NAME_IN_TEXT = re.compile(f"{FLAG_PATTERN}|{ENV_PATTERN}")
VERSION_IN_TEXT = re.compile(r"\d+(?:\.\d+)+(?:[.-]?(?:a|b|rc|post|dev)\d*)*")


@dataclass(frozen=True)
class Rename:
    """A hand-checked replacement for a removed or deprecated flag / env var."""

    replacement: str  # what to tell the user, e.g. "--ep-size N"
    requires: str  # the flag or env var the replacement needs in the target release
    since: str  # first registry release that has `requires` (verified by tests/test_flags.py)


# Only what the extracted data does not say by itself (or says wrongly: 0.4.1's help
# text recommends "--sampling-backend pytroch"). Each entry is checked against the
# registry in the tests; a replacement is offered only where `requires` exists.
CURATED_RENAMES: dict[str, Rename] = {
    "--enable-ep-moe": Rename("--ep-size N", "--ep-size", "0.4.1"),
    "--enable-deepep-moe": Rename("--moe-a2a-backend deepep", "--moe-a2a-backend", "0.5.1"),
    "--disable-flashinfer": Rename("--attention-backend triton", "--attention-backend", "0.4.1"),
    "--disable-flashinfer-sampling": Rename(
        "--sampling-backend pytorch", "--sampling-backend", "0.4.1"
    ),
    "--disable-cuda-graph": Rename(
        "--cuda-graph-backend-decode disabled --cuda-graph-backend-prefill disabled",
        "--cuda-graph-backend-decode",
        "0.5.14",
    ),
    # The old variable disabled the check, the new one enables it: the value flips.
    "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK": Rename(
        "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK=false",
        "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK",
        "0.5.7",
    ),
    "SGL_ENABLE_JIT_DEEPGEMM": Rename(
        "SGLANG_ENABLE_JIT_DEEPGEMM", "SGLANG_ENABLE_JIT_DEEPGEMM", "0.5.3"
    ),
}


@dataclass(frozen=True)
class FlagStatus:
    name: str  # as written by the user, e.g. "--tp" or "SGLANG_DISABLE_FP8"
    kind: str  # "flag" | "env"
    exists: bool  # accepted by that version (exact, argparse abbreviation, alias; env: read by it)
    canonical: str | None  # full name it resolves to ("--tp" -> "--tp-size"), None if unknown
    versions: tuple[str, ...]  # registry versions where the name (or its canonical form) exists
    replacement: str | None  # what to use instead in that version if renamed/removed, else None
    deprecated: bool
    note: Sentence  # one human-readable line, with its Chinese version

    @property
    def known(self) -> bool:
        """Accepted, or deprecated but still handled by a shim: a fix may name it ("unset the
        old X"); only names that are neither are invented."""
        return self.exists or self.deprecated


@dataclass(frozen=True)
class Release:
    """What one SGLang release accepts."""

    flags: frozenset[str]
    deprecated_flags: frozenset[str]
    flag_replacements: dict[str, str]  # deprecated flag -> what its help text says to use
    allow_abbrev: bool
    env_vars: frozenset[str]  # SGLANG_* and SGL_* together
    deprecated_env_vars: dict[str, str]  # old name -> replacement ("" if none)
    retired_env_vars: frozenset[str]  # only honoured by a deprecation shim, if at all
    sgl_prefix_alias: bool  # SGL_X is rewritten to SGLANG_X at startup
    # only the newest release carries these: what a how-to answer quotes (assistant.flag_reference)
    flag_help: dict[str, str] = field(default_factory=dict)
    flag_choices: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, entry: dict) -> Release:
        return cls(
            flags=frozenset(entry["flags"]),
            deprecated_flags=frozenset(entry.get("deprecated_flags", ())),
            flag_replacements=dict(entry.get("flag_replacements", {})),
            allow_abbrev=entry.get("allow_abbrev", True),
            env_vars=frozenset(entry.get("env_vars", ()))
            | frozenset(entry.get("legacy_env_vars", ())),
            deprecated_env_vars=dict(entry.get("deprecated_env_vars", {})),
            retired_env_vars=frozenset(entry.get("retired_env_vars", ())),
            sgl_prefix_alias=entry.get("sgl_prefix_alias", False),
            flag_help=dict(entry.get("flag_help", {})),
            flag_choices={k: tuple(v) for k, v in entry.get("flag_choices", {}).items()},
        )

    def has(self, name: str) -> bool:
        return name in self.flags or (name in self.env_vars and name not in self.retired_env_vars)


@dataclass(frozen=True)
class Verdict:
    """The answer for one name in one release."""

    exists: bool
    canonical: str | None = None
    deprecated: bool = False
    replacement: str | None = None
    how: str = ""  # exact, abbrev, shadowed, ambiguous, underscore, sgl-alias, retired, missing
    candidates: tuple[str, ...] = ()  # the flags an ambiguous abbreviation could mean


def release_tuple(version: str | None) -> tuple[int, int, int] | None:
    """(major, minor, micro) of "0.4.6.post2", "v0.5.6rc1", "sglang==0.5.7"; None if unparseable."""
    if not version:
        return None
    match = VERSION_IN_TEXT.search(str(version))
    if not match:
        return None
    try:
        release = Version(match.group(0)).release
    except InvalidVersion:
        release = tuple(int(part) for part in re.findall(r"\d+", match.group(0)))
    return (tuple(release) + (0, 0, 0))[:3]


def find_names(text: str) -> list[str]:
    """SGLang-looking flags (``--foo-bar``, also ``--foo_bar``) and SGLANG_*/SGL_* names in
    `text`, in order of appearance, each once."""
    return list(dict.fromkeys(match.group(0) for match in NAME_IN_TEXT.finditer(text)))


def describe_versions(versions: Iterable[str], order: list[str]) -> str:
    """Contiguous runs of registry releases: "0.4.1-0.5.3, 0.5.9"."""
    chosen = set(versions)
    runs: list[list[str]] = []
    previous_chosen = False
    for version in order:
        if version in chosen:
            if previous_chosen:
                runs[-1].append(version)
            else:
                runs.append([version])
        previous_chosen = version in chosen
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def split_value(name: str) -> str:
    """Drop an attached value: "--tp-size=2" -> "--tp-size", "SGLANG_X=1" -> "SGLANG_X"."""
    return name.strip().split("=", 1)[0].strip()


class FlagRegistry:
    """Flags and env vars of every SGLang release in kb/sglang_flags.json."""

    def __init__(self, releases: dict[str, Release], path: Path | None = None):
        self.path = path
        self.versions: list[str] = sorted(releases, key=Version)
        self.latest: str = self.versions[-1]
        self.releases = releases
        self._tuples = {v: release_tuple(v) for v in self.versions}
        self._checked: dict[tuple[str, str | None], FlagStatus] = {}   # see check
        self._every_flag: frozenset[str] | None = None   # see _all_flags

    @classmethod
    def load(cls, path: str | Path | None = None) -> FlagRegistry:
        return _load_cached(str(Path(path).resolve()) if path else str(DEFAULT_PATH))

    # ----------------------------------------------------------------- versions

    def nearest(self, version: str | None) -> str | None:
        """The registry release at or below `version` (the lowest one if it is older than all)."""
        wanted = release_tuple(version)
        if wanted is None:
            return None
        at_or_below = [v for v in self.versions if self._tuples[v] <= wanted]
        return at_or_below[-1] if at_or_below else self.versions[0]

    def versions_in(self, spec: str | None) -> list[str]:
        """Registry releases satisfying a PEP 440 specifier like ">=0.4.6,<0.5.9".

        "any", "" and None select all of them.
        """
        if spec is None or spec.strip().lower() in ("", "any", "all", "*"):
            return list(self.versions)
        text = re.sub(r"(?<=[<>=!~])\s*[vV](?=\d)", "", spec.strip())
        if re.fullmatch(r"[vV]?\d[\w.]*", text):
            return [self.nearest(text)]  # a bare version means "that release"
        try:
            specifier = SpecifierSet(text, prereleases=True)
        except InvalidSpecifier:
            raise ValueError(
                f"invalid version range {spec!r}: use a PEP 440 specifier such as '>=0.4.6,<0.5.9'"
            ) from None
        return [v for v in self.versions if Version(v) in specifier]

    def lifetime(self, name: str) -> dict[str, str]:
        """Per registry release, how it treats `name`: "ok" (accepted / read), "deprecated"
        (accepted or shim-handled but deprecated) or "" (absent). For `ask kb check`'s
        version-boundary rules; names outside SGLang's prefixes are "ok" everywhere."""
        name = split_value(name)
        kind = "flag" if name.startswith("-") else "env"
        if kind == "env" and not name.startswith(SGLANG_ENV_PREFIXES):
            return dict.fromkeys(self.versions, "ok")
        real_elsewhere = any(name in self.releases[v].flags for v in self.versions)
        out = {}
        for version in self.versions:
            verdict = self._verdict(name, kind, self.releases[version], real_elsewhere)
            if verdict.how == "shadowed":
                out[version] = ""  # only an abbreviation of another flag: not this flag
            elif verdict.deprecated:
                out[version] = "deprecated"
            else:
                out[version] = "ok" if verdict.exists else ""
        return out

    def cut_short(self, name: str) -> bool:
        """`name` is a flag cut off mid-word (`--contex` where a pasted line ends): no release has
        it, and some release has a flag that begins with it. (argparse would take it as an
        abbreviation, but what the user ran had the whole word.)"""
        name = split_value(name)
        if not name.startswith("--") or len(name) < 3:
            return False
        flags = self._all_flags()
        return name not in flags and any(flag.startswith(name) for flag in flags)

    def _all_flags(self) -> frozenset[str]:
        if self._every_flag is None:
            self._every_flag = frozenset().union(*(release.flags for release in self.releases.values()))
        return self._every_flag

    # ----------------------------------------------------------------- checks

    def check_many(self, names: Iterable[str], version: str | None = None) -> list[FlagStatus]:
        return [self.check(name, version) for name in names]

    def check(self, name: str, version: str | None = None) -> FlagStatus:
        """Whether `name` exists in `version` (None: in any release), and what to use instead.
        Memoised: the registry never changes once loaded, and every answer checks the same few
        dozen flags of its fix steps against all releases."""
        cache = self._checked
        status = cache.get((name, version))
        if status is None:
            if len(cache) > 20_000:   # user text can name any number of made-up flags
                cache.clear()
            status = cache[(name, version)] = self._check(name, version)
        return status

    def _check(self, name: str, version: str | None) -> FlagStatus:
        name = split_value(name)
        kind = "flag" if name.startswith("-") else "env"
        if kind == "env" and not name.startswith(SGLANG_ENV_PREFIXES):
            return FlagStatus(name, "env", True, None, (), None, False, OUT_OF_SCOPE_NOTE)

        # A real flag of other releases that some release only accepts as an abbreviation
        # of a different flag (--disable-flashinfer -> --disable-flashinfer-autotune) is a trap.
        real_elsewhere = any(name in self.releases[v].flags for v in self.versions)
        verdicts = {
            v: self._verdict(name, kind, self.releases[v], real_elsewhere) for v in self.versions
        }
        present = tuple(v for v in self.versions if verdicts[v].exists)
        target = self.nearest(version)
        if target is None:
            return self._overall_status(name, kind, verdicts, present)
        verdict = verdicts[target]
        exact_label = release_tuple(version) == self._tuples[target]
        label = (Sentence(target, target) if exact_label
                 else Sentence(f"{target} (closest known release to {version})",
                               f"{target}（与 {version} 最接近的已知版本）"))
        genuine = tuple(v for v in present if verdicts[v].how != "shadowed")
        note = self._release_note(name, verdict, genuine, label)
        return FlagStatus(
            name,
            kind,
            verdict.exists,
            verdict.canonical,
            present,
            verdict.replacement,
            verdict.deprecated,
            note,
        )

    def _verdict(
        self, name: str, kind: str, release: Release, real_elsewhere: bool = False
    ) -> Verdict:
        verdict = (
            self._flag_verdict(name, release)
            if kind == "flag"
            else self._env_verdict(name, release)
        )
        shadowed = verdict.how == "abbrev" and real_elsewhere
        if verdict.exists and not verdict.deprecated and not shadowed:
            return verdict
        lookup = name[:2] + name[2:].replace("_", "-") if kind == "flag" else name
        replacement = (
            self._replacement(lookup if shadowed else verdict.canonical or lookup, release)
            or verdict.replacement
        )
        how = "shadowed" if shadowed else verdict.how
        return Verdict(
            verdict.exists,
            verdict.canonical,
            verdict.deprecated,
            replacement,
            how,
            verdict.candidates,
        )

    def _flag_verdict(self, name: str, release: Release) -> Verdict:
        canonical, how, candidates = resolve_flag(name, release)
        if canonical:
            return Verdict(True, canonical, canonical in release.deprecated_flags, None, how)
        if "_" in name:
            # argparse matches option strings literally: --foo_bar never reaches --foo-bar.
            fixed, _, _ = resolve_flag(name[:2] + name[2:].replace("_", "-"), release)
            if fixed:
                return Verdict(False, None, False, fixed, "underscore")
        return Verdict(
            False, None, False, None, "ambiguous" if candidates else "missing", candidates
        )

    def _env_verdict(self, name: str, release: Release) -> Verdict:
        if name in release.retired_env_vars:
            return Verdict(False, None, True, None, "retired")
        if name in release.env_vars:
            return Verdict(True, name, name in release.deprecated_env_vars, None, "exact")
        modern = modern_env_name(name)
        if modern and release.sgl_prefix_alias and release.has(modern):
            # Only a startup shim copies SGL_X to SGLANG_X: the release itself reads SGLANG_X.
            return Verdict(False, modern, True, modern, "sgl-alias")
        return Verdict(False, None, False, None, "missing")

    def _replacement(self, name: str, release: Release) -> str | None:
        """Curated rename, else what a release's deprecation says, if usable in `release`."""
        curated = CURATED_RENAMES.get(name)
        if curated and release.has(curated.requires):
            return curated.replacement
        for source in [release] + [self.releases[v] for v in reversed(self.versions)]:
            suggestion = source.flag_replacements.get(name) or source.deprecated_env_vars.get(name)
            if suggestion and release.has(re.split(r"[ =]", suggestion, maxsplit=1)[0]):
                return suggestion
        modern = modern_env_name(name)
        if modern and release.has(modern):
            return modern
        return None

    def _where(self, present: tuple[str, ...]) -> Sentence:
        first, latest = self.versions[0], self.latest
        if not present:
            return Sentence(f"exists in no SGLang release {first}-{latest}",
                            f"在 SGLang {first}-{latest} 的任何版本里都不存在")
        if len(present) == len(self.versions):
            return Sentence(f"exists in every release {first}-{latest}", f"在 {first}-{latest} 的每个版本里都存在")
        span = describe_versions(present, self.versions)
        return Sentence(f"exists in {span} only", f"只存在于 {span}")

    def _release_note(
        self, name: str, verdict: Verdict, present: tuple[str, ...], label: Sentence
    ) -> Sentence:
        """What `label`'s release does with `name`, in English and Chinese."""
        use = verdict.replacement
        instead = (f"; use {use}", f"；请改用 {use}") if use else ("", "")
        where = self._where(present)
        canonical = verdict.canonical
        if verdict.how == "exact":
            if verdict.deprecated:
                return Sentence(f"{name} exists in {label} but is deprecated{instead[0]}",
                                f"{name} 在 {label.zh} 里存在，但已弃用{instead[1]}")
            return Sentence(f"{name} exists in {label}", f"{name} 在 {label.zh} 里存在")
        if verdict.how == "abbrev":
            deprecated = ((f", which is deprecated{instead[0]}", f"，而它已弃用{instead[1]}") if verdict.deprecated
                          else ("", ""))
            return Sentence(f"{name} is accepted in {label} as an argparse abbreviation of {canonical}{deprecated[0]}",
                            f"{label.zh} 把 {name} 当作 {canonical} 的 argparse 缩写接受{deprecated[1]}")
        if verdict.how == "shadowed":
            itself = self._where(tuple(v for v in present if name in self.releases[v].flags))
            return Sentence(f"{name} is accepted in {label} only as an argparse abbreviation of {canonical}; "
                            f"{name} itself {itself}{instead[0]}",
                            f"{label.zh} 只把 {name} 当作 {canonical} 的 argparse 缩写接受；{name} 本身{itself.zh}{instead[1]}")
        if verdict.how == "sgl-alias":
            return Sentence(f"{name} is not read by {label}: only a deprecation shim copies SGL_* names to "
                            f"SGLANG_* at startup{instead[0]}",
                            f"{label.zh} 不读取 {name}：只有一个弃用兼容层会在启动时把 SGL_* 名字复制成 SGLANG_*{instead[1]}")
        if verdict.how == "underscore":
            return Sentence(f"{name} is rejected by argparse in {label} ({DASHES_NOT_UNDERSCORES}){instead[0]}",
                            f"{label.zh} 的 argparse 拒绝 {name}（参数名用短横线，不用下划线）{instead[1]}")
        if verdict.how == "ambiguous":
            count = len(verdict.candidates)
            shown = ", ".join(sorted(verdict.candidates)[:5]) + (", ..." if count > 5 else "")
            elsewhere = (f"; it {where}", f"；它{where.zh}") if present else ("", "")
            return Sentence(f"{name} is rejected in {label} as an ambiguous abbreviation of {count} flags "
                            f"({shown}){elsewhere[0]}{instead[0]}",
                            f"{label.zh} 拒绝 {name}：它是 {count} 个参数的歧义缩写（{shown}）{elsewhere[1]}{instead[1]}")
        if verdict.how == "retired":
            return Sentence(f"{name} is deprecated in {label}: only a deprecation shim still handles it; "
                            f"it {where}{instead[0]}",
                            f"{name} 在 {label.zh} 里已弃用：只有一个弃用兼容层还在处理它；它{where.zh}{instead[1]}")
        return Sentence(f"{name} does not exist in {label}; it {where}{instead[0]}",
                        f"{name} 在 {label.zh} 里不存在；它{where.zh}{instead[1]}")

    def _overall_status(
        self, name: str, kind: str, verdicts: dict[str, Verdict], present: tuple[str, ...]
    ) -> FlagStatus:
        """Status across all releases; the replacement is the one for the latest release."""
        latest = verdicts[self.latest]
        replacement = latest.replacement
        genuine = tuple(v for v in present if verdicts[v].how != "shadowed")
        shadowed = tuple(v for v in present if verdicts[v].how == "shadowed")
        newest = verdicts[(genuine or present)[-1]] if present else latest
        deprecated_in = tuple(v for v in present if verdicts[v].deprecated)
        if latest.how == "underscore":
            note = Sentence(f"{name} is rejected by argparse ({DASHES_NOT_UNDERSCORES}); use {replacement}",
                            f"argparse 拒绝 {name}（参数名用短横线，不用下划线）；请改用 {replacement}")
        else:
            where = self._where(genuine)
            english, chinese = f"{name} {where}", f"{name} {where.zh}"
            if newest.how == "abbrev" and newest.canonical:
                english = f"{name} (argparse abbreviation of {newest.canonical}) {where}"
                chinese = f"{name}（{newest.canonical} 的 argparse 缩写）{where.zh}"
            if shadowed:
                where_shadowed = describe_versions(shadowed, self.versions)
                english += f" ({where_shadowed} accept it only as an abbreviation of another flag)"
                chinese += f"（{where_shadowed} 只把它当作另一个参数的缩写接受）"
            if deprecated_in:
                span = describe_versions(deprecated_in, self.versions)
                english += f"; deprecated in {span}"
                chinese += f"；在 {span} 里已弃用"
            if replacement:
                english += f"; use {replacement}" + (f" in {self.latest}" if present else " instead")
                chinese += f"；请改用 {replacement}" if not present else f"；在 {self.latest} 里请改用 {replacement}"
            note = Sentence(english, chinese)
        deprecated = bool(present) and newest.deprecated
        return FlagStatus(
            name, kind, bool(present), newest.canonical, present, replacement, deprecated, note
        )


def modern_env_name(name: str) -> str | None:
    """SGL_X -> SGLANG_X, the rename SGLang applied to its legacy variables."""
    return "SGLANG_" + name[len("SGL_") :] if name.startswith("SGL_") else None


def resolve_flag(name: str, release: Release) -> tuple[str | None, str, tuple[str, ...]]:
    """(canonical flag, "exact"/"abbrev", ambiguous candidates) the way argparse resolves `name`."""
    if name in release.flags:
        return name, "exact", ()
    if not (release.allow_abbrev and name.startswith("--") and len(name) > 2):
        return None, "missing", ()
    # argparse accepts a unique prefix of a long option; several matches are an error.
    matches = tuple(flag for flag in release.flags if flag.startswith(name))
    if len(matches) == 1:
        return matches[0], "abbrev", ()
    return None, "missing", matches


@lru_cache(maxsize=4)
def _load_cached(path: str) -> FlagRegistry:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"SGLang flag registry not found at {path}; {REBUILD_HINT}"
        ) from None
    except json.JSONDecodeError as error:
        raise ValueError(
            f"SGLang flag registry {path} is not valid JSON ({error}); {REBUILD_HINT}"
        ) from None
    if data.get("format") != 1 or not data.get("versions"):
        raise ValueError(f"SGLang flag registry {path} has an unknown format; {REBUILD_HINT}")
    releases = {version: Release.from_json(entry) for version, entry in data["versions"].items()}
    return FlagRegistry(releases, Path(path))
