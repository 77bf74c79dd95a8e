"""Devices of dynamic resource allocation that the namespace's running training jobs hold come
back when those jobs finish, as their CPUs and memory do.

The resourceclaim controller removes a reservation whose pod is done and then clears the claim's
allocation, and deletes a claim generated for a pod that is done (kubernetes
pkg/controller/resourceclaim/controller.go `syncClaim`: `isPodDone`, "deallocates a claim as
soon as the last consumer stops using it"). kube-scheduler's DynamicResources filter answers
`cannot allocate all claims` with Unschedulable, not UnschedulableAndUnresolvable
(pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go `Filter`): the pod waits
for devices to come back. The objects are NVIDIA's DRA driver's (tests/support/nvidia_dra.py).
"""

from datetime import datetime, timedelta
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.filter_objects import claims_from_template, ranks_job
from tests.support.nvidia_dra import (
    H200,
    NVIDIA,
    nvidia_class,
    nvidia_pod_claim,
    nvidia_slice,
    nvidia_template,
)
from tests.support.scenarios import NAMESPACE, Obj, find, healthy, job_pod, node

_CANNOT_ALLOCATE = (
    "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: "
    "0/2 nodes are available: 2 Preemption is not helpful for scheduling."
)
"""kube-scheduler's FitError for a pod whose claims no machine can meet now (framework/types.go
`FitError.Error`: the filters' reasons, then the post-filter plugins' words; dynamicresources.go
`Filter`: `cannot allocate all claims`, its `PostFilter`: `still not schedulable`)."""


def _capacity(report: dict[str, Any]) -> dict[str, Any]:
    found = [f for f in report["findings"] if f["check"] == "capacity"]
    assert len(found) == 1, [f["code"] for f in found]
    result: dict[str, Any] = found[0]
    return result


def _running(now: datetime, job: Obj, suffix: str, machine: str, devices: list[str]) -> list[Obj]:
    """A pod of `job` running on `machine` and the claim it holds `devices` there through."""
    pod = job_pod(job, now, suffix=suffix, node_name=machine, age=timedelta(hours=1))
    pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "True"},
    ]
    template = nvidia_template("two-gpus", NAMESPACE, count=2)
    return [pod, nvidia_pod_claim(pod, template, machine, devices)]


def _one_running_one_waiting(now: datetime, *, scheduler_said: bool) -> list[Obj]:
    """train-002 runs on gpu-1 holding both its GPUs through its claim; train-003, newest,
    asks for 2 GPUs too (its pod waits, with the scheduler's verdict or before it looked)."""
    claims = claims_from_template("two-gpus")
    running = ranks_job("train-002", now, ranks=1, gpus=0, age=timedelta(hours=1), **claims)
    running["status"] = {"active": 1, "ready": 1}
    waiting = ranks_job("train-003", now, ranks=1, gpus=0, age=timedelta(minutes=20), **claims)
    waiting["status"] = {"active": 1}
    pending = job_pod(
        waiting, now, suffix="y1", node_name=None, phase="Pending", scheduler_said=scheduler_said
    )
    if scheduler_said:
        pending["status"]["conditions"][0]["message"] = _CANNOT_ALLOCATE
    return [
        *healthy(now),
        nvidia_class(),
        nvidia_slice("gpu-1", H200, 2),
        nvidia_template("two-gpus", NAMESPACE, count=2),
        running,
        *_running(now, running, "x1", "gpu-1", ["gpu-0", "gpu-1"]),
        waiting,
        pending,
    ]


_HELD = (
    "Training can run, but the free capacity is held by the running training job 'train-002' "
    f"(2 CPUs, 8 GiB memory, 2 {NVIDIA} devices on gpu-1); the next training job waits for it."
)


def test_devices_a_running_training_job_holds_are_a_wait_for_it(doctor: Doctor) -> None:
    doctor.load(lambda now: _one_running_one_waiting(now, scheduler_said=False))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "warn",
        "capacity.held-by-running-job",
        "inferred",
    )
    assert found["headline"] == _HELD
    assert (
        found["remedy"]
        == "Wait for the running training job 'train-002' to finish, or add capacity."
    )
    assert result.exit_code == 0


