"""A watch: the changes to a collection, streamed as kube-apiserver streams them.

The answer to `?watch=1` is a chunked body of JSON lines, `{"type": ..., "object": ...}`
(staging/src/k8s.io/apimachinery/pkg/watch/json/types.go). ADDED, MODIFIED and DELETED carry
the object; BOOKMARK only a resourceVersion the client has caught up to; ERROR a Status (a 410
Expired when the version asked for is older than the server keeps). Every object leaves here
with its kind stamped, like every other read of this package. Errors are values: a stream
tells how it ended once it has been read to its end.
"""

from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import Any

import msgspec
from msgspec import Struct

from truegreen.cluster.classify import classify, from_status
from truegreen.cluster.kinds import Kind, stamp
from truegreen.cluster.reads import CantRead, ReadFailure
from truegreen.http.transport import LineStream

MAX_EVENT_BYTES = 16 << 20
"""Bytes per event line: one object (etcd refuses objects above 1.5 MB) and its envelope."""


class Change(StrEnum):
    """What happened to an object, as a watch event names it."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    """Nothing changed: the server says the client has seen everything up to this version."""


ObjectKey = tuple[str, str]
"""(namespace, name); the namespace is "" for a cluster-wide kind."""


class WatchEvent(Struct, frozen=True):
    """One change; `obj` is None for a bookmark and for an object the watch was not to decode."""

    change: Change
    resource_version: str
    key: ObjectKey
    obj: Any


class Closed(Struct, frozen=True):
    """The stream ended without an error: the server's timeout ended it (`clean`), or the
    connection broke or went quiet (not clean). Watch again from the last version seen."""

    clean: bool


class Expired(Struct, frozen=True):
    """410: the version asked for is older than the server keeps. List again."""

    message: str


WatchEnd = Closed | Expired | CantRead
"""How a stream ended; a CantRead is an ERROR event or an answer that was not an event."""


class WatchRefused(Struct, frozen=True):
    """The watch could not be opened."""

    cant: CantRead
    status: int | None
    """The HTTP status of the refusal; None when no answer came."""

    @property
    def retry_watch(self) -> bool:
        """Whether to watch again after a back-off without listing again: a refused
        connection or a 429, as client-go's reflector decides (`isWatchErrorRetriable`)."""
        return self.status == 429 or (
            self.status is None and self.cant.failure is ReadFailure.UNREACHABLE
        )


class ListedAt(Struct, frozen=True):
    """A whole list and the resourceVersion it was read at (a watch starts from there)."""

    items: tuple[tuple[ObjectKey, Any], ...]
    resource_version: str


class _Identity(msgspec.Struct, rename="camel"):
    name: str = ""
    namespace: str = ""
    resource_version: str = ""


class _Identified(msgspec.Struct):
    metadata: _Identity = msgspec.field(default_factory=_Identity)


class _Event(msgspec.Struct):
    type: str
    object: msgspec.Raw


class _StatusObject(msgspec.Struct):
    code: int = 0
    reason: str = ""
    message: str = ""


_decode_event = msgspec.json.Decoder(_Event).decode
_decode_identity = msgspec.json.Decoder(_Identified).decode
_decode_status = msgspec.json.Decoder(_StatusObject).decode
_CHANGES = {c.value: c for c in Change}


def object_decoder(kind: Kind, view: type[Any] | None) -> Callable[[bytes], Any]:
    """Decodes one object into `view` (or a dict), stamped with `kind`."""
    if view is None:
        decode_dict = msgspec.json.Decoder(dict[str, Any]).decode
        return lambda raw: stamp(decode_dict(raw), kind)
    from truegreen.cluster.endpoints import view_stamper

    decode_view = msgspec.json.Decoder(view).decode
    stamp_view = view_stamper(view, kind)

    def decode(raw: bytes) -> Any:
        item = decode_view(raw)
        if stamp_view is not None:
            stamp_view(item)
        return item

    return decode


class WatchStream:
    """The events of one open watch; `end` says how it ended once iteration stops.

    Iterate it once. Close it (or leave the `with` block) to drop the connection early.
    """

    def __init__(
        self,
        lines: LineStream,
        kind: Kind,
        view: type[Any] | None,
        action: str,
        wanted: Callable[[ObjectKey], bool] | None = None,
    ):
        self._lines = lines
        self._decode = object_decoder(kind, view)
        self._wanted = wanted
        """Which objects to decode; the others' events carry their key alone (a fleet's watch of
        every namespace drops the other namespaces' objects: decoding them would be most of its
        cost)."""
        self._action = action
        self.end: WatchEnd | None = None
        self.events = 0
        self._dropped = False

    def __iter__(self) -> Iterator[WatchEvent]:
        try:
            for line in self._lines.lines():
                event = self._event(line)
                if isinstance(event, WatchEvent):
                    self.events += 1
                    yield event
                elif event is not None:
                    self.end = event
                    return
        except Exception as error:
            # A stream dropped by `close()` from another thread fails in whatever way its socket
            # was caught (a closed descriptor): that is the drop, not a failure.
            if self._dropped:
                self.end = Closed(clean=False)
                return
            found = classify(error, self._action)
            if found is None:
                raise
            broken = found.failure in (ReadFailure.TIMEOUT, ReadFailure.UNREACHABLE)
            self.end = Closed(clean=False) if broken else found
            return
        finally:
            self._lines.close()
        self.end = Closed(clean=not self._dropped)

    def _event(self, line: bytes) -> WatchEvent | WatchEnd | None:
        """The event on one line; how the stream ends for an ERROR; None for a type this
        client does not know (client-go's reflector skips those too)."""
        event = _decode_event(line)
        raw = bytes(event.object)
        if event.type == "ERROR":
            status = _decode_status(raw)
            if status.code == 410:
                return Expired(status.message)
            return from_status(status.code or 500, raw, self._action)
        change = _CHANGES.get(event.type)
        if change is None:
            return None
        meta = _decode_identity(raw).metadata
        key = (meta.namespace, meta.name)
        wanted = self._wanted
        skip = change is Change.BOOKMARK or (wanted is not None and not wanted(key))
        return WatchEvent(change, meta.resource_version, key, None if skip else self._decode(raw))

    def close(self) -> None:
        """Drop the connection; an iteration under way ends as an unclean close."""
        self._dropped = True
        self._lines.close()

    def __enter__(self) -> "WatchStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def key_of(obj: Any) -> ObjectKey:
    """(namespace, name) of a dict object or of a view with a `metadata` holding them."""
    if isinstance(obj, dict):
        meta = obj.get("metadata") or {}
        return str(meta.get("namespace") or ""), str(meta.get("name") or "")
    meta = obj.metadata
    return str(getattr(meta, "namespace", "") or ""), str(getattr(meta, "name", "") or "")
