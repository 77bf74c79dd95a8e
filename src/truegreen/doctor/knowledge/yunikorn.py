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
The same configuration holds each queue's user and group `limits` (yunikorn-core
pkg/common/configs/config.go `Limit`), which the core keeps per user and per group
(pkg/scheduler/ugm/manager.go).
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import msgspec
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

POLICY_GROUP_KEY: Final = "service.policyGroup"
POLICY_GROUP: Final = "queues"
"""The policy group whose `<group>.yaml` holds the queues (yunikorn-k8shim pkg/conf/
schedulerconf.go `DefaultPolicyGroup`; pkg/common/utils/utils.go
`GetCoreSchedulerConfigFromConfigMap`)."""
COMPRESSED: Final = ".gz"
"""A `binaryData` key's ending for gzip, which the shim strips (schedulerconf.go `Decompress`)."""
PARTITION: Final = "default"
ROOT: Final = "root"

# Resources print as Go maps (`map[memory:1 vcore:2]`), a missing one as `nil resource`
# (objects/events/ask_events.go; resources.go `String`); no `]` inside.
_RESOURCES = r"(?:map\[[^\]]*\]|nil resource)"
_NO_ROOM = LazyPattern(
    r"^Request '[^']*' does not fit in queue '(?P<queue>[^']+)' "
    rf"\(requested {_RESOURCES}, available {_RESOURCES}\)$"
)
_ROOM = LazyPattern(r"^Request '[^']*' has become schedulable in queue '(?P<queue>[^']+)'$")
_NO_USER_QUOTA = LazyPattern(
    rf"^Request '[^']*' exceeds the available user quota \(requested {_RESOURCES}, "
    rf"available {_RESOURCES}\)$"
)
_USER_QUOTA = LazyPattern(r"^Request '[^']*' fits in the available user quota$")
NOTE_CAP: Final = 4096
"""A note longer than this is not one of YuniKorn's (its longest are a few hundred characters):
it is not matched at all, so a hostile Event costs nothing."""

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


class PodRef(Struct, frozen=True):
    """A pod YuniKorn may have noted: by name and uid (a note about an earlier pod of the same
    name is not about this one)."""

    name: str
    uid: str


def noted_pods(
    job_pods: Sequence[KubeObject], namespace_pods: Sequence[KubeObject]
) -> list[PodRef]:
    """The pods whose notes speak for the job: its pods no machine runs yet, then the
    placeholders YuniKorn made for its gang, which their originator pod owns (yunikorn-k8shim
    pkg/cache/placeholder.go `newPlaceholder`, metadata.go `getOwnerReference`); while the gang
    reserves room, YuniKorn asks only for the placeholders (application.go `Schedule`)."""
    uids = {o.uid_of(p) for p in job_pods} - {""}
    placeholders = [
        p
        for p in namespace_pods
        if any(str(o.mapping(r).get("uid") or "") in uids for r in _owners(p))
    ]
    return [
        PodRef(o.name_of(p), o.uid_of(p)) for p in [*job_pods, *placeholders] if not o.node_name(p)
    ]


def _owners(pod: KubeObject) -> Sequence[Any]:
    return o.sequence(o.mapping(pod.get("metadata")).get("ownerReferences"))


def application_pod(
    name: str, job_pods: Sequence[KubeObject], namespace_pods: Sequence[KubeObject]
) -> KubeObject | None:
    """The job's pod that speaks for YuniKorn's application a noted pod belongs to: the pod
    itself, or, for a placeholder, the originator pod that owns it (placeholder.go
    `newPlaceholder`). The application's user and queue are read from the pods of the job
    (yunikorn-k8shim pkg/cache/metadata.go `getAppMetadata`), not from its placeholders."""
    own = next((p for p in job_pods if o.name_of(p) == name), None)
    if own is not None:
        return own
    placeholder = next((p for p in namespace_pods if o.name_of(p) == name), None)
    owners = {str(o.mapping(r).get("uid") or "") for r in _owners(placeholder or {})} - {""}
    return next((p for p in job_pods if o.uid_of(p) in owners), None)


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


