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
from datetime import UTC, datetime

import pytest

from tests.support.scenarios import job_pod, training_job
from truegreen.doctor.knowledge.evidence import (
    DiskLimit,
    DiskLimitOf,
    Ending,
    JobFailure,
    job_failure,
)
from truegreen.doctor.knowledge.training import from_job

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
