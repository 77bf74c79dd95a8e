"""`doctor --trial` for a job whose pods a gang scheduler or a queue places together: the trial
pods belong to none of the job's gangs, so they are placed as single pods by the job's own
scheduler, neither held for siblings that never come nor counted as the job's.

Against the fake API server and its trial kubelet (tests/support/fake_kubelet.py), whose
`coscheduling` stands in for scheduler-plugins' coscheduling (pkg/coscheduling/core/core.go
`PreFilter`)."""

from datetime import datetime
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_kubelet import FakeKubelet
from tests.support.gang_objects import COSCHEDULING_GROUP, coscheduling_pod_group
from tests.support.scenarios import healthy, training_job

Obj = dict[str, Any]
SCHEDULER = "scheduler-plugins-scheduler"


def _trial_codes(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["status"]) for f in report["findings"] if f["check"] == "trial"]


def _gang_job(
    scheduler: str, labels: dict[str, str], annotations: dict[str, str], spec: dict[str, Any]
) -> Any:
    """The healthy namespace with its training job, 4 pods run together (an Indexed Job), whose
    template puts each pod in a gang as the job's scheduler or queue reads it."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-llm", now, gpus=0)
        job["spec"].update({"parallelism": 4, "completions": 4, "completionMode": "Indexed"})
        template = job["spec"]["template"]
        template["metadata"].setdefault("labels", {}).update({"app": "train-llm", **labels})
        template["metadata"]["annotations"] = {**annotations, "example.com/team": "llm"}
        template["spec"].update({"schedulerName": scheduler, **spec})
        objects = [*(o for o in healthy(now) if o["kind"] != "Job"), job]
        if scheduler == SCHEDULER:
            objects.append(coscheduling_pod_group("train-llm", now, phase="Pending"))
        return objects

    return build


GANGS = {
    # volcano-sh/apis pkg/apis/scheduling/v1beta1/labels.go KubeGroupNameAnnotationKey, as the
    # training operator sets it (kubeflow/training-operator gangSchedulingPodGroupAnnotation).
    "volcano": ("volcano", {}, {"scheduling.k8s.io/group-name": "train-llm"}, {}),
    # scheduler-plugins apis/scheduling/v1alpha1/types.go PodGroupLabel.
    "coscheduling": (SCHEDULER, {"scheduling.x-k8s.io/pod-group": "train-llm"}, {}, {}),
    # NVIDIA/KAI-Scheduler pkg/common/constants PodGroupAnnotationForPod.
    "kai": ("kai-scheduler", {}, {"pod-group-name": "pg-train-llm-uid"}, {}),
    # apache/yunikorn-k8shim pkg/common/constants/constants.go: the application and its task
    # groups (the YuniKorn docs' gang scheduling example).
    "yunikorn": (
        "yunikorn",
        {"applicationId": "train-llm", "yunikorn.apache.org/app-id": "train-llm"},
        {
            "yunikorn.apache.org/app-id": "train-llm",
            "yunikorn.apache.org/task-group-name": "workers",
            "yunikorn.apache.org/task-groups": (
                '[{"name": "workers", "minMember": 4, "minResource": {"cpu": "1"}}]'
            ),
        },
        {},
    ),
    # kueue pkg/controller/jobs/pod/constants: the pod group its StatefulSet and
    # LeaderWorkerSet integrations write into the pod template.
    "kueue": (
        "default-scheduler",
        {"kueue.x-k8s.io/pod-group-name": "statefulset-train-llm-5f1c2"},
        {"kueue.x-k8s.io/pod-group-total-count": "4"},
        {},
    ),
    # Kubernetes' own gang: core/v1 PodSpec.workloadRef (KEP-4671).
    "workload": (
        "default-scheduler",
        {},
        {},
        {"workloadRef": {"name": "train-llm", "podGroup": "workers"}},
    ),
}


@pytest.mark.parametrize("gang", GANGS.values(), ids=GANGS.keys())
def test_a_trial_pod_is_in_none_of_the_job_s_gangs(
    doctor: Doctor, gang: tuple[str, dict[str, str], dict[str, str], dict[str, Any]]
) -> None:
    """A gang scheduler holds a group's pods until all of them can be placed and counts each
    that carries the group's key: a trial pod that kept the job's key would wait for siblings
    that never come, or be counted as one of the job's own. The trial pod keeps the job's
    scheduler and its other labels and annotations, and none of the keys that put it in a
    gang."""
    scheduler, labels, annotations, spec = gang
    doctor.server.install(COSCHEDULING_GROUP)
    doctor.load(_gang_job(scheduler, labels, annotations, spec))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    doctor.live("--trial", "--trial-timeout", "20", "-o", "json")
    assert doctor.server.kubelet.pods, "precondition: the trial made its pods"
    for pod in doctor.server.kubelet.pods.values():
        meta = pod["metadata"]
        assert not set(labels) & set(meta["labels"]), meta["labels"]
        assert meta["annotations"] == {"example.com/team": "llm"}
        assert not set(spec) & set(pod["spec"]), pod["spec"]
        assert pod["spec"]["schedulerName"] == scheduler
        assert meta["labels"]["app"] == "train-llm", "the job's other labels stay"


def test_coscheduling_places_a_trial_pod_of_a_gang_job_as_a_single_pod(doctor: Doctor) -> None:
    """The job's PodGroup wants 4 pods and the job is not running: coscheduling's PreFilter
    refuses every pod labelled with it while fewer than 4 carry the label, so a trial pod in
    the job's group is never placed. Out of it, the trial pods run and measure."""
    scheduler, labels, annotations, spec = GANGS["coscheduling"]
    doctor.server.install(COSCHEDULING_GROUP)
    doctor.load(_gang_job(scheduler, labels, annotations, spec))
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, coscheduling=SCHEDULER)
    result = doctor.live("--trial", "--trial-timeout", "20", "-o", "json", "--verbose")
    trial = [f for f in result.json()["findings"] if f["check"] == "trial"]
    assert _trial_codes(result.json()) == [("trial.ok", "ok")], trial
    assert len(doctor.server.kubelet.started) == 2, "both workers ran the probe"
