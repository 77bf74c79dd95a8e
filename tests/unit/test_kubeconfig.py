"""Connection settings resolve like kubectl's, and a broken kubeconfig is one clear error."""

import base64
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.client_pair import CLIENT_CERT_PEM, CLIENT_KEY_PEM
from truegreen.cluster import kubeconfig_file
from truegreen.cluster.credentials import (
    Credential,
    CredentialError,
    StaticCredentials,
    TokenFileCredentials,
)
from truegreen.cluster.kubeconfig import ResolvedConnection, resolve
from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import ConnectionSetupError, TruegreenError, UsageError
from truegreen.exitcodes import ExitCode
from truegreen.http.tls import ClientCertificate, TlsSettings


def _config(
    server: str = "https://a.example:6443", namespace: str | None = None
) -> dict[str, object]:
    context: dict[str, str] = {"cluster": "a", "user": "a"}
    if namespace:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "a", "cluster": {"server": server}}],
        "users": [{"name": "a", "user": {"token": "s3cr3t-token-value"}}],
        "contexts": [{"name": "ctx-a", "context": context}],
        "current-context": "ctx-a",
    }


def _write(path: Path, content: object) -> Path:
    path.write_text(yaml.safe_dump(content) if not isinstance(content, str) else content)
    return path


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_namespace_precedence(tmp_path: Path) -> None:
    with_ns = _write(tmp_path / "a", _config(namespace="train"))
    without = _write(tmp_path / "b", _config())
    assert resolve(ConnectionSettings(kubeconfig=with_ns)).namespace == "train"
    assert resolve(ConnectionSettings(kubeconfig=with_ns, namespace="x")).namespace == "x"
    assert resolve(ConnectionSettings(kubeconfig=without)).namespace == "default"


def test_kubeconfig_env_merges_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _config(server="https://first.example")
    first.pop("current-context")
    second = _config(server="https://second.example", namespace="ns2")
    monkeypatch.setenv(
        "KUBECONFIG", f"{_write(tmp_path / '1', first)}:{_write(tmp_path / '2', second)}"
    )
    resolved = resolve(ConnectionSettings())
    # Cluster "a" comes from the first file; the current context only from the second.
    assert resolved.server == "https://first.example"
    assert resolved.namespace == "default"  # context ctx-a is the first file's, without namespace


def test_home_kubeconfig_is_the_fallback(tmp_path: Path) -> None:
    home_config = tmp_path / "home" / ".kube" / "config"
    home_config.parent.mkdir(parents=True)
    _write(home_config, _config(server="https://home.example"))
    assert resolve(ConnectionSettings()).server == "https://home.example"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("clusters: [unclosed", "is not valid YAML at line 1"),
        ("just a string", "is not a kubeconfig"),
        ({"clusters": "nope"}, "clusters is text, where kubectl reads a list of entries"),
        ({"clusters": ["nope"]}, "clusters[0] is text, where kubectl reads a mapping"),
    ],
)
def test_broken_kubeconfig_is_one_clear_line(
    tmp_path: Path, content: object, expected: str
) -> None:
    path = _write(tmp_path / "broken", content)
    with pytest.raises(ConnectionSetupError) as caught:
        resolve(ConnectionSettings(kubeconfig=path))
    line = caught.value.line()
    assert expected in line
    assert str(path) in line
    assert "\n" not in line
    assert caught.value.exit_code is ExitCode.UNKNOWN


def test_a_missing_kubeconfig_is_bad_usage_as_every_missing_path_is(tmp_path: Path) -> None:
    """The one rule: a path named on the command line that does not exist is exit 64."""
    absent = tmp_path / "absent"
    with pytest.raises(UsageError) as caught:
        resolve(ConnectionSettings(kubeconfig=absent))
    assert caught.value.exit_code is ExitCode.USAGE
    assert caught.value.line() == (
        f"kubeconfig {absent} does not exist. check the path, or pass another with --kubeconfig"
    )
    (tmp_path / "folder").mkdir()
    with pytest.raises(ConnectionSetupError, match=r"cannot read kubeconfig .*not a regular"):
        resolve(ConnectionSettings(kubeconfig=tmp_path / "folder"))  # exists, can't be used: 3


