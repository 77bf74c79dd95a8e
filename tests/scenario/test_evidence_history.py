"""What a component reported is evidence while what it is about still stands; a report about
something that has since changed is history, and history never fails a namespace.

Each case holds a report that is over (an Event about an earlier pod of the same name, a claim's
wait for a volume that it has since been given, how a finished job's pod ended) beside the same
report while it stands, which must still be quoted: the preconditions that the history rule is
what keeps the first out.
"""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_cluster_reports import event, placed_pod
from tests.support.scenarios import (
    NAMESPACE,
    Obj,
    find,
    healthy,
    job_pod,
    pod_for,
    running_containers,
    training_job,
    ts,
)

MOUNT_FAILED = 'MountVolume.SetUp failed for volume "hf-token" : secret "hf-token-old" not found'
"""The kubelet's FailedMount message (pkg/kubelet/volumemanager/reconciler, as `kubectl
describe pod` prints it)."""


def _quoting(report: dict[str, Any], words: str) -> list[dict[str, Any]]:
    """The evidence findings that quote `words`."""
    return [
        f
        for f in report["findings"]
        if f["code"] == "evidence.cluster-reported" and any(words in d for d in f["details"])
    ]


def _waiting_pod(now: datetime) -> Obj:
    """train-002's pod, made again ten minutes ago under the name of an earlier one."""
    pod = placed_pod(now)
    pod["metadata"]["uid"] = "6a1f0c2e-0000-4000-8000-00000000new1"
    return pod


def _earlier_pod_event(now: datetime, *, uid: str, age: timedelta) -> Obj:
    """The kubelet's FailedMount about a pod named as the job's pod is, with `uid`."""
    named = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train-002-w0", "namespace": NAMESPACE, "uid": uid},
    }
    said = event(now, named, "FailedMount", MOUNT_FAILED, "kubelet", count=17, age=age)
    said["firstTimestamp"] = ts(now - age - timedelta(minutes=20))
    return said


def _with(said: Callable[[datetime], Obj]) -> Callable[[datetime], list[Obj]]:
    def build(now: datetime) -> list[Obj]:
        return [
            *healthy(now),
            training_job("train-002", now, finished=False, age=timedelta(minutes=12)),
            _waiting_pod(now),
            said(now),
        ]

    return build


@pytest.mark.parametrize(
    "said",
    [
        pytest.param(
            lambda now: _earlier_pod_event(
                now, uid="0b9e7d41-0000-4000-8000-00000000old1", age=timedelta(minutes=2)
            ),
            id="another-uid",
        ),
        pytest.param(
            lambda now: _earlier_pod_event(now, uid="", age=timedelta(minutes=35)),
            id="no-uid-seen-before-the-pod-was-made",
        ),
    ],
)
def test_an_event_about_an_earlier_pod_of_the_same_name_is_history(
    doctor: Doctor, said: Callable[[datetime], Obj]
) -> None:
    """A job submitted again under its name: the kubelet's Warning about the pod it had before
    (another uid, or last seen before the new pod existed) says nothing about the new one."""
    doctor.load(
        _with(
            lambda now: _earlier_pod_event(
                now, uid=_waiting_pod(now)["metadata"]["uid"], age=timedelta(minutes=2)
            )
        )
    )
    standing = doctor.live("-o", "json").json()
    assert _quoting(standing, MOUNT_FAILED), "precondition: about this pod, the Event is quoted"

    doctor.load(_with(said))
    report = doctor.live("-o", "json").json()
    assert _quoting(report, MOUNT_FAILED) == [], [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]


PROVISIONING_FAILED = (
    'failed to provision volume with StorageClass "standard": rpc error: code = '
    "DeadlineExceeded desc = context deadline exceeded"
)
"""An external provisioner's ProvisioningFailed on a claim (kubernetes-csi/external-provisioner,
as `kubectl describe pvc` prints it)."""


