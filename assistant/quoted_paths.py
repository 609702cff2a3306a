"""A path quoted in an error message is where the user's files are, not what the error is.

`It looks like the config file at '/models/Qwen/config.json' is not a valid JSON file.` and the same
message quoting `'C:\\Users\\me\\.cache\\huggingface\\transformers\\'` are one error. Masking
(`assistant.text.mask`) replaces a POSIX directory with `<path>/` but keeps the file name, and it
does not read Windows paths, so a signature that quotes a path matched only the pastes whose path
ended in the same file. Here a signature's quoted path stands for any path a line quotes at that
place, with one exception that keeps what an entry means by its path: a line whose path names
another file (`'.../pytorch_model.bin'` where the signature quotes `'.../config.json'`) is about
that other file.
"""

from __future__ import annotations

import re
from functools import lru_cache

# a quoted value that holds a path separator and is no URL: `'<path>/config.json'`, `'c:\users\'`
QUOTED_PATH_RE = re.compile(r"'(?![a-z][\w+.-]*://)([^'\n]{0,300}?[/\\][^'\n]{0,300}?)'")
# a file's last path part: a name, a dot, a short extension of letters (`config.json`, `model.pth`);
# `.cache` is a hidden directory and `qwen2.5-7b` a model directory, neither names a file
FILE_NAME_RE = re.compile(r"[^/\\.][^/\\]*\.[a-z][a-z0-9]{0,7}$", re.I)
PLACEHOLDER = "'<path>'"


def file_name(path: str) -> str | None:
    """The file a quoted path names (lower-cased), or None when it names a directory."""
    match = FILE_NAME_RE.search(path.strip())
    return match.group(0).lower() if match else None


@lru_cache(maxsize=4096)
def signature_paths(masked_signature: str) -> tuple[str, tuple[str | None, ...]] | None:
    """A masked signature with its quoted paths made placeholders, and the files they name; None
    when it quotes no path."""
    paths = QUOTED_PATH_RE.findall(masked_signature)
    if not paths:
        return None
    return QUOTED_PATH_RE.sub(PLACEHOLDER, masked_signature), tuple(file_name(p) for p in paths)


@lru_cache(maxsize=8192)
def line_with_paths_as_placeholders(masked_line: str, files: tuple[str | None, ...]) -> str:
    """A masked line whose quoted paths are placeholders where they may be the signature's path
    (`files`, what signature_paths returned): a path that names no file, or a file the signature
    names or leaves open. A path naming another file stays as written, so the match fails."""
    def generalize(match: re.Match) -> str:
        named = file_name(match.group(1))
        fits = named is None or None in files or named in files
        return PLACEHOLDER if fits else match.group(0)

    return QUOTED_PATH_RE.sub(generalize, masked_line)
