"""Which machines can take the training job's pods, and how much room each has: the node
filters' exclusions per pod set, the room left by what runs, the machines kept for a resource;
and the job judged against them (`Judged`), which every verdict reads.
"""

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind, KubeObject, Listed, ReadFailure
from truegreen.doctor.checks.base import format_age
from truegreen.doctor.checks.capacity.filters.framework import DeviceRoom, Found
from truegreen.doctor.checks.capacity.filters.rules import Rules, node_exclusion
from truegreen.doctor.checks.capacity.named_machine import named_machine
from truegreen.doctor.checks.capacity.placement import Placement, PodGroup, place
from truegreen.doctor.checks.capacity.preemption import (
    with_nominated,
)
from truegreen.doctor.checks.capacity.rule_findings import (
    job_rules,
    no_machine_left,
    unchecked,
    with_devices,
    with_unchecked,
)
from truegreen.doctor.checks.capacity.shape import (
    Group,
    JobPodsOnMachine,
    Shape,
    job_shape,
    joined_words,
    judged_priority,
    pod_set_line,
    priority_line,
    size_words,
    stuck_job_pods,
)
from truegreen.doctor.checks.capacity.words import (
    FREE_ONLY,
    NO_ELIGIBLE_MACHINE,
    SAY,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.fit import (
    MachineRoom,
    format_resources,
    machine_room,
    pod_requests,
)
from truegreen.doctor.knowledge.last_answer import LastAnswer
from truegreen.doctor.knowledge.stored_pod import (
    PriorityLevel,
    kept_for,
)
from truegreen.doctor.knowledge.taints import reserves_resource, system_taint
from truegreen.doctor.knowledge.training import (
    training_owner,
)
from truegreen.doctor.knowledge.usage import ClusterUsage, MachineUsage
from truegreen.kubectl import truegreen_command
from truegreen.patterns import LazyPattern
from truegreen.plain_words import merged_counts, sentence
from truegreen.quantity import QuantityError, Resources

_TAINT_REASON = LazyPattern(r"^taint ([^=]+)=")
"""A reserved machine's reason from `node_exclusion`: `taint KEY=VALUE:EFFECT not tolerated`
(compiled on first use: only a job some machines are kept from matches it)."""


class Judged(Struct, frozen=True):
    """What the verdict steps share: the pods to place, where they may go, the room now."""

    env: Environment
    usage: ClusterUsage
    shape: Shape
    rooms: Mapping[str, MachineRoom]
    job_pods: Mapping[str, JobPodsOnMachine]
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
    unread: CantRead | None = None
    """The cluster-wide pods read that failed, when the machines are judged as if empty
    (`_as_if_empty`): only what the machines alone decide may be said then."""
    preempting: tuple[PodGroup, ...] = ()
    """The pods to place with the machines the filters took from them that preemption gives
    back (every pod that refuses one there of a lower priority than the job's), where that
    adds any; () when it adds none."""
    refused: tuple[Finding, ...] = ()
    """The verdict when some pod set has no machine left but preemption could give it one:
    it stands unless preemption places the job."""

    @property
    def size(self) -> str:
        """The job's programs with the devices each claims for itself (`2 CPUs, 1
        gpu.nvidia.com devices, 8 GiB memory`): a size without them would not be what fails to
        fit."""
        return size_words(
            [
                replace(g, requests=g.requests + self.rules.devices.of(g.name))
                for g in self.shape.groups
            ]
        )

    def emptied(self, rooms: Mapping[str, MachineRoom] | None = None) -> dict[str, MachineRoom]:
        """The machines (`rooms`, else the room now) with nothing on them but the judged job's
        own pods already placed: a job waiting for the rest of its pods gets none of its own
        room back, so those pods are never other work to stop, nor room it could have."""
        rooms = self.rooms if rooms is None else rooms
        own = self._own_placed()
        emptied = {}
        for name, room in rooms.items():
            pods = own.get(name, [])
            held = sum((pod_requests(o.pod_spec(p)) for p in pods), Resources())
            emptied[name] = replace(room.emptied(), requested=held, pod_count=len(pods))
        return emptied

    def own_lines(self) -> list[str]:
        """Where the judged job's own placed pods hold their room, for a verdict's details."""
        return [
            f"{len(pods)} of the job's own programs already on {machine} keep their room there"
            for machine, pods in sorted(self._own_placed().items())
        ]

    def _own_placed(self) -> dict[str, list[KubeObject]]:
        """The judged job's own pods already on a machine, by machine."""
        placed: dict[str, list[KubeObject]] = {}
        for pod in self.usage.pods_here:
            if o.name_of(pod) in self.shape.own_pods and o.node_name(pod):
                placed.setdefault(o.node_name(pod), []).append(pod)
        return placed


def prepare(env: Environment, tolerate: bool) -> Judged | list[Finding]:
    """The placement now, and everything a verdict names; or the findings that end the check
    before any placement (a read missing, no machine, no job, no machine the job may use)."""
    if isinstance(env.nodes, CantRead):
        return [SAY.cant_check(env, Kind.NODE, env.nodes)]
    usage = env.cluster_usage
    if isinstance(usage, CantRead):
        return _as_if_empty(env, env.nodes.items, tolerate, usage)
    shape = job_shape(env, usage, tolerate)
    if isinstance(shape, Finding):
        return [shape]
    if usage.invalid:
        return [_invalid_amount(env, usage.invalid)]
    level = judged_priority(env)
    try:
        rooms, job_pods = _machine_rooms(env.nodes.items, usage, shape, level)
    except QuantityError as error:  # only a hand-edited snapshot gets here
        return [_invalid_amount(env, str(error))]
    if not env.nodes.items:
        return [_no_machines()]
    if shape is None:
        free_lines = [
            f"{room.name}: free {format_resources(room.allocatable - room.requested)}"
            for room in rooms.values()
        ]
        return [SAY.finding(Status.OK, Basis.MEASURED, FREE_ONLY, details=free_lines)]
    details = _job_lines(shape, level)
    named = [g for g in shape.groups if named_machine(g.spec)]
    scheduled = tuple(g for g in shape.groups if not named_machine(g.spec))
    # Admitted named sets are placed with the rest, on their one machine each, by room alone.
    fixed = tuple(PodGroup(g.name, g.count, g.requests, (named_machine(g.spec),)) for g in named)
    said = _refusals(env, shape, named)
    # A job whose pods are all bound has none waiting for a kubelet: its named sets are a next
    # run's, placed by room like the scheduler's (its own pods then hold their room).
    to_admit = [g for g in named if g.name in said or not shape.all_bound]
    claimed = Found()
    if to_admit:
        # Imported on use: only a job with a pod set that names its machine runs them (doctor's
        # start-up on a small namespace, bench/imports.py).
        from truegreen.doctor.checks.capacity.kubelet_admission import (
            admitted,
            bound_ports,
            fits,
            verdict,
        )
        from truegreen.doctor.checks.capacity.named_devices import shared_claims, with_claims

        # No scheduler sees these sets: their machines' kubelets admit them, on the room that
        # what is bound there leaves (nominations are the scheduler's, not theirs); what a
        # kubelet already said of the job's pods is its answer.
        answers = admitted(
            to_admit,
            env.nodes.items,
            _last_rooms(env.nodes.items, usage.machines),
            said,
            # The namespace's whole pods (unread, the workloads check says so), and the other
            # namespaces' pods that hold host ports, as the capacity fold keeps them.
            bound_ports(
                env.pods.items if isinstance(env.pods, Listed) else (),
                shape.own_pods,
                [p for p in usage.rule_pods or () if o.namespace_of(p) != env.namespace],
            ),
        )
        # No scheduler allocates what these sets claim: judged apart from the placement's rules.
        shared = {c for g in scheduled for c in shared_claims(g.spec)}
        answers = [
            with_claims(
                answer,
                group,
                env.devices,
                env.nodes.items,
                env.namespace,
                shared,
                env.settings.kubectl,
                claimed,
            )
            for group, answer in zip(to_admit, answers, strict=True)
        ]
        refused = verdict(env, answers, details)
        if refused is not None:
            return [refused]
        if not scheduled and not shape.all_bound:
            return with_unchecked(
                [fits(answers, size_words(shape.groups), details)], _unknown(env, claimed)
            )
        details += [f"{a.group} names {a.machine}: {a.outcome} by its kubelet" for a in answers]
    allowed, excluded = _eligibility(env.nodes.items, scheduled)
    details += [f"excluded ({reason}): {', '.join(names)}" for reason, names in excluded.items()]
    stuck = stuck_job_pods(env, usage.pods_here)
    stuck_lines = [
        f"pod {o.name_of(p)} of job {training_owner(p)} unscheduled for "
        f"{format_age(env.now - (o.created_at(p) or env.now))}"
        for p in stuck
    ]
    if any(g.name not in allowed for g in scheduled):
        return [
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                NO_ELIGIBLE_MACHINE,
                details=details + stuck_lines,
                why=exclusion_words(env, excluded),
                todo=exclusion_remedy(env, excluded),
            )
        ]
    rules = job_rules(env, shape.job, [(g.name, g.spec) for g in scheduled], shape.own_pods)
    narrowed = {g.name: rules.allowed(g.name, allowed[g.name]) for g in scheduled}
    widened = _preemption_gives_back(rules, level, allowed, narrowed)
    lost_all: tuple[Finding, ...] = ()
    if any(not machines for machines in narrowed.values()):
        theirs = (
            (exclusion_words(env, excluded), exclusion_remedy(env, excluded))
            if excluded
            else ("", "")
        )
        lost = no_machine_left(
            env, rules, [g for g, m in narrowed.items() if not m], details + stuck_lines, theirs
        )
        if any(not machines for machines in widened.values()):
            return [lost, *unchecked(env, rules)]
        lost_all = (lost,)
    rooms = with_devices(rooms, rules.devices)
    job_pods = _with_held_devices(job_pods, rules.devices)
    pod_groups = (
        tuple(
            PodGroup(
                g.name,
                g.count,
                g.requests + rules.devices.of(g.name),
                tuple(sorted(narrowed[g.name])),
                rules=rules.rules_of(g.name),
            )
            for g in scheduled
        )
        + fixed
    )
    plain = (
        tuple(
            PodGroup(g.name, g.count, g.requests, tuple(sorted(allowed[g.name]))) for g in scheduled
        )
        + fixed
    )
    eligible = sorted({m for names in narrowed.values() for m in names})
    return Judged(
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
        (*unchecked(env, rules), *_unknown(env, claimed)),
        preempting=tuple(
            replace(g, machines=tuple(sorted(widened[g.name]))) if g.name in widened else g
            for g in pod_groups
        )
        if widened != narrowed
        else (),
        refused=lost_all,
    )


