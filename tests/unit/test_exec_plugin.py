"""Exec credential plugins, run for real: small Python programs the tests write and plan.

Each plugin records what it received (KUBERNETES_EXEC_INFO, arguments, environment, its stdin)
and answers what the test planned, so every rule of client-go's exec.go is checked against a
real process: the request, the environment, interactive mode, the answer's checks, expiry, the
re-run after a 401, and the bounds truegreen adds (time, answer size, quoted complaint).
"""

import base64
import json
import os
import signal
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.auth_echo import (
    RecordingPlugin,
    exec_credential,
    make_pki,
    write_plugin,
)
from truegreen.cluster.auth_plugins import plugin_credentials
from truegreen.cluster.credentials import Credential, CredentialError, PluginNoAnswerError
from truegreen.cluster.exec_plugin import (
    STDOUT_CAP,
    V1,
    V1BETA1,
    ExecCredentialSource,
    look_path,
    parse_exec,
)
from truegreen.errors import ConnectionSetupError
from truegreen.exitcodes import ExitCode
from truegreen.http.deadline import Deadline
from truegreen.http.tls import ClientCertificate

T0 = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
PEM_CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
PEM_KEY = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"
# A key behind a passphrase, as `openssl pkcs8 -topk8` and `openssl pkey -traditional -aes256`
# write one: Go's crypto/tls reads neither (tls.go parsePrivateKey).
ENCRYPTED_KEYS = (
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIHs\n-----END ENCRYPTED PRIVATE KEY-----\n",
    "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,FDE8\n\n"
    "MHcC\n-----END EC PRIVATE KEY-----\n",
)
SECRET = "s3cret-token-never-printed"


