"""The decision: is the top hit the fix for this paste, a lead worth checking, or unknown?

Retrieval ranks (`assistant.retrieve`); this module decides, in three outcomes:

- `fix`: the entry explains the user's root error. Its signature matched, or the words agree
  strongly enough (dense + lexical evidence); and nothing in the paste contradicts it.
- `lead`: an entry (or issue) is plausibly related, but something that makes the case specific
  does not agree: the entry matched only a generic line that many problems print
  (`assistant.generic_lines`), the root error is a specific line the entry does not explain, the
  trace fails inside a component the entry is not about (`assistant.components`), the user's
  hardware, operating system (`assistant.host_platform`) or SGLang version is outside the entry's
  scope, or so is what the paste's numbers show (whose memory an out-of-memory is,
  `assistant.gpu_memory`; the signal a process died of, `assistant.exit_signal`), whether it failed
  starting or after serving (`assistant.phase`), the model family or a feature the launch does not
  turn on (speculative decoding, LoRA, PD, several nodes), the only
  specific match is a traceback frame the error passed through, the entry is a diagnosis (what a line means and how to find the failure behind it, not
  that failure), or the paste is a how-to question.
- `unknown`: nothing is close enough to name.

Evidence for an entry is its matched lines; evidence against it is what in the paste it does not
explain. The reasons are kept: a lead says what in the log would confirm or rule it out.

Hits are `assistant.retrieve.Hit` objects, used by their fields only (unit_id, kind, score,
dense, signature, evidence, meta), so this module does not import retrieval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from assistant.commands import FLAG_RE
from assistant.components import BY_NAME, components_denied, components_in, conflicts, families, specific
from assistant.cuda_major import cuda_conflict
from assistant.entry_account import account_quotes
from assistant.environment import HARDWARE_HINTS, gpu_vendor, named_programs, program_names
from assistant.exception_line import without_class
from assistant.exit_signal import signal_agrees, signal_conflict
from assistant.generic_lines import DISABLE_STEP_RE, SOLUTION_STEP_RE, is_generic, specific_words
from assistant.gpu_arch import arch_conflict
from assistant.gpu_memory import holder_agrees, holder_conflict
from assistant.host_platform import home_platform_entry, platform_conflict
from assistant.index import Index
from assistant.failure_kind import about_upgrade_regression, entry_kinds, kind_conflict, kinds_in, kinds_zh
from assistant.intent import is_question
from assistant.quoted_line import quoted_messages, quotes_entry_line
from assistant.dependency_upgrade import upgrade_unexplained
from assistant.model_family import families_in, subject_family, title_subject
from assistant.origin import relayed
from assistant.raised_timeout import timeout_already_raised
from assistant.origin_check import origin_agrees, raised_where_declared
from assistant.paste_cache import per_analysis
from assistant.phase import phase_conflict
from assistant.provenance import paste_origin, paste_symbol
from assistant.release_range import OLDEST_RELEASE, ends_before, module_of, of_known_releases, release_range, scope_fits
from assistant.quoted_paths import line_with_paths_as_placeholders, signature_paths
from assistant.server_args_release import predates_registry, server_args_dump
from assistant.tell_apart import cleared_cause, pointed_sibling
from assistant.term_weights import masked_signature, signature_text, token_idf
from assistant.text import code_span, mask, tokenize
from assistant.trace import Analysis, looks_like_sentence, tells_of_failure
from assistant.upgrade import reports_regression
from assistant.wording import Sentence

# A signature line of the top hit occurs in the log (the match score, 0..1.2).
SIGNATURE_OK = 0.6
# evidence = dense cosine + 0.5 * query covered by the hit + 0.5 * the hit's error line covered by
# the query + how far the hit is ahead of the second (a clear winner, not one of many near-misses).
# A fix on words alone, with no error line of the entry in the paste (almost always a report in
# prose): at a bar of 1.15 such answers on the real dev reports were right 40 times in 62, and
# 0 in 7 on the real held-out reports. Re-set on the dev splits only: at 1.35, 12 fewer right
# fixes and 19 fewer wrong ones (+4 decisions); below the bar the entry is still named, as a lead
EVIDENCE_OK = 1.35
# A report in words only (no log) that reads like an entry whose failure prints known lines, none
# of which the report shows: the words must agree more clearly than EVIDENCE_OK. Set on reports no
# entry was written from (real/dev28 against the KB before its round), such fixes were right 2
# times in 10, and all 8 wrong ones were below 1.55; the bar makes the rest leads that name the
# entry and the line that would confirm it
WORDS_ALONE_OK = 1.55
# A report that restates the entry's own account of its failure — its title and its closest
# symptom, by rarity-weighted share of their words (0..2) — says which failure it is, not only
# its topic: its words need only come close to the bars above. Only for a report in words (no log
# output): a log holds lines to match, and none of the entry's is there. Set on the dev tune half:
# of such leads at >= 1.0, >= 1.25 and a margin >= 0.1, 14 were the expected fix and none another
# problem's (the nearest other problem's lead on the tune half was at 1.17; at 0.9 and 1.2 with no
# margin, 4 of the 16 new fixes on the check half were another problem's, at 1.0 / 1.2 / 0.1 one of 12)
RESTATED_OK = 1.0
RESTATED_EVIDENCE_OK = 1.25
# ... and clearly ahead of the next entry: two entries close together share the symptom restated
RESTATED_MARGIN_OK = 0.1
COVERAGE_WEIGHT = 0.5
SIGNATURE_COVERAGE_WEIGHT = 0.5
# below EVIDENCE_OK but this close, with no matched line: still a lead worth naming. On the dev
# reports a lead below 0.9 (or on a near-miss of a line) named a related entry 16 times in 104,
# above it 99 in 215: below, the paste is unknown rather than pointed at an unrelated entry
LEAD_EVIDENCE = 0.9
# a specific root error that no signature matched must be mostly covered by the entry's lines
ROOT_COVERAGE_OK = 0.6
# prefixed log lines that make a paste a log even with no error line in it (a hang, a crash the
# log does not show): an entry whose lines occur in none of them is a lead, not the fix
LOG_LINES_OK = 2
# share of an entry's error line a question must contain to be pointed at that entry
QUESTION_NAMES_ERROR = 0.5
FIX, LEAD, UNKNOWN = "fix", "lead", "unknown"
NO_MATCH_REASON = Sentence("No known problem matches the error well enough to name a fix.",
                           "没有哪个已知问题和这个错误吻合到足以给出修复方法。")
# the same, said of an entry whose error lines the paste matches only in part
PART_MATCH_REASON = Sentence("Its error lines match your paste only in part, not closely enough to name it as the fix.",
                             "它的错误行和你贴的内容只部分吻合，还不足以当作修复方法。")
# the same, said of an entry that only the words of the report bring close
WORDS_ONLY_CLOSE_REASON = Sentence(
    "It is close to your report in its words only, not closely enough to be named as the fix.",
    "它只是在用词上和你的报告相近，还不足以当作修复方法。")
# an entry marked `diagnosis` fits the paste: what the line means and how to find the failure
# behind it (a wrapper's relay, `terminated with -3`, a bare illegal memory access) — a lead whose
# steps are the next steps, never the fix of a failure nobody has seen yet
DIAGNOSIS_REASON = Sentence("This entry says what your error line means and how to find the failure behind it; "
                            "it does not name that failure, so its steps are next steps, not the fix.",
                            "这个条目说明了你的错误行是什么意思、如何找到它背后的故障；它没有指出是哪个故障，"
                            "所以它的步骤是下一步排查，不是修复方法。")
# the same for a paste that shows no error line (a hang, a slow server): the entry is about the
# problem described, and there is no line whose meaning it could explain
SYMPTOM_DIAGNOSIS_REASON = Sentence("This entry says how to find the failure behind what you describe; your paste "
                                    "shows no error line, and the entry does not name the failure, so its steps "
                                    "are next steps, not the fix.",
                                    "这个条目说明了如何找到你描述的现象背后的故障；你贴的内容里没有错误行，条目也没有指出"
                                    "是哪个故障，所以它的步骤是下一步排查，不是修复方法。")
# the root error is raised at a site whose whole class of checks the entry is about (`raised_in`),
# but the entry does not name this check: its message says what to change, the entry how to read it
DECLARED_SITE_REASON = ("Your error is one of the checks this entry is about (raised in SGLang's {site}), "
                        "but not one it names: the message itself says what to change, and the entry's "
                        "steps say how to read it.",
                        "你的错误属于这个条目讲的那一类检查（由 SGLang 的 {site} 抛出），但不是它列出的那几项："
                        "报错信息本身说明了要改什么，条目的步骤说明如何解读。")
ROOT_KINDS = ("exception", "fatal")


@dataclass(frozen=True)
class Decision:
    outcome: str                    # fix | lead | unknown
    confidence: float               # 0..1
    reasons: tuple[str, ...] = ()   # why not a fix: what would confirm or rule the lead out
    question: bool = False          # the paste is a how-to / configuration question
    failing_components: tuple[str, ...] = ()   # where the user's error arises (specific ones)
    top: int = 0                    # the hit the decision is about (a runner-up may fit better)
    diagnosis: bool = False         # the entry fits, but says how to find the failure, not which
    # the root error is one of the checks the entry is about (`raised_in`), not one it names:
    # the SGLang site that raised it
    checked_at: str = ""
    # the lead was chosen for the failure the user describes, not for a line of the log
    # (`_described_failure_lead`): what would confirm it is that failure, not the entry's first line
    described: bool = False

    @property
    def abstain(self) -> bool:
        return self.outcome != FIX


PROMOTE_FROM = 3   # a runner-up this close may take the top place when only it fits the paste


def decide(hits, tokens, index: Index, analysis: Analysis | None = None, idf=None) -> Decision:
    """Decide on the top hit (`_decide`), then hand a paste that says a sibling's case to that
    sibling (`_told_apart`)."""
    decision = _decide(hits, tokens, index, analysis, idf)
    if analysis is None or decision.question or decision.outcome == UNKNOWN or not hits:
        return decision
    return _told_apart(decision, hits, tokens, index, analysis, idf) or decision


# the lead goes to the sibling the paste's words point to
TOLD_APART_REASON = ("Your paste says {word}: that is this entry's case, not that of kb:{other}, though both "
                     "print the same error line; no line of this entry's own confirms it yet.",
                     "你贴的内容里有 {word}：这是这个条目讲的情况，不是 kb:{other} 的，虽然两者打印同样的报错行；"
                     "但还没有这个条目自己的报错行能确认它。")
# the sibling was not retrieved: the entry stays, as a lead that says where the words point
POINTS_AWAY_REASON = ("Your paste says {word}, which this entry tells apart from its own case: that is kb:{sibling}.",
                      "你贴的内容里有 {word}，这个条目说明这种情况不归它管：那是 kb:{sibling}。")


def _told_apart(decision: Decision, hits, tokens, index: Index, analysis: Analysis, idf) -> Decision | None:
    """The decided entry names a sibling that shares its lines (`tell_apart`) and the paste says a
    word of the sibling's case: the sibling is decided in its place (its fix when a line of its own
    confirms it, else a lead), and this entry's fix is never shown. None when nothing points away."""
    chosen = hits[decision.top]
    pointed = pointed_sibling(chosen.meta, analysis) if chosen.kind == "entry" else None
    if pointed is None:
        return None
    sibling_id, word = pointed
    at = next((i for i, hit in enumerate(hits) if hit.kind == "entry" and hit.unit_id == sibling_id), None)
    if at is None:   # the sibling was not retrieved: this entry stays, as a lead at most
        reason = Sentence(*(text.format(word=word, sibling=sibling_id) for text in POINTS_AWAY_REASON))
        return replace(decision, outcome=LEAD, confidence=min(decision.confidence, 0.59),
                       reasons=(reason, *decision.reasons))
    alt = _decide_top([hits[at], *(hit for i, hit in enumerate(hits) if i != at)], tokens, index, analysis, idf)
    if alt.outcome == FIX:
        return replace(alt, top=at)
    reason = Sentence(*(text.format(word=word, other=chosen.unit_id) for text in TOLD_APART_REASON))
    return replace(alt, outcome=LEAD, confidence=min(alt.confidence, 0.59), reasons=(reason,), top=at)


