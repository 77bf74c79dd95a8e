"""What an autoscaler said about a training pod the scheduler could not place.

cluster-autoscaler records, on every pod it considered, either `TriggeredScaleUp` (`pod
triggered scale-up: [{group 0->1 (max: 4)}]`) or `NotTriggerScaleUp` (`pod didn't trigger
scale-up: 2 max node group size reached, 1 …`), both of type Normal from the component
`cluster-autoscaler` (cluster-autoscaler/processors/status/eventing_scale_up_processor.go), and
writes its own health to the ConfigMap cluster-autoscaler-status in its own namespace
(kube-system by default; clusterstate/api).
Karpenter records `Nominated` (`Pod should schedule on: nodeclaim/…`) when it has made or found a
machine for the pod, and `FailedScheduling` when no NodePool can (pkg/controllers/provisioning).
A machine being added is a measured wait; a machine that cannot be added is the measured reason
the job will not run. Everything here is pure.
"""

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import lru_cache
from itertools import islice
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.checks.autoscaler_refusals import CannotAdd, plain_refusal
from truegreen.doctor.checks.capacity.autoscaler_sources import STATUS_CONFIG_MAP
from truegreen.doctor.knowledge.reports import event_time, quoted
from truegreen.patterns import LazyPattern
from truegreen.quantity import QuantityError, parse_quantity

STATUS_WRITTEN = "cluster-autoscaler.kubernetes.io/last-updated"
"""The annotation every release writes with its status, in Go's time format
(pkg/clusterstate/utils/status.go WriteStatusConfigMap, ConfigMapLastUpdatedKey)."""
PROVISION_TIME = timedelta(minutes=15)
"""cluster-autoscaler's --max-node-provision-time default: a scale-up older than the provision
time that has not placed the pod is no longer a machine on its way (autoscaler_flags.py reads
the value the autoscaler was given)."""


class Word(StrEnum):
    """What an autoscaler said about a pod."""

    ADDING = "adding"
    """A machine is being added for it (TriggeredScaleUp, Karpenter's Nominated)."""
    CANNOT_ADD = "cannot-add"
    """No machine can be added for it (NotTriggerScaleUp, Karpenter's FailedScheduling)."""
    EXPIRED = "expired"
    """A machine was asked for longer ago than cluster-autoscaler waits for one: none is on
    its way (kept so that the operator hears of it, never a wait)."""
    LAUNCH_ENDED = "launch-ended"
    """Karpenter nominated it for a NodeClaim that no longer exists: that machine is not
    coming, and whether another will is not known (neither a wait nor a failure)."""


class AutoscalerWord(Struct, frozen=True):
    """The newest thing an autoscaler said about one pod."""

    pod: str
    word: Word
    source: str
    message: str
    at: datetime | None
    shown_by: str = ""
    """The object whose `kubectl describe` shows the autoscaler's words (`nodepool/gpu`); ''
    for the pod's own Events."""
    progress: str = ""
    """How far the machine on its way has come, in its NodeClaim's words (`nodeclaim/x has
    not joined the cluster yet …`), for the details; kept apart from `message`, which holds
    the autoscaler's own words that the headline is read from."""


def _word(event: Mapping[str, Any]) -> Word | None:
    reason = event.get("reason")
    source = str(o.mapping(event.get("source")).get("component") or event.get("reportingComponent"))
    if reason in ("TriggeredScaleUp", "Nominated"):
        return Word.ADDING
    if reason == "NotTriggerScaleUp" or (reason == "FailedScheduling" and source == "karpenter"):
        return Word.CANNOT_ADD
    return None


