"""Apache YuniKorn's word on a job: its notes on the job's pods, and its queues' limits.

YuniKorn keeps no group object. What it measured about a request lands on the request's pod as
a Normal Event of reason `Informational` (yunikorn-k8shim pkg/cache/context.go
`PublishEvents`, for the core's REQUEST records), in the core's words
(yunikorn-core pkg/scheduler/objects/events/ask_events.go):

- `Request '<pod uid>' does not fit in queue '<queue path>' (requested <r>, available <a>)`
  when the queue's headroom (its `max` less what it holds, and every parent's) is too small;
  `Request '…' has become schedulable in queue '…'` once it fits again;
- `Request '…' exceeds the available user quota (requested <r>, available <a>)`, then
  `Request '…' fits in the available user quota`.

Each is sent once per change (objects/allocation.go `setHeadroomCheckFailed`,
`setHeadroomCheckPassed`): the newest of a pod's notes of one kind is where it stands.

The queues' limits are YuniKorn's configuration: the `queues.yaml` key of the ConfigMap
`yunikorn-configs`, over the one of `yunikorn-defaults`, in YuniKorn's namespace
(yunikorn-k8shim pkg/conf/schedulerconf.go). Partition `default` is the one the shim uses.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.reports import event_time
from truegreen.patterns import LazyPattern
from truegreen.quantity import CPU, Resources

YUNIKORN: Final = "yunikorn"
"""The scheduler name YuniKorn's pods are given (yunikorn-k8shim constants.go `SchedulerName`)."""

NOTE_REASON: Final = "Informational"
NOTES: Final = {"reason": NOTE_REASON}
"""The field selector of YuniKorn's notes on requests (events accept `reason`)."""

CONFIG_MAPS: Final = ("yunikorn-configs", "yunikorn-defaults")
"""YuniKorn's configuration, the first over the second (constants.go `ConfigMapName`,
`DefaultConfigMapName`)."""

QUEUES_KEY: Final = "queues.yaml"
PARTITION: Final = "default"
ROOT: Final = "root"

_NO_ROOM = LazyPattern(
    r"^Request '[^']*' does not fit in queue '(?P<queue>[^']+)' "
    r"\(requested (?P<requested>.*), available (?P<available>.*)\)$"
)
_ROOM = LazyPattern(r"^Request '[^']*' has become schedulable in queue '(?P<queue>[^']+)'$")
_NO_USER_QUOTA = LazyPattern(r"^Request '[^']*' exceeds the available user quota \(.*\)$")
_USER_QUOTA = LazyPattern(r"^Request '[^']*' fits in the available user quota$")

# yunikorn-core pkg/common/resources/quantity.go: digits, then an SI suffix; `m` for vcore only.
_QUANTITY = LazyPattern(r"^(?P<number>[0-9]+)\s*(?P<suffix>(?:[mkKMGTPE]i?)?)$")
_MULTIPLIERS: Final = {
    "": 1,
    "m": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
    "Pi": 1 << 50,
    "Ei": 1 << 60,
}
_VCORE: Final = "vcore"
"""YuniKorn's name for CPU, in millicores (yunikorn-k8shim pkg/common/resource.go)."""
_INT64_MAX: Final = (1 << 63) - 1


class QueueNote(Struct, frozen=True):
    """YuniKorn's newest word on one pod's request: no room in its queue or its user quota."""

    pod: str
    queue: str
    """The queue YuniKorn placed the job in; empty for a user-quota note."""
    message: str
    at: datetime | None


def _said(message: str) -> tuple[str, str, bool] | None:
    """(kind, queue, no room) of a note; None for YuniKorn's other notes."""
    if (found := _NO_ROOM.match(message)) is not None:
        return "queue", found["queue"], True
    if (found := _ROOM.match(message)) is not None:
        return "queue", found["queue"], False
    if _NO_USER_QUOTA.match(message) is not None:
        return "user", "", True
    if _USER_QUOTA.match(message) is not None:
        return "user", "", False
    return None


def held_requests(events: Sequence[KubeObject], pods: Sequence[str]) -> list[QueueNote]:
    """The pods among `pods` whose newest queue note, or newest user-quota note, says there is
    no room: one note per pod, the queue's first, in the order of `pods`."""
    newest: dict[tuple[str, str], tuple[datetime | None, str, str, bool]] = {}
    wanted = set(pods)
    for event in events:
        involved = o.mapping(event.get("involvedObject") or event.get("regarding"))
        pod = str(involved.get("name") or "")
        if pod not in wanted or event.get("reason") != NOTE_REASON:
            continue
        message = str(event.get("message") or event.get("note") or "")
        said = _said(message)
        if said is None:
            continue
        kind, queue, no_room = said
        at = event_time(event)
        known = newest.get((pod, kind))
        if known is None or _later(at, known[0]):
            newest[(pod, kind)] = (at, queue, message, no_room)
    held = []
    for pod in pods:
        for kind in ("queue", "user"):
            note = newest.get((pod, kind))
            if note is not None and note[3]:
                held.append(QueueNote(pod, note[1], note[2], note[0]))
                break
    return held


