"""With a list of training jobs not read, no check that judges those jobs reads as passing.

Each check whose answer depends on the training jobs says it could not look (unknown,
cant-check, naming the read in plain words), as image-pull, storage and capacity do; what a
check measured from other reads (a crash-looping service) still stands. Whether a training job
runs short is then unknown, so the namespace's Warning Events are read, as when the pods are
unknown; a report whose standing needs the jobs is unknown, never a failure. Live (the API
server's 403) and offline (a snapshot whose read of the jobs is missing or garbled) alike.
"""

from datetime import datetime, timedelta
from typing import Any

import pytest
import yaml

from tests.scenario.conftest import Doctor
from tests.scenario.test_cluster_reports import event
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import SCENARIOS, Obj, find, healthy, job_pod, training_job
from tests.support.training_kinds import ALL_GROUPS

JOBS = r"^/apis/batch/v1/namespaces/train/jobs$"
EVENTS = "/api/v1/namespaces/train/events"
JUDGED = ("image-pull", "storage", "queue", "admission", "capacity")
"""The checks that judge the newest training job, or every job's images and volumes."""


def _of(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == check]


def _codes(report: dict[str, Any], check: str) -> set[tuple[str, str, str]]:
    return {(f["code"], f["status"], f["basis"]) for f in _of(report, check)}