def _decide(hits, tokens, index: Index, analysis: Analysis | None = None, idf=None) -> Decision:
    """Decide on the top hit; see the module docstring. When the top entry does not fit the paste
    (a scope conflict, an unexplained root error) but a runner-up matched a signature line and
    fits, the runner-up is the fix: `Decision.top` says which hit the decision is about. A fix that
    rests only on lines many failures print (`unhandled system error`) gives way the same way to a
    runner-up that matched a line telling the case apart (NCCL's `socketStartConnect: Connect to
    ... failed` above it): the specific line says which failure it was. With no fit at the top, a
    runner-up about the component where the error arises may still be the lead."""
    first = _decide_top(hits, tokens, index, analysis, idf)
    if analysis is None or first.question or not hits:
        return first
    top = hits[0]
    if first.outcome == FIX:
        if (top.kind != "entry" or specific_signatures(top) or declared_site_line(top.meta, analysis)
                or declared_symbol_line(top.meta, analysis)):
            return first

        def eligible(hit) -> bool:
            # a specific line of its own, not a frame, that the top did not match
            return (bool(specific_signatures(hit)) and not _frames_only(hit, analysis)
                    and any(line not in top.evidence and not is_generic(line) for line in hit.evidence))
    else:
        def eligible(hit) -> bool:
            # the top entry says the lines it matched relay a failure shown elsewhere: an entry
            # matching only those same lines cannot name that failure either, unless on one of them
            # it matched words of its own after the relay's (`Failed to load LoRA adapter sql:
            # Cannot find target module name ...`)
            return not first.diagnosis or bool(set(hit.evidence) - set(top.evidence)) or _says_after(top, hit)
    promoted = _runner_up(hits, (FIX,), lambda hit: hit.signature >= SIGNATURE_OK and eligible(hit),
                          tokens, index, analysis, idf)
    if (promoted is None and first.diagnosis and top.kind == "entry" and top.meta.get("diagnosis")
            and top.signature >= SIGNATURE_OK and not specific_signatures(top)):
        promoted = _feature_lead(hits, tokens, index, analysis, idf)
    if promoted is None and first.diagnosis and top.kind == "entry" and top.meta.get("diagnosis"):
        promoted = _described_failure_lead(hits, tokens, index, analysis, idf)
    if promoted is None and first.outcome == UNKNOWN and first.failing_components:
        # the top does not fit (an OOM raised inside the vision tower is no KV-pool OOM): a
        # runner-up about the component where the error arises is the lead, if it holds up on its own
        promoted = _runner_up(hits, (LEAD,),
                              lambda hit: bool(set(first.failing_components) & entry_components(hit.meta)),
                              tokens, index, analysis, idf)
    if promoted is None and first.outcome == UNKNOWN and top.kind == "entry" and _ruled_out(top, analysis):
        # the top is about another setup (several nodes, a feature not turned on): the next entry
        # that holds up on its own is the lead
        promoted = _runner_up(hits, (LEAD,), lambda hit: True, tokens, index, analysis, idf, without_top=True)
    return promoted or first


def _ruled_out(top, analysis: Analysis) -> bool:
    """The paste's own setup excludes the entry: another scope, or a feature it does not use."""
    return bool(scope_conflict(top.meta, analysis) or feature_unused(top.meta, analysis))


def _runner_up(hits, outcomes, eligible, tokens, index: Index, analysis: Analysis, idf,
               without_top: bool = False) -> Decision | None:
    """The decision about the first close runner-up entry that `eligible` admits and that, put
    first, comes out as one of `outcomes`; None when none does. `without_top`: the top is no rival
    in weighing it (a diagnosis explains the line, not the failure)."""
    for i, hit in enumerate(hits[1:PROMOTE_FROM], 1):
        if hit.kind != "entry" or not eligible(hit):
            continue
        rest = [*hits[1 if without_top else 0:i], *hits[i + 1:]]
        alt = _decide_top([hit, *rest], tokens, index, analysis, idf)
        if alt.outcome in outcomes:
            return replace(alt, top=i)
    return None


GENERIC_LINE_LEAD_REASON = ("Your log shows only a line many different failures print ({line}); this entry is about "
                            "{features}, which your paste names, and fits what you describe, but no line of the log "
                            "confirms it.",
                            "你的日志里只有一行很多不同故障都会打印的报错（{line}）；这个条目讲的是你贴的内容里提到的 "
                            "{features}，也和你的描述相符，但日志里没有哪一行能证实它。")


def _feature_lead(hits, tokens, index: Index, analysis: Analysis, idf) -> Decision | None:
    """The top entry says what a line many failures print means (an illegal memory access): a
    close runner-up about a feature the paste names (EAGLE, PD, LoRA) that fits the paste says which
    of those failures it may be. It leads, as a lead only (words, no line of its own), and the
    diagnosis follows."""
    named = specific(context_components(analysis))

    def features(hit) -> frozenset[str]:
        return specific(entry_components(hit.meta)) & named

    alt = _runner_up(hits, (LEAD, FIX), lambda hit: not hit.meta.get("diagnosis") and bool(features(hit)),
                     tokens, index, analysis, idf, without_top=True)
    if alt is None or (alt.outcome == LEAD and alt.reasons not in ((NO_MATCH_REASON,), (PART_MATCH_REASON,), (WORDS_ONLY_CLOSE_REASON,))):
        return alt
    line = _short(hits[0].evidence[0]) if hits[0].evidence else "an error line"
    names = _names(features(hits[alt.top]))
    reason = Sentence(*(text.format(line=line, features=names) for text in GENERIC_LINE_LEAD_REASON))
    return replace(alt, outcome=LEAD, confidence=min(alt.confidence, 0.59), reasons=(reason,))


DESCRIBED_FAILURE_LEAD_REASON = (
    "Your log shows a line that {diagnosis} explains ({line}), but not the failure you describe ({kinds}); "
    "of all known problems this entry's words are the closest to your report, but no line of the log confirms it.",
    "你的日志里有一行 {diagnosis} 能解释的内容（{line}），但那不是你描述的故障（{kinds_zh}）；"
    "在所有已知问题里，这个条目的描述和你的报告最接近，但日志里没有哪一行能证实它。")


def _described_failure_lead(hits, tokens, index: Index, analysis: Analysis, idf) -> Decision | None:
    """The top entry says what a line of the log means (a warning every run on that GPU prints),
    and the user describes a failure of another kind (a crash). The entry whose words are the
    closest of all to the report, about that kind of failure, is the lead; the diagnosis explains
    the line, not the failure."""
    top = hits[0]
    reported = paste_kinds(analysis)
    if not reported or entry_kinds(top.meta) & reported:
        return None
    closest = max(hit.lexical for hit in hits[:PROMOTE_FROM])

    def eligible(hit) -> bool:
        return (not hit.meta.get("diagnosis") and hit.lexical >= closest
                and bool(entry_kinds(hit.meta) & reported))

    alt = _runner_up(hits, (LEAD, FIX), eligible, tokens, index, analysis, idf, without_top=True)
    if alt is None:
        return None
    line = _short(top.evidence[0]) if top.evidence else "an error line"
    values = dict(diagnosis=f"kb:{top.unit_id}", line=line, kinds=_names(reported), kinds_zh=kinds_zh(reported))
    reason = Sentence(*(text.format(**values) for text in DESCRIBED_FAILURE_LEAD_REASON))
    return replace(alt, outcome=LEAD, confidence=min(alt.confidence, 0.59), reasons=(reason,), described=True)


def _says_after(top, hit) -> bool:
    """On a line the top matched with a relay's words, the hit matched a specific line of its own
    in what follows them (the reason after `Failed to load LoRA adapter sql:`)."""
    # the relay quotes the reason without its exception class (`... adapter sql: Cannot find ...`)
    own = [without_class(masked_signature(sig)[0]) for sig in specific_signatures(hit)]
    return any(sig and sig in rest for _, rest in _after_matched_headers(top) for sig in own)


def _after_matched_headers(top):
    """(line, rest) for each line the entry matched and each of its matched signatures found on it:
    the masked text after that signature, read as a header (`Capture cuda graph failed:`)."""
    headers = [masked_signature(sig)[0].rstrip(" :") for sig in _matched_signatures(top)]
    for line in top.evidence:
        masked_line = mask(line).lower()
        for header in headers:
            at = masked_line.find(header) if header else -1
            if at >= 0:
                yield line, masked_line[at + len(header):]