def test_missing_context_is_bad_usage_and_lists_the_known_ones(tmp_path: Path) -> None:
    """A --context the kubeconfig lacks is a wrong flag value: exit 64, not 3."""
    path = _write(tmp_path / "kc", _config())
    with pytest.raises(UsageError) as caught:
        resolve(ConnectionSettings(kubeconfig=path, context="prod"))
    assert caught.value.exit_code is ExitCode.USAGE
    assert caught.value.line() == (
        f"context 'prod' is not in kubeconfig {path}: it has ctx-a. "
        "pass one of those with --context"
    )


def test_no_configuration_at_all() -> None:
    with pytest.raises(ConnectionSetupError, match="no cluster is configured"):
        resolve(ConnectionSettings())


def test_errors_never_quote_credentials(tmp_path: Path) -> None:
    config = _config()
    config["contexts"] = [{"name": "ctx-a", "context": {"cluster": "missing", "user": "a"}}]
    path = _write(tmp_path / "kc", config)
    with pytest.raises(ConnectionSetupError) as caught:
        resolve(ConnectionSettings(kubeconfig=path))
    assert "s3cr3t-token-value" not in caught.value.line()


# -- what a user and a cluster entry may say (client-go tools/clientcmd) ---------------------

CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _entries(
    cluster: dict[str, object] | None = None, user: dict[str, object] | None = None
) -> dict[str, object]:
    config = _config()
    config["clusters"] = [
        {"name": "a", "cluster": {"server": "https://a.example", **(cluster or {})}}
    ]
    config["users"] = [{"name": "a", "user": user if user is not None else {"token": "tok"}}]
    return config


def _resolve(tmp_path: Path, config: dict[str, object], **settings: object) -> ResolvedConnection:
    return resolve(ConnectionSettings(kubeconfig=_write(tmp_path / "kc", config), **settings))  # type: ignore[arg-type]


def test_relative_paths_resolve_against_the_file_that_defined_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    (first / "ca.pem").write_bytes(CA_PEM)
    (second / "token").write_text("from-the-second-folder\n")
    clusters = _config()
    clusters["users"] = []
    clusters["clusters"] = [
        {"name": "a", "cluster": {"server": "https://a.example", "certificate-authority": "ca.pem"}}
    ]
    users = _config()
    users["clusters"] = []
    users["users"] = [{"name": "a", "user": {"tokenFile": "token"}}]
    monkeypatch.setenv(
        "KUBECONFIG", f"{_write(first / 'config', clusters)}:{_write(second / 'config', users)}"
    )
    resolved = resolve(ConnectionSettings())
    assert resolved.tls.ca_pem == CA_PEM
    assert resolved.credentials.current().authorization == "Bearer from-the-second-folder"


def test_data_fields_are_base64(tmp_path: Path) -> None:
    def encode(data: bytes) -> str:
        return base64.b64encode(data).decode()

    resolved = _resolve(
        tmp_path,
        _entries(
            {"certificate-authority-data": encode(CA_PEM), "tls-server-name": "api.internal"},
            {
                "client-certificate-data": encode(CLIENT_CERT_PEM),
                "client-key-data": encode(CLIENT_KEY_PEM),
            },
        ),
    )
    assert resolved.tls == TlsSettings(ca_pem=CA_PEM, server_name="api.internal")
    assert resolved.credentials.current() == Credential(
        None, ClientCertificate(CLIENT_CERT_PEM, CLIENT_KEY_PEM)
    )
    assert resolved.unverified_because is None


@pytest.mark.parametrize(
    ("cluster", "user", "expected"),
    [
        (
            {"certificate-authority-data": "QQ==", "certificate-authority": "ca.pem"},
            None,
            "sets both certificate-authority and certificate-authority-data",
        ),
        ({"certificate-authority-data": "not base64!"}, None, "is not base64"),
        ({"certificate-authority-data": "QUJD"}, None, "is not a PEM certificate"),
        (None, {"token": "t", "username": "u"}, "has more than one login method"),
        (None, {"client-certificate-data": "QQ=="}, "has a client certificate but no key"),
        (
            {"proxy-url": "ftp://user:secret@proxy.corp:3128"},
            None,
            'has a proxy-url kubectl would refuse: unsupported scheme "ftp", must be http, '
            "https, or socks5",
        ),
        (None, {"tokenFile": "absent"}, "cannot read the token file"),
    ],
)
def test_unusable_entries_are_one_line(
    tmp_path: Path, cluster: dict[str, object] | None, user: dict[str, object] | None, expected: str
) -> None:
    with pytest.raises(TruegreenError) as caught:
        _resolve(tmp_path, _entries(cluster, user))
    assert expected in caught.value.line()
    assert "\n" not in caught.value.line()
    assert caught.value.exit_code is ExitCode.UNKNOWN


