"""Finding and loading connection settings with kubectl's precedence and validation rules.

Follows client-go's `tools/clientcmd` (loader.go, client_config.go, validation.go): each file is
read as `kubeconfig_file` says; KUBECONFIG files merge with the first definition of a name
winning; relative paths resolve against the folder of the file that defined the entry
(`ResolveLocalPaths`); a context's missing user is an anonymous one, a missing cluster is an
error.
"""

import ipaddress
import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote_to_bytes, urlsplit

from msgspec import Struct

from truegreen.cluster.credentials import (
    Credential,
    CredentialError,
    CredentialSource,
    StaticCredentials,
    TokenFileCredentials,
    basic_authorization,
)
from truegreen.cluster.impersonation import Impersonation, impersonation
from truegreen.cluster.kubeconfig_file import (
    SECTIONS,
    decode_base64,
    load_kubeconfig,
    read_small_file,
)
from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import ConnectionSetupError, TruegreenError, UsageError
from truegreen.http.gourl import (
    CONTROL_FAULT,
    authority_fault,
    has_control_character,
    url_fault,
)
from truegreen.http.proxy import Proxy, ProxyUrlError, parse_proxy_url, proxy_from_environment
from truegreen.http.tls import ENCRYPTED_KEY_REASON, ClientCertificate, TlsSettings
from truegreen.patterns import LazyPattern
from truegreen.redacted import REDACTED

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
"""Where Kubernetes mounts a pod's service account (token, ca.crt, namespace)."""


class ResolvedConnection(Struct, frozen=True):
    """A usable connection: where, how to trust it, who we are, and the namespace to work in."""

    server: str
    namespace: str
    source: str
    """Where the settings came from, for messages: the kubeconfig file that defines the
    context's cluster (where `kubectl config set-cluster` writes it back: client-go's loader
    records each entry's own file as its LocationOfOrigin), or "in-cluster"."""
    tls: TlsSettings
    credentials: CredentialSource
    unverified_because: str | None = None
    """Why the server's certificate is not verified (the flag, or the kubeconfig's setting);
    None when it is."""
    proxy: Proxy | None = None
    """The proxy every request goes through (`proxy-url`, or `HTTPS_PROXY` and its kin);
    None to connect directly."""
    impersonation: Impersonation | None = None
    """Whom every request acts as (`as` and its kin, `--as` and its kin); None: itself."""
    compressed_lists: bool = False
    """Whether list pages are asked for gzip-encoded: only where it pays (`_worth_compressing`)."""
    cluster_name: str = ""
    """The kubeconfig's name for the context's cluster (`contexts[].context.cluster`); "" in
    a pod, where client-go's InClusterConfig knows no name."""
    login_source: str = ""
    """Where the login comes from, for messages about it: the kubeconfig file that defines
    the context's user (the context's own file when it names no defined user); "" where that
    is `source` (in a pod)."""


class _Entry(Struct, frozen=True):
    """One named clusters/users/contexts entry and the file that defined it (client-go's
    LocationOfOrigin), named in messages about the entry."""

    settings: Mapping[str, Any]
    file: Path

    @property
    def folder(self) -> Path:
        """The folder its relative paths resolve against (client-go `ResolveLocalPaths`)."""
        return self.file.absolute().parent

    @property
    def named(self) -> str:
        """The entry's file, as messages name it."""
        return f"kubeconfig {self.file}"


class _Current(Struct, frozen=True):
    """The merged kubeconfig's current context, and the file that set it."""

    name: str
    file: Path

    @property
    def named(self) -> str:
        """The file that set it, as messages name it."""
        return f"kubeconfig {self.file}"


def _check_named(kubeconfig: Path | None) -> None:
    """A --kubeconfig that does not exist is bad usage (64), as every other path named on the
    command line is; one that exists but cannot be used is a connection that could not be set
    up (3)."""
    if kubeconfig is not None and not (kubeconfig.exists() or kubeconfig.is_symlink()):
        raise UsageError(
            f"kubeconfig {kubeconfig} does not exist",
            todo="check the path, or pass another with --kubeconfig",
        )