class Clock:
    """A settable clock: expiry is decided against it, never against the wall."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def plugin(tmp_path: Path) -> RecordingPlugin:
    return write_plugin(tmp_path / "plugins")


def exec_entry(command: str, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"apiVersion": V1, "command": command, "interactiveMode": "Never"}
    entry.update(extra)
    return entry


def source(
    plugin: RecordingPlugin,
    entry: Mapping[str, Any] | None = None,
    *,
    cluster: Mapping[str, Any] | None = None,
    terminal: bool = False,
    clock: Clock | None = None,
    timeout: float = 60.0,
    environ: Mapping[str, str] | None = None,
) -> ExecCredentialSource:
    parsed = parse_exec(
        "alice",
        entry if entry is not None else exec_entry(str(plugin.path)),
        base_dir=plugin.path.parent,
        cluster=cluster or {"server": "https://127.0.0.1:6443"},
    )
    return ExecCredentialSource(
        parsed,
        timeout_seconds=timeout,
        clock=clock or Clock(),
        stdin_is_terminal=lambda: terminal,
        environ=lambda: environ if environ is not None else {"PATH": os.environ["PATH"]},
    )


def failure(source: ExecCredentialSource) -> str:
    with pytest.raises(CredentialError) as raised:
        source.current()
    assert raised.value.exit_code == ExitCode.UNKNOWN
    return raised.value.line()


# --- the request, the environment, the arguments ---------------------------------------------


def test_a_v1_plugin_gets_kubectl_s_request_its_args_and_env_and_its_token_is_used(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan(exec_credential(token=SECRET), record_env=("FROM_CONFIG", "INHERITED"))
    entry = exec_entry(
        str(plugin.path),
        args=["token", "--cluster", "two words"],
        env=[{"name": "FROM_CONFIG", "value": "1"}],
    )
    credential = source(plugin, entry, environ={"INHERITED": "yes", "FROM_CONFIG": "old"}).current()
    assert credential == Credential(authorization=f"Bearer {SECRET}")
    [run] = plugin.runs()
    # byte for byte what kubectl 1.32 put in KUBERNETES_EXEC_INFO for the same entry
    assert run["info"] == (
        '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",'
        '"spec":{"interactive":false}}\n'
    )
    assert run["argv"] == ["token", "--cluster", "two words"]
    assert run["env"] == {"FROM_CONFIG": "1", "INHERITED": "yes"}
    assert run["stdin_null"] is True


def test_the_request_names_the_plugin_s_own_version_and_wins_over_an_env_entry(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan(exec_credential(V1BETA1, token="t"))
    entry = exec_entry(
        str(plugin.path),
        apiVersion=V1BETA1,
        env=[{"name": "KUBERNETES_EXEC_INFO", "value": "forged"}],
    )
    del entry["interactiveMode"]  # v1beta1 defaults to IfAvailable
    source(plugin, entry).current()
    assert json.loads(plugin.runs()[0]["info"]) == {
        "kind": "ExecCredential",
        "apiVersion": V1BETA1,
        "spec": {"interactive": False},
    }


def test_provide_cluster_info_hands_over_the_cluster_as_kubectl_encodes_it(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan(exec_credential(token="t"))
    (plugin.path.parent / "ca.pem").write_bytes(b"CA-BYTES")
    cluster = {
        "server": "https://api.example:6443",
        "tls-server-name": "api.internal",
        "insecure-skip-tls-verify": True,
        "certificate-authority": "ca.pem",
        "proxy-url": "socks5://127.0.0.1:1080",
        "disable-compression": True,
        "extensions": [
            {"name": "other", "extension": {"ignored": True}},
            {
                "name": "client.authentication.k8s.io/exec",
                "extension": {"zone": "<eu&1>", "audience": "train", "nested": {"b": 1, "a": 2}},
            },
        ],
    }
    entry = exec_entry(str(plugin.path), provideClusterInfo=True)
    source(plugin, entry, cluster={"name": "prod", "cluster": cluster}).current()
    assert plugin.runs()[0]["info"] == (
        '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":'
        '{"cluster":{"server":"https://api.example:6443","tls-server-name":"api.internal",'
        '"insecure-skip-tls-verify":true,"certificate-authority-data":"'
        + base64.b64encode(b"CA-BYTES").decode()
        + '","proxy-url":"socks5://127.0.0.1:1080","disable-compression":true,'
        '"config":{"audience":"train","nested":{"a":2,"b":1},"zone":"\\u003ceu\\u00261\\u003e"}},'
        '"interactive":false}}\n'
    )


@pytest.mark.parametrize(
    ("cluster", "encoded"),
    [
        # `config` is always sent, `null` without the extension, as kubectl sends it
        ({"extensions": None}, '{"server":"","config":null}'),
        (
            {"server": "https://x", "insecure-skip-tls-verify": False},
            '{"server":"https://x","config":null}',
        ),
        (
            {
                "server": "https://x",
                "certificate-authority-data": "Q0E=",
                "certificate-authority": "/no/such",
            },
            '{"server":"https://x","certificate-authority-data":"Q0E=","config":null}',
        ),
        (
            {
                "server": "https://x",
                "extensions": [
                    {
                        "name": "client.authentication.k8s.io/exec",
                        "extension": {10: "ten", 9: "nine", "list": [{"y": 1, "x": "zürich"}]},
                    }
                ],
            },
            '{"server":"https://x","config":{"10":"ten","9":"nine","list":[{"x":"zürich","y":1}]}}',
        ),
        (
            # wrapped as `base64` prints it; Go's decoder skips \r and \n (encoding/base64)
            {"server": "https://x", "certificate-authority-data": "Q0FC\r\nREVG\n"},
            '{"server":"https://x","certificate-authority-data":"Q0FCREVG","config":null}',
        ),
    ],
    ids=[
        "nothing-set",
        "only-a-server",
        "data-beats-file",
        "sorted-as-strings-raw-utf8",
        "data-across-lines",
    ],
)
def test_the_cluster_info_sends_only_what_is_set(
    plugin: RecordingPlugin, cluster: dict[str, Any], encoded: str
) -> None:
    plugin.plan(exec_credential(token="t"))
    source(plugin, exec_entry(str(plugin.path), provideClusterInfo=True), cluster=cluster).current()
    assert plugin.runs()[0]["info"] == (
        '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":'
        f'{{"cluster":{encoded},"interactive":false}}}}\n'
    )


@pytest.mark.parametrize(
    ("cluster", "line"),
    [
        (
            # Python would skip the "*" unless told to validate; Go refuses it
            {"server": "https://x", "certificate-authority-data": "Q0E=*"},
            "the kubeconfig's certificate-authority-data is not base64. fix the cluster's entry "
            "in the kubeconfig",
        ),
        (
            {"server": "https://x", "certificate-authority": "missing-ca.pem"},
            "cannot read the certificate authority missing-ca.pem for the exec plugin: No such "
            "file or directory. fix the cluster's certificate-authority in the kubeconfig",
        ),
        (
            # Go refuses a path holding NUL with EINVAL (syscall `ByteSliceFromString`)
            {"server": "https://x", "certificate-authority": "ca\0.pem"},
            "cannot read the certificate authority ca\\x00.pem for the exec plugin: Invalid "
            "argument. fix the cluster's certificate-authority in the kubeconfig",
        ),
    ],
)
def test_a_certificate_authority_that_cannot_be_read_is_one_line(
    tmp_path: Path, cluster: dict[str, Any], line: str
) -> None:
    with pytest.raises(ConnectionSetupError) as raised:
        parse_exec(
            "alice", exec_entry("p", provideClusterInfo=True), base_dir=tmp_path, cluster=cluster
        )
    assert raised.value.line() == line


def test_an_absolute_certificate_authority_path_is_read_as_it_is(
    plugin: RecordingPlugin, tmp_path: Path
) -> None:
    (tmp_path / "ca.pem").write_bytes(b"CA")
    parsed = parse_exec(
        "alice",
        exec_entry("p", provideClusterInfo=True),
        base_dir=plugin.path.parent,
        cluster={"certificate-authority": str(tmp_path / "ca.pem")},
    )
    assert parsed.cluster is not None
    assert parsed.cluster.certificate_authority_data == b"CA"


def test_without_provide_cluster_info_the_plugin_sees_no_cluster(plugin: RecordingPlugin) -> None:
    plugin.plan(exec_credential(token="t"))
    source(plugin, cluster={"server": "https://secret-host:6443"}).current()
    assert "cluster" not in json.loads(plugin.runs()[0]["info"])["spec"]


def test_a_relative_command_with_a_slash_is_found_beside_the_kubeconfig(
    plugin: RecordingPlugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin.plan(exec_credential(token="t"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    parsed = parse_exec(
        "alice",
        exec_entry("./plugins/plugin"),
        base_dir=tmp_path,
        cluster={"server": "https://x"},
    )
    assert parsed.command == str(plugin.path)
    assert ExecCredentialSource(parsed).current().authorization == "Bearer t"


def test_a_bare_command_is_looked_up_on_path(
    plugin: RecordingPlugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin.plan(exec_credential(token="t"))
    entry = exec_entry("plugin")
    assert parse_exec("alice", entry, base_dir=tmp_path, cluster={}).command == "plugin"
    # PATH is searched in truegreen's own environment, as Go's exec.LookPath does
    monkeypatch.setenv("PATH", str(plugin.path.parent))
    found = source(plugin, entry, environ={"PATH": "/nonexistent"})
    assert found.current().authorization == "Bearer t"


# --- interactive mode ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "terminal", "interactive"),
    [
        ("Never", True, False),
        ("IfAvailable", False, False),
        ("IfAvailable", True, True),
        ("Always", True, True),
    ],
)
def test_interactive_mode_against_whether_stdin_is_a_terminal(
    plugin: RecordingPlugin, mode: str, terminal: bool, interactive: bool
) -> None:
    plugin.plan(exec_credential(token="t"))
    source(plugin, exec_entry(str(plugin.path), interactiveMode=mode), terminal=terminal).current()
    assert json.loads(plugin.runs()[0]["info"])["spec"]["interactive"] is interactive


def test_always_interactive_without_a_terminal_is_refused_before_running(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan(exec_credential(token="t"))
    line = failure(source(plugin, exec_entry(str(plugin.path), interactiveMode="Always")))
    assert line == (
        "cannot log in as user 'alice': its credential plugin "
        f"{plugin.path} needs to ask questions (interactiveMode Always) but standard input is "
        "not a terminal. run truegreen in a terminal, or log in with the plugin first"
    )
    assert plugin.runs() == []


@contextmanager
def terminal_on_stdin() -> Iterator[None]:
    """A real pseudo-terminal as this process's standard input (fd 0), for the default seam."""
    primary, secondary = os.openpty()
    saved = os.dup(0)
    os.dup2(secondary, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, primary, secondary):
            os.close(fd)


