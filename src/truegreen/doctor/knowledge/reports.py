"""What the cluster's own components reported about the objects training depends on: every
`Warning` Event, and every condition in a failing state, as evidence in their words.

A component that writes a Warning Event or sets a condition has measured something: the
kubelet could not mount a volume (`FailedMount`), a device plugin had no device to hand out
(`UnexpectedAdmissionError`), a Deployment's controller gave up (`ProgressDeadlineExceeded`).
Some of these have a rule elsewhere in doctor that says them in plain words (`RULED`); every
other one is still evidence, quoted as the component wrote it, and never replaced by what
doctor's arithmetic predicts. Everything here is pure.
"""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.training import (
    TRAINING_KIND_NAMES,
    TrainingJob,
    training_owner,
)
from truegreen.refresh.annotations import EVENT_COMPONENT, REFRESHED_KINDS, EventReason
from truegreen.textsafe import terminal_safe

MESSAGE_CAP: Final = 300
"""A component's message is quoted up to this many characters (kubelet messages run to
kilobytes when a runtime error nests)."""


class Said(StrEnum):
    """How the component said it."""

    EVENT = "event"
    """A `Warning` Event (core/v1 or events.k8s.io/v1)."""
    CONDITION = "condition"
    """A condition of the object's status, in its failing state."""


class Report(Struct, frozen=True):
    """One thing a component reported about one object, newest first when several."""

    said: Said
    component: str
    """Who said it: the Event's source component or reporting controller; for a condition, the
    kind's controller (`kubelet` for a pod's, `node-lifecycle` for a machine's)."""
    reason: str
    """The Event's reason, or `Type=Status (Reason)` of a condition."""
    kind: str
    name: str
    message: str
    """As the component wrote it: one line, bounded, control characters escaped."""
    count: int
    at: datetime | None
    uid: str = ""
    """The object's uid as an Event names it (empty for a condition, or when not stated): a
    pod made again under the same name is another pod."""
    also: tuple["Report", ...] = ()
    """The component's other words for the same reason about the same object, newest first
    (`said_once`): the kubelet's `FailedMount` is both the volume's own failure and its
    pod worker's summary that it timed out waiting for it."""
    untold: int = 0
    """How many more such words there were than are kept in `also`."""

    @property
    def latest(self) -> datetime | None:
        """When any of the words kept was last said."""
        times = [r.at for r in (self, *self.also) if r.at is not None]
        return max(times) if times else None


NAME_CAP: Final = 128
"""A component's name and an Event's reason are quoted up to this many characters: the limit
the API server keeps for an events.k8s.io/v1 Event's reason and reporting instance
(pkg/apis/core/validation/events.go `ReasonLengthLimit`); a core/v1 Event's are not checked."""


def quoted(text: str, cap: int = MESSAGE_CAP) -> str:
    """`text` as one line of at most `cap` characters that cannot close the quotes it is shown
    in."""
    line = " ".join(str(text).split())
    line = terminal_safe(line).replace("“", '"').replace("”", '"')
    return line if len(line) <= cap else line[: cap - 1] + "…"


def event_time(event: Mapping[str, Any]) -> datetime | None:
    """When an Event last happened: its series' last observation, else its last timestamp,
    event time, deprecated last timestamp, or creation (core/v1 and events.k8s.io/v1)."""
    series = o.mapping(event.get("series"))
    for value in (
        series.get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("deprecatedLastTimestamp"),
    ):
        moment = o.parse_time(value)
        if moment is not None:
            return moment
    return o.created_at(event)


def _component(event: Mapping[str, Any]) -> str:
    """core/v1 `source.component`, else the events.k8s.io/v1 `reportingController` (which the
    API server mirrors into `reportingComponent`)."""
    for value in (
        o.mapping(event.get("source")).get("component"),
        o.mapping(event.get("deprecatedSource")).get("component"),
        event.get("reportingController"),
        event.get("reportingComponent"),
    ):
        if isinstance(value, str) and value:
            return value
    return "unknown component"


