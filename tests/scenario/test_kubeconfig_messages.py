"""What doctor says about a kubeconfig: never a password written in a server address, and the
file that holds the entry a message is about, when KUBECONFIG merges several."""

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.scenario.conftest import CREDENTIALS
from tests.support.auth_echo import make_pki
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.monitoring import free_port
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


# -- several KUBECONFIG files: the one holding the entry is named ----------------------------


@pytest.fixture
def tls_fake(tmp_path: Path) -> Iterator[tuple[FakeApiServer, Path]]:
    """The fake over TLS (client-go sends a login only over HTTPS: client_config.go
    ClientConfig reads the user's credentials only for a TLS transport), and its authority."""
    pki = make_pki(tmp_path / "pki")
    server = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    server.add(*healthy(datetime.now(UTC)))
    try:
        yield server, pki.ca
    finally:
        server.stop()


def _merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: str, ca: Path | None = None
) -> tuple[Path, Path, Path]:
    """KUBECONFIG of three files, as client-go's loader merges them (tools/clientcmd/loader.go
    LoadFromFile records each entry's LocationOfOrigin, its own file): the first holds only
    another cluster's context, the second context `y` and its cluster, the third its user."""
    other = _write(
        tmp_path / "other",
        _config({"x": "https://x.example"}, {"x": {"token": "x"}}, {"x": ("x", "x")}),
    )
    clusters = _config({"cy": server}, {}, {"y": ("cy", "uy")}, current="y")
    if ca is not None:
        clusters["clusters"][0]["cluster"]["certificate-authority"] = str(ca)
    cluster = _write(tmp_path / "cluster", clusters)
    user = _write(tmp_path / "user", _config({}, {"uy": {"token": "old"}}, {}))
    monkeypatch.setenv("KUBECONFIG", f"{other}:{cluster}:{user}")
    return other, cluster, user


def test_an_unreachable_cluster_names_the_file_that_holds_its_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kubectl config set-cluster` writes the address back to the cluster entry's own file
    (LocationOfOrigin): that file is where to check it."""
    _, cluster, _ = _merged(tmp_path, monkeypatch, f"https://127.0.0.1:{free_port()}")
    remedy = (
        f"Check the cluster address in {cluster} and your network, then run again; "
        "`kubectl --context y cluster-info` shows whether kubectl gets through."
    )
    alone = _doctor("--context", "y", "-o", "json")
    assert alone.exit_code == 3
    assert alone.json()["headline"]["code"] == "cluster-unreachable"
    assert alone.json()["headline"]["remedy"] == remedy
    fleet = _doctor("--all-contexts", "-A", "--no-color")
    assert fleet.exit_code == 3
    assert f"  → {remedy}" in fleet.stdout.splitlines()


def test_a_refused_login_names_the_file_that_holds_the_user(
    tls_fake: tuple[FakeApiServer, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API server answers 401 (apiserver's authentication filter): the login to check is
    the user entry's, in its own file."""
    server, ca = tls_fake
    _, _, user = _merged(tmp_path, monkeypatch, server.url, ca)
    server.inject(Fault.UNAUTHORIZED, r".")
    headline = _doctor("--context", "y", "-o", "json").json()["headline"]
    assert headline["code"] == "cluster-login-refused"
    assert headline["remedy"] == (
        f"Check the login details of user 'uy' in {user}: they may have expired or been "
        "revoked, then run again; `kubectl --context y auth whoami` shows whether the login "
        "works."
    )