def _decide_top(hits, tokens, index: Index, analysis: Analysis | None = None, idf=None) -> Decision:
    failing = failing_components(analysis) if analysis is not None else frozenset()
    if not hits:
        return Decision(UNKNOWN, 0.0, failing_components=tuple(sorted(specific(failing))))
    top = hits[0]
    evidence_level = _evidence(hits, tokens, index, idf, analysis)
    confidence, strong = _strength(top, evidence_level)
    # (not a traceback cut before its error line: its file and function names would count as words
    # the report restates, and the bars were set on reports in prose)
    restated = (analysis is not None and top.kind == "entry" and top.signature < SIGNATURE_OK
                and not _has_log(analysis)
                and evidence_level >= RESTATED_EVIDENCE_OK and _margin(hits, analysis) >= RESTATED_MARGIN_OK
                and restates_entry(top, tokens, idf) >= RESTATED_OK)
    if restated and not strong and top.signature == 0:
        confidence, strong = max(confidence, 0.6), True
    # log output (a traceback even when its exception line is cut off) makes it a report
    question = analysis is not None and is_question(
        " ".join((analysis.question, *analysis.plain_lines)),
        any(e.kind in ROOT_KINDS for e in analysis.errors) or _has_log(analysis))
    # a question that holds the entry's own error line, matched or quoted ("why does sglang say 'dp_size must be 1 ...'?"), reports it
    question = question and not (top.kind == "entry" and (top.signature >= SIGNATURE_OK and specific_signatures(top)
                                                          or quotes_entry_line(top.meta, analysis.question + " " + " ".join(analysis.plain_lines))))
    # an entry about native Windows or macOS on a paste that installs or runs SGLang there: that
    # system is the cause whatever else failed, since the server runs on Linux only
    home = (home_platform_entry(top.meta, analysis)
            if analysis is not None and top.kind == "entry" and not strong else None)
    if home == "installed":
        confidence, strong = 0.8, True
    reasons: list[str] = []
    against: _Against | None = None   # what in the paste the top entry does not explain
    diagnosis = regression = False
    checked_at = ""
    if question:
        reasons.append(Sentence("This reads as a how-to or configuration question, not an error report: "
                                "no error fix applies.", "这是使用或配置问题，不是错误报告：没有适用的错误修复。"))
    elif analysis is not None and analysis.from_other_program:
        software, software_zh = _software_names(analysis.other_software[:3])
        if not software:   # the user says it is not SGLang's and names no program
            reasons.append(Sentence("You say the paste does not come from SGLang, so an SGLang fix is not its fix.",
                                    "你说明贴的内容不是来自 SGLang，所以 SGLang 的修复方法不是它的修复方法。"))
        else:
            reasons.append(Sentence(f"The paste comes from other software ({software}), not from SGLang.",
                                    f"你贴的内容来自其他软件（{software_zh}），不是 SGLang。"))
    elif analysis is not None and top.kind == "entry" and about_upgrade_regression(top.meta) and reports_regression(analysis):
        # the user's own account that a new release brought the failure is what the entry on
        # bisecting releases is about, whatever component or flag the failing run used
        diagnosis = regression = True
        reasons.append(DIAGNOSIS_REASON if analysis.errors else SYMPTOM_DIAGNOSIS_REASON)
    elif analysis is not None and top.kind == "entry":
        if not strong:
            reasons.append(PART_MATCH_REASON if top.signature > 0 else WORDS_ONLY_CLOSE_REASON)
        # a weak lead too says what in the paste speaks against it (another kind of failure,
        # other hardware, another library's frames): the user rules it out faster
        against = _against(top, analysis)
        reasons += against.reasons
        if (not reasons and home is None and not top.meta.get("diagnosis")
                and evidence_level < WORDS_ALONE_OK and not restated and _words_alone(top, analysis)):
            reasons.append(WORDS_ALONE_REASON)
        if not reasons and top.meta.get("diagnosis"):
            diagnosis = True
            reasons.append(DIAGNOSIS_REASON if analysis.errors else SYMPTOM_DIAGNOSIS_REASON)
        elif not reasons and not specific_signatures(top) and declared_site_line(top.meta, analysis):
            # one of the checks the entry is about, but not one it names: how to read it, not its fix
            diagnosis = True
            origin = paste_origin(analysis)
            checked_at = f"{origin.module}:{origin.function}"
            reasons.append(Sentence(*(text.format(site=checked_at) for text in DECLARED_SITE_REASON)))
    elif not strong:
        reasons.append(NO_MATCH_REASON)
    elif analysis is not None and top.kind == "issue":
        reasons += _root_unexplained(top, analysis)
    if not reasons:
        return Decision(FIX, confidence, failing_components=tuple(sorted(specific(failing))))
    # a question is pointed at an entry only when it names the entry's error, not only its topic
    # ("how do I enable EAGLE?" is not about a crash entry that shares the words)
    related = (strong and (top.signature > 0 or signature_coverage(top, tokens, idf) >= QUESTION_NAMES_ERROR)
               if question else (top.signature >= SIGNATURE_OK or home is not None or regression
                                 or ((evidence_level >= LEAD_EVIDENCE or strong) and _says_something(tokens))))
    if related and not question and not regression and analysis is not None and top.kind == "entry":
        # (a paste from other software gave no reasons of the entry's own: still weigh them here)
        against = against or _against(top, analysis)
        if top.signature < SIGNATURE_OK and against.scope and (not strong or against.off_failure):
            # words alone, or a line the paste shows away from its failure, about other hardware or
            # releases: nothing ties the entry to this failure, so it is not a plausible lead
            related = False
        elif against.contradicted and not specific_signatures(top):
            # only a line many failures print, about another kind of failure, component or
            # platform: naming it would point the user the wrong way
            related = False
        elif (top.signature >= SIGNATURE_OK and not specific_signatures(top) and evidence_level < EVIDENCE_OK
              and _root_unexplained(top, analysis)):
            # a line every such log prints (`Init torch distributed begin.`), beside a specific
            # error the entry does not explain and words that do not agree: no plausible lead
            related = False
        elif (not strong and top.meta.get("signatures") and top.signature == 0
              and not _told_in_words(top, analysis) and _root_unexplained(top, analysis)):
            # words alone, beside an error line the entry does not explain and with none of its
            # own lines in the log: it reads like the paste, it is not about it
            related = False
    outcome = LEAD if related else UNKNOWN
    capped = min(confidence, 0.59 if outcome == LEAD else 0.3)
    return Decision(outcome, round(capped, 3), tuple(reasons), question,
                    tuple(sorted(specific(failing))), diagnosis=diagnosis, checked_at=checked_at)


def _software_names(names) -> tuple[str, str]:
    """The other programs a paste shows, as a reader names them (English, Chinese): a training
    or fine-tuning word is the job it describes, not a program called "训练" or "fine-tun"."""
    programs = list(program_names(names))
    job = len(named_programs(names)) < len(names)
    english = programs + (["a training or fine-tuning job"] if job else [])
    chinese = programs + (["训练或微调任务"] if job else [])
    return ", ".join(english), "、".join(chinese)


# what every failure report says: a paste of only these ("ERROR: x", "sglang error", "RuntimeError:
# something failed") names no problem, and words alone must not point it at one
VAGUE_WORDS = frozenset({"error", "errors", "err", "fail", "fails", "failed", "failure", "exception", "runtimeerror",
                         "runtime", "something", "sglang", "problem", "issue", "bug", "help", "please", "work",
                         "works", "working", "wrong", "报错", "错误", "失败", "问题"})


def _says_something(tokens) -> bool:
    return bool(set(tokens) - VAGUE_WORDS)


def _strength(top, evidence: float) -> tuple[float, bool]:
    """How strongly the paste points at the top hit, from its signature match or else the words'
    evidence (`_evidence`): (confidence, enough to answer)."""
    if top.signature >= SIGNATURE_OK:
        return round(min(1.0, 0.8 + 0.2 * top.signature), 3), True
    return round(max(0.0, min(0.79, 0.6 + (evidence - EVIDENCE_OK) / 2)), 3), evidence >= EVIDENCE_OK


def _evidence(hits, tokens, index, idf, analysis: Analysis | None = None) -> float:
    top = hits[0]
    return (top.dense + COVERAGE_WEIGHT * _coverage(top, tokens, index, idf)
            + SIGNATURE_COVERAGE_WEIGHT * signature_coverage(top, tokens, idf) + _margin(hits, analysis))


def _margin(hits, analysis: Analysis | None = None) -> float:
    """How far the top hit is ahead of the runner-up to beat: one that could answer this paste (an
    entry about other hardware, ranked below for that reason, is no rival)."""
    rivals = [h for h in hits[1:] if analysis is None or h.kind != "entry" or not scope_conflict(h.meta, analysis)]
    return hits[0].score - (rivals[0].score if rivals else 0.0)


# ---- evidence against the top entry ---------------------------------------------------------

def failing_components(analysis: Analysis) -> frozenset[str]:
    """Components where the user's error arises: the root error lines, the innermost frames of
    the traceback, the native backtrace. Not the launch flags or the question: a server started
    with `--attention-backend flashinfer` does not fail inside flashinfer for that reason. Nor the
    user's own title or caption ("Setup: DeepGEMM + FlashInfer + FP8 quantization, it crashes")
    beside a root line a program printed: it lists what they run with, not where it failed."""
    return _components_of_failure(analysis, _logged_roots(analysis) or _root_candidates(analysis))


def named_with_failure(analysis: Analysis) -> frozenset[str]:
    """`failing_components` plus what the user's title or caption says the failing run used: an
    entry about none of it is ruled out the same way ("runs with", never "arises in")."""
    return _components_of_failure(analysis, _root_candidates(analysis))


def _logged_failure(analysis: Analysis) -> frozenset[str]:
    """The components a program's own root line, frame or native backtrace names."""
    return _components_of_failure(analysis, _logged_roots(analysis))


def _logged_roots(analysis: Analysis) -> list:
    """The root error candidates a program printed, not the user's own telling of the failure."""
    return [e for e in _root_candidates(analysis) if not told_by_user(analysis, e)]


def _root_candidates(analysis: Analysis) -> list:
    # a client's or Ray's relay of the error (`ray.exceptions.RayTaskError(KeyError): ...`) is not where it arose
    return [e for e in analysis.errors
            if e.kind in ROOT_KINDS and not relayed(e.text) and not RESOLVER_RE.search(e.text)]


def _components_of_failure(analysis: Analysis, errors) -> frozenset[str]:
    roots = [e.text for e in errors][:3]
    if roots and _out_of_memory(roots[0]):
        roots = roots[:1]   # the peers' NCCL timeouts after an out-of-memory are its consequence
    # a version checker's frames (`transformers/utils/versions.py` in a tool's own gate) raise for
    # whatever package the tool checks: they are not where it failed
    inner_files, inner_functions = analysis.innermost(12)
    files = [f for f in inner_files if not VERSION_CHECKER_RE.search(f)]
    frames = [*files[-4:], *inner_functions[-4:], *analysis.native_lines[:12]]
    if any(BUILD_FAILED_RE.search(e.text) for e in analysis.errors[:5]):
        # a failed JIT or source build fails where the source it compiles lives
        # (`nvcc ... -c /root/.cache/flashinfer/generated/.../batch_prefill.cu`)
        frames += [line for line in analysis.plain_lines if COMPILE_COMMAND_RE.search(line)][:4]
    found: set[str] = set()
    for text in (*(without_configuration(MODEL_REPO_RE.sub(" ", root)) for root in roots), *frames):
        found |= components_in(text)
    return frozenset(found)


# a flag with its value that a report's own sentence quotes ("... with --moe-a2a-backend deepep
# and DeepGEMM installed, the scheduler crashes ..."): what the server was started with, not where
# the error arises
LAUNCH_FLAG_RE = re.compile(FLAG_RE.pattern + r"(?:[ =](?!--)[^\s,;]+)?")
# and so is an engine's kwargs dict or ServerArgs printed on the line (`'attention_backend': 'flashinfer'`,
# `attention_backend='flashinfer'`) and an environment variable set on it (`SGL_ENABLE_JIT_DEEPGEMM=True`)
CONFIG_ITEM_RE = re.compile(r"""(?:'[a-z]\w*'|"[a-z]\w*")\s*:\s*(?:'[^']*'|"[^"]*"|[\w.+-]+)|"""
                            r"""\b[a-z]\w*=(?:'[^']*'|"[^"]*")|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+=\S*""")


