"""Where output goes: results to stdout, messages to stderr, colour only when wanted, and a
progress line on stderr only when a person watches a terminal."""

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from msgspec import Struct
from rich.console import Console
from rich.markup import escape


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
    TERM=dumb. rich's own no_color drops colours but still writes bold and dim."""
    return no_color or bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM", "") == "dumb"


def make_consoles(no_color: bool) -> Consoles:
    """Consoles honouring `--no-color`, NO_COLOR and TERM=dumb; styles only on a terminal."""
    plain = plain_wanted(no_color)
    system: Literal["auto"] | None = None if plain else "auto"
    return Consoles(
        out=Console(file=sys.stdout, color_system=system, highlight=False, soft_wrap=True),
        err=Console(file=sys.stderr, color_system=system, highlight=False, soft_wrap=True),
    )


def progress_wanted(no_color: bool) -> bool:
    """A progress line only for a person at a terminal: stderr is one, and neither
    `--no-color`, NO_COLOR nor TERM=dumb asks for plain, still output."""
    return sys.stderr.isatty() and not plain_wanted(no_color)


@contextmanager
def progress_line(console: Console | None) -> Iterator[Callable[[str], None] | None]:
    """One line on `console` that each call replaces, gone when the block ends; with no
    console, nothing to call (None)."""
    if console is None:
        yield None
        return
    with console.status("", spinner="dots") as status:
        yield lambda text: status.update(escape(text) + "…")
