"""How a failed job's pods ended (knowledge/evidence.py job_failure): an eviction for going over
the job's own local-disk limit is told apart from one where its machine ran short.

The kubelet's eviction manager (pkg/kubelet/eviction/eviction_manager.go localStorageEviction)
evicts a pod over its own limits with the messages of pkg/kubelet/eviction/helpers.go:
`emptyDirMessageFmt` "Usage of EmptyDir volume %q exceeds the limit %q. ",
`podEphemeralStorageMessageFmt` "Pod ephemeral local storage usage exceeds the total limit of
containers %s. " and `containerEphemeralStorageMessageFmt` "Container %s exceeded its local
ephemeral storage limit %q. "; a machine that ran short, `nodeLowMessageFmt` "The node was low
on resource: %v. " with `thresholdMetMessageFmt` and `containerMessageFmt` after it. Each sets
the pod's phase Failed and reason `Evicted` (helpers.go `Reason`)."""

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.scenarios import job_pod, training_job
from tests.support.training_kinds import indexed_job, ray_job
from truegreen.doctor.knowledge.evidence import (
    DiskLimit,
    DiskLimitOf,
    Ending,
    JobFailure,
    job_failure,
)
from truegreen.doctor.knowledge.training import from_job, from_ray_job

NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)


def _failed_with(*pod_statuses: Mapping[str, object]) -> JobFailure | None:
    job = training_job("train-002", NOW, finished=False)
    job["status"] = {
        "failed": len(pod_statuses),
        "conditions": [
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ],
    }
    pods = []
    for number, status in enumerate(pod_statuses):
        pod = job_pod(job, NOW, suffix=f"f{number}", node_name="gpu-1", phase="Failed")
        pod["status"].update(status)
        pods.append(pod)
    return job_failure(from_job(job), pods)


def _evicted(message: str) -> dict[str, object]:
    return {"phase": "Failed", "reason": "Evicted", "message": message}


@pytest.mark.parametrize(
    ("message", "limit"),
    [
        (
            "Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. ",
            DiskLimit(DiskLimitOf.PROGRAMS, "", "10Gi"),
        ),
        (
            'Container trainer exceeded its local ephemeral storage limit "10Gi". ',
            DiskLimit(DiskLimitOf.PROGRAM, "trainer", "10Gi"),
        ),
        (
            'Usage of EmptyDir volume "scratch" exceeds the limit "20Gi". ',
            DiskLimit(DiskLimitOf.VOLUME, "scratch", "20Gi"),
        ),
    ],
    ids=["pod", "container", "emptydir"],
)
def test_an_eviction_over_the_job_s_own_disk_limit_is_its_own_ending(
    message: str, limit: DiskLimit
) -> None:
    assert _failed_with(_evicted(message)) == JobFailure(
        Ending.OVER_DISK_LIMIT,
        "BackoffLimitExceeded",
        f"pod train-002-f0 evicted: {message}",
        limit,
    )


@pytest.mark.parametrize(
    "message",
    [
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: "
        "4Gi. Container trainer was using 30Gi, request is 0, has larger consumption of "
        "ephemeral-storage. ",
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. "
        "Container trainer was using 60Gi, request is 16Gi, has larger consumption of memory. ",
        "The node had condition: [DiskPressure]. ",
    ],
    ids=["disk-pressure", "memory-pressure", "condition"],
)
def test_an_eviction_where_the_machine_ran_short_stays_an_eviction(message: str) -> None:
    failure = _failed_with(_evicted(message))
    assert failure is not None
    assert (failure.ending, failure.disk_limit) == (Ending.EVICTED, None)


def test_running_out_of_memory_comes_first_then_the_disk_limit_then_an_image() -> None:
    over = _evicted('Container trainer exceeded its local ephemeral storage limit "10Gi". ')
    short = _evicted("The node was low on resource: memory. ")
    oom = {
        "containerStatuses": [
            {"name": "trainer", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}
        ]
    }
    image = {
        "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": "ErrImagePull"}}}]
    }
    endings = [_failed_with(short, over, oom), _failed_with(short, image, over)]
    assert [e.ending if e else None for e in endings] == [
        Ending.OUT_OF_MEMORY,
        Ending.OVER_DISK_LIMIT,
    ]


_KILLED_AT_DEADLINE = {
    # pkg/kubelet/active_deadline.go: reason and message of a pod past its
    # spec.activeDeadlineSeconds; the kubelet then kills its containers (exit 137).
    "phase": "Failed",
    "reason": "DeadlineExceeded",
    "message": "Pod was active on the node longer than the specified deadline",
    "containerStatuses": [
        {"name": "trainer", "state": {"terminated": {"exitCode": 137, "reason": "Error"}}}
    ],
}