@pytest.mark.parametrize(("mode", "shares_terminal"), [("IfAvailable", True), ("Never", False)])
def test_on_a_real_terminal_the_plugin_shares_stdin_only_when_interactive(
    plugin: RecordingPlugin, mode: str, shares_terminal: bool
) -> None:
    plugin.plan(exec_credential(token="t"))
    entry = exec_entry(str(plugin.path), interactiveMode=mode)
    login = ExecCredentialSource(
        parse_exec("alice", entry, base_dir=plugin.path.parent, cluster={})
    )
    with terminal_on_stdin():
        assert login.current().authorization == "Bearer t"
    [run] = plugin.runs()
    assert (run["stdin_tty"], run["stdin_null"]) == (shares_terminal, not shares_terminal)
    assert json.loads(run["info"])["spec"]["interactive"] is shares_terminal


def test_without_a_terminal_the_real_check_says_not_interactive(plugin: RecordingPlugin) -> None:
    plugin.plan(exec_credential(token="t"))
    entry = exec_entry(str(plugin.path), interactiveMode="IfAvailable")
    login = ExecCredentialSource(
        parse_exec("alice", entry, base_dir=plugin.path.parent, cluster={})
    )
    with open(os.devnull) as null:
        saved = os.dup(0)
        os.dup2(null.fileno(), 0)
        try:
            login.current()
        finally:
            os.dup2(saved, 0)
            os.close(saved)
    assert plugin.runs()[0]["stdin_null"] is True


