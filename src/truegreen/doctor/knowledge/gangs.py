"""Schedulers other than the cluster's own, and the gangs they place, as pure functions of the
objects they keep.

A pod whose `spec.schedulerName` is not `default-scheduler` is placed by that scheduler alone
(kubernetes/kubernetes pkg/scheduler/profile/profile.go: each scheduler skips the pods of other
names, `frameworkForPod`). A gang scheduler ties pods to a group object and places them all or
none; its verdict is on that object:
- Volcano: the pod annotation `scheduling.k8s.io/group-name` (volcano-sh/apis
  pkg/apis/scheduling/v1beta1/labels.go `KubeGroupNameAnnotationKey`, which the training
  operator sets: kubeflow/training-operator `gangSchedulingPodGroupAnnotation`) names a
  `scheduling.volcano.sh/v1beta1` PodGroup whose `status.phase` is Pending, Inqueue, Running,
  Unknown or Completed and whose `Unschedulable` condition carries the scheduler's words
  (`"%v/%v tasks in gang unschedulable: %v"` with `JobInfo.FitError()`, volcano
  pkg/scheduler/cache/cache.go `RecordJobStatusEvent`, pkg/scheduler/api/job_info.go); its
  `spec.queue` names a Queue (default `default`) whose `spec.capability` caps what its gangs
  hold and whose `status.state` is Open, Closed, Closing or Unknown (types.go `QueueState`).
- scheduler-plugins' coscheduling: the pod label `scheduling.x-k8s.io/pod-group`
  (kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1/types.go `PodGroupLabel`) names a
  `scheduling.x-k8s.io/v1alpha1` PodGroup; its `status.phase` (Pending, Scheduling, Running,
  Unknown, Finished, Failed) is its only word: the plugin's refusals are on the pods.
- KAI: the pod annotation `pod-group-name` (NVIDIA/KAI-Scheduler pkg/common/constants
  `PodGroupAnnotationForPod`) names a `scheduling.run.ai/v2alpha2` PodGroup whose
  `status.schedulingConditions` of type `UnschedulableOnNodePool` carry the scheduler's
  `reasons` (each a reason and a message) and whose `status.running` counts its running pods
  (pkg/apis/scheduling/v2alpha2/podgroup_types.go). Its `spec.queue` names a KAI Queue
  (`scheduling.run.ai/v2`, pkg/apis/scheduling/v2/queue_types.go): the scheduler skips a job
  whose queue, or whose queue's parent, does not exist, or whose queue has queues under it
  (pkg/scheduler/actions/utils/input_jobs.go), and refuses one that would take a queue or any
  of its parents past its `limit` (plugins/proportion/capacity_policy/max_allowed_check.go).
"""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

import msgspec
from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import FieldIsNot, Kind, KubeObject
from truegreen.doctor.knowledge.reports import NAME_CAP, event_time, names_an_earlier_pod, quoted
from truegreen.doctor.knowledge.scheduler_name import DEFAULT_SCHEDULER
from truegreen.gang_membership import (
    COSCHEDULING_GROUP_LABEL,
    KAI_GROUP_ANNOTATION,
    VOLCANO_GROUP_ANNOTATION,
)
from truegreen.patterns import LazyPattern
from truegreen.quantity import CPU, QuantityError, Resources, parse_quantity

VOLCANO_DEFAULT_QUEUE = "default"
"""The Queue a Volcano PodGroup without `spec.queue` belongs to (types.go `DefaultQueue`)."""

PLACED_PHASES = frozenset({"Running", "Completed"})
"""Volcano PodGroup phases in which the gang has been placed (types.go `PodGroupPhase`)."""

COSCHEDULING_PLACED = frozenset({"Running", "Finished"})
"""Coscheduling PodGroup phases in which the gang has been placed (v1alpha1 `PodGroupPhase`)."""

KAI_UNSCHEDULABLE = "UnschedulableOnNodePool"
"""KAI's scheduling condition on a group it cannot place (v2alpha2 `SchedulingConditionType`)."""

