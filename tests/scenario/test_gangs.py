"""Gang schedulers: the scheduler the pods name decides, and its word on the group is read.

Every object is in the shape the real controllers write (tests/support/gang_objects.py cites
each); the fake serves Volcano's groups only once installed, as its CRDs do.
"""

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support import gang_objects as gang
from tests.support import read_faults
from tests.support.fake_apiserver import Fault
from tests.support.read_faults import Absence, Read
from tests.support.scenarios import Obj, healthy, ts
from tests.support.training_kinds import ALL_GROUPS

JOB = "bert-large"


def _findings(report: dict[str, Any], check: str) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in report["findings"] if f["check"] == check]


def _finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [f for f in report["findings"] if f["code"] == code]
    assert len(found) == 1, [f["code"] for f in report["findings"]]
    return found[0]


def cluster(
    *,
    scheduler: str = "volcano",
    runs: bool = True,
    group: Callable[[datetime], Obj] | None = None,
    queue: Obj | None = None,
    marked: str | None = None,
    age: timedelta = timedelta(minutes=2),
) -> Callable[[datetime], list[Obj]]:
    """The healthy namespace plus an idle 8-GPU machine and the PyTorchJob 'bert-large' `age`
    old (two minutes), its 4 pods naming `scheduler`; Volcano's own pod runs where `runs`."""

    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.volcano_job(JOB, now, scheduler=scheduler, age=age)
        if marked is not None:
            pods = gang.looked_at(pods, marked)
        objects = [*healthy(now), gang.gpu_machine(), job, *pods]
        if runs:
            objects.append(gang.volcano_scheduler_pod(now))
        if group is not None:
            objects.append(group(now))
        if queue is not None:
            objects.append(queue)
        return objects

    return build


def _install(doctor: Doctor) -> None:
    doctor.server.install(*ALL_GROUPS)
    doctor.server.install(gang.VOLCANO_GROUP)


def unplaced(now: datetime) -> Obj:
    return gang.pod_group(JOB, now, phase="Pending", message=gang.UNPLACED)


def test_a_gang_volcano_cannot_place_is_not_ready_in_volcano_s_words(doctor: Doctor) -> None:
    """issue 42: the PodGroup Pending with Volcano's `Unschedulable` condition, a Queue of 8
    GPUs, an idle machine the arithmetic finds room on. The scheduler's word is measured and
    is the headline, quoted; the arithmetic does not say otherwise."""
    _install(doctor)
    doctor.load(cluster(group=unplaced, queue=gang.volcano_queue("default", gpus=8)))
    result = doctor.live("-o", "json")
    report = result.json()
    assert ("queue.gang-refused", "fail", "measured") in _findings(report, "queue")
    found = _finding(report, "queue.gang-refused")
    assert found["headline"] == (
        f"`volcano` can't start the training job 'bert-large' as one group: `{gang.UNPLACED}`."
    )
    assert found["remedy"].startswith("Free or add what `volcano` names, or ask for less; `kubectl")
    assert found["remedy"].endswith(
        " describe podgroups.scheduling.volcano.sh bert-large` shows its account."
    )
    assert found["objects"] == ["PodGroup/bert-large", "PyTorchJob/bert-large"]
    assert report["headline"]["code"] == "queue.gang-refused"
    assert report["headline"]["rule"] == "root-cause-failure"
    assert result.exit_code == 2
    assert not [f for f in report["findings"] if f["check"] == "capacity" and f["status"] != "ok"]
    read = {r.path for r in doctor.server.requests()}
    assert "/apis/scheduling.volcano.sh/v1beta1/namespaces/train/podgroups/bert-large" in read
    assert "/apis/scheduling.volcano.sh/v1beta1/queues/default" in read


def test_the_scheduler_s_words_are_bounded_and_escaped(doctor: Doctor) -> None:
    """A message from the cluster is quoted at most 400 characters long, a backtick inside
    can't end the quote, and a terminal escape is shown, not obeyed (truegreen/textsafe.py)."""
    hostile = "\x1b[2J`rm -rf`" + "x" * 600
    _install(doctor)
    doctor.load(
        cluster(
            group=lambda now: gang.pod_group(JOB, now, phase="Pending", message=hostile),
            queue=gang.volcano_queue("default", gpus=8),
        )
    )
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-refused")
    quoted = found["headline"].split(" as one group: ", 1)[1]
    assert quoted == "`" + ("\x1b[2J'rm -rf'" + "x" * 600)[:399] + "…`."
    text = doctor.live().stdout
    assert "\\x1b[2J'rm -rf'" in text
    assert "\x1b" not in text


