"""Secrets out of everything a user or a log sees: the one scrubber every surface uses.

    redact("HTTP 500: Authorization: Bearer sk-abc...")   -> "HTTP 500: Authorization: [redacted]"
    redact(text, secrets=[client.api_key])                 also hides these exact values
    install_log_redaction()                                every log line (tracebacks too) scrubbed

It hides well-known token shapes (Slack, Hugging Face, OpenAI-style, GitHub, AWS, JWTs),
Authorization / API-key headers, `--api-key X` style options, `password=...` assignments,
credentials in URLs, and the exact values of the secrets this process was given through the
environment (ASK_API_KEY, SLACK_*_TOKEN, SLACK_SIGNING_SECRET, GITHUB_TOKEN, ...). Text that comes
back from a server is scrubbed like a user's paste: an error page may repeat the request's headers.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable

REDACTED = "[redacted]"
# Environment variables whose values are secrets wherever they show up again.
SECRET_ENV_VARS = ("ASK_API_KEY", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET",
                   "SLACK_CLIENT_SECRET", "GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN",
                   "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY")
MIN_SECRET_CHARS = 6   # shorter values ("1", "yes") would blank out ordinary words

# values that only stand for a secret: $HF_TOKEN, <key>, Bearer <key>, [0-9]*, EMPTY (the OpenAI
# client's dummy key), hf_... (a prefix and an ellipsis); the words of a sentence about a flag
# ("start it with --api-key and send the key", "--api-key in its command line"); and code, a call
# such as `offs_token = offs_token.to(tl.int64)` in a traceback's source line
_PROSE_WORD = r"(?:and|or|the|a|an|in|on|of|to|is|are|was|with|without|for|from|as|at|but|then|when|if|set|flag|option)"
_PLACEHOLDER = (rf"(?!\$|<|\[|\{{|\*|Bearer\s+(?:<|\$)|[A-Za-z_]\w*(?:\.\w+)*\(|[\u3400-\u9fff\uff00-\uffef]|"
                rf"[\w-]*(?:\.\.\.|…)|(?:EMPTY|None|null|none|xxx+|your[_-]|{_PROSE_WORD}\b|"
                # a value shorter than any secret: `#cached-token: N` in the KB's text of a log line
                rf"[\w-]{{1,{MIN_SECRET_CHARS - 1}}})(?:[\s\"',;:.)}}`]|$))")
_SECRET_NAME = r"(?:api[_-]?key|access[_-]?key|secret(?:[_-]?key)?|token|password|passwd|pwd|auth)"
_PATTERNS = [
    # well-known token shapes, wherever they appear
    (re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{8,}"), REDACTED),              # Slack bot/user tokens
    (re.compile(r"\bxapp-[A-Za-z0-9-]{8,}"), REDACTED),                       # Slack app tokens
    # Hugging Face tokens mix cases and digits; a lower-case name is a module (hf_transformers)
    (re.compile(r"\bhf_(?=[A-Za-z0-9]*[A-Z0-9])[A-Za-z0-9]{8,}(?!\w)"), REDACTED),
    (re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{8,}"), REDACTED),          # OpenAI-style keys
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),                         # AWS access key ids
    (re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+"), REDACTED),  # JWTs
    # Authorization / X-Api-Key headers: the whole value (it may be "Bearer <token>")
    # (not a placeholder: `Authorization: Bearer <key>`, `Bearer $OPENAI_API_KEY` in a how-to)
    (re.compile(r"(?i)(?<![\w-])((?:proxy-)?authorization|x-api-key|api-key)(\s*[:=]\s*)"
                r"(?!\s*(?:Bearer\s+)?(?:<[^>\s]*>|\$\{?\w+\}?)(?:[\s'\",;`)\\]|$))[^\r\n,;'\"}]+"),
     rf"\1\2{REDACTED}"),
    # a bare "Bearer <token>" (a header repeated without its name)
    (re.compile(r"(?<![\w-])(Bearer\s+)(?!\[redacted\])[A-Za-z0-9._~+/=-]{6,}"), rf"\1{REDACTED}"),
    # --api-key X, --hf-token=X, --password X (but not --max-prefill-tokens or --tokenizer-path)
    (re.compile(rf"(?i)(?<![\w-])(--?[\w-]*{_SECRET_NAME})(?![\w-])(=|\s+){_PLACEHOLDER}(?!-)(\S+)"),
     rf"\1\2{REDACTED}"),
    # password=..., HF_TOKEN=..., "api_key": "..." (numbers like `#token: 342` in SGLang's logs stay)
    # (a `--flag:` in a sentence is prose, not an assignment)
    (re.compile(rf"(?i)(?<![\w.-])(?!-)([\w.-]*{_SECRET_NAME})\b([\"']?\s*[=:]\s*)([\"']?){_PLACEHOLDER}(?!\d+(?:\.\d+)?\b)([^\s\"'&,;}}]+)"),
     rf"\1\2\3{REDACTED}"),
    # credentials inside URLs: scheme://user:password@host
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), rf"\1{REDACTED}@"),
]


def known_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """The exact secret values this process holds (environment + `extra`), longest first."""
    values = {os.environ.get(name, "").strip() for name in SECRET_ENV_VARS}
    values |= {str(v).strip() for v in extra if v}
    return sorted((v for v in values if len(v) >= MIN_SECRET_CHARS and v != "EMPTY"), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Replace tokens, keys and passwords with [redacted]; the rest of the text stays as it was."""
    if not text:
        return text
    for value in known_secrets(secrets):
        text = text.replace(value, REDACTED)
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def redact_data(value, secrets: Iterable[str | None] = ()):
    """`redact` applied to every string inside JSON-like data (what feedback stores keep)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, list):
        return [redact_data(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: redact_data(v, secrets) for k, v in value.items()}
    return value


class RedactingFilter(logging.Filter):
    """Scrubs a log record's message and traceback before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: log what there is
            message = str(record.msg)
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.exc_info = None   # formatted (and scrubbed) above; the handler must not redo it
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> None:
    """Put the RedactingFilter on every handler of `logger` (the root logger by default), where
    it sees the records of every module's logger."""
    logger = logger or logging.getLogger()
    for handler in logger.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