OPEN = "Open"
"""A Volcano Queue that takes new gangs (types.go `QueueStateOpen`)."""

SCHEDULER_SUFFIX = "-scheduler"

VOLCANO: Final = "volcano"
"""The scheduler name Volcano's pods give (its install's `schedulerName`)."""
SEPARATE_SCHEDULERS: Final = frozenset({VOLCANO, "yunikorn", "kai-scheduler"})
"""Schedulers that run only as their own workload, whose pods `scheduler_identity` names
(their installs, cited there): no such pod is the scheduler not running. Any other name may be a
profile of kube-scheduler (pkg/scheduler/profile/profile.go `NewMap`: one framework per
`profiles[].schedulerName`, all in kube-scheduler's one process) or a managed control plane's
own scheduler, neither of which shows as a pod of that name."""

UNJUDGED_SECONDS: Final = 60
"""How long a job's pods wait with none of them judged before a scheduler the cluster does not
show is taken as not running: a running scheduler takes a new pod from its active queue at
once and retries within seconds (kube-scheduler's podInitialBackoffSeconds is 1), so a minute
with no judgement is no backlog."""

UNFINISHED_PODS = {"status.phase": FieldIsNot(("Succeeded", "Failed"))}
"""The field selector of the pods that run or are to run: a scheduler's pod that is Pending
(not yet placed, its image not yet pulled) is there, and not running."""


GANG_KINDS = (
    Kind.VOLCANO_POD_GROUP,
    Kind.VOLCANO_QUEUE,
    Kind.COSCHEDULING_POD_GROUP,
    Kind.KAI_POD_GROUP,
    Kind.KAI_QUEUE,
)
"""The gang schedulers' kinds discovery is asked about."""


class GangRef(Struct, frozen=True):
    """The group object a pod of the job belongs to."""

    kind: Kind
    name: str


def gang_of(pod: KubeObject) -> GangRef | None:
    """The group object the pod names, by the key its scheduler reads; None when none."""
    annotations = o.annotations_of(pod)
    labels = o.labels_of(pod)
    if name := annotations.get(VOLCANO_GROUP_ANNOTATION):
        return GangRef(Kind.VOLCANO_POD_GROUP, name)
    if name := labels.get(COSCHEDULING_GROUP_LABEL):
        return GangRef(Kind.COSCHEDULING_POD_GROUP, name)
    if name := annotations.get(KAI_GROUP_ANNOTATION):
        return GangRef(Kind.KAI_POD_GROUP, name)
    return None


def gangs_of(pods: Sequence[KubeObject]) -> list[GangRef]:
    """Each group object the pods name, once, in order."""
    return list(dict.fromkeys(ref for pod in pods if (ref := gang_of(pod)) is not None))


def still_to_place(pods: Sequence[KubeObject]) -> list[GangRef]:
    """The groups with a pod not yet on a machine, once each, in order: only their objects
    still have a word on the job. A group whose pods are all bound was placed by its
    scheduler's own binding, whatever its object still says (KAI never writes `status.running`
    and never takes back a condition it wrote: pkg/scheduler/cache/status_updater/
    default_status_updater.go)."""
    return list(
        dict.fromkeys(
            ref for pod in pods if not o.node_name(pod) and (ref := gang_of(pod)) is not None
        )
    )


def scheduler_identity(name: str) -> str:
    """The name a scheduler's own pods carry: the scheduler's name where it already ends in
    `-scheduler` (`kai-scheduler`, `scheduler-plugins-scheduler`), else that name with
    `-scheduler` (`volcano-scheduler`, `yunikorn-scheduler`). Real installs name their
    Deployment, and so their pods, this way, and label them with it: volcano
    installer/helm/chart/volcano/templates/scheduler.yaml (`app: volcano-scheduler`), apache
    yunikorn-release helm-charts/yunikorn/templates/deployment.yaml (`component:
    yunikorn-scheduler`), scheduler-plugins manifests/install/charts/as-a-second-scheduler
    (Deployment `scheduler-plugins-scheduler`), KAI's operator (Deployment
    `kai-scheduler-default`)."""
    return name if name.endswith(SCHEDULER_SUFFIX) else name + SCHEDULER_SUFFIX


