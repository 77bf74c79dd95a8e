"""What the cluster already measured is a finding the moment it exists: the scheduler's
Unschedulable condition, a controller's refused creates, a volume that would not attach, the
last job's failure, a job paused with nothing to start it. No grace period delays a
measurement."""

import copy
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_cluster_reports import event
from tests.support import gang_objects as gang
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import (
    NAMESPACE,
    REGISTRY,
    SCENARIOS,
    Obj,
    container,
    find,
    healthy,
    job_pod,
    node,
    running_containers,
    training_job,
    ts,
)
from tests.support.training_kinds import (
    cluster_training_runtime,
    indexed_job,
    jobset,
    train_job,
)

PODS = r"^/api/v1/namespaces/train/pods$"
EVENTS = "/api/v1/namespaces/train/events"


def _codes(report: dict[str, Any], check: str) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in report["findings"] if f["check"] == check]


def _finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [f for f in report["findings"] if f["code"] == code]
    assert len(found) == 1, [f["code"] for f in report["findings"]]
    return found[0]


def _event(now: datetime, involved: Obj, reason: str, message: str, *, count: int = 1) -> Obj:
    """A core/v1 Event as a controller's EventRecorder writes it (`kubectl get events -o yaml`:
    involvedObject, reason, message, source, counts and times, type Warning)."""
    meta = involved["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{meta['name']}.{abs(hash(message)) % 10**16:016x}",
            "namespace": NAMESPACE,
        },
        "involvedObject": {
            "apiVersion": involved["apiVersion"],
            "kind": involved["kind"],
            "name": meta["name"],
            "namespace": NAMESPACE,
            "uid": meta.get("uid", ""),
        },
        "reason": reason,
        "message": message,
        "source": {
            "component": "job-controller" if reason == "FailedCreate" else "attachdetach-controller"
        },
        "firstTimestamp": ts(now - timedelta(minutes=20)),
        "lastTimestamp": ts(now - timedelta(minutes=1)),
        "count": count,
        "type": "Warning",
        "reportingComponent": "",
        "reportingInstance": "",
    }


def _unschedulable_for_its_volume(now: datetime) -> list[Obj]:
    """train-002's pod, marked by the scheduler one minute ago: its data volume is in another
    zone than the machine with room (the message as kube-scheduler writes it: the volumebinding
    plugin's `node(s) had volume node affinity conflict`, the nodeaffinity plugin's `didn't
    match Pod's node affinity/selector`, then the preemption plugin's verdict)."""
    job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=1))
    pod = job_pod(job, now, suffix="q1", node_name=None, phase="Pending", age=timedelta(minutes=1))
    pod["status"]["conditions"][0]["message"] = (
        "0/3 nodes are available: 1 node(s) had volume node affinity conflict, 2 node(s) didn't "
        "match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption "
        "is not helpful for scheduling."
    )
    return [*healthy(now), job, pod]


def test_a_pod_the_scheduler_marked_a_minute_ago_is_a_measured_failure(doctor: Doctor) -> None:
    doctor.load(_unschedulable_for_its_volume)
    result = doctor.live("-o", "json")
    report = result.json()
    assert ("capacity.unschedulable", "fail", "measured") in _codes(report, "capacity")
    found = _finding(report, "capacity.unschedulable")
    assert found["headline"] == (
        "The cluster found no machine for 1 program of the training job 'train-002': of 3 "
        "machines, 1 can't reach its data volume and 2 are outside the job's placement rules."
    )
    assert found["remedy"].startswith("Run the job where its data volume can be reached")
    assert found["details"][0].startswith("scheduler on train-002-q1: 0/3 nodes are available")
    assert report["headline"]["code"] == "capacity.unschedulable"
    assert result.exit_code == 2


def test_no_room_by_the_scheduler_beats_room_by_arithmetic(doctor: Doctor) -> None:
    """The scheduler says no machine has the GPU although the sums say one does (a device
    plugin's count it just saw drop, a pod it counts that doctor does not): its word wins."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=1))
        pod = job_pod(
            job, now, suffix="q1", node_name=None, phase="Pending", age=timedelta(minutes=1)
        )
        return [*healthy(now), job, pod]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "capacity") == [("capacity.unschedulable", "fail", "measured")]
    assert _finding(report, "capacity.unschedulable")["headline"] == (
        "The cluster found no machine for 1 program of the training job 'train-002': of 2 "
        "machines, 2 lack nvidia.com/gpu."
    )
    assert result.exit_code == 2


def test_no_room_while_a_running_job_holds_it_stays_a_wait_with_the_scheduler_s_words(
    doctor: Doctor,
) -> None:
    doctor.load("held-by-running-job")
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "capacity") == [("capacity.held-by-running-job", "warn", "inferred")]
    details = _finding(report, "capacity.held-by-running-job")["details"]
    assert any(
        d.startswith("scheduler on train-003-y1: 0/2 nodes are available: 2 Insufficient")
        for d in details
    )
    assert result.exit_code == 0


def _held_but_the_scheduler_says(message: str) -> Callable[[datetime], list[Obj]]:
    """The held-by-running-job scene, the waiting pod's PodScheduled condition in the
    scheduler's words (pkg/scheduler/schedule_one.go FitError: `0/N nodes are available: …`)."""

    def build(now: datetime) -> list[Obj]:
        objects = SCENARIOS["held-by-running-job"](now)
        find(objects, "Pod", "train-003-y1")["status"]["conditions"][0]["message"] = message
        return objects

    return build


def test_no_wait_for_the_running_job_is_said_beside_a_scheduler_reason_other_than_room(
    doctor: Doctor,
) -> None:
    """The scheduler holds a GPU machine back by a taint: no wait for the running job answers
    that, not even as a line under the measured failure."""
    doctor.load(
        _held_but_the_scheduler_says(
            "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated "
            "taint {dedicated: infra}. preemption: 0/2 nodes are available: 2 Preemption is not "
            "helpful for scheduling."
        )
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "capacity") == [("capacity.unschedulable", "fail", "measured")]
    assert not any("Wait for the running" in f["remedy"] for f in report["findings"])
    assert result.exit_code == 2


def test_a_scheduler_reason_doctor_has_no_words_for_is_quoted(doctor: Doctor) -> None:
    """An out-of-tree filter plugin's reason (framework/interface.go: a plugin's Unschedulable
    status, written `node(s) didn't satisfy plugin(s) [NAME]` by the FitError), whole: before,
    "2 are held back for other reasons", and then without its "node(s)"."""
    doctor.load(
        _held_but_the_scheduler_says(
            "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [MyCustomPlugin]. "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        )
    )
    report = doctor.live("-o", "json").json()
    assert report["headline"]["text"] == (
        "The cluster found no machine for 1 program of the training job 'train-003': of 2 "
        "machines, 2 are held back: “node(s) didn't satisfy plugin(s) [MyCustomPlugin]”."
    )


def _refused_by_limit_range(now: datetime) -> list[Obj]:
    """A Job with no pods after 20 minutes: the Job controller's create was refused nine times
    by the namespace's LimitRange (plugin/pkg/admission/limitranger's words, prefixed by the
    Job controller's `Error creating: `)."""
    job = training_job("big", now, gpus=1, finished=False, age=timedelta(minutes=20))
    job["metadata"]["uid"] = "uid-big"
    job["status"] = {}
    message = (
        'Error creating: pods "big-7x2kq" is forbidden: maximum memory usage per Container is '
        "1Gi, but limit is 1536Mi."
    )
    return [*healthy(now), job, _event(now, job, "FailedCreate", message, count=9)]


def test_refused_creates_of_a_job_s_pods_are_measured_with_their_cause(doctor: Doctor) -> None:
    doctor.load(_refused_by_limit_range)
    result = doctor.live("-o", "json")
    report = result.json()
    assert ("admission.pods-refused", "fail", "measured") in _codes(report, "admission")
    found = _finding(report, "admission.pods-refused")
    assert found["headline"] == (
        "The cluster refuses to create the programs of the training job 'big': they are outside "
        "the sizes the environment allows one program."
    )
    assert found["details"] == [
        "FailedCreate on Job/big (9 times, last "
        + found["details"][0].split("last ")[1].split(")")[0]
        + '): pods "big-7x2kq" is forbidden: maximum memory usage per Container is 1Gi, but '
        "limit is 1536Mi."
    ]
    assert "describe limitranges" in found["remedy"]
    assert report["headline"]["code"] == "admission.pods-refused"
    assert result.exit_code == 2


def test_a_refusal_doctor_has_no_words_for_is_said_in_the_server_s_own(doctor: Doctor) -> None:
    """plugin/pkg/admission/runtimeclass/admission.go `prepareObjects` refuses a pod that
    names a RuntimeClass the cluster lacks: `pod rejected: RuntimeClass "nvidia" not found`,
    which the Job controller records after `Error creating: `. The headline quotes it, rather
    than "the cluster refused them" with the reason behind --verbose."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("big", now, gpus=1, finished=False, age=timedelta(minutes=20))
        job["metadata"]["uid"] = "uid-big"
        job["status"] = {}
        message = 'Error creating: pod rejected: RuntimeClass "nvidia" not found'
        return [*healthy(now), job, _event(now, job, "FailedCreate", message, count=4)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = result.json()["headline"]
    assert (result.exit_code, found["code"]) == (2, "admission.pods-refused")
    assert found["text"] == (
        "The cluster refuses to create the programs of the training job 'big': its controller "
        'reports “pod rejected: RuntimeClass "nvidia" not found”.'
    )
    assert found["remedy"].startswith("Read the cluster's full account with `kubectl")
    assert found["remedy"].endswith(
        " describe job big` and fix what it names; doctor has no plainer words for this one."
    )


def _refused_as(message: str) -> Any:
    """The unfinished Job 'big' with no pods after 20 minutes, and the Job controller's
    Warning Event (FailedCreate, nine times) with `message`."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("big", now, gpus=1, finished=False, age=timedelta(minutes=20))
        job["metadata"]["uid"] = "uid-big"
        job["status"] = {}
        return [*healthy(now), job, _event(now, job, "FailedCreate", message, count=9)]

    return build