def _short(
    *, min_available: int, pods: int, reason: str, message: str, per_task: bool = False
) -> Callable[[datetime], list[Obj]]:
    """The PyTorchJob 'bert-large' (4 pods) with `runPolicy.schedulingPolicy.minAvailable`
    `min_available`, the first `pods` of its pods made, and its PodGroup (minMember
    `min_available`, as the training operator writes it) Pending with Volcano's `reason`; an
    open Queue with room and Volcano's scheduler running. `per_task`: the group also asks 4
    Workers (`minTaskMember`) of the job's 3."""

    def build(now: datetime) -> list[Obj]:
        job, *made = gang.volcano_job(JOB, now, scheduler="volcano", age=timedelta(minutes=2))
        job["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] = min_available
        group = gang.pod_group(
            JOB, now, phase="Pending", message=message, reason=reason, min_member=min_available
        )
        if per_task:
            group["spec"]["minTaskMember"] = {"worker": 4}
        return [
            *healthy(now),
            gang.gpu_machine(),
            job,
            *made[:pods],
            gang.volcano_scheduler_pod(now),
            group,
            gang.volcano_queue("default", gpus=16),
        ]

    return build


SHORT_V1_11 = "Not enough valid tasks for gang-scheduling, valid: 4, min: 5"
"""Volcano v1.9 to v1.11 on a group of 4 pods whose minMember is 5: the gang plugin's
`validJobFn` (`"Not enough valid tasks for gang-scheduling, valid: %d, min: %d"`, reason
`NotEnoughTasks`), written by pkg/scheduler/framework/session.go `openSession`."""

SHORT_V1_12 = (
    "5/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 5 minAvailable; "
    "Pending: 4 Unschedulable"
)
"""Volcano from v1.12 on the same group: openSession no longer writes `validJobFn`'s word, and
gang.go `OnSessionClose` writes `"%v/%v tasks in gang unschedulable: %v"` (minAvailable less
the schedulable tasks, then all the tasks; `JobInfo.FitError()`), reason `NotEnoughResources`."""


@pytest.mark.parametrize(
    ("reason", "message"),
    [("NotEnoughTasks", SHORT_V1_11), ("NotEnoughResources", SHORT_V1_12)],
    ids=["v1.11-not-enough-tasks", "v1.12-counted-by-doctor"],
)
def test_a_gang_waiting_for_more_pods_than_the_job_makes_is_told_to_wait_for_fewer(
    doctor: Doctor, reason: str, message: str
) -> None:
    """A PyTorchJob of 4 pods whose `minAvailable` is 5: Volcano waits for a fifth pod that
    will never exist, and no amount of room places the group. Volcano's words stay the
    headline; the remedy is the count (the field the training operator makes minMember from),
    never "free or add" room. Found by doctor's count too where Volcano (v1.12 on) calls it a
    lack of resources."""
    _install(doctor)
    doctor.load(_short(min_available=5, pods=4, reason=reason, message=message))
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-too-few-pods")
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert found["headline"] == (
        f"`volcano` can't start the training job 'bert-large' as one group: `{message}`."
    )
    assert found["remedy"].startswith(
        "The group waits for 5 programs while the job makes 4, and no amount of room starts "
        "it: lower `runPolicy.schedulingPolicy.minAvailable` in the job's settings to 4 or "
        "less; `kubectl"
    )
    assert found["remedy"].endswith(
        " describe pytorchjobs.kubeflow.org bert-large` shows the job's own account."
    )
    assert found["details"][-1] == (
        "PyTorchJob/bert-large: makes 4 pods; 4 of the group's pods exist, neither failed nor "
        "being deleted"
    )
    assert "queue.gang-refused" not in {f["code"] for f in report["findings"]}
    assert (result.exit_code, report["headline"]["code"]) == (2, "queue.gang-too-few-pods")


def test_a_gang_short_of_pods_the_job_did_not_make_says_to_find_why(doctor: Doctor) -> None:
    """The job's 4 pods wanted (minAvailable 4), only 3 made (its controller's create was
    refused): Volcano v1.11 says `valid: 3, min: 4`. The remedy is to find why the fourth is
    missing, or to wait for fewer."""
    _install(doctor)
    message = "Not enough valid tasks for gang-scheduling, valid: 3, min: 4"
    doctor.load(_short(min_available=4, pods=3, reason="NotEnoughTasks", message=message))
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-too-few-pods")
    assert found["remedy"].startswith(
        "The group waits for 4 programs while only 3 of the job's 4 exist, and no amount of "
        "room starts it: find out why the job's missing programs were not made, or lower "
        "`runPolicy.schedulingPolicy.minAvailable` in the job's settings to 3 or less; `kubectl"
    )


def test_a_task_short_of_its_own_minimum_names_the_group_s_per_task_minimum(
    doctor: Doctor,
) -> None:
    """minMember 4 met by the job's 4 pods, but the group asks 4 Workers of its 3
    (`minTaskMember`): Volcano's `NotEnoughPodsOfTask` (gang.go `validJobFn`,
    `JobInfo.CheckTaskValid`). Its reason alone says the group is short of pods."""
    _install(doctor)
    message = "Not enough valid pods of each task for gang-scheduling"
    doctor.load(
        _short(
            min_available=4,
            pods=4,
            reason="NotEnoughPodsOfTask",
            message=message,
            per_task=True,
        )
    )
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-too-few-pods")
    assert found["headline"].endswith(f"as one group: `{message}`.")
    assert found["remedy"].startswith(
        "The group waits for a minimum number of programs of each part of the job while one "
        "part has fewer, and no amount of room starts it: find out why the job's missing "
        "programs were not made, or lower that part's number in the group's `minTaskMember`; "
    )


def test_a_scheduler_that_does_not_run_is_not_ready_at_once(doctor: Doctor) -> None:
    """The same job two minutes old, its pods naming a scheduler no pod of the cluster is:
    never placed, a measured fail now, not after the five-minute wait."""
    _install(doctor)
    doctor.load(cluster(runs=False))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report, "queue") == [
        ("queue.not-used", "ok", "measured"),
        ("queue.scheduler-missing", "fail", "measured"),
    ]
    found = _finding(report, "queue.scheduler-missing")
    assert found["headline"] == (
        "The training job 'bert-large' waits to be placed by `volcano`, which doesn't run in "
        "this cluster: it will never start."
    )
    assert report["headline"]["code"] == "queue.scheduler-missing"
    assert result.exit_code == 2
    assert {(r.path, r.query.get("fieldSelector")) for r in doctor.server.requests()} >= {
        ("/api/v1/pods", "status.phase!=Failed,status.phase!=Succeeded")
    }


def test_a_scheduler_whose_pod_crash_loops_does_not_run(doctor: Doctor) -> None:
    """Volcano's pod restarts over and over: the kubelet keeps a crash-looping pod in phase
    Running (`kubectl get pods` shows `CrashLoopBackOff`), so the running pods' list still holds
    it. Its program does not run, so nothing places the job: measured, with where to read why
    (the previous container's log)."""
    _install(doctor)

    def build(now: datetime) -> list[Obj]:
        objects = cluster(runs=True)(now)
        scheduler = next(o for o in objects if o["metadata"]["name"].startswith("volcano-"))
        assert scheduler["status"]["phase"] == "Running"  # the precondition: found by phase
        scheduler["status"].update(
            {
                "conditions": [
                    {"type": "Ready", "status": "False", "reason": "ContainersNotReady"}
                ],
                "containerStatuses": [
                    {
                        "name": "volcano-scheduler",
                        "ready": False,
                        "restartCount": 14,
                        "state": {
                            "waiting": {
                                "reason": "CrashLoopBackOff",
                                "message": "back-off 5m0s restarting failed container=...",
                            }
                        },
                        "lastState": {"terminated": {"reason": "Error", "exitCode": 1}},
                    }
                ],
            }
        )
        return objects

    doctor.load(build)
    _volcano_down(
        doctor,
        "keeps crashing (restarted 14 times)",
        "CrashLoopBackOff, restarted 14 times",
        "logs volcano-scheduler-94998fc64-86hzn --previous",
    )


