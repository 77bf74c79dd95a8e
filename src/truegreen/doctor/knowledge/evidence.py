"""What the cluster has already measured about a training job, read from its own words.

The scheduler writes why it could not place a pod into the pod's `PodScheduled` condition; the
Job controller (and every controller that creates pods) records each refused create as a
`FailedCreate` Event on the job; the attach-detach controller records a volume it cannot attach
as `FailedAttachVolume` on the pod; a finished job says why it failed in its `Failed` condition,
and its pods say how their programs ended. Each of these is a measurement the moment it exists,
whatever arithmetic would predict. Everything here is pure: typed readings of objects.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import Kind, KubeObject
from truegreen.doctor.knowledge.reports import event_time, names_an_earlier, names_an_earlier_pod
from truegreen.doctor.knowledge.scheduler_name import DEFAULT_SCHEDULER
from truegreen.doctor.knowledge.training import TrainingJob, indexes_text
from truegreen.patterns import LazyPattern
from truegreen.pull_reasons import FAILED_PULL_REASONS

# -- the scheduler ------------------------------------------------------------------------------


class Obstacle(StrEnum):
    """What kept machines from taking a pod, by the scheduler's own reason."""

    ROOM = "room"
    """Not enough free room (NodeResourcesFit: `Insufficient cpu`, `Too many pods`)."""
    PLACEMENT_RULES = "placement-rules"
    """The pod's node selector or node affinity (NodeAffinity)."""
    TAINT = "taint"
    """A taint the pod does not tolerate (TaintToleration)."""
    CLOSED = "closed"
    """Cordoned (NodeUnschedulable)."""
    VOLUME = "volume"
    """Its volumes: in another zone, not bound, not found (VolumeBinding, VolumeZone)."""
    VOLUME_IN_USE = "volume-in-use"
    """A ReadWriteOncePod volume another pod uses, wherever it runs: the volume is reachable,
    and held (VolumeRestrictions `ErrReasonReadWriteOncePodConflict`)."""
    NO_FREE_VOLUME = "no-free-volume"
    """No free volume fits its claim not bound yet from the machine, and its class makes none
    there (VolumeBinding `ErrReasonBindConflict`: binder.go `FindPodVolumes`,
    `findMatchingVolumes` then `checkVolumeProvisions`)."""
    POD_RULES = "pod-rules"
    """The pod's own inter-pod affinity or anti-affinity (InterPodAffinity)."""
    OTHERS_RULES = "others-rules"
    """The running pods' required anti-affinity, which refuses the pod (InterPodAffinity
    `ErrReasonExistingAntiAffinityRulesNotMatch`, `satisfyExistingPodsAntiAffinity`)."""
    SPREAD = "spread"
    """Topology spread constraints (PodTopologySpread)."""
    DEVICES = "devices"
    """Devices of dynamic resource allocation (DynamicResources)."""
    PORTS = "ports"
    """Host ports already taken (NodePorts)."""
    OTHER = "other"


class Reason(Struct, frozen=True):
    """One reason of a scheduler's message: how many machines it held back, and why."""

    machines: int | None
    """None for a message that counts no machines: the scheduler's whole reason, as written
    (`parse_scheduler_message`)."""
    text: str
    """As the scheduler wrote it after the count (`Insufficient nvidia.com/gpu`, `node(s) were
    unschedulable`)."""
    obstacle: Obstacle
    detail: str = ""
    """The resource short of (ROOM) or the taint's key (TAINT; "" where the scheduler does not
    say it)."""


class SchedulerVerdict(Struct, frozen=True):
    """A pod the scheduler marked unschedulable, in its own words."""

    pod: str
    message: str
    machines: int | None
    """How many machines it looked at (`0/5 nodes are available`); None when not said."""
    reasons: tuple[Reason, ...]
    nominated: str = ""
    """The machine it is nominated for (`status.nominatedNodeName`), "" for none."""

    @property
    def only_room(self) -> bool:
        """Every machine it looked at was held back for room alone (free devices of dynamic
        resource allocation included): the wait for running work to finish can explain it."""
        return bool(self.reasons) and all(
            r.obstacle is Obstacle.ROOM or r.text == CANNOT_ALLOCATE for r in self.reasons
        )

    @property
    def preempting(self) -> bool:
        """The scheduler has preempted for it and waits for what it stopped on the machine it
        nominated: it says so rather than preempt again (defaultpreemption
        PodEligibleToPreemptOthers), and binds the pod there once that room is free."""
        return bool(self.nominated) and _VICTIM_STOPPING in self.message


_VICTIM_STOPPING = "not eligible due to a terminating pod on the nominated node"
"""The preemption plugin's words when a lower-priority pod it stopped on the nominated machine is
still terminating (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go)."""


