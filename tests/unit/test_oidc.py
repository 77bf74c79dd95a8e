"""`auth-provider: oidc`: the stored id-token while client-go would still use it, else one line.

Ground truth: client-go `plugin/pkg/client/auth/oidc/oidc.go` (`idToken`, `idTokenExpired`):
valid while now + 10 s is before the JWT's `exp`; a token that is not three dot-separated parts
is an error; no `exp` reads as the zero time.
"""

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from truegreen.cluster.auth_plugins import plugin_credentials
from truegreen.cluster.credentials import Credential, CredentialError
from truegreen.cluster.oidc import OidcLogin
from truegreen.errors import ConnectionSetupError
from truegreen.exitcodes import ExitCode

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
LOG_IN = "Log in again (for example with `kubectl oidc-login`)"


def jwt(claims: Any) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2lnbmF0dXJl"


def config(id_token: str | None, refresh: bool = False) -> dict[str, str]:
    entry = {"idp-issuer-url": "https://login.example", "client-id": "kubectl"}
    if id_token is not None:
        entry["id-token"] = id_token
    if refresh:
        entry["refresh-token"] = "refresh-s3cret"
    return entry


def login(entry: dict[str, str], now: datetime = NOW) -> OidcLogin:
    return OidcLogin("carol", entry, clock=lambda: now)


def refusal(entry: dict[str, str], now: datetime = NOW) -> CredentialError:
    with pytest.raises(CredentialError) as raised:
        login(entry, now).current()
    assert raised.value.exit_code == ExitCode.UNKNOWN
    return raised.value


def test_a_valid_id_token_is_the_bearer_until_ten_seconds_before_it_expires() -> None:
    token = jwt({"sub": "carol", "exp": int((NOW + timedelta(hours=1)).timestamp())})
    assert login(config(token)).current() == Credential(
        authorization=f"Bearer {token}", expires_at=NOW + timedelta(minutes=59, seconds=50)
    )


@pytest.mark.parametrize(("seconds_left", "usable"), [(11, True), (10, False), (9, False)])
def test_a_token_within_ten_seconds_of_its_expiry_is_already_expired(
    seconds_left: int, usable: bool
) -> None:
    token = jwt({"exp": int(NOW.timestamp()) + seconds_left})
    if usable:
        assert login(config(token)).current().authorization == f"Bearer {token}"
    else:
        assert refusal(config(token)).what == "the login of user 'carol' has expired"


def test_an_expired_token_is_one_line_saying_log_in_again_and_that_we_do_not_renew() -> None:
    token = jwt({"exp": int(NOW.timestamp()) - 3600})
    error = refusal(config(token, refresh=True))
    assert error.line() == (
        "the login of user 'carol' has expired: its id-token expired at 2026-12-01 11:00:00 UTC;"
        " truegreen does not renew it with the refresh-token as kubectl would. " + LOG_IN
    )
    assert "refresh-s3cret" not in error.line()
    assert token not in error.line()


def test_a_missing_id_token_without_a_refresh_token_is_the_same_plain_line() -> None:
    assert refusal(config(None)).line() == (
        "the login of user 'carol' has expired: the kubeconfig holds no id-token; it has no "
        "refresh-token to renew it with. " + LOG_IN
    )


def test_a_token_without_exp_reads_as_long_expired_as_client_go_reads_it() -> None:
    assert refusal(config(jwt({"sub": "carol"}))).why.startswith(
        "its id-token carries no expiry time"
    )