def warnings_of(events: Iterable[KubeObject]) -> list[Report]:
    """The Warning Events, newest first, one per object, reason, component and words: words
    the component repeats are one report with its count (`said_once` puts the different
    words of one reason together)."""
    newest: dict[tuple[str, str, str, str, str, str], Report] = {}
    for event in events:
        if event.get("type") != "Warning":
            continue
        involved = o.mapping(event.get("involvedObject") or event.get("regarding"))
        reason = quoted(str(event.get("reason") or ""), NAME_CAP)
        kind = quoted(str(involved.get("kind") or ""), NAME_CAP)
        name = quoted(str(involved.get("name") or ""))  # a name runs to 253
        if not reason or not kind or not name:
            continue
        component = quoted(_component(event), NAME_CAP)
        count = o.integer(o.mapping(event.get("series")).get("count") or event.get("count"), 1)
        report = Report(
            Said.EVENT,
            component,
            reason,
            kind,
            name,
            quoted(str(event.get("message") or event.get("note") or "")),
            count,
            event_time(event),
            str(involved.get("uid") or ""),
        )
        key = (kind, name, reason, component, report.uid, report.message)
        kept = newest.get(key)
        if kept is None or _later(report, kept):
            newest[key] = report
    return sorted(newest.values(), key=_newest_first)


def _later(one: Report, other: Report) -> bool:
    if one.at is None:
        return False
    return other.at is None or one.at > other.at


def _newest_first(report: Report) -> tuple[float, str, str, str]:
    latest = report.latest
    stamp = latest.timestamp() if latest is not None else 0.0
    return (-stamp, report.kind, report.name, report.reason)


MOST_WORDS: Final = 3
"""At most this many different messages of one reason about one object are kept, the rest
counted (`Report.untold`): a component that keeps rewording a failure must not crowd out
every other report."""

SUMMARIES: Final[dict[str, tuple[str, ...]]] = {
    # pkg/kubelet/kubelet.go SyncPod: once WaitForAttachAndMount times out, the pod worker
    # writes `Unable to attach or mount volumes: %v` (unmounted volumes=[...] ...: timed out
    # waiting for the condition) every sync; the volume's own failure
    # (pkg/volume/util/operationexecutor/operation_generator.go `MountVolume.SetUp failed for
    # volume ...`) carries the same reason and says why.
    "FailedMount": ("Unable to attach or mount volumes:",),
}
"""Messages that only sum up others of the same reason: the others lead when there are any."""


def said_once(reports: Iterable[Report]) -> list[Report]:
    """The reports, those of one component's one reason about one object as one: its words
    that say why first, a summary (`SUMMARIES`) after them, then the newest first; at most
    `MOST_WORDS`, the rest counted. Newest first."""
    groups: dict[tuple[str, ...], list[Report]] = {}
    for index, report in enumerate(sorted(reports, key=_newest_first)):
        key = (
            (report.kind, report.name, report.reason, report.component, report.uid)
            if report.said is Said.EVENT
            else (str(index),)
        )
        groups.setdefault(key, []).append(report)
    said = []
    for group in groups.values():
        # sorted() keeps the newest-first order among equals.
        lead, *rest = sorted(group, key=_summary)
        kept = rest[: MOST_WORDS - 1]
        said.append(replace(lead, also=tuple(kept), untold=len(rest) - len(kept)))
    return sorted(said, key=_newest_first)


def _summary(report: Report) -> bool:
    return report.message.startswith(SUMMARIES.get(report.reason, ()))


class Polarity(Struct, frozen=True):
    """A condition type and the status it has when all is well."""

    type: str
    healthy: str


