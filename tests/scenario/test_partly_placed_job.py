"""A job part of whose pods run while the rest wait: its own running pods keep their room.

kube-scheduler places each pod of a job on its own (no gang under the default scheduler), so a
PyTorchJob can have its master and one worker running while two workers wait. What those two
hold is the job's, not other work to stop, and not room the waiting pods could have: judged as
if the machines were empty, the job's own pods stay where they are.
"""

from datetime import datetime, timedelta
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support import gang_objects as gang
from tests.support.scenarios import (
    REGISTRY,
    Obj,
    gpu_held_by_notebook,
    image_id,
    node,
    ts,
)
from tests.support.training_kinds import ALL_GROUPS

JOB = "bert-large"
NO_ROOM = (
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
    "available: 3 No preemption victims found for incoming pod."
)
"""kube-scheduler's FitError message (pkg/scheduler/schedule_one.go) with the preemption
plugin's verdict, as `kubectl describe pod` prints it."""


def _partly_placed(now: datetime) -> list[Obj]:
    """bert-large (a master and 3 workers, 2 GPUs each, the default scheduler): the master and
    worker 0 run on gpu-8 (4 GPUs, full); workers 1 and 2 wait, Unschedulable."""
    job, *pods = gang.volcano_job(JOB, now, scheduler="default-scheduler", age=timedelta(hours=1))
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        del replica["template"]["spec"]["schedulerName"]
        del replica["template"]["metadata"]["annotations"]
    for index, pod in enumerate(pods):
        del pod["spec"]["schedulerName"]
        del pod["metadata"]["annotations"]
        if index < 2:
            image = f"{REGISTRY}/trainer:2.1"
            pod["spec"]["nodeName"] = "gpu-8"
            pod["status"] = {
                "phase": "Running",
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastTransitionTime": ts(now - timedelta(minutes=50)),
                    },
                ],
                "containerStatuses": [
                    {
                        "name": "pytorch",
                        "image": image,
                        "imageID": image_id(image),
                        "ready": True,
                        "restartCount": 0,
                        "state": {"running": {"startedAt": ts(now - timedelta(minutes=50))}},
                    }
                ],
            }
        else:
            pod["status"] = {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": NO_ROOM,
                        "lastTransitionTime": ts(now - timedelta(minutes=50)),
                    }
                ],
            }
    return [*gpu_held_by_notebook(now), node("gpu-8", "64", "512Gi", gpus=4), job, *pods]


def _capacity(report: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in report["findings"] if f["check"] == "capacity" and f["status"] != "ok")


def test_a_job_s_own_running_pods_are_not_room_it_can_have(doctor: Doctor) -> None:
    """Two waiting workers need 4 GPUs; gpu-8's 4 are the job's own, gpu-1's 2 the notebook's:
    even with the notebook gone only one worker fits, so the job is too large, and its own
    pods are never the work to stop."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load(_partly_placed)
    result = doctor.live("-o", "json")
    report = result.json()
    finding = _capacity(report)
    assert finding["code"] == "capacity.too-large", (finding["code"], finding["headline"])
    assert (
        "2 of the job's own programs already on gpu-8 keep their room there" in (finding["details"])
    ), finding["details"]
    assert result.exit_code == 2


def test_other_work_named_is_never_the_job_itself(doctor: Doctor) -> None:
    """With gpu-9 (4 GPUs) held by another notebook, the waiting workers would fit were the
    notebooks gone: the room is held by them, and the job is not named as its own blocker."""

    def build(now: datetime) -> list[Obj]:
        objects = _partly_placed(now)
        notebook = next(o for o in objects if o["metadata"]["name"] == "notebook-alice-0")
        other = {
            **notebook,
            "metadata": {**notebook["metadata"], "name": "notebook-bob-0"},
            "spec": {**notebook["spec"], "nodeName": "gpu-9"},
        }
        other["spec"]["containers"] = [
            {**c, "resources": {"requests": {**c["resources"]["requests"], "nvidia.com/gpu": "4"}}}
            for c in notebook["spec"]["containers"]
        ]
        return [*objects, node("gpu-9", "64", "512Gi", gpus=4), other]

    doctor.server.install(*ALL_GROUPS)
    doctor.load(build)
    finding = _capacity(doctor.live("-o", "json").json())
    assert finding["code"] == "capacity.blocked-by-other-work", (
        finding["code"],
        finding["headline"],
    )
    assert "notebook" in finding["headline"], finding["headline"]
    assert JOB not in finding["headline"], finding["headline"]
