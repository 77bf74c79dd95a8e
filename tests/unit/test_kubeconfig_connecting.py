"""How a kubeconfig reaches its cluster, as client-go resolves it: which proxy, and which login
is sent (none over plain http; a written token before a plugin; the plugin's cluster CA read
from the cluster's own file)."""

import base64
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.client_pair import CLIENT_CERT_PEM, CLIENT_KEY_PEM
from truegreen.cluster.credentials import Credential
from truegreen.cluster.exec_plugin import ExecCredentialSource
from truegreen.cluster.kubeconfig import ResolvedConnection, resolve
from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import ConnectionSetupError, TruegreenError
from truegreen.http.proxy import Proxy
from truegreen.http.tls import ClientCertificate

_PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
)
CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
# a client certificate is only read here, never used; a pair Go would refuse is refused
_CERTIFICATE = {
    "client-certificate-data": base64.b64encode(CLIENT_CERT_PEM).decode(),
    "client-key-data": base64.b64encode(CLIENT_KEY_PEM).decode(),
}
_PAIR = ClientCertificate(CLIENT_CERT_PEM, CLIENT_KEY_PEM)
_PLUGIN = {
    "exec": {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": "/nonexistent/plugin-that-must-not-run",
        "interactiveMode": "Never",
        "provideClusterInfo": True,
    }
}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (*_PROXY_VARIABLES, "KUBECONFIG", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def _config(cluster: dict[str, Any], user: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user if user is not None else {"token": "tok"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }


def _resolve(tmp_path: Path, cluster: dict[str, Any], user: Any = None) -> ResolvedConnection:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(_config(cluster, user)))
    return resolve(ConnectionSettings(kubeconfig=path))


# -- which proxy -----------------------------------------------------------------------------


def test_proxy_url_is_used_and_the_environment_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://env-proxy:3128")
    monkeypatch.setenv("NO_PROXY", "api.corp")  # client-go: NO_PROXY does not apply to proxy-url
    resolved = _resolve(
        tmp_path,
        {"server": "https://api.corp:6443", "proxy-url": "socks5://alice:pw@socks.corp"},
    )
    assert resolved.proxy == Proxy("socks5", "socks.corp", 1080, "alice", "pw")


def test_proxy_url_even_for_a_loopback_server(tmp_path: Path) -> None:
    resolved = _resolve(
        tmp_path, {"server": "https://127.0.0.1:6443", "proxy-url": "http://127.0.0.1:3128"}
    )
    assert resolved.proxy == Proxy("http", "127.0.0.1", 3128)


def test_without_proxy_url_the_environment_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "env-proxy:3128")
    monkeypatch.setenv("HTTP_PROXY", "plain-proxy:8080")
    assert _resolve(tmp_path, {"server": "https://api.corp:6443"}).proxy == Proxy(
        "http", "env-proxy", 3128
    )
    assert _resolve(tmp_path, {"server": "http://api.corp:8080"}).proxy == Proxy(
        "http", "plain-proxy", 8080
    )
    assert _resolve(tmp_path, {"server": "https://127.0.0.1:6443"}).proxy is None
    monkeypatch.setenv("NO_PROXY", ".corp")
    assert _resolve(tmp_path, {"server": "https://api.corp:6443"}).proxy is None
    monkeypatch.delenv("NO_PROXY")
    monkeypatch.delenv("HTTPS_PROXY")
    assert _resolve(tmp_path, {"server": "https://api.corp:6443"}).proxy is None


@pytest.mark.parametrize(
    ("cluster", "variable", "expected"),
    [
        (
            {"proxy-url": "socks4://user:hunter2@p:1080"},
            None,
            "the kubeconfig cluster in {path} has a proxy-url kubectl would refuse: "
            'unsupported scheme "socks4", must be http, https, or socks5. '
            "fix or remove proxy-url in the kubeconfig",
        ),
        (
            {},
            "ftp://user:hunter2@p",
            "HTTPS_PROXY (or https_proxy) names a proxy kubectl cannot use: "
            'unsupported scheme "ftp", must be http, https, or socks5. fix or unset it',
        ),
    ],
)
def test_a_proxy_kubectl_refuses_is_one_line_without_its_password(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cluster: dict[str, str],
    variable: str | None,
    expected: str,
) -> None:
    if variable is not None:
        monkeypatch.setenv("https_proxy", variable)
    with pytest.raises(TruegreenError) as caught:
        _resolve(tmp_path, {"server": "https://api.corp:6443", **cluster})
    assert caught.value.line() == expected.format(path=tmp_path / "kubeconfig")
    assert "hunter2" not in caught.value.line()


