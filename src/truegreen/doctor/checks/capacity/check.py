"""Capacity: can a training job of the given size start now, by kube-scheduler's fit rules?"""

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind, KubeObject, Listed
from truegreen.doctor.checks.capacity.machines import (
    Judged,
    kept_machines,
    prepare,
    requested_resources,
)
from truegreen.doctor.checks.capacity.machines_down import DownSupply, down_supply, machine_down
from truegreen.doctor.checks.capacity.named_machine import every_set_named
from truegreen.doctor.checks.capacity.rule_findings import (
    blocked_by_rules,
    claimed_devices,
    with_unchecked,
)
from truegreen.doctor.checks.capacity.shape import (
    added_tolerations,
    joined_words,
    placement_words,
    training_pods,
)
from truegreen.doctor.checks.capacity.verdicts import (
    blocked_by_other_work,
    fits_now,
    gpu_warnings,
    gpus_unusable,
    kept_out,
    no_such_gpu,
    partly_fits,
    preempts,
    too_large,
    waits_for_a_volume,
    waits_for_running_jobs,
)
from truegreen.doctor.checks.capacity.words import (
    FITS,
    MACHINES_DOWN,
    RESERVATION_UNKNOWN,
    SAY,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.evidence import SchedulerVerdict, scheduler_verdict
from truegreen.doctor.knowledge.reports import pods_with_evidence
from truegreen.doctor.knowledge.stored_pod import (
    ExtendedTolerations,
    Knowledge,
)
from truegreen.doctor.knowledge.training import (
    training_owner,
)
from truegreen.quantity import is_devices

CHECK = CheckId.CAPACITY


def check(env: Environment) -> list[Finding]:
    """Findings about whether a training job fits on the cluster's machines now: every machine
    with the job's devices down, else what the scheduler already said about the job's pods,
    then what placing them shows (or, for pods that name their machine, what its kubelet
    admits)."""
    nodes = env.nodes.items if isinstance(env.nodes, Listed) else ()
    # A job whose every pod set names its machine goes to those machines alone: others being
    # down changes nothing for it (the kubelet admission path says whether its own are). The
    # devices it claims are counted only where a machine is down.
    down = (
        None
        if every_set_named(env) or all(machine_down(n) is None for n in nodes)
        else down_supply(nodes, requested_resources(env), claimed_devices(env, env.judged_job()))
    )
    if down is not None:
        return [_coming_beside_down(env, down) or _machines_down(env, down)]
    return _unsaid_fit(env, _with_evidence(env, _arithmetic(env)))


def _unsaid_fit(env: Environment, findings: list[Finding]) -> list[Finding]:
    """The findings without the claim that the job fits where a component of the cluster
    reported about one of the judged job's pods that has no machine yet: kube-scheduler's
    `PodScheduled=False` with reason `SchedulerError` (pkg/scheduler/schedule_one.go
    handleSchedulingFailure: every failure that is not a rejection, such as a PreBind plugin's
    error), another scheduler's refusal. The evidence check quotes it; "fits" beside it would
    be arithmetic speaking over a measurement about that very pod."""
    job = env.judged_job()
    if job is None or not any(f.code == FITS for f in findings):
        return findings
    reported = pods_with_evidence(env.reports())
    unplaced = {o.name_of(p) for p in o.remaining(env.pods_of(job)) if not o.node_name(p)}
    if not unplaced & reported:
        return findings
    return [f for f in findings if f.code != FITS]


def _verdicts(env: Environment) -> list[tuple[KubeObject, SchedulerVerdict]]:
    """The training pods the scheduler could not place, with its verdict on each."""
    return [
        (pod, verdict)
        for pod in o.remaining(training_pods(env))
        if training_owner(pod) and (verdict := scheduler_verdict(pod)) is not None
    ]


def _coming_beside_down(env: Environment, down: DownSupply) -> Finding | None:
    """A machine an autoscaler measurably adds for the pods is capacity on its way, whatever
    the machines already there: the wait, with those that are down said in its details."""
    verdicts = _verdicts(env)
    if not verdicts:
        return None
    # Imported on use: only pods the scheduler could not place run it (doctor's start-up on a
    # small namespace, bench/imports.py).
    from truegreen.doctor.checks.capacity.unplaced import coming_beside_down

    return coming_beside_down(env, verdicts, down)


def _machines_down(env: Environment, down: DownSupply) -> Finding:
    """Every machine that offers a resource the job asks for is down: measured (their
    conditions and the controller's taints), whatever the scheduler's other reasons say."""
    job = env.judged_job()
    lines = [f"scheduler on {v.pod}: {v.message}" for _, v in _verdicts(env)]
    names = ", ".join(down.machines)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        MACHINES_DOWN,
        details=(*down.states, *lines),
        objects=[f"Node/{m}" for m in down.machines],
        # --job-requests sizes the job: no job of the namespace is judged by name then.
        job=job.words().capitalize()
        if job is not None and env.settings.job_requests is None
        else "A training job",
        resource=down.resource,
        # `gpu.nvidia.com devices` are many; `nvidia.com/gpu` is named as one resource.
        it="them" if is_devices(down.resource) else "it",
        machines=names,
        them="it" if len(down.machines) == 1 else "them",
        command=env.settings.kubectl.cluster("describe", "node", *down.machines),
    )