def autoscaler_words(
    events: Iterable[KubeObject],
    pods: Sequence[str],
    now: datetime,
    scaling_up: Mapping[str, datetime] | None = None,
    provision: timedelta = PROVISION_TIME,
    group_waits: Mapping[str, timedelta] | None = None,
) -> dict[str, AutoscalerWord]:
    """Per pod, the newest word of an autoscaler about it; an addition older than the
    provision time cluster-autoscaler was given for its machine group (`group_waits`: group →
    the group's own, where it gives one; else `provision`: its flag, else PROVISION_TIME) is
    EXPIRED (the machine did not come, or did not help), unless its own fresh status shows
    its machine group's scale-up in progress without a break since that trigger
    (`scaling_up`: group → since when), by whatever provision time the group was given."""
    scaling = scaling_up or {}
    waits = group_waits or {}
    wanted = set(pods)
    newest: dict[str, AutoscalerWord] = {}
    for event in events:
        involved = o.mapping(event.get("involvedObject"))
        name = str(involved.get("name") or "")
        word = _word(event)
        if involved.get("kind") != "Pod" or name not in wanted or word is None:
            continue
        at = event_time(event)
        source = str(o.mapping(event.get("source")).get("component") or "")
        found = AutoscalerWord(name, word, source, str(event.get("message") or "")[:600], at)
        group = triggered_group(found) or ""
        if word is Word.ADDING and (at is None or now - at > waits.get(group, provision)):
            since = scaling.get(group)
            if at is None or since is None or since > at + TRIGGER_SLACK:
                found = replace(found, word=Word.EXPIRED)
        kept = newest.get(name)
        if kept is None or (at is not None and (kept.at is None or at > kept.at)):
            newest[name] = found
    return newest


_JOIN_TODO = (
    "its start-up settings, or its permission to join, in the pool's machine class); until "
    "then Karpenter keeps making machines there that never join"
)
_POOL_NOT_JOINING = LazyPattern(
    r"NodePool (?P<pool>\S+): NodeRegistrationHealthy=False \(RegistrationFailed\)"
    r"(?:: (?P<said>[^;]+))?"
)
_NOT_JOINED_IN_TIME = LazyPattern(r"has not joined the cluster for \d+ minutes, past")
_NOT_JOINED = LazyPattern(r"did not join the cluster")


def _not_joining(message: str) -> CannotAdd | None:
    """A Karpenter machine that does not join the cluster: its pool's own word that its
    machines fail to (quoted), else the claim's; None for any other reason."""
    found = _POOL_NOT_JOINING.search(message)
    if found is not None:
        said = f" (Karpenter says “{found['said']}”)" if found["said"] else ""
        return CannotAdd(
            f"the machines Karpenter makes from its pool {found['pool']} fail to join the "
            f"cluster{said}",
            "Find out why that pool's new machines can't join the cluster (often " + _JOIN_TODO,
        )
    todo = "Find out why the new machine could not join the cluster (often " + _JOIN_TODO
    if _NOT_JOINED_IN_TIME.search(message):
        why = "did not join the cluster in the 15 minutes Karpenter waits"
        return CannotAdd(f"the machine Karpenter made for it {why}", todo)
    if _NOT_JOINED.search(message):
        return CannotAdd("the machine Karpenter made for it could not join the cluster", todo)
    return None


def plain_cannot_add(message: str) -> CannotAdd:
    """The autoscaler's reason in plain words: a Karpenter machine that does not join, else
    what the autoscaler's own words name (`plain_refusal`); a reason no rule names is quoted
    in the autoscaler's own words, with no remedy of doctor's beside it."""
    named = _not_joining(message) or plain_refusal(message)
    if named is not None:
        return named
    return CannotAdd(
        f"the autoscaler says “{quoted(message, 300)}”",
        "Read the autoscaler's reason in full",
    )


def nominated_claim(word: AutoscalerWord) -> str | None:
    """The NodeClaim Karpenter nominated the pod for (`Pod should schedule on: nodeclaim/x`)."""
    found = re.search(r"nodeclaim/([a-z0-9.-]+)", word.message)
    return found.group(1).rstrip(".") if found is not None else None


_TRIGGERED = LazyPattern(
    r"\{(?P<group>\S+) (?P<before>\d+)->(?P<after>\d+) \(max: (?P<max>\d+)\)\}"
)


