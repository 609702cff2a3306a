"""What changed between two SGLang releases a report compares.

"Worked on 0.5.3, slower after upgrading to 0.5.6", "升级到 0.5.6 之后就崩了": a regression between
releases is a frequent report that no entry names. Its cause is in SGLang's own code or in what
the new release installs with it. `release_change(analysis)` reads the two SGLang releases from the
user's words (only when they speak of a change: upgrading, downgrading, "used to work", 升级,
回退, ...) and compares what the release metadata says of them:

- the pins of the packages that decide kernels and behaviour (torch, flashinfer, sgl-kernel,
  transformers, xgrammar, ...), from `kb/sglang_deps.json` (`assistant.deps`);
- the flags of the user's launch command that the older release has and the newer one lacks (a
  flag dropped or renamed on the way), from the flag registry (`assistant.flags`).

A `ReleaseChange` says both in one sentence and gives the step that finds which change it is:
compare the `server_args=` line each release prints at start (default values change between
releases), then run both releases side by side. Versions of other packages in the same words
(`flashinfer 0.4.0`, `torch 2.8.0`) are not read as SGLang's.

`reports_regression(analysis)` says whether the user's words report such a regression at all (a
release upgraded to that now fails, one release that works and another that does not, "0.4.7 vs
0.4.6" with a slowdown): ranking reads it to put the entry on bisecting releases forward
(`assistant.failure_kind.about_upgrade_regression`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from assistant.deps import DependencyPins
from assistant.failure_kind import kinds_in
from assistant.paste_cache import per_analysis
from assistant.text import mask
from assistant.version_words import (CHANGE_RE, CLAUSE_RE, FAILS_RE, NOT_WORKING_RE, VERSION_RE, WORKS_RE,
                                     compared_versions, image_tags_as_releases, is_sglangs, upgraded_to)
from assistant.trace import Analysis, looks_like_sentence
from assistant.wording import Sentence

# the packages whose pins decide kernels, numerics, parsing and the API (in this order in answers)
WATCHED = ("torch", "flashinfer-python", "sgl-kernel", "sglang-kernel", "transformers", "xgrammar",
           "triton", "torchao", "outlines", "llguidance", "nvidia-cutlass-dsl")
@dataclass(frozen=True)
class PinChange:
    package: str
    before: str | None   # the older release's requirement ("==2.8.0"; "" any version; None not required)
    after: str | None

    def words(self, language: str = "en") -> str:
        return f"{self.package} {_shown(self.before, language)} → {_shown(self.after, language)}"


@dataclass(frozen=True)
class ReleaseChange:
    """The two releases a report compares and what their metadata says changed."""

    older: str            # as the user wrote them
    newer: str
    older_release: str    # the registry releases read for them
    newer_release: str
    pins: tuple[PinChange, ...]
    flags_dropped: tuple[str, ...]   # flags of the user's launch the older release has and the newer lacks

    def sentence(self) -> Sentence:
        older, newer = self.older, self.newer
        if self.pins:
            english = f"SGLang {older} → {newer} changes these pins: " + "; ".join(pin.words() for pin in self.pins)
            chinese = f"SGLang {older} → {newer} 改了这些依赖的锁定版本：" + "；".join(pin.words("zh") for pin in self.pins)
        else:
            english = (f"SGLang {older} and {newer} pin the same versions of torch, flashinfer, sgl-kernel, "
                       "transformers and xgrammar")
            chinese = f"SGLang {older} 和 {newer} 锁定的 torch、flashinfer、sgl-kernel、transformers 和 xgrammar 版本相同"
        if self.flags_dropped:
            shown = ", ".join(f"`{flag}`" for flag in self.flags_dropped)
            english += f"; your launch uses {shown}, which {newer} no longer has"
            chinese += f"；你的启动命令用了 {shown}，而 {newer} 已经没有它"
        return Sentence(english + ".", chinese + "。")

    def next_step(self) -> Sentence:
        """How to find which change it is."""
        return Sentence(
            "Find what the upgrade changed for your launch: each release prints its full settings at start "
            "(`grep -m1 'server_args=' server.log`); compare that line from both releases, since default "
            f"values change between releases. Then run both side by side (`pip install \"sglang=={self.older}\"` "
            "in a second virtualenv) on the same request to confirm which release and which setting it follows.",
            "找出升级给你的启动带来的变化：每个版本启动时都会打印完整配置（`grep -m1 'server_args=' server.log`）；"
            "对比两个版本的这一行，因为默认值在版本之间会变。然后把两个版本并排运行"
            f"（在另一个虚拟环境里 `pip install \"sglang=={self.older}\"`），用同一个请求确认问题跟着哪个版本、哪个配置走。")

    def to_json(self) -> dict:
        return {"older": self.older, "newer": self.newer, "older_release": self.older_release,
                "newer_release": self.newer_release,
                "pins": [{"package": p.package, "older": p.before, "newer": p.after} for p in self.pins],
                "flags_dropped": list(self.flags_dropped), "summary": self.sentence()}


def _user_words(analysis: Analysis) -> str:
    # a one-line report may be read as its error line ("0.5.3 worked, 0.5.6 crashes"): its words count
    sentences = (e.text for e in analysis.errors if looks_like_sentence(e.text))
    return image_tags_as_releases(" ".join((analysis.question, *analysis.prose_lines, *sentences,
                                            *_release_notes_below(analysis))))


def _release_notes_below(analysis: Analysis) -> list[str]:
    """The sentences under the paste's error that name a release and no logger wrote ("Works on
    0.5.1, broken on 0.5.2." below a traceback): the user's note on what they ran, which a reader
    of plain words alone (`trace._looks_like_prose`) does not take for theirs. A program prints its
    release in its settings and banners, not in a sentence after its own error."""
    root = analysis.root_line
    if root is None:
        return []
    notes = [line for line in analysis.plain_lines
             if line not in analysis.logged_lines and VERSION_RE.search(line) and looks_like_sentence(line)]
    if not notes:
        return []   # nearly every paste: no need to place every line of a long log
    order = {line: i for i, line in enumerate(analysis.masked_lines)}
    at = order.get(root.masked)
    if at is None:
        return []
    return [line for line in notes if order.get(mask(line), -1) > at]


def _failure_shown(analysis: Analysis, words: str) -> bool:
    """The paste shows a failure: the user's words tell of one (fails, slower, an OOM), or a
    program's error line is pasted beside them ("This happens only after upgrading to 0.5.2" under
    a `RuntimeError`: the error is what happens)."""
    return bool(FAILS_RE.search(words) or WORSE_RE.search(words) or kinds_in(words) or analysis.root_line)


def release_change(analysis: Analysis, pins: DependencyPins | None = None, registry=None) -> ReleaseChange | None:
    """What changed between the two SGLang releases the paste's words compare, or None."""
    words = _user_words(analysis)
    if not CHANGE_RE.search(words):
        return None
    try:
        pins = pins or DependencyPins.load()
    except (OSError, ValueError):
        return None   # no pin registry (a stripped install): the answer stands without it
    versions = compared_versions(words, (pins.versions[0], pins.versions[-1]))
    if versions is None:
        return None
    older, newer = (pins.nearest_release(v) for v in versions)
    if older == newer:
        return None   # post releases of one base release, or both older than the registry
    changed = []
    for package in WATCHED:
        before, after = (_spec(pins.pin(release, package)) for release in (older, newer))
        if before != after:
            changed.append(PinChange(package, before, after))
    used = {re.split(r"[\s=]", flag, 1)[0] for flag in analysis.environment.flags}
    dropped = tuple(flag for flag in _flags_dropped(registry, older, newer) if flag in used)
    return ReleaseChange(versions[0], versions[1], older, newer, tuple(changed), dropped)


