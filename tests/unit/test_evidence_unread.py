"""Which reports the evidence check leaves unjudged while a list of training jobs is unread:
only those about a job of a kind whose list was not read (checks/evidence.py)."""

from typing import Any

import pytest

from truegreen.cluster import CantRead, Kind, Listed, ListRead
from truegreen.cluster.reads import ReadFailure
from truegreen.doctor.checks import evidence
from truegreen.doctor.knowledge.reports import Report, Said
from truegreen.doctor.knowledge.training import TrainingWork, training_work

JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "js", "namespace": "train", "uid": "u-js"},
    "spec": {
        "replicatedJobs": [
            {
                "name": "workers",
                "replicas": 1,
                "template": {
                    "spec": {
                        "parallelism": 2,
                        "completions": 2,
                        "template": {"spec": {"containers": [{"name": "t", "image": "x/y:1"}]}},
                    }
                },
            }
        ]
    },
}
"""A JobSet of one replicated Job (kubernetes-sigs/jobset api/jobset/v1alpha2)."""
CHILD = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "js-workers-0",
        "namespace": "train",
        "uid": "u-j",
        "ownerReferences": [
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "name": "js",
                "uid": "u-js",
                "controller": True,
            }
        ],
    },
    "spec": {"parallelism": 2, "completions": 2, "template": {"spec": {"containers": []}}},
}
"""The Job the JobSet controller made for it: a part of the JobSet's training job."""
FORBIDDEN = CantRead(ReadFailure.FORBIDDEN, "forbidden")


class _Env:
    pods: ListRead = Listed(())

    def __init__(self, work: TrainingWork) -> None:
        self._work = work

    def work(self) -> TrainingWork:
        return self._work


def _report(kind: str, name: str) -> Report:
    return Report(Said.EVENT, "job-controller", "BackoffLimitExceeded", kind, name, "m", 1, None)


@pytest.mark.parametrize(
    ("unread", "kind", "name", "unjudged"),
    [
        # Another kind's list refused: the JobSet's Job was read, its report judged.
        (Kind.RAY_JOB, "Job", "js-workers-0", False),
        (Kind.RAY_JOB, "JobSet", "js", False),
        # The report's own kind unread, the job not among those read: unknown.
        (Kind.RAY_JOB, "RayJob", "r", True),
        (Kind.JOB, "Job", "gone", True),
    ],
)
def test_only_a_report_about_a_job_of_a_kind_not_read_is_left_unjudged(
    unread: Kind, kind: str, name: str, unjudged: bool
) -> None:
    lists: dict[Kind, Any] = {Kind.JOB: Listed((CHILD,)), Kind.JOB_SET: Listed((JOBSET,))}
    lists[unread] = FORBIDDEN
    work = training_work(lists, {})
    assert work.unread, "precondition: a list of training jobs unread"
    assert evidence._of_a_job_not_read(_Env(work), _report(kind, name)) is unjudged  # type: ignore[arg-type]
