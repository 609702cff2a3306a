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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.deps import DependencyPins
from assistant.version_words import CHANGE_RE, compared_versions
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


def release_change(analysis: Analysis, pins: DependencyPins | None = None, registry=None) -> ReleaseChange | None:
    """What changed between the two SGLang releases the paste's words compare, or None."""
    # a one-line report may be read as its error line ("0.5.3 worked, 0.5.6 crashes"): its words count
    sentences = (e.text for e in analysis.errors if looks_like_sentence(e.text))
    words = " ".join((analysis.question, *analysis.prose_lines, *sentences))
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
