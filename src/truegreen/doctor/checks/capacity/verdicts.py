"""The capacity check's verdicts from placing the job: it fits, waits for a running job, takes
lower-priority work's place, partly fits, is blocked by other work, is kept out of reserved
machines, finds no usable GPU, or is too large for any machine.
"""

from collections.abc import Iterable, Sequence
from datetime import timedelta

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind, KubeObject, Listed
from truegreen.doctor.checks.base import format_age
from truegreen.doctor.checks.capacity.machines import (
    Judged,
    exclusion_remedy,
    exclusion_words,
)
from truegreen.doctor.checks.capacity.placement import place
from truegreen.doctor.checks.capacity.preemption import (
    Victim,
    after_preemption,
    victims,
)
from truegreen.doctor.checks.capacity.shape import joined_words, placed_lines, placement_words
from truegreen.doctor.checks.capacity.words import (
    BLOCKED_BY_OTHER_WORK,
    FITS,
    GPU_SOFTWARE_DOWN,
    GPU_SOFTWARE_STARTING,
    GPUS_UNHEALTHY,
    HELD_BY_RUNNING_JOB,
    JOB_STUCK,
    MACHINE_KEPT_OUT,
    NO_SUCH_GPU,
    PARTLY_FITS,
    PREEMPTS,
    SAY,
    TOO_LARGE,
    VOLUME_HELD_BY_RUNNING_JOB,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.fit import (
    format_resources,
)
from truegreen.doctor.knowledge.gpu_supply import (
    STARTUP_TIME,
    GpuProblem,
    Supply,
    gpu_problems,
    gpu_software_pods,
    missing_gpu_resources,
    offered_gpu_resources,
    pod_state,
)
from truegreen.doctor.knowledge.training import TRAINING_KIND_NAMES, training_owner
from truegreen.doctor.knowledge.usage import Holder
from truegreen.quantity import PODS, Resources


def fits_now(judged: Judged) -> list[Finding]:
    used = list(dict.fromkeys(machine for _, machine, _ in judged.now.on))
    findings = [
        SAY.finding(
            Status.OK,
            Basis.MEASURED,
            FITS,
            details=[*judged.details, *placed_lines(judged.now), f"fits on {', '.join(used)}"],
            objects=[f"Node/{used[0]}"] if used else [],
            size=judged.size,
        )
    ]
    if judged.stuck:
        findings.append(job_stuck(judged.env, list(judged.stuck), list(judged.stuck_lines)))
    return findings


def waits_for_a_volume(judged: Judged) -> Finding | None:
    """The job fits, but a volume one program may use at a time is in use by running training
    jobs: the scheduler refuses it until they finish (volumerestrictions: Unschedulable)."""
    waits = judged.rules.waits
    if not waits:
        return None
    jobs = list(dict.fromkeys(j for w in waits for j in w.jobs))
    return SAY.finding(
        Status.WARN,
        Basis.MEASURED,
        VOLUME_HELD_BY_RUNNING_JOB,
        details=[*judged.details, *judged.rules.details, *judged.stuck_lines],
        objects=judged.objects,
        claim=waits[0].claim,
        jobs=f"the running training job{'s' if len(jobs) != 1 else ''} "
        + joined_words([f"'{j}'" for j in jobs]),
    )


def waits_for_running_jobs(judged: Judged) -> Finding | None:
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
            placement_words(judged.now, judged.shape.groups, empty=False),
            *(f"held by training job pods on {h}" for h in holders),
            *judged.stuck_lines,
        ],
        objects=judged.objects,
        jobs=f"the running training job{'s' if len(jobs) != 1 else ''} "
        + joined_words([f"'{j}'" for j in jobs]),
        held=held,
    )


def preempts(judged: Judged) -> Finding | None:
    """The job fits once the pods of a lower priority on the machines it needs are stopped:
    kube-scheduler's preemption makes that room (a warning naming who would be stopped).
    Disruption budgets do not stop it: the scheduler only prefers victims that keep them."""
    level = judged.priority
    groups = judged.preempting or judged.pod_groups
    emptied = judged.emptied()
    if not place(groups, emptied).whole:
        return None  # not even on empty machines: too large, whatever the priority
    if isinstance(level, CantRead):
        return SAY.cant_check(judged.env, Kind.PRIORITY_CLASS, level)
    if not level.preempts:
        return None
    freed = after_preemption(judged.rooms, judged.usage, level.value)
    placement = place(groups, freed)
    if not placement.whole:
        return None
    requests = {g.name: g.requests for g in groups}
    found = [
        *_in_the_way(judged, placement.on, level.value),
        *victims(judged.rooms, placement.on, requests, judged.usage, level.value),
    ]
    if not found:
        return None  # the room it needs is held by nothing of a lower priority
    named = [
        f"{_holder_words(judged.env, v.holder)} "
        + (
            f"({v.blocks} on {v.machine})"
            if v.blocks
            else f"({format_resources(v.gives)} on {v.machine})"
        )
        for v in found
    ]
    return SAY.finding(
        Status.WARN,
        Basis.INFERRED,
        PREEMPTS,
        details=[
            *judged.details,
            placement_words(judged.now, judged.shape.groups, empty=False),
            *(
                f"would preempt pod {v.holder.namespace}/{v.holder.pod} (priority "
                f"{v.holder.priority}) on {v.machine}"
                for v in found
            ),
            "disruption budgets are not read: kube-scheduler prefers victims that keep them "
            "and preempts through them when no other choice frees the room",
            *placed_lines(placement),
            *judged.stuck_lines,
        ],
        objects=judged.objects,
        size=judged.size,
        victims=joined_words(named),
    )