def test_a_pod_stopped_at_its_deadline_ended_at_the_deadline_not_in_error() -> None:
    assert _failed_with(_KILLED_AT_DEADLINE) == JobFailure(
        Ending.DEADLINE,
        "BackoffLimitExceeded",
        "pod train-002-f0 stopped at its deadline: Pod was active on the node longer than the "
        "specified deadline",
    )
    exited = {
        "containerStatuses": [
            {"name": "trainer", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
        ]
    }
    failure = _failed_with(exited, _KILLED_AT_DEADLINE)
    assert failure is not None
    assert failure.ending is Ending.DEADLINE, "the deadline over an earlier attempt's exit"
    oom = {
        "containerStatuses": [
            {"name": "trainer", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}
        ]
    }
    failure = _failed_with(_KILLED_AT_DEADLINE, oom)
    assert failure is not None
    assert failure.ending is Ending.OUT_OF_MEMORY, "running out of memory recurs sooner"


def test_a_job_its_controller_stopped_at_its_deadline_says_so_over_its_pods() -> None:
    """pkg/controller/job/job_controller.go: past `spec.activeDeadlineSeconds` the Job fails
    with reason DeadlineExceeded, `Job was active longer than specified deadline`, whatever an
    earlier attempt's pod showed (a retry was still allowed)."""
    job = training_job("train-002", NOW, finished=False)
    job["spec"]["activeDeadlineSeconds"] = 7200
    job["status"] = {
        "failed": 1,
        "conditions": [
            {
                "type": "Failed",
                "status": "True",
                "reason": "DeadlineExceeded",
                "message": "Job was active longer than specified deadline",
            }
        ],
    }
    pod = job_pod(job, NOW, suffix="e1", node_name="gpu-1", phase="Failed")
    pod["status"]["containerStatuses"] = [
        {"name": "trainer", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
    ]
    assert job_failure(from_job(job), [pod]) == JobFailure(
        Ending.DEADLINE, "DeadlineExceeded", "Job was active longer than specified deadline"
    )


def test_a_native_sidecar_stopped_after_the_program_is_not_what_failed() -> None:
    """KEP-753: the kubelet stops a pod's sidecars (init containers of restartPolicy Always)
    once its main containers have ended, with SIGTERM (exit 143) or SIGKILL (137); their end
    follows the program's and never fails the pod (pkg/kubelet/kubelet_pods.go getPhase counts
    no restartable init container)."""
    job = training_job("train-002", NOW, finished=False)
    job["spec"]["template"]["spec"]["initContainers"] = [
        {"name": "log-shipper", "image": "fluent/fluent-bit:3.0", "restartPolicy": "Always"},
        {"name": "fetch-data", "image": "registry.example.com/fetch:1"},
    ]
    job["status"] = {
        "failed": 1,
        "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}],
    }
    pod = job_pod(job, NOW, suffix="s1", node_name="gpu-1", phase="Failed")

    def ended(name: str, code: int, reason: str = "Error") -> dict[str, object]:
        return {"name": name, "state": {"terminated": {"exitCode": code, "reason": reason}}}

    pod["status"]["initContainerStatuses"] = [
        ended("log-shipper", 143),
        ended("fetch-data", 0, "Completed"),
    ]
    pod["status"]["containerStatuses"] = [ended("trainer", 1)]
    assert job_failure(from_job(job), [pod]) == JobFailure(
        Ending.PROGRAM_FAILED,
        "BackoffLimitExceeded",
        "pod train-002-s1 container trainer: exit code 1 (Error)",
    )
    pod["status"]["initContainerStatuses"][0] = ended("log-shipper", 137, "OOMKilled")
    failure = job_failure(from_job(job), [pod])
    assert failure is not None
    assert failure.ending is Ending.PROGRAM_FAILED, "a sidecar's kill is not the program's"
    # A setup step that failed is what failed: the main containers never started.
    pod["status"]["initContainerStatuses"][1] = ended("fetch-data", 2)
    pod["status"]["containerStatuses"] = [
        {"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}
    ]
    failure = job_failure(from_job(job), [pod])
    assert failure is not None
    assert failure.detail == "pod train-002-s1 container fetch-data: exit code 2 (Error)"


@pytest.mark.parametrize(
    ("status", "failure"),
    [
        (
            {"reason": "ValidationFailed", "message": "The RayJob spec is invalid: x"},
            JobFailure(Ending.REFUSED, "ValidationFailed", "The RayJob spec is invalid: x"),
        ),
        (
            {"reason": "ValidationFailed"},
            JobFailure(Ending.REFUSED, "ValidationFailed", "ValidationFailed"),
        ),
        ({}, JobFailure(Ending.REFUSED, "", "its settings are invalid")),
    ],
)
def test_a_job_its_controller_refused_ended_refused_in_its_controller_s_words(
    status: dict[str, str], failure: JobFailure
) -> None:
    """A RayJob at jobDeploymentStatus ValidationFailed (kuberay rayjob_controller.go Reconcile
    sets it with reason ValidationFailed and validateRayJob's error as message, and creates
    no RayCluster, so no pod says more): refused, in kuberay's words."""
    job = ray_job("r", NOW, workers=1, gpus=1, age=timedelta(0))
    job["status"] = {"jobDeploymentStatus": "ValidationFailed", **status}
    assert job_failure(from_ray_job(job), []) == failure


def test_a_job_bound_to_fail_ends_as_the_pods_of_its_given_up_indexes_did() -> None:
    """An Indexed Job whose controller gave up on index 1 (`failedIndexes`, backoffLimitPerIndex)
    and wrote no Failed condition yet: index 1's pod says how it ends, not index 0's earlier
    try; with that pod gone, the status alone says it."""
    job = indexed_job("train-002", NOW, ranks=2, gpus=1, age=timedelta(minutes=15))
    job["spec"]["backoffLimitPerIndex"] = 1
    job["status"] = {"failed": 3, "failedIndexes": "1"}
    pods = []
    for index, ended in ((0, {"exitCode": 137, "reason": "OOMKilled"}), (1, {"exitCode": 2})):
        pod = job_pod(job, NOW, suffix=f"{index}-x", node_name="gpu-1", phase="Failed")
        pod["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": str(index)}
        pod["status"]["containerStatuses"] = [{"name": "trainer", "state": {"terminated": ended}}]
        pods.append(pod)
    shaped = from_job(job)
    assert job_failure(shaped, pods) == JobFailure(
        Ending.PROGRAM_FAILED, "", "pod train-002-1-x container trainer: exit code 2 (Error)"
    )
    assert job_failure(shaped, pods[:1]) == JobFailure(
        Ending.UNKNOWN, "", "status.failedIndexes: 1"
    )
    del job["status"]["failedIndexes"]
    assert job_failure(from_job(job), pods) is None
