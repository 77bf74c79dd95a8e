"""kube-scheduler's filters between a training job's pods, the pods already running, its volumes
and its devices, as the constraints its placement must meet: every plugin of FILTERS
(registry.py), one pass.

Pure: a function of the job's pod sets and what was read. Each filter is either evaluated, or
named in an `Unchecked` that says which rule could not be and why (a read that failed, a field
doctor does not understand, pods of other namespaces it would need); none is passed silently.
"""

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, GetRead, Kind, KubeObject, ListRead
from truegreen.doctor.checks.capacity.filters.cycle import Cycle, machine_labels, placed_pod
from truegreen.doctor.checks.capacity.filters.framework import (
    Blocker,
    DeviceRoom,
    Exclusion,
    FailedRead,
    Found,
    JobPodSet,
    Unchecked,
    Wait,
)
from truegreen.doctor.checks.capacity.filters.registry import FILTERS, NODE_FILTERS
from truegreen.doctor.checks.capacity.placement import Rule
from truegreen.doctor.environment import DeviceReads
from truegreen.kubectl import Kubectl


class Rules(Struct, frozen=True):
    """What the scheduler's filters ask of the job's placement."""

    exclusions: tuple[Exclusion, ...] = ()
    rules: tuple[tuple[str, tuple[Rule, ...]], ...] = ()
    """Per pod set, the rules between pods it carries."""
    todos: tuple[tuple[str, str], ...] = ()
    """Per rule (by its words), the step that makes room for it."""
    unchecked: tuple[Unchecked, ...] = ()
    failed: tuple[FailedRead, ...] = ()
    details: tuple[str, ...] = ()
    devices: DeviceRoom = DeviceRoom()
    """The devices each pod set asks for and each machine has."""
    waits: tuple[Wait, ...] = ()
    """Refusals that lift when running training jobs finish: no machine is taken for them."""

    def rules_of(self, group: str) -> tuple[Rule, ...]:
        """The rules pod set `group` carries."""
        return dict(self.rules).get(group, ())

    def allowed(self, group: str, machines: Iterable[str]) -> list[str]:
        """`machines` less the ones these rules take away from `group`."""
        refused = {m for e in self.exclusions if e.group == group for m in e.machines}
        return [m for m in machines if m not in refused]

    def preempted(self, group: str, machine: str, priority: int) -> tuple[Blocker, ...] | None:
        """The running pods whose preemption for a pod of `priority` gives `machine` back to
        `group` (none: it is not taken); None when preemption does not give it back."""
        found: list[Blocker] = []
        for exclusion in self.exclusions:
            if exclusion.group != group:
                continue
            blockers = exclusion.preempted(machine, priority)
            if blockers is None:
                return None
            found += blockers
        return tuple(dict.fromkeys(found))

    def allowed_preempting(self, group: str, machines: Iterable[str], priority: int) -> list[str]:
        """`machines` less the ones these rules take away from `group` that preemption for a
        pod of `priority` does not give back."""
        return [m for m in machines if self.preempted(group, m, priority) is not None]

    def todo(self, words: str) -> str:
        """The step that makes room under the rule whose words are `words`."""
        return dict(self.todos).get(words, "")


_NOT_READ: Mapping[str, GetRead] = MappingProxyType({})


def scheduling_rules(
    sets: Sequence[JobPodSet],
    *,
    namespace: str,
    namespace_labels: Mapping[str, str] | None,
    nodes: Sequence[KubeObject],
    pods: ListRead,
    claims: Mapping[str, GetRead],
    volumes: Mapping[str, GetRead],
    drivers: Mapping[str, GetRead],
    devices: DeviceReads | None,
    kubectl: Kubectl,
    own_pods: frozenset[str] = frozenset(),
    storage_types: Mapping[str, GetRead] = _NOT_READ,
    made_volumes: ListRead | None = None,
    rule_pods: Sequence[KubeObject] | None = (),
) -> Rules:
    """The constraints the scheduler's filters put on placing `sets` (the judged job's pods
    still to place) in `namespace`, from the machines, the namespace's pods, the claims and
    their volumes and those volumes' CSI drivers, and the device objects; `own_pods`: the
    judged job's pods already placed while it waits for the rest; `storage_types` and
    `made_volumes`: the classes of the claims not bound yet and every volume, where read;
    `rule_pods`: the pods of every namespace on a machine that hold a host port or carry
    required pod anti-affinity (those of other namespaces are read from it; None: not
    read)."""
    placed = (
        tuple(placed_pod(p) for p in pods.items if o.node_name(p) and not o.is_terminated(p))
        if not isinstance(pods, CantRead)
        else None
    )
    cycle = Cycle(
        tuple(sets),
        namespace,
        namespace_labels,
        tuple(nodes),
        machine_labels(nodes),
        placed,
        claims,
        volumes,
        drivers,
        devices,
        kubectl,
        own_pods,
        storage_types,
        made_volumes,
        None
        if rule_pods is None
        else tuple(
            placed_pod(p) for p in rule_pods if o.namespace_of(p) != namespace and o.node_name(p)
        ),
    )
    found = Found()
    if isinstance(pods, CantRead):
        # The namespace's pods decide the pod rules and who uses a volume, and any of them may
        # hold a rule that keeps the job away: none of those can be judged.
        found.fail(FailedRead(Kind.POD, pods))
    for plugin in FILTERS:
        if cycle.placed is not None or not plugin.READS_PODS:
            plugin.filter(cycle, found)
    return Rules(
        tuple(found.exclusions),
        tuple((g, tuple(r)) for g, r in found.rules.items()),
        tuple(found.todos.items()),
        tuple(found.unchecked),
        tuple(found.failed),
        tuple(found.details),
        found.devices,
        tuple(found.waits),
    )


def node_exclusion(node: KubeObject, spec: Mapping[str, Any]) -> str | None:
    """Why the scheduler would never place this pod spec on `node`, from the first of
    NODE_FILTERS that refuses it; None when it may."""
    for plugin in NODE_FILTERS:
        reason = plugin.exclusion(node, spec)
        if reason is not None:
            return reason
    return None
