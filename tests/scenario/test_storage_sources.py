"""Where the claims the storage check reads come from: a StatefulSet's claim templates, as its
controller names and creates them."""

import copy
from datetime import datetime, timedelta
from typing import Any

import yaml

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import (
    NAMESPACE,
    Obj,
    container,
    healthy,
    job_pod,
    running_containers,
    training_job,
    ts,
)


def _statefulset(replicas: int, made: int, ready: int, start: int | None = None) -> Obj:
    """A StatefulSet `db` with one claim template `data`, as `kubectl get sts -o yaml` shows it,
    `made` of its copies made and `ready` of them ready; `start` is spec.ordinals.start (apps/v1
    StatefulSetOrdinals)."""
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": "db",
        "selector": {"matchLabels": {"app": "db"}},
        "template": {
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [container("db", "registry.example.com/db:1", port=5432)]},
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "standard",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
    }
    if start is not None:
        spec["ordinals"] = {"start": start}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": NAMESPACE, "generation": 1},
        "spec": spec,
        "status": {
            "observedGeneration": 1,
            "replicas": made,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "currentReplicas": made,
            "updatedReplicas": made,
            "currentRevision": "db-1",
            "updateRevision": "db-1",
        },
    }


def _copy(statefulset: Obj, ordinal: int, now: datetime, *, ready: bool = True) -> list[Obj]:
    """The pod `db-<ordinal>` and its claim `data-db-<ordinal>`, Bound, as the StatefulSet
    controller makes them (pkg/controller/statefulset/stateful_set_utils.go newStatefulSetPod,
    updateStorage, getPersistentVolumeClaimName)."""
    started = ts(now - timedelta(hours=2))
    spec = copy.deepcopy(statefulset["spec"]["template"]["spec"])
    spec["nodeName"] = "cpu-1"
    claim = f"data-db-{ordinal}"
    spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"db-{ordinal}",
            "namespace": NAMESPACE,
            "labels": {"app": "db", "controller-revision-hash": "db-1"},
            "creationTimestamp": started,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": "db",
                    "uid": "uid-db",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": str(ready), "lastTransitionTime": started},
            ],
            "containerStatuses": running_containers(f"db-{ordinal}", spec["containers"], started),
        },
    }
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": NAMESPACE, "labels": {"app": "db"}},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "standard",
            "volumeName": f"pv-{ordinal}",
            "resources": {"requests": {"storage": "1Gi"}},
        },
        "status": {"phase": "Bound"},
    }
    return [pod, volume]


def _storage(report: dict[str, Any]) -> list[tuple[str, str, str, list[str]]]:
    return [
        (f["code"], f["status"], f["basis"], f["objects"])
        for f in report["findings"]
        if f["check"] == "storage"
    ]