CANNOT_ALLOCATE = "cannot allocate all claims"
"""The DynamicResources filter's word when the devices a pod's claims ask for can't all be
allocated on a machine now: Unschedulable, not UnschedulableAndUnresolvable, as
`Insufficient cpu` is (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go
`Filter`), since devices come back as claims are deallocated."""


# The phrases of kube-scheduler's filter plugins (pkg/scheduler/framework/plugins/*: the
# ErrReason constants), matched in the order given; each message lists "N reason" pairs.
_PHRASES: tuple[tuple[LazyPattern, Obstacle], ...] = (
    (LazyPattern(r"^Insufficient (?P<detail>\S+)$"), Obstacle.ROOM),
    (LazyPattern(r"^Too many pods$"), Obstacle.ROOM),
    (LazyPattern(r"didn't match Pod's node affinity/selector"), Obstacle.PLACEMENT_RULES),
    # From 1.35 (and 1.34.2, kubernetes#135023) the taint's key and value are no longer said,
    # only logged (kubernetes#134740; tainttoleration/taint_toleration.go `Filter`).
    (LazyPattern(r"had untolerated taint\(s\)"), Obstacle.TAINT),
    (LazyPattern(r"had untolerated taint \{(?P<detail>[^:}]+)"), Obstacle.TAINT),
    # Before 1.25: `had taint {key: value}, that the pod didn't tolerate` (its tail is split off).
    (LazyPattern(r"had taints? \{(?P<detail>[^:}]+)"), Obstacle.TAINT),
    (LazyPattern(r"were unschedulable"), Obstacle.CLOSED),
    (
        LazyPattern(r"volume node affinity conflict|available volume zone|volume zone conflict"),
        Obstacle.VOLUME,
    ),
    # volumerestrictions/volume_restrictions.go `ErrReasonReadWriteOncePodConflict`.
    (LazyPattern(r"ReadWriteOncePod access mode"), Obstacle.VOLUME_IN_USE),
    # volumebinding/binder.go `ErrReasonBindConflict`.
    (LazyPattern(r"didn't find available persistent volumes to bind"), Obstacle.NO_FREE_VOLUME),
    (LazyPattern(r"persistent ?volume|PersistentVolumeClaim|pvc", re.IGNORECASE), Obstacle.VOLUME),
    # interpodaffinity/filtering.go `ErrReasonExistingAntiAffinityRulesNotMatch`: the running
    # pods' rules, not the pod's own (`ErrReasonAffinityRulesNotMatch`, `…AntiAffinity…`).
    (LazyPattern(r"existing pods anti-affinity"), Obstacle.OTHERS_RULES),
    (LazyPattern(r"pod (anti-)?affinity"), Obstacle.POD_RULES),
    (LazyPattern(r"topology spread constraints"), Obstacle.SPREAD),
    (LazyPattern(r"claim|device", re.IGNORECASE), Obstacle.DEVICES),
    (LazyPattern(r"free ports"), Obstacle.PORTS),
)
_COUNTED = LazyPattern(r"^(?P<count>\d+) (?P<reason>.+)$")
"""A counted reason, its text whole after the count (`node(s) didn't satisfy plugin(s) [X]`):
one doctor has no words for is quoted as the scheduler wrote it."""
CLUSTER_WAIT = "request is waiting for cluster resources become available"
"""YuniKorn's word on a request that fits its queue's headroom but waits for the cluster's
machines to have room (yunikorn-core pkg/scheduler/scheduler.go `inspectOutstandingRequests`,
a FAILED scheduling state), which its shim writes as the pod's `PodScheduled` False, reason
`Unschedulable` (yunikorn-k8shim pkg/cache/context.go `HandleContainerStateUpdate`): a lack of
room, as kube-scheduler's `Insufficient …` is, with no count of machines."""

_HEAD = LazyPattern(
    r"^(?:0/(?P<machines>\d+) nodes are (?:un)?available|all nodes are unavailable): "
)
"""kube-scheduler's `0/N nodes are available: ` (framework/types.go `FitError.Error`), and
Volcano's `0/N nodes are unavailable: ` or `all nodes are unavailable: ` (volcano-sh/volcano
pkg/scheduler/api/unschedule_info.go `FitErrors.Error`), each followed by counted reasons."""


def _reason(count: int, text: str) -> Reason:
    for pattern, obstacle in _PHRASES:
        found = pattern.search(text)
        if found is not None:
            detail = found.groupdict().get("detail") or ""
            return Reason(count, text, obstacle, detail.strip())
    return Reason(count, text, Obstacle.OTHER)


