"""The answer as data: diagnosis, fix steps, warnings, citations, matches, detected environment.

`compose_extractive` builds it from the retrieved KB entry alone (no LLM): the fix steps that apply
to the user's SGLang version, warnings for wrong advice and for flags in the user's own launch
command that their version does not have, and the sources. Every answer has an `outcome`: `fix`,
or `lead` / `unknown` (`abstained`), which `assistant.lead_answer` composes: what is known, why it
is not a fix, what to collect next, and no fix steps. Every answer also carries where the root
error is emitted (`origin`) and, for a dependency problem, the pin of the user's release
(`dependency`), from `assistant.provenance`.
"""

from __future__ import annotations

import re

from dataclasses import asdict, dataclass, field

from assistant.commands import FLAG_RE, has_own_flags, sglang_names
from assistant.deps import DependencyAdvice
from assistant.flag_reference import FlagReference
from assistant.gpu_memory import (GpuMemory, LoadMemory, gpu_memory_json, load_memory_json, paste_gpu_memory,
                                  paste_load_memory)
from assistant.flag_choices import choice_history
from assistant.language import answer_language
from assistant.wording import Sentence, heading, in_language
from assistant.origin import Origin
from assistant.symbols import SymbolHistory
from assistant.upgrade import ReleaseChange, release_change
from assistant.provenance import (dated_paste_environment, dependency_json, dependency_sentence,
                                  is_dependency_entry, origin_json, paste_dependency, paste_origin,
                                  paste_releases, paste_symbol, symbol_json)
from assistant.retrieve import Hit, Retrieval
from assistant.asked_warning import harmless_warning_note
from assistant.case_steps import fitting_steps
from assistant.kernel_fault import fault_note
from assistant.server_address import server_address
from assistant.snippets import command_lines
from assistant.decision import paste_families
from assistant.release_range import of_known_releases
from assistant.step_versions import step_version_ok, upgrade_target
from assistant.trace import Environment

FIX, LEAD, UNKNOWN = "fix", "lead", "unknown"
# the user's words that announce the error pasted below them ("on node2, can see the below error:",
# "报错如下："): read as a fatal line for the word "error", they are no root error to show
CAPTION_RE = re.compile(
    r"^(?!Exception in thread|Traceback|During handling|\s*[\w.]*(?:Error|Exception|Exit)\w*\s*[:(])"
    r".*(?:\b(?:below|following|as follows|the|these|this|an?)\b[^:：]{0,40}\b(?:errors?|exceptions?|logs?|output|traceback)\b"
    r"|\b(?:errors?|exceptions?|logs?|output|traceback)\b[^:：]{0,20}\b(?:below|follows|is|are|was|were)\b"
    r"|如下|报错信息|错误信息|错误日志)\s*[:：]\s*$", re.I)