def _claim_once_unprovisioned(phase: str) -> Callable[[datetime], list[Obj]]:
    """The job's dataset claim, in `phase`, with a ProvisioningFailed from 40 minutes ago."""

    def build(now: datetime) -> list[Obj]:
        objects = [
            *healthy(now),
            training_job("train-002", now, finished=False, age=timedelta(minutes=12)),
            placed_pod(now),
        ]
        claim = find(objects, "PersistentVolumeClaim", "datasets")
        claim["status"]["phase"] = phase
        said = event(
            now,
            claim,
            "ProvisioningFailed",
            PROVISIONING_FAILED,
            "nfs.csi.k8s.io_csi-nfs-controller-0_7c1e",
            count=2,
            age=timedelta(minutes=40),
        )
        return [*objects, said]

    return build


def test_a_claim_s_wait_for_its_volume_is_over_once_it_is_bound(doctor: Doctor) -> None:
    """The provisioner failed once, tried again and the claim is Bound: its Warning is the
    history of a wait that ended."""
    doctor.load(_claim_once_unprovisioned("Pending"))
    waiting = doctor.live("-o", "json").json()
    assert _quoting(waiting, PROVISIONING_FAILED), "precondition: a waiting claim's is quoted"

    doctor.load(_claim_once_unprovisioned("Bound"))
    report = doctor.live("-o", "json").json()
    assert _quoting(report, PROVISIONING_FAILED) == [], [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]


EVICTED = "Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. "
"""The kubelet's eviction message (pkg/kubelet/eviction/helpers.go), on the pod and its Event."""


def _evicted_pod_of(job_name: str, *, finished: bool) -> Callable[[datetime], list[Obj]]:
    """`job_name`'s pod evicted 21 minutes ago; the job failed for it when `finished`; the
    job's pod train-002-w0 waits on gpu-1 beside it."""

    def build(now: datetime) -> list[Obj]:
        job = training_job(job_name, now, finished=False, age=timedelta(hours=1))
        if finished:
            job["status"] = {
                "failed": 1,
                "conditions": [
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit",
                        "lastTransitionTime": ts(now - timedelta(minutes=20)),
                    }
                ],
            }
        pod = job_pod(job, now, suffix="ev1", node_name="gpu-1", age=timedelta(minutes=50))
        pod["status"] = {"phase": "Failed", "reason": "Evicted", "message": EVICTED}
        said = event(now, pod, "Evicted", EVICTED, "kubelet", count=1, age=timedelta(minutes=21))
        return [
            *healthy(now),
            training_job("train-002", now, finished=False, age=timedelta(minutes=12)),
            placed_pod(now),
            job,
            pod,
            said,
        ]

    return build


def test_how_a_finished_job_s_pod_ended_is_the_job_s_ending_not_new_evidence(
    doctor: Doctor,
) -> None:
    """train-001 failed when the kubelet evicted its pod: how it ended is the workloads
    check's to say of that job; the eviction Event is not a problem of the namespace now."""
    doctor.load(_evicted_pod_of("train-001", finished=False))
    running = doctor.live("-o", "json").json()
    assert _quoting(running, EVICTED.strip()), "precondition: a pod of a job still on is quoted"

    doctor.load(_evicted_pod_of("train-001", finished=True))
    report = doctor.live("-o", "json").json()
    assert _quoting(report, EVICTED.strip()) == [], [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]


def test_a_component_s_name_and_reason_are_one_bounded_line_as_its_message_is(
    doctor: Doctor,
) -> None:
    """A core/v1 Event's source and reason are not checked by the API server: control
    characters are shown escaped, and each is cut at the events.k8s.io limit of 128."""

    def build(now: datetime) -> list[Obj]:
        pod = placed_pod(now)
        said = event(now, pod, "Frob\x1b[31mJam" + "R" * 400, "jammed", "acme\x07op" + "C" * 400)
        return [*healthy(now), training_job("train-002", now, finished=False), pod, said]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    quoting = _quoting(report, "jammed")
    assert quoting, "precondition: the Event is evidence"
    headline = quoting[0]["headline"]
    for hostile in ("\x1b", "\x07"):
        assert hostile not in headline, headline
    for escaped in ("Frob\\x1b[31mJam", "acme\\x07op"):
        assert escaped in headline, headline
    for letter in "RC":
        assert letter * 100 in headline, headline
        assert letter * 200 not in headline, headline


