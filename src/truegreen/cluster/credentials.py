"""Who truegreen says it is to the API server: the credential a kubeconfig user entry yields.

A credential source may run a plugin (exec, OIDC) and may expire; the client asks it again on
expiry and after a 401, as client-go does.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from truegreen.errors import TruegreenError
from truegreen.exitcodes import ExitCode
from truegreen.http.tls import ClientCertificate


@dataclass(frozen=True)
class Credential:
    """What to present on a request. `repr` never shows a secret."""

    authorization: str | None = None
    """The Authorization header value (`Bearer …`, `Basic …`), if any."""
    certificate: ClientCertificate | None = None
    """A client certificate for the TLS handshake, if any."""
    expires_at: datetime | None = None
    """When the source must be asked again (an exec plugin's expirationTimestamp)."""

    def __repr__(self) -> str:
        kind = (
            "authorization" if self.authorization else "certificate" if self.certificate else "none"
        )
        return f"Credential({kind}, expires_at={self.expires_at!r})"


class CredentialSource(Protocol):
    """Yields the credential to present; may run a plugin, may raise `CredentialError`."""

    def current(self) -> Credential:
        """The credential to use now (cached until it expires)."""
        ...

    def after_unauthorized(self) -> Credential | None:
        """A fresh credential after the server answered 401, or None when asking again cannot
        help (a static token)."""
        ...

    def describe(self) -> str:
        """Plain words naming the source, for messages: `the token of user 'admin'`."""
        ...


class CredentialError(TruegreenError):
    """No credential could be obtained: a plugin is missing, failed, or answered garbage.

    Its line quotes what the operator needs (the plugin's installHint or its own error output);
    exit 3, because the cluster could not be checked.
    """

    exit_code = ExitCode.UNKNOWN