_HOOK_NOT_CALLED = (
    'Error creating: Internal error occurred: failed calling webhook "mpod.kb.io": failed to '
    'call webhook: Post "https://webhook-service.system.svc:443/mutate--v1-pod?timeout=10s": '
    "dial tcp 10.96.12.34:443: connect: connection refused"
)
"""A fail-closed webhook the API server could not call: apiserver pkg/admission/plugin/webhook
mutating/dispatcher.go `callAttrMutatingHook` (`failed to call webhook: %w`), wrapped in
pkg/util/webhook `ErrCallingWebhook` (`failed calling webhook %q: %v`) and returned as
`apierrors.NewInternalError` when failing closed; the same shape as AKS's troubleshooting
page quotes (`… failed to call webhook: Post "https://…": … broken pipe`)."""


def test_a_hook_the_cluster_could_not_call_is_the_cluster_s_to_fix_never_the_job_s(
    doctor: Doctor,
) -> None:
    """docs/admission.md's `webhook-down` state, measured by the Job controller's Event where
    the hook's configuration and Service were not seen down: the hook was never reached, so it
    refused nothing about the job and changing the job cannot help. Before: "an approval hook
    turns them down" and "Change the job so that the hook lets it in"."""
    doctor.load(_refused_as(_HOOK_NOT_CALLED))
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "admission.pods-refused")
    assert (result.exit_code, found["status"], found["basis"]) == (2, "fail", "measured")
    assert found["headline"] == (
        "The cluster refuses to create the programs of the training job 'big': it can't call "
        "its approval hook 'mpod.kb.io', which must let every new program in."
    )
    assert found["remedy"].startswith(
        "Ask your cluster admin to bring the approval hook 'mpod.kb.io' back"
    )
    assert "change the job" not in found["remedy"].lower()
    assert found["details"][0].endswith("dial tcp 10.96.12.34:443: connect: connection refused")


def test_a_hook_that_denied_the_job_still_turns_it_down(doctor: Doctor) -> None:
    """apiserver webhook/errors/statuserror.go `ToStatusErr`: `admission webhook %q denied the
    request: %s` is the hook's own answer about the job (Kyverno's, as it words it)."""
    doctor.load(
        _refused_as(
            'Error creating: admission webhook "validate.kyverno.svc-fail" denied the request: '
            "resource Pod/train/big-7x2kq was blocked due to the following policies"
        )
    )
    found = _finding(doctor.live("-o", "json").json(), "admission.pods-refused")
    assert found["headline"].endswith(": an approval hook turns them down.")
    assert found["remedy"].startswith("Change the job so that the hook lets it in")


def test_a_quota_that_needs_sizes_the_job_does_not_state_is_the_quota_s_refusal(
    doctor: Doctor,
) -> None:
    """The quota plugin's other refusal (apiserver pkg/admission/plugin/resourcequota/
    controller.go `checkRequest`: `failed quota: %s: %v`, with pkg/quota/v1/evaluator/core/
    pods.go `Constraints`: `must specify %s`, each resource `for:` its containers), seen where
    the ResourceQuota itself is not read. Before: Cause.OTHER, only quoted, with "doctor has
    no plainer words for this one"."""
    doctor.load(
        _refused_as(
            'Error creating: pods "big-7x2kq" is forbidden: failed quota: compute-quota: must '
            "specify limits.cpu for: trainer; limits.memory for: trainer"
        )
    )
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "admission.pods-refused")
    assert (result.exit_code, found["status"], found["basis"]) == (2, "fail", "measured")
    assert found["headline"] == (
        "The cluster refuses to create the programs of the training job 'big': the usage limit "
        "'compute-quota' requires every program to state its limits.cpu and limits.memory, and "
        "'trainer' doesn't."
    )
    assert found["remedy"].startswith(
        "Set limits.cpu and limits.memory for 'trainer' in the training job's settings"
    )
    assert found["remedy"].endswith(" describe resourcequotas` shows the limits).")


def test_a_quota_s_older_words_that_name_no_program_ask_it_of_every_program(
    doctor: Doctor,
) -> None:
    """Before the pod evaluator named the containers (`must specify %s` of the resources
    joined by ",", `Failed quota` before 1.9), nothing says which program lacks the size."""
    doctor.load(
        _refused_as(
            'Error creating: pods "big-7x2kq" is forbidden: Failed quota: compute-quota: must '
            "specify cpu,memory"
        )
    )
    found = _finding(doctor.live("-o", "json").json(), "admission.pods-refused")
    assert found["headline"].endswith(
        ": the usage limit 'compute-quota' requires every program to state its cpu and memory, "
        "and one of them doesn't."
    )
    assert found["remedy"].startswith(
        "Set cpu and memory for every program in the training job's settings"
    )


def test_a_refusal_for_a_job_that_has_its_pods_now_is_over(doctor: Doctor) -> None:
    """The same Event, but the Job has made its pod since (it is starting on gpu-1): the
    refusal no longer stands, though the warnings are read (the job does not run yet)."""

    def build(now: datetime) -> list[Obj]:
        objects = _refused_by_limit_range(now)
        job = find(objects, "Job", "big")
        return [*objects, job_pod(job, now, suffix="ok1", node_name="gpu-1", phase="Pending")]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert [r for r in doctor.server.log if r.path.endswith("/events")], "precondition: read"
    assert "admission.pods-refused" not in {f["code"] for f in report["findings"]}


def _attached_to_another_machine(now: datetime) -> list[Obj]:
    """train-002's pod is on gpu-1 and cannot start: the attach-detach controller's
    Multi-Attach error (pkg/controller/volume/attachdetach/reconciler: `Multi-Attach error for
    volume … Volume is already exclusively attached to one node and can't be attached to
    another`)."""
    job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=3))
    pod = job_pod(
        job, now, suffix="m1", node_name="gpu-1", phase="Pending", age=timedelta(minutes=3)
    )
    message = (
        'Multi-Attach error for volume "pvc-6b1f3e0a-8d0c-4a57-9b43-2f4d0c0f5a11" Volume is '
        "already exclusively attached to one node and can't be attached to another"
    )
    return [*healthy(now), job, pod, _event(now, pod, "FailedAttachVolume", message)]


def test_a_volume_attached_to_another_machine_is_measured(doctor: Doctor) -> None:
    doctor.load(_attached_to_another_machine)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "storage") == [("storage.attached-elsewhere", "fail", "measured")]
    assert report["headline"]["code"] == "storage.attached-elsewhere"
    assert result.exit_code == 2


def test_with_the_pods_unread_a_volume_that_would_not_attach_is_unknown_never_ready(
    doctor: Doctor,
) -> None:
    """Whether the attach-detach controller's word still stands needs the pod it names: one
    that runs got past it, one of another uid is an earlier pod of the name, one that ended
    waits for nothing. Without the pods none of that is known: unknown, naming the read and
    the pod, never `storage.ok`."""
    doctor.load(_attached_to_another_machine)
    doctor.server.inject(Fault.FORBIDDEN, PODS)
    result = doctor.live("-o", "json")
    report = result.json()
    storage = [f for f in report["findings"] if f["check"] == "storage"]
    assert [(f["code"], f["status"], f["basis"], f["objects"]) for f in storage] == [
        ("storage.cant-read", "unknown", "cant-check", ["Pod/train-002-m1"])
    ]
    assert storage[0]["headline"] == (
        "Couldn't check the dataset volumes: no permission to read the running programs."
    )
    assert "needs list pods in namespace train" in " ".join(storage[0]["details"])
    assert result.exit_code == 3