def without_configuration(text: str) -> str:
    """The line without the flags, kwargs and variables it quotes: what the server ran with."""
    return CONFIG_ITEM_RE.sub(" ", LAUNCH_FLAG_RE.sub(" ", text))


def told_by_user(analysis: Analysis, error) -> bool:
    """The error line is the user's own telling of the failure (a report's title, a caption, a
    sentence), not a line a program printed: one behind a logger's time stamp never is."""
    return error.masked not in analysis.stamped_errors and (tells_of_failure(error) or analysis.from_title(error))


def _out_of_memory(text: str) -> bool:
    return "out of memory" in kinds_in(text)


def _oom_line_components(analysis: Analysis) -> frozenset[str] | None:
    """What an out-of-memory root line itself names (DeepEP's buffer, a workspace); None when the
    root error is no out-of-memory."""
    root = root_error(analysis)
    if root is None or not _out_of_memory(root.text):
        return None
    return frozenset(components_in(MODEL_REPO_RE.sub(" ", root.text)))


# a Hugging Face model id on an error line (`solidrust/Hermes-3-Llama-3.1-8B-AWQ`, `Qwen/Qwen3-8B-FP8`)
# or a model name with its size (`Qwen3-0.6B-AWQ`) names a checkpoint: its format suffix says what
# the model is, not where it failed
MODEL_REPO_RE = re.compile(r"(?<![\w./-])[A-Za-z0-9][\w.-]*/(?=[\w.]*-)(?=[\w.-]*\d)[A-Za-z0-9][\w.-]*"
                           r"(?<!\.py)(?<!\.so)(?<!\.cu)(?<!\.h)(?<!\.cc)(?<!\.cpp)(?![\w/.-])|"
                           r"(?<![\w./-])[A-Za-z][\w.]*(?:-[\w.]+)*-\d+(?:\.\d+)?[BbMm](?:-[\w.]+)*(?![\w/-])|"
                           # a release-numbered name with its format suffix (`GLM-5.2-FP8`, `DeepSeek-V3-0324-AWQ`)
                           r"(?<![\w./-])[A-Za-z][\w.]*(?:-[\w.]+)*-V?\d[\w.]*(?:-[\w.]+)*-(?:FP8|FP4|NVFP4|MXFP4|AWQ|GPTQ|"
                           r"Int[48]|INT[48]|W8A8|W4A16|W4AFP8)(?:-[\w.]+)*(?![\w/-])")


# a package installer that cannot resolve the requirements names every package in the conflict:
# they are the conflict's parties, not where a failure arises
RESOLVER_RE = re.compile(r"conflicting dependencies|ResolutionImpossible|No solution found when resolving|"
                         r"\bdepends on [\w.\[\]-]+\s*(?:[=<>!~]=|[<>])|requirements are unsatisfiable", re.I)
VERSION_CHECKER_RE = re.compile(r"transformers/utils/versions\.py|importlib/metadata|pkg_resources|"
                                r"packaging/(?:version|requirements)\.py")
BUILD_FAILED_RE = re.compile(r"Ninja build failed|ninja: build stopped|Error building extension|"
                             r"ninja exited with status|error: command .* failed with exit code")
COMPILE_COMMAND_RE = re.compile(r"(?:nvcc|hipcc|c\+\+|g\+\+|clang\+\+|gcc)\b.*\s-c\s+\S+\.(?:cu|cpp|cc|c)\b")


def _told_errors(analysis: Analysis) -> list[str]:
    """The paste's first error lines, without the steps SGLang suggests under a failure (`3. disable
    torch compile by not using --enable-torch-compile`): those name what SGLang advises, not what
    the user runs."""
    return [e.text for e in analysis.errors[:20] if not SOLUTION_STEP_RE.match(e.text)]


def context_components(analysis: Analysis) -> frozenset[str]:
    """Everything the paste names: failing components plus the question, flags and other lines."""
    found = set(failing_components(analysis))
    plain = [line for line in analysis.plain_lines if not VERSION_BANNER_RE.search(line)]
    for text in (analysis.question, " ".join(analysis.environment.flags), *plain, *_told_errors(analysis)):
        found |= components_in(text)
    return frozenset(found)


# a line every healthy start prints about what is installed ("sglang is using nccl==2.27.3"):
# the component is present, not involved
VERSION_BANNER_RE = re.compile(r"\bis using [\w.-]+ ?==? ?v?\d|\bversion[:=]? ?v?\d+\.\d+", re.I)


@lru_cache(maxsize=4096)
def _entry_components(entry_id: str, title: str, lines: tuple[str, ...], declared: tuple[str, ...]) -> frozenset[str]:
    found = set(declared)
    for text in (title, *lines):
        found |= components_in(text)
        # a keyword that is a component's own name (`triton`, `aiter`) declares it, as `components:` does
        if text.lower() in BY_NAME:
            found.add(text.lower())
    return frozenset(found)


def entry_components(meta: dict) -> frozenset[str]:
    """What an entry is about: the components its title, error lines and keywords name, plus
    those it declares (`components:`)."""
    lines = tuple(meta.get("signatures") or ()) + tuple(meta.get("keywords") or ())
    return _entry_components(meta.get("id", ""), meta.get("title", ""), lines,
                             tuple(meta.get("components") or ()))


class _Against(NamedTuple):
    reasons: list[str]      # what in the paste the entry does not explain; empty when it fits
    scope: bool             # hardware, platform, releases or the paste's numbers outside its scope
    contradicted: bool      # scope, or another kind of failure, or a component it is not about
    # its only line close to the paste is not the error that stopped the run (the user's own words,
    # or a log line away from the failure)
    off_failure: bool = False


def _against(top, analysis: Analysis) -> _Against:
    """What in the paste the entry does not explain; no reasons when the entry fits.

    A specific (non-generic) signature line matched on the root error explains it: the frames
    around it may pass through other libraries. Anything weaker — a generic line, a line other
    than the root, words without a matched line — must agree with the specifics of the case."""
    meta = top.meta
    reasons: list[str] = []
    kind, outside, unexplained = None, frozenset(), None
    off_failure = False
    if not _explains_root_specifically(top, analysis):
        # (an entry with no error lines, a hang say, is matched by its symptoms alone)
        # a pasted line many failures print (`Segmentation fault: address not mapped ...`) is log
        # too: with none of the entry's own lines beside it, words alone would carry the answer
        pasted = [e.text for e in analysis.errors if e.kind in ROOT_KINDS]
        generic_only = bool(pasted) and all(is_generic(text) for text in pasted)
        if (top.signature < SIGNATURE_OK and top.meta.get("signatures")
                and (not _told_in_words(top, analysis) or generic_only)):
            seen = _matched_signatures(top)
            yours = (_evidence_for(top, seen[0]) or seen[0]) if seen else ""
            root = root_error(analysis)
            if not seen:
                # unless its own account quotes the root error whole: then that line is the entry's
                if not _account_quotes_root(meta, analysis):
                    reasons.append(Sentence("None of this entry's error lines occurs in your log.",
                                            "这个条目的错误行没有一行出现在你的日志里。"))
            elif root is not None and (yours == root.text or (len(yours) > 20 and yours in root.text)):
                # a near match (`float32` where the entry says `bfloat16`) is not the entry's line
                reasons.append(Sentence(f"Its error line {_short(seen[0])} is close to yours, {_short(yours)}, "
                                        "but not the same.",
                                        f"它的错误行 {_short(seen[0])} 和你的 {_short(yours)} 相近，但不一样。"))
            else:
                off_failure = True
                reasons.append(Sentence(f"Its error line is close to your line {_short(yours)}, but that is not the "
                                        "error that stopped it (it is in your own words, or away from the failure).",
                                        f"它的错误行和你的 {_short(yours)} 相近，但那不是让服务停下的错误"
                                        "（它出现在你自己的描述里，或离故障处很远）。"))
        reasons += _root_unexplained(top, analysis)
        about = entry_components(meta)
        # a diagnosis entry that matched a generic line is about what that line means, wherever
        # it arises (an illegal memory access inside flashinfer is still one): a lead by nature
        reads_generic_line = (bool(meta.get("diagnosis")) and top.signature >= SIGNATURE_OK
                              and not specific_signatures(top))
        if (top.signature >= SIGNATURE_OK and not specific_signatures(top) and not reads_generic_line
                and not _corroborated(top, analysis, in_frames=not _about_a_generic_line(meta))):
            line = _short(top.evidence[0]) if top.evidence else None
            reasons.append(Sentence(
                f"It matched only a generic line that many different failures print ({line or 'an error line'}); "
                "nothing else in your log ties it to this entry"
                + (f" (it is about {_names(specific(about))})." if specific(about) else "."),
                f"它只匹配到一行很多不同故障都会打印的通用报错（{line or '一行错误'}）；你的日志里没有别的内容能把它和这个条目联系起来"
                + (f"（它讲的是 {_names(specific(about))}）。" if specific(about) else "。")))
        unexplained = (_specific_line_unexplained(top, analysis)
                       if top.signature >= SIGNATURE_OK and not specific_signatures(top) and not reads_generic_line
                       else None)
        if unexplained and not reasons:
            reasons.append(Sentence(f"It matched only a line many failures print; your log goes on to say "
                                    f"{_short(unexplained)}, which this entry does not explain.",
                                    f"它只匹配到一行很多故障都会打印的通用报错；你的日志接着说的是 {_short(unexplained)}，"
                                    "这个条目解释不了。"))
        warning, failure = _warnings_only(top, analysis) if top.signature >= SIGNATURE_OK else (None, None)
        if warning:
            reasons.append(Sentence(f"It matched only a warning your run printed and went on from ({_short(warning)}); "
                                    f"it then failed with {_short(failure)}, which this entry does not explain.",
                                    f"它只匹配到一条警告（{_short(warning)}），程序打印后继续运行；之后出错的是 "
                                    f"{_short(failure)}，这个条目解释不了。"))
        frames_only = _frames_only(top, analysis)
        if frames_only:
            reasons.append(Sentence(f"It matched only a traceback frame or its source line ({_short(frames_only)}), "
                                    "which many different failures pass through; the error itself is not one this "
                                    "entry is about.",
                                    f"它只匹配到一个调用栈帧或其源码行（{_short(frames_only)}），很多不同的故障都会经过那里；"
                                    "错误本身不是这个条目讲的。"))
        wrapped = _unexplained_wrapped_message(top)
        if wrapped:
            reasons.append(Sentence(f"Your error line goes on to say {_short(wrapped)}, which this entry does not explain.",
                                    f"你的错误行接着说的是 {_short(wrapped)}，这个条目解释不了。"))
        site = _other_emission_site(top, analysis)
        if site:
            reasons.append(site)
        kind = _kind_conflict(top, analysis) or feature_unused(meta, analysis) or family_conflict(meta, analysis)
        if kind:
            reasons.append(kind)
        # with another process holding the GPU, the allocation fails wherever SGLang happens to be;
        # memory runs out wherever the next allocation is (an FP8 linear, the logits): only what
        # the out-of-memory line itself names (DeepEP's buffer, a workspace) is a place it rules out
        where = _oom_line_components(analysis)
        named = named_with_failure(analysis)
        where = named if where is None else where
        outside = (conflicts(where, about) if not holder_agrees(meta, analysis) and not reads_generic_line
                   else frozenset())
        if outside and specific_signatures(top) and families(specific(named)) & families(about):
            # the entry's own specific line matched and the failure is in a component it is about:
            # another component named on the way (a cutlass source sgl-kernel's build compiles, the
            # quantization module an aiter import runs through) is where, not what
            outside = frozenset()
        # a component only the user's own title or caption names is what they run with, not where a
        # program's line says the error arises: said so, it still rules the entry out
        said = outside - _logged_failure(analysis)
        arises = outside - said
        about_en = f" (it is about {_names(specific(about))})." if specific(about) else "."
        about_zh = f"（它讲的是 {_names(specific(about))}）。" if specific(about) else "。"
        if arises:
            reasons.append(Sentence(f"Your error arises in {_names(arises)}, which this entry is not about" + about_en,
                                    f"你的错误出在 {_names(arises)}，这个条目讲的不是它" + about_zh))
        if said:
            reasons.append(Sentence(f"Your report says it runs with {_names(said)}, which this entry is not about"
                                    + about_en,
                                    f"你的报告说它用的是 {_names(said)}，这个条目讲的不是它" + about_zh))
    scope = _scope_notes(meta, analysis)
    return _Against(reasons + scope, bool(scope), bool(scope or kind or outside or unexplained), off_failure)