def _preemption_gives_back(
    rules: Rules,
    level: PriorityLevel | CantRead,
    allowed: Mapping[str, Sequence[str]],
    narrowed: dict[str, list[str]],
) -> dict[str, list[str]]:
    """Per pod set, its machines the filters leave it, with those a job that preempts gets
    back: taken by lower-priority pods' ports or anti-affinity alone, which the scheduler tries
    with those pods removed (filters/framework.py `Blocker`); `narrowed` for a job that never
    preempts or whose priority is not known."""
    if not isinstance(level, PriorityLevel) or not level.preempts:
        return narrowed
    return {name: rules.allowed_preempting(name, allowed[name], level.value) for name in narrowed}


def _no_machines() -> Finding:
    """The cluster lists no node: no machine may take the job, whatever runs."""
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        NO_ELIGIBLE_MACHINE,
        details=("the cluster lists no nodes",),
        why="there are no machines",
        todo="Add a machine to the cluster",
    )


def _job_lines(shape: Shape, level: PriorityLevel | CantRead) -> list[str]:
    """The job's size, its pod sets and its priority, for a verdict's details."""
    details = [f"job size {size_words(shape.groups)} (from {shape.source})"]
    if shape.job is not None:
        details.append(pod_set_line(shape.job))
    if isinstance(level, CantRead) or level.value or level.class_name:
        details.append(priority_line(level))
    return details


