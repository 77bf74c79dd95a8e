"""A kubeconfig's tokenFile that is not a small regular file is refused in one plain line.

`/dev/zero` never ends (read whole, it filled the memory until the kernel killed the run); a
FIFO blocks its reader until someone writes (the run outlived its own time limit). Both are a
login that cannot be read: exit 3, one line naming the file, at once.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.monitoring import free_port


def _kubeconfig(tmp_path: Path, token_file: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f'clusters: [{{name: c, cluster: {{server: "https://127.0.0.1:{free_port()}", '
        "insecure-skip-tls-verify: true}}]\n"
        f'users: [{{name: u, user: {{tokenFile: "{token_file}"}}}}]\n'
        "contexts: [{name: c, context: {cluster: c, user: u, namespace: train}}]\n"
        "current-context: c\n"
    )
    return path


@pytest.mark.parametrize("kind", ["device", "fifo", "huge"])
def test_a_token_file_that_is_no_small_regular_file_is_refused_at_once(
    tmp_path: Path, kind: str
) -> None:
    if kind == "device":
        token_file = Path("/dev/zero")
    elif kind == "fifo":
        token_file = tmp_path / "token.fifo"
        os.mkfifo(token_file)
    else:
        token_file = tmp_path / "token"
        with token_file.open("wb") as file:
            file.truncate((1 << 20) + 1)  # sparse: one byte past the bound
    kubeconfig = _kubeconfig(tmp_path, token_file)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "truegreen",
            "doctor",
            "--kubeconfig",
            str(kubeconfig),
            "--no-registry",
            "--request-timeout",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    said = done.stdout + done.stderr
    assert f"cannot read the token file {token_file}" in said, said
    reason = "it is larger than 1 MiB" if kind == "huge" else "it is not a regular file"
    assert reason in said, said