def _volcano_down(doctor: Doctor, plain: str, state: str, where: str) -> None:
    """The run says Volcano's scheduler is down (measured, exit 2): its program `plain`, its pod
    in `state`, and the kubectl command (`where`, in volcano-system) that shows why."""
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.scheduler-down")
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert found["headline"] == (
        f"The training job 'bert-large' waits to be placed by `volcano`, whose program {plain}: "
        "nothing places the job until it is up again."
    )
    assert found["details"][0] == (
        "PyTorchJob/bert-large: pods name schedulerName volcano; its pod "
        f"volcano-system/volcano-scheduler-94998fc64-86hzn is {state}"
    )
    assert found["remedy"].endswith(f"-n volcano-system {where}` shows its last words.")
    assert report["headline"]["code"] == "queue.scheduler-down"
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("status", "state", "plain"),
    [
        # Not placed: the scheduler (default-scheduler places Volcano's own pod) wrote
        # PodScheduled False; the kubelet has written no container state
        # (`kubectl get pods` shows Pending).
        (
            {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/3 nodes are available: 3 Insufficient cpu.",
                    }
                ],
            },
            "Pending",
            "hasn't been started on any machine yet",
        ),
        # Placed, its image not pulled: the kubelet's waiting reason, as `kubectl get pods`
        # shows it (pkg/kubelet/images/image_manager.go ErrImagePullBackOff).
        (
            {
                "phase": "Pending",
                "containerStatuses": [
                    {
                        "name": "volcano-scheduler",
                        "ready": False,
                        "restartCount": 0,
                        "image": "registry.example.com/volcanosh/vc-scheduler:v1.12.1",
                        "imageID": "",
                        "started": False,
                        "state": {
                            "waiting": {
                                "reason": "ImagePullBackOff",
                                "message": 'Back-off pulling image "registry.example.com/'
                                'volcanosh/vc-scheduler:v1.12.1"',
                            }
                        },
                    }
                ],
            },
            "ImagePullBackOff",
            "can't be started: its image can't be downloaded",
        ),
        # CRI-O refused the connection: the kubelet's own reason for the failed pull
        # (image_manager.go evalCRIPullErr, crierrors.ErrRegistryUnavailable).
        (
            {
                "phase": "Pending",
                "containerStatuses": [
                    {
                        "name": "volcano-scheduler",
                        "ready": False,
                        "restartCount": 0,
                        "image": "registry.example.com/volcanosh/vc-scheduler:v1.12.1",
                        "imageID": "",
                        "started": False,
                        "state": {
                            "waiting": {
                                "reason": "RegistryUnavailable",
                                "message": "image pull failed for registry.example.com/"
                                "volcanosh/vc-scheduler:v1.12.1 because the registry is "
                                "unavailable",
                            }
                        },
                    }
                ],
            },
            "RegistryUnavailable",
            "can't be started: its image can't be downloaded",
        ),
    ],
    ids=["not-placed", "image-not-pulled", "registry-unavailable"],
)
def test_a_scheduler_whose_pod_is_pending_does_not_run(
    doctor: Doctor, status: Obj, state: str, plain: str
) -> None:
    """Volcano's own pod exists but is Pending: it runs nothing, so nothing places the job. It
    is the scheduler down, with the state `kubectl get pods` shows, not a scheduler missing
    from the cluster: a Pending pod is seen, not only the Running ones."""
    _install(doctor)

    def build(now: datetime) -> list[Obj]:
        objects = cluster(runs=True)(now)
        scheduler = next(o for o in objects if o["metadata"]["name"].startswith("volcano-"))
        scheduler["status"] = status
        if state == "Pending":
            del scheduler["spec"]["nodeName"]
        return objects

    doctor.load(build)
    _volcano_down(doctor, plain, state, "describe pod volcano-scheduler-94998fc64-86hzn")


def test_a_planned_job_naming_a_scheduler_that_does_not_run(doctor: Doctor, tmp_path: Path) -> None:
    """`--job-file`: a job not yet submitted has no pods; its template's `schedulerName` is
    enough to know it would never be placed. (The namespace's own job names Volcano too, so
    that a snapshot, taken without `--job-file`, holds the same look for Volcano's pod.)"""
    _install(doctor)
    doctor.load(cluster(runs=False))
    job = gang.volcano_job("planned", doctor.now, scheduler="volcano", age=timedelta(0))[0]
    del job["status"], job["metadata"]["uid"]
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    result = doctor.live("-o", "json", "--job-file", str(path))
    assert _finding(result.json(), "queue.scheduler-missing")["headline"] == (
        "The training job 'planned' waits to be placed by `volcano`, which doesn't run in "
        "this cluster: it will never start."
    )
    assert result.exit_code == 2


def test_a_group_started_with_fewer_members_says_nothing_of_the_pods_still_waiting(
    doctor: Doctor,
) -> None:
    """Volcano's PodGroup phase Running counts `minMember` pods (volcano-sh/volcano
    pkg/scheduler/framework/job_updater.go); pods beyond it are placed one by one, and Volcano
    marks those it cannot place with `0/N nodes are unavailable: …` (unschedule_info.go
    `FitErrors.Error`). "Started as one group" beside two waiting pods is not said; their
    own wait is read in Volcano's words."""
    _install(doctor)
    message = "0/3 nodes are unavailable: 3 Insufficient nvidia.com/gpu."

    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.volcano_job(JOB, now, scheduler="volcano", age=timedelta(minutes=2))
        placed, waiting = pods[:2], gang.looked_at(pods[2:], message)
        for pod in placed:
            pod["spec"]["nodeName"] = "gpu-8"
            pod["status"] = {"phase": "Running"}
        group = gang.pod_group(JOB, now, phase="Running", message=None)
        group["spec"]["minMember"] = 2
        objects = [*healthy(now), gang.gpu_machine(), job, *placed, *waiting, group]
        return [*objects, gang.volcano_scheduler_pod(now), gang.volcano_queue("default", gpus=8)]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    codes = {f["code"] for f in report["findings"]}
    assert "queue.gang-placed" not in codes
    said = [f for f in report["findings"] if f["check"] == "capacity" and f["status"] != "ok"]
    assert said, codes
    assert all("gave no reason doctor knows" not in f["headline"] for f in said), said


def test_a_name_that_may_be_a_kube_scheduler_profile_is_unconfirmed_until_pods_wait(
    doctor: Doctor, tmp_path: Path
) -> None:
    """kube-scheduler serves every `profiles[].schedulerName` of its configuration in its own
    process (kubernetes/kubernetes pkg/scheduler/profile/profile.go `NewMap`), so no pod is
    named after a profile, and a managed control plane shows no scheduler pod at all. A name
    not known to run as its own workload is unknown while nothing measured says otherwise: a
    planned job, or pods younger than a minute. Pods a minute old that no scheduler judged
    are the measurement (a running scheduler judges a new pod within seconds)."""
    _install(doctor)
    doctor.round_trip = False
    doctor.load(cluster(scheduler="gpu-binpack", runs=False))
    job = gang.volcano_job("planned", doctor.now, scheduler="gpu-binpack", age=timedelta(0))[0]
    del job["status"], job["metadata"]["uid"]
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    planned = doctor.live("-o", "json", "--job-file", str(path))
    found = _finding(planned.json(), "queue.scheduler-unconfirmed")
    assert (found["status"], found["basis"], planned.exit_code) == ("unknown", "cant-check", 3)
    assert found["headline"] == (
        "Couldn't confirm that `gpu-binpack`, which places the training job 'planned', runs in "
        "this cluster: nothing visible is it, and the cluster's control machines may run it "
        "unseen."
    )
    assert "queue.scheduler-missing" not in {f["code"] for f in planned.json()["findings"]}

    # Ages are counted from the test's start (`doctor.now`), the wait from doctor's own clock:
    # the runs before this one take seconds, so a pod 59 s old at the start may be past the
    # minute when doctor looks.
    doctor.load(cluster(scheduler="gpu-binpack", runs=False, age=timedelta(seconds=40)))
    young = doctor.live("-o", "json")
    assert _finding(young.json(), "queue.scheduler-unconfirmed")["status"] == "unknown"
    assert young.exit_code == 3

    doctor.load(cluster(scheduler="gpu-binpack", runs=False, age=timedelta(seconds=61)))
    waited = doctor.live("-o", "json")
    assert ("queue.scheduler-missing", "fail", "measured") in _findings(waited.json(), "queue")
    assert waited.exit_code == 2