def _scope_notes(meta: dict, analysis: Analysis) -> list[str]:
    """The entry is about hardware, a platform, an engine or releases the paste is not from."""
    version_note = (_version_conflict(meta, analysis.environment.sglang_version)
                    or _frames_conflict(meta, analysis) or _legacy_unshown(meta, analysis))
    return [note for note in (scope_conflict(meta, analysis), version_note, holder_conflict(meta, analysis),
                              signal_conflict(meta, analysis), upgrade_unexplained(meta, analysis),
                              timeout_already_raised(meta, analysis), cleared_cause(meta, analysis)) if note]


# the user's own words that the machine has no GPU at all ("a CPU-only box", "my laptop, which has no
# NVIDIA GPU"); not an error line saying none is visible (`No CUDA GPUs are available`), a driver problem
NO_GPU_RE = re.compile(r"\bcpu[- ]only\b|\b(?:box|machine|host|laptop|server|node|mac|vm|computer|pc)\b[^.;?!]{0,20}"
                       r"\b(?:(?:has|have|with)\s+no|without(?:\s+(?:any|an?))?)\s+(?:nvidia\s+|amd\s+|dedicated\s+)?gpus?\b|"
                       r"\bno (?:nvidia |amd )?gpus? (?:on purpose|at all|in (?:this|the|my) (?:machine|box|host|laptop))|"
                       r"没有(?:独立)?(?:显卡|GPU)|无(?:显卡|GPU)|纯\s?CPU|只有\s?CPU", re.I)


def says_no_gpu(analysis: Analysis) -> bool:
    """The user's own words say the machine has no GPU at all."""
    return bool(NO_GPU_RE.search(" ".join((analysis.question, *analysis.prose_lines[:50]))))


def hardware_conflict(meta: dict, analysis: Analysis) -> str | None:
    """The entry is about hardware the paste is not from (a mixed log is not a conflict)."""
    hardware = analysis.environment.hardware
    wanted = [h for h in meta.get("hardware") or () if h != "any"]
    if not wanted:
        return None
    if says_no_gpu(analysis) and not analysis.environment.gpu:
        return Sentence(f"You say the machine has no GPU; this entry is about {', '.join(wanted)} GPUs.",
                        f"你说这台机器没有 GPU；这个条目讲的是 {', '.join(wanted)} GPU。")
    gpu = analysis.environment.gpu
    if gpu and gpu_vendor(gpu) == hardware and hardware not in wanted:
        # the GPU the paste names, of the platform most of the log points to, decides over words
        # that merely mention the entry's platform (a ROCm torch wheel on an NVIDIA machine)
        return Sentence(f"Your GPU is a {gpu}; this entry is about {', '.join(wanted)} hardware.",
                        f"你的 GPU 是 {gpu}；这个条目讲的是 {', '.join(wanted)} 硬件。")
    if _mentions_hardware(analysis, wanted):
        return None
    if hardware and hardware not in wanted:
        return Sentence(f"Your log is from {hardware} hardware; this entry is about {', '.join(wanted)}.",
                        f"你的日志来自 {hardware} 硬件；这个条目讲的是 {', '.join(wanted)}。")
    if not hardware and "nvidia" not in wanted:
        # a log that names no hardware is most likely from NVIDIA GPUs: an entry about another
        # platform (AMD, Moore Threads, Ascend) needs a sign of that platform in the paste
        return Sentence(f"This entry is about {', '.join(wanted)} hardware; nothing in your log shows it.",
                        f"这个条目讲的是 {', '.join(wanted)} 硬件；你的日志里看不出是它。")
    return None


# another serving engine than SGLang's own: an entry whose title or declared components name one is
# about that engine's code, and a paste must show that engine (its paths, its library, its devices)
# before that entry's fix applies, as an entry about AMD needs a sign of AMD
OTHER_ENGINES = {"jax": "SGLang-JAX (JAX / TPU)"}


def engines_of(title: str | None, components=()) -> frozenset[str]:
    """The other serving engines an entry is about, from its title and declared components."""
    return (components_in(title or "") | frozenset(components or ())) & OTHER_ENGINES.keys()


def engine_conflict(meta: dict, analysis: Analysis) -> str | None:
    """The entry is about another serving engine (`OTHER_ENGINES`) that the paste does not show."""
    about = engines_of(meta.get("title"), meta.get("components"))
    if not about:
        return None   # nearly every entry: no need to read the paste
    shown = context_components(analysis) | components_in(" ".join(analysis.frame_files))
    missing = sorted(about - shown)
    if not missing:
        return None
    return Sentence(f"This entry is about {OTHER_ENGINES[missing[0]]}; nothing in your log shows it "
                    "(no sgl_jax paths, JAX or TPU).",
                    f"这个条目讲的是 {OTHER_ENGINES[missing[0]]}；你的日志里看不出是它（没有 sgl_jax 路径、JAX 或 TPU）。")


def scope_conflict(meta: dict, analysis: Analysis) -> str | None:
    """The entry is about other hardware or GPU generation (`assistant.gpu_arch`), another CUDA
    major (`assistant.cuda_major`), another operating system, another serving engine or another
    phase (start-up, serving: `assistant.phase`) than the paste's."""
    return (hardware_conflict(meta, analysis) or arch_conflict(meta, analysis) or cuda_conflict(meta, analysis)
            or platform_conflict(meta, analysis) or engine_conflict(meta, analysis) or phase_conflict(meta, analysis))


def paste_kinds(analysis: Analysis) -> frozenset[str]:
    """The kinds of failure the user reports: in their words and their root error lines."""
    roots = [e.text for e in analysis.errors if e.kind in ROOT_KINDS][:3]
    return kinds_in(analysis.question, *roots)


def _kind_conflict(top, analysis: Analysis) -> str | None:
    """The user reports one kind of failure (an illegal memory access) and the entry, matched
    without an error line that explains the root error, is about another (running out of memory)."""
    theirs, ours = paste_kinds(analysis), entry_kinds(top.meta)
    if not kind_conflict(theirs, ours):
        return None
    return Sentence(f"You report {_names(theirs)}; this entry is about {_names(ours)}, a different kind of failure.",
                    f"你报告的是{kinds_zh(theirs)}；这个条目讲的是{kinds_zh(ours)}，是另一类故障。")


# features a launch command turns on by a flag: an entry whose title is about one does not
# explain a paste whose launch command is shown without it (and which names it nowhere else)
FEATURE_COMPONENTS = frozenset({"speculative", "lora", "disaggregation"})
# features a user may say they do not run ("no DP attention"), launch command or not
DENIABLE_FEATURES = FEATURE_COMPONENTS | {"dp-attention"}
LAUNCH_MODEL_FLAGS = frozenset({"--model-path", "--model"})


def feature_unused(meta: dict, analysis: Analysis) -> str | None:
    """The entry is about a feature (speculative decoding, LoRA, PD disaggregation, several nodes)
    that the user's words say they do not run, or that the paste's launch command does not turn on
    and nothing else in the paste names."""
    flags = {re.split(r"[\s=]", flag, 1)[0]: flag for flag in analysis.environment.flags}
    subject = title_subject(meta.get("title", ""))
    denied = (components_in(subject) & DENIABLE_FEATURES
              & components_denied(" ".join((analysis.question, *analysis.prose_lines,
                                            *(e.text for e in analysis.errors if told_by_user(analysis, e))))))
    if denied:
        return Sentence(f"This entry is about {_names(denied)}, which you say you do not use.",
                        f"这个条目讲的是 {_names(denied)}，你说你没有使用它。")
    if MULTINODE_RE.search(subject) and not _several_nodes(analysis, flags):
        if (SINGLE_NODE_RE.search(analysis.question) or LAUNCH_MODEL_FLAGS & set(flags)
                or _nccl_nodes(analysis) == 1):
            return Sentence("This entry is about a launch across several nodes; your paste runs on one "
                            "(no `--nnodes` above 1).",
                            "这个条目讲的是多节点启动；你贴的是单节点运行（`--nnodes` 不大于 1）。")
    if not LAUNCH_MODEL_FLAGS & set(flags):
        return None   # no launch command shown: what it turns on is unknown
    wanted = components_in(subject) & FEATURE_COMPONENTS
    if not wanted or wanted & context_components(analysis):
        return None
    return Sentence(f"This entry is about {_names(wanted)}, which your launch command does not turn on "
                    "and your paste does not mention.",
                    f"这个条目讲的是 {_names(wanted)}，你的启动命令没有开启它，你贴的内容也没有提到它。")


MULTINODE_RE = re.compile(r"multi-?node|several nodes|across nodes|two nodes|多机|多节点", re.I)
SINGLE_NODE_RE = re.compile(r"single (?:machine|node|host|server)|one (?:machine|node|host)|单机|单节点", re.I)
# `node7:1234:1234 [0] NCCL INFO ...`: NCCL's line prefix names the host (`host:pid:tid`), not a node count
NODES_SHOWN_RE = re.compile(r"multi-?node|\bnode[- _]?(?:rank|[1-9])\b(?!:\d+:\d+)|\bnnodes\b|\b(?:two|2|three|3|four|4|\d+) nodes\b|多机|多节点", re.I)


