"""One refresh tick. The order is the feature:

1. stale-pin findings are written first, in their own bounded, non-fatal patch, before anything
   that can stop the tick: every workload's, in a first pass, before any restart or wait;
2. the flap guard: a rollout needs another try but the attempt counter has reached its maximum,
   so the workload is latched and nothing is restarted or recorded;
3. the attempt is counted and a pending marker left in the same write as the restart;
4. only a verified rollout is recorded: complete by kubectl's rules, the pods that stay on the
   newest digest by their imageIDs, each Ready for the Deployment's minReadySeconds; then the
   counter, latch and marker are cleared.
A failed rollout records nothing and counts as an attempt. A tick that died mid-rollout is
resumed from the marker. What to do at each look is the table in steps.py.

Every write carries the resourceVersion of the read it was decided from, so two ticks never
restart twice and a write never erases what it did not read: on a conflict the tick reads the
Deployment again and decides again. Registry logins are the workload's own (its namespace's
pull secrets), as the kubelet's. Each workload the tick acted on gets Kubernetes Events.

This module makes the reads and writes; what to do at each step is decided in steps.py.

One module past 600 lines: the tick's reads, writes and waits in the order steps.py decides
them, so that the order reads from top to bottom.
"""

import socket
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from msgspec import Struct, field
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import (
    CantRead,
    Conflict,
    CreateResult,
    GetRead,
    Got,
    Kind,
    Listed,
    ListRead,
)
from truegreen.cluster.reader import ClusterWriter
from truegreen.docker_config import login_data
from truegreen.images import ImageReference, ImageReferenceError
from truegreen.refresh.annotations import REFRESHED_KINDS, PendingRestart
from truegreen.refresh.events import event_object, planned_events
from truegreen.refresh.plan import (
    ContainerPlan,
    Decision,
    RefreshMode,
    containers_of,
    pin_findings,
    plan_container,
    settled_digest,
    tracked_reference,
)
from truegreen.refresh.registry import (
    DigestLookup,
    LookupKey,
    PullCredentials,
    RegistryAccess,
    RegistryClient,
    RegistryLogin,
)
from truegreen.refresh.report import EventNote, Outcome, TickReport, WorkloadReport, Write
from truegreen.refresh.steps import (
    MUST_LAND,
    Action,
    AnnotationWrite,
    Ending,
    Look,
    RestartCounts,
    UpdatePosition,
    after_wait,
    count_failure,
    decide,
    failure_reason,
    idle,
    kind_of,
    latch,
    look,
    look_again,
    registry_hold,
    restart_counts,
    restart_refusal,
    restart_write,
    settled,
    skip,
    undecidable,
    update_position,
)
from truegreen.refresh.template import describe_template, template_change
from truegreen.refresh.updates import carried_restart

_CONFLICT_RETRIES = 3
_UNDECIDED = "the tick was stopped before this workload was decided; nothing was restarted"
_UNANSWERED = "the tick was stopped before the API server answered"


class RefreshCluster(ClusterWriter, Protocol):
    """What a tick needs of the cluster: reads, patches, and creating its Events."""

    def create(
        self, kind: Kind, obj: Mapping[str, Any], *, namespace: str | None, dry_run: bool
    ) -> CreateResult:
        """Create one object."""
        ...


class TickProgress(Protocol):
    """Told what a tick is doing as it goes, so a terminal can show it; a tick never prints.
    Called from the look-up threads too: an implementation must be thread-safe."""

    def looking_up(self, total: int) -> None:
        """`total` distinct registry look-ups are about to start."""
        ...

    def looked_up(self) -> None:
        """One look-up finished."""
        ...

    def restarting(self, workload: str) -> None:
        """`namespace/name` is being restarted toward newer images."""
        ...

    def waiting(self, workload: str, progress: str) -> None:
        """Waiting for `namespace/name` to roll out; `progress` as kubectl's rules say it."""
        ...


class RefreshSettings(Struct, frozen=True):
    """What the operator asked one tick to do."""

    namespace: str | None
    """None: every namespace."""
    selector: Mapping[str, str]
    mode: RefreshMode = RefreshMode.RESTART
    max_attempts: int = 3
    rollout_timeout: float = 600.0
    dry_run: bool = False
    poll_interval: float = 1.0
    registry: RegistryAccess = field(default_factory=RegistryAccess)


class _Workload(Struct):
    kind: Kind
    obj: Mapping[str, Any]
    pods: list[Mapping[str, Any]]
    logins: PullCredentials
    """The registry logins its pods send (`workload_logins`)."""
    pods_unread: CantRead | None = None
    """Why its pods could not be read: then only its stale-pin findings are written."""
    replica_sets: Sequence[Mapping[str, Any]] = ()
    """A Deployment's own ReplicaSets (`claimed_replica_sets`), which its copies' templates are
    read from."""

    @property
    def namespace(self) -> str:
        return o.namespace_of(self.obj)

    @property
    def name(self) -> str:
        return o.name_of(self.obj)


class _Lookups(Struct, frozen=True):
    """One workload's view of the tick's registry look-ups, by reference text."""

    tracked: Mapping[str, DigestLookup]
    pinned: Mapping[str, DigestLookup]