def _in_the_way(
    judged: Judged, placed: Sequence[tuple[str, str, int]], priority: int
) -> list[Victim]:
    """The lower-priority pods preemption stops on the machines the job is placed on that the
    filters took from it (their ports or anti-affinity), by machine, then pod."""
    allowed = {g.name: set(g.machines) for g in judged.pod_groups}
    found: dict[tuple[str, str, str], Victim] = {}
    for group, machine, _ in placed:
        if machine in allowed.get(group, ()):
            continue
        for b in judged.rules.preempted(group, machine, priority) or ():
            holder = Holder(b.namespace, b.pod, "", "", {}, b.priority)
            found.setdefault(
                (machine, b.namespace, b.pod), Victim(machine, holder, Resources(), b.words)
            )
    return [found[key] for key in sorted(found)]


def partly_fits(judged: Judged) -> Finding | None:
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
            placement_words(judged.now, judged.shape.groups, empty=False),
            *judged.stuck_lines,
        ],
        objects=judged.objects,
        job=f"'{job.name}'",
        placed=str(judged.now.placed),
        wanted=str(judged.now.wanted),
    )


def blocked_by_other_work(judged: Judged) -> Finding | None:
    """The job would fit on the machines were they empty: other work holds its room."""
    on_empty = place(judged.pod_groups, judged.emptied())
    if not on_empty.whole:
        return None
    now = judged.now
    machine = now.unplaced.machine if now.unplaced is not None else ""
    short = [s.resource for s in (now.unplaced.missing if now.unplaced is not None else ())]
    named = _largest_holders(judged, machine, short) if machine else []
    if not named:
        # The closest machine holds only the job's own pods: who holds the machines the job
        # would take were they empty.
        asked = {g.name: g.requests.names for g in judged.pod_groups}
        for group, where, _ in on_empty.on:
            named = _largest_holders(judged, where, asked[group])
            if named:
                machine = where
                break
    held_by = (
        f"the room it needs on {machine} is held by {joined_words(named)}"
        if named
        else "other programs use the room it needs"
    )
    closest_words = placement_words(now, judged.shape.groups, empty=False)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED if now.proven else Basis.INFERRED,
        BLOCKED_BY_OTHER_WORK,
        details=[*judged.details, closest_words, *placed_lines(now), *judged.stuck_lines],
        objects=judged.objects,
        size=judged.size,
        holders=held_by,
        machine=machine or "the machines",
        closest=closest_words,
    )


def kept_out(judged: Judged) -> Finding | None:
    """The machines big enough for the job are the ones it may not use: what keeps them out
    (a machine down, under pressure, closed, reserved) is the reason, not the job's size."""
    if not judged.excluded:
        return None
    everywhere = tuple(
        replace(group, machines=tuple(sorted(judged.rooms))) for group in judged.pod_groups
    )
    emptied = judged.emptied()
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
        details=[*judged.details, *placed_lines(widened), *judged.stuck_lines],
        objects=[f"Node/{m}" for names in kept.values() for m in names],
        size=judged.size,
        why=exclusion_words(judged.env, kept),
        todo=exclusion_remedy(judged.env, kept),
    )


def _gpu_problems(env: Environment) -> list[GpuProblem]:
    return gpu_problems(env.nodes.items) if isinstance(env.nodes, Listed) else []


