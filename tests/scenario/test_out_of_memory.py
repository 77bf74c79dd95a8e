"""A program the kernel kills for memory is out of memory whenever doctor looks.

The kubelet shows `CrashLoopBackOff` only while it waits out the back-off before a restart
(pkg/kubelet/kuberuntime/kuberuntime_manager.go `doBackOff`: "back-off %s restarting failed
container"); between those waits the container runs again, Ready at once without a readiness
probe, and its memory kill stays in `lastState` (pkg/kubelet/kubelet_pods.go
`convertToAPIContainerStatuses`). The kubelet forgets a container's crashes once it has run
600 s after a restart (pkg/kubelet/kubelet.go `NewMainKubelet`, `backOff.HasExpiredFunc`).
A pod of restartPolicy Never ends Failed with the kill in `state`, and the Job controller makes
another try (pkg/controller/job/job_controller.go).
"""

import re
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_cluster_reports import event
from tests.support.scenarios import (
    Obj,
    find,
    healthy,
    job_pod,
    running_containers,
    training_job,
    ts,
)


def _killed(now: datetime, *, ended: timedelta) -> Obj:
    """A container's end by the kernel's out-of-memory killer, as the kubelet records it."""
    return {
        "terminated": {
            "exitCode": 137,
            "reason": "OOMKilled",
            "startedAt": ts(now - ended - timedelta(minutes=2)),
            "finishedAt": ts(now - ended),
            "containerID": "containerd://" + "9" * 64,
        }
    }


def _restarted(
    now: datetime, *, started: timedelta, ended: timedelta, backing_off: bool = False
) -> list[Obj]:
    """train-002's worker (restartPolicy OnFailure, as a PyTorchJob's), killed for memory 4
    times: running again since `started` (Ready at once: no readiness probe), or, with
    `backing_off`, in the kubelet's wait before the next restart; and the kubelet's BackOff
    Warning from its last wait."""
    job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=40))
    job["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    pod = job_pod(job, now, suffix="w0abc", node_name="gpu-1", age=timedelta(minutes=40))
    pod["metadata"]["uid"] = "uid-train-002-w0abc"
    since = ts(now - started)
    statuses = running_containers(pod["metadata"]["name"], pod["spec"]["containers"], since)
    statuses[0].update({"restartCount": 4, "lastState": _killed(now, ended=ended)})
    ready: Obj = {"type": "Ready", "status": "True", "lastTransitionTime": since}
    if backing_off:
        statuses[0]["ready"] = False
        statuses[0]["state"] = {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": "back-off 1m20s restarting failed container=trainer "
                "pod=train-002-w0abc_train(uid-train-002-w0abc)",
            }
        }
        ready = {
            "type": "Ready",
            "status": "False",
            "reason": "ContainersNotReady",
            "lastTransitionTime": ts(now - ended),
        }
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}, ready]
    pod["status"]["containerStatuses"] = statuses
    back_off = event(
        now,
        pod,
        "BackOff",
        "Back-off restarting failed container trainer in pod "
        "train-002-w0abc_train(uid-train-002-w0abc)",
        "kubelet",
        count=9,
        age=started + timedelta(seconds=15),
    )
    return [*healthy(now), job, pod, back_off]


