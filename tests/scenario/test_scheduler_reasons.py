"""kube-scheduler's FailedScheduling words on a training pod, read as the scheduler writes them.

A PreFilter plugin's refusal comes with no count, for it holds back every machine
(framework/types.go `FitError.Error`: `0/%v nodes are available:` then ` %v.` with the
PreFilter message, and no filter's reasons)."""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.scenarios import (
    Obj,
    find,
    gpu_held_by_notebook,
    job_pod,
    training_job,
)

NOT_HELPFUL = "Preemption is not helpful for scheduling"


def _waiting(message: str) -> Callable[[datetime], list[Obj]]:
    """train-002's one pod, marked Unschedulable by kube-scheduler with `message`, on the
    machines cpu-1 (no GPU) and gpu-1 (both GPUs held by a notebook in 'research')."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=3))
        pod = job_pod(
            job, now, suffix="w0", node_name=None, phase="Pending", age=timedelta(minutes=3)
        )
        pod["status"]["conditions"][0]["message"] = message
        return [*gpu_held_by_notebook(now), job, pod]

    return build


def _said(doctor: Doctor) -> tuple[int, dict[str, Any]]:
    """doctor's exit code and the headline of its JSON report."""
    result = doctor.live("-o", "json")
    return result.exit_code, result.json()["headline"]


def _remedy(doctor: Doctor, todo: str) -> str:
    return (
        f"{todo}; `kubectl --kubeconfig {doctor.kubeconfig} describe pod train-002-w0` shows "
        "the cluster's own words."
    )


def _headline(reasons: str) -> str:
    return f"The cluster found no machine for 1 program of the training job 'train-002': {reasons}."


READ_THEIR_WORDS = "Read the cluster's own words on it"


@pytest.mark.parametrize(
    "refusal",
    [
        # VolumeBinding's PreFilter with a claim of an Immediate class not yet bound
        # (plugins/volumebinding/volume_binding.go `PreFilter`: `status.AppendReason(...)`).
        "pod has unbound immediate PersistentVolumeClaims",
        # The same PreFilter when the claim does not exist: `podHasPVCs` returns the claim
        # lister's NotFound, written as its error (`persistentvolumeclaim "datasets" not found`).
        'persistentvolumeclaim "datasets" not found',
        # An out-of-tree PreFilter plugin's words, commas and all (one Status's reasons are
        # joined with ", ": framework Status.Message): one reason, not three.
        "pod waits for a licence, 2 of 2 seats in use, try later",
    ],
    ids=["unbound-claim", "claim-not-found", "made-up-plugin"],
)
def test_a_prefilter_refusal_is_quoted_in_the_scheduler_s_words(
    doctor: Doctor, refusal: str
) -> None:
    """Before, the uncounted reason was dropped: "it gave no reason doctor knows"."""
    doctor.load(
        _waiting(
            f"0/2 nodes are available: {refusal}. preemption: 0/2 nodes are available: 2 "
            f"{NOT_HELPFUL}."
        )
    )
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"], headline["status"]) == (
        2,
        "capacity.unschedulable",
        "fail",
    )
    assert headline["text"] == _headline(f"of 2 machines, 2 are held back: “{refusal}”")
    assert headline["remedy"] == _remedy(doctor, READ_THEIR_WORDS)


def test_a_prefilter_refusal_beside_the_storage_finding_is_quoted_too(doctor: Doctor) -> None:
    """The claim really is Pending: the storage check's finding leads, and the scheduler's
    own words stand on the capacity finding beside it."""

    def build(now: datetime) -> list[Obj]:
        objects = _waiting(
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
            f"preemption: 0/2 nodes are available: 2 {NOT_HELPFUL}."
        )(now)
        find(objects, "PersistentVolumeClaim", "datasets")["status"] = {"phase": "Pending"}
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "storage.volume-unbound")
    (capacity,) = [f for f in report["findings"] if f["code"] == "capacity.unschedulable"]
    assert capacity["headline"] == _headline(
        "of 2 machines, 2 are held back: “pod has unbound immediate PersistentVolumeClaims”"
    )
    assert capacity["remedy"] == _remedy(doctor, READ_THEIR_WORDS)
