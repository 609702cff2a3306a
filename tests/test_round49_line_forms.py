"""Round 49: a line SGLang prints in another release's wording finds the entry about it.

The outlines backend of SGLang 0.3.5 logs an unsupported JSON schema as `skip invalid json schema:
json_schema=...` (lower case, a space in "json schema"); releases 0.2.x-0.3.x print `Init nccl begin.`
where later ones print `Init torch distributed begin.`. Before, the entries listed only the newer
wordings, so a log from those releases got a lead ("does not fit your log well enough"), not the fix.
"""

from __future__ import annotations

JSON_SCHEMA = "json-schema-unsupported-by-grammar-backend"
MULTINODE_INIT = "multinode-init-hang-socket-ifname"

OUTLINES_035_LOG = (
    "Passing a json_schema with \"format\": \"email\" to /generate: outlines cannot build it.\n"
    "skip invalid json schema: json_schema={\"type\":\"object\",\"properties\":{\"mail\":{\"type\":\"string\","
    "\"format\":\"email\"}}}, e=NotImplementedError('Format email is not supported by Outlines')\n")
INIT_NCCL_LOG = ("2 nodes x 8 GPUs, sglang 0.2.14, --nccl-init-addr 10.0.0.1:5000 --nnodes 2 --node-rank 0; "
                 "both nodes hang after:\n[gpu=0] Init nccl begin.\n")


def _shown(answer):
    """What a user reads in `ask --json`: the outcome and the entry it is about."""
    shown = answer.to_json()
    return shown["outcome"], shown["matches"][0]["id"]


def test_the_0_3_5_outlines_warning_gets_the_json_schema_fix(assistant):
    assert _shown(assistant.answer(OUTLINES_035_LOG)) == ("fix", JSON_SCHEMA)


def test_a_multinode_start_stuck_at_init_nccl_begin_gets_the_interface_fix(assistant):
    assert _shown(assistant.answer(INIT_NCCL_LOG)) == ("fix", MULTINODE_INIT)
