"""KB entries' error lines against the message registry: the emission sites an entry is about.

An entry's signatures that are SGLang's own messages name where SGLang emits them
(`assistant.origin`). Two uses:

- `origin_agrees(entry_meta, user_origin)`: does the user's root error come from the same site
  as the entry's messages (same module and function, or the same message)? True / False, or
  None when either side is not an SGLang message (nothing to compare). A decision can use it as
  evidence for or against an entry.
- `raised_where_declared(entry_meta, user_origin)`: the root error comes from a site the entry
  declares for its whole class of errors (`raised_in`): evidence for the entry, as a matched line.
- `signature_warnings(entry, registry)`: for `ask kb check`, signatures that look like SGLang's
  messages but match none in the releases the entry applies to (a typo, a paraphrase, a line
  from a release outside the entry's range). Lines of other libraries are not judged.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from assistant.origin import (DROP_QUOTES, SPECIFIC_LITERAL, WORD, ErrorRegistry, Origin, display_template,
                              match_origin)

TOKEN = re.compile(r"\{\}|[a-z0-9_]+")
FIELD = re.compile(r"\{[^{}]*\}")
NEAR_CANDIDATES = 30     # registry messages compared word by word with a signature
NEAR_MIN_WORDS = 4       # words a near miss must share with the message...
NEAR_SHARE = 0.75        # ...and this share of the signature's words


# ---- the sites of an entry, and agreement with the user's origin -----------------------------

@lru_cache(maxsize=1024)
def _sites(entry_id: str, signatures: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """(module, function, template) of every signature that is an SGLang message."""
    found = []
    for signature in signatures:
        origin = match_origin([signature])
        if origin is not None and origin.is_sglang:
            found.append((origin.module, origin.function, origin.template))
    return tuple(dict.fromkeys(found))


def entry_sites(entry_meta: dict) -> tuple[tuple[str, str, str], ...]:
    """The emission sites of an entry's signatures (computed once per entry)."""
    return _sites(entry_meta.get("id", ""), tuple(entry_meta.get("signatures") or ()))


def raised_where_declared(entry_meta: dict, user_origin: Origin | None) -> bool:
    """The user's root error is an SGLang message raised at a site the entry declares its class
    of errors comes from (`raised_in`: `sglang.srt.server_args:ServerArgs` takes every check of
    that class, `sglang.srt.arg_groups` every function of those modules). Only raised errors:
    a warning logged there, or argparse rejecting a value, is not a check of the class."""
    if (user_origin is None or not user_origin.is_sglang or not user_origin.module
            or user_origin.kind not in ("raise", "assert")):
        return False
    for site in entry_meta.get("raised_in") or ():
        module, _, function = site.partition(":")
        if not (user_origin.module == module or user_origin.module.startswith(module + ".")):
            continue
        if not function or user_origin.function == function or user_origin.function.startswith(function + "."):
            return True
    return False


def origin_agrees(entry_meta: dict, user_origin: Origin | None) -> bool | None:
    """True: the user's root error comes from a site the entry's messages come from, or one it
    declares (`raised_in`); False: both are SGLang messages from different sites; None: nothing
    to compare."""
    if user_origin is None or not user_origin.is_sglang:
        return None
    if raised_where_declared(entry_meta, user_origin):
        return True
    try:
        sites = entry_sites(entry_meta)
    except (OSError, ValueError):
        return None   # no registry built
    if not sites:
        return None
    return any((module, function) == (user_origin.module, user_origin.function)
               or template == user_origin.template for module, function, template in sites)


# ---- kb check ---------------------------------------------------------------------------------

def _in_range(releases, affected: str) -> bool:
    try:
        spec = SpecifierSet(affected)
        return any(spec.contains(Version(r), prereleases=True) for r in releases)
    except (InvalidSpecifier, InvalidVersion):
        return True   # not judged


def _sglang_releases(signature: str, registry: ErrorRegistry) -> tuple[str, ...]:
    """Every SGLang release with a message the signature matches specifically."""
    found: set[str] = set()
    for number, _line, literal in registry.find([signature.translate(DROP_QUOTES)]):
        row = registry.row(number)
        if literal >= SPECIFIC_LITERAL and registry.packages[row[registry.col["package"]]] == "sglang":
            found |= set(registry.release_names(number))
    return tuple(sorted(found, key=Version))


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower().translate(DROP_QUOTES))