def _spec(pin: dict | None) -> str | None:
    return None if pin is None else pin.get("spec") or ""


def _shown(spec: str | None, language: str) -> str:
    if spec is None:
        return "不需要" if language == "zh" else "not required"
    return spec or ("不限版本" if language == "zh" else "any version")


def _flags_dropped(registry, older: str, newer: str) -> tuple[str, ...]:
    if registry is None:
        return ()
    before, after = registry.nearest(older), registry.nearest(newer)
    if before is None or after is None or before == after:
        return ()
    return tuple(sorted(registry.releases[before].flags - registry.releases[after].flags))


# the words that say a release change came with the failure (not "update": configs and weights are
# updated too; a release "updated to" is read by `upgraded_to`)
REGRESSION_WORD_RE = re.compile(r"\b(?:upgrad\w*|downgrad\w*|regress\w*|roll(?:ed|ing)? back|revert(?:ed|ing)?)\b"
                                r"|升级|降级|回退", re.I)
# SGLang itself named as what was upgraded, with no release number: "after upgrading sglang", "sglang 升级后"
SGLANG_UPGRADED_RE = re.compile(r"\b(?:upgrad|updat)\w*\s+(?:my\s+|the\s+|our\s+)?sglang\b(?![-_\w])"
                                r"|\bsglang\s+(?:was\s+|is\s+|got\s+|has\s+been\s+)?(?:upgrad|updat)\w*"
                                r"|(?:升级|更新)了?\s*sglang|sglang\s*(?:版本)?\s*(?:升级|更新)", re.I)
