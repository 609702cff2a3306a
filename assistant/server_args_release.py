"""Whether a printed ServerArgs dump comes from a release older than every one the flag registry holds.

SGLang logs its settings at start (`server_args=ServerArgs(model_path=..., tp_size=1, ...)`), and
each field is a command-line flag (`tp_size` is `--tp-size`), so the registry dates the fields. A
dump whose known fields all exist in the registry's oldest release, beside fields no release in
the registry has (`additional_ports`, dropped before 0.4), is from a release older than that one.
A build newer than the registry cannot read so: it prints many fields its oldest release lacked.
"""

from __future__ import annotations

import re
from functools import lru_cache

from assistant.flags import FlagRegistry

# a field of the dump: after its opening parenthesis or a comma (`..., additional_ports=[30001, 30002]`)
FIELD_RE = re.compile(r"(?:\(|,)\s*([a-z][a-z0-9_]*)=")
# fewer known fields than this say too little about which release printed them
KNOWN_FIELDS_OK = 3


def server_args_dump(lines) -> str | None:
    """The first ServerArgs dump among the paste's lines, from its `ServerArgs(` on."""
    for line in lines:
        if "ServerArgs(" in line:
            return line[line.index("ServerArgs("):]
    return None


def predates_registry(server_args: str | None, registry: FlagRegistry | None = None) -> bool:
    """The dump names fields no registry release has, and every other field it names is one the
    registry's oldest release already had."""
    if not server_args:
        return False
    registry = registry or FlagRegistry.load()
    flags = {"--" + name.replace("_", "-") for name in FIELD_RE.findall(server_args)}
    oldest, every = _flag_sets(registry)
    known = flags & every
    return bool(flags - every) and len(known) >= KNOWN_FIELDS_OK and known <= oldest


@lru_cache(maxsize=4)
def _flag_sets(registry: FlagRegistry) -> tuple[frozenset[str], frozenset[str]]:
    """The flags of the registry's oldest release, and those of any release."""
    oldest = registry.releases[registry.versions[0]].flags
    return oldest, frozenset().union(*(release.flags for release in registry.releases.values()))