def resolve(
    settings: ConnectionSettings, *, service_account: Path = SERVICE_ACCOUNT
) -> ResolvedConnection:
    """Resolve the settings to one cluster, user and namespace; ConnectionSetupError if unusable."""
    _check_named(settings.kubeconfig)
    paths = _kubeconfig_paths(settings.kubeconfig)
    if not paths:
        return _in_cluster(settings, service_account)
    merged, current = _merge([(path, load_kubeconfig(path)) for path in paths])
    context = _context(settings.context, merged["contexts"], current, _every_file(paths))
    cluster_name = context.settings.get("cluster") or ""
    if cluster_name not in merged["clusters"]:
        raise _unusable(context.named, f"the context's cluster {cluster_name!r} is not defined")
    cluster = merged["clusters"][cluster_name]
    source = str(cluster.file)
    server = cluster.settings.get("server")
    if not server:
        raise ConnectionSetupError(
            f"{cluster.named} names no server address for this context",
            todo="check the file's clusters section",
        )
    server = _usable_address(server, cluster_name, cluster)
    proxy = _proxy(cluster, server)
    tls, unverified = _cluster_tls(cluster, settings.insecure_skip_tls_verify)
    user_name = context.settings.get("user") or ""
    # A user the context names but no file defines is an anonymous login (client_config.go
    # getAuthInfo): the context's file is where it is named.
    user = merged["users"].get(user_name, _Entry({}, context.file))
    namespace = _namespace(settings.namespace, context.settings.get("namespace"), context.named)
    # client-go impersonates whatever the scheme (client_config.go sets Impersonate before it
    # reads any credential).
    acting = impersonation(user_name, user.settings, settings.act_as)
    compressed = _worth_compressing(cluster, server)
    if _scheme(server) != "https":
        # client-go reads the user's credentials and the server's TLS settings only for an
        # https server (`client_config.go`, IsConfigTransportTLS): nothing is sent over http.
        anonymous = StaticCredentials(Credential(), "no login (the server address is plain http)")
        credentials: CredentialSource = anonymous
        unverified = None
    else:
        credentials = _user_credentials(user_name, user, cluster)
    return ResolvedConnection(
        server,
        namespace,
        source,
        tls,
        credentials,
        unverified,
        proxy,
        acting,
        compressed,
        cluster_name,
        str(user.file),
    )


def _context(
    flag: str | None, contexts: Mapping[str, _Entry], current: _Current | None, every: str
) -> _Entry:
    """The context `--context` names, else the current one; `every` names the merged files
    for what no one entry holds."""
    known = ", ".join(sorted(contexts)) or "no contexts"
    if flag is not None and flag not in contexts:
        # A --context the kubeconfig lacks is a wrong flag: bad usage (64), not "could not
        # check" (kubectl says "context was not found for specified context" and exits 1).
        raise UsageError(
            f"context {flag!r} is not in {every}",
            f"it has {known}",
            "pass one of those with --context",
        )
    if flag:
        return contexts[flag]
    if current is None:
        raise ConnectionSetupError(
            f"{every} names no current context", f"it has {known}", "pass one with --context"
        )
    if current.name not in contexts:
        raise _unusable(current.named, f"its current context {current.name!r} is not defined")
    return contexts[current.name]


def _usable_address(server: str, cluster_name: str, cluster: _Entry) -> str:
    """The server's URL (`_server_url`), or ConnectionSetupError where kubectl refuses it
    before any request (`error: host must be a URL or a host:port pair`: client-go
    rest/url_utils.go DefaultServerURL). The address is quoted without its user part, and the
    reason only where it quotes none of it."""
    address = _server_url(server)
    netloc = "" if address is None else urlsplit(address).netloc
    fault = _written_fault(server) or ("" if address is None else authority_fault(netloc))
    # The reason quotes the host, which is the user part's own text where a `/`, `?` or `#`
    # in a password ended the authority before its `@` (`https://u:p/w@host`: port "p").
    quotable = netloc.count("@") == server.count("@")
    if address is not None and not fault:
        undialled = _escape_fault(address) or _dial_fault(address, quotable=quotable)
        if not undialled:
            return address
        why = undialled
    else:
        shown = fault if fault and quotable else ""
        why = "host must be a URL or a host:port pair" + (f" ({shown})" if shown else "")
    raise ConnectionSetupError(
        f"the server address {_without_user_part(server)!r} of cluster {cluster_name!r} in "
        f"{cluster.named} is not usable",
        why,
        "correct the server address in the file's clusters section",
    )


