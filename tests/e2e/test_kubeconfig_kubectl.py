"""kubectl is the oracle for every kubeconfig case: the SAME kubeconfig goes to the real
kubectl (`get deployments`) and to `truegreen doctor`, against the fake API server over TLS
(certificates made here with openssl), and they agree: both connect, or both fail for the same
reason. Each case names the client-go source whose behaviour it pins.

The fake here wants a login (`_LoginRequired`: 401 otherwise, as kube-apiserver with anonymous
requests off) and records each Authorization it was sent; the proxies (`tests/support/
proxies.py`) record what they were asked to open, so "both connect" also means "both went the
same way with the same credentials".

The kubectl on PATH may be gcloud's version dispatcher, which can run a plugin once more than
kubectl itself would: plugin runs are only ever counted for truegreen.
"""

import base64
import json
import os
import shutil
import subprocess
import textwrap
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import hostile
from tests.support.auth_echo import RecordingPlugin, exec_credential, write_plugin
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import ApiFailureError, FakeApiServer
from tests.support.hostile import ServerCertificate
from tests.support.proxies import HttpConnectProxy, Passage, Socks5Proxy
from tests.support.scenarios import healthy
from truegreen.cluster.blockyaml import read_block_yaml
from truegreen.cluster.exec_plugin import V1, V1BETA1

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")
API_NAME = "api.internal"
"""A name no resolver knows: only a proxy told so maps it to 127.0.0.1."""
_PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
)


@dataclass(frozen=True)
class Pki:
    ca: Path
    server: ServerCertificate
    """For IP:127.0.0.1 and DNS:api.internal (the proxies use it too)."""
    named: ServerCertificate
    """For DNS:api.internal only: reaching 127.0.0.1 with it needs tls-server-name."""
    client: ServerCertificate
    """A client certificate the same authority signed, for a plugin to answer."""
    intermediate: Path
    """An intermediate authority the same authority signed."""
    chained: ServerCertificate
    """A client certificate the intermediate signed: a server trusting `ca` accepts it only
    with the intermediate sent after it."""


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    authority = hostile.make_authority(folder, "ca")
    intermediate = hostile.make_intermediate(folder, authority)
    return Pki(
        authority[0],
        hostile.issue(folder, authority, "server", f"IP:127.0.0.1,DNS:{API_NAME}"),
        hostile.issue(folder, authority, "named", f"DNS:{API_NAME}"),
        hostile.issue(folder, authority, "client", "DNS:plugin-user", client=True),
        intermediate[0],
        hostile.issue(folder, intermediate, "chained", "DNS:chained-user", client=True),
    )


class _LoginRequired(FakeApiServer):
    """The fake, answering 401 to a request whose Authorization is not one of `accepted` (None:
    any request, for the client-certificate cases where TLS does the checking)."""

    def __init__(self, accepted: frozenset[str] | None) -> None:
        super().__init__()
        self.accepted = accepted
        self.authorizations: list[str | None] = []

    def handle(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: bytes,
    ) -> tuple[int, Any, dict[str, str]]:
        authorization = headers.get("authorization")
        with self._lock:
            self.authorizations.append(authorization)
        if self.accepted is not None and authorization not in self.accepted:
            raise ApiFailureError(401, "Unauthorized", "Unauthorized")
        return super().handle(method, path, query, headers, body)


Serve = Callable[..., _LoginRequired]


@pytest.fixture
def serve(pki: Pki) -> Iterator[Serve]:
    """Start a fake with the healthy environment in namespace `train`: over TLS with the given
    certificate (None: plain http), accepting the given Authorization values."""
    started: list[_LoginRequired] = []

    def start(
        *accepted: str, tls: ServerCertificate | None = pki.server, any_login: bool = False
    ) -> _LoginRequired:
        server = _LoginRequired(None if any_login else frozenset(accepted))
        server.start(None if tls is None else (tls.cert, tls.key))
        server.add(*healthy(datetime.now(UTC)))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(autouse=True)
def _no_ambient_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _cluster(server: str, pki: Pki, **settings: Any) -> dict[str, Any]:
    return {"server": server, "certificate-authority": str(pki.ca), **settings}


def _write(
    folder: Path, cluster: dict[str, Any] | None, user: dict[str, Any] | None = None
) -> Path:
    """A kubeconfig whose context `x` works in namespace `train`; None leaves a section empty."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [] if cluster is None else [{"name": "c", "cluster": cluster}],
        "users": [] if user is None else [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "train"}}],
        "current-context": "x",
    }
    path = folder / "config"
    path.write_text(yaml.safe_dump(config))
    return path


@dataclass(frozen=True)
class Kubectl:
    result: subprocess.CompletedProcess[str]

    @property
    def connected(self) -> bool:
        return self.result.returncode == 0 and "deployment.apps/" in self.result.stdout


@dataclass(frozen=True)
class Truegreen:
    result: CliResult

    @property
    def report(self) -> Any:
        return self.result.json()

    @property
    def connected(self) -> bool:
        return self.result.exit_code == 0 and self.report["headline"]["rule"] == "ready"

    @property
    def why(self) -> str:
        """The headline of a run that could not reach the cluster."""
        assert self.report["headline"]["rule"] == "nothing-read", self.report["headline"]
        assert self.result.exit_code == 3
        return str(self.report["headline"]["text"])

    def refused(self, exit_code: int = 3) -> str:
        """The one line of a run that refused its connection settings before any request."""
        rule = "bad-usage" if exit_code == 64 else "setup-failed"
        assert self.report["headline"]["rule"] == rule, self.report["headline"]
        assert self.result.exit_code == exit_code
        return f"{self.report['headline']['text']}. {self.report['headline']['remedy']}"


def kubectl(kubeconfig: Path | str, home: Path, *args: str, **environ: str) -> Kubectl:
    """`kubectl get deployments -n train ARGS…`, stdin not a terminal, only `environ`'s
    proxies (`-n` given again in `args` wins, as in kubectl)."""
    assert KUBECTL is not None, (
        "kubectl is required (Debian: kubernetes-client); .ci/run installs it"
    )
    clean = {k: v for k, v in os.environ.items() if k not in _PROXY_VARIABLES}
    command = [KUBECTL, "get", "deployments", "-n", "train", "-o", "name", *args]
    return Kubectl(
        subprocess.run(
            [*command, "--request-timeout", "10s"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            stdin=subprocess.DEVNULL,
            cwd="/",
            env={**clean, "KUBECONFIG": str(kubeconfig), "HOME": str(home), **environ},
        )
    )


def truegreen(
    kubeconfig: Path | str, monkeypatch: pytest.MonkeyPatch, *args: str, **environ: str
) -> Truegreen:
    """`truegreen doctor -o json ARGS…` in this process, with the same file and environment."""
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.chdir("/")
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return Truegreen(run_cli("doctor", "--no-registry", "-o", "json", *args))


def _plugin(tmp_path: Path) -> RecordingPlugin:
    return write_plugin(tmp_path / "plugins")


def _exec(api_version: str = V1, **entry: Any) -> dict[str, Any]:
    """An exec user entry running the test plugin beside the kubeconfig."""
    return {
        "exec": {
            "apiVersion": api_version,
            "command": "./plugins/plugin",
            "interactiveMode": "Never",
            **entry,
        }
    }


# -- exec plugins (client-go plugin/pkg/client/auth/exec/exec.go) ---------------------------


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
def test_an_exec_plugin_token_connects_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api_version: str
) -> None:
    api = serve("Bearer tok-from-plugin")
    _plugin(tmp_path).plan(exec_credential(api_version, token="tok-from-plugin"))
    config = _write(tmp_path, _cluster(api.url, pki), _exec(api_version))
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert set(api.authorizations) == {"Bearer tok-from-plugin"}
    api.authorizations.clear()
    assert truegreen(config, monkeypatch).connected
    assert set(api.authorizations) == {"Bearer tok-from-plugin"}


def test_an_exec_plugin_client_certificate_connects_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve(any_login=True)
    api.require_client_certificates(pki.ca)
    _plugin(tmp_path).plan(
        exec_credential(
            V1,
            clientCertificateData=pki.client.cert.read_text(),
            clientKeyData=pki.client.key.read_text(),
        )
    )
    config = _write(tmp_path, _cluster(api.url, pki), _exec())
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).connected
    assert set(api.authorizations) == {None}  # the certificate alone logged both in


def test_without_the_plugin_s_certificate_neither_connects(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve(any_login=True)
    api.require_client_certificates(pki.ca)
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "not-a-certificate"})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "certificate required" in by_kubectl.result.stderr
    # The fake refuses at the handshake (stricter than kube-apiserver's 401): TLS 1.3 finishes
    # the client's side first, so truegreen sees the refusal as a dropped connection.
    ours = truegreen(config, monkeypatch)
    assert ours.result.exit_code == 3
    assert ours.report["headline"]["rule"] == "could-not-check"
    assert api.authorizations == []  # no request got through to either


def test_a_missing_plugin_shows_its_install_hint_in_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer never")
    hint = "Install cloud-login: https://example.com/cloud-login"
    # a bare name not on PATH: client-go adds the hint only to "executable … not found"
    user = _exec(command="cloud-login-not-installed", installHint=hint)
    config = _write(tmp_path, _cluster(api.url, pki), user)
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert hint in by_kubectl.result.stderr
    ours = truegreen(config, monkeypatch)
    assert ours.why.startswith(
        f"Couldn't log in to the cluster at {api.url}: cannot log in as user 'u': exec: "
    )
    assert hint in ours.report["headline"]["remedy"]  # the plugin's advice is what to do
    assert api.authorizations == []


def test_a_failing_plugin_s_own_words_reach_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer never")
    _plugin(tmp_path).plan({"stderr": "token expired, run aws sso login\n", "exit": 1})
    config = _write(tmp_path, _cluster(api.url, pki), _exec())
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "token expired, run aws sso login" in by_kubectl.result.stderr
    assert "failed with exit code 1" in by_kubectl.result.stderr
    why = truegreen(config, monkeypatch).why
    assert "failed with exit code 1, saying: token expired, run aws sso login" in why
    assert api.authorizations == []


def test_an_env_name_holding_an_equals_sign_reaches_the_plugin_alike_from_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client-go writes each env entry as the text `NAME=VALUE` (plugin/pkg/client/auth/exec/
    exec.go `newAuthenticator`) and Go's os/exec takes what precedes the first `=` as the name
    (os/exec/exec.go `dedupEnvCase`): the entry `A=B`, value `x`, is the plugin's `A=B=x`."""
    api = serve("Bearer tok-from-plugin")
    plugin = _plugin(tmp_path)
    plugin.plan(exec_credential(token="tok-from-plugin"), record_env=("A", "A=B"))
    user = _exec(env=[{"name": "A=B", "value": "x"}])
    config = _write(tmp_path, _cluster(api.url, pki), user)
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    kubectl_runs = plugin.runs()
    assert truegreen(config, monkeypatch).connected
    ours = plugin.runs()[len(kubectl_runs) :]
    assert ours, "truegreen did not run the plugin"
    assert [run["env"] for run in kubectl_runs + ours] == [{"A": "B=x", "A=B": None}] * len(
        kubectl_runs + ours
    )
    assert set(api.authorizations) == {"Bearer tok-from-plugin"}


