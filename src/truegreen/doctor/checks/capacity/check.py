"""Capacity: can a training job of the given size start now, by kube-scheduler's fit rules?"""

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType
from typing import Any

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Created, Kind, KubeObject, Listed, ReadFailure
from truegreen.doctor.checks.base import format_age
from truegreen.doctor.checks.capacity.autoscaling import (
    STATUS_CONFIG_MAP,
    AutoscalerWord,
    Word,
    autoscaler_health,
    autoscaler_words,
    plain_adding,
    plain_cannot_add,
)
from truegreen.doctor.checks.capacity.filters.rules import Rules, node_exclusion
from truegreen.doctor.checks.capacity.placement import Placement, PodGroup, place
from truegreen.doctor.checks.capacity.preemption import (
    after_preemption,
    job_level,
    victims,
    with_nominated,
)
from truegreen.doctor.checks.capacity.rule_findings import (
    blocked_by_rules,
    job_rules,
    no_machine_left,
    unchecked,
    with_devices,
    with_unchecked,
)
from truegreen.doctor.checks.capacity.scheduler_reasons import first_todo, plain_reasons
from truegreen.doctor.checks.capacity.words import (
    AUTOSCALER_UNHEALTHY,
    BAD_JOB_SIZE,
    BLOCKED_BY_OTHER_WORK,
    FITS,
    FREE_ONLY,
    GPU_SOFTWARE_DOWN,
    GPUS_UNHEALTHY,
    HELD_BY_RUNNING_JOB,
    JOB_STUCK,
    JOB_UNSHAPED,
    MACHINE_COMING,
    MACHINE_KEPT_OUT,
    NO_ELIGIBLE_MACHINE,
    NO_MACHINE_CAN_BE_ADDED,
    NO_SUCH_GPU,
    PARTLY_FITS,
    PREEMPTS,
    RESERVATION_UNKNOWN,
    SAY,
    TOO_LARGE,
    UNSCHEDULABLE,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.evidence import scheduler_verdict
from truegreen.doctor.knowledge.fit import (
    MachineRoom,
    Shortfall,
    format_resources,
    machine_room,
    pod_requests,
)
from truegreen.doctor.knowledge.gpu_supply import (
    GpuProblem,
    Supply,
    gpu_problems,
    gpu_software_pods,
    missing_gpu_resources,
    offered_gpu_resources,
    pod_state,
)
from truegreen.doctor.knowledge.last_answer import LastAnswer
from truegreen.doctor.knowledge.stored_pod import (
    ExtendedTolerations,
    Knowledge,
    PriorityLevel,
    extended_tolerations,
    job_priority,
    kept_for,
    stated_priority,
    stored_spec,
)
from truegreen.doctor.knowledge.taints import system_taint
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
from truegreen.doctor.knowledge.usage import ClusterUsage, Holder, MachineUsage
from truegreen.plain_words import sentence
from truegreen.quantity import PODS, QuantityError, Resources, format_amount

CHECK = CheckId.CAPACITY
_TAINT = re.compile(r"^taint ([^=]+)=")
"""A reserved machine's reason from `node_exclusion`: `taint KEY=VALUE:EFFECT not tolerated`."""


def _stuck_job_pods(env: Environment, pods: Sequence[KubeObject]) -> list[KubeObject]:
    """Training job pods of this namespace still unscheduled after the grace period, of which
    the scheduler has not said why (what it said is evidence, `_with_evidence`)."""
    stuck = []
    for pod in pods:
        if not training_owner(pod) or o.node_name(pod) or scheduler_verdict(pod) is not None:
            continue
        if o.phase(pod) != "Pending":
            continue
        created = o.created_at(pod)
        if created is not None and env.now - created > env.settings.pending_grace:
            stuck.append(pod)
    return stuck


_JobPodsOnMachine = tuple[Resources, int, list[str], list[str]]
"""What training job pods hold on one machine: requests, count, pod names, job names."""


class _Group(Struct, frozen=True):
    """Pods of one pod set still to be placed, with the spec their placement rules come from."""

    name: str
    count: int
    requests: Resources
    spec: Mapping[str, Any]


class _Shape(Struct, frozen=True):
    """What the check places: the judged job's pods that are not running yet."""

    groups: tuple[_Group, ...]
    source: str
    """Where the sizes came from: `--job-requests`, `the template of Job/run-7`."""
    job: TrainingJob | None
    own_pods: frozenset[str]
    """Pods of the judged job already on a machine: when it is waiting for the rest of its
    own pods, those are not room it will get back."""


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
    start's answer for the set it was made of, else defaulting, the LimitRange defaults and,
    when `tolerate`, the extended resource tolerations."""
    measured = _trial_spec(env, job, pod_set)
    if measured:
        return measured
    limit_ranges = env.limit_ranges.items if isinstance(env.limit_ranges, Listed) else ()
    return stored_spec(pod_set.spec, limit_ranges, extended_tolerations=tolerate)


def _tolerations(env: Environment) -> ExtendedTolerations:
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
    )


def _job_priority(env: Environment) -> PriorityLevel | CantRead:
    """The judged job's priority as the Priority admission plugin resolves it: the trial
    start's answer when there is one (measured), else from the PriorityClasses when they were
    read (else every pod is of priority 0 but the system's:
    doctor/checks/capacity/preemption.py)."""
    job = env.judged_job()
    sets = job.pod_sets if job is not None else (PodSet("worker", 1, {}),)
    measured = stated_priority(_trial_spec(env, job, sets[0])) if job is not None else None
    if measured is not None:
        return measured
    classes = env.priority_classes
    if isinstance(classes, CantRead):
        return classes
    items = classes.items if isinstance(classes, Listed) else ()
    return job_level(job_priority(s.spec, items) for s in sets)


def _still_to_place(job: TrainingJob, usage: ClusterUsage, work: TrainingWork) -> dict[str, int]:
    """Per pod set, the pods of a job under way that have no machine yet (or do not exist)."""
    bound: dict[str, int] = {}
    for pod in usage.pods_here:
        if o.node_name(pod) and work.job_of(pod) is job:
            name = pod_set_of(job, pod)
            bound[name] = bound.get(name, 0) + 1
    return {s.name: max(s.count - bound.get(s.name, 0), 0) for s in job.pod_sets}


def _job_shape(env: Environment, usage: ClusterUsage, tolerate: bool) -> _Shape | Finding | None:
    """The pods to place and where their sizes came from; a finding when they can't be known;
    None when no training job (and no --job-requests) says what to place."""
    work = env.work()
    job = work.judged
    given = env.settings.job_requests
    # A list of training jobs not read could hold the newest job: the judged one is not known.
    if work.unread and work.planned is None:
        kind, cant = work.unread[0]
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
        return _Shape((_Group("worker", 1, given, {}),), "--job-requests", None, frozenset())
    under_way = not job.finished and job is not work.planned
    missing = _still_to_place(job, usage, work) if under_way else {}
    fresh = not under_way or not any(missing.values())
    counts = {s.name: s.count if fresh else missing[s.name] for s in job.pod_sets}
    stored = {s.name: _stored(env, job, s, tolerate) for s in job.pod_sets}
    try:
        groups = tuple(
            _Group(
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
    return _Shape(groups, source, job, own)


def job_summary(env: Environment) -> JobSummary | None:
    """The judged training job, for the report: its kind, name and pod sets with each pod's
    requests (None when there is none, or its sizes cannot be read)."""
    job = env.judged_job()
    if job is None:
        return None
    try:
        tolerate = _tolerations(env).added
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


def _size_words(groups: Sequence[_Group]) -> str:
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
    return _and(parts)


def _placement_words(placement: Placement, groups: Sequence[_Group], empty: bool) -> str:
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


def _placed_lines(placement: Placement) -> list[str]:
    return [f"{group} x{count} on {machine}" for group, machine, count in placement.on]


class _Judged(Struct, frozen=True):
    """What the verdict steps share: the pods to place, where they may go, the room now."""

    env: Environment
    usage: ClusterUsage
    shape: _Shape
    rooms: Mapping[str, MachineRoom]
    job_pods: Mapping[str, _JobPodsOnMachine]
    pod_groups: tuple[PodGroup, ...]
    now: Placement
    details: tuple[str, ...]
    stuck: tuple[KubeObject, ...]
    stuck_lines: tuple[str, ...]
    objects: tuple[str, ...]
    excluded: Mapping[str, tuple[str, ...]]
    """Per reason, the machines some pod set may not use."""
    priority: PriorityLevel | CantRead = PriorityLevel(0, "", True)
    rules: Rules = Rules()
    """The scheduler's filters' rules for the job (doctor/checks/capacity/filters/rules.py)."""
    plain_groups: tuple[PodGroup, ...] = ()
    """The same pods placed by room alone: the machines before the filters took theirs."""
    unknown: tuple[Finding, ...] = ()
    """The filters' rules that could not be evaluated."""

    @property
    def size(self) -> str:
        return _size_words(self.shape.groups)


def check(env: Environment) -> list[Finding]:
    """Findings about whether a training job fits on the cluster's machines now: what the
    scheduler already said about the job's pods, then what placing them shows."""
    return _with_evidence(env, _arithmetic(env))


def _arithmetic(env: Environment) -> list[Finding]:
    """Whether the job fits, by placing its pods as stored on the machines' free room.

    Where the cluster may add the job's extended resource tolerations without saying so
    (ExtendedResourceToleration inferred from the provider, or not known) and a machine is kept
    for those resources, the job is judged both ways and the answers settled (`_settled`);
    with no such machine the tolerations change nothing."""
    tolerations = _tolerations(env)
    if tolerations.knowledge in (Knowledge.INFERRED_ADDS, Knowledge.UNKNOWN):
        nodes = env.nodes.items if isinstance(env.nodes, Listed) else ()
        if not _kept_for(nodes, tolerations.resources):
            return _judge(env, tolerations.added)
        return _settled(env, tolerations, _judge(env, False), _judge(env, True))
    found = _judge(env, tolerations.added)
    return _noted(found, tolerations.signal) if tolerations.signal else found


def _judge(env: Environment, tolerate: bool) -> list[Finding]:
    """The verdict steps in order, on the pods as stored (`tolerate`: with the extended
    resource tolerations the cluster adds)."""
    judged = _prepare(env, tolerate)
    if isinstance(judged, list):
        return judged
    return with_unchecked(_verdict(judged), judged.unknown)


def _verdict(judged: _Judged) -> list[Finding]:
    """The verdict steps in order: the first that explains the placement names it."""
    env = judged.env
    if judged.now.whole:
        fits = _fits(judged)
        return [*fits, *_gpu_warnings(env, fits[0])]
    steps = (
        _waits_for_running_jobs,
        _preempts,
        _partly_fits,
        _gpus_unusable,
        _blocked_by_rules,
        _blocked_by_other_work,
        _kept_out,
        _no_such_gpu,
    )
    for step in steps:
        found = step(judged)
        if found is not None:
            return [found, *_gpu_warnings(env, found)]
    verdict = _too_large(judged)
    return [verdict, *_gpu_warnings(env, verdict)]


_EXPLAINS_A_WAIT_FOR_ROOM = frozenset(
    {
        HELD_BY_RUNNING_JOB,
        PARTLY_FITS,
        BLOCKED_BY_OTHER_WORK,
        TOO_LARGE,
        MACHINE_KEPT_OUT,
        NO_ELIGIBLE_MACHINE,
    }
)
"""What placing the pods can say that explains a scheduler that found no room."""


def _training_pods(env: Environment) -> Sequence[KubeObject]:
    """This namespace's pods, whole when the namespace's list was read, else as the capacity
    fold kept them."""
    if isinstance(env.pods, Listed):
        return env.pods.items
    usage = env.cluster_usage
    return usage.pods_here if isinstance(usage, ClusterUsage) else ()


def _with_evidence(env: Environment, findings: list[Finding]) -> list[Finding]:
    """The scheduler's own verdict on the training pods it could not place is measured and wins:
    a reason other than room is a failure whatever placing shows; a lack of room alone goes with
    placing's explanation (a wait, other work, the job's size) and adds its words to it. What an
    autoscaler said about those pods comes first: a machine on its way is a measured wait, and
    one it cannot add is why they will not run."""
    verdicts = [
        (pod, verdict)
        for pod in o.remaining(_training_pods(env))
        if training_owner(pod) and (verdict := scheduler_verdict(pod)) is not None
    ]
    if not verdicts:
        return findings
    lines = [f"scheduler on {v.pod}: {v.message}" for _, v in verdicts]
    words = _autoscaler_words(env, [v.pod for _, v in verdicts])
    adding = [w for w in words if w.word is Word.ADDING]
    health = _autoscaler_health(env)
    if adding:
        return [
            _machine_coming(env, adding, lines),
            *(f for f in findings if f.status is not Status.OK and f.code not in _ROOM_CODES),
        ]
    cannot = [w for w in words if w.word is Word.CANNOT_ADD]
    lines += [f"{w.source} on {w.pod}: {w.message}" for w in cannot] + health[1]
    if all(v.only_room for _, v in verdicts):
        for index, found in enumerate(findings):
            explained_by_wait = found.code == HELD_BY_RUNNING_JOB or not cannot
            if found.code in _EXPLAINS_A_WAIT_FOR_ROOM and explained_by_wait:
                explained = replace(found, details=(*found.details, *lines))
                return [*findings[:index], explained, *findings[index + 1 :], *health[0]]
    pod, newest = max(verdicts, key=lambda pv: (str(o.created_at(pv[0]) or ""), pv[1].pod))
    job = training_owner(pod)
    of_job = [v for p, v in verdicts if training_owner(p) == job]
    count = len(of_job)
    what = f"{count} program{'s' if count != 1 else ''} of the training job '{job}'"
    command = env.settings.kubectl.here("describe", "pod", newest.pod)
    measured = (
        SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            NO_MACHINE_CAN_BE_ADDED,
            details=lines,
            objects=[f"Pod/{v.pod}" for _, v in verdicts],
            what=what,
            why=plain_cannot_add(cannot[0].message),
            command=command,
        )
        if cannot
        else SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            UNSCHEDULABLE,
            details=lines,
            objects=[f"Pod/{v.pod}" for _, v in verdicts],
            what=what,
            reasons=plain_reasons(newest),
            todo=first_todo(of_job),
            command=command,
        )
    )
    return [measured, *(f for f in findings if f.status is not Status.OK), *health[0]]


