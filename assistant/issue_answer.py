"""The answer when the best source is a GitHub issue: the thread's resolution as fix steps (each
checked against the flag registry for the user's SGLang version), the pull request that fixed it
and the release that shipped it ("Fixed by #4244, released in 0.4.6: upgrade from your 0.4.3"),
the thread's link, and honesty about the rest: an open or unresolved thread says so, and a
suggestion nobody confirmed is labelled "unconfirmed workaround", never presented as the fix.

When several issues carry the same error line, the resolved one leads and the others are named
as the same report. The resolution itself is read at ingest (`ingest.github.resolution`).
`assistant.answer` turns this into the Answer and lends its flag check of fix steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from assistant.text import mask

STATUS_RANK = {"resolved": 0, "workaround": 1, "unresolved": 2}
UNCONFIRMED = "Unconfirmed workaround: "


@dataclass
class IssueAnswer:
    lead: object                      # the retrieval Hit of the issue that answers
    diagnosis: str
    fix: list[str]
    warnings: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    confirmed: bool = False           # False: the user still needs to collect more


def _signatures(hit) -> set[str]:
    return {mask(s).lower() for s in hit.meta.get("signatures") or []}


def same_reports(retrieval) -> list:
    """The top issue and the other retrieved issues that carry one of its error lines, the one to
    lead first: resolved before workaround before unresolved, then in retrieval order."""
    top = retrieval.hits[0]
    mine = _signatures(top)
    seen, reports = set(), []
    for hit in [top, *retrieval.hits[1:], *retrieval.similar]:
        if hit.kind != "issue" or hit.unit_id in seen:
            continue
        if hit is top or (mine and mine & _signatures(hit)):
            seen.add(hit.unit_id)
            reports.append(hit)
    order = {h.unit_id: i for i, h in enumerate(reports)}
    return sorted(reports, key=lambda h: (STATUS_RANK.get(_resolution(h).get("status"), 3), order[h.unit_id]))


def _resolution(hit) -> dict:
    res = hit.meta.get("resolution")
    return res if isinstance(res, dict) else {}   # an index built before resolutions were read


def _version_tuple(version: str | None):
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) if version else None
    except InvalidVersion:
        return None


def _thread_state(meta: dict) -> str:
    if meta.get("state") != "closed":
        return "still open"
    return {"not_planned": "closed as not planned", "duplicate": "closed as a duplicate"}.get(
        meta.get("state_reason") or "", "closed")


def release_line(res: dict, repo: str, user_version: str | None) -> tuple[str | None, bool]:
    """"Fixed by #N, released in X: upgrade from your Y", and whether the user's SGLang already has
    the fix (then the thread's fix is not their answer). Another repository's releases (a verl
    issue) are named with that repository; only SGLang versions are compared with the user's."""
    pr, fixed_in, upgrade = res.get("fix_pr"), res.get("fixed_in"), res.get("upgrade_to")
    sglang_repo = repo.lower().endswith("/sglang")
    sglang_target = fixed_in if sglang_repo and fixed_in else upgrade
    mine, target = _version_tuple(user_version), _version_tuple(sglang_target)
    has_it = bool(mine and target and mine >= target)
    parts = []
    if pr:
        parts.append(f"Fixed by #{pr}")
    if fixed_in:
        basis = " (the first release after it was merged)" if res.get("fixed_in_basis") == "date" else ""
        parts.append(f"released in {'' if sglang_repo else repo.split('/')[-1] + ' '}{fixed_in}{basis}")
    elif pr and res.get("fix_pr_merged_at"):
        parts.append(f"merged {str(res['fix_pr_merged_at'])[:10]}, in no release found yet")
    if not parts and not sglang_target:
        return None, False
    line = ", ".join(parts) if parts else f"Upgrade to SGLang {sglang_target} or later"
    if has_it:
        line += f": your SGLang {user_version} already has it"
    elif target and mine:
        line += f": upgrade from your {user_version}" + (f" to {sglang_target}" if not parts else "")
    elif target and parts:
        line += f": upgrade to SGLang {sglang_target} or later"
    line += "."
    if target and not has_it:
        line += f'\n    $ pip install -U "sglang>={sglang_target}"'
    return line, has_it


def issue_answer(retrieval, missing_flags: Callable[[list[str]], list[str]]) -> IssueAnswer:
    """The answer from the best issue among those reporting the user's error. `missing_flags`
    names the SGLang flags of a step's texts that the user's version lacks (such steps are left out)."""
    env = retrieval.analysis.environment
    warnings: list[str] = []
    reports = same_reports(retrieval)
    lead = reports[0]
    others = reports[1:]
    meta, res = lead.meta, _resolution(lead)
    status = res.get("status") or "unresolved"
    repo = meta.get("repo") or ""
    url = lead.url or lead.unit_id
    where = f"#{meta.get('number', '?')}"

    fix: list[str] = []
    dropped: list[str] = []
    version = env.sglang_version
    for step in res.get("steps") or []:
        commands = [c for c in step.get("commands") or [] if f"`{c}`" != step["text"].strip().rstrip(".")]
        missing = missing_flags([step["text"], *commands])
        if missing:
            dropped.append(f"A step of {where}'s fix uses {', '.join(missing)}, which SGLang {version} "
                           "does not have; it was left out.")
            continue
        text = (UNCONFIRMED if status != "resolved" else "") + step["text"]
        # a bare flag is added to the launch command, not run
        fix.append("\n".join([text] + [f"    {'add:' if c.startswith('--') else '$'} {c}" for c in commands]))
    if fix:   # where the steps come from, next to them
        fix[0] += f"\n    (from {res.get('comment_url') or url})"
    line, has_fix = release_line(res, repo, version)
    if line and status == "resolved":
        fix.append(line)
    elif line:
        warnings = [*warnings, f"{where} names a fix that was not confirmed in the thread: {line.splitlines()[0]}"]
    if status == "resolved" and not fix:
        fix.append(f"Read {url}: the thread says how it was resolved.")
    if has_fix:
        warnings = [*warnings, f"Your SGLang {version} already contains the fix of {where}: if you still see this "
                               "error, it has another cause; add your log to the thread or open a new issue."]

    by = res.get("by") or {}
    who = {"maintainer": "a maintainer", "reporter": "the reporter"}.get(by.get("role"), "a user")
    state = _thread_state(meta)
    if status == "resolved":
        how = {"confirmed": f"the fix below, from {who}, was confirmed in the thread",
               "maintainer": "a maintainer answered with the fix below",
               "fix_pr": f"#{res.get('fix_pr')} fixed it"}.get(res.get("basis") or "", "see the fix below")
        summary = f"It was resolved: {how}." + (" The thread is still open." if state == "still open" else "")
    elif status == "workaround":
        summary = (f"It is {state} without a confirmed fix: the steps below are an unconfirmed workaround "
                   f"suggested by {who}, not a verified fix.")
    else:
        summary = f"It is {state} with no fix in the thread."
    first = (res.get("steps") or [{}])[0].get("text", "") if status != "unresolved" else ""
    first = first if not first or first[-1] in ".!?:" else first + "."
    diagnosis = f"GitHub issue {where} reports this error: {lead.title}. {summary}" + (f" {first}" if first else "")
    if others:
        diagnosis += " The same error is reported in " + ", ".join(
            f"#{h.meta.get('number', '?')} ({_thread_state(h.meta)})" for h in others[:5]) + "."
    if status == "workaround":
        warnings = [*warnings, f"Nobody in {where} confirmed that this workaround fixes the problem: try it on a "
                               "test deployment first and report back in the thread."]
    warnings = warnings + dropped
    next_steps = list(res.get("notes") or [])
    next_steps += [f"Related: #{n}" for n in res.get("related") or []][:3]
    if status != "resolved":
        next_steps.append(f"Follow {url} for a fix; add your environment and log there if it matches.")
    citations = list(dict.fromkeys([url, *([res["comment_url"]] if res.get("comment_url") else [])]))
    return IssueAnswer(lead, diagnosis, fix, warnings, next_steps, citations, confirmed=status == "resolved")
