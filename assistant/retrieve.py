"""Hybrid retrieval over units: lexical (BM25 on identifier-aware tokens) plus dense (MiniLM),
fused as a weighted sum of their normalised scores, plus a boost for signature matches. Whether
the top hit is good enough to answer is `assistant.decision`'s call.

Chunks are scored, units are returned: a unit scores as its best chunk. Curated KB entries rank
above documents and issues that say the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from assistant.commands import SGLANG_PROGRAM
from assistant.decision import FIX, SIGNATURE_OK, Decision, decide, declared_site_line, declared_symbol_line, says_no_gpu, scope_conflict
from assistant.exception_line import named_class_head
from assistant.failure_kind import about_upgrade_regression
from assistant.generic_lines import is_generic
from assistant.glossary import english_terms
from assistant.gpu_memory import paste_gpu_memory
from assistant.host_platform import non_linux_scope, only_non_linux, platform_fits
from assistant.index import Index
from assistant.named_identifiers import NamedIdentifiers, paste_identifiers
from assistant.quoted_line import quotable_lines
from assistant.quoted_paths import line_with_paths_as_placeholders, signature_paths
from assistant.term_weights import masked_signature, signature_text, token_idf
from assistant.text import CHINESE_CHAR_RE, mask, tokenize
from assistant.trace import Analysis, analyze, looks_like_sentence
from assistant.system_messages import in_c_locale
from assistant.upgrade import reports_regression

LEXICAL_WEIGHT = 0.5
SIGNATURE_WEIGHT = 1.5   # a matched error line outweighs how similar the rest of the text is
GENERIC_SIGNATURE_SHARE = 0.5   # of that weight, for an entry whose matched lines are all generic
CANDIDATES = 60
# the root error is raised where an entry says its class of errors comes from (`raised_in`):
# a match like a line's, below a verbatim one, so an entry with the user's exact line still leads
DECLARED_SITE_MATCH = 0.9
SIMILAR_ISSUE_DENSE = 0.5   # an issue listed as a similar report: a signature match or this cosine
# An issue's signatures are error lines pulled from a user's paste, not vetted like an entry's: a
# shared symptom ("HIP error: invalid device function") must not lift a report above the curated
# entry that explains the cause. Among issues it still orders exact reports first.
ISSUE_SIGNATURE_WEIGHT = 0.1
KIND_PRIOR = {"entry": 1.0, "doc": 0.85, "issue": 0.9}
# a report that its failure came with a new SGLang release (`assistant.upgrade.reports_regression`),
# where nothing in the paste names the fix, ranks the triage entry on bisecting releases above
# entries that only share its words (a model's, a flag's, a benchmark's), below an entry that
# matches its error line (SIGNATURE_OK 0.6 x 1.5 = 0.9)
UPGRADE_REGRESSION_BOOST = 0.5


@dataclass(frozen=True)
class Hit:
    unit_id: str
    kind: str
    title: str
    title_zh: str
    url: str | None
    score: float            # fused score used for ranking
    lexical: float          # best chunk BM25, normalised by the query's best
    dense: float            # best chunk cosine
    signature: float        # 1.0 = a signature line occurs in the user's log
    evidence: tuple[str, ...]
    meta: dict = field(repr=False, default_factory=dict)


@dataclass(frozen=True)
class Retrieval:
    hits: tuple[Hit, ...]
    decision: Decision      # fix / lead / unknown, and why
    analysis: Analysis
    similar: tuple[Hit, ...] = ()   # the closest GitHub issues, listed under the answer

    @property
    def confidence(self) -> float:   # 0..1, calibrated on the dev cases
        return self.decision.confidence

    @property
    def abstain(self) -> bool:       # no fix is shown: the outcome is a lead or unknown
        return self.decision.abstain

    @property
    def outcome(self) -> str:
        return self.decision.outcome


IDENTIFIER_BOOST = 0.15  # a paraphrase that keeps an identifier of the error (`cuda_fp8.h`); at 0.3 a
# shared identifier lifted look-alikes above the right entry (dev hit@1 0.876 -> 0.890 at 0.15)
RARE_IDENTIFIER_IDF = 4.0  # below it (a token in more than about one KB chunk in 55) an identifier is a
# topic word: `tool_calls` (3.6) lifted a streaming-delta entry over the streaming-index one by 0.11


def _is_identifier(token: str) -> bool:
    return len(token) >= 5 and (token.startswith("--") or "_" in token or "." in token.strip("."))


# an exception's class (`openai_harmony.HarmonyError`) is shared by all its messages, and the
# interpreter of a site-packages path (`python3.12`) by every traceback: neither is a word of one
# error, so neither is partial evidence of an entry's error line
_CLASS_TOKEN_RE = re.compile(r"(?:error|exception|warning)$")
_INTERPRETER_RE = re.compile(r"^python\d")


def _names_one_error(token: str) -> bool:
    return not (_CLASS_TOKEN_RE.search(token) or _INTERPRETER_RE.match(token))


@lru_cache(maxsize=8192)
def _signature_identifiers(signatures: tuple[str, ...]) -> frozenset:
    return frozenset(t for t in tokenize(" ".join(signatures)) if _is_identifier(t) and _names_one_error(t))


def identifier_match(signatures: list[str], query_identifiers: frozenset) -> float:
    """Partial signature evidence: identifiers of the entry's error lines that the user wrote."""
    shared = _signature_identifiers(tuple(signatures)) & query_identifiers
    return IDENTIFIER_BOOST * min(1.0, len(shared) / 2) if shared else 0.0


_PLACEHOLDER_RE = re.compile(r"<(?:n|size|ts|ip|addr|hex)>")