_Newest = dict[tuple[str, str], tuple[datetime | None, str, str, bool]]
"""(pod, kind of note): its newest note's time, queue, message and whether it says no room."""


def held_requests(events: Sequence[KubeObject], pods: Sequence[PodRef]) -> list[QueueNote]:
    """The pods among `pods` whose newest queue note, or newest user-quota note, says there is
    no room: one note per pod, the queue's first, in the order of `pods`. A note counts when
    YuniKorn reported it (`reportingComponent`, or `source` for an older recorder) about that
    very pod (its uid, where the Event names one)."""
    newest = _newest(events, pods)
    held = []
    for ref in pods:
        for kind in ("queue", "user"):
            note = newest.get((ref.name, kind))
            if note is not None and note[3]:
                held.append(QueueNote(ref.name, note[1], note[2], note[0]))
                break
    return held


def noted_queue(events: Sequence[KubeObject], pods: Sequence[PodRef]) -> str:
    """The queue YuniKorn's newest queue note on any of `pods` names, room or none: the queue
    the application was placed in, which a user-quota note leaves out
    (ask_events.go `SendRequestExceedsUserQuota`); empty where no such note is left."""
    queues = [note for (_, kind), note in _newest(events, pods).items() if kind == "queue"]
    newest: tuple[datetime | None, str, str, bool] | None = None
    for note in queues:
        if newest is None or _later(note[0], newest[0]):
            newest = note
    return "" if newest is None else newest[1]


def _newest(events: Sequence[KubeObject], pods: Sequence[PodRef]) -> _Newest:
    """Each pod's newest note of each kind."""
    newest: _Newest = {}
    wanted = {pod.name: pod.uid for pod in pods}
    for event in events:
        involved = o.mapping(event.get("involvedObject") or event.get("regarding"))
        pod = str(involved.get("name") or "")
        uid = str(involved.get("uid") or "")
        if pod not in wanted or (uid and wanted[pod] and uid != wanted[pod]):
            continue
        if event.get("reason") != NOTE_REASON or _reporter(event) != YUNIKORN:
            continue
        message = str(event.get("message") or event.get("note") or "")
        said = _said(message) if len(message) <= NOTE_CAP else None
        if said is None:
            continue
        kind, queue, no_room = said
        at = event_time(event)
        known = newest.get((pod, kind))
        if known is None or _later(at, known[0]):
            newest[(pod, kind)] = (at, queue, message, no_room)
    return newest


def _reporter(event: KubeObject) -> str:
    """The component that reported an Event: events.k8s.io's `reportingController`, which
    core/v1 shows as `reportingComponent`, else core/v1's `source.component`."""
    return str(
        event.get("reportingComponent")
        or event.get("reportingController")
        or o.mapping(event.get("source")).get("component")
        or ""
    )


def _later(at: datetime | None, than: datetime | None) -> bool:
    return than is None or (at is not None and at >= than)


class QueueMax(Struct, frozen=True):
    """A queue's configured `max` on the path to the job's queue, in doctor's units. Every
    resource it names is a limit, a 0 too (`resources.go` `FitInMaxUndef` skips only the names
    a max leaves out)."""

    path: str
    limits: tuple[tuple[str, int], ...]
    template: bool = False
    """From a parent's `childtemplate`: a placement rule created the queue."""

    def beyond(self, wanted: Resources) -> list[str]:
        """The resources `wanted` asks more of than this max holds."""
        return [name for name, limit in self.limits if wanted.get(name) > limit]

    def get(self, name: str) -> int:
        """The limit on one resource (0 where the max names it as 0, or not at all)."""
        return dict(self.limits).get(name, 0)


def queue_limits(config: Mapping[str, Any], path: str) -> list[QueueMax]:
    """Each configured `max` on the way from `root` down to the queue `path` (root's own
    excepted: YuniKorn refuses a max on root and sizes it by the cluster). A queue the
    configuration does not name was made by a placement rule: the leaf takes the `childtemplate`
    of its nearest parent that has one (objects/queue.go `addChildQueue`: a parent without a
    template passes its own parent's down), and a parent made on the way has no max."""
    partition = _partition(config)
    names = path.lower().split(".")
    if partition is None or names[0] != ROOT:
        return []
    level = _root(partition)
    template = _template(level)
    found: list[QueueMax] = []
    walked = ROOT
    for name in names[1:]:
        walked = f"{walked}.{name}"
        child = _named(level, name)
        if child is None:
            if template:
                found.append(QueueMax(path.lower(), template, template=True))
            break
        limits = configured(o.mapping(o.mapping(child.get("resources")).get("max")))
        if limits:
            found.append(QueueMax(walked, limits))
        template = _template(child) or template
        level = child
    return found


