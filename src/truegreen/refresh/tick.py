"""One refresh tick. The order is the feature:

1. stale-pin findings are written first, in their own bounded, non-fatal patch, before anything
   that can stop the tick;
2. the flap guard: a restart is needed but the attempt counter has reached its maximum, so the
   workload is latched and nothing is restarted;
3. the attempt is counted and a pending marker left in the same write as the restart, guarded
   by resourceVersion so two ticks never restart twice;
4. only after a successful rollout, and after the new pods' imageIDs prove they run the newest
   digest, is the digest recorded and the counter, latch and marker cleared.
A failed rollout records nothing. A tick that died mid-rollout is resumed from the marker.

This module makes the reads and writes; what to do at each step is decided in steps.py.
"""

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Conflict, GetRead, Got, Kind, ListRead
from truegreen.cluster.reader import ClusterWriter
from truegreen.images import ImageReference, ImageReferenceError
from truegreen.refresh.plan import (
    ContainerPlan,
    PendingRestart,
    RefreshMode,
    containers_of,
    pin_findings,
    plan_container,
    tracked_reference,
)
from truegreen.refresh.registry import (
    DigestLookup,
    PullCredentials,
    RegistryAccess,
    RegistryClient,
)
from truegreen.refresh.report import Outcome, TickReport, WorkloadReport, Write
from truegreen.refresh.steps import (
    AnnotationWrite,
    Ending,
    Resume,
    RolloutEnd,
    after_rollout,
    before_restart,
    poll_rollout,
    registry_hold,
    restart_step,
    skip,
)
from truegreen.refresh.template import describe_template, template_change

_CONFLICT_RETRIES = 3


@dataclass(frozen=True)
class RefreshSettings:
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


@dataclass
class _Workload:
    obj: Mapping[str, Any]
    pods: list[Mapping[str, Any]]

    @property
    def namespace(self) -> str:
        return o.namespace_of(self.obj)

    @property
    def name(self) -> str:
        return o.name_of(self.obj)


def _now_stamp() -> str:
    # Microseconds: two restarts within one second must still change the pod template.
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run_tick(
    cluster: ClusterWriter,
    settings: RefreshSettings,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    progress: Callable[[int], Callable[[], None]] | None = None,
) -> TickReport:
    """One tick over every opted-in Deployment. `progress(total)` returns the callback each
    registry look-up calls when done (for a progress bar)."""
    listed = cluster.list(Kind.DEPLOYMENT, namespace=settings.namespace, labels=settings.selector)
    if isinstance(listed, CantRead):
        return TickReport((), (listed.reason,))
    reports: list[WorkloadReport] = []
    workloads: list[_Workload] = []
    configs: list[tuple[str, str]] = []
    reads = _SharedReads(cluster)
    for obj in listed.items:
        skipped = skip(obj)
        if skipped is not None:
            reports.append(_report(obj, skipped.outcome, skipped.reason))
            continue
        pods = reads.pods_of(obj)
        if isinstance(pods, CantRead):
            reports.append(_report(obj, Outcome.COULD_NOT_CHECK, pods.reason))
            continue
        configs += _docker_configs(reads, obj)
        # What the pods run is judged on the pods that stay: a terminating one still reports
        # the image it was started with for its grace period.
        workloads.append(_Workload(obj, o.remaining(pods)))
    lookups, pin_lookups, client = _resolve(workloads, configs, settings, progress)
    # A registry near its rate limit: restart nothing this tick (findings are still written).
    hold = registry_hold([*lookups.values(), *pin_lookups.values()], client.below_reserve)
    for workload in workloads:
        annotations = o.annotations_of(workload.obj)
        plans = tuple(
            plan_container(c, annotations, lookups, workload.pods, settings.mode)
            for c in containers_of(workload.obj)
        )
        tick = _WorkloadTick(cluster, workload, plans, settings, sleep, clock)
        reports.append(tick.run(lookups, pin_lookups, hold))
    return TickReport(
        tuple(reports),
        registry_requests=client.requests_made,
        distinct_references=len(lookups) + len(pin_lookups),
    )


def _report(obj: Mapping[str, Any], outcome: Outcome, reason: str) -> WorkloadReport:
    namespace = o.namespace_of(obj)
    return WorkloadReport(namespace, o.name_of(obj), outcome, reason)


