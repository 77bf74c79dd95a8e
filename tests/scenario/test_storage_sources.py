"""Where the claims the storage check reads come from: a StatefulSet's claim templates, as its
controller names and creates them."""

import copy
from datetime import datetime, timedelta
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import NAMESPACE, Obj, container, healthy, running_containers, ts


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
