"""The namespace's newest Events for a support bundle: a fold that keeps a bounded few.

A real server lists Events in storage order (by name), not by time, so finding the newest means
reading them all; the fold keeps only the newest `limit` as the pages arrive, each with the
fields a reader needs and its message capped, redacted by the snapshot policy.
"""

import heapq
from datetime import UTC, datetime
from itertools import count
from typing import Any

import msgspec

from truegreen.redaction.text import redact_text

EVENT_LIMIT = 200
"""Events kept per snapshot, newest first."""
MESSAGE_LIMIT = 2048
"""Characters of one Event's message kept."""


class EventView(msgspec.Struct):
    """The fields of a core/v1 Event a support reader looks at; any type, checked when kept."""

    metadata: Any = None
    involvedObject: Any = None  # noqa: N815 - the API's field name
    type: Any = None
    reason: Any = None
    message: Any = None
    count: Any = None
    firstTimestamp: Any = None  # noqa: N815
    lastTimestamp: Any = None  # noqa: N815
    eventTime: Any = None  # noqa: N815
    series: Any = None
    source: Any = None
    reportingComponent: Any = None  # noqa: N815


def _text(value: object, limit: int = 253) -> str | None:
    """A scalar field as text, redacted whole and then capped (a cap first could cut a secret
    into pieces no rule recognises)."""
    if value is None or isinstance(value, dict | list):
        return None
    text = redact_text(str(value))
    return text if len(text) <= limit else text[:limit] + "…"


def _field(value: object, key: str) -> object:
    return value.get(key) if isinstance(value, dict) else None


def last_seen(event: EventView) -> str:
    """When the Event last happened, as RFC 3339 UTC text; "" when it says nowhere.

    A deduplicated core Event has `lastTimestamp`; one written through events.k8s.io has
    `series.lastObservedTime` or only `eventTime`; the creation time is the last resort.
    """
    for candidate in (
        _field(event.series, "lastObservedTime"),
        event.lastTimestamp,
        event.eventTime,
        _field(event.metadata, "creationTimestamp"),
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
    return ""


def _sort_key(seen: str) -> datetime:
    """`seen` as naive UTC, comparable with any other; the oldest possible when unreadable."""
    try:
        moment = datetime.fromisoformat(seen)
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        return datetime.min
    return moment


class NewestEvents:
    """A fold keeping the newest `limit` Events of a list, newest first in its summary."""

    name = "newest"
    view = EventView

    def __init__(self, limit: int = EVENT_LIMIT) -> None:
        self._limit = limit
        self._seen = 0
        self._order = count()
        self._kept: list[tuple[datetime, int, dict[str, Any]]] = []

    def add(self, item: EventView) -> None:
        """Count one Event; keep it while it is among the newest `limit`."""
        self._seen += 1
        seen = last_seen(item)
        entry = (_sort_key(seen), next(self._order), self._kept_fields(item, seen))
        if len(self._kept) < self._limit:
            heapq.heappush(self._kept, entry)
        elif entry[:2] > self._kept[0][:2]:
            heapq.heapreplace(self._kept, entry)

    @staticmethod
    def _kept_fields(item: EventView, seen: str) -> dict[str, Any]:
        involved = item.involvedObject
        fields = {
            "last_seen": seen,
            "type": _text(item.type),
            "reason": _text(item.reason),
            "object": "/".join(
                part
                for part in (_text(_field(involved, "kind")), _text(_field(involved, "name")))
                if part
            ),
            "count": _text(item.count) or _text(_field(item.series, "count")),
            "source": _text(_field(item.source, "component")) or _text(item.reportingComponent),
            "message": _text(item.message, MESSAGE_LIMIT),
        }
        return {key: value for key, value in fields.items() if value}

    def summary(self) -> dict[str, Any]:
        """The kept Events, newest first; and how many the list held."""
        newest = sorted(self._kept, key=lambda entry: entry[:2], reverse=True)
        return {
            "total": self._seen,
            "events": [fields for _, _, fields in newest],
        }
