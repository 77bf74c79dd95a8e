"""When a progress line is wanted: a person at a terminal that asked for nothing plainer.

TERM=dumb asks for plain text as a terminal that cannot draw styles would."""

import io
import sys

import pytest

from truegreen.console import progress_wanted


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A plain environment; each test puts its stderr in place itself, because pytest's own
    capture replaces sys.stderr between a fixture and the test."""
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    return monkeypatch


def test_a_terminal_gets_progress(terminal: pytest.MonkeyPatch) -> None:
    terminal.setattr(sys, "stderr", _Terminal())
    assert progress_wanted(no_color=False) is True


@pytest.mark.parametrize(
    ("variable", "value"), [("TERM", "dumb"), ("NO_COLOR", "1")], ids=["TERM=dumb", "NO_COLOR"]
)
def test_plain_terminals_get_none(terminal: pytest.MonkeyPatch, variable: str, value: str) -> None:
    terminal.setenv(variable, value)
    terminal.setattr(sys, "stderr", _Terminal())
    assert progress_wanted(no_color=False) is False


def test_no_color_flag_gets_none(terminal: pytest.MonkeyPatch) -> None:
    terminal.setattr(sys, "stderr", _Terminal())
    assert progress_wanted(no_color=True) is False


def test_a_pipe_gets_none(terminal: pytest.MonkeyPatch) -> None:
    terminal.setattr(sys, "stderr", io.StringIO())
    assert progress_wanted(no_color=False) is False
