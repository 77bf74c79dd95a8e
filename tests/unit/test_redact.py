"""The redaction policy (docs/snapshot.md), rule by rule: what it replaces, what it must leave
alone because doctor measures it, and that it is idempotent and never raises."""

import base64
import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from truegreen.cluster import CantRead, Got, Kind, Listed, ReadFailure
from truegreen.cluster.logs import LIMIT_BYTES
from truegreen.cluster.reader import FieldSelector, Fold
from truegreen.cluster.reads import Folded, FoldRead, GetRead, ListRead
from truegreen.cluster.redact import (
    LAST_APPLIED,
    UNPARSABLE,
    RedactingReader,
    redact_object,
    redact_value,
)
from truegreen.redacted import REDACTED
from truegreen.redaction.command_logins import redact_command_logins
from truegreen.redaction.text import (
    _assignment,
    _cookie_header,
    _flag_and_value,
    _plainly_safe,  # the quick checks and the rules they let text skip, tested against each other
    _redact_every_rule,
    _redact_shapes,
    looks_secret,
    redact_shapes,
    redact_text,
)
from truegreen.redaction.text import secret_flag as _secret_flag

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
DIGEST = "sha256:" + "0123456789abcdef" * 4


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unb64(text: str) -> Any:
    return json.loads(base64.b64decode(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgres://app:hunter2@db:5432/x", "postgres://<redacted>@db:5432/x"),
        ("postgres://app:p@ss/w0rd@db/x", "postgres://<redacted>@db/x"),
        ("https://ghp_tok3n@github.com/org/repo", "https://<redacted>@github.com/org/repo"),
        ("see mongodb+srv://u:p@h1,h2/db now", "see mongodb+srv://<redacted>@h1,h2/db now"),
        ("id AKIAIOSFODNN7EXAMPLE!", "id <redacted>!"),
        ("ASIAIOSFODNN7EXAMPLE", "<redacted>"),
        (f"k={AWS_SECRET}", "k=<redacted>"),
        (AWS_SECRET, "<redacted>"),
        (f"x {AWS_SECRET} y", "x <redacted> y"),
    ],
)
def test_shapes_anywhere_in_a_string_are_redacted(text: str, expected: str) -> None:
    assert redact_shapes(text) == expected
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"oci://robot:S3cretPass@registry.example.com/team/model@{DIGEST}",
            f"oci://<redacted>@registry.example.com/team/model@{DIGEST}",
        ),
        (
            f"s3://AKID:pw@bucket/x@{DIGEST} and more",
            f"s3://<redacted>@bucket/x@{DIGEST} and more",
        ),
        (
            "git+https://ghp_tok3n@github.com/org/repo.git@v1.2",
            "git+https://<redacted>@github.com/org/repo.git@v1.2",
        ),
        ("https://u:p@h/a@b/c@d", "https://<redacted>@d"),
        ("https://host/users/@me", "https://host/users/@me"),
    ],
)
def test_userinfo_ends_at_the_authority_s_at_whatever_follows_in_the_path(
    text: str, expected: str
) -> None:
    """Userinfo is what comes before the `@` of the authority, which ends at the first `/`
    (RFC 3986 3.2; Go net/url parseAuthority); an `@` in the path (an image digest, a pip
    requirement's `@v1.2`, pip's docs "VCS Support") never hides it. A later `@` that is not
    a digest may end a password holding `/` (SQLAlchemy's URL reads `[^@]*`), so the
    redaction runs to it, as before."""
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        f"docker-pullable://nginx@{DIGEST}",  # an image ID, not userinfo
        f"registry.example.com/team/app@{DIGEST}",
        "http://host:8080/healthz",
        "https://registry.example.com/v2/",
        "AKIAIOSFODNN7EXAMPLEX",  # 21 characters: not an access key id
        "XAKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE",  # 39
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYS",  # 41
        "0123456789abcdef0123456789abcdef01234567",  # hex: no upper case
        "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMN",  # no lower case, no digit
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN",  # no digit
        "abcdefghijklmnopqrstuvwxyz0123456789abcd",  # no upper case
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCD",  # no lower case
        AWS_SECRET[1:] + "A=",
    ],
)
def test_what_only_looks_like_a_shape_is_kept(text: str) -> None:
    assert redact_shapes(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Server=db;User Id=sa;Password=hunter2;", "Server=db;User Id=sa;Password=<redacted>;"),
        (
            "jdbc:mysql://h/db?user=u&password=p&x=1",
            "jdbc:mysql://h/db?user=u&password=<redacted>&x=1",
        ),
        ('{"token":"abc","a":1}', '{"token":"<redacted>","a":1}'),
        ('{"api_key": "abc"}', '{"api_key": "<redacted>"}'),
        ("client_secret: abc def", "client_secret: <redacted> def"),
        ("Authorization: Bearer abc.def", "Authorization: <redacted>"),
        ("authorization: basic dXNlcjpwYXNz", "authorization: <redacted>"),
        ("PASSWORD = 'x y'", "PASSWORD = '<redacted>'"),
        ("app --db-password hunter2 --verbose", "app --db-password <redacted> --verbose"),
        ("app -token=abc", "app -token=<redacted>"),
        ("--api-key=xyz", "--api-key=<redacted>"),
        ("'--secret' 'v'", "'--secret' '<redacted>'"),
        ("DB_PASS=x", "DB_PASS=<redacted>"),
        ("pwd=x", "pwd=<redacted>"),
        ("MY_DSN=x", "MY_DSN=<redacted>"),
        ("connection_string=x", "connection_string=<redacted>"),
        ("ConnStr=x", "ConnStr=<redacted>"),
        ("DATABASE_URL=x", "DATABASE_URL=<redacted>"),
        ("db-url=x", "db-url=<redacted>"),
        ("private=x", "private=<redacted>"),
        ("credentials=x", "credentials=<redacted>"),
        ("passphrase=x", "passphrase=<redacted>"),
        ("passwd=x", "passwd=<redacted>"),
        # A session cookie is a login (RFC 6265 §8.4), whatever the variable holding it.
        ("SESSION_COOKIE=abc123def456ghi", "SESSION_COOKIE=<redacted>"),
        ("JUPYTER_COOKIE: x", "JUPYTER_COOKIE: <redacted>"),
        ("--session-cookie=c2VjcmV0", "--session-cookie=<redacted>"),
        # Quoted parts a shell joins to an unquoted value are the value too.
        ("export PGPASSWORD=pa'ss word' && psql", "export PGPASSWORD=<redacted> && psql"),
        ('app --db-password a"b c" --verbose', "app --db-password <redacted> --verbose"),
    ],
)
def test_secret_named_assignments_and_flags_are_redacted(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"level":"info","passphrase": "correct horse battery staple"}',
            '{"level":"info","passphrase": "<redacted>"}',
        ),
        ("db.password = 'secret pass phrase' ok", "db.password = '<redacted>' ok"),
        ('{"token": "a \\"quoted\\" b", "n": 1}', '{"token": "<redacted>", "n": 1}'),
        ("--password 'two words' --verbose", "--password '<redacted>' --verbose"),
        ('app --api-key "x y z"', 'app --api-key "<redacted>"'),
        ('password="unclosed quote to the end', 'password="<redacted>'),
        ('{"token": "", "a": 1}', '{"token": "", "a": 1}'),
        (
            "request headers: Authorization: token ghp_R4nd0mGithubT0kenValue1234",
            "request headers: Authorization: <redacted>",
        ),
        (
            "Proxy-Authorization: Negotiate YIIB3gYGKwYBBQUCoIIB0jCCAc6g==",
            "Proxy-Authorization: <redacted>",
        ),
        (
            "authorization: AWS4-HMAC-SHA256 Credential=AKID/x, Signature=f0",
            "authorization: <redacted>",
        ),
        ("client_secret: abc def", "client_secret: <redacted> def"),
    ],
)
def test_a_secret_named_value_is_redacted_whole(text: str, expected: str) -> None:
    """A quoted value runs to its closing quote (JSON's `\\"` inside it too), not to its first
    space; an authorization header's value is its scheme and the credentials after it
    (RFC 7235 2.1: `credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`), whatever
    the scheme (GitHub's `token`, Kerberos' `Negotiate`)."""
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "registry.example.com/auth-proxy:1.2",  # an image: a colon without a space
        "token-cache:v2",
        "8080=API_TOKEN",  # the name before `=` is a port
        "a short line",
        "app --verbose --password",  # a flag with nothing after it
        "app --password --verbose",  # the next word is another flag
        "name=value; other=thing",
        "x" * 19,
        "no secrets here, just a long sentence of words",
        "monitor: ok",
    ],
)
def test_text_without_a_secret_is_kept(text: str) -> None:
    assert redact_text(text) == text


