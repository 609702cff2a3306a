"""Which of an entry's fix steps apply to the user's SGLang release (a step may carry `versions`)."""

from __future__ import annotations

from assistant.release_range import spec_contains


def step_version_ok(spec: str | None, version: str | None, registry) -> bool | None:
    """Does a fix step's version range include the user's version? None when unknown."""
    if not spec or not version:
        return None
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(version)
    except InvalidVersion:
        nearest = registry.nearest(version) if registry else None
        if not nearest:
            return None
        v = Version(nearest)
    return spec_contains(spec, v)
