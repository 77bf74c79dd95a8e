"""What a namespace of a run over many computes from the shared machine list alone stays known
for the next (doctor/knowledge/last_answer.py): the steps that change nothing hand back the very
rooms,
and an answer kept per machine list is kept per question too."""

from typing import Any

from truegreen.doctor.checks.capacity.filters.framework import DeviceRoom
from truegreen.doctor.checks.capacity.machines import kept_machines as _kept_for
from truegreen.doctor.checks.capacity.preemption import with_nominated
from truegreen.doctor.checks.capacity.rule_findings import with_devices
from truegreen.doctor.knowledge.fit import MachineRoom
from truegreen.doctor.knowledge.stored_pod import kept_for
from truegreen.doctor.knowledge.usage import ClusterUsage, MachineUsage, PriorityShare
from truegreen.quantity import Resources

GPU = "nvidia.com/gpu"
DEVICES = "gpu.example.com devices"


def _room(name: str, gpus: int) -> MachineRoom:
    return MachineRoom(name, Resources.of({GPU: gpus}), 110)


def test_nothing_nominated_hands_back_the_very_rooms() -> None:
    rooms = {"m1": _room("m1", 8)}
    quiet = ClusterUsage(machines={"m1": MachineUsage(0, {})})
    assert with_nominated(rooms, quiet, 10, {}) is rooms
    nominated = ClusterUsage(
        machines={"m1": MachineUsage(0, {}, nominated=[PriorityShare(10, 1, {GPU: 2})])}
    )
    counted = with_nominated(rooms, nominated, 10, {})
    assert counted is not rooms
    assert counted["m1"].requested == Resources.of({GPU: 2})


def test_no_devices_hand_back_the_very_rooms() -> None:
    rooms = {"m1": _room("m1", 8)}
    assert with_devices(rooms, DeviceRoom()) is rooms
    there = DeviceRoom(machines=(("m1", Resources.of({DEVICES: 4}), Resources.of({DEVICES: 1})),))
    grown = with_devices(rooms, there)
    assert grown["m1"].allocatable == Resources.of({GPU: 8, DEVICES: 4})
    assert grown["m1"].requested == Resources.of({DEVICES: 1})


def _node(name: str, *keys: str) -> dict[str, Any]:
    taints = [{"key": key, "effect": "NoSchedule"} for key in keys]
    return {"kind": "Node", "metadata": {"name": name}, "spec": {"taints": taints}}


def test_machines_kept_for_resources_are_kept_per_machine_list_and_per_resources() -> None:
    nodes = (_node("gpu-1", GPU), _node("fpga-1", "example.com/fpga"), _node("cpu-1"))
    assert _kept_for(nodes, [GPU]) == kept_for(nodes, [GPU]) == ["gpu-1"]
    assert _kept_for(nodes, ["example.com/fpga"]) == ["fpga-1"]
    assert _kept_for(nodes, [GPU]) == ["gpu-1"]
    other = (_node("gpu-2", GPU),)
    assert _kept_for(other, [GPU]) == ["gpu-2"]