def test_basic_login_and_a_missing_user(tmp_path: Path) -> None:
    basic = _resolve(tmp_path, _entries(user={"username": "admin", "password": "pw"}))
    assert basic.credentials.current().authorization == "Basic YWRtaW46cHc="
    anonymous = _entries()
    anonymous["users"] = []
    assert _resolve(tmp_path, anonymous).credentials.current() == Credential()


def test_skipping_verification_in_the_file_or_by_flag(tmp_path: Path) -> None:
    in_file = _resolve(tmp_path, _entries({"insecure-skip-tls-verify": True}))
    assert in_file.tls == TlsSettings(verify=False)
    assert in_file.unverified_because == f"insecure-skip-tls-verify in {tmp_path / 'kc'}"
    with_ca = _entries({"insecure-skip-tls-verify": True, "certificate-authority-data": "QQ=="})
    with pytest.raises(ConnectionSetupError, match="both names a certificate authority"):
        _resolve(tmp_path, with_ca)
    # The flag overrides the file's authority, as kubectl's does (client_config.go).
    flagged = _resolve(tmp_path, with_ca, insecure_skip_tls_verify=True)
    assert flagged.tls == TlsSettings(verify=False)
    assert flagged.unverified_because == "--insecure-skip-tls-verify"


def test_a_token_file_is_reread_every_minute(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("first")
    now = [0.0]
    source = TokenFileCredentials(path, "test", clock=lambda: now[0])
    path.write_text("second")
    now[0] = 59.0
    assert source.current().authorization == "Bearer first"
    now[0] = 60.0
    assert source.current().authorization == "Bearer second"
    path.unlink()  # a failed re-read keeps the last token
    now[0] = 200.0
    assert source.current().authorization == "Bearer second"


@pytest.mark.parametrize("content", ["", " \n\t\n"], ids=["empty", "blank"])
def test_a_token_file_holding_no_token_is_no_login(tmp_path: Path, content: str) -> None:
    """client-go transport/token_source.go `fileTokenSource.Token` trims the file and refuses
    what is left empty ("read empty token from file"); the caching source keeps the last good
    token after a failed re-read, and a token written beside the file stands for it."""
    path = tmp_path / "token"
    path.write_text(content)
    with pytest.raises(CredentialError) as caught:
        TokenFileCredentials(path, "test")
    assert caught.value.line() == (
        f"cannot read the token file {path}: it holds no token. check the file, or the "
        "kubeconfig's tokenFile"
    )
    beside = TokenFileCredentials(path, "test", fallback="written")
    assert beside.current().authorization == "Bearer written"
    path.write_text("first")
    now = [0.0]
    source = TokenFileCredentials(path, "test", clock=lambda: now[0])
    path.write_text(content)
    now[0] = 60.0
    first = source.current()
    assert first.authorization == "Bearer first"
    assert source.after_unauthorized(first) is None


def test_plugins_are_handed_to_auth_plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from truegreen.cluster import auth_plugins

    calls: list[tuple[str, dict[str, object], Path, dict[str, object]]] = []
    source = StaticCredentials(Credential("Bearer from-plugin"), "plugin")

    def plugin_credentials(
        user_name: str, user: dict[str, object], *, base_dir: Path, cluster: dict[str, object]
    ) -> StaticCredentials:
        calls.append((user_name, user, base_dir, cluster))
        return source

    monkeypatch.setattr(auth_plugins, "plugin_credentials", plugin_credentials)
    user: dict[str, object] = {
        "exec": {"command": "login", "apiVersion": "client.authentication.k8s.io/v1"}
    }
    resolved = _resolve(tmp_path, _entries(user=user))
    assert resolved.credentials is source
    assert calls == [("a", user, tmp_path, {"server": "https://a.example"})]


def test_in_cluster_service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    account = tmp_path / "sa"
    account.mkdir()
    (account / "token").write_text("sa-token\n")
    (account / "ca.crt").write_bytes(CA_PEM)
    (account / "namespace").write_text("train\n")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    resolved = resolve(ConnectionSettings(), service_account=account)
    assert (resolved.server, resolved.namespace, resolved.source) == (
        "https://10.0.0.1:443",
        "train",
        "in-cluster",
    )
    assert resolved.tls == TlsSettings(ca_pem=CA_PEM)
    sent = resolved.credentials.current()
    assert sent.authorization == "Bearer sa-token"
    (account / "token").write_text("rotated\n")
    assert resolved.credentials.after_unauthorized(sent) == Credential("Bearer rotated")
    # a request refused with the old token after the file was re-read gets the new one
    assert resolved.credentials.after_unauthorized(sent) == Credential("Bearer rotated")
    monkeypatch.setenv("POD_NAMESPACE", "elsewhere")
    assert resolve(ConnectionSettings(), service_account=account).namespace == "elsewhere"
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    assert resolve(ConnectionSettings(), service_account=account).server == "https://[fd00::1]:443"


_YAML_TOKENS = st.sampled_from(
    [
        *("clusters:", "users:", "- ", "name: a", "server: https://x", "token: 't0'", "  "),
        *("\n", "\t", "[", "]", "{", "}", ",", "&x ", "*x", "'", '"', "#c", ": ", "- a", "~"),
        *("0x1f", "certificate-authority-data: LS0t", "? ", "!!str ", "---", "...", "\u00e9"),
        *("a: 1\n", "a: 2\n", "<<: ", "!!binary ", "\x85"),
    ]
)


def _first_in_pyyaml(text: str) -> object:
    """The first document as libyaml reads it (the rest unread), or the error it raises."""
    try:
        return next(iter(yaml.load_all(text, Loader=yaml.CSafeLoader)), None)
    except yaml.YAMLError as error:
        return error


@settings(max_examples=600, deadline=None)
@given(st.lists(_YAML_TOKENS, max_size=25).map("".join))
@example("a: 1\na: 2\n")  # a repeated key: its last value, as go-yaml's lenient decoding
@example("a: 1\n---\nb: [")  # only the first document is read, as kubectl reads it
@example("a: &x [1]\nb: *x\n")
def test_a_kubeconfig_means_what_libyaml_means_by_its_first_document(text: str) -> None:
    """The kubeconfig goes through the block reader or the bounded loader, and means by it
    what libyaml (a port of which is go-yaml, kubectl's parser) means by the file's first
    document. The bounded loader refuses more than libyaml (aliases past go-yaml's ratio, tags
    go-yaml does not read as PyYAML does), never less."""
    assert hasattr(yaml, "CSafeLoader"), "precondition: PyYAML was built with libyaml"
    ours = kubeconfig_file.parse(text)
    theirs = _first_in_pyyaml(text)
    if isinstance(ours, kubeconfig_file.Unreadable):
        assert isinstance(theirs, yaml.YAMLError) or not ours.syntax, ours
    else:
        assert ours == theirs


def test_nesting_past_libyaml_s_limit_is_refused_at_its_line_not_a_crash(tmp_path: Path) -> None:
    """libyaml refuses a file nested past 1,000 levels (where PyYAML's Python parser would
    overflow the stack: a RecursionError, truegreen's internal error, exit 1). The file is under
    the size cap, so only the nesting stops it."""
    depth = 1200
    path = tmp_path / "kubeconfig"
    path.write_text(
        "".join(f"{'  ' * level}k:\n" for level in range(depth)) + "  " * depth + "k: v"
    )
    assert path.stat().st_size < kubeconfig_file.MAX_FILE_BYTES, "precondition: under the cap"
    with pytest.raises(ConnectionSetupError) as caught:
        resolve(ConnectionSettings(kubeconfig=path))
    assert caught.value.line() == (
        f"kubeconfig {path} is not valid YAML at line 1000: exceeded maximum nesting depth. "
        "fix the file, or pass another with --kubeconfig"
    )


# -- a server address kubectl refuses is quoted without its user part ------------------------


@pytest.mark.parametrize(
    ("server", "shown", "why"),
    [
        # Python's parser refuses the unclosed bracket (ValueError), as Go's does
        ("https://admin:hunter2@[::1", "https://<redacted>@[::1", ""),
        (
            "https://admin:hunter2@exa mple.com",
            "https://<redacted>@exa mple.com",
            ' (invalid character " " in host name)',
        ),
        # a space in the password: a URL-in-text rule would stop at it and show `admin:hunter`
        (
            "https://admin:hun ter2@exa mple.com",
            "https://<redacted>@exa mple.com",
            ' (invalid character " " in host name)',
        ),
        # no scheme: the user part starts the address
        ("admin:hunter2@10.0.0.1:6443/api", "<redacted>@10.0.0.1:6443/api", ""),
        # a `/` in the password ends the authority there for both parsers, which then read
        # `hun` as the port: the reason, which would quote it, is left out
        ("https://admin:hun/ter2@exa mple.com", "https://<redacted>@exa mple.com", ""),
        # a user without a password is hidden too, as LiveCluster.server hides it
        (
            "https://admin@exa mple.com",
            "https://<redacted>@exa mple.com",
            ' (invalid character " " in host name)',
        ),
        # an empty user part: nothing to hide
        (
            "https://@exa mple.com",
            "https://@exa mple.com",
            ' (invalid character " " in host name)',
        ),
        # no user part: nothing to hide, the reason says what is wrong
        (
            "https://exa mple.com:6443",
            "https://exa mple.com:6443",
            ' (invalid character " " in host name)',
        ),
    ],
    ids=[
        "unclosed-bracket",
        "space-in-host",
        "space-in-password",
        "no-scheme",
        "slash-in-password",
        "user-without-password",
        "empty-user",
        "no-user",
    ],
)
def test_an_unusable_server_address_is_quoted_without_its_password(
    tmp_path: Path, server: str, shown: str, why: str
) -> None:
    """client-go refuses these before any request (rest/url_utils.go DefaultServerURL: `host
    must be a URL or a host:port pair`); the address is quoted with its user part hidden, as
    Go's url.URL.Redacted hides a password, even where no parser can read the address."""
    config = _entries()
    config["clusters"] = [{"name": "a", "cluster": {"server": server}}]
    with pytest.raises(ConnectionSetupError) as caught:
        _resolve(tmp_path, config)
    line = caught.value.line()
    assert line == (
        f"the server address {shown!r} of cluster 'a' in kubeconfig {tmp_path / 'kc'} is not "
        f"usable: host must be a URL or a host:port pair{why}. correct the server address in "
        "the file's clusters section"
    )
    assert "hun" not in line


def test_a_port_above_65535_that_is_a_password_s_text_is_not_quoted(tmp_path: Path) -> None:
    """A `/` in the password ends the authority: Go reads `123456` as the port and refuses it
    when it dials (net lookup.go `LookupPort`: `dial tcp: address 123456: invalid port`, the
    password in kubectl's words). The line names neither the port nor the password."""
    config = _entries()
    config["clusters"] = [{"name": "a", "cluster": {"server": "https://admin:123456/x@h:6443"}}]
    with pytest.raises(ConnectionSetupError) as caught:
        _resolve(tmp_path, config)
    assert caught.value.line() == (
        f"the server address 'https://<redacted>@h:6443' of cluster 'a' in kubeconfig "
        f"{tmp_path / 'kc'} is not usable: its port is above 65535, the highest there is "
        "(kubectl says: invalid port). correct the server address in the file's clusters "
        "section"
    )


# -- several KUBECONFIG files: each message names the file of its entry ----------------------


def _four_files(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    context: dict[str, object] | None = None,
    cluster: dict[str, object] | None = None,
    user: dict[str, object] | None = None,
    current: str = "y",
) -> tuple[Path, Path, Path, Path]:
    """KUBECONFIG of four files, merged as client-go's loader merges them: the first holds
    another context `x` whole, the second context `y` (and the current context), the third
    y's cluster, the fourth y's user. client-go records the file of every entry
    (tools/clientcmd/loader.go LoadFromFile: LocationOfOrigin), and `kubectl config
    set-cluster`, `set-credentials` and `set-context` write back to it."""
    cluster = cluster or {}
    other = _config(server="https://x.example")
    other.pop("current-context")
    other["contexts"] = [{"name": "x", "context": {"cluster": "a", "user": "a"}}]
    files = (
        _write(tmp_path / "other", other),
        _write(
            tmp_path / "contexts",
            {
                "contexts": [
                    {"name": "y", "context": {"cluster": "cy", "user": "uy", **(context or {})}}
                ],
                "current-context": current,
            },
        ),
        _write(
            tmp_path / "clusters",
            {"clusters": [{"name": "cy", "cluster": {"server": "https://y.example", **cluster}}]},
        ),
        # a later current-context loses to the first one set (loader.go: first wins)
        _write(
            tmp_path / "users",
            {"users": [{"name": "uy", "user": user or {"token": "t"}}], "current-context": "x"},
        ),
    )
    monkeypatch.setenv("KUBECONFIG", ":".join(map(str, files)))
    return files


def test_a_merged_connection_names_the_files_of_its_cluster_and_its_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, clusters, users = _four_files(
        tmp_path, monkeypatch, cluster={"insecure-skip-tls-verify": True}
    )
    resolved = resolve(ConnectionSettings())
    assert (resolved.source, resolved.login_source) == (str(clusters), str(users))
    assert resolved.unverified_because == f"insecure-skip-tls-verify in {clusters}"


def test_a_context_naming_no_defined_user_names_the_context_s_file_for_the_login(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client-go: a context's undefined user is an anonymous login (client_config.go
    getAuthInfo returns an empty AuthInfo); the context's file is where it is named."""
    _, contexts, clusters, _ = _four_files(tmp_path, monkeypatch, context={"user": "nobody"})
    resolved = resolve(ConnectionSettings())
    assert (resolved.source, resolved.login_source) == (str(clusters), str(contexts))


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (
            {"cluster": {"server": "https://exa mple.com"}},
            "the server address 'https://exa mple.com' of cluster 'cy' in kubeconfig "
            "{clusters} is not usable",
        ),
        ({"cluster": {"server": ""}}, "kubeconfig {clusters} names no server address"),
        (
            {"cluster": {"proxy-url": "ftp://proxy.corp"}},
            "the kubeconfig cluster in {clusters} has a proxy-url kubectl would refuse",
        ),
        (
            {"user": {"token": "t", "username": "u"}},
            "the kubeconfig user 'uy' in {users} has more than one login method",
        ),
        (
            {"context": {"cluster": "absent"}},
            "kubeconfig {contexts} is not usable: the context's cluster 'absent' is not defined",
        ),
        (
            {"context": {"namespace": ".."}},
            "fix the namespace in kubeconfig {contexts}, or pass one with -n",
        ),
        (
            {"current": "ghost"},
            "kubeconfig {contexts} is not usable: its current context 'ghost' is not defined",
        ),
    ],
    ids=["server", "no-server", "proxy", "login", "context-cluster", "namespace", "current"],
)
def test_a_problem_in_a_merged_kubeconfig_names_the_file_of_its_entry(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    entries: dict[str, dict[str, object]],
    expected: str,
) -> None:
    entries = dict(entries)  # the parameter is shared by every run of the test in a process
    current = str(entries.pop("current", {}) or "y")
    files = _four_files(tmp_path, monkeypatch, current=current, **entries)
    with pytest.raises(ConnectionSetupError) as caught:
        resolve(ConnectionSettings())
    named = dict(zip(("other", "contexts", "clusters", "users"), files, strict=True))
    assert expected.format(**named) in caught.value.line()


def test_what_no_entry_holds_names_every_merged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = ", ".join(map(str, _four_files(tmp_path, monkeypatch)))
    with pytest.raises(UsageError) as caught:
        resolve(ConnectionSettings(context="nope"))
    assert caught.value.line() == (
        f"context 'nope' is not in the kubeconfig merged from {files}: it has x, y. "
        "pass one of those with --context"
    )
