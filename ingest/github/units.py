"""One issue thread as one index unit: bots, stale notices and "+1" comments dropped, long
threads capped (start, maintainers' answers, end), check_env dumps summarised, the pasted error
lines kept as signatures, and whether and how the thread was resolved (`resolution`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import assistant.environment
import assistant.trace
import ingest.documents
import ingest.github.resolution
from assistant.environment import SGLANG_VERSION_RES
from assistant.trace import EXCEPTION_RE, FATAL_RE, analyze
from ingest.documents import Unit, _blocks, bounded_chunks, split_text
from ingest.github.resolution import FIX_PR_RES, thread_resolution

MAINTAINER_ROLES = ("OWNER", "MEMBER", "COLLABORATOR")

# Thread cap: a 300-comment thread is mostly "+1" and repeats; the start says what broke, the end
# how it ended, and maintainers' comments in between carry the workarounds.
HEAD_COMMENTS = 15
TAIL_COMMENTS = 10
MIDDLE_MAINTAINER_COMMENTS = 5
MAX_CHUNKS = 24                   # per issue, after the cap
MAX_BLOCK_LINES = 120             # a pasted log longer than this keeps its first and last lines

BOT_LOGINS = frozenset({"github-actions", "stale", "sglang-bot", "dependabot", "codecov", "mergify",
                        "gemini-code-assist", "coderabbitai", "copilot", "allcontributors"})
STALE_RE = re.compile(
    r"automatically (?:been )?marked as stale|has been automatically closed|closed (?:due to|because of|"
    r"because it has been) inactiv|marked as stale because it has not had recent activity|"
    r"This issue has been inactive for|will be closed if no further activity", re.I)
STALE_CLOSE_RE = re.compile(r"has been automatically closed|closed (?:due to|because of|because it has been) inactiv|"
                            r"closing (?:this|it) (?:due to|for) inactiv", re.I)
NOISE_RE = re.compile(r"^\s*(?:\+1|same(?: here| issue| problem| error)?|me too|bump|any updates?\??|"
                      r"any progress\??|following|subscribe|👍)[\s.!]*$", re.I)
GENERIC_ERRORS = re.compile(r"Exception in ASGI application|Scheduler hit an exception|^ERROR:\s*$|"
                            r"^Error:?\s*$|Traceback|subprocess\.CalledProcessError", re.I)


_FENCED_RE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)
_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_DETAILS_RE = re.compile(r"</?(?:details|summary)>", re.I)
_CHECKLIST_RE = re.compile(r"^(?:#+\s*Checklist\s*|\s*[-*] \[[ xX]\] .*)\n?", re.M)


def _login(obj: dict) -> str:
    return str((obj.get("user") or {}).get("login") or "ghost")


def is_bot_comment(comment: dict) -> bool:
    user = comment.get("user") or {}
    login = str(user.get("login") or "").lower()
    return (user.get("type") == "Bot" or login.endswith("[bot]") or login in BOT_LOGINS
            or bool(STALE_RE.search(comment.get("body") or "")))


def _is_maintainer(comment: dict, author: str) -> bool:
    return comment.get("author_association") in MAINTAINER_ROLES and _login(comment) != author


def _clean(text: str) -> str:
    """Drop template comments, checklists and <details> tags that issue forms leave in bodies."""
    text = _HTML_COMMENT_RE.sub("", text.replace("\r\n", "\n"))
    text = _CHECKLIST_RE.sub("", text)   # the bug form's checklist says nothing about the bug
    return _DETAILS_RE.sub("", text).strip()


def _trim_long_blocks(text: str) -> str:
    """A pasted log of thousands of lines keeps its head and its end (where the error is)."""
    def trim(m: re.Match) -> str:
        lines = m.group(0).split("\n")
        if len(lines) <= MAX_BLOCK_LINES:
            return m.group(0)
        head, tail = lines[:40], lines[-(MAX_BLOCK_LINES - 40):]
        return "\n".join(head + [f"... ({len(lines) - len(head) - len(tail)} lines omitted) ..."] + tail)
    return _FENCED_RE.sub(trim, text)


_ENV_KEYS_RE = re.compile(r"^\s*(?:Python|CUDA available|GPU \d[\d,]*|CUDA_HOME|NVCC|CUDA Driver Version|PyTorch|"
                          r"sglang|sgl_kernel|flashinfer(?:_python)?|triton|transformers|torchao|numpy|"
                          r"NVIDIA Topology|ulimit soft|Hypervisor vendor)\s*:", re.M)


def _summarize_env_blocks(body: str, analysis) -> str:
    """`python3 -m sglang.check_env` output is near-identical in every report: it would make all
    issues look alike to the embedding. One line with the versions says what matters in it."""
    env = analysis.environment

    def summarize(m: re.Match) -> str:
        if len(_ENV_KEYS_RE.findall(m.group(0))) < 4:
            return m.group(0)
        parts = [f"sglang {env.sglang_version}" if env.sglang_version else "",
                 f"torch {env.torch_version}" if env.torch_version else "",
                 f"CUDA {env.cuda_version}" if env.cuda_version else "",
                 f"flashinfer {env.flashinfer_version}" if env.flashinfer_version else "", env.gpu or ""]
        return "Environment: " + ", ".join(p for p in parts if p)
    return _FENCED_RE.sub(summarize, body)


def _is_error_block(block: str) -> bool:
    return any(EXCEPTION_RE.match(ln.strip()) or FATAL_RE.search(ln) for ln in block.splitlines()[:400])


def _first_error_block(body: str) -> str:
    for block in _blocks(body):
        starts_code = block.lstrip().startswith(("```", "~~~", "Traceback"))
        if starts_code and _is_error_block(block):
            return block
    return ""


def issue_signatures(body: str, analysis=None, limit: int = 3) -> list[str]:
    """The error lines of the issue's pasted logs, so a user's log can match them exactly."""
    analysis = analysis or analyze(body)
    code = "\n".join(m.group(0) for m in _FENCED_RE.finditer(body)) or body
    out = []
    for error in analysis.errors:
        text = error.text.strip().strip("`").strip()
        if error.kind not in ("exception", "fatal") or len(text) < 20 or GENERIC_ERRORS.search(text) \
                or text not in code:   # prose that says "failed to start" is not a signature
            continue
        out.append(text[:300])
        if len(out) == limit:
            break
    return out


FIXED_IN_RE = re.compile(r"\b(?:fixed in|upgrade to|upgrading to|released in|available in|landed in|works (?:in|on)|"
                         r"sglang\s*>=)\s*(?:sglang\s*)?v?(\d+\.\d+\.\d+(?:\.?post\d+|rc\d+)?)", re.I)


def _versions(texts: Iterable[str]) -> list[str]:
    """SGLang versions the thread names: "sglang 0.5.2", check_env output, "fixed in 0.5.3"."""
    found: list[str] = []
    for text in texts:
        for regex in (*SGLANG_VERSION_RES, FIXED_IN_RE):
            for m in regex.finditer(text):
                if m.group(1) not in found:
                    found.append(m.group(1))
    return found[:6]


def _fix_pr(texts: Iterable[str], own_number: int) -> int | None:
    """The last pull request a comment says fixes the issue."""
    fix = None
    for text in texts:
        for regex in FIX_PR_RES:
            for m in regex.finditer(text):
                if int(m.group(1)) != own_number:
                    fix = int(m.group(1))
    return fix


def _first_sentence(text: str) -> str:
    prose = _FENCED_RE.sub(" ", text)
    prose = " ".join(ln.strip() for ln in prose.splitlines() if ln.strip() and not ln.lstrip().startswith(">"))
    m = re.match(r"(.{12,}?[.!?])(?:\s|$)", prose)
    sentence = (m.group(1) if m else prose).strip()
    return sentence[:200] + ("..." if len(sentence) > 200 else "")


def _cap_thread(comments: list[dict], author: str) -> tuple[list[dict], int]:
    cap = HEAD_COMMENTS + TAIL_COMMENTS
    if len(comments) <= cap + MIDDLE_MAINTAINER_COMMENTS:
        return comments, 0
    middle = comments[HEAD_COMMENTS:-TAIL_COMMENTS]
    answers = [c for c in middle if _is_maintainer(c, author)][-MIDDLE_MAINTAINER_COMMENTS:]
    kept = comments[:HEAD_COMMENTS] + answers + comments[-TAIL_COMMENTS:]
    return kept, len(comments) - len(kept)


def issue_unit(repo: str, record: dict) -> Unit | None:
    """An issue and its discussion as one unit; None for pull requests."""
    issue = record["issue"]
    if issue.get("pull_request"):
        return None
    number = int(issue["number"])
    title = " ".join(str(issue.get("title") or "").split()) or f"Issue #{number}"
    author = _login(issue)
    body = _trim_long_blocks(_clean(str(issue.get("body") or "")))
    all_comments = record.get("comments") or []
    human = [c for c in all_comments if not is_bot_comment(c)]
    bots = len(all_comments) - len(human)
    comments = [c for c in human if not NOISE_RE.match(c.get("body") or "")]
    shown, omitted = _cap_thread(comments, author)
    maintainer = [c for c in comments if _is_maintainer(c, author)]

    analysis = analyze(body)
    body = _summarize_env_blocks(body, analysis)
    signatures = issue_signatures(body, analysis)
    first_error = _first_error_block(body)
    head = [title]
    if first_error and len(first_error) > 1200:
        head += signatures   # the embedding reads ~250 tokens: put the error lines where it looks
    head.append(first_error or (split_text(body)[:1] or [""])[0])
    chunks = bounded_chunks("\n".join(p for p in head if p))   # one chunk, unless it is huge
    rest = body.replace(first_error, "", 1) if first_error else "\n\n".join(split_text(body)[1:])
    thread = [rest] if rest.strip() else []   # packed with the first comments: fewer, fuller chunks
    for i, comment in enumerate(shown):
        if omitted and i == HEAD_COMMENTS:
            thread.append(f"[... {omitted} comments of this thread not indexed ...]")
        role = (comment.get("author_association") or "NONE").lower()
        thread.append(f"{_login(comment)} ({role}): {_trim_long_blocks(_clean(comment.get('body') or ''))}")
    chunks += split_text("\n\n".join(thread)) if thread else []
    chunks = [c for c in chunks if c.strip()]
    if len(chunks) > MAX_CHUNKS:   # keep the start and the end of the discussion
        chunks = chunks[: MAX_CHUNKS - 6] + chunks[-6:]

    state = str(issue.get("state") or "open").lower()
    state_reason = (issue.get("state_reason") or "").lower() or None
    texts = [body] + [c.get("body") or "" for c in comments]
    fix_pr = _fix_pr(texts, number)
    stale_closed = bool(state == "closed" and all_comments and STALE_CLOSE_RE.search(all_comments[-1].get("body") or ""))
    resolved = bool(state == "closed" and state_reason in (None, "completed") and not stale_closed
                    and (maintainer or fix_pr))
    summary = ""
    if resolved:
        answers = [c for c in maintainer if not (c.get("body") or "").rstrip().endswith("?")]   # not "which version?"
        sentence = _first_sentence(answers[-1].get("body") or "") if answers else ""
        pr_note = f"Fixed by PR #{fix_pr}." if fix_pr and f"#{fix_pr}" not in sentence and f"/{fix_pr}" not in sentence else ""
        summary = " ".join(p for p in (sentence, pr_note) if p)
    # the comment that resolved the thread, its steps, fix PR and status (the repository's PRs and
    # releases are added when units are read: store.link_repository)
    numbered = [(i, c) for i, c in enumerate(all_comments)
                if not is_bot_comment(c) and not NOISE_RE.match(c.get("body") or "")]
    resolution = thread_resolution(repo, issue, numbered) | {"summary": summary}
    env = analysis.environment
    meta = {
        "number": number, "repo": repo, "state": state, "state_reason": state_reason,
        "labels": [label["name"] if isinstance(label, dict) else str(label) for label in issue.get("labels") or []],
        "created_at": issue.get("created_at"), "updated_at": issue.get("updated_at"),
        "closed_at": issue.get("closed_at"), "author": author,
        "versions": _versions([title, *texts]),
        "env": {k: v for k, v in (("torch", env.torch_version), ("cuda", env.cuda_version),
                                  ("gpu", env.gpu), ("hardware", env.hardware)) if v},
        "maintainer_answered": bool(maintainer), "fix_pr": fix_pr, "resolved": resolved,
        "resolution": resolution, "signatures": signatures,
        "comments_total": len(all_comments), "comments_indexed": len(shown),
        "bot_comments_dropped": bots, "comments_omitted": omitted,
    }
    return Unit(id=f"gh:{repo}#{number}", kind="issue", title=title, chunks=chunks,
                url=issue.get("html_url"), meta=meta)


@lru_cache(maxsize=1)
def unit_code_version() -> str:
    """Changes whenever the code that shapes units does, so cached units are rebuilt."""
    h = hashlib.sha256()
    for path in (__file__, assistant.trace.__file__, assistant.environment.__file__,
                 ingest.documents.__file__, ingest.github.resolution.__file__):
        h.update(Path(path).read_bytes())
    return h.hexdigest()[:12]