def parse_scheduler_message(message: str) -> tuple[int | None, tuple[Reason, ...]]:
    """`0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) had untolerated
    taint {node.kubernetes.io/unreachable: }. preemption: …` as (5, its reasons). The part after
    `preemption:` says what preemption could do, not why the machines were held back.

    A PreFilter plugin's refusal comes without a count (`0/2 nodes are available: pod has
    unbound immediate PersistentVolumeClaims. preemption: …`): kube-scheduler writes
    `0/N nodes are available: <PreFilterMsg>.` and then no filter's reasons, for the refusal
    holds every machine back (framework/types.go `FitError.Error`). That text, whole (a
    plugin's reasons are joined with commas, `Status.Message`), is the one reason, of all N
    machines, and is quoted as written: its words say more than a rule for its kind would.

    A message with no `0/N nodes are available:` part is the scheduler's whole reason, quoted
    as written with no count. kube-scheduler writes a Permit plugin's rejection that way: a
    pod a Permit plugin held waiting is rejected with `rejected due to timeout after waiting
    %v at plugin %v` (framework/runtime/waiting_pods_map.go `newWaitingPod`), which
    schedule_one.go `handleSchedulingFailure` writes as the condition's message, reason
    `Unschedulable` (until kubernetes#119046 and #119785 wrapped Permit's rejections in a
    FitError of one machine, `0/1 nodes are available: 1 rejected …`, a counted reason); so is
    `no nodes available to schedule pods` (`ErrNoNodesAvailable`). Volcano writes on a pod with
    no fit error of its own the job's (volcano pkg/scheduler/api/job_info.go
    `TaskSchedulingReason`: `JobFitErrors`, the gang plugin's `4/4 tasks in gang
    unschedulable: …` up to v1.9; from v1.10 cache.go `RecordJobStatusEvent` falls back to
    `JobInfo.FitError()`, `pod group is not ready, …`). YuniKorn's `CLUSTER_WAIT` is such a
    message too, and a lack of room."""
    head = _HEAD.match(message)
    if head is None:
        obstacle = Obstacle.ROOM if message == CLUSTER_WAIT else Obstacle.OTHER
        return None, ((Reason(None, message, obstacle),) if message else ())
    body = message[head.end() :].split(" preemption:", 1)[0]
    said = _filter_reasons(body).strip().rstrip(".")
    machines = int(head["machines"]) if head["machines"] is not None else None
    if machines is not None and said and _COUNTED.match(said) is None:
        return machines, (Reason(machines, said, Obstacle.OTHER),)
    reasons = []
    for part in _split_reasons(said):
        counted = _COUNTED.match(part.strip())
        if counted is not None:
            reasons.append(_reason(int(counted["count"]), counted["reason"].strip()))
    return machines, tuple(reasons)


def _filter_reasons(body: str) -> str:
    """The filters' reasons of a message, without what the post-filter plugins added after them
    (DynamicResources' `still not schedulable`): kube-scheduler ends the reasons with a period
    and appends each further message as ` %v.` (framework/types.go `FitError.Error`,
    `SeparatorFormat`), so they end at the first period followed by a space outside a taint's
    braces."""
    depth = 0
    for index, char in enumerate(body):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "." and depth == 0 and body[index + 1 : index + 2] == " ":
            return body[:index]
    return body


