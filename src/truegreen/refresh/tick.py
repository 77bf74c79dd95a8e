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
"""

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Conflict, GetRead, Got, Kind, ListRead
from truegreen.cluster.reader import ClusterWriter
from truegreen.exitcodes import ExitCode
from truegreen.images import ImageReference, ImageReferenceError, parse_image
from truegreen.refresh.annotations import ATTEMPTS, LATCHED, PENDING, RECORDED_DIGEST, container_key
from truegreen.refresh.plan import (
    AttemptCounter,
    ContainerPlan,
    Decision,
    PendingRestart,
    RefreshMode,
    containers_of,
    pin_findings,
    plan_container,
    pods_run,
    target_id,
    tracked_reference,
)
from truegreen.refresh.registry import (
    DigestLookup,
    LookupFailed,
    LookupFailure,
    PullCredentials,
    RegistryClient,
)
from truegreen.rollout import rollout_status

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
_STUCK_REASONS = {"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName"}
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
    insecure_registries: frozenset[str] = frozenset()
    request_timeout: float = 10.0
    poll_interval: float = 1.0
    verify_registry_tls: bool = True


class Outcome(StrEnum):
    """How a workload ended the tick."""

    CONVERGED = "converged"
    RESTARTED = "restarted"
    LATCHED = "latched"
    PAUSED = "paused"
    IN_PROGRESS = "in-progress"
    PLANNED = "planned"
    ROLLOUT_FAILED = "rollout-failed"
    REFUSED = "refused"
    DANGLING_PIN = "dangling-pin"
    INVALID_IMAGE = "invalid-image"
    COULD_NOT_CHECK = "could-not-check"


_FAILED = {Outcome.ROLLOUT_FAILED, Outcome.REFUSED, Outcome.DANGLING_PIN, Outcome.INVALID_IMAGE}


@dataclass(frozen=True)
class Write:
    """One write the tick made (or, in a dry run, would make)."""

    step: str
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    template: str = ""
    applied: bool = True
    error: str = ""


@dataclass(frozen=True)
class WorkloadReport:
    """What happened to one workload."""

    namespace: str
    name: str
    outcome: Outcome
    reason: str
    containers: tuple[ContainerPlan, ...] = ()
    writes: tuple[Write, ...] = ()


@dataclass(frozen=True)
class TickReport:
    """The whole tick."""

    workloads: tuple[WorkloadReport, ...]
    cant_read: tuple[str, ...] = ()
    registry_requests: int = 0
    distinct_references: int = 0

    @property
    def exit_code(self) -> ExitCode:
        """2 a rollout failed (or a pin dangles, or a restart was refused); else 3 when a read
        failed; else 0 (converged, or deliberately held)."""
        outcomes = {w.outcome for w in self.workloads}
        if outcomes & _FAILED:
            return ExitCode.FAILED
        if self.cant_read or Outcome.COULD_NOT_CHECK in outcomes:
            return ExitCode.UNKNOWN
        return ExitCode.GOOD


@dataclass
class _Workload:
    obj: Mapping[str, Any]
    pods: list[Mapping[str, Any]]

    @property
    def namespace(self) -> str:
        return str(o.mapping(self.obj.get("metadata")).get("namespace", ""))

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
        early = _skip(obj)
        if early is not None:
            reports.append(early)
            continue
        pods = reads.pods_of(obj)
        if isinstance(pods, CantRead):
            reports.append(_report(obj, Outcome.COULD_NOT_CHECK, pods.reason))
            continue
        configs += _docker_configs(reads, obj)
        workloads.append(_Workload(obj, pods))
    lookups, pin_lookups, client = _resolve(workloads, configs, settings, progress)
    limited = sorted(
        {
            r.reason
            for r in [*lookups.values(), *pin_lookups.values()]
            if isinstance(r, LookupFailed) and r.failure is LookupFailure.RATE_LIMITED
        }
        | set(client.below_reserve)
    )
    # A registry near its rate limit: restart nothing this tick (findings are still written).
    hold = f"holding every restart this tick: {'; '.join(limited)}" if limited else ""
    for workload in workloads:
        reports.append(
            _tick_workload(cluster, workload, lookups, pin_lookups, settings, sleep, clock, hold)
        )
    return TickReport(
        tuple(reports),
        registry_requests=client.requests_made,
        distinct_references=len(lookups) + len(pin_lookups),
    )


def _report(obj: Mapping[str, Any], outcome: Outcome, reason: str, **kwargs: Any) -> WorkloadReport:
    namespace = str(o.mapping(obj.get("metadata")).get("namespace", ""))
    return WorkloadReport(namespace, o.name_of(obj), outcome, reason, **kwargs)


def _skip(obj: Mapping[str, Any]) -> WorkloadReport | None:
    if o.mapping(obj.get("spec")).get("paused"):
        return _report(obj, Outcome.PAUSED, "the Deployment is paused")
    if PendingRestart.read(o.annotations_of(obj)) is None and _rolling(obj):
        return _report(obj, Outcome.IN_PROGRESS, "a rollout is in progress; not touching it")
    return None


def _rolling(obj: Mapping[str, Any]) -> bool:
    """Generation ahead of observedGeneration, or fewer updated replicas than desired. A rollout
    whose new pods crash is not "in progress": it failed, and the next tick may retry it."""
    meta, spec, status = (o.mapping(obj.get(k)) for k in ("metadata", "spec", "status"))
    if o.integer(meta.get("generation")) > o.integer(status.get("observedGeneration")):
        return True
    return o.integer(status.get("updatedReplicas")) < o.integer(spec.get("replicas"), 1)


def _selector(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return o.mapping(o.mapping(obj.get("spec")).get("selector"))


def _selected(obj: Mapping[str, Any], read: ListRead) -> list[Mapping[str, Any]] | CantRead:
    """The pods of `read` the Deployment's selector matches."""
    if isinstance(read, CantRead):
        return read
    return [p for p in read.items if o.selector_matches(_selector(obj), o.labels_of(p))]