@lru_cache(maxsize=8192)
def _strip_placeholders(text: str) -> str:
    return _PLACEHOLDER_RE.sub(" ", text)


LINE_WEIGHT = {"exception": 1.0, "fatal": 1.0, "warning": 0.75, "consequence": 0.45}
OTHER_LINE_WEIGHT = 0.7   # a signature can be a plain log line, e.g. where a hang stops
PROSE_LINE_WEIGHT = 0.2   # a signature found in the user's own words alone is not enough to answer
DISTANT_LINE_WEIGHT = 0.3  # an ordinary log line far from the end
SURVIVED_WEIGHT = 0.5      # an error the server went on serving after (`ErrorLine.survived`)


def line_weights(analysis: Analysis) -> dict[str, float]:
    """How much a signature matching each masked line counts: a match on the root error beats a
    match on a consequence line ("terminated with -3") that many problems share."""
    # ordinary log lines count where a hang shows (the last lines), little elsewhere: every
    # startup prints "Init torch distributed begin."; the user's own sentences are not log lines
    weights = {line.lower(): DISTANT_LINE_WEIGHT for line in analysis.masked_lines}
    weights.update({line.lower(): OTHER_LINE_WEIGHT for line in analysis.tail_lines})
    weights.update({line.lower(): PROSE_LINE_WEIGHT for line in analysis.prose_lines})
    only_consequences = all(e.kind == "consequence" for e in analysis.errors)
    for rank, err in enumerate(analysis.errors):
        weight = (0.9 if only_consequences else LINE_WEIGHT[err.kind]) * (SURVIVED_WEIGHT if err.survived else 1.0)
        weights[err.masked.lower()] = weight * (1.0 if rank == 0 else 0.95)
    return weights


def signature_match(signatures: list[str], lines: tuple[str, ...], joined: str,
                    weights: dict[str, float] | None = None, idf=None,
                    line_tokens=None, plans: dict | None = None) -> tuple[float, list[str]]:
    """Match quality of an entry's signatures against the user's masked lines, and the lines.

    The best single match counts (weighted by what kind of line it matched), plus a little for
    every further line of the log that a signature matched: more matched lines, a more specific
    entry (several variants of one line in an entry match that line once)."""
    weights = weights or {}
    scores, evidence = [], {}
    for sig in signatures:
        msig, sig_tokens = masked_signature(sig)
        core = _strip_placeholders(msig).strip()
        if len(core) < 12:
            continue
        if msig in joined:
            hits = [ln for ln in lines if msig in ln.lower()]
            # a signature that covers more of the matched line is more specific: between two
            # entries matching one line exactly, the longer signature wins
            weight = max((weights.get(ln.lower(), OTHER_LINE_WEIGHT) * (0.9 + 0.1 * min(1.0, len(msig) / len(ln)))
                          for ln in hits), default=OTHER_LINE_WEIGHT)
            scores.append(weight)
            evidence.update((ln, weight) for ln in hits[:2])
            continue
        message = message_without_class(msig)
        hits = [ln for ln in lines if _quotes_without_class(ln.lower(), message)] \
            if message and message in joined else []
        if hits:
            weight = max(weights.get(ln.lower(), OTHER_LINE_WEIGHT) * CLASSLESS_WEIGHT for ln in hits)
            scores.append(weight)
            evidence.update((ln, weight) for ln in hits[:2])
            continue
        if not sig_tokens or len(sig_tokens) < 4:
            continue
        idf = idf or (lambda token: 1.0)
        line_tokens = line_tokens or (lambda line: frozenset(tokenize(line.lower())))
        # a path the signature quotes stands for the one the user's line quotes there
        paths = signature_paths(msig)
        if paths:
            msig, sig_tokens = paths[0], frozenset(tokenize(paths[0]))
        total_weight, gate = _near_match_plan(sig_tokens, idf, plans)
        sig_values, sig_names = _keyword_values(msig), _quoted_names(msig)
        best_line, best = None, 0.0
        for ln in lines:
            low = ln.lower()
            generalized = line_with_paths_as_placeholders(low, paths[1]) if paths and "'" in low else low
            tokens_of_line = line_tokens(ln) if generalized == low else _line_token_set(generalized)
            low = generalized
            if "--" in low:
                # a flag the line names (`--tool-call-parser`) is a setting: its words are not the
                # words of an error message (`No tool call parser found`), unless the signature
                # names that flag itself (`unrecognized arguments: --enable-reasoning`)
                named = _FLAG_IN_LINE_RE.findall(low)
                if any(flag not in sig_tokens for flag in named):
                    low = _FLAG_IN_LINE_RE.sub(lambda m: m.group(0) if m.group(0) in sig_tokens else " ", low)
                    tokens_of_line = _line_token_set(low)
            if gate.isdisjoint(tokens_of_line):
                continue   # cannot reach NEAR_MATCH without one of the signature's rarest tokens
            if _is_command(ln):
                continue   # flags in a launch command spell an error line's words, not the error
            if sig_values and _contradicts(sig_values, _keyword_values(low)):
                continue   # `bootstrap_room=None` is another state than `bootstrap_room=<n>`
            if sig_names and _names_differ(sig_names, _quoted_names(low), low):
                continue   # `module 'sglang.srt.utils'` is another module than `module 'sglang'`
            # rare tokens (cugreenctxdestroy, libcuda.so.1) decide a near match, not "ImportError"
            if sum(idf(t) for t in sig_tokens & tokens_of_line) / total_weight < NEAR_MATCH:
                continue
            # and in the same order: `More image data items provided than corresponding tokens
            # found` is the reverse of `More tokens found than corresponding data items provided`
            overlap = _ordered_overlap(msig, low, idf) / total_weight
            if overlap >= NEAR_MATCH:
                score = overlap * 0.9 * weights.get(ln.lower(), OTHER_LINE_WEIGHT)
                if score > best:
                    best_line, best = ln, score
        if best_line:
            scores.append(best)
            evidence[best_line] = best
    if not scores:
        return 0.0, []
    distinct_lines = len(evidence)
    total = max(scores) + min(0.2, 0.1 * (distinct_lines - 1))
    ordered = sorted(evidence, key=lambda ln: -evidence[ln])
    return total, ordered


