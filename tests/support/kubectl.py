"""The real kubectl against a kubeconfig (the fake API server's, in the tests that use kubectl as
the oracle): one way to run it, with the same bound and the same plain failure when it is
missing."""

import shutil
import subprocess
from pathlib import Path

KUBECTL = shutil.which("kubectl")


def kubectl(
    kubeconfig: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`kubectl --kubeconfig KUBECONFIG ARGS…`, its output captured, never raising on its exit
    code; `stdin` is fed to it (`create -f -`)."""
    assert KUBECTL is not None, (
        "kubectl is required (Debian: kubernetes-client); .ci/run installs it"
    )
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
