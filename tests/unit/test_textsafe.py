"""Text from outside reaches a terminal with every control character made visible."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truegreen.textsafe import terminal_safe


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b[31mred\x1b[0m", "a\\x1b[31mred\\x1b[0m"),  # ANSI colour (CSI)
        ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),  # window title (OSC ... BEL)
        ("x\x9b2J", "x\\x9b2J"),  # C1 CSI: clears the screen on many terminals
        ("ok\rFAKE", "ok\\rFAKE"),  # a carriage return overwrites what came before
        ("one\ntwo\tthree", "one\\ntwo\\tthree"),  # a name cannot fake a line of ours
        ("del\x7f\x00", "del\\x7f\\x00"),
        ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override (Trojan Source)
        ("\u2066x\u2069", "\\u2066x\\u2069"),
    ],
)
def test_controls_are_shown_not_obeyed(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown


def test_ordinary_text_is_untouched() -> None:
    text = "job-runner café 日本 ✓ [bold] \\x1b"
    assert terminal_safe(text) == text


@given(st.text())
def test_nothing_a_terminal_obeys_survives(text: str) -> None:
    safe = terminal_safe(text)
    assert not any(unicodedata.category(c) == "Cc" for c in safe)
    assert not any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in safe)
