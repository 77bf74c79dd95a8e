"""The real kubectl is the oracle for credential plugins: same kubeconfig, same plugin, same facts.

kubectl runs `get --raw /version` against `AuthEcho` (TLS on loopback: client-go reads a user's
credentials only over TLS), the test plugin records what kubectl handed it, and truegreen's
`plugin_credentials` runs the same plugin from the same file. Neither needs truegreen's HTTP
client: what the plugin received and what kubectl presented are compared directly.
"""

import base64
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.auth_echo import (
    AuthEcho,
    Pki,
    RecordingPlugin,
    exec_credential,
    make_pki,
    write_plugin,
)
from truegreen.cluster.auth_plugins import plugin_credentials
from truegreen.cluster.credentials import CredentialError, CredentialSource
from truegreen.cluster.exec_plugin import V1, V1BETA1, ExecCredentialSource
from truegreen.errors import ConnectionSetupError, TruegreenError
from truegreen.http.tls import ClientCertificate

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def echo(pki: Pki) -> Iterator[AuthEcho]:
    with AuthEcho(pki) as server:
        yield server


@pytest.fixture
def plugin(tmp_path: Path) -> RecordingPlugin:
    return write_plugin(tmp_path / "plugins")


def write_kubeconfig(
    path: Path, echo: AuthEcho, pki: Pki, user: dict[str, Any], **cluster: Any
) -> Path:
    """A kubeconfig whose only context reaches `echo` as `user`."""
    settings = {
        "server": echo.url,
        "certificate-authority-data": base64.b64encode(pki.ca.read_bytes()).decode(),
        **cluster,
    }
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "echo", "cluster": settings}],
        "users": [{"name": "alice", "user": user}],
        "contexts": [{"name": "echo", "context": {"cluster": "echo", "user": "alice"}}],
        "current-context": "echo",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def kubectl(
    kubeconfig: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`kubectl get --raw /version`, stdin not a terminal, from a folder unrelated to the file."""
    assert KUBECTL is not None, (
        "kubectl is required (Debian: kubernetes-client); .ci/run installs it"
    )
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "get", "--raw", "/version"],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
        stdin=subprocess.DEVNULL,
        cwd="/",
        env=env,
    )


def ours(kubeconfig: Path) -> CredentialSource:
    """truegreen's credential source for the file's only user, as the resolver will build it."""
    config = yaml.safe_load(kubeconfig.read_text())
    source = plugin_credentials(
        "alice",
        config["users"][0]["user"],
        base_dir=kubeconfig.parent,
        cluster=config["clusters"][0]["cluster"],
    )
    if isinstance(source, ExecCredentialSource):
        # kubectl ran with stdin on the null device; so does this run
        source = ExecCredentialSource(source.plugin, stdin_is_terminal=lambda: False)
    return source


def our_error(kubeconfig: Path) -> TruegreenError:
    with pytest.raises((CredentialError, ConnectionSetupError)) as raised:
        ours(kubeconfig).current()
    assert isinstance(raised.value, TruegreenError)
    return raised.value


@pytest.mark.parametrize("relative", ["dot", "empty", "folder"])
def test_a_plugin_found_only_through_a_relative_path_entry_is_not_run_by_either(
    echo: AuthEcho,
    pki: Pki,
    plugin: RecordingPlugin,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    relative: str,
) -> None:
    """Go's `exec.LookPath` (go1.19+, os/exec/lp_unix.go) answers `ErrDot` for a program found
    through `.`, an empty entry or any relative PATH entry; client-go's
    `wrapCmdRunErrorLocked` turns that `*exec.Error` into "executable … not found". A plugin
    planted in the folder the operator runs from is never run."""
    plugin.plan(exec_credential(token="planted"))
    folder = plugin.path.parent
    cwd = {"dot": folder, "empty": folder, "folder": Path("/")}[relative]
    entry = {"dot": ".", "empty": "", "folder": str(folder).lstrip("/")}[relative]
    search = f"{entry}{os.pathsep}/usr/bin{os.pathsep}/bin"
    user = {"exec": {"apiVersion": V1, "interactiveMode": "Never", "command": plugin.path.name}}
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, user)
    assert KUBECTL is not None
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "get", "--raw", "/version"],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env={"PATH": search, "HOME": str(tmp_path)},
    )
    fact = f"exec: executable {plugin.path.name} not found"
    assert result.returncode == 1
    assert fact in result.stderr
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PATH", search)
    with pytest.raises(CredentialError, match=fact) as raised:
        ours(kubeconfig).current()
    assert fact in raised.value.line()
    assert plugin.runs() == []
    assert echo.knocks == []


@pytest.mark.parametrize(
    "exec_entry",
    [
        {"apiVersion": V1, "interactiveMode": "Never", "provideClusterInfo": True},
        {"apiVersion": V1BETA1},  # interactiveMode defaults to IfAvailable
    ],
    ids=["v1-with-cluster-info", "v1beta1-default-mode"],
)
def test_the_plugin_gets_from_truegreen_exactly_what_it_gets_from_kubectl(
    echo: AuthEcho, pki: Pki, plugin: RecordingPlugin, tmp_path: Path, exec_entry: dict[str, Any]
) -> None:
    plugin.plan(
        exec_credential(exec_entry["apiVersion"], token="tok-from-plugin"),
        record_env=("FROM_CONFIG", "INHERITED"),
    )
    user = {
        "exec": {
            **exec_entry,
            "command": "./plugins/plugin",  # beside the kubeconfig, not the working folder
            "args": ["get-token", "--audience", "two words"],
            "env": [{"name": "FROM_CONFIG", "value": "from-config"}],
        }
    }
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig",
        echo,
        pki,
        user,
        **{"tls-server-name": "127.0.0.1", "disable-compression": True},
        extensions=[
            {
                "name": "client.authentication.k8s.io/exec",
                "extension": {"zone": "<eu&1>", "audience": "train", "nested": {"b": 1, "a": 2}},
            }
        ],
    )
    env = {**os.environ, "INHERITED": "inherited"}
    result = kubectl(kubeconfig, env)
    assert result.returncode == 0, result.stderr
    kubectl_runs = plugin.runs()
    assert kubectl_runs, "kubectl did not run the plugin"
    presented = {knock.authorization for knock in echo.knocks}
    assert presented == {"Bearer tok-from-plugin"}

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INHERITED", "inherited")
        credential = ours(kubeconfig).current()
    ours_run = plugin.runs()[len(kubectl_runs) :]
    assert len(ours_run) == 1
    # every run kubectl made (its version dispatcher may add one) saw what truegreen's saw
    assert kubectl_runs == ours_run * len(kubectl_runs)
    assert credential.authorization == "Bearer tok-from-plugin"


def test_a_client_certificate_from_the_plugin_is_what_kubectl_presents_and_what_we_hold(
    echo: AuthEcho, pki: Pki, plugin: RecordingPlugin, tmp_path: Path
) -> None:
    cert, key = pki.client_cert.read_text(), pki.client_key.read_text()
    plugin.plan(exec_credential(clientCertificateData=cert, clientKeyData=key))
    user = {"exec": {"apiVersion": V1, "interactiveMode": "Never", "command": str(plugin.path)}}
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, user)
    result = kubectl(kubeconfig)
    assert result.returncode == 0, result.stderr
    assert {(k.authorization, k.client_subject) for k in echo.knocks} == {
        (None, pki.client_subject)
    }
    credential = ours(kubeconfig).current()
    assert credential.certificate == ClientCertificate(cert.encode(), key.encode())
    assert credential.authorization is None


def test_a_missing_plugin_kubectl_and_truegreen_both_name_it_and_quote_the_hint(
    echo: AuthEcho, pki: Pki, tmp_path: Path
) -> None:
    hint = "Install it with: brew install the-login-plugin"
    user = {
        "exec": {
            "apiVersion": V1,
            "interactiveMode": "Never",
            "command": "no-such-login-plugin",
            "installHint": hint,
        }
    }
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, user)
    result = kubectl(kubeconfig)
    fact = "exec: executable no-such-login-plugin not found"
    assert result.returncode == 1
    assert fact in result.stderr
    assert hint in result.stderr
    line = our_error(kubeconfig).line()
    assert fact in line
    assert line.endswith(hint)
    assert echo.knocks == []


def test_a_failing_plugin_kubectl_and_truegreen_both_show_its_words_and_exit_code(
    echo: AuthEcho, pki: Pki, plugin: RecordingPlugin, tmp_path: Path
) -> None:
    plugin.plan({"stderr": "token expired, run aws sso login\n", "exit": 7})
    user = {"exec": {"apiVersion": V1, "interactiveMode": "Never", "command": str(plugin.path)}}
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, user)
    result = kubectl(kubeconfig)
    assert result.returncode == 1
    assert "token expired, run aws sso login" in result.stderr
    assert f"exec: executable {plugin.path} failed with exit code 7" in result.stderr
    line = our_error(kubeconfig).line()
    assert f"exec: executable {plugin.path} failed with exit code 7" in line
    assert "saying: token expired, run aws sso login." in line


def test_a_plugin_answering_another_version_is_refused_by_both(
    echo: AuthEcho, pki: Pki, plugin: RecordingPlugin, tmp_path: Path
) -> None:
    plugin.plan(exec_credential(V1BETA1, token="t"))
    user = {"exec": {"apiVersion": V1, "interactiveMode": "Never", "command": str(plugin.path)}}
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, user)
    result = kubectl(kubeconfig)
    assert result.returncode == 1
    assert (
        f"exec plugin is configured to use API version {V1}, plugin returned version {V1BETA1}"
        in result.stderr
    )
    assert f"answered in {V1BETA1} where the kubeconfig asks for {V1}" in (
        our_error(kubeconfig).line()
    )
    assert echo.knocks == []


def test_always_interactive_without_a_terminal_is_refused_by_both(
    echo: AuthEcho, pki: Pki, plugin: RecordingPlugin, tmp_path: Path
) -> None:
    plugin.plan(exec_credential(token="t"))
    user = {"exec": {"apiVersion": V1, "interactiveMode": "Always", "command": str(plugin.path)}}
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, user)
    result = kubectl(kubeconfig)
    assert result.returncode == 1
    assert "standard input is not a terminal" in result.stderr
    assert "standard input is not a terminal" in our_error(kubeconfig).line()
    assert plugin.runs() == []


def test_a_v1_entry_without_interactive_mode_is_refused_by_both(
    echo: AuthEcho, pki: Pki, plugin: RecordingPlugin, tmp_path: Path
) -> None:
    user = {"exec": {"apiVersion": V1, "command": str(plugin.path)}}
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, user)
    result = kubectl(kubeconfig)
    assert result.returncode == 1
    assert "interactiveMode must be specified for alice" in result.stderr
    with pytest.raises(ConnectionSetupError) as raised:
        ours(kubeconfig)
    assert "interactiveMode must be specified" in raised.value.line()


def _jwt(expires: datetime) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'RS256'})}.{part({'exp': int(expires.timestamp())})}.c2ln"


def _oidc_user(id_token: str) -> dict[str, Any]:
    config = {"idp-issuer-url": "https://127.0.0.1:9", "client-id": "k", "id-token": id_token}
    return {"auth-provider": {"name": "oidc", "config": config}}


def test_a_valid_oidc_id_token_is_the_bearer_for_both(
    echo: AuthEcho, pki: Pki, tmp_path: Path
) -> None:
    token = _jwt(datetime.now(UTC) + timedelta(hours=1))
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, _oidc_user(token))
    result = kubectl(kubeconfig)
    assert result.returncode == 0, result.stderr
    assert {knock.authorization for knock in echo.knocks} == {f"Bearer {token}"}
    assert ours(kubeconfig).current().authorization == f"Bearer {token}"


def test_an_expired_oidc_login_without_refresh_token_is_refused_by_both(
    echo: AuthEcho, pki: Pki, tmp_path: Path
) -> None:
    token = _jwt(datetime.now(UTC) - timedelta(hours=1))
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", echo, pki, _oidc_user(token))
    result = kubectl(kubeconfig)
    assert result.returncode == 1
    assert "No valid id-token, and cannot refresh without refresh-token" in result.stderr
    line = our_error(kubeconfig).line()
    assert line.startswith("the login of user 'alice' has expired: its id-token expired at ")
    assert echo.knocks == []
