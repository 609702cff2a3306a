"""Which SGLang releases accept a value of a flag: the fact an `invalid choice` error leaves out.

argparse's `argument --attention-backend: invalid choice: 'fa4' (choose from ...)` lists what the
user's release accepts, not whether another release accepts the value. The flag registry keeps each
release's literal choices (`kb/sglang_flags.json`), so the answer can say "`fa4` is a choice from
0.5.3 on" (upgrade) or "no release has it" (a typo, or a value of another engine). Choices computed at
run time (a parser registry's keys) are not literal and are not claimed either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from assistant.flags import FlagRegistry, describe_versions

INVALID_CHOICE_RE = re.compile(r"argument (--[\w-]+)(?:/-{1,2}[\w-]+)*: invalid choice: '([^']{1,80})'")


@dataclass(frozen=True)
class ChoiceHistory:
    flag: str
    value: str
    releases: tuple[str, ...]       # registry releases whose literal choices include the value
    listed: tuple[str, ...]         # registry releases with literal choices for the flag at all
    user_version: str | None
    user_release: str | None        # the registry release the user's version maps to
    unlisted_after: tuple[str, ...] = ()   # later releases that have the flag but build its choices at run time

    def sentence(self, order: list[str]) -> str:
        if not self.releases:
            return (f"`{self.value}` is not a choice of `{self.flag}` in any SGLang release "
                    f"{order[0]}–{order[-1]} that lists its choices: check the spelling, or whether it "
                    "is a value of another engine's flag.")
        # runs over the releases that list the choices: a release that builds them at run time
        # neither accepts nor rejects the value as far as the registry knows
        where = describe_versions(self.releases, [v for v in order if v in self.listed])
        text = f"`{self.value}` is a choice of `{self.flag}` in SGLang {where}"
        if self.unlisted_after and self.releases[-1] == self.listed[-1]:
            text += (f" (from {self.unlisted_after[0]} on, SGLang builds this flag's choices at run time, "
                     "so later releases are not known here)")
        if self.user_version and self.user_release and self.user_release not in self.releases:
            newer = [r for r in self.releases if order.index(r) > order.index(self.user_release)]
            text += (f"; your SGLang {self.user_version} does not accept it"
                     + (f": upgrade to {newer[0]} or later, or pick one of the choices your error lists"
                        if newer else ": pick one of the choices your error lists"))
        return text + "."


def choice_history(lines: Iterable[str], user_version: str | None, registry: FlagRegistry | None) -> ChoiceHistory | None:
    """The releases that accept the value of the first `invalid choice` error in the lines."""
    if registry is None:
        return None
    for line in lines:
        found = INVALID_CHOICE_RE.search(line)
        if not found:
            continue
        flag, value = found.group(1), found.group(2)
        listed = tuple(v for v in registry.versions if registry.releases[v].flag_choices.get(flag))
        if not listed:
            return None   # choices computed at run time: nothing to claim
        releases = tuple(v for v in listed if value in registry.releases[v].flag_choices[flag])
        user_release = registry.nearest(user_version) if user_version else None
        later = registry.versions[registry.versions.index(listed[-1]) + 1:]
        unlisted_after = tuple(v for v in later if flag in registry.releases[v].flags)
        return ChoiceHistory(flag, value, releases, listed, user_version, user_release, unlisted_after)
    return None