# The conditions whose healthy state upstream defines, by kind. Pods: `PodScheduled` is the
# scheduler's (its `Unschedulable` reason is read in evidence.py); `DisruptionTarget` True means
# the pod is being stopped (pkg/apis/core/types.go, DisruptionTarget). Deployments:
# pkg/controller/deployment/util (`Progressing`, `ReplicaFailure`, `Available`). Machines: the
# kubelet's node conditions (pkg/kubelet/nodestatus/setters.go) and the route controller's
# `NetworkUnavailable`. PersistentVolumeClaims: the resize conditions
# (`FileSystemResizePending` is a normal wait, `ControllerResizeError`/`NodeResizeError` are not).
POLARITIES: Final[dict[str, tuple[Polarity, ...]]] = {
    "Pod": (Polarity("PodScheduled", "True"), Polarity("DisruptionTarget", "False")),
    "Deployment": (
        Polarity("Progressing", "True"),
        Polarity("ReplicaFailure", "False"),
    ),
    "ReplicaSet": (Polarity("ReplicaFailure", "False"),),
    "Node": (
        Polarity("Ready", "True"),
        Polarity("MemoryPressure", "False"),
        Polarity("DiskPressure", "False"),
        Polarity("PIDPressure", "False"),
        Polarity("NetworkUnavailable", "False"),
    ),
    "PersistentVolumeClaim": (
        Polarity("ControllerResizeError", "False"),
        Polarity("NodeResizeError", "False"),
    ),
}
_CONDITION_COMPONENT: Final = {
    "Pod": "kubelet",
    "Deployment": "deployment-controller",
    "ReplicaSet": "replicaset-controller",
    "Node": "kubelet",
    "PersistentVolumeClaim": "volume-expander",
}
# A training pod the scheduler has not placed yet is the capacity check's to explain (it reads
# its `Unschedulable`); any other pod's is evidence. A pod held by scheduling gates waits for
# whoever set them (Kueue's queue check).
UNSCHEDULABLE: Final = "Unschedulable"
_PASSING_REASONS: Final = frozenset({UNSCHEDULABLE, "SchedulingGated"})


def _condition_component(obj: KubeObject, condition: str) -> str:
    """Who sets the condition: a pod's `PodScheduled` is its scheduler's (the name its
    FailedScheduling Events carry: `default-scheduler` unless the pod names another), the
    rest the kind's controller."""
    if obj.get("kind") == "Pod" and condition == "PodScheduled":
        return quoted(str(o.pod_spec(obj).get("schedulerName") or "default-scheduler"), NAME_CAP)
    return _CONDITION_COMPONENT[str(obj.get("kind"))]


def _passing(pod: KubeObject, reason: str) -> bool:
    """A pod condition's reason another check reads."""
    if reason == UNSCHEDULABLE:
        return _of_training(pod)
    return reason in _PASSING_REASONS


def failing_conditions(obj: KubeObject) -> list[Report]:
    """The object's conditions in their failing state, for the kinds whose healthy state is
    known (`POLARITIES`); a status of Unknown is failing too (nobody has measured it lately)."""
    kind = str(obj.get("kind") or "")
    found = []
    for polarity in POLARITIES.get(kind, ()):
        condition = o.condition(obj, polarity.type)
        if condition is None:
            continue
        status = str(condition.get("status") or "")
        reason = str(condition.get("reason") or "")
        if status == polarity.healthy or (kind == "Pod" and _passing(obj, reason)):
            continue
        found.append(
            Report(
                Said.CONDITION,
                _condition_component(obj, polarity.type),
                quoted(f"{polarity.type}={status}" + (f" ({reason})" if reason else "")),
                kind,
                o.name_of(obj),
                quoted(str(condition.get("message") or "")),
                1,
                o.parse_time(condition.get("lastTransitionTime")),
            )
        )
    return found


# -- what has a rule elsewhere ------------------------------------------------------------------

STARTING_WAITS: Final = frozenset({"ContainerCreating", "PodInitializing"})
"""The kubelet's waiting reasons for a container on its way (pkg/kubelet/kubelet_pods.go
`convertToAPIContainerStatuses`: ContainerCreating by default, PodInitializing while init
containers run). Every other waiting reason is the kubelet's error for that container
(pkg/kubelet/images/types.go, kuberuntime_container.go, its lifecycle hooks), which the
workloads check says."""


def failing_wait(reason: str) -> bool:
    """Whether a container waiting for `reason` waits on an error of the kubelet's."""
    return bool(reason) and reason not in STARTING_WAITS


