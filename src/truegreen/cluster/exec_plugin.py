"""A kubeconfig `exec` credential plugin, run as client-go runs it.

Ground truth: kubernetes/client-go `plugin/pkg/client/auth/exec/exec.go` (request, environment,
interactive mode, answer checks, re-run on expiry and after a 401), `pkg/apis/
clientauthentication/{v1,v1beta1}/types.go` (ExecCredential), `tools/clientcmd/validation.go`
(what a kubeconfig's exec entry must hold), `tools/clientcmd/api/v1/defaults.go` (v1beta1 means
interactiveMode IfAvailable), `tools/clientcmd/loader.go` (`GetAuthInfoFileReferences`: a command
with a slash is relative to the kubeconfig's folder), `rest/exec.go` (`ConfigToExecCluster`).

Where truegreen differs, on purpose: the plugin gets 60 seconds, and never more than what is left
of the run's time limit (client-go waits forever); a plugin stopped for time is named as the one
that did not answer, with its command line to run by hand (arguments that look secret
redacted, its env never shown); its answer is capped at 1 MiB; the first line of its error
output is quoted in the failure line (bounded, escaped, redacted) rather than only passed
through; a command given as a path that does not exist is reported with the install hint too
(client-go shows the hint only for a bare name not found on PATH); an env name starting with
`=`, which Go hands over as it is, is refused (Python's subprocess cannot hand it over).
"""

import base64
import binascii
import json
import os
import re
import shlex
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from msgspec import Struct

from truegreen.cluster.credentials import Credential, CredentialError, PluginNoAnswerError
from truegreen.cluster.kubeconfig_file import decode_base64, openable
from truegreen.cluster.plugin_process import Ending, PluginRun, one_line, run_plugin
from truegreen.cluster.redact import redact_arguments
from truegreen.errors import ConnectionSetupError
from truegreen.http.deadline import Deadline
from truegreen.http.tls import ENCRYPTED_KEY_REASON, ClientCertificate
from truegreen.redacted import REDACTED
from truegreen.redaction.text import redact_text
from truegreen.textsafe import terminal_safe

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"
EXEC_INFO_ENV = "KUBERNETES_EXEC_INFO"
CLUSTER_EXTENSION = "client.authentication.k8s.io/exec"
PLUGIN_TIMEOUT_SECONDS = 60.0
"""Generous: a plugin may open a browser or wait for a second factor; it must not hang us."""
STDOUT_CAP = 1024 * 1024
"""A token or a certificate chain with its key is a few KiB; 1 MiB is far beyond any real one."""
STDERR_CAP = 2048
"""The first bytes of the plugin's complaint kept; the failure line quotes its first line."""
SAID_LIMIT = 200
"""Characters of that first line quoted."""

# Go's time.RFC3339 layout as metav1.Time parses it; Python 3.11 reads every such text
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", re.ASCII)
_NOT_A_TIME = "answered an expirationTimestamp that is not an RFC 3339 time"
# What a plugin's complaint may hold beyond the shapes redact_text finds (a JWT standing alone
# is one of those: redaction/credential_shapes.py): the token it failed with, after an auth
# scheme (`Bearer <token68>`, RFC 7235) or a secret word (`refresh token ya29…`, `password
# hunter2`). A sentence's full stop ends an unquoted value. A quoted one (`password "…"`, as
# Go's %q writes a value, `'…'`, or in backquotes) runs to its closing quote, a backslash
# escaping one, or to the line's end when it is never closed, as rule 6's quoted values do
# (redaction/text.py `_VALUE`); an empty one (`token ""`) stays. The Go error texts rule 6
# keeps (text.py `_ERROR_CHAIN`) put no quote right after such a word and a blank: a URL's
# last step ends before its quote (`Post "https://…/token": dial tcp`), a step's words follow
# `: ` (`token: unexpected status …`). The trade-off: a quoted name after the word goes too
# (`Secret "db-login" is invalid`, as apimachinery's NewInvalid names an object): no quoted
# value can be told from a name.
_TOKEN68 = r"[A-Za-z0-9._~+/-]*[A-Za-z0-9_~+/-]=*"
_LOGIN_WORD_AND_VALUE = re.compile(
    r"(?i)(?<![a-z0-9])(?P<word>bearer|basic|negotiate|token|password|passwd|secret)"
    r"(?P<blank>[ \t]+)(?P<q>[\"'`])?"
    rf"(?P<value>(?(q)(?:\\.|(?!(?P=q))[^\\\r\n])++|{_TOKEN68}))"
)
# The plugin's own words after such a word (`token expired`, `Basic realm=…`) are not a secret.
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*(?:-[a-z]+)*")
# Go's encoding/json escapes these inside strings; byte-identical requests keep plugins that
# compare KUBERNETES_EXEC_INFO (or log it) seeing what kubectl would send.
_GO_JSON_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