def test_an_env_name_starting_with_an_equals_sign_is_refused_in_one_line(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Go keeps `=A=x` as a variable named `=A` (os/exec/exec.go `dedupEnvCase`) and kubectl
    runs the plugin with it; Python's subprocess refuses every name holding `=`, so truegreen
    refuses the entry in one line, exit 3, naming it, rather than running the plugin without
    it."""
    api = serve("Bearer tok-from-plugin")
    plugin = _plugin(tmp_path)
    plugin.plan(exec_credential(token="tok-from-plugin"))
    config = _write(tmp_path, _cluster(api.url, pki), _exec(env=[{"name": "=A", "value": "x"}]))
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    kubectl_runs = plugin.runs()
    api.authorizations.clear()
    ours = truegreen(config, monkeypatch)
    assert ours.why == (
        f"Couldn't log in to the cluster at {api.url}: cannot log in as user 'u': its credential"
        f" plugin {tmp_path / 'plugins' / 'plugin'} cannot be started: its env entry =A starts"
        " with '=': kubectl hands such a name to the plugin as it is, truegreen cannot."
    )
    assert ours.report["headline"]["remedy"].startswith(
        "Fix the exec section of user 'u' in the kubeconfig, then run again"
    )
    assert plugin.runs() == kubectl_runs
    assert api.authorizations == []


@pytest.mark.parametrize(
    ("entry", "go_says", "ours_says"),
    [
        (
            {"env": [{"name": "X", "value": "a\0b"}]},
            "getting credentials: exec: exec: environment variable contains NUL",
            "its env entry X holds a NUL byte, which no program can be handed (exec: environment"
            " variable contains NUL)",
        ),
        (
            {"args": ["get-token", "a\0b"]},
            "getting credentials: exec: fork/exec {command}: invalid argument",
            "its argument 2 holds a NUL byte, which no program can be started with (fork/exec"
            " {shown}: invalid argument)",
        ),
        (
            {"command": "./plugins/plu\0gin"},
            "getting credentials: exec: fork/exec {command}: invalid argument",
            "its command holds a NUL byte, which no program can be started with (fork/exec"
            " {shown}: invalid argument)",
        ),
    ],
    ids=["env", "argument", "command"],
)
def test_a_nul_byte_in_the_exec_section_stops_both_before_the_plugin_runs(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    entry: dict[str, Any],
    go_says: str,
    ours_says: str,
) -> None:
    """Go's os/exec refuses an env entry holding NUL before starting anything (exec.go
    `Cmd.Start` → `dedupEnvCase`), and a command or argument holding NUL with EINVAL (syscall
    `forkExec` → `SlicePtrFromStrings`: `fork/exec …: invalid argument`); client-go adds
    `exec: ` (exec.go `wrapCmdRunErrorLocked`). truegreen says so in one line, exit 3, naming
    the entry at fault and the user's exec section, and never quotes the argument."""
    api = serve("Bearer never")
    plugin = _plugin(tmp_path)
    plugin.plan(exec_credential(token="never"))
    config = _write(tmp_path, _cluster(api.url, pki), _exec(**entry))
    command = str(tmp_path / entry.get("command", "./plugins/plugin").removeprefix("./"))
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert go_says.format(command=command) in by_kubectl.result.stderr, by_kubectl.result.stderr
    ours = truegreen(config, monkeypatch)
    shown = command.replace("\0", "\\x00")
    assert ours.why == (
        f"Couldn't log in to the cluster at {api.url}: cannot log in as user 'u': its credential"
        f" plugin {shown} cannot be started: {ours_says.format(shown=shown)}."
    )
    assert ours.report["headline"]["remedy"].startswith(
        "Fix the exec section of user 'u' in the kubeconfig, then run again"
    )
    shown_anywhere = ours.result.stdout + ours.result.stderr
    assert "a\\x00b" not in shown_anywhere
    assert "a\\u0000b" not in shown_anywhere
    assert plugin.runs() == []
    assert api.authorizations == []


def _encrypted_key(key: Path, out: Path, *, legacy: bool) -> Path:
    """`key` behind the passphrase `hunter2`: PKCS #8 (`ENCRYPTED PRIVATE KEY`), or OpenSSL's
    legacy form (`EC PRIVATE KEY` with a `Proc-Type: 4,ENCRYPTED` header)."""
    encrypt = (
        ["pkey", "-traditional", "-aes256"] if legacy else ["pkcs8", "-topk8", "-v2", "aes256"]
    )
    subprocess.run(
        ["openssl", *encrypt, "-in", str(key), "-out", str(out), "-passout", "pass:hunter2"],
        check=True,
        capture_output=True,
    )
    return out


@pytest.mark.parametrize("legacy", [False, True], ids=["pkcs8-file", "legacy-data"])
def test_a_client_key_behind_a_passphrase_is_refused_by_both_at_once(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, legacy: bool
) -> None:
    """Go's crypto/tls `X509KeyPair` (tls.go, parsePrivateKey) reads no encrypted key and asks
    for no passphrase: from client-key-data kubectl stops at once with `tls: failed to parse
    private key`; from a client-key file it logs that line and goes on without a certificate
    (transport/cert_rotation.go), which this server, wanting one, refuses. OpenSSL, left to
    itself, prompts "Enter PEM pass phrase:" on the terminal and waits."""
    api = serve(any_login=True)
    api.require_client_certificates(pki.ca)
    key = _encrypted_key(pki.client.key, tmp_path / "client-enc.key", legacy=legacy)
    user = (
        {
            "client-certificate-data": base64.b64encode(pki.client.cert.read_bytes()).decode(),
            "client-key-data": base64.b64encode(key.read_bytes()).decode(),
        }
        if legacy
        else {"client-certificate": str(pki.client.cert), "client-key": str(key)}
    )
    config = _write(tmp_path, _cluster(api.url, pki), user)
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "tls: failed to parse private key" in by_kubectl.result.stderr, by_kubectl.result
    assert truegreen(config, monkeypatch).refused() == (
        "the kubeconfig user 'u' has a client key protected by a passphrase: kubectl cannot "
        "use it either (tls: failed to parse private key). name a key without a passphrase in "
        "client-key or client-key-data (`openssl pkey -in KEY -out PLAIN_KEY` writes one)"
    )
    assert api.authorizations == []


_KEY_MATERIAL = "c2VjcmV0LWtleS1tYXRlcmlhbA"
"""Text of a broken key file that must never reach the output."""


def _broken_pem(folder: Path, pki: Pki) -> dict[str, Path]:
    """Files a client-certificate or client-key may wrongly name: not PEM at all, a block whose
    base64 holds no certificate or key (`AAAA`: three zero bytes), and the wrong key."""
    folder.mkdir(exist_ok=True)
    made = {
        "not-pem": f"{_KEY_MATERIAL}\n",
        "empty-cert": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        "empty-key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        # what `openssl ecparam -name prime256v1` prints: PEM, but neither certificate nor key
        "params": "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n",
        # pem.go Decode skips a block whose body is not base64: no PEM data is left
        "not-base64": "-----BEGIN CERTIFICATE-----\nAA*A\n-----END CERTIFICATE-----\n",
    }
    for name, text in made.items():
        (folder / name).write_text(text)
    files = {name: folder / name for name in made}
    return {**files, "cert": pki.client.cert, "key": pki.client.key, "other-key": pki.named.key}