def test_the_scheduler_that_cannot_allocate_the_claims_waits_for_the_running_job(
    doctor: Doctor,
) -> None:
    """`cannot allocate all claims` is the scheduler's word for devices it lacks now: the wait
    explains it, as `Insufficient nvidia.com/gpu` is explained for a device plugin's GPUs."""
    doctor.load(lambda now: _one_running_one_waiting(now, scheduler_said=True))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("warn", "capacity.held-by-running-job")
    assert found["headline"] == _HELD
    assert f"scheduler on train-003-y1: {_CANNOT_ALLOCATE}" in found["details"]
    assert result.exit_code == 0


def test_a_training_job_that_runs_whole_holds_its_own_devices_for_the_next_run(
    doctor: Doctor,
) -> None:
    """The judged job's both ranks run, each with both GPUs of its machine: the next run waits
    for this one, as it would for GPUs of a device plugin."""

    def build(now: datetime) -> list[Obj]:
        job = ranks_job(
            "train-7",
            now,
            ranks=2,
            gpus=0,
            age=timedelta(hours=2),
            **claims_from_template("two-gpus"),
        )
        job["status"] = {"active": 2, "ready": 2}
        objects = [
            *healthy(now),
            nvidia_class(),
            nvidia_slice("gpu-1", H200, 2),
            nvidia_slice("gpu-2", H200, 2),
            nvidia_template("two-gpus", NAMESPACE, count=2),
            job,
        ]
        objects.append(node("gpu-2", "16", "64Gi"))
        for index, machine in enumerate(("gpu-1", "gpu-2")):
            running = _running(now, job, f"{index}-abcde", machine, ["gpu-0", "gpu-1"])
            running[0]["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = str(
                index
            )
            objects += running
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("warn", "capacity.held-by-running-job")
    assert found["headline"] == (
        "Training can run, but the free capacity is held by the running training job 'train-7' "
        f"(2 CPUs, 8 GiB memory, 2 {NVIDIA} devices on gpu-1; 2 CPUs, 8 GiB memory, 2 "
        f"{NVIDIA} devices on gpu-2); the next training job waits for it."
    )
    assert result.exit_code == 0


def test_devices_held_for_a_program_of_no_training_job_stay_taken(doctor: Doctor) -> None:
    """The same GPUs reserved for a notebook's pod: nothing says when it ends, so they stay
    taken; the job's size names the devices it claims."""

    def build(now: datetime) -> list[Obj]:
        objects = _one_running_one_waiting(now, scheduler_said=False)
        pod = find(objects, "Pod", "train-002-x1")
        pod["metadata"]["ownerReferences"] = []
        pod["metadata"]["labels"] = {"app": "notebook"}
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.rules-block",
        "measured",
    )
    assert found["headline"] == (
        f"A training job of 2 CPUs, 8 GiB memory, 2 {NVIDIA} devices can't start: best machine "
        f"gpu-1 is 2 {NVIDIA} devices short."
    )
    assert result.exit_code == 2


def test_devices_of_a_claim_a_program_of_no_training_job_shares_stay_taken(
    doctor: Doctor,
) -> None:
    """The running job's claim is reserved for a notebook's pod as well: the allocation is
    cleared only once no pod reserves the claim (controller.go `syncClaim`), and nothing says
    when the notebook ends."""

    def build(now: datetime) -> list[Obj]:
        objects = _one_running_one_waiting(now, scheduler_said=False)
        notebook = job_pod(
            ranks_job("notebook", now, ranks=1, gpus=0), now, suffix="0", node_name="gpu-1"
        )
        notebook["metadata"].update(
            {"uid": "uid-notebook-0", "ownerReferences": [], "labels": {"app": "notebook"}}
        )
        claim = find(objects, "ResourceClaim", "train-002-x1-gpu-7k2lp")
        claim["status"]["reservedFor"].append(
            {"resource": "pods", "name": "notebook-0", "uid": "uid-notebook-0"}
        )
        return [*objects, notebook]

    doctor.load(build)
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("fail", "capacity.rules-block")
    assert result.exit_code == 2


def test_devices_reserved_for_a_pod_by_another_uid_are_not_that_pod_s(doctor: Doctor) -> None:
    """A reservation names its pod by uid (resourceclaim.go `IsReservedForPod`): one that names
    an earlier pod of the same name is not the running pod's, and doctor does not count on the
    controller's clean-up of it."""

    def build(now: datetime) -> list[Obj]:
        objects = _one_running_one_waiting(now, scheduler_said=False)
        claim = find(objects, "ResourceClaim", "train-002-x1-gpu-7k2lp")
        claim["status"]["reservedFor"][0]["uid"] = "uid-train-002-x1-before"
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("fail", "capacity.rules-block")
    assert result.exit_code == 2