NOT_FROM_KB = "not from the knowledge base"
SEED_MARK_RE = re.compile(r"\s*\(seeds? \d{3}(?:[,/ ]+\d{3})*\)")
CAUTION_PREFIX = "! Caution:"   # the risk of a step, printed under its commands
CAUTION_PREFIX_ZH = "! 注意："

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

    def titles(self, language: str) -> tuple[str, str]:
        """(the title to head an answer with, the other one or ""): a Chinese reader reads the
        Chinese title first; the English one follows for searching."""
        if language == "zh" and self.title_zh:
            return self.title_zh, self.title
        return self.title, self.title_zh

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
    # the three outcomes (assistant.decision): fix | lead | unknown; `abstained` is "not a fix"
    outcome: str = FIX
    reasons: list[str] = field(default_factory=list)        # why it is not a fix
    question: bool = False                                   # a how-to question, not an error
    failing_components: list[str] = field(default_factory=list)   # where the user's error arises
    failing_module: str | None = None                        # module of the innermost frame
    failing_function: str | None = None                      # ... and its function
    named_class: tuple[str, str] | None = None   # (class, module) an unknown/lead paste names, no traceback
    confirm_if: list[str] = field(default_factory=list)     # lines that would confirm a lead
    explanation: str | None = None   # the model's reading of the root error: not from the KB
    origin: Origin | None = None     # where the root error is emitted (assistant.provenance)
    dependency: DependencyAdvice | None = None   # the pin for a dependency problem in the paste
    symbol: SymbolHistory | None = None   # releases that have what an import/attribute error names
    gpu_memory: GpuMemory | None = None   # the numbers of an out-of-memory message (assistant.gpu_memory)
    load_memory: LoadMemory | None = None  # weights that filled the GPU, from SGLang's load log line
    flags: list[FlagReference] = field(default_factory=list)   # what a how-to question is about
    language: str = "en"   # the language of the entry's text shown (zh: cause_zh / text_zh)
    reader_language: str = "en"   # the reader's language: headings and our own sentences (assistant.wording)
    choice_note: str | None = None   # which releases accept the value of an `invalid choice` error
    # what changed between the two SGLang releases the report compares ("worked on 0.5.3, not 0.5.6")
    release_change: ReleaseChange | None = None
    # where an asynchronous kernel fault (illegal memory access) arises, read from the frames
    fault_note: str | None = None

    def __post_init__(self) -> None:
        if self.abstained and self.outcome == FIX:   # built by code that knows only abstention
            self.outcome = UNKNOWN
        if self.outcome != FIX:
            self.abstained = True

    def label(self, key: str) -> str:
        """A section's name in the reader's language (`assistant.wording`)."""
        return heading(key, self.reader_language)

    def localized(self, text: str) -> str:
        """One of our own sentences in the reader's language (`assistant.wording.in_language`)."""
        return in_language(text, self.reader_language)

    @property
    def reasons_title(self) -> str:
        """The heading over `reasons`: a lead's, or for unknown, which candidate they are about
        (they say "this entry" of the closest one, and an unknown answer lists several)."""
        if self.outcome == LEAD:
            return self.label("why_lead")
        top = self.matches[0] if self.matches else None
        # a how-to question's answer stands on its own: the closest entry is an error's (a crash)
        # that the question never asked about, so the heading names none
        if top is not None and top.kind == "entry" and not self.question:
            return self.label("why_not_closest").format(ref=f"kb:{top.id}")
        return self.label("why_unknown")

    @property
    def headline(self) -> str:
        """The outcome in words, the first thing every surface shows."""
        if self.question:
            return self.label("question_lead" if self.outcome == LEAD else "question_unknown")
        return self.label(self.outcome) if self.outcome in (LEAD, UNKNOWN) else self.label("fix_outcome")

    def to_json(self) -> dict:
        return {
            "outcome": self.outcome,
            "reasons": self.reasons,
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
            "question": self.question,
            "failing_components": self.failing_components,
            "failing_module": self.failing_module,
            "failing_function": self.failing_function,
            "named_class": ({"class": self.named_class[0], "module": self.named_class[1]}
                            if self.named_class else None),
            "confirm_if": self.confirm_if,
            "explanation": self.explanation,
            "explanation_source": NOT_FROM_KB if self.explanation else None,
            "origin": origin_json(self.origin),
            "dependency": dependency_json(self.dependency),
            "release_change": self.release_change.to_json() if self.release_change else None,
            "symbol": symbol_json(self.symbol),
            "gpu_memory": gpu_memory_json(self.gpu_memory),
            "load_memory": load_memory_json(self.load_memory),
            "flags": [asdict(f) for f in self.flags],
            "language": self.language,
            "reader_language": self.reader_language,
            "choice_note": self.choice_note,
            "fault_note": self.fault_note,
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
                 sources, _distinct_lines(hit.evidence), meta)


