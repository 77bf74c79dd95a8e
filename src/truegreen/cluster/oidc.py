"""A kubeconfig `auth-provider: oidc` login: the stored id-token, used while it is valid.

Ground truth: kubernetes/client-go `plugin/pkg/client/auth/oidc/oidc.go`. kubectl sends the
`id-token` as the bearer token while its JWT `exp` is more than 10 seconds away, and otherwise
renews it at the issuer with the `refresh-token`. truegreen does not renew (it talks to nobody
but the cluster, and would have to write the kubeconfig back): an expired login is one plain
line asking the operator to log in again.
"""

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from truegreen.cluster.credentials import Credential, CredentialError
from truegreen.errors import ConnectionSetupError
from truegreen.http.deadline import Deadline

EXPIRY_DELTA = timedelta(seconds=10)
"""client-go treats a token as expired this long before its `exp`."""
LOG_IN_AGAIN = "Log in again (for example with `kubectl oidc-login`)"


class OidcLogin:
    """The id-token of one kubeconfig user's OIDC login, re-checked on every use."""

    def __init__(
        self,
        user_name: str,
        config: Mapping[str, Any],
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        """Checks the entry as client-go does: `idp-issuer-url` and `client-id` are required.

        Raises ConnectionSetupError when one is missing.
        """
        for required in ("idp-issuer-url", "client-id"):
            if not config.get(required):
                raise ConnectionSetupError(
                    f"the kubeconfig user {user_name!r} cannot log in",
                    f"its oidc auth-provider does not name its {required}",
                    "fix the user's auth-provider config in the kubeconfig",
                )
        self.user_name = user_name
        self._id_token = str(config.get("id-token") or "")
        self._can_refresh = bool(config.get("refresh-token"))
        self._clock = clock

    def current(self, deadline: Deadline | None = None) -> Credential:
        """The id-token as a bearer credential; CredentialError once it has expired."""
        if not self._id_token:
            raise self._expired("the kubeconfig holds no id-token")
        claims = _claims(self._id_token)
        exp = claims.get("exp") if claims is not None else None
        if claims is None or (exp is not None and not _is_number(exp)):
            raise CredentialError(
                f"the login of user {self.user_name!r} cannot be used",
                "its id-token is not a valid JWT",
                LOG_IN_AGAIN,
            )
        if exp is None:
            # client-go reads a missing `exp` as the zero time: long expired
            raise self._expired("its id-token carries no expiry time")
        expires_at = _time_of(exp)
        valid_until = expires_at - EXPIRY_DELTA
        if not self._clock() < valid_until:
            raise self._expired(f"its id-token expired at {expires_at:%Y-%m-%d %H:%M:%S} UTC")
        return Credential(authorization=f"Bearer {self._id_token}", expires_at=valid_until)

    def after_unauthorized(
        self, refused: Credential, deadline: Deadline | None = None
    ) -> Credential | None:
        """None: the stored token is all there is, and truegreen does not renew it."""
        return None

    def describe(self) -> str:
        """Names the login, for messages."""
        return f"the OIDC login of user {self.user_name!r}"

    @property
    def login_command(self) -> None:
        """truegreen does not run the login that renews an OIDC token."""
        return None

    def _expired(self, why: str) -> CredentialError:
        renew = (
            "truegreen does not renew it with the refresh-token as kubectl would"
            if self._can_refresh
            else "it has no refresh-token to renew it with"
        )
        return CredentialError(
            f"the login of user {self.user_name!r} has expired", f"{why}; {renew}", LOG_IN_AGAIN
        )


_BASE64URL = re.compile(r"[A-Za-z0-9_-]*", re.ASCII)


def _claims(token: str) -> dict[str, Any] | None:
    """The JWT's claims, or None when `token` is not a JWT (client-go `idTokenExpired`)."""
    parts = token.split(".")
    if len(parts) != 3 or not _BASE64URL.fullmatch(parts[1]):
        return None
    try:
        # JWTs drop base64's padding; Python's decoder wants it and ignores any surplus
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=="))
    except (binascii.Error, ValueError):
        return None
    return claims if isinstance(claims, dict) else None


def _is_number(value: object) -> bool:
    # Go's JSON has no NaN or Infinity; Python's json.loads accepts them
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _time_of(exp: float) -> datetime:
    try:
        return datetime.fromtimestamp(int(exp), UTC)
    except (OverflowError, OSError, ValueError):
        # beyond what a datetime holds: far past or far future, as its sign says
        return datetime.fromtimestamp(0, UTC) if exp < 0 else datetime.max.replace(tzinfo=UTC)
