"""The capacity fold kept running: each pod's share added when it arrives, taken back when it
changes or goes, so an evaluation reads the sums instead of re-adding 30,000 pods.

Its summary is the one `doctor.knowledge.usage.CapacityTally` makes from the same pods listed in the
server's order (by namespace, then name): a test holds the two equal on random pod churn.
"""

import heapq
import threading
from collections.abc import Iterable
from typing import Any

import msgspec
from msgspec import Struct

from truegreen.cluster.watch import ObjectKey
from truegreen.doctor.knowledge.usage import (
    HOLDERS_KEPT,
    CheckedPodView,
    ClusterUsage,
    Holder,
    PodView,
    PriorityShare,
    each_holder_once,
    holder_of,
    machine_usage,
    pod_whole,
    request_shape,
    requests_of,
    rules_part,
)
from truegreen.kubeobjects import TERMINATED_PHASES
from truegreen.quantity import QuantityError, Resources

SHAPE_CACHE = 10_000
"""Distinct pod request shapes remembered (replicas share one); past it the memory starts over."""


class _Share(Struct, frozen=True):
    machine: str | None
    amounts: tuple[tuple[str, int], ...]
    here: dict[str, Any] | None
    invalid: str
    holder: Holder | None = None
    priority: int = 0
    nominated: str | None = None
    """The machine a pod not bound yet is nominated for (its amounts are promised there)."""
    rules: dict[str, Any] | None = None
    """Its host ports and required pod anti-affinity, when it is on a machine and has either."""


class _Sums:
    """Per resource, the amount and how many pods request some of it (a sum whose last pod
    left is dropped, as a fresh tally would never have had it), and the pods counted."""

    def __init__(self) -> None:
        self.amounts: dict[str, int] = {}
        self.counts: dict[str, int] = {}
        self.pods = 0

    def give(self, amounts: Iterable[tuple[str, int]]) -> None:
        for resource, amount in amounts:
            self.amounts[resource] = self.amounts.get(resource, 0) + amount
            self.counts[resource] = self.counts.get(resource, 0) + 1
        self.pods += 1

    def take(self, amounts: Iterable[tuple[str, int]]) -> None:
        for resource, amount in amounts:
            self.amounts[resource] -= amount
            self.counts[resource] -= 1
            if not self.counts[resource]:
                del self.amounts[resource], self.counts[resource]
        self.pods -= 1


def _shares(by_priority: dict[int, _Sums]) -> list[PriorityShare]:
    return [
        PriorityShare(priority, sums.pods, dict(sums.amounts))
        for priority, sums in sorted(by_priority.items())
    ]