# two releases set side by side: "0.4.7 vs 0.4.6", "slower than 0.4.6", "compared to 0.4.6-post5"
SIDE_BY_SIDE_RE = re.compile(r"\b(?:vs\.?|versus|compared (?:to|with)|than)\s|相比|对比", re.I)
# what got worse, besides a failure kind or a failing word: "a significant drop in generation speed",
# "12% less throughput"
WORSE_RE = re.compile(r"\b(?:drop(?:s|ped)?|worse|degrad\w*|deteriorat\w*|declin\w*|less|lower|fewer)\b|下降|变差", re.I)
# a move from one release to the other: "from SGLang 0.4.6 to 0.4.7", "从 0.5.3 到 0.5.6"
FROM_TO_RE = re.compile(r"\bfrom\s+(?:sglang\s+)?v?0\.\d[\w.-]*\s+to\s+(?:sglang\s+)?v?0\.\d|从\s*v?0\.\d[\w.-]*\s*(?:升级)?到", re.I)
# one release said to have regressed: "v0.5.12 DeepGemm regression on B300"
REGRESSED_RE = re.compile(r"\bregress\w*|回退", re.I)
# "the same hang was seen on 0.5.14 (not a regression)": the user rules a regression out
NOT_A_REGRESSION_RE = re.compile(r"\b(?:not|no|isn't|wasn't)\s+(?:an?\s+)?regression\b|不是(?:版本)?回退", re.I)


def reports_regression(analysis: Analysis) -> bool:
    """Whether the user's words report a failure that came with a change of SGLang release: a
    release upgraded (or downgraded) to that now fails, SGLang named as upgraded, a release said to
    regress, or two releases of which one works or that are set side by side. A release number
    of another package (`after upgrading mooncake to 0.3.11`) is not SGLang's."""
    return per_analysis("reports_regression", analysis, _reports_regression)


def _reports_regression(analysis: Analysis) -> bool:
    words = NOT_A_REGRESSION_RE.sub(" ", _user_words(analysis))
    if _one_works_another_not(words):
        return True
    if not _failure_shown(analysis, words):
        return False   # a release change that broke nothing ("upgraded to 0.5.6 and it works now")
    releases = [m for m in VERSION_RE.finditer(words) if is_sglangs(words, m.start()) and _known(m.group(1))]
    if any(upgraded_to(words, m.start()) for m in releases) or SGLANG_UPGRADED_RE.search(words):
        return True
    if not releases:
        return False
    if REGRESSED_RE.search(words):
        return True
    if len({m.group(1) for m in releases}) < 2:
        return False
    # two releases: one said to work beside another, an upgrade between them, or set side by side
    return bool(REGRESSION_WORD_RE.search(words) or SIDE_BY_SIDE_RE.search(words) or FROM_TO_RE.search(words)
                or any(WORKS_RE.search(clause) and VERSION_RE.search(clause) for clause in CLAUSE_RE.split(words)))


def _one_works_another_not(words: str) -> bool:
    """One SGLang release said to work and another said not to, each in a clause of its own:
    "sglang v0.4.4 is OK, but v0.4.6 is not", "v0.5.4 works, v0.5.5 no longer works"."""
    works, not_working = set(), set()
    for clause in CLAUSE_RE.split(words):
        named = {m.group(1) for m in VERSION_RE.finditer(clause)
                 if is_sglangs(clause, m.start()) and _known(m.group(1))}
        if len(named) != 1:
            continue
        if NOT_WORKING_RE.search(clause):
            not_working |= named
        elif WORKS_RE.search(clause) and not FAILS_RE.search(clause):
            works |= named
    return bool(works and not_working and works != not_working)


def _known(version: str) -> bool:
    """Within the releases the pin registry knows (a `0.8.5` beside SGLang 0.4.6 is vLLM's); the
    registry is read the first time a paste names a release."""
    try:
        known = DependencyPins.load().versions
    except (OSError, ValueError):
        return True   # no pin registry (a stripped install): any 0.x release counts
    oldest, newest = known[0], known[-1]
    try:
        return oldest <= Version(Version(version).base_version) <= newest
    except InvalidVersion:
        return False