# an entry's error line the user quotes inside their sentence counts as that line pasted on its own
QUOTED_SPAN_WEIGHT = OTHER_LINE_WEIGHT


def quoted_signature_match(signatures: list[str], spans: tuple[tuple[str, str, str], ...]) -> tuple[float, str | None]:
    """The best of an entry's specific error lines held whole by a span the user quoted in their own
    words (`(span, masked lower-cased span, masked lower-cased line it is in)`), and that span: "why
    does sglang say 'dp_size must be 1 or dp attention must be enabled ...'?" reports the line, which
    their sentence around it would only weakly (PROSE_LINE_WEIGHT). An error line that holds marks of
    its own (`has model type `kimi_k2` but ...`) splits the user's quote: written whole in their line
    and holding a whole span, it is quoted too. A generic line stays generic; a signature's words
    spread over a sentence, or only nearly quoted, count as before."""
    best, where = (0.0, 0), None
    for sig, msig in quotable_lines(signatures):
        if len(_strip_placeholders(msig).strip()) < 12:
            continue
        message = message_without_class(msig)
        for span, low, line in spans:
            if msig in low:
                score, quoted = QUOTED_SPAN_WEIGHT * (0.9 + 0.1 * min(1.0, len(msig) / len(low))), span
            elif low in msig and msig in line:   # the user's quote, split by the line's own marks
                score, quoted = QUOTED_SPAN_WEIGHT, signature_text(sig)
            elif message and _quotes_without_class(low, message):
                score, quoted = QUOTED_SPAN_WEIGHT * CLASSLESS_WEIGHT, span
            else:
                continue
            if (score, len(msig)) > best:   # of two lines quoted alike, the longer says more
                best, where = (score, len(msig)), quoted
    return best[0], where


NEAR_MATCH = 0.8   # share of a signature's token weight a line must hold to nearly match it
# a user who copies an error's message often leaves its class behind (`AutoImageProcessor.register()
# got multiple values for argument 'exist_ok'` for the TypeError it ends): a specific message is
# still that error, a little less surely than the whole line
CLASSLESS_WEIGHT = 0.9
CLASSLESS_MIN_CHARS = 24
# the line names some class right before the message: another exception, not a copy without one; a
# CUDA kernel's `Assertion `<condition>` failed` (a device-side assert) is another error too, though
# its condition reads like the RuntimeError's message (`probability tensor contains either ...`)
_CLASS_BEFORE_RE = re.compile(r"(?:error|exception|exit|interrupt|failure|fault|timeout|warning)\)?\s*:\s*$"
                              r"|\bassertion\s*[`'\"]?\s*$")


@lru_cache(maxsize=8192)
def message_without_class(masked_sig: str) -> str | None:
    """The message of a masked `SomeError: message` signature when it is specific enough to stand
    for the error alone: long, several words, not one of the generic failure phrases every crash
    prints (`CUDA error: an illegal memory access was encountered`)."""
    head = named_class_head(masked_sig)
    if not head:
        return None
    message = masked_sig[head.end():].strip()
    core = _strip_placeholders(message).strip()
    if len(core) < CLASSLESS_MIN_CHARS or len(tokenize(core)) < 4 or is_generic(message):
        return None
    return message


def _quotes_without_class(low_line: str, message: str) -> bool:
    """The line holds the message with no exception class written right before it."""
    at = low_line.find(message)
    return at >= 0 and not _CLASS_BEFORE_RE.search(low_line, 0, at)


# a command that starts SGLang: `--disable-cuda-graph` holds every word of the hint line
# "disable cuda graph by --disable-cuda-graph" that SGLang prints under a capture failure
COMMAND_RE = re.compile(rf"(?:^|[\s$>#])(?:{SGLANG_PROGRAM})\s+(?:--?\w|\\\s*$)", re.I)
# an `ENV=value \` line before a command written over several lines
ENV_PREFIX_LINE_RE = re.compile(r"^\s*[a-z_][a-z0-9_]*=\S*\s+\\\s*$", re.I)
# a flag written anywhere in a line (`served with --tool-call-parser deepseekv32: ...`)
_FLAG_IN_LINE_RE = re.compile(r"(?<![\w-])--[a-z][\w-]*[\w]", re.I)
_FLAG_TOKEN_RE = re.compile(r"^[\"']?--[a-z][\w-]*", re.I)


def _is_command_piece(line: str) -> bool:
    r"""A line of a command written over several lines (`  --kt-weight-path /models/x \`, a YAML
    args item `- --tp-size`, `"--port", "30000",`): flags, each with at most one value, and
    nothing else. A sentence wrapped after a flag (`--torch-compile-max-bs 16 on 8x H20, ...`)
    is not one."""
    if ENV_PREFIX_LINE_RE.search(line):
        return True
    words = line.replace(",", " ").split()
    if words[:1] == ["-"]:
        words = words[1:]
    if words and words[-1] == "\\":
        words = words[:-1]
    if not words or not _FLAG_TOKEN_RE.match(words[0]):
        return False
    after_flag = False
    for word in words:
        if _FLAG_TOKEN_RE.match(word):
            after_flag = "=" not in word
        elif after_flag:
            after_flag = False
        else:
            return False
    return True


