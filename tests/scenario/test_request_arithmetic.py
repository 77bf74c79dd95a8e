"""What a pod reserves, as the scheduler sums it, and how many of a running job's pods its
controller still wants placed: over the fake API server, with objects as the API server stores
them (each test names its upstream source)."""

from datetime import datetime, timedelta
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.filter_objects import ranks_job, running_pod
from tests.support.scenarios import Obj, find, healthy, image_id, job_pod, ts


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


# -- a running Job some of whose pods succeeded --------------------------------------------------


def _half_done(now: datetime) -> list[Obj]:
    """An Indexed Job of 4 ranks of one GPU (parallelism = completions = 4) on gpu-1 (2 GPUs):
    indexes 0 and 1 succeeded, 2 and 3 run there. Its status as the Job controller writes it
    (pkg/controller/job/job_controller.go: `succeeded`, `completedIndexes`, `active`), its pods
    labelled and annotated with their index (`batch.kubernetes.io/job-completion-index`)."""
    job = ranks_job("ranks", now, ranks=4, gpus=1, age=timedelta(minutes=40))
    job["metadata"]["uid"] = "uid-ranks"
    job["status"] = {
        "active": 2,
        "ready": 2,
        "succeeded": 2,
        "completedIndexes": "0-1",
        "startTime": ts(now - timedelta(minutes=39)),
    }
    pods = []
    for index, phase in enumerate(("Succeeded", "Succeeded", "Running", "Running")):
        pod = job_pod(job, now, suffix=f"{index}-x{index}k", node_name="gpu-1", phase=phase)
        index_key = "batch.kubernetes.io/job-completion-index"
        pod["metadata"]["labels"] |= {**job["spec"]["template"]["metadata"]["labels"]}
        pod["metadata"]["labels"][index_key] = str(index)
        pod["metadata"]["annotations"] = {index_key: str(index)}
        image = pod["spec"]["containers"][0]["image"]
        state: Obj = (
            {"running": {"startedAt": ts(now - timedelta(minutes=20))}}
            if phase == "Running"
            else {"terminated": {"exitCode": 0, "reason": "Completed"}}
        )
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
        pod["status"]["containerStatuses"] = [
            {
                "name": "trainer",
                "image": image,
                "imageID": image_id(image),
                "ready": phase == "Running",
                "restartCount": 0,
                "state": state,
            }
        ]
        pods.append(pod)
    return [*healthy(now), job, *pods]


def test_a_job_whose_finished_ranks_left_two_to_run_waits_for_nothing(doctor: Doctor) -> None:
    """The Job controller wants min(parallelism, completions - succeeded) = 2 pods active
    (job_controller.go manageJob `wantActive`), and both run: no pod waits for a machine. The
    job holds gpu-1's room while it runs, as a running job does."""
    doctor.load(_half_done)
    result = doctor.live("-o", "json")
    found = _capacity(result.json())
    assert (found["status"], found["basis"], found["code"], found["headline"]) == (
        "warn",
        "inferred",
        "capacity.held-by-running-job",
        "Training can run, but the free capacity is held by the running training job 'ranks' "
        "(4 CPUs, 16 GiB memory, 2 nvidia.com/gpu on gpu-1); the next training job waits for it.",
    )
    assert found["details"][0] == (
        "job size 2 programs of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu each "
        "(from the template of Job/ranks)"
    )
    assert result.exit_code == 0
