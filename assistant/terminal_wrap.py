"""A log copied from a terminal that broke its long lines at the window's width, joined again.

tmux's and screen's copy mode, the classic Windows console and some web terminals hand over what
the screen showed: a long line (a traceback frame, the exception, a `server_args=` dump) cut into
pieces of exactly the window's width. An error line cut in two matches no entry's line.

The width shows in the paste itself, as a spike in the lengths of its lines: at least three
distinct lines exactly W characters long (W at least 60; one is enough at a terminal's default
width, 80 or 120 columns, where an error line cut once is the common case), most of them going on
in the next line, no more than half as many program lines longer (a terminal of width W prints
none; the user's own sentences around the log, an issue's `[Bug] ...` title among them, can be
longer, however many), twice as many as the lines a few characters short of W that go on in the
next (a paragraph wrapped at words ends anywhere short of its width, a terminal cuts every piece
at it), and most of them starting as a program's line (a stamp, a frame, an exception). A line of
exactly W characters is then joined with the next, unless the next is longer than W (no piece of a
cut is) or starts a line of its own: a time stamp or another logger's or collector's prefix, a
traceback's header, frame or indented source line, an exception, the collector's tag the line
itself starts with, or the line's own first words (the next line of a template). The width is
read from the first lines (bounded, so a log of any size streams) and applies to the rest; a
paste with fewer than three cut lines at another width is read as it is, since one or two lines
of one length are chance as often as a cut.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import chain

from assistant.log_encoding import is_program_line

MIN_WIDTH = 60            # narrower windows do not show a log
MIN_FULL_LINES = 3        # lines exactly as wide as the window, at least
# the default widths of a terminal (xterm, GNOME's, macOS's, PuTTY: 80; Windows' console: 120): a
# line exactly that long that goes on in the next is one cut, not chance
DEFAULT_WIDTHS = frozenset({80, 120})
# program lines longer than the window (pasted apart, from another window) may be up to this
# share of the full ones
LONGER_SHARE = 0.5
# and most full lines go on in the next line
CONTINUED_SHARE = 0.6
# lines this much shorter than the width are what wrapping at words leaves; the full ones must
# outnumber them this many times
RAGGED = 8
SPIKE = 2
# share of the cut lines that start as a program's line
PROGRAM_SHARE = 0.5
# two lines that start alike for this long are two lines of one template
TEMPLATE_HEAD = 16
SAMPLE_LINES = 4000       # lines read to find the width
SAMPLE_CHARS = 4 << 20

# the tag before an issue's title: a word in brackets, no digit (a logger's has a time, a rank)
_TITLE_TAG_RE = re.compile(r"^\s*\[[A-Za-z][A-Za-z /_-]{0,20}\]:?\s")
# what starts a line of its own besides a program's line (`is_program_line`): a chained
# traceback's header, a warning, a blank line, an indented one (a traceback's source line, a
# continued message: a cut lands on two spaces seldom)
_LINE_START_RE = re.compile(r"^(?:During handling of the above|The above exception|[A-Z]\w*Warning\b:|\s*$|\s{2,}\S)")
# the two sides of a cut inside a word or a path: a lower-case letter, digit, `_` or `/` ends the
# line, one starts the next (a sentence that goes on in the next line starts it with a capital or a space)
_IN_A_WORD_HEAD_RE = re.compile(r"[a-z0-9_/]$")
_IN_A_WORD_TAIL_RE = re.compile(r"[a-z0-9_/]")
# a line that starts with a word and a colon is one of its own (`decode:`, `sglang: 0.4.9`, NCCL's
# `ncclSystemError: ...` after its version line), and a whole frame ends with its function's name,
# its source line comes next (a frame cut inside its path is cut in a word)
_LABEL_RE = re.compile(r"\S+:(?:\s|$)")
_FRAME_RE = re.compile(r'^\s*File "[^"]+", line \d+, in [\w<>.]+$')


def window_width(lines: list[str]) -> int | None:
    """The terminal width the lines were cut at, or None when they were not cut."""
    width = _spiked_width(lines)
    return width if width is not None else _wide_cut_in_a_word(lines)


def _wide_cut_in_a_word(lines: list[str]) -> int | None:
    """The width of a window wider than a default terminal's (a maximised one) that cut the
    paste's longest program line once, inside a word or a path (`... failed to dispatch grou` /
    `p_size 5`):
    a single line of a rare length is chance unless the cut splits a word, which neither a line
    ending nor a paragraph wrapped at words does. No line of the paste is longer, and every line
    that long goes on in the next with a letter, digit, `_` or `/` on both sides of the cut (a line a
    program ends and the next one starts are a sentence's end and a capital, a space, a stamp)."""
    printed = [len(line) for line in lines if _printed(line)]
    width = max(printed, default=0)
    if width <= max(DEFAULT_WIDTHS) or any(len(line) > width for line in lines):
        return None
    cuts = [(line, following) for line, following in zip(lines, lines[1:]) if len(line) == width]
    if not cuts:
        return None
    for line, following in cuts:
        if not (_goes_on(line, following, width) and _IN_A_WORD_HEAD_RE.search(line)
                and _IN_A_WORD_TAIL_RE.match(following) and not _LABEL_RE.match(following)
                and not _FRAME_RE.match(line)):
            return None
    return width


def _spiked_width(lines: list[str]) -> int | None:
    """The width many lines were cut at (see the module's docstring), or None."""
    lengths = Counter(len(line) for line in lines)
    # a terminal prints no line longer than its width, but the user's sentences around the log are
    # theirs: only a longer program line speaks against a width
    program_lengths = sorted(len(line) for line in lines if len(line) > MIN_WIDTH and _printed(line))
    for width in sorted((w for w, n in lengths.items() if w >= MIN_WIDTH and n >= _min_full(w)), reverse=True):
        # a piece of a cut line goes on in the next line; the same line printed twice (by two
        # ranks) is one line, not two cuts
        full = {line for line in lines if len(line) == width}
        longer = len(program_lengths) - bisect_right(program_lengths, width)
        if longer > LONGER_SHARE * len(full):
            return None
        if len(full) < _min_full(width):
            continue
        going_on = {line for line, following in zip(lines, lines[1:])
                    if len(line) == width and _goes_on(line, following, width)}
        # text wrapped at words ends anywhere short of the width; a terminal cuts every piece at it
        # (only a line that goes on in the next is a piece of wrapped text, and the first piece
        # starts as a program's line: a frame, or the user's own sentence, that happens to end near
        # the width is a line of its own)
        short_of_it = sum(1 for before, line, following in zip(["", *lines], lines, lines[1:])
                          if width - RAGGED <= len(line) < width and _goes_on(line, following, width)
                          and (width - RAGGED <= len(before) < width or _printed(line)))
        # and what was cut is a log: most cut lines start as a program's line (a stamp, a frame,
        # an exception), where a paragraph the user wrapped at words starts with a sentence
        heads = {line for before, line in zip(["", *lines], lines)
                 if len(line) == width and len(before) != width}
        logged = sum(1 for line in heads if _printed(line))
        cut = (len(going_on) >= _min_full(width) and len(going_on) >= CONTINUED_SHARE * len(full)
               and len(full) >= SPIKE * short_of_it and logged >= PROGRAM_SHARE * len(heads))
        return width if cut else None
    return None


def _printed(line: str) -> bool:
    """A line a program printed; an issue's title behind its tag (`[Bug] ...`) is the user's."""
    return is_program_line(line) and not _TITLE_TAG_RE.match(line)


def _min_full(width: int) -> int:
    return 1 if width in DEFAULT_WIDTHS else MIN_FULL_LINES


def _goes_on(head: str, line: str, width: int) -> bool:
    """`line` is the rest of `head`, cut at `width`: no longer than the window (a terminal's piece
    never is; an issue's title as long as the window is followed by a longer sentence) and not a
    line of its own."""
    return len(line) <= width and not _starts_a_line(line, head)


def _starts_a_line(line: str, head: str) -> bool:
    """The line is one of its own, not the tail of `head` (the line it would continue): it starts
    as a log line, a traceback's or exception's does, with the collector's tag `head` starts with
    (Slurm's `0:`, a tail carries no tag), or as `head` does (the next line of a template)."""
    if _LINE_START_RE.match(line) or is_program_line(line):
        return True
    tag = line.split(maxsplit=1)[0] if line.strip() else ""
    return (not tag.isalnum() and head.split(maxsplit=1)[:1] == [tag]) or line[:TEMPLATE_HEAD] == head[:TEMPLATE_HEAD]


def unwrapped(lines: Iterable[str]) -> Iterator[str]:
    """The lines with every cut at the window's width joined again (the lines as they are when
    nothing was cut)."""
    stream = iter(lines)
    sample: list[str] = []
    chars = 0
    for raw in stream:
        sample.append(raw.rstrip("\r\n"))
        chars += len(raw)
        if len(sample) >= SAMPLE_LINES or chars >= SAMPLE_CHARS:
            break
    width = window_width(sample)
    if width is None:
        yield from sample
        yield from stream   # as they are: the next reader strips their line ends
        return
    rest = (raw.rstrip("\r\n") for raw in stream)
    pending: str | None = None
    for line in chain(sample, rest):
        if pending is not None and _goes_on(pending, line, width):
            pending += line
        else:
            if pending is not None:
                yield pending
            pending = line
        if len(line) != width:
            yield pending
            pending = None
    if pending is not None:
        yield pending
