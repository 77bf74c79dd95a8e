"""Where output goes: results to stdout, messages to stderr, colour only when wanted, and a
progress line on stderr only when a person watches a terminal."""

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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


def make_consoles(no_color: bool) -> Consoles:
    """Consoles honouring `--no-color` and NO_COLOR; colour only on a terminal."""
    plain = no_color or bool(os.environ.get("NO_COLOR"))
    return Consoles(
        out=Console(file=sys.stdout, no_color=plain, highlight=False, soft_wrap=True),
        err=Console(file=sys.stderr, no_color=plain, highlight=False, soft_wrap=True),
    )


def progress_wanted(no_color: bool) -> bool:
    """A progress line only for a person at a terminal: stderr is one, and neither
    `--no-color`, NO_COLOR nor TERM=dumb asks for plain, still output."""
    return (
        sys.stderr.isatty()
        and not no_color
        and not os.environ.get("NO_COLOR")
        and os.environ.get("TERM", "") != "dumb"
    )


@contextmanager
def progress_line(console: Console | None) -> Iterator[Callable[[str], None] | None]:
    """One line on `console` that each call replaces, gone when the block ends; with no
    console, nothing to call (None)."""
    if console is None:
        yield None
        return
    with console.status("", spinner="dots") as status:
        yield lambda text: status.update(escape(text) + "…")
