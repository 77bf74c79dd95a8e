"""BestEffort as the kubelet's quality of service reads it: a request or limit counts only above
zero (pkg/apis/core/v1/helper/qos/qos.go `ComputePodQOS`: `quantity.Cmp(zeroQuantity) == 1`),
so explicit zeros are BestEffort, which the eviction manager turns away under MemoryPressure
(pkg/kubelet/eviction/eviction_manager.go `(*managerImpl).Admit`)."""

from typing import Any

from tests.support.scenarios import node
from truegreen.doctor.checks.capacity.kubelet_admission import Outcome, admit
from truegreen.doctor.checks.capacity.shape import Group
from truegreen.doctor.knowledge.fit import machine_room
from truegreen.quantity import Resources


def _named(container: dict[str, Any] | None = None, pod: dict[str, Any] | None = None) -> Group:
    """One pod named onto machine a, its container's resources and the pod's as given."""
    spec: dict[str, Any] = {"nodeName": "a", "containers": [{"name": "t"}]}
    if container is not None:
        spec["containers"][0]["resources"] = container
    if pod is not None:
        spec["resources"] = pod
    return Group("worker", 1, Resources(), spec)


def _under_memory_pressure() -> Any:
    machine = node("a", "8", "32Gi")
    machine["status"]["conditions"].append({"type": "MemoryPressure", "status": "True"})
    return machine


def test_zero_requests_and_limits_are_best_effort_turned_away_under_memory_pressure() -> None:
    machine = _under_memory_pressure()
    zeros = {"requests": {"cpu": "0", "memory": "0"}, "limits": {"cpu": "0"}}
    answer = admit(_named(zeros), machine, machine_room(machine))
    assert (answer.outcome, answer.words) == (
        Outcome.TURNED_AWAY,
        "turns it away: it is short of memory",
    )
    pod_level = _named(pod={"requests": {"memory": "0"}})
    assert admit(pod_level, machine, machine_room(machine)).outcome is Outcome.TURNED_AWAY


def test_a_request_above_zero_is_not_best_effort() -> None:
    machine = _under_memory_pressure()
    some = {"requests": {"cpu": "0", "memory": "1Mi"}}
    assert admit(_named(some), machine, machine_room(machine)).outcome is Outcome.ADMITTED
    bursting = {"requests": {"cpu": "0"}, "limits": {"cpu": "1"}}
    assert admit(_named(bursting), machine, machine_room(machine)).outcome is Outcome.ADMITTED


def test_an_amount_that_is_not_a_quantity_counts_as_stated() -> None:
    machine = _under_memory_pressure()
    odd = {"requests": {"memory": "lots"}}
    assert admit(_named(odd), machine, machine_room(machine)).outcome is Outcome.ADMITTED
