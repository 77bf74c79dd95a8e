"""A taint a controller owns says what is wrong with the machine: it is never a reservation, and
its remedy never removes it (the controller would put it back, and the work would land on a
machine that is down, starving or leaving)."""

from datetime import datetime
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.scenarios import Obj, find, healthy
from truegreen.doctor.knowledge.taints import SYSTEM_TAINTS

GPU_JOB = ("--job-requests", "cpu=1,memory=1Gi,nvidia.com/gpu=1")


def _capacity(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "capacity"]


def _unreachable_gpu_machine(now: datetime) -> list[Obj]:
    """gpu-1 as the node lifecycle controller leaves it when its kubelet stops reporting:
    Ready Unknown, tainted unreachable NoSchedule and NoExecute (the Kubernetes docs' "Taint
    based Evictions", and `kubectl describe node` of such a machine: `Taints:
    node.kubernetes.io/unreachable:NoExecute, node.kubernetes.io/unreachable:NoSchedule`)."""
    objects = healthy(now)
    gpu = find(objects, "Node", "gpu-1")
    gpu["spec"]["taints"] = [
        {
            "key": "node.kubernetes.io/unreachable",
            "effect": "NoExecute",
            "timeAdded": "2026-12-01T10:00:00Z",
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "effect": "NoSchedule",
            "timeAdded": "2026-12-01T10:00:00Z",
        },
    ]
    gpu["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "Unknown",
            "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
        }
    ]
    return objects


def test_an_unreachable_gpu_machine_is_the_reason_not_the_job_size(doctor: Doctor) -> None:
    """A CPU machine is there, so the job has somewhere to go by the rules; only the GPU
    machine has the GPUs, and it is down. The headline names it, not "add a machine"."""
    doctor.load(_unreachable_gpu_machine)
    result = doctor.live("-o", "json", *GPU_JOB)
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["status"], finding["code"]) == ("fail", "capacity.machines-down")
    assert finding["headline"] == (
        "A training job needs nvidia.com/gpu, and every machine that has it is down: gpu-1."
    )
    assert "describe node gpu-1" in finding["remedy"]
    assert "taint" not in finding["remedy"]
    assert finding["objects"] == ["Node/gpu-1"]
    assert report["headline"]["code"] == "capacity.machines-down"
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("taint", "words"),
    [
        (
            {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"},
            "2 machines are short of memory",
        ),
        (
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
            "2 machines are not ready",
        ),
        (
            {"key": "ToBeDeletedByClusterAutoscaler", "effect": "NoSchedule"},
            "2 machines are being removed by the autoscaler",
        ),
        (
            {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"},
            "2 machines are being removed by Karpenter",
        ),
        # Karpenter v0.32-v0.37 (API v1beta1): kubernetes-sigs/karpenter
        # pkg/apis/v1beta1/taints.go DisruptionNoScheduleTaint.
        (
            {"key": "karpenter.sh/disruption", "value": "disrupting", "effect": "NoSchedule"},
            "2 machines are being removed by Karpenter",
        ),
    ],
)
def test_every_machine_marked_by_a_controller_says_what_is_wrong(
    doctor: Doctor, taint: dict[str, str], words: str
) -> None:
    def marked(now: datetime) -> list[Obj]:
        objects = healthy(now)
        for obj in objects:
            if obj["kind"] == "Node":
                obj["spec"]["taints"] = [dict(taint)]
        return objects

    doctor.load(marked)
    result = doctor.live("-o", "json", *GPU_JOB)
    (finding,) = _capacity(result.json())
    assert finding["code"] == "capacity.no-eligible-machine"
    assert finding["headline"] == f"No machine may run a training job: {words}."
    assert "reserved" not in finding["headline"]
    assert "taint" not in finding["remedy"], finding["remedy"]
    assert result.exit_code == 2


def test_a_taint_no_controller_owns_is_a_reservation_lifted_only_if_nothing_needs_it(
    doctor: Doctor,
) -> None:
    def reserved(now: datetime) -> list[Obj]:
        objects = healthy(now)
        for obj in objects:
            if obj["kind"] == "Node":
                obj["spec"]["taints"] = [
                    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
                ]
        return objects

    doctor.load(reserved)
    (finding,) = _capacity(doctor.live("-o", "json", *GPU_JOB).json())
    assert (
        finding["headline"]
        == "No machine may run a training job: 2 machines are reserved for other work."
    )
    assert "if nobody reserved them on purpose, lift the reservation with" in finding["remedy"]
    assert "taint nodes cpu-1 gpu-1 dedicated-`" in finding["remedy"]


def test_no_controller_taint_has_a_remedy_that_removes_it() -> None:
    """Every controller-owned taint's remedy, with every placeholder filled, names no taint
    command (the list is the one the capacity check reads)."""
    for key, taint in SYSTEM_TAINTS.items():
        text = taint.todo.format(names="gpu-1", check="`kubectl describe node gpu-1`")
        assert "taint" not in text, key
        assert key not in text, key


def test_a_machine_karpenter_v1beta1_is_disrupting_is_leaving_not_reserved(
    doctor: Doctor,
) -> None:
    """Karpenter v0.32 to v0.37 (its v1beta1 API) marks a machine it is disrupting with
    `karpenter.sh/disruption=disrupting:NoSchedule` (kubernetes-sigs/karpenter
    pkg/apis/v1beta1/taints.go `DisruptionTaintKey`, `DisruptingNoScheduleTaintValue`,
    `DisruptionNoScheduleTaint`; v1 renamed it `karpenter.sh/disrupted`). The only GPU machine
    is being disrupted: it is leaving, and Karpenter would put the taint back."""

    def disrupting(now: datetime) -> list[Obj]:
        objects = healthy(now)
        find(objects, "Node", "gpu-1")["spec"]["taints"] = [
            {"key": "karpenter.sh/disruption", "value": "disrupting", "effect": "NoSchedule"}
        ]
        return objects

    doctor.load(disrupting)
    result = doctor.live("-o", "json", *GPU_JOB)
    report = result.json()
    (finding,) = _capacity(report)
    assert finding["code"] == "capacity.machine-kept-out"
    assert finding["headline"] == (
        "The machines big enough for a training job of 1 CPU, 1 GiB memory, 1 nvidia.com/gpu "
        "can't take it: 1 machine is being removed by Karpenter."
    )
    assert finding["remedy"] == (
        "Wait: Karpenter adds a machine for waiting work when its limits allow."
    )
    assert report["headline"]["code"] == "capacity.machine-kept-out"
    assert result.exit_code == 2