@pytest.mark.parametrize(
    ("uid", "seen"),
    [
        pytest.param("uid-train-002-m1-old", timedelta(minutes=1), id="another-uid"),
        pytest.param("", timedelta(minutes=40), id="before-the-pod-was-made"),
    ],
)
def test_a_volume_that_would_not_attach_for_an_earlier_pod_of_the_name_is_history(
    doctor: Doctor, uid: str, seen: timedelta
) -> None:
    """train-002 was deleted and submitted again: its pod train-002-m1 was made 3 minutes ago
    and is starting on gpu-1. The attach-detach controller's Multi-Attach error is about the
    earlier pod of that name (pkg/controller/volume/attachdetach/reconciler/reconciler.go
    `reportMultiAttachError`, recorded on the pod object it was attaching for): another
    involvedObject.uid, or last seen before this pod existed. The stored Event outlives that
    pod (the API server keeps Events for an hour, `--event-ttl`); it is not this pod's wait."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=3))
        pod = job_pod(
            job, now, suffix="m1", node_name="gpu-1", phase="Pending", age=timedelta(minutes=3)
        )
        pod["metadata"]["uid"] = "uid-train-002-m1-new"
        earlier = {**pod, "metadata": {**pod["metadata"], "uid": uid}}
        message = (
            'Multi-Attach error for volume "pvc-6b1f3e0a-8d0c-4a57-9b43-2f4d0c0f5a11" Volume is '
            "already exclusively attached to one node and can't be attached to another"
        )
        event = _event(now, earlier, "FailedAttachVolume", message, count=9)
        event["firstTimestamp"] = ts(now - seen - timedelta(minutes=5))
        event["lastTimestamp"] = ts(now - seen)
        return [*healthy(now), job, pod, event]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "storage") == [("storage.ok", "ok", "measured")], (
        "an earlier pod's attach failure is not this pod's"
    )
    assert report["headline"]["code"] == "ready"
    assert result.exit_code == 0


def _manager_waits_for_its_volume(now: datetime) -> list[Obj]:
    """The jobs-manager Deployment's new pod was placed on cpu-1 8 minutes ago and waits in
    ContainerCreating (the kubelet's waiting state while volumes attach and mount): its
    ReadWriteOnce claim `datasets` is still attached to the machine of the copy it replaces.
    The attach-detach controller posts its Multi-Attach error on every pod scheduled to use
    the volume (pkg/controller/volume/attachdetach/reconciler/reconciler.go
    `reportMultiAttachError`: `rc.recorder.Eventf(pod, v1.EventTypeWarning,
    kevents.FailedAttachVolume, ...)`), whoever owns the pod."""
    objects = healthy(now)
    manager = find(objects, "Deployment", "jobs-manager")
    manager["status"].update({"readyReplicas": 0, "availableReplicas": 0, "unavailableReplicas": 1})
    pod = find(objects, "Pod", "jobs-manager-abc12")
    pod["metadata"]["uid"] = "uid-jobs-manager-abc12"
    pod["metadata"]["creationTimestamp"] = ts(now - timedelta(minutes=8))
    pod["status"] = {
        "phase": "Pending",
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
        ],
        "containerStatuses": [
            {
                "name": "api",
                "image": pod["spec"]["containers"][0]["image"],
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}},
            }
        ],
    }
    message = (
        'Multi-Attach error for volume "pvc-6b1f3e0a-8d0c-4a57-9b43-2f4d0c0f5a11" Volume is '
        "already exclusively attached to one node and can't be attached to another"
    )
    return [*objects, _event(now, pod, "FailedAttachVolume", message, count=5)]


def test_a_volume_attached_elsewhere_holds_a_workload_not_only_a_training_job(
    doctor: Doctor,
) -> None:
    """The attach-detach controller's word on a workload's pod is said by the storage check in
    plain words, measured, and heads the answer over the workloads check's inference that the
    pod is stuck on its machine."""
    doctor.load(_manager_waits_for_its_volume)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "storage") == [("storage.attached-elsewhere", "fail", "measured")], (
        "the controller's FailedAttachVolume on a workload's pod is said"
    )
    found = _finding(report, "storage.attached-elsewhere")
    assert found["headline"] == (
        "A volume of the workload 'jobs-manager' is in use on another machine, and can be "
        "attached to one machine at a time, so it can't start."
    )
    assert found["details"] == [
        "FailedAttachVolume on pod jobs-manager-abc12: Multi-Attach error for volume "
        '"pvc-6b1f3e0a-8d0c-4a57-9b43-2f4d0c0f5a11" Volume is already exclusively attached to '
        "one node and can't be attached to another"
    ]
    assert found["objects"] == ["Pod/jobs-manager-abc12", "Deployment/jobs-manager"]
    assert _codes(report, "workloads") == [("workloads.updating", "warn", "measured")], (
        "the controller said why the pod waits: no inference that it is stuck beside it"
    )
    assert _codes(report, "evidence") == [("evidence.ok", "ok", "measured")]
    assert report["headline"]["code"] == "storage.attached-elsewhere"
    assert report["headline"]["remedy"].startswith(
        "Stop what uses the volume on the other machine, or run it on that machine; `kubectl"
    )
    assert report["headline"]["remedy"].endswith(
        " describe pod jobs-manager-abc12` shows which volume."
    )
    assert result.exit_code == 2


def test_a_volume_that_would_not_attach_for_a_pod_of_no_workload_is_said_of_that_pod(
    doctor: Doctor,
) -> None:
    """A pod made by hand (`kubectl run`: no owner), on cpu-1 and waiting: the CSI attacher's
    error as the attach-detach controller records it (pkg/volume/util/operationexecutor/
    operation_generator.go GenerateAttachVolumeFunc: `AttachVolume.Attach failed for volume
    ...`, reason FailedAttachVolume on each scheduled pod)."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        pod = copy.deepcopy(find(objects, "Pod", "jobs-manager-abc12"))
        pod["metadata"] = {
            "name": "debug-shell",
            "namespace": NAMESPACE,
            "uid": "uid-debug-shell",
            "labels": {"run": "debug-shell"},
            "creationTimestamp": ts(now - timedelta(minutes=4)),
        }
        pod["status"] = {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True"}],
        }
        message = (
            'AttachVolume.Attach failed for volume "pvc-6b1f3e0a" : rpc error: code = Internal '
            "desc = could not attach volume: quota exceeded"
        )
        return [*objects, pod, _event(now, pod, "FailedAttachVolume", message)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "storage") == [("storage.attach-failed", "fail", "measured")]
    found = _finding(report, "storage.attach-failed")
    assert found["headline"] == (
        "A volume of the program 'debug-shell' can't be attached to its machine."
    )
    assert found["objects"] == ["Pod/debug-shell"]
    assert _codes(report, "evidence") == [("evidence.ok", "ok", "measured")]
    assert result.exit_code == 2


def test_the_last_job_killed_for_memory_says_the_next_will_be_too(doctor: Doctor) -> None:
    """The newest Job failed (BackoffLimitExceeded) and its restartPolicy Never pod was
    OOM-killed, exit code 137 (the kubelet's terminated state, `kubectl describe pod`:
    `Reason: OOMKilled  Exit Code: 137`)."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=40))
        job["status"] = {
            "failed": 1,
            "conditions": [
                {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded"},
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                },
            ],
        }
        pod = job_pod(job, now, suffix="o1", node_name="gpu-1", phase="Failed")
        pod["status"]["containerStatuses"] = [
            {
                "name": "trainer",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
            }
        ]
        return [*healthy(now), job, pod]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [("workloads.last-job-out-of-memory", "fail", "measured")]
    found = _finding(report, "workloads.last-job-out-of-memory")
    assert found["details"] == [
        "Job/train-002 failed (BackoffLimitExceeded)",
        "pod train-002-o1 container trainer: OOMKilled (exit code 137)",
    ]
    assert result.exit_code == 2


def test_a_job_failed_while_its_last_pod_still_stops_is_a_failure(doctor: Doctor) -> None:
    """The Job status the 1.31+ Job controller writes when the backoff limit is reached while a
    pod still runs: `FailureTarget` True (newFailureCondition under delayTerminalCondition(),
    pkg/controller/job/job_controller.go), the running pod deleted with the job-tracking
    finalizer kept (deleteActivePods) and counted in `terminating`; `Failed` comes only once
    it has stopped. The earlier attempt's pod exited 1."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=20))
        job["spec"]["backoffLimit"] = 1
        job["status"] = {
            "startTime": ts(now - timedelta(minutes=20)),
            "failed": 2,
            "active": 0,
            "terminating": 1,
            "ready": 0,
            "uncountedTerminatedPods": {},
            "conditions": [
                {
                    "type": "FailureTarget",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                    "lastProbeTime": ts(now - timedelta(seconds=40)),
                    "lastTransitionTime": ts(now - timedelta(seconds=40)),
                }
            ],
        }
        first = job_pod(job, now, suffix="a1", node_name="gpu-1", phase="Failed")
        first["status"]["containerStatuses"] = [
            {
                "name": "trainer",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 1, "reason": "Error"}},
            }
        ]
        last = job_pod(job, now, suffix="b2", node_name="gpu-1", phase="Running")
        last["metadata"]["deletionTimestamp"] = ts(now + timedelta(seconds=20))
        last["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
        return [*healthy(now), job, first, last]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [("workloads.last-job-failed", "fail", "measured")]
    found = _finding(report, "workloads.last-job-failed")
    assert found["details"] == [
        "Job/train-002 failed (BackoffLimitExceeded)",
        "pod train-002-a1 container trainer: exit code 1 (Error)",
    ]
    assert result.exit_code == 2


def _ranks_given_up(
    now: datetime, *, failed_indexes: str, ended: dict[int, Obj], success_policy: bool = False
) -> list[Obj]:
    """train-002, an Indexed Job of 2 ranks with `backoffLimitPerIndex: 0`, 15 minutes old,
    whose controller wrote `failedIndexes` (pkg/controller/job/indexed_job_utils.go
    calculateFailedIndexes) and no Failed or FailureTarget condition yet: it fails the Job
    only once the other index has ended (job_controller.go syncJob, `FailedIndexes`). The pod
    of each index in `ended` ended Failed with that terminated state 2 minutes ago; the other
    runs."""
    job = indexed_job("train-002", now, ranks=2, gpus=1, age=timedelta(minutes=15))
    job["metadata"]["uid"] = "uid-train-002"
    job["spec"]["backoffLimitPerIndex"] = 0
    # ranks run together want a memory-backed /dev/shm: given, so that nothing else is said
    template = job["spec"]["template"]["spec"]
    template["volumes"] = [{"name": "shm", "emptyDir": {"medium": "Memory"}}]
    template["containers"][0]["volumeMounts"] = [{"name": "shm", "mountPath": "/dev/shm"}]
    if success_policy:
        job["spec"]["successPolicy"] = {"rules": [{"succeededIndexes": "1"}]}
    job["status"] = {
        "active": 2 - len(ended),
        "failed": len(ended),
        "failedIndexes": failed_indexes,
        "ready": 2 - len(ended),
        "uncountedTerminatedPods": {},
        "startTime": ts(now - timedelta(minutes=14)),
    }
    objects = [*healthy(now), node("gpu-8", "64", "512Gi", gpus=8), job]
    for index in range(2):
        failed = index in ended
        pod = job_pod(
            job,
            now,
            suffix=f"{index}-ab{index}cd",
            node_name="gpu-1",
            phase="Failed" if failed else "Running",
            age=timedelta(minutes=14),
        )
        pod["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": str(index)}
        pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = str(index)
        since = ts(now - timedelta(minutes=13))
        statuses = running_containers(pod["metadata"]["name"], pod["spec"]["containers"], since)
        if failed:
            statuses[0].update(
                ready=False,
                started=False,
                state={
                    "terminated": {
                        **ended[index],
                        "startedAt": since,
                        "finishedAt": ts(now - timedelta(minutes=2)),
                    }
                },
            )
        pod["status"]["conditions"] = [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "False" if failed else "True"},
        ]
        pod["status"]["containerStatuses"] = statuses
        objects.append(pod)
    return objects