def _arithmetic(env: Environment) -> list[Finding]:
    """Whether the job fits, by placing its pods as stored on the machines' free room.

    Where the cluster may add the job's extended resource tolerations without saying so
    (ExtendedResourceToleration inferred from the provider, or not known) and a machine is kept
    for those resources, the job is judged both ways and the answers settled (`_settled`);
    with no such machine the tolerations change nothing."""
    tolerations = added_tolerations(env)
    nodes = env.nodes.items if isinstance(env.nodes, Listed) else ()
    kept = kept_machines(nodes, tolerations.resources)
    if tolerations.knowledge in (Knowledge.INFERRED_ADDS, Knowledge.UNKNOWN):
        if not kept:
            return _judge(env, tolerations.added)
        return _settled(env, tolerations, _judge(env, False), _judge(env, True))
    found = _judge(env, tolerations.added)
    # Measured (the trial start's answer, or the pods the server stored): said where a machine
    # kept for those resources makes it matter.
    return _noted(found, tolerations.signal) if tolerations.signal and kept else found


def _judge(env: Environment, tolerate: bool) -> list[Finding]:
    """The verdict steps in order, on the pods as stored (`tolerate`: with the extended
    resource tolerations the cluster adds)."""
    judged = prepare(env, tolerate)
    if isinstance(judged, list):
        return judged
    if judged.unread is not None:
        return _machines_alone(judged, judged.unread)
    return with_unchecked(_verdict(judged), judged.unknown)


def _machines_alone(judged: Judged, unread: CantRead) -> list[Finding]:
    """The verdict on machines judged as if empty, where the cluster's pods could not be read:
    one that no running program could change (the job too large for every machine it may use,
    or asking for a GPU no machine offers), else unknown. A job that fits on empty machines
    may or may not fit now; one whose pods start one by one and some of which fit runs in
    part, or not, by what runs; GPUs that cannot all be used, or machines it may not use that
    are big enough, name the verdict only after the devices its claims hold are counted: all
    depend on what was not read."""
    env = judged.env
    unknown = [SAY.cant_check(env, Kind.POD, unread, everywhere=True)]
    job = judged.shape.job
    empty = judged.now
    runs_in_part = job is not None and not job.together and empty.placed > 0
    if empty.whole or runs_in_part:
        return unknown
    if gpus_unusable(judged) is not None or kept_out(judged) is not None:
        return unknown
    verdict = no_such_gpu(judged)
    if verdict is None:
        verdict = too_large(judged)
    return [verdict, *gpu_warnings(env, verdict)]


def _verdict(judged: Judged) -> list[Finding]:
    """The verdict steps in order: the first that explains the placement names it."""
    env = judged.env
    if judged.refused:
        # Some pod set has no machine but those preemption gives back: it preempts, or the
        # machines it lost are the verdict.
        preempting = preempts(judged)
        if preempting is None:
            return list(judged.refused)
        return [preempting, *gpu_warnings(env, preempting)]
    if judged.now.whole:
        waits = waits_for_a_volume(judged)
        if waits is not None:
            return [waits, *gpu_warnings(env, waits)]
        fits = fits_now(judged)
        return [*fits, *gpu_warnings(env, fits[0])]
    steps = (
        waits_for_running_jobs,
        preempts,
        partly_fits,
        gpus_unusable,
        _blocked_by_rules,
        blocked_by_other_work,
        kept_out,
        no_such_gpu,
    )
    for step in steps:
        found = step(judged)
        if found is not None:
            return [found, *gpu_warnings(env, found)]
    verdict = too_large(judged)
    return [verdict, *gpu_warnings(env, verdict)]


def _with_evidence(env: Environment, findings: list[Finding]) -> list[Finding]:
    """The scheduler's own verdict on the training pods it could not place is measured and wins:
    a reason other than room is a failure whatever placing shows; a lack of room alone goes with
    placing's explanation (a wait, other work, the job's size) and adds its words to it. What an
    autoscaler said about those pods comes first: a machine on its way is a measured wait, and
    one it cannot add is why they will not run."""
    verdicts = _verdicts(env)
    if not verdicts:
        return findings
    from truegreen.doctor.checks.capacity.unplaced import with_verdicts

    return with_verdicts(env, verdicts, findings)


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
    reserved = kept_machines(
        env.nodes.items if isinstance(env.nodes, Listed) else (), tolerations.resources
    )
    resources = joined_words([f"'{r}'" for r in tolerations.resources])
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
        machines=joined_words(reserved) if reserved else "the machines",
        toleration=f"`tolerations: [{stated}]`",
    )
    return [replace(unknown, why=f"whether the job may use the machines kept for {resources}")]


def _blocked_by_rules(judged: Judged) -> Finding | None:
    """Room alone would do; the scheduler's filters' rules do not let it."""
    return blocked_by_rules(
        judged.pod_groups,
        judged.plain_groups,
        judged.rooms,
        judged.now,
        judged.rules,
        lambda placement, empty: placement_words(placement, judged.shape.groups, empty=empty),
        judged.size,
        [*judged.details, *judged.stuck_lines],
        judged.objects,
    )