GROUP_KIND: Final = "PodGroup"
"""The kind of every gang scheduler's group object (Volcano's, coscheduling's, KAI's)."""


class Ruling(Struct, frozen=True):
    """Where a reported reason has a rule: the check that reads it, and on which objects."""

    reason: str
    kinds: frozenset[str]
    check: str
    components: frozenset[str] = frozenset()
    """Only from these components (empty: any)."""
    on_container_state: bool = False
    """Only while one of the pod's containers waits in a state the workloads check reads, or
    runs again after a memory kill."""
    training_pods_only: bool = False
    """Only about a pod of a training job (the capacity check places no other)."""


MONITOR_COMPONENT: Final = "truegreen-monitor"
"""The component truegreen monitor writes its verdict Events as (monitor/events.py): truegreen's
own output on the namespace, never a problem the cluster reported. Read as one, a could-not-check
became NOT READY, and each verdict Event quoted the one before it."""


RULED: Final[tuple[Ruling, ...]] = (
    # kube-scheduler's FailedScheduling mirrors the PodScheduled condition capacity reads;
    # Karpenter's is the autoscaler word capacity reads (checks/capacity/autoscaling.py).
    Ruling(
        "FailedScheduling",
        frozenset({"Pod"}),
        "capacity",
        frozenset({"default-scheduler", "karpenter"}),
        training_pods_only=True,
    ),
    # pkg/controller/controller_utils.go FailedCreatePodReason: admission's refused creates.
    Ruling("FailedCreate", TRAINING_KIND_NAMES, "admission"),
    Ruling("FailedCreatePod", TRAINING_KIND_NAMES, "admission"),
    # The attach-detach controller: the storage check.
    Ruling("FailedAttachVolume", frozenset({"Pod"}), "storage"),
    # The kubelet's container Events (pkg/kubelet/events/event.go FailedToCreateContainer,
    # BackOffStartContainer, BackOffPullImage, ...) while the container state carries them.
    Ruling("Failed", frozenset({"Pod"}), "workloads", on_container_state=True),
    Ruling("BackOff", frozenset({"Pod"}), "workloads", on_container_state=True),
    Ruling("InspectFailed", frozenset({"Pod"}), "workloads", on_container_state=True),
    Ruling("ErrImageNeverPull", frozenset({"Pod"}), "workloads", on_container_state=True),
    # truegreen refresh's own Warning Events (refresh/events.py `event_object`, docs/refresh.md
    # "Events"): each says what refresh's annotations on the workload record (a failed try, the
    # latch, a stale or dangling pin), which the freshness check reads. Only from refresh: the
    # same reason from another component is that component's word.
    *(
        Ruling(
            reason.value,
            frozenset(kind.spec.name for kind in REFRESHED_KINDS),
            "freshness",
            frozenset({EVENT_COMPONENT}),
        )
        for reason in EventReason
        if reason.warning
    ),
    # The kubelet's probe failures: the workloads check's not-ready copy (after its grace) and
    # crash loop; a probe failing while a program starts is no evidence of anything.
    Ruling("Unhealthy", frozenset({"Pod"}), "workloads"),
    # A Deployment past its progress deadline: the workloads check's stuck update.
    Ruling("Progressing=False (ProgressDeadlineExceeded)", frozenset({"Deployment"}), "workloads"),
)
"""The reasons another check says in plain words, each where it reads them."""


def _container_waits_in_read_state(pod: KubeObject | None) -> bool:
    if pod is None:
        return False
    for container in o.container_statuses(pod):
        waiting = o.mapping(o.mapping(container.get("state")).get("waiting"))
        if failing_wait(str(waiting.get("reason") or "")):
            return True
        # Restarted after a memory kill: the back-off it waited out is the workloads check's
        # out-of-memory, between the waits as during them (checks/workloads/memory.py).
        last = o.mapping(o.mapping(container.get("lastState")).get("terminated"))
        if last.get("reason") == "OOMKilled":
            return True
    return False


