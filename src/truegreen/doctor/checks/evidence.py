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
from truegreen.doctor.knowledge.reports import (
    POLARITIES,
    Report,
    Said,
    machines_waited_on,
    pod_state,
    warnings_of,
)
from truegreen.doctor.knowledge.training import TRAINING_KIND_NAMES, training_owner
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
_PLAIN_NAMES: Final = {
    "Namespace": "the environment's space '{name}'",
    "HorizontalPodAutoscaler": "the autoscaling rule '{name}'",
    # Volcano's, coscheduling's and KAI's PodGroup alike: the gang a job's pods start as.
    "PodGroup": "the group '{name}' that a training job starts as",
    "Service": "the network service '{name}'",
    "CronJob": "the job schedule '{name}'",
    "ConfigMap": "the settings '{name}'",
    "ServiceAccount": "the account '{name}'",
    "LocalQueue": "the queue '{name}'",
    "ClusterQueue": "the shared queue '{name}'",
    "Workload": "the queue's record '{name}' of a training job",
}
"""Plain words for the other kinds an operator meets in the cluster's reports, by kind."""


def check(env: Environment) -> list[Finding]:
    """A finding for each report no other check says, the newest first; the same words from
    the same component about several programs of one training job are one finding (a gang
    scheduler says them about every pod of the gang)."""
    if isinstance(env.warning_events, CantRead):
        return [SAY.cant_check(env, Kind.EVENT, env.warning_events)]
    unread = env.work().unread
    judged: list[Report] = []
    unjudged: list[Report] = []
    for report in env.reports():
        (unjudged if unread and _of_a_job_not_read(env, report) else judged).append(report)
    groups = _same_words(env, judged)
    findings = [_finding(env, group) for group in groups[:MOST_FINDINGS]]
    if len(groups) > MOST_FINDINGS:
        command = env.settings.kubectl.here("get", "events", "--field-selector", "type=Warning")
        last = findings[-1]
        findings[-1] = replace(
            last, details=(*last.details, f"{len(groups) - MOST_FINDINGS} more: {command}")
        )
    if unjudged:
        about = [f"{report.kind}/{report.name}" for report in unjudged]
        findings += [SAY.cant_check(env, kind, cant, *about) for kind, cant in unread]
    return [*findings, *_about_pods_not_read(env), *_conditions_not_read(env)] or [SAY.ok()]


def _conditions_not_read(env: Environment) -> list[Finding]:
    """The reads whose objects' failing conditions are evidence (knowledge/reports.py
    `POLARITIES`) that could not be made: the namespace's Deployments, a claim the environment
    mounts (one measured absent has no conditions), the machines while a pod waits on one
    (`machines_waited_on`; with the pods unread, which ones is not known either). What they
    would have shown was not looked at: unknown, never `ok`, beside whatever else stands."""
    unknown = [
        SAY.cant_check(env, kind, read)
        for kind, read in env.workloads.items()
        if kind.spec.name in POLARITIES and isinstance(read, CantRead)
    ]
    unknown += [
        SAY.cant_check(env, Kind.PERSISTENT_VOLUME_CLAIM, read, f"PersistentVolumeClaim/{name}")
        for name, read in env.claims.items()
        if isinstance(read, CantRead) and not read.is_measurement
    ]
    if isinstance(env.nodes, CantRead) and (
        not isinstance(env.pods, Listed) or machines_waited_on(env.pods.items)
    ):
        unknown.append(SAY.cant_check(env, Kind.NODE, env.nodes))
    return unknown


def _about_pods_not_read(env: Environment) -> list[Finding]:
    """With the namespace's pods not read, no Warning about a pod can be judged: whether it
    still stands (knowledge/reports.py `_history`: the pod is gone, Ready since, replaced)
    and whether another check says it (`ruled_by`, by the pod's own state) both need the pod,
    and `unruled_reports` would leave it out as history. Such a report is no finding of its
    own: `evidence.cant-read`, naming the read and the reports' pods, says so, never `ok`."""
    if not isinstance(env.pods, CantRead) or not isinstance(env.warning_events, Listed):
        return []
    about = dict.fromkeys(
        f"Pod/{report.name}"
        for report in warnings_of(env.warning_events.items)
        if report.kind == "Pod"
    )
    return [SAY.cant_check(env, Kind.POD, env.pods, *about)] if about else []


def _of_a_job_not_read(env: Environment, report: Report) -> bool:
    """Whether `report` is about a training job that was not read, or about an ended pod of
    one: it stands only if that job has not finished (knowledge/reports.py `_history`), which
    nothing read says. A pod that has not ended stands whatever its job: the Job controller
    deletes a job's active pods before it declares the job finished
    (pkg/controller/job/job_controller.go syncJob: `deleteActivePods` once `finishedCondition`
    is set, which is dropped again while any is left)."""
    work = env.work()
    if report.kind in TRAINING_KIND_NAMES:
        # Its own kind's list was read: the job is there (as a job of its own, or one of a
        # JobSet's or a RayJob's parts) or gone, and the report is judged as ever.
        unread = {kind.spec.name for kind, _ in work.unread}
        return report.kind in unread and not any(
            job.ref == f"{report.kind}/{report.name}" for job in work.jobs
        )
    pod = _pod(env, report.name) if report.kind == "Pod" else None
    return (
        pod is not None
        and o.phase(pod) in ("Succeeded", "Failed")
        and training_owner(pod) is not None
        and work.job_of(pod) is None
    )