@pytest.mark.parametrize("backing_off", [False, True], ids=["running-again", "backing-off"])
def test_a_pod_restarted_after_a_memory_kill_is_out_of_memory_at_either_moment(
    doctor: Doctor, backing_off: bool
) -> None:
    doctor.load(
        lambda now: _restarted(
            now,
            started=timedelta(seconds=30),
            ended=timedelta(minutes=1),
            backing_off=backing_off,
        )
    )
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "workloads.out-of-memory"
    assert report["headline"]["text"] == (
        "The training job 'train-002' runs out of memory and is restarted."
    )
    failing = [
        (f["code"], f["status"], f["basis"]) for f in report["findings"] if f["status"] != "ok"
    ]
    assert failing == [("workloads.out-of-memory", "fail", "measured")], failing
    [found] = [f for f in report["findings"] if f["code"] == "workloads.out-of-memory"]
    if not backing_off:
        # the run's age is the server's clock at the run (a few seconds past the load)
        [detail] = found["details"]
        assert re.fullmatch(
            r"pod train-002-w0abc container trainer: OOMKilled 1 minute ago \(exit code 137\), "
            r"4 restarts, running again for 3\d seconds",
            detail,
        ), detail
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("started", "ended", "out_of_memory"),
    [
        # ran 11 minutes after the restart: the kubelet has forgotten the crashes
        (timedelta(minutes=11), timedelta(minutes=16), False),
        # killed 14 minutes ago, restarted after its 5-minute back-off 9 minutes ago: the
        # kubelet still holds its back-off (it measures from the restart, not the kill)
        (timedelta(minutes=9), timedelta(minutes=14), True),
    ],
    ids=["ran-eleven-minutes-since", "ran-nine-minutes-since"],
)
def test_a_memory_kill_is_history_once_the_container_ran_ten_minutes_past_it(
    doctor: Doctor, started: timedelta, ended: timedelta, out_of_memory: bool
) -> None:
    doctor.load(lambda now: _restarted(now, started=started, ended=ended))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    codes = [f["code"] for f in report["findings"] if f["status"] != "ok"]
    if out_of_memory:
        assert codes == ["workloads.out-of-memory"], codes
        assert result.exit_code == 2
    else:
        assert codes == [], codes
        assert report["headline"]["code"] == "ready"
        assert result.exit_code == 0


