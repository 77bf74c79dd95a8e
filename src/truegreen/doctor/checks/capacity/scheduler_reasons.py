"""The scheduler's reasons in plain words, and what to do about the first that matters."""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.checks.capacity.filters.node_affinity import (
    AFFINITY_MISMATCH,
    SELECTOR_MISMATCH,
)
from truegreen.doctor.checks.capacity.filters.node_unschedulable import CORDONED
from truegreen.doctor.checks.capacity.filters.rules import node_exclusion
from truegreen.doctor.knowledge.evidence import Obstacle, Reason, SchedulerVerdict
from truegreen.doctor.knowledge.fit import machine_room, pod_requests, shortfalls
from truegreen.doctor.knowledge.reports import NAME_CAP, quoted
from truegreen.doctor.knowledge.taints import system_taint
from truegreen.kubectl import Kubectl
from truegreen.plain_words import merged_counts
from truegreen.quantity import CPU, MEMORY, PODS, QuantityError

_RESOURCE_NOUNS = {CPU: "CPU", MEMORY: "memory", "ephemeral-storage": "scratch disk", PODS: "room"}

# (one machine, several machines) for each obstacle, after the count: `1 machine is …`.
_WORDS: dict[Obstacle, tuple[str, str]] = {
    Obstacle.PLACEMENT_RULES: (
        "is outside the job's placement rules",
        "are outside the job's placement rules",
    ),
    Obstacle.TAINT: ("is reserved for other work", "are reserved for other work"),
    Obstacle.CLOSED: ("is closed to new work", "are closed to new work"),
    Obstacle.VOLUME: ("can't reach its data volume", "can't reach its data volume"),
    Obstacle.VOLUME_IN_USE: (
        "can't take it while another program uses its data volume",
        "can't take it while another program uses its data volume",
    ),
    Obstacle.NO_FREE_VOLUME: (
        "has no free volume that fits its storage request",
        "have no free volume that fits its storage request",
    ),
    Obstacle.POD_RULES: (
        "breaks its rules about which programs may run together",
        "break its rules about which programs may run together",
    ),
    Obstacle.OTHERS_RULES: (
        "is refused by other programs' rules about which programs may run together",
        "are refused by other programs' rules about which programs may run together",
    ),
    Obstacle.SPREAD: ("would break its spread rules", "would break its spread rules"),
    Obstacle.DEVICES: ("lacks the devices it claims", "lack the devices it claims"),
    Obstacle.PORTS: ("has its ports taken", "have its ports taken"),
}

_TODO: dict[Obstacle, str] = {
    Obstacle.ROOM: "wait for room to free up, free some, or add a machine",
    Obstacle.PLACEMENT_RULES: "change where the job may run in its settings, or add a machine "
    "that matches them",
    Obstacle.TAINT: "let the job onto the reserved machines in its settings, or use others",
    Obstacle.CLOSED: "if the maintenance on the closed machines is done, open them to new work "
    "again (an administrator may have closed them on purpose)",
    Obstacle.VOLUME: "run the job where its data volume can be reached (a volume tied to one "
    "zone or machine goes only there), or move the data",
    Obstacle.VOLUME_IN_USE: "wait for the program that uses the job's data volume to finish, or "
    "stop it, or give the job a volume of its own (this volume may be used by one program at a "
    "time)",
    Obstacle.NO_FREE_VOLUME: "add a free volume that fits the job's storage request where the job "
    "may run, or free one (the kind of storage it asks for makes no new volumes there by "
    "itself)",
    Obstacle.POD_RULES: "loosen the job's rules about which programs may share a machine, or "
    "add machines",
    Obstacle.SPREAD: "loosen the job's spread rules, or add machines where it must spread",
    Obstacle.DEVICES: "free or add the devices the job claims",
    Obstacle.PORTS: "free the machine ports the job asks for, or stop asking for them",
    Obstacle.OTHER: "read the cluster's own words on it",
}


