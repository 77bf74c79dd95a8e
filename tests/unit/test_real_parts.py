"""What `make unit` says about the real programs the suite drives (tests/support/real_parts)."""

import pytest

from tests.support import real_parts
from tests.support.real_parts import REAL_PARTS, report


def test_every_missing_part_is_named_with_what_it_is_for_and_its_package() -> None:
    chromium, promtool = (
        next(p for p in REAL_PARTS if p.binary == b) for b in ("chromium", "promtool")
    )
    assert report([promtool, chromium]) == [
        "real parts missing: promtool, chromium; the tests that need them skip (or fail, for "
        "kubectl):",
        "  promtool: checking the shipped alert rules",
        "  chromium: the monitor's status page read in a browser",
        "install them with: apt-get install prometheus chromium",
    ]
    assert report([]) == []


def test_a_missing_part_fails_under_ci_instead_of_skipping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda binary: None)
    monkeypatch.delenv("TRUEGREEN_REQUIRE_REAL_PARTS", raising=False)
    assert real_parts.find("chromium") is None
    monkeypatch.setenv("TRUEGREEN_REQUIRE_REAL_PARTS", "1")
    with pytest.raises(
        RuntimeError, match=r"^chromium is required in CI \(Debian package chromium\)$"
    ):
        real_parts.find("chromium")