def _unread_line(unread: CantRead) -> str:
    """The detail a verdict judged on machines as if empty carries."""
    return f"the machines' current use was not read ({unread.reason}): judged as if empty"


def _as_if_empty(
    env: Environment, nodes: tuple[KubeObject, ...], tolerate: bool, unread: CantRead
) -> Judged | list[Finding]:
    """The job judged on the machines as if nothing ran on them, where the cluster's pods
    could not be read: what the machine objects alone decide stands (no node at all; no
    machine some pod set may use: closed, reserved by a taint, outside its node selector or
    required node affinity, `node_exclusion` as kube-scheduler's NodeUnschedulable,
    TaintToleration, NodeAffinity filters judge them from the Node alone); the rest is a
    `Judged` with `unread` set, whose verdict only says what room alone decides (check.py).
    Each pod set is placed on every machine it may use, by its own requests only: fewer
    devices and more machines than the filters' rules (some of which read other pods: inter-pod
    affinity, topology spread) could leave, so a job that does not fit so fits nowhere."""
    unknown = [SAY.cant_check(env, Kind.POD, unread, everywhere=True)]
    blank = ClusterUsage()
    shape = job_shape(env, blank, tolerate)
    if isinstance(shape, Finding):
        # The job's own size or runtime is wrong whatever runs; with another read missing,
        # the pods' read is the one named, as before.
        return [shape] if shape.status is Status.FAIL else unknown
    if shape is None:
        return unknown  # the free room is what the pods would have said
    if not nodes:
        return [_no_machines()]
    level = judged_priority(env)
    details = [*_job_lines(shape, level), _unread_line(unread)]
    # A set that names its machine is admitted by its kubelet on the room what is bound
    # there leaves: not known.
    scheduled = tuple(g for g in shape.groups if not named_machine(g.spec))
    allowed, excluded = _eligibility(nodes, scheduled)
    details += [f"excluded ({reason}): {', '.join(names)}" for reason, names in excluded.items()]
    if any(g.name not in allowed for g in scheduled):
        return [
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                NO_ELIGIBLE_MACHINE,
                details=details,
                why=exclusion_words(env, excluded),
                todo=exclusion_remedy(env, excluded),
            )
        ]
    if len(scheduled) < len(shape.groups):
        return unknown
    try:
        rooms = _rooms(nodes, {})
    except QuantityError as error:  # only a hand-edited snapshot gets here
        return [_invalid_amount(env, str(error))]
    groups = tuple(
        PodGroup(g.name, g.count, g.requests, tuple(sorted(allowed[g.name]))) for g in scheduled
    )
    eligible = sorted({m for names in allowed.values() for m in names})
    return Judged(
        env,
        blank,
        shape,
        rooms,
        {},
        groups,
        place(groups, rooms),
        tuple(details),
        (),
        (),
        tuple(f"Node/{name}" for name in eligible),
        {reason: tuple(names) for reason, names in excluded.items()},
        level,
        plain_groups=groups,
        unread=unread,
    )


