"""The storage check's findings about the dataset volumes, over the fake API server.

Sources: pkg/scheduler/framework/plugins/volumebinding/volume_binding.go (`GetPodVolumeClaims`),
pkg/controller/volume/pvcprotection (the `kubernetes.io/pvc-protection` finalizer),
pkg/controller/volume/persistentvolume/pv_controller.go (`syncUnboundClaim`).
"""

import copy
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.filter_objects import local_class, local_volume, waiting_claim
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


# -- a claim only a volume made in advance can take -------------------------------------------


def waiting_local_claim(now: datetime) -> list[Obj]:
    """The healthy namespace whose `datasets` claim names the local class and waits (Pending,
    nothing bound: WaitForFirstConsumer binds it only when a pod that mounts it is placed);
    only the training job mounts it, so nothing ever placed one."""
    objects = [o for o in healthy(now) if o["kind"] != "StorageClass"]
    claim = find(objects, "PersistentVolumeClaim", "datasets")
    claim.update(waiting_claim("datasets", "local-storage", "500Gi"))
    for obj in objects:
        if obj["kind"] == "Deployment":
            obj["spec"]["template"]["spec"].pop("volumes", None)
        if obj["kind"] == "Pod":
            obj["spec"].pop("volumes", None)
    return [*objects, local_class()]


_NO_FREE = (
    "fail",
    "measured",
    "storage.no-free-volume",
    "The dataset volume 'datasets' has no storage behind it: its storage type "
    "'local-storage' only uses volumes made in advance, and none that is free fits it.",
)


def test_a_claim_of_a_type_that_makes_no_volumes_and_no_free_volume_is_not_ready(
    doctor: Doctor,
) -> None:
    """kube-scheduler's VolumeBinding finds no PersistentVolume for the unbound claim
    (component-helpers storage/volume pv_helpers.go `FindMatchingVolume`: another claim's
    volume, one too small, one of another class or access mode, none Available), and the class
    can't make one (volumebinding/binder.go `checkVolumeProvisions`: provisioner
    `kubernetes.io/no-provisioner` → not satisfied): every machine is refused with "node(s)
    didn't find available persistent volumes to bind" and the job's pod stays Pending."""

    def build(now: datetime) -> list[Obj]:
        return [
            *waiting_local_claim(now),
            local_volume("local-taken", claim="other", phase="Bound"),
            local_volume("local-small", "100Gi"),
            local_volume("local-shared", modes=("ReadOnlyMany",)),
            local_volume("nfs-big", storage_class="standard"),
            local_volume("local-released", phase="Released", claim="gone"),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    (found,) = _storage(report)
    assert (found["status"], found["basis"], found["code"], found["headline"]) == _NO_FREE
    assert found["remedy"].startswith(
        "Ask your cluster admin for a volume of storage type 'local-storage' that fits it "
        "(500 GiB or more, and its access modes), or create it again naming a storage type "
        "that makes volumes (`kubectl "
    )
    assert found["remedy"].endswith(" get persistentvolumes` lists the volumes there are).")
    assert found["details"] == [
        "persistentvolumeclaim datasets is Pending; storageclass local-storage: provisioner "
        "kubernetes.io/no-provisioner, volumeBindingMode WaitForFirstConsumer",
        "no Available PersistentVolume of storageClassName local-storage with capacity >= 500Gi, "
        "accessModes ReadWriteOnce, volumeMode Filesystem: node(s) didn't find available "
        "persistent volumes to bind",
        "persistentvolume local-released: Released, bound to train/gone",
        "persistentvolume local-shared: accessModes ReadOnlyMany lack ReadWriteOnce",
        "persistentvolume local-small: capacity 100Gi < 500Gi",
        "persistentvolume local-taken: Bound, bound to train/other",
    ]
    assert found["objects"] == ["PersistentVolumeClaim/datasets", "StorageClass/local-storage"]
    assert report["headline"]["code"] == "storage.no-free-volume"
    assert result.exit_code == 2


def test_a_free_volume_that_fits_lets_the_claim_bind(doctor: Doctor) -> None:
    """An Available volume of the class, big enough, of the claim's access modes and volume
    mode: `FindMatchingVolume` takes it. Which machines it reaches (its node affinity) the
    storage check does not judge: any such volume is a candidate."""

    def build(now: datetime) -> list[Obj]:
        return [*waiting_local_claim(now), local_volume("local-small", "100Gi"), local_volume("a")]

    doctor.load(build)
    result = doctor.live("-o", "json")
    (found,) = _storage(result.json())
    assert (found["status"], found["code"]) == ("ok", "storage.ok")
    assert "/api/v1/persistentvolumes" in {r.path for r in doctor.server.requests()}
    assert result.exit_code == 0


def test_two_claims_cannot_both_take_the_one_free_volume(doctor: Doctor) -> None:
    """A volume binds one claim: with one free volume for two claims, the larger claim (the
    scheduler matches claims smallest first, binder.go `findMatchingVolumes` byPVCSize) finds
    none."""

    def build(now: datetime) -> list[Obj]:
        objects = waiting_local_claim(now)
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["volumes"].append(
            {"name": "scratch", "persistentVolumeClaim": {"claimName": "scratch"}}
        )
        scratch = copy.deepcopy(find(objects, "PersistentVolumeClaim", "datasets"))
        scratch["metadata"]["name"] = "scratch"
        scratch["spec"]["resources"]["requests"]["storage"] = "100Gi"
        return [*objects, scratch, local_volume("a")]

    doctor.load(build)
    result = doctor.live("-o", "json")
    (found,) = _storage(result.json())
    assert (found["status"], found["basis"], found["code"], found["headline"]) == _NO_FREE
    assert found["details"][-1] == "persistentvolume a: taken by the claim scratch"
    assert result.exit_code == 2


def test_volumes_that_cannot_be_listed_leave_such_a_claim_unknown(doctor: Doctor) -> None:
    """Without the list of volumes nothing says whether one is free: unknown, never ready."""
    doctor.load(waiting_local_claim)
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/persistentvolumes$", method="GET")
    result = doctor.live("-o", "json")
    (found,) = _storage(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "unknown",
        "cant-check",
        "storage.cant-read",
    )
    assert found["remedy"].endswith(" auth can-i list persistentvolumes` answers yes once you may.")
    assert result.exit_code == 3


def test_volumes_are_listed_only_for_a_claim_only_a_made_volume_can_take(
    doctor: Doctor,
) -> None:
    """A bound claim, or one whose class provisions, needs no list of every volume."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        claim = find(objects, "PersistentVolumeClaim", "datasets")
        claim["status"] = {"phase": "Pending"}
        standard = find(objects, "StorageClass", "standard")
        standard["volumeBindingMode"] = "WaitForFirstConsumer"
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    (found,) = _storage(result.json())
    assert found["code"] == "storage.ok"
    assert "/apis/storage.k8s.io/v1/storageclasses/standard" in {
        r.path for r in doctor.server.requests()
    }, "precondition: the waiting claim's class was read"
    assert "/api/v1/persistentvolumes" not in {r.path for r in doctor.server.requests()}
    assert result.exit_code == 0