_OOM_KILLED = {"exitCode": 137, "reason": "OOMKilled"}
_EXIT_1 = {"exitCode": 1, "reason": "Error"}


@pytest.mark.parametrize(
    ("ended", "code", "said"),
    [
        (
            _OOM_KILLED,
            "workloads.last-job-out-of-memory",
            "pod train-002-0-ab0cd container trainer: OOMKilled (exit code 137)",
        ),
        (
            _EXIT_1,
            "workloads.last-job-failed",
            "pod train-002-0-ab0cd container trainer: exit code 1 (Error)",
        ),
    ],
    ids=["out-of-memory", "exit-1"],
)
def test_an_index_its_controller_gave_up_on_is_how_the_job_ends(
    doctor: Doctor, ended: Obj, code: str, said: str
) -> None:
    """Index 0 is in `failedIndexes`: the Job controller never makes a pod for it again
    (firstPendingIndexes counts failed indexes as not pending), and fails the Job once index 1
    ends. Nothing tries again: the job's ending is measured, as for a failed job."""
    doctor.load(lambda now: _ranks_given_up(now, failed_indexes="0", ended={0: ended}))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [(code, "fail", "measured")]
    assert _finding(report, code)["details"] == [
        "Job/train-002 index 0 failed for good (status.failedIndexes, backoffLimitPerIndex): its "
        "controller makes no new pod for it and fails the Job (FailedIndexes) once its other "
        "indexes have ended",
        said,
    ]
    assert result.exit_code == 2


def test_a_try_of_an_index_not_given_up_on_is_still_a_try(doctor: Doctor) -> None:
    """Index 1 is given up on (exit 1); index 0 was killed for memory, but it is not in
    `failedIndexes`, so its controller makes it another pod: that one is a try, the Job's
    ending is index 1's."""
    doctor.load(
        lambda now: _ranks_given_up(now, failed_indexes="1", ended={0: _OOM_KILLED, 1: _EXIT_1})
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert sorted(_codes(report, "workloads")) == [
        ("workloads.last-job-failed", "fail", "measured"),
        ("workloads.try-out-of-memory", "warn", "measured"),
    ]
    assert _finding(report, "workloads.last-job-failed")["details"][1:] == [
        "pod train-002-1-ab1cd container trainer: exit code 1 (Error)"
    ]
    assert _finding(report, "workloads.try-out-of-memory")["details"] == [
        "pod train-002-0-ab0cd container trainer: OOMKilled 2 minutes ago (exit code 137)"
    ]
    assert result.exit_code == 2


def test_an_index_given_up_on_under_a_success_policy_is_no_try_and_no_ending(
    doctor: Doctor,
) -> None:
    """With a success policy (`succeededIndexes: "1"`), index 1's success ends the Job
    `SuccessCriteriaMet` though index 0 failed (job_controller.go syncJob: matchSuccessPolicy,
    which `FailedIndexes` comes before only once each index has ended): how the Job ends is not
    measured yet. Index 0 is still no try."""
    doctor.load(
        lambda now: _ranks_given_up(
            now, failed_indexes="0", ended={0: _OOM_KILLED}, success_policy=True
        )
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert [c for c in _codes(report, "workloads") if c[1] != "ok"] == []
    assert result.exit_code == 0


def _suspended(now: datetime, **labels: str) -> list[Obj]:
    job = training_job("held", now, gpus=1, finished=False, age=timedelta(minutes=1))
    job["metadata"]["labels"] = labels
    job["spec"]["suspend"] = True
    job["status"] = {
        "conditions": [
            {
                "type": "Suspended",
                "status": "True",
                "reason": "JobSuspended",
                "message": "Job suspended",
            }
        ]
    }
    return [*healthy(now), job]


def test_a_paused_job_nothing_will_start_is_a_measured_failure(doctor: Doctor) -> None:
    doctor.load(_suspended)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [("workloads.job-paused", "fail", "measured")]
    found = _finding(report, "workloads.job-paused")
    assert found["remedy"].startswith("If nobody paused it on purpose, start it with `kubectl")
    assert "patch jobs.batch held --type=merge -p" in found["remedy"]
    assert result.exit_code == 2


def test_a_job_held_for_a_queue_that_is_not_installed_is_paused(doctor: Doctor) -> None:
    """The `kueue.x-k8s.io/queue-name` label hands a job to Kueue, which un-suspends it once
    admitted; where discovery serves no kueue.x-k8s.io, nothing will (the queue check's own
    cases are in test_queue.py)."""
    doctor.load(lambda now: _suspended(now, **{"kueue.x-k8s.io/queue-name": "team-a"}))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [("workloads.job-paused", "fail", "measured")]
    found = _finding(report, "workloads.job-paused")
    assert found["details"] == [
        "Job/held is suspended; its queue label names Kueue, which is not installed"
    ]
    assert _codes(report, "queue") == [("queue.not-used", "ok", "measured")]
    assert result.exit_code == 2


def _paused_schedule(now: datetime, with_job: bool) -> list[Obj]:
    """A batch/v1 CronJob its operator suspended (`spec.suspend: true`), and, `with_job`, a
    newer Job its last run made, which completed."""
    template = training_job("x", now, gpus=1)["spec"]
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": "nightly-train",
            "namespace": NAMESPACE,
            "uid": "uid-cron",
            "creationTimestamp": ts(now - timedelta(days=3)),
        },
        "spec": {
            "schedule": "0 2 * * *",
            "suspend": True,
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": template},
        },
        "status": {
            "lastScheduleTime": ts(now - timedelta(hours=20)),
            "lastSuccessfulTime": ts(now - timedelta(hours=19)),
        },
    }
    objects = [o for o in healthy(now) if o["kind"] != "Job"]
    if not with_job:
        return [*objects, cron]
    job = training_job("nightly-train-29000000", now, gpus=1, age=timedelta(hours=20))
    job["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": "nightly-train",
            "uid": "uid-cron",
            "controller": True,
        }
    ]
    return [*objects, cron, job]


@pytest.mark.parametrize("with_job", [False, True], ids=["alone", "newer-job-completed"])
def test_a_paused_schedule_is_said_but_is_no_failure(doctor: Doctor, with_job: bool) -> None:
    """`spec.suspend` of a CronJob stops the CronJob controller from creating Jobs; "it does
    not apply to already started executions" (k8s.io/api/batch/v1 types.go CronJobSpec.Suspend;
    pkg/controller/cronjob/cronjob_controllerv2.go syncCronJob returns before scheduling when
    suspended). No controller suspends a CronJob (Kueue suspends the Jobs it makes), so a
    person paused it: the environment still runs training, and the field to clear is
    `spec.suspend`."""
    doctor.load(lambda now: _paused_schedule(now, with_job))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [("workloads.schedule-paused", "warn", "measured")]
    found = _finding(report, "workloads.schedule-paused")
    assert found["headline"] == (
        "The training schedule 'nightly-train' is paused: it starts no new training job until "
        "it is resumed."
    )
    assert found["remedy"].startswith("If nobody paused it on purpose, resume it with `kubectl")
    assert found["remedy"].endswith(
        'patch cronjobs.batch nightly-train --type=merge -p \'{"spec":{"suspend":false}}\'`.'
    ), found["remedy"]
    assert found["details"] == ["CronJob/nightly-train is suspended (spec.suspend)"]
    assert result.exit_code == 0


