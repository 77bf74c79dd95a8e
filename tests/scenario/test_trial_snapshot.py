"""`snapshot --trial`: the trial run during the snapshot, what it read saved through the
snapshot's redaction, and `doctor --snapshot` showing the same trial findings as the live run.

Against the fake API server and its trial kubelet (tests/support/fake_kubelet.py), which runs
the real probe as a local process."""

from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from tests.scenario.conftest import CREDENTIALS, Doctor
from tests.support.cli import CliResult, run_cli
from tests.support.fake_kubelet import FakeKubelet
from tests.support.scenarios import healthy, training_job

Obj = dict[str, Any]

PLANTED = "planted-S3cret-7e1b"
"""A password in a kubelet's mount failure: it must never land in the snapshot."""
# The shape of a FailedMount event of a cifs/smb volume: `MountVolume.SetUp failed for volume
# %q : %v` (pkg/kubelet/volumemanager/reconciler via operationexecutor's GenerateError), the
# error being mount-utils' `mount failed: %v\nMounting command: %s\nMounting arguments: %s\n
# Output: %s` (k8s.io/mount-utils mount_linux.go doMount) — the arguments are where a mount
# option's password shows when a driver mounts without the sensitive-options path.
MOUNT_FAILED = (
    'MountVolume.SetUp failed for volume "data" : mount failed: exit status 32\n'
    "Mounting command: mount\n"
    f"Mounting arguments: -t cifs -o username=trainer,password={PLANTED} "
    "//files.example.com/datasets /var/lib/kubelet/pods/5d1c/volumes/kubernetes.io~csi/data\n"
    "Output: mount error(13): Permission denied"
)


def _cpu_job(now: datetime) -> list[Obj]:
    """The healthy namespace with its training job asking for no GPU (this machine's Python has
    no GPU library)."""
    return [
        *(o for o in healthy(now) if o["kind"] != "Job"),
        training_job("train-llm", now, gpus=0),
    ]


def _trial_codes(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f["code"], f["status"], f["headline"]) for f in report["findings"] if f["check"] == "trial"
    ]


def _snapshot(doctor: Doctor, folder: Path, *args: str) -> CliResult:
    return run_cli(
        "snapshot",
        "--kubeconfig",
        str(doctor.kubeconfig),
        *CREDENTIALS,
        "--no-registry",
        *args,
        "--output-directory",
        str(folder),
    )


def _verdict(report: dict[str, Any]) -> tuple[object, ...]:
    return report["verdict"], report["exit_code"], report["headline"]["code"]


def test_a_snapshot_with_the_trial_shows_what_the_live_trial_showed(
    doctor: Doctor, tmp_path: Path
) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(
        doctor.server, pull=("19m41.2s", "19m58.004s"), image_bytes=17_179_869_184
    )
    live = doctor.live("--trial", "-o", "json").json()
    assert ("trial.image-pull-slow", "warn") in [(c, s) for c, s, _ in _trial_codes(live)], (
        "precondition: the live trial measured something worth saving"
    )
    saved = _snapshot(doctor, tmp_path / "snap", "--trial")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    offline = doctor.offline(tmp_path / "snap", "-o", "json").json()
    assert _trial_codes(offline) == _trial_codes(live)
    assert _verdict(offline) == _verdict(live)
    assert "trial" in offline["coverage"]["checked"]
    meta = yaml.safe_load((tmp_path / "snap" / "snapshot.yaml").read_text())
    assert meta["settings"]["trial"] == "true"
    assert meta["settings"]["trial_timeout"] == "300"


def test_a_snapshot_without_the_trial_claims_none(doctor: Doctor, tmp_path: Path) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    saved = _snapshot(doctor, tmp_path / "snap")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    offline = doctor.offline(tmp_path / "snap", "-o", "json").json()
    assert _trial_codes(offline) == []
    assert "trial" not in offline["coverage"]["checked"]
    assert doctor.server.kubelet.threads == [], "no trial pod was started"


