"""`doctor --trial` where the trial's pods never reach a machine: the scheduler finds no room, or
Kueue holds them for its queue. That is the measurement of the gate that held them (unknown,
with its words), never a failure of the probe, and never a silent pass.

Against the fake API server, its trial kubelet (tests/support/fake_kubelet.py) and Kueue's pod
integration as the fake admits pods (tests/support/fake_admission.py `KueuePods`, from kueue
pkg/controller/jobs/pod/pod_webhook.go)."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.fake_admission import KUEUE_GATE, KueuePods
from tests.support.fake_kubelet import FakeKubelet
from tests.support.kueue_objects import (
    admitted,
    cluster_queue,
    local_queue,
    queued_job,
    resource_flavor,
    workload,
)
from tests.support.scenarios import NAMESPACE, healthy, training_job
from tests.support.trial_results import trial_findings

Obj = dict[str, Any]

# kube-scheduler's words for a pod no machine fits (pkg/scheduler/schedule_one.go, the
# FitError's message with the preemption tail), as pasted in kubernetes/kubernetes#124926.
NO_ROOM = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/"
    "control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 "
    "Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
)


def _cpu_job(now: datetime) -> list[Obj]:
    objects = [o for o in healthy(now) if o["kind"] != "Job"]
    return [*objects, training_job("train-llm", now, gpus=0)]


def _queued_job(now: datetime) -> list[Obj]:
    """The training job handed to Kueue's LocalQueue `team-a` and admitted there."""
    job = queued_job(training_job("train-llm", now, gpus=0), "team-a", "uid-train-llm")
    job["spec"]["suspend"] = False
    job.pop("status", None)
    return [
        *(o for o in healthy(now) if o["kind"] != "Job"),
        job,
        local_queue("team-a", "team-a-cq"),
        cluster_queue(
            "team-a-cq", [(["cpu", "memory"], [("cpu", {"cpu": "64", "memory": "256Gi"})])]
        ),
        resource_flavor("cpu"),
        workload(job, "team-a", conditions=admitted("team-a-cq")),
    ]


def _trial_pods(doctor: Doctor) -> list[str]:
    return [
        p["metadata"]["name"]
        for p in doctor.server.list_objects("Pod", NAMESPACE)
        if "truegreen.io/trial" in (p["metadata"].get("labels") or {})
    ]


def test_a_trial_no_machine_takes_is_unknown_in_the_scheduler_s_words(doctor: Doctor) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, unschedulable=NO_ROOM)
    result = doctor.live("--trial", "--trial-timeout", "2", "-o", "json", "--verbose")
    trial = trial_findings(result.json())
    assert [(f["code"], f["status"]) for f in trial] == [("trial.not-placed", "unknown")], (
        "a trial that never ran says so, in the scheduler's words"
    )
    [found] = trial
    assert found["headline"] == (
        "Couldn't run the trial: it was not placed on a machine in the trial's time."
    )
    assert any(NO_ROOM in line for line in found["details"]), found["details"]
    assert result.exit_code == 3, "the trial measured nothing: never a pass"
    assert _trial_pods(doctor) == []


def test_a_trial_no_scheduler_takes_is_unknown_not_a_pass(doctor: Doctor) -> None:
    """No scheduler ever binds the pod (the job names a scheduler that is down, or one slower
    than the trial): it stays as the API server stored it, Pending with no `PodScheduled`
    condition and no `spec.nodeName` (pkg/registry/core/pod/strategy.go PrepareForCreate sets
    only the phase). The program never ran: the trial measured nothing."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stop="scheduling")
    result = doctor.live("--trial", "--trial-timeout", "2", "-o", "json", "--verbose")
    [found] = trial_findings(result.json())
    assert (found["code"], found["status"]) == ("trial.not-placed", "unknown"), found
    [pod] = doctor.server.kubelet.pods
    assert found["details"] == [f"{pod}: the trial pod was not placed on a machine in time"]
    assert result.exit_code == 3, "the trial measured nothing: never a pass"
    assert _trial_pods(doctor) == []


def test_a_distributed_trial_whose_rank_0_is_never_placed_starts_no_other_worker(
    doctor: Doctor,
) -> None:
    def build(now: datetime) -> list[Obj]:
        job = training_job("train-llm", now, gpus=0)
        job["spec"].update({"parallelism": 2, "completions": 2, "completionMode": "Indexed"})
        return [*(o for o in healthy(now) if o["kind"] != "Job"), job]

    doctor.load(build)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, unschedulable=NO_ROOM)
    result = doctor.live("--trial", "--trial-timeout", "2", "-o", "json")
    assert [f["code"] for f in trial_findings(result.json())] == ["trial.not-placed"]
    creates = [
        r
        for r in doctor.server.log
        if r.method == "POST" and r.path.endswith("/pods") and r.query.get("dryRun") != "All"
    ]
    assert len(creates) == 1, "only rank 0: a worker would have nobody to reach"


def test_the_trial_pods_wait_in_the_job_s_queue_and_run_once_admitted(doctor: Doctor) -> None:
    doctor.server.install("kueue.x-k8s.io")
    doctor.load(_queued_job)
    doctor.server.admission.allow_creates = True
    # Kueue here manages every pod, with a queue name or without: a trial pod with no queue
    # would be held for good (no LocalQueue admits it).
    doctor.server.admission.kueue_pods = KueuePods(manage_without_queue_name=True)
    doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
    assert [(f["code"], f["status"]) for f in trial_findings(result.json())] == [("trial.ok", "ok")]
    assert doctor.server.kubelet.threads, "the pod was let through to a machine"
    assert _trial_pods(doctor) == []


def test_a_queue_that_does_not_admit_the_trial_in_time_is_unknown(doctor: Doctor) -> None:
    doctor.server.install("kueue.x-k8s.io")
    doctor.load(_queued_job)
    doctor.server.admission.allow_creates = True
    doctor.server.admission.kueue_pods = KueuePods(admits=False)
    doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "--trial-timeout", "2", "-o", "json", "--verbose")
    [found] = trial_findings(result.json())
    assert (found["code"], found["status"]) == ("trial.waited-for-queue", "unknown"), found
    assert any(KUEUE_GATE in line for line in found["details"]), found["details"]
    assert doctor.server.kubelet.threads == [], "precondition: no machine ever saw the pod"
    assert result.exit_code == 3
    assert _trial_pods(doctor) == []


def _priority_class(name: str, value: int, policy: str, *, default: bool = False) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "preemptionPolicy": policy,
        "globalDefault": default,
    }


def _job_of_class(policy: str | None, *, default_policy: str | None = None) -> Any:
    """The CPU job naming the class `training-critical` (value 1000000) of `policy`, or no
    class (None); and, where `default_policy` is given, a `globalDefault` class of it."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-llm", now, gpus=0)
        classes = []
        if policy is not None:
            job["spec"]["template"]["spec"]["priorityClassName"] = "training-critical"
            classes.append(_priority_class("training-critical", 1_000_000, policy))
        if default_policy is not None:
            classes.append(_priority_class("everyone", 1000, default_policy, default=True))
        return [*(o for o in healthy(now) if o["kind"] != "Job"), job, *classes]

    return build