@pytest.mark.parametrize(
    ("cert", "key", "data", "says"),
    [
        (
            "not-pem",
            "key",
            False,
            "cannot use the client certificate {cert} of the kubeconfig user 'u': kubectl "
            "cannot use it either (tls: failed to find any PEM data in certificate input)",
        ),
        (
            "key",
            "cert",
            True,
            "cannot use the client certificate client-certificate-data in {config} of the "
            "kubeconfig user 'u': kubectl cannot use it either (tls: failed to find "
            "certificate PEM data in certificate input, but did find a private key; PEM inputs "
            "may have been switched)",
        ),
        (
            "cert",
            "not-pem",
            False,
            "cannot use the client key {key} of the kubeconfig user 'u': kubectl cannot use it "
            "either (tls: failed to find any PEM data in key input)",
        ),
        (
            "cert",
            "cert",
            False,
            "cannot use the client key {key} of the kubeconfig user 'u': kubectl cannot use it "
            "either (tls: found a certificate rather than a key in the PEM for the private key)",
        ),
        (
            "empty-cert",
            "key",
            True,
            "cannot use the client certificate client-certificate-data in {config} of the "
            "kubeconfig user 'u': kubectl cannot use it either (x509: malformed certificate)",
        ),
        (
            "cert",
            "empty-key",
            False,
            "cannot use the client key {key} of the kubeconfig user 'u': kubectl cannot use it "
            "either (tls: failed to parse private key)",
        ),
        (
            "params",
            "key",
            False,
            "cannot use the client certificate {cert} of the kubeconfig user 'u': kubectl "
            'cannot use it either (tls: failed to find "CERTIFICATE" PEM block in certificate '
            "input)",
        ),
        (
            "cert",
            "params",
            True,
            "cannot use the client key client-key-data in {config} of the kubeconfig user 'u': "
            "kubectl cannot use it either (tls: failed to find PEM block with type ending in "
            '"PRIVATE KEY" in key input)',
        ),
        (
            "not-base64",
            "key",
            True,
            "cannot use the client certificate client-certificate-data in {config} of the "
            "kubeconfig user 'u': kubectl cannot use it either (tls: failed to find any PEM "
            "data in certificate input)",
        ),
        (
            "cert",
            "other-key",
            False,
            "the client key {key} of the kubeconfig user 'u' is not the key of its client "
            "certificate {cert}: kubectl cannot use them either (tls: private key does not "
            "match public key)",
        ),
    ],
    ids=[
        "certificate-not-pem",
        "switched-data",
        "key-not-pem",
        "key-is-a-certificate",
        "certificate-malformed-data",
        "key-malformed",
        "certificate-of-other-blocks",
        "key-of-other-blocks-data",
        "certificate-not-base64-data",
        "key-of-another-certificate",
    ],
)
def test_a_client_certificate_or_key_that_is_not_usable_is_named_by_both(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cert: str,
    key: str,
    data: bool,
    says: str,
) -> None:
    """Go's crypto/tls `X509KeyPair` (tls.go) refuses such a pair with the reason quoted, which
    kubectl says: from client-certificate-data/client-key-data it stops at once
    (transport/transport.go `TLSConfigFor`); from files it logs the reason and goes on without
    a certificate (transport/cert_rotation.go), which this server, wanting one, refuses.
    truegreen refuses it before any request in one line that names the file (or the field of
    the kubeconfig), as client-go's clientcmd validation.go names the files it cannot open
    (`unable to read client-cert %v for %v`), and never shows what the file holds."""
    api = serve(any_login=True)
    api.require_client_certificates(pki.ca)
    files = _broken_pem(tmp_path / "pem", pki)
    user = (
        {
            "client-certificate-data": base64.b64encode(files[cert].read_bytes()).decode(),
            "client-key-data": base64.b64encode(files[key].read_bytes()).decode(),
        }
        if data
        else {"client-certificate": str(files[cert]), "client-key": str(files[key])}
    )
    config = _write(tmp_path, _cluster(api.url, pki), user)
    reason = says.rsplit("(", 1)[1].rstrip(")")
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert reason in by_kubectl.result.stderr, by_kubectl.result
    ours = truegreen(config, monkeypatch)
    assert ours.refused().split(". ")[0] == says.format(
        cert=files[cert], key=files[key], config=config
    )
    assert api.authorizations == []
    shown = ours.result.stdout + ours.result.stderr
    assert _KEY_MATERIAL not in shown
    assert pki.client.key.read_text().splitlines()[1] not in shown


def _readable_pairs(pki: Pki) -> dict[str, tuple[str, str]]:
    """Client certificates and keys Go's encoding/pem `Decode` and crypto/tls `X509KeyPair`
    read, in shapes people write by hand or by `cat`: (certificate input, key input)."""
    cert, key = pki.client.cert.read_text(), pki.client.key.read_text()
    return {
        # X509KeyPair keeps every CERTIFICATE block in order, parses only the first (the leaf,
        # the key's), and the handshake sends them all (handshake_client.go certificateMsg)
        "leaf-then-intermediate": (
            pki.chained.cert.read_text() + pki.intermediate.read_text(),
            pki.chained.key.read_text(),
        ),
        "leaf-then-authority": (cert + pki.ca.read_text(), key),
        # pem.go getLine drops the blanks that end a line, the BEGIN and END lines' too
        "blanks-after-begin-and-end": (
            cert.replace("CERTIFICATE-----\n", "CERTIFICATE----- \t\n"),
            key.replace("PRIVATE KEY-----\n", "PRIVATE KEY-----\t\n", 1),
        ),
        # pem.go Decode reads "Key: Value" lines after BEGIN as headers; X509KeyPair ignores them
        "headers": (
            cert.replace("-----\n", "-----\nComment: made by hand\n\n", 1),
            key.replace("-----\n", "-----\nComment: made by hand\n\n", 1),
        ),
    }


@pytest.mark.parametrize("data", [False, True], ids=["files", "data"])
@pytest.mark.parametrize(
    "shape",
    ["leaf-then-intermediate", "leaf-then-authority", "blanks-after-begin-and-end", "headers"],
)
def test_a_client_certificate_go_reads_connects_both(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    shape: str,
    data: bool,
) -> None:
    """What Go's encoding/pem (pem.go `Decode`) and crypto/tls (tls.go `X509KeyPair`) read,
    kubectl uses, and so does truegreen: a certificate chain (the server here trusts only the
    root, so `leaf-then-intermediate` connects only if the intermediate is sent too), blanks
    ending a BEGIN or END line, headers in a block."""
    api = serve(any_login=True)
    api.require_client_certificates(pki.ca)
    cert, key = _readable_pairs(pki)[shape]
    files = tmp_path / "pem"
    files.mkdir()
    (files / "cert").write_text(cert)
    (files / "key").write_text(key)
    user = (
        {
            "client-certificate-data": base64.b64encode(cert.encode()).decode(),
            "client-key-data": base64.b64encode(key.encode()).decode(),
        }
        if data
        else {"client-certificate": str(files / "cert"), "client-key": str(files / "key")}
    )
    config = _write(tmp_path, _cluster(api.url, pki), user)
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    ours = truegreen(config, monkeypatch)
    assert ours.connected, ours.report["headline"]


def test_a_chained_client_certificate_without_its_intermediate_is_refused_by_the_server(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of `leaf-then-intermediate` above: the server, trusting only the root,
    refuses the leaf shown alone, to kubectl and to truegreen (whose every read breaks: under
    TLS 1.3 the server's refusal of a client certificate comes after the client's handshake)."""
    api = serve(any_login=True)
    api.require_client_certificates(pki.ca)
    user = {"client-certificate": str(pki.chained.cert), "client-key": str(pki.chained.key)}
    config = _write(tmp_path, _cluster(api.url, pki), user)
    assert not kubectl(config, tmp_path).connected
    ours = truegreen(config, monkeypatch)
    assert ours.result.exit_code == 3
    assert not ours.connected
    assert api.authorizations == []


def test_a_plugin_answering_a_client_key_behind_a_passphrase_is_refused_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client-go exec.go (`Authenticator.refreshCredsLocked`) hands the answer to
    `tls.X509KeyPair`, which reads no encrypted key: "failed parsing client key/certificate"."""
    api = serve(any_login=True)
    api.require_client_certificates(pki.ca)
    key = _encrypted_key(pki.client.key, tmp_path / "client-enc.key", legacy=False)
    plugin = _plugin(tmp_path)
    plugin.plan(
        exec_credential(
            V1, clientCertificateData=pki.client.cert.read_text(), clientKeyData=key.read_text()
        )
    )
    config = _write(tmp_path, _cluster(api.url, pki), _exec())
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "tls: failed to parse private key" in by_kubectl.result.stderr, by_kubectl.result
    assert truegreen(config, monkeypatch).why == (
        f"Couldn't log in to the cluster at {api.url}: cannot log in as user 'u': its credential "
        f"plugin {plugin.path} returned a client key protected by a passphrase, which kubectl "
        "cannot use either (tls: failed to parse private key)."
    )
    assert api.authorizations == []


def test_a_written_token_beside_a_plugin_wins_in_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # exec.go UpdateTransportConfig: a token written in the file leaves the plugin unrun.
    api = serve("Bearer written")
    plugin = _plugin(tmp_path)
    plugin.plan({"stderr": "the plugin must not run\n", "exit": 1})
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "written", **_exec()})
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    runs_before = len(plugin.runs())
    assert truegreen(config, monkeypatch).connected
    assert len(plugin.runs()) == runs_before
    assert set(api.authorizations) == {"Bearer written"}


@pytest.mark.parametrize("section", ["exec", "auth-provider"])
def test_a_null_plugin_section_is_no_plugin_for_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section: str
) -> None:
    """`exec: null` and `auth-provider: null` decode to nil pointers (clientcmd/api/v1 types.go
    `Exec *ExecConfig`, `AuthProvider *AuthProviderConfig`): no plugin, the token logs in."""
    api = serve("Bearer written")
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "written", section: None})
    assert f"{section}: null" in config.read_text()
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).connected
    assert set(api.authorizations) == {"Bearer written"}