_ROOM_CODES = _EXPLAINS_A_WAIT_FOR_ROOM | {UNSCHEDULABLE}
"""What a machine on its way answers: the room it brings is the room these lack."""


def _autoscaler_words(env: Environment, pods: Sequence[str]) -> list[AutoscalerWord]:
    """What the autoscalers said about these pods, newest per pod (their Events' reads that
    failed are left out: the scheduler's own verdict still stands)."""
    found: dict[str, AutoscalerWord] = {}
    for read in env.autoscaler_events.values():
        if isinstance(read, Listed):
            for pod, word in autoscaler_words(read.items, pods, env.now).items():
                kept = found.get(pod)
                if kept is None or (word.at is not None and (kept.at is None or word.at > kept.at)):
                    found[pod] = word
    return sorted(found.values(), key=lambda w: w.pod)


def _autoscaler_health(env: Environment) -> tuple[list[Finding], list[str]]:
    """cluster-autoscaler's own health, when it says it is unhealthy: a finding; otherwise a
    line for the details (or nothing where there is no cluster-autoscaler)."""
    read = env.autoscaler_status
    if read is None or (isinstance(read, CantRead) and read.is_measurement):
        return [], []
    if isinstance(read, CantRead):
        return [], [f"the autoscaler's status could not be read: {read.reason}"]
    health = autoscaler_health(read.obj)
    if health.healthy is not False:
        return [], [health.detail]
    unhealthy = SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        AUTOSCALER_UNHEALTHY,
        details=(health.detail,),
        objects=(f"ConfigMap/{STATUS_CONFIG_MAP[0]}/{STATUS_CONFIG_MAP[1]}",),
        command=env.settings.kubectl.cluster(
            "-n", STATUS_CONFIG_MAP[0], "describe", "configmap", STATUS_CONFIG_MAP[1]
        ),
    )
    return [unhealthy], [health.detail]


