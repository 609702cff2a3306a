"""Find the SGLang flags and env vars that a piece of text recommends or a command uses.

A `--flag` belongs to SGLang only where SGLang would parse it: after `sglang.launch_server`,
`sglang serve` or `sglang.compile_deep_gemm` in a command, in a code span that is just flags
(`--tp-size 8`), or in prose not attached to another program (`docker run --shm-size` is
Docker's). `SGLANG_*` / `SGL_*` names are SGLang's wherever they appear. SGLang's launchers are
listed once here: every reader that asks whether a text runs or shows one uses SGLANG_MARKER_RE
(where a launcher is named) or SGLANG_LAUNCH_RE (a launch command as typed).
"""

from __future__ import annotations

import re

FLAG_RE = re.compile(r"(?<![\w/.=-])--[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")
ENV_RE = re.compile(r"\b(?:SGLANG|SGL)_[A-Z0-9_]*[A-Z0-9]\b")
CODE_SPAN_RE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
# SGLang's launchers, the one list of them: SGLang's own modules (not another package's
# `hisim.simulation.sglang.launch_server`), and its CLI's subcommands where they are a command, with
# flags after them (not "running `sglang generate` with FLUX", "it fails under sglang serve"). The server's, which parse
# the flags SGLang's flag registry lists: the server module (`python3 -m sglang.launch_server`,
# `launch_server.py` run as a file) and `sglang serve`
_MODULE = r"(?<![\w.])"
_SUBCOMMAND = r"(?=\s+(?:--|\\|\.\.\.|…))"
_SERVER_LAUNCHERS = rf"{_MODULE}sglang\.launch_server|launch_server\.py|\bsglang\s+serve{_SUBCOMMAND}"
# those whose flags are their own: SGLang-JAX's (`python3 -u -m sgl_jax.launch_server
# --device=tpu ...`), the diffusion server (`python3 -m sglang.multimodal_gen.runtime.launch_server`)
# and the diffusion CLI `sglang generate` (`--prompt`, `--num-gpus`, `--save-output`)
_OWN_FLAG_LAUNCHERS = (rf"{_MODULE}sgl_jax\.launch_server|{_MODULE}sglang\.multimodal_gen\.[\w.]*launch_server"
                       rf"|\bsglang\s+generate{_SUBCOMMAND}")
_LAUNCHERS = f"{_OWN_FLAG_LAUNCHERS}|{_SERVER_LAUNCHERS}"
# where a text names a launcher, or the DeepGEMM precompiler, which takes the server's flags:
# SGLang's flags come after it
SGLANG_MARKER_RE = re.compile(f"(?P<own_flags>{_OWN_FLAG_LAUNCHERS})|{_SERVER_LAUNCHERS}|{_MODULE}sglang\\.compile_deep_gemm")
# a command that starts an SGLang server as a user types it: a launcher run by Python
# (`python3 -m sglang.launch_server`, `python3 -u -m sgl_jax.launch_server`) or followed by its flags
# (`sglang serve --model-path ...`, `sglang generate \`, `python launch_server.py --...`); not a
# sentence that only names one ("I start it with sglang.launch_server"): a lead asks for the launch
# command only when the paste shows none
SGLANG_LAUNCH_RE = re.compile(rf"\bpython[\d.]*\s+(?:-\w+\s+)*-m\s+(?:{_LAUNCHERS})(?![\w.])|(?:{_LAUNCHERS})\s+(?:--|\\)")
# where a command that runs any SGLang program begins, its program: a module of SGLang's or
# SGLang-JAX's run by Python (the server, `sglang.bench_serving`, `sglang.check_env`), the `sglang`
# CLI, a `launch_server.py` script. For the readers that set a command line apart from the words
# around it (the trace reader cutting a sentence before a command, retrieval leaving a command's
# flags out of the evidence)
SGLANG_PROGRAM = (r"[\w/.-]*python[\d.]*\s+(?:-\S+\s+)*-m\s+(?:sglang|sgl_jax)\b[\w.]*|\bsglang\s+(?:serve|generate)\b"
                  r"|[\w/.-]*launch_server(?:\.py)?")
