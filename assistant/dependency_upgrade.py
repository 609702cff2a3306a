"""A failure the user dates to upgrading another package: which package, and whether an entry is
about that package's version at all.

"SGLang 0.5.10 with mooncake-transfer-engine 0.3.9 works well, but after upgrading it to 0.3.11
every request fails": the user has already found what changed, a release of a package SGLang runs
with. An entry that matches the error line but blames something else (the RDMA network, a flag)
explains the line, not the report: the upgrade is the cause the user shows, and the fix is to pin
the package back or take the SGLang release built for it. Such an entry is then a lead, not the
fix; an entry whose own title or cause speaks of that package's versions still is.

SGLang's own releases are `assistant.upgrade`'s (`reports_regression`); this module reads only the
releases of the other packages (`assistant.version_words.PACKAGE_WORD_RE`).
"""

from __future__ import annotations

import re

from assistant.paste_cache import per_analysis
from assistant.trace import Analysis
from assistant.version_words import CLAUSE_RE, FAILS_RE, PACKAGE_WORD_RE, SENTENCE_END_RE, WORKS_RE
from assistant.wording import Sentence

# "upgrade mooncake transfer-engine to latest version v0.3.11", "upgraded flashinfer to 0.4.0",
# "升级 mooncake 到 0.3.11": the package, then the version it was moved to
UPGRADE_RE = re.compile(r"\b(?:upgrad\w*|updat(?:e|ed|ing)|bump\w*)\s+(?P<what>[^.;,\n]{1,60}?)\s+to\s+"
                        r"(?:the\s+)?(?:latest\s+)?(?:version\s+|release\s+)?[vV]?\d+\.\d+"
                        r"|升级\s*(?P<what_zh>[^。；，\n]{1,40}?)\s*(?:到|至)\s*[vV]?\d+\.\d+", re.I)
# the words with which an entry speaks of a package's release as the cause
VERSION_TALK_RE = re.compile(r"\b(?:upgrad\w*|downgrad\w*|versions?|releases?|pin\w*|incompatib\w*|mismatch\w*|"
                             r"older|newer|built (?:for|against))\b|\d+\.\d+", re.I)


def upgraded_package(analysis: Analysis) -> str | None:
    """The package (not SGLang) the user says they upgraded before it failed, when their words
    also say it worked before ("works well", "was fine"); None otherwise."""
    return per_analysis("upgraded_package", analysis, _upgraded_package)


def _upgraded_package(analysis: Analysis) -> str | None:
    words = " ".join((analysis.question, *analysis.prose_lines[:40]))
    if not (WORKS_RE.search(words) and FAILS_RE.search(words)):
        return None
    for sentence in SENTENCE_END_RE.split(words):
        for match in UPGRADE_RE.finditer(sentence):
            named = PACKAGE_WORD_RE.findall(match.group("what") or match.group("what_zh") or "")
            if not named:
                # "upgrade it to 0.3.11": the package named earlier in the sentence
                named = PACKAGE_WORD_RE.findall(sentence[:match.start()])[-1:]
            if named and named[-1].lower() != "sglang" and _worked_before(words, named[-1]):
                return named[-1].lower()
    return None


def _worked_before(words: str, package: str) -> bool:
    """A clause of the user's names the package and says it worked ("with mooncake 0.3.9 works well")."""
    return any(WORKS_RE.search(clause) and re.search(re.escape(package), clause, re.I) and re.search(r"\d+\.\d+", clause)
               for clause in CLAUSE_RE.split(words))


def upgrade_unexplained(meta: dict, analysis: Analysis) -> Sentence | None:
    """The user dates the failure to upgrading a package, and the entry's title and cause do not
    speak of that package's releases: it explains the line, not the change that broke it."""
    package = upgraded_package(analysis)
    if package is None:
        return None
    about = " ".join(str(meta.get(key) or "") for key in ("title", "cause"))
    if any(VERSION_TALK_RE.search(clause) for clause in re.split(r"(?<=[.;:])\s", about)
           if re.search(re.escape(package), clause, re.I)):
        return None
    return Sentence(f"You say it worked until you upgraded {package}; this entry does not blame a {package} "
                    f"release, so it is not what changed. Pin {package} back to the release that worked (or use the "
                    "SGLang release made for the new one) to confirm.",
                    f"你说升级 {package} 之前是正常的；这个条目并不是讲 {package} 版本的问题，所以它不是变化的原因。"
                    f"先把 {package} 退回到正常的版本（或换用适配新版本的 SGLang）来确认。")