# a field whose value is one word or one placeholder: `bootstrap_room=None`, `rank=<n>`
_KEYWORD_VALUE_RE = re.compile(r"(?<![\w.])([\w.]+)=(<\w+>|[a-z_]\w*)(?![\w<=(\[.])")


@lru_cache(maxsize=8192)
def _keyword_values(masked_line: str) -> dict[str, str]:
    """The `name=value` pairs of a masked, lower-cased line (a repr's or a log's fields)."""
    return dict(_KEYWORD_VALUE_RE.findall(masked_line))


def _contradicts(sig_values: dict[str, str], line_values: dict[str, str]) -> bool:
    """Whether the line gives a field a number where the signature names a word, or the other way
    round: `None` is another state than any number. Two words may differ (`OpType=ALLREDUCE` for
    `OpType=ALLGATHER`): a near match tolerates a different word."""
    return any(name in line_values and line_values[name].startswith("<") != value.startswith("<")
               for name, value in sig_values.items())


@lru_cache(maxsize=8192)
def _line_token_set(line: str) -> frozenset:
    return frozenset(tokenize(line))


@lru_cache(maxsize=8192)
def _token_sequence(text: str) -> tuple[str, ...]:
    """A line's distinct tokens in the order they first occur."""
    return tuple(dict.fromkeys(tokenize(text)))


def _ordered_overlap(signature: str, line: str, idf) -> float:
    """Token weight the signature and the line share in the same order: the heaviest common
    subsequence of their token sequences."""
    sig, other = _token_sequence(signature), _token_sequence(line)
    shared = set(sig) & set(other)
    sig = [t for t in sig if t in shared]
    other = [t for t in other if t in shared]
    best = [0.0] * (len(other) + 1)
    for token in sig:
        weight, previous = idf(token), 0.0
        for j, candidate in enumerate(other, 1):
            current = best[j]
            if candidate == token:
                best[j] = max(best[j], previous + weight)
            best[j] = max(best[j], best[j - 1])
            previous = current
    return best[-1]


# a quoted name after the word that says what it is: `module 'aiter'`, `named 'sgl_kernel'`,
# `attribute 'allreduce'`, `No such file or directory: 'sglang'`
_QUOTED_NAME_RE = re.compile(r"(?<![\w.])([a-z_]\w*):? '([^'\s]{1,120})'")
# the program a shell could not find: `bash: nvcc: command not found`, `zsh: command not found: nvcc`
_MISSING_COMMAND_RE = re.compile(r"([\w.+-]+): command not found|command not found: ([\w.+-]+)")
# the package pip found no release of: `No matching distribution found for vllm==0.6.3`, `Could not
# find a version that satisfies the requirement sgl-kernel>=0.3`
_MISSING_PACKAGE_RE = re.compile(r"(?:no matching distribution found for|satisfies the requirement) "
                                 r"([a-z0-9][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)*)")


@lru_cache(maxsize=8192)
def _quoted_names(masked_line: str) -> dict[str, str]:
    """The names a masked, lower-cased line is about: each quoted name by the word before it, the
    program a shell did not find and the package pip found no release of."""
    names = dict(_QUOTED_NAME_RE.findall(masked_line))
    missing = _MISSING_COMMAND_RE.search(masked_line)
    if missing:
        names["command"] = missing.group(1) or missing.group(2)
    package = _MISSING_PACKAGE_RE.search(masked_line)
    if package:
        names["package"] = package.group(1).replace("_", "-")
    return names


def _names_differ(sig_names: dict[str, str], line_names: dict[str, str], line: str = "") -> bool:
    """Whether the line quotes another name where the signature quotes one, or ends where the
    signature's name would follow (`_cut_before_name`): the name is what the error is about (`No
    module named 'sgl_kernel'` and `No module named 'sgl_kernel.ops'` are a missing package and a
    package of another release), so a near match must keep it."""
    return any(line_names[word] != name if word in line_names else _cut_before_name(word, line)
               for word, name in sig_names.items())


def _cut_before_name(word: str, masked_line: str) -> bool:
    """The line ends where the signature quotes its name (`No such file or directory:` wrapped or
    cut before `'sglang'`): the name it is about is not in the line, so it may be any other."""
    return bool(re.search(rf"(?<![\w.]){re.escape(word)}:?\s*$", masked_line))


@lru_cache(maxsize=8192)
def _is_command(line: str) -> bool:
    return bool(COMMAND_RE.search(line)) or _is_command_piece(line)


def _identifiers_outside_commands(tokens, lines, line_tokens, launch_flags=()) -> frozenset:
    """The query's identifiers, less those only its launch commands hold: a flag the user set
    (`--enable-torch-compile`) is configuration, not a paraphrase of an error line naming it."""
    identifiers = frozenset(t for t in tokens if _is_identifier(t))
    commands = [ln for ln in lines if _is_command(ln)]
    # the flags read from the launch command, wherever its lines went (a command written over
    # several lines is read as a whole, not kept line by line)
    set_flags = [re.split(r"[\s=]", flag, 1)[0].lower() for flag in launch_flags]
    if not identifiers or not (commands or set_flags):
        return identifiers
    in_commands = frozenset().union(*(line_tokens(ln) for ln in commands), *(line_tokens(f) for f in set_flags))
    elsewhere = frozenset().union(*(line_tokens(ln) for ln in lines if not _is_command(ln)))
    return identifiers - (in_commands - elsewhere)