def _selector(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return o.mapping(o.mapping(obj.get("spec")).get("selector"))


def _selected(obj: Mapping[str, Any], read: ListRead) -> list[Mapping[str, Any]] | CantRead:
    """The pods of `read` the Deployment's selector matches."""
    if isinstance(read, CantRead):
        return read
    return [p for p in read.items if o.selector_matches(_selector(obj), o.labels_of(p))]


def _pods(cluster: ClusterWriter, obj: Mapping[str, Any]) -> list[Mapping[str, Any]] | CantRead:
    namespace = o.namespace_of(obj)
    labels = {str(k): str(v) for k, v in o.mapping(_selector(obj).get("matchLabels")).items()}
    return _selected(obj, cluster.list(Kind.POD, namespace=namespace, labels=labels or None))


class _SharedReads:
    """The tick's first pass: one pod list per namespace and one read per service account or
    secret, however many Deployments share them (a request each would grow with the fleet)."""

    def __init__(self, cluster: ClusterWriter) -> None:
        self._cluster = cluster
        self._pods: dict[str, ListRead] = {}
        self._objects: dict[tuple[Kind, str, str], GetRead] = {}

    def pods_of(self, obj: Mapping[str, Any]) -> list[Mapping[str, Any]] | CantRead:
        """The pods the Deployment's selector matches."""
        namespace = o.namespace_of(obj)
        if namespace not in self._pods:
            self._pods[namespace] = self._cluster.list(Kind.POD, namespace=namespace)
        return _selected(obj, self._pods[namespace])

    def get(self, kind: Kind, name: str, *, namespace: str) -> GetRead:
        """One object, read once per tick."""
        key = (kind, namespace, name)
        if key not in self._objects:
            self._objects[key] = self._cluster.get(kind, name, namespace=namespace)
        return self._objects[key]


def _docker_configs(cluster: _SharedReads, obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Registry logins from the workload's image pull secrets (pod spec and service account)."""
    namespace = o.namespace_of(obj)
    spec = o.pod_spec(o.pod_template(obj))
    names = o.pull_secret_names(spec)
    account = cluster.get(Kind.SERVICE_ACCOUNT, o.service_account_name(spec), namespace=namespace)
    if isinstance(account, Got):
        names += o.pull_secret_names(account.obj)
    configs: list[tuple[str, str]] = []
    for name in dict.fromkeys(names):
        secret = cluster.get(Kind.SECRET, name, namespace=namespace)
        if isinstance(secret, Got):
            data = o.mapping(secret.obj.get("data"))
            configs += [
                (k, str(data[k])) for k in (".dockerconfigjson", ".dockercfg") if data.get(k)
            ]
    return configs


def _resolve(
    workloads: Sequence[_Workload],
    configs: list[tuple[str, str]],
    settings: RefreshSettings,
    progress: Callable[[int], Callable[[], None]] | None,
) -> tuple[dict[str, DigestLookup], dict[str, DigestLookup], RegistryClient]:
    """Every distinct tracked tag and operator pin, looked up once, concurrently."""
    tracked: list[ImageReference] = []
    pinned: list[ImageReference] = []
    for workload in workloads:
        annotations = o.annotations_of(workload.obj)
        for container in containers_of(workload.obj):
            try:
                tag_ref, pin_ref = tracked_reference(container, annotations, settings.mode)
            except ImageReferenceError:
                continue
            if tag_ref is not None:
                tracked.append(tag_ref)
            if pin_ref is not None:
                pinned.append(pin_ref)
    client = RegistryClient(PullCredentials.from_docker_configs(configs), settings.registry)
    total = len({str(r) for r in tracked}) + len({str(r) for r in pinned})
    advance = progress(total) if progress is not None else None
    try:
        return client.resolve_all(tracked, advance), client.resolve_all(pinned, advance), client
    finally:
        client.close()


class _WorkloadTick:
    """One workload's tick: the writes and waits the decisions in steps.py ask for, in order."""

    def __init__(
        self,
        cluster: ClusterWriter,
        workload: _Workload,
        plans: tuple[ContainerPlan, ...],
        settings: RefreshSettings,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
    ) -> None:
        self._cluster = cluster
        self._workload = workload
        self._plans = plans
        self._settings = settings
        self._sleep = sleep
        self._clock = clock
        self._writes: list[Write] = []

    def run(
        self,
        lookups: Mapping[str, DigestLookup],
        pin_lookups: Mapping[str, DigestLookup],
        hold: str,
    ) -> WorkloadReport:
        """Steps (1) to (4) for this workload."""
        obj, settings = self._workload.obj, self._settings
        # (1) Stale-pin findings first: nothing below may stop them from landing.
        changes = pin_findings(obj, lookups, pin_lookups, settings.mode)
        if changes:
            updated = self._annotate(AnnotationWrite("stale-pins", changes))
            obj = updated if updated is not None else obj
        verdict = before_restart(obj, self._plans, pin_lookups, settings.mode, hold)
        if isinstance(verdict, Ending):
            return self._end(verdict)
        return self._restart(obj, verdict)

    def _done(self, outcome: Outcome, reason: str) -> WorkloadReport:
        workload = self._workload
        return WorkloadReport(
            workload.namespace, workload.name, outcome, reason, self._plans, tuple(self._writes)
        )

    def _end(self, ending: Ending) -> WorkloadReport:
        if ending.write is not None:
            self._annotate(ending.write)
            error = self._writes[-1].error
            if ending.write_must_land and error:
                # The marker stays: the next tick finds the rollout done, verifies and records.
                return self._done(
                    Outcome.COULD_NOT_CHECK, f"rolled out, but the record failed: {error}"
                )
        return self._done(ending.outcome, ending.reason)

    def _restart(self, obj: Mapping[str, Any], restart: Sequence[ContainerPlan]) -> WorkloadReport:
        """Steps (2) and (3): one conditional write; after a conflict, decide again from a
        fresh read, never restart blindly."""
        settings, workload = self._settings, self._workload
        for _ in range(_CONFLICT_RETRIES):
            stamp = _now_stamp()
            step = restart_step(o.annotations_of(obj), restart, settings.max_attempts, stamp)
            if isinstance(step, Ending):
                return self._end(step)
            if isinstance(step, Resume):
                if settings.dry_run:
                    return self._done(
                        Outcome.PLANNED, "a restart is under way: would wait for it and record"
                    )
                return self._finish(obj, step.marker)
            template = template_change(obj, restart, settings.mode, stamp)
            described = describe_template(template)
            if settings.dry_run:
                self._writes.append(Write("restart", step.annotations, described, applied=False))
                return self._done(
                    Outcome.PLANNED, "would restart: " + ", ".join(p.reason for p in restart)
                )
            patch = {
                "metadata": {
                    "resourceVersion": o.mapping(obj.get("metadata")).get("resourceVersion"),
                    "annotations": dict(step.annotations),
                },
                "spec": {"template": template},
            }
            result = self._cluster.patch(
                Kind.DEPLOYMENT,
                workload.name,
                namespace=workload.namespace,
                patch=patch,
                strategic=True,
            )
            if isinstance(result, Conflict):
                # Someone else wrote since we read: re-read and decide again.
                fresh = self._cluster.get(
                    Kind.DEPLOYMENT, workload.name, namespace=workload.namespace
                )
                if isinstance(fresh, CantRead):
                    return self._done(Outcome.COULD_NOT_CHECK, fresh.reason)
                obj = fresh.obj
                continue
            if isinstance(result, CantRead):
                self._writes.append(
                    Write("restart", step.annotations, described, False, result.reason)
                )
                return self._done(Outcome.COULD_NOT_CHECK, result.reason)
            self._writes.append(Write("restart", step.annotations, described))
            return self._finish(result.obj, step.marker)
        return self._done(Outcome.COULD_NOT_CHECK, "the Deployment kept changing under the tick")

    def _finish(self, obj: Mapping[str, Any], marker: PendingRestart) -> WorkloadReport:
        """(4) Wait for the rollout; record only what the new pods are proven to run."""
        waited = self._wait_for_rollout(marker)
        if isinstance(waited, CantRead):
            return self._done(
                Outcome.COULD_NOT_CHECK, f"{waited.reason}; the next tick resumes the wait"
            )
        end, pods = waited
        return self._end(after_rollout(end, o.annotations_of(obj), self._plans, pods, marker))

    def _wait_for_rollout(
        self, marker: PendingRestart
    ) -> tuple[RolloutEnd, list[Mapping[str, Any]]] | CantRead:
        workload, settings = self._workload, self._settings
        deadline = self._clock() + settings.rollout_timeout
        while True:
            read = self._cluster.get(Kind.DEPLOYMENT, workload.name, namespace=workload.namespace)
            if isinstance(read, CantRead):
                return read
            pods = _pods(self._cluster, read.obj)
            if isinstance(pods, CantRead):
                return pods
            expired = self._clock() >= deadline
            end = poll_rollout(
                read.obj,
                pods,
                marker,
                expired=expired,
                timeout=settings.rollout_timeout,
            )
            if end is not None:
                return end, pods
            self._sleep(settings.poll_interval)

    def _annotate(self, write: AnnotationWrite) -> Mapping[str, Any] | None:
        """One bounded, non-fatal annotation patch; the Deployment as written, or None. A dry
        run never gets past a restart, so only the writes before one are ever held back."""
        changes = dict(write.changes)
        if self._settings.dry_run:
            self._writes.append(Write(write.step, changes, applied=False))
            return None
        workload = self._workload
        result = self._cluster.patch(
            Kind.DEPLOYMENT,
            workload.name,
            namespace=workload.namespace,
            patch={"metadata": {"annotations": changes}},
        )
        if isinstance(result, Conflict | CantRead):
            error = result.reason if isinstance(result, CantRead) else "conflict"
            self._writes.append(Write(write.step, changes, applied=False, error=error))
            return None
        self._writes.append(Write(write.step, changes))
        return result.obj