def test_a_planned_job_that_names_its_machine_needs_no_scheduler(
    doctor: Doctor, tmp_path: Path
) -> None:
    """A template that names its machine (`nodeName`) is never seen by any scheduler, whatever
    `schedulerName` says: that machine's kubelet admits the pod (kubernetes/kubernetes
    pkg/kubelet/lifecycle/predicate.go Admit). A missing scheduler stops nothing."""
    _install(doctor)
    doctor.load(cluster(runs=False))
    job = gang.volcano_job("planned", doctor.now, scheduler="volcano", age=timedelta(0))[0]
    del job["status"], job["metadata"]["uid"]
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        spec = replica["template"]["spec"]
        assert spec["schedulerName"] == "volcano", "precondition: the template names Volcano"
        spec["nodeName"] = "gpu-1"
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    result = doctor.live("-o", "json", "--job-file", str(path))
    assert "queue.scheduler-missing" not in {f["code"] for f in result.json()["findings"]}


def test_a_scheduler_that_has_looked_at_the_pods_runs(doctor: Doctor) -> None:
    """A scheduler running under another pod name still marks the pods it judged: then it is
    not called missing."""
    _install(doctor)
    marked = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    doctor.load(cluster(scheduler="gang-batch", runs=False, marked=marked))
    report = doctor.live("-o", "json").json()
    assert "queue.scheduler-missing" not in {f["code"] for f in report["findings"]}


def _heard(
    base: Callable[[datetime], list[Obj]],
    event: Callable[[Obj, datetime], Obj],
) -> Callable[[datetime], list[Obj]]:
    """`base`, its training pods given their uids, with `event` posted on each of them."""

    def build(now: datetime) -> list[Obj]:
        objects = base(now)
        pods = [o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"].startswith(JOB)]
        for pod in pods:
            pod["metadata"]["uid"] = f"uid-pod-{pod['metadata']['name']}"
        assert len(pods) == 4
        assert not any("conditions" in p["status"] for p in pods), (
            "precondition: no pod of the job carries a scheduler's condition"
        )
        return [*objects, *(event(pod, now) for pod in pods)]

    return build


def test_the_scheduler_s_own_events_on_the_job_s_pods_say_it_runs(doctor: Doctor) -> None:
    """No pod of the cluster is Volcano's (it runs where doctor does not see it, or under names
    of its own), and the job's pods carry no `PodScheduled` condition: Volcano posts its
    `FailedScheduling` Event before it writes the pod's condition (volcano
    pkg/scheduler/cache/cache.go `taskUnschedulable`), and a status write that failed leaves
    the Event alone. An Event on the job's own pods whose source is the scheduler those pods
    name (the recorder's component is its scheduler name) is that scheduler's word: it runs,
    and its word on the gang is what doctor says."""
    _install(doctor)
    base = cluster(runs=False, group=unplaced, queue=gang.volcano_queue("default", gpus=8))
    doctor.load(
        _heard(
            base,
            lambda pod, now: gang.recorded_warning(
                pod, now, component="volcano", reason="FailedScheduling", message=TASK_UNPLACED
            ),
        )
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report, "queue") == [
        ("queue.not-used", "ok", "measured"),
        ("queue.gang-refused", "fail", "measured"),
    ]
    assert report["headline"]["code"] == "queue.gang-refused"
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("component", "uid"),
    [
        # Volcano's controller manager posts its own Events (volcano
        # cmd/controller-manager/app/server.go: component `vc-controller-manager`): not the
        # scheduler.
        ("vc-controller-manager", None),
        # The scheduler's word on an earlier pod of the same name (the training operator makes
        # a pod again under its name; Events outlive it: kube-apiserver --event-ttl, 1 h).
        ("volcano", "uid-an-earlier-pod"),
    ],
)
def test_events_of_another_component_or_an_earlier_pod_say_nothing_of_the_scheduler(
    doctor: Doctor, component: str, uid: str | None
) -> None:
    _install(doctor)
    base = cluster(runs=False, group=unplaced, queue=gang.volcano_queue("default", gpus=8))
    doctor.load(
        _heard(
            base,
            lambda pod, now: gang.recorded_warning(
                pod, now, component=component, reason="FailedScheduling", message="", uid=uid
            ),
        )
    )
    result = doctor.live("-o", "json")
    assert ("queue.scheduler-missing", "fail", "measured") in _findings(result.json(), "queue")
    assert result.exit_code == 2


def test_a_kube_scheduler_profile_s_events_say_it_runs(doctor: Doctor) -> None:
    """A profile of kube-scheduler shows no pod of its name, and its Events are written through
    events.k8s.io, read back with `reportingComponent` alone (no `source`): the profile's
    name there on the job's pods says it runs, where two minutes unjudged would otherwise say
    it does not. The pods name no gang (a profile places pod by pod)."""
    _install(doctor)
    marked = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    base = cluster(scheduler="gpu-binpack", runs=False)

    def no_gang(now: datetime) -> list[Obj]:
        objects = base(now)
        for obj in objects:
            if obj["kind"] == "Pod" and obj["metadata"]["name"].startswith(JOB):
                del obj["metadata"]["annotations"]
        return objects

    doctor.load(
        _heard(
            no_gang,
            lambda pod, now: gang.scheduler_profile_warning(
                pod, now, profile="gpu-binpack", message=marked
            ),
        )
    )
    report = doctor.live("-o", "json").json()
    assert _findings(report, "queue") == [("queue.not-used", "ok", "measured")]


def test_the_scheduler_s_own_pod_runs_and_the_gang_is_placed(doctor: Doctor) -> None:
    """Volcano's pod (`volcano-scheduler-…`, `app: volcano-scheduler`) runs and its PodGroup
    is Running: measured ok, ready."""
    _install(doctor)
    doctor.load(
        cluster(
            group=lambda now: gang.pod_group(JOB, now, phase="Running", message=None),
            queue=gang.volcano_queue("default", gpus=8),
        )
    )
    result = doctor.live("-o", "json")
    assert _findings(result.json(), "queue") == [
        ("queue.not-used", "ok", "measured"),
        ("queue.gang-placed", "ok", "measured"),
    ]
    assert result.exit_code == 0


def test_a_group_that_does_not_exist_is_measured(doctor: Doctor) -> None:
    """The pods name the group 'bert-large'; the server answers 404 for it."""
    _install(doctor)
    doctor.load(cluster())
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-missing")
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert found["headline"] == (
        "The training job 'bert-large' waits to start as the group 'bert-large' of `volcano`, "
        "which doesn't exist: it will never start."
    )
    assert result.exit_code == 2