class InteractiveMode(Enum):
    """`interactiveMode`: whether the plugin may use standard input."""

    NEVER = "Never"
    IF_AVAILABLE = "IfAvailable"
    ALWAYS = "Always"


class ExecCluster(Struct, frozen=True):
    """The cluster as `provideClusterInfo` hands it to the plugin (client-go `Cluster`)."""

    server: str
    tls_server_name: str = ""
    insecure_skip_tls_verify: bool = False
    certificate_authority_data: bytes = b""
    proxy_url: str = ""
    disable_compression: bool = False
    config_json: str | None = None
    """The cluster's `client.authentication.k8s.io/exec` extension, already encoded as JSON."""


class ExecPlugin(Struct, frozen=True):
    """One kubeconfig user's exec entry, checked as kubectl checks it. `repr` hides `env`."""

    user_name: str
    command: str
    """As written in the kubeconfig after path resolution; named in messages."""
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    api_version: str
    interactive_mode: InteractiveMode
    install_hint: str
    cluster: ExecCluster | None
    """Set only with `provideClusterInfo: true`."""

    @property
    def shown(self) -> str:
        """The command as messages show it: one line, control characters escaped."""
        return one_line(self.command, limit=200)

    @property
    def command_line(self) -> str:
        """The command and its arguments as a shell takes them, to run by hand: an argument
        that looks secret (`--client-secret VALUE`, `token=VALUE`) is redacted, and the env,
        which often holds a key, is left out."""
        return one_line(shlex.join([self.command, *redact_arguments(self.args)]), limit=300)

    def __repr__(self) -> str:
        return f"ExecPlugin({self.user_name!r}, {self.command!r}, {self.api_version})"


def parse_exec(
    user_name: str, entry: Mapping[str, Any], *, base_dir: Path, cluster: Mapping[str, Any]
) -> ExecPlugin:
    """The user's `exec` entry, validated as `tools/clientcmd/validation.go` validates it.

    Raises ConnectionSetupError with kubectl's reason when the entry cannot be used.
    """

    def unusable(why: str) -> ConnectionSetupError:
        return ConnectionSetupError(
            f"the kubeconfig user {user_name!r} cannot log in",
            why,
            "fix its exec section in the kubeconfig",
        )

    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise unusable("command must be specified to use exec authentication plugin")
    api_version = entry.get("apiVersion")
    if not isinstance(api_version, str) or not api_version:
        raise unusable("apiVersion must be specified to use exec authentication plugin")
    if api_version not in (V1, V1BETA1):
        raise unusable(
            f'exec plugin: invalid apiVersion "{one_line(api_version, limit=80)}"'
            f" (kubectl accepts {V1} and {V1BETA1})"
        )
    mode_text = entry.get("interactiveMode") or ("IfAvailable" if api_version == V1BETA1 else "")
    if not mode_text:
        raise unusable("interactiveMode must be specified to use exec authentication plugin")
    try:
        mode = InteractiveMode(mode_text)
    except ValueError:
        raise unusable(f'invalid interactiveMode "{one_line(str(mode_text), limit=40)}"') from None
    env: list[tuple[str, str]] = []
    for variable in entry.get("env") or []:
        name = variable.get("name") if isinstance(variable, Mapping) else None
        if not isinstance(name, str) or not name:
            raise unusable("env variable name must be specified to use exec authentication plugin")
        env.append((name, str(variable.get("value") or "")))
    args = entry.get("args") or []
    if not isinstance(args, list):
        raise unusable("its args are not a list")
    return ExecPlugin(
        user_name=user_name,
        command=_resolve_command(command, base_dir),
        args=tuple(str(arg) for arg in args),
        env=tuple(env),
        api_version=api_version,
        interactive_mode=mode,
        install_hint=str(entry.get("installHint") or ""),
        cluster=_exec_cluster(cluster, base_dir) if entry.get("provideClusterInfo") else None,
    )


