"""stdout that cannot be written (a full disk: Linux's /dev/full answers every write with
ENOSPC) is an environment failure, not a bug: one plain line on stderr naming it, exit 3
(`write-failed`), no traceback; a closed pipe stays as quiet as ever (tests/e2e/
test_cli_contract.py)."""

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import healthy

LINE = (
    "truegreen: couldn't write the output: no space left on device. make room where the output "
    "goes, or send it elsewhere, and run again"
)


@pytest.fixture
def full() -> Path:
    device = Path("/dev/full")
    assert device.exists(), "Linux's /dev/full is this test's full disk"
    return device


def _run(args: list[str], full: Path) -> subprocess.CompletedProcess[str]:
    with full.open("w") as stdout:
        return subprocess.run(
            [sys.executable, "-m", "truegreen", *args],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.mark.parametrize(
    "args",
    [
        ["lint", "deploy/doctor"],
        ["lint", "deploy/doctor", "-o", "json"],
        ["lint", "--list-rules"],
        ["lint", "--list-rules", "-o", "json"],
    ],
    ids=["lint", "lint-json", "rules", "rules-json"],
)
def test_a_full_disk_under_stdout_is_one_plain_line(args: list[str], full: Path) -> None:
    result = _run(args, full)
    assert result.stderr.strip().splitlines() == [LINE], result.stderr
    assert result.returncode == 3


@pytest.mark.parametrize("output", ["text", "json"])
def test_doctor_s_report_on_a_full_disk(
    fake_api: FakeApiServer, kubeconfig: Path, full: Path, output: str
) -> None:
    fake_api.add(*healthy(datetime.now(UTC)))
    result = _run(["doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", output], full)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == LINE, result.stderr
    assert result.returncode == 3


def test_a_usage_error_on_a_full_disk_still_says_what_was_wrong(full: Path) -> None:
    result = _run(["doctor", "--bogus", "-o", "json"], full)
    assert result.stderr.strip().splitlines() == [
        "truegreen: no such option '--bogus'. see `truegreen doctor --help`",
        LINE,
    ], result.stderr
    assert result.returncode == 3


CLOSED = (
    "truegreen: couldn't write the output: standard output is closed. send the output somewhere "
    "it can be written, and run again"
)


@pytest.mark.parametrize(
    ("args", "first"),
    [
        (["--version"], []),
        (["lint", "deploy/doctor"], []),
        (["doctor", "--snapshot", "examples/snapshots/healthy", "-o", "json"], []),
        (
            ["doctor", "--bogus", "-o", "json"],
            ["truegreen: no such option '--bogus'. see `truegreen doctor --help`"],
        ),
    ],
    ids=["version", "lint", "snapshot-json", "usage"],
)
def test_a_closed_stdout_is_one_plain_line(args: list[str], first: list[str]) -> None:
    """stdout closed before the run (`>&-`, as some daemons and cron jobs start programs):
    Python then has no sys.stdout at all. The output is lost, which is said as a full disk's
    is, with the remedy for a place that can't be written at all."""
    result = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "truegreen", *args],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.stderr.strip().splitlines() == [*first, CLOSED], result.stderr
    assert result.returncode == 3
