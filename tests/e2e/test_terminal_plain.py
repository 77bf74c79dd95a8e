"""On a real terminal (a pseudo-terminal), `--no-color`, NO_COLOR and TERM=dumb mean no escape
code at all: rich's own no_color drops colours but still writes bold and dim
(no-color.org: NO_COLOR, any non-empty value, disables ANSI colour; truegreen drops every
style with it)."""

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_failure_document import _closed_port_kubeconfig

ROOT = Path(__file__).parents[2]
TRUEGREEN = str(Path(sys.executable).parent / "truegreen")


def _on_a_terminal(args: list[str], env: dict[str, str]) -> bytes:
    """Everything a command writes to a terminal (stdout and stderr both)."""
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [TRUEGREEN, *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", **env},
    ) as running:
        os.close(follower)
        written = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            written += chunk
        running.wait(timeout=60)
    os.close(leader)
    return written


def _commands(tmp: Path) -> dict[str, list[str]]:
    return {
        "doctor": ["doctor", "--snapshot", str(ROOT / "examples/snapshots/unbound-dataset-volume")],
        "lint": ["lint", str(ROOT / "examples/manifests/incident.yaml")],
        "refresh": ["refresh", "--kubeconfig", str(_closed_port_kubeconfig(tmp))],
    }


@pytest.mark.parametrize("command", ["doctor", "lint", "refresh"])
@pytest.mark.parametrize(
    ("flag", "env"),
    [(["--no-color"], {}), ([], {"NO_COLOR": "1"}), ([], {"TERM": "dumb"})],
    ids=["--no-color", "NO_COLOR", "TERM=dumb"],
)
def test_asking_for_plain_output_gets_no_escape_code_at_all(
    command: str, flag: list[str], env: dict[str, str], tmp_path: Path
) -> None:
    args = _commands(tmp_path)[command]
    styled = _on_a_terminal(args, {})
    assert b"\x1b[" in styled, "precondition: on a terminal the output is styled"
    plain = _on_a_terminal([*args, *flag], env)
    assert plain.replace(b"\r\n", b"\n").strip(), "precondition: the command said something"
    assert b"\x1b" not in plain, plain


def test_a_warning_on_a_terminal_is_wrapped_to_its_width(tmp_path: Path) -> None:
    """The TLS warning (kubectl words it as a one-line notice too) fits a 60-column terminal."""
    kubeconfig = _closed_port_kubeconfig(tmp_path)
    written = _on_a_terminal(
        ["doctor", "--kubeconfig", str(kubeconfig), "--insecure-skip-tls-verify", "--no-color"],
        {"COLUMNS": "60"},
    ).decode()
    lines = written.replace("\r\n", "\n").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("truegreen: warning:"))
    warning = lines[start : start + 3]
    assert " ".join(w.strip() for w in warning).startswith(
        "truegreen: warning: not verifying the cluster's TLS certificate "
        "(--insecure-skip-tls-verify); anyone on the network path could answer for it"
    ), warning
    assert max(map(len, warning)) <= 60, warning