def _escape_fault(address: str) -> str:
    """Why Go's url.Parse refuses `address` for its path or fragment ("" where it does not):
    a `%` that two hex digits do not follow (net/url `unescape`: `invalid URL escape "%zz"`),
    which kubectl says before any request. Python's urlsplit keeps it, and requests would send
    it escaped again (`%25zz`) to a path the cluster does not serve."""
    fault = url_fault(address)
    return f'its path holds a "%" that begins no escape (kubectl says: {fault})' if fault else ""


_HIGHEST_PORT = 65535


def _dial_fault(address: str, *, quotable: bool) -> str:
    """Why Go stops a request to `address`, which its url.Parse accepts, before anything is
    dialled ("" when it does not), checked in Go's order, with kubectl's words: a scheme other
    than http and https (net/http transport.go `(*Transport).roundTrip`: `unsupported protocol
    scheme`), then a port above 65535 (url.Parse takes any digits; net lookup.go
    `(*Resolver).LookupPort` refuses the number: `dial tcp: address 99999: invalid port`).
    The port is quoted only where it is `quotable` (not a password's text)."""
    parts = urlsplit(address)
    scheme = parts.scheme.lower()  # Go's url.Parse lowers it too
    if scheme not in ("http", "https"):
        return (
            "kubectl reaches a cluster only at an http:// or https:// address "
            f'(it says: unsupported protocol scheme "{scheme}")'
        )
    host = parts.netloc.rpartition("@")[2]
    after_host = host[host.rfind("]") + 1 :] if host.startswith("[") else host
    port = after_host.rpartition(":")[2] if ":" in after_host else ""
    # All digits (`authority_fault` saw to that), leading zeros allowed, as Go allows them; one
    # too long for int() is above the highest anyway.
    number = port.lstrip("0")
    if len(number) <= len(str(_HIGHEST_PORT)) and int(number or "0") <= _HIGHEST_PORT:
        return ""
    said = f"dial tcp: address {port}: invalid port" if quotable else "invalid port"
    return f"its port is above {_HIGHEST_PORT}, the highest there is (kubectl says: {said})"


def api_base(server: str) -> str:
    """The start of every request URL to `server` (a URL `resolve` accepted), as client-go
    builds it: scheme, authority and the address's path, without its query and fragment
    (rest/client.go `NewRESTClient` clears both; rest/request.go `(*Request).URL()` copies
    the base and sets Path and RawQuery of its own). The path is joined as `path.Join` joins
    it (dot segments and repeated slashes cleaned away) on Go's decoded path, then escaped as
    Go escapes a path (net/url `EscapedPath`), without the slash it ends in: a request's own
    path follows. `https://h:6443/?x=1` is `https://h:6443`, never `…?x=1/api`."""
    parts = urlsplit(server)  # its scheme lowered, as Go's url.Parse lowers it
    # Bytes, as Go's are: an escape that is no UTF-8 (`%FF`) is sent as written. normpath
    # keeps two leading slashes (POSIX lets them mean something); Go's path.Clean does not.
    cleaned = posixpath.normpath(b"/" + unquote_to_bytes(parts.path).lstrip(b"/"))
    prefix = "" if cleaned == b"/" else quote(cleaned, safe="/$&+,:;=@")
    return f"{parts.scheme}://{parts.netloc}{prefix}"


_SCHEME_PREFIX = LazyPattern(r"[A-Za-z][A-Za-z0-9+.\-]*://")
"""A URL's scheme and `://`, which the user part follows (RFC 3986 3.1)."""


def _without_user_part(server: str) -> str:
    """`server` with its user part shown `<redacted>`, as LiveCluster.server shows it, by
    shape alone: the address may parse as no URL at all (`https://u:p@[::1`, a space in the
    host or the password). Everything between the scheme (or the start, without one) and the
    last `@` may be a password, so all of it is hidden."""
    at = server.rfind("@")
    scheme = _SCHEME_PREFIX.match(server)
    start = scheme.end() if scheme is not None and scheme.end() <= at else 0
    if at <= start:
        return server
    return f"{server[:start]}{REDACTED}{server[at:]}"


