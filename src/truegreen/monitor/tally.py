"""The capacity fold kept running: each pod's share added when it arrives, taken back when it
changes or goes, so an evaluation reads the sums instead of re-adding 30,000 pods.

Its summary is the one `doctor.usage.CapacityTally` makes from the same pods listed in the
server's order (by namespace, then name): a test holds the two equal on random pod churn.
"""

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from truegreen.cluster.watch import ObjectKey
from truegreen.doctor.fit import pod_requests
from truegreen.doctor.usage import ClusterUsage, MachineUsage, PodView
from truegreen.kubeobjects import TERMINATED_PHASES
from truegreen.quantity import QuantityError, Resources

SHAPE_CACHE = 10_000
"""Distinct pod request shapes remembered (replicas share one); past it the memory starts over."""


@dataclass(frozen=True)
class _Share:
    machine: str | None
    amounts: tuple[tuple[str, int], ...]
    here: dict[str, Any] | None
    invalid: str


class RunningCapacity:
    """What `CapacityTally(namespace)` would sum, kept current one pod at a time. Thread-safe."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self._lock = threading.Lock()
        self._shares: dict[ObjectKey, _Share] = {}
        self._requested: dict[str, dict[str, int]] = {}
        self._holders: dict[str, dict[str, int]] = {}
        """Per machine and resource, how many pods request some of it (a sum whose last pod
        left is dropped, as a fresh tally would never have had it)."""
        self._pods: dict[str, int] = {}
        self._shapes: dict[bytes, Resources | str] = {}

    def replace(self, items: Iterable[tuple[ObjectKey, Any]]) -> None:
        """Start over from a whole list."""
        with self._lock:
            self._shares.clear()
            self._requested.clear()
            self._holders.clear()
            self._pods.clear()
            for key, pod in items:
                self._put(key, pod)

    def put(self, key: ObjectKey, pod: Any | None) -> None:
        """A pod arrived or changed (`pod`), or went (None)."""
        with self._lock:
            self._put(key, pod)

    def _put(self, key: ObjectKey, pod: PodView | None) -> None:
        old = self._shares.pop(key, None)
        if old is not None:
            self._take(old)
        if pod is None or pod.status.phase in TERMINATED_PHASES:
            return
        share = self._share(pod)
        self._shares[key] = share
        self._give(share)

    def _share(self, pod: PodView) -> _Share:
        here = msgspec.to_builtins(pod) if pod.metadata.namespace == self.namespace else None
        machine = pod.spec.node_name or None
        if machine is None:
            return _Share(None, (), here, "")
        shape = msgspec.json.encode(msgspec.structs.replace(pod.spec, node_name=None))
        requests = self._shapes.get(shape)
        if requests is None:
            try:
                requests = pod_requests(msgspec.to_builtins(pod.spec))
            except QuantityError as error:
                requests = str(error)
            if len(self._shapes) >= SHAPE_CACHE:
                self._shapes.clear()
            self._shapes[shape] = requests
        if isinstance(requests, str):
            return _Share(None, (), here, requests)
        return _Share(machine, requests.amounts, here, "")

    def _give(self, share: _Share) -> None:
        if share.machine is None:
            return
        sums = self._requested.setdefault(share.machine, {})
        holders = self._holders.setdefault(share.machine, {})
        for resource, amount in share.amounts:
            sums[resource] = sums.get(resource, 0) + amount
            holders[resource] = holders.get(resource, 0) + 1
        self._pods[share.machine] = self._pods.get(share.machine, 0) + 1

    def _take(self, share: _Share) -> None:
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
        if not self._pods[machine]:
            del self._pods[machine], self._requested[machine], self._holders[machine]

    def summary(self) -> dict[str, Any]:
        """As `CapacityTally.summary()` over the same pods in the server's list order."""
        with self._lock:
            ordered = sorted(self._shares.items())
            usage = ClusterUsage(
                {
                    m: MachineUsage(self._pods[m], dict(self._requested[m]))
                    for m in sorted(self._pods)
                },
                [share.here for _, share in ordered if share.here is not None],
                next((share.invalid for _, share in ordered if share.invalid), ""),
            )
        result: dict[str, Any] = msgspec.to_builtins(usage)
        return result
