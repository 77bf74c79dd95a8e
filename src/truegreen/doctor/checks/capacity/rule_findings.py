"""The capacity check's findings from the scheduler's filters
(doctor/checks/capacity/filters/rules.py).

The capacity check places the job within the filters' rules; this module gives it the rules,
the machines' device room, and the findings they lead to: no machine left, a job that would fit
by room alone but not by its rules, and each rule doctor could not evaluate (unknown: a job
that fits by every other rule is not called ready while one is unknown).
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from truegreen.cluster import Listed
from truegreen.doctor.checks.capacity.filters.dynamic_resources import device_rules
from truegreen.doctor.checks.capacity.filters.framework import (
    DeviceRoom,
    Exclusion,
    Found,
    JobPodSet,
)
from truegreen.doctor.checks.capacity.filters.rules import Rules, scheduling_rules
from truegreen.doctor.checks.capacity.named_machine import named_machine
from truegreen.doctor.checks.capacity.placement import Placement, PodGroup, place
from truegreen.doctor.checks.capacity.words import (
    NO_ELIGIBLE_MACHINE,
    RULE_UNCHECKED,
    RULES_BLOCK,
    SAY,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.fit import MachineRoom
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.doctor.knowledge.usage import ClusterUsage
from truegreen.plain_words import sentence

CHECK = CheckId.CAPACITY
PlacementWords = Callable[[Placement, bool], str]
"""How close a placement came, in plain words (`empty`: on emptied machines)."""


def job_rules(
    env: Environment,
    job: TrainingJob | None,
    groups: Sequence[tuple[str, Mapping[str, Any]]],
    own_pods: frozenset[str] = frozenset(),
) -> Rules:
    """The filters' rules for placing `groups` (pod set name, pod spec) of the judged job,
    whose `own_pods` are already placed while it waits for the rest."""
    if job is None or not isinstance(env.nodes, Listed):
        return Rules()
    labels = {s.name: s.labels for s in job.pod_sets}
    return scheduling_rules(
        [JobPodSet(name, spec, labels.get(name, {})) for name, spec in groups],
        namespace=env.namespace,
        namespace_labels=env.namespace_labels(),
        nodes=env.nodes.items,
        pods=env.pods,
        claims=env.claims,
        volumes=env.volumes,
        storage_types=env.storage_types,
        made_volumes=env.made_volumes,
        drivers=env.csi_drivers,
        devices=env.devices,
        kubectl=env.settings.kubectl,
        own_pods=own_pods,
        rule_pods=env.cluster_usage.rule_pods
        if isinstance(env.cluster_usage, ClusterUsage)
        else None,
    )


def claimed_devices(env: Environment, job: TrainingJob | None) -> Mapping[str, tuple[str, ...]]:
    """Per kind of device the pod sets of `job` that the scheduler places claim, the machines
    that have such devices, free or not (empty when none claims any, or when they can't be
    counted: the placement's rules say why)."""
    if job is None or not isinstance(env.nodes, Listed):
        return {}
    sets = [JobPodSet(s.name, s.spec, s.labels) for s in job.pod_sets if not named_machine(s.spec)]
    room = device_rules(
        sets, env.namespace, env.nodes.items, env.devices, env.settings.kubectl, Found()
    )
    return dict(room.offered)


def with_devices(
    rooms: Mapping[str, MachineRoom], devices: DeviceRoom
) -> Mapping[str, MachineRoom]:
    """Each machine's room with its devices: the devices there as allocatable, those allocated
    as requested (so that an emptied machine has them all free). With no device on any machine,
    the very `rooms`: what is computed from them stays known (doctor/knowledge/last_answer.py)."""
    if not devices.machines:
        return rooms
    grown = {}
    for name, room in rooms.items():
        there, used = devices.on(name)
        grown[name] = replace(
            room, allocatable=room.allocatable + there, requested=room.requested + used
        )
    return grown


def unchecked(env: Environment, rules: Rules) -> list[Finding]:
    """One unknown finding per rule doctor could not evaluate and per read a rule needed."""
    found = [
        SAY.cant_check(
            env, failed.kind, failed.cant, everywhere=failed.everywhere, listed=failed.listed
        )
        for failed in rules.failed
    ]
    for rule in rules.unchecked:
        unknown = SAY.finding(
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            RULE_UNCHECKED,
            details=(rule.detail,),
            rule=rule.rule,
            why=rule.why,
            todo=rule.todo,
        )
        found.append(replace(unknown, why=rule.why))
    return found


def with_unchecked(verdict: list[Finding], unknown: Sequence[Finding]) -> list[Finding]:
    """The verdict, and the rules not evaluated: a job that fits by every other rule is unknown
    while one is not evaluated, never ready; a failure stands (a rule only ever takes room)."""
    if not unknown:
        return verdict
    return [*(f for f in verdict if f.status is not Status.OK), *unknown]


def _words(exclusions: Sequence[Exclusion]) -> str:
    """`2 machines can't reach its volume 'datasets'`; a refusal of every machine on its own."""
    parts: dict[str, set[str]] = {}
    alone = []
    for exclusion in exclusions:
        if exclusion.everywhere:
            alone.append(exclusion.reason)
        else:
            parts.setdefault(exclusion.reason, set()).update(exclusion.machines)
    counted = [
        f"{len(machines)} machine{'s' if len(machines) != 1 else ''} {reason}"
        for reason, machines in parts.items()
    ]
    return ", ".join(dict.fromkeys([*alone, *counted]))


def no_machine_left(
    env: Environment,
    rules: Rules,
    groups: Sequence[str],
    details: Sequence[str],
    theirs: tuple[str, str],
) -> Finding:
    """No machine is left to some pod set once the filters took theirs: what took them, and
    the steps that give them back. `theirs`: the words and steps of the machines' own
    exclusions (closed, reserved, placement rules), "" when there were none."""
    taken = [e for e in rules.exclusions if e.group in groups]
    why = ", ".join(w for w in (theirs[0], _words(taken)) if w)
    steps = [s for s in (theirs[1], *(e.todo for e in taken)) if s]
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED if all(e.measured for e in taken) else Basis.INFERRED,
        NO_ELIGIBLE_MACHINE,
        details=[*details, *rules.details],
        why=why,
        todo=sentence("; or ".join(dict.fromkeys(steps)).rstrip(".")),
    )