def identifies_as(identity: str, pod_name: str, label_values: Iterable[str]) -> bool:
    """A running pod is the scheduler's own: its name starts with the identity and a dash (a
    Deployment's or StatefulSet's pod), or one of its labels has the identity as value."""
    return pod_name.startswith(identity + "-") or identity in label_values


class _Metadata(Struct, rename="camel", gc=False):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = msgspec.field(default_factory=dict)


class _Waiting(Struct, gc=False):
    reason: str = ""


class _Running(Struct, gc=False):
    pass


class _State(Struct, gc=False):
    waiting: _Waiting | None = None
    running: _Running | None = None


class _ContainerStatus(Struct, rename="camel", gc=False):
    ready: bool = True
    restart_count: int = 0
    state: _State = msgspec.field(default_factory=_State)


class _Status(Struct, rename="camel", gc=False):
    phase: str = ""
    container_statuses: list[_ContainerStatus] = msgspec.field(default_factory=list)


class SchedulerPodView(Struct, rename="camel", gc=False):
    """The part of a pod the scheduler fold reads: its name, namespace, labels, and whether
    its containers run."""

    metadata: _Metadata = msgspec.field(default_factory=_Metadata)
    status: _Status = msgspec.field(default_factory=_Status)


class DownPod(Struct, frozen=True):
    """A scheduler's pod whose program does not run (Pending, or Running with every container
    waiting), as `kubectl get pods` shows it."""

    pod: str
    """`namespace/name`."""
    reason: str
    """The waiting container's reason (`CrashLoopBackOff`, `ImagePullBackOff`), or the phase
    of a pod none of whose containers has a state yet (`Pending`): one line, at most 128
    characters."""
    restarts: int = 0

    @property
    def restarted(self) -> str:
        """`restarted 14 times`; "" when it never restarted."""
        count = self.restarts
        return f"restarted {count} time{'' if count == 1 else 's'}" if count else ""

    @property
    def state(self) -> str:
        """`CrashLoopBackOff, restarted 14 times`."""
        return ", ".join(filter(None, (self.reason, self.restarted)))


_JUDGED_PHASES = frozenset({"Running", "Pending"})
"""The phases whose pods say whether a scheduler runs. `Unknown` is a node that stopped
reporting: its pod's state is stale, so it counts neither way, as before it was listed."""


def _not_serving(pod: str, status: _Status) -> DownPod | None:
    """The pod, when it does not run its program; None when one of its containers runs. A
    crash-looping container keeps its pod in phase Running (the kubelet restarts it in place),
    so the phase alone would count a scheduler that never stays up as running. Only a pod whose
    every container waits counts as down: a crash-looping sidecar beside a scheduler that runs,
    or a readiness check not yet passed, leaves the scheduler running. A Pending pod with no
    container running has not started (not placed, or its image not pulled): down, with its
    waiting container's reason or, before any container has a state, its phase. A Pending pod
    may run its scheduler beside a sidecar that waits (kubelet pkg/kubelet/kubelet_pods.go
    `getPhase` checks waiting containers before running ones): that one runs."""
    containers = status.container_statuses
    if status.phase == "Pending":
        if any(c.state.running is not None for c in containers):
            return None
        reasons = (c.state.waiting.reason for c in containers if c.state.waiting is not None)
        reason = next(filter(None, reasons), "")
        return DownPod(pod, quoted(reason, NAME_CAP) or "Pending")
    if not containers or any(c.state.waiting is None or c.ready for c in containers):
        return None
    first = containers[0]
    reason = first.state.waiting.reason if first.state.waiting is not None else ""
    return DownPod(pod, quoted(reason, NAME_CAP) or "waiting", first.restart_count)


