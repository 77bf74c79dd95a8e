"""A training job that names a RuntimeClass, as the RuntimeClass admission plugin
(plugin/pkg/admission/runtimeclass/admission.go) and then the scheduler see it: a class that
does not exist refuses the pod ("pod rejected: RuntimeClass "nvidia" not found"); a class that
exists adds its fixed overhead to what the pod needs and its scheduling (nodeSelector,
tolerations) to where it may run, and refuses a pod whose own nodeSelector contradicts it.

RuntimeClass objects as node.k8s.io/v1 stores them (kubernetes.io docs, "Runtime Class":
`handler`, `overhead.podFixed`, `scheduling.nodeSelector`/`tolerations`; the NVIDIA GPU
operator's `nvidia` class, handler `nvidia`).
"""

from datetime import datetime
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import healthy, training_job

Obj = dict[str, Any]

PINNED_HERE = {"admission.runtime-class-missing", "admission.runtime-class-conflict"}
"""The catalogue codes whose words and basis these tests pin."""


def _checked(report: dict[str, Any], check: str) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in report["findings"] if f["check"] == check]


def _runtime_class(name: str, **fields: Any) -> Obj:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": name},
        "handler": name,
        **fields,
    }


def _job_on(runtime: str, **spec: Any) -> Any:
    def build(now: datetime) -> list[Obj]:
        job = training_job("train-011", now, gpus=1, finished=False)
        job["spec"]["template"]["spec"] |= {"runtimeClassName": runtime, **spec}
        return [*healthy(now), job]

    return build


def test_a_runtime_class_that_does_not_exist_refuses_the_job(doctor: Doctor) -> None:
    """The cluster refuses every pod of a job whose RuntimeClass does not exist."""
    doctor.load(_job_on("nvidia"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _checked(report, "admission") == [
        ("admission.runtime-class-missing", "fail", "measured")
    ]
    headline = report["headline"]
    assert headline["text"] == (
        "A training job can't start: it asks for the container runtime 'nvidia', which isn't "
        "set up in the cluster."
    )
    assert "get runtimeclasses`" in headline["remedy"]
    (finding,) = [f for f in report["findings"] if f["check"] == "admission"]
    assert finding["details"] == ['pod rejected: RuntimeClass "nvidia" not found']
    assert result.exit_code == 2


def test_a_runtime_class_that_exists_lets_the_job_in(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        gpu_only = {"nodeSelector": {"accelerator": "gpu"}}
        return [*_job_on("nvidia")(now), _runtime_class("nvidia", scheduling=gpu_only)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _checked(result.json(), "admission") == [("admission.ok", "ok", "measured")]
    assert result.exit_code == 0, result.json()["headline"]
    paths = {r.path for r in doctor.server.requests()}
    assert "/apis/node.k8s.io/v1/runtimeclasses/nvidia" in paths


def test_a_namespace_whose_job_names_no_runtime_class_reads_none(doctor: Doctor) -> None:
    doctor.load(lambda now: [*healthy(now), training_job("train-012", now, finished=False)])
    doctor.live("-o", "json")
    assert not any("runtimeclasses" in r.path for r in doctor.server.requests())


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        # The class's own machines: a label no machine carries.
        (
            {"scheduling": {"nodeSelector": {"kata-containers": "enabled"}}},
            "capacity.no-eligible-machine",
        ),
        # The class's fixed overhead: 4 CPUs asked + 14 = 18 > the GPU machine's 16.
        ({"overhead": {"podFixed": {"cpu": "14", "memory": "1Gi"}}}, "capacity.too-large"),
    ],
    ids=["scheduling", "overhead"],
)
def test_a_runtime_class_s_scheduling_and_overhead_are_placed_with_the_job(
    doctor: Doctor, fields: Obj, code: str
) -> None:
    """The plugin merges the class's nodeSelector into the pod's and sets its overhead; the
    scheduler places that pod (NodeAffinity, NodeResourcesFit with overhead), not the job as
    written."""

    def build(now: datetime) -> list[Obj]:
        return [*_job_on("kata")(now), _runtime_class("kata", **fields)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _checked(report, "admission") == [("admission.ok", "ok", "measured")]
    capacity = _checked(report, "capacity")
    assert capacity == [(code, "fail", "measured")], capacity
    assert result.exit_code == 2, report["headline"]


def test_a_job_whose_machine_choice_contradicts_its_runtime_class_is_refused(
    doctor: Doctor,
) -> None:
    def build(now: datetime) -> list[Obj]:
        gpu_only = {"nodeSelector": {"accelerator": "gpu"}}
        return [
            *_job_on("nvidia", nodeSelector={"accelerator": "cpu"})(now),
            _runtime_class("nvidia", scheduling=gpu_only),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert ("admission.runtime-class-conflict", "fail", "measured") in _checked(report, "admission")
    (finding,) = [f for f in report["findings"] if f["code"] == "admission.runtime-class-conflict"]
    assert finding["details"] == [
        "conflict: runtimeClass.scheduling.nodeSelector[accelerator] = gpu; "
        "pod.spec.nodeSelector[accelerator] = cpu"
    ]
    # A pod the cluster refuses is never placed: its refusal is the headline.
    assert report["headline"]["code"] == "admission.runtime-class-conflict"
    assert report["headline"]["text"] == (
        "A training job can't start: the container runtime 'nvidia' runs only on machines "
        "marked accelerator=gpu, but the job asks for machines marked accelerator=cpu."
    )
    assert result.exit_code == 2


def test_a_runtime_class_that_could_not_be_read_leaves_admission_unknown(
    doctor: Doctor,
) -> None:
    doctor.load(_job_on("nvidia"))
    doctor.server.inject(Fault.FORBIDDEN, r"^/apis/node.k8s.io/v1/runtimeclasses/")
    result = doctor.live("-o", "json")
    report = result.json()
    assert _checked(report, "admission") == [("admission.cant-read", "unknown", "cant-check")]
    assert result.exit_code == 3
