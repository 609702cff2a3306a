"""A paste that is only the tail of a Python thread dump.

When Python dies of a fatal signal or a `faulthandler` timeout, it prints `Fatal Python error: ...`
(or `Timeout (0:05:00)!`) and then one `Thread 0x... (most recent call first):` block per thread,
each listing where that thread was waiting. A user who copies the last lines of the terminal gets
only the last threads' frames (a tqdm monitor waiting on a lock): no error line, so the paste reads
like a report with nothing wrong in it. What they need to paste is above the dump: the fatal
error line and what led to it.
"""

from __future__ import annotations

import re

# faulthandler's header of one thread's frames; the address may already be masked (`<addr>`)
THREAD_HEADER_RE = re.compile(r"^\s*(?:Current thread|Thread) (?:0x[0-9a-fA-F]+|<addr>) \(most recent call first\):")
# what faulthandler prints before the threads: when it is in the paste, the dump is not cut off
DUMP_CAUSE_RE = re.compile(r"Fatal Python error|^\s*Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!|^\s*Timeout \(<")


def is_thread_dump_tail(lines, has_errors: bool = False) -> bool:
    """The paste holds a thread dump's thread blocks, but neither the line that says why Python
    dumped them nor any other error: the cause was cut off above what was pasted."""
    lines = list(lines)
    return (not has_errors and any(THREAD_HEADER_RE.match(line) for line in lines)
            and not any(DUMP_CAUSE_RE.search(line) for line in lines))