def test_the_plugin_gets_the_same_cluster_from_both_across_two_files(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cluster, with a RELATIVE certificate-authority, is in the second KUBECONFIG file;
    # provideClusterInfo hands the plugin that CA's bytes (rest/exec.go ConfigToExecCluster).
    api = serve("Bearer tok")
    plugin = _plugin(tmp_path / "first")
    plugin.plan(exec_credential(V1, token="tok"))
    first = _write(tmp_path / "first", None, _exec(provideClusterInfo=True))
    shutil.copy(pki.ca, tmp_path / "second-ca.crt")
    (tmp_path / "second").mkdir()
    shutil.move(tmp_path / "second-ca.crt", tmp_path / "second" / "ca.crt")
    second = _write(
        tmp_path / "second", {"server": api.url, "certificate-authority": "ca.crt"}, None
    )
    both = f"{first}{os.pathsep}{second}"
    by_kubectl = kubectl(both, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    kubectl_info = plugin.runs()[-1]["info"]
    assert truegreen(both, monkeypatch).connected
    ours = plugin.runs()[-1]["info"]
    assert ours == kubectl_info
    sent = json.loads(ours)["spec"]["cluster"]["certificate-authority-data"]
    assert base64.b64decode(sent) == pki.ca.read_bytes()


def test_the_plugin_gets_a_certificate_authority_written_across_lines_from_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """certificate-authority-data wrapped at 76 columns, as `base64` prints it: Go's
    encoding/base64 skips the line breaks, and rest/exec.go ConfigToExecCluster hands the
    plugin the CA's bytes, which kubectl encodes again on one line."""
    api = serve("Bearer tok")
    plugin = _plugin(tmp_path)
    plugin.plan(exec_credential(V1, token="tok"))
    wrapped = "\n".join(textwrap.wrap(base64.b64encode(pki.ca.read_bytes()).decode(), 76))
    cluster = {"server": api.url, "certificate-authority-data": wrapped + "\n"}
    config = _write(tmp_path, cluster, _exec(provideClusterInfo=True))
    written = yaml.safe_load(config.read_text())["clusters"][0]["cluster"]
    assert written["certificate-authority-data"].count("\n") > 1  # the line breaks are kept
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    kubectl_info = plugin.runs()[-1]["info"]
    assert truegreen(config, monkeypatch).connected
    ours = plugin.runs()[-1]["info"]
    assert ours == kubectl_info
    sent = json.loads(ours)["spec"]["cluster"]["certificate-authority-data"]
    assert base64.b64decode(sent, validate=True) == pki.ca.read_bytes()


# -- auth-provider: oidc (plugin/pkg/client/auth/oidc/oidc.go) ------------------------------


def _jwt(expires: datetime) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'RS256'})}.{part({'exp': int(expires.timestamp())})}.c2ln"


def _oidc(id_token: str) -> dict[str, Any]:
    config = {"idp-issuer-url": "https://127.0.0.1:9", "client-id": "k", "id-token": id_token}
    return {"auth-provider": {"name": "oidc", "config": config}}


def test_a_valid_oidc_login_connects_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = _jwt(datetime.now(UTC) + timedelta(hours=1))
    api = serve(f"Bearer {token}")
    config = _write(tmp_path, _cluster(api.url, pki), _oidc(token))
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).connected
    assert set(api.authorizations) == {f"Bearer {token}"}


def test_an_expired_oidc_login_stops_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = _jwt(datetime.now(UTC) - timedelta(hours=1))
    api = serve(f"Bearer {token}")
    config = _write(tmp_path, _cluster(api.url, pki), _oidc(token))
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "No valid id-token, and cannot refresh without refresh-token" in (
        by_kubectl.result.stderr
    )
    why = truegreen(config, monkeypatch).why
    assert "the login of user 'u' has expired: its id-token expired at " in why
    assert api.authorizations == []


# -- proxies (tools/clientcmd/client_config.go proxy-url; Go net/http and httpproxy) ---------


def test_an_http_proxy_url_with_a_login_carries_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    with HttpConnectProxy(login=("alice", "pw")) as proxy:
        proxy_url = f"http://alice:pw@127.0.0.1:{proxy.port}"
        config = _write(
            tmp_path, _cluster(api.url, pki, **{"proxy-url": proxy_url}), {"token": "t0ken"}
        )
        by_kubectl = kubectl(config, tmp_path)
        assert by_kubectl.connected, by_kubectl.result.stderr
        by_kubectl_passages = list(proxy.passages)
        assert truegreen(config, monkeypatch).connected
    target = api.url.removeprefix("https://")
    expected = Passage("CONNECT", target, "authority", ("alice", "pw"), True)
    assert set(by_kubectl_passages) == {expected}  # a loopback server too: proxy-url is for all
    assert set(proxy.passages[len(by_kubectl_passages) :]) == {expected}