def _resolve_command(command: str, base_dir: Path) -> str:
    # client-go resolves only commands with a slash against the kubeconfig's folder; bare names
    # are looked up on PATH when the plugin runs (`loader.go`, `GetAuthInfoFileReferences`).
    if "/" not in command:
        return command
    return os.path.normpath(base_dir / command)


def _exec_cluster(cluster: Mapping[str, Any], base_dir: Path) -> ExecCluster:
    """The cluster fields client-go's `ConfigToExecCluster` copies from the kubeconfig."""
    inner = cluster.get("cluster")
    if isinstance(inner, Mapping):
        cluster = inner  # a whole named entry was passed; its settings are inside
    return ExecCluster(
        server=str(cluster.get("server") or ""),
        tls_server_name=str(cluster.get("tls-server-name") or ""),
        insecure_skip_tls_verify=cluster.get("insecure-skip-tls-verify") is True,
        certificate_authority_data=_ca_data(cluster, base_dir),
        proxy_url=str(cluster.get("proxy-url") or ""),
        disable_compression=cluster.get("disable-compression") is True,
        config_json=_extension_json(cluster.get("extensions")),
    )


def _ca_data(cluster: Mapping[str, Any], base_dir: Path) -> bytes:
    data = cluster.get("certificate-authority-data")
    if data:
        try:
            return decode_base64(str(data))  # line breaks skipped, as Go skips them
        except (binascii.Error, ValueError):
            raise ConnectionSetupError(
                "the kubeconfig's certificate-authority-data is not base64",
                todo="fix the cluster's entry in the kubeconfig",
            ) from None
    path = cluster.get("certificate-authority")
    if not path:
        return b""
    try:
        return openable(base_dir / str(path)).read_bytes()
    except OSError as error:
        raise ConnectionSetupError(
            f"cannot read the certificate authority {terminal_safe(str(path))} for the exec plugin",
            error.strerror or type(error).__name__,
            "fix the cluster's certificate-authority in the kubeconfig",
        ) from None


def _extension_json(extensions: object) -> str | None:
    for extension in extensions if isinstance(extensions, list) else []:
        if isinstance(extension, Mapping) and extension.get("name") == CLUSTER_EXTENSION:
            # kubectl turns YAML into JSON through Go maps, whose keys encoding/json sorts
            return go_json(_sorted_keys(extension.get("extension")))
    return None


