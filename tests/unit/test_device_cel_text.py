"""`size()` and `matches()` on text beyond plain ASCII (doctor/knowledge/device_cel.py).

Sources: cel-spec doc/langdef.md (strings are sequences of Unicode code points; `size(string)`
is "string length in code points"; `matches` uses RE2 syntax); RE2's syntax page (`\\d` is
[0-9], `\\s` is [\\t\\n\\f\\r ], Perl classes are ASCII-only); cel-go's `size` counts runes.
The evaluator doctor uses counts bytes and reads `\\d`, `\\s` and `\\w` as Unicode classes, so
where such text can reach `size()` or `matches()`, doctor says it can't evaluate the selector.
"""

from typing import Any

import pytest

from truegreen.doctor.knowledge.device_cel import Selectors, Unevaluable

DRIVER = "gpu.example.com"
KEY = ("d", "p", "gpu-0")
MODEL = f"device.attributes['{DRIVER}'].model"


def _device(model: str) -> dict[str, Any]:
    """dra-example-driver's device (cmd/dra-example-kubeletplugin/discovery.go), its `model`
    string given."""
    return {"name": "gpu-0", "attributes": {"index": {"int": 0}, "model": {"string": model}}}


def _judge(expression: str, model: str = "LATEST-GPU-MODEL") -> bool | Unevaluable:
    return Selectors().matches(expression, KEY, DRIVER, _device(model))


@pytest.mark.parametrize(
    "expression",
    [
        f"size({MODEL}) == 6",
        f"size({MODEL}) == 7",
        f"{MODEL}.size() == 6",
        f"{MODEL}.matches('^.{{6}}$')",
        f"{MODEL}.matches ('^A')",
    ],
)
def test_size_and_matches_of_a_device_s_text_beyond_ascii_are_unevaluable(
    expression: str,
) -> None:
    """ "Ampère" is 6 code points and 7 bytes: Kubernetes says 6, the evaluator 7."""
    assert _judge(expression, "Ampère") == Unevaluable(
        expression,
        "device d/p/gpu-0: size() or matches() of text beyond plain ASCII, which the evaluator "
        "measures in bytes and matches with Unicode classes",
    )


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (f"size({MODEL}) == 6", True),
        (f"{MODEL}.size() == 5", False),
        (f"{MODEL}.matches('^[A-Z]\\\\w+$')", True),
        (f"{MODEL}.matches('\\\\d')", False),
        (f"{MODEL} == 'Ampère'", False),
    ],
)
def test_plain_text_is_measured(expression: str, expected: bool) -> None:
    assert _judge(expression, "Ampere") is expected


def test_text_beyond_ascii_is_judged_where_neither_size_nor_matches_reads_it() -> None:
    assert _judge(f"{MODEL} == 'Ampère'", "Ampère") is True
    assert _judge(f"{MODEL}.startsWith('Amp') && {MODEL}.endsWith('ère')", "Ampère") is True
    assert _judge(f"device.attributes['{DRIVER}'].index == 0", "Ampère") is True


@pytest.mark.parametrize(
    "expression",
    [
        "'\u0661'.matches('^\\\\d$')",
        "size('Ampère') == 6",
        "size('\\u00e8') == 1",
        "size('\\U000000e8') == 1",
        "size('\\xe8') == 1",
        "size(string(b'\\303\\250')) == 1",
        "'a\\vb'.matches('a\\\\sb')",
        "'a\\ab'.size() == 3",
        "'a\\bb'.size() == 3",
        "size('a\x7fb') == 3",
    ],
)
def test_size_and_matches_in_an_expression_that_writes_text_beyond_ascii_are_unevaluable(
    expression: str,
) -> None:
    """RE2's `\\d` is [0-9] (the Arabic-Indic one is no match) and its `\\s` leaves out the
    vertical tab; an escape (`\\u`, `\\U`, `\\x`, octal, `\\v`, `\\a`, `\\b`) or a character
    beyond printable ASCII writes such text."""
    assert _judge(expression) == Unevaluable(
        expression,
        "size() or matches() of text beyond plain ASCII, which the evaluator measures in bytes "
        "and matches with Unicode classes",
    )


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("'a b\\tc\\nd\\re\\ff'.matches('^a\\\\sb\\\\sc\\\\sd\\\\se\\\\sf$')", True),
        ("size('\\\\u00e8') == 6", True),
        ("size(' ~') == 2", True),
        ("'it\\'s \\\"q\\\" \\\\ \\`'.size() == 12", True),
        ("'7'.matches('^\\\\d$')", True),
    ],
)
def test_plain_ascii_and_its_plain_escapes_are_measured(expression: str, expected: bool) -> None:
    """A tab, newline, carriage return and form feed are RE2's `\\s` too; `\\\\u00e8` is a
    backslash and five letters, not an escape."""
    assert _judge(expression) is expected
