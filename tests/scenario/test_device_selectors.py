"""Device selectors (CEL) of NVIDIA's DRA driver, evaluated over the fake API server.

The DeviceClass and ResourceSlices are NVIDIA/k8s-dra-driver-gpu's (tests/support/nvidia_dra.py
names the files); the request's selectors are the forms the Kubernetes DRA documentation shows.
Two machines with two GPUs each; the job has two ranks, each claiming one GPU from a template.
"""

from datetime import datetime
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.filter_objects import claims_from_template, ranks_job
from tests.support.nvidia_dra import (
    A100,
    H200,
    NVIDIA,
    Gpu,
    nvidia_allocated,
    nvidia_alternatives,
    nvidia_class,
    nvidia_slice,
    nvidia_template,
)
from tests.support.scenarios import NAMESPACE, Obj, healthy, node

H200_ONLY = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"
BIG_MEMORY = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
# ext.Strings' lowerAscii is in Kubernetes' CEL environment, not in the evaluator doctor uses.
LOWER = "device.attributes['gpu.nvidia.com'].productName.lowerAscii() == 'nvidia h200'"


A100_ONLY = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"


def _cluster(
    now: datetime, gpu: Gpu, *selectors: str, taken: bool = False, template: Obj | None = None
) -> list[Obj]:
    objects = [
        *healthy(now),
        node("gpu-2", "16", "64Gi"),
        nvidia_class(),
        nvidia_slice("gpu-1", gpu, 2),
        nvidia_slice("gpu-2", gpu, 2),
        template or nvidia_template("h200", NAMESPACE, *selectors),
        ranks_job("dra", now, ranks=2, gpus=0, **claims_from_template("h200")),
    ]
    if taken:
        objects += [
            nvidia_allocated("render-a", "research", "gpu-1", ["gpu-0", "gpu-1"]),
            nvidia_allocated("render-b", "research", "gpu-2", ["gpu-0", "gpu-1"]),
        ]
    return objects


def _capacity(report: dict[str, Any]) -> dict[str, Any]:
    found = [f for f in report["findings"] if f["check"] == "capacity"]
    assert len(found) == 1, [f["code"] for f in found]
    result: dict[str, Any] = found[0]
    return result


def test_a_selector_for_h200s_where_the_machines_have_a100s_leaves_no_device(
    doctor: Doctor,
) -> None:
    doctor.load(lambda now: _cluster(now, A100, H200_ONLY))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.rules-block",
        "measured",
    )
    assert found["headline"] == (
        f"A training job of 2 programs of 2 CPUs, 8 GiB memory, 1 {NVIDIA} device each can't "
        f"start: 0 of its 2 programs fit; the next needs 1 {NVIDIA} device and the most free "
        f"on one machine is 0 {NVIDIA} devices (gpu-2)."
    )
    assert result.exit_code == 2


def test_a_selector_the_machines_gpus_meet_fits(doctor: Doctor) -> None:
    doctor.load(lambda now: _cluster(now, H200, H200_ONLY, BIG_MEMORY))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert found["code"] == "capacity.fits"
    assert "worker x2 on gpu-1" in found["details"]
    assert result.exit_code == 0


def test_a_rule_doctor_cannot_evaluate_with_every_gpu_taken_cannot_get_one(
    doctor: Doctor,
) -> None:
    """Whatever the rule says, every GPU the class takes is allocated: measured."""
    doctor.load(lambda now: _cluster(now, H200, LOWER, taken=True))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.no-eligible-machine",
        "measured",
    )
    assert found["headline"] == (
        "No machine may run a training job: no device is free that could be of the kind its "
        "request 'gpu' asks for."
    )
    assert result.exit_code == 2


def test_a_rule_doctor_cannot_evaluate_with_gpus_free_is_unknown_naming_it(
    doctor: Doctor,
) -> None:
    doctor.load(lambda now: _cluster(now, H200, LOWER))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("unknown", "capacity.rule-unchecked")
    assert found["headline"] == (
        "Couldn't check whether the machines have the devices the training job asks for: its "
        f"devices are picked by a rule doctor can't evaluate (`{LOWER}`)."
    )
    assert result.exit_code == 3


def _h200_else_a100s() -> Obj:
    """One H200, else two A100s: the alternatives in order of preference."""
    return nvidia_alternatives("h200", NAMESPACE, ("h200", H200_ONLY, 1), ("a100s", A100_ONLY, 2))


def test_alternatives_of_which_one_can_be_met_count_as_that_one(doctor: Doctor) -> None:
    """No H200 anywhere: the allocator falls to two A100s per rank; four A100s hold two ranks."""
    doctor.load(lambda now: _cluster(now, A100, template=_h200_else_a100s()))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert found["code"] == "capacity.fits"
    assert found["details"][-3:] == [
        "worker x1 on gpu-1",
        "worker x1 on gpu-2",
        "fits on gpu-1, gpu-2",
    ]
    assert result.exit_code == 0


def test_alternatives_none_of_which_has_a_free_device_cannot_be_met(doctor: Doctor) -> None:
    doctor.load(lambda now: _cluster(now, A100, taken=True, template=_h200_else_a100s()))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.no-eligible-machine",
        "measured",
    )
    assert found["headline"] == (
        "No machine may run a training job: no device is free of any kind its request 'gpu' "
        "accepts."
    )
    assert result.exit_code == 2
