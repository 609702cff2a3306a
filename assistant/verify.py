"""Verification of the model's answer, piece by piece, before anything is shown:

- a citation must be a retrieved id (`kb:<id>`, or `origin:<module>:<function>` for the SGLang
  code that emits the root error) or one of the retrieved sources' URLs;
- an SGLang flag / env var must exist in the user's SGLang version (the registry's nearest
  release; any release when the version is unknown): it is replaced by the registry's
  replacement, or the step / sentence that uses it is removed, with a warning;
- model output is untrusted data: control characters and escape sequences are removed, and a
  sentence that addresses the assistant rather than the user (a planted "ignore previous
  instructions", role-play) is removed;
- commands are judged by `assistant.command_safety`: a dangerous one (`rm -rf ~`, `mkfs`,
  `curl ... | sh`) is removed wherever it came from; one that installs, downloads, executes or
  deletes something is removed unless the sources carry it as written (the user's paste supports
  the user's own values, never a new command); what was removed is described, never repeated;
- a URL that is not a retrieved source's URL is removed;
- a fix step that repeats what a retrieved entry lists as wrong advice is removed;
- filler is removed: a piece that echoes the instructions, says nothing (an identifier, a
  label) or, as a fix step or warning, only repeats the user's error;
- a fix step or warning whose content the sources and the trace do not support is marked
  "(not in the sources)".
Every change is listed (`Verified.changes`), and the JSON output carries it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant import command_safety
from assistant.commands import sglang_names
from assistant.control_chars import neutralize
from assistant.draft import Draft
from assistant.injection import addresses_the_assistant, without_addressed_sentences
from assistant.prompt import DEFAULT_QUESTION, SYSTEM_PROMPT, Prompt, clip_to_tokens
from assistant.retrieve import Retrieval
from assistant.text import has_cjk, tokenize

NOT_IN_SOURCES = " (not in the sources)"
URL_RE = re.compile(r"https?://[^\s<>\"'`()\[\]{}]+")
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])")
_PLACEHOLDER_RE = re.compile(r"<[^<>\n]{1,60}>")   # `pip install "sglang==<your version>"` in a KB fix
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
        source_text = "\n".join(b.text for b in prompt.sources)
        self.source_text = source_text.lower()
        self.support_text = (source_text + "\n" + user_text).lower()
        # what a command the model proposes must be found in: the sources' own words, without
        # sentences planted in a document for the model (those are instructions, not support)
        self.source_words, self.source_patterns = _shell_words(without_addressed_sentences(source_text))
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
            host = re.sub(r"^https?://", "", url).split("/")[0]
            verdict.changes.append(f"Dropped a link to {host} from a {where}: it is not one of the sources.")
        if not dropped:
            return text
        text = _tidy(DANGLING_REF_RE.sub("", text))   # "see <link> for details" without the link
        return text if len(re.findall(r"\w+", text)) >= 4 and not REFERENCE_ONLY_RE.match(text) else None

    def _check_addressed(self, text: str, verdict: Verdict, where: str) -> str | None:
        if not addresses_the_assistant(text):
            return text
        verdict.changes.append(f"Removed a {where} addressed to the assistant rather than to you "
                               "(an instruction planted in a log or document, or role-play).")
        return None

    def _check_commands(self, text: str, verdict: Verdict, where: str) -> str | None:
        """Dangerous commands go; commands that install, download, execute or delete go unless
        the sources carry them. Described, never repeated: the text is what must not be copied."""
        for risk in command_safety.risks(text):
            if not risk.always and self.sources_have_command(risk.command):
                continue
            what = risk.description + ("" if risk.always else " (not in the sources)")
            verdict.changes.append(f"Removed a {where} with {what}.")
            verdict.warnings.append(f"The model's answer contained {what}; it was removed. Do not "
                                    "run commands that the sources do not show.")
            return None
        return text

    def sources_have_command(self, command: str) -> bool:
        """Is every word of the command (numbers aside) a word of the sources?"""
        for word in command.split():
            word = _shell_word(word)
            if not word or word in ("sudo", "&&", "||", ";", "|") or re.fullmatch(r"[\d.]+", word):
                continue
            if word not in self.source_words and not any(p.fullmatch(word) for p in self.source_patterns):
                return False
        return True

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
            # the user's paste supports their own values (flags, paths), never a new program
            program = words[0] if len(words) >= 2 else ""
            if program and not re.match(r"-|\S*[/=]", program) and program.lower() not in self.source_text:
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
        value: str | None = " ".join(neutralize(text).split())
        for check in (self._check_commands, self._check_addressed, self._check_names, self._check_urls,
                      self._check_substance):
            value = check(value, verdict, where)
            if value is None:
                break
        if value is not None and where == "fix step":
            claim = self.repeats_wrong_advice(value)
            if claim:
                verdict.changes.append(f"Removed a fix step that repeats advice the sources call "
                                       f"wrong ({clip_to_tokens(claim, 25)}).")
                risk = command_safety.worst(value)   # a removed command is described, not repeated
                said = f"{risk.description}," if risk else f"advice ({clip_to_tokens(value, 40)})"
                verdict.warnings.append(f"The model suggested {said} which the knowledge base lists as "
                                        "wrong; it was removed.")
                value = None
        if value is not None and where in ("fix step", "warning") and not self.supported(value):
            value += NOT_IN_SOURCES   # a model warning passes the same checks as a fix step
            verdict.changes.append(f"Marked a {where} the sources do not support: "
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

    def origin_citation(self, key: str) -> str | None:
        """The emitting-code source (`origin:<module>:<function>`) cited in a shorter form (the
        module alone, or the function without its class): accepted when it names that source."""
        wanted = key.lower().replace(" ", "")
        for block in self.sources:
            cited = block.citation.lower()
            if not cited.startswith("origin:") or len(wanted) <= len("origin:"):
                continue
            module, _, function = cited[len("origin:"):].partition(":")
            asked_module, _, asked_function = wanted[len("origin:"):].partition(":")
            if asked_module == module and (not asked_function or function.endswith(asked_function)):
                return block.citation
        return None

    def citations_of(self, cited: list[str]) -> tuple[list[str], list[str]]:
        kept, changes = [], []
        for raw in cited:
            key = raw.strip().strip("[]()<>\"'`").strip()
            shown = self.citations.get(_norm_url(key) if URL_RE.match(key) else key.lower())
            if shown is None and key.lower().startswith("kb:"):
                shown = self.citations.get(key[3:].strip().lower())
            if shown is None and key.lower().startswith("origin:"):
                shown = self.origin_citation(key)
            if shown:
                kept.append(shown)
            else:
                changes.append(f"Dropped the citation {key!r}: it is not one of the retrieved sources.")
        return list(dict.fromkeys(kept)), changes


def _shell_word(word: str) -> str:
    return word.strip("`'\"“”‘’").rstrip(".,;:!?)]}").lstrip("([{").lower()


def _shell_words(text: str) -> tuple[frozenset[str], list[re.Pattern]]:
    """The sources' words as a shell would split them, and their placeholder words
    (`sglang==<version>`) as patterns that a filled-in value matches."""
    text = _PLACEHOLDER_RE.sub("<>", text)
    words = {_shell_word(w) for w in text.split()}
    patterns = [re.compile(re.escape(w).replace("<>", r"\S+")) for w in words   # "<>" alone matches nothing
                if "<>" in w and len(re.sub(r"<>|\W", "", w)) >= 3]
    return frozenset(words), patterns


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
