"""`doctor --trial` and the job's data: no program of the trial pod writes to the job's claims,
and a container of the job's own that fails only because the trial kept a claim read-only for
it is unknown, never a measured failure the job would not have.

Against the fake API server and its trial kubelet (tests/support/fake_kubelet.py), whose
`init_writers` runs the job's init containers as the kubelet mounts their claims
(pkg/kubelet/kubelet_pods.go makeMounts)."""

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_kubelet import FakeKubelet
from tests.support.scenarios import healthy, training_job
from tests.support.trial_results import trial_findings

Obj = dict[str, Any]
MOUNT = "/data"


def _preparing_job(init_mount: dict[str, Any]) -> Any:
    """The healthy namespace with its training job (no GPU), whose init container
    `prepare-data` writes into the dataset claim before training starts, as jobs download
    shards into it, `mkdir` a cache or `chown` it; the trainer mounts the same claim."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-llm", now, gpus=0)
        spec = job["spec"]["template"]["spec"]
        [volume] = [v for v in spec["volumes"] if "persistentVolumeClaim" in v]
        spec["initContainers"] = [
            {
                "name": "prepare-data",
                "image": "registry.example.com/ml/trainer:2.1",
                "command": ["sh", "-c", f"date > {MOUNT}/.prepared"],
                "volumeMounts": [{"name": volume["name"], "mountPath": MOUNT, **init_mount}],
            }
        ]
        spec["containers"][0]["volumeMounts"] = [{"name": volume["name"], "mountPath": MOUNT}]
        return [*(o for o in healthy(now) if o["kind"] != "Job"), job]

    return build


def test_an_init_container_the_trial_keeps_from_writing_the_job_s_data_is_unknown(
    doctor: Doctor,
) -> None:
    """The job lets `prepare-data` write to its claim; the trial mounts it read-only there, so
    the write is refused and the container fails. The job's own pod would not: that is not a
    measured failure (exit 2) but what the trial could not measure (unknown, exit 3), naming
    the container."""
    doctor.load(_preparing_job({}))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, init_writers={"prepare-data"})
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json", "--verbose")
    trial = trial_findings(result.json())
    assert [(f["code"], f["status"]) for f in trial] == [
        ("trial.read-only-for-trial", "unknown")
    ], trial
    [pod] = doctor.server.kubelet.pods
    assert trial[0]["details"] == [f"{pod}: prepare-data: Error (exit code 2)"]
    assert result.exit_code == 3


def test_an_init_container_the_job_itself_keeps_read_only_fails_as_it_would_for_the_job(
    doctor: Doctor,
) -> None:
    """Where the job itself mounts the claim read-only for `prepare-data`, its write fails in
    the job's own pod too: a measured failure, as before."""
    doctor.load(_preparing_job({"readOnly": True}))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, init_writers={"prepare-data"})
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
    assert [(f["code"], f["status"]) for f in trial_findings(result.json())] == [
        ("trial.container-ended", "fail")
    ]
    assert result.exit_code == 2


@pytest.mark.parametrize("writes", [False, True])
def test_every_mount_of_the_job_s_claims_is_read_only_and_the_volume_is_the_job_s(
    doctor: Doctor, tmp_path: Path, writes: bool
) -> None:
    """Each container of the trial pod mounts the job's claims read-only (`volumeMounts[]
    .readOnly`), and the volume stays as the job states it: a pod-level
    `persistentVolumeClaim.readOnly` would also keep the kubelet from preparing it as for the
    job's pods (subPath folders, fsGroup). The job's containers the job lets write there are
    named on the pod. An init container that only reads the claim runs through."""
    doctor.load(_preparing_job({}))
    doctor.server.admission.allow_creates = True
    writers = {"prepare-data"} if writes else set()
    (tmp_path / "shard-0000.bin").write_bytes(b"d" * (1 << 20))
    doctor.server.kubelet = FakeKubelet(doctor.server, {"datasets": tmp_path}, init_writers=writers)
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
    [pod] = doctor.server.kubelet.pods.values()
    spec = pod["spec"]
    [volume] = [v for v in spec["volumes"] if "persistentVolumeClaim" in v]
    assert "readOnly" not in volume["persistentVolumeClaim"], volume
    for container in [*spec["initContainers"], *spec["containers"]]:
        assert [m["readOnly"] for m in container["volumeMounts"]] == [True], container["name"]
    assert pod["metadata"]["annotations"]["truegreen.io/trial-read-only"] == "prepare-data"
    codes = [(f["code"], f["status"]) for f in trial_findings(result.json())]
    assert codes == ([("trial.read-only-for-trial", "unknown")] if writes else [("trial.ok", "ok")])