def _partition(config: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The default partition of the configuration; an unnamed partition is the default one,
    and names are kept lower case (configs/configvalidator.go `Validate`; objects/queue.go
    `NewConfiguredQueue`)."""
    partitions = [o.mapping(p) for p in o.sequence(config.get("partitions"))]
    return next(
        (p for p in partitions if str(p.get("name") or PARTITION).lower() == PARTITION), None
    )


def _root(partition: Mapping[str, Any]) -> Mapping[str, Any]:
    """The partition's root queue. Without one top queue called root, YuniKorn puts root
    above the configured ones (configvalidator.go `checkQueuesStructure`)."""
    top = [o.mapping(q) for q in o.sequence(partition.get("queues"))]
    if len(top) == 1 and str(top[0].get("name") or "").lower() == ROOT:
        return top[0]
    return {"name": ROOT, "queues": top}


USER_INFO: Final = "yunikorn.apache.org/user.info"
"""The annotation YuniKorn's admission controller writes with the submitter as JSON
`{"user": …, "groups": […]}` (yunikorn-k8shim pkg/admission/common/common.go
`UserInfoAnnotation`, pkg/admission/metadata/usergroup.go)."""
DEFAULT_USER: Final = "nobody"
"""The user of a pod without one (yunikorn-k8shim pkg/common/constants/constants.go
`DefaultUser`)."""
WILDCARD: Final = "*"
"""A limit's user or group that stands for any (yunikorn-core pkg/common/constants.go
`Wildcard`)."""
_QUEUE_LABEL: Final = "yunikorn.apache.org/queue"
_OLD_QUEUE_LABEL: Final = "queue"


class Submitter(Struct, frozen=True):
    """The user YuniKorn runs an application as, and that user's groups."""

    user: str
    groups: tuple[str, ...]
    annotated: bool
    """Whether the pod carries the user (else YuniKorn's default user)."""


def submitter(pod: KubeObject) -> Submitter:
    """The user and groups of a pod as the shim reads them (yunikorn-k8shim
    pkg/common/utils/utils.go `GetUserFromPod`): the user-info annotation's JSON, the default
    user where it is missing, not JSON of that shape (no groups then), or names no user."""
    text = str(o.annotations_of(pod).get(USER_INFO) or "")
    if not text:
        return Submitter(DEFAULT_USER, (), annotated=False)
    try:
        # Go's json.Unmarshal matches field names whatever their case.
        info = {str(k).lower(): v for k, v in o.mapping(msgspec.json.decode(text)).items()}
    except msgspec.DecodeError:
        return Submitter(DEFAULT_USER, (), annotated=False)
    user, groups = info.get("user"), info.get("groups")
    # A field of the wrong type fails the whole unmarshal (si.UserGroupInformation).
    if not isinstance(user, str | None) or not (
        groups is None or (isinstance(groups, list) and all(isinstance(g, str) for g in groups))
    ):
        return Submitter(DEFAULT_USER, (), annotated=False)
    return Submitter(user or DEFAULT_USER, tuple(groups or ()), annotated=bool(user))


def pod_queue(pod: KubeObject) -> str:
    """The queue a pod asks for, as the shim reads it (utils.go `GetQueueNameFromPod`): the
    label `yunikorn.apache.org/queue`, else the annotation of that name, else the label
    `queue`; empty where none names one."""
    labels, annotations = o.labels_of(pod), o.annotations_of(pod)
    return str(
        labels.get(_QUEUE_LABEL)
        or annotations.get(_QUEUE_LABEL)
        or labels.get(_OLD_QUEUE_LABEL)
        or ""
    )


