"""Every machine that offers the devices a job claims is down: the machines are the cause, as for
GPUs of a device plugin (docs/scheduling.md, `capacity.machines-down`).

A machine whose kubelet stopped reporting keeps its ResourceSlices (its kubelet plugin, which
would delete them, is down with it) and gets the node lifecycle controller's
`node.kubernetes.io/unreachable` taints (pkg/controller/nodelifecycle), which kube-scheduler's
TaintToleration refuses. The objects are NVIDIA's DRA driver's (tests/support/nvidia_dra.py).
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
    nvidia_class,
    nvidia_slice,
    nvidia_template,
)
from tests.support.scenarios import NAMESPACE, Obj, find, healthy, node

H200_ONLY = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"


def _capacity(report: dict[str, Any]) -> dict[str, Any]:
    found = [f for f in report["findings"] if f["check"] == "capacity"]
    assert len(found) == 1, [f["code"] for f in found]
    result: dict[str, Any] = found[0]
    return result


def _down(machine: Obj) -> None:
    """`machine` as the node lifecycle controller leaves it when its kubelet stops reporting
    (the Kubernetes docs' "Taint based Evictions")."""
    machine["spec"]["taints"] = [
        {
            "key": "node.kubernetes.io/unreachable",
            "effect": effect,
            "timeAdded": "2026-12-01T10:00:00Z",
        }
        for effect in ("NoSchedule", "NoExecute")
    ]
    machine["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "Unknown",
            "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
        }
    ]


def _cluster(now: datetime, down: tuple[str, ...], gpu_2: Gpu = H200, *selectors: str) -> list[Obj]:
    """cpu-1 up; gpu-1 (H200s) and gpu-2 with 2 GPUs each, `down` of them down; the job has two
    ranks, each claiming one GPU of the request's `selectors`."""
    objects = [
        *healthy(now),
        node("gpu-2", "16", "64Gi"),
        nvidia_class(),
        nvidia_slice("gpu-1", H200, 2),
        nvidia_slice("gpu-2", gpu_2, 2),
        nvidia_template("h200", NAMESPACE, *selectors),
        ranks_job("dra", now, ranks=2, gpus=0, **claims_from_template("h200")),
    ]
    for name in down:
        _down(find(objects, "Node", name))
    return objects


def test_every_machine_with_the_claimed_devices_down_is_the_reason(doctor: Doctor) -> None:
    doctor.load(lambda now: _cluster(now, ("gpu-1", "gpu-2")))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.machines-down",
        "measured",
    )
    assert found["headline"] == (
        f"The training job 'dra' needs {NVIDIA} devices, and every machine that has them is down: "
        "gpu-1, gpu-2."
    )
    assert "describe node gpu-1 gpu-2" in found["remedy"]
    assert found["objects"] == ["Node/gpu-1", "Node/gpu-2"]
    assert "gpu-1: Ready=Unknown: Kubelet stopped posting node status." in found["details"]
    assert result.exit_code == 2


def test_the_machines_down_are_those_with_devices_the_request_takes(doctor: Doctor) -> None:
    """gpu-2 is up but has A100s, which the request's selector refuses: only gpu-1 offers what
    the job claims, and it is down."""
    doctor.load(lambda now: _cluster(now, ("gpu-1",), A100, H200_ONLY))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("fail", "capacity.machines-down")
    assert found["headline"] == (
        f"The training job 'dra' needs {NVIDIA} devices, and every machine that has them is down: "
        "gpu-1."
    )
    assert result.exit_code == 2


def test_a_machine_with_the_devices_up_runs_the_job(doctor: Doctor) -> None:
    doctor.load(lambda now: _cluster(now, ("gpu-1",)))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("ok", "capacity.fits")
    assert "worker x2 on gpu-2" in found["details"]
    assert result.exit_code == 0