# The container runtime's words for a failed pull, as the kubelet quotes them (ErrImagePull,
# and its `Failed to pull image` Event): Go error chains (`fmt.Errorf("...: %w")`) whose
# steps end in a secret word before `: `. No credential is in any of them.
RUNTIME_ERROR_CHAINS = {
    # containerd: resolver.go request.do `failed to authorize: %w`; authorizer.go doBearerAuth
    # `failed to fetch oauth token: %w` (POST to the realm, with a login) and `failed to
    # fetch anonymous token: %w` (GET); core/remotes/errors ErrUnexpectedStatus.Error
    # `unexpected status from %s request to %s: %s` with the response's Status.
    "containerd-oauth-403": "failed to authorize: failed to fetch oauth token: unexpected status "
    "from POST request to https://ghcr.io/token: 403 Forbidden",
    "containerd-oauth-401": "failed to authorize: failed to fetch oauth token: unexpected status "
    "from POST request to https://gitlab.example.com/jwt/auth: 401 Unauthorized",
    "containerd-anonymous-401": "failed to authorize: failed to fetch anonymous token: unexpected "
    "status from GET request to https://auth.docker.io/token?scope=repository%3Alibrary%2F"
    "mysql%3Apull&service=registry.docker.io: 401 Unauthorized",
    # auth/fetch.go: `unable to decode token response: %w`, ErrNoToken.
    "containerd-token-response": "failed to fetch anonymous token: unable to decode token "
    "response: invalid character '<' looking for beginning of value",
    "containerd-no-token": "failed to fetch oauth token: authorization server did not include a "
    "token in the response",
    # auth/fetch.go returns the HTTP client's url.Error as it is (net/http urlErrorOp: `Post`).
    "containerd-token-url-error": 'failed to fetch oauth token: Post "https://ghcr.io/v2/": '
    "dial tcp: lookup ghcr.io: no such host",
    # The same url.Error where the URL's last step is a secret word (`…/token"`): the quote
    # closes the URL, it opens no `"token": value`; Go's net errors follow it (net.OpError
    # `dial tcp …`, net.DNSError `lookup HOST: no such host`), and a host holding a secret word
    # (`oauth2…`, `auth.docker.io`) is no setting.
    "containerd-token-url-path": 'failed to fetch oauth token: Post "https://oauth2.googleapis.'
    'com/token": dial tcp: lookup oauth2.googleapis.com: no such host',
    "docker-auth-host-refused": 'failed to fetch anonymous token: Get "https://auth.docker.io/'
    'token?scope=repository%3Alibrary%2Fbusybox%3Apull&service=registry.docker.io": dial tcp '
    "44.208.254.194:443: connect: connection refused",
    "auth-host-timeout": 'Get "https://auth.example.com/token": dial tcp 10.0.0.5:443: i/o timeout',
    # resolver.go Resolve `pull access denied, repository does not exist or may require
    # authorization: %w` around authorizer.go invalidAuthorization `server message: %s: %w`,
    # or ErrInvalidAuthorization (`authorization failed`) with `%w: no basic auth credentials`.
    "containerd-insufficient-scope": "pull access denied, repository does not exist or may "
    "require authorization: server message: insufficient_scope: authorization failed",
    "containerd-no-basic-auth": "pull access denied, repository does not exist or may require "
    "authorization: authorization failed: no basic auth credentials",
    # CRI-O: containers/image docker_client.go `reading manifest %s in %s: %w` with
    # distribution's errcode.Error `%s: %s` (registry/api/errcode errors.go; register.go
    # UNAUTHORIZED, `authentication required`).
    "crio-unauthorized": "initializing source docker://mysql:8.0: reading manifest 8.0 in "
    "docker.io/library/mysql: unauthorized: authentication required",
}