def _machine_coming(
    env: Environment, adding: Sequence[AutoscalerWord], lines: list[str]
) -> Finding:
    first = adding[0]
    return SAY.finding(
        Status.WARN,
        Basis.MEASURED,
        MACHINE_COMING,
        details=[*lines, *(f"{w.source} on {w.pod}: {w.message}" for w in adding)],
        objects=[f"Pod/{w.pod}" for w in adding],
        job=f"'{_job_of_pod(env, first.pod)}'",
        how=plain_adding(first),
    )


def _job_of_pod(env: Environment, pod_name: str) -> str:
    """The training job of the namespace's pod named `pod_name`."""
    for pod in _training_pods(env):
        if o.name_of(pod) == pod_name:
            return training_owner(pod) or pod_name
    return pod_name


def _noted(findings: list[Finding], line: str, basis: Basis | None = None) -> list[Finding]:
    """The findings with `line` added to the first one's details (and its basis changed)."""
    if not findings:
        return findings
    first = findings[0]
    changed = replace(first, details=(*first.details, line))
    if basis is not None and first.status is not Status.UNKNOWN:
        changed = replace(changed, basis=basis)
    return [changed, *findings[1:]]


def _settled(
    env: Environment,
    tolerations: ExtendedTolerations,
    without: list[Finding],
    with_them: list[Finding],
) -> list[Finding]:
    """One answer from the job judged without and with the extended resource tolerations the
    cluster may add: the same either way, it stands; inferred from the provider, the answer
    with them, inferred; not known, a failure either way stands (with what was assumed), and
    any other pair is an honest unknown: which one is true depends on the cluster."""
    outcome = [(f.status, f.code) for f in without]
    if outcome == [(f.status, f.code) for f in with_them]:
        return without
    if tolerations.knowledge is Knowledge.INFERRED_ADDS:
        return _noted(with_them, tolerations.signal, Basis.INFERRED)
    fails = [any(f.status is Status.FAIL for f in found) for found in (without, with_them)]
    if all(fails):
        return _noted(with_them, f"{tolerations.signal}; assumed it does (fails either way)")
    reserved = _kept_for(
        env.nodes.items if isinstance(env.nodes, Listed) else (), tolerations.resources
    )
    resources = _and([f"'{r}'" for r in tolerations.resources])
    stated = ", ".join(
        f"{{key: {r}, operator: Exists, effect: NoSchedule}}" for r in tolerations.resources
    )
    unknown = SAY.finding(
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        RESERVATION_UNKNOWN,
        details=[
            tolerations.signal,
            *(f"if it does: {f.code} ({f.status})" for f in with_them),
            *(f"if it does not: {f.code} ({f.status})" for f in without),
            *with_them[0].details,
        ],
        objects=[f"Node/{name}" for name in reserved],
        resources=resources,
        machines=_and(reserved) if reserved else "the machines",
        toleration=f"`tolerations: [{stated}]`",
    )
    return [replace(unknown, why=f"whether the job may use the machines kept for {resources}")]