def _now_stamp() -> str:
    # Microseconds: two restarts within one second must still change the pod template.
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run_tick(
    cluster: RefreshCluster,
    settings: RefreshSettings,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    progress: TickProgress | None = None,
) -> TickReport:
    """One tick over every opted-in Deployment, StatefulSet and DaemonSet; `progress` is told
    each phase as it starts."""
    first, *others = REFRESHED_KINDS
    listed = cluster.list(first, namespace=settings.namespace, labels=settings.selector)
    if isinstance(listed, CantRead):
        return TickReport((), (listed.reason,), first_read=listed)
    found = [(first, obj) for obj in listed.items]
    cant_read: list[str] = []
    for kind in others:
        read = cluster.list(kind, namespace=settings.namespace, labels=settings.selector)
        if isinstance(read, CantRead):
            cant_read.append(read.reason)
            continue
        found += [(kind, obj) for obj in read.items]
    try:
        return _tick_over(cluster, settings, found, cant_read, sleep, clock, progress)
    except TickInterrupted:
        raise
    except BaseException as stopped:
        if isinstance(stopped, Exception):
            raise
        # A signal (Ctrl-C, SIGTERM, SIGHUP) after the workloads were read, before their ticks
        # began (their pods, logins or registry look-ups): each is handed up undecided, nothing
        # written.
        undecided = tuple(_report(obj, Outcome.INTERRUPTED, _UNDECIDED) for _, obj in found)
        raise TickInterrupted(TickReport(undecided, tuple(cant_read)), stopped) from stopped


def _tick_over(
    cluster: RefreshCluster,
    settings: RefreshSettings,
    found: Sequence[tuple[Kind, Mapping[str, Any]]],
    cant_read: Sequence[str],
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    progress: TickProgress | None,
) -> TickReport:
    """The tick over the workloads `found`: their pods and logins read, their images looked
    up, then each one's steps; a signal during the steps goes up as TickInterrupted."""
    workloads: list[_Workload] = []
    reads = _SharedReads(cluster)
    for kind, obj in found:
        pods = reads.pods_of(obj)
        logins = workload_logins(reads, obj)
        if isinstance(pods, CantRead):
            # Its stale-pin findings need no pods: they are still written (step 1).
            workloads.append(_Workload(kind, obj, [], logins, pods_unread=pods))
            continue
        # What the pods run is judged on the pods that stay: a terminating one still reports
        # the image it was started with for its grace period.
        sets = reads.replica_sets_of(obj)
        workloads.append(_Workload(kind, obj, o.remaining(pods), logins, replica_sets=sets))
    views, registry = _resolve(workloads, settings, progress)
    # A registry near its rate limit: restart nothing this tick (findings are still written).
    every = [r for view in views for r in (*view.tracked.values(), *view.pinned.values())]
    hold = registry_hold(every, registry.below_reserve)
    ticks = [
        _WorkloadTick(cluster, workload, view, settings, sleep, clock, progress)
        for workload, view in zip(workloads, views, strict=True)
    ]
    # Step 1 for every workload before any restart or wait: a wait may take the rest of the
    # tick (a CronJob's deadline), and a finding needs none.
    reports: list[WorkloadReport] = []
    try:
        for tick in ticks:
            tick.write_findings()
        for tick in ticks:
            reports.append(tick.run(hold))
    except BaseException as stopped:
        if isinstance(stopped, Exception):
            raise
        # A signal (Ctrl-C, SIGTERM, SIGHUP; raised where the tick is): the report of what it
        # wrote so far goes up with the signal, so that a restart it made is never left unsaid.
        cut = [tick.interrupted() for tick in ticks[len(reports) :]]
        partial = TickReport(
            (*reports, *cut),
            tuple(cant_read),
            registry_requests=registry.requests_made,
            distinct_references=registry.distinct_lookups,
        )
        raise TickInterrupted(partial, stopped) from stopped
    return TickReport(
        tuple(reports),
        tuple(cant_read),
        registry_requests=registry.requests_made,
        distinct_references=registry.distinct_lookups,
    )


class TickInterrupted(BaseException):
    """A signal (Ctrl-C, SIGTERM, SIGHUP) stopped the tick after its workloads were read.
    `report` is the tick so far: each finished workload's report, and every other one
    `interrupted` with the writes it made; `signal` is what the signal raised. A
    BaseException, as the signal is, so that nothing on the way up takes it for an error to
    report."""

    def __init__(self, report: TickReport, signal: BaseException) -> None:
        super().__init__("the tick was stopped by a signal")
        self.report = report
        self.signal = signal


def _report(obj: Mapping[str, Any], outcome: Outcome, reason: str) -> WorkloadReport:
    namespace = o.namespace_of(obj)
    return WorkloadReport(namespace, o.name_of(obj), outcome, reason, kind=kind_of(obj))