def _crash_loop_and_a_job_short_of_shared_memory(now: datetime) -> list[Obj]:
    """A service that crash-loops (measured from the pods), and as the newest training job
    one of 4 GPUs with the container default of 64 MiB of shared memory (a warning of the
    workloads check, from the job's own template)."""
    objects = SCENARIOS["crash-looping-manager"](now)
    find(objects, "Node", "gpu-1")["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    job = training_job("train-004", now, gpus=4, cpu="8", memory="32Gi", age=timedelta(minutes=1))
    return [*objects, job]


def _assert_jobs_unknown(report: dict[str, Any], why: str) -> None:
    """Every check that judges the jobs is unknown for `why`; the crash loop still stands."""
    for check in JUDGED:
        assert _codes(report, check) == {(f"{check}.cant-read", "unknown", "cant-check")}, check
        assert _of(report, check)[0]["headline"].endswith(f": {why}."), check
    assert _codes(report, "workloads") == {
        ("workloads.crash-loop", "fail", "measured"),
        ("workloads.cant-read", "unknown", "cant-check"),
    }
    (unknown,) = [f for f in _of(report, "workloads") if f["status"] == "unknown"]
    assert unknown["headline"] == (
        f"Couldn't check whether the environment's workloads are healthy: {why}."
    )
    # The same read, the same step to take, as every other check that needed it says it.
    assert unknown["remedy"] == _of(report, "capacity")[0]["remedy"]
    assert report["exit_code"] == 2


def test_each_check_that_judges_the_jobs_is_unknown_and_what_else_was_measured_stands(
    doctor: Doctor,
) -> None:
    doctor.load(_crash_loop_and_a_job_short_of_shared_memory)
    readable = doctor.live("-o", "json").json()
    # Precondition: read, the job's own warning and the crash loop are found; queue, admission
    # and capacity measure it.
    assert ("workloads.no-shared-memory", "warn", "inferred") in _codes(readable, "workloads")
    assert ("workloads.crash-loop", "fail", "measured") in _codes(readable, "workloads")
    assert _codes(readable, "queue") == {("queue.not-used", "ok", "measured")}
    assert _codes(readable, "admission") == {("admission.ok", "ok", "measured")}
    doctor.server.inject(Fault.FORBIDDEN, JOBS)
    result = doctor.live("-o", "json")
    report = result.json()
    _assert_jobs_unknown(report, "no permission to read the training jobs")
    (unknown,) = [f for f in _of(report, "workloads") if f["status"] == "unknown"]
    assert "needs list jobs.batch in namespace train" in " ".join(unknown["details"])
    assert result.exit_code == 2


def test_with_the_jobs_unknown_the_warnings_are_read_as_with_the_pods_unknown(
    doctor: Doctor,
) -> None:
    """Whether a training job runs short is not known: the cluster's own word is read (one
    read more), and a namespace that holds none is measured as reporting nothing."""
    doctor.load("healthy")
    doctor.live("-o", "json")
    assert EVENTS not in {r.path for r in doctor.server.log}, "precondition: no read when all runs"
    doctor.server.inject(Fault.FORBIDDEN, JOBS)
    before = len(doctor.server.log)
    report = doctor.live("-o", "json").json()
    asked = [r for r in doctor.server.log[before:] if r.path == EVENTS]
    assert [r.query.get("fieldSelector") for r in asked] == ["type=Warning"]
    assert _codes(report, "evidence") == {("evidence.ok", "ok", "measured")}
    assert report["exit_code"] == 3


def _reports_about_a_finished_job_and_a_service(now: datetime) -> list[Obj]:
    """The Job controller's word on train-001, which completed (history, with the jobs read),
    and the kubelet's on the crash-looping service's pod (it stands: the pod waits)."""
    objects = SCENARIOS["crash-looping-manager"](now)
    finished = find(objects, "Job", "train-001")
    pod = find(objects, "Pod", "jobs-manager-abc12")
    return [
        *objects,
        # pkg/controller/job/job_controller.go: the Warning it records when pods run on
        # after the completion count was reached.
        event(
            now,
            finished,
            "TooManyActivePods",
            "Too many active pods running after completion count reached",
            "job-controller",
        ),
        event(
            now,
            pod,
            "FailedPostStartHook",
            "PostStartHook failed",
            "kubelet",
        ),
    ]


def test_a_report_that_stands_only_if_its_job_has_not_finished_is_unknown_never_a_failure(
    doctor: Doctor,
) -> None:
    doctor.load(_reports_about_a_finished_job_and_a_service)
    readable = doctor.live("-o", "json").json()
    (said,) = _of(readable, "evidence")
    # Precondition: with the jobs read, train-001's report is history and the pod's stands.
    assert (said["code"], said["status"], said["objects"]) == (
        "evidence.cluster-reported",
        "fail",
        ["Pod/jobs-manager-abc12"],
    )
    doctor.server.inject(Fault.FORBIDDEN, JOBS)
    report = doctor.live("-o", "json").json()
    evidence = _of(report, "evidence")
    assert [(f["code"], f["status"], f["objects"]) for f in evidence] == [
        ("evidence.cluster-reported", "fail", ["Pod/jobs-manager-abc12"]),
        ("evidence.cant-read", "unknown", ["Job/train-001"]),
    ]
    assert evidence[1]["headline"] == (
        "Couldn't check what the cluster itself reported about the environment: "
        "no permission to read the training jobs."
    )
    assert report["exit_code"] == 2


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        ("missing", "the snapshot doesn't include the training jobs"),
        ("garbled", "the cluster's answer about the training jobs was garbled"),
    ],
)
def test_offline_a_snapshot_without_a_readable_jobs_read_gives_the_same_unknowns(
    doctor: Doctor, damage: str, why: str
) -> None:
    doctor.load(_crash_loop_and_a_job_short_of_shared_memory)
    directory = doctor.snapshot()
    jobs = next((directory / "reads").glob("*-list-jobs.yaml"))
    if damage == "missing":
        jobs.unlink()
    else:
        document = yaml.safe_load(jobs.read_text())
        document["result"] = {"items": 7, "was": document["result"]["items"]}
        jobs.write_text(yaml.safe_dump(document))
    result = doctor.offline(directory, "-o", "json")
    report = result.json()
    _assert_jobs_unknown(report, why)
    assert "workloads.no-shared-memory" not in {f["code"] for f in report["findings"]}
    assert result.exit_code == 2