def test_warnings_are_read_only_while_training_does_not_run(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.live("-o", "json")
    assert not [r for r in doctor.server.log if r.path.endswith("/events")]
    before = len(doctor.server.log)
    doctor.load("held-by-running-job")
    doctor.live("-o", "json")
    asked = [r for r in doctor.server.log[before:] if r.path.endswith("/events")]
    assert "type=Warning" in [r.query.get("fieldSelector") for r in asked]


def test_with_the_pods_unread_the_warnings_are_read_though_every_training_job_finished(
    doctor: Doctor,
) -> None:
    """Whether some pod waits is not known: the cluster's own word is read (one read more), and
    a namespace that holds none is measured as reporting nothing."""
    doctor.load("healthy")
    doctor.live("-o", "json")
    assert EVENTS not in {r.path for r in doctor.server.log}, "precondition: no read when all runs"
    doctor.server.inject(Fault.FORBIDDEN, PODS)
    before = len(doctor.server.log)
    result = doctor.live("-o", "json")
    asked = [r for r in doctor.server.log[before:] if r.path == EVENTS]
    assert [r.query.get("fieldSelector") for r in asked] == ["type=Warning"]
    assert _codes(result.json(), "evidence") == [("evidence.ok", "ok", "measured")]
    assert result.exit_code == 3


def _reports_about_a_pod_and_a_machine(now: datetime) -> list[Obj]:
    """Every training job finished; the kubelet's word on the manager's pod (whether it stands
    is the pod's to say) and on a machine (it stands whatever the pods)."""
    objects = healthy(now)
    return [
        *objects,
        event(
            now,
            find(objects, "Pod", "jobs-manager-abc12"),
            "FailedMount",
            'MountVolume.SetUp failed for volume "config" : configmap "manager-config" not found',
            "kubelet",
        ),
        # pkg/kubelet/images/image_gc_manager.go: the Warning of an image garbage collection
        # that freed too little (pkg/kubelet/events/event.go FreeDiskSpaceFailed).
        event(
            now,
            find(objects, "Node", "gpu-1"),
            "FreeDiskSpaceFailed",
            "Failed to garbage collect required amount of images. Attempted to free "
            "4294967296 bytes, but only found 0 bytes eligible to free.",
            "kubelet",
        ),
    ]


def test_with_the_pods_unread_a_report_about_a_pod_is_unknown_and_the_rest_stand(
    doctor: Doctor,
) -> None:
    """Whether a report about a pod still stands (the pod is gone, Ready since, replaced), and
    whether another check says it, needs the pod: unknown, never dropped as history and never
    a failure; the report about the machine is measured as ever."""
    doctor.load(_reports_about_a_pod_and_a_machine)
    doctor.server.inject(Fault.FORBIDDEN, PODS)
    result = doctor.live("-o", "json")
    report = result.json()
    evidence = [f for f in report["findings"] if f["check"] == "evidence"]
    assert [(f["code"], f["status"], f["objects"]) for f in evidence] == [
        ("evidence.cluster-reported", "fail", ["Node/gpu-1"]),
        ("evidence.cant-read", "unknown", ["Pod/jobs-manager-abc12"]),
    ]
    assert evidence[1]["headline"] == (
        "Couldn't check what the cluster itself reported about the environment: "
        "no permission to read the running programs."
    )
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("path", "why", "objects"),
    [
        pytest.param(
            r"^/apis/apps/v1/namespaces/train/deployments$",
            "no permission to read the workloads",
            [],
            id="deployments",
        ),
        pytest.param(
            r"^/api/v1/namespaces/train/persistentvolumeclaims/datasets$",
            "no permission to read the dataset volumes",
            ["PersistentVolumeClaim/datasets"],
            id="a-claim",
        ),
    ],
)
def test_a_read_whose_failing_conditions_are_judged_not_made_is_unknown_never_ok(
    doctor: Doctor, path: str, why: str, objects: list[str]
) -> None:
    """A Deployment's `Progressing`/`ReplicaFailure` and a claim's resize errors are evidence
    (knowledge/reports.py `POLARITIES`): with the objects not read, none of them was looked
    at, so nothing says the cluster reports nothing."""
    doctor.load("healthy")
    assert _codes(doctor.live("-o", "json").json(), "evidence") == [
        ("evidence.ok", "ok", "measured")
    ], "precondition: read, nothing is reported"
    doctor.server.inject(Fault.FORBIDDEN, path, method="GET")
    result = doctor.live("-o", "json")
    report = result.json()
    evidence = [f for f in report["findings"] if f["check"] == "evidence"]
    assert [(f["code"], f["status"], f["basis"], f["objects"]) for f in evidence] == [
        ("evidence.cant-read", "unknown", "cant-check", objects)
    ]
    assert evidence[0]["headline"] == (
        f"Couldn't check what the cluster itself reported about the environment: {why}."
    )
    assert result.exit_code == 3


def _a_machine_reported_and_a_pod_waits_on_it(now: datetime) -> list[Obj]:
    """train-002's pod waits on gpu-1 (a volume that would not attach), and the kubelet
    reported on gpu-1 an image garbage collection that freed too little
    (pkg/kubelet/images/image_gc_manager.go, FreeDiskSpaceFailed)."""
    objects = _attached_to_another_machine(now)
    machine = event(
        now,
        find(objects, "Node", "gpu-1"),
        "FreeDiskSpaceFailed",
        "Failed to garbage collect required amount of images. Attempted to free "
        "4294967296 bytes, but only found 0 bytes eligible to free.",
        "kubelet",
    )
    return [*objects, machine]


def test_with_the_machines_unread_a_report_stands_and_their_conditions_are_unknown(
    doctor: Doctor,
) -> None:
    """A pod waits on gpu-1: its machine's conditions (Ready, the pressures) are evidence, and
    with the machines not read they were not looked at: unknown beside the report about gpu-1,
    which stands whatever its conditions (a measured failure is never hidden)."""
    doctor.load(_a_machine_reported_and_a_pod_waits_on_it)
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/nodes$", method="GET")
    result = doctor.live("-o", "json")
    report = result.json()
    evidence = [f for f in report["findings"] if f["check"] == "evidence"]
    assert [(f["code"], f["status"], f["basis"], f["objects"]) for f in evidence] == [
        ("evidence.cluster-reported", "fail", "measured", ["Node/gpu-1"]),
        ("evidence.cant-read", "unknown", "cant-check", []),
    ]
    assert evidence[1]["headline"] == (
        "Couldn't check what the cluster itself reported about the environment: "
        "no permission to read the machines."
    )
    assert result.exit_code == 2


def _failed_job(now: datetime, reason: str, message: str) -> tuple[Obj, Obj]:
    job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=40))
    job["status"] = {
        "failed": 1,
        "conditions": [{"type": "Failed", "status": "True", "reason": reason, "message": message}],
    }
    return job, job_pod(job, now, suffix="f1", node_name="gpu-1", phase="Failed")


@pytest.mark.parametrize(
    ("ending", "code", "status", "detail"),
    [
        (
            {"reason": "Evicted", "message": "The node was low on resource: memory."},
            "workloads.last-job-evicted",
            "warn",
            "pod train-002-f1 evicted: The node was low on resource: memory.",
        ),
        (
            {
                "reason": "Evicted",
                "message": "The node was low on resource: ephemeral-storage. Threshold "
                "quantity: 10Gi, available: 4Gi. ",
            },
            "workloads.last-job-evicted",
            "warn",
            "pod train-002-f1 evicted: The node was low on resource: ephemeral-storage. "
            "Threshold quantity: 10Gi, available: 4Gi. ",
        ),
        (
            # The kubelet's eviction manager turned the pod away at admission (eviction_manager.go
            # `Admit`, kubelet.go `rejectPod`): its machine ran short, an eviction as any other.
            {
                "reason": "Evicted",
                "message": "Pod was rejected: The node had condition: [MemoryPressure]. ",
            },
            "workloads.last-job-evicted",
            "warn",
            "pod train-002-f1 evicted: Pod was rejected: The node had condition: "
            "[MemoryPressure]. ",
        ),
        (
            {"terminated": {"exitCode": 1, "reason": "Error"}},
            "workloads.last-job-failed",
            "fail",
            "pod train-002-f1 container trainer: exit code 1 (Error)",
        ),
        (
            {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}},
            "workloads.last-job-image",
            "fail",
            "pod train-002-f1 container trainer: ImagePullBackOff",
        ),
        (
            None,
            "workloads.last-job-deadline",
            "fail",
            "Job was active longer than specified deadline",
        ),
    ],
    ids=["evicted", "evicted-disk-pressure", "turned-away-short", "exit-1", "image", "deadline"],
)
def test_how_the_last_job_ended_decides_what_to_do(
    doctor: Doctor, ending: Obj | None, code: str, status: str, detail: str
) -> None:
    """The pod's own end: evicted (pkg/kubelet/eviction: phase Failed, reason Evicted), a
    program that exited 1, an image that never came; or, its pods gone, the Job's
    DeadlineExceeded condition (pkg/controller/job: `Job was active longer than specified
    deadline`)."""

    def build(now: datetime) -> list[Obj]:
        if ending is None:
            job, _ = _failed_job(
                now, "DeadlineExceeded", "Job was active longer than specified deadline"
            )
            return [*healthy(now), job]
        job, pod = _failed_job(
            now, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        )
        if "reason" in ending:
            pod["status"].update(ending)
        else:
            pod["status"]["containerStatuses"] = [
                {"name": "trainer", "ready": False, "restartCount": 0, "state": ending}
            ]
        return [*healthy(now), job, pod]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [(code, status, "measured")]
    assert _finding(report, code)["details"][1] == detail
    assert result.exit_code == (0 if status == "warn" else 2)