def _selector(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return o.mapping(o.mapping(obj.get("spec")).get("selector"))


def _matching(obj: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    selector = _selector(obj)
    return [p for p in pods if o.selector_matches(selector, o.labels_of(p))]


def _pods(cluster: ClusterWriter, obj: Mapping[str, Any]) -> list[Mapping[str, Any]] | CantRead:
    """The workload's own pods, read anew (a look while waiting)."""
    read = _copies(cluster, obj)
    return read if isinstance(read, CantRead) else read[0]


def _copies(
    cluster: ClusterWriter, obj: Mapping[str, Any]
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]] | CantRead:
    """The workload's own pods and (a Deployment) its own ReplicaSets, read anew."""
    namespace = o.namespace_of(obj)
    labels = {str(k): str(v) for k, v in o.mapping(_selector(obj).get("matchLabels")).items()}
    read = cluster.list(Kind.POD, namespace=namespace, labels=labels or None)
    if isinstance(read, CantRead):
        return read
    replica_sets: Sequence[Mapping[str, Any]] = ()
    if kind_of(obj) == "Deployment":
        # A Deployment's ReplicaSets carry its template's labels (deployment/sync.go).
        found = cluster.list(Kind.REPLICA_SET, namespace=namespace, labels=labels or None)
        if isinstance(found, CantRead):
            return found
        replica_sets = found.items
    owned = owned_pods(obj, _matching(obj, read.items), replica_sets)
    return owned, claimed_replica_sets(obj, replica_sets)


def owned_pods(
    workload: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]],
) -> list[Mapping[str, Any]]:
    """The pods among `pods` (those its selector matches) that the workload's controller
    counts as its copies, by each controller's own rule. A pod whose controller is another
    object is someone else's (controller_ref_manager.go `ClaimPods`: "Owned by someone else.
    Ignore.")."""
    if kind_of(workload) == "Deployment":
        return _deployment_pods(workload, pods, replica_sets)
    uid = o.uid_of(workload)
    adopts = _adopts(workload)
    member = _stateful_member if kind_of(workload) == "StatefulSet" else _any_pod
    owned: list[Mapping[str, Any]] = []
    for pod in pods:
        controller = _controller_uid(pod)
        if (controller == uid or (controller is None and adopts)) and member(workload, pod):
            owned.append(pod)
    return owned


def _deployment_pods(
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]],
) -> list[Mapping[str, Any]]:
    """A Deployment's copies are the pods of the ReplicaSets it claims (deployment_controller.go
    `getReplicaSetsForDeployment`: its own, and orphans its selector matches while it is not
    being deleted); `getPodMapForDeployment` skips a pod with no controller. An orphan pod is
    a copy only once one of those ReplicaSets adopts it, which takes that ReplicaSet's own
    selector, `pod-template-hash` included (replica_set.go `getPodsForReplicaSet`)."""
    claimed = claimed_replica_sets(deployment, replica_sets)
    owners = {o.uid_of(r) for r in claimed}
    adopters = [_selector(r) for r in claimed if _adopts(r)]
    owned: list[Mapping[str, Any]] = []
    for pod in pods:
        controller = _controller_uid(pod)
        if controller in owners or (
            controller is None and any(o.selector_matches(s, o.labels_of(pod)) for s in adopters)
        ):
            owned.append(pod)
    return owned