PROVIDED: Final = "provided"
"""The placement rule that places an application in the queue it was submitted with
(yunikorn-core pkg/scheduler/placement/types `Provided`)."""


def placement_rules(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the default partition's placement rules, in order, lower case as the core
    matches them (placement/rule.go `normalise`); the one implicit `provided` rule where the
    partition configures none (placement/placement.go `buildRules`: "using implicit provided
    rule"); none where there is no default partition."""
    partition = _partition(config)
    if partition is None:
        return ()
    rules = [o.mapping(rule) for rule in o.sequence(partition.get("placementrules"))]
    if not rules:
        return (PROVIDED,)
    return tuple(str(rule.get("name") or "").lower() for rule in rules)


def places_where_asked(config: Mapping[str, Any]) -> bool:
    """Whether an application YuniKorn placed is in the fully qualified queue (`root.…`) its
    pod asks for: where `provided` is the only rule, configured or implicit. That rule keeps
    a fully qualified name as it is and runs no parent rule for it
    (placement/provided_rule.go `placeApplication`); what it does not place (a filter, a
    queue missing without `create`, a parent queue, a submit ACL: placement.go
    `PlaceApplication`) falls to the recovery rule alone (`buildRules`), which places only
    applications recovered with their allocations (recovery_rule.go `placeApplication`) and
    otherwise leaves the application rejected. With any other rule configured, another rule
    may have placed it elsewhere."""
    return placement_rules(config) == (PROVIDED,)


class UserLimit(Struct, frozen=True):
    """A configured `maxresources` that applies to an application's user on one queue of its
    path: the user's own, the one for any user, its group's or the one for any group."""

    limit: QueueMax
    """The queue's path and the limit, as a `max` is read."""
    name: str
    """The user or group the limit names (`*` for any)."""
    group: bool


def user_limits(config: Mapping[str, Any], path: str, who: Submitter) -> list[UserLimit]:
    """Each configured limit on the resources of `who` on the way from root down to the queue
    `path`, as yunikorn-core's user and group manager applies them (pkg/scheduler/ugm/):

    - on each queue, the limit that names the user, else the one for any user (`*`)
      (manager.go `internalProcessConfig`, queue_tracker.go `newQueueTracker` and `setLimit`:
      a named user's limit is never overridden by the wildcard's);
    - one group for the application, where the user has any: the first configured group of
      the user's at the queue, else the wildcard group there, else the same one queue up
      (manager.go `ensureGroup`, `ensureGroupInternal`); that group's limit on every queue of
      the path
      (group_tracker.go `headroom`).

    Both hold the application (manager.go `Headroom`: the smaller of the two). Root's limits
    are the partition's where root has none (configvalidator.go `checkLimitsStructure`);
    a queue a placement rule created has none of its own (only configured queues' limits are
    kept). A limit with no resource above 0 limits no resource (queue_tracker.go `headroom`:
    `IsZero`)."""
    partition = _partition(config)
    names = path.lower().split(".")
    if partition is None or names[0] != ROOT:
        return []
    level = _root(partition)
    root_limits = o.sequence(level.get("limits")) or o.sequence(partition.get("limits"))
    levels: list[tuple[str, list[Mapping[str, Any]]]] = [
        (ROOT, [o.mapping(limit) for limit in root_limits])
    ]
    walked = ROOT
    for name in names[1:]:
        child = _named(level, name)
        if child is None:
            break
        walked = f"{walked}.{name}"
        levels.append((walked, [o.mapping(limit) for limit in o.sequence(child.get("limits"))]))
        level = child
    group = _application_group(levels, who.groups)
    found: list[UserLimit] = []
    for queue, limits in levels:
        named = _limit_for(limits, "users", who.user)
        if named is not None and (maximum := _max_resources(named[1])):
            found.append(UserLimit(QueueMax(queue, maximum), named[0], group=False))
    for queue, limits in levels:
        named = _limit_for(limits, "groups", group, wildcard=False) if group else None
        if named is not None and (maximum := _max_resources(named[1])):
            found.append(UserLimit(QueueMax(queue, maximum), group, group=True))
    return found


def _names(limit: Mapping[str, Any], key: str) -> list[str]:
    return [str(name) for name in o.sequence(limit.get(key)) if name]


def _limit_for(
    limits: list[Mapping[str, Any]], key: str, name: str, *, wildcard: bool = True
) -> tuple[str, Mapping[str, Any]] | None:
    """The limit of a queue that names `name` among its `key` (users or groups), else, with
    `wildcard`, the one that names `*`: (the name it matched, the limit)."""
    for wanted in (name, WILDCARD) if wildcard else (name,):
        for limit in limits:
            if wanted in _names(limit, key):
                return wanted, limit
    return None


def _application_group(
    levels: list[tuple[str, list[Mapping[str, Any]]]], groups: tuple[str, ...]
) -> str:
    """The group YuniKorn tracks an application under (manager.go `ensureGroupInternal`): from
    the leaf up, the queue's configured groups in order, the first the user belongs to, else
    `*` where the queue has a wildcard group limit; empty where none matches, and for a user
    of no group at all (manager.go `ensureGroup`)."""
    if not groups:
        return ""
    for _, limits in reversed(levels):
        configured_groups = [g for limit in limits for g in _names(limit, "groups")]
        matched = next((g for g in configured_groups if g != WILDCARD and g in groups), None)
        if matched is not None:
            return matched
        if WILDCARD in configured_groups:
            return WILDCARD
    return ""


def _max_resources(limit: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """A limit's `maxresources`, read as a queue's `max` is (manager.go
    `internalProcessConfig`: resources.go `NewResourceFromConf`)."""
    return configured(o.mapping(limit.get("maxresources")))


def _template(queue: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """The `max` of a queue's `childtemplate`, as `configured` reads it."""
    resources = o.mapping(o.mapping(queue.get("childtemplate")).get("resources"))
    return configured(o.mapping(resources.get("max")))


class QueuesText(Struct, frozen=True):
    """The queues YuniKorn runs with, as its ConfigMaps give them."""

    text: str
    """The YAML; empty where there is none (YuniKorn's defaults: no limits)."""
    config_map: str
    """The ConfigMap it came from."""
    key: str
    unread: str = ""
    """Why the queues YuniKorn runs with can't be read here; empty when they can."""


def queues_text(config_maps: Sequence[tuple[str, KubeObject]]) -> QueuesText:
    """The `<policy group>.yaml` of YuniKorn's ConfigMaps, `yunikorn-defaults` first, each
    one's `data` then its `binaryData`, a later key over an earlier one
    (schedulerconf.go `FlattenConfigMaps`). Compressed queues are not read."""
    flat: dict[str, tuple[str | None, str]] = {}
    for name, obj in config_maps:
        for key, value in o.mapping(obj.get("data")).items():
            flat[str(key)] = (str(value), name)
        for key in o.mapping(obj.get("binaryData")):
            flat[str(key).removesuffix(COMPRESSED)] = (None, name)
    group = flat.get(POLICY_GROUP_KEY, (POLICY_GROUP, ""))[0] or POLICY_GROUP
    key = f"{group}.yaml"
    text, source = flat.get(key, ("", ""))
    if text is None:
        return QueuesText("", source, key, f"YuniKorn's {key} is kept as binary data")
    return QueuesText(text, source, key)


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


_RENAMED: Final = frozenset({CPU})
"""Kubernetes names the shim renames (`cpu` is `vcore`: yunikorn-k8shim pkg/common/resource.go):
in a max, such a name is a resource no request carries, and limits nothing doctor judges."""


def configured(quantities: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """A `max` of YuniKorn's configuration in doctor's units: `vcore` as CPU in millicores,
    everything else as written, 0s kept; a value YuniKorn would refuse is left out, and a max
    with nothing above 0 is none (resources.go `StrictlyGreaterThanZero`)."""
    amounts: dict[str, int] = {}
    for name, text in quantities.items():
        amount = yunikorn_quantity(str(text), milli=name == _VCORE)
        if amount is not None and str(name) not in _RENAMED:
            amounts[CPU if name == _VCORE else str(name)] = amount
    return tuple(sorted(amounts.items())) if any(amounts.values()) else ()


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
