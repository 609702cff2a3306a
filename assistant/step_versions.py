"""Which of an entry's fix steps apply to the user's SGLang release (a step may carry `versions`).

A step's range says on which releases what it describes holds. For a step that tells the user to
upgrade to a release, that range starts at the release it leads to: such a step is for the users
below it, the ones it takes there.

A paste that shows no version is read as a current release, as an entry is (README: an entry about
releases older than every current one fits only a paste that shows such a release): a step only
for releases before the registries' oldest (`[SGLang <0.3]`, 2024) is then left out, unless the
paste's SGLang code may be that old (`old_release_shown`)."""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from assistant.release_range import OLDEST_RELEASE, ends_before, spec_contains

# "Upgrade to 0.5.13 or later", "Or upgrade SGLang to 0.5.12", "upgrade to SGLang 0.5.21"
UPGRADE_TO_RE = re.compile(r"\bupgrade (?:sglang )?to (?:sglang )?v?(\d+\.\d+\.\d+(?:\.post\d+)?)\b", re.IGNORECASE)


def step_version_ok(spec: str | None, version: str | None, registry, text: str = "",
                    old_release_shown: bool = False) -> bool | None:
    """Does a fix step's version range include the user's version? None when unknown, but False
    for a step only for releases older than every current one, unless `old_release_shown`. An
    upgrade step whose range starts at the release it names also applies below that release."""
    if not spec:
        return None
    if not version:
        return False if for_old_releases_only(spec) and not old_release_shown else None
    try:
        v = Version(version)
    except InvalidVersion:
        nearest = registry.nearest(version) if registry else None
        if not nearest:
            return None
        v = Version(nearest)
    return spec_contains(spec, v) or upgrade_target(spec, v, text) is not None


def upgrade_target(spec: str | None, version: Version | str | None, text: str) -> str | None:
    """The release an upgrade step leads to, when its range starts there and the user's release is
    below it: the step's flags are then those of that release, not of the user's."""
    target = UPGRADE_TO_RE.search(text or "")
    if not target or not spec or not version:
        return None
    try:
        lower = [Version(b.version) for b in SpecifierSet(spec) if b.operator in (">=", "==")]
        goal = Version(target.group(1))
        below = Version(str(version)) < goal
    except (InvalidSpecifier, InvalidVersion):
        return None
    return target.group(1) if lower and min(lower) == goal and below else None


def for_old_releases_only(spec: str | None) -> bool:
    """A step's range ends before the oldest release the registries hold (`<0.3`, `<=0.3.6`)."""
    return bool(spec) and ends_before(spec, OLDEST_RELEASE)