def claimed_replica_sets(
    workload: Mapping[str, Any], replica_sets: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The ReplicaSets a Deployment claims (deployment_controller.go
    `getReplicaSetsForDeployment`): its own, and orphans its selector matches while it is not
    being deleted; none for another kind."""
    if kind_of(workload) != "Deployment":
        return []
    uid = o.uid_of(workload)
    selector = _selector(workload)
    adopts = _adopts(workload)
    return [
        r
        for r in replica_sets
        if _controller_uid(r) == uid
        or (_controller_uid(r) is None and adopts and o.selector_matches(selector, o.labels_of(r)))
    ]


def _adopts(controller: Mapping[str, Any]) -> bool:
    """Whether the controller adopts orphans: not while it is being deleted (`ClaimPods`,
    `ClaimReplicaSets` recheck its deletionTimestamp first)."""
    return "deletionTimestamp" not in o.mapping(controller.get("metadata"))


def _stateful_member(statefulset: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Whether the pod is named as one of the StatefulSet's, `<set>-<ordinal>`: the set claims
    no other pod, owned or orphan (stateful_set.go `getPodsForStatefulSet` filters by
    stateful_set_utils.go `isMemberOf`, whose `statefulPodRegex` is `(.*)-([0-9]+)$`)."""
    parent, dash, ordinal = o.name_of(pod).rpartition("-")
    numbered = bool(dash) and ordinal.isascii() and ordinal.isdigit()
    return numbered and parent == o.name_of(statefulset)


def _any_pod(_workload: Mapping[str, Any], _pod: Mapping[str, Any]) -> bool:
    """A DaemonSet claims every pod its selector matches (daemon_controller.go `getDaemonPods`
    calls `ClaimPods` with no filter)."""
    return True


def _controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid of the object's controller (its owner reference with `controller: true`), or
    None for an orphan."""
    for ref in o.sequence(o.mapping(obj.get("metadata")).get("ownerReferences")):
        if o.mapping(ref).get("controller") is True:
            return str(o.mapping(ref).get("uid") or "")
    return None


_LabelIndex = dict[tuple[str, str], list[Mapping[str, Any]]]


def _by_label(pods: Sequence[Mapping[str, Any]]) -> _LabelIndex:
    """Each pod under every label it carries, in the order listed."""
    index: _LabelIndex = {}
    for pod in pods:
        for key, value in o.labels_of(pod).items():
            if isinstance(value, str):
                index.setdefault((str(key), value), []).append(pod)
    return index


class _SharedReads:
    """The tick's first pass: one pod list per namespace and one read per service account or
    secret, however many Deployments share them (a request each would grow with the fleet)."""

    def __init__(self, cluster: ClusterWriter) -> None:
        self._cluster = cluster
        self._pods: dict[str, ListRead] = {}
        self._replica_sets: dict[str, ListRead] = {}
        self._labelled: dict[str, _LabelIndex] = {}
        self._objects: dict[tuple[Kind, str, str], GetRead] = {}

    def pods_of(self, obj: Mapping[str, Any]) -> list[Mapping[str, Any]] | CantRead:
        """The workload's own pods: those its selector matches and no other controller owns
        (`owned_pods`). Only the pods carrying the rarest of its required labels are checked:
        a selector against every pod of the namespace, for every workload, would grow with the
        square of the fleet."""
        namespace = o.namespace_of(obj)
        if namespace not in self._pods:
            read = self._cluster.list(Kind.POD, namespace=namespace)
            self._pods[namespace] = read
            self._labelled[namespace] = _by_label(read.items) if isinstance(read, Listed) else {}
        read = self._pods[namespace]
        if isinstance(read, CantRead):
            return read
        replica_sets: Sequence[Mapping[str, Any]] = ()
        if kind_of(obj) == "Deployment":
            if namespace not in self._replica_sets:
                self._replica_sets[namespace] = self._cluster.list(
                    Kind.REPLICA_SET, namespace=namespace
                )
            found = self._replica_sets[namespace]
            if isinstance(found, CantRead):
                return found
            replica_sets = found.items
        required = o.mapping(_selector(obj).get("matchLabels")).items()
        pairs = [(str(k), v) for k, v in required if isinstance(v, str)]
        candidates: Sequence[Mapping[str, Any]] = read.items
        if pairs:
            candidates = min((self._labelled[namespace].get(pair, []) for pair in pairs), key=len)
        return owned_pods(obj, _matching(obj, candidates), replica_sets)

    def replica_sets_of(self, obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """A Deployment's own ReplicaSets from the namespace's list `pods_of` read (none where
        it was not read, or could not be)."""
        found = self._replica_sets.get(o.namespace_of(obj))
        return claimed_replica_sets(obj, found.items) if isinstance(found, Listed) else []

    def get(self, kind: Kind, name: str, *, namespace: str) -> GetRead:
        """One object, read once per tick."""
        key = (kind, namespace, name)
        if key not in self._objects:
            self._objects[key] = self._cluster.get(kind, name, namespace=namespace)
        return self._objects[key]


class ObjectGetter(Protocol):
    """Reads one object (the tick's shared reads, or a cluster)."""

    def get(self, kind: Kind, name: str, *, namespace: str) -> GetRead:
        """One object of the namespace."""
        ...


def workload_logins(cluster: ObjectGetter, obj: Mapping[str, Any]) -> PullCredentials:
    """The registry logins the workload's pods send, in the order named, read in the
    workload's own namespace only (the kubelet lets a pod use no other): the image pull
    secrets of its pod spec; only where its list is empty, its service account's
    (`kubeobjects.gets_account_pull_secrets`). Of each, the one key its type
    holds (`docker_config.login_data`)."""
    namespace = o.namespace_of(obj)
    spec = o.pod_spec(o.pod_template(obj))
    names = o.pull_secret_names(spec)
    if o.gets_account_pull_secrets(spec):
        name = o.service_account_name(spec)
        account = cluster.get(Kind.SERVICE_ACCOUNT, name, namespace=namespace)
        names = o.pull_secret_names(account.obj) if isinstance(account, Got) else []
    configs: list[tuple[str, str]] = []
    for name in dict.fromkeys(names):
        secret = cluster.get(Kind.SECRET, name, namespace=namespace)
        found = login_data(secret.obj) if isinstance(secret, Got) else None
        if found is not None:
            configs.append(found)
    return PullCredentials.from_docker_configs(configs)


def _references(
    workload: _Workload, mode: RefreshMode
) -> tuple[list[ImageReference], list[ImageReference]]:
    """The workload's tracked tags and operator pins."""
    tracked: list[ImageReference] = []
    pinned: list[ImageReference] = []
    annotations = o.annotations_of(workload.obj)
    for container in containers_of(workload.obj):
        try:
            tag_ref, pin_ref = tracked_reference(container, annotations, mode)
        except ImageReferenceError:
            continue
        if tag_ref is not None:
            tracked.append(tag_ref)
        if pin_ref is not None:
            pinned.append(pin_ref)
    return tracked, pinned


def _known(workloads: Sequence[_Workload], mode: RefreshMode) -> dict[LookupKey, str]:
    """Per tag look-up, the digest at which no container that shares it reads the index's
    platform manifests (`settled_digest`, with the restart `_attempt` reads as aimed at): a
    HEAD naming it makes the look-up, which then costs no pull (registry.py
    `RegistryClient.lookup`). No entry where any container may need them, or two settle
    apart."""
    settled: dict[LookupKey, set[str | None]] = {}
    for workload in workloads:
        annotations = o.annotations_of(workload.obj)
        carried = carried_restart(workload.obj)
        aimed = carried.target if carried is not None else {}
        for container in containers_of(workload.obj):
            try:
                tracked, _ = tracked_reference(container, annotations, mode)
            except ImageReferenceError:
                continue
            if tracked is None:
                continue
            key = LookupKey(str(tracked), tuple(workload.logins.applying_to(tracked)))
            digest = settled_digest(
                container, annotations, mode, aimed=aimed.get(str(container.get("name", "")))
            )
            settled.setdefault(key, set()).add(digest)
    return {
        key: digest
        for key, digests in settled.items()
        if len(digests) == 1 and (digest := next(iter(digests))) is not None
    }


def _resolve(
    workloads: Sequence[_Workload],
    settings: RefreshSettings,
    progress: TickProgress | None,
) -> tuple[list[_Lookups], "_RegistrySummary"]:
    """Every distinct tracked tag and operator pin, looked up once per list of logins that
    would be tried for it in turn, concurrently; then each workload's view through its own."""
    wanted = [_references(w, settings.mode) for w in workloads]

    def keyed(
        workload: _Workload, references: list[ImageReference]
    ) -> list[tuple[ImageReference, tuple[RegistryLogin, ...]]]:
        return [(r, tuple(workload.logins.applying_to(r))) for r in references]

    tracked = [pair for w, (t, _) in zip(workloads, wanted, strict=True) for pair in keyed(w, t)]
    pinned = [pair for w, (_, p) in zip(workloads, wanted, strict=True) for pair in keyed(w, p)]
    client = RegistryClient(settings.registry)
    total = len({LookupKey(str(r), logins) for r, logins in tracked}) + len(
        {LookupKey(str(r), logins) for r, logins in pinned}
    )
    advance = None
    if progress is not None:
        progress.looking_up(total)
        advance = progress.looked_up
    try:
        tracked_results = client.resolve_all(tracked, advance, _known(workloads, settings.mode))
        pinned_results = client.resolve_all(pinned, advance)
    finally:
        client.close()

    def view(
        workload: _Workload,
        references: list[ImageReference],
        results: Mapping[LookupKey, DigestLookup],
    ) -> dict[str, DigestLookup]:
        found: dict[str, DigestLookup] = {}
        for reference in references:
            logins = tuple(workload.logins.applying_to(reference))
            found[str(reference)] = results[LookupKey(str(reference), logins)]
        return found

    views = [
        _Lookups(view(w, t, tracked_results), view(w, p, pinned_results))
        for w, (t, p) in zip(workloads, wanted, strict=True)
    ]
    summary = _RegistrySummary(
        client.requests_made, len(tracked_results) + len(pinned_results), client.below_reserve
    )
    return views, summary


class _RegistrySummary(Struct, frozen=True):
    """What the tick needs of the registry side once the client is closed."""

    requests_made: int
    distinct_lookups: int
    below_reserve: tuple[str, ...]


class _WorkloadTick:
    """One workload's tick: the writes and waits the decisions in steps.py ask for, in order."""

    def __init__(
        self,
        cluster: RefreshCluster,
        workload: _Workload,
        lookups: _Lookups,
        settings: RefreshSettings,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
        progress: TickProgress | None = None,
    ) -> None:
        self._cluster = cluster
        self._progress = progress
        self._workload = workload
        self._lookups = lookups
        self._settings = settings
        self._sleep = sleep
        self._clock = clock
        self._plans: tuple[ContainerPlan, ...] = ()
        self._writes: list[Write] = []
        self._latest: Mapping[str, Any] = workload.obj
        self._lost_race = False
        """A restart write of this tick met a conflict: someone else wrote first."""
        self._read: Mapping[str, Any] = workload.obj
        """The workload as the tick's decisions read it."""
        self._findings: Mapping[str, Any] | None = None
        """The workload as written by the first pass's findings (as read when there were none
        to write, or the write failed); None while they are still to be written."""
        self._sent: Write | None = None
        """The write sent whose answer has not come back yet: it may have landed."""
        self._ended: WorkloadReport | None = None
        """The workload's report once it reached its end (before its Events)."""
        self._events: list[EventNote] = []
        """The Events written so far, and one sent whose answer has not come back."""

    def write_findings(self) -> None:
        """Step (1) alone, in the tick's first pass: the stale-pin findings, decided again from
        a fresh read after a conflict. Left to `run` when every try met a conflict or the
        workload could not be read again."""
        obj = self._read
        for _ in range(_CONFLICT_RETRIES):
            written = self._stale_pins(obj)
            if not isinstance(written, Conflict):
                self._read, self._findings = obj, written
                return
            read = self._cluster.get(
                self._workload.kind, self._workload.name, namespace=self._workload.namespace
            )
            if isinstance(read, CantRead):
                return
            obj = self._latest = read.obj

    def run(self, hold: str) -> WorkloadReport:
        """Steps (1) to (4) for this workload, decided again from a fresh read after each
        conflict (at most _CONFLICT_RETRIES times); then its Events."""
        obj, pods, sets = self._read, self._workload.pods, self._workload.replica_sets
        unread = self._workload.pods_unread
        report = None
        for _ in range(_CONFLICT_RETRIES):
            attempt = (
                self._attempt(obj, pods, sets, hold)
                if unread is None
                else self._pins_only(obj, unread)
            )
            if not isinstance(attempt, Conflict):
                report = attempt
                break
            fresh = self._reread(with_pods=unread is None)
            if isinstance(fresh, CantRead):
                report = self._done(Outcome.COULD_NOT_CHECK, fresh.reason)
                break
            obj, pods, sets = fresh
            self._findings = None  # decided again on the fresh read
        if report is None:
            report = self._kept_changing()
        self._ended = report
        return self._with_events(report)

    def _pins_only(self, obj: Mapping[str, Any], unread: CantRead) -> WorkloadReport | Conflict:
        """Step (1) alone, for a workload whose pods could not be read (`unread`): nothing
        else may be decided without them."""
        written = self._stale_pins(obj)
        if isinstance(written, Conflict):
            return written
        return self._done(Outcome.COULD_NOT_CHECK, unread.reason)

    def _stale_pins(self, obj: Mapping[str, Any]) -> Mapping[str, Any] | Conflict:
        """(1) Stale-pin findings, written first: nothing below may stop them from landing.
        The workload as written (as read where nothing was, or the write failed); what the
        first pass wrote on `obj` is not written again."""
        if self._findings is not None:
            return self._findings
        settings, lookups = self._settings, self._lookups
        changes = pin_findings(obj, lookups.tracked, lookups.pinned, settings.mode)
        if not changes:
            return obj
        updated = self._annotate(AnnotationWrite("stale-pins", changes), obj)
        return obj if updated is None else updated

    def _reread(
        self, *, with_pods: bool
    ) -> tuple[Mapping[str, Any], list[Mapping[str, Any]], list[Mapping[str, Any]]] | CantRead:
        """The workload read again, with its pods and ReplicaSets (`with_pods`)."""
        workload = self._workload
        read = self._cluster.get(workload.kind, workload.name, namespace=workload.namespace)
        if isinstance(read, CantRead):
            return read
        self._latest = read.obj
        if not with_pods:
            return read.obj, [], []
        copies = _copies(self._cluster, read.obj)
        return copies if isinstance(copies, CantRead) else (read.obj, *copies)

    def _attempt(
        self,
        obj: Mapping[str, Any],
        pods: list[Mapping[str, Any]],
        replica_sets: Sequence[Mapping[str, Any]],
        hold: str,
    ) -> WorkloadReport | Conflict:
        settings, lookups = self._settings, self._lookups
        annotations = o.annotations_of(obj)
        carried = carried_restart(obj)
        aimed = carried.target if carried is not None else {}
        self._plans = tuple(
            plan_container(
                c,
                annotations,
                lookups.tracked,
                pods,
                settings.mode,
                aimed=aimed.get(str(c.get("name", ""))),
            )
            for c in containers_of(obj)
        )
        # The table's first look is at the Deployment as read: the tick's own annotation writes
        # bump its generation, which says nothing about the pods.
        first = look(
            obj, pods, self._plans, max_attempts=settings.max_attempts, now=datetime.now(UTC)
        )
        skipped = skip(obj, pods, first.marker, replica_sets)  # as read, for the same reason
        written = self._stale_pins(obj)
        if isinstance(written, Conflict):
            return written
        obj = written
        stop = skipped or undecidable(obj, self._plans, lookups.pinned, settings.mode)
        if stop is not None:
            return self._end(stop, obj)
        return self._act(decide(first.situation), first, obj, hold)

    def _act(
        self, action: Action, first: Look, obj: Mapping[str, Any], hold: str
    ) -> WorkloadReport | Conflict:
        """Steps (2) to (4): what the table decided at the first look, done."""
        settings = self._settings
        annotations = o.annotations_of(obj)
        if action is Action.RESTART:
            return self._restart(obj, first, hold)
        if action is Action.LATCH:
            return self._end(latch(annotations, first.target), obj)
        left_alone = idle(obj, action)
        if left_alone is not None:
            return self._end(left_alone, obj)
        if action is Action.FAIL_AND_COUNT:
            reason = failure_reason(first, settings.rollout_timeout)
            return self._end(count_failure(annotations, first.target, reason), obj)
        if action is Action.NOTHING or (action is Action.RECORD and first.marker is None):
            ending = settled(
                obj, self._plans, self._lookups.pinned, settings.mode, lost_race=self._lost_race
            )
            return self._end(ending, obj)
        # What is left waits on a restart under way, or on pods already on the newest digest.
        if settings.dry_run:
            if first.marker is not None:
                reason = "a restart is under way: would wait for it and record"
            else:
                reason = (
                    "the pods run the newest digest but are not healthy yet: would wait for "
                    "them and record"
                )
            return self._done(Outcome.PLANNED, reason)
        if action is Action.WAIT:
            return self._finish(first, first.marker, ours=False)
        return self._conclude(action, first, first, obj, first.marker, ours=False)

    def interrupted(self) -> WorkloadReport:
        """This workload's report when a signal stopped the tick: its outcome where it reached
        its end (its Events so far), else `interrupted` with what it wrote and what the next
        tick will find. A write sent whose answer never came is listed as not known to have
        landed, never left unsaid."""
        if self._ended is not None:
            return replace(self._ended, events=tuple(self._events))
        sent = self._sent
        restarted = any(write.step == "restart" and write.applied for write in self._writes)
        if sent is not None and sent.step == "restart":
            reason = (
                f"a restart was sent, then {_UNANSWERED}: whether it landed is not known; "
                "nothing was recorded, and the next run looks at this workload again"
            )
        elif restarted and sent is not None and sent.step == "record":
            reason = (
                f"restarted and verified, then {_UNANSWERED} the record: whether it landed is "
                "not known, and the next run looks at this rollout again"
            )
        elif restarted:
            reason = (
                "restarted, then the tick was stopped before the rollout was verified; nothing "
                "was recorded, and the next run looks at this rollout again"
            )
        elif sent is not None:
            reason = (
                f"{_UNANSWERED} the {sent.step} write: whether it landed is not known; nothing "
                "was restarted"
            )
        else:
            reason = _UNDECIDED
        report = self._done(Outcome.INTERRUPTED, reason)
        if sent is None:
            return report
        unknown = f"{_UNANSWERED}: whether it landed is not known"
        unanswered = replace(sent, applied=False, error=unknown)
        return replace(report, writes=(*report.writes, unanswered))

    def _kept_changing(self) -> WorkloadReport:
        """The end of a tick whose writes met a conflict at every try."""
        kind = self._workload.kind.spec.name
        return self._done(Outcome.COULD_NOT_CHECK, f"the {kind} kept changing under the tick")

    def _done(self, outcome: Outcome, reason: str) -> WorkloadReport:
        workload = self._workload
        return WorkloadReport(
            workload.namespace,
            workload.name,
            outcome,
            reason,
            self._plans,
            tuple(self._writes),
            kind=workload.kind.spec.name,
        )

    def _end(self, ending: Ending, obj: Mapping[str, Any]) -> WorkloadReport | Conflict:
        if ending.write is not None:
            written = self._annotate(ending.write, obj)
            if isinstance(written, Conflict):
                return written
            error = self._writes[-1].error
            if error and ending.write.step in MUST_LAND:
                # The marker stays: the next tick finds the rollout done, verifies and records.
                return self._done(
                    Outcome.COULD_NOT_CHECK,
                    f"{ending.reason}, but the {ending.write.step} failed: {error}",
                )
        return self._done(ending.outcome, ending.reason)

    def _restart(self, obj: Mapping[str, Any], first: Look, hold: str) -> WorkloadReport | Conflict:
        """Steps (2) and (3): the attempt counted, the marker left and the restart made, in one
        conditional write; then the wait."""
        settings, workload = self._settings, self._workload
        refusal = restart_refusal(obj, self._plans, settings.mode, hold)
        if refusal is not None:
            return self._end(refusal, obj)
        stamp = _now_stamp()
        step = restart_write(o.annotations_of(obj), first.target, stamp)
        restart = [p for p in self._plans if p.decision is Decision.RESTART]
        template = template_change(obj, restart, settings.mode, stamp)
        described = describe_template(template)
        if settings.dry_run:
            self._writes.append(Write("restart", step.annotations, described, applied=False))
            return self._done(
                Outcome.PLANNED, "would restart: " + ", ".join(p.reason for p in restart)
            )
        if self._progress is not None:
            self._progress.restarting(f"{workload.namespace}/{workload.name}")
        self._sent = Write("restart", step.annotations, described)
        patch = {
            "metadata": {
                "resourceVersion": _version(obj),
                "annotations": dict(step.annotations),
            },
            "spec": {"template": template},
        }
        result = self._cluster.patch(
            workload.kind,
            workload.name,
            namespace=workload.namespace,
            patch=patch,
            strategic=True,
        )
        self._sent = None
        if isinstance(result, Conflict):
            self._lost_race = True
            return result  # someone else wrote since we read: read again and decide again
        if isinstance(result, CantRead):
            self._writes.append(Write("restart", step.annotations, described, False, result.reason))
            return self._done(Outcome.COULD_NOT_CHECK, result.reason)
        self._latest = result.obj
        self._writes.append(Write("restart", step.annotations, described))
        return self._finish(first, step.marker, ours=True)

    def _finish(self, first: Look, marker: PendingRestart | None, *, ours: bool) -> WorkloadReport:
        """(4) Wait until the table says something other than wait; then end as it says."""
        waited = self._wait(first, marker)
        if isinstance(waited, CantRead):
            return self._done(Outcome.COULD_NOT_CHECK, f"{waited.reason}; {_then(marker)}")
        action, final, latest = waited
        left_alone = idle(latest, action)  # scaled to zero while the tick waited
        if left_alone is not None:
            return self._done(left_alone.outcome, left_alone.reason)
        return self._conclude(action, first, final, latest, marker, ours=ours)

    def _conclude(
        self,
        action: Action,
        first: Look,
        final: Look,
        latest: Mapping[str, Any],
        marker: PendingRestart | None,
        *,
        ours: bool,
    ) -> WorkloadReport:
        """The end of a rollout, written: recorded only what the table verified, a failure
        recorded nothing. A record that meets a conflict is verified again, the workload and
        its pods looked at anew (whatever changed the workload may have changed its health:
        its controller's status after a pod stopped being ready); a clear or count is decided
        again from a fresh read of the workload."""
        settings, workload = self._settings, self._workload
        reason = failure_reason(final, settings.rollout_timeout)
        for _ in range(_CONFLICT_RETRIES):
            annotations = o.annotations_of(latest)
            if marker is not None:
                ending = after_wait(action, reason, annotations, self._plans, marker, ours=ours)
            elif action is Action.RECORD:
                ending = settled(latest, self._plans, self._lookups.pinned, settings.mode)
            else:
                ending = count_failure(annotations, final.target, reason)
            report = self._end(ending, latest)
            if not isinstance(report, Conflict):
                return report
            if action is Action.RECORD and marker is not None:
                waited = self._wait(first, marker)
                if isinstance(waited, CantRead):
                    return self._done(Outcome.COULD_NOT_CHECK, f"{waited.reason}; {_then(marker)}")
                action, final, latest = waited
                reason = failure_reason(final, settings.rollout_timeout)
                continue
            read = self._cluster.get(workload.kind, workload.name, namespace=workload.namespace)
            if isinstance(read, CantRead):
                return self._done(Outcome.COULD_NOT_CHECK, f"{read.reason}; {_then(marker)}")
            latest = self._latest = read.obj
        return self._kept_changing()

    def _wait(
        self, first: Look, marker: PendingRestart | None
    ) -> tuple[Action, Look, Mapping[str, Any]] | CantRead:
        """Look again every poll interval until the table says something other than wait, or
        the rollout timeout has passed (then it says how the wait ends)."""
        workload, settings = self._workload, self._settings
        deadline = self._clock() + settings.rollout_timeout
        since: UpdatePosition | None = None  # where the update stood when the wait began
        restarts: RestartCounts | None = None  # the pods' restart counts then
        while True:
            read = self._cluster.get(workload.kind, workload.name, namespace=workload.namespace)
            if isinstance(read, CantRead):
                return read
            self._latest = read.obj
            pods = _pods(self._cluster, read.obj)
            if isinstance(pods, CantRead):
                return pods
            if restarts is None:
                restarts = restart_counts(pods)
                since = update_position(read.obj, pods, marker, datetime.now(UTC))
            again = look_again(
                first,
                read.obj,
                pods,
                self._plans,
                now=datetime.now(UTC),
                timed_out=self._clock() >= deadline,
                marker=marker,
                since=since,
                restarts=restarts,
            )
            if self._progress is not None:
                self._progress.waiting(
                    f"{workload.namespace}/{workload.name}",
                    again.observation.detail or "rolled out",
                )
            action = decide(again.situation)
            if action is not Action.WAIT:
                return action, again, read.obj
            self._sleep(settings.poll_interval)

    def _annotate(
        self, write: AnnotationWrite, obj: Mapping[str, Any]
    ) -> Mapping[str, Any] | Conflict | None:
        """One bounded annotation patch, conditional on the version `obj` was read at: the
        Deployment as written, Conflict (decide again), or None when it failed (non-fatal). A
        dry run never gets past a restart, so only the writes before one are ever held back."""
        changes = dict(write.changes)
        if self._settings.dry_run:
            self._writes.append(Write(write.step, changes, applied=False))
            return None
        workload = self._workload
        self._sent = Write(write.step, changes)
        result = self._cluster.patch(
            workload.kind,
            workload.name,
            namespace=workload.namespace,
            patch={"metadata": {"resourceVersion": _version(obj), "annotations": changes}},
        )
        self._sent = None
        if isinstance(result, Conflict):
            return result
        if isinstance(result, CantRead):
            self._writes.append(Write(write.step, changes, applied=False, error=result.reason))
            return None
        self._latest = result.obj
        self._writes.append(Write(write.step, changes))
        return result.obj

    def _with_events(self, report: WorkloadReport) -> WorkloadReport:
        """Write the Events the tick earned on this Deployment. A failed write is noted in the
        report, never a failure of the tick: the annotations are the record, Events the news."""
        planned = planned_events(report, self._latest)
        if not planned or self._settings.dry_run:
            return report
        now, instance = datetime.now(UTC), socket.gethostname()
        notes = self._events
        for sequence, (reason, message) in enumerate(planned):
            event = event_object(
                reason, message, self._latest, now=now, sequence=sequence, instance=instance
            )
            # Noted before it is sent: a signal while it is answered leaves it said, unknown.
            unknown = f"{_UNANSWERED}: whether it was written is not known"
            notes.append(EventNote(reason, message, written=False, error=unknown))
            created = self._cluster.create(
                Kind.EVENT, event, namespace=report.namespace, dry_run=False
            )
            error = created.reason if isinstance(created, CantRead) else ""
            notes[-1] = EventNote(reason, message, written=not error, error=error)
        return replace(report, events=tuple(notes))


def _then(marker: PendingRestart | None) -> str:
    """What the next tick does after this one could not end a wait."""
    return "the next tick resumes the wait" if marker else "the next tick looks again"


def _version(obj: Mapping[str, Any]) -> Any:
    """The resourceVersion `obj` was read at: a write carrying it lands only on that version."""
    return o.mapping(obj.get("metadata")).get("resourceVersion")
