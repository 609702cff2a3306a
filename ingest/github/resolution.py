"""How an issue thread was resolved, read from the thread: the comment that resolved it, its
commands as steps, the pull request that fixed it, the release that shipped that PR, the version
to upgrade to, and a status a user can rely on:

    resolved     confirmed: someone other than the suggester said it works (or the reporter
                 confirmed their own fix), a maintainer answered definitively and the reporter
                 did not come back with the problem, or a fix PR was merged / named as the fix
    workaround   a suggestion nobody confirmed and nobody contradicted
    unresolved   no usable suggestion: none given, or each one was contradicted later

Two steps, so a 20,000-issue cache re-reads only the threads that changed:
`thread_resolution(repo, issue, comments)` depends on the thread alone (cached with its unit;
the comments come numbered, bots and "+1" already left out by `units`);
`link_fix(resolution, pulls, releases)` adds what the repository knows (merged pull requests
that name the issue, release notes and dates) and is cheap enough to run at every index build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAINTAINER_ROLES = ("OWNER", "MEMBER", "COLLABORATOR")
VERSION = r"v?(\d+\.\d+(?:\.\d+)?(?:\.?post\d+|rc\d+|\.dev\d+)?)"

_FENCE_RE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
_SPAN_RE = re.compile(r"`([^`\n]+)`")
_QUOTE_LINE_RE = re.compile(r"^\s*>.*$", re.M)
# A reply that quotes what it answers: "> use X" (GitHub) or 'Replying to "use X": ...'
_QUOTED_ADVICE_RE = re.compile(r"(?:replying to|re:|suggestion|advice|suggested)[^\"“]{0,40}[\"“]([^\"”]{3,300})[\"”]", re.I)
_URL_RE = re.compile(r"https?://[^\s<>)\]`'\"]*[^\s<>)\]`'\".,;:!?]")
_PR_URL_RE = re.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/pull/(\d+)")
_ISSUE_URL_RE = re.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/issues/(\d+)")
_REF_RE = re.compile(r"(?<![\w/&])#(\d{1,6})\b")

# What a sentence does. Patterns are matched on prose with code spans kept (they carry commands).
_ACTION_VERBS = (r"use|install|reinstall|uninstall|upgrade|update|downgrade|pin|set|unset|export|add|remove|"
                 r"drop|pass|run|launch|start|restart|reboot|rebuild|build|compile|pull|switch|change|replace|"
                 r"enable|disable|increase|decrease|lower|reduce|raise|try|check|follow|create|apply|specify|"
                 r"avoid|put|modify|edit|delete|clear|mount|make sure|ensure|"
                 r"使用|安装|升级|降级|设置|添加|去掉|删除|尝试|更新")
_IMPERATIVE_RE = re.compile(
    rf"(?:^|[,:;(]\s*|\bthen\s+|\bplease\s+|\bjust\s+|\byou (?:can|could|should|must|need to|have to|may)\s+|"
    rf"\bI (?:suggest|recommend)(?: you)?\s+|\bwe recommend\s+|\bsimply\s+|\bfirst\s+)(?:{_ACTION_VERBS})(?![-\w])", re.I)
# "See <link>" / "follow the cookbook": a pointer to instructions, at the start of a sentence
_REFERRAL_RE = re.compile(r"^\s*(?:please\s+)?(?:see|refer to|check out|follow|read)\s+(?:the\s+)?(?:URL|CODE|docs?\b|"
                          r"documentation|guide|instructions|cookbook|readme)", re.I)
_DIRECTIVE_RE = re.compile(r"\b(?:should(?: not|n't)?|must(?: not)?|needs? to|has to|have to)\s+(?:not\s+)?(?:be\s+)?"
                           r"(?:run|used?|install|installed|set|added|removed|passed|launched|upgraded|built|"
                           r"updated|downgraded|pinned|enabled|disabled)\b|\bit needs\b", re.I)
_PLAN_RE = re.compile(r"^\s*(?:we|I)\s*(?:will|'ll|are going to|plan to|should|need to|would)\b|\bwill (?:fix|be fixed|"
                      r"relax|add|update|support|investigate|look)|\bstay tuned\b|\basked .{0,30}for help\b|"
                      r"\btake a look\b|正在修复|预计|\bis expected (?:to|tonight|today|tomorrow|soon|next|in|by)\b|\bwill be released\b|\bcoming soon\b", re.I)
_QUESTION_RE = re.compile(r"\?\s*$|？\s*$|^\s*(?:asks?|asking|wonders?)\b", re.I)
_HEDGE_RE = re.compile(r"\b(?:try|trying|maybe|might|perhaps|probably|possibl[ey]|not sure|I think|I guess|"
                       r"could you|may help|may be|seems? to (?:work|help|fix)|if it happens|check whether|"
                       r"see whether|is expected (?:to|tonight|today|tomorrow|soon|next|in|by)|will be released)\b|预计|可能", re.I)
# "it works" / "the problem is fixed": a result, positive
_POSITIVE_RE = re.compile(
    r"\b(?:(?:the )?(?:error|problem|issue|crash|hang)s?\s+(?:does(?: not|n't) (?:occur|happen|appear)|disappear\w*|"
    r"goes away|went away|is gone)|it works|works(?: now| for me| fine| well)?|worked|working now|working recipe|is fixed|fixed now|"
    r"fixed it|problem is (?:fixed|gone|solved)|solved|resolved|that did it|confirmed|success(?:fully)?|"
    r"launch(?:es|ed)? successfully|starts? (?:fine|normally|successfully)|it starts|runs fine|made it work|"
    r"does(?: not|n't) occur|disappear(?:s|ed)?|goes away|went away|no longer (?:fails|occurs|happens|crashes|see)|"
    r"unblocked|completes \d+|succeeds)\b|解决了|可以了", re.I)
# "still fails after X" / "didn't help": the suggestion was tried and did not work
_CONTRADICT_RE = re.compile(
    r"\b(?:still (?:fails?|failing|get|gets|getting|see|seeing|crash\w*|hang\w*|happen\w*|broken|not work\w*|"
    r"have|has|occurs?)|(?:does|do|did)(?: not|n't) (?:work|help|fix|solve|change)|not working|no luck|"
    r"(?:same|an?) (?:error|issue|problem|crash) (?:after|with|even)|error after|fails? after|"
    r"(?:does|do)(?: not|n't) support|(?:is|are)(?: not|n't) supported|not the (?:cause|problem|issue)|"
    r"the problem (?:is not|isn't)|already (?:use|using|tried|installed|on)|stopped working)\b", re.I)
_FAILURE_RE = re.compile(r"\b(?:error|errors|fails?|failed|failing|crash\w*|hangs?|hung|OOM|exception|"
                         r"broken|not work\w*)\b", re.I)
_ELSEWHERE_RE = re.compile(r"\b(?:another|different|separate|other) (?:\w+ ){0,3}?(?:model|issue|ticket|problem|"
                           r"error|bug)|\bnew issue\b", re.I)
_RECIPE_LABEL_RE = re.compile(r"^\s*(?:\*\*)?(?:workaround|solution|fix|recipe|hack|steps?|解决方法|解决办法)"
                              r"(?:\*\*)?\s*[:：]", re.I)
_FIRST_PERSON_ACTION_RE = re.compile(r"\bI (?:installed|used|ran|set|added|built|changed|switched|removed|upgraded|"
                                     r"downgraded|rebuilt|reinstalled|rebooted|pinned|created|fixed it)\b", re.I)
# "fixed by #123", "closes https://github.com/o/r/pull/123", "#123 fixes it", "PR #123 was merged"
FIX_PR_RES = [
    re.compile(r"\b(?:fix(?:e[sd])?|resolve[sd]?|close[sd]?|address(?:e[sd])?|solved)\b(?:(?!\bnot\b|n't)[^.\n]){0,40}?"
               r"(?:#|github\.com/[\w.-]+/[\w.-]+/pull/)(\d+)", re.I),
    re.compile(r"(?:github\.com/[\w.-]+/[\w.-]+/pull/|#)(\d+)(?:(?!\bnot\b|n't)[^.\n]){0,30}?"
               r"\b(?:fix(?:e[sd])?|resolve[sd]?|is merged|was merged|has been merged|got merged)\b", re.I),
]
_RESOLVED_WORD_RE = re.compile(r"^\s*(?:resolved|fixed|solved|done|merged)\b", re.I)
_COMMAND_START_RE = re.compile(
    r"^\s*(?:\$\s*)?(?:sudo\s+)?(?:pip3?|python3?(?:\.\d+)?|uv|conda|docker|podman|git|apt(?:-get)?|yum|export|unset|"
    r"bash|sh|cd|make|cmake|sglang|kubectl|huggingface-cli|hf|nvidia-smi|torchrun|ray|ulimit|ln|ldconfig|"
    r"CUDA_VISIBLE_DEVICES=|[A-Z][A-Z0-9_]+=\S)", re.I)
_PIP_PROSE_RE = re.compile(r"\bpip3? install\s+[^,;`\n]+?(?=\s*(?:[,;`\n]|\.(?:\s|$)|$))")
_EXPORT_PROSE_RE = re.compile(r"\bexport\s+[A-Z][A-Z0-9_]*=\S+")
_FLAG_VALUE_RE = re.compile(r"(?<![\w/.=-])--[A-Za-z][\w-]*(?:[ =](?!--)[\w./:-]+)?")
_SGLANG_PIN_RE = re.compile(r"\bsglang(?:\[\w+\])?\s*(?:==|>=|~=)\s*" + VERSION, re.I)
_UPGRADE_RES = [
    re.compile(r"\b(?:upgrade|update|upgrading|updating|move|moving|switch)\s+(?:\w+\s+){0,2}?to\s+(?:sglang\s+)?(?:version\s+)?"
               + VERSION, re.I),
    re.compile(r"\b(?:fixed|resolved|released|available|landed|shipped|included)\s+(?:in|since|from)\s+(?:the\s+)?"
               r"(?:latest\s+|next\s+|new\s+)?(?:release\s+|sglang\s+|version\s+)?\(?" + VERSION, re.I),
    re.compile(VERSION + r"\s*(?:or later|or newer|and later|and above|\+(?![\w.]))", re.I),
    re.compile(VERSION + r"\s*(?:is expected (?:to|tonight|today|tomorrow|soon|next|in|by)|will be released|is out|has been released)|发布\s*" + VERSION, re.I),
]
_DOWNGRADE_RE = re.compile(r"\bdowngrad\w*|降级", re.I)
_SGLANG_WORD_RE = re.compile(r"\bsglang\b", re.I)
_TITLE_UPGRADE_RE = re.compile(r"\b(?:upgrade|update|bump|move)\s+(?:\w+\s+){0,2}?to\s+sglang\s+" + VERSION, re.I)
# "to fix this, download <archive link>, password: ..." is a malware campaign on GitHub issues,
# never a resolution
_DOWNLOAD_SPAM_RE = re.compile(r"(?:mediafire\.com|mega\.nz|gofile\.io|pixeldrain|anonfiles|upload\.ee|dropbox\.com|"
                               r"drive\.google\.com)/\S*[\s\S]{0,300}\bpass(?:word|code)?\s*[:=]", re.I)
_GREETING_RE = re.compile(r"^\s*(?:thanks?(?: you)?|thx|cc|hi|hello|closing|close|bump|ping|sorry|apologies)\b[\s\w@,!.-]{0,40}$", re.I)
_MENTION_RE = re.compile(r"(?<![\w.])@[\w-]+")


@dataclass
class Sentence:
    text: str          # as written, code spans kept
    prose: str         # code spans replaced by a marker, for the classifiers
    line: int = 0      # which line of the text it is on
    group: int = 0     # which sentence it is a clause of ("a; b" are two clauses of one sentence)


@dataclass
class Candidate:
    """A comment (or the issue body) that suggests something the user can do."""
    index: int | None                 # position in the thread's comments; None: the issue body
    login: str
    maintainer: bool
    steps: list[dict]
    hedged: bool
    self_report: bool                 # the commenter says what worked for them
    commands: list[str]
    explanation_only: bool = False    # a maintainer's answer with nothing to run or change
    confirmed: bool = False
    contradicted: bool = False
    text: str = ""


@dataclass
class _Comment:
    index: int
    login: str
    role: str
    body: str
    sentences: list[Sentence] = field(default_factory=list)


def _code_blocks(text: str) -> list[str]:
    return [m.group(2) for m in _FENCE_RE.finditer(text)]


def sentences(text: str) -> list[Sentence]:
    """The prose of a comment as sentences (fenced blocks and quoted replies left out), split on
    sentence ends, semicolons and lines; code spans are kept whole."""
    prose = _QUOTE_LINE_RE.sub("", _FENCE_RE.sub("\n", text.replace("\r\n", "\n")))
    prose = re.sub(r"<!--.*?-->", "", prose, flags=re.S)
    spans: list[str] = []

    def hold(m: re.Match) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"
    held = _SPAN_RE.sub(hold, prose)
    first_url = len(spans)
    held = _URL_RE.sub(lambda m: hold(m), held)   # a URL's dots are not sentence ends
    out = []
    group = 0
    for line_number, line in enumerate(held.split("\n")):
        for whole in re.split(r"(?<=[.!?。！？])\s+(?=[^\s\x00a-z])", line):
            group += 1
            for piece in re.split(r";\s+|；", whole):
                piece = piece.strip(" -*•\t")
                if not piece.strip(".:"):
                    continue
                text = re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], piece)
                marked = re.sub(r"\x00(\d+)\x00", lambda m: " URL " if int(m.group(1)) >= first_url else " CODE ",
                                piece)
                out.append(Sentence(text, marked, line_number, group))
    return out


def _is_command(span: str) -> bool:
    span = span.strip()
    return bool(_COMMAND_START_RE.match(span) or span.startswith("--") or re.search(r"\s--[A-Za-z]", span)
                or re.fullmatch(r"[\w.\[\]-]+\s*(?:==|>=|<=|~=)\s*[\w.]+", span))


def commands_in(text: str) -> list[str]:
    """Commands a piece of text gives: command-like code spans and block lines, `pip install ...`
    and `export VAR=...` written in prose, and `--flag value` pairs outside code."""
    found: list[str] = []
    for block in _code_blocks(text):
        lines = [ln.strip().lstrip("$ ").strip() for ln in block.replace("\\\n", " ").splitlines() if ln.strip()]
        if lines and sum(map(_is_command, lines)) >= max(1, len(lines) // 2):
            found += [ln for ln in lines if _is_command(ln)]
    without_blocks = _FENCE_RE.sub(" ", text)
    for m in _SPAN_RE.finditer(without_blocks):
        if _is_command(m.group(1)):
            found.append(m.group(1).strip())
    prose = _SPAN_RE.sub(" ", without_blocks)
    found += [m.group(0).strip().rstrip(".") for m in _PIP_PROSE_RE.finditer(prose)]
    found += [m.group(0) for m in _EXPORT_PROSE_RE.finditer(prose)]
    if not found:
        found += [m.group(0) for m in _FLAG_VALUE_RE.finditer(_URL_RE.sub(" ", prose))]
    return list(dict.fromkeys(c for c in found if len(c) >= 3))


def _command_likeness(a: str, b: str) -> float:
    """How much two commands are the same command (Jaccard of their words, so `pkg=1.0` and
    `pkg==1.0` agree and `pip install -U --no-deps pkg` differs from `pip install pkg`)."""
    wa, wb = set(re.findall(r"[\w.]+", a.lower())), set(re.findall(r"[\w.]+", b.lower()))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def _is_noise_sentence(s: Sentence) -> bool:
    bare = _MENTION_RE.sub("", s.prose).strip(" ,.:;!")
    greeting = bool(_GREETING_RE.match(bare)) and not re.search(r"\d|\bfix", bare, re.I)   # not "Closing: fixed in 0.5.3"
    return (not bare or greeting or bool(_QUESTION_RE.search(s.prose))
            or (bool(_PLAN_RE.search(s.prose)) and not re.search(VERSION, s.prose)))


def _is_action(s: Sentence) -> bool:
    prose = s.prose
    if _QUESTION_RE.search(prose) or (_PLAN_RE.search(prose) and not re.search(VERSION, prose)):
        return False
    if _CONTRADICT_RE.search(prose):   # "with `pip install X` it still fails" reports, not advises
        return False
    if (_IMPERATIVE_RE.search(prose) or _DIRECTIVE_RE.search(prose) or _RECIPE_LABEL_RE.match(prose)
            or _REFERRAL_RE.match(prose)):
        return True
    if (any(r.search(s.text) for r in _UPGRADE_RES) or _SGLANG_PIN_RE.search(s.text)) and not _failure(prose):
        return True
    return bool(" CODE " in prose and any(_is_command(m.group(1)) for m in _SPAN_RE.finditer(s.text))
                and not _FAILURE_RE.search(_POSITIVE_RE.sub(" ", prose)))


def _positive(prose: str) -> bool:
    return bool(_POSITIVE_RE.search(prose)) and not _CONTRADICT_RE.search(prose)


def _failure(prose: str) -> bool:
    """The sentence reports that something failed (positive phrases like "the error does not
    occur" are taken out first)."""
    return bool(_FAILURE_RE.search(_POSITIVE_RE.sub(" ", prose)))


def _fix_claims(text: str, own_repo: str, own_number: int) -> tuple[list[int], list[int], list[str]]:
    """Pull requests a text names as the fix (past or present: "fixed by #N", "#N should fix",
    "Resolved. The PR is <url>"), ones it names as a future fix ("will be fixed in #N"), and
    pull request URLs of other repositories."""
    fixed, pending, elsewhere = [], [], []
    for m in _PR_URL_RE.finditer(text):
        if m.group(1).lower() != own_repo.lower():
            elsewhere.append(m.group(0))
    for s in sentences(text) or [Sentence(text, text)]:
        refs = _pr_refs(s.text, own_repo)
        if not refs:
            continue
        future = bool(_PLAN_RE.search(s.text) or re.search(r"\bwill\b|\bsoon\b|\bgoing to\b", s.text, re.I))
        claimed = [int(m.group(1)) for r in FIX_PR_RES for m in r.finditer(s.text)]
        claimed = [n for n in claimed if n in refs]
        for n in refs:
            if n == own_number:
                continue
            if n in claimed and not future:
                fixed.append(n)
            elif future or n in claimed:
                pending.append(n)
    # "Resolved. The PR is <url>": the claim and the PR are in neighbouring sentences
    if not fixed and _RESOLVED_WORD_RE.match(text.strip()):
        fixed += [n for n in _pr_refs(text, own_repo) if n != own_number]
    return list(dict.fromkeys(fixed)), list(dict.fromkeys(n for n in pending if n not in fixed)), elsewhere


def _pr_refs(text: str, own_repo: str) -> list[int]:
    refs = [int(m.group(2)) for m in _PR_URL_RE.finditer(text) if m.group(1).lower() == own_repo.lower()]
    refs += [int(m.group(1)) for m in _REF_RE.finditer(_URL_RE.sub(" ", text))]
    return list(dict.fromkeys(refs))


def _upgrade_version(texts: list[str], sglang_repo: bool) -> str | None:
    """The SGLang version a piece of advice says to move to ("upgrade to 0.5.3", "sglang==0.4.6.post1",
    "fixed in 0.5.15", "0.5.0rc1 is expected"); not a downgrade, not a version something broke in."""
    for text in texts:
        for s in sentences(text):
            if _DOWNGRADE_RE.search(s.text):
                continue
            about_sglang = sglang_repo or bool(_SGLANG_WORD_RE.search(text))
            m = _SGLANG_PIN_RE.search(s.text)
            if m and re.search(r"\b(?:install|upgrade|update|use|pip|requires?)\b", s.text, re.I):
                return _normal_version(m.group(1))
            for regex in _UPGRADE_RES:
                for m in regex.finditer(s.text):
                    pinned = re.search(r"([\w.\[\]-]+)\s*(?:==|>=|~=)\s*v?$", s.text[:m.start()])
                    if about_sglang and not (pinned and not pinned.group(1).lower().startswith("sglang")):
                        return _normal_version(next(g for g in m.groups() if g))   # not vllm==0.6.5
    return None


def _normal_version(version: str) -> str:
    """"0.3.1post1" as "0.3.1.post1" (how pip and the release tags write it)."""
    from packaging.version import InvalidVersion, Version

    try:
        return str(Version(version))
    except InvalidVersion:
        return version


def _steps_from(text: str, maintainer_body: bool = False) -> list[dict]:
    """The sentences of the resolving text that a user acts on or needs to know, with their commands."""
    steps: list[dict] = []
    last_group = None
    for s in sentences(text):
        if _is_noise_sentence(s):
            continue
        if maintainer_body and not (" CODE " in s.prose or _is_action(s)):
            continue   # a maintainer's issue body: only its instructions
        clean = " ".join(_MENTION_RE.sub("", s.text).split()).strip(" ,;")
        if len(clean) < 3:
            continue
        if steps and s.group == last_group:   # clauses of one sentence stay one step
            steps[-1] = {"text": f"{steps[-1]['text']}; {clean}", "commands": steps[-1]["commands"] + commands_in(s.text)}
        else:
            steps.append({"text": clean, "commands": commands_in(s.text)})
        last_group = s.group
    blocks = [c for b in _code_blocks(text) for c in commands_in(f"```\n{b}\n```")]
    if blocks:
        steps.append({"text": "Run:", "commands": blocks})
    return steps[:8]


def _comment_kind(c: _Comment, maintainer: bool) -> tuple[bool, bool, bool, bool, bool]:
    """(suggests something, hedged, reports its own success, reports a failure of it, only explains)."""
    prose = [s.prose for s in c.sentences]
    joined = " ".join(prose)
    actions = [s for s in c.sentences if _is_action(s)]
    positive = any(_positive(p) for p in prose)
    own_commands = commands_in(_own_text(c.body))
    self_report = positive and bool(own_commands or actions or _FIRST_PERSON_ACTION_RE.search(joined)
                                    or re.search(r"\b(?:by|with|using|after)\b", joined, re.I))
    first_person = bool(_FIRST_PERSON_ACTION_RE.search(joined)) and bool(own_commands)
    explanation = (maintainer and not actions and len(_MENTION_RE.sub("", joined)) >= 60
                   and sum(not _is_noise_sentence(s) for s in c.sentences) >= 2)
    # "X works, but the server errors on the first request": the comment itself says it fails
    self_failed = any(re.search(r"\bbut\b", p, re.I) and _failure(p.split("but", 1)[-1]) for p in prose)
    # a maintainer's command block ("this should run: ```sglang serve ...```") is advice; a user's
    # is usually their own failing launch command
    block_advice = maintainer and any(commands_in(f"```\n{b}\n```") for b in _code_blocks(_own_text(c.body))) \
        and not any(_failure(p) for p in prose)
    suggests = bool(actions or self_report or first_person or explanation or block_advice
                    or any(_RECIPE_LABEL_RE.match(p) for p in prose))
    hedged = bool(_HEDGE_RE.search(joined))
    only_explains = explanation and not (actions or block_advice or self_report or first_person)
    return suggests and not self_failed, hedged, self_report or first_person, self_failed, only_explains


def _own_text(body: str) -> str:
    """A comment without the lines it quotes ("> ..."): what its author wrote."""
    return _QUOTE_LINE_RE.sub("", body)


def _quoted_advice(body: str) -> str:
    quoted = [m.group(1) for m in _QUOTED_ADVICE_RE.finditer(body)]
    quoted += [ln.lstrip("> ").strip() for ln in _QUOTE_LINE_RE.findall(body)]
    return " ".join(q for q in quoted if q)


def thread_resolution(repo: str, issue: dict, comments: list[tuple[int, dict]]) -> dict:
    """What the thread itself says about its resolution (see the module docstring). `comments`:
    the human comments as (position in the thread, REST comment)."""
    number = int(issue["number"])
    author = str((issue.get("user") or {}).get("login") or "")
    author_is_maintainer = issue.get("author_association") in MAINTAINER_ROLES
    state = str(issue.get("state") or "open").lower()
    state_reason = (issue.get("state_reason") or "").lower() or None
    body = str(issue.get("body") or "")
    sglang_repo = "sglang" in repo.lower()

    thread: list[_Comment] = []
    by_index = dict(comments)
    for i, c in comments:
        text = str(c.get("body") or "")
        if not text.strip() or _DOWNLOAD_SPAM_RE.search(text):
            continue
        login = str((c.get("user") or {}).get("login") or "ghost")
        role = str(c.get("author_association") or "NONE")
        author_is_maintainer |= login == author and role in MAINTAINER_ROLES
        thread.append(_Comment(i, login, role, text, sentences(text)))

    candidates: list[Candidate] = []
    notes: list[str] = []
    fixed_prs, pending_prs, elsewhere = [], [], []
    fix_comment: int | None = None

    # the body: a maintainer's instructions, or what the reporter found works ("with --x it starts")
    body_sents = sentences(body)
    body_steps = _steps_from(body, maintainer_body=True) if author_is_maintainer else []
    recipe_lines = {s.line for s in body_sents if _RECIPE_LABEL_RE.match(s.prose)}   # "Recipe: a; b; c"
    found = [s for s in body_sents if s.line in recipe_lines or (
        (" CODE " in s.prose or _is_action(s)) and _positive(s.prose) and not _failure(s.prose))]
    if found and not body_steps:
        body_steps = [{"text": " ".join(s.text.split()), "commands": commands_in(s.text)} for s in found]
        candidates.append(Candidate(None, author, author_is_maintainer, body_steps, True, True,
                                    [c for st in body_steps for c in st["commands"]], text=body))
    b_fixed, b_pending, b_else = _fix_claims(body, repo, number)
    pending_prs += b_fixed + b_pending   # the reporter naming a PR is no claim that it fixed anything
    elsewhere += b_else

    for c in thread:
        maintainer = c.role in MAINTAINER_ROLES
        suggests, hedged, self_report, self_failed, only_explains = _comment_kind(c, maintainer)
        prose = " ".join(s.prose for s in c.sentences)
        c_fixed, c_pending, c_else = _fix_claims(c.body, repo, number)
        fixed_prs += c_fixed
        pending_prs += c_pending
        elsewhere += c_else
        if c_fixed:
            fix_comment = c.index
        earlier = [k for k in candidates if k.login != c.login and not k.contradicted]
        quoted = _quoted_advice(c.body)
        contradiction = bool(_CONTRADICT_RE.search(prose) or _CONTRADICT_RE.search(c.body)) \
            and not _ELSEWHERE_RE.search(prose)
        if contradiction and (earlier or quoted):
            # the suggestion whose command the comment repeats (theirs or anyone's), else the
            # latest one by someone else
            cmds = commands_in(c.body)
            live_before = [k for k in candidates if not k.contradicted]
            scored = [(max(_command_likeness(cmd, kc) for cmd in cmds for kc in k.commands), i, k)
                      for i, k in enumerate(live_before) if cmds and k.commands]
            best = max(scored, key=lambda x: (x[0], x[1]), default=None)
            target = best[2] if best and best[0] >= 0.5 else None
            if target is None and not cmds and not quoted and earlier:
                target = earlier[-1]
            if target is not None:
                target.contradicted = True
                first = next((s.text for s in c.sentences if _CONTRADICT_RE.search(s.prose)), c.sentences[0].text
                             if c.sentences else "")
                notes.append(f"A later comment disputes a suggestion: {' '.join(_MENTION_RE.sub('', first).split())}")
            if not suggests:   # "X still fails; Y works" goes on as a suggestion of its own
                continue
        else:
            confirms = any(_positive(s.prose) for s in c.sentences) and not hedged and not _QUESTION_RE.search(prose)
            own_commands = commands_in(_own_text(c.body))
            if confirms and quoted and not own_commands:
                # "> try X" + "this worked": the quoted suggestion is confirmed; if the thread does not
                # hold it ("Replying to 'upgrade torch to 2.6': it works"), the quote is the advice
                quoted_cmds = commands_in(quoted)
                target = next((k for k in reversed(earlier) if " ".join(quoted.split()).lower() in " ".join(k.text.split()).lower()
                               or any(_command_likeness(q, kc) >= 0.5 for q in quoted_cmds for kc in k.commands)), None)
                if target is not None:
                    target.confirmed = True
                else:
                    candidates.append(Candidate(c.index, c.login, maintainer, [{"text": quoted, "commands": quoted_cmds}],
                                                False, False, quoted_cmds, confirmed=True, text=quoted))
                continue
            if confirms and earlier and not (self_report and own_commands):
                earlier[-1].confirmed = True
                continue
        if suggests:
            cand = Candidate(c.index, c.login, maintainer, _steps_from(c.body), hedged, self_report,
                             commands_in(c.body), explanation_only=only_explains, text=c.body)
            # the reporter saying their own fix works, unhedged, is a confirmation
            cand.confirmed = self_report and c.login == author and not hedged and not self_failed
            # a later, more detailed comment of someone whose fix was confirmed inherits it
            if any(k.login == c.login and k.confirmed for k in candidates):
                cand.confirmed = True
            candidates.append(cand)

    live = [k for k in candidates if not k.contradicted]
    leader = (next((k for k in reversed(live) if k.confirmed), None)
              or next((k for k in reversed(live) if k.maintainer and not k.explanation_only), None)
              or next((k for k in reversed(live) if k.maintainer), None)
              or (live[-1] if live else None))
    status, basis = "unresolved", None
    if leader is not None:
        status = "workaround"
        if leader.confirmed:
            status, basis = "resolved", "confirmed"
        elif leader.maintainer and not leader.hedged and state_reason != "not_planned" and leader.index is not None:
            # a maintainer's definitive answer, unless the reporter's side had the last word with
            # a question or the problem again
            after = [c for c in thread if c.index > leader.index]
            last = after[-1] if after else None
            unsatisfied = last is not None and last.role not in MAINTAINER_ROLES and (
                bool(_QUESTION_RE.search(" ".join(s.prose for s in last.sentences)))
                or _failure(" ".join(s.prose for s in last.sentences)))
            status, basis = ("workaround", None) if unsatisfied else ("resolved", "maintainer")

    steps = list(leader.steps) if leader else []
    if leader and leader.index is not None and author_is_maintainer and body_steps:
        steps = steps + [s for s in body_steps if s not in steps]
    upgrade_texts = [leader.text] if leader else []
    upgrade_to = _upgrade_version(upgrade_texts, sglang_repo)
    if upgrade_to is None and leader is not None:
        m = _TITLE_UPGRADE_RE.search(str(issue.get("title") or ""))
        upgrade_to = m.group(1) if m else None
    related = [n for n in _pr_refs(body + "\n" + "\n".join(c.body for c in thread), repo)
               if n != number and n not in fixed_prs and n not in pending_prs]
    related += [int(m.group(2)) for m in _ISSUE_URL_RE.finditer(body) if int(m.group(2)) != number
                and m.group(1).lower() == repo.lower()]
    for n in dict.fromkeys(pending_prs):
        notes.append(f"A fix is tracked in #{n}.")
    comment = by_index.get(leader.index) if leader and leader.index is not None else None
    return {
        "status": status,
        "basis": basis,                # why resolved: "confirmed", "maintainer" or (link_fix) "fix_pr"
        "comment": leader.index if leader else None,
        "comment_url": (comment or {}).get("html_url"),
        "by": ({"login": leader.login, "role": "maintainer" if leader.maintainer else
                ("reporter" if leader.login == author else "user")} if leader else None),
        "steps": steps,
        "claimed_prs": list(dict.fromkeys(fixed_prs)),
        "pending_prs": list(dict.fromkeys(n for n in pending_prs if n not in fixed_prs)),
        "fix_comment": fix_comment,
        "other_repo_prs": list(dict.fromkeys(elsewhere)),
        "related": list(dict.fromkeys(related))[:5],
        "upgrade_to": upgrade_to,
        "notes": list(dict.fromkeys(notes))[:4],
        "closed_as": (state_reason or "completed") if state == "closed" else None,
        "fix_pr": None, "fix_pr_merged_at": None, "fixed_in": None, "fixed_in_basis": None,
    }


PR_CLOSING_RE = re.compile(r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\s*:?\s+#(\d+)|\(#(\d+)\)\s*$", re.I | re.M)


def pull_request_record(item: dict) -> dict:
    """What the index keeps of a pull request from the issue listing: its number, title, when it
    was merged, and the issues its title or body say it fixes."""
    text = f"{item.get('title') or ''}\n{item.get('body') or ''}"
    refs = [int(a or b) for a, b in PR_CLOSING_RE.findall(text)]
    return {"number": int(item["number"]), "title": item.get("title"), "updated_at": item.get("updated_at"),
            "merged_at": (item.get("pull_request") or {}).get("merged_at"), "fixes": list(dict.fromkeys(refs))}


def prs_by_issue(pulls: dict[int, dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for pr in pulls.values():
        for n in pr.get("fixes") or []:
            out.setdefault(int(n), []).append(pr)
    return out


def release_containing(pr: int, merged_at: str | None, releases: list[dict]) -> tuple[str | None, str | None]:
    """The first release that contains a pull request: the oldest whose notes name it (`/pull/N`,
    `#N`), else the first published after it was merged. (version, "notes" | "date")."""
    usable = sorted((r for r in releases if not r.get("draft") and r.get("published_at")),
                    key=lambda r: r["published_at"])
    named = re.compile(rf"/pull/{pr}\b|(?<![\w&])#{pr}\b")
    for r in usable:
        if named.search(r.get("body") or ""):
            return release_version(r), "notes"
    if merged_at:
        after = [r for r in usable if r["published_at"] >= merged_at]
        stable = [r for r in after if not r.get("prerelease")]
        if stable or after:
            return release_version((stable or after)[0]), "date"
    return None, None


def release_version(release: dict) -> str:
    tag = str(release.get("tag_name") or release.get("name") or "")
    m = re.search(r"\d+\.\d+(?:\.\d+)?(?:\.?post\d+|rc\d+)?", tag)
    return m.group(0) if m else tag


def link_fix(resolution: dict, closed_completed: bool, linked: list[dict], pulls: dict[int, dict],
             releases: list[dict]) -> dict:
    """Add the repository's knowledge to a thread's resolution: the fix PR (a merged PR that names
    the issue, or one the thread names as the fix), the release that shipped it, and the status
    that a merged fix implies. `linked`: PRs whose title/body name the issue; `pulls`: all PRs."""
    res = dict(resolution)
    claimed = list(res.get("claimed_prs") or [])
    named = claimed + list(res.get("pending_prs") or [])
    merged = {pr["number"]: pr for pr in linked if pr.get("merged_at")}
    merged.update({n: pulls[n] for n in named if n in pulls and pulls[n].get("merged_at")})
    fix = None
    if merged:
        fix = next((n for n in reversed(claimed) if n in merged), None) or \
            max(merged.values(), key=lambda pr: pr["merged_at"])["number"]
    elif claimed:
        fix = claimed[-1]
    res["fix_pr"] = fix
    if fix is not None:
        merged_at = (merged.get(fix) or pulls.get(fix) or {}).get("merged_at")
        res["fix_pr_merged_at"] = merged_at
        res["fixed_in"], res["fixed_in_basis"] = release_containing(fix, merged_at, releases)
        res["pending_prs"] = [n for n in res.get("pending_prs") or [] if n != fix]
        res["notes"] = [n for n in res.get("notes") or [] if f"#{fix}." not in n]
        if (merged_at or closed_completed) and res.get("status") != "resolved":
            res["status"], res["basis"] = "resolved", "fix_pr"
            if res.get("comment") is None and res.get("fix_comment") is not None and fix in claimed:
                res["comment"] = res["fix_comment"]
    if res.get("fixed_in"):
        res["upgrade_to"] = res["fixed_in"]
    return res


def resolution_text(res: dict) -> str:
    """Everything an answer shows of a resolution, as one text (what a reader can check)."""
    parts = [s["text"] + " " + " ".join(s.get("commands") or []) for s in res.get("steps") or []]
    parts += res.get("notes") or []
    if res.get("fix_pr"):
        parts.append(f"Fixed by #{res['fix_pr']}")
    if res.get("fixed_in"):
        parts.append(f"released in {res['fixed_in']}")
    if res.get("upgrade_to"):
        parts.append(f"upgrade to {res['upgrade_to']}")
    parts += [f"#{n}" for n in (res.get("related") or []) + (res.get("pending_prs") or [])]
    return "\n".join(parts)