def _distinct_lines(lines) -> list[str]:
    """The matched lines without one that only repeats another with more or less around it (a
    sentence and the same sentence with "(screenshots)" after it)."""
    kept: list[str] = []
    for line in lines:
        key = " ".join(line.split()).lower()
        if not any(key in " ".join(k.split()).lower() or " ".join(k.split()).lower() in key for k in kept):
            kept.append(line)
    return kept


# the names a wrong-advice claim and a fix step can share: SGLang's and other programs' flags and
# environment variables (`--watchdog-timeout`, `TRITON_PTXAS_PATH`)
ADVICE_NAME_RE = re.compile(rf"{FLAG_RE.pattern}|\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b")


SHARED_NAME_LABEL = ("Wrong advice in circulation (a fix step above also uses {names}, its own way: follow the step, "
                     "not this claim): ",
                     "流传的错误建议（上面的修复步骤也用到了 {names}，但用法不同：照步骤做，不要照这个说法做）：")


def format_step(text: str, commands, versions: str | None, show_versions: bool,
                caveat: str | None = None, language: str = "en") -> str:
    label = f"[SGLang {versions}] " if versions and show_versions else ""
    lines = [label + text]
    lines += [line for c in commands for line in command_lines(c)]   # YAML or Python: a block, no `$`
    if caveat:  # the risk belongs next to the command that carries it, not in a footnote
        lines.append(f"    {CAUTION_PREFIX_ZH}{caveat}" if language == "zh" else f"    {CAUTION_PREFIX} {caveat}")
    return "\n".join(lines)


def flag_warnings(env: Environment, registry, user_env_vars=()) -> list[Sentence]:
    """Flags in the user's own launch command, and SGLANG_* / SGL_* variables in their paste,
    that their SGLang version does not accept (any version when it is unknown)."""
    if registry is None:
        return []
    version = registry.nearest(env.sglang_version) if env.sglang_version else None
    where = ((f"SGLang {env.sglang_version}", f" SGLang {env.sglang_version} ") if version
             else ("any SGLang release", "任何 SGLang 版本都"))
    out = []
    # (SGLang-JAX's launcher has flags of its own, `--jax-precompile-decode-bs-paddings`)
    names = [] if has_own_flags(env.launch_command) else [("flag", f.split()[0]) for f in env.flags]
    names += [("env", name) for name in user_env_vars if name.startswith(("SGLANG_", "SGL_"))]
    for what, name in dict.fromkeys(names):
        status = registry.check(name, version)
        if status.exists:
            continue
        note = status.note
        use = status.replacement or (_flag_named_like(name, registry, version) if what == "env" else None)
        if what == "flag":
            english = f"Your launch command uses {name}, which {where[0]} "
            chinese = f"你的启动命令用了 {name}，而{where[1]}"
        else:
            english, chinese = f"Your paste sets {name}, which {where[0]} ", f"你设置了 {name}，而{where[1]}"
        english += ("does not accept" if status.kind == "flag" else "does not read") + f" ({note})."
        chinese += ("不接受它" if status.kind == "flag" else "不读取它") + f"（{note.zh}）。"
        out.append(Sentence(english.replace("..", ".") + (f" Use {use} instead." if use else ""),
                            chinese + (f"请改用 {use}。" if use else "")))
    return out


def _flag_named_like(env_var: str, registry, version: str | None) -> str | None:
    """The launch flag an env var that SGLang never reads was meant to be
    (`SGLANG_DISABLE_CUDA_GRAPH` -> `--disable-cuda-graph`), when the user's release has it."""
    stem = re.sub(r"^SGLANG_|^SGL_", "", env_var)
    flag = "--" + stem.lower().replace("_", "-")
    status = registry.check(flag, version)
    return flag if status.exists and status.canonical in (None, flag) else None


def missing_step_flags(texts, version: str | None, registry, user_names=()) -> list[str]:
    """The SGLang flags and env vars a fix step uses that the user's version does not have (none
    when the version or the registry is unknown). A flag the user wrote themselves (e.g. "replace
    your --enable-reasoning") is not a recommendation, so it is not held against the step."""
    if registry is None or not version:
        return []
    release = registry.nearest(version)
    statuses = [registry.check(n, release) for n in sglang_names(*texts) if n not in user_names]
    return [st.name for st in statuses if not st.known]