def _server_url(server: str) -> str | None:
    """The server's URL as kubectl makes it: a URL with a scheme and a host as written; else
    `host`, `host:port` or `host:port/` under http://; None for anything else (`https://[::1`,
    `host:6443/path`: client-go rest/url_utils.go DefaultServerURL).

    DefaultServerURL would choose https:// for a config holding a certificate authority, but
    clientcmd (client_config.go ClientConfig) asks IsConfigTransportTLS before it copies the
    cluster's TLS settings and the user's login into the config, so it never does: kubectl
    reaches `server: 10.0.0.1:6443` over plain http, with no login, whatever the file says."""
    try:
        parts = urlsplit(server)
        if parts.scheme and parts.netloc and parts.hostname:
            return server
        parts = urlsplit(f"http://{server}")
        parts.port  # noqa: B018 -- raises ValueError for a port that is no number
        usable = bool(parts.hostname) and parts.path in ("", "/")
    except ValueError:
        return None
    return f"http://{server}" if usable else None


def _written_fault(server: str) -> str:
    """Why Go refuses the address as written before its host is looked at ("" when it does
    not): a control character anywhere (net/url `stringContainsCTLByte`; a tab or a line break
    from a YAML block), or a space in front, which leaves no scheme, so that the host Go reads
    starts with it (client-go DefaultServerURL parses the address again after `https://`).
    Python's urlsplit drops both silently."""
    if has_control_character(server):
        return CONTROL_FAULT
    if server.startswith(" "):
        return 'invalid character " " in host name'
    return ""


def _worth_compressing(cluster: _Entry, server: str) -> bool:
    """Whether to ask for gzip-encoded list pages: unless the cluster says
    `disable-compression` (client_config.go DisableCompression), and but for a server on this
    machine, where the bytes cost nothing to move and compressing them costs both ends time
    (docs/performance.md, *Compressed lists*)."""
    if cluster.settings.get("disable-compression"):
        return False
    try:
        host = urlsplit(server).hostname or ""
    except ValueError:
        return False  # the request itself reports the unusable address
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # a name: the server is elsewhere


def _namespace(flag: str | None, written: str | None, where: str) -> str:
    """`-n`, else the context's namespace, else `default`; refused as client-go refuses a
    namespace that cannot be one segment of a request's path (rest/request.go Namespace,
    IsValidPathSegmentName): `..` would list every namespace's objects instead."""
    namespace = flag or written or "default"
    refusal = _path_segment_problem(namespace)
    if refusal is None:
        return namespace
    error: type[TruegreenError] = UsageError if flag else ConnectionSetupError
    raise error(
        f"the namespace {namespace!r} cannot be used",
        refusal,
        "pass another with -n" if flag else f"fix the namespace in {where}, or pass one with -n",
    )


def _path_segment_problem(name: str) -> str | None:
    """client-go's IsValidPathSegmentName, in its words."""
    if name in (".", ".."):
        return f"it may not be {name!r}"
    found = [part for part in ("/", "%") if part in name]
    return f"it may not contain {' or '.join(map(repr, found))}" if found else None


def _scheme(server: str) -> str:
    try:
        return urlsplit(server).scheme.lower()
    except ValueError:
        return ""


def _proxy(cluster: _Entry, server: str) -> Proxy | None:
    """The cluster's `proxy-url`, else the proxy the environment names for this server, as
    client-go picks them (`client_config.go`: http.ProxyURL, else ProxyFromEnvironment)."""
    written = cluster.settings.get("proxy-url")
    if written:
        try:
            return parse_proxy_url(str(written))
        except ProxyUrlError as error:
            raise ConnectionSetupError(
                f"the kubeconfig cluster in {cluster.file} has a proxy-url kubectl would refuse",
                str(error),
                "fix or remove proxy-url in the kubeconfig",
            ) from None
    return _environment_proxy(server)