@pytest.mark.parametrize(
    "token",
    [
        "not-a-jwt",
        "a.b",
        "a.!!!.c",
        f"a.{base64.urlsafe_b64encode(b'not json').decode()}.c",
        jwt(["a", "list"]),
        jwt({"exp": "tomorrow"}),
        jwt({"exp": True}),
        "a." + base64.urlsafe_b64encode(b'{"exp": NaN}').decode().rstrip("=") + ".c",
        # characters outside base64url, which Python's decoder would silently skip
        jwt({"exp": 4102444800}).replace(".", ".*", 1),
        jwt({"exp": 4102444800}).replace(".", ".+", 1),
    ],
)
def test_a_token_that_is_not_a_jwt_is_one_line(token: str) -> None:
    assert refusal(config(token)).line() == (
        "the login of user 'carol' cannot be used: its id-token is not a valid JWT. " + LOG_IN
    )


def test_an_exp_beyond_what_a_date_holds_is_far_future_not_a_crash() -> None:
    token = jwt({"exp": 10**20})
    assert login(config(token)).current().authorization == f"Bearer {token}"


def test_an_exp_before_what_a_date_holds_is_long_expired_not_a_crash() -> None:
    assert refusal(config(jwt({"exp": -(10**20)}))).why.startswith(
        "its id-token expired at 1970-01-01 00:00:00 UTC;"
    )


@pytest.mark.parametrize("name_length", [0, 1, 2])
def test_a_payload_of_any_length_decodes(name_length: int) -> None:
    # these payloads encode to 0, 2 and 3 characters mod 4: no, two and one "=" were dropped
    token = jwt({"exp": 4102444800, "sub": "c" * name_length})
    assert login(config(token)).current().authorization == f"Bearer {token}"


def test_asking_again_after_a_401_cannot_help() -> None:
    token = jwt({"exp": int(NOW.timestamp()) + 3600})
    source = login(config(token))
    assert source.after_unauthorized(source.current()) is None
    assert source.describe() == "the OIDC login of user 'carol'"


@pytest.mark.parametrize("missing", ["idp-issuer-url", "client-id"])
def test_an_oidc_entry_without_issuer_or_client_is_refused_as_client_go_refuses_it(
    missing: str, tmp_path: Path
) -> None:
    entry = config(jwt({"exp": 0}))
    del entry[missing]
    with pytest.raises(ConnectionSetupError) as raised:
        plugin_credentials(
            "carol",
            {"auth-provider": {"name": "oidc", "config": entry}},
            base_dir=tmp_path,
            cluster={},
        )
    assert raised.value.line() == (
        f"the kubeconfig user 'carol' cannot log in: its oidc auth-provider does not name its "
        f"{missing}. fix the user's auth-provider config in the kubeconfig"
    )


def test_plugin_credentials_hands_an_oidc_user_its_login(tmp_path: Path) -> None:
    token = jwt({"exp": int(datetime.now(UTC).timestamp()) + 3600})
    source = plugin_credentials(
        "carol",
        {"auth-provider": {"name": "oidc", "config": config(token)}},
        base_dir=tmp_path,
        cluster={},
    )
    assert source.current().authorization == f"Bearer {token}"


@pytest.mark.parametrize(
    ("name", "instead"),
    [
        ("gcp", "the gke-gcloud-auth-plugin credential plugin"),
        ("azure", "the kubelogin credential plugin"),
    ],
)
def test_the_auth_providers_kubectl_removed_say_what_replaced_them(
    name: str, instead: str, tmp_path: Path
) -> None:
    with pytest.raises(ConnectionSetupError) as raised:
        plugin_credentials("dave", {"auth-provider": {"name": name}}, base_dir=tmp_path, cluster={})
    assert raised.value.what == f"the kubeconfig user 'dave' logs in with the {name} auth-provider"
    assert raised.value.why == "kubectl removed it in version 1.26"
    assert raised.value.todo.startswith(f"Use {instead}")
    assert raised.value.exit_code == ExitCode.UNKNOWN


def test_an_unknown_auth_provider_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConnectionSetupError) as raised:
        plugin_credentials(
            "dave", {"auth-provider": {"name": "keystone\x1b"}}, base_dir=tmp_path, cluster={}
        )
    assert raised.value.why == 'no auth-provider is known by the name "keystone\\x1b"'
