"""Where output goes: results to stdout, messages to stderr, styles only when wanted, and a
progress line on stderr only when a person watches a terminal.

Lines are truegreen's markup (truegreen.markup), drawn here: SGR styles on a terminal that
wants them, the bare text everywhere else.
"""

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TextIO

from msgspec import Struct

from truegreen.markup import ansi, plain
from truegreen.textsafe import terminal_safe

DEFAULT_COLUMNS = 80
"""The width assumed for a terminal that does not say its own (rich's and Python's default)."""

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
"""The progress line's frames, one each `SPIN_SECONDS` (cli-spinners' `dots`)."""

SPIN_SECONDS = 0.08


class Console:
    """One stream: markup drawn with styles on a terminal that wants them, else as its text."""

    def __init__(self, file: TextIO, *, plain_wanted: bool) -> None:
        self.file = file
        self.is_terminal = _isatty(file)
        self.styled = self.is_terminal and not plain_wanted

    @property
    def width(self) -> int:
        """The terminal's columns: COLUMNS where it is a number, else what the terminal says,
        else 80 (rich's order)."""
        columns = os.environ.get("COLUMNS", "")
        if columns.isdigit():
            return int(columns)
        for stream in (sys.stdin, sys.stdout, sys.stderr):
            try:
                return os.get_terminal_size(stream.fileno()).columns
            except (AttributeError, ValueError, OSError):
                continue
        return DEFAULT_COLUMNS

    def print(self, line: str = "", *, markup: bool = True) -> None:
        """`line` and a newline, written at once; `markup=False` writes it as it is."""
        if markup:
            line = ansi(line) if self.styled else plain(line)
        self.file.write(line + "\n")
        self.file.flush()


def _isatty(file: TextIO) -> bool:
    try:
        return file.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream is no terminal
        return False


class Consoles(Struct, frozen=True):
    """The two streams a command writes to."""

    out: Console
    err: Console

    @property
    def width(self) -> int | None:
        """The columns to wrap results to: the terminal's, or None on a pipe or in a file."""
        return self.out.width if self.out.is_terminal else None


def plain_wanted(no_color: bool) -> bool:
    """No escape codes at all: `--no-color`, NO_COLOR (no-color.org: any non-empty value) or
    TERM=dumb."""
    return no_color or bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM", "") == "dumb"


def make_consoles(no_color: bool) -> Consoles:
    """Consoles honouring `--no-color`, NO_COLOR and TERM=dumb; styles only on a terminal."""
    plain = plain_wanted(no_color)
    return Consoles(
        out=Console(sys.stdout, plain_wanted=plain), err=Console(sys.stderr, plain_wanted=plain)
    )


def progress_wanted(no_color: bool) -> bool:
    """A progress line only for a person at a terminal: stderr is one, and neither
    `--no-color`, NO_COLOR nor TERM=dumb asks for plain, still output."""
    return sys.stderr.isatty() and not plain_wanted(no_color)


@contextmanager
def progress_line(console: Console | None) -> Iterator[Callable[[str], None] | None]:
    """One line on `console` that each call replaces, a spinner turning before it, gone when
    the block ends; with no console, nothing to call (None). A terminal that went away (a
    hang-up: its writes fail) stops the drawing, and never hides how the block ended."""
    if console is None:
        yield None
        return
    told = [""]
    stop = threading.Event()

    def draw(frame: int) -> None:
        # cropped to the terminal's width: a wrapped line would leave its first part behind
        text = terminal_safe(f"{told[0]}…" if told[0] else "")[: max(console.width - 3, 0)]
        glyph = SPINNER[frame % len(SPINNER)]
        console.file.write(f"\r\x1b[2K\x1b[32m{glyph}\x1b[0m {text}")
        console.file.flush()

    def spin() -> None:
        frame = 0
        while not stop.wait(SPIN_SECONDS):
            frame += 1
            try:
                draw(frame)
            except OSError:
                return  # the terminal went away: nothing to draw on

    console.file.write("\x1b[?25l")  # the cursor hidden while the line turns
    draw(0)
    spinner = threading.Thread(target=spin, name="progress", daemon=True)
    spinner.start()
    try:
        yield lambda text: told.__setitem__(0, text)
    finally:
        stop.set()
        spinner.join()
        with suppress(OSError):  # a terminal gone has no line to clear
            console.file.write("\r\x1b[2K\x1b[?25h")
            console.file.flush()
