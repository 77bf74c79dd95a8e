"""The storage check's findings about the dataset volumes, over the fake API server.

Sources: pkg/scheduler/framework/plugins/volumebinding/volume_binding.go (`GetPodVolumeClaims`),
pkg/controller/volume/pvcprotection (the `kubernetes.io/pvc-protection` finalizer),
pkg/controller/volume/persistentvolume/pv_controller.go (`syncUnboundClaim`).
"""

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.scenarios import Obj, find, healthy, training_job, ts


def _storage(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "storage"]


def _being_deleted(now: datetime) -> list[Obj]:
    """The healthy namespace whose `datasets` claim was deleted half an hour ago: the API
    server set `deletionTimestamp`, and the pvc-protection controller's finalizer keeps the
    claim (still Bound) while the jobs-manager's pod mounts it
    (pkg/controller/volume/pvcprotection/pvc_protection_controller.go `processPVC`)."""
    objects = healthy(now)
    claim = find(objects, "PersistentVolumeClaim", "datasets")
    claim["metadata"]["deletionTimestamp"] = ts(now - timedelta(minutes=30))
    claim["metadata"]["finalizers"] = ["kubernetes.io/pvc-protection"]
    return objects


_DELETED = (
    "fail",
    "measured",
    "storage.volume-being-deleted",
    "The dataset volume 'datasets' is being deleted, so nothing new that uses it can start.",
)


def test_a_claim_being_deleted_lets_nothing_new_start(doctor: Doctor) -> None:
    """kube-scheduler refuses every new pod that mounts a claim being deleted
    (volumebinding `GetPodVolumeClaims`: `persistentvolumeclaim "datasets" is being deleted`,
    UnschedulableAndUnresolvable from PreFilter), Bound or not."""
    doctor.load(_being_deleted)
    result = doctor.live("-o", "json")
    report = result.json()
    (found,) = _storage(report)
    assert (found["status"], found["basis"], found["code"], found["headline"]) == _DELETED
    assert found["remedy"].startswith(
        "A deletion can't be called off: the volume goes once nothing uses it (`kubectl "
    )
    assert found["remedy"].endswith(
        " describe pvc datasets` shows what still does). Then create 'datasets' again, "
        "or point the environment at another volume."
    )
    assert found["details"][0].startswith('persistentvolumeclaim "datasets" is being deleted')
    assert report["headline"]["code"] == "storage.volume-being-deleted"
    capacity = [f for f in report["findings"] if f["check"] == "capacity"]
    assert [(f["code"], f["status"], f["basis"]) for f in capacity] == [
        ("capacity.no-eligible-machine", "fail", "measured")
    ]
    assert capacity[0]["headline"] == (
        "No machine may run a training job: its volume 'datasets' is being deleted."
    )
    assert result.exit_code == 2


def test_a_job_file_mounting_a_claim_being_deleted_is_not_ready(
    doctor: Doctor, tmp_path: Path
) -> None:
    """The job a file describes mounts the claim being deleted: it would never start."""
    doctor.round_trip = False  # --job-file is a live run's alone
    doctor.load(_being_deleted)
    job = training_job("train-010", doctor.now, finished=False)
    del job["status"]
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    result = doctor.live("-o", "json", "--job-file", str(path))
    (found,) = _storage(result.json())
    assert (found["status"], found["basis"], found["code"], found["headline"]) == _DELETED
    assert result.exit_code == 2


@pytest.mark.parametrize("storage_class", ["", None], ids=["empty", "absent"])
def test_a_claim_of_no_storage_type_waits_for_a_matching_volume(
    doctor: Doctor, storage_class: str | None
) -> None:
    """A Pending claim of `storageClassName: ""` (binding to a made volume only), or of none
    (no default StorageClass was there to give it one: plugin/pkg/admission/storage/
    storageclass/setdefault): the PV controller provisions nothing and only binds a
    PersistentVolume of no class that matches it (pv_controller.go `syncUnboundClaim`:
    `GetPersistentVolumeClaimClass` is "" for both, "no persistent volumes available for this
    claim and no storage class is set"). No storage type 'default' exists to blame."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        claim = find(objects, "PersistentVolumeClaim", "datasets")
        if storage_class is None:
            del claim["spec"]["storageClassName"]
        else:
            claim["spec"]["storageClassName"] = storage_class
        claim["status"] = {"phase": "Pending"}
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    (found,) = _storage(result.json())
    assert (found["status"], found["basis"], found["code"], found["headline"]) == (
        "fail",
        "measured",
        "storage.volume-no-match",
        "The dataset volume 'datasets' has no storage behind it yet: it names no storage type, "
        "so it waits for an existing volume that matches it, and none does.",
    )
    assert found["remedy"].startswith(
        "Ask your cluster admin for a volume that matches it (its size and access modes, no "
        "storage type), or create it again naming a storage type that can provide it (`kubectl "
    )
    assert found["remedy"].endswith(" get storageclasses` lists them).")
    assert "default" not in found["remedy"]
    assert found["details"] == [
        "persistentvolumeclaim datasets is Pending, "
        + ('storageClassName ""' if storage_class == "" else "no storageClassName")
    ]
    assert result.exit_code == 2