def test_volcano_not_installed_is_a_measured_absence(doctor: Doctor) -> None:
    """The pods name a Volcano group, discovery serves no scheduling.volcano.sh."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load(cluster())
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-missing")
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert found["headline"] == (
        "The training job 'bert-large' waits to start as the group 'bert-large' of `volcano`, "
        "which doesn't exist (the cluster doesn't offer such groups): it will never start."
    )
    assert result.exit_code == 2


def test_an_unreadable_group_is_unknown_naming_the_permission(doctor: Doctor) -> None:
    _install(doctor)
    doctor.load(cluster(group=unplaced, queue=gang.volcano_queue("default", gpus=8)))
    doctor.server.inject(Fault.FORBIDDEN, r"/podgroups/bert-large$")
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.cant-read")
    assert (found["status"], found["basis"]) == ("unknown", "cant-check")
    assert found["headline"] == (
        "Couldn't check whether the queue lets the training job start: no permission to read "
        "the groups a training job starts as."
    )
    assert found["details"] == [
        "read podgroup 'bert-large': no permission (403); needs get "
        "podgroups.scheduling.volcano.sh in namespace train"
    ]
    assert result.exit_code == 3


def test_a_queue_too_small_for_the_gang_never_fits(doctor: Doctor) -> None:
    _install(doctor)
    doctor.load(cluster(group=unplaced, queue=gang.volcano_queue("default", gpus=4)))
    report = doctor.live("-o", "json").json()
    found = _finding(report, "queue.gang-never-fits")
    assert (found["status"], found["basis"]) == ("fail", "inferred")
    assert found["headline"] == (
        "The training job 'bert-large' needs 8 nvidia.com/gpu, more than the queue 'default' of "
        "`volcano` can ever hold (4 nvidia.com/gpu): it will never start."
    )


def test_a_closed_queue_and_a_missing_one(doctor: Doctor) -> None:
    _install(doctor)
    doctor.load(
        cluster(group=unplaced, queue=gang.volcano_queue("default", gpus=8, state="Closed"))
    )
    report = doctor.live("-o", "json").json()
    assert _finding(report, "queue.gang-queue-closed")["headline"] == (
        "The queue 'default' of `volcano` is closed: the training job 'bert-large' will not "
        "start from it."
    )


def test_a_missing_queue_is_measured(doctor: Doctor) -> None:
    _install(doctor)
    doctor.load(cluster(group=unplaced))
    report = doctor.live("-o", "json").json()
    found = _finding(report, "queue.gang-queue-missing")
    assert (found["status"], found["basis"]) == ("fail", "measured")


OVER_LIMIT = "OverLimit"
OVER_LIMIT_MESSAGE = (
    # NVIDIA/KAI-Scheduler pkg/scheduler/api/unschedule_info.go GetJobOverMaxAllowedMessageForQueue
    "team-a quota has reached the allowable limit of GPUs. Limit is 4 GPUs, currently 0 GPUs "
    "allocated and workload requested 8 GPUs"
)


def test_a_kai_group_it_cannot_place_quotes_its_reasons(doctor: Doctor) -> None:
    """KAI's word is its PodGroup's `UnschedulableOnNodePool` scheduling condition: quoted."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)

    def build(now: datetime) -> list[Obj]:
        return [
            *healthy(now),
            gang.gpu_machine(),
            *gang.kai_job(JOB, now, age=timedelta(minutes=2)),
            gang.kai_scheduler_pod(now),
            gang.kai_pod_group(JOB, now, reasons=[(OVER_LIMIT, OVER_LIMIT_MESSAGE)]),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-refused")
    assert found["headline"] == (
        "`kai-scheduler` can't start the training job 'bert-large' as one group: "
        f"`{OVER_LIMIT}: {OVER_LIMIT_MESSAGE}`."
    )
    assert found["remedy"].endswith(
        " describe podgroups.scheduling.run.ai pg-bert-large-uid-bert-large` shows its account."
    )
    assert result.exit_code == 2


def test_a_coscheduling_group_that_does_not_exist_and_one_running(doctor: Doctor) -> None:
    """The coscheduling plugin keeps pods whose group is missing waiting; Running is placed."""
    doctor.server.install(*ALL_GROUPS, gang.COSCHEDULING_GROUP)

    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.volcano_job(
            JOB, now, scheduler="scheduler-plugins-scheduler", age=timedelta(minutes=2)
        )
        for pod in pods:
            pod["metadata"]["annotations"] = {}
            pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = JOB
        mine = gang.volcano_scheduler_pod(now)
        mine["metadata"].update(name="scheduler-plugins-scheduler-7d9c5b8f6-xk2lm", labels={})
        return [*healthy(now), gang.gpu_machine(), job, *pods, mine]

    doctor.load(build)
    missing = _finding(doctor.live("-o", "json").json(), "queue.gang-missing")
    assert missing["headline"] == (
        "The training job 'bert-large' waits to start as the group 'bert-large' of "
        "`scheduler-plugins-scheduler`, which doesn't exist: it will never start."
    )
    doctor.server.add(gang.coscheduling_pod_group(JOB, doctor.now, phase="Running"))
    result = doctor.live("-o", "json")
    assert ("queue.gang-placed", "ok", "measured") in _findings(result.json(), "queue")
    assert result.exit_code == 0


PERMIT_TIMEOUT = "rejected due to timeout after waiting 60s at plugin Coscheduling"
"""kube-scheduler's words on a pod a Permit plugin kept waiting past its timeout
(framework/runtime/waiting_pods_map.go `newWaitingPod`: `rejected due to timeout after waiting
%v at plugin %v`), written whole as the `PodScheduled` message with reason `Unschedulable`
(schedule_one.go `handleSchedulingFailure`); coscheduling's wait is the PodGroup's
`scheduleTimeoutSeconds`."""

WHOLE_REASON = "The cluster found no machine for 4 programs of the training job 'bert-large': "


def test_a_permit_timeout_is_quoted_in_the_scheduler_s_words(doctor: Doctor) -> None:
    """The coscheduling Permit plugin held each pod for its group, then gave up: the message
    counts no machines, and is the scheduler's whole reason, quoted, never "it gave no reason
    doctor knows"."""
    doctor.server.install(*ALL_GROUPS, gang.COSCHEDULING_GROUP)

    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.volcano_job(
            JOB, now, scheduler="scheduler-plugins-scheduler", age=timedelta(minutes=20)
        )
        for pod in pods:
            pod["metadata"]["annotations"] = {}
            pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = JOB
        mine = gang.volcano_scheduler_pod(now)
        mine["metadata"].update(name="scheduler-plugins-scheduler-7d9c5b8f6-xk2lm", labels={})
        group = gang.coscheduling_pod_group(JOB, now, phase="Scheduling")
        waiting = gang.looked_at(pods, PERMIT_TIMEOUT)
        return [*healthy(now), gang.gpu_machine(), job, *waiting, mine, group]

    doctor.load(build)
    result = doctor.live("-o", "json")
    headline = result.json()["headline"]
    assert (result.exit_code, headline["code"], headline["status"]) == (
        2,
        "capacity.unschedulable",
        "fail",
    )
    assert headline["text"] == f"{WHOLE_REASON}it said “{PERMIT_TIMEOUT}”."
    assert headline["remedy"].startswith("Read the cluster's own words on it; `kubectl")


def test_a_coscheduling_group_waiting_for_more_pods_than_the_job_makes_says_the_count(
    doctor: Doctor,
) -> None:
    """The coscheduling PodGroup asks for 5 members; the job makes 4. The plugin's PreFilter
    refuses every pod of it (scheduler-plugins pkg/coscheduling/core/core.go `PreFilter`:
    `pre-filter pod %v cannot find enough sibling pods, current pods number: %v, minMember of
    group: %v`, UnschedulableAndUnresolvable from coscheduling.go `PreFilter`), which
    kube-scheduler writes after `0/N nodes are available:` (framework/types.go
    `FitError.Error`, the PreFilter branch; DefaultPreemption's words after it). No machine is
    held back and no room helps: it is the count, said as Volcano's is, with the field to
    lower, the group's `minMember`."""
    doctor.server.install(*ALL_GROUPS, gang.COSCHEDULING_GROUP)

    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.volcano_job(
            JOB, now, scheduler="scheduler-plugins-scheduler", age=timedelta(minutes=20)
        )
        for pod in pods:
            pod["metadata"]["annotations"] = {}
            pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = JOB
        mine = gang.volcano_scheduler_pod(now)
        mine["metadata"].update(name="scheduler-plugins-scheduler-7d9c5b8f6-xk2lm", labels={})
        group = gang.coscheduling_pod_group(JOB, now, phase="Pending")
        group["spec"]["minMember"] = 5
        refused = [
            marked
            for pod in pods
            for marked in gang.looked_at(
                [pod],
                f"0/2 nodes are available: pre-filter pod {pod['metadata']['name']} cannot "
                "find enough sibling pods, current pods number: 4, minMember of group: 5. "
                "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                "scheduling.",
            )
        ]
        return [*healthy(now), gang.gpu_machine(), job, *refused, mine, group]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-too-few-pods")
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert found["headline"] == (
        "`scheduler-plugins-scheduler` can't start the training job 'bert-large' as one group: "
        "`pre-filter pod bert-large-master-0 cannot find enough sibling pods, current pods "
        "number: 4, minMember of group: 5`."
    )
    assert found["remedy"].startswith(
        "The group waits for 5 programs while the job makes 4, and no amount of room starts "
        "it: lower the group's `minMember` to 4 or less; `kubectl"
    ), found["remedy"]
    assert (result.exit_code, report["headline"]["code"]) == (2, "queue.gang-too-few-pods")


def test_volcano_s_word_on_the_pods_is_quoted_beside_its_word_on_the_group(
    doctor: Doctor,
) -> None:
    """Volcano marks each pod of a gang it cannot place with the job's fit error (volcano
    pkg/scheduler/api/job_info.go `TaskSchedulingReason`: `JobFitErrors`, the gang plugin's
    `4/4 tasks in gang unschedulable: …`): the group's finding leads, and the capacity finding
    beside it quotes those words rather than saying it gave no reason."""
    _install(doctor)

    def group(now: datetime) -> Obj:
        return gang.pod_group(JOB, now, phase="Inqueue", message=gang.UNPLACED)

    doctor.load(
        cluster(group=group, queue=gang.volcano_queue("default", gpus=8), marked=gang.UNPLACED)
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "queue.gang-refused")
    capacity = _finding(report, "capacity.unschedulable")
    assert (capacity["status"], capacity["basis"]) == ("fail", "measured")
    assert capacity["headline"] == f"{WHOLE_REASON}it said “{gang.UNPLACED}”."


GANG_READS = {
    # The cluster's pods: the capacity fold and the scheduler fold share the path.
    "/api/v1/pods": Read(frozenset({"capacity", "queue"}), uses=2),
    "/apis/scheduling.volcano.sh/v1beta1/namespaces/train/podgroups/bert-large": Read(
        frozenset({"queue"}), Absence("queue.gang-missing", frozenset({"ok", "fail"}), 2)
    ),
    "/apis/scheduling.volcano.sh/v1beta1/queues/default": Read(
        frozenset({"queue"}), Absence("queue.gang-queue-missing", frozenset({"ok", "fail"}), 2)
    ),
}
"""Each gang read, the checks that consume it, and the measured finding its 404 is."""


def test_the_fault_matrix_holds_for_the_gang_reads(doctor: Doctor) -> None:
    """tests/support/read_faults.py for each read a gang adds."""
    _install(doctor)
    doctor.load(cluster(group=unplaced, queue=gang.volcano_queue("default", gpus=8)))
    assert read_faults.hold(doctor, GANG_READS, baseline_exit=2) == len(GANG_READS) * len(Fault)


def _kai(
    *queues: Obj,
    reasons: list[tuple[str, str]] | None = None,
    age: timedelta = timedelta(minutes=2),
) -> Callable[[datetime], list[Obj]]:
    """The PyTorchJob 'bert-large' (4 pods of 2 GPUs, `age` old) handed to KAI, its group in
    the queue `team-a` with no word from KAI on it (KAI passes over a job whose queue it
    cannot use without writing one: pkg/scheduler/actions/utils/input_jobs.go), and `queues`."""

    def build(now: datetime) -> list[Obj]:
        group = gang.kai_pod_group(JOB, now, reasons=reasons or [])
        if not reasons:
            group["status"] = {"pending": 4}
        return [
            *healthy(now),
            gang.gpu_machine(),
            *gang.kai_job(JOB, now, age=age),
            gang.kai_scheduler_pod(now),
            group,
            *queues,
        ]

    return build


def test_a_kai_queue_that_does_not_exist_is_measured(doctor: Doctor) -> None:
    """issue 42: KAI skips a job whose queue does not exist and writes nothing on its group."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(_kai(gang.kai_queue("default"), gang.kai_queue("team-b", parent="default")))
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-queue-missing")
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert found["headline"] == (
        "The training job 'bert-large' waits in the queue 'team-a' of `kai-scheduler`, which "
        "doesn't exist: it will never start."
    )
    assert result.exit_code == 2


def test_a_kai_queue_whose_parent_does_not_exist_is_measured(doctor: Doctor) -> None:
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(_kai(gang.kai_queue("team-a", parent="research")))
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-queue-parent-missing")
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert found["headline"] == (
        "The training job 'bert-large' waits in the queue 'team-a' of `kai-scheduler`, whose "
        "parent queue 'research' doesn't exist: it will never start."
    )
    assert result.exit_code == 2


def test_a_kai_queue_with_queues_under_it_starts_no_job(doctor: Doctor) -> None:
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(
        _kai(
            gang.kai_queue("default"),
            gang.kai_queue("team-a", parent="default"),
            gang.kai_queue("team-a-nlp", parent="team-a"),
        )
    )
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-queue-not-leaf")
    assert found["headline"] == (
        "The training job 'bert-large' waits in the queue 'team-a' of `kai-scheduler`, which has "
        "other queues under it ('team-a-nlp'): only a queue with none under it starts jobs, so "
        "it will never start."
    )
    assert result.exit_code == 2


def test_a_job_past_a_kai_parent_queue_s_limit_never_fits(doctor: Doctor) -> None:
    """The job's 4 pods ask for 8 GPUs; its queue is unlimited, its parent's limit is 4 GPUs:
    KAI checks the parents too (max_allowed_check.go `resultsOverLimit`)."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(
        _kai(gang.kai_queue("default", gpu_limit=4), gang.kai_queue("team-a", parent="default"))
    )
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-never-fits")
    assert (found["status"], found["basis"]) == ("fail", "inferred")
    assert found["headline"] == (
        "The training job 'bert-large' needs 8 nvidia.com/gpu, more than the queue 'default' of "
        "`kai-scheduler` can ever hold (4 nvidia.com/gpu): it will never start."
    )
    assert result.exit_code == 2


