"""The training job as the capacity check places it: its pod sets as the API server would store
them (with the tolerations it adds), what is still to place of a running job, its priority,
and its size in plain words.
"""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Created, Kind, KubeObject, Listed
from truegreen.doctor.checks.capacity.placement import Placement
from truegreen.doctor.checks.capacity.preemption import (
    job_level,
)
from truegreen.doctor.checks.capacity.words import (
    BAD_JOB_SIZE,
    JOB_UNSHAPED,
    SAY,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.evidence import scheduler_verdict
from truegreen.doctor.knowledge.fit import (
    format_resources,
    pod_requests,
)
from truegreen.doctor.knowledge.reports import pods_with_evidence
from truegreen.doctor.knowledge.stored_pod import (
    ExtendedTolerations,
    Knowledge,
    PriorityLevel,
    StoredPod,
    extended_tolerations,
    job_priority,
    stated_priority,
    stored_spec,
)
from truegreen.doctor.knowledge.training import (
    JobSummary,
    PodSet,
    PodSetSummary,
    TrainingJob,
    TrainingWork,
    Unshaped,
    pod_set_of,
    training_owner,
)
from truegreen.doctor.knowledge.usage import ClusterUsage
from truegreen.quantity import PODS, QuantityError, Resources, format_amount


def training_pods(env: Environment) -> Sequence[KubeObject]:
    """This namespace's pods, whole when the namespace's list was read, else as the capacity
    fold kept them."""
    if isinstance(env.pods, Listed):
        return env.pods.items
    usage = env.cluster_usage
    return usage.pods_here if isinstance(usage, ClusterUsage) else ()


def stuck_job_pods(env: Environment, pods: Sequence[KubeObject]) -> list[KubeObject]:
    """Training job pods of this namespace still unscheduled after the grace period, of which
    no component has said why: the scheduler's `Unschedulable` is `_with_evidence`'s; any other
    report about the pod (kube-scheduler's own `SchedulerError`, another scheduler's refusal)
    is the evidence check's, and a wait inferred beside it would speak over it; a wait its gang
    scheduler accounts for is the queue check's (checks/gang_waits.py)."""
    reported = pods_with_evidence(env.reports()) | _gang_waits(env)
    stuck = []
    for pod in pods:
        if not training_owner(pod) or o.node_name(pod) or scheduler_verdict(pod) is not None:
            continue
        if o.name_of(pod) in reported:
            continue
        if o.phase(pod) != "Pending":
            continue
        created = o.created_at(pod)
        if created is not None and env.now - created > env.settings.pending_grace:
            stuck.append(pod)
    return stuck


def _gang_waits(env: Environment) -> frozenset[str]:
    """The judged job's pods whose wait its gang scheduler accounts for (checks/gang_waits.py);
    none where no gang scheduler places the job."""
    if env.gangs is None:
        return frozenset()
    # Imported on use: only a job a gang scheduler places reads its groups (doctor's start-up
    # on a small namespace, tests/e2e/test_imports.py).
    from truegreen.doctor.checks.gang_waits import explained_waits

    return explained_waits(env)


JobPodsOnMachine = tuple[Resources, int, list[str], list[str]]
"""What training job pods hold on one machine: requests, count, pod names, job names."""


class Group(Struct, frozen=True):
    """Pods of one pod set still to be placed, with the spec their placement rules come from."""

    name: str
    count: int
    requests: Resources
    spec: Mapping[str, Any]


class Shape(Struct, frozen=True):
    """What the check places: the judged job's pods that are not running yet."""

    groups: tuple[Group, ...]
    source: str
    """Where the sizes came from: `--job-requests`, `the template of Job/run-7`."""
    job: TrainingJob | None
    own_pods: frozenset[str]
    """Pods of the judged job already on a machine: when it is waiting for the rest of its
    own pods, those are not room it will get back."""
    all_bound: bool = False
    """The job is under way with every pod on a machine: the groups are a next run's, none of
    them waiting for a machine or a kubelet."""


def _trial_spec(env: Environment, job: TrainingJob | None, pod_set: PodSet) -> Mapping[str, Any]:
    """The server's own stored pod when the trial start was made of this pod set and admitted
    (`--admission-dry-run`: the measurement); else an empty mapping."""
    trial = env.trial
    if isinstance(trial, Created) and job is not None and pod_set is job.primary:
        return o.pod_spec(trial.obj)
    return {}


def _stored(
    env: Environment, job: TrainingJob | None, pod_set: PodSet, tolerate: bool
) -> Mapping[str, Any]:
    """The pod spec the API server stores for a pod set (doctor/knowledge/stored_pod.py): the trial
    start's answer for the set it was made of, else defaulting, the LimitRange defaults, the
    RuntimeClass's overhead and scheduling and, when `tolerate`, the extended resource
    tolerations."""
    measured = _trial_spec(env, job, pod_set)
    if measured:
        return measured
    limit_ranges = env.limit_ranges.items if isinstance(env.limit_ranges, Listed) else ()
    return stored_spec(
        pod_set.spec,
        limit_ranges,
        extended_tolerations=tolerate,
        runtime_class=env.runtime_class(pod_set.spec),
    )


def added_tolerations(env: Environment) -> ExtendedTolerations:
    """Whether the cluster adds extended resource tolerations to the judged job's pods."""
    job = env.judged_job()
    if job is None:
        return ExtendedTolerations(Knowledge.NOT_ASKED)
    nodes = env.nodes.items if isinstance(env.nodes, Listed) else ()
    trial = _trial_spec(env, job, job.primary)
    return extended_tolerations(
        [_stored(env, job, s, tolerate=False) for s in job.pod_sets if not _trial_spec(env, job, s)]
        + ([trial] if trial else []),
        nodes,
        (job.primary.spec, trial) if trial else None,
        _stored_training_pods(env),
    )


def _stored_training_pods(env: Environment) -> list[StoredPod]:
    """The namespace's pods of its training jobs as the API server stored them, each beside its
    pod set's template, newest first: the server's own answer on whether it adds extended
    resource tolerations (the plugin's settings are not readable through the API)."""
    work = env.work()
    found: list[tuple[datetime, StoredPod]] = []
    for pod in training_pods(env):
        job = work.job_of(pod)
        if job is None:
            continue
        name = pod_set_of(job, pod)
        pod_set = next((s for s in job.pod_sets if s.name == name), None)
        if pod_set is None:
            continue
        created = o.created_at(pod) or datetime.min.replace(tzinfo=UTC)
        found.append((created, StoredPod(o.name_of(pod), pod_set.spec, o.pod_spec(pod))))
    found.sort(key=lambda pair: pair[0], reverse=True)
    return [pod for _, pod in found]


def judged_priority(env: Environment) -> PriorityLevel | CantRead:
    """The judged job's priority as the Priority admission plugin resolves it: the trial
    start's answer when there is one (measured), else from the PriorityClasses when they were
    read (else every pod is of priority 0 but the system's:
    doctor/checks/capacity/preemption.py)."""
    job = env.judged_job()
    sets = job.pod_sets if job is not None and job.pod_sets else (PodSet("worker", 1, {}),)
    measured = stated_priority(_trial_spec(env, job, sets[0])) if job is not None else None
    if measured is not None:
        return measured
    classes = env.priority_classes
    if isinstance(classes, CantRead):
        return classes
    items = classes.items if isinstance(classes, Listed) else ()
    return job_level(job_priority(s.spec, items) for s in sets)


def _still_to_place(
    job: TrainingJob, usage: ClusterUsage, work: TrainingWork, wanted: Mapping[str, int]
) -> dict[str, int]:
    """Per pod set, the pods of a job under way that have no machine yet (or do not exist):
    those `wanted` less those bound."""
    bound: dict[str, int] = {}
    for pod in usage.pods_here:
        if o.node_name(pod) and work.job_of(pod) is job:
            name = pod_set_of(job, pod)
            bound[name] = bound.get(name, 0) + 1
    return {name: max(count - bound.get(name, 0), 0) for name, count in wanted.items()}


def job_shape(env: Environment, usage: ClusterUsage, tolerate: bool) -> Shape | Finding | None:
    """The pods to place and where their sizes came from; a finding when they can't be known;
    None when no training job (and no --job-requests) says what to place."""
    work = env.work()
    job = work.judged
    given = env.settings.job_requests
    # A list of training jobs not read could hold the newest job: the judged one is not known.
    if work.judged_unknown:
        kind, cant = work.judged_unknown[0]
        return SAY.cant_check(env, kind, cant)
    unshaped = work.judged_unshaped
    if unshaped is not None:
        return _unshaped(env, unshaped)
    if job is None and given is None:
        return None
    if isinstance(env.limit_ranges, CantRead) and given is None:
        return SAY.cant_check(env, Kind.LIMIT_RANGE, env.limit_ranges)
    if job is None:
        assert given is not None
        return Shape((Group("worker", 1, given, {}),), "--job-requests", None, frozenset())
    if not job.pods and given is None:
        return None  # a job that asks for no pods places nothing (the workloads check says so)
    under_way = not job.finished and job is not work.planned
    wanted = job.wanted() if under_way else {s.name: s.count for s in job.pod_sets}
    missing = _still_to_place(job, usage, work, wanted) if under_way else {}
    fresh = not under_way or not any(missing.values())
    counts = wanted if fresh else missing
    stored = {s.name: _stored(env, job, s, tolerate) for s in job.pod_sets}
    try:
        groups = tuple(
            Group(
                s.name,
                counts[s.name],
                given if given is not None else pod_requests(stored[s.name]),
                stored[s.name],
            )
            for s in job.pod_sets
            if counts[s.name]
        )
    except QuantityError as error:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            BAD_JOB_SIZE,
            details=(f"{job.ref}: {error}",),
            objects=(job.ref,),
            problem=str(error),
        )
    own = frozenset(
        o.name_of(p)
        for p in usage.pods_here
        if not fresh and job.together and o.node_name(p) and work.job_of(p) is job
    )
    source = "--job-requests" if given is not None else f"the template of {job.ref}"
    return Shape(groups, source, job, own, under_way and fresh)


