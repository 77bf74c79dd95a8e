"""Image refresh's state per opted-in workload, read from what refresh records on it.

The annotations say whether refresh has latched (stopped retrying), whether a restart is
pending, and how many attempts it has counted; its `ImageRefreshed` Events say when it last
moved a workload onto a newer image. A workload is known by its kind and name: refresh keeps
Deployments, StatefulSets and DaemonSets alike.
"""

from collections.abc import Iterable, Mapping
from datetime import datetime

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.refresh.annotations import (
    LATCHED,
    OPT_IN_LABEL,
    PENDING,
    REFRESHED_KINDS,
    AttemptCounter,
)

REFRESHED_REASON = "ImageRefreshed"
"""The Event reason refresh writes after a verified restart onto a newer image."""


class RefreshState(Struct, frozen=True):
    """One opted-in workload's refresh state."""

    kind: str
    """Deployment, StatefulSet or DaemonSet (`REFRESHED_KINDS`)."""
    workload: str
    latched: bool
    pending: bool
    attempts: int
    last_refreshed: datetime | None
    """When refresh last recorded a newer image on it (its newest ImageRefreshed Event)."""


_KIND_NAMES = frozenset(kind.value.name for kind in REFRESHED_KINDS)

Workload = tuple[str, str]
"""A workload refresh keeps: its kind and its name (a Deployment and a StatefulSet may share
one)."""


def last_refreshed(events: Iterable[KubeObject]) -> dict[Workload, datetime]:
    """The newest ImageRefreshed time per workload of a kind refresh keeps."""
    newest: dict[Workload, datetime] = {}
    for event in events:
        involved = o.mapping(event.get("involvedObject"))
        kind = involved.get("kind")
        if event.get("reason") != REFRESHED_REASON or kind not in _KIND_NAMES:
            continue
        when = _time(event.get("lastTimestamp")) or _time(event.get("eventTime"))
        key = (str(kind), str(involved.get("name", "")))
        if when is not None and (key not in newest or when > newest[key]):
            newest[key] = when
    return newest


def refresh_states(
    workloads: Iterable[tuple[str, KubeObject]], refreshed: Mapping[Workload, datetime]
) -> tuple[RefreshState, ...]:
    """The state of every workload, given with its kind, that carries the opt-in label; by
    name, then kind."""
    states = []
    for kind, workload in workloads:
        if OPT_IN_LABEL not in o.labels_of(workload):
            continue
        annotations = o.annotations_of(workload)
        name = o.name_of(workload)
        states.append(
            RefreshState(
                kind,
                name,
                bool(annotations.get(LATCHED)),
                bool(annotations.get(PENDING)),
                AttemptCounter.read(annotations).count,
                refreshed.get((kind, name)),
            )
        )
    return tuple(sorted(states, key=lambda s: (s.workload, s.kind)))


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:  # Python 3.11's fromisoformat reads RFC 3339's trailing `Z` itself
        return datetime.fromisoformat(value)
    except ValueError:
        return None
