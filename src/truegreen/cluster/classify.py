"""The single place where a failed API call becomes a `ReadFailure`.

Status codes and exception classes decide; message strings never do. Reasons are written here
in plain words and never quote response bodies, which may carry secrets; the one exception is
the `message` of a Kubernetes Status answer, kept apart in `CantRead.server_message`.
"""

import msgspec

from truegreen.cluster.credentials import CredentialError, PluginNoAnswerError
from truegreen.cluster.reads import CantRead, ReadFailure
from truegreen.http.errors import (
    AddressNotFoundError,
    AnswerTooLargeError,
    CertificateNameError,
    CommonNameOnlyError,
    ConnectFailedError,
    ConnectionDroppedError,
    ConnectRefusedError,
    InvalidRequestError,
    ProtocolViolationError,
    ProxyFailedError,
    TimedOutError,
    TlsClosedError,
    TlsFailedError,
)
from truegreen.http.framing import Body

SERVER_MESSAGE_LIMIT = 500
"""Characters of a Status answer's message kept for the operator."""


class MalformedAnswerError(ValueError):
    """An answer that parsed as JSON but is not the document the API promises."""


class TooManyPagesError(Exception):
    """A list whose continue tokens did not end within the page cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the list had more than {limit:,} pages")


class RunTimeLimitError(Exception):
    """The whole run's deadline passed: no more requests are sent."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the run's time limit of {seconds:g} s passed")


_STATUS_FAILURES = {
    401: ReadFailure.UNAUTHORIZED,
    403: ReadFailure.FORBIDDEN,
    404: ReadFailure.NOT_FOUND,
}


def failure_for_status(code: int) -> ReadFailure:
    """The failure an HTTP status code means for a read."""
    return _STATUS_FAILURES.get(code, ReadFailure.SERVER_ERROR)


def describe(failure: ReadFailure, action: str, detail: str = "") -> str:
    """One plain line saying why `action` ("list pods") could not look."""
    if failure is ReadFailure.TOO_LARGE and detail:
        return f"{action}: {detail}"
    text = {
        ReadFailure.NOT_FOUND: f"{action}: not found",
        ReadFailure.UNAUTHORIZED: f"{action}: the cluster did not accept the credentials",
        ReadFailure.FORBIDDEN: f"{action}: no permission",
        ReadFailure.TIMEOUT: f"{action}: no answer in time",
        ReadFailure.UNREACHABLE: f"{action}: could not connect",
        ReadFailure.SERVER_ERROR: f"{action}: the cluster answered with an error",
        ReadFailure.MALFORMED: f"{action}: the cluster's answer was not valid",
        ReadFailure.TOO_LARGE: f"{action}: the cluster's answer was too large",
        ReadFailure.NOT_CAPTURED: f"{action}: not in the snapshot",
        ReadFailure.UNCONFIRMED: f"{action}: not confirmed by the cluster",
    }[failure]
    return f"{text} ({detail})" if detail else text


class _Details(msgspec.Struct):
    name: str = ""


class _Status(msgspec.Struct):
    kind: str = ""
    message: str = ""
    details: _Details | None = None


def _status(body: Body) -> _Status | None:
    """The Kubernetes Status an answer's body holds; None for any other body."""
    try:
        status = msgspec.json.decode(body, type=_Status)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return status if status.kind == "Status" else None


def server_message(body: Body) -> str:
    """The `message` of a Kubernetes Status answer, bounded; "" for any other body."""
    status = _status(body)
    if status is None:
        return ""
    message = status.message
    return message if len(message) <= SERVER_MESSAGE_LIMIT else message[:SERVER_MESSAGE_LIMIT] + "…"


def names_object(body: Body, name: str) -> bool:
    """Whether a 404's body is the API server saying that the object `name` does not exist:
    its NotFound Status names the object (apimachinery errors.go `NewNotFound` fills
    `details.name`). A path the server does not serve, or something that is not the API server
    (a server address with a wrong path, a proxy), names none."""
    status = _status(body)
    return status is not None and status.details is not None and status.details.name == name


def no_api_at_address(action: str) -> CantRead:
    """A 404 where every Kubernetes API server answers (discovery, a built-in collection):
    what answers at the address is not the API server, so no read there can succeed."""
    return CantRead(
        ReadFailure.UNREACHABLE,
        f"{action}: not the API server (nothing at this address serves the Kubernetes API; "
        "it answers 404 not found)",
        reached=False,
    )