def near_miss(signature: str, registry: ErrorRegistry) -> tuple[int, str] | None:
    """(message number, how it differs) of a registry message the signature almost is: most of
    its words in the message's order, but a word changed, added or left out inside it (not a
    value where the message has a placeholder or a number, not a fragment cut at either end).
    None when some message contains the signature as it is (a fragment of a longer message)."""
    words = set(WORD.findall(signature.lower().translate(DROP_QUOTES)))
    keys_col = registry.col["keys"]
    counts: dict[int, int] = {}
    for word in words:
        for number in (*registry.index.get(word, ()), *registry.index_more.get(word, ())):
            counts[number] = counts.get(number, 0) + 1
    candidates = sorted((n for n, c in counts.items() if c >= 2), key=lambda n: -counts[n])[:NEAR_CANDIDATES]
    sig_tokens = _tokens(signature)
    best = None
    for number in candidates:
        if not all(key in words for key in registry.row(number)[keys_col][:1]):
            continue   # not even the message's rarest word: another message
        template = registry.row(number)[registry.col["template"]]
        message_tokens = _tokens(FIELD.sub(" {} ", template.replace("{{", "(").replace("}}", ")")))
        matcher = SequenceMatcher(None, sig_tokens, message_tokens, autojunk=False)
        shared = sum(block.size for block in matcher.get_matching_blocks())
        if shared < NEAR_MIN_WORDS or shared < NEAR_SHARE * len(sig_tokens):
            continue
        opcodes = matcher.get_opcodes()
        equal = [i for i, op in enumerate(opcodes) if op[0] == "equal"]
        inner = opcodes[equal[0] + 1:equal[-1]] if equal else []
        differences = [op for op in inner if op[0] != "equal" and not _is_value(
            sig_tokens[op[1]:op[2]], message_tokens[op[3]:op[4]])]
        if not differences:
            return None   # the signature is (a fragment of) this message
        _tag, i1, i2, j1, j2 = differences[0]
        ours, theirs = " ".join(sig_tokens[i1:i2]), " ".join(message_tokens[j1:j2])
        if ours and theirs:
            difference = f"'{ours}' where SGLang has '{theirs}'"
        else:
            difference = f"'{ours}' is not in SGLang's text" if ours else f"SGLang's text also has '{theirs}'"
        if best is None or shared > best[0]:
            best = (shared, number, difference)
    return (best[1], best[2]) if best else None


def _is_value(ours: list[str], theirs: list[str]) -> bool:
    """A placeholder filled in, or numbers that differ (a version, a size): not a wording change."""
    return "{}" in theirs or all(t.isdigit() for t in ours + theirs)


def signature_warnings(signatures, affected: str, registry: ErrorRegistry) -> list[str]:
    """Warnings for the signatures that look like SGLang's own messages but match none in the
    releases the entry applies to (`affected`, a PEP 440 specifier; "" is any release)."""
    out = []
    for signature in signatures:
        origin = match_origin([signature], registry=registry)
        if origin is not None and not origin.is_sglang:
            continue   # another library's line: the registry has nothing to say about it
        if origin is not None:
            releases = _sglang_releases(signature, registry) or origin.releases
            if affected and origin.package == "sglang" and not _in_range(releases, affected):
                out.append(f"signature {signature!r} is SGLang's message from {origin.module}:"
                           f"{origin.function} only in releases {releases[0]}–{releases[-1]}, none of "
                           f"which the entry's versions ({affected}) include")
            continue
        near = near_miss(signature, registry)
        if near is not None:
            number, difference = near
            message = registry.origin(number, signature, None, 0)
            out.append(f"signature {signature!r} matches no SGLang message; it looks like "
                       f"{display_template(registry.row(number)[registry.col['template']])!r} "
                       f"({message.module}:{message.function}) with {difference}")
    return out


def raised_in_warnings(raised_in, registry: ErrorRegistry) -> list[str]:
    """Warnings for declared sites (`raised_in`) that name no module, or no function of it,
    that the registry knows SGLang raises from (a typo, a module renamed away)."""
    modules = {path[:-3].replace("/", ".").removesuffix(".__init__") for path in registry.paths}
    out = []
    for site in raised_in:
        module, _, function = site.partition(":")
        if not any(m == module or m.startswith(module + ".") for m in modules):
            out.append(f"raised_in {site!r}: no SGLang module {module} in the message registry")
        elif function and not any(f == function or f.startswith(function + ".") for f in registry.functions):
            out.append(f"raised_in {site!r}: no function {function} in the message registry")
    return out

