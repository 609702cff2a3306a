"""Where the user's server listens, and the answer's commands pointed there.

KB steps are written for SGLang's defaults: `curl http://127.0.0.1:30000/health`, `ss -ltnp | grep
':30000 '`, `--port 30000`. A user whose paste shows the server on another port (`--port 8000`, a
`ServerArgs(... port=8000 ...)` dump, `Uvicorn running on http://0.0.0.0:8000`) gets those commands
with their port; one whose `--host` is a single address (`--host 10.0.0.5`) gets that address
instead of the loopback one, which such a server does not listen on. A paste that shows more than
one port (prefill and decode servers), or a router in front of its workers, leaves the commands
as written: nothing tells which server a step is about.

Only a port in a command's shape is changed (after a `:` of an address or a `grep`, after
`--port`, in `-p 30000:30000` or `30000/tcp`, as a JSON `"port"` value); prose that names the
default ("`--port`, default 30000") stays true as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from assistant.commands import ROUTER_MARKER_RE

DEFAULT_PORT = "30000"
# addresses a server bound to them answers on loopback too
LOOPBACK_OR_ANY = frozenset({"127.0.0.1", "localhost", "0.0.0.0", "::", "[::]", "::1", "[::1]"})

PORT_FLAG_RE = re.compile(r"(?<![\w-])--port(?:=|\s+)['\"]?(\d{2,5})\b")
HOST_FLAG_RE = re.compile(r"(?<![\w-])--host(?:=|\s+)['\"]?([^\s'\"]+)")
UVICORN_RE = re.compile(r"Uvicorn running on https?://([^\s/:]+|\[[^\]]+\]):(\d{2,5})\b")
DUMP_PORT_RE = re.compile(r"ServerArgs\(.*?(?<![\w])port=(\d{2,5})\b")
# an environment value or a template (`$PORT`, `${PORT}`, `{{port}}`): no port to adapt to
UNRESOLVED_RE = re.compile(r"[$<{]")

# the default port where a command uses it; group 1 keeps what comes before it
_PORT_USES = re.compile(
    r"((?:https?://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|<[^<>\s]+>|[\w.-]+)?:)" + DEFAULT_PORT + r"(?!\d)"
    r"|((?<![\w-])--port(?:=|\s+))" + DEFAULT_PORT + r"(?!\d)"
    r"|((?<![\w-])-p\s+)" + DEFAULT_PORT + ":" + DEFAULT_PORT + r"(?!\d)"
    r"|(\"port\"\s*:\s*)" + DEFAULT_PORT + r"(?!\d)"
    r"|((?<![\w.])" + r")" + DEFAULT_PORT + r"(?=/tcp\b)"
)
# a loopback address in front of the default port, in a URL or a `host:port`
_LOOPBACK_URL = re.compile(r"(?<![\w.-])(localhost|127\.0\.0\.1)(?=:" + DEFAULT_PORT + r"(?!\d))")


@dataclass(frozen=True)
class ServerAddress:
    port: str | None = None    # the user's HTTP port, when it is not SGLang's default
    host: str | None = None    # the one address the server listens on, when loopback is not among them

    def __bool__(self) -> bool:
        return bool(self.port or self.host)

    def applied(self, step: str) -> str:
        """A step with the default port (and loopback host) of its commands replaced. Its first
        line and its caution are prose: there only an address (`127.0.0.1:30000`, `grep
        ':30000 '`) is the user's server, while a flag (`for `--port 30000` on one node`) is the
        example a computed value next to it was made from."""
        first, *rest = step.split("\n")
        lines = [self._in(first, prose=True)]
        lines += [self._in(line, prose="! " in line) for line in rest]
        return "\n".join(lines)

    def _in(self, text: str, prose: bool) -> str:
        if self.host:
            text = _LOOPBACK_URL.sub(self.host, text)
        if not self.port:
            return text
        port = self.port

        def swap(match: re.Match) -> str:
            if match.group(1) is not None:
                return match.group(1) + port
            if prose:
                return match.group(0)
            if match.group(3) is not None:   # a container's published port: both sides
                return f"{match.group(3)}{port}:{port}"
            kept = next(g for g in (match.group(2), match.group(4), match.group(5)) if g is not None)
            return kept + port

        return _PORT_USES.sub(swap, text)


def server_address(flags: Iterable[str], lines: Iterable[str]) -> ServerAddress:
    """Where the user's server listens, from their launch flags (`--port 8000`, as
    `Environment.flags` holds them) and the lines of their paste (other launch commands, a
    ServerArgs dump, uvicorn's start line). Nothing when the paste shows more than one port."""
    ports: set[str] = set()
    hosts: set[str] = set()
    for flag in flags:
        name, _, value = flag.partition(" ")
        value = value.strip().strip("'\"")
        if name == "--port" and value.isdigit():   # not a placeholder (`--port {{port}}`, `$PORT`)
            ports.add(value)
        elif name == "--host" and value:
            hosts.add(value)
    for line in lines:
        if ROUTER_MARKER_RE.search(line):
            return ServerAddress()   # a router's port and its workers' ports: which one a step means is unknown
        ports.update(PORT_FLAG_RE.findall(line))
        hosts.update(HOST_FLAG_RE.findall(line))
        for host, port in UVICORN_RE.findall(line):
            ports.add(port)
        ports.update(DUMP_PORT_RE.findall(line))
    if len(ports) > 1 or len(hosts) > 1:
        return ServerAddress()
    port = next(iter(ports), DEFAULT_PORT)
    host = next(iter(hosts), None)
    if host is not None and (host in LOOPBACK_OR_ANY or UNRESOLVED_RE.search(host)):
        host = None
    return ServerAddress(port=None if port == DEFAULT_PORT else port, host=host)
