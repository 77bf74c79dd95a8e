"""One read result type: either the objects, or a classified reason the read could not look.

The classification happens once, in this package, from status codes and exception types.
Checks match on `ReadFailure`, never on message text.
"""

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from msgspec import Struct

KubeObject = Mapping[str, Any]
"""A Kubernetes object as the API serves it (apiVersion, kind, metadata, spec, status)."""


class ReadFailure(StrEnum):
    """Why a read returned no objects."""

    NOT_FOUND = "not-found"
    """The server answered that the object is absent: a measurement, not a failure to look."""
    UNAUTHORIZED = "unauthorized"
    """The server did not accept our credentials (401)."""
    FORBIDDEN = "forbidden"
    """Our credentials may not read this (403)."""
    TIMEOUT = "timeout"
    """No answer within the request timeout."""
    UNREACHABLE = "unreachable"
    """No connection: bad address, refused, reset, TLS failure."""
    SERVER_ERROR = "server-error"
    """The server answered with an error of its own (5xx, throttling, an unexpected status)."""
    MALFORMED = "malformed"
    """The answer was not the JSON document the API promises."""
    TOO_LARGE = "too-large"
    """The answer (or a list's pages) went past truegreen's cap; nothing partial is kept."""
    NOT_CAPTURED = "not-captured"
    """Offline: the snapshot does not hold this read."""
    UNCONFIRMED = "unconfirmed"
    """The monitor holds the objects, but the cluster has not confirmed them current within its
    `--max-age` (no list, event, bookmark or clean end of the watch): nothing failed, and
    nothing can vouch for them (monitor/age.py `served`)."""

    @property
    def is_measurement(self) -> bool:
        """True when the failure itself is knowledge about the cluster (the object is absent)."""
        return self is ReadFailure.NOT_FOUND


class CantRead(Struct, frozen=True):
    """A read that returned no objects, and why. `reason` is one plain line, free of secrets."""

    failure: ReadFailure
    reason: str
    reached: bool = True
    """False when no connection to the server was ever made (refused, no route, TLS)."""
    server_message: str = ""
    """The message of the server's Status answer, when it sent one (`pods "x" is forbidden:
    exceeded quota: …`): admission refusals are quoted to the operator as the server said them."""
    todo: str = ""
    """What to do, when the failure itself says (a login plugin's advice, already the end of
    `reason`); "" otherwise."""
    login_stalled: bool = False
    """A login plugin was stopped for time: it, not the cluster, is what did not answer."""

    @property
    def is_measurement(self) -> bool:
        """True when this is a measured absence rather than a failure to look."""
        return self.failure.is_measurement


class Listed(Struct, frozen=True):
    """A list read that succeeded; every page has been fetched."""

    items: tuple[KubeObject, ...]


class Folded(Struct, frozen=True):
    """A list read folded into a summary as its pages arrived (plain JSON-able values)."""

    summary: Mapping[str, Any]


class Got(Struct, frozen=True):
    """A get read that found the object."""

    obj: KubeObject


class Patched(Struct, frozen=True):
    """A write that landed; `obj` is the object as the server stored it."""

    obj: KubeObject


class Created(Struct, frozen=True):
    """A create that the server accepted; with dry-run, admitted but not stored."""

    obj: KubeObject


class Conflict(Struct, frozen=True):
    """A write refused because the object changed since it was read (409)."""


ListRead = Listed | CantRead
GetRead = Got | CantRead
FoldRead = Folded | CantRead
PatchResult = Patched | Conflict | CantRead
"""A write's outcome; a CantRead here means the write could not be made, and why."""
CreateResult = Created | CantRead
"""A create's outcome; a refusal by admission is a CantRead carrying the server's message."""