def test_another_training_kind_not_listed_leaves_the_same_checks_unknown(doctor: Doctor) -> None:
    doctor.server.install(*ALL_GROUPS)
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"/pytorchjobs$")
    result = doctor.live("-o", "json")
    report = result.json()
    why = "no permission to read the training jobs (PyTorchJob)"
    for check in (*JUDGED, "workloads"):
        assert _codes(report, check) == {(f"{check}.cant-read", "unknown", "cant-check")}, check
        assert _of(report, check)[0]["headline"].endswith(f": {why}."), check
    assert result.exit_code == 3


def _a_failed_job_short_of_shared_memory(now: datetime) -> list[Obj]:
    """As the newest Job listed, one of 4 GPUs that failed (its program exited 1) and has the
    container default of 64 MiB of shared memory."""
    objects = healthy(now)
    find(objects, "Node", "gpu-1")["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    job = training_job("train-002", now, gpus=4, finished=False, age=timedelta(minutes=40))
    job["status"] = {
        "failed": 1,
        "conditions": [
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ],
    }
    pod = job_pod(job, now, suffix="f1", node_name="gpu-1", phase="Failed")
    pod["status"]["containerStatuses"] = [
        {
            "name": "trainer",
            "ready": False,
            "restartCount": 0,
            "state": {"terminated": {"exitCode": 1, "reason": "Error"}},
        }
    ]
    return [*objects, job, pod]


def test_the_newest_listed_job_s_failure_is_not_said_while_another_kind_is_unread(
    doctor: Doctor,
) -> None:
    """A newer PyTorchJob (a healthy one) may be in the list not read: which job the next run
    is judged by is not known, so the listed Job's failure and shared memory speak for
    nothing known; the workloads check says it could not look, as capacity does."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load(_a_failed_job_short_of_shared_memory)
    readable = doctor.live("-o", "json")
    # Precondition: read, the Job is the newest, and its failure and warning are said.
    assert _codes(readable.json(), "workloads") == {
        ("workloads.last-job-failed", "fail", "measured"),
        ("workloads.no-shared-memory", "warn", "inferred"),
    }
    assert readable.exit_code == 2
    doctor.server.inject(Fault.FORBIDDEN, r"/pytorchjobs$")
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == {("workloads.cant-read", "unknown", "cant-check")}
    assert _of(report, "workloads")[0]["headline"].endswith(
        ": no permission to read the training jobs (PyTorchJob)."
    )
    assert _codes(report, "capacity") == {("capacity.cant-read", "unknown", "cant-check")}
    assert result.exit_code == 3


@pytest.mark.parametrize(
    ("path", "groups", "why"),
    [
        pytest.param(
            r"/namespaces/train/cronjobs$",
            (),
            "no permission to read the scheduled training jobs",
            id="cronjobs",
        ),
        pytest.param(
            r"/pytorchjobs$",
            ALL_GROUPS,
            "no permission to read the training jobs (PyTorchJob)",
            id="another-kind",
        ),
    ],
)
def test_no_trial_start_is_sent_for_a_job_that_may_not_be_the_judged_one(
    doctor: Doctor, path: str, groups: tuple[str, ...], why: str
) -> None:
    """A list not read could hold a newer job than train-001, the newest listed: the server's
    answer to a trial start of train-001's pod could not change the verdict (admission is
    unknown for the judged job whatever it says), so the write is not made at all."""
    doctor.server.install(*groups)
    doctor.load("healthy")
    doctor.live("-o", "json", "--admission-dry-run")
    trial = ("POST", "/api/v1/namespaces/train/pods", "All")
    sent = [(r.method, r.path, r.query.get("dryRun")) for r in doctor.server.requests("POST")]
    assert sent == [trial], "precondition: with every list read, the trial start is made"
    doctor.server.inject(Fault.FORBIDDEN, path, method="GET")
    before = len(doctor.server.log)
    result = doctor.live("-o", "json", "--admission-dry-run")
    report = result.json()
    assert [r for r in doctor.server.log[before:] if r.method != "GET"] == []
    assert _codes(report, "admission") == {("admission.cant-read", "unknown", "cant-check")}
    assert _of(report, "admission")[0]["headline"].endswith(f": {why}.")
    assert result.exit_code == 3
