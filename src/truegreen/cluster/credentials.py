"""Who truegreen says it is to the API server: the credential a kubeconfig user entry yields.

A credential source may run a plugin (exec, OIDC) and may expire; the client asks it again on
expiry and after a 401, as client-go does.
"""

import base64
import binascii
import stat
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from msgspec import Struct

from truegreen.cluster.kubeconfig_file import openable
from truegreen.errors import TruegreenError
from truegreen.exitcodes import ExitCode
from truegreen.http.deadline import Deadline
from truegreen.http.tls import ClientCertificate
from truegreen.textsafe import terminal_safe

REDACTED = b"<redacted>"
SHORTEST_SECRET = 4
"""A credential's part shorter than this is not looked for in an answer."""


class Credential(Struct, frozen=True):
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

    def without_secret(self, body: bytes) -> bytes:
        """`body` with every form of this credential's secret replaced by `<redacted>`: a
        server, or a proxy before it, may quote the request's Authorization header in its
        answer, and an answer's message is shown to the operator. The forms: the header's
        value after its scheme, and a Basic login's decoded `user:password` and password."""
        for secret in self._secret_forms():
            body = body.replace(secret, REDACTED)
        return body

    def _secret_forms(self) -> list[bytes]:
        scheme, _, value = (self.authorization or "").partition(" ")
        forms = [value.strip()]
        if scheme.lower() == "basic":
            try:
                login = base64.b64decode(value.strip(), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                login = ""
            forms += [login, login.partition(":")[2]]
        # Longest first, so a password inside its `user:password` leaves no part of it behind;
        # a form this short would blank out ordinary words.
        found = sorted({f.encode() for f in forms if len(f) >= SHORTEST_SECRET}, key=len)
        return found[::-1]


class CredentialSource(Protocol):
    """Yields the credential to present; may run a plugin, may raise `CredentialError`."""

    def current(self, deadline: Deadline | None = None) -> Credential:
        """The credential to use now (cached until it expires). A plugin still running at
        `deadline` (the run's time limit) is stopped."""
        ...

    def after_unauthorized(
        self, refused: Credential, deadline: Deadline | None = None
    ) -> Credential | None:
        """A fresher credential than `refused`, the one the server just answered 401 to, or
        None when asking again cannot help (a static token); `deadline` as for `current`."""
        ...

    def describe(self) -> str:
        """Plain words naming the source, for messages: `the token of user 'admin'`."""
        ...

    @property
    def login_command(self) -> str | None:
        """The command a person runs to log in again (a credential plugin's), else None."""
        ...


class CredentialError(TruegreenError):
    """No credential could be obtained: a plugin is missing, failed, or answered garbage.

    Its line quotes what the operator needs (the plugin's installHint or its own error output);
    exit 3, because the cluster could not be checked.
    """

    exit_code = ExitCode.UNKNOWN


class PluginNoAnswerError(CredentialError):
    """A login plugin was still running when its time, or the run's, ran out, and was stopped.

    Apart from other login failures so that the plugin, not the cluster, is named as the one
    that did not answer (classify.py); `todo` is the plugin's command line to run by hand."""


class StaticCredentials:
    """A credential written in the kubeconfig itself: a token, a login, a client certificate
    (or none at all). Asking again after a 401 cannot help."""

    def __init__(self, credential: Credential, description: str) -> None:
        self._credential = credential
        self._description = description

    def current(self, deadline: Deadline | None = None) -> Credential:
        """The one credential this source has."""
        return self._credential

    def after_unauthorized(
        self, refused: Credential, deadline: Deadline | None = None
    ) -> Credential | None:
        """Nothing fresher exists."""
        return None

    def describe(self) -> str:
        """Plain words naming the source."""
        return self._description

    @property
    def login_command(self) -> None:
        """No command renews this credential."""
        return None


def basic_authorization(username: str, password: str) -> str:
    """The Authorization header value of an HTTP Basic login."""
    import base64

    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode("ascii")


TOKEN_FILE_MAX_BYTES = 1 << 20
"""A token file larger than this is refused: a token is a few kilobytes (a service account's
JWT, an OIDC id-token), and a file that never ends (`/dev/zero`) must not fill the memory."""


class _TokenFileError(Exception):
    """A token file that is not one: not a regular file, too large, or holding no token."""


def _read_token(path: Path) -> str:
    """The token in `path`: a regular file (a FIFO or a device would block or never end) of at
    most TOKEN_FILE_MAX_BYTES, holding more than blanks."""
    if not stat.S_ISREG(openable(path).stat().st_mode):
        raise _TokenFileError("it is not a regular file")
    with path.open("rb") as file:
        data = file.read(TOKEN_FILE_MAX_BYTES + 1)
    if len(data) > TOKEN_FILE_MAX_BYTES:
        raise _TokenFileError(f"it is larger than {TOKEN_FILE_MAX_BYTES >> 20} MiB")
    token = data.decode("utf-8").strip()
    if not token:
        # client-go's fileTokenSource refuses it too ("read empty token from file")
        raise _TokenFileError("it holds no token")
    return token


class TokenFileCredentials:
    """A bearer token kept in a file that something else rotates (a service account's token).

    Re-read at most once a minute, and at once after a 401, as client-go's cachingTokenSource
    does (`transport/token_source.go`); when a re-read fails, the last token read stays in use.
    """

    PERIOD = 60.0
    """Seconds a token read from the file is used before the file is read again."""

    def __init__(
        self,
        path: Path,
        description: str,
        *,
        certificate: ClientCertificate | None = None,
        fallback: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._path = path
        self._description = description
        self._certificate = certificate
        self._clock = clock
        self._lock = threading.Lock()
        self._token = fallback
        self._read_at: float | None = None
        self._refresh(initial=fallback is None)

    def _refresh(self, *, initial: bool = False) -> None:
        try:
            token = _read_token(self._path)
        except (OSError, UnicodeDecodeError, _TokenFileError) as error:
            if initial:
                raise CredentialError(
                    f"cannot read the token file {terminal_safe(str(self._path))}",
                    getattr(error, "strerror", None) or str(error) or type(error).__name__,
                    "check the file, or the kubeconfig's tokenFile",
                ) from None
            return
        self._token = token
        self._read_at = self._clock()

    def _credential(self) -> Credential:
        authorization = f"Bearer {self._token}" if self._token else None
        return Credential(authorization, self._certificate)

    def current(self, deadline: Deadline | None = None) -> Credential:
        """The token, re-read from the file when the last read is a minute old."""
        with self._lock:
            if self._read_at is None or self._clock() - self._read_at >= self.PERIOD:
                self._refresh()
            return self._credential()

    def after_unauthorized(
        self, refused: Credential, deadline: Deadline | None = None
    ) -> Credential | None:
        """Re-read the file now; a token other than the refused one is worth one more try
        (the file may have been re-read for another request since this one was sent)."""
        with self._lock:
            self._refresh()
            fresh = self._credential()
            return fresh if fresh.authorization != refused.authorization else None

    def describe(self) -> str:
        """Plain words naming the source."""
        return self._description

    @property
    def login_command(self) -> None:
        """No command renews this credential."""
        return None
