"""Admission by the kubelet: a pod set whose template names its machine (`spec.nodeName`).

Such a pod is created already bound: kube-scheduler queues only pods without a machine
(pkg/scheduler/eventhandlers.go `assignedPod`), whatever its `schedulerName` says, so none of
the scheduler's filters, preemption or autoscaling apply. The kubelet of the named machine
admits it or turns it away: its admit handlers run in turn and the first refusal is the answer
(pkg/kubelet/kubelet.go `canAdmitPod`). Of those, judged here:

- the eviction manager's (pkg/kubelet/eviction/eviction_manager.go `(*managerImpl).Admit`):
  while the machine reports a pressure condition, every pod but a critical one is turned away
  (reason `Evicted`), under MemoryPressure alone only a BestEffort pod that does not tolerate
  the memory-pressure taint;
- the predicates' (pkg/kubelet/lifecycle/predicate.go `Admit`): requests of an extended
  resource the machine does not report at all are dropped before the fit check
  (`removeMissingExtendedResources`): a GPU pod named onto a machine without GPUs is
  admitted and runs without them; then `generalFilter`: room (NodeResourcesFit, reason
  `OutOfcpu`, `OutOfnvidia.com/gpu`...), the node selector and required node affinity, the
  host ports (NodePorts: the pods of one set all ask for the same ones, so one of them gets
  the machine; judged against the pods of every namespace active there and the job's named
  sets admitted before: other namespaces' pods as the capacity fold keeps them, those that
  hold a host port, none where a snapshot older than them kept none), then of
  the taints only the NoExecute ones the pod does not tolerate ("Kubelet is only interested
  in the NoExecute taint").

The other handlers (sysctls, AppArmor, the OS and architecture labels, ...) are not judged.
An admitted set's device claims, which decide whether the kubelet ever starts it, are judged in
doctor/checks/capacity/named_devices.py (`Outcome.UNCLAIMED`).
A turned-away pod is Failed at once (pkg/kubelet/kubelet.go `rejectPod`); no other machine is
tried.

No kubelet runs a pod bound to a machine the cluster does not list, and the pod garbage
collector deletes it (pkg/controller/podgc/gc_controller.go `gcOrphaned`); a machine that is
down runs nothing until it is back. Pure, but for the findings' words.
"""

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Final

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.container_resources import is_extended
from truegreen.doctor.checks.capacity.filters import node_affinity
from truegreen.doctor.checks.capacity.filters.node_ports import HostPort, conflict, host_ports
from truegreen.doctor.checks.capacity.machines_down import machine_down
from truegreen.doctor.checks.capacity.named_machine import named_machine
from truegreen.doctor.checks.capacity.shape import Group, joined_words
from truegreen.doctor.checks.capacity.words import (
    FITS,
    NAMED_MACHINE_UNFIT,
    NO_ELIGIBLE_MACHINE,
    SAY,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.fit import MachineRoom, shortfalls, tolerates
from truegreen.doctor.knowledge.taints import system_taint
from truegreen.doctor.knowledge.training import TrainingJob, pod_set_of
from truegreen.quantity import CPU, MEMORY, PODS, QuantityError, Resources, parse_quantity


class Outcome(StrEnum):
    """What becomes of a pod set named onto a machine."""

    ADMITTED = "admitted"
    NO_SUCH_MACHINE = "no such machine"
    DOWN = "down"
    TURNED_AWAY = "turned away"
    WITHOUT_DEVICES = "without devices"
    """Admitted with the requests of resources the machine does not report dropped."""
    UNCLAIMED = "devices never allocated"
    """Admitted, and never started: nobody allocates the devices it claims there
    (doctor/checks/capacity/named_devices.py)."""


class Admission(Struct, frozen=True):
    """The kubelet's answer for one pod set on the machine it names."""

    group: str
    machine: str
    outcome: Outcome
    words: str = ""
    """Why, in plain words, after `that machine ...` (empty when admitted)."""
    detail: str = ""
    """The same in the kubelet's terms, for --verbose."""
    room: MachineRoom | None = None
    """The machine with the set's pods counted, when admitted."""
    todo: str = ""
    """The step that lets it run, when the outcome's own step is not it."""


def _reported(node: KubeObject) -> frozenset[str]:
    return frozenset(str(k) for k in o.mapping(o.mapping(node.get("status")).get("allocatable")))


def _untolerated_no_execute(node: KubeObject, spec: Mapping[str, Any]) -> str:
    """The first NoExecute taint of `node` the pod spec does not tolerate, as `key=value`; ''
    when none."""
    tolerations = [o.mapping(t) for t in o.sequence(spec.get("tolerations"))]
    for taint in (o.mapping(t) for t in o.sequence(o.mapping(node.get("spec")).get("taints"))):
        if taint.get("effect") == "NoExecute" and not tolerates(tolerations, taint):
            return f"{taint.get('key')}={taint.get('value', '')}:NoExecute"
    return ""


PRESSURES: Final = {
    "MemoryPressure": "node.kubernetes.io/memory-pressure",
    "DiskPressure": "node.kubernetes.io/disk-pressure",
    "PIDPressure": "node.kubernetes.io/pid-pressure",
}
"""The eviction manager's node conditions, by the taint the node lifecycle controller marks
each with (whose words `knowledge/taints.py` holds)."""

SYSTEM_CRITICAL_PRIORITY: Final = 2_000_000_000
"""pkg/apis/scheduling `SystemCriticalPriority`: a pod of this priority or above is critical
(pkg/kubelet/types `IsCriticalPod`)."""


def _pressure_refusal(node: KubeObject, spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The pressure conditions for which the eviction manager's admit handler turns the pod
    away (pkg/kubelet/eviction/eviction_manager.go `(*managerImpl).Admit`, which runs before
    the predicates): every one but a critical pod's; under MemoryPressure alone only a
    BestEffort pod that does not tolerate the memory-pressure taint. Empty when admitted."""
    conditions = tuple(
        str(c.get("type"))
        for c in (o.mapping(c) for c in o.sequence(o.mapping(node.get("status")).get("conditions")))
        if c.get("type") in PRESSURES and c.get("status") == "True"
    )
    if not conditions or o.integer(spec.get("priority")) >= SYSTEM_CRITICAL_PRIORITY:
        return ()
    if conditions == ("MemoryPressure",):
        tolerations = [o.mapping(t) for t in o.sequence(spec.get("tolerations"))]
        memory = {"key": PRESSURES["MemoryPressure"], "effect": "NoSchedule"}
        if not _best_effort(spec) or tolerates(tolerations, memory):
            return ()
    return conditions


def _best_effort(spec: Mapping[str, Any]) -> bool:
    """No CPU or memory requested or limited above zero by any container or the pod: the
    BestEffort quality of service (pkg/apis/core/v1/helper/qos/qos.go `ComputePodQOS` counts
    a quantity only when `quantity.Cmp(zeroQuantity) == 1`, so `cpu: "0"` is none)."""
    parts = [o.mapping(spec.get("resources"))] + [
        o.mapping(c.get("resources")) for c in (*o.containers(spec), *o.init_containers(spec))
    ]
    return not any(
        _above_zero(value)
        for part in parts
        for kind in ("requests", "limits")
        for name, value in o.mapping(part.get(kind)).items()
        if name in (CPU, MEMORY)
    )


def _above_zero(value: object) -> bool:
    """Whether a stated amount is above zero; one that is not a quantity counts as stated (the
    API server stores none such, and the job's size says so where it is read)."""
    try:
        return parse_quantity(str(value)) > 0
    except QuantityError:
        return True


def _pressure_words(conditions: Sequence[str], past: bool = False) -> str:
    """`is short of disk space and is running out of process slots` (`was ...`, `past`)."""
    words = [
        known.one.replace("is ", "was ", 1) if past else known.one
        for known in (system_taint(PRESSURES.get(c, "")) for c in conditions)
        if known is not None
    ]
    return joined_words(words) if words else ("was" if past else "is") + " under pressure"


def _fitting(room: MachineRoom, requests: Resources, count: int) -> int:
    """How many of `count` pods asking `requests` the kubelet admits onto `room`, one by one."""
    fits = min(count, room.max_pods - room.pod_count)
    for resource, amount in requests.amounts:
        if amount > 0:
            free = room.allocatable.get(resource) - room.requested.get(resource)
            fits = min(fits, free // amount)
    return max(fits, 0)


REJECTED: Final = "Pod was rejected: "
"""How the kubelet begins the message of a pod it turned away (pkg/kubelet/kubelet.go
`rejectPod`, which also sets phase Failed and the handler's reason)."""

_CONDITIONS: Final = re.compile(r"The node had condition: \[([^\]]*)\]")
"""The eviction manager's refusal (pkg/kubelet/eviction/helpers.go `nodeConditionMessageFmt`,
"The node had condition: %v. ", the conditions as Go prints a slice)."""

_REFUSED_WORDS: Final = {
    "NodeAffinity": "the job's own rules about where it may run leave that machine out",
    "TaintToleration": "it is reserved for other work",
    "NodePorts": "a program there already holds a port the job needs",
}


def bound_ports(
    pods: Sequence[KubeObject],
    own: frozenset[str] = frozenset(),
    elsewhere: Sequence[KubeObject] = (),
) -> dict[str, list[HostPort]]:
    """Per machine, the host ports its active pods hold (a terminating one holds its ports
    until it is gone; a finished one holds none): the namespace's `pods` but for those named in
    `own`, and `elsewhere`, other namespaces' pods (the kubelet counts every pod it runs)."""
    bound: dict[str, list[HostPort]] = {}
    mine = (p for p in pods if o.name_of(p) not in own)
    for pod in (*mine, *elsewhere):
        machine = o.node_name(pod)
        if machine and not o.is_terminated(pod):
            bound.setdefault(machine, []).extend(host_ports(o.pod_spec(pod)))
    return bound


def kubelet_refusal(
    job: TrainingJob, pods: Sequence[KubeObject], group: Group
) -> KubeObject | None:
    """The newest of `job`'s pods of `group`'s set that the kubelet of the machine the set
    names turned away; None when there is none, or when every pod of the set runs there now
    (an older refusal is then spent)."""
    machine = named_machine(group.spec)
    size = next((s.count for s in job.pod_sets if s.name == group.name), group.count)
    mine = [p for p in pods if o.node_name(p) == machine and pod_set_of(job, p) == group.name]
    if sum(1 for p in mine if o.phase(p) == "Running") >= size:
        return None
    refused = [
        p
        for p in mine
        if o.phase(p) == "Failed"
        and str(o.mapping(p.get("status")).get("message") or "").startswith(REJECTED)
    ]
    return max(refused, key=_created, default=None)


def _created(pod: KubeObject) -> datetime:
    return o.created_at(pod) or datetime.min.replace(tzinfo=UTC)


def refused(group: Group, pod: KubeObject) -> Admission:
    """The kubelet's own answer for `group`: it turned `pod` away (the measurement)."""
    machine = named_machine(group.spec)
    status = o.mapping(pod.get("status"))
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or "")
    pressure = _CONDITIONS.search(message) if reason == "Evicted" else None
    plain = (
        f"it had too little {reason.removeprefix('OutOf')} left for it"
        if reason.startswith("OutOf")
        else "it " + _pressure_words(pressure.group(1).split(), past=True)
        if pressure is not None
        else _REFUSED_WORDS.get(reason, f"its kubelet said {reason or 'no reason'}")
    )
    return Admission(
        group.name,
        machine,
        Outcome.TURNED_AWAY,
        f"turned the job's program {o.name_of(pod)} away: {plain}",
        f"the kubelet on {machine} refused pod {o.name_of(pod)}: {reason}: {message}",
    )


def _turned_away(group: Group, words: str, reason: str) -> Admission:
    """The answer for a set its machine's kubelet refuses: `words` after "that machine",
    `reason` the kubelet's own, as it writes it on the pod."""
    machine = named_machine(group.spec)
    return Admission(
        group.name,
        machine,
        Outcome.TURNED_AWAY,
        words,
        f"the kubelet on {machine} refuses it: {reason}",
    )


def _counted(room: MachineRoom, requests: Resources, pods: int) -> MachineRoom:
    """`room` with `pods` more pods of `requests` bound to it."""
    added = room.requested + requests * pods
    return replace(room, requested=added, pod_count=room.pod_count + pods)


def admit(
    group: Group,
    node: KubeObject | None,
    room: MachineRoom | None,
    held: Sequence[HostPort] = (),
    bound: Sequence[HostPort] = (),
) -> Admission:
    """The kubelet's answer for `group`'s pods on the machine they name (`node` None: the
    cluster lists no such machine), in `Admit`'s order; `room` is the machine with what is
    bound to it counted, `held` the host ports the job's sets admitted before hold there,
    `bound` those the programs already active there hold."""
    machine = named_machine(group.spec)
    if node is None or room is None:
        return Admission(group.name, machine, Outcome.NO_SUCH_MACHINE)
    down = machine_down(node)
    if down is not None:
        return Admission(
            group.name,
            machine,
            Outcome.DOWN,
            "is down: nothing runs the job there until it is back",
            f"{machine}: {down}",
        )
    pressure = _pressure_refusal(node, group.spec)
    if pressure:
        return _turned_away(
            group,
            f"turns it away: it {_pressure_words(pressure)}",
            f"Evicted: The node had condition: [{' '.join(pressure)}].",
        )
    reported = _reported(node)
    dropped = sorted(r for r in group.requests.names if is_extended(r) and r not in reported)
    kept = Resources.of({r: a for r, a in group.requests.amounts if r not in dropped})
    fitting = _fitting(room, kept, group.count)
    if fitting < group.count:
        short = shortfalls(kept, _counted(room, kept, fitting))
        first = next((s.resource for s in short if s.resource != PODS), PODS)
        taken = (
            f"takes {fitting} of its {group.count} programs and turns the others away"
            if fitting
            else "turns it away"
        )
        return _turned_away(
            group, f"{taken}: it is {', '.join(str(s) for s in short)}", f"OutOf{first}"
        )
    if node_affinity.exclusion(node, group.spec) is not None:
        return _turned_away(
            group,
            "turns it away: the job's own rules about where it may run leave that machine out",
            "NodeAffinity",
        )
    ports = _port_refusal(group, held, bound)
    if ports:
        return _turned_away(group, ports, "NodePorts")
    taint = _untolerated_no_execute(node, group.spec)
    if taint:
        return _turned_away(
            group,
            "turns it away: it is reserved for other work",
            f"TaintToleration ({taint} not tolerated)",
        )
    counted = _counted(room, kept, group.count)
    if dropped:
        missing = joined_words(dropped)
        return Admission(
            group.name,
            machine,
            Outcome.WITHOUT_DEVICES,
            f"has no {missing}: the job would run there without the GPUs it asks for",
            f"{machine} reports no {missing}: the kubelet drops the request and admits it",
            counted,
        )
    return Admission(group.name, machine, Outcome.ADMITTED, room=counted)


def _port_refusal(group: Group, held: Sequence[HostPort], bound: Sequence[HostPort]) -> str:
    """Why the set's pods can't all hold their host ports on the machine (NodePorts), in plain
    words; empty when they can. Each pod of a set asks for the same ports."""
    wanted = host_ports(group.spec)
    running = sorted({str(w) for w in wanted if any(conflict(w, b) for b in bound)})
    if running:
        return f"turns it away: a program running there already holds port {', '.join(running)}"
    taken = sorted({str(w) for w in wanted if any(conflict(w, h) for h in held)})
    if taken:
        return f"turns it away: another part of the job already holds port {', '.join(taken)}"
    if wanted and group.count > 1:
        return (
            f"takes 1 of its {group.count} programs and turns the others away: each asks for "
            f"port {', '.join(str(w) for w in wanted)} on that machine, which one program holds"
        )
    return ""


def admitted(
    groups: Sequence[Group],
    nodes: Sequence[KubeObject],
    rooms: Mapping[str, MachineRoom],
    said: Mapping[str, KubeObject] | None = None,
    bound: Mapping[str, Sequence[HostPort]] | None = None,
) -> list[Admission]:
    """Each named pod set's answer in turn, each admitted set's pods counted on its machine
    before the next (`rooms`: what is bound to each machine; `bound`: the host ports the
    programs active there hold, by machine); a set whose pod the kubelet already turned away
    (`said`, by set) has the kubelet's own answer."""
    by_name = {o.name_of(n): n for n in nodes}
    now = dict(rooms)
    ports: dict[str, list[HostPort]] = {}
    answers = []
    for group in groups:
        machine = named_machine(group.spec)
        pod = (said or {}).get(group.name)
        answer = (
            refused(group, pod)
            if pod is not None
            else admit(
                group,
                by_name.get(machine),
                now.get(machine),
                ports.get(machine, ()),
                (bound or {}).get(machine, ()),
            )
        )
        if answer.room is not None:
            now[machine] = answer.room
            ports.setdefault(machine, []).extend(host_ports(group.spec))
        answers.append(answer)
    return answers


def verdict(
    env: Environment, answers: Sequence[Admission], details: Sequence[str]
) -> Finding | None:
    """The finding for the first named pod set that no machine runs, or runs without what it
    asks for; None when every kubelet admits its set whole."""
    kubectl = env.settings.kubectl
    lines = [*details, *(f"{a.group} names {a.machine}: {a.outcome}" for a in answers)]
    for answer in answers:
        if answer.outcome is Outcome.NO_SUCH_MACHINE:
            return SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                NO_ELIGIBLE_MACHINE,
                details=[*lines, f"the cluster lists no machine named {answer.machine}"],
                why=f"it names the machine '{answer.machine}', which the cluster doesn't have",
                todo=(
                    "Name a machine the cluster has in the job's settings (`spec.nodeName` of "
                    f"its program template; {kubectl.cluster('get', 'nodes')} lists them), or "
                    "take the name out so the cluster picks one"
                ),
            )
        if answer.outcome is not Outcome.ADMITTED:
            return _unfit(env, answer, lines)
    return None


def _unfit(env: Environment, answer: Admission, lines: Sequence[str]) -> Finding:
    kubectl = env.settings.kubectl
    describe = kubectl.cluster("describe", "node", answer.machine)
    todo = answer.todo or (
        f"Bring {answer.machine} back ({describe} shows why it is down), or take the machine's "
        "name out of the job's settings (`spec.nodeName` of its program template) so the "
        "cluster picks one that is up"
        if answer.outcome is Outcome.DOWN
        else "Take the machine's name out of the job's settings (`spec.nodeName` of its "
        "program template) so the cluster picks one that can run it, or name such a machine "
        f"({describe} shows what {answer.machine} offers)"
    )
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        NAMED_MACHINE_UNFIT,
        details=[*lines, answer.detail],
        objects=[f"Node/{answer.machine}"],
        machine=answer.machine,
        why=f"that machine {answer.words}",
        todo=todo,
    )


def fits(answers: Sequence[Admission], size: str, details: Sequence[str]) -> Finding:
    """Every pod set names its machine and every kubelet admits it."""
    machines = list(dict.fromkeys(a.machine for a in answers))
    return SAY.finding(
        Status.OK,
        Basis.MEASURED,
        FITS,
        details=[
            *details,
            *(f"{a.group} names {a.machine}: {a.outcome} by its kubelet" for a in answers),
            f"fits on {', '.join(machines)}",
        ],
        objects=[f"Node/{machines[0]}"],
        size=size,
    )