def _near_match_plan(sig_tokens: frozenset, idf, plans: dict | None) -> tuple[float, frozenset]:
    """A signature's total token weight, and its gate: the fewest rarest tokens that carry more
    than 1 - NEAR_MATCH of that weight, so a line holding none of them cannot nearly match."""
    plan = plans.get(sig_tokens) if plans is not None else None
    if plan is None:
        weighted = sorted(((idf(t), t) for t in sig_tokens), reverse=True)
        total = sum(w for w, _ in weighted)
        gate, carried = [], 0.0
        for weight, token in weighted:
            gate.append(token)
            carried += weight
            if carried > (1 - NEAR_MATCH) * total:
                break
        plan = (total, frozenset(gate))
        if plans is not None:
            plans[sig_tokens] = plan
    return plan


class Retriever:
    def __init__(self, index: Index, encoder):
        self.index = index
        self.encoder = encoder
        self._idf_cache: dict[str, float] = {}
        self._near_plans: dict[frozenset, tuple[float, frozenset]] = {}
        self._groups: list[np.ndarray] | None = None
        self._curated: tuple[np.ndarray, np.ndarray] | None = None
        self._worker: ThreadPoolExecutor | None = None
        self._exact_table: list[tuple[str, str | None, int, bool]] | None = None
        self._declaring: list[int] | None = None
        self._upgrade_triage: tuple[int, ...] | None = None
        self._named: NamedIdentifiers | None = None

    def _named_identifiers(self) -> NamedIdentifiers:
        """Which entries name each environment variable and flag, built on first use."""
        if self._named is None:
            self._named = NamedIdentifiers((u, unit.title, unit.meta) for u, unit in enumerate(self.index.units)
                                           if unit.kind == "entry")
        return self._named

    def _embedding(self, text: str) -> Future:
        """The query's vector, computed in a worker thread (two: a web UI answers two users at once)."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(2, thread_name_prefix="ask-embed")
        return self._worker.submit(self.encoder.encode, [text])

    def _kind_groups(self) -> list[np.ndarray]:
        """Unit rows of entries and documents, and of issues: they compete for candidate places
        apart, so hundreds of near-identical reports cannot push the KB entry for the same error
        out of the pool (with no issues this is the plain top-N)."""
        if self._groups is None:
            is_issue = np.fromiter((u.kind == "issue" for u in self.index.units), bool, len(self.index.units))
            self._groups = [g for g in (np.flatnonzero(~is_issue), np.flatnonzero(is_issue)) if len(g)]
            curated_chunks = np.flatnonzero(~is_issue[self.index.chunk_unit]) if len(self._groups) > 1 else []
            vectors = np.vstack([self.index.vectors.reconstruct(int(r)) for r in curated_chunks]) \
                if len(curated_chunks) else np.zeros((0, self.index.vectors.d), dtype=np.float32)
            self._curated = (np.asarray(curated_chunks, dtype=np.int64), vectors)
        return self._groups

    def _exact_signature_table(self) -> list[tuple[str, str | None, int, bool]]:
        """Every entry's and document's masked signature with the word that gates it, its unit row
        and whether it is a message without its class (`message_without_class`): a unit whose error
        line the log holds word for word is a candidate however the fused scores rank it (a short
        install error drowned in pip output is still that error); a message without its class only
        where no other class is written right before it."""
        if self._exact_table is None:
            table = []
            for row, unit in enumerate(self.index.units):
                if unit.kind == "issue":
                    continue
                for sig in unit.meta.get("signatures") or ():
                    msig, _ = masked_signature(sig)
                    if len(_strip_placeholders(msig).strip()) >= 12:
                        table.append((msig, _gate_word(msig), row, False))
                    message = message_without_class(msig)
                    if message:   # the message copied without its class (see CLASSLESS_WEIGHT)
                        table.append((message, _gate_word(message), row, True))
            self._exact_table = table
        return self._exact_table

    def _exact_signature_units(self, joined: str) -> list[int]:
        """Rows of the units with a signature that occurs in the masked log as it is."""
        words = frozenset(_WORD_RE.findall(joined))
        return sorted({row for msig, gate, row, classless in self._exact_signature_table()
                       if (gate is None or gate in words) and msig in joined
                       and (not classless or _quotes_without_class(joined, msig))})

    def _upgrade_regression_units(self) -> tuple[int, ...]:
        """Rows of the triage entries for a failure that follows an upgrade."""
        if self._upgrade_triage is None:
            self._upgrade_triage = tuple(row for row, unit in enumerate(self.index.units)
                                         if unit.kind == "entry" and about_upgrade_regression(unit.meta))
        return self._upgrade_triage

    def _declared_site_units(self, analysis: Analysis) -> dict[int, str]:
        """Rows of the entries whose declared site (`raised_in`) raised the root error, or whose
        declared class (`caller_needs_other_release`) it belongs to, with the root line:
        candidates however the fused scores rank them."""
        if self._declaring is None:
            self._declaring = [row for row, unit in enumerate(self.index.units)
                               if unit.kind == "entry" and (unit.meta.get("raised_in")
                                                            or unit.meta.get("caller_needs_other_release"))]
        found = {}
        for row in self._declaring:
            meta = self.index.units[row].meta
            line = declared_site_line(meta, analysis) or declared_symbol_line(meta, analysis)
            if line is not None:
                found[row] = line
        return found

    def _dense_curated(self, vec: np.ndarray, dense_unit: np.ndarray) -> None:
        """With issues in the index, entries and documents get their exact cosine even when
        issue chunks fill the whole nearest-neighbour list."""
        self._kind_groups()
        rows, vectors = self._curated
        if len(rows):
            np.maximum.at(dense_unit, self.index.chunk_unit[rows], vectors @ np.asarray(vec, dtype=np.float32))

    def _dense_candidates(self, vec: np.ndarray, dense_unit: np.ndarray, candidates: list[int]) -> bool:
        """A candidate the nearest-neighbour list missed (its words made it one) gets its exact
        cosine, not 0: a long paste close to many entries fills the list, and the entry it is
        about would otherwise rank on its words alone."""
        missed = [u for u in candidates if dense_unit[u] == 0 and self.index.units[u].kind != "issue"]
        if not missed:
            return False
        rows = np.flatnonzero(np.isin(self.index.chunk_unit, missed))
        vectors = np.vstack([self.index.vectors.reconstruct(int(r)) for r in rows])
        np.maximum.at(dense_unit, self.index.chunk_unit[rows], vectors @ np.asarray(vec, dtype=np.float32))
        return True

    def _idf(self, token: str) -> float:
        """Inverse document frequency over chunks; a token the index never saw counts as rare."""
        value = self._idf_cache.get(token)
        if value is None:
            value = token_idf(self.index, token)
            self._idf_cache[token] = value
        return value

    def search(self, text_or_analysis, k: int = 5, mode: str = "hybrid", use_trace: bool = True,
               meanwhile: Callable[[Analysis], object] | None = None) -> Retrieval:
        """The ranked hits and the decision for a paste; `meanwhile(analysis)`, if given, runs
        while the query is embedded (work the caller needs next that does not depend on it)."""
        analysis = text_or_analysis if isinstance(text_or_analysis, Analysis) else analyze(text_or_analysis)
        facts = ""   # what the paste says in other words than its own: numbers read, Chinese glossed
        if use_trace:
            query = _without_wrapper_lines(analysis, analysis.query_text())
            lines = analysis.masked_lines
            # what the numbers of an out-of-memory message say, in words (assistant.gpu_memory)
            memory = paste_gpu_memory(analysis)
            memory_words = memory.query_words() if memory is not None else ""
            # a Chinese report reaches the English KB through its SGLang words (assistant.glossary)
            terms = english_terms(analysis.question, report=True) if CHINESE_CHAR_RE.search(analysis.question) else ""
            facts = " ".join(w for w in (memory_words, terms) if w)
            query += f"\n{facts}" if facts else ""
        else:  # baseline: the raw paste, no triage
            raw = text_or_analysis if isinstance(text_or_analysis, str) else analysis.query_text()
            query = raw[:4000]
            lines = tuple(mask(ln) for ln in raw.splitlines()[:400])
        n_units = len(self.index.units)
        lex_unit = np.zeros(n_units, dtype=np.float32)
        dense_unit = np.zeros(n_units, dtype=np.float32)
        # the query's embedding (most of a query's time) runs while its words are scored
        embedding = self._embedding(_dense_query(analysis, query, use_trace, facts)) \
            if mode in ("hybrid", "dense") and query.strip() else None
        tokens = tokenize(query)
        if mode in ("hybrid", "lexical") and tokens:
            lex_unit = self.index.unit_max(self.index.lexical_scores(tokens))
        joined = "\n".join(lines).lower()
        weights = line_weights(analysis) if use_trace else {}
        if meanwhile is not None:
            meanwhile(analysis)
        if embedding is not None:
            vec = embedding.result()[0]
            scores, rows = self.index.dense_search(vec, CANDIDATES * 4)
            np.maximum.at(dense_unit, self.index.chunk_unit[rows], scores)
            self._dense_curated(vec, dense_unit)
            if mode == "hybrid":
                # the entries the words bring first get their exact cosine too: one the nearest-
                # neighbour list missed would fuse with a dense score of 0 and can drop out of the
                # candidates under entries that only look alike
                self._dense_candidates(vec, dense_unit, [int(u) for u in _best(self._kind_groups()[0], lex_unit, CANDIDATES)
                                                         if lex_unit[u] > 0])
        lex_top = float(lex_unit.max()) if n_units else 0.0
        lex_norm = lex_unit / lex_top if lex_top > 0 else lex_unit

        dense_top = float(dense_unit.max()) if n_units else 0.0
        dense_norm = dense_unit / dense_top if dense_top > 0 else dense_unit
        if mode == "lexical":
            fused = lex_norm
        elif mode == "dense":
            fused = dense_norm
        else:  # convex combination of the normalised scores: keeps how far ahead a hit is
            fused = LEXICAL_WEIGHT * lex_norm + (1 - LEXICAL_WEIGHT) * dense_norm
        candidates = [int(u) for rows in self._kind_groups()
                      for u in _best(rows, fused, CANDIDATES) if fused[u] > 0]
        declared = self._declared_site_units(analysis) if use_trace else {}
        named_boost: dict[int, float] = {}
        regression: tuple[int, ...] = ()
        if use_trace:
            # an environment variable or flag the user wrote that few entries name points at them
            named = self._named_identifiers()
            pasted = paste_identifiers(dict.fromkeys((*analysis.prose_lines, *lines)), _is_command)
            named_boost = named.boosts(pasted)
            pooled = set(candidates)
            regression = self._upgrade_regression_units() if reports_regression(analysis) else ()
            candidates += [u for u in [*self._exact_signature_units(joined), *declared, *named.candidates(pasted),
                                       *regression]
                           if u not in pooled]
            candidates = list(dict.fromkeys(candidates))
        token_cache: dict[str, frozenset] = {}

        def line_tokens(line: str) -> frozenset:  # each log line is tokenized once per search
            cached = token_cache.get(line)
            if cached is None:
                cached = token_cache[line] = frozenset(tokenize(line.lower()))
            return cached

        if embedding is not None and self._dense_candidates(vec, dense_unit, candidates):
            dense_norm = dense_unit / dense_top if dense_top > 0 else dense_unit
            fused = dense_norm if mode == "dense" else LEXICAL_WEIGHT * lex_norm + (1 - LEXICAL_WEIGHT) * dense_norm
        # an identifier much of the KB writes (`tool_calls`, `response_format`, `github.com`) names
        # what the paste is about, not one entry's error line: only a rare one is partial evidence
        query_identifiers = frozenset(t for t in _identifiers_outside_commands(tokens, lines, line_tokens,
                                                                               analysis.environment.flags if use_trace else ())
                                      if self._idf(t) >= RARE_IDENTIFIER_IDF)
        survived = frozenset(e.masked for e in analysis.errors if e.survived) if use_trace else frozenset()
        quoted = _quoted_in_lines(analysis.quoted_spans, joined) if use_trace else ()

        hits = []
        for u in candidates:
            unit = self.index.units[u]
            sigs = unit.meta.get("signatures") or []
            sig, evidence = signature_match(sigs, lines, joined, weights, self._idf, line_tokens,
                                            self._near_plans) \
                if sigs else (0.0, [])
            if quoted and sigs and unit.kind != "issue" and sig < QUOTED_SPAN_WEIGHT:
                # (an issue's lines are a user's paste, not vetted: a quote of one stays prose)
                span_sig, span = quoted_signature_match(sigs, quoted)
                if span_sig > sig:
                    sig, evidence = span_sig, [span, *(line for line in evidence if span not in line)]
            if sigs and sig < IDENTIFIER_BOOST:
                sig = max(sig, identifier_match(sigs, query_identifiers))
            if u in declared and sig < DECLARED_SITE_MATCH:
                sig, evidence = DECLARED_SITE_MATCH, [declared[u], *evidence]
            weight = ISSUE_SIGNATURE_WEIGHT if unit.kind == "issue" else SIGNATURE_WEIGHT
            if evidence and all(is_generic(line) or line in survived for line in evidence):
                # a line many failures print (`Init torch distributed begin.`, a sigquit) says that
                # something failed, and one the server served on after did not stop it: either ranks
                # an entry less than a line that says what failed
                weight *= GENERIC_SIGNATURE_SHARE
            score = (float(fused[u]) + weight * sig + named_boost.get(u, 0.0)) * KIND_PRIOR.get(unit.kind, 0.8)
            score *= _issue_prior(unit.meta) if unit.kind == "issue" else 1.0
            hits.append(Hit(unit.id, unit.kind, unit.title, unit.title_zh, unit.url, round(score, 4),
                            round(float(lex_norm[u]), 4), round(float(dense_unit[u]), 4),
                            round(sig, 3), tuple(evidence[:3]), unit.meta))
        hits.sort(key=lambda h: -h.score)
        ranked = _fitting_hardware_first(hits, analysis, k) if use_trace else hits
        # similar reports come from every candidate, not only the top k (entries may fill those)
        similar = tuple(replace(h, evidence=tuple(analysis.original(ln) for ln in h.evidence))
                        for h in [h for h in ranked if h.kind == "issue"
                                  and (h.signature >= SIGNATURE_OK or h.dense >= SIMILAR_ISSUE_DENSE)][:5])

        def decided(ordered: list[Hit]) -> tuple[list[Hit], Decision]:
            top = [replace(h, evidence=tuple(analysis.original(ln) for ln in h.evidence)) for h in ordered[:k]]
            top = [h if h.evidence else replace(h, evidence=tuple(_overlap_evidence(h, analysis, line_tokens)))
                   for h in top]
            decision = decide(top, tokens, self.index, analysis, self._idf)
            if decision.top:
                top = [top[decision.top], *top[:decision.top], *top[decision.top + 1:]]
                decision = replace(decision, top=0)
            return top, decision

        hits, decision = decided(ranked)
        if regression and decision.outcome != FIX:
            # the user says a new release brought the failure and nothing in the paste names its
            # fix: the release change is the evidence, and bisecting the releases the first step
            lifted_ids = {self.index.units[u].id for u in regression}
            lifted = sorted((replace(h, score=round(h.score + UPGRADE_REGRESSION_BOOST, 4)) if h.unit_id in lifted_ids
                             else h for h in ranked), key=lambda h: -h.score)
            hits, decision = decided(_fitting_hardware_first(lifted, analysis, k))
        if decision.abstain and hits and hits[0].kind != "issue" and similar and similar[0].signature >= SIGNATURE_OK:
            # no entry is confident, but a report shows the user's exact error line: answer with it
            ranked = [similar[0], *[h for h in hits if h.unit_id != similar[0].unit_id]][:k]
            issue_decision = decide(ranked, tokens, self.index, analysis, self._idf)
            if not issue_decision.abstain:
                hits, decision = ranked, issue_decision
        return Retrieval(tuple(hits), decision, analysis, similar)


def _quoted_in_lines(spans: tuple[str, ...], joined: str) -> tuple[tuple[str, str, str], ...]:
    """Each span the user quoted, masked and lower-cased, with the masked line of theirs it is in."""
    found = []
    for span in spans:
        low = mask(span).lower()
        at = joined.find(low)
        if at < 0:   # masked apart from its line (a number run into the words around it)
            found.append((span, low, low))
            continue
        end = joined.find("\n", at)
        found.append((span, low, joined[joined.rfind("\n", 0, at) + 1:end if end >= 0 else len(joined)]))
    return tuple(found)


def _fitting_hardware_first(hits: list[Hit], analysis: Analysis, k: int) -> list[Hit]:
    """Among the first k hits, entries about other hardware or another operating system than the
    paste's (an NVIDIA-only fix for a ROCm log, the Windows entry for a Mac) go after those that
    fit: the user's platform outranks shared words."""
    head = hits[:k]
    misfit = _misfits(head, analysis)
    # an entry about the user's operating system that matched their error line comes first: the
    # same pip line from a Windows host and from an [any] entry's case has the Windows fix
    own = [h for h in head if h.kind == "entry" and h.signature >= SIGNATURE_OK and h not in misfit
           and platform_fits(h.meta, analysis)]
    # SGLang's server runs on Linux only: on a paste from native Windows or macOS alone, the entry
    # about that system explains an install or launch failure better than an entry about the same
    # pip or import words on Linux, wherever among the candidates it ranked
    if not own and only_non_linux(analysis):
        own = [h for h in hits if h.kind == "entry" and non_linux_scope(h.meta)
               and platform_fits(h.meta, analysis)][:1]
    if not own and (not misfit or len(misfit) == len(head)):
        return hits
    rest = hits
    if own:
        # the lifted entry leaves the first k: the scope of the one that takes its place counts too
        rest = [h for h in hits if h not in own]
        head = rest[:k]
        misfit = _misfits(head, analysis)
    return [*own, *(h for h in head if h not in misfit), *misfit, *rest[k:]]