LOW_ON_MEMORY = (
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91468Ki. "
    "Container mysql was using 1843200Ki, request is 2Gi, has larger consumption of memory."
)
"""The kubelet's eviction message for a machine short of memory (pkg/kubelet/eviction/
helpers.go evictionMessage), on the evicted pod's status and on its `Evicted` Event."""


def _evicted(pod: Obj, now: datetime, message: str) -> Obj:
    """`pod` as the kubelet leaves it after evicting it 40 minutes ago
    (pkg/kubelet/eviction/eviction_manager.go evictPod: phase Failed, reason Evicted, the
    `DisruptionTarget` condition with reason TerminationByKubelet); the object stays until
    PodGC passes --terminated-pod-gc-threshold (12500 ended pods)."""
    ended = ts(now - timedelta(minutes=40))
    pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
    pod["status"] = {
        "phase": "Failed",
        "reason": "Evicted",
        "message": message,
        "conditions": [
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "TerminationByKubelet",
                "message": "The node was low on resource: memory.",
                "lastTransitionTime": ended,
            },
            {
                "type": "Ready",
                "status": "False",
                "reason": "PodFailed",
                "lastTransitionTime": ended,
            },
        ],
        "containerStatuses": [
            {
                "name": pod["spec"]["containers"][0]["name"],
                "image": pod["spec"]["containers"][0]["image"],
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        "exitCode": 137,
                        "reason": "ContainerStatusUnknown",
                        "message": "The container could not be located when the pod was terminated",
                    }
                },
            }
        ],
    }
    return pod


def _starting_job(now: datetime) -> list[Obj]:
    """train-003, made 20 seconds ago, its pod placed on gpu-1 and being started: a pod that
    waits, so the namespace's Warning Events are read."""
    job = training_job("train-003", now, finished=False, age=timedelta(seconds=20))
    pod = job_pod(
        job, now, suffix="w0", node_name="gpu-1", phase="Pending", age=timedelta(seconds=20)
    )
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    return [job, pod]


def _not_started(pod: Obj) -> Obj:
    """`pod` as it stands before the kubelet starts it: Pending, placed, no container started
    yet (pkg/kubelet/kubelet_pods.go: `ContainerCreating` while its sandbox is made)."""
    pod["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}},
            }
            for c in pod["spec"]["containers"]
        ],
    }
    return pod


def _evicted_copy(*, copies: str) -> Callable[[datetime], list[Obj]]:
    """mysql's copy mysql-x7k2p, evicted 40 minutes ago, beside `copies`: "none" (its
    Deployment has no copy available and its ReplicaSet has made none since), "available"
    (the Deployment runs every copy again), "made-since" (the ReplicaSet made mysql-n3w99
    39 minutes ago, not started yet), "ran-since" (mysql-n3w99 runs, not ready: not
    available yet)."""

    def build(now: datetime) -> list[Obj]:
        objects = [o for o in healthy(now) if o["metadata"]["name"] != "mysql-def34"]
        database = find(objects, "Deployment", "mysql")
        evicted = _evicted(
            pod_for(database, now, suffix="x7k2p", age=timedelta(hours=5)), now, LOW_ON_MEMORY
        )
        said = event(
            now, evicted, "Evicted", LOW_ON_MEMORY, "kubelet", count=1, age=timedelta(minutes=40)
        )
        if copies == "available":
            objects.append(pod_for(database, now, suffix="def34"))
        else:
            database["status"].update({"availableReplicas": 0, "readyReplicas": 0})
        made = pod_for(database, now, suffix="n3w99", age=timedelta(minutes=39))
        if copies == "made-since":
            objects.append(_not_started(made))
        if copies == "ran-since":
            made["status"]["conditions"][1].update(status="False", reason="ContainersNotReady")
            made["status"]["containerStatuses"][0]["ready"] = False
            objects.append(made)
        return [*objects, evicted, said, *_starting_job(now)]

    return build