def _blocked_by_rules(judged: _Judged) -> Finding | None:
    """Room alone would do; the scheduler's filters' rules do not let it."""
    return blocked_by_rules(
        judged.pod_groups,
        judged.plain_groups,
        judged.rooms,
        judged.now,
        judged.rules,
        lambda placement, empty: _placement_words(placement, judged.shape.groups, empty=empty),
        judged.size,
        [*judged.details, *judged.stuck_lines],
        judged.objects,
    )


def _prepare(env: Environment, tolerate: bool) -> _Judged | list[Finding]:
    """The placement now, and everything a verdict names; or the findings that end the check
    before any placement (a read missing, no machine, no job, no machine the job may use)."""
    if isinstance(env.nodes, CantRead):
        return [SAY.cant_check(env, Kind.NODE, env.nodes)]
    usage = env.cluster_usage
    if isinstance(usage, CantRead):
        return [SAY.cant_check(env, Kind.POD, usage, everywhere=True)]
    shape = _job_shape(env, usage, tolerate)
    if isinstance(shape, Finding):
        return [shape]
    if usage.invalid:
        return [_invalid_amount(env, usage.invalid)]
    level = _job_priority(env)
    try:
        rooms, job_pods = _machine_rooms(env.nodes.items, usage, shape, level)
    except QuantityError as error:  # only a hand-edited snapshot gets here
        return [_invalid_amount(env, str(error))]
    if not env.nodes.items:
        return [
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                NO_ELIGIBLE_MACHINE,
                details=("the cluster lists no nodes",),
                why="there are no machines",
                todo="Add a machine to the cluster",
            )
        ]
    if shape is None:
        free_lines = [
            f"{room.name}: free {format_resources(room.allocatable - room.requested)}"
            for room in rooms.values()
        ]
        return [SAY.finding(Status.OK, Basis.MEASURED, FREE_ONLY, details=free_lines)]
    allowed, excluded = _eligibility(env.nodes.items, shape.groups)
    details = [f"job size {_size_words(shape.groups)} (from {shape.source})"]
    if shape.job is not None:
        details.append(_pod_set_line(shape.job))
    if isinstance(level, CantRead) or level.value or level.class_name:
        details.append(_priority_line(level))
    details += [f"excluded ({reason}): {', '.join(names)}" for reason, names in excluded.items()]
    stuck = _stuck_job_pods(env, usage.pods_here)
    stuck_lines = [
        f"pod {o.name_of(p)} of job {training_owner(p)} unscheduled for "
        f"{format_age(env.now - (o.created_at(p) or env.now))}"
        for p in stuck
    ]
    if any(g.name not in allowed for g in shape.groups):
        return [
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                NO_ELIGIBLE_MACHINE,
                details=details + stuck_lines,
                why=_exclusion_words(excluded),
                todo=_exclusion_remedy(env, excluded),
            )
        ]
    rules = job_rules(env, shape.job, [(g.name, g.spec) for g in shape.groups])
    narrowed = {g.name: rules.allowed(g.name, allowed[g.name]) for g in shape.groups}
    if any(not machines for machines in narrowed.values()):
        theirs = (
            (_exclusion_words(excluded), _exclusion_remedy(env, excluded)) if excluded else ("", "")
        )
        return [
            no_machine_left(
                env, rules, [g for g, m in narrowed.items() if not m], details + stuck_lines, theirs
            ),
            *unchecked(env, rules),
        ]
    rooms = with_devices(rooms, rules.devices)
    pod_groups = tuple(
        PodGroup(
            g.name,
            g.count,
            g.requests + rules.devices.of(g.name),
            tuple(sorted(narrowed[g.name])),
            rules=rules.rules_of(g.name),
        )
        for g in shape.groups
    )
    plain = tuple(
        PodGroup(g.name, g.count, g.requests, tuple(sorted(allowed[g.name]))) for g in shape.groups
    )
    eligible = sorted({m for names in narrowed.values() for m in names})
    return _Judged(
        env,
        usage,
        shape,
        rooms,
        job_pods,
        pod_groups,
        place(pod_groups, rooms),
        tuple(details),
        tuple(stuck),
        tuple(stuck_lines),
        tuple(f"Node/{name}" for name in eligible),
        {reason: tuple(names) for reason, names in excluded.items()},
        level,
        rules,
        plain,
        tuple(unchecked(env, rules)),
    )