def _misfits(head: list[Hit], analysis: Analysis) -> list[Hit]:
    """The entries of the head about another platform than the paste's. Where the paste names no
    GPU, one that matched the user's own error line, when no entry that fits matched one, is not
    among them: that line ("Memory access fault by GPU node-2", a Triton error from a ROCm kernel)
    is a surer sign of its platform than the paste's other words (`cuda graphs`) or their silence."""
    misfit = [h for h in head if h.kind == "entry" and scope_conflict(h.meta, analysis)]
    if not misfit or analysis.environment.gpu or says_no_gpu(analysis) \
            or any(_matched_error_line(h) for h in head if h.kind == "entry" and h not in misfit):
        return misfit
    return [h for h in misfit if not _matched_error_line(h)]


def _matched_error_line(hit: Hit) -> bool:
    return hit.signature >= SIGNATURE_OK and any(not is_generic(line) for line in hit.evidence)


_WORD_RE = re.compile(r"(?<![a-z0-9_])[a-z_][a-z0-9_]{3,}")


@lru_cache(maxsize=8192)
def _gate_word(masked_sig: str) -> str | None:
    """The longest word inside a masked signature (not its first or last, which a line may hold
    as part of a longer word): a log whose words lack it cannot hold the signature."""
    words = _WORD_RE.findall(masked_sig)[1:-1]
    return max(words, key=len) if words else None