def job_summary(env: Environment) -> JobSummary | None:
    """The judged training job, for the report: its kind, name and pod sets with each pod's
    requests as the capacity check judged them (`--job-requests`' when given, as `job_shape`
    places them); None when there is none, or its sizes cannot be read."""
    job = env.judged_job()
    if job is None:
        return None
    given = env.settings.job_requests
    if given is not None:
        sets = tuple(PodSetSummary(s.name, s.count, given.as_dict()) for s in job.pod_sets)
        return JobSummary(job.kind.spec.name, job.name, "job-requests", job.together, sets)
    try:
        tolerate = added_tolerations(env).added
        sets = tuple(
            PodSetSummary(s.name, s.count, pod_requests(_stored(env, job, s, tolerate)).as_dict())
            for s in job.pod_sets
        )
    except QuantityError:
        return None
    source = "job-file" if job is env.work().planned else "newest"
    return JobSummary(job.kind.spec.name, job.name, source, job.together, sets)


def _unshaped(env: Environment, job: Unshaped) -> Finding:
    """The judged job's pod sets could not be worked out: its runtime is missing (measured)
    or could not be read (unknown)."""
    if job.cant is not None:
        return SAY.cant_check(env, Kind.CLUSTER_TRAINING_RUNTIME, job.cant, job.ref)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        JOB_UNSHAPED,
        details=(f"{job.ref}: {job.why}",),
        objects=(job.ref,),
        job=f"'{job.name}'",
        why=job.why,
        command=env.settings.kubectl.cluster(
            "get", "clustertrainingruntimes,trainingruntimes", "-A"
        ),
    )