def _eligibility(
    nodes: Sequence[KubeObject], groups: Sequence[_Group]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Per pod set, the machines it may use; per reason, the machines some set may not use."""
    excluded: dict[str, list[str]] = {}
    allowed: dict[str, list[str]] = {}
    names = _machine_names(nodes)
    for group in groups:
        may, may_not = _sorted_out(names, _exclusions(nodes, group.spec))
        if may:
            allowed[group.name] = list(may)
        for reason, machines in may_not:
            kept = excluded.setdefault(reason, [])
            seen = set(kept)
            kept.extend(m for m in machines if m not in seen)
    return allowed, excluded


def _machines_sorted_out(
    names: tuple[str, ...], reasons: tuple[str | None, ...]
) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """The machines a pod set may use, and per reason those it may not, in the machines'
    order."""
    may: list[str] = []
    may_not: dict[str, list[str]] = {}
    for name, reason in zip(names, reasons, strict=True):
        if reason is None:
            may.append(name)
        else:
            may_not.setdefault(reason, []).append(name)
    return tuple(may), tuple((reason, tuple(m)) for reason, m in may_not.items())


_sorted_out = LastAnswer(_machines_sorted_out)
"""Kept for the last machines and exclusions (both kept themselves): the namespaces of a run
over many mostly ask it of the same."""


def _exclusions(nodes: Sequence[KubeObject], spec: Mapping[str, Any]) -> tuple[str | None, ...]:
    """`node_exclusion(node, spec)` for each machine, in order. Kept per machine list (by identity)
    and per the parts of the spec it reads: the namespaces of a run over many share the
    machines, and their jobs often share the same constraints."""
    wanted = {part: spec.get(part) for part in _PLACEMENT_PARTS}
    try:
        key = msgspec.json.encode(wanted, order="sorted")
    except (TypeError, msgspec.EncodeError):  # a value JSON cannot hold: judged afresh
        return tuple(node_exclusion(node, spec) for node in nodes)
    known = _last_exclusions(nodes)
    found = known.get(key)
    if found is None:
        found = known[key] = tuple(node_exclusion(node, spec) for node in nodes)
    return found


_machine_names = LastAnswer(lambda nodes: tuple(o.name_of(node) for node in nodes))
_PLACEMENT_PARTS = ("tolerations", "nodeSelector", "affinity")
"""The parts of a pod spec `node_exclusion` reads."""
_last_exclusions = LastAnswer(lambda nodes: dict[bytes, tuple[str | None, ...]]())


def _fits(judged: _Judged) -> list[Finding]:
    used = list(dict.fromkeys(machine for _, machine, _ in judged.now.on))
    findings = [
        SAY.finding(
            Status.OK,
            Basis.MEASURED,
            FITS,
            details=[*judged.details, *_placed_lines(judged.now), f"fits on {', '.join(used)}"],
            objects=[f"Node/{used[0]}"] if used else [],
            size=judged.size,
        )
    ]
    if judged.stuck:
        findings.append(_job_stuck(judged.env, list(judged.stuck), list(judged.stuck_lines)))
    return findings


def _waits_for_running_jobs(judged: _Judged) -> Finding | None:
    """The job fits once the namespace's running training jobs give their room back."""
    job_pods = judged.job_pods
    after_jobs = {
        name: room.without(*job_pods[name][:2]) if name in job_pods else room
        for name, room in judged.rooms.items()
    }
    if not job_pods or not place(judged.pod_groups, after_jobs).whole:
        return None
    jobs = sorted({j for v in job_pods.values() for j in v[3]})
    holders = [f"{m}: {', '.join(v[2])}" for m, v in job_pods.items()]
    held = "; ".join(f"{format_resources(v[0])} on {m}" for m, v in sorted(job_pods.items()))
    return SAY.finding(
        Status.WARN,
        Basis.INFERRED,
        HELD_BY_RUNNING_JOB,
        details=[
            *judged.details,
            _placement_words(judged.now, judged.shape.groups, empty=False),
            *(f"held by training job pods on {h}" for h in holders),
            *judged.stuck_lines,
        ],
        objects=judged.objects,
        jobs=f"the running training job{'s' if len(jobs) != 1 else ''} "
        + _and([f"'{j}'" for j in jobs]),
        held=held,
    )


def _priority_line(level: PriorityLevel | CantRead) -> str:
    """`priority 1000 (class 'training-high'), may preempt lower priorities`."""
    if isinstance(level, CantRead):
        return f"priority not known: {level.reason}"
    may = "may preempt lower priorities" if level.preempts else "never preempts (preemptionPolicy)"
    return f"{level.words}, {may}"


def _preempts(judged: _Judged) -> Finding | None:
    """The job fits once the pods of a lower priority on the machines it needs are stopped:
    kube-scheduler's preemption makes that room (a warning naming who would be stopped).
    Disruption budgets do not stop it: the scheduler only prefers victims that keep them."""
    level = judged.priority
    emptied = {name: room.emptied() for name, room in judged.rooms.items()}
    if not place(judged.pod_groups, emptied).whole:
        return None  # not even on empty machines: too large, whatever the priority
    if isinstance(level, CantRead):
        return SAY.cant_check(judged.env, Kind.PRIORITY_CLASS, level)
    if not level.preempts:
        return None
    freed = after_preemption(judged.rooms, judged.usage, level.value)
    placement = place(judged.pod_groups, freed)
    if not placement.whole:
        return None
    requests = {g.name: g.requests for g in judged.pod_groups}
    found = victims(judged.rooms, placement.on, requests, judged.usage, level.value)
    if not found:
        return None  # the room it needs is held by nothing of a lower priority
    named = [
        f"{_holder_words(judged.env, v.holder)} ({format_resources(v.gives)} on {v.machine})"
        for v in found
    ]
    return SAY.finding(
        Status.WARN,
        Basis.INFERRED,
        PREEMPTS,
        details=[
            *judged.details,
            _placement_words(judged.now, judged.shape.groups, empty=False),
            *(
                f"would preempt pod {v.holder.namespace}/{v.holder.pod} (priority "
                f"{v.holder.priority}) on {v.machine}"
                for v in found
            ),
            "disruption budgets are not read: kube-scheduler prefers victims that keep them "
            "and preempts through them when no other choice frees the room",
            *_placed_lines(placement),
            *judged.stuck_lines,
        ],
        objects=judged.objects,
        size=judged.size,
        victims=_and(named),
    )


def _partly_fits(judged: _Judged) -> Finding | None:
    """A job whose pods start one by one: some of them run now, the rest as room frees up."""
    job = judged.shape.job
    if job is None or job.together or not judged.now.placed:
        return None
    return SAY.finding(
        Status.WARN,
        Basis.MEASURED,
        PARTLY_FITS,
        details=[
            *judged.details,
            _placement_words(judged.now, judged.shape.groups, empty=False),
            *judged.stuck_lines,
        ],
        objects=judged.objects,
        job=f"'{job.name}'",
        placed=str(judged.now.placed),
        wanted=str(judged.now.wanted),
    )


def _blocked_by_other_work(judged: _Judged) -> Finding | None:
    """The job would fit on the machines were they empty: other work holds its room."""
    emptied = {name: room.emptied() for name, room in judged.rooms.items()}
    if not place(judged.pod_groups, emptied).whole:
        return None
    now = judged.now
    machine = now.unplaced.machine if now.unplaced is not None else ""
    missing = now.unplaced.missing if now.unplaced is not None else ()
    named = _largest_holders(judged.env, judged.usage, machine, missing) if machine else []
    held_by = (
        f"the room it needs on {machine} is held by {_and(named)}"
        if named
        else "other programs use the room it needs"
    )
    closest_words = _placement_words(now, judged.shape.groups, empty=False)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED if now.proven else Basis.INFERRED,
        BLOCKED_BY_OTHER_WORK,
        details=[*judged.details, closest_words, *_placed_lines(now), *judged.stuck_lines],
        objects=judged.objects,
        size=judged.size,
        holders=held_by,
        machine=machine or "the machines",
        closest=closest_words,
    )


