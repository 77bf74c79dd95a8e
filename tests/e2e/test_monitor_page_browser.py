"""The monitor's status page as headless Chromium shows it: the text of the page's DOM after
the browser parsed it (`--dump-dom`), not pixels.

Chromium runs with the flags it needs on these machines (no sandbox as root, no GPU, none of
its background connections, a fresh profile). Without Chromium the test skips, saying so; in
CI (TRUEGREEN_REQUIRE_REAL_PARTS=1) it fails instead.
"""

import signal
import subprocess
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer
from tests.support.monitoring import http_get, start_monitor, wait_for
from tests.support.real_parts import find
from tests.support.scenarios import NAMESPACE, unbound_dataset_volume

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


class _Text(HTMLParser):
    """The page's text as a reader sees it (paragraphs and rows on lines of their own), and
    the text of every <code> element."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = [""]
        self.code: list[str] = []
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in.append(tag)
        if tag in ("p", "li", "tr", "h1", "h2", "div"):
            self.lines.append("")
        if tag == "code":
            self.code.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            del self._in[len(self._in) - 1 - self._in[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if {"style", "title", "head"} & set(self._in):
            return
        if "td" in self._in and self.lines[-1]:
            self.lines[-1] += " | "
        self.lines[-1] += data
        if "code" in self._in:
            self.code[-1] += data

    def text(self) -> list[str]:
        return [" ".join(line.split()) for line in self.lines if line.strip()]


def _dom(url: str, profile: Path) -> str:
    chromium = find("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (Debian package chromium): apt-get install chromium")
    done = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_page_in_a_browser_reads_once_shows_commands_as_code_and_lists_every_check(
    fake_api: FakeApiServer, tmp_path: Path
) -> None:
    fake_api.add(*unbound_dataset_volume(datetime.now(UTC)))
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
    monitor, base = start_monitor(kubeconfig, "--min-interval", "0.2", "--no-events")
    try:
        wait_for("/readyz", lambda: http_get(base + "/readyz")[0] == 200)
        page = _Text()
        page.feed(_dom(base + "/", tmp_path / "profile"))
    finally:
        monitor.end(signal.SIGTERM)
    lines = page.text()
    describe = f"kubectl --kubeconfig {kubeconfig} -n train describe pvc datasets"
    assert lines[1] == (
        "NOT READY The dataset volume 'datasets' has no storage behind it yet (pending)."
    ), lines
    assert lines[2].startswith(f"→ See why with {describe}; "), lines
    assert describe in page.code, "the command is code, as pasted"
    assert not [line for line in lines if "`" in line], "no literal backticks"
    rows = lines[lines.index("Checks") + 2 :][:9]
    assert [row.split(" | ")[:2] for row in rows] == [
        ["credentials", "-"],
        ["image-pull", "✓ good"],
        ["storage", "✗ failing"],
        ["queue", "✓ good"],
        ["admission", "✓ good"],
        ["workloads", "✓ good"],
        ["evidence", "✓ good"],
        ["capacity", "✓ good"],
        ["probes", "✓ good"],
    ], rows
    assert all(row.endswith(" s ago") for row in rows[1:]), rows


def test_the_headline_of_a_ready_namespace_does_not_repeat_the_verdict() -> None:
    """`READY Ready: training can run.` read as a stutter; the page says it once."""
    from truegreen.doctor.catalogue import render
    from truegreen.doctor.findings import Basis, CheckId, Finding, Status
    from truegreen.doctor.rollup import roll_up
    from truegreen.monitor.engine import Evaluation
    from truegreen.monitor.page import status_page

    text, _ = render("ready")
    ok = Finding(CheckId.STORAGE, Status.OK, Basis.MEASURED, "storage.ok", "fine", "")
    report = roll_up([ok], [CheckId.STORAGE])
    assert report.headline.text == text == "Ready: training can run.", "precondition"
    at = datetime(2026, 5, 1, 12, tzinfo=UTC)
    page = _Text()
    page.feed(status_page("train", Evaluation("train", report, at, 0.0, 0.1, (), at, 1), at))
    assert page.text()[1] == "READY Training can run."
