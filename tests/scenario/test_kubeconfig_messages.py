"""What doctor says about a kubeconfig: never a password written in a server address."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.scenario.conftest import CREDENTIALS
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import healthy


def _config(
    clusters: dict[str, str],
    users: dict[str, dict[str, Any]],
    contexts: dict[str, tuple[str, str]],
    current: str | None = None,
) -> dict[str, Any]:
    """A kubeconfig as `kubectl config view --raw` writes one: clusters (name → server),
    users (name → settings), contexts (name → (cluster, user))."""
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": s}} for n, s in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [
            {"name": n, "context": {"cluster": c, "user": u, "namespace": "train"}}
            for n, (c, u) in contexts.items()
        ],
    }
    if current is not None:
        config["current-context"] = current
    return config


def _write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config))
    return path


def _doctor(*args: str) -> CliResult:
    return run_cli("doctor", "--request-timeout", "2", "--no-registry", *CREDENTIALS, *args)


# -- a password in a server address kubectl refuses -----------------------------------------


def test_an_unusable_server_address_never_shows_its_password(
    fake_api: FakeApiServer, tmp_path: Path
) -> None:
    """client-go refuses both addresses before any request (rest/url_utils.go
    DefaultServerURL: `host must be a URL or a host:port pair`); the password written in them
    is shown `<redacted>`, as LiveCluster.server shows it for an address that parses."""
    fake_api.add(*healthy(datetime.now(UTC)))
    kubeconfig = _write(
        tmp_path / "kc",
        _config(
            {
                "one": fake_api.url,
                "badurl": "https://admin:hunter2@[::1",
                "badhost": "https://admin:hunter2@exa mple.com",
            },
            {"u": {"token": "t"}},
            {"one": ("one", "u"), "badurl": ("badurl", "u"), "badhost": ("badhost", "u")},
            current="one",
        ),
    )
    where = f"in kubeconfig {kubeconfig} is not usable: host must be a URL or a host:port pair"
    badurl = f"the server address 'https://<redacted>@[::1' of cluster 'badurl' {where}"
    badhost = (
        f"the server address 'https://<redacted>@exa mple.com' of cluster 'badhost' {where} "
        '(invalid character " " in host name)'
    )
    document = _doctor("--kubeconfig", str(kubeconfig), "--all-contexts", "-o", "json")
    assert document.exit_code == 3
    failures = {c["context"]: c["failure"]["text"] for c in document.json()["clusters"][:2]}
    assert failures == {"badhost": badhost, "badurl": badurl}
    text = _doctor("--kubeconfig", str(kubeconfig), "--all-contexts", "--no-color")
    assert text.exit_code == 3
    assert f"badurl   -      {badurl}" in text.stdout.splitlines()[1]
    alone = _doctor("--kubeconfig", str(kubeconfig), "--context", "badhost")
    assert alone.exit_code == 3
    assert alone.stderr == (
        f"truegreen: {badhost}. correct the server address in the file's clusters section\n"
    )
    for run in (document, text, alone):
        assert "hunter2" not in run.stdout + run.stderr