def compose_extractive(retrieval: Retrieval, registry=None, top_k: int = 3, lang: str = "auto") -> Answer:
    """The answer from the knowledge base, with where the root error comes from and, for a
    dependency problem, the pin of the user's release (`assistant.provenance`); in Chinese where
    the entry has it when the user writes Chinese or asks for it (`assistant.language`)."""
    language = answer_language(lang, retrieval.analysis)
    answer = _compose_from_kb(retrieval, registry, top_k, language)
    answer.reader_language = language
    analysis = retrieval.analysis
    history = choice_history((*(e.text for e in analysis.errors[:20]), *analysis.plain_lines[:200]),
                             analysis.environment.sglang_version, registry)
    if history is not None:
        answer.choice_note = history.sentence(registry.versions)
    note = harmless_warning_note(retrieval)
    if note is not None:   # the user asks whether a warning matters: answer that in one line
        answer.warnings.insert(0, answer.localized(note))
    answer.release_change = change = release_change(analysis, registry=registry)
    if change is not None and answer.abstained:
        answer.next_steps.insert(0, answer.localized(change.next_step()))
    if answer.abstained and answer.primary_error and CAPTION_RE.search(answer.primary_error):
        answer.primary_error = None   # the user's caption over the log, not a line of it
    note = fault_note(analysis)
    if note is not None:
        answer.fault_note = answer.localized(note)
    return at_users_address(with_provenance(answer, retrieval), analysis)


def at_users_address(answer: Answer, analysis) -> Answer:
    """The commands of the fix and of the next steps pointed at the port (and host) the paste
    shows the user's server on, not SGLang's default 30000 (`assistant.server_address`)."""
    lines = [analysis.question, *(analysis.original(line) for line in analysis.masked_lines)]
    address = server_address(analysis.environment.flags, lines)
    if address:
        answer.fix = [address.applied(step) for step in answer.fix]
        answer.next_steps = [address.applied(step) for step in answer.next_steps]
    return answer


def with_provenance(answer: Answer, retrieval: Retrieval) -> Answer:
    """Attach the origin and the dependency pin. The install command becomes the first fix step
    of an entry about a dependency, and the first thing to try for a lead or unknown."""
    analysis = retrieval.analysis
    answer.origin = paste_origin(analysis)
    answer.symbol = paste_symbol(analysis)
    answer.gpu_memory = paste_gpu_memory(analysis)
    answer.load_memory = paste_load_memory(analysis)
    answer.dependency = advice = paste_dependency(analysis)
    if advice is None:
        return answer
    usable = advice.pinned_spec is not None and advice.satisfied is not True
    if answer.abstained:
        # every surface shows the pin under its own heading; a next step only when there is
        # something to install (a pin the user's release sets and their version does not meet)
        if usable:
            said = dependency_sentence(advice)
            answer.next_steps.insert(0, answer.localized(Sentence(f"Install what your release pins: {said}",
                                                                  f"安装你的版本锁定的依赖：{said.zh}")))
    elif (retrieval.hits and retrieval.hits[0].kind == "entry"
          and is_dependency_entry(retrieval.hits[0].meta, advice)):
        if usable:
            said = dependency_sentence(advice, command=False)
            step = answer.localized(Sentence(f"Install the version of {advice.package} that your SGLang release pins: "
                                             f"{said}", f"安装你的 SGLang 版本锁定的 {advice.package} 版本：{said.zh}"))
            answer.fix.insert(0, format_step(step, [advice.install_command], None, show_versions=False))
        else:
            said = dependency_sentence(advice)
            answer.warnings.append(answer.localized(Sentence(f"{advice.package}: {said}.",
                                                             f"{advice.package}：{said.zh}。")))
    return answer