class SchedulerPods:
    """The fold that looks, among the cluster's pods that run or are to run, for each named
    scheduler's own pod: its summary maps each scheduler found running to one such pod
    (`namespace/name`), and each found only with pods whose program does not run to one of
    them and its state."""

    view = SchedulerPodView

    def __init__(self, schedulers: Sequence[str]) -> None:
        self._wanted = {name: scheduler_identity(name) for name in schedulers}
        self._found: dict[str, str] = {}
        self._down: dict[str, DownPod] = {}

    @property
    def name(self) -> str:
        """Identifies the fold and the schedulers it looks for, in a snapshot."""
        return "schedulers-" + "-".join(sorted(self._wanted))

    def add(self, item: SchedulerPodView) -> None:
        """Note the first running pod of each scheduler looked for (or, until one is found,
        the first whose program does not run)."""
        metadata = item.metadata
        for scheduler, identity in self._wanted.items():
            if (
                scheduler not in self._found
                and item.status.phase in _JUDGED_PHASES
                and identifies_as(identity, metadata.name, metadata.labels.values())
            ):
                ref = f"{metadata.namespace}/{metadata.name}"
                down = _not_serving(ref, item.status)
                if down is None:
                    self._found[scheduler] = ref
                    self._down.pop(scheduler, None)
                else:
                    self._down.setdefault(scheduler, down)

    def summary(self) -> dict[str, Any]:
        """The schedulers found running, each with one of its pods; those whose pods were
        found but do not run, each with one pod and its state."""
        return {
            "running": dict(sorted(self._found.items())),
            "down": {k: msgspec.to_builtins(v) for k, v in sorted(self._down.items())},
        }


def schedulers_running(summary: Mapping[str, Any]) -> dict[str, str] | None:
    """The fold's summary as scheduler → pod; None when it is not of that shape."""
    running = summary.get("running")
    if not isinstance(running, Mapping):
        return None
    return {str(k): str(v) for k, v in running.items()}


def schedulers_down(summary: Mapping[str, Any]) -> dict[str, DownPod]:
    """The fold's summary as scheduler → its pod that does not run its program (none in a
    snapshot written before the fold looked, or one whose list is not of that shape)."""
    try:
        return msgspec.convert(summary.get("down") or {}, dict[str, DownPod])
    except msgspec.ValidationError:
        return {}


def waited_unjudged(pods: Sequence[KubeObject], now: datetime) -> bool:
    """Some pod has existed `UNJUDGED_SECONDS` or longer: with none of them judged, nothing
    that runs takes their scheduler's name."""
    for pod in pods:
        created = o.created_at(pod)
        if created is not None and (now - created).total_seconds() >= UNJUDGED_SECONDS:
            return True
    return False


def looked_at(pod: KubeObject) -> bool:
    """Some scheduler has judged the pod: it is placed, or carries the `PodScheduled`
    condition a scheduler writes when it cannot place it (kubernetes/kubernetes
    pkg/scheduler/schedule_one.go `handleSchedulingFailure`; volcano
    pkg/scheduler/cache/cache.go `taskUnschedulable`)."""
    return bool(o.node_name(pod)) or o.condition(pod, "PodScheduled") is not None


def heard_from_scheduler(pods: Sequence[KubeObject], events: Iterable[KubeObject]) -> bool:
    """Some Event on one of `pods` was posted by the scheduler that pod names: a scheduler's
    recorder bears its scheduler name. Volcano's core/v1 recorder has the source component
    `volcano` (or its one other `--scheduler-name`: volcano pkg/scheduler/cache/cache.go
    `newSchedulerCache`, pkg/util/util.go `GenerateComponentName`), which client-go copies into
    `reportingComponent` (tools/record/event.go `generateEvent`); kube-scheduler's
    events.k8s.io recorder, one per profile, has the reporting controller the profile's
    `schedulerName` (pkg/scheduler/profile/profile.go `newProfile`). Only a scheduler that runs
    posts them, on a pod it has judged: it posts `FailedScheduling` before it writes the pod's
    `PodScheduled` condition (volcano cache.go `taskUnschedulable`; kubernetes
    pkg/scheduler/schedule_one.go `handleSchedulingFailure`), so an Event may stand where the
    condition was never written. An Event about an earlier pod of the same name (another uid,
    or last seen before this pod was made) says nothing of this one."""
    by_name = {o.name_of(pod): pod for pod in pods}
    for event in events:
        involved = o.mapping(event.get("involvedObject") or event.get("regarding"))
        pod = by_name.get(str(involved.get("name") or ""))
        if involved.get("kind") != "Pod" or pod is None:
            continue
        scheduler = str(o.pod_spec(pod).get("schedulerName") or DEFAULT_SCHEDULER)
        if scheduler in _reporters(event) and not names_an_earlier_pod(
            str(involved.get("uid") or ""), event_time(event), pod
        ):
            return True
    return False


