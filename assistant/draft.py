"""The model's reply as a Draft: the JSON object {diagnosis, fix, warnings, citations} found in
it, whether bare, fenced or after some prose. Nothing here is verified yet (`assistant.verify`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


@dataclass
class Draft:
    diagnosis: str
    fix: list[str]
    warnings: list[str]
    citations: list[str]


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [" ".join(str(v).split()) if not isinstance(v, str) else v.strip()
                for v in value if str(v).strip()]
    return []


def parse_draft(content: str) -> Draft:
    """The JSON object in the reply (bare, fenced, or after some prose). Raises ValueError."""
    text = content.strip()
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    candidates = [text] + ([fenced.group(1)] if fenced else [])
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start:])
    for candidate in candidates:
        try:
            data, _ = json.JSONDecoder().raw_decode(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            diagnosis = data.get("diagnosis")
            return Draft(" ".join(diagnosis.split()) if isinstance(diagnosis, str) else "",
                         _strings(data.get("fix")), _strings(data.get("warnings")),
                         _strings(data.get("citations")))
    raise ValueError("no JSON object in the reply")
