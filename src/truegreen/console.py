"""Where output goes: results to stdout, messages to stderr, colour only when wanted."""

import os
import sys
from dataclasses import dataclass

from rich.console import Console


@dataclass(frozen=True)
class Consoles:
    """The two streams a command writes to."""

    out: Console
    err: Console


def make_consoles(no_color: bool) -> Consoles:
    """Consoles honouring `--no-color` and NO_COLOR; colour only on a terminal."""
    plain = no_color or bool(os.environ.get("NO_COLOR"))
    return Consoles(
        out=Console(file=sys.stdout, no_color=plain, highlight=False, soft_wrap=True),
        err=Console(file=sys.stderr, no_color=plain, highlight=False, soft_wrap=True),
    )