def _pods(cluster: ClusterWriter, obj: Mapping[str, Any]) -> list[Mapping[str, Any]] | CantRead:
    namespace = str(o.mapping(obj.get("metadata")).get("namespace", ""))
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
        namespace = str(o.mapping(obj.get("metadata")).get("namespace", ""))
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
    namespace = str(o.mapping(obj.get("metadata")).get("namespace", ""))
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
    client = RegistryClient(
        PullCredentials.from_docker_configs(configs),
        timeout=settings.request_timeout,
        insecure_registries=settings.insecure_registries,
        verify_tls=settings.verify_registry_tls,
    )
    total = len({str(r) for r in tracked}) + len({str(r) for r in pinned})
    advance = progress(total) if progress is not None else None
    try:
        return client.resolve_all(tracked, advance), client.resolve_all(pinned, advance), client
    finally:
        client.close()


def _tick_workload(
    cluster: ClusterWriter,
    workload: _Workload,
    lookups: Mapping[str, DigestLookup],
    pin_lookups: Mapping[str, DigestLookup],
    settings: RefreshSettings,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    hold: str = "",
) -> WorkloadReport:
    writes: list[Write] = []
    obj = workload.obj
    annotations = o.annotations_of(obj)
    plans = tuple(
        plan_container(c, annotations, lookups, workload.pods, settings.mode)
        for c in containers_of(obj)
    )

    def done(outcome: Outcome, reason: str) -> WorkloadReport:
        return WorkloadReport(
            workload.namespace, workload.name, outcome, reason, plans, tuple(writes)
        )

    # (1) Stale-pin findings first: nothing below may stop them from landing.
    changes = pin_findings(obj, lookups, pin_lookups, settings.mode)
    if changes:
        written = _annotate(cluster, workload, "stale-pins", changes, settings.dry_run)
        writes.append(written[0])
        if written[1] is not None:
            obj = written[1]
    dangling = [
        str(r)
        for r in (pin_lookups.get(str(p)) for p in _pins(obj, settings.mode))
        if isinstance(r, LookupFailed) and r.failure is LookupFailure.NOT_FOUND
    ]
    # An image that is not a reference can never be pulled: no digest to keep it on.
    invalid = [p for p in plans if p.decision is Decision.INVALID_IMAGE]
    if invalid:
        return done(Outcome.INVALID_IMAGE, "; ".join(f"{p.container}: {p.reason}" for p in invalid))
    failed = [p for p in plans if p.decision is Decision.LOOKUP_FAILED]
    if failed:
        return done(Outcome.COULD_NOT_CHECK, "; ".join(sorted({p.reason for p in failed})))
    restart = [p for p in plans if p.decision is Decision.RESTART]
    if restart and hold:
        return done(Outcome.COULD_NOT_CHECK, hold)
    if not restart:
        record = _record_changes(o.annotations_of(obj), plans)
        if record:
            writes.append(_annotate(cluster, workload, "record", record, settings.dry_run)[0])
        if dangling:
            return done(Outcome.DANGLING_PIN, "a pinned image no longer exists in the registry")
        behind = [
            p.container
            for p in plans
            if p.decision is Decision.PINNED and p.newest and not p.image.endswith(p.newest)
        ]
        if behind:
            pins = ", ".join(behind)
            return done(Outcome.CONVERGED, f"pinned, never restarted; behind its tag: {pins}")
        return done(Outcome.CONVERGED, "every tracked image runs its newest digest")
    if settings.mode is RefreshMode.RESTART:
        refused = _pull_policy_refusals(obj, restart)
        if refused:
            return done(Outcome.REFUSED, refused)
    return _restart(cluster, workload, obj, plans, restart, settings, writes, sleep, clock)