def test_a_copy_not_ready_after_a_memory_kill_is_one_finding_not_two(doctor: Doctor) -> None:
    """A service's copy with a readiness probe, restarted after a memory kill and not ready
    yet: the kubelet's BackOff from the wait before is the out-of-memory finding's, not a
    second report."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["metadata"]["uid"] = "uid-jobs-manager-abc12"
        pod["status"]["conditions"][1] = {
            "type": "Ready",
            "status": "False",
            "reason": "ContainersNotReady",
            "lastTransitionTime": ts(now - timedelta(seconds=50)),
        }
        pod["status"]["containerStatuses"][0].update(
            {
                "ready": False,
                "restartCount": 3,
                "state": {"running": {"startedAt": ts(now - timedelta(seconds=40))}},
                "lastState": _killed(now, ended=timedelta(seconds=50)),
            }
        )
        back_off = event(
            now,
            pod,
            "BackOff",
            "Back-off restarting failed container api in pod "
            "jobs-manager-abc12_train(uid-jobs-manager-abc12)",
            "kubelet",
            count=5,
            age=timedelta(seconds=45),
        )
        return [*objects, back_off]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    failing = [f["code"] for f in report["findings"] if f["status"] != "ok"]
    assert failing == ["workloads.out-of-memory"], failing
    assert report["headline"]["text"] == (
        "The workload 'jobs-manager' runs out of memory and is restarted."
    )
    assert result.exit_code == 2


def _tried_again(now: datetime, *, ended: timedelta, retry: timedelta | None) -> list[Obj]:
    """train-002 (restartPolicy Never): its first try killed for memory `ended` ago (phase
    Failed), counted by the Job controller (`failed: 1`, backoffLimit 6 not reached); its
    second try running since `retry` ago, or, with None, waiting out the Job controller's
    pod-failure back-off (no pod yet)."""
    job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=40))
    job["status"] = {"active": 1 if retry else 0, "failed": 1}
    first = job_pod(job, now, suffix="aaaaa", node_name="gpu-1", phase="Failed")
    first["metadata"]["creationTimestamp"] = ts(now - timedelta(minutes=40))
    first["status"]["containerStatuses"] = [
        {
            "name": "trainer",
            "image": first["spec"]["containers"][0]["image"],
            "imageID": "registry.example.com/trainer@sha256:" + "1" * 64,
            "ready": False,
            "restartCount": 0,
            "state": _killed(now, ended=ended),
        }
    ]
    objects = [*healthy(now), job, first]
    if retry is not None:
        second = job_pod(
            job, now, suffix="bbbbb", node_name="gpu-1", age=retry + timedelta(seconds=20)
        )
        since = ts(now - retry)
        second["status"]["conditions"] = [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "True", "lastTransitionTime": since},
        ]
        second["status"]["containerStatuses"] = running_containers(
            second["metadata"]["name"], second["spec"]["containers"], since
        )
        objects.append(second)
    return objects


def test_a_try_killed_for_memory_warns_while_the_job_tries_again(doctor: Doctor) -> None:
    doctor.load(
        lambda now: _tried_again(now, ended=timedelta(minutes=2), retry=timedelta(seconds=60))
    )
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "workloads.try-out-of-memory"
    assert report["headline"]["text"] == (
        "A try of the training job 'train-002' ran out of memory 2 minutes ago and was "
        "stopped; the job is trying again."
    )
    assert report["headline"]["remedy"].endswith(
        " describe pod train-002-aaaaa` shows the try that ran out."
    ), report["headline"]["remedy"]
    [found] = [f for f in report["findings"] if f["status"] != "ok"]
    assert (found["code"], found["status"], found["basis"]) == (
        "workloads.try-out-of-memory",
        "warn",
        "measured",
    )
    assert found["details"] == [
        "pod train-002-aaaaa container trainer: OOMKilled 2 minutes ago (exit code 137)"
    ]
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("retry", "warned"),
    [(timedelta(minutes=11), False), (None, True)],
    ids=["next-try-ran-eleven-minutes", "next-try-not-started"],
)
def test_a_try_killed_for_memory_is_history_once_a_later_try_ran_ten_minutes(
    doctor: Doctor, retry: timedelta | None, warned: bool
) -> None:
    """Killed 12 minutes ago: a later try that has run 11 minutes since runs well by the
    kubelet's own measure; none started since (the Job controller's back-off reaches 10
    minutes, MaxJobPodFailureBackOff) is no run at all, and the kill still stands."""
    doctor.load(lambda now: _tried_again(now, ended=timedelta(minutes=12), retry=retry))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    codes = [f["code"] for f in report["findings"] if f["code"].startswith("workloads.")]
    assert ("workloads.try-out-of-memory" in codes) is warned, codes
    assert result.exit_code == 0


def test_a_failed_job_s_memory_kill_is_its_ending_not_a_try(doctor: Doctor) -> None:
    """Once the job failed, its controller tries no more: the ending is the last job's
    finding (workloads.last-job-out-of-memory), not a try."""

    def build(now: datetime) -> list[Obj]:
        objects = _tried_again(now, ended=timedelta(minutes=2), retry=None)
        job = find(objects, "Job", "train-002")
        job["status"] = {
            "failed": 1,
            "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}],
        }
        return objects

    doctor.load(build)
    report: dict[str, Any] = doctor.live("-o", "json").json()
    codes = [f["code"] for f in report["findings"] if f["status"] != "ok"]
    assert "workloads.try-out-of-memory" not in codes, codes
    assert "workloads.last-job-out-of-memory" in codes, codes


def _mysql_killed(now: datetime, *, restarts: int, ended: timedelta) -> list[Obj]:
    """mysql's copy killed for memory `ended` ago, restarted by the kubelet a second later
    (`restarts` times in all) and running, Ready, since."""
    objects = healthy(now)
    pod = find(objects, "Pod", "mysql-def34")
    since = ts(now - ended + timedelta(seconds=1))
    pod["status"]["containerStatuses"][0].update(
        {
            "restartCount": restarts,
            "state": {"running": {"startedAt": since}},
            "lastState": _killed(now, ended=ended),
        }
    )
    pod["status"]["conditions"][1]["lastTransitionTime"] = ts(now - ended + timedelta(seconds=5))
    return objects


def test_a_single_memory_kill_restarted_at_once_is_a_warning_not_a_loop(doctor: Doctor) -> None:
    """The kubelet restarts a container's first end at once: its back-off holds no entry for it
    yet (kuberuntime_manager.go doBackOff: IsInBackOffSince is false, then backOff.Next). One
    kill 4 minutes ago, running and Ready since, is no restart loop: a warning. A second end
    meets the back-off: the loop, a failure."""
    doctor.load(lambda now: _mysql_killed(now, restarts=2, ended=timedelta(minutes=4)))
    looping = doctor.live("-o", "json").json()
    codes = [(f["code"], f["status"]) for f in looping["findings"] if f["status"] != "ok"]
    assert codes == [("workloads.out-of-memory", "fail")], "precondition: two ends loop"

    # killed 4.5 minutes ago: both ages read 4 minutes, however long the run takes to start
    doctor.load(lambda now: _mysql_killed(now, restarts=1, ended=timedelta(minutes=4, seconds=30)))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    said = [(f["code"], f["status"], f["basis"]) for f in report["findings"] if f["status"] != "ok"]
    assert said == [("workloads.out-of-memory-once", "warn", "measured")], said
    assert report["headline"]["text"] == (
        "The workload 'mysql' ran out of memory once and was restarted right away; it runs again."
    )
    [found] = [f for f in report["findings"] if f["code"] == "workloads.out-of-memory-once"]
    assert found["details"] == [
        "pod mysql-def34 container mysql: OOMKilled 4 minutes ago (exit code 137), 1 restart, "
        "running again for 4 minutes"
    ], found["details"]
    assert result.exit_code == 0


def test_a_second_kill_before_the_restart_is_the_loop_not_a_single_kill(doctor: Doctor) -> None:
    """restartCount 1 and killed again 5 seconds ago, before the kubelet's next sync shows its
    back-off wait: the container ended twice, the loop has begun."""

    def build(now: datetime) -> list[Obj]:
        objects = _mysql_killed(now, restarts=1, ended=timedelta(minutes=4))
        status = find(objects, "Pod", "mysql-def34")["status"]["containerStatuses"][0]
        status.update({"ready": False, "state": _killed(now, ended=timedelta(seconds=5))})
        return objects

    doctor.load(build)
    report: dict[str, Any] = doctor.live("-o", "json").json()
    said = [(f["code"], f["status"]) for f in report["findings"] if f["status"] != "ok"]
    assert ("workloads.out-of-memory", "fail") in said, said


def test_a_single_memory_kill_speaks_over_no_failure_of_its_pod(doctor: Doctor) -> None:
    """The warning for one kill waits for the pod's other containers: a helper beside it that
    keeps crashing is the pod's failure."""

    def build(now: datetime) -> list[Obj]:
        objects = _mysql_killed(now, restarts=1, ended=timedelta(minutes=4))
        pod = find(objects, "Pod", "mysql-def34")
        pod["spec"]["containers"].append({"name": "exporter", "image": "prom/mysqld-exporter:0.15"})
        pod["status"]["containerStatuses"].append(
            {
                "name": "exporter",
                "image": "prom/mysqld-exporter:0.15",
                "imageID": "",
                "ready": False,
                "restartCount": 6,
                "state": {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": "back-off 2m40s restarting failed container=exporter "
                        "pod=mysql-def34_train(uid-mysql-def34)",
                    }
                },
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
            }
        )
        return objects

    doctor.load(build)
    report: dict[str, Any] = doctor.live("-o", "json").json()
    said = [(f["code"], f["status"]) for f in report["findings"] if f["check"] == "workloads"]
    assert said == [("workloads.crash-loop", "fail")], said


