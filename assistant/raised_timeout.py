"""A timeout the user has already raised: the entry's fix is to raise it, and the paste shows a wait
as long as the fix would set.

An entry about a request that times out at the default wait (`timed out after 300.0s in
KVPoll.WaitingForInput`) fixes it by raising that timeout (`export ..._TIMEOUT=600`). A paste whose
same line says `timed out after 600.0s` ran with the timeout already raised that far, and still
timed out: raising it is what the user did, not what they need; what keeps the request from
finishing is the open question. Such an entry is then a lead, not the fix.
"""

from __future__ import annotations

import re

from assistant.tell_apart import paste_words
from assistant.trace import Analysis
from assistant.wording import Sentence

# a line that states how long it waited, in seconds: `Request 123 timed out after 600.0s in KVPoll...`
WAITED_RE = re.compile(r"\btimed out after (\d+(?:\.\d+)?)\s*s\b", re.I)
# a fix command that sets a timeout, in seconds: `export SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600`,
# `--watchdog-timeout 1800`
SETS_TIMEOUT_RE = re.compile(r"\b[A-Z][A-Z0-9_]*TIMEOUT[A-Z0-9_]*=(\d+)\b|--[\w-]*timeout[= ](\d+)\b")


def _waits(texts) -> list[float]:
    return [float(m.group(1)) for text in texts for m in WAITED_RE.finditer(text)]


def _raised_to(meta: dict) -> list[int]:
    values = []
    for step in meta.get("fix") or ():
        commands = step.get("commands") if isinstance(step, dict) else getattr(step, "commands", ())
        for command in commands or ():
            values += [int(a or b) for a, b in SETS_TIMEOUT_RE.findall(str(command))]
    return values


def timeout_already_raised(meta: dict, analysis: Analysis) -> Sentence | None:
    """The entry's lines time out at a default wait its fix raises, and the paste's wait is already
    past that default and at least as long as the fix would set."""
    defaults = _waits(meta.get("signatures") or ())
    raised = _raised_to(meta)
    if not defaults or not raised:
        return None
    waits = _waits(paste_words(analysis).splitlines())
    if not waits:
        return None
    waited = max(waits)
    if waited <= max(defaults) or waited < max(raised):
        return None   # the default wait, or one the fix still raises: raising it is the fix
    return Sentence(f"Your log shows it already waited {waited:g} s before timing out, as long as this entry's fix "
                    f"would set (the default is {max(defaults):g} s): the timeout is already raised, so what keeps "
                    "the request from finishing is the question, not the timeout.",
                    f"你的日志显示它已经等了 {waited:g} 秒才超时，和这个条目的修复要设的一样长（默认是 {max(defaults):g} 秒）："
                    "超时已经调大了，问题在于是什么让请求完成不了，而不是超时本身。")