def blocked_by_rules(
    groups: Sequence[PodGroup],
    plain: Sequence[PodGroup],
    rooms: Mapping[str, MachineRoom],
    now: Placement,
    rules: Rules,
    words: PlacementWords,
    size: str,
    details: Sequence[str],
    objects: Sequence[str],
) -> Finding | None:
    """The job would fit by room alone (now, or on emptied machines), not within the filters'
    rules: the rule, or the machines it took away, is what stops it."""
    if now.whole:
        return None
    placement = now
    empty = False
    if not place(plain, rooms).whole:
        emptied = {name: room.emptied() for name, room in rooms.items()}
        placement = place(groups, emptied)
        if placement.whole or not place(plain, emptied).whole:
            return None
        empty = True
    unplaced = placement.unplaced
    assert unplaced is not None  # not whole
    if unplaced.rule:
        why = words(placement, empty)
        todo = rules.todo(unplaced.rule)
        measured = unplaced.measured
    else:
        taken = [e for e in rules.exclusions if e.group == unplaced.group]
        why = (
            f"{_words(taken)}, and {words(placement, empty)}" if taken else words(placement, empty)
        )
        todo = "; or ".join(dict.fromkeys(e.todo for e in taken)) or (
            "free what it needs on the machines its rules allow, or add machines that have it"
        )
        measured = all(e.measured for e in taken)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED if measured and placement.proven else Basis.INFERRED,
        RULES_BLOCK,
        details=[*details, words(placement, empty), *rules.details],
        objects=objects,
        size=size,
        why=why,
        todo=todo,
    )
