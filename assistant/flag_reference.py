"""Flag reference: the launch_server flags a how-to question is about, with SGLang's own help text.

A how-to or configuration question ("how do I enable EAGLE speculative decoding?", "怎么设置
--mem-fraction-static") gets no error fix, but the answer to most of them is a flag. The newest
release in the flag registry carries every flag's help text and literal choices, read from its
wheel (`ingest.sglang_flags`); this module picks the flags a question names or describes and says
whether the user's own release has them.

Flags named in the question come first. Otherwise a flag is chosen when at least half the words
of its name are in the question and one of them is rare among flag names, and ranked by how rare
the shared words are (a word of its name counts three times a word of its help text) and by how
many releases have the flag; Chinese terms are read through a small glossary of SGLang
vocabulary. A question whose words are all common ("how do I make it faster") gets no flags
rather than arbitrary ones.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from assistant.commands import sglang_names
from assistant.flags import NAME_IN_TEXT, FlagRegistry, describe_versions, find_names
from assistant.glossary import english_terms
from assistant.wording import Sentence

MAX_FLAGS = 3         # flags shown when the question describes them
MAX_NAMED = 6         # flags the question spells out are all shown, up to this many
HELP_LIMIT = 240      # characters of help text quoted per flag
CHOICES_LIMIT = 12
# a described (not named) flag must have in its name a word of the question that at most this share
# of all flag names have: "speculative" or "lora" qualify, "enable", "max" or "size" do not
RARE_SHARE = 0.08
KEEP_RATIO = 0.5      # described flags within this share of the best score are shown
NAME_WEIGHT = 3.0     # a shared word in the flag's name, against one in its help text
NAME_COVERAGE = 0.5   # a described flag's name words the question must have

WORD_RE = re.compile(r"[a-z][a-z0-9]+")
ONE_NODE_RE = re.compile(r"\b(?:single|one|1)\b[\w\s-]{0,16}?\bnode\b", re.I)
ENDPOINT_RE = re.compile(r"https?://\S+|(?<![\w.])/(?:v1/)?[a-z_]+(?:/[\w{}.-]+)*")
STOPWORDS = frozenset("""
a an and are as at be by can could do does for from how i if in into is it its me my of on or
our should so than that the then this to use used using want was we what when where which while
who why will with would you your set sets setting enable enabled enabling disable disabled flag
flags option options argument arguments server sglang launch value values default way best make
get run running serve served serving start only not no yes also more most there their them they
any some other model models format
""".split())

# English words whose flags are spelled otherwise: "two nodes" is `--nnodes` and `--dist-init-addr`
MANY_GPUS_RE = re.compile(r"\b(?:two|three|four|eight|multiple|several|many|all|\d+)\s*(?:x\s*)?(?:\w+\s)?(?:gpus|cards)\b|"
                          r"\bacross (?:\w+ ){0,2}gpus\b|多卡|多张卡|[两二三四八\d]+\s*张(?:显)?卡|多块(?:显)?卡", re.I)
SYNONYMS = {"node": "nnodes dist init", "multinode": "nnodes dist init",
            # prefill servers are PD disaggregation's ("decode" alone is also speculative decoding's)
            "prefill": "disaggregation mode", "pd": "disaggregation mode",
            "disaggregated": "disaggregation mode",
            # HiCache is SGLang's hierarchical cache; its L3 tier is a storage backend
            "hicache": "enable hierarchical cache", "l3": "storage backend"}


@dataclass(frozen=True)
class FlagReference:
    """One flag a question is about, as the newest release documents it."""
    name: str
    help: str
    choices: tuple[str, ...]
    help_release: str               # the release the help text is quoted from
    in_user_release: bool | None    # None when the user's release is not known
    releases: str                   # the registry releases that have it ("0.4.10-0.5.23")
    all_releases: bool = True       # every release of the registry has it
    # flags its help text names that not every release has (or the user's lacks): (flag, releases)
    named_flags: tuple[tuple[str, str], ...] = ()
    choices_release: str | None = None   # the user's release, when the choices are its own

    def line(self, user_version: str | None = None) -> Sentence:
        """The flag, its help, its choices and, when the user's release lacks it or the release is
        unknown and some releases lack it, where it exists; the same for flags its help names. The
        help text is SGLang's own (English in both languages); the sentences around it are ours."""
        text = self.help if len(self.help) <= HELP_LIMIT else self.help[:HELP_LIMIT].rsplit(" ", 1)[0] + " ..."
        if text and not text.endswith((".", "!", "?", "...")):
            text += "."   # SGLang's help often ends without a full stop; our sentence follows it
        en = f"`{self.name}`: {text}" if text else f"`{self.name}`"
        zh = f"`{self.name}`：{text}" if text else f"`{self.name}`"
        if self.choices:
            shown = ", ".join(self.choices[:CHOICES_LIMIT]) + (", ..." if len(self.choices) > CHOICES_LIMIT else "")
            en += f" Choices{f' in SGLang {self.choices_release}' if self.choices_release else ''}: {shown}."
            zh += f"{_gap(zh)}可选值{f'（SGLang {self.choices_release}）' if self.choices_release else ''}：{shown}。"
        if self.in_user_release is False:
            en += f" Not in SGLang {user_version}: it exists in {self.releases}."
            zh += f"{_gap(zh)}SGLang {user_version} 没有这个参数：{self.releases} 中可用。"
        elif self.in_user_release is None and not self.all_releases:
            en += f" In SGLang {self.releases}."
            zh += f"{_gap(zh)}SGLang {self.releases} 中可用。"
        for flag, releases in self.named_flags:
            en += f" (`{flag}`: SGLang {releases}.)"
            zh += f"（`{flag}`：SGLang {releases} 中可用。）"
        return Sentence(en, zh)


