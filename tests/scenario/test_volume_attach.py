"""A ReadWriteOnce volume keeps a job's programs on one machine only where the attach-detach
controller attaches it: a CSI driver whose CSIDriver says attachRequired: false is never
attached, so there is no Multi-Attach."""

from datetime import datetime
from pathlib import Path

import yaml

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import Obj, find, healthy, node, training_job

DRIVER = "nfs.csi.k8s.io"


def _cluster(now: datetime) -> list[Obj]:
    """Two machines of 2 GPUs; the dataset claim ReadWriteOnce, bound to a volume of the NFS CSI
    driver (csi-driver-nfs writes such PersistentVolumes); nothing else mounts it."""
    objects = [o for o in healthy(now) if o["kind"] != "Node"]
    for obj in objects:
        if obj["kind"] in ("Deployment", "Pod"):
            spec = obj["spec"]["template"]["spec"] if obj["kind"] == "Deployment" else obj["spec"]
            spec.pop("volumes", None)
    claim = find(objects, "PersistentVolumeClaim", "datasets")
    claim["spec"].update(
        {"accessModes": ["ReadWriteOnce"], "storageClassName": "nfs-csi", "volumeName": "pvc-nfs"}
    )
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pvc-nfs"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Ti"},
            "storageClassName": "nfs-csi",
            "csi": {
                "driver": DRIVER,
                "volumeHandle": "nfs-server.default.svc.cluster.local#share#pvc-nfs#",
                "volumeAttributes": {"server": "nfs-server.default.svc.cluster.local"},
            },
            "claimRef": {"namespace": "train", "name": "datasets"},
        },
        "status": {"phase": "Bound"},
    }
    machines = [
        node("gpu-1", "16", "64Gi", gpus=2),
        node("gpu-2", "16", "64Gi", gpus=2),
        node("cpu-1", "8", "32Gi"),
    ]
    return [*objects, *machines, volume]


def _driver(attach_required: bool) -> Obj:
    """The CSIDriver object as csi-driver-nfs installs it (storage.k8s.io/v1)."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": DRIVER},
        "spec": {
            "attachRequired": attach_required,
            "podInfoOnMount": False,
            "volumeLifecycleModes": ["Persistent"],
        },
    }


def _two_workers(tmp_path: Path, now: datetime) -> str:
    """Two programs of 2 GPUs each, both mounting the dataset claim: one per machine."""
    job = training_job("train-010", now, gpus=2, finished=False)
    del job["status"]
    job["spec"].update({"completionMode": "Indexed", "completions": 2, "parallelism": 2})
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job), encoding="utf-8")
    return str(path)


def _capacity(report: dict[str, object]) -> list[tuple[str, str, str]]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return [(f["code"], f["status"], f["basis"]) for f in findings if f["check"] == "capacity"]


def test_a_volume_its_driver_never_attaches_lets_the_programs_spread(doctor: Doctor) -> None:
    """attachRequired: false: pkg/volume/csi/csi_plugin.go CanAttach returns false (skipAttach),
    so the attach-detach controller finds no attachable plugin for the volume and never
    attaches it (attachdetach/util ProcessPodVolumes): both programs start, one per machine."""
    doctor.load(lambda now: [*_cluster(now), _driver(False)])
    result = doctor.live("-o", "json", "--job-file", _two_workers(doctor.tmp_path, doctor.now))
    report = result.json()
    assert _capacity(report) == [("capacity.fits", "ok", "measured")], _capacity(report)
    assert result.exit_code == 0, report["headline"]


def test_a_volume_its_driver_attaches_keeps_the_programs_on_one_machine(doctor: Doctor) -> None:
    """attachRequired: true (as a missing CSIDriver reads: skipAttach `Don't skip attach if
    CSIDriver does not exist`): attached to one machine at a time, inferred as before."""
    doctor.load(lambda now: [*_cluster(now), _driver(True)])
    result = doctor.live("-o", "json", "--job-file", _two_workers(doctor.tmp_path, doctor.now))
    report = result.json()
    assert _capacity(report) == [("capacity.rules-block", "fail", "inferred")], _capacity(report)
    assert result.exit_code == 2


def test_an_unread_driver_is_not_a_multi_attach_failure(doctor: Doctor) -> None:
    """The CSIDriver can't be read: whether the volume is attached at all is not known, so
    neither is whether it keeps the programs on one machine. An unknown, not a failure."""
    doctor.load(lambda now: [*_cluster(now), _driver(False)])
    doctor.server.inject(Fault.FORBIDDEN, rf"/csidrivers/{DRIVER}$", method="GET")
    result = doctor.live("-o", "json", "--job-file", _two_workers(doctor.tmp_path, doctor.now))
    report = result.json()
    assert _capacity(report) == [("capacity.cant-read", "unknown", "cant-check")], _capacity(report)
    assert result.exit_code == 3