def _unknown(env: Environment, claimed: Found) -> list[Finding]:
    """What the named sets' device claims left unjudged, as findings."""
    return unchecked(env, Rules(unchecked=tuple(claimed.unchecked), failed=tuple(claimed.failed)))


def _with_held_devices(
    job_pods: Mapping[str, JobPodsOnMachine], devices: DeviceRoom
) -> dict[str, JobPodsOnMachine]:
    """What the namespace's running training jobs hold on each machine, with the devices their
    pods' claims hold there: those come back when the jobs finish, as their pods' requests do."""
    finishing = {name for _, _, names, _ in job_pods.values() for name in names}
    return {
        machine: (held + devices.held_by(machine, finishing), count, names, jobs)
        for machine, (held, count, names, jobs) in job_pods.items()
    }


def _refusals(env: Environment, shape: Shape, named: Sequence[Group]) -> dict[str, KubeObject]:
    """Per named pod set, the job's newest pod the kubelet of its machine turned away."""
    job = shape.job
    if job is None or not named:
        return {}
    from truegreen.doctor.checks.capacity.kubelet_admission import kubelet_refusal

    pods = env.pods_of(job)
    found = {g.name: kubelet_refusal(job, pods, g) for g in named}
    return {name: pod for name, pod in found.items() if pod is not None}