def _of_training(pod: KubeObject | None) -> bool:
    return pod is not None and training_owner(pod) is not None


def ruled_by(report: Report, pods: Mapping[str, KubeObject]) -> str | None:
    """The check that says `report` in plain words, or None: it is evidence no rule names.
    `pods` are the namespace's pods by name."""
    for ruling in RULED:
        if report.reason != ruling.reason or report.kind not in ruling.kinds:
            continue
        if ruling.components and report.component not in ruling.components:
            continue
        if ruling.on_container_state and not _container_waits_in_read_state(pods.get(report.name)):
            continue
        if ruling.training_pods_only and not _of_training(pods.get(report.name)):
            continue
        return ruling.check
    return None


# -- what is evidence now -----------------------------------------------------------------------


class PodState(Struct, frozen=True):
    """Whether a pod runs as it should, and since when."""

    waiting: bool
    """Pending, Failed, or Running without being Ready: what was reported may be why."""
    ready_since: datetime | None
    """When it last became Ready (a report before that is history)."""


def pod_state(pod: KubeObject) -> PodState:
    """How `pod` stands now."""
    phase = o.phase(pod)
    ready = o.condition(pod, "Ready")
    is_ready = ready is not None and ready.get("status") == "True"
    since = o.parse_time(ready.get("lastTransitionTime")) if ready is not None else None
    if phase == "Succeeded" or (phase == "Running" and is_ready):
        return PodState(False, since)
    return PodState(True, None)


def settled(obj: KubeObject) -> bool:
    """A workload running every copy it asks for: what was reported about it before is
    history (its own conditions say the rest)."""
    kind = obj.get("kind")
    spec = o.mapping(obj.get("spec"))
    status = o.mapping(obj.get("status"))
    wanted = o.integer(spec.get("replicas"), 1)
    if kind == "Deployment":
        return (
            o.integer(status.get("availableReplicas")) >= wanted
            and o.integer(status.get("updatedReplicas")) >= wanted
        )
    if kind == "StatefulSet":
        return o.integer(status.get("readyReplicas")) >= wanted
    if kind == "DaemonSet":
        return o.integer(status.get("numberAvailable")) >= o.integer(
            status.get("desiredNumberScheduled")
        )
    return False


class Sources(Struct, frozen=True):
    """What the reports are read from: the namespace's Warning Events, and the objects whose
    conditions and state decide which reports still stand."""

    events: Sequence[KubeObject]
    pods: Sequence[KubeObject]
    workloads: Sequence[KubeObject]
    """The namespace's Deployments, StatefulSets and DaemonSets."""
    finished_jobs: frozenset[str]
    """`Kind/name` of the training jobs that finished (their ending is the workloads
    check's to say)."""
    claims: Sequence[KubeObject]
    nodes: Sequence[KubeObject]
    finished_pods: frozenset[str] = frozenset()
    """The names of the pods of those finished training jobs: how they ended is part of the
    job's ending, the workloads check's to say."""
    gang_groups: frozenset[str] = frozenset()
    """The names of the gang schedulers' PodGroups the queue check read: their state and
    failing condition are its to say (checks/queue/gang.py), so their Events are not evidence
    again."""
    jobs: Sequence[TrainingJob] = ()
    """The namespace's training jobs as read: an Event about an earlier job of the same name
    (one deleted and submitted again) is not about them."""


def _owner_of_name(
    kind: str, name: str, owners: Mapping[tuple[str, str], KubeObject]
) -> KubeObject | None:
    found = owners.get((kind, name))
    if found is not None or kind != "ReplicaSet":
        return found
    # A Deployment's ReplicaSet is `<deployment>-<pod-template-hash>`
    # (pkg/controller/deployment/sync.go getNewReplicaSet).
    deployment, _, _ = name.rpartition("-")
    return owners.get(("Deployment", deployment))


def machines_waited_on(pods: Sequence[KubeObject]) -> frozenset[str]:
    """The machines a pod that has not ended waits on: their failing conditions (not Ready,
    a pressure) may be why it waits, and are evidence."""
    return frozenset(
        o.node_name(p) for p in o.remaining(pods) if pod_state(p).waiting and o.node_name(p)
    )