def _restart(
    cluster: ClusterWriter,
    workload: _Workload,
    obj: Mapping[str, Any],
    plans: tuple[ContainerPlan, ...],
    restart: Sequence[ContainerPlan],
    settings: RefreshSettings,
    writes: list[Write],
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> WorkloadReport:
    """Steps (2) and (3): the flap guard, then one conditional write that counts the attempt,
    leaves the pending marker and restarts. After a conflict, decide again from a fresh read."""

    def done(outcome: Outcome, reason: str) -> WorkloadReport:
        return WorkloadReport(
            workload.namespace, workload.name, outcome, reason, plans, tuple(writes)
        )

    target = {p.container: p.newest or "" for p in restart}
    tid = target_id(target)
    for _ in range(_CONFLICT_RETRIES):
        annotations = o.annotations_of(obj)
        if all(annotations.get(container_key(RECORDED_DIGEST, c)) == d for c, d in target.items()):
            return done(Outcome.CONVERGED, "another tick already rolled out the newest digests")
        pending = PendingRestart.read(annotations)
        if pending is not None and dict(pending.target) == target:
            return _finish(cluster, workload, obj, plans, pending, settings, writes, sleep, clock)
        # (2) The flap guard.
        attempts = AttemptCounter.read(annotations).at(tid)
        if attempts >= settings.max_attempts:
            reason = (
                f"{attempts} restarts toward the same digests did not roll out; "
                f"stopped until someone looks (clear {LATCHED} to retry)"
            )
            if annotations.get(LATCHED) != reason:
                latch = _annotate(cluster, workload, "latch", {LATCHED: reason}, settings.dry_run)
                writes.append(latch[0])
            return done(Outcome.LATCHED, reason)
        # (3) Count the attempt, leave the marker, restart: one conditional write.
        stamp = _now_stamp()
        marker = PendingRestart(target, stamp)
        restart_annotations: dict[str, str | None] = {
            ATTEMPTS: AttemptCounter(attempts + 1, tid).text(),
            PENDING: marker.text(),
        }
        template = _template_change(obj, restart, settings.mode, stamp)
        if settings.dry_run:
            writes.append(Write("restart", restart_annotations, _describe(template), applied=False))
            return done(Outcome.PLANNED, "would restart: " + ", ".join(p.reason for p in restart))
        patch = {
            "metadata": {
                "resourceVersion": o.mapping(obj.get("metadata")).get("resourceVersion"),
                "annotations": restart_annotations,
            },
            "spec": {"template": template},
        }
        result = cluster.patch(
            Kind.DEPLOYMENT,
            workload.name,
            namespace=workload.namespace,
            patch=patch,
            strategic=True,
        )
        if isinstance(result, Conflict):
            # Someone else wrote since we read: re-read and decide again, never restart blindly.
            fresh = cluster.get(Kind.DEPLOYMENT, workload.name, namespace=workload.namespace)
            if isinstance(fresh, CantRead):
                return done(Outcome.COULD_NOT_CHECK, fresh.reason)
            obj = fresh.obj
            continue
        if isinstance(result, CantRead):
            failed_write = Write(
                "restart", restart_annotations, _describe(template), False, result.reason
            )
            writes.append(failed_write)
            return done(Outcome.COULD_NOT_CHECK, result.reason)
        writes.append(Write("restart", restart_annotations, _describe(template)))
        return _finish(cluster, workload, result.obj, plans, marker, settings, writes, sleep, clock)
    return done(Outcome.COULD_NOT_CHECK, "the Deployment kept changing under the tick")


def _finish(
    cluster: ClusterWriter,
    workload: _Workload,
    obj: Mapping[str, Any],
    plans: tuple[ContainerPlan, ...],
    marker: PendingRestart,
    settings: RefreshSettings,
    writes: list[Write],
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> WorkloadReport:
    """(4) Wait for the rollout; record only what the new pods are proven to run."""

    def done(outcome: Outcome, reason: str) -> WorkloadReport:
        return WorkloadReport(
            workload.namespace, workload.name, outcome, reason, plans, tuple(writes)
        )

    generation = o.integer(o.mapping(obj.get("metadata")).get("generation"))
    waited = _wait_for_rollout(cluster, workload, generation, marker, settings, sleep, clock)
    if isinstance(waited, CantRead):
        return done(Outcome.COULD_NOT_CHECK, f"{waited.reason}; the next tick resumes the wait")
    ok, reason, pods = waited
    if ok:
        restarted = [p for p in plans if p.container in marker.target]
        unproven = [
            p.container for p in restarted if not pods_run(pods, p.container, p.newest_digests)
        ]
        if unproven:
            ok, reason = False, f"the new pods do not run the newest digest ({', '.join(unproven)})"
    if not ok:
        if reason.startswith("timed out"):
            # The rollout may still finish: keep the marker so the next tick resumes, not restarts.
            return done(Outcome.ROLLOUT_FAILED, reason)
        cleared = _annotate(cluster, workload, "clear-pending", {PENDING: None}, False)
        writes.append(cleared[0])
        return done(Outcome.ROLLOUT_FAILED, reason)
    verified = [replace(p, decision=Decision.RESTART) for p in plans]
    record = _record_changes(o.annotations_of(obj), verified, force=True)
    written = _annotate(cluster, workload, "record", record, False)[0]
    writes.append(written)
    if written.error:
        # The marker stays: the next tick finds the rollout done, verifies again and records.
        return done(Outcome.COULD_NOT_CHECK, f"rolled out, but the record failed: {written.error}")
    return done(Outcome.RESTARTED, "rolled out and verified: the pods run the newest digest")


def _wait_for_rollout(
    cluster: ClusterWriter,
    workload: _Workload,
    generation: int,
    marker: PendingRestart,
    settings: RefreshSettings,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> tuple[bool, str, list[Mapping[str, Any]]] | CantRead:
    deadline = clock() + settings.rollout_timeout
    while True:
        read = cluster.get(Kind.DEPLOYMENT, workload.name, namespace=workload.namespace)
        if isinstance(read, CantRead):
            return read
        status = rollout_status(read.obj)
        observed = o.integer(o.mapping(read.obj.get("status")).get("observedGeneration"))
        pods = _pods(cluster, read.obj)
        if isinstance(pods, CantRead):
            return pods
        if observed >= generation and status.done:
            return True, "rolled out", pods
        if status.stuck:
            return False, f"the rollout {status.progress}", pods
        stuck = _stuck_new_pod(pods, marker)
        if stuck:
            return False, stuck, pods
        if clock() >= deadline:
            return False, f"timed out after {settings.rollout_timeout:g}s ({status.progress})", pods
        sleep(settings.poll_interval)


def _stuck_new_pod(pods: Sequence[Mapping[str, Any]], marker: PendingRestart) -> str:
    for pod in pods:
        is_new = o.annotations_of(pod).get(RESTARTED_AT) == marker.stamp or any(
            str(c.get("image", "")).endswith(digest)
            for c in [*o.init_containers(o.pod_spec(pod)), *o.containers(o.pod_spec(pod))]
            for digest in marker.target.values()
        )
        if not is_new:
            continue
        for status in o.container_statuses(pod):
            reason = str(o.mapping(o.mapping(status.get("state")).get("waiting")).get("reason", ""))
            if reason in _STUCK_REASONS:
                return f"new pod {o.name_of(pod)} is in {reason}"
    return ""


def _annotate(
    cluster: ClusterWriter,
    workload: _Workload,
    step: str,
    changes: Mapping[str, str | None],
    dry_run: bool,
) -> tuple[Write, Mapping[str, Any] | None]:
    """One bounded, non-fatal annotation patch (no call when there is nothing to change)."""
    if dry_run:
        return Write(step, dict(changes), applied=False), None
    result = cluster.patch(
        Kind.DEPLOYMENT,
        workload.name,
        namespace=workload.namespace,
        patch={"metadata": {"annotations": dict(changes)}},
    )
    if isinstance(result, Conflict | CantRead):
        error = result.reason if isinstance(result, CantRead) else "conflict"
        return Write(step, dict(changes), applied=False, error=error), None
    return Write(step, dict(changes)), result.obj


def _record_changes(
    annotations: Mapping[str, str], plans: Sequence[ContainerPlan], *, force: bool = False
) -> dict[str, str | None]:
    """Record the newest digests and clear the counter, latch and marker (only what changes)."""
    desired: dict[str, str | None] = {ATTEMPTS: None, LATCHED: None, PENDING: None}
    for plan in plans:
        recordable = (Decision.RECORD_RUNNING, Decision.UP_TO_DATE) + (
            (Decision.RESTART,) if force else ()
        )
        if plan.decision in recordable and plan.newest:
            desired[container_key(RECORDED_DIGEST, plan.container)] = plan.newest
    return {k: v for k, v in desired.items() if annotations.get(k) != v}


def _pins(obj: Mapping[str, Any], mode: RefreshMode) -> list[ImageReference]:
    found = []
    for container in containers_of(obj):
        try:
            _, pinned = tracked_reference(container, o.annotations_of(obj), mode)
        except ImageReferenceError:
            continue
        if pinned is not None:
            found.append(pinned)
    return found


def _pull_policy_refusals(obj: Mapping[str, Any], restart: Sequence[ContainerPlan]) -> str:
    """A restart cannot change the image when the kubelet keeps a cached one."""
    by_name = {str(c.get("name")): c for c in containers_of(obj)}
    refused = []
    for plan in restart:
        container = by_name[plan.container]
        reference = parse_image(str(container.get("image", "")))
        default = "Always" if reference.tag == "latest" and not reference.digest else "IfNotPresent"
        policy = container.get("imagePullPolicy") or default
        if policy != "Always":
            refused.append(f"{plan.container} ({policy})")
    if not refused:
        return ""
    return (
        "a restart would keep the old image: imagePullPolicy is not Always for "
        + ", ".join(refused)
        + "; set imagePullPolicy: Always or use --mode pin"
    )


def _template_change(
    obj: Mapping[str, Any], restart: Sequence[ContainerPlan], mode: RefreshMode, stamp: str
) -> dict[str, Any]:
    if mode is RefreshMode.RESTART:
        return {"metadata": {"annotations": {RESTARTED_AT: stamp}}}
    spec = o.pod_spec(o.pod_template(obj))
    pinned = {
        p.container: f"{p.reference.registry}/{p.reference.repository}:{p.reference.tag}@{p.newest}"
        for p in restart
        if p.reference is not None
    }
    change: dict[str, Any] = {}
    for field_name, entries in (
        ("initContainers", o.init_containers(spec)),
        ("containers", o.containers(spec)),
    ):
        updates = [
            {"name": c.get("name"), "image": pinned[str(c.get("name"))]}
            for c in entries
            if str(c.get("name")) in pinned
        ]
        if updates:
            change[field_name] = updates
    return {"spec": change}


def _describe(template: Mapping[str, Any]) -> str:
    annotations = o.mapping(o.mapping(template.get("metadata")).get("annotations"))
    if RESTARTED_AT in annotations:
        return f"template annotation {RESTARTED_AT}={annotations[RESTARTED_AT]}"
    spec = o.mapping(template.get("spec"))
    images = [
        f"{c['name']}={c['image']}"
        for key in ("initContainers", "containers")
        for c in spec.get(key, [])
    ]
    return "template images " + ", ".join(images)