def test_a_trial_never_pushes_others_off_a_machine_though_the_job_s_class_would(
    doctor: Doctor,
) -> None:
    """kube-scheduler deletes lower-priority running pods to place a pod that may preempt
    (defaultpreemption/default_preemption.go PostFilter, preemption.go prepareCandidate), and
    the Priority plugin refuses a pod whose `preemptionPolicy` differs from its class's
    (plugin/pkg/admission/priority/admission.go admitPod): the trial pod drops the job's
    preempting class and never preempts, and says so where it found no room."""
    doctor.load(_job_of_class("PreemptLowerPriority"))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, unschedulable=NO_ROOM)
    result = doctor.live("--trial", "--trial-timeout", "2", "-o", "json", "--verbose")
    [created] = doctor.server.kubelet.pods.values()
    spec = created["spec"]
    assert spec["preemptionPolicy"] == "Never", "a probe never costs anyone their run"
    assert (spec.get("priorityClassName"), spec["priority"]) == (None, 0), spec
    annotations = created["metadata"]["annotations"]
    assert annotations["truegreen.io/trial-priority-class-dropped"] == "training-critical"
    trial = trial_findings(result.json())
    assert [(f["code"], f["status"]) for f in trial] == [("trial.not-placed", "unknown")]
    assert result.exit_code == 3
    [detail] = trial[0]["details"]
    assert "waited without the job's priority class 'training-critical'" in detail, detail


def test_a_job_whose_class_never_preempts_is_tried_at_its_own_priority(doctor: Doctor) -> None:
    doctor.load(_job_of_class("Never"))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "-o", "json")
    assert [(f["code"], f["status"]) for f in trial_findings(result.json())] == [("trial.ok", "ok")]
    [created] = doctor.server.kubelet.pods.values()
    spec = created["spec"]
    assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == (
        "training-critical",
        1_000_000,
        "Never",
    )
    assert "truegreen.io/trial-priority-class-dropped" not in created["metadata"]["annotations"]


def test_a_default_class_that_preempts_keeps_the_trial_from_starting(doctor: Doctor) -> None:
    """With no class named, the Priority plugin gives the pod the `globalDefault` class and
    its policy, and refuses the trial pod's `Never` under a preempting one: no trial runs,
    unknown in the server's words, never a pod that may preempt."""
    doctor.load(_job_of_class(None, default_policy="PreemptLowerPriority"))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "-o", "json", "--verbose")
    trial = trial_findings(result.json())
    assert [(f["code"], f["status"]) for f in trial] == [("trial.would-preempt", "unknown")]
    assert result.exit_code == 3
    assert "PreemptionPolicy (Never) must not be provided" in trial[0]["details"][0]
    assert doctor.server.kubelet.pods == {}
    assert _trial_pods(doctor) == []


class _PolicyChanged(FakeKubelet):
    """A trial pod stored as one that may preempt (a webhook changed its policy), which
    kube-scheduler nominated for a machine while it deletes the victims there
    (preemption.go `prepareCandidate`, schedule_one.go handleSchedulingFailure)."""

    def _unschedulable(
        self, pod: Mapping[str, Any], words: str, component: str = "default-scheduler"
    ) -> None:
        super()._unschedulable(pod, words, component)
        meta = pod["metadata"]
        stored = self.server.get_object("Pod", meta["name"], meta["namespace"])
        if stored is not None:
            stored["spec"]["preemptionPolicy"] = "PreemptLowerPriority"
            stored["status"]["nominatedNodeName"] = "gpu-1"
            self.server.update_object(stored)


def test_a_trial_pod_the_scheduler_made_room_for_says_so(doctor: Doctor) -> None:
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = _PolicyChanged(doctor.server, unschedulable=NO_ROOM)
    result = doctor.live("--trial", "--trial-timeout", "2", "-o", "json", "--verbose")
    [found] = trial_findings(result.json())
    assert (found["code"], found["status"]) == ("trial.not-placed", "unknown")
    [detail] = found["details"]
    assert "stopping lower-priority programs on gpu-1 to make room for it" in detail, detail