def _compose_from_kb(retrieval: Retrieval, registry=None, top_k: int = 3, language: str = "en") -> Answer:
    env = dated_paste_environment(retrieval.analysis)
    matches = [_match(h) for h in retrieval.hits[:top_k]]
    similar = [_match(h) for h in retrieval.similar][:5]
    root = retrieval.analysis.root_line
    primary = root.text if root else None
    warnings = [in_language(w, language) for w in flag_warnings(env, registry, retrieval.analysis.user_names)]
    if retrieval.abstain or not retrieval.hits:
        # a lead or unknown: what is known and what to collect, never the entry's steps as the fix
        from assistant.lead_answer import not_confirmed

        known = not_confirmed(retrieval, matches, registry, language)
        return Answer(matches=matches, abstained=True, diagnosis=known.diagnosis, fix=[],
                      warnings=warnings, citations=[], detected=env, confidence=retrieval.confidence,
                      next_steps=known.next_steps, similar_issues=similar,
                      primary_error=None if known.no_failure else primary,   # a warning is no root error
                      outcome=known.outcome, reasons=known.reasons, question=known.question,
                      failing_components=known.failing_components,
                      failing_module=known.failing_module, failing_function=known.failing_function,
                      confirm_if=known.confirm_if,
                      named_class=known.named_class, flags=known.flags)

    top = retrieval.hits[0]
    meta = top.meta
    if top.kind != "entry":
        return _compose_from_unit(retrieval, matches, similar, warnings, primary, registry)
    version = env.sglang_version
    # no version line: the releases the traceback's files and its message date it to still rule steps out
    dated = paste_releases(retrieval.analysis)[0] if not version else None
    # SGLang code no current release has may be a release older than all of them
    frames = retrieval.analysis.sglang_frames
    old_code = bool(frames) and not of_known_releases(frames)
    fix, dropped = [], []
    analysis = retrieval.analysis
    for step in fitting_steps(meta["fix"], analysis.masked_lines, families=paste_families(analysis),
                              lines_as_written=[analysis.question,
                                                *(analysis.original(line) for line in analysis.masked_lines)],
                              signatures=meta.get("signatures") or ()):
        ok = step_version_ok(step.get("versions"), version, registry, step["text"], old_release_shown=old_code)
        if ok is False or (ok is None and dated is not None and step.get("versions")
                           and not dated.admits(step["versions"])):
            continue
        # an upgrade step's flags are those of the release it leads to
        flags_of = upgrade_target(step.get("versions"), version, step["text"]) or version
        missing = missing_step_flags([step["text"], *step.get("commands", [])], flags_of, registry,
                                     retrieval.analysis.user_names)
        if missing:
            names = ", ".join(missing)
            dropped.append(in_language(Sentence(f"A step of this fix uses {names}, which SGLang {version} "
                                                "does not have; it was left out.",
                                                f"这个修复方法有一步用到了 {names}，而 SGLang {version} 没有它；"
                                                "这一步已略去。"), language))
            continue
        step_zh = language == "zh" and bool(step.get("text_zh"))
        text = step["text_zh"] if step_zh else step["text"]
        caveat = (step.get("caveat_zh") or step.get("caveat")) if step_zh else step.get("caveat")
        fix.append(format_step(text, step.get("commands", []), step.get("versions"),
                               show_versions=ok is None, caveat=caveat, language="zh" if step_zh else "en"))
    if language == "zh" and meta.get("cause_zh"):
        diagnosis = f"{meta['title_zh']}。{meta['cause_zh']}"
    else:
        diagnosis = f"{meta['title']}. {meta['cause']}"
    if meta.get("confidence") in ("low", "medium-low", "low-medium"):
        level = meta["confidence"]
        warnings.append(in_language(Sentence(f"This entry's confidence is {level}: the fix is a workaround "
                                             "or comes from an open issue; verify it on your setup.",
                                             f"这个条目的可信度是{heading('confidence_' + level, 'zh')}：修复方法是变通办法，或来自尚未关闭的 issue；"
                                             "请在你的环境里验证。"), language))
    chinese = language == "zh"
    in_steps = set(ADVICE_NAME_RE.findall("\n".join(fix)))
    for wrong in meta.get("wrong_advice", []):
        translated = chinese and wrong.get("claim_zh") and wrong.get("fact_zh")
        # "(seed 001)" names the KB's source document, which the user has never seen
        claim = SEED_MARK_RE.sub("", wrong["claim_zh"] if translated else wrong["claim"])
        label = "流传的错误建议：" if chinese else "Wrong advice in circulation: "
        # a claim about a name a fix step uses too (`TRITON_PTXAS_PATH`) reads, skimmed, as "do X"
        # beside "X is wrong": say that the step uses it its own way
        shared = [name for name in dict.fromkeys(ADVICE_NAME_RE.findall(wrong["claim"])) if name in in_steps]
        if shared:
            names = ", ".join(f"`{name}`" for name in shared)
            label = in_language(Sentence(*(text.format(names=names) for text in SHARED_NAME_LABEL)), language)
        warnings.append(f"{label}{claim} — {wrong['fact_zh'] if translated else wrong['fact']}")
    verify = meta.get("verify", [])
    if chinese and len(meta.get("verify_zh") or ()) == len(verify):
        verify = meta["verify_zh"]
    warnings += dropped
    citations = [f"kb:{top.unit_id}"] + [s.get("url") or f"seed:{s.get('seed')}" for s in meta.get("sources", [])]
    return Answer(matches=matches, abstained=False, diagnosis=diagnosis, fix=fix, warnings=warnings,
                  citations=citations, detected=env, confidence=retrieval.confidence,
                  similar_issues=similar, primary_error=primary,
                  next_steps=[heading("verify_step", language) + v for v in verify],
                  language="zh" if language == "zh" and meta.get("cause_zh") else "en")