def _gap(chinese: str) -> str:
    """The space before the next Chinese sentence: none after a Chinese full stop, one after
    SGLang's English help text."""
    return "" if chinese.endswith(("。", "）")) else " "


def _readable(help_text: str) -> str:
    """The help text without the holes its f-string left (`Options include: {}.`): the values
    were computed at run time and are not in the source."""
    text = re.sub(r"[^.]*\{\}[^.]*\.?", "", help_text)
    return " ".join(text.split())


def _stem(word: str) -> str:
    """A crude suffix cut, the same on both sides: `calling`/`call`, `caching`/`cache`, `nodes`/`node`."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def _words(text: str) -> set[str]:
    return {_stem(w) for w in WORD_RE.findall(text.lower()) if w not in STOPWORDS}


def question_words(question: str) -> set[str]:
    """The question's English words, with its Chinese SGLang terms read through the glossary."""
    english = NAME_IN_TEXT.sub(" ", question)   # a flag it names is looked up, not read as words
    # an endpoint or URL says where requests go (`/v1/chat/completions`), not what to configure
    english = ENDPOINT_RE.sub(" ", english)
    english = ONE_NODE_RE.sub(" ", english)   # "on a single 8xH100 node" asks nothing multi-node
    extra = english_terms(question)
    if MANY_GPUS_RE.search(question):   # one model over several GPUs is tensor parallelism
        extra += " tensor parallelism tp size"
    words = _words(english) | _words(extra)
    synonyms = {_stem(word): spelled for word, spelled in SYNONYMS.items()}
    return words | _words(" ".join(synonyms.get(w, "") for w in words))


@dataclass(frozen=True)
class _FlagIndex:
    release: str
    names: dict[str, frozenset[str]]    # flag -> words of its name
    helps: dict[str, frozenset[str]]    # flag -> words of its help text
    flags_with: Counter                 # word -> how many flags use it, in the name or help
    names_with: Counter                 # word -> how many flag names have it
    share_of_releases: dict[str, float]  # flag -> share of the registry's releases that have it


@lru_cache(maxsize=4)
def _index(registry: FlagRegistry) -> _FlagIndex | None:
    release = next((v for v in reversed(registry.versions) if registry.releases[v].flag_help), None)
    if release is None:
        return None
    documented = registry.releases[release]
    names, helps, counts, name_counts = {}, {}, Counter(), Counter()
    for flag, text in documented.flag_help.items():
        if flag in documented.deprecated_flags:
            continue
        names[flag] = frozenset(_stem(w) for w in flag[2:].split("-") if w and w not in STOPWORDS)
        helps[flag] = frozenset(_words(text))
        counts.update(names[flag] | helps[flag])
        name_counts.update(names[flag])
    share = {flag: len(registry.check(flag).versions) / len(registry.versions) for flag in names}
    return _FlagIndex(release, names, helps, counts, name_counts, share)