def plain_adding(word: AutoscalerWord) -> str:
    """`the machine group eks-gpu goes from 0 to 1 machines` (cluster-autoscaler's scale-up
    info); Karpenter's nomination as it names the new machine."""
    found = _TRIGGERED.search(word.message)
    if found is not None:
        return (
            f"the machine group {found['group']} goes from {found['before']} to "
            f"{found['after']} machines"
        )
    claim = nominated_claim(word)
    if claim is not None:
        return f"Karpenter makes the machine {claim} for it"
    return "the autoscaler adds one"


class AutoscalerHealth(Struct, frozen=True):
    """What cluster-autoscaler's status ConfigMap says of itself."""

    healthy: bool | None
    """None when the status says neither."""
    detail: str


_TEXT_HEALTH = LazyPattern(r"Cluster-wide:\s*\n\s*Health:\s*(?P<status>\w+)", re.MULTILINE)
_NOT_UNDERSTOOD = AutoscalerHealth(None, "cluster-autoscaler status: not understood")


def autoscaler_health(config_map: KubeObject) -> AutoscalerHealth:
    """The cluster-wide health in the status ConfigMap, in either of its formats: the YAML of
    cluster-autoscaler 1.30 and later (`clusterWide.health.status`, wherever its keys stand)
    or the older text (`Cluster-wide:\\n  Health: Healthy (…)`)."""
    text = _status_text(config_map)
    loaded = _status_yaml(text)
    if loaded is None:
        found = _TEXT_HEALTH.search(text)
        status: object = found["status"] if found is not None else None
    else:
        status = o.mapping(o.mapping(loaded.get("clusterWide")).get("health")).get("status")
    if not isinstance(status, str) or not status:
        return _NOT_UNDERSTOOD
    return AutoscalerHealth(status == "Healthy", f"cluster-autoscaler health: {quoted(status, 40)}")


_STATUS_FIELDS = frozenset({"time", "autoscalerStatus", "message", "clusterWide", "nodeGroups"})
"""The fields of clusterstate/api/types.go `ClusterAutoscalerStatus` (their json names): a
mapping with any of them is the status in its YAML form."""


def _status_text(config_map: KubeObject) -> str:
    return str(o.mapping(config_map.get("data")).get("status") or "")


@lru_cache(maxsize=1)
def _status_yaml(text: str) -> Mapping[str, Any] | None:
    """The status in its YAML form, read by its structure: cluster-autoscaler writes it with
    sigs.k8s.io/yaml, every mapping's keys sorted (pkg/clusterstate/utils/status.go
    `marshalAndTruncateStatus`), and releases before wrote its fields in the struct's order.
    None for the older text form (its keys are words such as `Cluster-wide`), or text that is
    no YAML mapping. The text is the cluster's, so read as hostile, within bounds; the one
    status of a run is loaded once (each reader asks for it)."""
    # Imported here: only a cluster-autoscaler's status needs the loader.
    from truegreen.yamlsafe import Document, Limits, load_all

    limits = Limits(max_bytes=_STATUS_BYTES, max_nodes=_STATUS_NODES)
    first = next(iter(load_all(text, limits, lines=False, unique_keys=False)), None)
    loaded = first.data if isinstance(first, Document) else None
    if isinstance(loaded, Mapping) and not _STATUS_FIELDS.isdisjoint(loaded):
        return loaded
    return None


class GroupScaleUp(Struct, frozen=True):
    """cluster-autoscaler's scale-up state of one machine group, from its status ConfigMap
    (clusterstate/api/types.go `NodeGroupScaleUpCondition`)."""

    group: str
    status: str
    """InProgress, NoActivity, Backoff or Unhealthy (clusterstate.go
    `buildScaleUpStatusNodeGroup`: Backoff when a failed scale-up makes it unsafe to scale,
    Unhealthy when too many of the group's machines are unready)."""
    since: datetime | None = None
    """When the group's scale-up state last changed (`lastTransitionTime`: kept while the
    state stays the same, clusterstate.go `updateLastTransitionSingleList`); YAML form only."""
    error: str = ""
    """Backoff's `errorCode: errorMessage` (the cloud provider's words, e.g. AWS's
    `placeholder-cannot-be-fulfilled: AWS cannot provision any more instances for this node
    group`)."""