def _kept_out(judged: _Judged) -> Finding | None:
    """The machines big enough for the job are the ones it may not use: what keeps them out
    (a machine down, under pressure, closed, reserved) is the reason, not the job's size."""
    if not judged.excluded:
        return None
    everywhere = tuple(
        replace(group, machines=tuple(sorted(judged.rooms))) for group in judged.pod_groups
    )
    emptied = {name: room.emptied() for name, room in judged.rooms.items()}
    widened = place(everywhere, emptied)
    if not widened.whole:
        return None
    used = {machine for _, machine, _ in widened.on}
    kept = {
        reason: [m for m in names if m in used]
        for reason, names in judged.excluded.items()
        if any(m in used for m in names)
    }
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        MACHINE_KEPT_OUT,
        details=[*judged.details, *_placed_lines(widened), *judged.stuck_lines],
        objects=[f"Node/{m}" for names in kept.values() for m in names],
        size=judged.size,
        why=_exclusion_words(kept),
        todo=_exclusion_remedy(judged.env, kept),
    )


def _gpu_problems(env: Environment) -> list[GpuProblem]:
    return gpu_problems(env.nodes.items) if isinstance(env.nodes, Listed) else []


def _gpu_problem_finding(
    env: Environment, problems: Sequence[GpuProblem], status: Status
) -> Finding:
    """One finding for the GPU machines whose GPUs cannot all be used, with the state of each
    one's GPU software where its pods were read."""
    first = problems[0]
    details = [
        f"{p.machine} ({p.signal}): {p.resource} allocatable {p.offered} of {p.expected}"
        for p in problems
    ]
    for problem in problems:
        read = env.gpu_machine_pods.get(problem.machine)
        if isinstance(read, Listed):
            details += [
                f"{o.ref(pod)} on {problem.machine}: {pod_state(pod)}"
                for pod in gpu_software_pods(read.items)
            ]
        elif isinstance(read, CantRead):
            details.append(f"the pods on {problem.machine} could not be read: {read.reason}")
    names = _and([p.machine for p in problems])
    down = first.supply is Supply.NOT_RUNNING
    return SAY.finding(
        status,
        Basis.MEASURED,
        GPU_SOFTWARE_DOWN if down else GPUS_UNHEALTHY,
        details=details,
        objects=[f"Node/{p.machine}" for p in problems],
        machines=names,
        count=str(first.expected),
        usable=str(first.offered),
        command=env.settings.kubectl.cluster(
            "get", "pods", "-A", "--field-selector", f"spec.nodeName={first.machine}"
        ),
    )


