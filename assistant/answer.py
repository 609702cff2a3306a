"""The answer as data: diagnosis, fix steps, warnings, citations, matches, detected environment.

`compose_extractive` builds it from the retrieved KB entry alone (no LLM): the fix steps that apply
to the user's SGLang version, warnings for wrong advice and for flags in the user's own launch
command that their version does not have, and the sources. When retrieval abstains it says so and
lists what to collect next, with no fix.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from assistant.commands import sglang_names
from assistant.retrieve import Hit, Retrieval
from assistant.trace import Environment

COLLECT_NEXT = [
    "The environment: `python3 -m sglang.check_env` (SGLang, torch, CUDA, flashinfer, GPU, driver).",
    "The first error in the full server log, not the last lines: "
    "`grep -n -m1 -E 'Traceback|Error|error:' server.log` and the 30 lines before it.",
    "The exact launch command (`python3 -m sglang.launch_server ...`) and the model.",
    "For crashes during serving: the request that triggered it (`--crash-dump-folder` keeps the last minutes of requests).",
]


@dataclass
class Match:
    id: str
    title: str
    title_zh: str
    kind: str
    score: float
    confidence: str          # the KB entry's confidence (high..low), or the issue state
    url: str | None
    sources: list[str]
    evidence: list[str]      # the user's lines that matched
    meta: dict = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("meta")
        for key in ("number", "state", "labels", "updated_at", "resolved"):
            if key in self.meta:
                d[key] = self.meta[key]
        return d


@dataclass
class Answer:
    matches: list[Match]
    abstained: bool
    diagnosis: str
    fix: list[str]
    warnings: list[str]
    citations: list[str]
    detected: Environment
    mode: str = "extractive"
    confidence: float = 0.0
    next_steps: list[str] = field(default_factory=list)
    similar_issues: list[Match] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)     # what verification changed (LLM mode)
    note: str | None = None                                # e.g. why the LLM was not used
    primary_error: str | None = None
    text: str = ""

    def to_json(self) -> dict:
        return {
            "matches": [m.to_dict() for m in self.matches],
            "abstained": self.abstained,
            "confidence": self.confidence,
            "answer": {"diagnosis": self.diagnosis, "fix": self.fix, "warnings": self.warnings,
                       "citations": self.citations},
            "detected": self.detected.to_dict(),
            "primary_error": self.primary_error,
            "next_steps": self.next_steps,
            "similar_issues": [m.to_dict() for m in self.similar_issues],
            "verification": {"changes": self.changes},
            "mode": self.mode,
            "note": self.note,
            "text": self.text,
        }


def _match(hit: Hit) -> Match:
    meta = hit.meta
    if hit.kind == "entry":
        sources = [s.get("url") or f"seed document {s.get('seed')}" for s in meta.get("sources", [])]
        confidence = meta.get("confidence", "")
    else:
        sources = [hit.url] if hit.url else [meta.get("path", hit.unit_id)]
        confidence = meta.get("state", "document")
    return Match(hit.unit_id, hit.title, hit.title_zh, hit.kind, hit.score, confidence, hit.url,
                 sources, list(hit.evidence), meta)


def _version_ok(spec: str | None, version: str | None, registry) -> bool | None:
    """Does a fix step's version range include the user's version? None when unknown."""
    if not spec or not version:
        return None
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(version)
    except InvalidVersion:
        nearest = registry.nearest(version) if registry else None
        if not nearest:
            return None
        v = Version(nearest)
    return SpecifierSet(spec).contains(Version(v.base_version), prereleases=True)


def format_step(text: str, commands, versions: str | None, show_versions: bool,
                caveat: str | None = None) -> str:
    label = f"[SGLang {versions}] " if versions and show_versions else ""
    lines = [label + text]
    lines += [f"    $ {c}" for c in commands]
    if caveat:  # the risk belongs next to the command that carries it, not in a footnote
        lines.append(f"    ! Caution: {caveat}")
    return "\n".join(lines)


def flag_warnings(env: Environment, registry, user_env_vars=()) -> list[str]:
    """Flags in the user's own launch command, and SGLANG_* / SGL_* variables in their paste,
    that their SGLang version does not accept (any version when it is unknown)."""
    if registry is None:
        return []
    version = registry.nearest(env.sglang_version) if env.sglang_version else None
    where = f"SGLang {env.sglang_version}" if version else "any SGLang release"
    out = []
    names = [("launch command uses", f.split()[0]) for f in env.flags]
    names += [("paste sets", name) for name in user_env_vars if name.startswith(("SGLANG_", "SGL_"))]
    for what, name in dict.fromkeys(names):
        status = registry.check(name, version)
        if status.exists:
            continue
        verb = "does not accept" if status.kind == "flag" else "does not read"
        fix = f" Use {status.replacement} instead." if status.replacement else ""
        out.append(f"Your {what} {name}, which {where} {verb} ({status.note}).{fix}".replace("..", "."))
    return out


def compose_extractive(retrieval: Retrieval, registry=None, top_k: int = 3) -> Answer:
    env = retrieval.analysis.environment
    matches = [_match(h) for h in retrieval.hits[:top_k]]
    similar = [_match(h) for h in retrieval.similar][:5]
    primary = retrieval.analysis.primary.text if retrieval.analysis.primary else None
    warnings = flag_warnings(env, registry, retrieval.analysis.user_names)
    if retrieval.abstain or not retrieval.hits:
        closest = ", ".join(f"{m.id} ({m.score:.2f})" for m in matches[:3])
        diagnosis = ("No known problem in the knowledge base matches this trace well enough "
                     f"(confidence {retrieval.confidence:.2f}), so no fix is suggested."
                     + (f" Closest entries, not a match: {closest}." if closest else ""))
        return Answer(matches=matches, abstained=True, diagnosis=diagnosis, fix=[],
                      warnings=warnings, citations=[], detected=env, confidence=retrieval.confidence,
                      next_steps=list(COLLECT_NEXT), similar_issues=similar, primary_error=primary)

    top = retrieval.hits[0]
    meta = top.meta
    if top.kind != "entry":
        return _compose_from_unit(retrieval, matches, similar, warnings, primary)
    version = env.sglang_version
    fix, dropped = [], []
    for step in meta["fix"]:
        ok = _version_ok(step.get("versions"), version, registry)
        if ok is False:
            continue
        names = sglang_names(step["text"], *step.get("commands", []))
        if registry is not None and version:
            # a flag the user wrote (e.g. "replace your --enable-reasoning") is not a recommendation
            statuses = [registry.check(n, registry.nearest(version)) for n in names
                        if n not in retrieval.analysis.user_names]
            missing = [st.name for st in statuses if not st.known]
            if missing:
                dropped.append(f"A step of this fix uses {', '.join(missing)}, which SGLang {version} "
                               "does not have; it was left out.")
                continue
        fix.append(format_step(step["text"], step.get("commands", []), step.get("versions"),
                               show_versions=ok is None, caveat=step.get("caveat")))
    diagnosis = f"{meta['title']}. {meta['cause']}"
    if meta.get("confidence") in ("low", "medium-low", "low-medium"):
        warnings.append(f"This entry's confidence is {meta['confidence']}: the fix is a workaround "
                        "or comes from an open issue; verify it on your setup.")
    for wrong in meta.get("wrong_advice", []):
        warnings.append(f"Wrong advice: {wrong['claim']} — {wrong['fact']}")
    warnings += dropped
    citations = [f"kb:{top.unit_id}"] + [s.get("url") or f"seed:{s.get('seed')}" for s in meta.get("sources", [])]
    return Answer(matches=matches, abstained=False, diagnosis=diagnosis, fix=fix, warnings=warnings,
                  citations=citations, detected=env, confidence=retrieval.confidence,
                  similar_issues=similar, primary_error=primary,
                  next_steps=[f"Verify: {v}" for v in meta.get("verify", [])])


def _compose_from_unit(retrieval, matches, similar, warnings, primary) -> Answer:
    """The best match is a document or an issue: point at it, quote no invented fix."""
    top = retrieval.hits[0]
    kind = "GitHub issue" if top.kind == "issue" else "document"
    summary = top.meta.get("resolution") or top.meta.get("summary") or ""
    diagnosis = f"The closest source is a {kind}: {top.title}." + (f" {summary}" if summary else "")
    fix = [f"Read {top.url or top.meta.get('path', top.unit_id)}: it reports the same error"
           + (" and how it was resolved." if top.meta.get("resolved") else ".")]
    return Answer(matches=matches, abstained=False, diagnosis=diagnosis, fix=fix, warnings=warnings,
                  citations=[top.url or top.unit_id], detected=retrieval.analysis.environment,
                  confidence=retrieval.confidence, similar_issues=similar, primary_error=primary,
                  next_steps=list(COLLECT_NEXT[:2]))
