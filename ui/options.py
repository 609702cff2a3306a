"""Command-line options every surface shares (`ask`, `ask serve`, `ask kb`, `ask ingest`), and the
Settings they produce: environment first, then the options given."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from assistant.config import LANGUAGES, Settings


def endpoint_options(parser: argparse.ArgumentParser) -> None:
    """The LLM endpoint options every surface shares (`ask`, `ask serve`)."""
    parser.add_argument("--no-llm", action="store_true", help="answer from the KB alone (env ASK_NO_LLM=1)")
    parser.add_argument("--endpoint", help="SGLang OpenAI-compatible base URL (env ASK_ENDPOINT, "
                                           "default http://127.0.0.1:30000/v1)")
    parser.add_argument("--model", help="model name on the endpoint (env ASK_MODEL; default: from /v1/models)")
    parser.add_argument("--api-key", help="the endpoint's --api-key (env ASK_API_KEY)")
    parser.add_argument("--timeout", type=float, help="deadline in seconds for a whole LLM answer, "
                                                      "whatever the server sends (env ASK_TIMEOUT)")
    parser.add_argument("--top-k", type=int, help="matches to show (env ASK_TOP_K)")
    parser.add_argument("--lang", choices=LANGUAGES,
                        help="answer language: auto (Chinese when you write Chinese), en, zh (env ASK_LANG)")


def index_options(parser: argparse.ArgumentParser) -> None:
    """Where the knowledge base, the index and the embedding model are."""
    parser.add_argument("--kb-dir", type=Path, help="knowledge base folder (env ASK_KB_DIR)")
    parser.add_argument("--index-dir", type=Path, help="index folder (env ASK_INDEX_DIR)")
    parser.add_argument("--embed-model", help="embedding model name or path (env ASK_EMBED_MODEL)")


def settings_from_args(args) -> Settings:
    """Settings from the environment, overridden by the options given; --kb-dir alone puts the
    index in <kb-dir>/index."""
    s = Settings.from_env()
    kb_dir = getattr(args, "kb_dir", None)
    if kb_dir and not getattr(args, "index_dir", None) and not os.environ.get("ASK_INDEX_DIR"):
        s = s.with_options(index_dir=kb_dir / "index")
    return s.with_options(
        kb_dir=kb_dir, index_dir=getattr(args, "index_dir", None),
        embed_model=getattr(args, "embed_model", None), endpoint=getattr(args, "endpoint", None),
        model=getattr(args, "model", None), api_key=getattr(args, "api_key", None),
        top_k=getattr(args, "top_k", None), timeout=getattr(args, "timeout", None),
        lang=getattr(args, "lang", None),
    )