def test_statefulset_claims_follow_its_first_ordinal(doctor: Doctor) -> None:
    """spec.ordinals.start 5 with 2 replicas: the copies are db-5 and db-6 and their claims
    data-db-5 and data-db-6 (stateful_set_utils.go getStartOrdinal, getEndOrdinal,
    getPersistentVolumeClaimName); no data-db-0 is ever made."""

    def build(now: datetime) -> list[Obj]:
        statefulset = _statefulset(2, 2, 2, start=5)
        return [
            *healthy(now),
            statefulset,
            *_copy(statefulset, 5, now),
            *_copy(statefulset, 6, now),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _storage(report) == [
        (
            "storage.ok",
            "ok",
            "measured",
            [
                "PersistentVolumeClaim/data-db-5",
                "PersistentVolumeClaim/data-db-6",
                "PersistentVolumeClaim/datasets",
            ],
        )
    ], _storage(report)
    assert result.exit_code == 0, report["headline"]
    assert not doctor.server.requests("GET", r"/persistentvolumeclaims/data-db-0$")


def test_a_copy_not_made_yet_gets_its_claim_with_it(doctor: Doctor) -> None:
    """Scaling from 2 to 3, db-2 not made yet: data-db-2 does not exist, and is not the
    operator's to create. The controller creates a copy's claims right before the copy
    (stateful_pod_control.go CreateStatefulPod -> createPersistentVolumeClaims); the workloads
    check says the set is being updated."""

    def build(now: datetime) -> list[Obj]:
        statefulset = _statefulset(3, 2, 2)
        return [
            *healthy(now),
            statefulset,
            *_copy(statefulset, 0, now),
            *_copy(statefulset, 1, now),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _storage(report) == [
        (
            "storage.ok",
            "ok",
            "measured",
            [
                "PersistentVolumeClaim/data-db-0",
                "PersistentVolumeClaim/data-db-1",
                "PersistentVolumeClaim/datasets",
            ],
        )
    ], _storage(report)
    assert (report["headline"]["code"], report["headline"]["status"]) == (
        "workloads.updating",
        "warn",
    )
    assert result.exit_code == 0


def test_a_made_copy_without_its_claim_is_missing_it(doctor: Doctor) -> None:
    """db-6 exists and mounts data-db-6, which does not: the copy can't start (the kubelet
    waits for the claim), and the storage check says so."""

    def build(now: datetime) -> list[Obj]:
        statefulset = _statefulset(2, 2, 1, start=5)
        pod, _ = _copy(statefulset, 6, now, ready=False)
        pod["status"] = {"phase": "Pending"}
        return [*healthy(now), statefulset, *_copy(statefulset, 5, now), pod]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _storage(report) == [
        ("storage.volume-missing", "fail", "measured", ["PersistentVolumeClaim/data-db-6"])
    ], _storage(report)
    assert report["headline"]["text"] == (
        "The dataset volume 'data-db-6' doesn't exist, so what uses it can't start."
    )
    assert result.exit_code == 2


def test_unread_copies_leave_a_missing_claim_unknown(doctor: Doctor) -> None:
    """Without the pods, doctor can't tell whether data-db-2's copy is made (then it waits for
    the claim) or not (then the controller makes the claim with it): an unknown."""

    def build(now: datetime) -> list[Obj]:
        statefulset = _statefulset(3, 2, 2)
        return [
            *healthy(now),
            statefulset,
            *_copy(statefulset, 0, now),
            *_copy(statefulset, 1, now),
        ]

    doctor.load(build)
    doctor.server.inject(Fault.FORBIDDEN, rf"^/api/v1/namespaces/{NAMESPACE}/pods$", method="GET")
    result = doctor.live("-o", "json")
    report = result.json()
    assert ("storage.cant-read", "unknown", "cant-check", ["PersistentVolumeClaim/data-db-2"]) in (
        _storage(report)
    ), _storage(report)
    assert result.exit_code == 3


SCRATCH_CLAIM: dict[str, Any] = {
    "accessModes": ["ReadWriteOnce"],
    "storageClassName": "fast-nvme",
    "resources": {"requests": {"storage": "500Gi"}},
}
SCRATCH: dict[str, Any] = {
    "name": "scratch",
    "ephemeral": {"volumeClaimTemplate": {"spec": SCRATCH_CLAIM}},
}
"""A generic ephemeral volume (core/v1 EphemeralVolumeSource) asking for a storage type."""


def _scratch_job(now: datetime, storage_type: str = "fast-nvme") -> Obj:
    job = training_job("train-010", now, finished=False)
    del job["status"]
    volume = copy.deepcopy(SCRATCH)
    volume["ephemeral"]["volumeClaimTemplate"]["spec"]["storageClassName"] = storage_type
    job["spec"]["template"]["spec"]["volumes"].append(volume)
    return job


def _job_file(doctor: Doctor, job: Obj) -> str:
    path = doctor.tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job), encoding="utf-8")
    return str(path)


def test_a_planned_jobs_ephemeral_volume_asks_for_a_missing_storage_type(doctor: Doctor) -> None:
    """The ephemeral volume controller makes the claim `<pod>-scratch` with the template's spec
    (pkg/controller/volume/ephemeral/controller.go handleVolume), and the PV controller can't
    provision it: ProvisioningFailed `storageclass.storage.k8s.io "fast-nvme" not found`. No pod
    yet, so the template's storage type is judged as a claim's would be."""
    doctor.load(healthy)
    # A snapshot is taken without the job file: it holds no read of a storage type only the
    # planned job names (pinned below), so the round trip can't give the live verdict.
    doctor.round_trip = False
    job_file = _job_file(doctor, _scratch_job(doctor.now))
    result = doctor.live("-o", "json", "--job-file", job_file)
    report = result.json()
    assert _storage(report) == [
        (
            "storage.type-missing",
            "fail",
            "measured",
            ["Job/train-010", "StorageClass/fast-nvme"],
        )
    ], _storage(report)
    assert report["headline"]["text"] == (
        "The dataset volume 'scratch' asks for a storage type 'fast-nvme' that doesn't exist."
    )
    assert result.exit_code == 2
    offline = doctor.offline(doctor.snapshot(), "-o", "json", "--job-file", job_file).json()
    assert [f[:2] for f in _storage(offline)] == [("storage.cant-read", "unknown")], offline