def test_an_interactive_plugin_that_fails_points_at_its_own_messages(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan({"stderr": "Password: ", "exit": 1})
    entry = exec_entry(str(plugin.path), interactiveMode="IfAvailable")
    line = failure(source(plugin, entry, terminal=True))
    assert line == (
        f"cannot log in as user 'alice': exec: executable {plugin.path} failed with exit code 1"
        " (its own messages are above). do what the plugin asks (often: log in with it again),"
        " then retry"
    )


# --- the answer --------------------------------------------------------------------------------


def test_a_client_certificate_answer_becomes_the_tls_identity(
    plugin: RecordingPlugin, tmp_path: Path
) -> None:
    pki = make_pki(tmp_path / "pki")
    cert, key = pki.client_cert.read_text(), pki.client_key.read_text()
    plugin.plan(exec_credential(clientCertificateData=cert, clientKeyData=key))
    credential = source(plugin).current()
    assert credential == Credential(
        certificate=ClientCertificate(cert.encode(), key.encode()), authorization=None
    )
    assert key not in repr(credential)


def test_a_token_and_a_certificate_are_both_used(plugin: RecordingPlugin, tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    cert, key = pki.client_cert.read_text(), pki.client_key.read_text()
    plugin.plan(exec_credential(token="t", clientCertificateData=cert, clientKeyData=key))
    credential = source(plugin).current()
    assert credential.authorization == "Bearer t"
    assert credential.certificate == ClientCertificate(cert.encode(), key.encode())


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (
            exec_credential(V1BETA1, token=SECRET),
            f"answered in {V1BETA1} where the kubeconfig asks for {V1}",
        ),
        (f"not json {SECRET}", "did not answer with JSON"),
        ([SECRET], "did not answer with a JSON object"),
        (
            {"apiVersion": V1, "kind": "Secret", "status": {"token": SECRET}},
            "did not answer with an ExecCredential (kind and apiVersion)",
        ),
        ({"apiVersion": V1, "kind": "ExecCredential"}, "did not return a status field"),
        (exec_credential(), "did not return a token or cert/key pair"),
        (exec_credential(clientKeyData=SECRET), "returned only certificate or key, not both"),
        (
            exec_credential(clientCertificateData="x", clientKeyData=SECRET),
            "returned a client certificate or key that is not PEM",
        ),
        (
            {"apiVersion": V1, "kind": "ExecCredential", "status": {"token": 7}},
            "answered a token or certificate that is not a string",
        ),
        (
            exec_credential(token=SECRET, expirationTimestamp="tomorrow"),
            "answered an expirationTimestamp that is not an RFC 3339 time",
        ),
        (
            exec_credential(token=SECRET, expirationTimestamp=""),
            "answered an expirationTimestamp that is not an RFC 3339 time",
        ),
        (
            exec_credential(token=SECRET, expirationTimestamp="2026-12-01T12:00:00"),
            "answered an expirationTimestamp that is not an RFC 3339 time",
        ),
        (
            exec_credential(token=SECRET, expirationTimestamp="2026-13-45T99:99:99Z"),
            "answered an expirationTimestamp that is not an RFC 3339 time",
        ),
        (
            {
                "apiVersion": V1,
                "kind": "ExecCredential",
                "status": {"token": SECRET, "expirationTimestamp": 1},
            },
            "answered an expirationTimestamp that is not an RFC 3339 time",
        ),
        (
            exec_credential(clientCertificateData=PEM_CERT, clientKeyData=SECRET),
            "returned a client certificate or key that is not PEM",
        ),
        (
            exec_credential(clientCertificateData=SECRET, clientKeyData=PEM_KEY),
            "returned a client certificate or key that is not PEM",
        ),
        (
            exec_credential("v" * 200, token=SECRET),
            f"answered in {'v' * 79}… where the kubeconfig asks for {V1}",
        ),
        *(
            (
                exec_credential(clientCertificateData=PEM_CERT, clientKeyData=key),
                "returned a client key protected by a passphrase, which kubectl cannot use "
                "either (tls: failed to parse private key)",
            )
            for key in ENCRYPTED_KEYS
        ),
    ],
)
def test_an_answer_client_go_refuses_is_one_line_that_never_quotes_it(
    plugin: RecordingPlugin, answer: Any, why: str
) -> None:
    plugin.plan({"stdout": answer})
    line = failure(source(plugin))
    assert line == (
        f"cannot log in as user 'alice': its credential plugin {plugin.path} {why}. "
        "check the plugin, or run it by hand to see what it prints"
    )
    assert SECRET not in line