def _gpus_unusable(judged: _Judged) -> Finding | None:
    """The job would fit were the GPU machines' GPUs all usable: the GPU software that is not
    running (or the unhealthy GPUs) is why it does not."""
    problems = _gpu_problems(judged.env)
    if not problems:
        return None
    restored = dict(judged.rooms)
    for problem in problems:
        room = restored.get(problem.machine)
        if room is not None:
            allocatable = room.allocatable.replaced(
                Resources.of({problem.resource: problem.expected}), [problem.resource]
            )
            restored[problem.machine] = replace(room, allocatable=allocatable)
    emptied = {name: room.emptied() for name, room in restored.items()}
    if not place(judged.pod_groups, restored).whole and not place(judged.pod_groups, emptied).whole:
        return None
    return _gpu_problem_finding(judged.env, problems, Status.FAIL)


def _no_such_gpu(judged: _Judged) -> Finding | None:
    """The job asks for a GPU resource no machine offers while others are offered: a full GPU
    where the machines offer MIG slices, or the reverse."""
    if not isinstance(judged.env.nodes, Listed):
        return None
    nodes = judged.env.nodes.items
    asked = {name for g in judged.pod_groups for name in g.requests.names}
    missing = missing_gpu_resources(asked, nodes)
    offered = offered_gpu_resources(nodes)
    if not missing or not offered:
        return None
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        NO_SUCH_GPU,
        details=[*judged.details, f"asked: {', '.join(missing)}; offered: {', '.join(offered)}"],
        objects=judged.objects,
        asked=_and(missing),
        offered=_and(offered),
    )


def _gpu_warnings(env: Environment, verdict: Finding) -> list[Finding]:
    """GPU machines whose GPUs cannot all be used, where the verdict does not already say so:
    a warning (the job may fit without them, but the cluster has less than it should)."""
    if verdict.code in (GPU_SOFTWARE_DOWN, GPUS_UNHEALTHY):
        return []
    problems = _gpu_problems(env)
    if not problems:
        return []
    by_supply: dict[Supply, list[GpuProblem]] = {}
    for problem in problems:
        by_supply.setdefault(problem.supply, []).append(problem)
    return [_gpu_problem_finding(env, group, Status.WARN) for group in by_supply.values()]


def _too_large(judged: _Judged) -> Finding:
    """Not even on empty machines: the job asks for more than the machines are."""
    emptied = {name: room.emptied() for name, room in judged.rooms.items()}
    on_empty = place(judged.pod_groups, emptied)
    closest_words = _placement_words(on_empty, judged.shape.groups, empty=True)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED if on_empty.proven else Basis.INFERRED,
        TOO_LARGE,
        details=[*judged.details, closest_words, *_placed_lines(on_empty), *judged.stuck_lines],
        objects=judged.objects,
        size=judged.size,
        closest=closest_words,
    )


def _pod_set_line(job: TrainingJob) -> str:
    """`PyTorchJob/run-7: Master x1, Worker x3, all at once`."""
    sets = ", ".join(f"{s.name} x{s.count}" for s in job.pod_sets)
    together = "all at once" if job.together else "each as room allows"
    return f"{job.ref}: {sets or 'no pods'}, {together}"


def _machine_rooms(
    nodes: tuple[KubeObject, ...],
    usage: ClusterUsage,
    shape: _Shape | None,
    level: PriorityLevel | CantRead,
) -> tuple[Mapping[str, MachineRoom], dict[str, _JobPodsOnMachine]]:
    """Each machine's room with every non-terminated pod bound to it counted (Pending too) and
    the room promised to pods nominated for it of the job's priority or above (all, when the
    priority is not known), and what this namespace's training job pods hold on each machine
    that they will give back when their jobs finish (the judged job's own pods not, while it
    waits for the rest)."""
    kept = _last_rooms(nodes, usage.machines)
    judged = shape.job.name if shape is not None and shape.job is not None else None
    mine: dict[str, tuple[Resources, int]] = {}
    for pod in usage.pods_here:
        # The judged job's own pods nominated for a machine: that room is promised to it.
        promised = str(o.mapping(pod.get("status")).get("nominatedNodeName") or "")
        if promised and not o.node_name(pod) and judged and training_owner(pod) == judged:
            held, count = mine.get(promised, (Resources(), 0))
            mine[promised] = (held + pod_requests(o.pod_spec(pod)), count + 1)
    priority = None if isinstance(level, CantRead) else level.value
    rooms = with_nominated(kept, usage, priority, mine)
    own = shape.own_pods if shape is not None else frozenset()
    job_pods: dict[str, _JobPodsOnMachine] = {}
    for pod in usage.pods_here:
        machine = o.node_name(pod)
        job = training_owner(pod)
        if machine in rooms and job and o.name_of(pod) not in own:
            held, count, names, jobs = job_pods.get(machine, (Resources(), 0, [], []))
            requests = pod_requests(o.pod_spec(pod))
            job_pods[machine] = (
                held + requests,
                count + 1,
                [*names, o.name_of(pod)],
                [*jobs, job] if job not in jobs else jobs,
            )
    return rooms, job_pods


def _rooms(
    nodes: tuple[KubeObject, ...], machines: dict[str, MachineUsage]
) -> Mapping[str, MachineRoom]:
    """Each machine's room with what its pods reserve counted; read-only, since every
    namespace of a run over many is given the same one."""
    usage = ClusterUsage(machines)
    rooms = {}
    for node in nodes:
        room = machine_room(node)
        requested, pods = usage.reserved_on(room.name)
        rooms[room.name] = replace(room, requested=requested, pod_count=pods)
    return MappingProxyType(rooms)


_last_rooms = LastAnswer(_rooms)
"""The last machines' rooms (doctor/knowledge/last_answer.py): every namespace of a run over many
has the
same machines and the same sums."""
_last_kept = LastAnswer(lambda nodes: dict[frozenset[str], list[str]]())


