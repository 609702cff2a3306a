"""Round 49: a line SGLang prints in another release's wording finds the entry about it.

The outlines backend of SGLang 0.3.5 logs an unsupported JSON schema as `skip invalid json schema:
json_schema=...` (lower case, a space in "json schema"). Before, the entry listed only the later
wordings (`Skip invalid json_schema: json_schema=`, `Hit invalid json_schema: key_string=`), so a
log from that release got a lead ("does not fit your log well enough"), not the fix.
"""

from __future__ import annotations

JSON_SCHEMA = "json-schema-unsupported-by-grammar-backend"

OUTLINES_035_LOG = (
    "Passing a json_schema with \"format\": \"email\" to /generate: outlines cannot build it.\n"
    "skip invalid json schema: json_schema={\"type\":\"object\",\"properties\":{\"mail\":{\"type\":\"string\","
    "\"format\":\"email\"}}}, e=NotImplementedError('Format email is not supported by Outlines')\n")


def _shown(answer):
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"]


def test_the_0_3_5_outlines_warning_gets_the_json_schema_fix(assistant):
    assert _shown(assistant.answer(OUTLINES_035_LOG)) == ("fix", JSON_SCHEMA)
