"""A training job whose program template names its machine (`spec.nodeName`) and claims devices
of dynamic resource allocation.

Only kube-scheduler's DynamicResources plugin allocates a claim, and it never sees such a pod.
The resourceclaim controller creates the pod's claim from its template and, for a pod that names
its machine, reserves a claim only once it is allocated (kubernetes
pkg/controller/resourceclaim/controller.go `syncPod`); the kubelet does not start a pod whose
claim is not reserved for it (pkg/kubelet/cm/dra/manager.go `prepareResources`: "is not allowed
to use ResourceClaim"). Website content/en/docs/concepts/scheduling-eviction/
dynamic-resource-allocation.md, "Pre-scheduled Pods": "this only works if those were allocated
by the scheduler for some other pod". The objects are NVIDIA's DRA driver's
(tests/support/nvidia_dra.py).
"""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.filter_objects import claims_from_template, ranks_job
from tests.support.nvidia_dra import (
    H200,
    nvidia_allocated,
    nvidia_class,
    nvidia_slice,
    nvidia_template,
)
from tests.support.scenarios import NAMESPACE, Obj, healthy, node
from tests.support.training_kinds import pytorch_job


def _capacity(report: dict[str, Any]) -> dict[str, Any]:
    found = [f for f in report["findings"] if f["check"] == "capacity"]
    assert len(found) == 1, [f["code"] for f in found]
    result: dict[str, Any] = found[0]
    return result


def _cluster(now: datetime, claims: dict[str, Any], *objects: Obj) -> list[Obj]:
    """gpu-1 and gpu-2 with 2 H200s each; one rank named onto gpu-1 with the pod `claims`."""
    job = ranks_job("pinned", now, ranks=1, gpus=0, **claims)
    job["spec"]["template"]["spec"]["nodeName"] = "gpu-1"
    return [
        *healthy(now),
        node("gpu-2", "16", "64Gi"),
        nvidia_class(),
        nvidia_slice("gpu-1", H200, 2),
        nvidia_slice("gpu-2", H200, 2),
        job,
        *objects,
    ]


def _shared(name: str) -> dict[str, Any]:
    """Pod spec fields that make every pod use the ResourceClaim `name` (the website's
    "ResourceClaims and ResourceClaimTemplates": `resourceClaimName`)."""
    return {"resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}


def _unallocated(name: str) -> Obj:
    claim = nvidia_allocated(name, NAMESPACE, "gpu-1", [])
    claim["status"] = {}
    return claim


def _being_deleted(name: str) -> Obj:
    """An allocated claim being deleted: its finalizer keeps it while a pod uses it."""
    claim = nvidia_allocated(name, NAMESPACE, "gpu-1", ["gpu-0"])
    claim["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    return claim


_NODE_SELECTOR = (
    "Take the machine's name out of the job's settings (`spec.nodeName` of its program "
    "template) and keep it on gpu-1 with `nodeSelector: {kubernetes.io/hostname: gpu-1}` "
    "instead, so that the cluster gives out the devices it claims."
)


@pytest.mark.parametrize("count", [1, 3])
def test_devices_from_a_template_are_never_given_to_a_program_that_names_its_machine(
    doctor: Doctor, count: int
) -> None:
    """gpu-1 has 2 free GPUs: whether the template asks 1 or 3, nobody allocates its claim."""
    doctor.load(
        lambda now: _cluster(
            now, claims_from_template("h200"), nvidia_template("h200", NAMESPACE, count=count)
        )
    )
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.named-machine-unfit",
        "measured",
    )
    assert found["headline"] == (
        "The training job names the machine gpu-1 to run on, and that machine never starts it: "
        "the devices it claims are given out only to programs the cluster places on a machine "
        "itself."
    )
    assert found["remedy"] == _NODE_SELECTOR
    assert result.exit_code == 2


def test_a_shared_claim_allocated_on_the_named_machine_runs_there(doctor: Doctor) -> None:
    """The resourceclaim controller reserves the allocated claim for the pod (`syncPod`)."""
    doctor.load(
        lambda now: _cluster(
            now, _shared("h200s"), nvidia_allocated("h200s", NAMESPACE, "gpu-1", ["gpu-0"])
        )
    )
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("ok", "capacity.fits")
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("claim", "words", "remedy"),
    [
        (
            lambda: [nvidia_allocated("h200s", NAMESPACE, "gpu-2", ["gpu-0"])],
            "can't use its device claim 'h200s', whose devices are on gpu-2",
            "Name the machine the devices of 'h200s' are on (gpu-2) in the job's settings, or "
            "take the machine's name out so that the cluster places it there.",
        ),
        (
            lambda: [_unallocated("h200s")],
            "never starts it: the devices of its device claim 'h200s' are given out only to "
            "programs the cluster places on a machine itself",
            _NODE_SELECTOR,
        ),
        (
            list,
            "never starts it: its device claim 'h200s' doesn't exist",
            "Create the device claim 'h200s', or point the training job at one that exists.",
        ),
        (
            lambda: [_being_deleted("h200s")],
            "never starts it: its device claim 'h200s' is being deleted",
            "Create the device claim 'h200s' again once its deletion is done, or point the "
            "training job at another one.",
        ),
    ],
    ids=["allocated-elsewhere", "not-allocated", "missing", "being-deleted"],
)
def test_a_shared_claim_not_allocated_on_the_named_machine_never_starts_it(
    doctor: Doctor, claim: Any, words: str, remedy: str
) -> None:
    doctor.load(lambda now: _cluster(now, _shared("h200s"), *claim()))
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.named-machine-unfit",
        "measured",
    )
    assert found["headline"] == (
        f"The training job names the machine gpu-1 to run on, and that machine {words}."
    )
    assert found["remedy"] == remedy
    assert result.exit_code == 2