def _kept_for(nodes: Sequence[KubeObject], resources: Iterable[str]) -> list[str]:
    """`kept_for(nodes, resources)`, kept per machine list (by identity) and resources: the
    namespaces of a run over many ask it of the same machines, mostly for the same GPUs."""
    wanted = frozenset(resources)
    known = _last_kept(nodes)
    found = known.get(wanted)
    if found is None:
        found = known[wanted] = kept_for(nodes, wanted)
    return list(found)


def _invalid_amount(env: Environment, error: str) -> Finding:
    cant = CantRead(ReadFailure.MALFORMED, f"a resource amount in the cluster is invalid: {error}")
    return SAY.cant_check(env, Kind.POD, cant, everywhere=True)


def _largest_holders(
    env: Environment, usage: ClusterUsage, machine: str, missing: Sequence[Shortfall]
) -> list[str]:
    """Who holds most of what `machine` lacks, largest first, at most three, in plain words
    with their amounts: `the workload 'notebook' in 'research' (1 nvidia.com/gpu)`."""
    short = [s.resource for s in missing if s.resource != PODS]
    holding = [h for h in usage.holders.get(machine, []) if any(r in h.requested for r in short)]
    holding.sort(key=lambda h: (*(-h.requested.get(r, 0) for r in short), h.namespace, h.pod))
    return [
        f"{_holder_words(env, h)} "
        f"({format_resources(Resources.of({r: h.requested.get(r, 0) for r in short}))})"
        for h in holding[:3]
    ]


def _holder_words(env: Environment, holder: Holder) -> str:
    """`the workload 'notebook' in 'research'`; the namespace left out when it is this one."""
    kind, name = holder.owner_kind, holder.owner
    if kind == "ReplicaSet":
        # A Deployment's ReplicaSet is named `<deployment>-<pod-template-hash>`.
        noun, name = "workload", name.rpartition("-")[0] or name
    elif kind in ("Deployment", "StatefulSet", "DaemonSet"):
        noun = "workload"
    elif kind == "Job":
        noun = "training job" if holder.namespace == env.namespace else "job"
    elif kind:
        noun = "workload"
    else:
        noun, name = "program", holder.pod
    where = "" if holder.namespace == env.namespace else f" in '{holder.namespace}'"
    return f"the {noun} '{name}'{where}"


def _and(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _exclusion_remedy(env: Environment, excluded: Mapping[str, list[str]]) -> str:
    """One step per reason the machines are out of reach, each with the command that does it.
    A taint a controller owns is never removed: the step is about the machine it marks."""
    kubectl = env.settings.kubectl
    steps = []
    tainted: dict[str, list[str]] = {}
    for reason, names in excluded.items():
        taint = _TAINT.match(reason)
        key = (
            "node.kubernetes.io/unschedulable"
            if reason == "cordoned"
            else (taint.group(1) if taint is not None else "")
        )
        known = system_taint(key)
        if key == "node.kubernetes.io/unschedulable":
            # An administrator closes a machine on purpose (a drain for maintenance).
            steps.append(
                f"if the maintenance on {_and(names)} is done, open them to new work again with "
                f"{kubectl.cluster('uncordon', *names)} (an administrator may have closed them "
                "on purpose)"
            )
        elif known is not None:
            steps.append(
                known.todo.format(
                    names=_and(names), check=kubectl.cluster("describe", "node", names[0])
                )
            )
        elif taint is not None:
            for name in names:
                tainted.setdefault(taint.group(1), []).append(name)
        else:
            steps.append(
                "change where training jobs may run in their settings ("
                + kubectl.cluster("get", "nodes", "--show-labels")
                + " shows what each machine offers)"
            )
    for key, names in tainted.items():
        steps.append(
            f"let training jobs onto the reserved machines {_and(names)} in their settings, or, "
            "if nobody reserved them on purpose, lift the reservation with "
            f"{kubectl.cluster('taint', 'nodes', *names, key + '-')}"
        )
    return sentence("; or ".join(dict.fromkeys(steps)))


def _job_stuck(env: Environment, stuck: list[KubeObject], lines: list[str]) -> Finding:
    oldest = min(stuck, key=lambda p: str(o.created_at(p)))
    age = env.now - (o.created_at(oldest) or env.now)
    return SAY.finding(
        Status.FAIL,
        Basis.INFERRED,
        JOB_STUCK,
        details=[*lines, *_scheduler_messages(stuck)],
        objects=[o.ref(p) for p in stuck],
        job=f"'{training_owner(oldest)}'",
        age=format_age(max(age, timedelta(0))),
        command=env.settings.kubectl.here("describe", "pod", o.name_of(oldest)),
    )


def _scheduler_messages(pods: list[KubeObject]) -> list[str]:
    messages = []
    for pod in pods:
        scheduled = o.condition(pod, "PodScheduled")
        if scheduled and scheduled.get("message"):
            messages.append(f"scheduler on {o.name_of(pod)}: {scheduled['message']}")
    return messages


def _exclusion_words(excluded: Mapping[str, list[str]]) -> str:
    """`1 machine is not ready, 2 machines are outside the job's placement rules`."""
    parts = []
    for reason, names in excluded.items():
        count = len(names)
        noun = "machine" if count == 1 else "machines"
        taint = _TAINT.match(reason)
        known = system_taint(taint.group(1)) if taint is not None else None
        if known is not None:
            plain = known.one if count == 1 else known.many
        else:
            verb = "is" if count == 1 else "are"
            plain = (
                verb
                + " "
                + {
                    "cordoned": "closed to new work",
                    "nodeSelector does not match": "outside the job's placement rules",
                    "required node affinity does not match": "outside the job's placement rules",
                }.get(reason, "reserved for other work")
            )
        parts.append(f"{count} {noun} {plain}")
    return ", ".join(parts)
