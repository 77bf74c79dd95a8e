"""Capacity: can a training job of the given size start now, by kube-scheduler's fit rules?"""

import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind, KubeObject, ReadFailure
from truegreen.doctor.checks.base import cant_check, finding
from truegreen.doctor.checks.workloads import format_age
from truegreen.doctor.environment import Environment, newest_job
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.fit import (
    MachineRoom,
    Shortfall,
    apply_limit_range_defaults,
    closest,
    exclusion,
    format_resources,
    machine_room,
    pod_requests,
    shortfalls,
)
from truegreen.doctor.usage import ClusterUsage, Holder
from truegreen.doctor.wording import sentence
from truegreen.quantity import PODS, QuantityError, Resources

CHECK = CheckId.CAPACITY
_TAINT = re.compile(r"^taint ([^=]+)=")
"""A reserved machine's reason from `fit.exclusion`: `taint KEY=VALUE:EFFECT not tolerated`."""


def _stuck_job_pods(env: Environment, pods: Sequence[KubeObject]) -> list[KubeObject]:
    """Training job pods of this namespace still unscheduled after the grace period."""
    stuck = []
    for pod in pods:
        if not o.job_owner(pod) or o.node_name(pod):
            continue
        if o.phase(pod) != "Pending":
            continue
        created = o.created_at(pod)
        if created is not None and env.now - created > env.settings.pending_grace:
            stuck.append(pod)
    return stuck


def _job_shape(env: Environment) -> tuple[Resources | None, Mapping[str, Any], str, Finding | None]:
    """The training job pod's requests and placement spec, where they came from, or a finding."""
    job = newest_job(env.jobs)
    spec = o.pod_spec(o.pod_template(job)) if job is not None else {}
    if env.settings.job_requests is not None:
        return env.settings.job_requests, spec, "--job-requests", None
    if isinstance(env.jobs, CantRead):
        return None, {}, "", cant_check(env, CHECK, Kind.JOB, env.jobs)
    if job is None:
        return None, {}, "", None
    if isinstance(env.limit_ranges, CantRead):
        return None, {}, "", cant_check(env, CHECK, Kind.LIMIT_RANGE, env.limit_ranges)
    try:
        requests = pod_requests(apply_limit_range_defaults(spec, env.limit_ranges.items))
    except QuantityError as error:
        problem = finding(
            CHECK,
            Status.FAIL,
            Basis.MEASURED,
            "capacity.bad-job-size",
            details=(f"{o.ref(job)}: {error}",),
            objects=(o.ref(job),),
            problem=str(error),
        )
        return None, {}, "", problem
    return requests, spec, f"the template of {o.ref(job)}", None


def check(env: Environment) -> list[Finding]:
    """Findings about whether a training job fits on the cluster's machines now."""
    if isinstance(env.nodes, CantRead):
        return [cant_check(env, CHECK, Kind.NODE, env.nodes)]
    usage = env.cluster_usage
    if isinstance(usage, CantRead):
        return [cant_check(env, CHECK, Kind.POD, usage, everywhere=True)]
    request, spec, source, problem = _job_shape(env)
    if problem is not None:
        return [problem]
    if usage.invalid:
        return [_invalid_amount(env, usage.invalid)]
    try:
        rooms, job_pods_by_machine = _machine_rooms(env.nodes.items, usage)
    except QuantityError as error:  # only a hand-edited snapshot gets here
        return [_invalid_amount(env, str(error))]
    free_lines = [
        f"{room.name}: free {format_resources(room.allocatable - room.requested)}"
        for room in rooms.values()
    ]
    if not env.nodes.items:
        return [
            finding(
                CHECK,
                Status.FAIL,
                Basis.MEASURED,
                "capacity.no-eligible-machine",
                details=("the cluster lists no nodes",),
                why="there are no machines",
                todo="Add a machine to the cluster",
            )
        ]
    if request is None:
        return [finding(CHECK, Status.OK, Basis.MEASURED, "capacity.free-only", details=free_lines)]
    size = format_resources(request)
    eligible: list[MachineRoom] = []
    excluded: dict[str, list[str]] = {}
    for node in env.nodes.items:
        reason = exclusion(node, spec)
        if reason is None:
            eligible.append(rooms[o.name_of(node)])
        else:
            excluded.setdefault(reason, []).append(o.name_of(node))
    details = [f"job size {size} (from {source})"]
    details += [f"excluded ({reason}): {', '.join(names)}" for reason, names in excluded.items()]
    stuck = _stuck_job_pods(env, usage.pods_here)
    stuck_lines = [
        f"pod {o.name_of(p)} of job {o.job_owner(p)} unscheduled for "
        f"{format_age(env.now - (o.created_at(p) or env.now))}"
        for p in stuck
    ]
    objects = [f"Node/{room.name}" for room in eligible]
    if not eligible:
        return [
            finding(
                CHECK,
                Status.FAIL,
                Basis.MEASURED,
                "capacity.no-eligible-machine",
                details=details + stuck_lines,
                why=_exclusion_words(excluded),
                todo=_exclusion_remedy(env, excluded),
            )
        ]
    fitting = [room for room in eligible if not shortfalls(request, room)]
    if fitting:
        best = fitting[0].name
        findings = [
            finding(
                CHECK,
                Status.OK,
                Basis.MEASURED,
                "capacity.fits",
                details=[*details, f"fits on {', '.join(r.name for r in fitting)}"],
                objects=[f"Node/{best}"],
                size=size,
            )
        ]
        if stuck:
            findings.append(_job_stuck(env, stuck, stuck_lines))
        return findings
    after_jobs = [
        room.without(*job_pods_by_machine[room.name][:2])
        if room.name in job_pods_by_machine
        else room
        for room in eligible
    ]
    if job_pods_by_machine and any(not shortfalls(request, room) for room in after_jobs):
        jobs = sorted(
            {o.job_owner(p) or "" for p in usage.pods_here if o.job_owner(p) and o.node_name(p)}
        )
        holders = [f"{m}: {', '.join(v[2])}" for m, v in job_pods_by_machine.items()]
        held = "; ".join(
            f"{format_resources(v[0])} on {m}" for m, v in sorted(job_pods_by_machine.items())
        )
        return [
            finding(
                CHECK,
                Status.WARN,
                Basis.INFERRED,
                "capacity.held-by-running-job",
                details=[
                    *details,
                    *(f"held by training job pods on {h}" for h in holders),
                    *stuck_lines,
                ],
                objects=objects,
                jobs=f"the running training job{'s' if len(jobs) != 1 else ''} "
                + _and([f"'{j}'" for j in jobs]),
                held=held,
            )
        ]
    empty = [room.emptied() for room in eligible]
    could_host = [room for room in eligible if not shortfalls(request, room.emptied())]
    near = closest(request, could_host)
    if near is not None:
        room, missing = near
        named = _largest_holders(env, usage, room.name, missing)
        held_by = (
            f"the room it needs on {room.name} is held by {_and(named)}"
            if named
            else "other programs use the room it needs"
        )
        return [
            finding(
                CHECK,
                Status.FAIL,
                Basis.MEASURED,
                "capacity.blocked-by-other-work",
                details=[*details, _closest_words(near), *stuck_lines],
                objects=objects,
                size=size,
                holders=held_by,
                machine=room.name,
                closest=_closest_words(near),
            )
        ]
    near = closest(request, empty)
    return [
        finding(
            CHECK,
            Status.FAIL,
            Basis.MEASURED,
            "capacity.too-large",
            details=[*details, _closest_words(near) + " even when empty", *stuck_lines],
            objects=objects,
            size=size,
            closest=_closest_words(near) + " even when empty",
        )
    ]