def _same_words(env: Environment, reports: list[Report]) -> list[list[Report]]:
    """The reports, those with the same component, reason and words about programs of one
    training job together, in the order of each group's newest."""
    groups: dict[tuple[str, ...], list[Report]] = {}
    for index, report in enumerate(reports):
        job = _job_of(env, report)
        key = (
            (job, report.component, report.reason, report.message, report.said)
            if job is not None
            else (str(index),)
        )
        groups.setdefault(key, []).append(report)
    return list(groups.values())


def _job_of(env: Environment, report: Report) -> str | None:
    """The training job a report about a pod is about, if any."""
    if report.kind != "Pod":
        return None
    pod = _pod(env, report.name)
    job = env.work().job_of(pod) if pod is not None else None
    return job.name if job is not None else None


def _what(report: Report, env: Environment) -> str:
    """The object in plain words: a training job's program, a workload, a machine."""
    if report.kind == "Pod":
        pod = _pod(env, report.name)
        job = env.work().job_of(pod) if pod is not None else None
        if job is not None:
            return f"the training job '{job.name}' (its program '{report.name}')"
        workload = env.workload_of(pod) if pod is not None else None
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
    if report.kind in _PLAIN_NAMES:
        return _PLAIN_NAMES[report.kind].format(name=report.name)
    # A kind doctor has no words for is named as the cluster names it, never guessed at.
    return f"the {report.kind} '{report.name}'"


def _pod(env: Environment, name: str) -> KubeObject | None:
    if not isinstance(env.pods, Listed):
        return None
    return next((p for p in env.pods.items if o.name_of(p) == name), None)


def _command(env: Environment, report: Report) -> str:
    resource = _DESCRIBE.get(report.kind, report.kind.lower())
    if report.kind in _CLUSTER_SCOPED:
        return env.settings.kubectl.cluster("describe", resource, report.name)
    return env.settings.kubectl.here("describe", resource, report.name)


def _fields(env: Environment, group: list[Report]) -> Mapping[str, str]:
    report = group[0]
    return {
        "what": _what(report, env) if len(group) == 1 else _programs(env, group),
        "component": f"“{report.component}”",
        "reason": report.reason,
        "message": report.message or "(no message)",
        "command": _command(env, report),
    }


SHOWN_NAMES: Final = 3
"""A group's programs named in its headline; the rest are counted."""


def _programs(env: Environment, group: list[Report]) -> str:
    """`the training job 'x' (its programs 'a', 'b', 'c' and 2 more)`."""
    pod = _pod(env, group[0].name)
    job = env.work().job_of(pod) if pod is not None else None
    names = [f"'{r.name}'" for r in group[:SHOWN_NAMES]]
    rest = len(group) - len(names)
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if rest == 0 else ", ".join(names)
    more = f" and {rest} more" if rest else ""
    return f"the training job '{job.name if job else ''}' (its programs {listed}{more})"


def _lines(env: Environment, report: Report) -> list[str]:
    """One line per message of the report (the one its headline quotes first), and how many
    more messages of its reason there were."""
    lines = [_line(said) for said in (report, *report.also)]
    if report.untold:
        lines.append(
            f"{report.untold} more messages of {report.reason} on {report.kind}/{report.name}: "
            f"{_command(env, report)}"
        )
    return lines


def _line(report: Report) -> str:
    said = "Event" if report.said is Said.EVENT else "condition"
    count = f", {report.count} times" if report.count > 1 else ""
    seen = f", last {report.at.isoformat()}" if report.at is not None else ""
    return (
        f"{said} {report.reason} on {report.kind}/{report.name} from {report.component}"
        f"{count}{seen}: {report.message}"
    )


def _finding(env: Environment, group: list[Report]) -> Finding:
    statuses = {_status(env, report) for report in group}
    return SAY.finding(
        Status.FAIL if Status.FAIL in statuses else Status.WARN,
        Basis.MEASURED,
        REPORTED,
        details=tuple(line for report in group for line in _lines(env, report)),
        objects=tuple(f"{report.kind}/{report.name}" for report in group),
        **_fields(env, group),
    )


def _status(env: Environment, report: Report) -> Status:
    """A failure while what it is about does not run as it should; a warning about a pod that
    runs and is ready (what was reported came after it became ready, and has not stopped it)."""
    if report.kind == "Pod":
        pod = _pod(env, report.name)
        return Status.FAIL if pod is None or pod_state(pod).waiting else Status.WARN
    return Status.FAIL
