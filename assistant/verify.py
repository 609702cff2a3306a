"""Verification of the model's answer, piece by piece, before anything is shown:

- a citation must be a retrieved id (`kb:<id>`) or one of the retrieved sources' URLs;
- an SGLang flag / env var must exist in the user's SGLang version (the registry's nearest
  release; any release when the version is unknown): it is replaced by the registry's
  replacement, or the step / sentence that uses it is removed, with a warning;
- a URL that is not a retrieved source's URL is removed;
- a destructive command (`rm -rf /`, `mkfs`, `curl ... | sh`) is removed, wherever it came from;
- a fix step that repeats what a retrieved entry lists as wrong advice is removed;
- filler is removed: a piece that echoes the instructions, says nothing (an identifier, a
  label) or, as a fix step or warning, only repeats the user's error;
- a fix step whose content the sources and the trace do not support is marked
  "(not in the sources)".
Every change is listed (`Verified.changes`), and the JSON output carries it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant.commands import sglang_names
from assistant.draft import Draft
from assistant.prompt import DEFAULT_QUESTION, SYSTEM_PROMPT, Prompt, clip_to_tokens
from assistant.retrieve import Retrieval
from assistant.text import has_cjk, tokenize

NOT_IN_SOURCES = " (not in the sources)"
URL_RE = re.compile(r"https?://[^\s<>\"'`()\[\]{}]+")
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])")
# Commands that destroy data or run code from the network: never shown, whatever the source.
DESTRUCTIVE_RE = re.compile(
    r"\brm\s+(?:-[a-zA-Z]*[rf][a-zA-Z]*\s+)+(?:--no-preserve-root\s+)?(?:/\*?|~/?|\$HOME/?|\*|\.)(?=[\s`'\";|&)]|$)"
    r"|\bmkfs(?:\.\w+)?\b|\bdd\s+[^\n]*\bof=/dev/|:\(\)\s*\{\s*:\|:&\s*\};:|\bchmod\s+-R\s+777\s+/(?=[\s`'\"]|$)"
    r"|\b(?:curl|wget)\b[^\n|`]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|>\s*/dev/sd[a-z]\b"
    r"|\b(?:shutdown|reboot|halt|poweroff)\b(?:\s+-\w+)*\s*(?:now)?(?=[\s`'\"]|$)",
    re.I,
)
# What is left of "see <link> for details" once the link is gone.
DANGLING_REF_RE = re.compile(r"\(?\b(?:see|read|check|visit|refer to|at|from|on)\s*(?:(?:for|for more)\s+"
                             r"(?:details|information|info|more)\s*)?(?=[.,;:)]|$)\)?"
                             r"|\b(?:see|read|check|visit|refer to)\s+(?:for|for more)\s+"
                             r"(?:details|information|info|more)\b"
                             r"|[,;]?\s*\b(?:more\s+)?(?:details|information|info)\s+(?:are\s+|is\s+)?(?:at|in|on|here)\s*(?=[.,;:)]|$)",
                             re.I)
REFERENCE_ONLY_RE = re.compile(r"^(?:see|read|check|visit|refer to|follow|open|详见|参考|查看)\b", re.I)
REMOVAL_WORDS_RE = re.compile(r"\b(?:remove|drop|delete|replace|instead|rename|renamed|no longer|"
                              r"deprecated|unsupported|not (?:a )?valid|does not exist|without)\b|"
                              r"去掉|删除|移除|替换|改用|不再|不支持", re.I)
# Words every step uses; a step is not "supported" by sharing only these with the sources.
GENERIC_TOKENS = frozenset((
    "use using set run try check make sure add pass server sglang launch start restart model "
    "instead value option flag command again need needs should must step first then").split())
SUPPORT_RATIO = 0.6


def _norm_url(url: str) -> str:
    url = url.rstrip(".,;:!?)]}'\"`")
    return re.sub(r"^https?://(www\.)?", "", url).split("#")[0].rstrip("/").lower()


def _replace_name(text: str, name: str, new: str) -> str:
    return re.sub(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", new, text)


def _tidy(text: str) -> str:
    text = re.sub(r"\(\s*\)|\[\s*\]|<\s*>|`\s*`", "", text)
    text = re.sub(r"\s+([.,;:])", r"\1", text)
    return " ".join(text.split()).strip(" ,;:")


@dataclass
class Verdict:
    text: str | None                       # None: the piece is removed
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Verifier:
    """Checks pieces of the model's answer against what it was given and the flag registry."""

    def __init__(self, prompt: Prompt, retrieval: Retrieval, registry):
        self.registry = registry
        self.sources = prompt.sources
        env = retrieval.analysis.environment
        self.user_version = env.sglang_version
        self.version = registry.nearest(env.sglang_version) if registry and env.sglang_version else None
        self.where = f"SGLang {env.sglang_version}" if self.version else "any SGLang release"
        self.citations: dict[str, str] = {}          # normalised -> as shown
        for block in prompt.sources:
            self.citations[block.citation.lower()] = block.citation
            self.citations[block.unit_id.lower()] = block.citation
            for url in block.urls:
                self.citations[_norm_url(url)] = url
            for label in block.labels:
                self.citations[label.lower()] = label
        self.urls = {_norm_url(u) for block in prompt.sources for u in block.urls}
        user_text = "\n".join([retrieval.analysis.query_text(), " ".join(env.flags),
                               env.launch_command or ""])
        self.user_names = set(sglang_names(user_text)) | {f.split()[0] for f in env.flags}
        self.support_text = ("\n".join(b.text for b in prompt.sources) + "\n" + user_text).lower()
        self.support_tokens = set(tokenize(self.support_text))
        self.error_words = f" {' '.join(_words(' '.join(e.text for e in retrieval.analysis.errors)))} "
        self._status_cache: dict[str, object] = {}

    # -- the checks --

    def _status(self, name: str):
        if name not in self._status_cache:
            self._status_cache[name] = self.registry.check(name, self.version)
        return self._status_cache[name]

    def _check_names(self, text: str, verdict: Verdict, where: str) -> str | None:
        """Unknown flags / env vars: replaced by the registry's replacement, else the piece goes.
        Exempt, because they explain rather than recommend: the user's own flags named in the
        diagnosis or a warning; names from the sources in a warning ("--enable-reasoning is
        vLLM's"); either in a fix step that removes or replaces them."""
        if self.registry is None:
            return text
        for name in sglang_names(text):
            status = self._status(name)
            if status.exists:
                if getattr(status, "deprecated", False) and where == "fix step":
                    hint = f"; use {status.replacement}" if status.replacement else ""
                    verdict.warnings.append(f"{name} is deprecated in {self.where}{hint}.")
                continue
            users = name in self.user_names
            in_sources = name.lower() in self.support_text
            if ((where == "diagnosis sentence" and users) or (where == "warning" and in_sources)
                    or (where == "fix step" and in_sources and REMOVAL_WORDS_RE.search(text))):
                continue
            replacement = status.replacement
            if replacement and self._status(re.split(r"[ =]", replacement, maxsplit=1)[0]).exists:
                text = _replace_name(text, name, replacement)
                verdict.changes.append(f"Replaced {name} with {replacement} in a {where}: "
                                       f"{_sentence(status.note)}")
                continue
            verdict.changes.append(f"Removed a {where} that uses {name}: {_sentence(status.note)}")
            if where == "fix step":
                verdict.warnings.append(f"The model suggested {name}, which {self.where} does not "
                                        "have; that step was removed.")
            return None
        return text

    def _check_urls(self, text: str, verdict: Verdict, where: str) -> str | None:
        dropped = False
        for url in URL_RE.findall(text):
            if _norm_url(url) in self.urls:
                continue
            text = text.replace(url.rstrip(".,;:!?"), "")
            dropped = True
            verdict.changes.append(f"Dropped a link from a {where} that is not one of the sources: "
                                   f"{url.rstrip('.,;:!?')}")
        if not dropped:
            return text
        text = _tidy(DANGLING_REF_RE.sub("", text))   # "see <link> for details" without the link
        return text if len(re.findall(r"\w+", text)) >= 4 and not REFERENCE_ONLY_RE.match(text) else None

    def _check_destructive(self, text: str, verdict: Verdict, where: str) -> str | None:
        found = DESTRUCTIVE_RE.search(text)
        if not found:
            return text
        verdict.changes.append(f"Removed a {where} with a destructive command ({found.group(0).strip()}).")
        verdict.warnings.append("The model's answer contained a destructive command "
                                f"(`{found.group(0).strip()}`); it was removed. Do not run it.")
        return None

    def _check_substance(self, text: str, verdict: Verdict, where: str) -> str | None:
        if _says_nothing(text) or copies_instructions(text):
            verdict.changes.append(f"Removed a {where} that copies the instructions or says nothing: "
                                   f"{clip_to_tokens(text, 20)!r}")
            return None
        if where != "diagnosis sentence" and f" {' '.join(_words(text))} " in self.error_words:
            verdict.changes.append(f"Removed a {where} that only repeats the error: "
                                   f"{clip_to_tokens(text, 20)!r}")
            return None
        return text

    def repeats_wrong_advice(self, step: str) -> str | None:
        """The wrong-advice claim of a retrieved entry that the step resembles more than any
        of the entry's fix steps ("lower --mem-fraction-static" where raising it is the fix)."""
        tokens = {t for t in tokenize(step) if t not in GENERIC_TOKENS}
        if len(tokens) < 3:
            return None

        def share(text: str) -> float:
            return len(tokens & set(tokenize(text))) / len(tokens)

        for block in self.sources:
            best_fix = max((share(f) for f in block.fix_texts), default=0.0)
            for claim in block.wrong_claims:
                if share(claim) >= 0.5 and share(claim) > best_fix:
                    return claim
        return None

    def supported(self, step: str) -> bool:
        """Do the sources (or the user's own trace) carry the step's content?"""
        names = sglang_names(step)
        if any(n.lower() not in self.support_text for n in names):
            return False
        for span in re.findall(r"`([^`\n]+)`", step):   # a command must be in the sources as written
            words = [w for w in re.split(r"\s+", span.strip()) if not re.fullmatch(r"[\d.]+|\S*[<>]\S*", w)]
            if words and not all(w.lower() in self.support_text for w in words):
                return False
        tokens = {t for t in tokenize(step) if t not in GENERIC_TOKENS}
        if has_cjk(step):
            latin = {t for t in tokens if not has_cjk(t)}
            tokens = latin if len(latin) >= 2 else tokens
        if not tokens:
            return False
        return len(tokens & self.support_tokens) / len(tokens) >= SUPPORT_RATIO

    # -- per field --

    def piece(self, text: str, where: str) -> Verdict:
        """A diagnosis sentence, a fix step or a warning."""
        verdict = Verdict(text)
        value: str | None = " ".join(text.split())
        for check in (self._check_destructive, self._check_names, self._check_urls, self._check_substance):
            value = check(value, verdict, where)
            if value is None:
                break
        if value is not None and where == "fix step":
            claim = self.repeats_wrong_advice(value)
            if claim:
                verdict.changes.append(f"Removed a fix step that repeats advice the sources call "
                                       f"wrong ({clip_to_tokens(claim, 25)}).")
                verdict.warnings.append(f"The model suggested advice the knowledge base lists as "
                                        f"wrong: {clip_to_tokens(value, 40)} It was removed.")
                value = None
        if value is not None and where == "fix step" and not self.supported(value):
            value += NOT_IN_SOURCES
            verdict.changes.append("Marked a fix step the sources do not support: "
                                   + clip_to_tokens(value, 30))
        verdict.text = value
        return verdict

    def diagnosis(self, text: str) -> Verdict:
        verdict = Verdict(None)
        kept = []
        for sentence in split_sentences(text):
            part = self.piece(sentence, "diagnosis sentence")
            verdict.changes += part.changes
            verdict.warnings += part.warnings
            if part.text:
                kept.append(part.text)
        verdict.text = " ".join(kept) or None
        return verdict

    def citations_of(self, cited: list[str]) -> tuple[list[str], list[str]]:
        kept, changes = [], []
        for raw in cited:
            key = raw.strip().strip("[]()<>\"'`").strip()
            shown = self.citations.get(_norm_url(key) if URL_RE.match(key) else key.lower())
            if shown is None and key.lower().startswith("kb:"):
                shown = self.citations.get(key[3:].strip().lower())
            if shown:
                kept.append(shown)
            else:
                changes.append(f"Dropped the citation {key!r}: it is not one of the retrieved sources.")
        return list(dict.fromkeys(kept)), changes