def _best(rows: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """The k rows with the highest scores, best first: a partition, then a sort of those k only
    (sorting 125,000 issue units for 12 places cost ~10 ms)."""
    values = scores[rows]
    if len(rows) > k:
        top = np.argpartition(-values, k - 1)[:k]
        return rows[top[np.argsort(-values[top], kind="stable")]]
    return rows[np.argsort(-values, kind="stable")]


def _without_wrapper_lines(analysis: Analysis, query: str) -> str:
    """The query without the lines that only report that a child process died (`Received sigquit
    from a child process`, `Subprocess scheduler_0 ... crashed with exit code 1. Triggering SIGQUIT
    for cleanup...`, the "Possible solutions" steps) when the log prints an error above them: that
    error says what failed, and their rare words would pull the entry about the wrapper line above
    the entry about the cause. Alone, or above a wrapper's own relay of the failure, they stay."""
    causes = [e.line_no for e in analysis.errors
              if e.kind in ("exception", "fatal") and not looks_like_sentence(e.text)]
    if not causes:
        return query
    wrappers = {in_c_locale(e.text) for e in analysis.errors
                if e.kind == "consequence" and e.line_no > min(causes) and is_generic(e.text)}
    return "\n".join(line for line in query.split("\n") if line not in wrappers) if wrappers else query


def _dense_query(analysis: Analysis, query: str, use_trace: bool, facts: str = "") -> str:
    if not use_trace:
        return query[:2000]
    # what stopped the server, not a request error it served on after
    errors = analysis.stopping_errors
    parts = [e.text for e in errors if e.kind in ("exception", "fatal")][:3]
    if not parts:
        parts = [e.text for e in errors[:3]]
    if facts:   # ahead of the long error lines: the encoder reads only the query's first 256 tokens
        parts.insert(0, facts)
    if analysis.question:
        parts.insert(0, analysis.question[:500])
    return "\n".join(parts) or query[:2000]


def _overlap_evidence(hit: Hit, analysis: Analysis, line_tokens) -> list[str]:
    """The user's error lines that share the most terms with the hit (no signature matched)."""
    terms = _title_terms(hit.title, tuple(hit.meta.get("keywords") or ()))
    scored = []
    for e in analysis.errors[:20]:
        overlap = len(terms & line_tokens(e.text))
        if overlap >= 2:
            scored.append((overlap, e.text))
    scored.sort(key=lambda x: -x[0])
    return [t for _, t in scored[:2]]


@lru_cache(maxsize=4096)
def _title_terms(title: str, keywords: tuple[str, ...]) -> frozenset:
    return frozenset(tokenize(" ".join([title, *keywords])))


def _issue_prior(meta: dict) -> float:
    if meta.get("state") == "closed" and meta.get("resolved"):
        return 1.0
    if meta.get("state") == "closed":
        return 0.9
    return 0.8
