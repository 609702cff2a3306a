"""Settings, read once at entry points from ASK_* environment variables (CLI options override)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from assistant.errors import UsageError
from assistant.resources import default_index_dir, default_kb_dir


@dataclass(frozen=True)
class Settings:
    # ASK_KB_DIR: holds entries/ and docs/; default the checkout's kb/, else the installed one
    kb_dir: Path = field(default_factory=default_kb_dir)
    # ASK_INDEX_DIR; default <kb_dir>/index, or the user cache for the installed KB (None = default)
    index_dir: Path | None = None
    embed_model: str = "all-MiniLM-L6-v2"       # ASK_EMBED_MODEL: name or local path
    endpoint: str = "http://127.0.0.1:30000/v1" # ASK_ENDPOINT: SGLang's OpenAI-compatible API
    model: str | None = None                    # ASK_MODEL: default = first of /v1/models
    api_key: str | None = None                  # ASK_API_KEY: SGLang's --api-key, if set
    use_llm: bool = True                        # ASK_NO_LLM=1 turns the endpoint off
    timeout: float = 60.0                       # ASK_TIMEOUT: seconds per LLM request
    top_k: int = 3                              # ASK_TOP_K: matches shown
    feedback_db: Path = Path.home() / ".local" / "share" / "sglang-ask" / "feedback.sqlite3"  # ASK_FEEDBACK_DB
    debug: bool = False                         # ASK_DEBUG=1: show tracebacks
    lang: str = "auto"                          # ASK_LANG: auto (Chinese for a Chinese question) | en | zh

    def __post_init__(self):
        if self.index_dir is None:
            object.__setattr__(self, "index_dir", default_index_dir(self.kb_dir))

    @property
    def entries_dir(self) -> Path:
        return self.kb_dir / "entries"

    @property
    def docs_dir(self) -> Path:
        return self.kb_dir / "docs"

    @classmethod
    def from_env(cls, environ: dict | None = None) -> Settings:
        env = os.environ if environ is None else environ
        kb_dir = Path(env["ASK_KB_DIR"]).expanduser() if env.get("ASK_KB_DIR") else default_kb_dir()
        index_dir = Path(env["ASK_INDEX_DIR"]).expanduser() if env.get("ASK_INDEX_DIR") else None
        s = cls(kb_dir=kb_dir, index_dir=index_dir)
        truthy = ("1", "true", "yes", "on")
        return replace(
            s,
            embed_model=env.get("ASK_EMBED_MODEL") or s.embed_model,
            endpoint=env.get("ASK_ENDPOINT") or s.endpoint,
            model=env.get("ASK_MODEL") or None,
            api_key=env.get("ASK_API_KEY") or None,
            use_llm=env.get("ASK_NO_LLM", "").lower() not in truthy,
            timeout=_number(env, "ASK_TIMEOUT", float, s.timeout),
            top_k=_number(env, "ASK_TOP_K", int, s.top_k),
            feedback_db=Path(env["ASK_FEEDBACK_DB"]).expanduser() if env.get("ASK_FEEDBACK_DB") else s.feedback_db,
            debug=env.get("ASK_DEBUG", "").lower() in truthy,
            lang=(env.get("ASK_LANG") or s.lang).lower(),
        )

    def with_options(self, **changes) -> Settings:
        settings = replace(self, **{k: v for k, v in changes.items() if v is not None})
        settings.check()
        return settings

    def check(self) -> None:
        """Raise UsageError for a value no surface can work with (an endpoint that is no URL)."""
        if not self.endpoint.lower().startswith(("http://", "https://")):
            raise UsageError(f"endpoint {self.endpoint!r} is not an http(s) URL; give one like "
                             "http://127.0.0.1:30000/v1 (--endpoint or ASK_ENDPOINT)")
        if self.top_k < 1:
            raise UsageError(f"top-k {self.top_k}: show at least 1 match (--top-k or ASK_TOP_K)")
        if self.lang not in LANGUAGES:
            raise UsageError(f"language {self.lang!r}: give one of {', '.join(LANGUAGES)} (--lang or ASK_LANG)")
        if self.timeout <= 0:
            raise UsageError(f"timeout {self.timeout}: give a positive number of seconds (--timeout or ASK_TIMEOUT)")


LANGUAGES = ("auto", "en", "zh")


def _number(env, name: str, kind, default):
    """An ASK_* number, or UsageError naming the variable when it is not one."""
    raw = env.get(name)
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        noun = "a whole number" if kind is int else "a number"
        raise UsageError(f"{name}={raw!r} is not {noun}; unset it or give e.g. {name}={default}") from None