def _environment_proxy(server: str) -> Proxy | None:
    """The proxy `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` name for `server` (Go's rules)."""
    scheme = _scheme(server)
    try:
        parts = urlsplit(server)
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return None  # the request itself reports the unusable address
    try:
        return proxy_from_environment(os.environ, scheme, parts.hostname or "", port)
    except ProxyUrlError as error:
        raise ConnectionSetupError(
            f"{scheme.upper()}_PROXY (or {scheme}_proxy) names a proxy kubectl cannot use",
            str(error),
            "fix or unset it",
        ) from None


def _unusable(where: str, why: str) -> ConnectionSetupError:
    """`where` (a kubeconfig, as `_Entry.named` names it) cannot be used, and why."""
    return ConnectionSetupError(
        f"{where} is not usable",
        why,
        "check the file, or pass another with --kubeconfig",
    )


def _text(value: str | None) -> str | None:
    """A text field's value; None when it is empty or absent (Go's zero value)."""
    return value or None


def context_names(kubeconfig: Path | None) -> tuple[str, str, tuple[str, ...]]:
    """The merged kubeconfig's files (`kubeconfig PATH`, as messages name them), current
    context ("" for none) and every context name, sorted (as `kubectl config get-contexts`
    lists them); UsageError without a kubeconfig (the in-cluster account has no contexts)."""
    _check_named(kubeconfig)
    paths = _kubeconfig_paths(kubeconfig)
    if not paths:
        raise UsageError(
            "no kubeconfig to take contexts from",
            "the in-cluster account has none",
            "pass --kubeconfig",
        )
    merged, current = _merge([(path, load_kubeconfig(path)) for path in paths])
    name = current.name if current is not None else ""
    return _every_file(paths), name, tuple(sorted(merged["contexts"]))


def _kubeconfig_paths(explicit: Path | None) -> list[Path]:
    """The kubeconfig files to merge, in kubectl's precedence order."""
    if explicit is not None:
        return [explicit]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        listed = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
        existing = [p for p in listed if p.exists()]
        if existing:
            return existing
        raise ConnectionSetupError(
            "KUBECONFIG names no existing file",
            f"it is {env!r}",
            "fix KUBECONFIG or pass --kubeconfig",
        )
    default = Path.home() / ".kube" / "config"
    return [default] if default.exists() else []


def _merge(
    files: list[tuple[Path, Mapping[str, Any]]],
) -> tuple[dict[str, dict[str, _Entry]], _Current | None]:
    """Merge kubeconfig files as kubectl does: the first file to define a name wins, and so
    does the first current-context. Each entry keeps its own file; an entry without a name or
    settings has the empty ones, as Go decodes it."""
    merged: dict[str, dict[str, _Entry]] = {section: {} for section in SECTIONS}
    current: _Current | None = None
    for path, content in files:
        for section in SECTIONS:
            for entry in content.get(section) or ():
                name = (entry or {}).get("name") or ""
                settings = (entry or {}).get(section[:-1]) or {}
                merged[section].setdefault(name, _Entry(settings, path))
        written = content.get("current-context")
        if current is None and written:
            current = _Current(written, path)
    return merged, current


def _every_file(paths: list[Path]) -> str:
    """The kubeconfig files merged, as messages name them where no one entry is meant."""
    if len(paths) == 1:
        return f"kubeconfig {paths[0]}"
    return f"the kubeconfig merged from {', '.join(map(str, paths))}"


def _path(entry: _Entry, key: str) -> Path | None:
    """A path setting of `entry`, relative ones resolved against its own file's folder."""
    value = _text(entry.settings.get(key))
    return None if value is None else entry.folder / value


def _pem(entry: _Entry, key: str, what: str, where: str) -> bytes | None:
    """`key` (a file) or `key`-data (base64), never both, as kubectl requires."""
    data, path = entry.settings.get(f"{key}-data"), _path(entry, key)
    if data and path is not None:
        raise ConnectionSetupError(
            f"{where} sets both {key} and {key}-data",
            todo=f"keep one of them in the kubeconfig ({what})",
        )
    if data:
        return decode_base64(data)  # checked when the file was read
    if path is not None:
        return read_small_file(path, what, f"fix {key} in kubeconfig {entry.file}")
    return None


