"""Evidence: what the cluster's own components reported that no other check says in plain words.

Every `Warning` Event of the namespace and every failing condition of its pods, workloads,
volume claims and the machines its pods wait on is evidence (doctor/knowledge/reports.py). A
reason another check reads (`reports.RULED`) is that check's to say; every other one is quoted
here as its component wrote it, with where to read the rest. Nothing is dropped because no rule
names it, and doctor's arithmetic never speaks over it (the capacity and workloads checks leave
a pod with such evidence to this one).
"""

from collections.abc import Mapping
from typing import Final

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind, KubeObject, Listed
from truegreen.doctor.checks.base import Words
from truegreen.doctor.environment import Environment, owner_words
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.reports import Report, Said, pod_state
from truegreen.doctor.knowledge.training import TRAINING_KIND_NAMES
from truegreen.plain_words import Wording

CHECK = CheckId.EVIDENCE

OK: Final = "evidence.ok"
REPORTED: Final = "evidence.cluster-reported"
CANT_READ: Final = "evidence.cant-read"

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("The cluster reports nothing else in the way.", ""),
    REPORTED: Wording(
        "The cluster reports a problem with {what}: {component} says “{reason}: {message}”.",
        "Read the cluster's full account with {command} and fix what it names; doctor has no "
        "plainer words for this one.",
    ),
    CANT_READ: Wording(
        "Couldn't check what the cluster itself reported about the environment: {why}.",
        "{remedy}",
    ),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CHECK, WORDS)
MOST_FINDINGS: Final = 12
"""At most this many reports are findings of their own; the rest are counted in the last one's
details (a namespace in trouble can hold hundreds of Warning Events)."""

_DESCRIBE: Final = {
    "Pod": "pod",
    "Node": "node",
    "PersistentVolumeClaim": "pvc",
    "Deployment": "deployment",
    "ReplicaSet": "replicaset",
    "StatefulSet": "statefulset",
    "DaemonSet": "daemonset",
    "Job": "job",
}
_CLUSTER_SCOPED: Final = frozenset({"Node", "PersistentVolume", "StorageClass"})


def check(env: Environment) -> list[Finding]:
    """A finding for each report no other check says, the newest first."""
    if isinstance(env.warning_events, CantRead):
        return [SAY.cant_check(env, Kind.EVENT, env.warning_events)]
    reports = env.reports()
    findings = [_finding(env, report) for report in reports[:MOST_FINDINGS]]
    if len(reports) > MOST_FINDINGS:
        command = env.settings.kubectl.here("get", "events", "--field-selector", "type=Warning")
        last = findings[-1]
        findings[-1] = replace(
            last, details=(*last.details, f"{len(reports) - MOST_FINDINGS} more: {command}")
        )
    return findings or [SAY.ok()]


def _what(report: Report, env: Environment) -> str:
    """The object in plain words: a training job's program, a workload, a machine."""
    if report.kind == "Pod":
        pod = _pod(env, report.name)
        job = env.work().job_of(pod) if pod is not None else None
        if job is not None:
            return f"the training job '{job.name}' (its program '{report.name}')"
        workload = _workload_of(env, pod) if pod is not None else None
        if workload is not None:
            return f"{owner_words(workload)} (its copy '{report.name}')"
        return f"the program '{report.name}'"
    if report.kind == "Node":
        return f"the machine '{report.name}'"
    if report.kind == "PersistentVolumeClaim":
        return f"the data volume '{report.name}'"
    if report.kind in TRAINING_KIND_NAMES:
        return f"the training job '{report.name}'"
    if report.kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        return f"the workload '{report.name}'"
    return f"the {report.kind} '{report.name}'"


def _workload_of(env: Environment, pod: KubeObject) -> KubeObject | None:
    """The Deployment, StatefulSet or DaemonSet whose selector takes the pod."""
    for read in env.workloads.values():
        for workload in read.items if isinstance(read, Listed) else ():
            selector = o.mapping(o.mapping(workload.get("spec")).get("selector"))
            if selector and o.selector_matches(selector, o.labels_of(pod)):
                return workload
    return None


def _pod(env: Environment, name: str) -> KubeObject | None:
    if not isinstance(env.pods, Listed):
        return None
    return next((p for p in env.pods.items if o.name_of(p) == name), None)


def _command(env: Environment, report: Report) -> str:
    resource = _DESCRIBE.get(report.kind, report.kind.lower())
    if report.kind in _CLUSTER_SCOPED:
        return env.settings.kubectl.cluster("describe", resource, report.name)
    return env.settings.kubectl.here("describe", resource, report.name)


def _fields(env: Environment, report: Report) -> Mapping[str, str]:
    return {
        "what": _what(report, env),
        "component": f"“{report.component}”",
        "reason": report.reason,
        "message": report.message or "(no message)",
        "command": _command(env, report),
    }


def _finding(env: Environment, report: Report) -> Finding:
    said = "Event" if report.said is Said.EVENT else "condition"
    count = f", {report.count} times" if report.count > 1 else ""
    seen = f", last {report.at.isoformat()}" if report.at is not None else ""
    return SAY.finding(
        _status(env, report),
        Basis.MEASURED,
        REPORTED,
        details=(
            f"{said} {report.reason} on {report.kind}/{report.name} from {report.component}"
            f"{count}{seen}: {report.message}",
        ),
        objects=(f"{report.kind}/{report.name}",),
        **_fields(env, report),
    )


def _status(env: Environment, report: Report) -> Status:
    """A failure while what it is about does not run as it should; a warning about a pod that
    runs and is ready (what was reported came after it became ready, and has not stopped it)."""
    if report.kind == "Pod":
        pod = _pod(env, report.name)
        return Status.FAIL if pod is None or pod_state(pod).waiting else Status.WARN
    return Status.FAIL
