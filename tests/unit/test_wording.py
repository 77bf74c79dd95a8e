"""Every headline and remedy doctor can print is in plain words, and listed in a golden file."""

from pathlib import Path

import pytest

from tests.support.plain_words import jargon_in
from truegreen.cluster import CantRead, Kind, ReadFailure
from truegreen.doctor.wording import WORDING, plain_why, render

GOLDEN = Path(__file__).parent.parent / "golden" / "headlines.txt"


def _sample_fields(code: str) -> dict[str, str]:
    # `<name_>`: readable in the golden file, and the underscore keeps a placeholder called
    # "namespace" from matching the jargon pattern itself.
    return {name: f"<{name}_>" for name in WORDING[code].placeholders}


def _rendered() -> list[tuple[str, str, str]]:
    return [(code, *render(code, **_sample_fields(code))) for code in sorted(WORDING)]


@pytest.mark.parametrize(("code", "headline", "remedy"), _rendered())
def test_no_jargon(code: str, headline: str, remedy: str) -> None:
    for text in (headline, remedy):
        found = jargon_in(text)
        assert not found, f"{code}: jargon {found} in {text!r}"


def test_golden_file_lists_every_sentence() -> None:
    lines = []
    for code, headline, remedy in _rendered():
        lines.append(f"{code}\n  headline: {headline}\n  remedy:   {remedy}\n")
    current = "\n".join(lines)
    if not GOLDEN.exists():
        GOLDEN.write_text(current)
        pytest.fail(f"wrote {GOLDEN}; review it and commit it")
    assert GOLDEN.read_text() == current, (
        "doctor's wording changed: regenerate tests/golden/headlines.txt (delete it and run the "
        "tests) and review the diff"
    )


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize("failure", list(ReadFailure))
def test_plain_reasons_have_no_jargon(kind: Kind, failure: ReadFailure) -> None:
    why = plain_why(kind, CantRead(failure, "technical reason"))
    assert not jargon_in(why), why


def test_the_jargon_check_catches_jargon() -> None:
    assert jargon_in("The pod is in CrashLoopBackOff on node x") == [
        "pod",
        "CrashLoopBackOff",
        "node",
    ]
