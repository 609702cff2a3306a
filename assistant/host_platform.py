"""Host platform: the operating system or CPU architecture a paste comes from, and whether an
entry's `os` scope fits it.

The GPU vendor (`hardware`) does not say where SGLang was installed: the same `No matching
distribution found for sgl-kernel` comes from native Windows, from a Mac and from an ARM server,
and each has its own fix. An entry about one of them (`os: [windows]`) fits a paste that shows that
platform — a `C:\\Users\\...` path, a `win_amd64` or `macosx_..._arm64` wheel tag, `aarch64`, a
GH200 — and not a paste that shows another or none. An entry about Linux (`os: [linux]`) fits every
paste but one that shows only Windows or macOS.
"""

from __future__ import annotations

import re

from assistant.commands import SGLANG_MARKER_RE
from assistant.trace import Analysis
from assistant.wording import Sentence

PLATFORMS = ("windows", "macos", "aarch64", "linux")
PLATFORM_NAMES = {"windows": "native Windows", "macos": "macOS", "aarch64": "an ARM (aarch64) host",
                  "linux": "Linux"}
PLATFORM_NAMES_ZH = {"windows": "原生 Windows", "macos": "macOS", "aarch64": "ARM（aarch64）主机", "linux": "Linux"}
# Linux is where nearly every paste comes from, so it is never looked for: an entry about Linux
# (`os: [linux]`, e.g. its wheels) fits any paste that does not show only Windows or macOS
NOT_LINUX = frozenset({"windows", "macos"})
# an ARM Linux server (GH200, Jetson, Graviton) says aarch64 or names its hardware
ARM_SERVER = (r"\baarch64\b|\bsbsa\b|\bG[BH]\d00\b|\bGB10\b|Grace (?:Hopper|Blackwell)|\bJetson\b|"
              r"\bDGX Spark\b|\bNeoverse\b|\bGraviton\b")
ARM_SERVER_RE = re.compile(ARM_SERVER, re.I)
# WSL is Linux: "Windows Subsystem for Linux" is not native Windows
WINDOWS_RE = re.compile(r"\bwin_amd64\b|\bwin32\b|\bWindows\b(?! Subsystem)|\b[A-Z]:\\(?:Users|Program|Python|"
                        r"ProgramData|Windows|Anaconda|Miniconda|conda)|\bPS [A-Z]:\\|\.exe\b|\bPowerShell\b|"
                        r"\bcmd\.exe\b|Visual Studio|\bMSVC\b|(?m:^\(\S+\) [A-Z]:\\[^\n>]*>)", re.I)
PLATFORM_HINTS = (
    ("windows", WINDOWS_RE),
    ("macos", re.compile(r"\bmacOS\b|\bmacosx_\d|\bDarwin\b|(?<![\w/])/Users/[^/\s]+/|/opt/homebrew/|"
                         r"\bApple (?:M\d|Silicon)\b|\bMacBook\b|\bMac (?:Studio|mini|Pro)\b", re.I)),
    # a Mac names its Apple Silicon `arm64` too (uname, wheel tags): ARM_SERVER_RE tells them apart
    ("aarch64", re.compile(ARM_SERVER + r"|\barm64\b", re.I)),
)


# plain substrings one of which every match of the regex above contains (lower case): a test costs
# far less than the case-insensitive regex over a long log. KEEP THEM IN STEP WITH THE REGEXES.
PLATFORM_KEYS = {
    "windows": ("win_amd64", "win32", "windows", ":\\", ".exe", "powershell", "visual studio", "msvc"),
    "macos": ("macos", "darwin", "/users/", "/opt/homebrew/", "apple", "macbook", "mac "),
    "aarch64": ("aarch64", "sbsa", "gh1", "gh2", "gh3", "gb1", "gb2", "gb3", "grace", "jetson", "dgx spark",
                "neoverse", "graviton", "arm64"),
}
# the platform shows where the user installed or started SGLang: the top of a log, not its hours
LOG_LINES = 400


# WSL2 is Linux: "inside WSL2 on Windows 11" names Windows as the host, not where SGLang runs.
# A Windows path or prompt (`C:\\...>`) still shows native Windows, whatever the user calls it.
WSL_RE = re.compile(r"(?<!not )(?<!without )(?<!no )\b(?:in|inside|under|using|via|on|from|with)\s+(?:a |the )?WSL ?2?\b|"
                    r"\bWSL ?2?\s+(?:Ubuntu|Debian|distro|instance|environment|shell|terminal)\b", re.I)