@pytest.mark.parametrize("copies", ["available", "ran-since"])
def test_a_failed_copy_its_replica_set_replaced_is_history(doctor: Doctor, copies: str) -> None:
    """The kubelet evicted a copy of mysql and left the pod behind; its ReplicaSet replaced it
    (a Failed pod is none of its copies: pkg/controller/controller_utils.go IsPodActive) with a
    copy that runs. The eviction is history, whether or not some other pod of the namespace
    happens to wait."""
    doctor.load(_evicted_copy(copies="none"))
    standing = doctor.live("-o", "json").json()
    assert _quoting(standing, LOW_ON_MEMORY), "precondition: a copy not replaced is quoted"

    doctor.load(_evicted_copy(copies=copies))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _quoting(report, LOW_ON_MEMORY) == [], [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]
    if copies == "available":
        assert result.exit_code == 0, report["headline"]


def test_a_failed_copy_whose_replacement_has_not_started_still_stands(doctor: Doctor) -> None:
    """The ReplicaSet made a copy after the eviction, and that copy has not started: nothing
    shows the machine's shortage is over, so the kubelet's word still stands."""
    doctor.load(_evicted_copy(copies="ran-since"))
    assert _quoting(doctor.live("-o", "json").json(), LOW_ON_MEMORY) == [], (
        "precondition: a replacement that runs makes it history"
    )

    doctor.load(_evicted_copy(copies="made-since"))
    result = doctor.live("-o", "json")
    report = result.json()
    quoted = [f["status"] for f in _quoting(report, LOW_ON_MEMORY)]
    assert quoted == ["fail"], report["headline"]["text"]
    assert result.exit_code == 2, report["headline"]["text"]


TRAINER_EVICTED = (
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. "
    "Container trainer was using 60Gi, request is 16Gi, has larger consumption of memory."
)


def _evicted_attempt(
    *, replaced: bool, next_failed: bool = False
) -> Callable[[datetime], list[Obj]]:
    """train-002 (45 minutes old, its Job still on) whose first pod was evicted 40 minutes
    ago; with `replaced`, the Job controller's next pod, made 38 minutes ago, runs and has
    been ready for 35 minutes (with `next_failed`, it ran those 30 minutes and then its
    program exited with an error 5 minutes ago). train-003's pod is being started beside
    it."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, finished=False, age=timedelta(minutes=45))
        job["status"] = {"active": 1 if replaced else 0, "failed": 1, "conditions": []}
        first = _evicted(
            job_pod(job, now, suffix="aaaaa", node_name="gpu-1", age=timedelta(minutes=45)),
            now,
            TRAINER_EVICTED,
        )
        said = event(
            now, first, "Evicted", TRAINER_EVICTED, "kubelet", count=1, age=timedelta(minutes=40)
        )
        objects = [*healthy(now), job, first, said, *_starting_job(now)]
        if replaced:
            started = ts(now - timedelta(minutes=35))
            second = job_pod(job, now, suffix="bbbbb", node_name="gpu-1", age=timedelta(minutes=38))
            second["status"]["conditions"] = [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True", "lastTransitionTime": started},
            ]
            second["status"]["containerStatuses"] = running_containers(
                "train-002-bbbbb", second["spec"]["containers"], started
            )
            if next_failed:
                # As the kubelet writes a pod whose program exited non-zero under
                # restartPolicy Never (pkg/kubelet/kubelet_pods.go getPhase: Failed).
                job["status"].update(active=0, failed=2)
                second["status"]["phase"] = "Failed"
                second["status"]["conditions"][1].update(status="False", reason="PodFailed")
                second["status"]["containerStatuses"][0].update(
                    ready=False,
                    state={
                        "terminated": {
                            "exitCode": 1,
                            "reason": "Error",
                            "startedAt": started,
                            "finishedAt": ts(now - timedelta(minutes=5)),
                        }
                    },
                )
            objects.append(second)
        return objects

    return build


def test_a_training_pod_its_job_replaced_is_history_and_its_last_attempt_is_not(
    doctor: Doctor,
) -> None:
    """The Job controller replaced the evicted pod (pkg/controller/job/job_controller.go: a
    Failed pod is not active, and it makes another while backoffLimit allows): its eviction
    is history. While that pod is the job's last attempt, the eviction stands."""
    doctor.load(_evicted_attempt(replaced=False))
    standing = doctor.live("-o", "json").json()
    assert _quoting(standing, TRAINER_EVICTED), "the last attempt's eviction is quoted"

    doctor.load(_evicted_attempt(replaced=True))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _quoting(report, TRAINER_EVICTED) == [], [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]
    assert result.exit_code == 0, report["headline"]