def test_a_job_past_what_a_kai_queue_has_left_now_waits(doctor: Doctor) -> None:
    """The parent 'default' may hold 12 GPUs and its queue controller counts 6 held now
    (`status.allocated`); the job's 8 would pass the limit, so KAI holds it
    (max_allowed_check.go `isOverLimit`: `MaxAllowed < Allocated + requested`) until work
    finishes: a wait, not a job that can never start."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    held = {"cpu": "24", "memory": "192Gi", "nvidia.com/gpu": "6"}
    doctor.load(
        _kai(
            gang.kai_queue("default", gpu_limit=12, allocated=held),
            gang.kai_queue("team-a", parent="default", allocated=held),
        )
    )
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-queue-full")
    assert (found["status"], found["basis"]) == ("warn", "inferred")
    assert found["headline"] == (
        "The training job 'bert-large' needs 8 nvidia.com/gpu, and the queue 'default' of "
        "`kai-scheduler` already holds 6 nvidia.com/gpu of its limit of 12 nvidia.com/gpu: the "
        "job waits until running work there finishes."
    )
    assert (
        "Queue default: limit 12 nvidia.com/gpu; status.allocated 6 nvidia.com/gpu"
        in (found["details"])
    )
    assert result.exit_code == 0


def test_a_kai_queue_wait_is_not_called_stuck_however_long(doctor: Doctor) -> None:
    """The queue 'team-a' may hold 8 GPUs and holds 8 now; the job, 10 minutes old, waits
    past the 5-minute grace with no machine and no word on its pods. KAI holds it until the
    queue's holding drops (max_allowed_check.go `isOverLimit`): the queue check's wait
    explains it, so the capacity check never calls it "free capacity doesn't explain it"
    (`capacity.job-stuck`), and the wait stays a wait."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    held = {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"}
    doctor.load(
        _kai(gang.kai_queue("team-a", gpu_limit=8, allocated=held), age=timedelta(minutes=10))
    )
    result = doctor.live("-o", "json")
    report = result.json()
    codes = [f["code"] for f in report["findings"]]
    assert "capacity.job-stuck" not in codes, codes
    assert (result.exit_code, report["headline"]["code"]) == (0, "queue.gang-queue-full")


