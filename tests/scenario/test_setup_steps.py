"""A training pod whose init containers still run: the kubelet measured a setup step in
progress, which is no failure to start.

The kubelet runs a pod's init containers one at a time and starts the main containers only
once every one has ended; until then the pod's phase is Pending, its `Initialized` condition
False (`ContainersNotInitialized`) and its main containers wait in `PodInitializing`
(pkg/kubelet/kuberuntime/kuberuntime_container.go computeInitContainerActions;
pkg/kubelet/status/generate.go GeneratePodInitializedCondition). A native sidecar (an init
container of `restartPolicy: Always`, KEP-753) is waited for only until it has started
(`started: true`, its startup probe passed); then the kubelet goes on to the next one."""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.scenarios import (
    Obj,
    container_id,
    healthy,
    image_id,
    job_pod,
    training_job,
    ts,
)

_FETCH = "registry.example.com/fetch:1"
_SHIPPER = "registry.example.com/log-shipper:3.0"


def _initializing(now: datetime, *init: tuple[str, str, dict[str, Any], bool]) -> list[Obj]:
    """A training Job's pod placed on gpu-1 10 minutes ago, its init containers (name, image,
    spec fields, started) running since 9 minutes ago, as the kubelet writes the pod's status
    while it initializes."""
    job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=10))
    job["spec"]["template"]["spec"]["initContainers"] = [
        {"name": name, "image": image, **fields} for name, image, fields, _ in init
    ]
    job["status"] = {"active": 1, "ready": 0, "startTime": ts(now - timedelta(minutes=10))}
    pod = job_pod(
        job, now, suffix="x1", node_name="gpu-1", phase="Pending", age=timedelta(minutes=10)
    )
    waiting = [name for name, _, _, started in init if not started]
    pod["status"]["conditions"] = [
        {"type": "PodReadyToStartContainers", "status": "True"},
        {
            "type": "Initialized",
            "status": "False",
            "reason": "ContainersNotInitialized",
            "message": f"containers with incomplete status: [{' '.join(waiting)}]",
        },
        {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
        {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady"},
        {"type": "PodScheduled", "status": "True"},
    ]
    pod["status"]["initContainerStatuses"] = [
        {
            "name": name,
            "image": image,
            "imageID": image_id(image),
            "containerID": container_id("train-002-x1", name),
            "ready": started and fields.get("restartPolicy") == "Always",
            "started": started,
            "restartCount": 0,
            "state": {"running": {"startedAt": ts(now - timedelta(minutes=9))}},
        }
        for name, image, fields, started in init
    ]
    pod["status"]["containerStatuses"] = [
        {
            "name": "trainer",
            "image": "registry.example.com/trainer:2.1",
            "imageID": "",
            "ready": False,
            "started": False,
            "restartCount": 0,
            "state": {"waiting": {"reason": "PodInitializing"}},
        }
    ]
    pod["status"]["startTime"] = ts(now - timedelta(minutes=10))
    return [*healthy(now), job, pod]


def _workloads(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "workloads"]


@pytest.mark.parametrize(
    ("init", "words"),
    [
        (
            [("fetch-data", _FETCH, {}, True)],
            "its setup step 'fetch-data' has been running for 9 minutes",
        ),
        (
            # A sidecar whose startup probe has not passed yet holds the next one back.
            [("log-shipper", _SHIPPER, {"restartPolicy": "Always"}, False)],
            "its helper 'log-shipper' has been starting for 9 minutes",
        ),
        (
            # A started sidecar is past; the step after it runs.
            [
                ("log-shipper", _SHIPPER, {"restartPolicy": "Always"}, True),
                ("fetch-data", _FETCH, {}, True),
            ],
            "its setup step 'fetch-data' has been running for 9 minutes",
        ),
    ],
    ids=["setup-step", "sidecar-starting", "step-after-sidecar"],
)
def test_a_setup_step_still_running_is_preparing_not_stuck(
    doctor: Doctor, init: list[tuple[str, str, dict[str, Any], bool]], words: str
) -> None:
    doctor.load(lambda now: _initializing(now, *init))
    result = doctor.live("-o", "json")
    found = _workloads(result.json())
    assert [(f["code"], f["status"], f["basis"]) for f in found] == [
        ("workloads.preparing", "warn", "measured")
    ]
    assert found[0]["headline"] == f"The training job 'train-002' is still preparing: {words}."
    step = words.split("'")[1]
    assert found[0]["remedy"].startswith("Nothing has failed; wait for it. `kubectl")
    assert found[0]["remedy"].endswith(f"logs train-002-x1 -c {step}` shows what it does.")
    assert result.exit_code == 0


def test_a_started_sidecar_is_not_what_holds_the_pod(doctor: Doctor) -> None:
    """Every sidecar started and no setup step runs: the kubelet has nothing left to wait
    for in the init containers, so what holds the pod on its machine is elsewhere."""
    doctor.load(
        lambda now: _initializing(now, ("log-shipper", _SHIPPER, {"restartPolicy": "Always"}, True))
    )
    result = doctor.live("-o", "json")
    assert [(f["code"], f["status"], f["basis"]) for f in _workloads(result.json())] == [
        ("workloads.stuck-on-machine", "fail", "inferred")
    ]
    assert result.exit_code == 2