def size_words(groups: Sequence[Group]) -> str:
    """`4 CPUs, 16 GiB memory` for one program; `4 programs of 8 nvidia.com/gpu each`."""
    counts: dict[Resources, int] = {}
    for group in groups:
        counts[group.requests] = counts.get(group.requests, 0) + group.count
    if len(counts) == 1 and sum(counts.values()) == 1:
        return format_resources(groups[0].requests)
    parts = [
        format_resources(requests)
        if count == 1
        else f"{count} programs of {format_resources(requests)} each"
        for requests, count in counts.items()
    ]
    return joined_words(parts)


def placement_words(placement: Placement, groups: Sequence[Group], empty: bool) -> str:
    """How close the job came: `best machine gpu-1 is 1 nvidia.com/gpu short` for one program;
    `3 of its 4 programs fit; the next needs 8 nvidia.com/gpu and the most free on one
    machine is 4 (gpu-d)` for more."""
    when = " even when empty" if empty else ""
    unplaced = placement.unplaced
    if unplaced is None:
        return "every program fits"
    if unplaced.rule:
        if placement.wanted == 1:
            return f"it {unplaced.rule}"
        fit = f"{placement.placed} of its {placement.wanted} programs fit{when}"
        return f"{fit}; the next {unplaced.rule}"
    if placement.wanted == 1 or not unplaced.missing:
        if not unplaced.machine:
            return "no machine"
        shortfall = ", ".join(str(s) for s in unplaced.missing)
        return f"best machine {unplaced.machine} is {shortfall}{when}"
    short = next((s for s in unplaced.missing if s.resource != PODS), unplaced.missing[0])
    if short.resource == PODS:
        most = f"{unplaced.machine} is at its limit of running programs"
    else:
        machine, free = unplaced.most_free
        most = f"the most free on one machine is {format_amount(short.resource, free)} ({machine})"
    need = format_amount(short.resource, unplaced.requests.get(short.resource))
    return (
        f"{placement.placed} of its {placement.wanted} programs fit{when}; the next needs "
        f"{need} and {most}"
        if short.resource != PODS
        else f"{placement.placed} of its {placement.wanted} programs fit{when}; {most}"
    )


def placed_lines(placement: Placement) -> list[str]:
    return [f"{group} x{count} on {machine}" for group, machine, count in placement.on]


def pod_set_line(job: TrainingJob) -> str:
    """`PyTorchJob/run-7: Master x1, Worker x3, all at once`."""
    sets = ", ".join(f"{s.name} x{s.count}" for s in job.pod_sets)
    together = "all at once" if job.together else "each as room allows"
    return f"{job.ref}: {sets or 'no pods'}, {together}"


def priority_line(level: PriorityLevel | CantRead) -> str:
    """`priority 1000 (class 'training-high'), may preempt lower priorities`."""
    if isinstance(level, CantRead):
        return f"priority not known: {level.reason}"
    may = "may preempt lower priorities" if level.preempts else "never preempts (preemptionPolicy)"
    return f"{level.words}, {may}"


def joined_words(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