def test_a_proxy_refusing_the_login_stops_both_for_the_same_reason(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    with HttpConnectProxy(login=("alice", "pw")) as proxy:
        proxy_url = f"http://127.0.0.1:{proxy.port}"
        config = _write(
            tmp_path, _cluster(api.url, pki, **{"proxy-url": proxy_url}), {"token": "t0ken"}
        )
        by_kubectl = kubectl(config, tmp_path)
        why = truegreen(config, monkeypatch).why
    assert not by_kubectl.connected
    assert "Proxy Authentication Required" in by_kubectl.result.stderr
    assert why == (
        f"Couldn't reach the cluster at {api.url}: the proxy 127.0.0.1:{proxy.port} refused the "
        "tunnel: "
        "407 Proxy Authentication Required."
    )
    assert api.authorizations == []


def test_an_https_proxy_url_is_tls_inside_tls_for_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Go checks the proxy's certificate with the cluster's own TLS settings (transport.go).
    api = serve("Bearer t0ken")
    with HttpConnectProxy(tls=(pki.server.cert, pki.server.key)) as proxy:
        config = _write(
            tmp_path, _cluster(api.url, pki, **{"proxy-url": proxy.url}), {"token": "t0ken"}
        )
        by_kubectl = kubectl(config, tmp_path)
        assert by_kubectl.connected, by_kubectl.result.stderr
        kubectl_passages = len(proxy.passages)
        assert truegreen(config, monkeypatch).connected
    assert kubectl_passages > 0
    assert len(proxy.passages) > kubectl_passages
    assert {p.target for p in proxy.passages} == {api.url.removeprefix("https://")}


def test_a_socks5_proxy_url_resolves_the_name_for_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    port = api.url.rsplit(":", 1)[1]
    with Socks5Proxy(login=("bob", "s3"), names={API_NAME: "127.0.0.1"}) as proxy:
        proxy_url = f"socks5://bob:s3@127.0.0.1:{proxy.port}"
        cluster = _cluster(f"https://{API_NAME}:{port}", pki, **{"proxy-url": proxy_url})
        config = _write(tmp_path, cluster, {"token": "t0ken"})
        by_kubectl = kubectl(config, tmp_path)
        assert by_kubectl.connected, by_kubectl.result.stderr
        kubectl_passages = list(proxy.passages)
        assert truegreen(config, monkeypatch).connected
    expected = Passage("SOCKS5", f"{API_NAME}:{port}", "name", ("bob", "s3"), True)
    assert set(kubectl_passages) == {expected}
    assert set(proxy.passages[len(kubectl_passages) :]) == {expected}


@pytest.mark.parametrize(
    ("userinfo", "why"),
    [
        ("alice:pa ss", "net/url: invalid userinfo"),
        ("alice:p%zz", "invalid URL escape in the address's user part"),
    ],
    ids=["space-in-password", "not-an-escape-in-password"],
)
def test_a_proxy_url_go_cannot_parse_is_refused_by_both_before_any_connection(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    userinfo: str,
    why: str,
) -> None:
    """client-go clientcmd/validation.go validateClusterInfo runs parseProxyURL (helpers.go:
    Go's url.Parse; net/url `validUserinfo`, `unescape`) as the file is read, and refuses it
    ("could not parse"); Python's urlsplit took both, and doctor sent the login to the
    proxy."""
    api = serve("Bearer t0ken")
    with HttpConnectProxy(login=("alice", "pa ss")) as proxy:
        proxy_url = f"http://{userinfo}@127.0.0.1:{proxy.port}"
        config = _write(
            tmp_path, _cluster(api.url, pki, **{"proxy-url": proxy_url}), {"token": "t0ken"}
        )
        by_kubectl = kubectl(config, tmp_path)
        refused = truegreen(config, monkeypatch).refused()
        reached = proxy.connections
    assert not by_kubectl.connected
    assert "invalid 'proxy-url'" in by_kubectl.result.stderr
    assert "could not parse" in by_kubectl.result.stderr
    assert refused == (
        f"the kubeconfig cluster in {config} has a proxy-url kubectl would refuse: could not "
        f"parse ({why}). fix or remove proxy-url in the kubeconfig"
    )
    assert userinfo.partition(":")[2] not in refused  # never the password
    assert reached == 0
    assert api.authorizations == []


def test_the_proxy_environment_and_no_proxy_decide_for_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    port = api.url.rsplit(":", 1)[1]
    config = _write(tmp_path, _cluster(f"https://{API_NAME}:{port}", pki), {"token": "t0ken"})
    with HttpConnectProxy(names={API_NAME: "127.0.0.1"}) as proxy:
        environ = {"https_proxy": f"127.0.0.1:{proxy.port}"}  # no scheme: http, as Go reads it
        by_kubectl = kubectl(config, tmp_path, **environ)
        assert by_kubectl.connected, by_kubectl.result.stderr
        # A generous timeout: the proxy and the TLS server are Python threads, slow on a loaded
        # machine; what is tested is the way taken, not its speed.
        patient = ("--request-timeout", "60")
        assert truegreen(config, monkeypatch, *patient, **environ).connected
        used = len(proxy.passages)
        exempt = {**environ, "NO_PROXY": f"other.example,.internal:{port}"}
        by_kubectl = kubectl(config, tmp_path, **exempt)
        why = truegreen(config, monkeypatch, *patient, **exempt).why
    assert used >= 2
    assert len(proxy.passages) == used  # exempted: neither asked the proxy
    assert not by_kubectl.connected
    assert "no such host" in by_kubectl.result.stderr
    assert why == f"Couldn't reach the cluster at https://{API_NAME}:{port}: address not found."


# -- a server address without a scheme (rest/url_utils.go DefaultServerURL) ------------------


@pytest.mark.parametrize(
    "settings",
    [{}, {"certificate-authority": "CA"}, {"insecure-skip-tls-verify": True}],
    ids=["nothing-more", "with-a-certificate-authority", "skipping-verification"],
)
def test_a_server_written_as_host_and_port_is_reached_over_http_as_kubectl_reaches_it(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """`server: 127.0.0.1:6443` has no scheme. client-go's DefaultServerURL would put
    https:// in front for a config with a certificate authority, but clientcmd decides whether
    the transport is TLS before it copies the cluster's TLS settings and the user's login in
    (client_config.go ClientConfig, IsConfigTransportTLS): kubectl goes over plain http and
    sends no login, whatever the file says. (Over TLS it would fail with EOF against this
    server; kubectl -v=6 printed `GET http://127.0.0.1:44961/api` for the second case.)"""
    api = serve(tls=None, any_login=True)
    bare = api.url.split("://", 1)[1]
    assert api.url.startswith("http://")
    assert ":" in bare  # host:port only
    assert "/" not in bare
    cluster = {"server": bare, **{k: str(pki.ca) if v == "CA" else v for k, v in settings.items()}}
    config = _write(tmp_path, cluster, {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert set(api.authorizations) == {None}
    api.authorizations.clear()
    ours = truegreen(config, monkeypatch)
    assert ours.connected, ours.report["headline"]
    assert set(api.authorizations) == {None}


def test_a_server_address_with_a_path_and_no_scheme_is_refused_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    bare = api.url.split("://", 1)[1]
    config = _write(tmp_path, _cluster(f"{bare}/prefix", pki), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "host must be a URL or a host:port pair" in by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).refused() == (
        f"the server address '{bare}/prefix' of cluster 'c' in kubeconfig {config} is not "
        "usable: host must be a URL or a host:port pair. correct the server address in the "
        "file's clusters section"
    )
    assert api.authorizations == []


@pytest.mark.parametrize(
    ("written", "kubectl_says", "why"),
    [
        # `server: " 127.0.0.1:6443"`, a space pasted in front
        (" {bare}", 'invalid character " " in host name', 'invalid character " " in host name'),
        ("{url} ", "host must be a URL or a host:port pair", 'invalid port ":{port} " after host'),
        (
            "http://127.0.0.1 :{port}",
            "host must be a URL or a host:port pair",
            'invalid character " " in host name',
        ),
        (
            "https://[::1] :{port}",
            "host must be a URL or a host:port pair",
            'invalid port " :{port}" after host',
        ),
        (" {url}", 'invalid character " " in host name', 'invalid character " " in host name'),
        ("{url}\t", "invalid control character in URL", "invalid control character in URL"),
        # a host may escape only bytes beyond ASCII, and `%25` (net/url `unescape`, encodeHost)
        (
            "http://h%41st:{port}",
            "host must be a URL or a host:port pair",
            'invalid URL escape "%41"',
        ),
        ("http://127.0.0.1%zz:{port}", 'invalid URL escape "%zz"', 'invalid URL escape "%zz"'),
        # an IPv6 zone is written `%25` (RFC 6874); a bare `%` starts an escape
        ("http://[::1%lo]:{port}", 'invalid URL escape "%lo"', 'invalid URL escape "%lo"'),
        # net/url `validUserinfo`: no space, nothing beyond ASCII
        (
            "http://a b@127.0.0.1:{port}",
            "host must be a URL or a host:port pair",
            "net/url: invalid userinfo",
        ),
        (
            "http://a:p%zzw@127.0.0.1:{port}",
            'invalid URL escape "%zz"',
            "invalid URL escape in the address's user part",
        ),
    ],
    ids=[
        "space-in-front",
        "space-behind",
        "space-before-the-port",
        "space-after-brackets",
        "space-before-the-scheme",
        "tab-behind",
        "ascii-escaped-in-host",
        "not-an-escape-in-host",
        "ipv6-zone-unescaped",
        "space-in-user",
        "not-an-escape-in-password",
    ],
)
def test_a_server_address_go_cannot_parse_is_refused_by_both_before_any_request(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    written: str,
    kubectl_says: str,
    why: str,
) -> None:
    """Go's url.Parse refuses a space in a host and a port that is not all digits (net/url
    `parseHost`); Python's urlsplit takes both, and doctor dialled, then said "address not
    found" (or "no route to the server") for a file kubectl refuses."""
    api = serve(tls=None, any_login=True)
    bare = api.url.split("://", 1)[1]
    port = bare.rsplit(":", 1)[1]
    server = written.format(bare=bare, url=api.url, port=port)
    config = _write(tmp_path, _cluster(server, pki), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert kubectl_says in by_kubectl.result.stderr
    # the user part is never quoted: it may hold a password
    shown = server.replace("a b@", "<redacted>@").replace("a:p%zzw@", "<redacted>@")
    assert truegreen(config, monkeypatch).refused() == (
        f"the server address {shown!r} of cluster 'c' in kubeconfig {config} is not usable: "
        f"host must be a URL or a host:port pair ({why.format(port=port)}). correct the server "
        "address in the file's clusters section"
    )
    assert api.log == []


@pytest.mark.parametrize(
    ("written", "kubectl_says", "why"),
    [
        (
            "https://127.0.0.1:99999",
            "dial tcp: address 99999: invalid port",
            "its port is above 65535, the highest there is (kubectl says: dial tcp: address "
            "99999: invalid port)",
        ),
        (
            "https://127.0.0.1:065536",
            "dial tcp: address 065536: invalid port",
            "its port is above 65535, the highest there is (kubectl says: dial tcp: address "
            "065536: invalid port)",
        ),
        (
            "ftp://127.0.0.1:{port}",
            'unsupported protocol scheme "ftp"',
            "kubectl reaches a cluster only at an http:// or https:// address (it says: "
            'unsupported protocol scheme "ftp")',
        ),
        (
            "FTP://127.0.0.1:{port}",
            'unsupported protocol scheme "ftp"',
            "kubectl reaches a cluster only at an http:// or https:// address (it says: "
            'unsupported protocol scheme "ftp")',
        ),
        (
            "https://127.0.0.1:{port}/pre%zzfix",
            'invalid URL escape "%zz"',
            'its path holds a "%" that begins no escape (kubectl says: invalid URL escape "%zz")',
        ),
    ],
    ids=[
        "port-above-65535",
        "port-65536-with-a-leading-zero",
        "ftp",
        "ftp-in-capitals",
        "bad-escape-in-the-path",
    ],
)
def test_a_server_address_go_parses_but_cannot_dial_is_refused_by_both_before_any_request(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    written: str,
    kubectl_says: str,
    why: str,
) -> None:
    """Go's url.Parse takes any digits as a port and any scheme; its transport then refuses
    the request before dialling (net/http transport.go `roundTrip`: `unsupported protocol
    scheme`; net lookup.go `LookupPort`: `invalid port`), or one url.Parse refuses for a bad
    escape in its path (net/url `unescape`). Doctor said "no route to the server"
    and told the operator to check the network, for an address nothing was ever sent to."""
    api = serve(tls=None, any_login=True)
    port = api.url.rsplit(":", 1)[1]
    server = written.format(port=port)
    config = _write(tmp_path, _cluster(server, pki), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert kubectl_says in by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).refused() == (
        f"the server address {server!r} of cluster 'c' in kubeconfig {config} is not usable: "
        f"{why}. correct the server address in the file's clusters section"
    )
    assert api.log == []


def test_an_ipv6_zone_in_the_server_address_is_dialled_as_go_dials_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`server: http://[::1%25lo]:PORT`: Go unescapes the zone (`%25` is `%`, RFC 6874) and
    connects on the interface `lo` names (net/ipsock_posix.go, zone to interface index); the
    system never sees `25lo`."""
    api = FakeApiServer().start(host="::1")
    try:
        api.add(*healthy(datetime.now(UTC)))
        port = api.url.rsplit(":", 1)[1]
        config = _write(tmp_path, {"server": f"http://[::1%25lo]:{port}"}, {"token": "t0ken"})
        assert kubectl(config, tmp_path).connected
        api.log.clear()
        assert truegreen(config, monkeypatch).connected
        assert api.log, "doctor reached the server over ::1"
    finally:
        api.stop()


@pytest.mark.parametrize(
    "after",
    ["?x=1", "/?x=1", "#x", "/?x=1#y", "/prefix/..", "//a%20b/./../"],
    ids=[
        "query",
        "slash-and-query",
        "fragment",
        "query-and-fragment",
        "dot-dot",
        "slashes-escape-and-dots",
    ],
)
def test_a_server_address_s_query_fragment_and_path_are_read_by_both_as_go_reads_them(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: str
) -> None:
    """client-go clears the address's query and fragment (rest/client.go `NewRESTClient`),
    joins its path with each request's as `path.Join` does, and sets each request's own query
    (rest/request.go `(*Request).URL()`): kubectl reaches `/api…` here. Doctor sent
    `GET /?x=1/apis`, the API's path glued into the query (or `/prefix/../apis` as written),
    and said that nothing at the address serves the Kubernetes API."""
    api = serve("Bearer t0ken")
    config = _write(tmp_path, _cluster(f"{api.url}{after}", pki), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    api.log.clear()
    ours = truegreen(config, monkeypatch)
    assert ours.connected, ours.report["headline"]
    assert api.log
    assert [r for r in api.log if not r.path.startswith("/api") or "x" in r.query] == []


@pytest.mark.parametrize("after", ["", "/?token=x#y"], ids=["path", "path-query-and-fragment"])
def test_a_server_address_whose_path_is_not_the_api_s_reaches_no_api_in_either(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: str
) -> None:
    """`server: https://host:port/prefix` where the API is served at `/`: every path answers
    Go's bare `404 page not found`. kubectl's discovery fails on it (client-go reads a 404
    without a Status as `the server could not find the requested resource`); doctor must not
    read the 404s as objects measured absent ("The environment's space 'train' doesn't
    exist"), but as an address that serves no Kubernetes API, which it cannot check. The
    address is named as requests go to it: without a query or a fragment, never sent."""
    api = serve("Bearer t0ken")
    config = _write(tmp_path, _cluster(f"{api.url}/prefix{after}", pki), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "the server could not find the requested resource" in by_kubectl.result.stderr
    assert {r.status for r in api.log} == {404}
    api.log.clear()
    ours = truegreen(config, monkeypatch)
    assert ours.why == (
        f"Couldn't reach the cluster at {api.url}/prefix: nothing at this address serves the "
        "Kubernetes API; it answers 404 not found."
    )
    assert ours.report["headline"]["code"] == "cluster-unreachable"
    assert [(r.path, r.query, r.status) for r in api.log] == [("/prefix/apis", {}, 404)]


# -- TLS and files (tools/clientcmd/loader.go, client_config.go) -----------------------------


@pytest.mark.parametrize("server_name", [API_NAME, None])
def test_tls_server_name_decides_for_both(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server_name: str | None,
) -> None:
    api = serve("Bearer t0ken", tls=pki.named)
    named = {"tls-server-name": server_name} if server_name else {}
    config = _write(tmp_path, _cluster(api.url, pki, **named), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    ours = truegreen(config, monkeypatch)
    if server_name:
        assert by_kubectl.connected, by_kubectl.result.stderr
        assert ours.connected
    else:
        assert not by_kubectl.connected
        assert "x509: cannot validate certificate for 127.0.0.1" in by_kubectl.result.stderr
        assert ours.why == (
            f"Couldn't reach the cluster at {api.url}: TLS certificate does not name this server."
        )


@pytest.mark.parametrize("server_name", ["api..internal", ".api.internal", "api.intérnal"])
def test_a_tls_server_name_no_certificate_can_name_is_refused_by_both(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server_name: str,
) -> None:
    """crypto/tls checks the name as written against the certificate's names, which are ASCII
    host names (x509 verify.go, VerifyHostname): an empty label, a leading dot or a letter
    outside ASCII matches none, and kubectl says so. Python's idna codec raised UnicodeError on
    the first; `ssl` refuses the second outright."""
    api = serve("Bearer t0ken", tls=pki.named)
    config = _write(
        tmp_path, _cluster(api.url, pki, **{"tls-server-name": server_name}), {"token": "t0ken"}
    )
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "x509: certificate is valid for api.internal, not" in by_kubectl.result.stderr
    ours = truegreen(config, monkeypatch)
    assert ours.result.exit_code == 3, ours.result.stderr
    assert ours.why == (
        f"Couldn't reach the cluster at {api.url}: TLS certificate does not name this server."
    )
    assert api.authorizations == []


def test_a_server_name_with_an_empty_label_is_not_found_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Go hands the name to the resolver as written, which finds nothing; Python's idna codec
    raised UnicodeError in the resolving thread, whose traceback reached the terminal."""
    api = serve("Bearer t0ken")
    port = api.url.rsplit(":", 1)[1]
    config = _write(tmp_path, _cluster(f"https://api..internal:{port}", pki), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert "lookup api..internal: no such host" in by_kubectl.result.stderr
    uncaught: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", uncaught.append)
    ours = truegreen(config, monkeypatch)
    assert [str(hook.exc_value) for hook in uncaught] == []
    assert (
        ours.why
        == f"Couldn't reach the cluster at https://api..internal:{port}: address not found."
    )
    assert ours.result.stderr == ""


def test_a_certificate_naming_its_server_only_in_the_common_name_is_refused_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """crypto/x509 (Go 1.15 on) matches names against subject alternative names only; Python's
    ssl falls back to the Common Name unless told not to (hostname_checks_common_name)."""
    authority = (pki.ca, pki.ca.with_suffix(".key"))
    legacy = hostile.issue(tmp_path, authority, API_NAME, "")
    api = serve("Bearer t0ken", tls=legacy)
    config = _write(
        tmp_path, _cluster(api.url, pki, **{"tls-server-name": API_NAME}), {"token": "t0ken"}
    )
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "x509: certificate relies on legacy Common Name field, use SANs instead" in (
        by_kubectl.result.stderr
    )
    assert truegreen(config, monkeypatch).why == (
        f"Couldn't reach the cluster at {api.url}: TLS certificate does not name this server "
        "among its subject alternative names, as it must; a Common Name alone is not enough."
    )
    assert api.authorizations == []


_CERTIFICATE_NAMES: dict[str, tuple[str, str | None, str | None, bool]] = {
    # id: (the certificate's names, the server's host (None: 127.0.0.1), tls-server-name,
    # whether kubectl connects)
    "a name with a trailing dot": ("IP:127.0.0.1,DNS:api.internal", None, "api.internal.", True),
    "an address in brackets": ("IP:::1", None, "[::1]", True),
    "an IPv4-mapped server address": ("IP:127.0.0.1", "[::ffff:127.0.0.1]", None, True),
    "an IPv4-mapped address in the certificate": ("IP:::ffff:127.0.0.1", None, None, True),
    "letters of another case": ("DNS:API.Internal", None, "api.INTERNAL", True),
    "a wildcard over one label": ("DNS:*.internal", None, "api.internal", True),
    "a wildcard over a label with an underscore": ("DNS:*.internal", None, "x_y.internal", True),
    "a wildcard over a punycode label": ("DNS:*.example", None, "xn--bcher-kva.example", True),
    "a partial wildcard": ("DNS:a*.internal", None, "api.internal", False),
    "a bare wildcard": ("DNS:*", None, "localhost", False),
    "a wildcard over two labels": ("DNS:*.internal", None, "a.b.internal", False),
    "a pattern with a trailing dot": ("DNS:api.internal.", None, "api.internal", False),
    "a name with two trailing dots": ("DNS:api.internal", None, "api.internal..", False),
    "an address with a leading zero": ("IP:127.0.0.1", None, "127.000.0.1", False),
    "an address only as a DNS name": ("DNS:127.0.0.1", None, None, False),
}


@pytest.mark.parametrize("case", list(_CERTIFICATE_NAMES))
def test_a_certificate_names_its_server_for_both_or_for_neither(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """The name is checked as Go's crypto/x509 checks it (verify.go `VerifyHostname`): an
    address may be bracketed and equals its IPv4-mapped form (`net.IP.Equal`), one trailing
    dot of the name is dropped, a `*` stands for one whole left-most label, and anything that
    is no valid host name matches only letter for letter. OpenSSL's X509_check_host and
    X509_check_ip, which Python's ssl would use, refused the connectable ones and took
    `127.000.0.1` for 127.0.0.1."""
    alternative_names, host, server_name, connects = _CERTIFICATE_NAMES[case]
    authority = (pki.ca, pki.ca.with_suffix(".key"))
    api = serve("Bearer t0ken", tls=hostile.issue(tmp_path, authority, "server", alternative_names))
    server = api.url if host is None else api.url.replace("127.0.0.1", host)
    named = {} if server_name is None else {"tls-server-name": server_name}
    config = _write(tmp_path, _cluster(server, pki, **named), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected is connects, by_kubectl.result.stderr
    ours = truegreen(config, monkeypatch)
    if connects:
        assert ours.connected, ours.report["headline"]
        return
    assert "tls: failed to verify certificate: x509: " in by_kubectl.result.stderr
    assert (
        ours.why
        == f"Couldn't reach the cluster at {server}: TLS certificate does not name this server."
    )
    assert api.authorizations == []


def test_a_certificate_with_a_name_outside_ascii_is_refused_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Go's parser refuses the whole certificate (crypto/x509 parser.go `parseSANExtension`:
    a DNS name must be IA5, that is ASCII), even beside the address that names the server."""
    authority = (pki.ca, pki.ca.with_suffix(".key"))
    api = serve(
        "Bearer t0ken",
        tls=hostile.issue(tmp_path, authority, "server", "DNS:ÿ.internal,IP:127.0.0.1"),
    )
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "t0ken"})
    by_kubectl = kubectl(config, tmp_path)
    assert "x509: SAN dNSName is malformed" in by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).why == (
        f"Couldn't reach the cluster at {api.url}: TLS certificate was not accepted."
    )
    assert api.authorizations == []


def test_a_common_name_beside_other_alternative_names_is_named_as_not_enough(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Common Name is never read for the match (verify.go `VerifyHostname`); where it alone
    names the server, the line says so, here too where other alternative names are written."""
    authority = (pki.ca, pki.ca.with_suffix(".key"))
    api = serve("Bearer t0ken", tls=hostile.issue(tmp_path, authority, API_NAME, "DNS:other"))
    config = _write(
        tmp_path, _cluster(api.url, pki, **{"tls-server-name": API_NAME}), {"token": "t0ken"}
    )
    by_kubectl = kubectl(config, tmp_path)
    assert "x509: certificate is valid for other, not api.internal" in by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).why == (
        f"Couldn't reach the cluster at {api.url}: TLS certificate does not name this server "
        "among its subject alternative names, as it must; a Common Name alone is not enough."
    )
    assert api.authorizations == []


def test_relative_paths_follow_their_own_file_for_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer from-the-first-folder")
    (tmp_path / "first").mkdir()
    (tmp_path / "first" / "token").write_text("from-the-first-folder\n")
    first = _write(tmp_path / "first", None, {"tokenFile": "token"})
    (tmp_path / "second").mkdir()
    shutil.copy(pki.ca, tmp_path / "second" / "ca.crt")
    second = _write(
        tmp_path / "second", {"server": api.url, "certificate-authority": "ca.crt"}, None
    )
    both = f"{first}{os.pathsep}{second}"
    by_kubectl = kubectl(both, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert truegreen(both, monkeypatch).connected
    assert set(api.authorizations) == {"Bearer from-the-first-folder"}


def test_insecure_skip_tls_verify_in_the_file_connects_both_with_one_warning(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken", tls=pki.named)  # a certificate that would not verify
    config = _write(
        tmp_path, {"server": api.url, "insecure-skip-tls-verify": True}, {"token": "t0ken"}
    )
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    ours = truegreen(config, monkeypatch)
    assert ours.connected
    assert ours.result.stderr == (
        "truegreen: warning: not verifying the cluster's TLS certificate (insecure-skip-tls-verify"
        f" in {config}); anyone on the network path could answer for it\n"
    )


def test_a_plain_http_server_is_sent_no_credentials_by_either(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # client_config.go: credentials are read only when IsConfigTransportTLS.
    api = serve(tls=None, any_login=True)
    plugin = _plugin(tmp_path)
    plugin.plan({"stderr": "the plugin must not run\n", "exit": 1})
    assert api.url.startswith("http://")
    for user in ({"token": "must-not-travel"}, _exec()):
        config = _write(tmp_path, {"server": api.url}, user)
        by_kubectl = kubectl(config, tmp_path)
        assert by_kubectl.connected, by_kubectl.result.stderr
        runs_before = len(plugin.runs())
        assert truegreen(config, monkeypatch).connected
        assert len(plugin.runs()) == runs_before
    assert set(api.authorizations) == {None}


def test_a_password_without_a_username_is_sent_by_neither(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client-go sends a Basic login only with a username (transport/config.go `HasBasicAuth`:
    `len(c.Username) != 0`); with a password alone clientcmd finds no login at all
    (client_config.go `canIdentifyUser`) and kubectl asks for a username on its terminal,
    failing without one. truegreen asks nothing: it says so before any request."""
    api = serve(any_login=True)
    config = _write(tmp_path, _cluster(api.url, pki), {"password": "OnlyPassw0rd"})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "Please enter Username:" in by_kubectl.result.stdout, by_kubectl.result
    assert set(api.authorizations) <= {None}  # no Basic login went out
    api.authorizations.clear()
    assert truegreen(config, monkeypatch).refused() == (
        f"the kubeconfig user 'u' in {config} has a password but no username: kubectl sends no "
        "login without one (it asks for the username on a terminal). add the username to the "
        "kubeconfig, or remove the password"
    )
    assert api.authorizations == []


@pytest.mark.parametrize("content", ["", "  \n"], ids=["empty", "blank"])
def test_a_token_file_holding_no_token_logs_neither_in(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    """client-go's file token source refuses a file that holds only blanks (transport/
    token_source.go `fileTokenSource.Token`: "read empty token from file"), and no login is
    sent: kubectl asks for a username when the file is empty (client_config.go
    `canIdentifyUser`) and refuses the untrimmed blanks as a header value otherwise."""
    api = serve(any_login=True)
    token_file = tmp_path / "token"
    token_file.write_text(content)
    config = _write(tmp_path, _cluster(api.url, pki), {"tokenFile": str(token_file)})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert set(api.authorizations) <= {None}  # no login went out
    api.authorizations.clear()
    assert truegreen(config, monkeypatch).refused() == (
        f"cannot read the token file {token_file}: it holds no token. check the file, or the "
        "kubeconfig's tokenFile"
    )
    assert api.authorizations == []


@pytest.mark.parametrize(
    "field", ["certificate-authority", "client-certificate", "client-key", "tokenFile"]
)
def test_a_file_path_holding_a_nul_byte_is_an_unreadable_file_to_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str
) -> None:
    """Go refuses a path holding NUL with EINVAL before any system call (syscall/syscall.go
    `ByteSliceFromString`): kubectl says `unable to read certificate-authority … due to open
    …: invalid argument` (clientcmd/validation.go `validateClusterInfo`, `validateAuthInfo`
    for client-cert and client-key) or, for tokenFile, `open …: invalid argument`
    (transport/token_source.go). truegreen gives its line for an unreadable file, naming the
    field and the kubeconfig, exit 3, before any request."""
    api = serve(any_login=True)
    path = str(tmp_path / "holds\0nul")
    shown = path.replace("\0", "\\x00")
    cluster = _cluster(api.url, pki)
    client = {"client-certificate": str(pki.client.cert), "client-key": str(pki.client.key)}
    user: dict[str, Any] = {
        "certificate-authority": {"token": "written"},
        "client-certificate": {**client, field: path},
        "client-key": {**client, field: path},
        "tokenFile": {"tokenFile": path},
    }[field]
    if field == "certificate-authority":
        cluster[field] = path
    config = _write(tmp_path, cluster, user)
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert f"open {path}: invalid argument" in by_kubectl.result.stderr, by_kubectl.result
    said = {
        "certificate-authority": f"cannot read certificate authority {shown}",
        "client-certificate": f"cannot read client certificate {shown}",
        "client-key": f"cannot read client key {shown}",
        "tokenFile": f"cannot read the token file {shown}",
    }[field]
    fix = (
        "check the file, or the kubeconfig's tokenFile"
        if field == "tokenFile"
        else f"fix {field} in kubeconfig {config}"
    )
    assert truegreen(config, monkeypatch).refused() == f"{said}: Invalid argument. {fix}"
    assert api.authorizations == []


def test_a_written_token_beside_a_token_file_path_holding_a_nul_byte_logs_both_in(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client-go reads a tokenFile written beside a token only to renew it, and keeps the
    written token when the read fails (transport/round_trippers.go
    `NewBearerAuthWithRefreshRoundTripper`, `bearerAuthRoundTripper.RoundTrip`)."""
    api = serve("Bearer written")
    user = {"token": "written", "tokenFile": str(tmp_path / "holds\0nul")}
    config = _write(tmp_path, _cluster(api.url, pki), user)
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).connected
    assert set(api.authorizations) == {"Bearer written"}


def test_a_client_key_without_a_certificate_is_ignored_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client-go reads a client key only beside a client certificate: client_config.go
    `getUserIdentificationPartialConfig` copies KeyFile/KeyData under `if ClientCertificate
    or ClientCertificateData`, and validation.go `validateAuthInfo` checks the key file there
    too. A key naming a missing file, with no certificate, is never opened."""
    api = serve("Bearer written")
    user = {"token": "written", "client-key": str(tmp_path / "missing.key")}
    config = _write(tmp_path, _cluster(api.url, pki), user)
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).connected
    assert set(api.authorizations) == {"Bearer written"}


def test_a_token_that_would_split_the_request_is_sent_by_neither(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # net/http transport.go roundTrip: httpguts.ValidHeaderFieldValue, else "invalid header
    # field value for \"Authorization\"" before any connection.
    api = serve("Bearer good")
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "good\r\nX-Injected: yes"})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "invalid header field value" in by_kubectl.result.stderr, by_kubectl.result.stderr
    ours = truegreen(config, monkeypatch)
    assert "'authorization' header holds what HTTP forbids" in ours.why
    assert api.authorizations == []


def test_a_kubeconfig_kubectl_wrote_is_read_without_pyyaml_and_connects_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kubectl's own `config set-*` writes the file (sigs.k8s.io/yaml over yaml.v2: block
    YAML, a sequence at its key's indent, certificates embedded); truegreen's block reader
    reads it as PyYAML does, so doctor never loads PyYAML for it."""
    assert KUBECTL is not None, "kubectl is required (Debian: kubernetes-client)"
    api = serve("Bearer from-kubectl")
    config = tmp_path / "written-by-kubectl"
    for words in (
        [
            "set-cluster",
            "training",
            f"--server={api.url}",
            "--embed-certs=true",
            f"--certificate-authority={pki.ca}",
        ],
        ["set-credentials", "trainer", "--token=from-kubectl"],
        ["set-context", "training", "--cluster=training", "--user=trainer", "--namespace=train"],
        ["use-context", "training"],
    ):
        subprocess.run(
            [KUBECTL, "config", *words],
            check=True,
            capture_output=True,
            env={**os.environ, "KUBECONFIG": str(config), "HOME": str(tmp_path)},
        )
    text = config.read_text()
    assert "certificate-authority-data: " in text, "precondition: kubectl embedded the CA"
    assert isinstance(yaml.safe_load(text), dict), "precondition: a mapping"
    assert read_block_yaml(text) == yaml.safe_load(text)
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).connected


# -- impersonation (transport/round_trippers.go NewImpersonatingRoundTripper, tools/clientcmd) --

_EXTRA_KEY = "example.com/with space%"
"""An extra's key with bytes a header name may not hold: client-go percent-encodes them."""


def _acting(api: _LoginRequired, since: int) -> set[tuple[tuple[str, str], ...]]:
    """The distinct impersonation headers of the requests heard since `since`: each request's
    Impersonate-* lines, ordered by name (a group's or an extra's values keep their order)."""
    return {
        tuple(sorted(((n, v) for n, v in r.headers if n.startswith("impersonate-")), key=_name))
        for r in api.heard[since:]
    }


def _name(header: tuple[str, str]) -> str:
    return header[0]


def test_the_kubeconfig_user_s_impersonation_reaches_the_server_alike_from_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    user = {
        "token": "t0ken",
        "as": "jane",
        "as-uid": "1234",
        "as-groups": ["ops", "auditors"],
        "as-user-extra": {"scopes": ["view", "edit"], _EXTRA_KEY: ["x"]},
    }
    config = _write(tmp_path, _cluster(api.url, pki), user)
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    theirs = _acting(api, 0)
    since = len(api.heard)
    assert truegreen(config, monkeypatch).connected
    assert len(api.heard) - since >= 10, "precondition: doctor made its reads"
    assert theirs == {
        (
            ("impersonate-extra-example.com%2fwith%20space%25", "x"),
            ("impersonate-extra-scopes", "view"),
            ("impersonate-extra-scopes", "edit"),
            ("impersonate-group", "ops"),
            ("impersonate-group", "auditors"),
            ("impersonate-uid", "1234"),
            ("impersonate-user", "jane"),
        )
    }
    assert _acting(api, since) == theirs
    assert set(api.authorizations) == {"Bearer t0ken"}  # the login's own credential, always


def test_the_as_flags_replace_the_file_s_parts_alike_in_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    user = {"token": "t0ken", "as": "bob", "as-groups": ["from-the-file"], "as-uid": "1"}
    config = _write(tmp_path, _cluster(api.url, pki), user)
    flags = ("--as", "jane", "--as-group", "ops", "--as-group", "auditors")
    by_kubectl = kubectl(config, tmp_path, *flags)
    assert by_kubectl.connected, by_kubectl.result.stderr
    theirs = _acting(api, 0)
    since = len(api.heard)
    assert truegreen(config, monkeypatch, *flags).connected
    assert theirs == {
        (
            ("impersonate-group", "ops"),
            ("impersonate-group", "auditors"),
            ("impersonate-uid", "1"),  # not given as a flag: the file's stays
            ("impersonate-user", "jane"),
        )
    }
    assert _acting(api, since) == theirs


def test_groups_without_a_user_to_act_as_are_refused_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "t0ken", "as-groups": ["ops"]})
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "requesting uid, groups or user-extra for u without impersonating a user" in (
        by_kubectl.result.stderr
    )
    assert truegreen(config, monkeypatch).refused() == (
        "the kubeconfig user 'u' names a uid, groups or extras to act as, but no user: kubectl "
        "refuses that too. add `as:` to the user in the kubeconfig, or pass --as"
    )
    plain = _write(tmp_path / "plain", _cluster(api.url, pki), {"token": "t0ken"})
    by_kubectl = kubectl(plain, tmp_path, "--as-group", "ops")
    assert not by_kubectl.connected
    assert "without impersonating a user" in by_kubectl.result.stderr
    assert truegreen(plain, monkeypatch, "--as-group", "ops").refused(64) == (
        "--as-group without --as: kubectl acts as a uid or groups only together with a user. "
        "add --as USER"
    )
    assert api.heard == []


def test_a_user_to_act_as_that_would_split_the_request_is_sent_by_neither(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    config = _write(
        tmp_path, _cluster(api.url, pki), {"token": "t0ken", "as": "jane\r\nX-Injected: yes"}
    )
    by_kubectl = kubectl(config, tmp_path)
    assert not by_kubectl.connected
    assert "invalid header field value" in by_kubectl.result.stderr, by_kubectl.result.stderr
    assert "'Impersonate-User' header holds what HTTP forbids" in truegreen(config, monkeypatch).why
    assert api.heard == []


# -- what kubectl refuses to read (tools/clientcmd loader.go, api/v1, rest/request.go) ---------


def _refused_alike(
    config: Path, home: Path, monkeypatch: pytest.MonkeyPatch, kubectl_says: str, *args: str
) -> str:
    """kubectl refuses the file (or flag) with `kubectl_says`; truegreen's one line."""
    by_kubectl = kubectl(config, home, *args)
    assert not by_kubectl.connected
    assert kubectl_says in by_kubectl.result.stderr, by_kubectl.result.stderr
    exit_code = 64 if args else 3
    return truegreen(config, monkeypatch, *args).refused(exit_code)


@pytest.mark.parametrize(
    ("user", "context", "cluster", "kubectl_says", "ours"),
    [
        (
            {"token": 12345},
            {},
            {},
            "cannot unmarshal number into Go struct field AuthInfo.users.user.token of type string",
            "user 'u': token is a number, where kubectl reads text",
        ),
        (
            {"token": "t0ken"},
            {"namespace": True},
            {},
            "cannot unmarshal bool into Go struct field Context.contexts.context.namespace of "
            "type string",
            "context 'x': namespace is true (YAML reads an unquoted yes, no, on or off as true "
            "or false), where kubectl reads text",
        ),
        (
            {"token": "t0ken"},
            {},
            {"insecure-skip-tls-verify": "true"},
            "cannot unmarshal string into Go struct field "
            "Cluster.clusters.cluster.insecure-skip-tls-verify of type bool",
            "cluster 'c': insecure-skip-tls-verify is text, where kubectl reads true or false",
        ),
        (
            {"token": "t0ken", "as": "jane", "as-groups": "ops"},
            {},
            {},
            "cannot unmarshal string into Go struct field AuthInfo.users.user.as-groups of type "
            "[]string",
            "user 'u': as-groups is text, where kubectl reads a list of text",
        ),
    ],
    ids=["token-number", "namespace-yes", "verify-text", "groups-text"],
)
def test_a_value_of_the_wrong_type_is_refused_by_both(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    user: dict[str, Any],
    context: dict[str, Any],
    cluster: dict[str, Any],
    kubectl_says: str,
    ours: str,
) -> None:
    api = serve("Bearer t0ken")
    config = _write(tmp_path, _cluster(api.url, pki, **cluster), user)
    written = yaml.safe_load(config.read_text())
    written["contexts"][0]["context"].update(context)
    config.write_text(yaml.safe_dump(written))
    line = _refused_alike(config, tmp_path, monkeypatch, kubectl_says)
    assert line == (
        f"kubeconfig {config} is not usable: {ours}. check the file, or pass another with "
        "--kubeconfig"
    )
    assert api.heard == []


@pytest.mark.parametrize("section", ["clusters", "users", "contexts"])
def test_two_entries_of_one_name_are_refused_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section: str
) -> None:
    api = serve("Bearer t0ken")
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "t0ken"})
    written = yaml.safe_load(config.read_text())
    written[section] = [*written[section], *written[section]]
    config.write_text(yaml.safe_dump(written))
    name = written[section][0]["name"]
    line = _refused_alike(config, tmp_path, monkeypatch, f'duplicate name "{name}" in list')
    assert f"is not usable: two {section} are named {name!r}. " in line
    assert api.heard == []


@pytest.mark.parametrize(("namespace", "why"), [("..", "may not be '..'"), (".", "may not be '.'")])
def test_a_namespace_that_is_no_path_segment_is_refused_by_both(
    serve: Serve,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    namespace: str,
    why: str,
) -> None:
    """`..` in a request's path would list every namespace's objects (the server cleans the
    path); client-go refuses it: `invalid namespace "..": [may not be '..']`."""
    api = serve("Bearer t0ken")
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "t0ken"})
    written = yaml.safe_load(config.read_text())
    written["contexts"][0]["context"]["namespace"] = namespace
    config.write_text(yaml.safe_dump(written))
    by_kubectl = kubectl(config, tmp_path, "-n", "")  # the context's namespace
    assert not by_kubectl.connected
    assert f'invalid namespace "{namespace}": [{why}]' in by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).refused() == (
        f"the namespace {namespace!r} cannot be used: it {why}. fix the namespace in kubeconfig "
        f"{config}, or pass one with -n"
    )
    plain = _write(tmp_path / "plain", _cluster(api.url, pki), {"token": "t0ken"})
    line = _refused_alike(
        plain, tmp_path, monkeypatch, f'invalid namespace "{namespace}"', "-n", namespace
    )
    assert line == f"the namespace {namespace!r} cannot be used: it {why}. pass another with -n"
    assert not [r for r in api.heard if "/namespaces/" in r.path]


def _extension(text: str) -> str:
    """A kubeconfig text whose cluster carries `text` as an extension, indented in place."""
    return "\n".join(f"        {line}" for line in text.splitlines())


def test_a_billion_laughs_and_an_alias_holding_itself_are_refused_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = serve("Bearer t0ken")
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "t0ken"})
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    for hostile_text, kubectl_says, ours in (
        ("\n".join(levels), "yaml: document contains excessive aliasing", "excessive aliasing"),
        ("self: &a\n- *a", "yaml: anchor 'a' value contains itself", "an alias holds itself"),
    ):
        text = config.read_text().replace(
            "    server:",
            "    extensions:\n    - name: e\n      extension:\n"
            + _extension(hostile_text)
            + "\n    server:",
        )
        (tmp_path / "hostile").write_text(text)
        line = _refused_alike(tmp_path / "hostile", tmp_path, monkeypatch, kubectl_says)
        assert line.startswith(f"kubeconfig {tmp_path / 'hostile'} cannot be read"), line
        assert ours in line
    assert api.heard == []


def test_a_repeated_key_and_a_second_document_are_read_alike_by_both(
    serve: Serve, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """go-yaml's lenient decoding: a repeated key's last value wins; only the first document
    is read, a broken second one unread."""
    api = serve("Bearer t0ken")
    config = _write(tmp_path, _cluster(api.url, pki), {"token": "t0ken"})
    text = config.read_text().replace(
        f"    server: {api.url}", f"    server: https://127.0.0.1:9\n    server: {api.url}"
    )
    assert text.count("    server: ") == 2, "precondition: the key repeats"
    config.write_text(text + "---\nkind: [\n")
    by_kubectl = kubectl(config, tmp_path)
    assert by_kubectl.connected, by_kubectl.result.stderr
    assert truegreen(config, monkeypatch).connected