@pytest.mark.parametrize("text", RUNTIME_ERROR_CHAINS.values(), ids=RUNTIME_ERROR_CHAINS.keys())
def test_a_runtime_s_error_chain_is_kept_word_for_word(text: str) -> None:
    """`authorize: failed`, `token: unexpected`, `…/token: 403 Forbidden`, `unauthorized:
    authentication` and `authorization: server message` are a wrapped error's opening words
    after a step named with a secret word, not a setting and its value."""
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A value of no error's opening word: random, base64, a JWT, or plain words.
        ("token: s3cr3tV4lue unexpected status", "token: <redacted> unexpected status"),
        ("token: dGhpcyBpcyBzZWNyZXQ= and more", "token: <redacted> and more"),
        ("oauth token: eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl now", "oauth token: <redacted> now"),
        ("token: hunter two three", "token: <redacted> two three"),
        # An opening word not written as Go writes one: another case, run on, or alone.
        ("token: Failed to fetch", "token: <redacted> to fetch"),
        ("token: failedpass to", "token: <redacted> to"),
        ("token: failed", "token: <redacted>"),
        ("token: unexpected", "token: <redacted>"),
        ("token: failed 2 go", "token: <redacted> 2 go"),
        # Not a chain's `: `: quoted, after `=`, or more than one blank.
        ('"token": "failed to fetch"', '"token": "<redacted>"'),
        ("token: 'failed to fetch'", "token: '<redacted>'"),
        ("token=failed to fetch", "token=<redacted> to fetch"),
        ("token:  failed to fetch", "token:  <redacted> to fetch"),
        ('"token": failed to fetch', '"token": <redacted> to fetch'),
        # A status needs an error's three digits and a reason phrase after them.
        ("password: 123 Main Street", "password: <redacted> Main Street"),
        ("password: 403", "password: <redacted>"),
        ("password: 403 forbidden", "password: <redacted> forbidden"),
        ("password: 4031 Forbidden", "password: <redacted> Forbidden"),
        # A url.Error's method is one word before a quote.
        ("token: Post https://x", "token: <redacted> https://x"),
        ("Authorization: Bearer failed to", "Authorization: <redacted>"),
    ],
)
def test_only_a_chain_s_own_words_escape_the_named_rule(text: str, expected: str) -> None:
    """The words a chain keeps are few and as Go writes them; anything else after a secret
    word's `: ` is still a value, even plain words."""
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


# A login plugin's failure as client-go quotes it (plugin/pkg/client/auth/exec exec.go
# `exec: executable %s failed with exit code %d`, and the plugin's own wrapped errors): steps
# named with secret words, one after another, and os/exec's `exit status N`.
LOGIN_PLUGIN_CHAINS = {
    "exec-credentials-token": "getting credentials: exec: executable aws failed with exit code 1",
    "credential-step-then-step": "error getting credentials: token: exit status 1",
    "kubelogin-token": "get-token: failed to get a token: exit status 2",
    "gke-auth-timeout": "auth.example.com: i/o timeout",
}


