"""`doctor --trial` exchanges between the workers on the port the job's own pods rendezvous on.

training-operator gives a PyTorchJob's pods `MASTER_PORT` from the port named `pytorchjob-port`
of the Master's `pytorch` container (pkg/controller.v1/pytorch/envvar.go
`getPortFromPyTorchJob`), which its defaulting adds, 23456, where the job names none
(pkg/apis/kubeflow.org/v1/pytorch_defaults.go `setPytorchDefaultPort`, `PyTorchJobDefaultPort`).
The env is the controller's, added to the pods it creates, never in the template: a trial on
29500 measures a port the job never uses, and a NetworkPolicy that opens only the job's port
reads as workers that cannot reach rank 0.
"""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_kubelet import FakeKubelet
from tests.support.scenarios import NAMESPACE, healthy
from tests.support.training_kinds import pytorch_job

Obj = dict[str, Any]


def _pytorch_job(port: int | None) -> Any:
    """The healthy namespace with a PyTorchJob (Master 1, Worker 1) asking for no GPU; its
    `pytorch` containers carry `pytorchjob-port` `port` (as the API server stores the job
    after training-operator's defaulting), or no port (a job file not yet defaulted)."""

    def build(now: datetime) -> list[Obj]:
        job = pytorch_job("bert", now, workers=1, gpus=0, age=timedelta(minutes=5))
        for replica in job["spec"]["pytorchReplicaSpecs"].values():
            container = replica["template"]["spec"]["containers"][0]
            container["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
            if port is not None:
                container["ports"] = [
                    {"name": "pytorchjob-port", "containerPort": port, "protocol": "TCP"}
                ]
        return [*(o for o in healthy(now) if o["kind"] != "Job"), job]

    return build


@pytest.mark.parametrize(("port", "told"), [(23456, "23456"), (40123, "40123"), (None, "23456")])
def test_a_pytorch_job_s_workers_meet_on_the_port_its_operator_gives(
    doctor: Doctor, port: int | None, told: str
) -> None:
    doctor.server.install("kubeflow.org")
    doctor.load(_pytorch_job(port))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "--trial-timeout", "30", "-o", "json")
    stored = doctor.server.kubelet.pods
    assert len(stored) == 2, f"precondition: rank 0 and a worker: {sorted(stored)}"
    for name, pod in stored.items():
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
        assert env["TRUEGREEN_PROBE_MASTER_PORT"] == told, name
    trial = [(f["code"], f["status"]) for f in result.json()["findings"] if f["check"] == "trial"]
    assert trial == [("trial.ok", "ok")], trial
    left = [
        p["metadata"]["name"]
        for p in doctor.server.list_objects("Pod", NAMESPACE)
        if "truegreen.io/trial" in (p["metadata"].get("labels") or {})
    ]
    assert left == []