def _sentence(text: str) -> str:
    return text.rstrip(". ") + "."


def _words(text: str) -> list[str]:
    return re.findall(r"[\w\u3400-\u9fff-]+", text.lower())


_INSTRUCTION_WORDS = " ".join(_words(SYSTEM_PROMPT + " " + DEFAULT_QUESTION))


def copies_instructions(text: str) -> bool:
    """Small models echo the prompt's description of a field instead of filling it in."""
    words = _words(text)
    return len(words) >= 4 and f" {' '.join(words)} " in f" {_INSTRUCTION_WORDS} "


def _says_nothing(text: str) -> bool:
    """Fewer than three words (four CJK characters): an identifier or a label, not advice."""
    words = [w for w in text.split() if re.search(r"[A-Za-z]{2,}", w)]
    return len(words) < 3 and len(re.findall(r"[\u3400-\u9fff]", text)) < 4


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END_RE.split(text) if s.strip()]


@dataclass
class Verified:
    diagnosis: str | None
    fix: list[str]
    warnings: list[str]
    citations: list[str]
    changes: list[str]


def verify_draft(draft: Draft, verifier: Verifier) -> Verified:
    changes, warnings, fix, own_warnings = [], [], [], []
    diagnosis = verifier.diagnosis(draft.diagnosis)
    changes += diagnosis.changes
    warnings += diagnosis.warnings
    for step in draft.fix:
        verdict = verifier.piece(step, "fix step")
        changes += verdict.changes
        warnings += verdict.warnings
        if verdict.text:
            fix.append(verdict.text)
    for warning in draft.warnings:
        verdict = verifier.piece(warning, "warning")
        changes += verdict.changes
        warnings += verdict.warnings
        if verdict.text:
            own_warnings.append(verdict.text)
    citations, dropped = verifier.citations_of(draft.citations)
    changes += dropped
    return Verified(diagnosis.text, fix, own_warnings + warnings, citations, changes)