@pytest.mark.parametrize("text", LOGIN_PLUGIN_CHAINS.values(), ids=LOGIN_PLUGIN_CHAINS.keys())
def test_a_login_plugin_s_error_chain_is_kept_word_for_word(text: str) -> None:
    """A step named with a secret word followed by another step (`credentials: token: …`),
    and Go's own error words after one (`exit status 1`, `i/o timeout`), hold no value."""
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A step's name is followed by `: `; the value after the last step is still one.
        ("credentials: token: s3cr3tV4lue", "credentials: token: <redacted>"),
        ("credentials: token:s3cr3t", "credentials: <redacted>"),
        # Go's words only as Go writes them.
        ("token: exit status", "token: <redacted> status"),
        ("token: dial", "token: <redacted>"),
        ("token: no such thing", "token: <redacted> such thing"),
        # A next step is client-go's `exec: ` or named with a secret word; any other word
        # ending in `: ` is a value, as is a Go word that is not Go's whole text.
        ("password: letmein: please", "password: <redacted> please"),
        ("DB_PASSWORD: correct-horse-battery-staple: x", "DB_PASSWORD: <redacted> x"),
        ("Authorization: basic: dXNlcjpwYXNzd29yZA==", "Authorization: <redacted>"),
        ("passphrase: lookup table", "passphrase: <redacted> table"),
        ("token: read Xy7Qz", "token: <redacted> Xy7Qz"),
        ("token: dial tcpx", "token: <redacted> tcpx"),
        ("token: exit status 1x", "token: <redacted> status 1x"),
        ("credentials: exec2: x", "credentials: <redacted> x"),
        # A quoted key is a key whatever ends it; only a path's last step closes a URL.
        ('"token": dial tcp', '"token": <redacted> tcp'),
        ("'token': dial tcp", "'token': <redacted> tcp"),
        ('{"token": "dial tcp"}', '{"token": "<redacted>"}'),
        ('"https://x/token": s3cr3tV4lue', '"https://x/token": <redacted>'),
        ("/etc/token: s3cr3tV4lue", "/etc/token: <redacted>"),
    ],
)
def test_a_chain_s_go_words_and_steps_keep_nothing_else(text: str, expected: str) -> None:
    """Only Go's own words and a next step escape the rule; a path's last step still names a
    value when no quote closes a URL between them."""
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


def test_a_credential_shaped_like_a_chain_s_words_is_the_rule_s_trade_off() -> None:
    """A password that is one of the opening words, written unquoted after `: ` with a
    lower-case word after it, reads as a chain and stays (docs/snapshot.md, rule 6): Go's
    chains cannot be told apart from it by their shape."""
    assert redact_text("password: server room") == "password: server room"
    assert redact_text("password: 404 Not Found") == "password: 404 Not Found"


# Text made of what the rules look for (key letters, separators, a scheme, a secret name) and
# what they do not (label-like words), so that near misses on either side are drawn often.
_PIECES = st.sampled_from(
    [
        "AKIA",
        "IOSFODNN7EXAMPLE",
        AWS_SECRET,
        AWS_SECRET[:20],
        AWS_SECRET.replace("/", "+"),
        "password",
        "--token",
        "API_KEY",
        "secret",
        "/var/run/secrets/kubernetes.io/serviceaccount",
        "=",
        ":",
        "://",
        "u:p@",
        " ",
        "\t",
        "-",
        "topology.kubernetes.io/zone",
        "us-east-1a",
        # What the credential shapes and command logins need (redaction/credential_shapes.py,
        # redaction/command_logins.py): a JWT's start and parts, a token's prefix and run, a
        # signature parameter, curl's -u and a MySQL client's -p.
        "eyJ",
        ".",
        "ghp_",
        "hf_",
        "github_pat_",
        "_",
        "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        "sig",
        "&",
        "?",
        "-u",
        "mysql",
        "-p",
        "'",
        '"',
        # A cookie header's name (redaction/credential_headers.py) and the clients whose own
        # short options take a password (redis-cli's -a, mongosh's -p).
        "Set-Cookie",
        "cookie",
        "redis-cli",
        "-a",
        "mongosh",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=6).map("".join) | st.text(max_size=60))
@example("eyJ.sig.")  # a JWT holds no `=`, `:`, blank or run of 20: only its `eyJ` says so
def test_only_text_that_no_rule_changes_skips_the_rules(text: str) -> None:
    """Most text (names, labels, numbers) is let through by a quick look; only text that every
    rule would have left as it is."""
    if _plainly_safe(text):
        assert _redact_every_rule(text) == text


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=6).map("".join) | st.text(max_size=60))
def test_the_named_rules_are_skipped_only_where_they_change_nothing(text: str) -> None:
    """The rules for secret-named values and cookie headers are not tried (nor compiled) where
    the text lacks a secret word or a cookie header's name, or their separator: only where
    trying them would have left it as it is."""
    tried = _redact_shapes(redact_command_logins(text))
    for rule in (_cookie_header(), _assignment(), _flag_and_value()):
        tried = rule.sub(lambda m: f"{m['name']}{m['sep']}{REDACTED}", tried)
    assert _redact_every_rule(text) == tried
    assert looks_secret(text) or not _secret_flag().fullmatch(text)


@pytest.mark.parametrize(
    "text",
    [
        "topology.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "node-role.kubernetes.io/control-plane",
        "a-label-value-of-19-letters." + "x" * 19,  # the longest run that is not a key's
    ],
)
def test_long_label_like_text_is_plainly_safe(text: str) -> None:
    assert len(text) >= 20, "precondition: past the length every short text passes at"
    assert _plainly_safe(text)


def test_the_name_list_is_the_documented_one() -> None:
    for name in [
        "DB_PASSWORD",
        "passwd",
        "PASS",
        "mysql-pwd",
        "CLIENT_SECRET",
        "GITHUB_TOKEN",
        "API_KEY",
        "apikey",
        "AWS_ACCESS_KEY_ID",
        "credentials",
        "BASIC_AUTH",
        "PRIVATE_PEM",
        "SENTRY_DSN",
        "ConnectionString",
        "conn_str",
        "DATABASE_URL",
        "db.url",
    ]:
        assert looks_secret(name), name
    for name in ["PATH", "HOME", "LOG_LEVEL", "PORT", "DATABASE_HOST", "URL"]:
        assert not looks_secret(name), name


def _pod(**container: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "train"},
        "spec": {"containers": [{"name": "c", "image": "r/app:1", **container}]},
    }