BLOCKED_SCALE_UPS = frozenset({"Backoff", "Unhealthy"})
"""Scale-up states in which cluster-autoscaler adds no machine to the group."""
SCALING_UP = "InProgress"
"""A group whose scale-up cluster-autoscaler still waits for: within the provision time the
group was given (its own, set on the cloud's side, which doctor can't read; or the flag)."""
STATUS_FRESH = timedelta(minutes=5)
"""cluster-autoscaler writes its status every loop (10 s by default): one older than this is
from an autoscaler that stopped, and says nothing of now."""
TRIGGER_SLACK = timedelta(minutes=2)
"""How long after a trigger its group's scale-up may have turned InProgress and still be that
trigger's (a scan writes the status after it posts the Event)."""
_TEXT_GROUP = LazyPattern(r"^\s*Name:\s*(?P<group>\S+)\s*$")
_TEXT_SCALE_UP = LazyPattern(r"^\s*ScaleUp:\s*(?P<status>\w+)")


def group_scale_ups(config_map: KubeObject) -> dict[str, GroupScaleUp]:
    """Per machine group, its scale-up state in the status ConfigMap: from the YAML of
    cluster-autoscaler 1.30 and later (`nodeGroups[].scaleUp`, with the backoff's error), or
    the older text (`NodeGroups:` then `Name:` and `ScaleUp:` lines, the state alone)."""
    text = _status_text(config_map)
    loaded = _status_yaml(text)
    if loaded is None:
        return _text_scale_ups(text)
    found = {}
    for group in map(o.mapping, o.sequence(loaded.get("nodeGroups"))):
        scale_up = o.mapping(group.get("scaleUp"))
        backoff = o.mapping(scale_up.get("backoffInfo"))
        error = ": ".join(str(backoff[k]) for k in ("errorCode", "errorMessage") if backoff.get(k))
        name = str(group.get("name") or "")
        since = o.parse_time(scale_up.get("lastTransitionTime"))
        found[name] = GroupScaleUp(name, str(scale_up.get("status") or ""), since, error[:600])
    return found


_STATUS_TIME = LazyPattern(
    r"(?P<day>\d{4}-\d\d-\d\d) (?P<clock>\d\d:\d\d:\d\d)(?:\.\d+)? (?P<offset>[+-]\d{4})\b",
)


def status_time(config_map: KubeObject) -> datetime | None:
    """When cluster-autoscaler wrote its status: the YAML form's `time`, Go's time format
    (`2026-12-05 12:00:00.123456789 +0000 UTC`, clusterstate/api/types.go
    `ClusterAutoscalerStatus.Time`); None for the older text form or another shape."""
    loaded = _status_yaml(_status_text(config_map))
    return _go_time(loaded.get("time") if loaded is not None else None)


def latest_status(config_maps: Sequence[KubeObject]) -> KubeObject | None:
    """Of the status ConfigMaps found in the cluster, the one cluster-autoscaler wrote last:
    one an earlier install left elsewhere (kube-system, before the chart moved it) is no
    longer written. By its `STATUS_WRITTEN` annotation, which every release writes, else the
    YAML form's `time`; one with neither is the oldest, and among equals the default place
    (`STATUS_CONFIG_MAP`) is taken."""
    if len(config_maps) < 2:
        return config_maps[0] if config_maps else None
    oldest = datetime.min.replace(tzinfo=UTC)
    return max(
        config_maps,
        key=lambda c: (
            _go_time(o.annotations_of(c).get(STATUS_WRITTEN)) or status_time(c) or oldest,
            o.namespace_of(c) == STATUS_CONFIG_MAP[0],
        ),
    )


