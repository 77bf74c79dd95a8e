"""The single place where a failed API call becomes a `ReadFailure`.

Status codes and exception types decide; message strings never do. Reasons are written here
in plain words and never quote response bodies, which may carry secrets.
"""

import json

import httpx2
import msgspec
from lightkube.core.exceptions import ApiError, ConfigError

from truegreen.cluster.reads import CantRead, ReadFailure


class MalformedAnswerError(ValueError):
    """An answer that parsed as JSON but is not the document the API promises."""


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
    text = {
        ReadFailure.NOT_FOUND: f"{action}: not found",
        ReadFailure.UNAUTHORIZED: f"{action}: the cluster did not accept the credentials",
        ReadFailure.FORBIDDEN: f"{action}: no permission",
        ReadFailure.TIMEOUT: f"{action}: no answer in time",
        ReadFailure.UNREACHABLE: f"{action}: could not connect",
        ReadFailure.SERVER_ERROR: f"{action}: the cluster answered with an error",
        ReadFailure.MALFORMED: f"{action}: the cluster's answer was not valid",
        ReadFailure.NOT_CAPTURED: f"{action}: not in the snapshot",
    }[failure]
    return f"{text} ({detail})" if detail else text


def classify(error: Exception, action: str) -> CantRead | None:
    """Classify an exception raised by an API call; None when it is not a read failure."""
    if isinstance(error, ApiError | httpx2.HTTPStatusError):
        code = error.response.status_code
        return CantRead(
            failure_for_status(code), describe(failure_for_status(code), action, str(code))
        )
    # Refused, no route, DNS or TLS failure: no answer was ever possible, so no later read
    # can succeed either. A dropped or slow connection says nothing about the next request.
    reached = not isinstance(error, httpx2.ConnectError | httpx2.ConnectTimeout)
    if isinstance(error, httpx2.TimeoutException):
        return CantRead(ReadFailure.TIMEOUT, describe(ReadFailure.TIMEOUT, action), reached)
    if isinstance(error, httpx2.TransportError):
        cause = _transport_cause(error)
        return CantRead(
            ReadFailure.UNREACHABLE, describe(ReadFailure.UNREACHABLE, action, cause), reached
        )
    if isinstance(
        error,
        json.JSONDecodeError | msgspec.DecodeError | msgspec.ValidationError | MalformedAnswerError,
    ):
        return CantRead(ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, action))
    if isinstance(error, ValueError | TypeError):
        # Raised while lightkube builds an object from an answer of the wrong shape (a JSON
        # array where an object belongs); only the API call is inside the caller's try block.
        return CantRead(ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, action))
    if isinstance(error, ConfigError):
        # An exec credential plugin or token file failed while authenticating the request.
        return CantRead(
            ReadFailure.UNAUTHORIZED,
            describe(ReadFailure.UNAUTHORIZED, action, "could not obtain credentials"),
        )
    return None


def _transport_cause(error: httpx2.TransportError) -> str:
    """A short, secret-free cause for a connection failure (refused, reset, certificate)."""
    lowered = str(error).lower()
    if "certificate" in lowered or "ssl" in lowered:
        return "TLS certificate was not accepted"
    if "refused" in lowered:
        return "connection refused"
    if "name or service not known" in lowered or "nodename nor servname" in lowered:
        return "address not found"
    if isinstance(error, httpx2.RemoteProtocolError | httpx2.ReadError):
        return "connection dropped"
    return type(error).__name__