ROUTER_MARKER_RE = re.compile(r"sglang_router|launch_router|sgl-router|sgl_router|model_gateway")
# Programs whose own flags commonly appear in fixes; a flag after one of them is not SGLang's.
EXTERNAL_PROGRAMS = (
    "docker", "podman", "nerdctl", "pip", "pip3", "uv", "conda", "apt", "apt-get", "yum", "dnf",
    "nvidia-smi", "rocm-smi", "amd-smi", "npu-smi", "mthreads-gmi", "kubectl", "helm", "curl",
    "wget", "ss", "lsof", "netstat", "fuser", "kill", "pkill", "ps", "grep", "nvcc", "torchrun",
    "mpirun", "git", "rm", "ulimit", "numactl", "modprobe", "ip", "py-spy", "vllm", "ray",
    "huggingface-cli", "hf", "transfer_engine_bench", "all_reduce_perf", "ibv_devinfo", "gh",
    "systemctl", "journalctl", "sysctl", "cmake", "make", "torch.distributed.run",
)
_EXTERNAL_RE = re.compile(
    r"(?<![\w-])(?:" + "|".join(re.escape(p) for p in EXTERNAL_PROGRAMS) + r")(?![\w-])"
)


def _own_flags(marker: re.Match) -> bool:
    return marker.group("own_flags") is not None


def has_own_flags(command: str | None) -> bool:
    """The command runs a launcher whose flags are its own (SGLang-JAX's, the diffusion server's):
    SGLang's flag registry says nothing about them."""
    marker = SGLANG_MARKER_RE.search(command or "")
    return marker is not None and _own_flags(marker)


# a shell comment after a command (`--tp 8  # no --enable-dp-attention`): the user's note, often
# of what the command does not use, never part of it
# (not a root shell's prompt at the line's start: `# python -m sglang.launch_server ...`)
SHELL_COMMENT_RE = re.compile(r"(?<=\S)[ \t]+#(?![0-9a-fA-F]{3,8}\b)[^\n]*")


def without_comments(command: str) -> str:
    return SHELL_COMMENT_RE.sub("", command)


def _flags_in_command(command: str) -> list[str]:
    """SGLang flags in one shell command (possibly several joined by && ; | or newlines)."""
    found: list[str] = []
    for simple in re.split(r"&&|\|\||[;|\n]", without_comments(command).replace("\\\n", " ")):
        simple = simple.strip()
        if not simple or ROUTER_MARKER_RE.search(simple):
            continue
        marker = SGLANG_MARKER_RE.search(simple)
        if marker and _own_flags(marker):
            continue   # SGLang-JAX's and the diffusion launchers' flags are their own, not in SGLang's flag registry
        if marker:
            found += FLAG_RE.findall(simple[marker.end():])
        elif simple.startswith("--"):
            found += FLAG_RE.findall(simple)
    return found


def _flags_in_prose(text: str) -> list[str]:
    found: list[str] = []
    for line in text.splitlines():
        for match in FLAG_RE.finditer(line):
            before = line[: match.start()]
            external = list(_EXTERNAL_RE.finditer(before))
            markers = list(SGLANG_MARKER_RE.finditer(before))
            sglang = [m for m in markers if not _own_flags(m)]
            router = list(ROUTER_MARKER_RE.finditer(before))
            last_other = max([m.end() for m in external + router + [m for m in markers if _own_flags(m)]], default=-1)
            last_sglang = max([m.end() for m in sglang], default=-1)
            if last_other > last_sglang and match.start() - last_other < 120:
                continue
            found.append(match.group(0))
    return found


def sglang_names(*texts: str) -> list[str]:
    """Unique SGLang flags and env var names, in order of appearance, across texts.

    Fenced blocks and `code spans` are read as commands; the rest as prose."""
    names: list[str] = []
    for text in texts:
        if not text:
            continue
        prose_parts, last = [], 0
        for match in CODE_SPAN_RE.finditer(text):
            prose_parts.append(text[last: match.start()])
            names += _flags_in_command(match.group(1) or match.group(2))
            last = match.end()
        prose_parts.append(text[last:])
        prose = " ".join(prose_parts)
        if "`" not in text and SGLANG_MARKER_RE.search(text):
            names += _flags_in_command(text)  # a bare command, e.g. an entry's `commands` item
        else:
            names += _flags_in_prose(prose)
        names += ENV_RE.findall(text)
    return list(dict.fromkeys(names))


