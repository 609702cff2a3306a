"""The prefixes a log line carries in front of the program's own message.

Two layers stack up. Whatever collected the log adds the outer one: journald (`Sep 02 15:32:20
host python3[912967]: `), `docker compose logs` (`sglang-1  | `), Kubernetes' node log files
(`<RFC 3339 time> stderr F `) and `kubectl logs --timestamps` / `docker logs -t` (`<RFC 3339
time> `), Google Cloud Logging's viewer (`ERROR <RFC 3339 time> `), a job platform's
`[<RFC 3339 time>] <pod> >> `, torchrun (`[rank0]: `), Ray (`(Actor pid=123, ip=10.0.0.1) `,
`(raylet, ip=10.0.0.1) `), Open MPI's
`--tag-output` (`[1,0]<stderr>:`), Slurm's `srun --label` (`0: `), with the terminal colour
codes around them (`\\x1b[36m`, or `[36m` where a web page dropped the escape character). The
logger adds the inner one: SGLang's `[2025-10-15 10:47:27 TP0] `, a time stamp with a level,
loguru's `| ERROR | stderr |` columns, glog's `I1015 10:47:27.123 4321 `, Python logging's
`2025-10-15 10:47:27,123 - sglang - INFO - `; and
Python's `| ` margin around the tracebacks of an exception group.

A paste is read as a traceback only once both are gone: `File "..."` frames, the exception line
and a message's first word sit behind them, and a frame that starts `[rank0]:   File` is no frame.
PREFIX_RE matches the run of prefixes at the start of a line (possibly nothing), in any order.
Every pattern treats all digits alike: the trace reader runs it on the line's shape, its digits
all made 5.
"""

from __future__ import annotations

import re

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_RFC3339 = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)"
# a level word right after a time stamp; any other word there is the message's own first word
# ("Traceback", "File", "raise"), which the reader needs
_LEVEL_NAME = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)"
_LEVEL = rf"{_LEVEL_NAME}\b:?\s+"
# Google Cloud Logging's severities, which its log viewer writes before each entry's time (not
# DEBUG: a DEBUG line keeps its level, which the reader sets such lines aside by)
_GCP_SEVERITY = r"(?:DEFAULT|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY)"

COLLECTOR_PREFIX = (
    rf"{_MONTH} [ \d]\d \d\d:\d\d:\d\d \S+ [^\s\[\]:]+(?:\[\d+\])?:\s"  # journald / syslog
    rf"|{_RFC3339} \S+ [^\s\[\]:]+\[\d+\]:\s"                          # journalctl -o short-iso
    rf"|{_RFC3339} (?:stdout|stderr) [FP] "                             # Kubernetes node log file
    rf"|{_RFC3339}\s"                                                   # kubectl logs --timestamps
    rf"|{_GCP_SEVERITY} {_RFC3339}\s"                                   # Google Cloud Logging: ERROR <time>
    rf"|(?!{_LEVEL_NAME}\b)[A-Za-z][\w.\-]*\s+\|\s"                         # docker compose: sglang-1  |
    r"|\[rank\d+\]:\s?"                                                 # torchrun
    # Slurm `srun --label`: "0: " before program output only, for a user's "1: crash" is a step
    r"|\d{1,4}: (?=\s*(?:File \"|Traceback \(|\[|\((?:[\w.]+ )?pid=|(?:\w+\.)*[A-Z]\w*(?:Error|Exception)\b))"
    r"|\[\d+,\d+\]<std(?:out|err)>:"                                    # Open MPI --tag-output
    rf"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) {_MONTH} [ \d]\d \d\d:\d\d:\d\d \d{{4}}(?=\[)"  # ... --timestamp-output
    r"|\((?:[\w.]+(?:\([^()]*\))?,? (?:\w+=[^,()]*, )*)?pid=\d+[^)]*\)\s*"    # Ray: (WorkerDict(rank=3) pid=42, ip=..)
    # Ray's own processes, which have no pid in their prefix: (raylet, ip=10.0.0.1), (gcs_server)
    r"|\((?:raylet|gcs_server|dashboard\w*|monitor|autoscaler(?: \+[\w.]+)?)(?:, ip=[\d.]+)?\)\s*"
    # a job platform's collector: `[<RFC 3339 time>] <pod or job name> >> ` before each line
    rf"|\[{_RFC3339}\]\s+[\w.\-]+\s+>>\s"
    # the colour Ray puts around its prefix; `[36m` once a paste lost the ESC (a digit first, or
    # `[mooncake]` would lose its `[m`)
    r"|\x1b\[[\d;]{0,12}m|\[\d[\d;]{0,11}m(?![\w-])"
)

LOGGER_PREFIX = (
    # Python's logging.basicConfig format "%(asctime)s - %(name)s - %(levelname)s - "; a DEBUG line
    # keeps it, for the reader sets DEBUG lines aside by their level
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [\w.<>]+ - (?:INFO|WARNING|ERROR|CRITICAL) - "
    r"|(?:\[[^\]]{0,80}\]:?\s*)+"                                       # [2025-10-15 10:47:27 TP0]
    r"|\d{4}-\d{2}-\d{2}[T ][\d:.,]+\s*(?:\|\s*[\w.:<>-]+\s*)+\|\s"     # 2024-06-02 00:26:10 | ERROR | stderr |
    rf"|\d{{4}}-\d{{2}}-\d{{2}}[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\s+(?:{_LEVEL})?"  # ... 10:45:11+08:00 INFO
    r"|[IWEF]\d{4} [\d:.]+\s+\d+\s+"                                    # glog
    # vLLM's "ERROR 07-13 10:41:52 [core.py:588] ": its [file:line] goes with the brackets above
    r"|(?:INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?=\[)"
    # the margin Python 3.11+ draws around an exception group's tracebacks (starlette, anyio)
    r"|\|\s|\+[-+]*\s"
)

# the layers come in either order ("[2025-...] (TaskRunner pid=42) ..." as well as
# "(WorkerDict pid=42) [rank0]: ...")
PREFIX_RE = re.compile(rf"^\s*(?:(?:{COLLECTOR_PREFIX}|{LOGGER_PREFIX})\s*)*")