def _split_reasons(body: str) -> list[str]:
    """The reasons of a message, split at the commas between them (not inside a taint's
    braces: `{key: value}`)."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in body:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p for p in parts if p.strip()]


def scheduler_verdict(pod: KubeObject) -> SchedulerVerdict | None:
    """The scheduler's word on a pod it could not place: `PodScheduled` False with reason
    `Unschedulable` (pkg/scheduler/schedule_one.go, handleSchedulingFailure); None otherwise."""
    if o.node_name(pod):
        return None
    condition = o.condition(pod, "PodScheduled")
    if (
        condition is None
        or condition.get("status") != "False"
        or condition.get("reason") != "Unschedulable"
    ):
        return None
    message = str(condition.get("message") or "")
    machines, reasons = parse_scheduler_message(message)
    nominated = str(o.mapping(pod.get("status")).get("nominatedNodeName") or "")
    return SchedulerVerdict(o.name_of(pod), message, machines, reasons, nominated)


# -- events -------------------------------------------------------------------------------------


class Cause(StrEnum):
    """Why a controller's create of a pod was refused, by the API server's words."""

    QUOTA = "quota"
    QUOTA_NEEDS_SIZES = "quota-needs-sizes"
    """A quota on cpu or memory, and a container that does not state that size (docs/
    admission.md's `quota-needs-sizes`)."""
    LIMIT_RANGE = "limit-range"
    WEBHOOK = "webhook"
    """A webhook's own answer: it denied the pod."""
    WEBHOOK_DOWN = "webhook-down"
    """A fail-closed webhook the API server could not call (docs/admission.md's `webhook-down`):
    it was never reached and refused nothing about the pod."""
    POD_SECURITY = "pod-security"
    INVALID = "invalid"
    OTHER = "other"


_CAUSES: tuple[tuple[LazyPattern, Cause], ...] = (
    # plugin/pkg/admission/resourcequota: "exceeded quota: …", "status unknown for quota: …"
    (LazyPattern(r"exceeded quota|status unknown for quota"), Cause.QUOTA),
    # resourcequota/controller.go `checkRequest`: `failed quota: %s: %v` with the pod
    # evaluator's Constraints (`_UNSTATED_SIZES`); `Failed quota` before 1.9.
    (LazyPattern(r"(?i)failed quota: [^:]+: must specify "), Cause.QUOTA_NEEDS_SIZES),
    # plugin/pkg/admission/limitranger: "maximum memory usage per Container is …"
    (
        LazyPattern(r"(?i)(minimum|maximum) \S+ usage per (Container|Pod)|limit to request ratio"),
        Cause.LIMIT_RANGE,
    ),
    # apiserver pkg/util/webhook/error.go ErrCallingWebhook: `failed calling webhook "x": …`
    # (`failed to call webhook: Post …: connection refused`, a timeout, an invalid answer),
    # which the dispatchers (pkg/admission/plugin/webhook/mutating/dispatcher.go `Dispatch`,
    # validating/dispatcher.go) return as `apierrors.NewInternalError` when failing closed.
    (LazyPattern(r'failed calling webhook "'), Cause.WEBHOOK_DOWN),
    # apiserver/pkg/admission/plugin/webhook/errors/statuserror.go `ToStatusErr`:
    # `admission webhook "x" denied the request`, the hook's own answer.
    (LazyPattern(r'admission webhook "'), Cause.WEBHOOK),
    # pod-security-admission: `violates PodSecurity "restricted:latest": …`
    (LazyPattern(r"violates PodSecurity"), Cause.POD_SECURITY),
    # apimachinery errors.NewInvalid names the kind: `Pod "x" is invalid: …`
    (LazyPattern(r'Pod "[^"]*" is invalid'), Cause.INVALID),
)


class Refusal(Struct, frozen=True):
    """A refused create of a job's pod, as the controller recorded it."""

    cause: Cause
    reason: str
    """The Event's reason (`FailedCreate`)."""
    involved: str
    """`Kind/name` of the object the Event is about: the job, or a Job its controller made."""
    message: str
    """The server's words, after the controller's `Error creating: ` (redacted, bounded)."""
    count: int
    last_seen: str


class AttachFailure(Struct, frozen=True):
    """A volume the attach-detach controller could not attach for a pod."""

    pod: str
    message: str
    multi_attach: bool
    """`Multi-Attach error`: the volume is attached to another machine and can be attached
    to one at a time (pkg/controller/volume/attachdetach/reconciler)."""


_MESSAGE_CAP = 600


def _bounded(text: str) -> str:
    return text if len(text) <= _MESSAGE_CAP else text[: _MESSAGE_CAP - 1] + "…"


def _involved(event: Mapping[str, Any]) -> tuple[str, str, str]:
    involved = o.mapping(event.get("involvedObject"))
    return (
        str(involved.get("kind") or ""),
        str(involved.get("name") or ""),
        str(involved.get("uid") or ""),
    )


def _last_seen(event: Mapping[str, Any]) -> str:
    series = o.mapping(event.get("series"))
    for value in (
        series.get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        o.mapping(event.get("metadata")).get("creationTimestamp"),
    ):
        if isinstance(value, str) and value:
            return value
    return ""


class UnstatedSizes(Struct, frozen=True):
    """The sizes a quota requires every container to state, and the containers that do not."""

    quota: str
    sizes: tuple[str, ...]
    containers: tuple[str, ...]
    """Empty where the words name none (before the containers were named)."""


_UNSTATED_SIZES = LazyPattern(r"(?i)failed quota: (?P<quota>[^:]+): must specify (?P<what>.+)$")
"""pkg/quota/v1/evaluator/core/pods.go `Constraints`: `must specify %s`, each resource with
`%s for: %s` (its containers joined by ","), joined by "; "; earlier, the resources alone
joined by ","."""


def unstated_sizes(message: str) -> UnstatedSizes | None:
    """The quota plugin's `failed quota: q: must specify …` read back; None for other words."""
    found = _UNSTATED_SIZES.search(message)
    if found is None:
        return None
    sizes: list[str] = []
    containers: set[str] = set()
    for part in found.group("what").split("; "):
        size, named, names = part.partition(" for: ")
        if named:
            sizes.append(size.strip())
            containers.update(n for n in names.strip().split(",") if n)
        else:
            sizes += [s.strip() for s in size.split(",") if s.strip()]
    return UnstatedSizes(found.group("quota").strip(), tuple(sizes), tuple(sorted(containers)))


_UNCALLED_HOOK = LazyPattern(r'failed calling webhook "(?P<hook>[^"]*)"')


def uncalled_hook(message: str) -> str:
    """The webhook the API server could not call (`failed calling webhook "x"`, ErrCallingWebhook
    quotes its name with %q), '' where the message names none."""
    found = _UNCALLED_HOOK.search(message)
    return found.group("hook") if found is not None else ""


def cause_of(message: str) -> Cause:
    """What refused a pod, from the server's message."""
    for pattern, cause in _CAUSES:
        if pattern.search(message):
            return cause
    return Cause.OTHER


_REFUSED_REASONS = frozenset({"FailedCreate", "FailedCreatePod"})
"""pkg/controller/controller_utils.go `FailedCreatePodReason` (the Job controller's, and the
training operator's copy of it); `FailedCreatePod` where a controller names it so."""


def refusals(
    events: Iterable[KubeObject], job: TrainingJob, jobs: Sequence[KubeObject] = ()
) -> list[Refusal]:
    """The refused creates recorded for a training job (the newest first): on the job itself
    (pkg/controller/job/job_controller.go: `Error creating: %v`), or on a Job its controller
    made (a JobSet's, an MPIJob's launcher), whose Job controller refuses (`_of_child_job`;
    `jobs` are the namespace's Jobs as read). An Event about an earlier object of the same
    name (one deleted and submitted again) is not the job's (`names_an_earlier`)."""
    read = {o.name_of(j): j for j in jobs}
    found = []
    for event in events:
        reason = str(event.get("reason") or "")
        if reason not in _REFUSED_REASONS:
            continue
        kind, name, uid = _involved(event)
        seen = event_time(event)
        if kind == job.kind.spec.name and name == job.name:
            mine = not names_an_earlier(uid, seen, job.uid, job.created)
        else:
            mine = kind == "Job" and _of_child_job(job, name, uid, seen, read.get(name))
        if not mine:
            continue
        message = str(event.get("message") or "").removeprefix("Error creating: ")
        found.append(
            Refusal(
                cause_of(message),
                reason,
                f"{kind}/{name}",
                _bounded(message),
                o.integer(event.get("count"), 1),
                _last_seen(event),
            )
        )
    return sorted(found, key=lambda r: r.last_seen, reverse=True)


def _of_child_job(
    job: TrainingJob, name: str, uid: str, seen: datetime | None, child: KubeObject | None
) -> bool:
    """Whether an Event about the Job `name` (with `uid`, last seen at `seen`) is about one of
    the Jobs `job`'s controller made. A Job that was read says whose it is: its controller
    owner reference (`_made_by`), and the Event must name that Job's uid. One not read is the
    job's only when its name is one its controller gives a Job it makes (`makes_job`:
    `llama-eval-workers-0` is none of JobSet `llama`'s, `mpi-launcher` is MPIJob `mpi`'s), and
    the Event was last seen after the job was made."""
    if child is not None:
        return _made_by(job, child) and not names_an_earlier(
            uid, seen, o.uid_of(child), o.created_at(child)
        )
    return job.makes_job(name) and not names_an_earlier("", seen, "", job.created)


def _made_by(job: TrainingJob, child: KubeObject) -> bool:
    """Whether the training job's controller made the Job `child`: the Job's controller owner
    reference names the job, by its uid where both are known (the JobSet controller's
    `SetControllerReference`, mpi-operator's `newLauncherJob`, kuberay's submitter Job:
    rayjob_controller.go `createNewK8sJob`), or, for a TrainJob, the JobSet named after it
    (whose uid the TrainJob's record does not hold). A Job made before the job was is an
    earlier job's of the same name: a controller makes its Jobs after its job exists."""
    controller = o.controller_of(child) or {}
    kind, owner, owner_uid = (str(controller.get(k) or "") for k in ("kind", "name", "uid"))
    if job.kind is Kind.TRAIN_JOB:
        named = kind == Kind.JOB_SET.spec.name and owner == job.name
    else:
        named = kind == job.kind.spec.name and owner == job.name
        named = named and not (owner_uid and job.uid and owner_uid != job.uid)
    return named and not names_an_earlier("", o.created_at(child), "", job.created)


def waiting_to_attach(pods: Sequence[KubeObject]) -> list[KubeObject]:
    """The pods an attach failure can still hold: on a machine, not running, not ending. One
    that runs has its volumes attached (the kubelet waits for them before it starts the
    containers); one that ended or is being deleted waits for nothing."""
    return [p for p in o.remaining(pods) if o.node_name(p) and o.phase(p) != "Running"]


def attach_failures(
    events: Iterable[KubeObject], pods: Sequence[KubeObject]
) -> list[AttachFailure]:
    """`FailedAttachVolume` Events of the given pods, one per pod (the newest). An Event about
    an earlier pod of the same name (a job submitted again) is not the pod's
    (`names_an_earlier_pod`): the controller names the pod object it was attaching for."""
    by_name = {o.name_of(pod): pod for pod in pods}
    newest: dict[str, tuple[float, AttachFailure]] = {}
    for event in events:
        if event.get("reason") != "FailedAttachVolume":
            continue
        kind, name, uid = _involved(event)
        pod = by_name.get(name)
        seen = event_time(event)
        if kind != "Pod" or pod is None or names_an_earlier_pod(uid, seen, pod):
            continue
        message = str(event.get("message") or "")
        stamp = seen.timestamp() if seen is not None else 0.0
        failure = AttachFailure(name, _bounded(message), message.startswith("Multi-Attach error"))
        if name not in newest or stamp > newest[name][0]:
            newest[name] = (stamp, failure)
    return [failure for _, failure in sorted(newest.values(), key=lambda v: v[1].pod)]


def attach_reported(events: Iterable[KubeObject]) -> list[str]:
    """The pods `FailedAttachVolume` Events name, whatever their state: what
    `attach_failures` would judge, once the pods are read."""
    names = (_involved(event) for event in events if event.get("reason") == "FailedAttachVolume")
    return sorted({name for kind, name, _ in names if kind == "Pod" and name})


# -- a job that failed --------------------------------------------------------------------------


class Ending(StrEnum):
    """How a failed job's program ended, by what its pods and its conditions say."""

    OUT_OF_MEMORY = "out-of-memory"
    OVER_DISK_LIMIT = "over-disk-limit"
    """Evicted for writing more to local disk than the job's own limit: again on every start."""
    EVICTED = "evicted"
    """Evicted because its machine ran short."""
    DEADLINE = "deadline"
    IMAGE = "image"
    PROGRAM_FAILED = "program-failed"
    REFUSED = "refused"
    """Its controller refused its settings: none of it ran."""
    NOT_PLACED = "not-placed"
    """Its scheduler failed its pod before giving it a machine: none of it ran."""
    GROUP_NO_ROOM = "group-no-room"
    """Its scheduler gave up waiting for room for the whole job at once: none of it ran."""
    MACHINE_REFUSED = "machine-refused"
    """The machine its pod was given refused to run it (the kubelet's admission): none of it
    ran."""
    UNKNOWN = "unknown"


class DiskLimitOf(StrEnum):
    """Whose local-disk limit an eviction was for."""

    PROGRAMS = "programs"
    """The pod's: its containers' ephemeral-storage limits added up."""
    PROGRAM = "program"
    """One container's ephemeral-storage limit."""
    VOLUME = "volume"
    """An emptyDir volume's sizeLimit."""


class DiskLimit(Struct, frozen=True):
    """The job's own local-disk limit the kubelet evicted a pod for going over."""

    of: DiskLimitOf
    name: str
    """The container or the volume; empty for the pod's total."""
    limit: str
    """The limit as the kubelet printed it (`10Gi`)."""


class JobFailure(Struct, frozen=True):
    """Why a finished job failed: its condition, and what its pods showed."""

    ending: Ending
    reason: str
    """The job's `Failed` condition reason (`BackoffLimitExceeded`, `DeadlineExceeded`)."""
    detail: str
    """One line with the Kubernetes words: the pod, container and what ended it."""
    disk_limit: DiskLimit | None = None
    """The limit gone over, for `Ending.OVER_DISK_LIMIT`."""
    said: str = ""
    """What failed a pod that never ran, in its words (`reason: message`), for the endings of
    a pod none of whose containers ran; empty for the others."""
    by: str = ""
    """Who refused it: the scheduler (`spec.schedulerName`) for `NOT_PLACED` and
    `GROUP_NO_ROOM`, the machine for `MACHINE_REFUSED`; empty for the others."""


# pkg/kubelet/eviction/helpers.go, the messages eviction_manager.go localStorageEviction gives a
# pod over its own limits: emptyDirMessageFmt, podEphemeralStorageMessageFmt (the quantity's
# String(), unquoted) and containerEphemeralStorageMessageFmt.
_OVER_VOLUME = LazyPattern(r'Usage of EmptyDir volume "([^"]*)" exceeds the limit "([^"]*)"\.')
_OVER_PROGRAMS = LazyPattern(
    r"Pod ephemeral local storage usage exceeds the total limit of containers (\S+)\."
)
_OVER_PROGRAM = LazyPattern(
    r'Container (\S+) exceeded its local ephemeral storage limit "([^"]*)"\.'
)


def _disk_limit_of(message: str) -> DiskLimit | None:
    """The job's own local-disk limit an eviction `message` says the pod went over; None for
    any other eviction (its machine ran short: `The node was low on resource: …`)."""
    if found := _OVER_VOLUME.match(message):
        return DiskLimit(DiskLimitOf.VOLUME, found.group(1), found.group(2))
    if found := _OVER_PROGRAMS.match(message):
        return DiskLimit(DiskLimitOf.PROGRAMS, "", found.group(1))
    if found := _OVER_PROGRAM.match(message):
        return DiskLimit(DiskLimitOf.PROGRAM, found.group(1), found.group(2))
    return None


class _PodEnding(Struct, frozen=True):
    """How one pod ended, with the limit it went over when that ended it."""

    ending: Ending
    detail: str
    disk_limit: DiskLimit | None = None
    said: str = ""
    by: str = ""


_DEADLINE_EXCEEDED = "DeadlineExceeded"
"""The reason of a pod the kubelet stopped past its `activeDeadlineSeconds`
(pkg/kubelet/active_deadline.go), and of a Job its controller failed past its own
(pkg/controller/job/job_controller.go)."""


_IMAGE_FAILED = FAILED_PULL_REASONS | {"InvalidImageName"}
"""A container whose image the kubelet could not pull (pull_reasons.py) or name."""


def _pod_ending(pod: KubeObject) -> _PodEnding | None:
    """How a failed pod's program ended, when it says (the kubelet's terminated state, the
    pod's eviction: pkg/kubelet/eviction sets reason Evicted, or its deadline: the kubelet's
    active deadline handler sets reason DeadlineExceeded and then kills its containers, whose
    exit is no error of the program's)."""
    status = o.mapping(pod.get("status"))
    name = o.name_of(pod)
    if status.get("reason") == _DEADLINE_EXCEEDED:
        message = _bounded(str(status.get("message") or _DEADLINE_EXCEEDED))
        return _PodEnding(Ending.DEADLINE, f"pod {name} stopped at its deadline: {message}")
    never_ran = _never_ran(pod)
    if never_ran is not None and never_ran.ending is Ending.MACHINE_REFUSED:
        return never_ran
    if status.get("reason") == "Evicted":
        message = str(status.get("message") or "")
        detail = f"pod {name} evicted: {_bounded(message)}"
        limit = _disk_limit_of(message)
        ending = Ending.EVICTED if limit is None else Ending.OVER_DISK_LIMIT
        return _PodEnding(ending, detail, limit)
    # A native sidecar's end follows the program's: the kubelet stops it once the main
    # containers have ended (KEP-753), and its exit never decides the pod's phase
    # (pkg/kubelet/kubelet_pods.go getPhase skips restartable init containers).
    sidecars = {str(c.get("name")) for c in o.init_containers(o.pod_spec(pod)) if o.is_sidecar(c)}
    for container in o.container_statuses(pod):
        if str(container.get("name")) in sidecars:
            terminated: Mapping[str, Any] = {}
            last: Mapping[str, Any] = {}
        else:
            terminated = o.mapping(o.mapping(container.get("state")).get("terminated"))
            last = o.mapping(o.mapping(container.get("lastState")).get("terminated"))
        for ended in (terminated, last):
            if ended.get("reason") == "OOMKilled":
                return _PodEnding(
                    Ending.OUT_OF_MEMORY,
                    f"pod {name} container {container.get('name')}: OOMKilled (exit code "
                    f"{ended.get('exitCode', 137)})",
                )
        waiting = o.mapping(o.mapping(container.get("state")).get("waiting"))
        if waiting.get("reason") in _IMAGE_FAILED:
            return _PodEnding(
                Ending.IMAGE,
                f"pod {name} container {container.get('name')}: {waiting['reason']}",
            )
        if terminated and o.integer(terminated.get("exitCode")) != 0:
            return _PodEnding(
                Ending.PROGRAM_FAILED,
                f"pod {name} container {container.get('name')}: exit code "
                f"{terminated.get('exitCode')} ({terminated.get('reason') or 'Error'})",
            )
    return never_ran


_KUBELET_REJECTED = "Pod was rejected: "
"""How the kubelet words a pod its admission turned away (pkg/kubelet/kubelet.go `rejectPod`:
phase Failed, the admit handler's reason, `Pod was rejected: ` and its message): the
predicates' `OutOfcpu`, `OutOfnvidia.com/gpu`, `NodeAffinity`, `UnexpectedAdmissionError`
(a device the device manager could not allocate) of pkg/kubelet/lifecycle/predicate.go
`Admit`, and the eviction manager's `Evicted` under a pressure condition (read as an
eviction, `_never_ran`). No container of the pod is started."""

_GANG_TIMEOUT = "ResourceReservationTimeout"
"""YuniKorn's reason on the pods of a job whose gang could not get its room before the
placeholders' timeout (yunikorn-k8shim pkg/common/constants
`ApplicationInsufficientResourcesFailure`, written by pkg/cache/application.go
`handleFailApplicationEvent` with the message `Scheduling has timed out due to insufficient
resources`)."""


def _ran(pod: KubeObject) -> bool:
    """Whether a container of the pod ever ran: one that runs or ended, now or before. A pod
    the kubelet never started has no container state but a wait, or no status at all."""
    for container in o.container_statuses(pod):
        for state in (container.get("state"), container.get("lastState")):
            if {"running", "terminated"} & set(o.mapping(state)):
                return True
    return False


def _never_ran(pod: KubeObject) -> _PodEnding | None:
    """A failed pod none of whose containers ran, in the words of what failed it (its
    `status.reason` and `message`); None for a pod that ran or says nothing. On a machine, that
    machine's kubelet turned it away (`_KUBELET_REJECTED`). With no machine, its scheduler
    failed it: YuniKorn writes phase Failed, reason `ApplicationRejected` (its message the
    core's `failed to place application …`) or `ResourceReservationTimeout` over the whole
    status of each pod it had not placed when it fails the application (yunikorn-k8shim
    pkg/cache/application.go `handleFailApplicationEvent`, `failTaskPodWithReasonAndMsg`).
    No kubelet runs a pod with no machine, and the pod garbage collector, which fails an
    unplaced pod being deleted, writes only the phase (pkg/controller/podgc/gc_controller.go
    `markFailedAndDeletePodWithCondition`): its reason is read as its scheduler's."""
    status = o.mapping(pod.get("status"))
    reason = str(status.get("reason") or "")
    if not reason or _ran(pod):
        return None
    message = " ".join(str(status.get("message") or "").split())
    said = _bounded(f"{reason}: {message}" if message else reason)
    name = o.name_of(pod)
    machine = o.node_name(pod)
    if machine:
        if reason == "Evicted" or not message.startswith(_KUBELET_REJECTED):
            # The kubelet's endings of a pod it admitted, and its eviction manager's refusal
            # under a pressure condition: the machine ran short, an eviction as any other.
            return None
        return _PodEnding(
            Ending.MACHINE_REFUSED,
            f"pod {name} turned away by the kubelet of {machine}, no container ran: {said}",
            said=said,
            by=machine,
        )
    scheduler = str(o.pod_spec(pod).get("schedulerName") or DEFAULT_SCHEDULER)
    ending = Ending.GROUP_NO_ROOM if reason == _GANG_TIMEOUT else Ending.NOT_PLACED
    return _PodEnding(
        ending,
        f"pod {name} failed by {scheduler} before it was placed, no container ran: {said}",
        said=said,
        by=scheduler,
    )


_ORDER = (
    Ending.OUT_OF_MEMORY,
    Ending.OVER_DISK_LIMIT,
    Ending.IMAGE,
    Ending.DEADLINE,
    Ending.EVICTED,
    Ending.PROGRAM_FAILED,
    Ending.MACHINE_REFUSED,
    Ending.GROUP_NO_ROOM,
    Ending.NOT_PLACED,
)


_REFUSED = "its settings are invalid"


def job_failure(job: TrainingJob, pods: Sequence[KubeObject]) -> JobFailure | None:
    """Why `job` failed, when its status says it did: its controller's refusal of its
    settings first (nothing of it ran), then its controller's DeadlineExceeded (the job ran
    out of time, whatever an earlier attempt showed), else its pods decide how (an
    out-of-memory kill over an eviction for its own disk limit, over an image that would not
    download, over a pod stopped at its deadline, over an eviction by a machine that ran
    short, over a plain exit, over a pod that never ran: turned away by its machine, or failed
    by its scheduler before it was placed, `_never_ran`). A job bound to fail (`failing`: an
    index its controller gave up on) ends as the pods of those indexes did. None for a job
    that did not fail."""
    if not (job.failed or job.failing):
        return None
    reason, message = job.failure
    if job.refused:
        return JobFailure(Ending.REFUSED, reason, _bounded(message or reason or _REFUSED))
    if reason == _DEADLINE_EXCEEDED:
        return JobFailure(Ending.DEADLINE, reason, _bounded(message or reason))
    if not job.failed:
        pods = [p for p in pods if job.gave_up_on(p)]
        message = f"status.failedIndexes: {indexes_text(job.failed_indexes)}"
    endings = [e for e in (_pod_ending(p) for p in pods) if e is not None]
    for ending in _ORDER:
        for found in endings:
            if found.ending is ending:
                return JobFailure(
                    found.ending, reason, found.detail, found.disk_limit, found.said, found.by
                )
    return JobFailure(Ending.UNKNOWN, reason, _bounded(message or reason or "failed"))