_YUNIKORN_REJECTED = ("ApplicationRejected", " failed to place application train-002")
_YUNIKORN_TIMEOUT = (
    "ResourceReservationTimeout",
    "Scheduling has timed out due to insufficient resources",
)
_KUBELET_OUT_OF_GPUS = (
    "OutOfnvidia.com/gpu",
    "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: "
    "8, capacity: 8",
)
_KUBELET_DEVICE_ERROR = (
    "UnexpectedAdmissionError",
    "Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate "
    "unhealthy devices nvidia.com/gpu, which is unexpected",
)


@pytest.mark.parametrize(
    ("machine", "refusal", "code", "headline"),
    [
        (
            None,
            _YUNIKORN_REJECTED,
            "workloads.last-job-not-placed",
            "The last training job 'train-002' was refused by `yunikorn`, which places it, "
            "before any of its programs ran: “ApplicationRejected: failed to place application "
            "train-002”.",
        ),
        (
            None,
            _YUNIKORN_TIMEOUT,
            "workloads.last-job-group-no-room",
            "The last training job 'train-002' failed before any of its programs ran: "
            "`yunikorn`, which places it, could not find room for all of them together in "
            "time: “ResourceReservationTimeout: Scheduling has timed out due to insufficient "
            "resources”.",
        ),
        (
            "gpu-1",
            _KUBELET_OUT_OF_GPUS,
            "workloads.last-job-machine-refused",
            "The last training job 'train-002' failed before any of its programs ran: the "
            "machine 'gpu-1' refused to run it: “OutOfnvidia.com/gpu: Pod was rejected: Node "
            "didn't have enough resource: nvidia.com/gpu, requested: 1, used: 8, capacity: 8”.",
        ),
        (
            "gpu-1",
            _KUBELET_DEVICE_ERROR,
            "workloads.last-job-machine-refused",
            "The last training job 'train-002' failed before any of its programs ran: the "
            "machine 'gpu-1' refused to run it: “UnexpectedAdmissionError: Pod was rejected: "
            "Allocate failed due to no healthy devices present; cannot allocate unhealthy "
            "devices nvidia.com/gpu, which is unexpected”.",
        ),
    ],
    ids=["yunikorn-rejected", "yunikorn-gang-timeout", "kubelet-out-of-gpus", "kubelet-device"],
)
def test_a_job_none_of_whose_programs_ran_is_said_in_the_refusers_words(
    doctor: Doctor, machine: str | None, refusal: tuple[str, str], code: str, headline: str
) -> None:
    """No program of the job ran, so none "ended with an error": its only pod was failed
    before any container started, with the words of what failed it. YuniKorn (no machine):
    when it fails the application it overwrites the whole status of each pod it had not
    placed with phase Failed, reason `ApplicationRejected` (message the part after the first
    colon of the core's `failed to place application …`) or `ResourceReservationTimeout` (the
    gang's placeholders timed out), no conditions, no container statuses (yunikorn-k8shim
    pkg/cache/application.go `handleFailApplicationEvent`, `failTaskPodWithReasonAndMsg`). The
    kubelet (on its machine): its admission turns the pod away with phase Failed, the admit
    handler's reason and `Pod was rejected: ` + its message, and starts no container
    (pkg/kubelet/kubelet.go `rejectPod`; pkg/kubelet/lifecycle/predicate.go `Admit`: `OutOf<
    resource>` with InsufficientResourceError's words, `UnexpectedAdmissionError` where the
    device manager's allocation failed). With backoffLimit 0 the Job controller then fails
    the Job BackoffLimitExceeded."""
    reason, message = refusal

    def build(now: datetime) -> list[Obj]:
        job, _ = _failed_job(
            now, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        )
        job["spec"]["backoffLimit"] = 0
        if machine is None:
            template = job["spec"]["template"]
            template["spec"]["schedulerName"] = "yunikorn"
            template["metadata"]["labels"].update({"applicationId": "train-002"})
        pod = job_pod(
            job, now, suffix="f1", node_name=machine, phase="Failed", scheduler_said=False
        )
        pod["status"] = {"phase": "Failed", "reason": reason, "message": message}
        if machine is not None:
            pod["status"]["qosClass"] = "Burstable"  # rejectPod keeps it
            return [*healthy(now), job, pod]
        return [*healthy(now), job, pod, gang.yunikorn_scheduler_pod(now)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [(code, "fail", "measured")]
    found = _finding(report, code)
    assert found["headline"] == headline
    assert "ended with an error" not in found["headline"]
    assert found["details"][0] == "Job/train-002 failed (BackoffLimitExceeded)"
    assert message.strip() in found["details"][1]
    assert "describe pod train-002-f1" in found["remedy"]
    assert result.exit_code == 2


def test_the_program_that_failed_is_named_not_its_sidecar(doctor: Doctor) -> None:
    """A failed Job's pod with a native sidecar (an init container of restartPolicy Always,
    KEP-753): the trainer exited 1, then the kubelet stopped the sidecar with SIGTERM, which
    it answered with exit 143; the sidecar's status comes first in the pod's status
    (initContainerStatuses)."""

    def build(now: datetime) -> list[Obj]:
        job, pod = _failed_job(
            now, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        )
        job["spec"]["backoffLimit"] = 0
        shipper = "registry.example.com/log-shipper:3.0"
        job["spec"]["template"]["spec"]["initContainers"] = [
            {"name": "log-shipper", "image": shipper, "restartPolicy": "Always"}
        ]
        pod["spec"]["initContainers"] = job["spec"]["template"]["spec"]["initContainers"]

        def ended(name: str, image: str, code: int) -> Obj:
            return {
                "name": name,
                "image": image,
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": code, "reason": "Error"}},
            }

        pod["status"]["initContainerStatuses"] = [ended("log-shipper", shipper, 143)]
        pod["status"]["containerStatuses"] = [
            ended("trainer", "registry.example.com/trainer:2.1", 1)
        ]
        return [*healthy(now), job, pod]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [("workloads.last-job-failed", "fail", "measured")]
    assert _finding(report, "workloads.last-job-failed")["details"] == [
        "Job/train-002 failed (BackoffLimitExceeded)",
        "pod train-002-f1 container trainer: exit code 1 (Error)",
    ]
    assert result.exit_code == 2


@pytest.mark.parametrize("level", ["pod", "job"])
def test_a_job_stopped_at_its_deadline_ran_out_of_time(doctor: Doctor, level: str) -> None:
    """pod: the kubelet fails a pod past its `spec.activeDeadlineSeconds` with reason
    DeadlineExceeded, `Pod was active on the node longer than the specified deadline`
    (pkg/kubelet/active_deadline.go), and kills its container (exit 137); with backoffLimit 0
    the Job then fails BackoffLimitExceeded. job: past the Job's own `activeDeadlineSeconds`
    its controller fails it DeadlineExceeded, `Job was active longer than specified deadline`
    (pkg/controller/job/job_controller.go), an earlier attempt's pod (exit 1) still listed."""

    def build(now: datetime) -> list[Obj]:
        reason, message = (
            ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
            if level == "pod"
            else ("DeadlineExceeded", "Job was active longer than specified deadline")
        )
        job, pod = _failed_job(now, reason, message)
        job["status"]["conditions"].insert(
            0, {"type": "FailureTarget", "status": "True", "reason": reason, "message": message}
        )
        exit_code = 137 if level == "pod" else 1
        if level == "pod":
            job["spec"]["backoffLimit"] = 0
            job["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 7200
            pod["status"]["reason"] = "DeadlineExceeded"
            pod["status"]["message"] = (
                "Pod was active on the node longer than the specified deadline"
            )
        else:
            job["spec"]["activeDeadlineSeconds"] = 7200
        pod["status"]["containerStatuses"] = [
            {
                "name": "trainer",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": exit_code, "reason": "Error"}},
            }
        ]
        return [*healthy(now), job, pod]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report, "workloads") == [("workloads.last-job-deadline", "fail", "measured")]
    found = _finding(report, "workloads.last-job-deadline")
    assert found["headline"] == (
        "The last training job 'train-002' ran out of time: it was stopped at its deadline."
    )
    assert found["details"][1] == (
        "pod train-002-f1 stopped at its deadline: Pod was active on the node longer than the "
        "specified deadline"
        if level == "pod"
        else "Job was active longer than specified deadline"
    )
    shown = "describe pod train-002-f1" if level == "pod" else "describe job train-002"
    assert found["remedy"].startswith(
        "Give it a longer deadline (`activeDeadlineSeconds`), or make the work shorter; `kubectl"
    ), found["remedy"]
    assert found["remedy"].endswith(f"{shown}` shows what stopped it."), found["remedy"]
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("message", "limit", "change"),
    [
        (
            "Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. ",
            "the 10 GiB of the machine's disk its programs may use in all",
            "Raise its programs' disk limits (`resources.limits.ephemeral-storage`, 10 GiB in "
            "all now)",
        ),
        (
            'Container trainer exceeded its local ephemeral storage limit "10Gi". ',
            "the 10 GiB of the machine's disk its program 'trainer' may use",
            "Raise the disk limit of its program 'trainer' "
            "(`resources.limits.ephemeral-storage`, 10 GiB now)",
        ),
        (
            'Usage of EmptyDir volume "scratch" exceeds the limit "20Gi". ',
            "the 20 GiB size limit of its scratch volume 'scratch'",
            "Raise the size limit of its volume 'scratch' (`emptyDir.sizeLimit`, 20 GiB now)",
        ),
    ],
    ids=["pod", "container", "emptydir"],
)
def test_a_job_evicted_over_its_own_disk_limit_fails_the_same_way_again(
    doctor: Doctor, message: str, limit: str, change: str
) -> None:
    """The kubelet evicts a pod over its own local-disk limits with the messages of
    pkg/kubelet/eviction/helpers.go (`podEphemeralStorageMessageFmt`,
    `containerEphemeralStorageMessageFmt`, `emptyDirMessageFmt`; eviction_manager.go
    localStorageEviction), phase Failed and reason `Evicted`: the same job writes as much
    again on its next start, as an out-of-memory kill recurs."""

    def build(now: datetime) -> list[Obj]:
        job, pod = _failed_job(
            now, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        )
        job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"][
            "ephemeral-storage"
        ] = "10Gi"
        pod["status"].update({"reason": "Evicted", "message": message})
        return [*healthy(now), job, pod]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    code = "workloads.last-job-over-disk-limit"
    assert _codes(report, "workloads") == [(code, "fail", "measured")]
    found = _finding(report, code)
    assert found["headline"] == (
        f"The last training job 'train-002' was stopped for going over {limit}; the next one "
        "with the same settings will be too."
    )
    assert found["remedy"].startswith(
        f"{change}, or make it write less to the machine's disk; `kubectl"
    ), found["remedy"]
    assert found["remedy"].endswith("describe pod train-002-f1` shows what the machine said.")
    assert found["details"][1] == f"pod train-002-f1 evicted: {message}"
    assert result.exit_code == 2