def _reporters(event: KubeObject) -> frozenset[str]:
    """Every name an Event gives its writer: core/v1 `source.component` and
    `reportingComponent`, events.k8s.io/v1 `deprecatedSource.component` and
    `reportingController`."""
    return frozenset(
        value
        for value in (
            o.mapping(event.get("source")).get("component"),
            o.mapping(event.get("deprecatedSource")).get("component"),
            event.get("reportingComponent"),
            event.get("reportingController"),
        )
        if isinstance(value, str) and value
    )


class GroupCondition(Struct, frozen=True):
    """A failing condition a gang scheduler wrote on its group: its words, as written."""

    type: str
    reason: str
    message: str
    reasons: tuple[str, ...] = ()
    """Each reason of its own where the condition carries several (KAI's `reasons`)."""


class PodGroupState(Struct, frozen=True):
    """A gang's group object as its scheduler keeps it."""

    name: str
    placed: bool
    """The scheduler has placed the gang."""
    phase: str
    min_member: int
    queue: str
    min_resources: Resources | None
    """`spec.minResources`; None when absent or not quantities."""
    failing: tuple[GroupCondition, ...]
    """The scheduler's failing conditions in force, its words as written."""


UNSCHEDULABLE = "Unschedulable"
"""The condition type Volcano writes on a gang it cannot place (`PodGroupUnschedulableType`)."""


SHORT_OF_PODS_REASONS: Final = frozenset({"NotEnoughTasks", "NotEnoughPodsOfTask"})
"""The reasons Volcano gives a group with fewer pods than it waits for: fewer than
`spec.minMember` (`NotEnoughPodsReason`), or fewer of one task than `spec.minTaskMember` names
(`NotEnoughPodsOfTaskReason`; from v1.14 also a sub-group short of its minimum) (volcano-sh/apis
pkg/apis/scheduling/v1beta1/types.go; volcano pkg/scheduler/plugins/gang/gang.go `validJobFn`).
v1.9 to v1.11 write them on the group (pkg/scheduler/framework/session.go `openSession`); from
v1.12 openSession writes nothing, and the gang plugin's `OnSessionClose` writes
`NotEnoughResources` on such a group too (`"%v/%v tasks in gang unschedulable: %v"`, the first
count above the second), which `counted_members` below `minMember` tells apart."""

PER_TASK_REASON: Final = "NotEnoughPodsOfTask"
"""Volcano's reason for a task (or sub-group) short of its own minimum, `minTaskMember`."""


_SIBLINGS = LazyPattern(
    r"pre-filter pod \S+ cannot find enough sibling pods, current pods number: \d+, "
    r"minMember of group: \d+"
)
"""The coscheduling plugin's refusal of a pod whose group has fewer pods than its `minMember`
(scheduler-plugins pkg/coscheduling/core/core.go `PreFilter`: `pre-filter pod %v cannot find
enough sibling pods, current pods number: %v, minMember of group: %v`), which kube-scheduler
writes after `0/N nodes are available:` (framework/types.go `FitError.Error`)."""


def sibling_refusal(pods: Sequence[KubeObject], ref: GangRef) -> GroupCondition | None:
    """The coscheduling plugin's word that the group `ref` has too few pods, as it wrote it on
    the `PodScheduled` condition of a pod of the group still to place: the group object keeps
    no condition of its own, so this is its scheduler's word on the group."""
    for pod in pods:
        if gang_of(pod) != ref or o.node_name(pod):
            continue
        scheduled = o.condition(pod, "PodScheduled")
        if not scheduled or scheduled.get("status") != "False":
            continue
        found = _SIBLINGS.search(str(scheduled.get("message") or ""))
        if found is not None:
            return GroupCondition("PodScheduled", str(scheduled.get("reason") or ""), found[0])
    return None


