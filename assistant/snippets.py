"""Commands that are not shell: a fix step's YAML, Python or JSON snippet, and how a step shows it.

A KB fix step lists its commands as strings, and most are shell (`export X=0`, `pip install ...`,
a `python3 - <<'EOF'` heredoc). Some are the content of a file or a program instead: a Ray
`runtime_env.yaml` fragment, the Python a user puts in their own script, a JSON config. Shown after
`$ ` they read as something to type into a shell, where they fail (`env_vars:` is no command). So a
step (`assistant.answer.format_step`) shows a shell command as `    $ <command>` and any other snippet
as an indented fenced block that names its language:

        ```yaml
        # Ray runtime_env.yaml:
        env_vars:
          NCCL_CUMEM_HOST_ENABLE: "0"
        ```

`step_parts` reads a step back into its text and its blocks in order, for the web page and Slack,
which show each block in a code block of its language.
"""

from __future__ import annotations

import json
import re

COMMAND_PREFIX = "    $ "
CAUTION_MARK = "    ! "
BLOCK_INDENT = "    "
FENCE = "```"

# the file a leading comment names (`# Ray runtime_env.yaml:`, `# config.json`, `# my_script.py`)
_NAMED_FILE_RE = re.compile(r"^#.*?\.(ya?ml|json|py)\b", re.I)
# Python source: its first statement (not a shell command of the same name: `import` is ImageMagick's,
# but never followed by a module and a newline of code)
_PYTHON_START_RE = re.compile(r"^(?:import [\w.]+(?:\s*,\s*[\w.]+)*(?: as \w+)?$|from [\w.]+ import \S|class \w+[(:]|"
                              r"(?:async )?def \w+\(|@\w[\w.]*(?:\(|$)|if __name__ == |"
                              # a call on an object (`client.chat.completions.create(...)`), an assignment
                              # with spaces (a shell one has none)
                              r"[a-z_]\w*(?:\.\w+)+\(|[A-Za-z_]\w* = \S)")
# a YAML mapping line: `key:` opening a block, or `key: value`
_YAML_LINE_RE = re.compile(r"^\s*(?:- )?[\w.\-\"']+:(?:\s+\S.*)?$")
_YAML_BLOCK_RE = re.compile(r"^\s*[\w.\-\"']+:$")
# one line of YAML whose value is a list, a mapping or a string (`args: ["--dist-init-addr", ...]`)
_YAML_ONE_LINE_RE = re.compile(r"^[A-Za-z_][\w-]*:\s+[\[{\"']")
LANGUAGE_NAMES = {"yml": "yaml", "yaml": "yaml", "json": "json", "py": "python"}


def snippet_language(command: str) -> str | None:
    """"yaml", "python" or "json" for a command that is a file's or a program's content; None for a
    shell command."""
    lines = [line for line in command.strip().splitlines() if line.strip()]
    if not lines:
        return None
    named = _NAMED_FILE_RE.match(lines[0].strip())
    if named:
        return LANGUAGE_NAMES[named.group(1).lower()]
    code = [line for line in lines if not line.lstrip().startswith("#")]
    if not code:
        return None
    first = code[0].strip()
    if first[:1] in "{[" and _is_json(command):
        return "json"
    if _PYTHON_START_RE.match(first):
        return "python"
    if len(code) == 1 and _YAML_ONE_LINE_RE.match(first):
        return "yaml"
    if len(code) > 1 and any(_YAML_BLOCK_RE.match(line) for line in code) and all(_YAML_LINE_RE.match(line) for line in code):
        return "yaml"
    return None


def _is_json(text: str) -> bool:
    """A JSON value, or a JSON object with `...` standing for the values the user fills in."""
    text = text.strip()
    try:
        json.loads(text)
        return True
    except ValueError:
        return text.startswith('{"') and text.endswith("}")


def command_lines(command: str) -> list[str]:
    """A step's lines for one of its commands: `$ ` before a shell command (whose further lines,
    a heredoc's body, follow as written), a fenced block for any other snippet."""
    language = snippet_language(command)
    if language is None:
        return [COMMAND_PREFIX + command]
    body = command.strip("\n").splitlines()
    return [f"{BLOCK_INDENT}{FENCE}{language}", *(BLOCK_INDENT + line if line else "" for line in body),
            BLOCK_INDENT + FENCE]


def step_parts(step: str) -> tuple[list[str], list[tuple[str, str]]]:
    """A formatted step -> (its text lines, its blocks in order as (language, code)); the shell
    commands next to each other make one "bash" block. Caution lines are text."""
    first, *rest = step.split("\n")
    text, blocks = [first], []
    shell: list[str] = []
    snippet: tuple[str, list[str]] | None = None

    def close_shell():
        if shell:
            blocks.append(("bash", "\n".join(shell)))
            shell.clear()

    for line in rest:
        if snippet is not None:
            if line == BLOCK_INDENT + FENCE:
                blocks.append((snippet[0], "\n".join(snippet[1])))
                snippet = None
            else:
                snippet[1].append(line[len(BLOCK_INDENT):] if line.startswith(BLOCK_INDENT) else line)
        elif line.startswith(BLOCK_INDENT + FENCE):
            close_shell()
            snippet = (line[len(BLOCK_INDENT + FENCE):].strip() or "text", [])
        elif line.startswith(COMMAND_PREFIX):
            shell.append(line[len(COMMAND_PREFIX):])
        elif line.startswith(CAUTION_MARK) or not shell:
            close_shell()
            text.append(line.strip())
        else:   # the next line of a multi-line shell command (a heredoc's body)
            shell[-1] += "\n" + line
    close_shell()
    if snippet is not None:   # a block cut short: what there is of it
        blocks.append((snippet[0], "\n".join(snippet[1])))
    return [t for t in text if t], blocks