def _later(at: datetime | None, than: datetime | None) -> bool:
    return than is None or (at is not None and at >= than)


class QueueMax(Struct, frozen=True):
    """A queue's configured `max` on the path to the job's queue, in doctor's units."""

    path: str
    limits: Resources
    template: bool = False
    """From the parent's `childtemplate`: the queue was created by a placement rule."""


def queue_limits(config: Mapping[str, Any], path: str) -> list[QueueMax]:
    """Each configured `max` on the way from `root` to the queue `path` (root's own excepted:
    YuniKorn sizes root by the cluster). A queue the configuration does not name takes its
    parent's `childtemplate`; below it, nothing more is known."""
    partitions = [o.mapping(p) for p in o.sequence(config.get("partitions"))]
    # An unnamed partition is the default one, and names are kept lower case
    # (configs/configvalidator.go `Validate`; objects/queue.go `NewConfiguredQueue`).
    partition = next(
        (p for p in partitions if str(p.get("name") or PARTITION).lower() == PARTITION), None
    )
    if partition is None:
        return []
    names = path.lower().split(".")
    if names[0] != ROOT:
        return []
    level = _named(partition, ROOT)
    found: list[QueueMax] = []
    walked = ROOT
    for name in names[1:]:
        if level is None:
            break
        walked = f"{walked}.{name}"
        child = _named(level, name)
        if child is None:
            template = o.mapping(o.mapping(level.get("childtemplate")).get("resources"))
            limits = configured(o.mapping(template.get("max")))
            if not limits.is_zero:
                found.append(QueueMax(walked, limits, template=True))
            break
        limits = configured(o.mapping(o.mapping(child.get("resources")).get("max")))
        if not limits.is_zero:
            found.append(QueueMax(walked, limits))
        level = child
    return found


_CONFIG_BYTES: Final = 1 << 20
"""A ConfigMap holds at most 1 MiB."""
_CONFIG_NODES: Final = 200_000
"""Values the configuration may expand to: its text is the cluster's, so read as hostile."""


def queues_config(text: str) -> Mapping[str, Any] | None:
    """YuniKorn's `queues.yaml`, read within bounds; None where it is not a mapping (YuniKorn
    then keeps its last good configuration, which doctor can't see)."""
    # Imported here: only a YuniKorn job its queue holds needs the YAML loader.
    from truegreen.yamlsafe import Document, Limits, load_all

    limits = Limits(max_bytes=_CONFIG_BYTES, max_nodes=_CONFIG_NODES)
    first = next(iter(load_all(text, limits, lines=False, unique_keys=False)), None)
    loaded = first.data if isinstance(first, Document) else None
    return loaded if isinstance(loaded, Mapping) else None


def _named(parent: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """The queue of `parent`'s `queues` called `name`."""
    queues = (o.mapping(q) for q in o.sequence(parent.get("queues")))
    return next((q for q in queues if str(q.get("name") or "").lower() == name), None)


def configured(quantities: Mapping[str, Any]) -> Resources:
    """A `max` of YuniKorn's configuration in doctor's units: `vcore` as CPU in millicores,
    everything else as written; a value YuniKorn would refuse is left out."""
    amounts = {}
    for name, text in quantities.items():
        amount = yunikorn_quantity(str(text), milli=name == _VCORE)
        if amount is not None and amount > 0:
            amounts[CPU if name == _VCORE else str(name)] = amount
    return Resources.of(amounts)


def yunikorn_quantity(text: str, *, milli: bool) -> int | None:
    """A quantity as yunikorn-core's `parse` reads it: whole digits and an SI suffix, `m`
    only with `milli` (vcore, in millicores: `10` is 10000); None where YuniKorn refuses it."""
    found = _QUANTITY.match(text.strip())
    if found is None or (found["suffix"] == "m" and not milli):
        return None
    value = int(found["number"]) * _MULTIPLIERS[found["suffix"]]
    if milli and found["suffix"] != "m":
        value *= 1000
    return value if value <= _INT64_MAX else None
