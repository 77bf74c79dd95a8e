"""The pools whose devices the allocator gives out
(doctor/checks/capacity/filters/device_room.py `_devices`, `_incomplete`).

Sources: staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
pools_stable.go (`GatherPools`: the newest generation of each pool; a pool with fewer slices
than its `resourceSliceCount` is incomplete; `poolIsInvalid`: "duplicate device name") and
allocator_stable.go (`allocateOne`: "We don't allocate devices from invalid or incomplete
pools"); CHANGELOG-1.35 (#134189: "Devices from incomplete pools were no longer considered for
allocation").
"""

import copy

from tests.unit.test_devices import DRIVER, GPUS, RULE, SEE, Obj, _reads, _run, _slice
from truegreen.doctor.checks.capacity.filters.framework import DeviceRoom, Unchecked
from truegreen.quantity import Resources


def _of(machine: str, devices: int, count: int, generation: int = 1) -> Obj:
    """A slice of `machine`'s pool that says the pool has `count` slices."""
    found = _slice(machine, devices, generation=generation)
    found["spec"]["pool"]["resourceSliceCount"] = count
    return found


def test_a_pool_that_lists_a_device_twice_gives_out_none_of_its_devices() -> None:
    first = _of("a", 2, 2)
    second = copy.deepcopy(first)
    second["metadata"]["name"] = "a-slice-2"
    room, found = _run(_reads([first, second, _slice("b", 1)]))
    assert room.machines == (
        ("a", Resources(), Resources()),
        ("b", Resources.of({GPUS: 1}), Resources()),
    )
    assert found.details[0] == (
        f"ResourceSlice pool {DRIVER}/a: device name gpu-0 listed twice: the pool is invalid "
        "and none of its devices is given out"
    )
    assert found.unchecked == []


def test_a_pool_in_two_slices_of_different_devices_counts_them_all() -> None:
    first = _of("a", 2, 2)
    second = _of("a", 1, 2)
    second["metadata"]["name"] = "a-slice-2"
    second["spec"]["devices"] = [{"name": "gpu-2"}]
    room, found = _run(_reads([first, second]))
    assert room.on("a") == (Resources.of({GPUS: 3}), Resources())
    assert (found.unchecked, found.details) == ([], [f"a: 3 {GPUS} (0 allocated)"])


def test_only_the_newest_generation_is_judged_whole_or_invalid() -> None:
    """An old generation's slice listing the same names is out of date, not a duplicate; the
    newest generation, one slice of the one it declares, is whole."""
    old = _of("a", 2, 1, generation=1)
    new = _of("a", 2, 1, generation=2)
    new["metadata"]["name"] = "a-slice-2"
    room, found = _run(_reads([old, new]))
    assert room.on("a") == (Resources.of({GPUS: 2}), Resources())
    assert found.unchecked == []


def test_a_pool_missing_a_slice_is_unknown_naming_it() -> None:
    room, found = _run(_reads([_of("a", 2, 3), _slice("b", 1)]))
    assert room == DeviceRoom()
    assert found.unchecked == [
        Unchecked(
            RULE,
            "some of the devices it could take are still being published by their driver",
            SEE,
            f"worker: request gpu: ResourceSlice pool {DRIVER}/a: 1 of its 3 slices published",
        )
    ]


def test_an_incomplete_pool_the_request_cannot_take_from_does_not_matter() -> None:
    other = _of("a", 2, 2)
    other["spec"]["driver"] = "nic.example.com"
    room, found = _run(_reads([other, _slice("b", 1)]))
    assert room.machines == (
        ("a", Resources(), Resources()),
        ("b", Resources.of({GPUS: 1}), Resources()),
    )
    assert found.unchecked == []