def test_kai_s_over_limit_on_a_job_its_queue_s_running_work_holds_back_is_a_wait(
    doctor: Doctor,
) -> None:
    """The queue 'team-a' may hold 8 GPUs and holds 8 now; KAI has written `OverLimit` on the
    group (max_allowed_check.go `isOverLimit`, `MaxAllowed < Allocated + requested`; the words
    of unschedule_info.go `GetJobOverMaxAllowedMessageForQueue`). The same words are written
    for a job too large for the queue and for one that waits for its running work: the
    queue's arithmetic tells which. Here the job's 8 fit the limit once the work ends: the
    same wait as before KAI wrote its word (`queue.gang-queue-full`), KAI's words kept."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    held = {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"}
    words = (
        "team-a quota has reached the allowable limit of GPUs. Limit is 8 GPUs, currently 8 "
        "GPUs allocated and workload requested 8 GPUs"
    )
    doctor.load(
        _kai(
            gang.kai_queue("team-a", gpu_limit=8, allocated=held),
            reasons=[(OVER_LIMIT, words)],
            age=timedelta(minutes=10),
        )
    )
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-queue-full")
    assert (found["status"], found["basis"]) == ("warn", "inferred")
    assert (
        f"condition UnschedulableOnNodePool (Unschedulable): {OVER_LIMIT}: {words}"
        in (found["details"])
    )
    codes = [f["code"] for f in report["findings"]]
    assert {"queue.gang-refused", "capacity.job-stuck"}.isdisjoint(codes), codes
    assert (result.exit_code, report["headline"]["code"]) == (0, "queue.gang-queue-full")


def test_kai_s_over_limit_on_a_job_too_large_for_its_queue_never_fits(doctor: Doctor) -> None:
    """`OverLimit` where the job alone passes the queue's limit of 4 GPUs: it never starts."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(
        _kai(
            gang.kai_queue("team-a", gpu_limit=4),
            reasons=[(OVER_LIMIT, OVER_LIMIT_MESSAGE)],
        )
    )
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-never-fits")
    assert found["status"] == "fail"
    assert (
        f"condition UnschedulableOnNodePool (Unschedulable): {OVER_LIMIT}: "
        in (found["details"][-1])
    )
    assert result.exit_code == 2


def test_a_kai_queue_with_room_left_now_says_nothing(doctor: Doctor) -> None:
    """4 held of 12: the job's 8 fit exactly (the limit is passed only by more than it)."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    held = {"nvidia.com/gpu": "4"}
    doctor.load(
        _kai(
            gang.kai_queue("default", gpu_limit=12, allocated=held),
            gang.kai_queue("team-a", parent="default"),
        )
    )
    report = doctor.live("-o", "json").json()
    assert [c for c, s, _ in _findings(report, "queue") if s != "ok"] == []


def test_a_kai_queue_s_holding_that_counts_the_job_s_own_pods_is_not_judged(
    doctor: Doctor,
) -> None:
    """One pod of the job is on a machine: the queue's holding counts it, so the job's whole
    request on top of it would count it twice."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    held = {"nvidia.com/gpu": "6"}
    build = _kai(
        gang.kai_queue("default", gpu_limit=12, allocated=held),
        gang.kai_queue("team-a", parent="default"),
    )

    def one_bound(now: datetime) -> list[Obj]:
        objects = build(now)
        first = next(
            x
            for x in objects
            if x["kind"] == "Pod" and x["metadata"]["name"] == (f"{JOB}-worker-0")
        )
        first["spec"]["nodeName"] = "gpu-8"
        return objects

    doctor.load(one_bound)
    report = doctor.live("-o", "json").json()
    assert "queue.gang-queue-full" not in [c for c, _, _ in _findings(report, "queue")]


