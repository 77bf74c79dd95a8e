"""Objects without a kind: how a real API server sends list items (kubernetes#3030).

`cluster/` stamps the kind back; above it, nothing guesses one: a missing kind is a bug that
is raised, never an `Object/...` in a finding or a rollout called done.
"""

import pytest

from truegreen import kubeobjects as o
from truegreen.cluster import Kind
from truegreen.cluster.kinds import stamped
from truegreen.rollout import RolloutStatus, rollout_status

STUCK = {
    "metadata": {"name": "manager", "generation": 2},
    "spec": {"replicas": 1},
    "status": {
        "observedGeneration": 2,
        "conditions": [{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}],
    },
}


def test_stamping_adds_the_kind_of_the_read_and_keeps_what_is_there() -> None:
    assert stamped(Kind.DEPLOYMENT, {"metadata": {"name": "m"}}) == {
        "metadata": {"name": "m"},
        "kind": "Deployment",
        "apiVersion": "apps/v1",
    }
    assert stamped(Kind.POD, {"kind": "Pod", "apiVersion": "v1"}) == {
        "kind": "Pod",
        "apiVersion": "v1",
    }
    assert stamped(Kind.STORAGE_CLASS, {})["apiVersion"] == "storage.k8s.io/v1"


def test_a_finding_never_names_an_object_without_its_kind() -> None:
    assert o.ref({"kind": "Job", "metadata": {"name": "train-9"}}) == "Job/train-9"
    with pytest.raises(o.KindMissingError, match="'train-9'"):
        o.ref({"metadata": {"name": "train-9"}})
    with pytest.raises(o.KindMissingError):
        o.ref({"kind": "", "metadata": {"name": "train-9"}})


def test_a_rollout_is_judged_by_the_kind_it_was_read_as() -> None:
    stuck = RolloutStatus(False, stuck=True, progress="exceeded its progress deadline")
    assert rollout_status(STUCK, "Deployment") == stuck
    assert rollout_status({**STUCK, "kind": "Deployment"}) == stuck
    with pytest.raises(o.KindMissingError, match="None"):
        rollout_status(STUCK)
    with pytest.raises(o.KindMissingError, match="'Job'"):
        rollout_status({**STUCK, "kind": "Job"})


def test_terminating_pods_are_not_among_those_that_stay() -> None:
    running = {"metadata": {"name": "new"}, "status": {"phase": "Running"}}
    leaving = {
        "metadata": {"name": "old", "deletionTimestamp": "2026-01-01T00:00:30Z"},
        "status": {"phase": "Running"},
    }
    done = {"metadata": {"name": "done"}, "status": {"phase": "Succeeded"}}
    assert (o.is_terminating(leaving), o.is_terminating(running)) == (True, False)
    assert o.remaining([running, leaving, done]) == [running]