def test_a_volume_that_would_not_attach_for_another_reason_is_measured(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=3))
        pod = job_pod(
            job, now, suffix="m1", node_name="gpu-1", phase="Pending", age=timedelta(minutes=3)
        )
        message = (
            'AttachVolume.Attach failed for volume "pvc-6b1f3e0a" : rpc error: code = Internal '
            "desc = could not attach volume: quota exceeded"
        )
        return [*healthy(now), job, pod, _event(now, pod, "FailedAttachVolume", message)]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert _codes(report, "storage") == [("storage.attach-failed", "fail", "measured")]


def test_an_attach_failure_a_running_pod_got_past_hides_nothing_of_it(doctor: Doctor) -> None:
    """The volume attached in the end: the pod runs, but its program is not ready. The
    controller's earlier FailedAttachVolume about this very pod is history (the kubelet starts
    no container before its volumes are attached), so the workloads check still says what
    the pod shows now, and storage says nothing."""

    def build(now: datetime) -> list[Obj]:
        objects = _manager_waits_for_its_volume(now)
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["status"]["phase"] = "Running"
        pod["status"]["containerStatuses"][0]["state"] = {
            "running": {"startedAt": ts(now - timedelta(minutes=6))}
        }
        return objects

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert _codes(report, "storage") == [("storage.ok", "ok", "measured")]
    said = [code for code, status, _ in _codes(report, "workloads") if status != "ok"]
    assert "workloads.updating" in said, said
    assert len(said) > 1, f"the running pod that is not ready is said: {said}"


REFUSED_FOR_SECURITY = (
    'Error creating: pods "llama-workers-0-0-x7k2p" is forbidden: violates PodSecurity '
    '"baseline:latest": hostPath volumes (volume "nccl")'
)
REFUSED_FOR_QUOTA = (
    'Error creating: pods "llama-eval-workers-0-0-9qwzt" is forbidden: exceeded quota: '
    "gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=8, "
    "limited: requests.nvidia.com/gpu=8"
)
"""The Job controller's FailedCreate on its own Job (pkg/controller/controller_utils.go
RealPodControl.createPods: `Error creating: %v`), in pod-security-admission's and the
ResourceQuota admission plugin's words."""


def _jobset_made(jobset_name: str, now: datetime, *, uid: str = "") -> Obj:
    """A JobSet of a driver and one worker, made five minutes ago, with no pods yet."""
    made = jobset(jobset_name, now, workers=1, gpus=1, age=timedelta(minutes=5))
    made["metadata"]["uid"] = uid or f"uid-{jobset_name}"
    made["status"] = {}
    return made


def _child_job(parent: Obj, replicated: str, now: datetime, *, uid: str = "") -> Obj:
    """The Job `<jobset>-<replicated job>-0` as the JobSet controller makes it (jobset
    pkg/util/placement GenJobName; pkg/controllers/jobset_controller.go labelAndAnnotateObject
    and SetControllerReference)."""
    name = parent["metadata"]["name"]
    template = next(r for r in parent["spec"]["replicatedJobs"] if r["name"] == replicated)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{name}-{replicated}-0",
            "namespace": NAMESPACE,
            "uid": uid or f"uid-{name}-{replicated}-0",
            "creationTimestamp": ts(now - timedelta(minutes=5)),
            "labels": {
                "jobset.sigs.k8s.io/jobset-name": name,
                "jobset.sigs.k8s.io/replicatedjob-name": replicated,
            },
            "ownerReferences": [
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "kind": "JobSet",
                    "name": name,
                    "uid": parent["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": template["template"]["spec"],
        "status": {},
    }


def _refusal_on(child: Obj, now: datetime, message: str, age: timedelta) -> Obj:
    return event(now, child, "FailedCreate", message, "job-controller", count=6, age=age)


def _neighbouring_jobsets(*, children_read: bool) -> Callable[[datetime], list[Obj]]:
    """JobSets 'llama' and 'llama-eval'. Pod Security refused llama's worker (three minutes
    ago), the quota llama-eval's (twenty seconds ago); with `children_read`, their Jobs are
    in the namespace's list, else only the Events name them."""

    def build(now: datetime) -> list[Obj]:
        llama, evaluation = _jobset_made("llama", now), _jobset_made("llama-eval", now)
        children = [
            _child_job(p, r, now) for p in (llama, evaluation) for r in ("driver", "workers")
        ]
        refused = [
            _refusal_on(children[1], now, REFUSED_FOR_SECURITY, timedelta(minutes=3)),
            _refusal_on(children[3], now, REFUSED_FOR_QUOTA, timedelta(seconds=20)),
        ]
        return [*healthy(now), llama, evaluation, *(children if children_read else ()), *refused]

    return build


@pytest.mark.parametrize("children_read", [True, False], ids=["jobs-read", "jobs-not-read"])
def test_a_jobset_s_refusals_are_its_own_jobs_not_a_neighbour_s_it_prefixes(
    doctor: Doctor, children_read: bool
) -> None:
    """'llama' is a prefix of 'llama-eval', and `llama-eval-workers-0` starts with `llama-`:
    the Job is llama-eval's (its label and owner say so; unread, its name is
    `<jobset>-<replicated job>-<index>` only with llama-eval's replicated job `workers`), so
    each JobSet gets its own cause and remedy."""
    doctor.server.install("jobset.x-k8s.io")
    doctor.load(_neighbouring_jobsets(children_read=children_read))
    report = doctor.live("-o", "json").json()
    refused = {
        f["objects"][0]: f for f in report["findings"] if f["code"] == "admission.pods-refused"
    }
    assert sorted(refused) == ["JobSet/llama", "JobSet/llama-eval"], sorted(refused)
    llama, evaluation = refused["JobSet/llama"], refused["JobSet/llama-eval"]
    assert llama["headline"].endswith("they break the environment's security level."), llama
    assert [d.split(" (")[0] for d in llama["details"]] == ["FailedCreate on Job/llama-workers-0"]
    assert evaluation["headline"].endswith("they would go over a usage limit of the environment.")
    assert [d.split(" (")[0] for d in evaluation["details"]] == [
        "FailedCreate on Job/llama-eval-workers-0"
    ]


def _jobset_submitted_again(
    *, refused_uid: str, age: timedelta, left_over: bool = False
) -> Callable[[datetime], list[Obj]]:
    """JobSet 'llama', deleted and submitted again five minutes ago; the quota's refusal on
    a Job named llama-workers-0 with `refused_uid`, last seen `age` ago. The Job read is
    llama-workers-0 of uid `uid-llama-workers-0-new`, the new JobSet's; with `left_over`, it is
    the earlier JobSet's (uid `uid-llama-old`), of uid `refused_uid`, not yet collected by the
    garbage collector."""

    def build(now: datetime) -> list[Obj]:
        llama = _jobset_made("llama", now)
        earlier = _jobset_made("llama", now, uid="uid-llama-old")
        child = (
            _child_job(earlier, "workers", now, uid=refused_uid)
            if left_over
            else _child_job(llama, "workers", now, uid="uid-llama-workers-0-new")
        )
        named = copy.deepcopy(child)
        named["metadata"]["uid"] = refused_uid
        return [
            *healthy(now),
            llama,
            child,
            _refusal_on(named, now, REFUSED_FOR_QUOTA.replace("llama-eval", "llama"), age),
        ]

    return build


def _not_read(build: Callable[[datetime], list[Obj]]) -> Callable[[datetime], list[Obj]]:
    """`build`'s objects without the JobSet's Jobs: only the Events name them."""
    return lambda now: [
        o for o in build(now) if o["kind"] != "Job" or o["metadata"]["name"] == "train-001"
    ]


@pytest.mark.parametrize(
    ("refused", "read"),
    [
        pytest.param(
            _jobset_submitted_again(
                refused_uid="uid-llama-workers-0-old", age=timedelta(minutes=1)
            ),
            True,
            id="the-earlier-job-s-uid",
        ),
        pytest.param(
            _jobset_submitted_again(
                refused_uid="uid-llama-workers-0-old", age=timedelta(minutes=1), left_over=True
            ),
            True,
            id="a-job-of-the-earlier-jobset",
        ),
        pytest.param(
            _not_read(_jobset_submitted_again(refused_uid="", age=timedelta(minutes=9))),
            False,
            id="unread-and-seen-before-the-jobset-was-made",
        ),
    ],
)
def test_a_refusal_of_an_earlier_jobset_s_job_is_not_the_new_one_s(
    doctor: Doctor, refused: Callable[[datetime], list[Obj]], read: bool
) -> None:
    """The refusal is about the Job of the JobSet deleted before: it names that Job's uid, or
    was last seen before this JobSet was made; the Job controller has not refused this one."""
    doctor.server.install("jobset.x-k8s.io")
    standing = _jobset_submitted_again(
        refused_uid="uid-llama-workers-0-new", age=timedelta(minutes=1)
    )
    doctor.load(standing if read else _not_read(standing))
    codes = {f["code"] for f in doctor.live("-o", "json").json()["findings"]}
    assert "admission.pods-refused" in codes, "precondition: this Job's refusal is measured"

    doctor.load(refused)
    report = doctor.live("-o", "json").json()
    assert "admission.pods-refused" not in {f["code"] for f in report["findings"]}, [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]


MPI_LAUNCHER_REFUSED = (
    'Error creating: pods "mpi-launcher-x7k2p" is forbidden: violates PodSecurity '
    '"baseline:latest": hostPath volumes (volume "nccl")'
)


def _mpi_template(role: str) -> Obj:
    return {
        "metadata": {"labels": {}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [container(role, f"{REGISTRY}/trainer:2.1", cpu="1", memory="2Gi")],
        },
    }


def _mpi_job_made(now: datetime, *, uid: str = "uid-mpi") -> Obj:
    """MPIJob 'mpi' (kubeflow.org/v2beta1) of a launcher and two workers, made five minutes
    ago."""
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {
            "name": "mpi",
            "namespace": NAMESPACE,
            "uid": uid,
            "creationTimestamp": ts(now - timedelta(minutes=5)),
        },
        "spec": {
            "slotsPerWorker": 1,
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": _mpi_template("launcher")},
                "Worker": {"replicas": 2, "template": _mpi_template("worker")},
            },
        },
        "status": {},
    }