BACKOFF_LIMIT = "Job has reached the specified backoff limit"
"""The Job controller's Warning on a Job it failed (pkg/controller/job/job_controller.go
recordJobFinished: `Event(job, Warning, finishedCond.Reason, finishedCond.Message)`)."""


def _resubmitted(*, uid: str, age: timedelta) -> Callable[[datetime], list[Obj]]:
    """train-002 (uid uid-train-002), submitted three minutes ago, its pod placed on gpu-1 and
    being started; and the Job controller's BackoffLimitExceeded about a Job named train-002
    with `uid`, last seen `age` ago: with another uid, or seen before this Job was made, it is
    about the train-002 that was deleted before this one was submitted."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, finished=False, age=timedelta(minutes=3))
        job["metadata"]["uid"] = "uid-train-002"
        pod = job_pod(job, now, suffix="abcde", node_name="gpu-1", phase="Pending")
        pod["metadata"]["creationTimestamp"] = ts(now - timedelta(minutes=3))
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
        named = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train-002", "namespace": NAMESPACE, "uid": uid},
        }
        said = event(
            now, named, "BackoffLimitExceeded", BACKOFF_LIMIT, "job-controller", count=1, age=age
        )
        return [*healthy(now), job, pod, said]

    return build


@pytest.mark.parametrize(
    ("uid", "age"),
    [
        pytest.param("uid-train-002-old", timedelta(minutes=2), id="another-uid"),
        pytest.param("", timedelta(minutes=12), id="no-uid-seen-before-the-job-was-made"),
    ],
)
def test_an_event_about_an_earlier_job_of_the_same_name_is_history(
    doctor: Doctor, uid: str, age: timedelta
) -> None:
    """`kubectl delete job train-002; kubectl apply -f job.yaml`: the Job controller's Warning
    about the deleted Job lives on for the Event's hour, naming the old Job's uid; the new
    train-002 runs, and that failure is not its own."""
    doctor.load(_resubmitted(uid="uid-train-002", age=timedelta(minutes=2)))
    standing = doctor.live("-o", "json").json()
    assert _quoting(standing, BACKOFF_LIMIT), "precondition: about this Job, it is quoted"

    doctor.load(_resubmitted(uid=uid, age=age))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _quoting(report, BACKOFF_LIMIT) == [], [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]
    assert result.exit_code == 0, report["headline"]


def test_an_eviction_a_later_try_ran_past_is_history_though_that_try_failed(
    doctor: Doctor,
) -> None:
    """The Job's next pod was admitted and ran for half an hour after the eviction before its
    program failed: the kubelet got past what it said of the first, which is history; how the
    next try ended is the workloads check's to say."""
    doctor.load(_evicted_attempt(replaced=False))
    standing = doctor.live("-o", "json").json()
    assert _quoting(standing, TRAINER_EVICTED), "precondition: the last attempt's eviction"

    doctor.load(_evicted_attempt(replaced=True, next_failed=True))
    report = doctor.live("-o", "json").json()
    assert _quoting(report, TRAINER_EVICTED) == [], [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]