def counted_members(pods: Sequence[KubeObject], ref: GangRef) -> int:
    """The pods of the group `ref` its scheduler counts toward `minMember`: all but the failed
    and those being deleted. Volcano counts Pending, allocated, Pipelined and Succeeded tasks
    (pkg/scheduler/api/job_info.go `ValidTaskNum`); a pod with a deletionTimestamp is its
    `Releasing`, a Failed one its `Failed` (pkg/scheduler/api/helpers.go `getTaskStatus`)."""
    return sum(
        1 for p in pods if gang_of(p) == ref and o.phase(p) != "Failed" and not o.is_terminating(p)
    )


def pod_group(obj: KubeObject) -> PodGroupState:
    """The Volcano PodGroup `obj`, as types.go `PodGroupSpec` and `PodGroupStatus` hold it."""
    spec = o.mapping(obj.get("spec"))
    status = o.mapping(obj.get("status"))
    failing = tuple(
        GroupCondition(
            str(c.get("type", "")), str(c.get("reason") or ""), str(c.get("message") or "")
        )
        for c in map(o.mapping, o.sequence(status.get("conditions")))
        if c.get("type") == UNSCHEDULABLE and c.get("status") == "True"
    )
    phase = str(status.get("phase") or "Pending")
    return PodGroupState(
        o.name_of(obj),
        phase in PLACED_PHASES,
        phase,
        o.integer(spec.get("minMember")),
        str(spec.get("queue") or VOLCANO_DEFAULT_QUEUE),
        _resources(spec.get("minResources")),
        failing,
    )


def coscheduling_pod_group(obj: KubeObject) -> PodGroupState:
    """The coscheduling PodGroup `obj` (scheduler-plugins apis/scheduling/v1alpha1/types.go):
    no queue and no conditions."""
    spec = o.mapping(obj.get("spec"))
    phase = str(o.mapping(obj.get("status")).get("phase") or "Pending")
    return PodGroupState(
        o.name_of(obj),
        phase in COSCHEDULING_PLACED,
        phase,
        o.integer(spec.get("minMember")),
        "",
        _resources(spec.get("minResources")),
        (),
    )


def kai_pod_group(obj: KubeObject) -> PodGroupState:
    """The KAI PodGroup `obj` (v2alpha2 podgroup_types.go): placed once `status.running`
    reaches `spec.minMember`; each `UnschedulableOnNodePool` scheduling condition not False
    is its word, its `reasons` joined (else its deprecated `reason` and `message`)."""
    spec = o.mapping(obj.get("spec"))
    status = o.mapping(obj.get("status"))
    failing = []
    for c in map(o.mapping, o.sequence(status.get("schedulingConditions"))):
        if c.get("type") != KAI_UNSCHEDULABLE or c.get("status") == "False":
            continue
        reasons = [o.mapping(r) for r in o.sequence(c.get("reasons"))]
        message = "; ".join(
            f"{r.get('reason', '')}: {r.get('message', '')}" for r in reasons
        ) or str(c.get("message") or "")
        failing.append(
            GroupCondition(
                KAI_UNSCHEDULABLE,
                str(c.get("reason") or ""),
                message,
                tuple(str(r.get("reason") or "") for r in reasons),
            )
        )
    minimum = o.integer(spec.get("minMember"))
    return PodGroupState(
        o.name_of(obj),
        minimum > 0 and o.integer(status.get("running")) >= minimum,
        str(status.get("phase") or ""),
        minimum,
        str(spec.get("queue") or ""),
        None,
        tuple(failing),
    )


KAI_OVER_LIMIT: Final = "OverLimit"
"""KAI's reason on a group that would take its queue or a parent past a limit, alone or with
what the queue holds now (pkg/scheduler/api/unschedule_info.go, from
plugins/proportion/capacity_policy/max_allowed_check.go `isOverLimit`: `MaxAllowed <
Allocated + requested`): its own words do not say which, the queue's arithmetic does."""


