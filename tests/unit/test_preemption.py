"""Preemption and nominated pods for a whole job, value by value (kube-scheduler
defaultpreemption SelectVictimsOnNode, framework/runtime addNominatedPods)."""

from typing import Any

from truegreen.cluster import CantRead, Kind, ReadFailure
from truegreen.doctor.checks.capacity.preemption import (
    after_preemption,
    job_level,
    priorities_matter,
    victims,
    with_nominated,
)
from truegreen.doctor.knowledge.fit import MachineRoom
from truegreen.doctor.knowledge.stored_pod import PriorityLevel
from truegreen.doctor.knowledge.training import PodSet, TrainingJob
from truegreen.doctor.knowledge.usage import ClusterUsage, Holder, MachineUsage, PriorityShare
from truegreen.quantity import Resources

GPU = "nvidia.com/gpu"


def _usage(**machines: MachineUsage) -> ClusterUsage:
    return ClusterUsage(machines=dict(machines))


def _job(*specs: dict[str, Any]) -> TrainingJob:
    sets = tuple(PodSet(f"set-{i}", 1, {"spec": spec}) for i, spec in enumerate(specs))
    return TrainingJob(Kind.JOB, "run", None, sets, together=True)


def test_priorities_matter_only_when_they_can_change_the_verdict() -> None:
    plain = _usage(m1=MachineUsage(2, {"cpu": 1000}))
    system = _usage(
        m1=MachineUsage(2, {"cpu": 1000}, by_priority=[PriorityShare(2000001000, 1, {"cpu": 1})])
    )
    user = _usage(m1=MachineUsage(2, {"cpu": 1000}, by_priority=[PriorityShare(-5, 1, {})]))
    top = _usage(m1=MachineUsage(2, {}, by_priority=[PriorityShare(1_000_000_000, 1, {})]))
    nominated = _usage(m1=MachineUsage(0, {}, nominated=[PriorityShare(0, 1, {GPU: 1})]))
    unnamed = _job({"containers": []})
    named = _job({"containers": []}, {"priorityClassName": "high"})
    assert not priorities_matter(plain, unnamed)
    assert not priorities_matter(plain, None)
    assert not priorities_matter(system, unnamed), "a system priority is above every user's"
    assert priorities_matter(user, unnamed)
    assert priorities_matter(top, unnamed), "the highest user-definable priority is a user's"
    assert priorities_matter(nominated, unnamed)
    assert priorities_matter(plain, named)
    assert not priorities_matter(CantRead(ReadFailure.FORBIDDEN, "no"), named)


def test_the_job_is_as_high_as_its_lowest_pod_set_and_preempts_only_if_all_may() -> None:
    assert job_level([]) == PriorityLevel(0, "", True)
    assert job_level(
        [PriorityLevel(1000, "high", True), PriorityLevel(10, "low", True)]
    ) == PriorityLevel(10, "low", True)
    assert job_level(
        [PriorityLevel(10, "low", True), PriorityLevel(1000, "high", False)]
    ) == PriorityLevel(10, "low", False)
    assert job_level(
        [PriorityLevel(0, "gone", True, missing=True), PriorityLevel(5, "x", True)]
    ) == PriorityLevel(0, "gone", True, missing=True)


def _room(name: str, gpus: int, requested: int = 0, pods: int = 0) -> MachineRoom:
    return MachineRoom(name, Resources.of({GPU: gpus}), 110, Resources.of({GPU: requested}), pods)


def test_room_promised_to_nominated_pods_of_the_job_s_priority_or_above_is_taken() -> None:
    usage = _usage(
        m1=MachineUsage(
            0,
            {},
            nominated=[
                PriorityShare(-1, 1, {GPU: 1}),
                PriorityShare(10, 1, {GPU: 2}),
                PriorityShare(20, 2, {GPU: 4}),
            ],
        )
    )
    rooms = {"m1": _room("m1", 8, 1, 1), "m2": _room("m2", 8)}
    assert with_nominated(rooms, usage, 10, {}) == {
        "m1": _room("m1", 8, 7, 4),
        "m2": _room("m2", 8),
    }
    assert with_nominated(rooms, usage, 21, {})["m1"] == _room("m1", 8, 1, 1)
    assert with_nominated(rooms, usage, None, {})["m1"] == _room("m1", 8, 8, 5)
    own = {"m1": (Resources.of({GPU: 2}), 1)}
    assert with_nominated(rooms, usage, 10, own)["m1"] == _room("m1", 8, 5, 3)


