"""The Kubernetes Event the monitor leaves on the namespace when the verdict changes.

One Event per change, so `kubectl get events` and every event-based tool show when training
stopped (or started) being able to run, with the headline as the message. Written as client-go's
recorder writes a core/v1 Event (tools/record/event.go `makeEvent`): named `<object>.<hex
nanoseconds>`, count 1, first and last timestamp, the writer in `source.component` and
`reportingComponent`. The involved object is the Namespace; its namespace field is set to the
Event's own, which core/v1 validation requires of an Event stored in that namespace.

A verdict that flaps is written as client-go's recorder writes a repeated Event
(tools/record/events_cache.go EventCorrelator; event.go recordToSink): an Event identical to one
written before (source, involved object, type, reason, message) PATCHes that one, count+1 and a
new lastTimestamp; and one source writes about one object a burst of SPAM_BURST, then one per
SPAM_SECONDS (the EventSourceObjectSpamFilter), the others dropped.
"""

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from msgspec import Struct

from truegreen.doctor.knowledge.reports import MONITOR_COMPONENT
from truegreen.doctor.rollup import Verdict

COMPONENT = MONITOR_COMPONENT
"""Who the Events say wrote them; doctor never takes what it wrote for the cluster's word."""
MESSAGE_LIMIT = 1024
"""events.k8s.io/v1 refuses a note longer than this; core/v1 Events are kept to it too."""
REASONS = {
    Verdict.READY: "TrainingReady",
    Verdict.NOT_READY: "TrainingNotReady",
    Verdict.UNKNOWN: "TrainingUnknown",
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SPAM_BURST = 25
"""Events one source may write about one object at once (client-go defaultSpamBurst)."""
SPAM_SECONDS = 300.0
"""Then one per this many seconds (client-go defaultSpamQPS, 1/300)."""
REMEMBERED = 4096
"""Events remembered for patching, the least recently seen forgotten (maxLruCacheEntries)."""


def event_due(previous: Verdict | None, verdict: Verdict) -> bool:
    """An Event is written for the first verdict the monitor reaches and for every change."""
    return previous is not verdict


def verdict_event(
    verdict: Verdict, headline: str, *, namespace: str, now: datetime, instance: str
) -> dict[str, Any]:
    """The core/v1 Event for reaching `verdict`, with `headline` as its message."""
    nanoseconds = (now - _EPOCH) // timedelta(microseconds=1) * 1000
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    message = headline if len(headline) <= MESSAGE_LIMIT else headline[: MESSAGE_LIMIT - 1] + "…"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{namespace}.{nanoseconds:x}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Namespace",
            "name": namespace,
            "namespace": namespace,
        },
        "reason": REASONS[verdict],
        "message": message,
        "type": "Normal" if verdict is Verdict.READY else "Warning",
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": instance[:128],
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


class Write(Struct, frozen=True):
    """How to write one Event: create it, or PATCH the one it repeats with `patch`."""

    event: dict[str, Any]
    patch: dict[str, Any] | None = None


def _event_key(event: Mapping[str, Any]) -> tuple[str, ...]:
    """client-go getEventKey: what makes two Events the same Event."""
    involved = event.get("involvedObject") or {}
    return (
        *_spam_key(event),
        str(involved.get("fieldPath", "")),
        *(str(event.get(f, "")) for f in ("type", "reason", "message")),
    )


def _spam_key(event: Mapping[str, Any]) -> tuple[str, ...]:
    """client-go getSpamKey: the source and the object an Event is about."""
    source = event.get("source") or {}
    involved = event.get("involvedObject") or {}
    return (
        str(source.get("component", "")),
        str(source.get("host", "")),
        *(str(involved.get(f, "")) for f in ("kind", "namespace", "name", "uid", "apiVersion")),
    )


class _Seen(Struct, frozen=True):
    name: str
    count: int
    first: str


class _Bucket:
    """A token bucket: `burst` tokens, one more every `seconds` (flowcontrol's passive one)."""

    def __init__(self, now: float) -> None:
        self.tokens = float(SPAM_BURST)
        self.at = now

    def take(self, now: float) -> bool:
        self.tokens = min(float(SPAM_BURST), self.tokens + (now - self.at) / SPAM_SECONDS)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class EventCorrelator:
    """client-go's EventCorrelator, for the monitor's Events: `correlate` says how to write an
    Event (None: dropped by the spam filter), `written` takes the server's answer."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: OrderedDict[tuple[str, ...], _Seen] = OrderedDict()
        self._buckets: OrderedDict[tuple[str, ...], _Bucket] = OrderedDict()

    def correlate(self, event: dict[str, Any]) -> Write | None:
        """The Event as it is written: a repeat of one written before is that one, counted."""
        key = _event_key(event)
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None:
                count = seen.count + 1
                event = {
                    **event,
                    "metadata": {**event["metadata"], "name": seen.name},
                    "count": count,
                    "firstTimestamp": seen.first,
                }
                patch = {
                    "count": count,
                    "lastTimestamp": event["lastTimestamp"],
                    "message": event["message"],
                }
            else:
                patch = None
            # counted even when the spam filter drops it, as eventObserve counts before it
            self._remember(key, _event_seen(event))
            if not self._bucket(_spam_key(event)).take(self._clock()):
                return None
        return Write(event, patch)

    def written(self, stored: Mapping[str, Any]) -> None:
        """The server stored `stored` (client-go UpdateState): later repeats patch it."""
        with self._lock:
            self._remember(_event_key(stored), _event_seen(stored))

    def _remember(self, key: tuple[str, ...], seen: _Seen) -> None:
        self._seen[key] = seen
        self._seen.move_to_end(key)
        while len(self._seen) > REMEMBERED:
            self._seen.popitem(last=False)

    def _bucket(self, key: tuple[str, ...]) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(self._clock())
        self._buckets.move_to_end(key)
        while len(self._buckets) > REMEMBERED:
            self._buckets.popitem(last=False)
        return bucket


def _event_seen(event: Mapping[str, Any]) -> _Seen:
    return _Seen(
        str(event["metadata"]["name"]),
        int(event.get("count") or 1),
        str(event.get("firstTimestamp", "")),
    )