def unruled_reports(sources: Sources) -> list[Report]:
    """Every report that still stands and no other check says: newest first. History is left
    out: a report about a pod that is gone, or that became Ready after it, or that failed and
    was replaced; about a workload that runs every copy, or a training job that finished."""
    pods = {o.name_of(p): p for p in sources.pods}
    owners = {(str(w.get("kind")), o.name_of(w)): w for w in sources.workloads}
    waiting_on = machines_waited_on(sources.pods)
    objects = [
        *o.remaining(sources.pods),
        *(w for w in sources.workloads if w.get("kind") in POLARITIES),
        *sources.claims,
        *(n for n in sources.nodes if o.name_of(n) in waiting_on),
    ]
    reports = [
        *warnings_of(sources.events),
        *(r for obj in objects for r in failing_conditions(obj)),
    ]
    kept = []
    for report in reports:
        if report.component == MONITOR_COMPONENT:
            continue
        if ruled_by(report, pods) is not None or _history(report, pods, owners, sources):
            continue
        if report.kind == GROUP_KIND and report.name in sources.gang_groups:
            continue
        kept.append(report)
    # kube-scheduler's FailedScheduling and the PodScheduled condition it sets with it say the
    # same (pkg/scheduler/schedule_one.go handleSchedulingFailure): the Event, with its count.
    said_by_event = {
        r.name for r in kept if r.said is Said.EVENT and r.reason == "FailedScheduling"
    }
    return said_once(
        r
        for r in kept
        if not (
            r.said is Said.CONDITION
            and r.kind == "Pod"
            and r.name in said_by_event
            and r.reason.startswith("PodScheduled=")
        )
    )


def _history(
    report: Report,
    pods: Mapping[str, KubeObject],
    owners: Mapping[tuple[str, str], KubeObject],
    sources: Sources,
) -> bool:
    if report.kind == "Pod":
        pod = pods.get(report.name)
        if pod is None or o.is_terminating(pod) or report.name in sources.finished_pods:
            return True
        if _about_an_earlier_pod(report, pod):
            return True
        if o.phase(pod) == "Failed" and replaced(pod, report.at, sources.pods, owners):
            return True
        state = pod_state(pod)
        if state.waiting:
            return False
        return report.said is Said.EVENT and (
            state.ready_since is None or report.at is None or report.at <= state.ready_since
        )
    if report.kind in TRAINING_KIND_NAMES:
        ref = f"{report.kind}/{report.name}"
        if ref in sources.finished_jobs:
            return True
        job = next((j for j in sources.jobs if j.ref == ref), None)
        return (
            job is not None
            and report.said is Said.EVENT
            and names_an_earlier(report.uid, report.at, job.uid, job.created)
        )
    if report.kind == "PersistentVolumeClaim":
        return _claim_bound_since(report, sources.claims)
    owner = _owner_of_name(report.kind, report.name, owners)
    return owner is not None and report.said is Said.EVENT and settled(owner)