# NCCL / RCCL's communicator line at INFO level: `comm 0x... rank 0 nRanks 8 nNodes 1 localRanks 8`
NCCL_NODES_RE = re.compile(r"\bnRanks \d+ nNodes (\d+)\b")


def _nccl_nodes(analysis: Analysis) -> int | None:
    """How many nodes NCCL's own log says the communicator spans, when it says (read once a paste)."""
    return per_analysis("nccl_nodes", analysis, _read_nccl_nodes)


def _read_nccl_nodes(analysis: Analysis) -> int | None:
    for line in analysis.masked_lines[:5000]:
        found = NCCL_NODES_RE.search(analysis.original(line))
        if found:
            return int(found.group(1))
    return None


def _several_nodes(analysis: Analysis, flags: dict[str, str]) -> bool:
    """The paste runs across nodes: `--nnodes` above 1, NCCL's log counts several nodes, or its
    words or log name several nodes."""
    nnodes = flags.get("--nnodes", "").split()
    if len(nnodes) > 1 and nnodes[1].isdigit():
        return int(nnodes[1]) > 1
    nodes = _nccl_nodes(analysis)
    if nodes is not None:
        return nodes > 1
    text = " ".join((analysis.question, *(e.text for e in analysis.errors[:20]), *analysis.plain_lines[:40]))
    return bool(NODES_SHOWN_RE.search(text)) and not SINGLE_NODE_RE.search(analysis.question)


def family_conflict(meta: dict, analysis: Analysis) -> str | None:
    """The entry's title is about a model family (DeepSeek's template, Qwen's parser) and the
    paste names models of other families only."""
    wanted = subject_family(meta.get("title", ""))
    if not wanted:
        return None
    named = paste_families(analysis)
    if not named or wanted & named:
        return None
    return Sentence(f"This entry is about {', '.join(sorted(wanted))} models; your paste is about "
                    f"{', '.join(sorted(named))}.",
                    f"这个条目讲的是 {', '.join(sorted(wanted))} 模型；你贴的是 {', '.join(sorted(named))}。")


def paste_families(analysis: Analysis) -> frozenset[str]:
    """The model families the paste names: its model path and flags, words, log lines, frames
    (read once per paste)."""
    return per_analysis("model_families", analysis, _paste_families)


def _paste_families(analysis: Analysis) -> frozenset[str]:
    found: set[str] = set()
    for text in (analysis.question, " ".join(analysis.environment.flags), *analysis.plain_lines[:400],
                 *(e.text for e in analysis.errors[:20]), *analysis.frame_files[-20:]):
        found |= families_in(text)
    return frozenset(found)


def _frames_conflict(meta: dict, analysis: Analysis) -> str | None:
    """A paste without a version line still dates itself: its SGLang frames exist only in some
    releases (`assistant.release_range`)."""
    if analysis.environment.sglang_version or not (meta.get("affected") or meta.get("fixed")):
        return None
    releases = release_range(analysis.sglang_frames)
    if releases is None or not releases.conflict(meta.get("affected") or "", meta.get("fixed")):
        return None
    where = "; ".join(releases.evidence) or "its SGLang frames"
    about = (f"is about SGLang {meta['affected']}" if meta.get("affected") else "")
    fixed = (f"was fixed in SGLang {meta['fixed']}" if meta.get("fixed") else "")
    about_zh = f"讲的是 SGLang {meta['affected']}" if meta.get("affected") else ""
    fixed_zh = f"在 SGLang {meta['fixed']} 已修复" if meta.get("fixed") else ""
    return Sentence(f"Your traceback ({where}) comes from SGLang {releases.describe()}; this entry "
                    + " and ".join(x for x in (about, fixed) if x) + ".",
                    f"你的调用栈（{where}）来自 SGLang {releases.describe()}；这个条目"
                    + "，并且".join(x for x in (about_zh, fixed_zh) if x) + "。")


def _legacy_unshown(meta: dict, analysis: Analysis) -> str | None:
    """An entry about releases older than every current one (SGLang 0.1.x, 2024) fits a paste
    only when the paste shows such a release (its ServerArgs dump has fields only older releases
    had): by default a user runs a current one."""
    affected = meta.get("affected")
    if not affected or analysis.environment.sglang_version or not ends_before(affected, OLDEST_RELEASE):
        return None
    if predates_registry(server_args_dump(analysis.masked_lines[:2000])):
        return None
    about = (f"This entry is about SGLang {affected}, older than every release since {OLDEST_RELEASE}; ",
             f"这个条目讲的是 SGLang {affected}，比 {OLDEST_RELEASE} 以来的所有版本都旧；")
    if not analysis.sglang_frames:
        command = "`python -c 'import sglang; print(sglang.__version__)'`"
        return Sentence(about[0] + f"your log does not show which release you run ({command}).",
                        about[1] + f"你的日志看不出你用的是哪个版本（{command}）。")
    if of_known_releases(analysis.sglang_frames):   # code every current release has: read as current
        return Sentence(about[0] + f"the SGLang code in your traceback is that of {OLDEST_RELEASE} or later.",
                        about[1] + f"你调用栈里的 SGLang 代码是 {OLDEST_RELEASE} 或更新版本的。")
    return None


def _mentions_hardware(analysis: Analysis, wanted) -> bool:
    """Any sign of the entry's hardware in the paste (a mixed log is not a conflict)."""
    text = " ".join((analysis.question, *analysis.masked_lines[:2000], *analysis.frame_files,
                     " ".join(analysis.environment.flags), analysis.environment.gpu or ""))
    rocm_host = wanted == ["nvidia"] and analysis.environment.hardware not in (None, "nvidia")
    if rocm_host:
        # ROCm builds of torch name their device 'cuda' (`device='cuda'` in the server args,
        # `torch.cuda`, `cuda:0`): that spelling is no sign of NVIDIA hardware there
        text = ROCM_CUDA_SPELLING_RE.sub(" ", text)
    if any(regex.search(text) for name, regex in HARDWARE_HINTS if name in wanted):
        return True
    if rocm_host:
        # ROCm speaks CUDA's vocabulary (torch.cuda, HIP's CUDA names), and on an AMD host a CUDA
        # library named in an error (`libcuda.so.1: cannot open shared object file`) is what is
        # missing: neither is a sign of NVIDIA hardware
        return False
    return bool({HARDWARE_COMPONENT.get(h) for h in wanted} & context_components(analysis))


HARDWARE_COMPONENT = {"amd": "rocm", "musa": "musa", "ascend": "ascend", "nvidia": "cuda"}
ROCM_CUDA_SPELLING_RE = re.compile(r"device\s*=\s*['\"]?cuda['\"]?|\btorch\.cuda\b|\bcuda:\d+", re.I)


def _other_emission_site(top, analysis: Analysis) -> str | None:
    """The user's root error is an SGLang message raised at another place in SGLang than every
    message of the entry (the error registry knows where each message comes from)."""
    if not _has_log(analysis):
        return None
    origin = paste_origin(analysis)
    if origin_agrees(top.meta, origin) is False:
        return Sentence(f"Your error is raised in SGLang's {origin.module}:{origin.function}; this entry's "
                        "error lines come from other places in SGLang.",
                        f"你的错误由 SGLang 的 {origin.module}:{origin.function} 抛出；这个条目的错误行来自 SGLang 的其他地方。")
    return None


# what follows a matched line that stops inside an exception's header (`KVTransferError(room=` then
# `123): Aborted by AbortReq.`): the exception's own message, the failure's own words
WRAPPED_MESSAGE_RE = re.compile(r"^(?:[^():]*\))?:\s*(\S.*)$")


def _unexplained_wrapped_message(top) -> str | None:
    """The message of an exception whose header alone the entry matched, when it says something
    specific that the entry's own lines do not: `KVTransferError(bootstrap_room=...): Aborted by
    AbortReq.` matched by `KVTransferError(bootstrap_room=` is an abort, not the network failure
    the entry is about. Only for an entry that matched no specific line of its own."""
    if top.signature < SIGNATURE_OK or specific_signatures(top):
        return None
    # a header that ends in its own colon (`Capture cuda graph failed:`) is followed by the message
    for line, rest in _after_matched_headers(top):
        found = WRAPPED_MESSAGE_RE.match(rest)
        if not found:
            continue
        message = found.group(1)
        # what the message says beyond generic phrases (`CUDA out of memory. Tried to allocate ...`)
        words = " ".join(specific_words(message))
        if tokenize(words) and _line_coverage(top.meta, words) < ROOT_COVERAGE_OK:
            # the user's own words, not the masked ones
            return next((line[m.end():] for m in re.finditer(r":\s*", line)
                         if mask(line[m.end():]).lower() == message), message)
    return None


WORDS_ALONE_REASON = Sentence(
    "Your report describes the problem in words only, and none of this entry's error lines, which would "
    "confirm it, is in what you pasted.",
    "你的报告只用文字描述了问题，而能确认这个条目的错误行，一行也不在你贴的内容里。")


def _account_quotes_root(meta: dict, analysis: Analysis) -> bool:
    """The entry's title or a symptom quotes the paste's root error whole (`assistant.entry_account`):
    a line a program printed, and a specific one; a line many failures print says nothing of which."""
    root = root_error(analysis)
    return (root is not None and not told_by_user(analysis, root) and not is_generic(root.text)
            and account_quotes(meta, root.text))


def _words_alone(top, analysis: Analysis) -> bool:
    """Only the user's words say which failure it is (`_told_in_words`), and none of the entry's
    own lines is in them."""
    return top.signature < SIGNATURE_OK and bool(top.meta.get("signatures")) and _told_in_words(top, analysis)


def _has_log(analysis: Analysis) -> bool:
    """The paste holds log output (an error line, a traceback, a native backtrace), not only the
    user's description of it."""
    return bool(analysis.frame_files or analysis.native_lines or root_error(analysis)
                or analysis.log_lines >= LOG_LINES_OK
                or any(GLUED_FRAME_RE.search(line) for line in analysis.masked_lines[:400]))


def _told_in_words(top, analysis: Analysis) -> bool:
    """Only the user's words say which failure it is: the paste holds no log, or its traceback is
    cut off before the error line (`_cut_before_its_error`) and the entry was drawn by those words,
    not by a frame (a frame says where it failed, and many failures pass through it). The entry's
    own lines are then missing because they were cut, not because the run did not print them."""
    if not _has_log(analysis):
        return True
    return _cut_before_its_error(analysis) and not any(_is_frame(line, analysis) for line in top.evidence)


def _cut_before_its_error(analysis: Analysis) -> bool:
    """The paste stops inside a traceback — on a frame, its source line or an elision (`...`) —
    and no line a program printed says what failed: its only error lines are the user's own (a
    title, a sentence)."""
    if not analysis.traceback_cut or not analysis.masked_lines:
        return False
    if any(e.kind in ROOT_KINDS and not told_by_user(analysis, e) for e in analysis.errors):
        return False
    last = analysis.masked_lines[-1]
    return not last.strip(" .\u2026") or _is_frame(analysis.original(last), analysis)