def test_a_shared_claim_the_scheduler_may_allocate_elsewhere_is_unknown(doctor: Doctor) -> None:
    """The Master names gpu-1, the Workers are placed by the scheduler, and all share a claim not
    allocated yet: the scheduler allocates it for the first Worker it places, wherever that is."""

    def build(now: datetime) -> list[Obj]:
        job = pytorch_job("pinned", now, workers=1, gpus=0, age=timedelta(minutes=1))
        for role in ("Master", "Worker"):
            job["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"].update(_shared("h200s"))
        job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["nodeName"] = "gpu-1"
        objects = [o for o in _cluster(now, {}) if o["metadata"]["name"] != "pinned"]
        return [*objects, job, _unallocated("h200s")]

    doctor.server.install("kubeflow.org")
    doctor.load(build)
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("unknown", "capacity.rule-unchecked")
    assert result.exit_code == 3


def test_a_named_machine_s_claims_on_a_cluster_that_serves_no_device_claims_are_unknown(
    doctor: Doctor,
) -> None:
    """Without resource.k8s.io/v1 (before 1.34, or turned off) the claims are not judged."""
    doctor.server.disable("resource.k8s.io")
    doctor.load(
        lambda now: [
            o for o in _cluster(now, _shared("h200s")) if "resource.k8s.io" not in o["apiVersion"]
        ]
    )
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["code"]) == ("unknown", "capacity.rule-unchecked")
    assert (
        "the cluster doesn't offer devices the way its programs ask for them" in found["headline"]
    )
    assert result.exit_code == 3


def test_a_named_machine_s_shared_claim_not_readable_is_unknown(doctor: Doctor) -> None:
    doctor.load(
        lambda now: _cluster(
            now, _shared("h200s"), nvidia_allocated("h200s", NAMESPACE, "gpu-1", ["gpu-0"])
        )
    )
    doctor.server.inject(Fault.FORBIDDEN, r"^/apis/resource\.k8s\.io/v1/resourceclaims$")
    result = doctor.live("-o", "json", "-v")
    found = _capacity(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "unknown",
        "cant-check",
        "capacity.cant-read",
    )
    assert "auth can-i list resourceclaims --all-namespaces`" in found["remedy"]
    assert result.exit_code == 3
