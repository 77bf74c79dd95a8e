"""Workloads: rollouts complete by kubectl's rules, and the environment's pods are healthy."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from truegreen.cluster import CantRead, Kind, KubeObject, Listed
from truegreen.doctor import objects as o
from truegreen.doctor.checks.base import cant_check, finding, ok
from truegreen.doctor.environment import WORKLOAD_KINDS, Environment, owner_words
from truegreen.doctor.findings import Basis, CheckId, Finding, Status

CHECK = CheckId.WORKLOADS
_CRASHING = {"CrashLoopBackOff"}
_IMAGE_FAILING = {"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull"}
_SETTING_MISSING = {"CreateContainerConfigError", "CreateContainerError"}


@dataclass(frozen=True)
class RolloutStatus:
    """kubectl's `rollout status` answer: done, in progress (with why), or stuck."""

    done: bool
    stuck: bool = False
    progress: str = ""


def _int(value: object, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def rollout_status(workload: KubeObject) -> RolloutStatus:
    """Rollout status by the rules of kubectl's polymorphichelpers/rollout_status.go."""
    meta = o.mapping(workload.get("metadata"))
    spec, status = o.mapping(workload.get("spec")), o.mapping(workload.get("status"))
    generation, observed = _int(meta.get("generation")), _int(status.get("observedGeneration"))
    kind = workload.get("kind")
    if kind == "Deployment":
        if generation > observed:
            return RolloutStatus(False, progress="waiting for the update to be picked up")
        progressing = o.condition(workload, "Progressing")
        if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
            return RolloutStatus(False, stuck=True, progress="exceeded its progress deadline")
        replicas = _int(spec.get("replicas"), 1)
        updated = _int(status.get("updatedReplicas"))
        if updated < replicas:
            return RolloutStatus(False, progress=f"{updated} of {replicas} copies updated")
        if _int(status.get("replicas")) > updated:
            old = _int(status.get("replicas")) - updated
            return RolloutStatus(False, progress=f"{old} old copies still stopping")
        if _int(status.get("availableReplicas")) < updated:
            available = _int(status.get("availableReplicas"))
            return RolloutStatus(
                False, progress=f"{available} of {updated} updated copies available"
            )
        return RolloutStatus(True)
    strategy = o.mapping(spec.get("updateStrategy")).get("type", "RollingUpdate")
    if strategy != "RollingUpdate":
        return RolloutStatus(True)  # kubectl cannot judge OnDelete rollouts either
    if kind == "StatefulSet":
        if observed == 0 or generation > observed:
            return RolloutStatus(False, progress="waiting for the update to be picked up")
        replicas = _int(spec.get("replicas"), 1)
        ready = _int(status.get("readyReplicas"))
        if ready < replicas:
            return RolloutStatus(False, progress=f"{ready} of {replicas} copies ready")
        rolling = o.mapping(o.mapping(spec.get("updateStrategy")).get("rollingUpdate"))
        partition = _int(rolling.get("partition"))
        if partition:
            if _int(status.get("updatedReplicas")) < replicas - partition:
                return RolloutStatus(False, progress="partitioned update in progress")
            return RolloutStatus(True)
        if status.get("updateRevision") != status.get("currentRevision"):
            return RolloutStatus(False, progress="copies still moving to the new version")
        return RolloutStatus(True)
    if kind == "DaemonSet":
        if generation > observed:
            return RolloutStatus(False, progress="waiting for the update to be picked up")
        desired = _int(status.get("desiredNumberScheduled"))
        updated = _int(status.get("updatedNumberScheduled"))
        if updated < desired:
            return RolloutStatus(False, progress=f"{updated} of {desired} copies updated")
        available = _int(status.get("numberAvailable"))
        if available < desired:
            return RolloutStatus(False, progress=f"{available} of {desired} copies available")
        return RolloutStatus(True)
    return RolloutStatus(True)


def _age(since: datetime | None, now: datetime) -> timedelta:
    return max(now - since, timedelta(0)) if since else timedelta(0)


def format_age(age: timedelta) -> str:
    """A plain duration: `45 seconds`, `12 minutes`, `3 hours`, `2 days`."""
    seconds = int(age.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


@dataclass(frozen=True)
class _PodProblem:
    code: str
    status: Status
    basis: Basis
    detail: str
    fields: tuple[tuple[str, str], ...] = ()


def _pod_problem(
    pod: KubeObject, now: datetime, grace: timedelta, is_job: bool
) -> _PodProblem | None:
    name = o.name_of(pod)
    for container in o.container_statuses(pod):
        waiting = o.mapping(o.mapping(container.get("state")).get("waiting"))
        reason = str(waiting.get("reason", ""))
        cname = container.get("name")
        last = o.mapping(o.mapping(container.get("lastState")).get("terminated"))
        if reason in _CRASHING:
            restarts = _int(container.get("restartCount"))
            detail = f"pod {name} container {cname}: {reason}, {restarts} restarts"
            if last.get("reason") == "OOMKilled":
                return _PodProblem(
                    "workloads.out-of-memory", Status.FAIL, Basis.MEASURED, detail + ", OOMKilled"
                )
            hint = f"kubectl logs --previous {name} -c {cname}"
            return _PodProblem(
                "workloads.crash-loop", Status.FAIL, Basis.MEASURED, detail, (("hint", hint),)
            )
        if reason in _IMAGE_FAILING:
            image = str(container.get("image", ""))
            detail = f"pod {name} container {cname}: {reason}: {waiting.get('message', '')}"
            return _PodProblem(
                "workloads.image-download-failing",
                Status.FAIL,
                Basis.MEASURED,
                detail.rstrip(": "),
                (("image", image),),
            )
        if reason in _SETTING_MISSING:
            detail = f"pod {name} container {cname}: {reason}: {waiting.get('message', '')}"
            return _PodProblem("workloads.setting-missing", Status.FAIL, Basis.MEASURED, detail)
    pod_phase = o.phase(pod)
    created = o.created_at(pod)
    if pod_phase == "Pending":
        if not o.node_name(pod) and is_job:
            return None  # unscheduled training job pods are the capacity check's to explain
        scheduled = o.condition(pod, "PodScheduled")
        why = (scheduled or {}).get("message") or "not yet started"
        age = _age(created, now)
        detail = f"pod {name} is Pending for {format_age(age)}: {why}"
        if age > grace:
            return _PodProblem(
                "workloads.waiting-too-long",
                Status.FAIL,
                Basis.INFERRED,
                detail,
                (("age", format_age(age)),),
            )
        if is_job:
            return None
        return _PodProblem(
            "workloads.starting", Status.WARN, Basis.MEASURED, detail, (("age", format_age(age)),)
        )
    if pod_phase == "Running" and not is_job:
        ready = o.condition(pod, "Ready")
        if ready is not None and ready.get("status") != "True":
            since = o.parse_time(ready.get("lastTransitionTime")) or created
            age = _age(since, now)
            detail = f"pod {name} is Running but not Ready for {format_age(age)}"
            if age > grace:
                return _PodProblem(
                    "workloads.not-ready",
                    Status.FAIL,
                    Basis.MEASURED,
                    detail,
                    (("age", format_age(age)),),
                )
            return _PodProblem(
                "workloads.starting",
                Status.WARN,
                Basis.MEASURED,
                detail,
                (("age", format_age(age)),),
            )
    return None


def _owner_of(
    pod: KubeObject, selectors: list[tuple[KubeObject, Mapping[str, Any]]]
) -> KubeObject | None:
    for workload, selector in selectors:
        if o.selector_matches(selector, o.labels_of(pod)):
            return workload
    return None


def check(env: Environment) -> list[Finding]:
    """Findings about the environment's services and the pods of services and training jobs."""
    findings: list[Finding] = []
    workloads: list[KubeObject] = []
    all_listed = True
    for kind in WORKLOAD_KINDS:
        read = env.workloads[kind]
        if isinstance(read, CantRead):
            findings.append(cant_check(CHECK, kind, read))
            all_listed = False
            continue
        workloads.extend(read.items)
    for workload in workloads:
        rollout = rollout_status(workload)
        if rollout.done:
            continue
        code, status = (
            ("workloads.update-stuck", Status.FAIL)
            if rollout.stuck
            else ("workloads.updating", Status.WARN)
        )
        findings.append(
            finding(
                CHECK,
                status,
                Basis.MEASURED,
                code,
                details=(f"{o.ref(workload)} rollout: {rollout.progress}",),
                objects=(o.ref(workload),),
                workload=owner_words(workload).capitalize(),
                progress=rollout.progress,
            )
        )
    if all_listed and not workloads and isinstance(env.jobs, Listed) and not env.jobs.items:
        findings.append(
            finding(
                CHECK,
                Status.FAIL,
                Basis.MEASURED,
                "workloads.none-found",
                details=(f"no Deployments, StatefulSets, DaemonSets or Jobs in {env.namespace}",),
                namespace=env.namespace,
            )
        )
    if isinstance(env.pods, CantRead):
        findings.append(cant_check(CHECK, Kind.POD, env.pods))
        return findings
    selectors = [(w, o.mapping(o.mapping(w.get("spec")).get("selector"))) for w in workloads]
    jobs = {o.name_of(j): j for j in env.jobs.items} if isinstance(env.jobs, Listed) else {}
    grouped: dict[tuple[str, str], tuple[KubeObject, list[tuple[_PodProblem, KubeObject]]]] = {}
    for pod in env.pods.items:
        if o.is_terminated(pod):
            continue
        job_name = o.job_owner(pod)
        owner = jobs.get(job_name) if job_name else _owner_of(pod, selectors)
        if owner is None and job_name:
            owner = {"kind": "Job", "metadata": {"name": job_name}}
        if owner is None:
            continue  # not part of the environment
        problem = _pod_problem(pod, env.now, env.settings.pending_grace, is_job=bool(job_name))
        if problem is not None:
            key = (problem.code, o.ref(owner))
            grouped.setdefault(key, (owner, []))[1].append((problem, pod))
    for (code, owner_ref), (owner, entries) in grouped.items():
        first = entries[0][0]
        findings.append(
            finding(
                CHECK,
                first.status,
                first.basis,
                code,
                details=[problem.detail for problem, _ in entries],
                objects=(owner_ref, *(o.ref(pod) for _, pod in entries)),
                workload=owner_words(owner).capitalize(),
                **dict(first.fields),
            )
        )
    return findings or [ok(CHECK, objects=[o.ref(w) for w in workloads])]
