"""Knowledge-base entries: the Markdown + YAML front-matter format, loading, and `ask kb check`.

An entry is one known problem: the error lines it shows (signatures), why it happens, the fix
(optionally per SGLang version), how to verify it, advice in circulation that is wrong, and the
sources it rests on. Parsing YAML happens only at ingest and check time; the query path reads the
JSON copy that ingest writes next to the index.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from assistant.components import BY_NAME as _COMPONENTS
from assistant.exit_signal import EXIT_SIGNALS
from assistant.gpu_arch import KNOWN_ARCHS
from assistant.phase import PHASES
from assistant.gpu_memory import MEMORY_HOLDERS
from assistant.text import CHINESE_CHAR_RE, join_chinese
from assistant.host_platform import PLATFORMS
from assistant.trace import FRAME_RE

AREAS = (
    "startup", "install", "cuda-nccl", "multinode", "memory", "pd-disaggregation", "router",
    "moe-deepep", "quantization", "structured-output", "api", "multimodal", "performance",
    "rocm", "hardware", "legacy",
)
CONFIDENCES = ("high", "medium-high", "medium", "low-medium", "medium-low", "low")
HARDWARE = ("any", "nvidia", "amd", "musa", "ascend")
CUDA_MAJORS = (11, 12, 13)
COMPONENT_NAMES = frozenset(_COMPONENTS)
GPU_ARCH_VALUE_RE = re.compile(r"sm_\d{2,3}")
ID_RE = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")  # kebab-case; dots for versions (flashinfer-0.0.3-...)
# an SGLang module, optionally with the function (or class) prefix: sglang.srt.server_args:ServerArgs
RAISED_IN_RE = re.compile(r"^sglang(?:\.\w+)+(?::[A-Za-z_][\w.]*)?$")
FRONT_MATTER_RE = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)(.*)\Z", re.S)


@dataclass(frozen=True)
class FixStep:
    text: str
    commands: tuple[str, ...] = ()
    versions: str | None = None  # PEP 440 specifier over SGLang versions, e.g. ">=0.5.9"
    caveat: str | None = None  # the risk of running this step, shown right under it in answers
    text_zh: str | None = None  # the step in Chinese, for a user who writes Chinese (commands stay)
    caveat_zh: str | None = None  # the caveat in Chinese


@dataclass(frozen=True)
class WrongAdvice:
    claim: str
    fact: str
    claim_zh: str = ""   # both in Chinese, for a user who writes Chinese (`wrong_advice_zh`)
    fact_zh: str = ""


@dataclass(frozen=True)
class Source:
    url: str | None = None
    seed: str | None = None  # name of a seed document of the user's corpus
    title: str = ""

    @property
    def label(self) -> str:
        if self.url:
            return self.url
        return f"seed document {self.seed}" + (f" ({self.title})" if self.title else "")


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    title_zh: str
    area: str
    signatures: tuple[str, ...]
    symptoms: tuple[str, ...]
    keywords: tuple[str, ...]
    affected: str  # PEP 440 specifier over SGLang versions; "" means any version
    fixed: str | None
    hardware: tuple[str, ...]
    confidence: str
    cause: str
    fix: tuple[FixStep, ...]
    verify: tuple[str, ...]
    wrong_advice: tuple[WrongAdvice, ...]
    sources: tuple[Source, ...]
    notes: str = ""
    path: str = ""
    components: tuple[str, ...] = ()   # what the entry is about, beyond what its lines name
    # the entry says what a line means and how to find the failure behind it, not that failure
    diagnosis: bool = False
    os: tuple[str, ...] = ()   # the host platforms the entry is about (windows, macos, aarch64); () = any
    # whose memory filled the GPU in the out-of-memory this entry is about (assistant.gpu_memory)
    gpu_memory_holder: str | None = None
    exit_signal: str | None = None   # the signal the process it is about died of (assistant.exit_signal)
    cause_zh: str = ""   # the cause in Chinese (with title_zh and the steps' text_zh: a Chinese answer)
    # where in SGLang the errors this entry is about are raised (`module:Function` prefixes): an
    # entry about a class of checks (every flag combination `ServerArgs` rejects) names the site,
    # not each message (assistant.origin_check)
    raised_in: tuple[str, ...] = ()
    phase: str | None = None   # startup | serving: when the failure it is about happens (assistant.phase)
    # another package imports or calls an SGLang name that the user's release lacks and other
    # releases have: the entry explains any such error, named or not (assistant.decision)
    caller_needs_other_release: bool = False
    # the NVIDIA GPU generations the entry is about (`sm_120`): a paste on others is outside it
    # (assistant.gpu_arch)
    gpu_arch: tuple[str, ...] = ()
    # the CUDA majors the entry's cause needs (`cuda: [13]`): a paste that runs another and names
    # these nowhere is outside it (assistant.cuda_major)
    cuda: tuple[int, ...] = ()
    verify_zh: tuple[str, ...] = ()   # each `verify` line in Chinese, in the same order
    # siblings that share this entry's lines, each with the words that mean its case and not this
    # one's (`{"entry": id, "words": [...]}`; assistant.tell_apart)
    tell_apart: tuple[dict, ...] = ()
    # words by which a user says what this entry blames is checked and fine ("cat config.json shows
    # normal JSON"): such a paste is outside the entry (assistant.tell_apart)
    cleared_by: tuple[str, ...] = ()

    @property
    def source_labels(self) -> list[str]:
        return [s.label for s in self.sources]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Entry:
        d = dict(d)
        d["fix"] = tuple(FixStep(s["text"], tuple(s.get("commands") or ()), s.get("versions"),
                                 s.get("caveat"), s.get("text_zh"), s.get("caveat_zh")) for s in d["fix"])
        d["wrong_advice"] = tuple(WrongAdvice(**w) for w in d["wrong_advice"])
        d["sources"] = tuple(Source(**s) for s in d["sources"])
        for key in ("signatures", "symptoms", "keywords", "hardware", "verify", "components", "os", "gpu_arch",
                    "cuda", "verify_zh", "tell_apart", "cleared_by"):
            d[key] = tuple(d.get(key) or ())
        return cls(**d)

    def search_text(self) -> str:
        """Everything retrieval should see, as plain text (one chunk per entry)."""
        parts = [self.title, self.title_zh, *self.signatures, *self.symptoms, *self.keywords,
                 self.cause, *(s.text for s in self.fix), *(c for s in self.fix for c in s.commands)]
        return "\n".join(p for p in parts if p)


@dataclass
class CheckReport:
    entries: list[Entry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "path: what is wrong"
    warnings: list[str] = field(default_factory=list)  # "path: what looks wrong" (does not fail)

    @property
    def ok(self) -> bool:
        return not self.errors


class EntryError(ValueError):
    """An entry file that cannot be read as a KB entry."""


def _str_list(value, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise EntryError(f"'{key}' must be a list of strings")
    return tuple(str(v).strip() for v in value if str(v).strip())


def _fix_steps(value) -> tuple[FixStep, ...]:
    if not isinstance(value, list) or not value:
        raise EntryError("'fix' must be a non-empty list of steps")
    steps = []
    for item in value:
        if isinstance(item, str):
            steps.append(FixStep(item.strip()))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            unknown = set(item) - {"text", "commands", "versions", "caveat", "text_zh", "caveat_zh"}
            if unknown:
                raise EntryError(f"fix step has unknown keys {sorted(unknown)}")
            caveat = item.get("caveat")
            if caveat is not None and not (isinstance(caveat, str) and caveat.strip()):
                raise EntryError("a fix step's 'caveat' must be a non-empty string (the risk of the step)")
            versions = item.get("versions")
            text_zh, caveat_zh = item.get("text_zh"), item.get("caveat_zh")
            for key, value in (("text_zh", text_zh), ("caveat_zh", caveat_zh)):
                if value is not None and not (isinstance(value, str) and value.strip()):
                    raise EntryError(f"a fix step's '{key}' must be a non-empty string")
            if caveat_zh and not caveat:
                raise EntryError("a fix step has 'caveat_zh' but no 'caveat'")
            steps.append(FixStep(item["text"].strip(), _str_list(item.get("commands"), "commands"),
                                 str(versions).strip() if versions else None,
                                 " ".join(caveat.split()) if caveat else None,
                                 join_chinese(text_zh) if text_zh else None,
                                 join_chinese(caveat_zh) if caveat_zh else None))
        else:
            raise EntryError("each fix step is a string or a mapping with 'text'")
    return tuple(steps)


def _claim_pairs(value, key: str) -> list[tuple[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise EntryError(f"'{key}' must be a list of {{claim, fact}}")
    out = []
    for item in value:
        if not (isinstance(item, dict) and isinstance(item.get("claim"), str)
                and isinstance(item.get("fact"), str)):
            raise EntryError(f"each {key} item needs 'claim' and 'fact' strings")
        out.append((item["claim"].strip(), item["fact"].strip()))
    return out


def _wrong_advice(value, chinese=None) -> tuple[WrongAdvice, ...]:
    """The wrong advice, each with its Chinese from the parallel `wrong_advice_zh` list."""
    english = _claim_pairs(value, "wrong_advice")
    translated = _claim_pairs(chinese, "wrong_advice_zh")
    if translated and len(translated) != len(english):
        raise EntryError(f"'wrong_advice_zh' has {len(translated)} items; 'wrong_advice' has {len(english)}")
    translated = translated or [("", "")] * len(english)
    return tuple(WrongAdvice(claim, fact, join_chinese(claim_zh), join_chinese(fact_zh))
                 for (claim, fact), (claim_zh, fact_zh) in zip(english, translated))


def _sources(value) -> tuple[Source, ...]:
    if not isinstance(value, list) or not value:
        raise EntryError("'sources' must be a non-empty list")
    out = []
    for item in value:
        if isinstance(item, str):
            item = {"url": item} if item.startswith("http") else {"seed": item}
        if not isinstance(item, dict) or not (item.get("url") or item.get("seed")):
            raise EntryError("each source needs a 'url' or a 'seed' document name")
        url = item.get("url")
        if url and not re.match(r"^https?://\S+$", str(url)):
            raise EntryError(f"source url is not a URL: {url!r}")
        out.append(Source(url=url, seed=item.get("seed"), title=str(item.get("title") or "")))
    return tuple(out)


def _version_spec(value, key: str) -> str:
    if value in (None, "", "any"):
        return ""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(str(value))
    except InvalidSpecifier as exc:
        raise EntryError(f"'{key}' is not a version specifier like '>=0.4.6,<0.5.9': {value!r}") from exc
    return str(value)


def parse_entry(text: str, path: str = "") -> Entry:
    """Parse one entry file's text; raises EntryError saying what is wrong."""
    import yaml

    match = FRONT_MATTER_RE.match(text.lstrip("\ufeff"))
    if not match:
        raise EntryError("no YAML front matter (the file must start with '---' and close it with '---')")
    try:
        # libyaml's parser, where PyYAML was built with it, reads the same mappings ~10x faster (the
        # whole KB is parsed on every ingest and check)
        meta = yaml.load(match.group(1), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise EntryError(f"front matter is not valid YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(meta, dict):
        raise EntryError("front matter must be a mapping")
    for key in ("id", "title", "title_zh", "area", "confidence", "cause", "fix", "sources"):
        if not meta.get(key):
            raise EntryError(f"missing required field '{key}'")
    known = {"id", "title", "title_zh", "area", "signatures", "symptoms", "keywords", "versions",
             "hardware", "confidence", "cause", "fix", "verify", "wrong_advice", "sources", "components",
             "diagnosis", "os", "gpu_memory_holder", "cause_zh", "exit_signal", "raised_in", "phase",
             "caller_needs_other_release", "gpu_arch", "verify_zh", "wrong_advice_zh", "tell_apart",
             "cleared_by", "cuda"}
    unknown = set(meta) - known
    if unknown:
        raise EntryError(f"unknown fields {sorted(unknown)}")
    entry_id = str(meta["id"])
    if not ID_RE.match(entry_id):
        raise EntryError(f"id {entry_id!r} is not kebab-case")
    if meta["area"] not in AREAS:
        raise EntryError(f"area {meta['area']!r} is not one of {', '.join(AREAS)}")
    if meta["confidence"] not in CONFIDENCES:
        raise EntryError(f"confidence {meta['confidence']!r} is not one of {', '.join(CONFIDENCES)}")
    hardware = _str_list(meta.get("hardware") or ["any"], "hardware")
    bad_hw = [h for h in hardware if h not in HARDWARE]
    if bad_hw:
        raise EntryError(f"hardware {bad_hw} not in {', '.join(HARDWARE)}")
    platforms = _str_list(meta.get("os"), "os")
    bad_os = [p for p in platforms if p not in PLATFORMS]
    if bad_os:
        raise EntryError(f"os {bad_os} not in {', '.join(PLATFORMS)}")
    components = _str_list(meta.get("components"), "components")
    bad_components = [c for c in components if c not in COMPONENT_NAMES]
    if bad_components:
        raise EntryError(f"components {bad_components} not among the known components "
                         f"({', '.join(sorted(COMPONENT_NAMES))})")
    gpu_arch = _str_list(meta.get("gpu_arch"), "gpu_arch")
    bad_arch = [a for a in gpu_arch if not GPU_ARCH_VALUE_RE.fullmatch(a) or int(a[3:]) not in KNOWN_ARCHS]
    if bad_arch:
        raise EntryError(f"gpu_arch {bad_arch[0]!r} is not a known NVIDIA compute capability "
                         f"(sm_{', sm_'.join(str(sm) for sm in sorted(KNOWN_ARCHS))})")
    cuda = meta.get("cuda") or []
    if not isinstance(cuda, list) or any(isinstance(v, bool) or v not in CUDA_MAJORS for v in cuda):
        raise EntryError(f"cuda must be a list of CUDA majors among {', '.join(map(str, CUDA_MAJORS))} "
                         f"(the majors the cause needs), not {cuda!r}")
    exit_signal = meta.get("exit_signal")
    if exit_signal is not None and exit_signal not in EXIT_SIGNALS:
        raise EntryError(f"exit_signal {exit_signal!r} is not one of {', '.join(EXIT_SIGNALS)}")
    holder = meta.get("gpu_memory_holder")
    if holder is not None and holder not in MEMORY_HOLDERS:
        raise EntryError(f"gpu_memory_holder {holder!r} is not one of {', '.join(MEMORY_HOLDERS)}")
    phase = meta.get("phase")
    if phase is not None and phase not in PHASES:
        raise EntryError(f"phase {phase!r} is not one of {', '.join(PHASES)}")
    raised_in = _str_list(meta.get("raised_in"), "raised_in")
    bad_sites = [site for site in raised_in if not RAISED_IN_RE.match(site)]
    if bad_sites:
        raise EntryError(f"raised_in {bad_sites[0]!r} is not an SGLang module, optionally with "
                         "':Function' (sglang.srt.server_args:ServerArgs)")
    diagnosis = meta.get("diagnosis", False)
    if not isinstance(diagnosis, bool):
        raise EntryError("'diagnosis' must be true or false")
    tell_apart = _tell_apart(meta.get("tell_apart"), entry_id)
    cleared_by = tuple(w.strip() for w in _str_list(meta.get("cleared_by"), "cleared_by") if w.strip())
    caller_needs_other_release = meta.get("caller_needs_other_release", False)
    if not isinstance(caller_needs_other_release, bool):
        raise EntryError("'caller_needs_other_release' must be true or false")
    versions = meta.get("versions") or {}
    if not isinstance(versions, dict):
        raise EntryError("'versions' must be a mapping with 'affected' and/or 'fixed'")
    signatures = _str_list(meta.get("signatures"), "signatures")
    symptoms = _str_list(meta.get("symptoms"), "symptoms")
    if not signatures and not symptoms:
        raise EntryError("an entry needs 'signatures' (verbatim error lines) or 'symptoms'")
    broad = [s for s in signatures if s.lstrip().startswith('File "') and not FRAME_RE.match(s)]
    if broad:
        # a frame without its function matches every traceback through that file (each launch
        # error passes server_args.py): only the function makes a frame say where it failed
        raise EntryError(f"signature {broad[0]!r} is a traceback frame without its function "
                         "(', in <function>'); name the function or move it to 'keywords'")
    fix = _fix_steps(meta["fix"])
    for step in fix:
        if step.versions:
            _version_spec(step.versions, "fix step versions")
    fixed = versions.get("fixed")
    verify = _str_list(meta.get("verify"), "verify")
    verify_zh = tuple(join_chinese(line) for line in _str_list(meta.get("verify_zh"), "verify_zh"))
    if verify_zh and len(verify_zh) != len(verify):
        raise EntryError(f"'verify_zh' has {len(verify_zh)} items; 'verify' has {len(verify)}")
    return Entry(
        id=entry_id,
        title=str(meta["title"]).strip(),
        title_zh=str(meta["title_zh"]).strip(),
        area=meta["area"],
        signatures=signatures,
        symptoms=symptoms,
        keywords=_str_list(meta.get("keywords"), "keywords"),
        affected=_version_spec(versions.get("affected"), "versions.affected"),
        fixed=str(fixed) if fixed else None,
        hardware=hardware,
        confidence=meta["confidence"],
        cause=" ".join(str(meta["cause"]).split()),
        fix=fix,
        verify=verify,
        verify_zh=verify_zh,
        wrong_advice=_wrong_advice(meta.get("wrong_advice"), meta.get("wrong_advice_zh")),
        sources=_sources(meta["sources"]),
        notes=match.group(2).strip(),
        path=path,
        components=components,
        diagnosis=diagnosis,
        os=platforms,
        gpu_memory_holder=holder,
        exit_signal=exit_signal,
        raised_in=raised_in,
        phase=phase,
        caller_needs_other_release=caller_needs_other_release,
        gpu_arch=gpu_arch,
        cuda=tuple(cuda),
        tell_apart=tell_apart,
        cleared_by=cleared_by,
        cause_zh=join_chinese(" ".join(str(meta.get("cause_zh") or "").split())),
    )


def _tell_apart(value, entry_id: str) -> tuple[dict, ...]:
    """`tell_apart`: a list of {entry: sibling id, words: [words in a paste that mean its case]}."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise EntryError("'tell_apart' must be a list of {entry: id, words: [...]} mappings")
    siblings = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"entry", "words"}:
            raise EntryError("each 'tell_apart' item must be a mapping with exactly 'entry' and 'words'")
        sibling = str(item["entry"])
        if not ID_RE.match(sibling) or sibling == entry_id:
            raise EntryError(f"tell_apart entry {sibling!r} must be another entry's id")
        words = _str_list(item["words"], "tell_apart words")
        if not words or any(not w.strip() for w in words):
            raise EntryError(f"tell_apart for {sibling!r} needs at least one non-empty word")
        siblings.append({"entry": sibling, "words": tuple(w.strip() for w in words)})
    return tuple(siblings)


def entry_files(entries_dir: Path) -> list[Path]:
    return sorted(p for p in Path(entries_dir).glob("*.md") if not p.name.startswith("_"))


def load_entries(entries_dir: Path) -> list[Entry]:
    """Load every entry; raises EntryError naming the first broken file."""
    out = []
    for path in entry_files(entries_dir):
        try:
            out.append(parse_entry(path.read_text(encoding="utf-8"), str(path)))
        except (EntryError, UnicodeDecodeError) as exc:
            raise EntryError(f"{path}: {exc}") from exc
    return out


def releases_affected(entry: Entry) -> str:
    """The releases an entry's problem occurs in, as one PEP 440 specifier: its `affected` range,
    ending before the release that fixed it ("" for any)."""
    return ",".join(part for part in (entry.affected, f"<{entry.fixed}" if entry.fixed else "") if part)


def check_entries(entries_dir: Path, registry=None, messages=None) -> CheckReport:
    """Validate every entry: schema, unique ids, file name = id, sources, and (with a flag
    registry) that fix steps name only SGLang flags / env vars that exist in the versions
    the step applies to, and that version boundaries written next to a name agree with it.
    With the message registry (`assistant.origin.ErrorRegistry`), warn about signatures that
    look like SGLang's messages but match none in the entry's versions."""
    report = CheckReport()
    files = entry_files(entries_dir)
    if not files:
        report.errors.append(f"{entries_dir}: no entry files (*.md)")
    seen: dict[str, str] = {}
    for path in files:
        try:
            entry = parse_entry(path.read_text(encoding="utf-8"), str(path))
        except UnicodeDecodeError:
            report.errors.append(f"{path}: not UTF-8 text")
            continue
        except EntryError as exc:
            report.errors.append(f"{path}: {exc}")
            continue
        if entry.id in seen:
            report.errors.append(f"{path}: duplicate id '{entry.id}' (also in {seen[entry.id]})")
            continue
        seen[entry.id] = str(path)
        if path.stem != entry.id:
            report.errors.append(f"{path}: file name must be '{entry.id}.md'")
        report.errors.extend(f"{path}: {msg}" for msg in translation_mismatches(entry))
        if registry is not None:
            report.errors.extend(f"{path}: {msg}" for msg in unknown_names_in_fix(entry, registry))
            report.errors.extend(f"{path}: {msg}" for msg in stated_boundaries(entry, registry))
        if messages is not None:
            from assistant.origin_check import raised_in_warnings, signature_warnings

            report.warnings.extend(f"{path}: {msg}" for msg in
                                   signature_warnings(entry.signatures, releases_affected(entry), messages))
            report.warnings.extend(f"{path}: {msg}" for msg in raised_in_warnings(entry.raised_in, messages))
        report.entries.append(entry)
    for entry in report.entries:
        for sibling in entry.tell_apart:
            if sibling["entry"] not in seen:
                report.errors.append(f"{seen[entry.id]}: tell_apart names {sibling['entry']!r}, which is no entry")
    return report


# what a translation must carry over unchanged: code spans, flags, env vars, versions, numbers
# with units, URLs, entry ids named in the text
_FACT_RES = (re.compile(r"`[^`]+`"), re.compile(r"(?<![\w-])--[a-z][\w-]*"),
             re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"), re.compile(r"\b\d+\.\d+(?:\.\d+)?(?:\.post\d+)?\b"),
             re.compile(r"https?://[^\s`),;，。；）]+"))


def stated_facts(text: str) -> set[str]:
    """The facts a translation must carry over: code spans, flags, env vars, versions, URLs."""
    return {m.group(0).rstrip(".") for pattern in _FACT_RES for m in pattern.finditer(text)}


def translation_mismatches(entry: Entry) -> list[str]:
    """A Chinese text that drops or changes a fact of its English text (a code span, a flag, an
    env var, a version, a URL), or is not Chinese: translations may reword, never re-state facts."""
    pairs = [("cause_zh", entry.cause, entry.cause_zh)] + [
        (f"fix step {i} text_zh", step.text, step.text_zh) for i, step in enumerate(entry.fix, 1)] + [
        (f"fix step {i} caveat_zh", step.caveat, step.caveat_zh) for i, step in enumerate(entry.fix, 1) if step.caveat] + [
        (f"verify_zh {i}", english, chinese) for i, (english, chinese) in enumerate(zip(entry.verify, entry.verify_zh), 1)]
    for i, advice in enumerate(entry.wrong_advice, 1):
        pairs += [(f"wrong_advice_zh {i} claim", advice.claim, advice.claim_zh),
                  (f"wrong_advice_zh {i} fact", advice.fact, advice.fact_zh)]
    problems = []
    for where, english, chinese in pairs:
        if not chinese:
            continue
        if not CHINESE_CHAR_RE.search(chinese):
            problems.append(f"{where} has no Chinese in it")
            continue
        missing = sorted(stated_facts(english) - stated_facts(chinese))
        if missing:
            problems.append(f"{where} lacks what its English text states: {', '.join(missing[:5])}")
    if entry.cause_zh and not entry.title_zh:
        problems.append("cause_zh without title_zh")
    return problems


def unknown_names_in_fix(entry: Entry, registry) -> list[str]:
    """Flags / env vars of each fix step checked against the releases the step applies to.

    An unscoped step (only `versions.affected` limits it) must name what exists in at least one
    of those releases. A step with its own `versions` promises more: every name must work in
    EVERY registry release of its range. Where the range runs past a name's first or last
    release the step's boundary disagrees with the registry; a hole inside the name's lifetime
    is reported as such. A flag counts only where it is not deprecated (0.5.3 rejects a
    deprecated `--enable-ep-moe` with a ValueError; the registry cannot tell warn from reject);
    an env var also counts where a deprecation shim still handles it ("unset the old X")."""
    from assistant.commands import sglang_names
    from assistant.flags import describe_versions

    problems = []
    for step in entry.fix:
        spec = ",".join(s for s in (entry.affected, step.versions or "") if s)
        in_range = registry.versions_in(spec)
        versions = in_range or registry.versions
        for name in sglang_names(step.text, *step.commands):
            if not any(registry.check(name, v).known for v in versions):
                problems.append(f"fix step names {name}, which exists in no SGLang version "
                                f"this step applies to ({versions[0]}..{versions[-1]})")
                continue
            if not (step.versions and in_range) or _named_as_retired(name, step):
                continue
            works = _working_releases(name, registry)
            missing = [v for v in versions if v not in works]
            if not missing:
                continue
            where = f"fix step for SGLang {step.versions} names {name}"
            if not works:
                problems.append(f"{where}, which is deprecated in every release of that range")
                continue
            lives = f"{name} works in {describe_versions(works, registry.versions)}"
            if _before(missing[0], works[0], registry):
                problems.append(f"{where}, but {lives}: the step's lower bound should be "
                                f"{works[0]} or later")
            elif _before(works[-1], missing[-1], registry):
                after = registry.versions[registry.versions.index(works[-1]) + 1]
                problems.append(f"{where}, but {lives}: the step's range should end before "
                                f"{after} (e.g. '<{after}')")
            else:
                problems.append(f"{where}, which SGLang {describe_versions(missing, registry.versions)} "
                                f"inside that range do not have ({lives})")
    return problems


# A step may name what it replaces ("instead of the deprecated `--disable-cuda-graph`",
# "unset the old SGL_X"): that name is context, not advice, and needs no release range.
RETIRED_BEFORE_RE = re.compile(r"(?:deprecated|instead of|replaces|the old|unset|drop|remove|"
                               r"not|no longer)\W*(?:the\W+)?(?:old\W+|deprecated\W+)?\W*$", re.I)
RETIRED_AFTER_RE = re.compile(r"^\W*(?:is|are)\s+(?:deprecated|gone|removed|rejected)", re.I)


def _named_as_retired(name: str, step: FixStep) -> bool:
    if any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", c)
           and not re.search(rf"\bunset\s+(?:[A-Z0-9_]+\s+)*{re.escape(name)}\b", c)
           for c in step.commands):
        return False  # a command runs it
    spots = [m for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", step.text)]
    return bool(spots) and all(
        RETIRED_BEFORE_RE.search(step.text[max(0, m.start() - 30):m.start()])
        or RETIRED_AFTER_RE.search(step.text[m.end():m.end() + 30]) for m in spots)


def _working_releases(name: str, registry) -> list[str]:
    allowed = ("ok", "deprecated") if not name.startswith("-") else ("ok",)
    return [v for v, state in registry.lifetime(name).items() if state in allowed]


def _before(a: str, b: str, registry) -> bool:
    return registry.versions.index(a) < registry.versions.index(b)


# Prose that dates a flag: "`--ep-size` (SGLang 0.5.5 and later)", "read from 0.4.7",
# "`--enable-ep-moe` no longer exists from 0.5.5". Version = three numbers (0.5.8.post1 is
# no registry release). The claim must follow the name in the same clause.
_VERSION = r"v?(\d+\.\d+\.\d+)(?![.\d])"
FIRST_CLAIM_RE = re.compile(
    rf"\b(?:from|since|first in|starting (?:with|from)|introduced in|added in)\s+(?:SGLang\s+)?{_VERSION}"
    rf"|(?:SGLang\s+)?{_VERSION}\s*(?:\+|and later|and newer|or later|or newer|onwards?)", re.I)
GONE_CLAIM_RE = re.compile(
    rf"\b(?:no longer (?:exists?|accepted|read|available)|(?:is |are )?(?:unknown|gone|removed))"
    rf"\s+(?:from|in|since)\s+(?:SGLang\s+)?{_VERSION}", re.I)
# Words that make a "from X" about something else than the name existing.
NOT_EXISTENCE_RE = re.compile(r"\b(?:not|no|deprecat\w*|raises?|reject\w*|warn\w*|default\w*|alias\w*|"
                              r"prints?|logs?|changed?|renamed|rewritten|effect|alone|only|enough|"
                              r"values?|choices?)\b", re.I)
CLAUSE_END_RE = re.compile(r"[;\n]|\.\s|\.$")
VALUE_OF_RE = re.compile(r"\b(?:value|choice|option)s?\s+(?:of|for)\W*$", re.I)  # "the `x` value of `--flag`"


def stated_boundaries(entry: Entry, registry) -> list[str]:
    """Version boundaries written in prose next to a flag / env var that the registry
    contradicts: "X (0.5.5 and later)" / "X from 0.5.5" must be X's first release, "X no longer
    exists from 0.5.5" the first release without X. Only registry releases are judged (a
    claim about 0.4.0 or 0.5.8.post1 is not); names no release has are the other check's job."""
    from assistant.flags import NAME_IN_TEXT, describe_versions

    texts = [entry.cause, entry.notes, *(s.text for s in entry.fix),
             *(w.fact for w in entry.wrong_advice)]
    problems: list[str] = []
    for text in texts:
        matches = list(NAME_IN_TEXT.finditer(text or ""))
        for i, match in enumerate(matches):
            name = match.group(0)
            if _has_value(text, match) or VALUE_OF_RE.search(text[max(0, match.start() - 25):match.start()]):
                continue  # "`--grammar-backend llguidance` from 0.4.4" dates the value, not the flag
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            clause = text[match.end():end]
            stop = CLAUSE_END_RE.search(clause)
            clause = clause[:stop.start()] if stop else clause
            present = [v for v, state in registry.lifetime(name).items() if state]
            if not present:
                continue
            for kind, claim in _claims(clause):
                problem = _judge_claim(name, kind, claim, present, registry)
                if problem:
                    problems.append(f"{problem}; the registry has {name} in "
                                    f"{describe_versions(present, registry.versions)}")
    return list(dict.fromkeys(problems))


def _has_value(text: str, match) -> bool:
    """Whether the name sits in a `code span` that goes on with a specific value after it
    (`--grammar-backend llguidance`, `--host 0.0.0.0`); a plain number or a placeholder
    (`--dist-timeout 3600`, `--reasoning-parser <name>`, `--tp-size N`) keeps the claim on the name."""
    if text.count("`", 0, match.start()) % 2 == 0:
        return False
    close = text.find("`", match.end())
    rest = text[match.end():close if close >= 0 else len(text)].split()
    return bool(rest) and re.fullmatch(r"\d+|<[^>]*>|[A-Z]+", rest[0]) is None


def _claims(clause: str):
    for m in GONE_CLAIM_RE.finditer(clause):
        yield "gone", m.group(1)
    for m in FIRST_CLAIM_RE.finditer(clause):
        if NOT_EXISTENCE_RE.search(clause[:m.start()]) or GONE_CLAIM_RE.search(clause[max(0, m.start() - 30):m.end()]):
            continue
        yield "first", m.group(1) or m.group(2)


def _judge_claim(name: str, kind: str, version: str, present: list[str], registry) -> str | None:
    if version not in registry.versions:
        return None  # a release the registry does not hold cannot be judged
    order = registry.versions
    if kind == "first":
        first = present[0]
        if version == first or (first == order[0] and _before(version, first, registry)):
            return None
        return f"says {name} exists from {version}, but its first release is {first}"
    last = present[-1]
    gone_from = order[order.index(last) + 1] if last != order[-1] else None
    if version == gone_from:
        return None
    if gone_from is None:
        return f"says {name} is gone from {version}, but {order[-1]} still has it"
    return f"says {name} is gone from {version}, but it is gone from {gone_from}"