def test_a_snapshot_whose_trial_had_no_job_to_try_says_so(doctor: Doctor, tmp_path: Path) -> None:
    """Taken with --trial where the namespace holds no training job: the record says no job was
    tried, and `doctor --snapshot` counts the trial as not measured, saying why, as the live
    run does."""
    doctor.load(lambda now: [o for o in healthy(now) if o["kind"] != "Job"])
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    saved = _snapshot(doctor, tmp_path / "snap", "--trial")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    offline = doctor.offline(tmp_path / "snap", "-o", "json").json()
    assert _trial_codes(offline) == []
    assert "trial" not in offline["coverage"]["checked"]
    assert {"check": "trial", "reason": "no training job to try"} in offline["coverage"][
        "not_checked"
    ]
    assert doctor.server.kubelet.threads == [], "no trial pod was started"


def test_the_trial_s_evidence_is_saved_redacted(doctor: Doctor, tmp_path: Path) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(
        doctor.server, start_failure=("FailedMount", MOUNT_FAILED, "ContainerCreating")
    )
    saved = _snapshot(doctor, tmp_path / "snap", "--trial", "--trial-timeout", "3")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    files = [p for p in (tmp_path / "snap").rglob("*") if p.is_file()]
    trial_files = [p for p in files if "trial" in p.name]
    assert trial_files, "precondition: the trial's evidence was saved"
    assert "Mounting arguments" in trial_files[0].read_text(), "precondition: the event is kept"
    leaked = [p.name for p in files if PLANTED in p.read_text()]
    assert leaked == []
    offline = doctor.offline(tmp_path / "snap", "-o", "json", "--verbose").json()
    [started] = [f for f in offline["findings"] if f["code"] == "trial.container-not-started"]
    assert started["status"] == "fail"
    assert any("password=<redacted>" in line for line in started["details"])


def test_snapshot_refuses_a_trial_timeout_out_of_range(doctor: Doctor, tmp_path: Path) -> None:
    doctor.load(_cpu_job)
    result = _snapshot(doctor, tmp_path / "snap", "--trial", "--trial-timeout", "0")
    assert result.exit_code == 64
    assert (
        result.stderr == "truegreen: --trial-timeout must be a number of seconds from 1 to 3600\n"
    )
    assert not (tmp_path / "snap").exists()


def test_a_damaged_or_missing_trial_record_is_unknown_not_ok(
    doctor: Doctor, tmp_path: Path
) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    saved = _snapshot(doctor, tmp_path / "snap", "--trial")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    [record] = (tmp_path / "snap" / "reads").glob("*-trial-pods.yaml")
    assert _trial_codes(doctor.offline(tmp_path / "snap", "-o", "json").json())[0][0] == (
        "trial.ok"
    ), "precondition: the record reads back whole"
    record.write_text('{"read": {"verb": "trial", "resource": "pods"}, "result": {"run": [1]}}\n')
    damaged = doctor.offline(tmp_path / "snap", "-o", "json")
    assert [(c, s) for c, s, _ in _trial_codes(damaged.json())] == [("trial.not-saved", "unknown")]
    assert damaged.exit_code == 3
    record.unlink()
    missing = doctor.offline(tmp_path / "snap", "-o", "json").json()
    assert [(c, s) for c, s, _ in _trial_codes(missing)] == [("trial.not-saved", "unknown")]


def test_the_config_key_makes_the_snapshot_run_the_trial(doctor: Doctor, tmp_path: Path) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    config = tmp_path / "doctor.yaml"
    config.write_text("trial: true\n")
    saved = _snapshot(doctor, tmp_path / "snap", "--config", str(config))
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    assert doctor.server.kubelet.pods, "the trial's pods were started"
    offline = doctor.offline(tmp_path / "snap", "-o", "json").json()
    assert _trial_codes(offline)[0][:2] == ("trial.ok", "ok")


def test_doctor_on_a_snapshot_refuses_the_trial_flag_and_ignores_the_config_key(
    doctor: Doctor, tmp_path: Path
) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    saved = _snapshot(doctor, tmp_path / "snap", "--trial")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    refused = run_cli("doctor", "--snapshot", str(tmp_path / "snap"), "--trial")
    assert refused.exit_code == 64
    assert refused.stderr == (
        "truegreen: --trial starts pods in the live cluster; a snapshot shows the trial it was "
        "taken with (truegreen snapshot --trial). drop --trial\n"
    )
    config = tmp_path / "doctor.yaml"
    config.write_text("trial: true\n")
    offline = doctor.offline(tmp_path / "snap", "--config", str(config), "-o", "json")
    assert _trial_codes(offline.json())[0][:2] == ("trial.ok", "ok"), "the snapshot's own trial"