def _reason_words(reason: Reason) -> tuple[str, str]:
    """The words after a counted reason's count, for one machine and for several: `lacks
    nvidia.com/gpu`, `lack nvidia.com/gpu`."""
    if reason.obstacle is Obstacle.ROOM:
        if not reason.detail:
            return "runs as many programs as it may", "run as many programs as they may"
        resource = _RESOURCE_NOUNS.get(reason.detail, reason.detail)
        return f"lacks {resource}", f"lack {resource}"
    if reason.obstacle is Obstacle.TAINT:
        known = system_taint(reason.detail)
        if known is not None:
            return known.one, known.many
    if reason.obstacle is Obstacle.OTHER:
        # No plain words for this one: the scheduler's own, as it wrote them.
        said = quoted(reason.text, NAME_CAP)
        return f"is held back: “{said}”", f"are held back: “{said}”"
    return _WORDS[reason.obstacle]


def _machines(count: int) -> str:
    """`1 machine`, `2 machines`."""
    return f"{count} machine{'s' if count != 1 else ''}"


def plain_reasons(verdict: SchedulerVerdict) -> str:
    """`of 5 machines, 4 lack nvidia.com/gpu and 1 can't be reached`. Reasons that read the
    same (two taints, both `reserved for other work`) are one count."""
    if not verdict.reasons:
        return "it gave no reason doctor knows"
    whole = next((r for r in verdict.reasons if r.machines is None), None)
    if whole is not None:
        # A message that counts no machines is the scheduler's whole reason (a Permit plugin's
        # rejection, a gang scheduler's word on its group): its own words, whole.
        return f"it said “{quoted(whole.text, NAME_CAP)}”"
    noun = verdict.machines is None
    counted = merged_counts(
        (r.machines, *_reason_words(r)) for r in verdict.reasons if r.machines is not None
    )
    parts = [
        f"{_machines(count) if noun else count} {one if count == 1 else many}"
        for count, one, many in counted
    ]
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    if verdict.machines is None:
        return listed
    return f"of {verdict.machines} machine{'s' if verdict.machines != 1 else ''}, {listed}"


def with_taint_keys(
    verdict: SchedulerVerdict, spec: Mapping[str, Any], nodes: Sequence[KubeObject] | None
) -> SchedulerVerdict:
    """`verdict` with its keyless taint reason (`N node(s) had untolerated taint(s)`,
    kube-scheduler 1.35 and 1.34.2 on, which only logs the key: tainttoleration/
    taint_toleration.go `Filter`) told apart by the machines' own taints: where doctor's
    filters (`node_exclusion`, in the scheduler's order) keep the pod `spec` off exactly N
    machines for a taint, one reason per taint key with its count, as the keyed form counts
    them, so a machine that is down reads as down and not as reserved. Otherwise (the machines
    not read, other counts: the cluster changed since) the scheduler's reason stands."""
    keyless = [
        r for r in verdict.reasons if r.obstacle is Obstacle.TAINT and not r.detail and r.machines
    ]
    if len(keyless) != 1 or nodes is None:
        return verdict
    exclusions = [node_exclusion(node, spec) for node in nodes]
    keys = Counter(
        e.removeprefix(_TAINT).split("=", 1)[0]
        for e in exclusions
        if e is not None and e.startswith(_TAINT)
    )
    (reason,) = keyless
    if sum(keys.values()) != reason.machines:
        return verdict
    told = [replace(reason, machines=count, detail=key) for key, count in sorted(keys.items())]
    at = verdict.reasons.index(reason)
    return replace(verdict, reasons=(*verdict.reasons[:at], *told, *verdict.reasons[at + 1 :]))


_TAINT = "taint "
"""How doctor's TaintToleration filter begins an exclusion: `taint KEY=VALUE:EFFECT not
tolerated` (filters/taint_toleration.py `UNTOLERATED`)."""


_NOT_ALLOWED = frozenset({Obstacle.CLOSED, Obstacle.TAINT, Obstacle.PLACEMENT_RULES})
"""The reasons of the filters that judge the Node alone and run before NodeResourcesFit
(NodeUnschedulable, TaintToleration, NodeAffinity: pkg/scheduler/apis/config/v1/
default_plugins.go). kube-scheduler reports only the first filter that refuses a machine
(framework/runtime/framework.go `RunFilterPlugins` returns at the first failure), so whether
the machines these reasons count have room for the pod is never said."""