# -- which login -----------------------------------------------------------------------------


def test_a_plain_http_server_is_sent_no_login(tmp_path: Path) -> None:
    resolved = _resolve(
        tmp_path,
        {"server": "http://api.corp:8080", "insecure-skip-tls-verify": True},
        {"token": "must-not-travel", **_CERTIFICATE},
    )
    assert resolved.credentials.current() == Credential()
    assert resolved.unverified_because is None  # no TLS, so nothing to warn about
    https = _resolve(tmp_path, {"server": "HTTPS://api.corp"}, {"token": "travels"})
    assert https.credentials.current() == Credential("Bearer travels")


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ({"token": "written"}, Credential("Bearer written")),
        ({"username": "u", "password": "p"}, Credential("Basic dTpw")),
        (_CERTIFICATE, Credential(None, _PAIR)),
    ],
)
def test_a_written_login_beside_an_exec_plugin_wins(
    tmp_path: Path, written: dict[str, str], expected: Credential
) -> None:
    # The plugin's command does not exist: running it would raise CredentialError.
    resolved = _resolve(tmp_path, {"server": "https://api.corp"}, {**written, **_PLUGIN})
    assert resolved.credentials.current() == expected


def test_a_password_without_a_username_is_no_login(tmp_path: Path) -> None:
    """client-go transport/config.go `HasBasicAuth` is `len(c.Username) != 0`: a password alone
    sends no Basic login, leaves a plugin to run (exec.go UpdateTransportConfig) and a client
    certificate to log in alone; with nothing else kubectl asks for a username
    (client_config.go `canIdentifyUser`), which truegreen refuses to do."""
    with_certificate = _resolve(
        tmp_path, {"server": "https://api.corp"}, {"password": "p", **_CERTIFICATE}
    )
    assert with_certificate.credentials.current() == Credential(None, _PAIR)
    with_plugin = _resolve(tmp_path, {"server": "https://api.corp"}, {"password": "p", **_PLUGIN})
    assert isinstance(with_plugin.credentials, ExecCredentialSource)
    with pytest.raises(ConnectionSetupError) as caught:
        _resolve(tmp_path, {"server": "https://api.corp"}, {"password": "p"})
    assert caught.value.line() == (
        f"the kubeconfig user 'u' in {tmp_path / 'kubeconfig'} has a password but no username: "
        "kubectl sends no login without one (it asks for the username on a terminal). add the "
        "username to the kubeconfig, or remove the password"
    )
    only_user = _resolve(tmp_path, {"server": "https://api.corp"}, {"username": "u"})
    assert only_user.credentials.current() == Credential("Basic dTo=")


def test_a_client_key_without_a_certificate_is_never_read(tmp_path: Path) -> None:
    """client-go reads the key only beside a certificate (client_config.go
    `getUserIdentificationPartialConfig`, validation.go `validateAuthInfo`)."""
    user = {"token": "t", "client-key": "missing.key", "client-key-data": "S0VZ"}
    resolved = _resolve(tmp_path, {"server": "https://api.corp"}, user)
    assert resolved.credentials.current() == Credential("Bearer t")


