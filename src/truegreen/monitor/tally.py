"""The capacity fold kept running: each pod's share added when it arrives, taken back when it
changes or goes, so an evaluation reads the sums instead of re-adding 30,000 pods.

Its summary is the one `doctor.usage.CapacityTally` makes from the same pods listed in the
server's order (by namespace, then name): a test holds the two equal on random pod churn.
"""

import heapq
import threading
from collections.abc import Iterable
from typing import Any

import msgspec
from msgspec import Struct

from truegreen.cluster.watch import ObjectKey
from truegreen.doctor.usage import (
    HOLDERS_KEPT,
    CheckedPodView,
    ClusterUsage,
    Holder,
    MachineUsage,
    PodView,
    each_holder_once,
    holder_of,
    pod_whole,
    request_shape,
    requests_of,
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


class RunningCapacity:
    """What `CapacityTally(namespace)` would sum, kept current one pod at a time. Thread-safe.

    One tally serves many namespaces (the fleet's monitor shares one watch of the cluster's
    pods): `namespaces` are those whose pods are kept whole, None for every namespace, and
    `summary(namespace)` is that namespace's CapacityTally summary.
    """

    view = CheckedPodView
    """How the watch cache decodes the pods it hands here (either view is summed alike)."""

    def __init__(self, namespaces: str | frozenset[str] | None) -> None:
        self.namespaces = frozenset({namespaces}) if isinstance(namespaces, str) else namespaces
        self._lock = threading.Lock()
        self._shares: dict[ObjectKey, _Share] = {}
        self._requested: dict[str, dict[str, int]] = {}
        self._holders: dict[str, dict[str, int]] = {}
        """Per machine and resource, how many pods request some of it (a sum whose last pod
        left is dropped, as a fresh tally would never have had it)."""
        self._pods: dict[str, int] = {}
        self._on_machine: dict[str, dict[ObjectKey, _Share]] = {}
        """Each machine's holding pods, from which its largest holders are picked."""
        self._here: dict[ObjectKey, dict[str, Any]] = {}
        self._invalid: dict[ObjectKey, str] = {}
        self._shapes: dict[bytes, Resources | str] = {}

    def fresh(self) -> "RunningCapacity":
        """An empty tally for the same namespaces (a list is summed into it, then `take`n)."""
        return RunningCapacity(self.namespaces)

    def take(self, other: "RunningCapacity") -> None:
        """Become `other` (a whole list summed apart, so a re-list replaces at once)."""
        with self._lock, other._lock:
            self._shares, self._requested, self._holders = (
                other._shares,
                other._requested,
                other._holders,
            )
            self._pods, self._here, self._invalid = other._pods, other._here, other._invalid
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
        machine = pod.spec.node_name or None
        if machine is None:
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
            return _Share(None, (), here, requests)
        return _Share(machine, requests.amounts, here, "", holder_of(pod, requests))

    def _give(self, key: ObjectKey, share: _Share) -> None:
        if share.here is not None:
            self._here[key] = share.here
        if share.invalid:
            self._invalid[key] = share.invalid
        if share.machine is None:
            return
        sums = self._requested.setdefault(share.machine, {})
        holders = self._holders.setdefault(share.machine, {})
        for resource, amount in share.amounts:
            sums[resource] = sums.get(resource, 0) + amount
            holders[resource] = holders.get(resource, 0) + 1
        self._pods[share.machine] = self._pods.get(share.machine, 0) + 1
        self._on_machine.setdefault(share.machine, {})[key] = share

    def _take(self, key: ObjectKey, share: _Share) -> None:
        self._here.pop(key, None)
        self._invalid.pop(key, None)
        machine = share.machine
        if machine is None:
            return
        sums, holders = self._requested[machine], self._holders[machine]
        for resource, amount in share.amounts:
            sums[resource] -= amount
            holders[resource] -= 1
            if not holders[resource]:
                del sums[resource], holders[resource]
        self._pods[machine] -= 1
        del self._on_machine[machine][key]
        if not self._pods[machine]:
            del self._pods[machine], self._requested[machine], self._holders[machine]
            del self._on_machine[machine]

    def summary(self, namespace: str | None = None) -> dict[str, Any]:
        """As `CapacityTally(namespace).summary()` over the same pods in the server's list
        order (None: with every kept namespace's pods)."""
        with self._lock:
            usage = ClusterUsage(
                {
                    m: MachineUsage(self._pods[m], dict(self._requested[m]))
                    for m in sorted(self._pods)
                },
                [
                    self._here[key]
                    for key in sorted(self._here)
                    if namespace is None or key[0] == namespace
                ],
                self._invalid[min(self._invalid)] if self._invalid else "",
                {m: self._largest_holders(m) for m in sorted(self._on_machine)},
            )
        result: dict[str, Any] = msgspec.to_builtins(usage)
        return result

    def _largest_holders(self, machine: str) -> list[Holder]:
        """As the fold keeps them: per resource the HOLDERS_KEPT largest by (amount, namespace,
        pod), each pod once, by namespace and name."""
        by_resource: dict[str, list[tuple[int, str, str, Holder]]] = {}
        for (namespace, name), share in self._on_machine[machine].items():
            assert share.holder is not None  # every share on a machine has one
            for resource, amount in share.amounts:
                by_resource.setdefault(resource, []).append((amount, namespace, name, share.holder))
        return each_holder_once(
            h
            for candidates in by_resource.values()
            for *_, h in heapq.nlargest(HOLDERS_KEPT, candidates, key=lambda c: c[:3])
        )