def test_env_values_with_secret_names_are_redacted_and_empty_ones_stay_empty() -> None:
    pod = _pod(
        env=[
            {"name": "DB_PASSWORD", "value": "hunter2"},
            {"name": "EMPTY_TOKEN", "value": ""},
            {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            {"name": "LOG_LEVEL", "value": "debug"},
            {"name": "DSN_URL", "value": "postgres://u:p@h/db"},
            {"name": "OPTS", "value": "-Dpassword=x"},
            {"value": "nameless"},
            "not-a-mapping",
        ]
    )
    env = redact_object(pod)["spec"]["containers"][0]["env"]
    assert env == [
        {"name": "DB_PASSWORD", "value": REDACTED},
        {"name": "EMPTY_TOKEN", "value": ""},
        {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "LOG_LEVEL", "value": "debug"},
        {"name": "DSN_URL", "value": REDACTED},
        {"name": "OPTS", "value": "-Dpassword=<redacted>"},
        {"value": "nameless"},
        "not-a-mapping",
    ]


def test_the_argument_after_a_secret_named_flag_is_redacted() -> None:
    pod = _pod(
        command=["sh", "-c", "serve --api-key abc --port 80"],
        args=["--password", "hunter2", "--token", "--verbose", "--user", "me", "--auth=x", 7],
    )
    container = redact_object(pod)["spec"]["containers"][0]
    assert container["command"] == ["sh", "-c", "serve --api-key <redacted> --port 80"]
    assert container["args"] == [
        "--password",
        REDACTED,
        "--token",
        "--verbose",
        "--user",
        "me",
        "--auth=<redacted>",
        7,
    ]


def test_arguments_without_a_secret_word_never_compile_the_flag_rule() -> None:
    _secret_flag.cache_clear()
    container = redact_object(_pod(args=["--port", "80", "-v", "x"]))["spec"]["containers"][0]
    assert container["args"] == ["--port", "80", "-v", "x"]
    assert _secret_flag.cache_info().currsize == 0


def test_probe_commands_are_redacted_like_any_command() -> None:
    probe = {"exec": {"command": ["check", "--token", "abc"]}}
    container = redact_object(_pod(livenessProbe=probe))["spec"]["containers"][0]
    assert container["livenessProbe"] == {"exec": {"command": ["check", "--token", REDACTED]}}


def test_last_applied_and_managed_fields_are_redacted_and_own_annotations_kept() -> None:
    deployment = {
        "kind": "Deployment",
        "metadata": {
            "name": "d",
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
            "annotations": {
                LAST_APPLIED: '{"spec": {"env": [{"name": "X", "value": "plain"}]}}',
                "truegreen.io/disabled-by": "auth=TOKEN_OFF",
                "note": "password=x",
            },
        },
        "spec": {"template": {"metadata": {"annotations": {LAST_APPLIED: "{}"}}}},
    }
    redacted = redact_object(deployment)
    assert redacted["metadata"] == {
        "name": "d",
        "managedFields": REDACTED,
        "annotations": {
            LAST_APPLIED: REDACTED,
            "truegreen.io/disabled-by": "auth=TOKEN_OFF",
            "note": "password=<redacted>",
        },
    }
    assert redacted["spec"]["template"]["metadata"]["annotations"] == {LAST_APPLIED: REDACTED}


def test_a_secret_keeps_key_names_emptiness_and_which_registries_have_logins() -> None:
    docker = {"auths": {"r.example.com": {"auth": _b64("u:p")}, "other.example.com": {}}}
    legacy = {"old.example.com": {"username": "u", "password": "p"}}
    secret = {
        "kind": "Secret",
        "metadata": {"name": "s", "annotations": {"owner": "team", LAST_APPLIED: "{}"}},
        "data": {
            "password": _b64("hunter2"),
            "empty": "",
            ".dockerconfigjson": _b64(json.dumps(docker)),
            ".dockercfg": _b64(json.dumps(legacy)),
        },
        "stringData": {"token": "abc", "none": ""},
    }
    redacted = redact_object(secret)
    assert redacted["metadata"]["annotations"] == {"owner": REDACTED, LAST_APPLIED: REDACTED}
    assert base64.b64decode(redacted["data"]["password"]).decode() == REDACTED
    assert redacted["data"]["empty"] == ""
    assert _unb64(redacted["data"][".dockerconfigjson"]) == {
        "auths": {"r.example.com": {"auth": REDACTED}, "other.example.com": {}}
    }
    assert _unb64(redacted["data"][".dockercfg"]) == {"old.example.com": {"auth": REDACTED}}
    assert redacted["stringData"] == {"token": REDACTED, "none": ""}


@pytest.mark.parametrize(
    "login",
    [
        "not base64!",
        _b64("not json"),
        _b64("[1, 2]"),
        _b64('{"auths": [1]}'),
        _b64('{"AUTHS": "text"}'),
    ],
)
def test_an_unparsable_registry_login_stays_unparsable(login: str) -> None:
    secret = {"kind": "Secret", "metadata": {}, "data": {".dockerconfigjson": login}}
    value = redact_object(secret)["data"][".dockerconfigjson"]
    with pytest.raises(ValueError, match=r"Expecting value|JSON"):
        _unb64(value)
    assert redact_object(redact_object(secret)) == redact_object(secret)


@pytest.mark.parametrize(
    ("login", "kept"),
    [
        ("{}", {"auths": {}}),
        ("null", {"auths": {}}),
        ('{"auths": null}', {"auths": {}}),
        (
            '{"Auths": {"r.example.com": {"auth": "dTpw"}}}',
            {"auths": {"r.example.com": {"auth": REDACTED}}},
        ),
    ],
)
def test_a_login_the_kubelet_reads_as_empty_is_kept_empty(login: str, kept: object) -> None:
    """A `.dockerconfigjson` without `auths` is a login of no entries to the kubelet
    (pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring, encoding/json matching
    `auths` in any case), not a damaged one."""
    secret = {"kind": "Secret", "metadata": {}, "data": {".dockerconfigjson": _b64(login)}}
    assert _unb64(redact_object(secret)["data"][".dockerconfigjson"]) == kept


def test_a_login_s_registry_keeps_no_user_name_password_or_query() -> None:
    """A key may be a URL with userinfo or a query; the keyring files it under Host and path
    alone (pkg/credentialprovider/keyring.go BasicDockerKeyring.Add), which is all a snapshot
    keeps. A key url.Parse refuses is ignored by the kubelet and kept as a placeholder; a key
    that was damaged stays damaged when another collapses onto it."""
    entries = {
        "https://robot:secret7@r.example.com": {"auth": "%%%"},
        "https://robot:secret5@r.example.com/v1/": {"auth": _b64("u:p")},
        "q.example.com/team?token=secret6": {},
        "https://r.example.com": {"auth": _b64("u:p")},
        "https://bad host@secret8": {},
        "plain.example.com/team/": {},
    }
    secret = {"kind": "Secret", "data": {".dockerconfigjson": _b64(json.dumps({"auths": entries}))}}
    redacted = redact_object(secret)
    assert _unb64(redacted["data"][".dockerconfigjson"])["auths"] == {
        "r.example.com": {"auth": UNPARSABLE},
        "q.example.com/team": {},
        "https://r.example.com": {"auth": REDACTED},
        "<redacted: unparsable address>": {},
        "plain.example.com/team/": {},
    }
    shown = base64.b64decode(redacted["data"][".dockerconfigjson"]).decode()
    for value in ("secret5", "secret6", "secret7", "secret8"):
        assert value not in shown
    assert redact_object(redacted) == redacted


def test_a_registry_login_is_judged_by_what_it_holds() -> None:
    """Each entry as the kubelet reads it (truegreen/docker_config.py after
    kubernetes/kubernetes pkg/credentialprovider/config.go): one it cannot read is marked
    unparsable, since it fails the whole login; its value never survives."""
    entries = {
        "token.example.com": {"identitytoken": "t"},
        "pair.example.com": {"username": "u", "password": "p"},
        "user-only.example.com": {"username": "u"},
        "user-only-auth.example.com": {"auth": _b64("u:")},  # as spelt out: nothing to send
        "password-only-auth.example.com": {"auth": _b64(":p-secret5")},
        "blank.example.com": {"auth": ""},
        "null.example.com": None,
        "unpadded.example.com": {"auth": _b64("u:p-secret1").rstrip("=")},
        "odd.example.com": "text",
        "not-base64.example.com": {"username": "u", "password": "p", "auth": "%%%secret2"},
        "no-colon.example.com": {"auth": _b64("u-secret3")},
        "number.example.com": {"username": 7, "password": "secret4"},
    }
    secret = {
        "kind": "Secret",
        "data": {".dockerconfigjson": _b64(json.dumps({"auths": entries}))},
    }
    redacted = redact_object(secret)
    assert _unb64(redacted["data"][".dockerconfigjson"])["auths"] == {
        "token.example.com": {"auth": REDACTED},
        "pair.example.com": {"auth": REDACTED},
        "user-only.example.com": {},
        "user-only-auth.example.com": {},
        "password-only-auth.example.com": {"auth": REDACTED},
        "blank.example.com": {},
        "null.example.com": {},
        "unpadded.example.com": {"auth": REDACTED},
        "odd.example.com": {"auth": UNPARSABLE},
        "not-base64.example.com": {"auth": UNPARSABLE},
        "no-colon.example.com": {"auth": UNPARSABLE},
        "number.example.com": {"auth": UNPARSABLE},
    }
    assert redact_object(redacted) == redacted
    shown = json.dumps(redacted) + base64.b64decode(redacted["data"][".dockerconfigjson"]).decode()
    for value in ("secret1", "secret2", "secret3", "secret4", "secret5", _b64("u-secret3")):
        assert value not in shown


@pytest.mark.parametrize(
    "secret",
    [
        {"kind": "Secret", "metadata": ["a", "list"], "data": {"k": "dg=="}},
        {"kind": "Secret", "metadata": {"annotations": ["x"]}, "data": ["k"]},
        {"kind": "Secret", "metadata": {"annotations": None}, "stringData": "text"},
        {"kind": "Secret", "metadata": "text", "data": None, "stringData": None},
        {"kind": "Secret"},
    ],
)
def test_a_hostile_secret_never_crashes_and_keeps_no_value(secret: dict[str, Any]) -> None:
    redacted = redact_object(secret)
    assert "dg==" not in json.dumps(redacted)
    assert "text" not in json.dumps(redacted.get("stringData"))
    assert redact_object(redacted) == redacted
    if "data" in secret:
        assert redacted["data"] in ({}, {"k": _b64(REDACTED)})


def test_a_secret_s_annotations_that_are_not_a_mapping_are_replaced_whole() -> None:
    secret = {"kind": "Secret", "metadata": {"annotations": ["token", "abc"]}}
    assert redact_object(secret)["metadata"]["annotations"] == REDACTED


def test_the_object_given_is_never_changed() -> None:
    pod = _pod(env=[{"name": "TOKEN", "value": "abc"}], args=["--password", "x"])
    pod["metadata"]["managedFields"] = [{}]
    before = copy.deepcopy(pod)
    redact_object(pod)
    assert pod == before


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=60),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    *("metadata", "env", "args", "command", "name", "value", "annotations"),
                    *("data", "x", "image", "imageID", "labels", "matchExpressions", "values"),
                ]
            )
            | st.text(max_size=8),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(body=st.dictionaries(st.text(max_size=8), _json, max_size=5), secret=st.booleans())