def first_todo(
    verdicts: Sequence[tuple[KubeObject, SchedulerVerdict]],
    nodes: Sequence[KubeObject] | None,
    kubectl: Kubectl,
) -> str:
    """What to do about the first obstacle that is not room (room is often a wait), else about
    room; a controller's taint says what to do about its machine, and `kubectl` lists the
    running programs' rules where theirs refuse the job. A machine the pod may not use
    (`_NOT_ALLOWED`) is the answer only where one the reason counts could hold the pod
    (`_could_hold`): letting the job onto machines too small for it places nothing, and the
    room that is short is what to act on. `nodes`: the machines as read, None when they could
    not be, and then the scheduler's first reason stands."""
    reasons = [r for _, v in verdicts for r in v.reasons]
    chosen = next(
        (
            r
            for pod, v in verdicts
            for r in v.reasons
            if r.obstacle is not Obstacle.ROOM
            and (r.obstacle not in _NOT_ALLOWED or _could_hold(r, o.pod_spec(pod), nodes))
        ),
        None,
    )
    if chosen is None:
        return _TODO[Obstacle.ROOM] if reasons else _TODO[Obstacle.OTHER]
    if chosen.obstacle is Obstacle.TAINT:
        known = system_taint(chosen.detail)
        if known is not None:
            return (
                f"look after the machines that {known.many} (the cluster lets work onto them "
                "again by itself once they are well)"
            )
    if chosen.obstacle is Obstacle.OTHERS_RULES:
        listing = kubectl.cluster("get", "pods", "--all-namespaces", "-o", _KEEPS_AWAY)
        return (
            f"find the programs whose rules refuse the job's ({listing} lists each program's "
            "machine and the programs its rules keep away), then wait for them to finish, stop "
            "them or change their rules, or add machines"
        )
    return _TODO[chosen.obstacle]


_KEEPS_AWAY = (
    "custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,MACHINE:.spec.nodeName,"
    "KEEPS_AWAY:.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    "[*].labelSelector"
)
"""Each pod with its machine and the selectors of its required anti-affinity terms: the rules
InterPodAffinity's `satisfyExistingPodsAntiAffinity` holds every namespace's pods to (a pod
whose term matches the incoming pod refuses its term's topology domain)."""


def _could_hold(
    reason: Reason, spec: Mapping[str, Any], nodes: Sequence[KubeObject] | None
) -> bool:
    """Whether some machine that `reason` keeps the pod `spec` off, as doctor's own filters
    judge it (`node_exclusion`, in kube-scheduler's order), has the allocatable room for the
    pod were it empty (NodeResourcesFit's sums, `shortfalls`). Devices that claims ask for are
    not in allocatable and are not counted. Where the machines or an amount could not be read,
    the scheduler's reason stands."""
    if nodes is None:
        return True
    try:
        requests = pod_requests(spec)
        return any(
            _same(reason, node_exclusion(node, spec))
            and not shortfalls(requests, machine_room(node))
            for node in nodes
        )
    except QuantityError:  # only a hand-edited snapshot gets here
        return True


def _same(reason: Reason, exclusion: str | None) -> bool:
    """Whether doctor's exclusion of a machine (`node_exclusion`) is the scheduler's `reason`:
    closed, the same taint's key (`taint KEY=VALUE:EFFECT not tolerated`), any taint where the
    scheduler names none (`node(s) had untolerated taint(s)`, kube-scheduler 1.35 and 1.34.2
    on: tainttoleration/taint_toleration.go `Filter`), or the node selector and required node
    affinity, which the scheduler words as one."""
    if reason.obstacle is Obstacle.CLOSED:
        return exclusion == CORDONED
    if reason.obstacle is Obstacle.TAINT:
        taint = f"taint {reason.detail}=" if reason.detail else "taint "
        return exclusion is not None and exclusion.startswith(taint)
    return exclusion in (SELECTOR_MISMATCH, AFFINITY_MISMATCH)