WINDOWS_WORD_RE = re.compile(r"(?<!\\)\bWindows\b(?! Subsystem)", re.I)


def platforms_in(text: str) -> frozenset[str]:
    low = text.lower()
    found = {name for name, regex in PLATFORM_HINTS
             if any(key in low for key in PLATFORM_KEYS[name]) and regex.search(text)}
    if "windows" in found and "wsl" in low and WSL_RE.search(text) \
            and not WINDOWS_RE.search(WINDOWS_WORD_RE.sub(" ", text)):
        found.discard("windows")
    if {"macos", "aarch64"} <= found and not ARM_SERVER_RE.search(text):
        found.discard("aarch64")
    return frozenset(found)


_last: tuple[Analysis, frozenset[str]] | None = None


def paste_platforms(analysis: Analysis) -> frozenset[str]:
    """The platforms the paste shows: in the user's words, its first log lines, its traceback's
    file paths and the GPU it names (asked once per hit; read once per paste)."""
    global _last
    last = _last   # read once: the web UI answers two pastes at a time
    if last is not None and last[0] is analysis:
        return last[1]
    text = "\n".join((analysis.question, *analysis.plain_lines[:LOG_LINES], *analysis.masked_lines[:LOG_LINES],
                      *analysis.frame_files, analysis.environment.gpu or ""))
    found = platforms_in(text)
    _last = (analysis, found)
    return found


def platform_conflict(meta: dict, analysis: Analysis) -> str | None:
    """The entry is about a platform the paste does not show (a mixed paste is not a conflict)."""
    wanted = [p for p in meta.get("os") or () if p in PLATFORMS]
    if not wanted:
        return None
    shown = paste_platforms(analysis)
    if shown & set(wanted) or ("linux" in wanted and not (shown and shown <= NOT_LINUX)):
        return None
    about = " or ".join(PLATFORM_NAMES[p] for p in wanted)
    about_zh = "或".join(PLATFORM_NAMES_ZH[p] for p in wanted)
    if shown:
        return Sentence(f"Your paste is from {' and '.join(PLATFORM_NAMES[p] for p in sorted(shown))}; "
                        f"this entry is about {about}.",
                        f"你贴的内容来自{'和'.join(PLATFORM_NAMES_ZH[p] for p in sorted(shown))}；这个条目讲的是{about_zh}。")
    return Sentence(f"This entry is about {about}; nothing in your paste shows it.",
                    f"这个条目讲的是{about_zh}；你贴的内容里看不出是它。")


def platform_fits(meta: dict, analysis: Analysis) -> bool:
    """The entry is about a platform the paste shows (`os: [windows]` and a `C:\\Users` path)."""
    wanted = meta.get("os") or ()
    return bool(wanted) and bool(paste_platforms(analysis) & set(wanted))


def only_non_linux(analysis: Analysis) -> bool:
    """The paste shows native Windows or macOS and no Linux host (WSL2 counts as Linux)."""
    shown = paste_platforms(analysis)
    return bool(shown) and shown <= NOT_LINUX


def non_linux_scope(meta: dict) -> bool:
    """The entry is about native Windows or macOS only (`os: [windows]`)."""
    wanted = set(meta.get("os") or ())
    return bool(wanted) and wanted <= NOT_LINUX


# the paste shows SGLang (or its kernels) being installed or run on the host, not only a client
# or another tool there: a traceback through SGLang's files, an install of it, its launcher
# (`commands.SGLANG_MARKER_RE`)
SGLANG_HERE_RE = re.compile(r"site-packages[\\/](?:sglang|sgl_kernel)\b|\b(?:pip3?|uv pip|uv) (?:install|add)\b[^\n]*"
                            r"\b(?:sglang|sgl[-_]kernel)\b|安装\s*sglang|"
                            r"\bsglang\b[^\n]{0,40}\bon (?:native )?(?:Windows|macOS|a Mac)\b", re.I)


def home_platform_entry(meta: dict, analysis: Analysis) -> str | None:
    """For an entry about native Windows or macOS only, on a paste from that system alone:
    'installed' when the paste shows SGLang installed or run there (the system is the cause: the
    server runs on Linux only), 'shown' when it shows only the system; None otherwise."""
    if not (non_linux_scope(meta) and only_non_linux(analysis) and platform_fits(meta, analysis)):
        return None
    text = "\n".join((analysis.question, *analysis.plain_lines[:LOG_LINES], *analysis.frame_files))
    return "installed" if SGLANG_HERE_RE.search(text) or SGLANG_MARKER_RE.search(text) else "shown"