def _reference(flag: str, registry: FlagRegistry, index: _FlagIndex, user_version: str | None) -> FlagReference:
    documented = registry.releases[index.release]
    having = registry.check(flag).versions
    help_text = _readable(documented.flag_help.get(flag, ""))
    named = []
    # the newest help text may point at a flag older releases lack ("Deprecated. Use --attn-dp-size")
    for other in (name for name in sglang_names(help_text) if name.startswith("--")):
        other_having = registry.check(other).versions if other != flag else ()
        if not other_having:
            continue
        missing = (not registry.check(other, user_version).exists if user_version
                   else len(other_having) < len(registry.versions))
        if missing:
            named.append((other, describe_versions(other_having, registry.versions)))
    choices, choices_release = documented.flag_choices.get(flag, ()), None
    user_release = registry.nearest(user_version) if user_version else None
    if user_release and user_release != index.release and registry.releases[user_release].flag_choices.get(flag):
        # the user's release lists its own choices: quote those, not the newest release's
        choices, choices_release = registry.releases[user_release].flag_choices[flag], user_release
    return FlagReference(
        name=flag, help=help_text, choices=choices, choices_release=choices_release,
        help_release=index.release,
        in_user_release=registry.check(flag, user_version).exists if user_version else None,
        releases=describe_versions(having, registry.versions) if having else "no release",
        all_releases=len(having) == len(registry.versions), named_flags=tuple(named))



def _named(question: str, registry: FlagRegistry) -> list[str]:
    """Flags the question spells out, in order, as their release resolves them (`--tp` ->
    `--tp-size`); names no release has are left to the flag warnings."""
    out = []
    for raw in find_names(question):
        status = registry.check(raw)
        if status.kind == "flag" and status.exists and (status.canonical or raw) not in out:
            out.append(status.canonical or raw)
    return out


def _described(words: set[str], index: _FlagIndex) -> list[str]:
    total = max(1, len(index.names))
    rare = {w for w in words if 0 < index.names_with[w] <= RARE_SHARE * total}
    if not rare:
        return []
    idf = {w: math.log(total / index.flags_with[w]) for w in words if index.flags_with[w]}
    scores = {}
    for flag, name_words in index.names.items():
        in_name = name_words & words
        if not in_name & rare or len(in_name) < NAME_COVERAGE * len(name_words):
            # a rare word only in the help text is an aside, not what the flag is for; one word
            # of a long name (`role` of --decoupled-spec-role) is a coincidence
            continue
        shared = words & (name_words | index.helps[flag])
        score = sum(idf[w] * (NAME_WEIGHT if w in name_words else 1.0) for w in shared)
        # a flag most releases have is what a how-to question is usually about; one added in the
        # last few releases tunes a corner of it
        scores[flag] = score * (0.5 + index.share_of_releases[flag])
    if not scores:
        return []
    best = max(scores.values())
    ranked = sorted(scores, key=lambda f: (-scores[f], len(f), f))
    return [f for f in ranked if scores[f] >= KEEP_RATIO * best]


def flags_for_question(question: str, registry: FlagRegistry | None, user_version: str | None = None,
                       limit: int = MAX_FLAGS) -> list[FlagReference]:
    """The flags `question` spells out (all of them, up to MAX_NAMED), then the ones it describes,
    best first, up to `limit` in all."""
    if registry is None or not question.strip():
        return []
    index = _index(registry)
    if index is None:
        return []    # a registry built before help texts were recorded
    chosen = _named(question, registry)[:MAX_NAMED]
    for flag in _described(question_words(question), index):
        if len(chosen) >= limit:
            break
        if flag not in chosen:
            chosen.append(flag)
    return [_reference(f, registry, index, user_version) for f in chosen]