def _cluster_tls(cluster: _Entry, skip_flag: bool) -> tuple[TlsSettings, str | None]:
    settings = cluster.settings
    where = f"the kubeconfig cluster in {cluster.file}"
    server_name = _text(settings.get("tls-server-name"))
    if skip_flag:
        # kubectl: the flag without a CA of its own clears the file's CA (client_config.go).
        return TlsSettings(verify=False, server_name=server_name), "--insecure-skip-tls-verify"
    ca = _pem(cluster, "certificate-authority", "certificate authority", where)
    if settings.get("insecure-skip-tls-verify") is True:
        if ca is not None:
            raise ConnectionSetupError(
                f"{where} both names a certificate authority and skips verification",
                "kubectl refuses that combination too",
                "remove insecure-skip-tls-verify or the certificate authority",
            )
        return (
            TlsSettings(verify=False, server_name=server_name),
            f"insecure-skip-tls-verify in {cluster.file}",
        )
    if ca is not None and b"-----BEGIN CERTIFICATE-----" not in ca:
        raise ConnectionSetupError(
            f"{where}: the certificate authority is not a PEM certificate",
            todo="fix certificate-authority or certificate-authority-data",
        )
    return TlsSettings(ca_pem=ca, server_name=server_name), None


def _user_credentials(name: str, user: _Entry, cluster: _Entry) -> CredentialSource:
    settings = user.settings
    where = f"the kubeconfig user {name!r}"
    token, token_file = _text(settings.get("token")), _path(user, "tokenFile")
    username, password = _text(settings.get("username")), _text(settings.get("password"))
    if (token or token_file) and (username or password):
        raise ConnectionSetupError(
            f"{where} in {user.file} has more than one login method",
            "a token and a username/password",
            "keep one of them, as kubectl requires",
        )
    certificate = _client_certificate(user, where)
    # A null section is a nil pointer to client-go (api/v1 types.go), so no plugin at all.
    provider = settings.get("auth-provider") is not None
    if settings.get("exec") is not None or provider:
        from truegreen.cluster.auth_plugins import plugin_credentials

        # Checked like kubectl checks it even when it will not run (validation.go).
        plugin = plugin_credentials(
            name, settings, base_dir=user.folder, cluster=_cluster_for_plugin(cluster)
        )
        # A token or login written beside a plugin wins: kubectl's exec authenticator stands
        # aside for them and for a client certificate (exec.go UpdateTransportConfig), and the
        # bearer and basic wrappers run before an auth-provider's (round_trippers.go). A
        # password without a username is no login (transport/config.go HasBasicAuth).
        written = token or token_file or username
        if not written and (certificate is None or provider):
            return plugin
    elif password and not username and certificate is None:
        # clientcmd finds no login here (client_config.go canIdentifyUser) and kubectl asks
        # for a username on the terminal; truegreen asks nothing.
        raise ConnectionSetupError(
            f"{where} in {user.file} has a password but no username",
            "kubectl sends no login without one (it asks for the username on a terminal)",
            "add the username to the kubeconfig, or remove the password",
        )
    if token_file is not None:
        return TokenFileCredentials(
            token_file,
            f"the token file of user {name!r}",
            certificate=certificate,
            fallback=token,
        )
    authorization = (
        f"Bearer {token}"
        if token
        else basic_authorization(username, password or "")
        if username
        else None
    )
    return StaticCredentials(Credential(authorization, certificate), f"user {name!r}")


def _cluster_for_plugin(cluster: _Entry) -> Mapping[str, Any]:
    """The cluster settings handed to a plugin, its certificate authority's path resolved
    against the cluster's OWN file (which may not be the user's), as client-go's loader does."""
    ca = _path(cluster, "certificate-authority")
    if ca is None:
        return cluster.settings
    return {**cluster.settings, "certificate-authority": str(ca)}


