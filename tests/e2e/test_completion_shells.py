"""Completion as the real shells and the real kubectl drive it: an interactive bash (on a
pseudo-terminal) completes `--output=<TAB>` and `kubectl-truegreen`, and kubectl's plugin
completion (`kubectl __complete truegreen …`, pkg/cmd/plugin/plugin_completion.go) runs
`kubectl_complete-truegreen` and passes on its Cobra answer."""

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
"""Where the console scripts of this environment are (truegreen, kubectl_complete-truegreen)."""
KUBECTL = shutil.which("kubectl")
BASH = shutil.which("bash")


def _bash_completes(line: str, until: bytes) -> bytes:
    """What an interactive bash shows after `line` and two TABs, once `until` shows (or
    after 30 s): the completion script sourced as a user sources it."""
    assert BASH is not None, "bash is required"
    pid, terminal = pty.fork()
    if pid == 0:
        os.environ.update(PS1="$ ", INPUTRC="/dev/null", PATH=f"{BIN}:{os.environ['PATH']}")
        os.execv(BASH, [BASH, "--norc", "--noprofile", "-i"])
    seen = b""

    def read_until(wanted: bytes) -> None:
        nonlocal seen
        stop = time.monotonic() + 30
        while wanted not in seen and time.monotonic() < stop:
            ready, _, _ = select.select([terminal], [], [], 0.2)
            if ready:
                seen += os.read(terminal, 65536)

    try:
        # `sourced2` is only ever the echo's output, never the echoed command line
        source = b'eval "$(_TRUEGREEN_COMPLETE=bash_source truegreen)"; echo sourced$((1+1))\n'
        os.write(terminal, source)
        read_until(b"sourced2")
        seen = b""
        os.write(terminal, line.encode() + b"\t\t")
        read_until(until)
        return seen
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(terminal)


def test_bash_offers_an_option_s_values_after_its_equals_sign() -> None:
    shown = _bash_completes("truegreen doctor --output=", b"json")
    assert b"text  json" in shown, shown


def test_bash_completes_kubectl_truegreen_too() -> None:
    shown = _bash_completes("kubectl-truegreen doctor --output=j", b"--output=json ")
    assert shown.endswith(b"--output=json "), shown


def _kubectl_complete(*words: str) -> list[str]:
    assert KUBECTL is not None, "kubectl is required (Debian: kubernetes-client)"
    assert (BIN / "kubectl_complete-truegreen").exists(), "precondition: the script is installed"
    environ = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    result = subprocess.run(
        [KUBECTL, "__complete", "truegreen", *words],
        capture_output=True,
        text=True,
        env=environ,
        check=True,
        timeout=60,
    )
    return result.stdout.splitlines()


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("doctor", "--output=j"), ["json", ":36"]),  # Cobra's scripts put `--output=` back
        (("doctor", "-o", ""), ["text", "json", ":36"]),
        (("refresh", "--mode", "p"), ["pin", ":36"]),
        (("doctor", "--kubeconfig", ""), [":0"]),  # the shell completes a path
        (("snapshot", "--output-directory", ""), [":16"]),  # folders only
        (("doctor", "--context", ""), [":36"]),  # nothing to offer, and no files
    ],
)
def test_kubectl_truegreen_completes_through_kubectl_s_plugin_completion(
    words: tuple[str, ...], expected: list[str]
) -> None:
    assert _kubectl_complete(*words) == expected


def test_kubectl_passes_on_the_commands_and_their_help() -> None:
    found = _kubectl_complete("doc")
    assert found == [
        "doctor\tCan this environment run training right now? One headline, a...",
        ":36",
    ]