class RunningCapacity:
    """What `CapacityTally(namespace)` would sum, kept current one pod at a time. Thread-safe.

    One tally serves many namespaces (the fleet's monitor shares one watch of the cluster's
    pods): `namespaces` are those whose pods are kept whole, None for every namespace.
    """

    view = CheckedPodView
    """How the watch cache decodes the pods it hands here (either view is summed alike)."""

    def __init__(self, namespaces: str | frozenset[str] | None) -> None:
        self.namespaces = frozenset({namespaces}) if isinstance(namespaces, str) else namespaces
        self._lock = threading.Lock()
        self._shares: dict[ObjectKey, _Share] = {}
        self._bound: dict[str, dict[int, _Sums]] = {}
        """Per machine and priority, what its bound pods request."""
        self._nominated: dict[str, dict[int, _Sums]] = {}
        """Per machine and priority, what the pods nominated for it request."""
        self._on_machine: dict[str, dict[ObjectKey, _Share]] = {}
        """Each machine's holding pods, from which its largest holders are picked."""
        self._here: dict[ObjectKey, dict[str, Any]] = {}
        self._rule_pods: dict[ObjectKey, dict[str, Any]] = {}
        self._invalid: dict[ObjectKey, str] = {}
        self._shapes: dict[bytes, Resources | str] = {}

    def fresh(self) -> "RunningCapacity":
        """An empty tally for the same namespaces (a list is summed into it, then `take`n)."""
        return RunningCapacity(self.namespaces)

    def take(self, other: "RunningCapacity") -> None:
        """Become `other` (a whole list summed apart, so a re-list replaces at once)."""
        with self._lock, other._lock:
            self._shares, self._bound, self._nominated = (
                other._shares,
                other._bound,
                other._nominated,
            )
            self._here, self._invalid = other._here, other._invalid
            self._rule_pods = other._rule_pods
            self._on_machine = other._on_machine

    def replace(self, items: Iterable[tuple[ObjectKey, Any]]) -> None:
        """Start over from a whole list."""
        staged = self.fresh()
        for key, pod in items:
            staged.put(key, pod)
        self.take(staged)

    def put(self, key: ObjectKey, pod: Any | None) -> bool:
        """A pod arrived or changed (`pod`), or went (None); whether the sums changed (a pod
        whose machine, requests, phase and, here, whole self stayed the same changes nothing)."""
        with self._lock:
            return self._put(key, pod)

    def _put(self, key: ObjectKey, pod: PodView | CheckedPodView | None) -> bool:
        share = None if pod is None or pod.status.phase in TERMINATED_PHASES else self._share(pod)
        old = self._shares.pop(key, None)
        if old is not None:
            self._take(key, old)
        if share is not None:
            self._shares[key] = share
            self._give(key, share)
        return share != old

    def _share(self, pod: PodView | CheckedPodView) -> _Share:
        kept = self.namespaces is None or pod.metadata.namespace in self.namespaces
        here = pod_whole(pod) if kept else None
        rules = rules_part(pod)
        machine = pod.spec.node_name or None
        nominated = None if machine else pod.status.nominated_node_name or None
        if machine is None and nominated is None:
            return _Share(None, (), here, "")
        shape = request_shape(pod.spec)
        requests = self._shapes.get(shape)
        if requests is None:
            try:
                requests = requests_of(pod.spec)
            except QuantityError as error:
                requests = str(error)
            if len(self._shapes) >= SHAPE_CACHE:
                self._shapes.clear()
            self._shapes[shape] = requests
        if isinstance(requests, str):
            return _Share(None, (), here, requests, rules=rules)
        priority = pod.spec.priority or 0
        if machine is None:
            return _Share(None, requests.amounts, here, "", None, priority, nominated)
        holder = holder_of(pod, requests)
        return _Share(machine, requests.amounts, here, "", holder, priority, rules=rules)

    def _give(self, key: ObjectKey, share: _Share) -> None:
        if share.here is not None:
            self._here[key] = share.here
        if share.rules is not None:
            self._rule_pods[key] = share.rules
        if share.invalid:
            self._invalid[key] = share.invalid
        if share.nominated is not None:
            by_priority = self._nominated.setdefault(share.nominated, {})
            by_priority.setdefault(share.priority, _Sums()).give(share.amounts)
        if share.machine is None:
            return
        by_priority = self._bound.setdefault(share.machine, {})
        by_priority.setdefault(share.priority, _Sums()).give(share.amounts)
        self._on_machine.setdefault(share.machine, {})[key] = share

    def _take(self, key: ObjectKey, share: _Share) -> None:
        self._here.pop(key, None)
        self._rule_pods.pop(key, None)
        self._invalid.pop(key, None)
        if share.nominated is not None:
            _take_from(self._nominated, share.nominated, share)
        machine = share.machine
        if machine is None:
            return
        _take_from(self._bound, machine, share)
        del self._on_machine[machine][key]
        if not self._on_machine[machine]:
            del self._on_machine[machine]

    def summary(self) -> dict[str, Any]:
        """As `CapacityTally(namespace, also).summary()` over the same pods in the server's list
        order, for the same namespaces kept."""
        with self._lock:
            usage = ClusterUsage(
                {
                    m: machine_usage(
                        _shares(self._bound.get(m, {})), _shares(self._nominated.get(m, {}))
                    )
                    for m in sorted(self._bound.keys() | self._nominated.keys())
                },
                [self._here[key] for key in sorted(self._here)],
                self._invalid[min(self._invalid)] if self._invalid else "",
                {m: self._largest_holders(m) for m in sorted(self._on_machine)},
                [self._rule_pods[key] for key in sorted(self._rule_pods)],
            )
        result: dict[str, Any] = msgspec.to_builtins(usage)
        return result

    def _largest_holders(self, machine: str) -> list[Holder]:
        """As the fold keeps them: per priority and resource the HOLDERS_KEPT largest by
        (amount, namespace, pod), each pod once, by namespace and name."""
        by_resource: dict[tuple[int, str], list[tuple[int, str, str, Holder]]] = {}
        for (namespace, name), share in self._on_machine[machine].items():
            assert share.holder is not None  # every share on a machine has one
            for resource, amount in share.amounts:
                candidates = by_resource.setdefault((share.priority, resource), [])
                candidates.append((amount, namespace, name, share.holder))
        return each_holder_once(
            h
            for candidates in by_resource.values()
            for *_, h in heapq.nlargest(HOLDERS_KEPT, candidates, key=lambda c: c[:3])
        )


def _take_from(sums: dict[str, dict[int, _Sums]], machine: str, share: _Share) -> None:
    """Take `share` back from `machine`'s sums; a priority, then a machine, left with no pod
    is dropped."""
    by_priority = sums[machine]
    by_priority[share.priority].take(share.amounts)
    if not by_priority[share.priority].pods:
        del by_priority[share.priority]
    if not by_priority:
        del sums[machine]