def _gpu_problem_finding(
    env: Environment, problems: Sequence[GpuProblem], status: Status
) -> Finding:
    """One finding for the GPU machines whose GPUs cannot all be used, with the state of each
    one's GPU software where its pods were read: still starting on machines that have just
    joined (a warning), not running or unhealthy elsewhere."""
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
    names = joined_words([p.machine for p in problems])
    command = env.settings.kubectl.cluster(
        "get", "pods", "-A", "--field-selector", f"spec.nodeName={first.machine}"
    )
    count = str(first.expected)
    if first.starting(env.now) and first.joined is not None:
        return SAY.finding(
            Status.WARN,
            Basis.MEASURED,
            GPU_SOFTWARE_STARTING,
            details=details,
            objects=[f"Node/{p.machine}" for p in problems],
            machines=names,
            age=format_age(env.now - first.joined),
            count=count,
            limit=format_age(STARTUP_TIME),
            command=command,
        )
    return SAY.finding(
        status,
        Basis.MEASURED,
        GPU_SOFTWARE_DOWN if first.supply is Supply.NOT_RUNNING else GPUS_UNHEALTHY,
        details=details,
        objects=[f"Node/{p.machine}" for p in problems],
        machines=names,
        count=count,
        usable=str(first.offered),
        command=command,
    )


def _restored_fit(judged: Judged, problems: Sequence[GpuProblem]) -> bool:
    """The job would fit, now or once the running work is done, were these machines' GPUs
    all usable."""
    restored = dict(judged.rooms)
    for problem in problems:
        room = restored.get(problem.machine)
        if room is not None:
            allocatable = room.allocatable.replaced(
                Resources.of({problem.resource: problem.expected}), [problem.resource]
            )
            restored[problem.machine] = replace(room, allocatable=allocatable)
    emptied = judged.emptied(restored)
    return place(judged.pod_groups, restored).whole or place(judged.pod_groups, emptied).whole


def gpus_unusable(judged: Judged) -> Finding | None:
    """The job would fit were the GPU machines' GPUs all usable: the GPU software that is not
    running (or the unhealthy GPUs) is why it does not. Where the machines whose GPU software
    is still starting suffice, that is a wait, not a failure."""
    problems = _gpu_problems(judged.env)
    if not problems or not _restored_fit(judged, problems):
        return None
    now = judged.env.now
    starting = [p for p in problems if p.starting(now)]
    if starting and _restored_fit(judged, starting):
        return _gpu_problem_finding(judged.env, starting, Status.WARN)
    return _gpu_problem_finding(
        judged.env, [p for p in problems if not p.starting(now)], Status.FAIL
    )


def no_such_gpu(judged: Judged) -> Finding | None:
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
        asked=joined_words(missing),
        offered=joined_words(offered),
    )


def gpu_warnings(env: Environment, verdict: Finding) -> list[Finding]:
    """GPU machines whose GPUs cannot all be used, where the verdict does not already say so:
    a warning (the job may fit without them, but the cluster has less than it should)."""
    named = set(verdict.objects) if verdict.code in _GPU_VERDICTS else set()
    problems = [p for p in _gpu_problems(env) if f"Node/{p.machine}" not in named]
    by_state: dict[tuple[Supply, bool], list[GpuProblem]] = {}
    for problem in problems:
        by_state.setdefault((problem.supply, problem.starting(env.now)), []).append(problem)
    return [_gpu_problem_finding(env, group, Status.WARN) for group in by_state.values()]


_GPU_VERDICTS = frozenset({GPU_SOFTWARE_DOWN, GPU_SOFTWARE_STARTING, GPUS_UNHEALTHY})
"""The verdicts that name GPU machines whose GPUs cannot all be used."""


def too_large(judged: Judged) -> Finding:
    """Not even on empty machines: the job asks for more than the machines are."""
    emptied = judged.emptied()
    on_empty = place(judged.pod_groups, emptied)
    closest_words = placement_words(on_empty, judged.shape.groups, empty=True)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED if on_empty.proven else Basis.INFERRED,
        TOO_LARGE,
        details=[
            *judged.details,
            closest_words,
            *placed_lines(on_empty),
            *judged.own_lines(),
            *judged.stuck_lines,
        ],
        objects=judged.objects,
        size=judged.size,
        closest=closest_words,
    )


def _largest_holders(judged: Judged, machine: str, resources: Iterable[str]) -> list[str]:
    """Who holds most of `resources` on `machine`, largest first, at most three, in plain
    words with their amounts: `the workload 'notebook' in 'research' (1 nvidia.com/gpu)`. The
    judged job's own placed pods hold nothing it could get back, and are never named."""
    env = judged.env
    short = [r for r in resources if r != PODS]
    holding = [
        h
        for h in judged.usage.holders.get(machine, [])
        if any(r in h.requested for r in short)
        and not (h.namespace == env.namespace and h.pod in judged.shape.own_pods)
    ]
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
    elif kind == "Job" or kind in TRAINING_KIND_NAMES:
        noun = "training job" if holder.namespace == env.namespace else "job"
    elif kind:
        noun = "workload"
    else:
        noun, name = "program", holder.pod
    where = "" if holder.namespace == env.namespace else f" in '{holder.namespace}'"
    return f"the {noun} '{name}'{where}"


def job_stuck(env: Environment, stuck: list[KubeObject], lines: list[str]) -> Finding:
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
