"""Progress on stderr for a person at a terminal, and never anywhere else: the installed
`truegreen` runs with its stderr on a real pseudo-terminal (stdout on a pipe, as in
`truegreen doctor | less`), against the fake API server with one slow read."""

import os
import pty
import select
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.scenarios import healthy

BIN = Path(sys.executable).parent


def _run_with_terminal_stderr(
    args: list[str], env: dict[str, str], *, terminal: bool = True
) -> tuple[int, str, str]:
    """Run `truegreen ARGS`; stderr on a pseudo-terminal (or a pipe), stdout on a pipe."""
    environment = {
        **{k: v for k, v in os.environ.items() if k != "NO_COLOR"},
        "COLUMNS": "100",
        **env,
    }
    if not terminal:
        done = subprocess.run(
            [str(BIN / "truegreen"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=environment,
        )
        return done.returncode, done.stdout, done.stderr
    controller, follower = pty.openpty()
    process = subprocess.Popen(
        [str(BIN / "truegreen"), *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        stdin=subprocess.DEVNULL,
        env=environment,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    os.close(controller)
    assert process.stdout is not None
    stdout = process.stdout.read().decode()
    return process.wait(timeout=60), stdout, seen.decode(errors="replace")


@pytest.fixture
def slow_cluster(fake_api: FakeApiServer, kubeconfig: Path) -> Path:
    """A healthy namespace whose machine list takes a second to arrive."""
    fake_api.add(*healthy(datetime.now(UTC)))
    fake_api.inject(Fault.DELAY, r"^/api/v1/nodes$", delay=1.0)
    return kubeconfig


def test_doctor_on_a_terminal_shows_what_it_is_reading(slow_cluster: Path) -> None:
    code, stdout, stderr = _run_with_terminal_stderr(
        ["doctor", "--kubeconfig", str(slow_cluster), "--request-timeout", "5", "--no-registry"],
        {"TERM": "xterm"},
    )
    assert code == 0, stderr
    assert "Reading the machines" in stderr
    assert "Reading" not in stdout, "progress never reaches the results"
    assert stdout.startswith("✓ READY")


@pytest.mark.parametrize(
    ("env", "terminal", "why"),
    [
        ({"TERM": "dumb"}, True, "TERM=dumb"),
        ({"TERM": "xterm", "NO_COLOR": "1"}, True, "NO_COLOR"),
        ({"TERM": "xterm"}, False, "stderr is a pipe"),
    ],
)
def test_no_progress_when_nobody_watches_a_terminal(
    slow_cluster: Path, env: dict[str, str], terminal: bool, why: str
) -> None:
    code, stdout, stderr = _run_with_terminal_stderr(
        ["doctor", "--kubeconfig", str(slow_cluster), "--request-timeout", "5", "--no-registry"],
        env,
        terminal=terminal,
    )
    assert code == 0, stderr
    assert stdout.startswith("✓ READY"), "precondition: the run worked"
    assert "Reading" not in stderr, why


def test_no_progress_with_json_even_on_a_terminal(slow_cluster: Path) -> None:
    code, stdout, stderr = _run_with_terminal_stderr(
        [
            "doctor",
            "--kubeconfig",
            str(slow_cluster),
            "--request-timeout",
            "5",
            "--no-registry",
            "-o",
            "json",
        ],
        {"TERM": "xterm"},
    )
    assert code == 0
    assert stdout.startswith("{")
    assert "Reading" not in stderr