def launch_command_flags(command: str) -> list[tuple[str, str | None]]:
    """(flag, value) pairs of an SGLang launch command, in order."""
    marker = SGLANG_MARKER_RE.search(command)
    if not marker:
        return []
    tokens = without_comments(command[marker.end():]).replace("\\\n", " ").split()
    end = next((i for i, token in enumerate(tokens) if token in SHELL_OPERATORS), len(tokens))
    # a command quoted for a shell (`bash -c '... --enable-multimodal' > x.log`) ends at the quote
    # that closes the one opened before it
    opened = [q for q in ("'", '"', "`") if command[:marker.start()].count(q) % 2 == 1]
    end = next((i + 1 for i, token in enumerate(tokens[:end]) if token[-1:] in opened), end)
    tokens = tokens[:end]
    # a command quoted inside the user's sentence ends where the sentence goes on: at a word in
    # Chinese or an aside in brackets, and after a word that closes the sentence (`--tp 2.`)
    end = next((i for i, token in enumerate(tokens) if PROSE_WORD_RE.search(token) or token.startswith("(")),
               len(tokens))
    end = next((i + 1 for i, token in enumerate(tokens[:end]) if SENTENCE_END_RE.search(token)), end)
    tokens = _placeholders_whole([_unpunctuated(token) for token in tokens[:end]])
    pairs: list[tuple[str, str | None]] = []
    for i, token in enumerate(tokens):
        if FLAG_RE.fullmatch(token.split("=", 1)[0]):
            if "=" in token:
                flag, value = token.split("=", 1)
            else:
                flag = token
                # a flag takes every word up to the next flag: `--lora-target-modules q_proj v_proj`
                values = []
                for nxt in tokens[i + 1:]:
                    # after the first value, only words that read as values (a module name, a
                    # path, `name=path`), not the user's sentence going on after the command
                    if nxt.startswith("--") or (values and not LIST_VALUE_RE.search(nxt)):
                        break
                    if ELIDED_RE.fullmatch(nxt):   # `...`: what the user left out of the command
                        continue
                    values.append(nxt)
                value = " ".join(values) or None
            if (flag, value) not in pairs:
                pairs.append((flag, value))
    return pairs


# what a user writes in place of the rest of a command: `...`, `…`. A placeholder for one value
# (`<MODEL_PATH>`, `{{port}}`, `${MODEL}`, `$MODEL`, `/path/to/model`) is that value as they wrote
# it: the flag was given one, and `--model-path` shown bare would say it was not
ELIDED_RE = re.compile(r"\.{3,}|…+")
_PLACEHOLDER_OPEN_RE = re.compile(r"^<[^<>]*$")


def _placeholders_whole(tokens: list[str]) -> list[str]:
    """The words with a placeholder the user wrote with spaces (`<your model path>`) as one word."""
    joined: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if _PLACEHOLDER_OPEN_RE.match(token):
            close = next((j for j in range(i + 1, min(i + 6, len(tokens)))
                          if tokens[j].endswith(">") and "<" not in tokens[j]), None)
            if close is not None and not any(t.startswith("-") for t in tokens[i + 1:close + 1]):
                joined.append(" ".join(tokens[i:close + 1]))
                i = close + 1
                continue
        joined.append(token)
        i += 1
    return joined


# a Chinese character or full-width punctuation: the user's own words, never part of a command
PROSE_WORD_RE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
# a word that ends the sentence a command was quoted in ("... --disable-cuda-graph." / "--tp 2,")
SENTENCE_END_RE = re.compile(r"[^.][.,;]$")


def _unpunctuated(token: str) -> str:
    """A word without the sentence's punctuation after it (`--disable-cuda-graph.` -> the flag);
    a value that is only dots (`.`, `..`) is a path and stays. A quote that closes one opened
    before the word (`bash -c '... --enable-multimodal'`, a command in a Markdown code span) is
    the shell's or the page's, not the word's; a quoted value (`--chat-template='x'`) keeps both of its quotes."""
    token = token.rstrip(".,;") or token
    if token[-1:] in ("'", '"', "`") and token.count(token[-1]) % 2 == 1 and len(token) > 1:
        token = token[:-1]
    return token


SHELL_OPERATORS = frozenset({"|", "&&", ";", "2>&1", ">", ">>", "&"})
LIST_VALUE_RE = re.compile(r"[_/.=:\d]")
