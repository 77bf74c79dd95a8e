"""The command-line contract shared by every command, checked on the installed entry points."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from truegreen import __version__

BIN = Path(sys.executable).parent


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "truegreen"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_version() -> None:
    result = _run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"truegreen, version {__version__}"


def test_unknown_option_is_usage_exit_64() -> None:
    result = _run("--no-such-flag")
    assert result.returncode == 64, result
    assert "No such option" in result.stderr
    assert result.stdout == ""


def test_unknown_command_is_usage_exit_64() -> None:
    result = _run("frobnicate")
    assert result.returncode == 64


def test_shell_completion_script() -> None:
    result = _run(env={"_TRUEGREEN_COMPLETE": "bash_source"})
    assert result.returncode == 0
    assert "_truegreen_completion()" in result.stdout


def test_runs_as_kubectl_plugin() -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl is not None, "kubectl is required (Debian: kubernetes-client)"
    result = subprocess.run(
        [kubectl, "truegreen", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )
    assert result.returncode == 0, result.stderr
    assert "Tell the truth about a Kubernetes training environment." in result.stdout