def over_limit_only(condition: GroupCondition) -> bool:
    """Whether every reason KAI gives on the group is its queue limit's."""
    return bool(condition.reasons) and all(r == KAI_OVER_LIMIT for r in condition.reasons)


GROUP_READERS = {
    Kind.VOLCANO_POD_GROUP: pod_group,
    Kind.COSCHEDULING_POD_GROUP: coscheduling_pod_group,
    Kind.KAI_POD_GROUP: kai_pod_group,
}
"""How each group kind is read."""


class QueueState(Struct, frozen=True):
    """A Volcano Queue: whether it takes gangs, and what it can hold at most."""

    name: str
    state: str
    capability: Resources | None
    """`spec.capability`; None when it states none (no cap)."""


def volcano_queue(obj: KubeObject) -> QueueState:
    """The Volcano Queue `obj` (types.go `QueueSpec`, `QueueStatus`); a queue whose state is
    not written yet is taken as open, as the queue controller opens new queues."""
    spec = o.mapping(obj.get("spec"))
    status = o.mapping(obj.get("status"))
    return QueueState(
        o.name_of(obj), str(status.get("state") or OPEN), _resources(spec.get("capability"))
    )


def beyond(wanted: Resources, cap: Resources) -> list[str]:
    """The resources `wanted` asks more of than `cap` holds (only those `cap` names)."""
    capped = cap.names
    return [r for r, amount in wanted.amounts if r in capped and amount > cap.get(r)]


def _resources(value: object) -> Resources | None:
    if not isinstance(value, Mapping) or not value:
        return None
    try:
        return Resources.parse({str(k): str(v) for k, v in value.items()})
    except QuantityError:
        return None


KAI_RESOURCES = (
    ("gpu", "nvidia.com/gpu", Decimal(1)),
    ("cpu", "cpu", Decimal(1)),
    ("memory", "memory", Decimal(1_000_000)),
)
"""A KAI Queue's resources, the Kubernetes resource each counts, and how many of doctor's units
(Resources: whole devices, millicores, bytes) one of KAI's is: GPUs in devices, CPU in
millicores, memory in megabytes of 10^6 bytes (docs/queues/README.md "Resource Units";
plugins/proportion/proportion.go multiplies memory by 1000 * 1000)."""
LONGEST_QUEUE_CHAIN = 32
"""Parents followed at most: a chain longer (or a loop) is not judged."""


class KaiQueue(Struct, frozen=True):
    """A KAI Queue as its scheduler reads it (queue_info.go `NewQueueInfo`)."""

    name: str
    parent: str
    limits: tuple[tuple[str, Decimal], ...]
    """Per Kubernetes resource name, the limit in doctor's units where the queue states a
    positive one. Unlimited (-1, pkg/common/constants `UnlimitedResourceQuantity`) caps
    nothing; a limit of 0 or none stated is left unjudged (KAI's docs read it as no room beyond
    the quota, its capacity check as no room at all)."""
    held: tuple[tuple[str, Decimal], ...] | None = None
    """Per Kubernetes resource name of KAI_RESOURCES, what the queue and the queues under it
    hold now in doctor's units, as KAI's queue controller last wrote it (`status.allocated`, a
    sum of its groups' allocated pods: resource_updater.go `UpdateQueue`); None where a value
    is not a quantity. The controller leaves an empty sum out (`omitempty`): nothing held."""


def kai_queue(obj: KubeObject) -> KaiQueue:
    """The KAI Queue `obj` (v2 queue_types.go `QueueSpec`: `parentQueue`, `resources.{gpu,
    cpu,memory}.limit`)."""
    spec = o.mapping(obj.get("spec"))
    resources = o.mapping(spec.get("resources"))
    limits = []
    for field, name, unit in KAI_RESOURCES:
        limit = o.mapping(resources.get(field)).get("limit")
        if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0:
            limits.append((name, Decimal(str(limit)) * unit))
    return KaiQueue(
        o.name_of(obj),
        str(spec.get("parentQueue") or ""),
        tuple(limits),
        _kai_held(o.mapping(o.mapping(obj.get("status")).get("allocated"))),
    )


