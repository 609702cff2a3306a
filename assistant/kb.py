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

AREAS = (
    "startup", "install", "cuda-nccl", "multinode", "memory", "pd-disaggregation", "router",
    "moe-deepep", "quantization", "structured-output", "api", "multimodal", "performance",
    "rocm", "hardware", "legacy",
)
CONFIDENCES = ("high", "medium-high", "medium", "low-medium", "medium-low", "low")
HARDWARE = ("any", "nvidia", "amd", "musa", "ascend")
ID_RE = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")  # kebab-case; dots for versions (flashinfer-0.0.3-...)
FRONT_MATTER_RE = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)(.*)\Z", re.S)


@dataclass(frozen=True)
class FixStep:
    text: str
    commands: tuple[str, ...] = ()
    versions: str | None = None  # PEP 440 specifier over SGLang versions, e.g. ">=0.5.9"


@dataclass(frozen=True)
class WrongAdvice:
    claim: str
    fact: str


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

    @property
    def source_labels(self) -> list[str]:
        return [s.label for s in self.sources]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Entry:
        d = dict(d)
        d["fix"] = tuple(FixStep(s["text"], tuple(s.get("commands") or ()), s.get("versions"))
                         for s in d["fix"])
        d["wrong_advice"] = tuple(WrongAdvice(**w) for w in d["wrong_advice"])
        d["sources"] = tuple(Source(**s) for s in d["sources"])
        for key in ("signatures", "symptoms", "keywords", "hardware", "verify"):
            d[key] = tuple(d[key])
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
            unknown = set(item) - {"text", "commands", "versions"}
            if unknown:
                raise EntryError(f"fix step has unknown keys {sorted(unknown)}")
            versions = item.get("versions")
            steps.append(FixStep(item["text"].strip(), _str_list(item.get("commands"), "commands"),
                                 str(versions).strip() if versions else None))
        else:
            raise EntryError("each fix step is a string or a mapping with 'text'")
    return tuple(steps)


def _wrong_advice(value) -> tuple[WrongAdvice, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise EntryError("'wrong_advice' must be a list of {claim, fact}")
    out = []
    for item in value:
        if not (isinstance(item, dict) and isinstance(item.get("claim"), str)
                and isinstance(item.get("fact"), str)):
            raise EntryError("each wrong_advice item needs 'claim' and 'fact' strings")
        out.append(WrongAdvice(item["claim"].strip(), item["fact"].strip()))
    return tuple(out)


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
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise EntryError(f"front matter is not valid YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(meta, dict):
        raise EntryError("front matter must be a mapping")
    for key in ("id", "title", "title_zh", "area", "confidence", "cause", "fix", "sources"):
        if not meta.get(key):
            raise EntryError(f"missing required field '{key}'")
    known = {"id", "title", "title_zh", "area", "signatures", "symptoms", "keywords", "versions",
             "hardware", "confidence", "cause", "fix", "verify", "wrong_advice", "sources"}
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
    versions = meta.get("versions") or {}
    if not isinstance(versions, dict):
        raise EntryError("'versions' must be a mapping with 'affected' and/or 'fixed'")
    signatures = _str_list(meta.get("signatures"), "signatures")
    symptoms = _str_list(meta.get("symptoms"), "symptoms")
    if not signatures and not symptoms:
        raise EntryError("an entry needs 'signatures' (verbatim error lines) or 'symptoms'")
    fix = _fix_steps(meta["fix"])
    for step in fix:
        if step.versions:
            _version_spec(step.versions, "fix step versions")
    fixed = versions.get("fixed")
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
        verify=_str_list(meta.get("verify"), "verify"),
        wrong_advice=_wrong_advice(meta.get("wrong_advice")),
        sources=_sources(meta["sources"]),
        notes=match.group(2).strip(),
        path=path,
    )


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


def check_entries(entries_dir: Path, registry=None) -> CheckReport:
    """Validate every entry: schema, unique ids, file name = id, sources, and (with a flag
    registry) that fix steps name only SGLang flags / env vars that exist in the versions
    the step applies to."""
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
        if registry is not None:
            report.errors.extend(f"{path}: {msg}" for msg in unknown_names_in_fix(entry, registry))
        report.entries.append(entry)
    return report


def unknown_names_in_fix(entry: Entry, registry) -> list[str]:
    """Flags / env vars in the fix that exist in none of the registry versions the step covers."""
    from assistant.commands import sglang_names

    problems = []
    for step in entry.fix:
        spec = ",".join(s for s in (entry.affected, step.versions or "") if s)
        versions = registry.versions_in(spec) or registry.versions
        for name in sglang_names(step.text, *step.commands):
            if not any(registry.check(name, v).known for v in versions):
                problems.append(f"fix step names {name}, which exists in no SGLang version "
                                f"this step applies to ({versions[0]}..{versions[-1]})")
    return problems