def unnamed_not_found(action: str, body: Body) -> CantRead:
    """A 404 that measures no absence: not the API server's NotFound for what was asked."""
    return CantRead(
        ReadFailure.SERVER_ERROR,
        describe(
            ReadFailure.SERVER_ERROR, action, "404, but not the API server saying what is absent"
        ),
        server_message=server_message(body),
    )


def from_status(code: int, body: Body, action: str) -> CantRead:
    """The failure of an answer with a non-success status code."""
    failure = failure_for_status(code)
    return CantRead(
        failure, describe(failure, action, str(code)), server_message=server_message(body)
    )


# Refused, no route, DNS or TLS failure: no answer was ever possible, so no later read can
# succeed either. A dropped or slow connection says nothing about the next request.
_CONNECT_CAUSES: tuple[tuple[type[ConnectFailedError], str], ...] = (
    (
        CommonNameOnlyError,
        "TLS certificate does not name this server among its subject alternative names, as "
        "it must; a Common Name alone is not enough",
    ),
    (CertificateNameError, "TLS certificate does not name this server"),
    (TlsClosedError, "the server closed the connection during TLS setup"),
    (TlsFailedError, "TLS certificate was not accepted"),
    (ConnectRefusedError, "connection refused"),
    (AddressNotFoundError, "address not found"),
    (ConnectFailedError, "no route to the server"),
)


def classify(error: Exception, action: str) -> CantRead | None:
    """Classify an exception raised by an API call; None when it is not a read failure."""
    if isinstance(error, TimedOutError):
        return CantRead(ReadFailure.TIMEOUT, describe(ReadFailure.TIMEOUT, action), error.connected)
    if isinstance(error, RunTimeLimitError):
        return CantRead(ReadFailure.TIMEOUT, describe(ReadFailure.TIMEOUT, action, str(error)))
    if isinstance(error, ConnectFailedError):
        cause = (
            error.cause  # names the proxy and what it did, in plain words
            if isinstance(error, ProxyFailedError)
            else next(words for cls, words in _CONNECT_CAUSES if isinstance(error, cls))
        )
        return CantRead(
            ReadFailure.UNREACHABLE, describe(ReadFailure.UNREACHABLE, action, cause), False
        )
    if isinstance(error, InvalidRequestError):
        # Refused before it was sent (a credential holding a line break): as with a
        # connection never made, no later read can succeed either.
        return CantRead(
            ReadFailure.UNREACHABLE, describe(ReadFailure.UNREACHABLE, action, str(error)), False
        )
    if isinstance(error, ConnectionDroppedError):
        return CantRead(
            ReadFailure.UNREACHABLE, describe(ReadFailure.UNREACHABLE, action, "connection dropped")
        )
    if isinstance(error, AnswerTooLargeError):
        detail = f"the server's answer was larger than {_size(error.limit)}"
        return CantRead(ReadFailure.TOO_LARGE, describe(ReadFailure.TOO_LARGE, action, detail))
    if isinstance(error, TooManyPagesError):
        return CantRead(ReadFailure.TOO_LARGE, describe(ReadFailure.TOO_LARGE, action, str(error)))
    if isinstance(
        error,
        ProtocolViolationError
        | msgspec.DecodeError
        | msgspec.ValidationError
        | MalformedAnswerError,
    ):
        return CantRead(ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, action))
    if isinstance(error, PluginNoAnswerError):
        # No login either, but the plugin is what did not answer; a TIMEOUT would blame the
        # cluster, which was never asked.
        return CantRead(
            ReadFailure.UNAUTHORIZED,
            error.line(),
            reached=False,
            todo=error.todo,
            login_stalled=True,
        )
    if isinstance(error, CredentialError):
        # No login could be obtained (a plugin failed, a token file vanished): nothing was
        # sent, so this reads as the cluster being out of reach, with the plugin's own line.
        return CantRead(ReadFailure.UNAUTHORIZED, error.line(), reached=False, todo=error.todo)
    return None


def _size(limit: int) -> str:
    """`64 MiB` for a whole number of MiB, else the byte count."""
    return f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit:,} bytes"