def _eligibility(
    nodes: Sequence[KubeObject], groups: Sequence[Group]
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


def _machine_rooms(
    nodes: tuple[KubeObject, ...],
    usage: ClusterUsage,
    shape: Shape | None,
    level: PriorityLevel | CantRead,
) -> tuple[Mapping[str, MachineRoom], dict[str, JobPodsOnMachine]]:
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
    job_pods: dict[str, JobPodsOnMachine] = {}
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
has the same machines and the same sums."""


_last_kept = LastAnswer(lambda nodes: dict[frozenset[str], list[str]]())


def kept_machines(nodes: Sequence[KubeObject], resources: Iterable[str]) -> list[str]:
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


def exclusion_remedy(env: Environment, excluded: Mapping[str, list[str]]) -> str:
    """One step per reason the machines are out of reach, each with the command that does it.
    A taint a controller owns is never removed: the step is about the machine it marks."""
    kubectl = env.settings.kubectl
    steps = []
    tainted: dict[str, list[str]] = {}
    for reason, names in excluded.items():
        taint = _TAINT_REASON.match(reason)
        key = (
            "node.kubernetes.io/unschedulable"
            if reason == "cordoned"
            else (taint.group(1) if taint is not None else "")
        )
        known = system_taint(key)
        if key == "node.kubernetes.io/unschedulable":
            # An administrator closes a machine on purpose (a drain for maintenance).
            steps.append(
                f"if the maintenance on {joined_words(names)} is done, open them to new work "
                "again with "
                f"{kubectl.cluster('uncordon', *names)} (an administrator may have closed them "
                "on purpose)"
            )
        elif known is not None:
            steps.append(
                known.todo.format(
                    names=joined_words(names), check=kubectl.cluster("describe", "node", names[0])
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
    requested = requested_resources(env)
    nodes = _listed_nodes(env)
    for key, names in tainted.items():
        toleration = f"`tolerations: [{{key: {key}, operator: Exists}}]`"
        if key in requested:
            # Keyed by a resource the job asks for: the mark that keeps other work off the GPU
            # machines, which the API server's ExtendedResourceToleration (where it runs) lets
            # such a job past. Never offered for removal.
            steps.append(
                f"let training jobs onto the machines kept for '{key}' ({joined_words(names)}) "
                f"with {toleration} in their settings; "
                f"{truegreen_command('doctor', '--admission-dry-run')} shows whether the cluster "
                "adds it on its own"
            )
            continue
        if reserves_resource(key, nodes):
            # Kept for the work that asks for that resource, which this job does not: lifting
            # the mark would let every such program onto those machines (`reserves_resource`).
            # What fits is a machine or a job of the right size, or the job let in on purpose.
            steps.append(
                "add a machine big enough for the training job that is not kept for other "
                "work, or make the job small enough for the machines that are not; only if it "
                "should take room on the machines "
                f"kept for '{key}' ({joined_words(names)}) even so, let it in with "
                f"{toleration} in its settings"
            )
            continue
        steps.append(
            f"let training jobs onto the reserved machines {joined_words(names)} in their "
            "settings, or, "
            "if nobody reserved them on purpose, lift the reservation with "
            f"{kubectl.cluster('taint', 'nodes', *names, key + '-')}"
        )
    return sentence("; or ".join(dict.fromkeys(steps)))


def _listed_nodes(env: Environment) -> tuple[KubeObject, ...]:
    """The machines as read; none where they could not be (no verdict names a machine then)."""
    return env.nodes.items if isinstance(env.nodes, Listed) else ()


def requested_resources(env: Environment) -> frozenset[str]:
    """The resources the judged job's pods ask for (`nvidia.com/gpu`, ...), and those of
    --job-requests."""
    given = env.settings.job_requests
    names = set(given.names if given is not None else ())
    job = env.judged_job()
    for pod_set in job.pod_sets if job is not None else ():
        try:
            names |= pod_requests(pod_set.spec).names
        except QuantityError:  # the job's size is the finding; the names it asks for still count
            names |= {
                str(name)
                for container in o.containers(pod_set.spec)
                for part in ("requests", "limits")
                for name in o.mapping(o.mapping(container.get("resources")).get(part))
            }
    return frozenset(names)


def exclusion_words(env: Environment, excluded: Mapping[str, list[str]]) -> str:
    """`1 machine is not ready, 2 machines are outside the job's placement rules`; reasons that
    read the same (two taints, both `reserved for other work`) are one count. Machines kept
    for a resource the job does not ask for (`reserves_resource`) say which resource."""
    parts = []
    requested = requested_resources(env)
    nodes = _listed_nodes(env)
    for reason, names in excluded.items():
        taint = _TAINT_REASON.match(reason)
        known = system_taint(taint.group(1)) if taint is not None else None
        if known is not None:
            parts.append((len(names), known.one, known.many))
            continue
        if (
            taint is not None
            and taint.group(1) not in requested
            and reserves_resource(taint.group(1), nodes)
        ):
            kept = f"kept for work that asks for '{taint.group(1)}'"
            parts.append((len(names), f"is {kept}", f"are {kept}"))
            continue
        plain = {
            "cordoned": "closed to new work",
            "nodeSelector does not match": "outside the job's placement rules",
            "required node affinity does not match": "outside the job's placement rules",
        }.get(reason, "reserved for other work")
        parts.append((len(names), f"is {plain}", f"are {plain}"))
    return ", ".join(
        f"{count} machine{'s' if count != 1 else ''} {one if count == 1 else many}"
        for count, one, many in merged_counts(parts)
    )