def test_a_token_file_beside_an_exec_plugin_wins(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-file\n")
    resolved = _resolve(tmp_path, {"server": "https://api.corp"}, {"tokenFile": "token", **_PLUGIN})
    assert resolved.credentials.current() == Credential("Bearer from-file")


def test_an_exec_plugin_alone_is_the_login(tmp_path: Path) -> None:
    resolved = _resolve(tmp_path, {"server": "https://api.corp"}, _PLUGIN)
    assert isinstance(resolved.credentials, ExecCredentialSource)


@pytest.mark.parametrize("section", ["exec", "auth-provider"])
def test_a_null_plugin_section_is_no_plugin(tmp_path: Path, section: str) -> None:
    """A null decodes to a nil pointer (clientcmd/api/v1 types.go `Exec *ExecConfig`,
    `AuthProvider *AuthProviderConfig`): no plugin to run or check."""
    resolved = _resolve(tmp_path, {"server": "https://api.corp"}, {"token": "t", section: None})
    assert resolved.credentials.current() == Credential("Bearer t")
    beside_a_certificate = _resolve(
        tmp_path, {"server": "https://api.corp"}, {**_CERTIFICATE, section: None}
    )
    assert beside_a_certificate.credentials.current() == Credential(None, _PAIR)


def test_a_token_beside_an_oidc_login_wins(tmp_path: Path) -> None:
    oidc = {"auth-provider": {"name": "oidc", "config": {"idp-issuer-url": "x", "client-id": "y"}}}
    resolved = _resolve(tmp_path, {"server": "https://api.corp"}, {"token": "written", **oidc})
    assert resolved.credentials.current() == Credential("Bearer written")


@pytest.mark.parametrize(
    "key",
    [
        b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIHs\n-----END ENCRYPTED PRIVATE KEY-----\n",
        b"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\n"
        b"MIIE\n-----END RSA PRIVATE KEY-----\n",
    ],
    ids=["pkcs8", "legacy"],
)
def test_a_client_key_behind_a_passphrase_is_refused_before_any_request(
    tmp_path: Path, key: bytes
) -> None:
    """Go's crypto/tls `X509KeyPair` (tls.go parsePrivateKey) reads no encrypted key and asks
    for no passphrase: kubectl stops with "tls: failed to parse private key"."""
    (tmp_path / "client.key").write_bytes(key)
    user = {"client-certificate-data": "Q0VSVA==", "client-key": "client.key"}
    with pytest.raises(ConnectionSetupError) as caught:
        _resolve(tmp_path, {"server": "https://api.corp"}, user)
    assert caught.value.line() == (
        "the kubeconfig user 'u' has a client key protected by a passphrase: kubectl cannot use "
        "it either (tls: failed to parse private key). name a key without a passphrase in "
        "client-key or client-key-data (`openssl pkey -in KEY -out PLAIN_KEY` writes one)"
    )


def test_a_plugin_beside_a_token_is_still_checked(tmp_path: Path) -> None:
    broken = {"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1alpha1"}}
    with pytest.raises(TruegreenError, match="invalid apiVersion"):
        _resolve(tmp_path, {"server": "https://api.corp"}, {"token": "t", **broken})


def test_the_plugin_gets_the_ca_of_the_cluster_s_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    users, clusters = tmp_path / "users", tmp_path / "clusters"
    users.mkdir()
    clusters.mkdir()
    (clusters / "ca.crt").write_bytes(CA_PEM)
    (users / "ca.crt").write_bytes(b"the wrong file: the user's folder")
    with_user = _config({"server": "https://unused"}, _PLUGIN)
    with_user["clusters"] = []
    with_cluster = _config({"server": "https://api.corp", "certificate-authority": "ca.crt"})
    with_cluster["users"] = []
    (users / "config").write_text(yaml.safe_dump(with_user))
    (clusters / "config").write_text(yaml.safe_dump(with_cluster))
    monkeypatch.setenv("KUBECONFIG", f"{users / 'config'}{os.pathsep}{clusters / 'config'}")
    resolved = resolve(ConnectionSettings())
    assert resolved.tls.ca_pem == CA_PEM
    assert isinstance(resolved.credentials, ExecCredentialSource)
    assert resolved.credentials.plugin.cluster is not None
    assert resolved.credentials.plugin.cluster.certificate_authority_data == CA_PEM


def test_in_a_pod_the_environment_decides_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # client-go's InClusterConfig sets no Proxy: the transport reads the environment.
    account = tmp_path / "sa"
    account.mkdir()
    (account / "token").write_text("sa-token\n")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("HTTPS_PROXY", "http://egress.corp:3128")
    assert resolve(ConnectionSettings(), service_account=account).proxy == Proxy(
        "http", "egress.corp", 3128
    )
    monkeypatch.setenv("NO_PROXY", "10.96.0.0/12,.svc")
    assert resolve(ConnectionSettings(), service_account=account).proxy is None