def test_redaction_never_raises_and_is_idempotent(body: dict[str, Any], secret: bool) -> None:
    obj = {**body, "kind": "Secret"} if secret else body
    once = redact_object(obj)
    assert redact_object(once) == once
    assert redact_value(redact_value(body)) == redact_value(body)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_text_redaction_is_idempotent(text: str) -> None:
    assert redact_text(redact_text(text)) == redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "https://:,ABCDEFGHIJKLMNOPu:p@hsha256:" + "a" * 32 + "keyZz9/+;=",
        'sha256:x;"https://u:p@htoken=@sha256:' + "b" * 40 + "=--https:///",
        '\t"/keyhttps://@key=/key@',
        "auth'/x,Zz9/+AKIAABCDEFGHIJKLMNOPpasswordhttps://;@",
        "https://u:p@h@sha256:" + "0123456789ABCDEFabcdef" * 2,
        # A key id redacted uncovers a token's start that ran on from it.
        "AKIAIOSFODNN7EXAMPLEeyJa.b.c",
        "ASIAIOSFODNN7EXAMPLEhf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        # curl's `-u` breaks a digest that hid a userinfo; a key redacted in a `-u` value
        # leaves a `user:password` shape behind (so a URL after `-u` is not spared).
        "https://-p=--user@sha256:" + "a" * 64,
        "-U'https://A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8hf_eyJa.b.c\t",
    ],
)
def test_text_redaction_is_idempotent_where_one_rule_changes_what_another_sees(
    text: str,
) -> None:
    """A digest the key rule redacts, or a value the named rule takes, no longer hides the
    userinfo before it: a second pass (doctor reading a snapshot) must change nothing."""
    once = redact_text(text)
    assert redact_text(once) == once