def _client_certificate(user: _Entry, where: str) -> ClientCertificate | None:
    cert = _pem(user, "client-certificate", "client certificate", where)
    if cert is None:
        # client-go reads the key only beside a certificate (client_config.go
        # getUserIdentificationPartialConfig, validation.go validateAuthInfo)
        return None
    key = _pem(user, "client-key", "client key", where)
    if key is None:
        raise ConnectionSetupError(
            f"{where} has a client certificate but no key",
            todo="add client-key or client-key-data to the kubeconfig",
        )
    certificate = ClientCertificate(cert, key)
    if certificate.key_is_encrypted:
        # Refused here, before any request: kubectl stops as soon as it builds its transport.
        raise ConnectionSetupError(
            f"{where} has a client key protected by a passphrase",
            f"kubectl cannot use it either ({ENCRYPTED_KEY_REASON})",
            "name a key without a passphrase in client-key or client-key-data "
            "(`openssl pkey -in KEY -out PLAIN_KEY` writes one)",
        )
    _refuse_unusable(certificate, user, where)
    return certificate


def _refuse_unusable(certificate: ClientCertificate, user: _Entry, where: str) -> None:
    """A pair Go's crypto/tls `X509KeyPair` refuses, refused here before any request, naming
    the file (or the kubeconfig's field) as client-go's clientcmd validation.go
    `validateAuthInfo` names a file it cannot open ("unable to read client-cert %v for %v"):
    from -data fields kubectl stops with Go's reason (transport.go `TLSConfigFor`), from files
    it logs it and goes on without a certificate (transport/cert_rotation.go), which a server
    that wants one refuses. What the files hold is never said."""
    from truegreen.http.tlsstream import client_certificate_problem  # a certificate is rare

    problem = client_certificate_problem(certificate)
    if problem is None:
        return
    cert, key = (_source(user, field) for field in ("client-certificate", "client-key"))
    if problem.part == "pair":
        raise ConnectionSetupError(
            f"the client key {key} of {where} is not the key of its client certificate {cert}",
            f"kubectl cannot use them either ({problem.reason})",
            "name the key the certificate was made with in client-key or client-key-data",
        )
    if problem.part == "certificate":
        what, named, field, kind = "client certificate", cert, "client-certificate", "certificate"
    else:
        what, named, field, kind = "client key", key, "client-key", "private key"
    raise ConnectionSetupError(
        f"cannot use the {what} {named} of {where}",
        f"kubectl cannot use it either ({problem.reason})",
        f"name a PEM {kind} in {field} or {field}-data",
    )


def _source(user: _Entry, field: str) -> str:
    """Where the user's `field` came from: its file, else its -data field in the kubeconfig."""
    path = _path(user, field)
    return str(path) if path is not None else f"{field}-data in {user.file}"


def _in_cluster(settings: ConnectionSettings, account: Path) -> ResolvedConnection:
    """The pod's own service account, as client-go's InClusterConfig reads it."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ConnectionSetupError(
            "no cluster is configured",
            "there is no ~/.kube/config, KUBECONFIG is unset, and this is not running in a cluster",
            "pass --kubeconfig or set KUBECONFIG",
        )
    fix = "check the pod's service account mount"
    try:
        credentials = TokenFileCredentials(account / "token", "this pod's service account")
    except CredentialError as error:
        raise ConnectionSetupError(
            "cannot use this pod's service account", error.why, fix
        ) from None
    ca_path = account / "ca.crt"
    ca = (
        read_small_file(ca_path, "service account certificate authority", fix)
        if ca_path.exists()
        else None
    )
    if settings.insecure_skip_tls_verify:
        tls, unverified = TlsSettings(verify=False), "--insecure-skip-tls-verify"
    else:
        tls, unverified = TlsSettings(ca_pem=ca), None
    namespace = _namespace(
        settings.namespace,
        os.environ.get("POD_NAMESPACE") or _namespace_in(account / "namespace"),
        "POD_NAMESPACE or the service account's namespace file",
    )
    bracketed = f"[{host}]" if ":" in host else host
    server = f"https://{bracketed}:{port}"
    # client-go's InClusterConfig sets no proxy, so its transport reads the environment's
    proxy = _environment_proxy(server)
    # kubectl drops in-cluster settings altogether once --as is given (kubernetes#93474) and
    # dials localhost:8080; here the pod's own account acts as the identity asked for.
    acting = impersonation("", {}, settings.act_as)
    # Lists are not asked for compressed: a pod reaches its API server over the cluster's own
    # network, where compressing costs the server more time than moving the bytes does.
    return ResolvedConnection(
        server, namespace, "in-cluster", tls, credentials, unverified, proxy, acting
    )


def _namespace_in(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None