def _go_time(written: object) -> datetime | None:
    """A time in Go's default format (`2006-01-02 15:04:05.999999999 -0700 MST`), to the
    second; None for anything else."""
    found = _STATUS_TIME.match(written[:200]) if isinstance(written, str) else None
    if found is None:
        return None
    try:
        return datetime.strptime(
            f"{found['day']} {found['clock']} {found['offset']}", "%Y-%m-%d %H:%M:%S %z"
        )
    except ValueError:
        return None


_STATUS_BYTES = 1 << 20
"""A ConfigMap holds at most 1 MiB."""
_STATUS_NODES = 200_000
"""Values the status may expand to: its text is the cluster's, so read as hostile."""


def _text_scale_ups(text: str) -> dict[str, GroupScaleUp]:
    found: dict[str, GroupScaleUp] = {}
    _, _, groups = text.partition("NodeGroups:")
    name = ""
    for line in groups.splitlines():
        if (named := _TEXT_GROUP.match(line)) is not None:
            name = named["group"]
        elif name and (state := _TEXT_SCALE_UP.match(line)) is not None:
            found[name] = GroupScaleUp(name, state["status"])
    return found


def triggered_group(word: AutoscalerWord) -> str | None:
    """The machine group a cluster-autoscaler TriggeredScaleUp names (the first)."""
    found = _TRIGGERED.search(word.message)
    return found["group"] if found is not None else None


def scale_up_groups(events: Iterable[KubeObject], pods: Collection[str]) -> list[str]:
    """The machine groups cluster-autoscaler's TriggeredScaleUp Events on these pods name (the
    first of each, as `triggered_group` reads it), newest Event first, each once."""
    found: list[tuple[datetime, str]] = []
    for event in events:
        involved = o.mapping(event.get("involvedObject"))
        if event.get("reason") != "TriggeredScaleUp" or involved.get("kind") != "Pod":
            continue
        if involved.get("name") not in pods:
            continue
        named = _TRIGGERED.search(str(event.get("message") or "")[:600])
        if named is not None:
            found.append((event_time(event) or _UNDATED, named["group"]))
    return list(dict.fromkeys(g for _, g in sorted(found, key=lambda f: f[0], reverse=True)))


_UNDATED = datetime.min.replace(tzinfo=UTC)


def old_scale_ups(events: Iterable[KubeObject], now: datetime) -> bool:
    """Some cluster-autoscaler scale-up among the events is older than the default provision
    time: only then does the value the autoscaler was given change what it means."""
    return any(
        event.get("reason") == "TriggeredScaleUp"
        and (at := event_time(event)) is not None
        and now - at > PROVISION_TIME
        for event in events
    )


# Karpenter names the pool whose limits stopped it: `… exceed limits for nodepool "gpu"`
# (older releases' fmt.Errorf with %q) or, through its structured errors,
# `… (NodePool=gpu)` (pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go and
# scheduler.go: serrors.Wrap(..., "NodePool", klog.KRef("", name))).
_LIMITED_POOL = LazyPattern(
    r"(?:exceed limits for nodepool|limits have been exhausted for nodepool)"
    r"(?::? \"(?P<quoted>[^\"]+)\"| \(NodePool=(?P<named>[^)\s]+)\))?"
)


def limited_pools(message: str) -> list[str]:
    """The NodePools Karpenter says it could not add a machine to for their limits, in the
    order named ('' for a limit it names no pool for)."""
    return list(
        dict.fromkeys(
            found["quoted"] or found["named"] or "" for found in _LIMITED_POOL.finditer(message)
        )
    )


class PoolUse(Struct, frozen=True):
    """One limited resource of a Karpenter NodePool: its limit and what its machines hold."""

    resource: str
    limit: str
    used: str
    reached: bool
    """What its machines hold is at the limit or past it: Karpenter adds no machine that has
    any of it (pkg/controllers/provisioning/scheduling `filterByRemainingResources` drops
    every instance type larger than the limit less the use)."""