def test_a_planned_jobs_ephemeral_volume_of_an_existing_storage_type_is_ready(
    doctor: Doctor,
) -> None:
    """The same volume of the storage type `standard`, which exists: nothing to say."""
    doctor.load(healthy)
    doctor.round_trip = False  # as above: the snapshot holds no read of `standard`
    job = _scratch_job(doctor.now, "standard")
    result = doctor.live("-o", "json", "--job-file", _job_file(doctor, job))
    report = result.json()
    assert _storage(report) == [
        ("storage.ok", "ok", "measured", ["PersistentVolumeClaim/datasets"])
    ], _storage(report)
    assert result.exit_code == 0, report["headline"]


def _waiting_pod(now: datetime) -> Obj:
    pod = job_pod(
        _scratch_job(now), now, suffix="w0", node_name=None, phase="Pending", scheduler_said=False
    )
    pod["metadata"]["uid"] = "uid-train-010-w0"
    return pod


def _scratch_claim(pod: Obj, *, owned: bool = True) -> Obj:
    """The claim the ephemeral volume controller made for `pod`'s volume `scratch`: named
    `<pod>-<volume>`, controlled by the pod (component-helpers storage/ephemeral
    VolumeClaimName; controller.go handleVolume sets the owner reference)."""
    meta: dict[str, Any] = {"name": f"{pod['metadata']['name']}-scratch", "namespace": NAMESPACE}
    if owned:
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod["metadata"]["name"],
                "uid": pod["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": copy.deepcopy(SCRATCH_CLAIM),
        "status": {"phase": "Pending"},
    }


def test_a_waiting_pods_ephemeral_claim_is_read_like_any_other(doctor: Doctor) -> None:
    """The pod waits; its claim `train-010-w0-scratch` asks for the storage type `fast-nvme`,
    which doesn't exist: the claim can't be provisioned, the pod can't start."""

    def build(now: datetime) -> list[Obj]:
        pod = _waiting_pod(now)
        return [*healthy(now), _scratch_job(now), pod, _scratch_claim(pod)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _storage(report) == [
        (
            "storage.type-missing",
            "fail",
            "measured",
            ["PersistentVolumeClaim/train-010-w0-scratch", "StorageClass/fast-nvme"],
        )
    ], _storage(report)
    assert result.exit_code == 2


def test_an_ephemeral_claim_the_pod_does_not_own_blocks_it(doctor: Doctor) -> None:
    """A claim of the name `<pod>-<volume>` that the pod does not control is not its volume:
    kube-scheduler's volumebinding refuses the pod (`PVC train/train-010-w0-scratch was not
    created for pod train/train-010-w0 (pod is not owner)`, component-helpers
    storage/ephemeral VolumeIsForPod), and the ephemeral controller never replaces it."""

    def build(now: datetime) -> list[Obj]:
        pod = _waiting_pod(now)
        claim = _scratch_claim(pod, owned=False)
        claim["spec"]["storageClassName"] = "standard"
        claim["status"] = {"phase": "Bound"}
        return [*healthy(now), _scratch_job(now), pod, claim]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _storage(report) == [
        (
            "storage.volume-not-its-own",
            "fail",
            "measured",
            ["PersistentVolumeClaim/train-010-w0-scratch", "Job/train-010"],
        )
    ], _storage(report)
    headline = report["headline"]
    assert (headline["code"], headline["text"]) == (
        "storage.volume-not-its-own",
        "The volume 'train-010-w0-scratch' that the training job 'train-010' makes for itself "
        "already exists and isn't its own, so it can't start.",
    )
    assert result.exit_code == 2


def test_an_ephemeral_claim_not_made_yet_is_the_controllers_to_make(doctor: Doctor) -> None:
    """Just after the pod is made, its ephemeral claim is not there yet: the ephemeral volume
    controller makes it (controller.go handleVolume), not the operator."""

    def build(now: datetime) -> list[Obj]:
        return [*healthy(now), _scratch_job(now), _waiting_pod(now)]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert _storage(report) == [
        ("storage.ok", "ok", "measured", ["PersistentVolumeClaim/datasets"])
    ], _storage(report)