def _kai_held(allocated: Mapping[str, Any]) -> tuple[tuple[str, Decimal], ...] | None:
    """A KAI Queue's `status.allocated` (Kubernetes quantities: a GPU may be a fraction of a
    device, podgroupcontroller resources/received.go) in doctor's units."""
    held = []
    for _, name, _ in KAI_RESOURCES:
        value = allocated.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return None
        try:
            amount = parse_quantity(str(value))
        except QuantityError:
            return None
        held.append((name, amount * 1000 if name == CPU else amount))
    return tuple(held)


class KaiQueueChain(Struct, frozen=True):
    """A group's KAI queue with its parents, as far as they exist."""

    queues: tuple[KaiQueue, ...]
    """The queue first, then each parent, as far as found."""
    missing: str
    """The first name in the chain that no Queue has ('' when all exist)."""
    children: tuple[str, ...]
    """The queues whose parent is the group's queue (a job's queue must have none)."""
    judged: bool = True
    """False when the chain is longer than LONGEST_QUEUE_CHAIN or loops."""


def kai_chain(name: str, queues: Sequence[KaiQueue]) -> KaiQueueChain:
    """The queue `name` and its parents among `queues`."""
    by_name = {q.name: q for q in queues}
    children = tuple(sorted(q.name for q in queues if q.parent == name))
    chain: list[KaiQueue] = []
    wanted = name
    while wanted:
        if len(chain) >= LONGEST_QUEUE_CHAIN or any(q.name == wanted for q in chain):
            return KaiQueueChain(tuple(chain), "", children, judged=False)
        queue = by_name.get(wanted)
        if queue is None:
            return KaiQueueChain(tuple(chain), wanted, children)
        chain.append(queue)
        wanted = queue.parent
    return KaiQueueChain(tuple(chain), "", children)


def over_limit(wanted: Resources, queue: KaiQueue) -> list[tuple[str, Decimal]]:
    """The resources `wanted` asks more of than `queue`'s limit, with that limit."""
    return [(name, limit) for name, limit in queue.limits if wanted.get(name) > limit]


def full_now(wanted: Resources, queue: KaiQueue) -> list[tuple[str, Decimal, Decimal]]:
    """The resources whose limit `wanted` would pass on top of what `queue` holds now, with
    the limit and what it holds (max_allowed_check.go `isOverLimit`: `MaxAllowed < Allocated +
    requested`, a resource the job does not ask for skipped); none where the holding is not
    known."""
    if queue.held is None:
        return []
    held = dict(queue.held)
    return [
        (name, limit, held[name])
        for name, limit in queue.limits
        if wanted.get(name) and held[name] + wanted.get(name) > limit
    ]


class KaiLimit(Struct, frozen=True):
    """The first of a group's KAI queues whose limit holds the job back: `over` where the job
    alone passes it (it never starts), else `full` where it passes it with what the queue holds
    now (it waits)."""

    queue: KaiQueue
    over: tuple[tuple[str, Decimal], ...] = ()
    full: tuple[tuple[str, Decimal, Decimal], ...] = ()


def kai_limit(wanted: Resources, chain: KaiQueueChain, *, placed: bool) -> KaiLimit | None:
    """The queue of `chain` (its own, then its parents': KAI checks them all,
    max_allowed_check.go `resultsOverLimit`) whose limit the job's `wanted` passes, alone or,
    while none of its pods is `placed` (a placed pod is in the holding already), with what the
    queue holds now; None where every limit lets it through."""
    for queue in chain.queues:
        over = over_limit(wanted, queue)
        if over:
            return KaiLimit(queue, over=tuple(over))
    if placed:
        return None
    for queue in chain.queues:
        full = full_now(wanted, queue)
        if full:
            return KaiLimit(queue, full=tuple(full))
    return None
