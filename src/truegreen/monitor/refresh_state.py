"""Image refresh's state per opted-in workload, read from what refresh records on it.

The annotations say whether refresh has latched (stopped retrying), whether a restart is
pending, and how many attempts it has counted; its `ImageRefreshed` Events say when it last
moved a workload onto a newer image.
"""

from collections.abc import Iterable, Mapping
from datetime import datetime

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.refresh.annotations import LATCHED, OPT_IN_LABEL, PENDING, AttemptCounter

REFRESHED_REASON = "ImageRefreshed"
"""The Event reason refresh writes after a verified restart onto a newer image."""


class RefreshState(Struct, frozen=True):
    """One opted-in workload's refresh state."""

    workload: str
    latched: bool
    pending: bool
    attempts: int
    last_refreshed: datetime | None
    """When refresh last recorded a newer image on it (its newest ImageRefreshed Event)."""


def last_refreshed(events: Iterable[KubeObject]) -> dict[str, datetime]:
    """The newest ImageRefreshed time per Deployment name."""
    newest: dict[str, datetime] = {}
    for event in events:
        involved = o.mapping(event.get("involvedObject"))
        if event.get("reason") != REFRESHED_REASON or involved.get("kind") != "Deployment":
            continue
        when = _time(event.get("lastTimestamp")) or _time(event.get("eventTime"))
        name = str(involved.get("name", ""))
        if when is not None and (name not in newest or when > newest[name]):
            newest[name] = when
    return newest


def refresh_states(
    workloads: Iterable[KubeObject], refreshed: Mapping[str, datetime]
) -> tuple[RefreshState, ...]:
    """The state of every workload that carries the opt-in label, by name."""
    states = []
    for workload in workloads:
        if OPT_IN_LABEL not in o.labels_of(workload):
            continue
        annotations = o.annotations_of(workload)
        name = o.name_of(workload)
        states.append(
            RefreshState(
                name,
                bool(annotations.get(LATCHED)),
                bool(annotations.get(PENDING)),
                AttemptCounter.read(annotations).count,
                refreshed.get(name),
            )
        )
    return tuple(sorted(states, key=lambda s: s.workload))


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:  # Python 3.11's fromisoformat reads RFC 3339's trailing `Z` itself
        return datetime.fromisoformat(value)
    except ValueError:
        return None
