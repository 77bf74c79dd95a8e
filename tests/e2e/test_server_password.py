"""A password written into the cluster's address (`https://user:password@host`) is never
printed: kubectl shows such an address with the password hidden (Go's url.Redacted), and
every one of truegreen's lines that names the cluster, failures first, does the same."""

from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.monitoring import free_port

PASSWORD = "SUPERSECRETPW-4f1c"


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig whose server address carries a login, on a loopback port nothing serves."""
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f'clusters: [{{name: c, cluster: {{server: "http://admin:{PASSWORD}@127.0.0.1:'
        f'{free_port()}"}}}}]\n'
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u, namespace: train}}]\n"
        "current-context: c\n"
    )
    return path


@pytest.mark.parametrize(
    "command",
    [
        ("doctor", "--no-registry"),
        ("doctor", "--no-registry", "-o", "json"),
        ("snapshot", "--no-registry", "-o", "json"),
        ("refresh",),
    ],
    ids=["doctor", "doctor-json", "snapshot-json", "refresh"],
)
def test_a_password_in_the_cluster_s_address_is_never_printed(
    kubeconfig: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    extra = ("--output-directory", str(tmp_path / "snap")) if command[0] == "snapshot" else ()
    result = run_cli(command[0], "--kubeconfig", str(kubeconfig), *extra, *command[1:])
    assert result.exit_code == 3, (result.exit_code, result.stderr)
    printed = result.stdout + result.stderr
    assert "127.0.0.1" in printed, "precondition: the line names the cluster's address"
    assert PASSWORD not in printed, printed
    assert "http://<redacted>@127.0.0.1" in printed, printed