def test_preemption_takes_back_the_room_of_lower_priorities_only() -> None:
    usage = _usage(
        m1=MachineUsage(
            4,
            {GPU: 8},
            by_priority=[PriorityShare(-1, 1, {GPU: 1}), PriorityShare(100, 1, {GPU: 4})],
        )
    )
    rooms = {"m1": _room("m1", 8, 8, 4)}
    # priority 100: the pods at -1 and 0 (3 pods, 4 GPUs) go, the one at 100 stays
    assert after_preemption(rooms, usage, 100) == {"m1": _room("m1", 8, 4, 1)}
    assert after_preemption(rooms, usage, 0) == {"m1": _room("m1", 8, 7, 3)}
    assert after_preemption(rooms, usage, 101) == {"m1": _room("m1", 8, 0, 0)}


def _holder(pod: str, gpus: int, priority: int, namespace: str = "other") -> Holder:
    return Holder(namespace, pod, "ReplicaSet", f"{pod}-rs", {GPU: gpus, "cpu": 100}, priority)


def test_the_victims_are_the_largest_lower_priority_holders_of_what_the_job_lacks() -> None:
    usage = ClusterUsage(
        machines={"m1": MachineUsage(5, {GPU: 8}), "m2": MachineUsage(1, {GPU: 8})},
        holders={
            "m1": [
                _holder("small", 1, 0),
                _holder("big", 4, 0),
                _holder("same", 2, 100),
                _holder("higher", 1, 500),
                _holder("medium", 2, -3, namespace="a-first"),
                Holder("other", "cpu-only", "", "", {"cpu": 4000}, 0),
            ],
            "m2": [_holder("elsewhere", 8, 0)],
        },
    )
    rooms = {"m1": _room("m1", 8, 8, 5), "m2": _room("m2", 8, 8, 1)}
    found = victims(rooms, [("workers", "m1", 1)], {"workers": Resources.of({GPU: 4})}, usage, 100)
    assert [(v.machine, v.holder.pod, v.gives) for v in found] == [
        ("m1", "big", Resources.of({GPU: 4})),
        ("m1", "medium", Resources.of({GPU: 2})),
        ("m1", "small", Resources.of({GPU: 1})),
    ]


def test_a_machine_with_room_to_spare_gives_no_victims() -> None:
    usage = ClusterUsage(
        machines={"m1": MachineUsage(1, {GPU: 2})}, holders={"m1": [_holder("x", 2, 0)]}
    )
    rooms = {"m1": _room("m1", 8, 2, 1)}
    assert victims(rooms, [("w", "m1", 2)], {"w": Resources.of({GPU: 3})}, usage, 100) == []
    # Two pods of 3 need 6, 6 are free: nothing is stopped; a third would need the holder.
    three = victims(rooms, [("w", "m1", 3)], {"w": Resources.of({GPU: 3})}, usage, 100)
    assert [v.holder.pod for v in three] == ["x"]


def test_devices_rank_victims_before_other_resources() -> None:
    usage = ClusterUsage(
        machines={"m1": MachineUsage(2, {})},
        holders={
            "m1": [
                Holder("o", "cpu-heavy", "", "", {"cpu": 7000, GPU: 1}, 0),
                Holder("o", "gpu-heavy", "", "", {"cpu": 1000, GPU: 3}, 0),
            ]
        },
    )
    rooms = {
        "m1": MachineRoom(
            "m1", Resources.of({"cpu": 8000, GPU: 4}), 110, Resources.of({"cpu": 8000, GPU: 4}), 2
        )
    }
    found = victims(rooms, [("w", "m1", 1)], {"w": Resources.of({"cpu": 1000, GPU: 1})}, usage, 1)
    assert [v.holder.pod for v in found] == ["gpu-heavy", "cpu-heavy"]