# a traceback frame inside a longer line (ray / multiprocessing prefixes glue several together)
GLUED_FRAME_RE = re.compile(r'File "[^"]+", line ')


def _matched_signatures(top) -> list[str]:
    """The entry's signature lines that occur in the matched evidence: whole (masked), or most of
    their words on one line (a line quoted inside a sentence, a shortened path)."""
    return [sig for sig in top.meta.get("signatures") or () if _evidence_for(top, sig) is not None]


def _evidence_for(top, signature: str) -> str | None:
    """The user's line (of the matched evidence) that holds a signature, or None."""
    masked, tokens = masked_signature(signature)
    paths = signature_paths(masked)
    if paths:   # the path the signature quotes stands for the one the user's line quotes
        masked, tokens = paths[0], frozenset(tokenize(paths[0]))
    for line in top.evidence:
        masked_line = mask(line).lower()
        if paths:
            masked_line = line_with_paths_as_placeholders(masked_line, paths[1])
        if masked in masked_line or (len(tokens) >= 4 and
                                     len(tokens & frozenset(tokenize(masked_line))) >= 0.8 * len(tokens)):
            return line
    return None


def specific_signatures(top) -> list[str]:
    """Matched signature lines that say more than a generic failure phrase."""
    return [sig for sig in _matched_signatures(top) if not is_generic(signature_text(sig))]


def _about_a_generic_line(meta: dict) -> bool:
    """An entry whose every error line is generic is about that line itself (what a bare
    `terminated with -3` or a bare illegal memory access means, and how to find the cause)."""
    sigs = meta.get("signatures") or ()
    return bool(sigs) and all(is_generic(signature_text(sig)) for sig in sigs)


FLAG_WORD_RE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")
IDENTIFIER_RE = re.compile(r"--[a-z][\w-]+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b\w+_\w+\b|\b[\w-]+\.(?:py|so|h|cu|json)\b")


def _corroborated(top, analysis: Analysis, in_frames: bool = True) -> bool:
    """Something beyond the generic line ties the paste to the entry: a specific component the
    entry is about, or an identifier it names (a flag, an env var, a file, a function).

    An entry about a generic line itself (every signature generic: what a bare illegal memory
    access means, how to find its cause) names the functions every such traceback passes
    through; for it an identifier counts only outside the traceback (`in_frames` False): in the
    user's flags, words or error lines."""
    if specific(entry_components(top.meta)) & context_components(analysis):
        return True
    if holder_agrees(top.meta, analysis):
        return True   # the out-of-memory's numbers show whose memory it is, as the entry says
    if signal_agrees(top.meta, analysis):
        return True   # the process died of the signal the entry is about (`Exit code: -9`)
    if not in_frames and _nothing_more_specific(analysis):
        return True   # the paste holds only the generic line: what it means is the answer
    gpu = (analysis.environment.gpu or "").lower()
    if gpu and any(gpu in k.lower() or k.lower() in gpu for k in top.meta.get("keywords") or ()
                   if len(k) >= 4 and any(c.isdigit() for c in k)):
        return True   # the user's GPU model is one the entry names (RTX 5090, MI210, V100)
    names = set()
    for text in (*(top.meta.get("keywords") or ()), *(top.meta.get("signatures") or ())):
        if not is_generic(text):
            names |= {n.lower() for n in IDENTIFIER_RE.findall(text)}
    # a keyword spelled like a flag without its dashes (`dist-init-addr`) names that flag
    names |= {"--" + k.lower() for k in top.meta.get("keywords") or () if FLAG_WORD_RE.fullmatch(k)}
    names -= GENERIC_IDENTIFIERS
    if not names:
        return False
    # a traceback's frames and the source lines under them (plain lines) are where it passed
    paste = " ".join((analysis.question, " ".join(analysis.environment.flags), " ".join(analysis.user_names),
                      *(e.text for e in analysis.errors[:20] if not DISABLE_STEP_RE.match(e.text)),
                      *((*analysis.plain_lines, *analysis.frames) if in_frames else ()))).lower()
    return any(n in paste for n in names)


def _nothing_more_specific(analysis: Analysis) -> bool:
    """Every error line of the paste is generic, and no frame or native line names a specific
    component: nothing in it says more than the generic line does."""
    return (all(is_generic(e.text) for e in analysis.errors[:20])
            and not specific(failing_components(analysis)) and not analysis.frame_files)


# identifiers every SGLang log or launch command carries: they tie nothing to an entry
GENERIC_IDENTIFIERS = frozenset({"--model-path", "--tp", "--tp-size", "--port", "--host", "--trust-remote-code",
                                 "cuda_launch_blocking", "torch_use_cuda_dsa", "--mem-fraction-static",
                                 "scheduler.py", "model_runner.py", "tp_worker.py", "server_args.py"})


def root_error(analysis: Analysis):
    """The first error that reads like a log line (an exception, or a fatal line that is not a
    sentence of the user's) and is not a client's relay of another; one the server went on serving
    after is not the root while another is."""
    roots = [e for e in analysis.stopping_errors
             if e.kind == "exception" or (e.kind == "fatal" and not looks_like_sentence(e.text))]
    if roots and _opening_summary(roots[0]) and len(analysis.stopping_errors) > 1:
        roots = roots[1:]
    # a client's or Ray's relay of the server's error (`httpx.HTTPStatusError: ... 500`) pasted
    # above the server's own traceback is not where it failed
    return next((e for e in roots if not relayed(e.text)), roots[0] if roots else None)


# a program's message names what failed before a colon (`Fatal Python error: ...`, `FAILED: ...`)
PROGRAM_MESSAGE_RE = re.compile(r"^[\w .\[\]-]{0,40}?(?:error|fault|failed|failure|fatal|abort\w*)\s*:", re.I)


def _opening_summary(error) -> bool:
    """The paste's first line, fatal only by a word of the user's ("4x RTX 4090, sglang 0.5.9, --tp 2
    crashes immediately"), above the log's own errors: their summary, not the root error."""
    return error.kind == "fatal" and error.line_no == 1 and not PROGRAM_MESSAGE_RE.search(error.text)


def _frames_only(top, analysis: Analysis) -> str | None:
    """The traceback frame that is the entry's only specific evidence, when the error itself is
    generic (or only a consequence, as a bare `CancelledError`) and the entry matched none of the
    paste's error lines; else None."""
    specific_matched = [m for m in top.evidence if not is_generic(m)]
    if (top.signature < SIGNATURE_OK or not specific_matched
            or not all(_is_frame(m, analysis) for m in specific_matched)):
        return None
    root = root_error(analysis)
    errors = [e.text for e in analysis.stopping_errors]
    if root is not None and not is_generic(root.text):
        return None   # a specific root: whether the entry explains it is _matches_root's call
    if root is None and not (analysis.errors and all(e.kind == "consequence" or is_generic(e.text)
                                                      for e in analysis.stopping_errors)):
        return None   # the error is told in the user's words (a title): the frames are the log's part
    matched_error = any(m == e or (len(m) > 20 and m in e) for m in top.evidence for e in errors)
    if matched_error:
        return None
    # where an error of the entry's own kind was raised says which case it is (the OOM of the
    # request-to-token table); another kind raised at the same call (`_cuda_setDevice`) is not it
    # (a crash is what most errors end in, so it tells no case apart here)
    root_kinds = kinds_in(root.text) - {"crash"} if root is not None else frozenset()
    same_kind = root is not None and bool(entry_kinds(top.meta) & root_kinds)
    if same_kind and any(_raised_at(m, analysis) for m in specific_matched):
        return None
    # an error of no kind of its own (`CUDA error: invalid argument`) says nothing but where it
    # was raised: in the entry's function, among the innermost frames, it is the entry's case
    kindless = root is not None and not root_kinds
    if kindless and any(_among_innermost_frames(m, analysis) for m in specific_matched):
        return None
    return specific_matched[0]


INNERMOST_FRAMES = 3
FRAME_PARTS_RE = re.compile(r'^\s*File "([^"]+)", line \d+,? in (\S+)')


def _among_innermost_frames(line: str, analysis: Analysis) -> bool:
    """The frame line is one of the failing traceback's innermost frames (its file and function)."""
    parts = FRAME_PARTS_RE.match(line)
    files, functions = analysis.innermost(INNERMOST_FRAMES)
    return bool(parts) and parts.group(1) in files and parts.group(2) in functions


RAISED_AT_LINES = 3   # the innermost frame, its source line, a caret line: then the error


def _raised_at(line: str, analysis: Analysis) -> bool:
    """The frame line is where the root error was raised: the error follows right under it (an
    allocation that failed in `self.req_to_token = torch.zeros(` is that table's, while an OOM
    that merely passed through the LM head is not the LM head's)."""
    masked, lines = mask(line), analysis.masked_lines
    roots = {mask(e.text) for e in analysis.stopping_errors if e.kind in ROOT_KINDS}
    for i, candidate in enumerate(lines[:5000]):
        if candidate != masked:
            continue
        after = [ln for ln in lines[i + 1:i + 1 + RAISED_AT_LINES] if ln.strip(" ^~")]
        if after and after[0] in roots:
            return True
    return False


def declared_site_line(meta: dict, analysis: Analysis) -> str | None:
    """The root error (masked), when it is an SGLang message raised where the entry says its
    class of errors comes from (`raised_in`); that explains it as a matched line would."""
    if not meta.get("raised_in"):
        return None
    root = root_error(analysis)
    if root is None or not raised_where_declared(meta, paste_origin(analysis)):
        return None
    return root.masked


def declared_symbol_line(meta: dict, analysis: Analysis) -> str | None:
    """The root error (masked), when the entry is about another package calling SGLang names of
    another release (`caller_needs_other_release`) and the root error is one: a name the symbol
    registry shows other releases have (the user's lacks it, or its release is not known), reached
    from a frame outside SGLang (the importing or calling code)."""
    if not meta.get("caller_needs_other_release"):
        return None
    root = root_error(analysis)
    history = paste_symbol(analysis)
    if root is None or history is None or history.kind == "model" or not history.fitting_releases:
        return None
    if history.user_version_fits():
        return None   # the user's release has what the caller wants: another copy is loaded
    files = [f for f in analysis.innermost(12)[0] if not VERSION_CHECKER_RE.search(f)]
    if not files or module_of(files[-1]) is not None:
        return None   # no caller shown, or the innermost frame is SGLang's own code
    return root.masked


def _explains_root_specifically(top, analysis: Analysis) -> bool:
    if top.signature < SIGNATURE_OK:
        return False
    if declared_site_line(top.meta, analysis) is not None or declared_symbol_line(top.meta, analysis) is not None:
        return True
    root = root_error(analysis)
    if not specific_signatures(top) or (root is None and kind_conflict(paste_kinds(analysis), entry_kinds(top.meta))):
        return False   # (with no error line, the user's words say what failed: failure_kind)
    specific_matched = [m for m in top.evidence if not is_generic(m)]
    if root is None or is_generic(root.text):
        # the root says only that something failed; a specific line says what. A traceback
        # frame says where, not what: it counts only when the entry matched the root error too
        # (an OOM passing through the LM head is not the LM-head crash an entry is about)
        return _frames_only(top, analysis) is None and _warnings_only(top, analysis)[0] is None
    return _matches_root(specific_matched, root, analysis)