def test_kai_queues_that_let_the_job_through_say_nothing(doctor: Doctor) -> None:
    """A leaf queue under an existing parent, unlimited (-1) or with room: no queue finding."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(
        _kai(gang.kai_queue("default", gpu_limit=8), gang.kai_queue("team-a", parent="default"))
    )
    report = doctor.live("-o", "json").json()
    assert [c for c, s, _ in _findings(report, "queue") if s != "ok"] == []
    paths = {r.path for r in doctor.server.requests()}
    assert "/apis/scheduling.run.ai/v2/queues" in paths, "precondition: the queues were read"


def test_kai_queues_that_cannot_be_read_are_unknown_naming_the_grant(doctor: Doctor) -> None:
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(_kai(gang.kai_queue("default"), gang.kai_queue("team-a", parent="default")))
    doctor.server.inject(Fault.FORBIDDEN, r"^/apis/scheduling\.run\.ai/v2/queues$")
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.cant-read")
    assert found["status"] == "unknown"
    assert any("list queues.scheduling.run.ai" in line for line in found["details"]), found
    assert result.exit_code == 3


def test_the_fault_matrix_holds_for_the_kai_queue_list(doctor: Doctor) -> None:
    """Every fault class on the KAI queues' list makes the queue check unknown, never a fail
    and never a pass, and changes no other check; a throttle is waited out."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(
        _kai(gang.kai_queue("default", gpu_limit=4), gang.kai_queue("team-a", parent="default"))
    )
    reads = {"/apis/scheduling.run.ai/v2/queues": Read(frozenset({"queue"}))}
    assert read_faults.hold(doctor, reads, baseline_exit=2) == len(Fault)


def _volcano_event(now: datetime, kind: str, name: str, reason: str, message: str) -> Obj:
    """A Warning Event as Volcano's scheduler records it (component `volcano`, its scheduler
    name): `Unschedulable` on the PodGroup with the gang's words (pkg/scheduler/cache/cache.go
    `RecordJobStatusEvent`), `FailedScheduling` on each pod with its task's words
    (`taskUnschedulable`), repeated each session."""
    api_version = "scheduling.volcano.sh/v1beta1" if kind == "PodGroup" else "v1"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{reason.lower()}", "namespace": "train"},
        "involvedObject": {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "namespace": "train",
        },
        "reason": reason,
        "message": message,
        "type": "Warning",
        "source": {"component": "volcano"},
        "firstTimestamp": ts(now - timedelta(minutes=1, seconds=50)),
        "lastTimestamp": ts(now - timedelta(seconds=5)),
        "count": 22,
    }


TASK_UNPLACED = "all nodes are unavailable: 1 node(s) resource fit failed, 1 node(s) unavailable."


def test_volcano_s_events_are_said_once_not_once_per_pod(doctor: Doctor) -> None:
    """Volcano repeats the gang's words as an Event on its PodGroup and posts one
    FailedScheduling per pod: the group's words are the queue check's (quoted once), and the
    same words about the job's four pods are one finding naming them."""
    _install(doctor)
    base = cluster(group=unplaced, queue=gang.volcano_queue("default", gpus=8))

    def build(now: datetime) -> list[Obj]:
        objects = base(now)
        pods = [
            o["metadata"]["name"]
            for o in objects
            if o["kind"] == "Pod" and o["metadata"]["name"].startswith(JOB)
        ]
        return [
            *objects,
            _volcano_event(now, "PodGroup", JOB, "Unschedulable", gang.UNPLACED),
            *(_volcano_event(now, "Pod", p, "FailedScheduling", TASK_UNPLACED) for p in pods),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert report["headline"]["code"] == "queue.gang-refused"
    reported = [f for f in report["findings"] if f["code"] == "evidence.cluster-reported"]
    assert [f["objects"] for f in reported] == [
        [
            "Pod/bert-large-master-0",
            "Pod/bert-large-worker-0",
            "Pod/bert-large-worker-1",
            "Pod/bert-large-worker-2",
        ]
    ], "the PodGroup's Event is the gang's word, said once; the pods' one finding"
    assert reported[0]["headline"] == (
        "The cluster reports a problem with the training job 'bert-large' (its programs "
        "'bert-large-master-0', 'bert-large-worker-0', 'bert-large-worker-1' and 1 more): "
        f"“volcano” says “FailedScheduling: {TASK_UNPLACED}”."
    )
    assert len(reported[0]["details"]) == 4
    assert result.exit_code == 2


def _placed_kai(bound: int) -> Callable[[datetime], list[Obj]]:
    """The KAI gang after KAI placed it, `bound` of its 4 pods on the machine 40 minutes ago:
    its group still carries the OverLimit condition KAI wrote before room freed up (KAI never
    takes one back and never writes `status.running`: NVIDIA/KAI-Scheduler
    pkg/scheduler/cache/status_updater/default_status_updater.go
    `squashAndAppendConditionsForNodepool` is the only writer of `schedulingConditions`)."""

    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.kai_job(JOB, now, age=timedelta(hours=1))
        pods = [
            *gang.running_on(pods[:bound], "gpu-8", now, since=timedelta(minutes=30)),
            *pods[bound:],
        ]
        group = gang.kai_pod_group(JOB, now, reasons=[(OVER_LIMIT, OVER_LIMIT_MESSAGE)])
        group["status"].pop("pending")
        return [
            *healthy(now),
            gang.gpu_machine(),
            job,
            *pods,
            gang.kai_scheduler_pod(now),
            group,
            gang.kai_queue("default"),
            gang.kai_queue("team-a", parent="default", gpu_limit=8),
        ]

    return build


def test_a_kai_gang_on_its_machines_is_placed_whatever_its_old_condition_says(
    doctor: Doctor,
) -> None:
    """Every pod of the group is bound: KAI placed the gang, and the condition it wrote
    before is history, not a refusal; one pod still to place keeps KAI's word in force."""
    doctor.server.install(*ALL_GROUPS, gang.KAI_GROUP)
    doctor.load(_placed_kai(bound=4))
    result = doctor.live("-o", "json")
    report = result.json()
    assert ("queue.gang-placed", "ok", "measured") in _findings(report, "queue")
    assert "queue.gang-refused" not in {f["code"] for f in report["findings"]}
    assert _finding(report, "queue.gang-placed")["details"] == [
        "PodGroup pg-bert-large-uid-bert-large: all 4 pods are on machines"
    ]
    assert result.exit_code == 0, report["headline"]
    assert doctor.server.requests(path="/podgroups") == [], "a placed group's word is history"

    doctor.load(_placed_kai(bound=3))
    result = doctor.live("-o", "json")
    assert _finding(result.json(), "queue.gang-refused")["status"] == "fail"
    assert result.exit_code == 2


def test_a_running_volcano_gang_keeps_running_in_a_closing_queue(doctor: Doctor) -> None:
    """A queue closed while gangs are in it is `Closing` and evicts nothing (volcano
    pkg/controllers/queue/state/open.go `CloseQueueAction`): the gang on its machines is
    placed; the queue stops only gangs not yet placed."""
    _install(doctor)

    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.volcano_job(JOB, now, scheduler="volcano", age=timedelta(hours=1))
        return [
            *healthy(now),
            gang.gpu_machine(),
            job,
            *gang.running_on(pods, "gpu-8", now, since=timedelta(minutes=30)),
            gang.volcano_scheduler_pod(now),
            gang.pod_group(JOB, now, phase="Running", message=None),
            gang.volcano_queue("default", gpus=8, state="Closing"),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report, "queue") == [
        ("queue.not-used", "ok", "measured"),
        ("queue.gang-placed", "ok", "measured"),
    ]
    assert result.exit_code == 0, report["headline"]