def _sorted_keys(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(key): _sorted_keys(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def go_json(value: object) -> str:
    """`value` encoded as Go's encoding/json encodes it: compact, HTML characters escaped."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).translate(_GO_JSON_ESCAPES)


def exec_request(plugin: ExecPlugin, *, interactive: bool) -> str:
    """The ExecCredential put in KUBERNETES_EXEC_INFO, byte for byte as kubectl encodes it."""
    spec: list[tuple[str, str]] = []
    if plugin.cluster is not None:
        spec.append(("cluster", _cluster_json(plugin.cluster)))
    spec.append(("interactive", go_json(interactive)))
    request = [
        ("kind", go_json("ExecCredential")),
        ("apiVersion", go_json(plugin.api_version)),
        ("spec", _object(spec)),
    ]
    return _object(request) + "\n"


def _object(fields: list[tuple[str, str]]) -> str:
    """A JSON object from (name, value already encoded) pairs, in the order given."""
    return "{" + ",".join(f"{go_json(name)}:{value}" for name, value in fields) + "}"


def _cluster_json(cluster: ExecCluster) -> str:
    # field order and omitempty follow clientauthentication/v1 `Cluster`
    fields = [("server", go_json(cluster.server))]
    if cluster.tls_server_name:
        fields.append(("tls-server-name", go_json(cluster.tls_server_name)))
    if cluster.insecure_skip_tls_verify:
        fields.append(("insecure-skip-tls-verify", "true"))
    if cluster.certificate_authority_data:
        encoded = base64.b64encode(cluster.certificate_authority_data).decode()
        fields.append(("certificate-authority-data", go_json(encoded)))
    if cluster.proxy_url:
        fields.append(("proxy-url", go_json(cluster.proxy_url)))
    if cluster.disable_compression:
        fields.append(("disable-compression", "true"))
    # `config` is a RawExtension, a struct: omitempty never drops it, and empty it is `null`
    fields.append(("config", cluster.config_json if cluster.config_json is not None else "null"))
    return _object(fields)


def look_path(command: str, search: str | None = None) -> str | None:
    """Where kubectl would run `command` from: the first PATH entry holding an executable of
    that name (an empty entry means the current folder), as Go's `exec.LookPath` searches.
    Found through a relative entry (`.`, empty, `bin`), it is refused as not found: since Go
    1.19 LookPath answers `ErrDot` there, and client-go's `wrapCmdRunErrorLocked` reports that
    `*exec.Error` as "executable … not found", so a plugin planted in the current folder is
    never run."""
    entries = (os.environ.get("PATH", "") if search is None else search).split(os.pathsep)
    for entry in entries:
        candidate = os.path.join(entry or ".", command)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate if os.path.isabs(candidate) else None
    return None


def plugin_environment(
    plugin: ExecPlugin, request: str, inherited: Mapping[str, str]
) -> dict[str, str]:
    """Our environment, then the entry's `env`, then KUBERNETES_EXEC_INFO; later names win.

    client-go writes each entry as the text `NAME=VALUE` (exec.go `newAuthenticator`), and Go's
    os/exec takes what precedes the first `=` as the variable's name (exec.go
    `dedupEnvCase`), so a name holding `=` (`A=B`, value `x`) reaches the plugin as `A=B=x`,
    its variable `A`: split the same way here, the plugin is handed the same bytes. A name
    starting with `=` cannot be handed over so and is refused first (`start_refusal`).
    """
    environment = dict(inherited)
    for name, value in plugin.env:
        variable, _, rest = f"{name}={value}".partition("=")
        environment[variable] = rest
    environment[EXEC_INFO_ENV] = request
    return environment


def start_refusal(plugin: ExecPlugin) -> str | None:
    """Why the plugin cannot be started as its exec section stands, else None.

    Go's os/exec refuses an env entry holding a NUL byte before starting anything (exec.go
    `Cmd.Start` → `dedupEnvCase`: "exec: environment variable contains NUL"), then a command or
    argument holding one (syscall `forkExec` → `SlicePtrFromStrings`: EINVAL, which os says
    as `fork/exec COMMAND: invalid argument`); client-go adds `exec: ` (exec.go
    `wrapCmdRunErrorLocked`). The same checks, in the same order, name the entry at fault; an
    argument is named by its place, never quoted (it may hold a secret). A bare command holding
    NUL is never reached here: no PATH entry holds it, so it is "not found", as in Go.
    A name starting with `=` is kubectl's to pass (Go keeps `=A=x` as a variable `=A`), but
    Python's subprocess refuses any name holding `=`, so it is refused here in plain words.
    """
    for name, value in plugin.env:
        if "\0" in name or "\0" in value:
            return (
                f"its env entry {one_line(name, limit=80)} holds a NUL byte, which no program"
                " can be handed (exec: environment variable contains NUL)"
            )
        if name.startswith("="):
            return (
                f"its env entry {one_line(name, limit=80)} starts with '=': kubectl hands such"
                " a name to the plugin as it is, truegreen cannot"
            )
    started = f"(fork/exec {plugin.shown}: invalid argument)"
    if "\0" in plugin.command:
        return f"its command holds a NUL byte, which no program can be started with {started}"
    for place, argument in enumerate(plugin.args, start=1):
        if "\0" in argument:
            return (
                f"its argument {place} holds a NUL byte, which no program can be started with"
                f" {started}"
            )
    return None


def parse_answer(plugin: ExecPlugin, stdout: bytes) -> Credential:
    """The credential in the plugin's answer, checked as client-go checks it.

    Raises CredentialError naming what is wrong; never quotes the answer, which may hold a
    secret.
    """

    def refused(why: str) -> CredentialError:
        return CredentialError(
            f"cannot log in as user {plugin.user_name!r}",
            f"its credential plugin {plugin.shown} {why}",
            "check the plugin, or run it by hand to see what it prints",
        )

    try:
        answer = json.loads(stdout)
    except (UnicodeDecodeError, ValueError):
        raise refused("did not answer with JSON") from None
    if not isinstance(answer, dict):
        raise refused("did not answer with a JSON object")
    version = answer.get("apiVersion")
    if answer.get("kind") != "ExecCredential" or not isinstance(version, str):
        raise refused("did not answer with an ExecCredential (kind and apiVersion)")
    if version != plugin.api_version:
        raise refused(
            f"answered in {one_line(version, limit=80)} where the kubeconfig asks for"
            f" {plugin.api_version}"
        )
    status = answer.get("status")
    if not isinstance(status, dict):
        raise refused("did not return a status field")
    token, cert, key = (
        status.get(name) or "" for name in ("token", "clientCertificateData", "clientKeyData")
    )
    if not all(isinstance(value, str) for value in (token, cert, key)):
        raise refused("answered a token or certificate that is not a string")
    if not (token or cert or key):
        raise refused("did not return a token or cert/key pair")
    if bool(cert) != bool(key):
        raise refused("returned only certificate or key, not both")
    if cert and not _looks_like_pair(cert, key):
        raise refused("returned a client certificate or key that is not PEM")
    certificate = ClientCertificate(cert.encode(), key.encode()) if cert else None
    if certificate is not None and certificate.key_is_encrypted:
        raise refused(
            "returned a client key protected by a passphrase, which kubectl cannot use either"
            f" ({ENCRYPTED_KEY_REASON})"
        )
    return Credential(
        authorization=f"Bearer {token}" if token else None,
        certificate=certificate,
        expires_at=_expiry(status.get("expirationTimestamp"), refused),
    )


def _looks_like_pair(cert: str, key: str) -> bool:
    # The pairing itself is checked where the TLS context loads it (the transport).
    return "-----BEGIN CERTIFICATE-----" in cert and "PRIVATE KEY-----" in key


def _expiry(value: object, refused: Callable[[str], CredentialError]) -> datetime | None:
    if value is None:  # JSON null; metav1.Time refuses any other non-RFC 3339 text, "" too
        return None
    if not isinstance(value, str) or _RFC3339.fullmatch(value) is None:
        raise refused(_NOT_A_TIME)
    try:
        return datetime.fromisoformat(value)
    except ValueError:  # the right shape, but no such day or hour
        raise refused(_NOT_A_TIME) from None


def _stdin_is_terminal() -> bool:
    # client-go asks the same of os.Stdin (fd 0); a closed fd 0 is simply not a terminal
    return os.isatty(0)


class ExecCredentialSource:
    """Runs the plugin when a credential is needed; caches it until its expirationTimestamp.

    As client-go's Authenticator: the first request runs the plugin, an expired credential runs
    it again, and a 401 runs it again once. Safe to share between threads.
    """

    def __init__(
        self,
        plugin: ExecPlugin,
        *,
        timeout_seconds: float = PLUGIN_TIMEOUT_SECONDS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        stdin_is_terminal: Callable[[], bool] = _stdin_is_terminal,
        environ: Callable[[], Mapping[str, str]] = lambda: os.environ,
    ) -> None:
        """`clock`, `stdin_is_terminal` and `environ` are client-go's `now`, `isTerminalFunc`
        and `environ` seams; the defaults are the real ones."""
        self.plugin = plugin
        self._timeout = timeout_seconds
        self._clock = clock
        self._stdin_is_terminal = stdin_is_terminal
        self._environ = environ
        self._lock = threading.Lock()
        self._cached: Credential | None = None

    def current(self, deadline: Deadline | None = None) -> Credential:
        """The cached credential while it is valid; otherwise the plugin's new answer, the
        plugin stopped at `deadline` if it comes before the plugin's own time is up."""
        with self._lock:
            cached = self._cached
            if cached is not None and not self._expired(cached):
                return cached
            self._cached = self._run(deadline)
            return self._cached

    def after_unauthorized(
        self, refused: Credential, deadline: Deadline | None = None
    ) -> Credential | None:
        """Run the plugin again, unless the credential was renewed since `refused` was sent
        (requests in flight together that are all refused run it once: client-go's
        `maybeRefreshCreds`, plugin/pkg/client/auth/exec/exec.go); None when the answer is
        what the server just refused."""
        with self._lock:
            if self._cached is None or self._cached is refused:
                self._cached = self._run(deadline)
            fresh = self._cached
        same = (fresh.authorization, fresh.certificate) == (
            refused.authorization,
            refused.certificate,
        )
        return None if same else fresh

    def describe(self) -> str:
        """Names the plugin and the user, for messages."""
        return f"the credential plugin {self.plugin.shown} of user {self.plugin.user_name!r}"

    @property
    def login_command(self) -> str:
        """The plugin's command: running it by hand shows why a login fails."""
        return self.plugin.command

    def _expired(self, credential: Credential) -> bool:
        # client-go: expired once now is after the expirationTimestamp, never without one
        return credential.expires_at is not None and self._clock() > credential.expires_at

    def _interactive(self) -> bool:
        mode = self.plugin.interactive_mode
        if mode is InteractiveMode.NEVER:
            return False
        if mode is InteractiveMode.IF_AVAILABLE:
            return self._stdin_is_terminal()
        if not self._stdin_is_terminal():
            raise CredentialError(
                f"cannot log in as user {self.plugin.user_name!r}",
                f"its credential plugin {self.plugin.shown} needs to ask questions"
                " (interactiveMode Always) but standard input is not a terminal",
                "run truegreen in a terminal, or log in with the plugin first",
            )
        return True

    def _run(self, deadline: Deadline | None) -> Credential:
        plugin = self.plugin
        timeout = self._timeout if deadline is None else min(self._timeout, deadline.remaining())
        if timeout <= 0:
            # a read that waited for another read's run of the plugin, past the run's limit
            raise PluginNoAnswerError(
                f"the run's time limit passed before the login plugin {plugin.shown} of user "
                f"{plugin.user_name!r} answered",
                todo=self._run_it_yourself(),
            )
        interactive = self._interactive()
        request = exec_request(plugin, interactive=interactive)
        executable = plugin.command if "/" in plugin.command else look_path(plugin.command)
        if executable is None:
            raise self._not_installed()
        refusal = start_refusal(plugin)
        if refusal is not None:
            raise CredentialError(
                f"cannot log in as user {plugin.user_name!r}",
                f"its credential plugin {plugin.shown} cannot be started: {refusal}",
                f"fix the exec section of user {plugin.user_name!r} in the kubeconfig",
            )
        try:
            run = run_plugin(
                [plugin.command, *plugin.args],
                executable=executable,
                env=plugin_environment(plugin, request, self._environ()),
                interactive=interactive,
                timeout_seconds=timeout,
                stdout_cap=STDOUT_CAP,
                stderr_cap=STDERR_CAP,
            )
        except FileNotFoundError:
            raise self._not_installed() from None
        except OSError as error:
            raise CredentialError(
                f"cannot log in as user {plugin.user_name!r}",
                f"its credential plugin {plugin.shown} could not be started ({error.strerror})",
                "check that the file is a program you may run",
            ) from None
        if run.ending is Ending.TIMED_OUT:
            raise self._no_answer(run, timeout, interactive)
        if run.ending is not Ending.EXITED or run.exit_code != 0:
            raise self._failed(run, interactive)
        return parse_answer(plugin, run.stdout)

    def _not_installed(self) -> CredentialError:
        hint = one_line(self.plugin.install_hint, limit=300)
        return CredentialError(
            f"cannot log in as user {self.plugin.user_name!r}",
            f"exec: executable {self.plugin.shown} not found",
            hint or "install the credential plugin, or correct `command` in the kubeconfig",
        )

    def _run_it_yourself(self) -> str:
        return (
            "run the login plugin yourself to see where it waits "
            f"(`{self.plugin.command_line}`) and check that you are logged in"
        )

    def _no_answer(self, run: PluginRun, timeout: float, interactive: bool) -> PluginNoAnswerError:
        # whole seconds: the run's remaining time is a float a person need not read to the ms
        return PluginNoAnswerError(
            f"the login plugin {self.plugin.shown} of user {self.plugin.user_name!r} did not "
            f"answer within {max(timeout, 1):.0f} seconds and was stopped"
            + _said(run, interactive),
            todo=self._run_it_yourself(),
        )

    def _failed(self, run: PluginRun, interactive: bool) -> CredentialError:
        if run.ending is Ending.TOO_MUCH_OUTPUT:
            how = f"answered more than {STDOUT_CAP // 1024} KiB and was stopped"
        elif run.exit_code is not None and run.exit_code < 0:
            how = f"was ended by signal {-run.exit_code}"
        else:
            how = f"failed with exit code {run.exit_code}"
        return CredentialError(
            f"cannot log in as user {self.plugin.user_name!r}",
            f"exec: executable {self.plugin.shown} {how}{_said(run, interactive)}",
            "do what the plugin asks (often: log in with it again), then retry",
        )


def _said(run: PluginRun, interactive: bool) -> str:
    """What the plugin said, for the end of its failure line: the first line of its error
    output that holds more than blanks, one line, bounded and with secret shapes redacted (a
    plugin may echo the token it failed to refresh)."""
    for line in run.stderr_head.decode(errors="replace").splitlines():
        if line.strip():
            quoted = redact_login_words(redact_text(line))
            return f", saying: {one_line(quoted, limit=SAID_LIMIT)}"
    if interactive:
        return " (its own messages are above)"
    return " without saying why"


def redact_login_words(text: str) -> str:
    """`text` with the logins a plugin may echo replaced by `<redacted>`: the value after an
    auth scheme or after password, token or secret, unless that value is a plain word (`token
    expired` stays), and a quoted value there whatever it holds (`password "<redacted>"`). A
    JWT standing alone is redact_text's, which every line goes through first."""
    return _LOGIN_WORD_AND_VALUE.sub(_login_value_redacted, text)


def _login_value_redacted(found: re.Match[str]) -> str:
    quote = found["q"] or ""
    if not quote and _PLAIN_WORD.fullmatch(found["value"].rstrip("=")):
        return found[0]
    return f"{found['word']}{found['blank']}{quote}{REDACTED}"