def _init_step_killed_then_completed(now: datetime) -> list[Obj]:
    """train-009's pod: its setup step `fetch` (an init container) killed for memory 6 minutes
    ago, restarted by the kubelet, completed 2 minutes ago; its trainer runs, Ready, since."""
    job = training_job("train-009", now, gpus=1, finished=False, age=timedelta(minutes=8))
    fetch = {"name": "fetch", "image": "registry.example.com/fetch:1"}
    job["spec"]["template"]["spec"]["initContainers"] = [fetch]
    pod = job_pod(job, now, suffix="w0abc", node_name="gpu-1", age=timedelta(minutes=8))
    started = ts(now - timedelta(minutes=2))
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "True", "lastTransitionTime": started},
    ]
    pod["status"]["containerStatuses"] = running_containers(
        pod["metadata"]["name"], pod["spec"]["containers"], started
    )
    pod["status"]["initContainerStatuses"] = [
        {
            **fetch,
            "imageID": "registry.example.com/fetch@sha256:" + "2" * 64,
            "ready": True,
            "restartCount": 1,
            "lastState": _killed(now, ended=timedelta(minutes=6)),
            "state": {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": ts(now - timedelta(minutes=5, seconds=50)),
                    "finishedAt": ts(now - timedelta(minutes=2, seconds=5)),
                }
            },
        }
    ]
    return [*healthy(now), job, pod]


def test_a_setup_step_that_completed_after_a_memory_kill_is_past_it(doctor: Doctor) -> None:
    """An init container that completed is never run again (kuberuntime_container.go
    computeInitContainerActions): its kill before is history, however recent."""
    doctor.load(_init_step_killed_then_completed)
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    codes = [f["code"] for f in report["findings"] if f["status"] != "ok"]
    assert codes == [], codes
    assert result.exit_code == 0, report["headline"]["text"]