# a logger's warning, which a run prints and goes on (`[2025-12-29 07:57:09] WARNING server_args.py:1838:
# ...`, `W1030 07:53:11.382602 ...`, `WARNING 07-13 10:41:52 [...]`). Not NCCL's or MCCL's `WARN`:
# those libraries report their failures at that level (`NCCL WARN socketStartConnect: ... failed`)
WARNING_LINE_RE = re.compile(r"^(?:\[[^\]]{0,60}\]\s*)?(?:WARNING\b|W\d{4} \d\d:)"
                             r"|^[^\n]{0,60}?(?:\]\s*|\s)WARNING(?:\s|:|\])")


def _warnings_only(top, analysis: Analysis) -> tuple[str | None, str | None]:
    """(the warning, the error) when a warning is the entry's only specific evidence in a paste
    that failed with an error the entry did not match: a run that warned and went on failed of
    something else (the warning every DeepEP normal-mode launch prints is not why it died with
    `invalid configuration argument`); (None, None) otherwise."""
    specific_matched = [m for m in top.evidence if not is_generic(m)]
    if not specific_matched or not all(WARNING_LINE_RE.search(m) for m in specific_matched):
        return None, None
    failure = _failure_told(top, analysis)
    return (specific_matched[0], failure) if failure else (None, None)


def _failure_told(top, analysis: Analysis) -> str | None:
    """The error the run failed with, when the entry did not match it and it says what failed: the
    log's root error, or with none in the log, an error the user quotes in their words that the
    entry's lines do not say. A generic root (`NCCL error ... unhandled system error`) is not one:
    the warning before it (`NCCL WARN socketStartConnect: ...`) is what tells why."""
    root = root_error(analysis)
    if root is not None:
        unexplained = not is_generic(root.text) and not _matches_root(set(top.evidence), root, analysis)
        return root.text if unexplained else None
    for quoted in quoted_messages(analysis.question or ""):
        if len(quoted.split()) >= 2 and _line_coverage(top.meta, mask(quoted)) < ROOT_COVERAGE_OK:
            return quoted
    return None


def _is_frame(line: str, analysis: Analysis) -> bool:
    """A traceback frame, or the source line under one (`torch._C._cuda_setDevice(device)`); the
    `assert` a bare AssertionError stopped at is what failed, not where."""
    if line.lstrip().startswith("assert "):
        return False
    return bool(TRACEBACK_FRAME_RE.match(line)) or mask(line) in analysis.source_lines


# a Python traceback's frame (an exception passed through it); faulthandler's crash dump writes
# `File "...", line N in f` without the comma, and its innermost frame is where the crash is
TRACEBACK_FRAME_RE = re.compile(r'^\s*File "[^"]+", line \d+, in ')


def _matches_root(matched, root, analysis: Analysis) -> bool:
    """A matched line is the root error, part of it (a wrapper), or an earlier error of the kind
    that causes it."""
    if any(root.text == m or (len(m) > 20 and (m in root.text or root.text in m)) for m in matched):
        return True
    return any(e.text in matched and e.kind in ROOT_KINDS
               and (e.line_no <= root.line_no or _chained_from(e, root, analysis))
               for e in analysis.errors)


def _chained_from(error, root, analysis: Analysis) -> bool:
    """`error` was raised while handling `root` (or from it): the traceback between them says
    "During handling of the above exception" (`KeyError: 'qwen3_next'`, then transformers' own
    `ValueError: ... does not recognize this architecture`): the entry that explains the second
    explains the first."""
    return any(root.line_no < line < error.line_no for line in analysis.chain_lines)


# what a logger or an exception prints, never a user's sentence: `NCCL WARN`, `ERROR`, `ValueError:`
LOGGED_RE = re.compile(r"\b(?:WARN|WARNING|ERROR|FATAL)\b|^[\w.]*(?:Error|Exception)\b:")


def _specific_line_unexplained(top, analysis: Analysis) -> str | None:
    """A specific error or warning line of the paste about a component the hit is about (NCCL's
    `WARN Duplicate GPU detected` for an NCCL entry) that the hit neither matched nor says in other
    words: when the hit matched only lines every such log prints, that line says which failure of
    the component it was, and it is not the hit's."""
    evidence = {mask(line).lower() for line in top.evidence}
    about = specific(entry_components(top.meta))
    prose = set(analysis.prose_lines)
    for error in analysis.errors[:20]:
        # a line of the component the entry is about: it is what ties the paste to the entry,
        # and it says something else
        told = error.masked in prose or (looks_like_sentence(error.text) and not LOGGED_RE.search(error.text))
        if is_generic(error.text) or relayed(error.text) or told or not (specific(components_in(error.text)) & about):
            continue   # (the user's own words, a title say what they think, not what the log says)
        if error.masked.lower() in evidence or _line_coverage(top.meta, error.masked) >= ROOT_COVERAGE_OK:
            continue
        return error.text
    return None


def _root_unexplained(top, analysis: Analysis) -> list[str]:
    """The first specific error of the paste, when the hit neither matched it nor an earlier
    error line that could be its cause, nor says the same in other words."""
    root = root_error(analysis)
    if root is None:
        return _quoted_exception_unexplained(top, analysis)
    if is_generic(root.text):
        return []
    if _matches_root(set(top.evidence), root, analysis):
        return []
    if _line_coverage(top.meta, root.masked) >= ROOT_COVERAGE_OK:
        return []   # a paraphrase: the entry's own error line says the same thing in other words
    shared = specific(components_in(root.text)) & specific(entry_components(top.meta))
    if shared and top.signature >= SIGNATURE_OK:
        return []   # another line of the same component's failure, which the entry did match
    return [Sentence(f"Your first error, {_short(root.text)}, is not one this entry explains.",
                     f"你的第一个错误 {_short(root.text)} 不是这个条目能解释的。")]


# an exception written into the user's own sentence or title: `Qwen3.6 FP8 with sglang RuntimeError:
# The size of tensor a (96) must match ...`
EMBEDDED_EXCEPTION_RE = re.compile(r"\b(?:[A-Z]\w*\.)*[A-Z]\w*(?:Error|Exception):\s+\S.{11,}")


def _quoted_exception_unexplained(top, analysis: Analysis) -> list[str]:
    """With no error line of the log's own, the exception the user writes into their sentence is
    the error to explain: an entry matched on other lines (a JSON field it also names) that does
    not say it is not its fix. A line many failures print counts here too: an entry about such a
    failure says it in its own lines, which the coverage check reads."""
    for error in analysis.errors:
        if error.kind != "fatal" or not looks_like_sentence(error.text):
            continue
        found = EMBEDDED_EXCEPTION_RE.search(error.text)
        if found is None:
            continue
        quoted = found.group(0)
        if any(quoted in line for line in top.evidence) or _line_coverage(top.meta, mask(quoted)) >= ROOT_COVERAGE_OK:
            return []
        return [Sentence(f"Your error, {_short(quoted)}, is not one this entry explains.",
                         f"你的错误 {_short(quoted)} 不是这个条目能解释的。")]
    return []


def _version_conflict(meta: dict, version: str | None) -> str | None:
    if not version:
        return None
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(version)
    except InvalidVersion:
        return None
    outside = scope_fits(v, meta.get("affected"), meta.get("fixed"))
    if outside == "affected":
        return Sentence(f"This entry is about SGLang {meta['affected']}; your log shows {version}.",
                        f"这个条目讲的是 SGLang {meta['affected']}；你的日志显示是 {version}。")
    if outside == "fixed":
        return Sentence(f"This problem was fixed in SGLang {meta['fixed']}; your log shows {version}.",
                        f"这个问题在 SGLang {meta['fixed']} 已修复；你的日志显示是 {version}。")
    return None


def _line_coverage(meta: dict, masked_root: str) -> float:
    """Share of the root line's words that the entry's signatures or symptoms contain."""
    root_tokens = set(tokenize(masked_root.lower()))
    if not root_tokens:
        return 0.0
    entry_tokens: set[str] = set()
    for line in (*(meta.get("signatures") or ()), *(meta.get("symptoms") or ())):
        entry_tokens |= masked_signature(line)[1]
    return len(root_tokens & entry_tokens) / len(root_tokens)


def _short(text: str, limit: int = 90) -> str:
    """A line quoted in a reason, cut to `limit` characters, as a code span."""
    text = " ".join(text.split())
    return code_span(f"{text[:limit]}{'…' if len(text) > limit else ''}")


def _names(components) -> str:
    return ", ".join(sorted(components))


# ---- evidence for the top hit ----------------------------------------------------------------

def signature_coverage(hit, tokens: list[str], idf=None) -> float:
    """How much of the hit's best error line (or symptom) the user's words contain, weighted by
    rarity: a paraphrase of `peer access is not supported` still covers most of it."""
    idf = idf or (lambda token: 1.0)
    query = set(tokens)
    best = 0.0
    for line in hit.meta.get("signatures") or hit.meta.get("symptoms") or []:
        _, sig_tokens = masked_signature(line)
        total = sum(idf(t) for t in sig_tokens)
        if total:
            best = max(best, sum(idf(t) for t in sig_tokens if t in query) / total)
    return best


def restates_entry(hit, tokens: list[str], idf=None) -> float:
    """How much of the entry's own account of its failure the user's words repeat: the
    rarity-weighted share of its title plus that of its closest symptom (0..2). A paste that only
    shares the topic ("EAGLE is slow") covers little of either; one that says the entry's specific
    observable ("accept length stays 1 with the draft model") covers most of a symptom."""
    idf = idf or (lambda token: 1.0)
    query = set(tokens)

    def covered(line: str) -> float:
        _, line_tokens = masked_signature(line)
        total = sum(idf(t) for t in line_tokens)
        return sum(idf(t) for t in line_tokens if t in query) / total if total else 0.0

    symptom = max((covered(line) for line in hit.meta.get("symptoms") or []), default=0.0)
    return covered(hit.title or "") + symptom


def _coverage(hit, tokens: list[str], index: Index, idf=None) -> float:
    """Share of the query's distinctive tokens that the hit's text contains."""
    # a token no chunk holds counts too, as the rarest: an error's own names (a plugin, a class)
    # that the KB never mentions are what the KB does not explain
    distinct = list(dict.fromkeys(tokens))
    if not distinct:
        return 0.0
    text_tokens = index.unit_tokens(index.unit_by_id[hit.unit_id])
    idf = idf or (lambda token: token_idf(index, token))
    idf_weight = [(t, idf(t)) for t in distinct]
    total = sum(w for _, w in idf_weight)
    got = sum(w for t, w in idf_weight if t in text_tokens)
    return got / total if total else 0.0