POOL_LIMITS_SHOWN = 16
"""A NodePool's limits read at most: real ones state a handful (cpu, memory, GPUs, nodes)."""


def pool_use(pool: KubeObject) -> list[PoolUse]:
    """The NodePool's limits (`spec.limits`) against its machines' resources
    (`status.resources`, which Karpenter's counter controller writes), in the limits' order;
    a value that is no quantity is left out, and no more than POOL_LIMITS_SHOWN are read (the
    object is the cluster's: its size is not ours to trust)."""
    limits = dict(
        islice(o.mapping(o.mapping(pool.get("spec")).get("limits")).items(), POOL_LIMITS_SHOWN)
    )
    resources = o.mapping(o.mapping(pool.get("status")).get("resources"))
    found = []
    for name, limit in limits.items():
        used = resources.get(name, "0")
        try:
            reached = parse_quantity(str(used)) >= parse_quantity(str(limit))
        except QuantityError:
            continue
        found.append(PoolUse(str(name), str(limit), str(used), reached))
    return found


class UnreadyPool(Struct, frozen=True):
    """A Karpenter NodePool that Karpenter adds no machine from: it is being deleted, or its
    `Ready` condition is not True."""

    name: str
    said: str
    """Why, in Karpenter's words: each failing condition it is ready by, bounded."""
    plain: str
    """The first failing condition's message, for the headline ('' when it has none)."""


# A NodePool is Ready when these are True (pkg/apis/v1/nodepool_status.go StatusConditions);
# operatorpkg's root condition says only `UnhealthyDependents` with the dependents' names, so
# the dependents' own words are quoted instead.
_POOL_READY_BY = ("NodeClassReady", "ValidationSucceeded")


def condition_words(kind: str, condition: Mapping[str, Any]) -> tuple[str, str]:
    """A condition in Karpenter's words (`NodeClassReady=False (NodeClassNotFound): …`), and
    its message alone. The object is the cluster's: one bounded line each, control characters
    escaped."""
    reason = quoted(str(condition.get("reason") or ""))
    message = quoted(str(condition.get("message") or ""))
    said = f"{kind}={quoted(str(condition.get('status')))}" + (f" ({reason})" if reason else "")
    return said + (f": {message}" if message else ""), message


def unready_pools(pools: Iterable[KubeObject]) -> tuple[list[UnreadyPool], bool]:
    """The NodePools Karpenter adds no machine from, and whether that is every one it could:
    Karpenter's provisioner passes over a static NodePool (`spec.replicas`), one being deleted
    and one whose `Ready` condition is not True (pkg/controllers/provisioning/provisioner.go
    NewScheduler), and with none left it only logs `no dynamic nodepools found`: no Event on the
    pod. Every pool is measured only when each dynamic one is being deleted or states its
    `Ready` condition (a pool that states none is not counted as down)."""
    unready, measured, dynamic = [], True, 0
    for pool in pools:
        if o.mapping(pool.get("spec")).get("replicas") is not None:
            continue
        dynamic += 1
        name = o.name_of(pool)
        if o.is_terminating(pool):
            unready.append(UnreadyPool(name, "being deleted", "it is being deleted"))
            continue
        ready = o.condition(pool, "Ready")
        if ready is None:
            measured = False
            continue
        if ready.get("status") == "True":
            continue
        failing = [
            (kind, condition)
            for kind in _POOL_READY_BY
            if (condition := o.condition(pool, kind)) is not None
            and condition.get("status") != "True"
        ] or [("Ready", ready)]
        words = [condition_words(kind, condition) for kind, condition in failing]
        unready.append(UnreadyPool(name, "; ".join(s for s, _ in words), words[0][1]))
    return unready, measured and dynamic > 0 and len(unready) == dynamic
