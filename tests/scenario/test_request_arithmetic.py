"""What a pod reserves, as the scheduler sums it, and how many of a running job's pods its
controller still wants placed: over the fake API server, with objects as the API server stores
them (each test names its upstream source)."""

from datetime import datetime
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.filter_objects import ranks_job, running_pod
from tests.support.scenarios import Obj, find, healthy


def _capacity(report: dict[str, Any]) -> dict[str, Any]:
    found: list[dict[str, Any]] = [f for f in report["findings"] if f["check"] == "capacity"]
    assert len(found) == 1, f"capacity findings: {[f['code'] for f in found]}"
    return found[0]


# -- an explicit request of 0 beside a limit -----------------------------------------------------


def _bursting(resources: dict[str, Any]) -> None:
    """`resources` as the API server stores a container that asks for no CPU and may burst:
    SetDefaults_Pod (pkg/apis/core/v1/defaults.go) copies a limit into the requests only where
    the key is absent (`if _, exists := ...Requests[key]; !exists`), so `cpu: "0"` stays."""
    resources["requests"]["cpu"] = "0"
    resources.setdefault("limits", {})["cpu"] = "12"


def test_a_running_pod_s_explicit_zero_request_reserves_no_cpu(doctor: Doctor) -> None:
    """A notebook of another namespace on gpu-1 (16 CPUs) asks for cpu 0 with a limit of 12:
    the scheduler reserves 0 CPU for it (component-helpers resource/helpers.go `PodRequests`
    sums the stored requests), so two ranks of 8 CPUs and a GPU each fit on gpu-1."""

    def build(now: datetime) -> list[Obj]:
        notebook = running_pod("notebook-0", "gpu-1", now, namespace="research", cpu="1")
        _bursting(notebook["spec"]["containers"][0]["resources"])
        return [*healthy(now), notebook, ranks_job("ranks", now, ranks=2, gpus=1, cpu="8")]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _capacity(result.json())
    assert (found["status"], found["basis"], found["code"], found["headline"]) == (
        "ok",
        "measured",
        "capacity.fits",
        "A training job of 2 programs of 8 CPUs, 8 GiB memory, 1 nvidia.com/gpu each fits now.",
    )
    assert result.exit_code == 0


def test_the_job_s_own_explicit_zero_request_asks_for_no_cpu(doctor: Doctor) -> None:
    """The job's template asks for cpu 0 with a limit of 12 per rank: its pods ask the
    scheduler for no CPU, so two ranks fit on gpu-1 (16 CPUs), where 24 CPUs would not."""

    def build(now: datetime) -> list[Obj]:
        job = ranks_job("ranks", now, ranks=2, gpus=1)
        _bursting(job["spec"]["template"]["spec"]["containers"][0]["resources"])
        return [*healthy(now), job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _capacity(result.json())
    assert (found["status"], found["basis"], found["code"], found["headline"]) == (
        "ok",
        "measured",
        "capacity.fits",
        "A training job of 2 programs of 8 GiB memory, 1 nvidia.com/gpu each fits now.",
    )
    assert found["details"][0] == (
        "job size 2 programs of 8 GiB memory, 1 nvidia.com/gpu each "
        "(from the template of Job/ranks)"
    )
    assert result.exit_code == 0


# -- explicit zeros are BestEffort to the kubelet ------------------------------------------------


def test_explicit_zero_requests_named_onto_a_machine_under_memory_pressure_are_turned_away(
    doctor: Doctor,
) -> None:
    """The job names cpu-1 (`spec.nodeName`), which reports MemoryPressure=True with the node
    lifecycle controller's memory-pressure NoSchedule taint; its container asks for cpu 0 and
    memory 0. The quality of service counts only amounts above zero
    (pkg/apis/core/v1/helper/qos/qos.go `ComputePodQOS`), so the pod is BestEffort, and the
    eviction manager's admit handler turns it away (pkg/kubelet/eviction/eviction_manager.go
    `(*managerImpl).Admit`: "The node had condition: [MemoryPressure].")."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        machine = find(objects, "Node", "cpu-1")
        machine["status"]["conditions"] = [
            {"type": "Ready", "status": "True", "reason": "KubeletReady"},
            {"type": "MemoryPressure", "status": "True", "reason": "KubeletHasInsufficientMemory"},
        ]
        machine["spec"]["taints"] = [
            {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"}
        ]
        job = ranks_job("zeros", now, ranks=1, gpus=0, nodeName="cpu-1")
        job["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "requests": {"cpu": "0", "memory": "0"}
        }
        return [*objects, job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _capacity(result.json())
    assert (found["status"], found["basis"], found["code"], found["headline"]) == (
        "fail",
        "measured",
        "capacity.named-machine-unfit",
        "The training job names the machine cpu-1 to run on, and that machine turns it away: "
        "it is short of memory.",
    )
    assert (
        "the kubelet on cpu-1 refuses it: Evicted: The node had condition: [MemoryPressure]."
        in found["details"]
    )
    assert result.exit_code == 2