class _Reader:
    """A reader that answers from memory: the redacting wrapper is what is tested."""

    namespace = "train"

    def __init__(self, obj: Mapping[str, Any]) -> None:
        self.obj = obj

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        return Listed((self.obj,)) if kind is Kind.POD else CantRead(ReadFailure.FORBIDDEN, "no")

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        return Folded({"token=abc": 1})

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        return Got(self.obj) if kind is Kind.SECRET else CantRead(ReadFailure.NOT_FOUND, "gone")


def test_the_redacting_reader_redacts_every_object_it_passes_on() -> None:
    secret = {"kind": "Secret", "metadata": {"name": "s"}, "data": {"k": _b64("v")}}
    pod = _pod(env=[{"name": "TOKEN", "value": "abc"}])
    assert RedactingReader(_Reader(pod)).namespace == "train"
    listed = RedactingReader(_Reader(pod)).list(Kind.POD, namespace="train")
    assert listed == Listed((redact_object(pod),))
    got = RedactingReader(_Reader(secret)).get(Kind.SECRET, "s", namespace="train")
    assert got == Got(redact_object(secret))
    reader = RedactingReader(_Reader(pod))
    assert reader.list(Kind.NODE, namespace=None) == CantRead(ReadFailure.FORBIDDEN, "no")
    assert reader.get(Kind.POD, "p", namespace="train") == CantRead(ReadFailure.NOT_FOUND, "gone")
    # A fold's summary is the fold's own making (fit views, or events it redacted itself).
    assert reader.fold(Kind.POD, object(), namespace=None) == Folded({"token=abc": 1})  # type: ignore[arg-type]