GPU_NOT_ALLOCATED = (
    "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
    "Requested: 1, Available: 0, which is unexpected"
)
"""The device manager's refusal when the kubelet admits a pod (pkg/kubelet/cm/devicemanager/
manager.go `devicesToAllocate`), which the kubelet's admission turns into the reason
`UnexpectedAdmissionError` (pkg/kubelet/lifecycle/predicate.go)."""


def _turned_away(pod: Obj) -> Obj:
    """`pod` as the kubelet leaves a pod it refused at admission (pkg/kubelet/kubelet.go
    `rejectPod`: the phase Failed, the reason and `Pod was rejected: <message>`, no container
    ever started)."""
    pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
    pod["status"] = {
        "phase": "Failed",
        "reason": "UnexpectedAdmissionError",
        "message": f"Pod was rejected: {GPU_NOT_ALLOCATED}",
    }
    return pod


def _rejection_loop(kind: str, *, next_made: bool) -> Callable[[datetime], list[Obj]]:
    """gpu-1's kubelet turns `kind`'s pod away at admission (its device plugin has no GPU to
    hand out) and records `UnexpectedAdmissionError` on it; with `next_made`, the controller's
    next pod is made and placed on gpu-1 again, not yet started: the other moment of the same
    loop (the ReplicaSet makes it at once, the Job controller after its back-off)."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        if kind == "deployment":
            owner = find(objects, "Deployment", "mysql")
            owner["status"].update({"availableReplicas": 0, "readyReplicas": 0})
            objects = [o for o in objects if o["metadata"]["name"] != "mysql-def34"]
            refused = pod_for(
                owner, now, suffix="aaaaa", node_name="gpu-1", age=timedelta(seconds=12)
            )
            following = pod_for(
                owner, now, suffix="bbbbb", node_name="gpu-1", age=timedelta(seconds=11)
            )
            seen = timedelta(seconds=12)
        else:
            owner = training_job("train-5", now, gpus=1, finished=False, age=timedelta(minutes=3))
            owner["metadata"]["uid"] = "uid-train-5"
            owner["status"] = {"active": 1 if next_made else 0, "failed": 2}
            objects.append(owner)
            refused = job_pod(
                owner, now, suffix="aaaaa", node_name="gpu-1", age=timedelta(seconds=40)
            )
            following = job_pod(
                owner, now, suffix="bbbbb", node_name="gpu-1", age=timedelta(seconds=10)
            )
            seen = timedelta(seconds=40)
        refused = _turned_away(refused)
        said = event(
            now,
            refused,
            "UnexpectedAdmissionError",
            GPU_NOT_ALLOCATED,
            "kubelet",
            count=1,
            age=seen,
        )
        return [*objects, refused, said, *([_not_started(following)] if next_made else [])]

    return build


@pytest.mark.parametrize("kind", ["deployment", "training-job"])
def test_a_kubelet_that_turns_every_pod_away_is_said_at_every_moment_of_its_loop(
    doctor: Doctor, kind: str
) -> None:
    """A controller's next pod, made and not yet started, does not make the kubelet's refusal
    of the last one history: in a loop of refusals the newest pod is, from one moment to the
    next, a fresh one or a refused one, and the verdict must not flip with it."""
    verdicts = []
    for next_made in (False, True):
        doctor.load(_rejection_loop(kind, next_made=next_made))
        result = doctor.live("-o", "json")
        report = result.json()
        quoted = [f["status"] for f in _quoting(report, GPU_NOT_ALLOCATED)]
        assert quoted == ["fail"], (next_made, report["headline"]["text"])
        verdicts.append((result.exit_code, report["headline"]["code"]))
    assert verdicts == [(2, "evidence.cluster-reported")] * 2, verdicts