def _mpi_owner(mpi: Obj) -> list[Obj]:
    return [
        {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "name": mpi["metadata"]["name"],
            "uid": mpi["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def _mpi_worker(mpi: Obj, index: int, now: datetime) -> Obj:
    """A worker pod as mpi-operator makes it (pkg/controller/mpi_job_controller.go
    `newWorker`: `<mpijob>-worker-<index>`, `defaultLabels` and the replica index), running."""
    made = ts(now - timedelta(minutes=5))
    name = f"mpi-worker-{index}"
    spec = {**copy.deepcopy(_mpi_template("worker")["spec"]), "nodeName": "cpu-1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "creationTimestamp": made,
            "labels": {
                "training.kubeflow.org/operator-name": "mpi-operator",
                "training.kubeflow.org/job-name": "mpi",
                "training.kubeflow.org/job-role": "worker",
                "training.kubeflow.org/replica-index": str(index),
            },
            "ownerReferences": _mpi_owner(mpi),
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True", "lastTransitionTime": made},
            ],
            "containerStatuses": running_containers(name, spec["containers"], made),
        },
    }


def _mpi_launcher_job(mpi: Obj, now: datetime, *, uid: str = "uid-mpi-launcher") -> Obj:
    """The launcher as mpi-operator makes it: a batch Job `<mpijob>-launcher` labelled `app`,
    the MPIJob its controller (pkg/controller/mpi_job_controller.go `newLauncherJob`)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "mpi-launcher",
            "namespace": NAMESPACE,
            "uid": uid,
            "creationTimestamp": ts(now - timedelta(minutes=5)),
            "labels": {"app": "mpi"},
            "ownerReferences": _mpi_owner(mpi),
        },
        "spec": {"backoffLimit": 6, "template": _mpi_template("launcher")},
        "status": {},
    }


def _mpi_launcher_refused(
    *, launcher_read: bool, launcher_of: str = "uid-mpi", refused_ago: timedelta = timedelta(0)
) -> Callable[[datetime], list[Obj]]:
    """MPIJob 'mpi': both workers run, and the Job controller's FailedCreate on its launcher
    Job says Pod Security refused the launcher's pod (seen 30 s ago, plus `refused_ago`).
    With `launcher_read` the launcher Job is in the namespace's list, made by the MPIJob of
    uid `launcher_of` (another uid: an earlier MPIJob of the same name, not yet collected)."""

    def build(now: datetime) -> list[Obj]:
        mpi = _mpi_job_made(now)
        launcher = _mpi_launcher_job(_mpi_job_made(now, uid=launcher_of), now)
        refused = _refusal_on(
            launcher, now, MPI_LAUNCHER_REFUSED, timedelta(seconds=30) + refused_ago
        )
        workers = [_mpi_worker(mpi, i, now) for i in range(2)]
        return [*healthy(now), mpi, *workers, *([launcher] if launcher_read else []), refused]

    return build


@pytest.mark.parametrize("launcher_read", [True, False], ids=["launcher-read", "launcher-not-read"])
def test_an_mpi_job_s_refused_launcher_is_its_own(doctor: Doctor, launcher_read: bool) -> None:
    """mpi-operator runs an MPIJob's launcher as a batch Job `<mpijob>-launcher`, so the Job
    controller's refusal is on that Job, not on the MPIJob: the training job's programs are
    refused all the same (the launcher never starts), and the cause is Pod Security's."""
    doctor.server.install("kubeflow.org")
    doctor.load(_mpi_launcher_refused(launcher_read=launcher_read))
    result = doctor.live("-o", "json")
    report = result.json()
    refused = _finding(report, "admission.pods-refused")
    assert result.exit_code == 2, report["headline"]
    assert refused["objects"] == ["MPIJob/mpi"], refused
    assert refused["headline"].endswith("they break the environment's security level."), refused
    assert [d.split(" (")[0] for d in refused["details"]] == ["FailedCreate on Job/mpi-launcher"]


@pytest.mark.parametrize(
    "refused",
    [
        pytest.param(
            _mpi_launcher_refused(launcher_read=True, launcher_of="uid-mpi-old"),
            id="launcher-of-an-earlier-mpijob",
        ),
        pytest.param(
            _mpi_launcher_refused(launcher_read=False, refused_ago=timedelta(minutes=6)),
            id="unread-and-seen-before-the-mpijob-was-made",
        ),
    ],
)
def test_a_refusal_of_an_earlier_mpi_job_s_launcher_is_not_the_new_one_s(
    doctor: Doctor, refused: Callable[[datetime], list[Obj]]
) -> None:
    """The launcher Job read is an earlier MPIJob's of the same name (its controller's uid is
    not this MPIJob's), or, unread, the refusal was last seen before this MPIJob was made: the
    Job controller has not refused this one's launcher."""
    doctor.server.install("kubeflow.org")
    doctor.load(refused)
    report = doctor.live("-o", "json").json()
    assert "admission.pods-refused" not in {f["code"] for f in report["findings"]}, [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]


def _train_job_s_job_refused(*, job_made_ago: timedelta) -> Callable[[datetime], list[Obj]]:
    """TrainJob 'llama', made five minutes ago, and the Job `llama-node-0` its JobSet (named
    after it, Kubeflow Trainer pkg/runtime/framework/plugins/jobset) made `job_made_ago`, with
    the quota's refusal of that Job's pod a minute ago. A JobSet's Job does not name the
    TrainJob's uid: its controller is the JobSet."""

    def build(now: datetime) -> list[Obj]:
        llama = train_job("llama", now, nodes=1, gpus=1, age=timedelta(minutes=5))
        llama["metadata"]["uid"] = "uid-llama"
        parent = {
            "metadata": {"name": "llama", "uid": "uid-jobset-llama"},
            "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {}}}]},
        }
        child = _child_job(parent, "node", now)
        child["metadata"]["creationTimestamp"] = ts(now - job_made_ago)
        refused = _refusal_on(
            child,
            now,
            REFUSED_FOR_QUOTA.replace("llama-eval-workers", "llama-node"),
            timedelta(minutes=1),
        )
        return [*healthy(now), cluster_training_runtime(), llama, child, refused]

    return build


def test_a_job_made_before_its_trainjob_is_an_earlier_one_s(doctor: Doctor) -> None:
    """A TrainJob's Jobs are its JobSet's, whose uid the TrainJob does not hold; a Job made
    before the TrainJob was is one of an earlier TrainJob of the same name, its JobSet not yet
    collected with it: its refusal is not this one's."""
    doctor.server.install("trainer.kubeflow.org")
    doctor.load(_train_job_s_job_refused(job_made_ago=timedelta(minutes=4)))
    report = doctor.live("-o", "json").json()
    refused = _finding(report, "admission.pods-refused")
    assert refused["objects"] == ["TrainJob/llama"], "precondition: its own Job's refusal counts"

    doctor.load(_train_job_s_job_refused(job_made_ago=timedelta(minutes=20)))
    report = doctor.live("-o", "json").json()
    assert "admission.pods-refused" not in {f["code"] for f in report["findings"]}, [
        (f["code"], f["headline"]) for f in report["findings"] if f["status"] != "ok"
    ]
