"""Which devices the allocator may take: selector order and the pools it skips, over the fake
API server.

Sources: staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
allocator_stable.go (`isSelectable`: the class's selectors, then the request's; `selectorsMatch`
returns a CEL runtime error at once, and allocation aborts; `allocateOne`: "We don't allocate
devices from invalid or incomplete pools") and pools_stable.go (`GatherPools`: a pool of fewer
slices than its `resourceSliceCount` is incomplete; `poolIsInvalid`: "duplicate device name");
staging/src/k8s.io/api/resource/v1/types.go (`CELDeviceSelector`: "Any reference to an unknown
field will cause an evaluation error and allocation to abort"). The devices are
dra-example-driver's (tests/support/filter_objects.py `gpu_slice`).
"""

import copy
from datetime import datetime
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.filter_objects import (
    DRIVER,
    claim_template,
    claims_from_template,
    device_class,
    gpu_slice,
    ranks_job,
)
from tests.support.scenarios import Obj, healthy, node


def _cluster(
    now: datetime, slices: list[Obj], *, ranks: int = 1, template: Obj | None = None
) -> list[Obj]:
    """Two machines, the given slices, a job of `ranks` ranks each claiming from `template`."""
    template = template or claim_template("one-gpu")
    return [
        *healthy(now),
        node("gpu-2", "16", "64Gi"),
        device_class(),
        *slices,
        template,
        ranks_job(
            "dra",
            now,
            ranks=ranks,
            gpus=0,
            **claims_from_template(template["metadata"]["name"]),
        ),
    ]


def _capacity(report: dict[str, Any]) -> dict[str, Any]:
    found = [f for f in report["findings"] if f["check"] == "capacity"]
    assert len(found) == 1, [f["code"] for f in found]
    result: dict[str, Any] = found[0]
    return result


MODEL = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].model == 'LATEST-GPU-MODEL'"
SECOND = f"device.attributes['{DRIVER}'].index == 1"


def _without_model(machine: str) -> Obj:
    """A slice whose first device (gpu-0) publishes no `model` attribute."""
    found = gpu_slice(machine, 2)
    del found["spec"]["devices"][0]["attributes"]["model"]
    return found


def test_a_class_rule_that_fails_on_a_device_is_not_hidden_by_the_request_s_rule(
    doctor: Doctor,
) -> None:
    """The class's selector reads `model`, which gpu-0 lacks: a CEL runtime error, and
    `isSelectable` returns it before the request's selector (`index == 1`, false for gpu-0)
    is evaluated. Allocation aborts there, so the request's refusal never counts: unknown,
    naming the class's expression."""
    template = claim_template("one-gpu")
    request = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    request["selectors"] = [{"cel": {"expression": SECOND}}]

    def objects(now: datetime) -> list[Obj]:
        found = _cluster(now, [_without_model("gpu-1"), _without_model("gpu-2")], template=template)
        return [o for o in found if o["kind"] != "DeviceClass"] + [device_class(MODEL)]

    doctor.load(objects)
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "unknown",
        "capacity.rule-unchecked",
        "cant-check",
    )
    assert found["headline"] == (
        "Couldn't check whether the machines have the devices the training job asks for: its "
        f"devices are picked by a rule doctor can't evaluate (`{MODEL[:99]}…`)."
    )
    assert result.exit_code == 3


def _split(machine: str) -> Obj:
    """A slice of `machine`'s pool that says the pool has two slices."""
    found = gpu_slice(machine, 2)
    found["spec"]["pool"]["resourceSliceCount"] = 2
    return found


def test_a_pool_that_names_a_device_twice_is_not_counted(doctor: Doctor) -> None:
    """gpu-1's pool is published in two slices of one generation that both list gpu-0 and
    gpu-1 (a slice created twice under two names: resourceslicecontroller.go's out-of-date
    informer case, allocator_testing.go "duplicate-slice"). `poolIsInvalid` finds a duplicate
    device name and `allocateOne` skips the pool: no device to give the two ranks of two."""
    first = _split("gpu-1")
    second = copy.deepcopy(first)
    second["metadata"]["name"] += "-2"
    doctor.load(
        lambda now: _cluster(now, [first, second], ranks=2, template=claim_template("two-gpu", 2))
    )
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.rules-block",
        "measured",
    )
    assert found["headline"] == (
        f"A training job of 2 programs of 2 CPUs, 8 GiB memory, 2 {DRIVER} devices each can't "
        f"start: 0 of its 2 programs fit; the next needs 2 {DRIVER} devices and the most free "
        f"on one machine is 0 {DRIVER} devices (gpu-2)."
    )
    assert (
        f"ResourceSlice pool {DRIVER}/gpu-1: device name gpu-0 listed twice: the pool is "
        "invalid and none of its devices is given out"
    ) in found["details"]
    assert result.exit_code == 2


def test_a_pool_missing_one_of_its_slices_is_unknown(doctor: Doctor) -> None:
    """gpu-1's pool says it has two slices and one is published (the driver is republishing
    it). Kubernetes 1.35 skips an incomplete pool (`allocateOne`; CHANGELOG-1.35, #134189:
    "Devices from incomplete pools were no longer considered for allocation"); 1.34 takes its
    devices for a request of a count. doctor doesn't know the scheduler's version: unknown."""
    doctor.load(lambda now: _cluster(now, [_split("gpu-1")]))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "unknown",
        "capacity.rule-unchecked",
        "cant-check",
    )
    assert found["headline"] == (
        "Couldn't check whether the machines have the devices the training job asks for: some "
        "of the devices it could take are still being published by their driver."
    )
    assert (
        f"worker: request gpu: ResourceSlice pool {DRIVER}/gpu-1: 1 of its 2 slices published"
    ) in found["details"]
    assert result.exit_code == 3