HOSTILE_LINES = {
    "secret words": "key" * 21_846,
    "secret words with dashes": "key-" * 16_384,
    "schemes": "a://" * 16_384,
    "schemes with a colon": "a://b:" * 10_923,
    "assignments without a value": "token:" * 10_923,
    "flags without a value": "--token " * 8_192,
    "key-shaped runs": "A/b1+" * 13_108,
    "quoted values": 'password="' * 6_554,
    "quoted parts of unquoted values": "password=a'" * 5_958,
    "unclosed quotes": "token: '\\" * 8_192,
    "authorization headers": "authorization: " * 4_370,
    "JWT starts": "eyJa." * 13_108,
    "token prefixes": "ghp_" * 16_384,
    "signature parameters": "&sig=" * 13_108,
    "curl users after an equals sign": "=-u" * 21_846,
    "curl users in quotes": ' -u"' * 16_384,
    "curl users in a group of short options": " -" + "u" * 65_536 + " :",
    "curl cookies in a group of short options": "curl" + " -ab" * 16_384,
    "MySQL passwords in quotes": "mysql" + " -p'" * 16_384,
    "MySQL passwords quoted before the option": "mysql" + " '-p" * 16_384,
    "cookie headers": "cookie: " * 8_192,
    "cookie headers in quotes": "cookie: '" * 7_282,
    "redis-cli passwords": "redis-cli" + " -a" * 21_846,
    "redis-cli passwords in quotes": "redis-cli" + ' -a "' * 13_108,
    "mongosh passwords": "mongosh" + " -p " * 16_384,
    "mongosh passwords after an equals sign": "mongosh" + " -p=" * 16_384,
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("line", HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_a_hostile_line_the_size_of_a_saved_log_is_redacted_in_linear_time(line: str) -> None:
    """A log line is up to 64 KiB (logs.LIMIT_BYTES) of anything. A rule that backtracks
    quadratically took minutes on these; linear rules take well under a second."""
    assert len(line) >= LIMIT_BYTES, "precondition: a whole saved log"
    assert redact_text(redact_text(line)) == redact_text(line)


def test_a_config_map_keeps_only_the_values_doctor_reads_as_written() -> None:
    """doctor reads two ConfigMaps (the autoscaler's status, YuniKorn's queues); whatever else
    a ConfigMap keeps, under any key name or as binary data, is never saved, and the YAML doctor
    reads is kept whole: a rule matching inside it (`private-gpu: 2}`) would break it."""
    queues = (
        "queues:\n  - name: root\n    resources: {max: {vcore: 4, example.com/private-gpu: 2}}\n"
    )
    config_map: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "yunikorn-configs", "namespace": "yunikorn"},
        "data": {
            "queues.yaml": queues,
            "service.policyGroup": "queues",
            "ldap.bindPassword": "hunter2-bind",
            "ldap.bindpw": "hunter3-bind",
        },
        "binaryData": {"queues.yaml.gz": base64.b64encode(b"opaque").decode()},
    }
    redacted = redact_object(config_map)
    assert redacted["data"] == {
        "queues.yaml": queues,
        "service.policyGroup": "queues",
        "ldap.bindPassword": REDACTED,
        "ldap.bindpw": REDACTED,
    }
    assert base64.b64decode(redacted["binaryData"]["queues.yaml.gz"]).decode() == REDACTED
    assert config_map["data"]["ldap.bindpw"] == "hunter3-bind", "the read is untouched"
    assert redact_object(redacted) == redacted, "idempotent"


TAG_OF_40 = "Release2024Build7AbCdEfGhIjKlMnOpQrStUvW"
"""A valid image tag and label value (distribution/reference regexp.go `[\\w][\\w.-]{0,127}`;
apimachinery validation.go IsValidLabelValue) in the shape of an AWS secret access key."""


def test_image_references_are_never_rewritten_by_the_shape_rules() -> None:
    """containers, initContainers and ephemeralContainers (core/v1 types.go `Image`), and the
    runtime's `image` and `imageID` in their statuses (kuberuntime: `docker-pullable://…`)."""
    image = f"registry.example.com/team/trainer:{TAG_OF_40}"
    image_id = f"docker-pullable://registry.example.com/team/trainer@{DIGEST}"
    container = {"name": "c", "image": image, "env": [{"name": "K", "value": TAG_OF_40}]}
    status = {"name": "c", "image": image, "imageID": image_id}
    pod: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [container],
            "initContainers": [{**container, "name": "i"}],
            "ephemeralContainers": [{**container, "name": "e"}],
        },
        "status": {"containerStatuses": [status]},
    }
    redacted = redact_object(pod)
    for kind in ("containers", "initContainers", "ephemeralContainers"):
        assert redacted["spec"][kind][0]["image"] == image, kind
        assert redacted["spec"][kind][0]["env"] == [{"name": "K", "value": REDACTED}], (
            "the same text standing alone elsewhere is still a key's shape"
        )
    assert redacted["status"]["containerStatuses"] == [status]
    assert redact_object(redacted) == redacted


@pytest.mark.parametrize(
    "image",
    [
        "postgres://app:hunter2@db/x",  # not a reference: the text rules apply
        f"registry.example.com/trainer:x {AWS_SECRET}",
        f"{AWS_SECRET}",  # upper case: never a repository
    ],
)
def test_an_image_field_that_is_no_reference_is_redacted_as_text(image: str) -> None:
    redacted = redact_object(_pod())
    assert redacted["spec"]["containers"][0]["image"] == "r/app:1"
    redacted = redact_object({"spec": {"containers": [{"image": image}]}})
    assert redacted["spec"]["containers"][0]["image"] == redact_text(image) != image


def test_label_values_and_selectors_keep_what_kubernetes_matches_on() -> None:
    """Label values, node selectors, selector expressions, taints and tolerations are matched
    by equality (apimachinery labels/selector.go, component-helpers nodeaffinity, core/v1
    toleration.go ToleratesTaint): two different values both read as `<redacted>` would match.
    Their grammar (IsValidLabelValue: no `:`, `=`, `/` or space) holds nothing but a key's
    shape for the rules to find, and Kubernetes shows them to anyone who may list the object."""
    other = TAG_OF_40[::-1]
    node = {
        "kind": "Node",
        "metadata": {"name": "n", "labels": {"build": TAG_OF_40}},
        "spec": {"taints": [{"key": "pool", "value": other, "effect": "NoSchedule"}]},
    }
    term = {"key": "build", "operator": "In", "values": [other]}
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"build": TAG_OF_40}},
        "spec": {
            "nodeSelector": {"build": other},
            "tolerations": [{"key": "pool", "operator": "Equal", "value": TAG_OF_40}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [term]}]
                    }
                },
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"build": other}}}
                    ]
                },
            },
        },
    }
    assert redact_object(node) == {**node, "metadata": node["metadata"]}
    assert redact_object(pod) == pod
    annotated = {"metadata": {"annotations": {"note": TAG_OF_40}, "labels": {"x": AWS_SECRET}}}
    assert redact_object(annotated) == {
        "metadata": {"annotations": {"note": REDACTED}, "labels": {"x": REDACTED}}
    }, "an annotation is free text; a label value with `/` is no label value"