def test_ten_megabytes_of_answer_are_cut_off_at_the_cap(plugin: RecordingPlugin) -> None:
    plugin.plan({"stdout_bytes": 10 * 1024 * 1024})
    assert STDOUT_CAP == 1024 * 1024
    line = failure(source(plugin))
    assert line == (
        f"cannot log in as user 'alice': exec: executable {plugin.path} answered more than "
        "1024 KiB and was stopped without saying why. do what the plugin asks (often: log in "
        "with it again), then retry"
    )


# --- expiry and the re-run after a 401 --------------------------------------------------------


def test_the_credential_is_kept_until_its_expiration_timestamp_then_renewed(
    plugin: RecordingPlugin,
) -> None:
    expiry = T0 + timedelta(minutes=5)
    plugin.plan(
        exec_credential(token="first", expirationTimestamp="2026-12-01T12:05:00Z"),
        exec_credential(token="second", expirationTimestamp="2026-12-01T13:00:00.123456789+01:00"),
    )
    clock = Clock()
    login = source(plugin, clock=clock)
    assert login.current() == Credential(authorization="Bearer first", expires_at=expiry)
    clock.now = expiry  # exactly at the timestamp it still holds (client-go: now.After(exp))
    assert login.current().authorization == "Bearer first"
    assert len(plugin.runs()) == 1
    clock.now = expiry + timedelta(seconds=1)
    renewed = login.current()
    assert renewed.authorization == "Bearer second"
    assert renewed.expires_at == datetime(2026, 12, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert len(plugin.runs()) == 2


@pytest.mark.parametrize("expiry", ["absent", None])
def test_without_an_expiration_timestamp_the_plugin_runs_once(
    plugin: RecordingPlugin, expiry: str | None
) -> None:
    answer = exec_credential(token="only")
    if expiry is None:
        answer["status"]["expirationTimestamp"] = None  # JSON null, as metav1.Time allows
    plugin.plan(answer)
    clock = Clock()
    login = source(plugin, clock=clock)
    login.current()
    clock.now = T0 + timedelta(days=365)
    assert login.current().authorization == "Bearer only"
    assert len(plugin.runs()) == 1


def test_a_401_runs_the_plugin_again_and_hands_over_the_new_credential(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan(exec_credential(token="stale"), exec_credential(token="fresh"))
    login = source(plugin)
    stale = login.current()
    assert stale.authorization == "Bearer stale"
    assert login.after_unauthorized(stale) == Credential(authorization="Bearer fresh")
    assert login.current().authorization == "Bearer fresh"
    assert len(plugin.runs()) == 2


def test_requests_refused_together_run_the_plugin_once(plugin: RecordingPlugin) -> None:
    """Reads in flight together, all sent with the credential that expired, are all refused:
    the first to ask runs the plugin; the others are handed what it answered
    (client-go exec.go maybeRefreshCreds: "Credentials already rotated")."""
    plugin.plan(exec_credential(token="stale"), exec_credential(token="fresh"))
    login = source(plugin)
    stale = login.current()
    answers = [login.after_unauthorized(stale) for _ in range(5)]
    assert answers == [Credential(authorization="Bearer fresh")] * 5
    assert len(plugin.runs()) == 2
    # refused with the fresh one as well: the plugin is asked again
    plugin.plan(exec_credential(token="fresher"))
    fresh = login.current()
    assert login.after_unauthorized(fresh) == Credential(authorization="Bearer fresher")
    assert len(plugin.runs()) == 3


def test_a_401_answered_with_the_same_credential_again_says_asking_cannot_help(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan(exec_credential(token="same"))
    login = source(plugin)
    sent = login.current()
    assert login.after_unauthorized(sent) is None
    assert len(plugin.runs()) == 2
    # another request refused with it: the plugin's answer is already the one refused
    assert login.after_unauthorized(sent) is None
    assert len(plugin.runs()) == 2


# --- a plugin that is missing, fails, hangs ----------------------------------------------------


@pytest.mark.parametrize("command", ["no-such-plugin", "./bin/no-such-plugin"])
def test_a_missing_plugin_names_the_command_and_quotes_its_install_hint(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    entry = exec_entry(command, installHint="Install it:\n  brew install \x1b[1mthe-plugin\x1b[0m")
    parsed = parse_exec("alice", entry, base_dir=tmp_path, cluster={})
    with pytest.raises(CredentialError) as raised:
        ExecCredentialSource(parsed).current()
    shown = command if "/" not in command else str(tmp_path / "bin/no-such-plugin")
    assert raised.value.line() == (
        f"cannot log in as user 'alice': exec: executable {shown} not found. "
        "Install it: | brew install \\x1b[1mthe-plugin\\x1b[0m"
    )


def test_look_path_takes_the_first_absolute_match_and_refuses_a_relative_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Go's exec.LookPath (os/exec/lp_unix.go): the first executable match wins; one found
    through a relative entry is ErrDot, which client-go reports as not found, even when a later
    absolute entry holds the same program."""
    first, second, plain = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for folder in (first, second, plain):
        folder.mkdir()
    for folder in (first, second):
        (folder / "login").write_text("#!/bin/sh\n")
        (folder / "login").chmod(0o755)
    (plain / "login").write_text("#!/bin/sh\n")  # not executable: skipped
    (tmp_path / "d" / "login").mkdir(parents=True)  # a folder of that name: skipped
    monkeypatch.chdir(tmp_path)
    sep = os.pathsep
    assert look_path("login", f"{plain}{sep}{tmp_path / 'd'}{sep}{second}{sep}{first}") == str(
        second / "login"
    )
    assert look_path("login", f"{tmp_path / 'd'}{sep}nowhere") is None
    monkeypatch.chdir(first)
    assert look_path("login", f".{sep}{second}") is None
    assert look_path("login", f"{sep}{second}") is None
    monkeypatch.chdir(tmp_path)
    assert look_path("login", f"a{sep}{second}") is None
    assert look_path("login", f"c{sep}{second}") == str(second / "login")


def test_a_long_install_hint_is_cut_at_300_characters(tmp_path: Path) -> None:
    entry = exec_entry("no-such-plugin", installHint="h" * 400)
    parsed = parse_exec("alice", entry, base_dir=tmp_path, cluster={})
    with pytest.raises(CredentialError) as raised:
        ExecCredentialSource(parsed).current()
    assert raised.value.todo == "h" * 299 + "…"


def test_a_missing_plugin_without_a_hint_says_what_to_do(tmp_path: Path) -> None:
    parsed = parse_exec("alice", exec_entry("no-such-plugin"), base_dir=tmp_path, cluster={})
    with pytest.raises(CredentialError) as raised:
        ExecCredentialSource(parsed).current()
    assert raised.value.todo == (
        "install the credential plugin, or correct `command` in the kubeconfig"
    )


def test_a_failing_plugin_s_own_words_and_exit_code_reach_the_operator(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan(
        {"stderr": "\n  \ntoken expired\x1b]0;owned\x07, run aws sso login\nsecond line", "exit": 7}
    )
    assert failure(source(plugin)) == (
        f"cannot log in as user 'alice': exec: executable {plugin.path} failed with exit code 7, "
        "saying: token expired\\x1b]0;owned\\x07, run aws sso login. do what the plugin "
        "asks (often: log in with it again), then retry"
    ), "the first line that holds more than blanks, escaped"


def test_a_complaint_that_is_not_utf8_is_still_quoted(plugin: RecordingPlugin) -> None:
    plugin.plan({"stderr_hex": b"caf\xe9 closed".hex(), "exit": 2})
    assert "failed with exit code 2, saying: caf\ufffd closed. do what" in failure(source(plugin))


def test_a_long_complaint_is_quoted_by_the_first_200_characters_of_its_first_line(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan({"stderr": "A" * 5000 + "B" * 2000 + "the end\nnext", "exit": 1})
    line = failure(source(plugin))
    assert "saying: " + "A" * 199 + "…. do what" in line
    assert "A" * 200 not in line


def test_a_complaint_holding_a_secret_shape_is_quoted_redacted(plugin: RecordingPlugin) -> None:
    plugin.plan(
        {"stderr": "refresh failed: password=hunter2 for AKIAABCDEFGHIJKLMNOP\n", "exit": 1}
    )
    assert "saying: refresh failed: password=<redacted> for <redacted>. do what" in failure(
        source(plugin)
    )


@pytest.mark.parametrize(
    ("said", "quoted"),
    [
        (
            "error: the API rejected Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJl",
            "error: the API rejected Bearer <redacted>",
        ),
        ("cached eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. is stale", "cached <redacted> is stale"),
        (
            "could not use refresh token ya29.a0AfB_byC-x1 for the session",
            "could not use refresh token <redacted> for the session",
        ),
        (
            "login as admin with password hunter2 failed",
            "login as admin with password <redacted> failed",
        ),
        ("client SECRET Zm9vYmFy== was refused", "client SECRET <redacted> was refused"),
        ("Negotiate YIIGhgYJKoZIhvcSAQICAQBuggZ1 refused", "Negotiate <redacted> refused"),
        ("basic dXNlcjpwYXNz.", "basic <redacted>."),
        ("id_token eyJ0eXAi.eyJzdWIi.sig", "id_token <redacted>"),
        # a quoted value runs to its closing quote, whatever it holds, plain words too
        ('password "hunter two" rejected', 'password "<redacted>" rejected'),
        ("Token 'letmein' rejected", "Token '<redacted>' rejected"),
        ("secret `s3 cr3t` refused", "secret `<redacted>` refused"),
        ('token "a\\"b" refused', 'token "<redacted>" refused'),
        ('password "never closed', 'password "<redacted>'),
        ('token "" was empty', 'token "" was empty'),
        # Go's url.Error quotes the URL a token step ends; its words after `: ` are rule 6's
        (
            'refresh: Post "https://sso.example.com/token": dial tcp: i/o timeout',
            'refresh: Post "https://sso.example.com/token": dial tcp: i/o timeout',
        ),
        # plain words after a secret word are the plugin's own words, and stay
        ("token expired, run aws sso login", "token expired, run aws sso login"),
        ("the token has expired.", "the token has expired."),
        ("password re-entry required", "password re-entry required"),
        ("Basic realm=kubernetes refused", "Basic realm=kubernetes refused"),
        ("Bearer Unauthorized", "Bearer Unauthorized"),
    ],
)
def test_a_complaint_holding_a_login_is_quoted_without_it(
    plugin: RecordingPlugin, said: str, quoted: str
) -> None:
    """A plugin may print the token it failed with: `Bearer <token68>` (RFC 7235), a JWT
    (RFC 7519, three base64url parts, the first `eyJ`), or a value after password, token or
    secret that is no plain word."""
    plugin.plan({"stderr": said + "\n", "exit": 1})
    assert failure(source(plugin)) == (
        f"cannot log in as user 'alice': exec: executable {plugin.path} failed with exit code 1, "
        f"saying: {quoted}. do what the plugin asks (often: log in with it again), then retry"
    )


def test_a_plugin_killed_by_a_signal_says_so(plugin: RecordingPlugin) -> None:
    plugin.plan({"signal": int(signal.SIGKILL)})
    assert failure(source(plugin)).startswith(
        f"cannot log in as user 'alice': exec: executable {plugin.path} was ended by signal 9 "
        "without saying why."
    )


def test_a_plugin_that_hangs_is_stopped_at_its_deadline(plugin: RecordingPlugin) -> None:
    plugin.plan({"stderr": "waiting for the browser\n", "sleep": 120})
    entry = exec_entry(str(plugin.path), args=["get-token", "--client-secret", "hunter2"])
    with pytest.raises(PluginNoAnswerError) as raised:
        source(plugin, entry, timeout=1).current()
    assert raised.value.line() == (
        f"the login plugin {plugin.path} of user 'alice' did not answer within 1 seconds and was "
        "stopped, saying: waiting for the browser. run the login plugin yourself to see where "
        f"it waits (`{plugin.path} get-token --client-secret '<redacted>'`) and check that you "
        "are logged in"
    )


def test_a_plugin_is_stopped_at_the_caller_s_deadline_when_it_comes_first(
    plugin: RecordingPlugin,
) -> None:
    plugin.plan({"sleep": 120})
    started = time.monotonic()
    with pytest.raises(PluginNoAnswerError) as raised:
        source(plugin, timeout=60).current(Deadline.after(1))
    assert time.monotonic() - started < 10, "stopped at the deadline, not after 60 s"
    assert "did not answer within 1 seconds and was stopped without saying why" in str(raised.value)


def test_past_the_deadline_the_plugin_is_not_started(plugin: RecordingPlugin) -> None:
    plugin.plan(exec_credential(token="late"))
    with pytest.raises(PluginNoAnswerError) as raised:
        source(plugin).current(Deadline.after(0))
    assert plugin.runs() == []
    assert raised.value.what == (
        f"the run's time limit passed before the login plugin {plugin.path} of user 'alice' "
        "answered"
    )


def test_a_plugin_that_is_not_a_program_cannot_be_started(tmp_path: Path) -> None:
    not_a_program = tmp_path / "plugin"
    not_a_program.write_text("just text")
    parsed = parse_exec("alice", exec_entry(str(not_a_program)), base_dir=tmp_path, cluster={})
    with pytest.raises(CredentialError) as raised:
        ExecCredentialSource(parsed).current()
    assert raised.value.line() == (
        f"cannot log in as user 'alice': its credential plugin {not_a_program} could not be "
        "started (Permission denied). check that the file is a program you may run"
    )


# --- the kubeconfig entry, checked as kubectl checks it ----------------------------------------


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (
            {"apiVersion": V1, "command": "p"},
            "interactiveMode must be specified to use exec authentication plugin",
        ),
        (
            {"apiVersion": V1, "command": "p", "interactiveMode": "Sometimes"},
            'invalid interactiveMode "Sometimes"',
        ),
        (
            {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "p"},
            'exec plugin: invalid apiVersion "client.authentication.k8s.io/v1alpha1" '
            f"(kubectl accepts {V1} and {V1BETA1})",
        ),
        ({"command": "p"}, "apiVersion must be specified to use exec authentication plugin"),
        ({"apiVersion": V1}, "command must be specified to use exec authentication plugin"),
        (
            exec_entry("p", env=[{"value": "x"}]),
            "env variable name must be specified to use exec authentication plugin",
        ),
        (
            exec_entry("p", env=[{"name": 5, "value": "x"}]),
            "env variable name must be specified to use exec authentication plugin",
        ),
        (
            exec_entry("p", env=["NAME=value"]),
            "env variable name must be specified to use exec authentication plugin",
        ),
        (
            {**exec_entry("p"), "command": 5},
            "command must be specified to use exec authentication plugin",
        ),
        (
            {"apiVersion": 5, "command": "p"},
            "apiVersion must be specified to use exec authentication plugin",
        ),
        (exec_entry("p", args="--one --two"), "its args are not a list"),
        (
            {"apiVersion": "v" * 100, "command": "p"},
            f'exec plugin: invalid apiVersion "{"v" * 79}…" (kubectl accepts {V1} and {V1BETA1})',
        ),
        (exec_entry("p", interactiveMode="m" * 50), f'invalid interactiveMode "{"m" * 39}…"'),
    ],
)
def test_an_exec_entry_kubectl_rejects_is_rejected_with_its_reason(
    entry: dict[str, Any], why: str, tmp_path: Path
) -> None:
    with pytest.raises(ConnectionSetupError) as raised:
        plugin_credentials("alice", {"exec": entry}, base_dir=tmp_path, cluster={})
    assert raised.value.line() == (
        f"the kubeconfig user 'alice' cannot log in: {why}. fix its exec section in the kubeconfig"
    )
    assert raised.value.exit_code == ExitCode.UNKNOWN


def test_an_env_entry_without_a_value_is_set_empty(plugin: RecordingPlugin) -> None:
    plugin.plan(exec_credential(token="t"), record_env=("EMPTY",))
    source(plugin, exec_entry(str(plugin.path), env=[{"name": "EMPTY"}])).current()
    assert plugin.runs()[0]["env"] == {"EMPTY": ""}


def test_plugin_credentials_runs_the_exec_plugin_of_the_user(
    plugin: RecordingPlugin, tmp_path: Path
) -> None:
    plugin.plan(exec_credential(token="t"))
    login = plugin_credentials(
        "alice", {"exec": exec_entry("plugins/plugin")}, base_dir=tmp_path, cluster={}
    )
    assert login.describe() == f"the credential plugin {plugin.path} of user 'alice'"
    assert login.current().authorization == "Bearer t"


def test_exec_and_auth_provider_together_are_refused_as_kubectl_refuses_them(
    tmp_path: Path,
) -> None:
    user = {"exec": exec_entry("p"), "auth-provider": {"name": "oidc"}}
    with pytest.raises(ConnectionSetupError) as raised:
        plugin_credentials("alice", user, base_dir=tmp_path, cluster={})
    assert raised.value.why == "it names both an exec plugin and an auth-provider"
