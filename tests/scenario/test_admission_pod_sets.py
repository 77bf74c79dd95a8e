"""Admission of a job of several pod sets (a PyTorchJob's Master and Workers) over the fake API
server: every set's pods pass the gates, not only the largest set's.

The training operator creates each replica type's pods from its own template
(kubeflow/training-operator pkg/controller.v1/common/pod.go ReconcilePods), and the API server
admits each pod on its own: one refused set leaves the job without its pods.
"""

import json
from pathlib import Path
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.scenarios import NAMESPACE

Obj = dict[str, Any]


def _replica(count: int, cpu: str, **spec: Any) -> Obj:
    """One replica type of a PyTorchJob as `kubectl apply -f` sends it (kubeflow.org/v1
    ReplicaSpec: replicas and a pod template)."""
    return {
        "replicas": count,
        "template": {
            "spec": {
                **spec,
                "imagePullSecrets": [{"name": "regcred"}],
                "containers": [
                    {
                        "name": "pytorch",
                        "image": "registry.example.com/trainer:2.1",
                        "resources": {
                            "requests": {"cpu": cpu, "memory": "8Gi"},
                            "limits": {"cpu": cpu, "memory": "8Gi"},
                        },
                    }
                ],
            }
        },
    }


def pytorch_job(tmp_path: Path, master: Obj, worker: Obj) -> Path:
    """A PyTorchJob manifest not yet submitted (`--job-file`), Master and Worker replicas."""
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert-large", "namespace": NAMESPACE},
        "spec": {"pytorchReplicaSpecs": {"Master": master, "Worker": worker}},
    }
    path = tmp_path / "pytorchjob.json"
    path.write_text(json.dumps(job))
    return path


def limit_range(name: str, **item: Any) -> Obj:
    """A LimitRange of one Container item, as `kubectl apply` sends it."""
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"limits": [{"type": "Container", **item}]},
    }


def _admission(report: Obj) -> list[Obj]:
    return [f for f in report["findings"] if f["check"] == "admission"]


def _codes(report: Obj) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in _admission(report)]


def test_an_admitted_trial_of_the_workers_leaves_the_masters_refusal(
    doctor: Doctor, tmp_path: Path
) -> None:
    """The trial start is made of the largest set's pod (the Workers, 2 CPUs each) and the
    server admits it; the Master (8 CPUs) is still over the LimitRange's `max` (limitranger/
    admission.go maxConstraint: "maximum cpu usage per Container is 4, but limit is 8"). The
    server's answer measures the pod it was asked about, not the Master's."""
    doctor.load("healthy")
    doctor.server.add(limit_range("per-program", max={"cpu": "4"}))
    path = pytorch_job(tmp_path, master=_replica(1, "8"), worker=_replica(2, "2"))
    result = doctor.live("-o", "json", "--job-file", str(path), "--admission-dry-run")
    report = result.json()
    assert _codes(report) == [("admission.limit-range-refused", "fail", "measured")], (
        "the Master's refusal stays"
    )
    assert result.exit_code == 2
    assert report["headline"]["code"] == "admission.limit-range-refused"
    assert report["headline"]["text"] == (
        "A training job can't start: the environment's size limits 'per-program' refuse it "
        "('pytorch' may use up to 8 CPUs, more than the 4 CPUs each program may have)."
    )
    (found,) = _admission(report)
    assert found["details"] == [
        "LimitRange per-program refuses the pods of PyTorchJob/bert-large (Master): forbidden: "
        "maximum cpu usage per Container is 4, but limit is 8",
        "the trial start was made of the Worker pods only: it does not answer for Master",
    ]


def test_an_admitted_trial_answers_for_every_set_of_the_same_template(
    doctor: Doctor, tmp_path: Path
) -> None:
    """Master and Workers of one template: the server's answer for one pod of it is the answer
    for all; what doctor read into the template is overruled for every set."""
    doctor.load("healthy")
    doctor.server.add(limit_range("per-program", max={"cpu": "4"}))
    path = pytorch_job(tmp_path, master=_replica(1, "2"), worker=_replica(2, "2"))
    result = doctor.live("-o", "json", "--job-file", str(path), "--admission-dry-run")
    report = result.json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    assert result.exit_code == 0
    assert "trial start: admitted" in _admission(report)[0]["details"]