def _compose_from_unit(retrieval, matches, similar, warnings, primary, registry=None) -> Answer:
    """The best match is a document or an issue: an issue answers with its thread's resolution
    (assistant.issue_answer); a document (or an issue indexed before resolutions were read) is
    pointed at, with no invented fix."""
    top = retrieval.hits[0]
    env = dated_paste_environment(retrieval.analysis)
    if top.kind == "issue" and isinstance(top.meta.get("resolution"), dict):
        from assistant.issue_answer import issue_answer

        found = issue_answer(retrieval, lambda texts: missing_step_flags(
            texts, env.sglang_version, registry, retrieval.analysis.user_names))
        lead = found.lead
        if lead.unit_id != matches[0].id:   # a resolved report of the same error leads
            matches = [_match(lead), *[m for m in matches if m.id != lead.unit_id]][: len(matches)]
        return Answer(matches=matches, abstained=False, diagnosis=found.diagnosis, fix=found.fix,
                      warnings=warnings + found.warnings, citations=found.citations, detected=env,
                      confidence=retrieval.confidence, primary_error=primary,
                      similar_issues=[m for m in similar if m.id != lead.unit_id],
                      next_steps=found.next_steps + ([] if found.confirmed else list(COLLECT_NEXT[:2])))
    kind = "GitHub issue" if top.kind == "issue" else "document"
    summary = top.meta.get("resolution") or top.meta.get("summary") or ""
    diagnosis = f"The closest source is a {kind}: {top.title}." + (f" {summary}" if summary else "")
    fix = [f"Read {top.url or top.meta.get('path', top.unit_id)}: it reports the same error"
           + (" and how it was resolved." if top.meta.get("resolved") else ".")]
    return Answer(matches=matches, abstained=False, diagnosis=diagnosis, fix=fix, warnings=warnings,
                  citations=[top.url or top.unit_id], detected=env,
                  confidence=retrieval.confidence, similar_issues=similar, primary_error=primary,
                  next_steps=list(COLLECT_NEXT[:2]))