def replaced(
    pod: KubeObject,
    seen: datetime | None,
    pods: Sequence[KubeObject],
    owners: Mapping[tuple[str, str], KubeObject],
) -> bool:
    """Whether the controller of a pod that failed has replaced it, so that what was said of
    it (last at `seen`) is history: the workload it was a copy of runs every copy it asks for
    again, or a pod its controller made since has run (`_has_run`).

    A Failed pod is none of its controller's copies (pkg/controller/controller_utils.go
    `IsPodActive`, which `FilterActivePods` applies in the ReplicaSet's `syncReplicaSet` and in
    the Job controller's sync), so the controller makes a new one. The kubelet leaves the
    failed one in place (an eviction: pkg/kubelet/eviction/eviction_manager.go `evictPod`; a
    refusal at admission: pkg/kubelet/kubelet.go `rejectPod`), and PodGC deletes ended pods
    only above `--terminated-pod-gc-threshold`, 12500 by default. A replacement that was only
    made proves nothing: a machine that turns pods away at admission (a device plugin with no
    GPU to allocate, `UnexpectedAdmissionError`) turns the next away too, and the ReplicaSet
    makes another at once (the Job controller after its back-off), so the newest pod is one
    moment a fresh Pending one and the next a refused one. A failed pod no later pod of its
    controller ran past (a Job's last attempt so far, a pod of no controller) still stands."""
    controller = o.controller_of(pod)
    if controller is None:
        return False
    kind, name = str(controller.get("kind") or ""), str(controller.get("name") or "")
    owner = _owner_of_name(kind, name, owners)
    if owner is not None and settled(owner):
        return True
    if seen is None:
        return False
    uid = str(controller.get("uid") or "")
    for other in pods:
        theirs = o.controller_of(other)
        if other is pod or theirs is None:
            continue
        same = (
            theirs.get("uid") == uid
            if uid
            else (theirs.get("kind"), theirs.get("name")) == (kind, name)
        )
        created = o.created_at(other)
        if same and created is not None and created >= seen and _has_run(other):
            return True
    return False


def _has_run(pod: KubeObject) -> bool:
    """Whether the kubelet admitted `pod` and started it: it runs or succeeded, or one of its
    containers was started (a `startedAt` in its state: pkg/kubelet/kubelet_pods.go
    `convertToAPIContainerStatuses`), as none of a pod it turned away at admission ever is
    (`rejectPod` writes only the phase, reason and message)."""
    if o.phase(pod) in ("Running", "Succeeded"):
        return True
    for container in o.container_statuses(pod):
        state = o.mapping(container.get("state"))
        for now in ("running", "terminated"):
            if o.mapping(state.get(now)).get("startedAt"):
                return True
    return False


def _about_an_earlier_pod(report: Report, pod: KubeObject) -> bool:
    return names_an_earlier_pod(report.uid, report.at if report.said is Said.EVENT else None, pod)


def names_an_earlier_pod(uid: str, seen: datetime | None, pod: KubeObject) -> bool:
    """Whether an Event naming `pod`'s name with `uid`, last seen at `seen`, is about another
    pod of that name made before it (a job submitted again, a StatefulSet's pod made anew): its
    uid differs, or it was last seen before this pod was created."""
    return names_an_earlier(uid, seen, o.uid_of(pod), o.created_at(pod))


def names_an_earlier(uid: str, seen: datetime | None, own: str, created: datetime | None) -> bool:
    """Whether an Event that names an object by its name with `uid`, last seen at `seen`, is
    about an earlier object of that name than the one of uid `own` made at `created`: an
    Event's `involvedObject` carries the uid of the object it was recorded for (client-go
    tools/reference GetReference), and one deleted and made again under its name has another
    (a Job submitted again keeps its predecessor's `BackoffLimitExceeded` for the Event's
    hour-long life: pkg/controller/job/job_controller.go recordJobFinished)."""
    if uid and own and uid != own:
        return True
    return seen is not None and created is not None and seen < created


CLAIM_WAIT_REASONS: Final = frozenset({"FailedBinding", "VolumeMismatch", "ProvisioningFailed"})
"""The Warnings the PersistentVolume controller and external provisioners write on a claim while
it waits for its volume (pkg/controller/volume/events/event.go): once the claim is Bound, the
wait they explain is over."""


def _claim_bound_since(report: Report, claims: Sequence[KubeObject]) -> bool:
    """A report of a claim's wait for its volume, about a claim that is Bound now."""
    if report.said is not Said.EVENT or report.reason not in CLAIM_WAIT_REASONS:
        return False
    claim = next((c for c in claims if o.name_of(c) == report.name), None)
    return claim is not None and o.phase(claim) == "Bound"


def pods_with_evidence(reports: Iterable[Report]) -> frozenset[str]:
    """The pods `reports` (`unruled_reports`'s) are about: doctor's arithmetic must not speak
    over what the cluster said about them."""
    return frozenset(r.name for r in reports if r.kind == "Pod")