_JobPodsOnMachine = tuple[Resources, int, list[str]]


def _machine_rooms(
    nodes: tuple[KubeObject, ...], usage: ClusterUsage
) -> tuple[dict[str, MachineRoom], dict[str, _JobPodsOnMachine]]:
    """Each machine's room with every non-terminated pod bound to it counted (Pending too), and
    what this namespace's training job pods hold on each machine."""
    rooms = {}
    for node in nodes:
        room = machine_room(node)
        requested, pods = usage.reserved_on(room.name)
        rooms[room.name] = replace(room, requested=requested, pod_count=pods)
    job_pods: dict[str, _JobPodsOnMachine] = {}
    for pod in usage.pods_here:
        machine = o.node_name(pod)
        if machine in rooms and o.job_owner(pod):
            held, count, names = job_pods.get(machine, (Resources(), 0, []))
            requests = pod_requests(o.pod_spec(pod))
            job_pods[machine] = (held + requests, count + 1, [*names, o.name_of(pod)])
    return rooms, job_pods


def _invalid_amount(env: Environment, error: str) -> Finding:
    cant = CantRead(ReadFailure.MALFORMED, f"a resource amount in the cluster is invalid: {error}")
    return cant_check(env, CHECK, Kind.POD, cant, everywhere=True)


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
    """One step per reason the machines are out of reach, each with the command that does it."""
    kubectl = env.settings.kubectl
    steps = []
    tainted: dict[str, list[str]] = {}
    for reason, names in excluded.items():
        if reason == "cordoned":
            steps.append(
                f"open {_and(names)} to new work again with {kubectl.cluster('uncordon', *names)}"
            )
        elif (taint := _TAINT.match(reason)) is not None:
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
            f"let training jobs onto the reserved machines {_and(names)} in their settings, or "
            f"lift the reservation with {kubectl.cluster('taint', 'nodes', *names, key + '-')}"
        )
    return sentence("; or ".join(dict.fromkeys(steps)))


def _job_stuck(env: Environment, stuck: list[KubeObject], lines: list[str]) -> Finding:
    oldest = min(stuck, key=lambda p: str(o.created_at(p)))
    age = env.now - (o.created_at(oldest) or env.now)
    return finding(
        CHECK,
        Status.FAIL,
        Basis.INFERRED,
        "capacity.job-stuck",
        details=[*lines, *_scheduler_messages(stuck)],
        objects=[o.ref(p) for p in stuck],
        job=f"'{o.job_owner(oldest)}'",
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


def _closest_words(near: tuple[MachineRoom, list[Any]] | None) -> str:
    if near is None:
        return "no machine"
    room, missing = near
    return f"best machine {room.name} is {', '.join(str(s) for s in missing)}"


def _exclusion_words(excluded: Mapping[str, list[str]]) -> str:
    parts = []
    for reason, names in excluded.items():
        count = len(names)
        noun = "machine" if count == 1 else "machines"
        plain = {
            "cordoned": "closed to new work",
            "nodeSelector does not match": "outside the job's placement rules",
            "required node affinity does not match": "outside the job's placement rules",
        }.get(reason, "reserved for other work")
        parts.append(f"{count} {noun} {plain}")
    return ", ".join(parts)
