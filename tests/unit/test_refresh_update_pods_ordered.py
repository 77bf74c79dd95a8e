"""An OrderedReady StatefulSet's update is stopped by any copy that is not Running and Ready,
whatever its revision: its controller waits on it before it replaces any copy
(stateful_set_control.go `processReplica`, `monotonic`; kubernetes#67250), so every copy is
its update's. A Parallel one replaces an old copy first (`updateStatefulSet` deletes the
highest copy not at the update revision), as a Deployment's and a DaemonSet's controllers do.
Pinned value by value (tests/scenario/test_refresh_ordered_stall.py runs it through the CLI)."""

from typing import Any

import pytest

from tests.support.refresh_kit import container, statefulset
from truegreen.refresh.steps import rolling
from truegreen.refresh.updates import update_pods

Obj = dict[str, Any]
IMAGE = "registry.example.com/team/runner:stable"
CRASHING = {"state": {"waiting": {"reason": "CrashLoopBackOff"}}}


def _pod(name: str, revision: str, *, crash: bool = False) -> Obj:
    status = {"name": "runner", **(CRASHING if crash else {"state": {"running": {}}})}
    return {
        "metadata": {
            "name": name,
            "labels": {"app": "db", "controller-revision-hash": revision},
        },
        "status": {"phase": "Running", "containerStatuses": [status]},
    }


def _db(policy: str | None) -> Obj:
    """StatefulSet `db`, two copies, its update (db-r2) picked up and no copy replaced yet:
    db-0 (db-r1) crash-loops."""
    db = statefulset("db", container("runner", IMAGE), replicas=2)
    if policy is not None:
        db["spec"]["podManagementPolicy"] = policy
    db["status"] = {
        "observedGeneration": 1,
        "replicas": 2,
        "readyReplicas": 1,
        "currentReplicas": 2,
        "updatedReplicas": 0,
        "currentRevision": "db-r1",
        "updateRevision": "db-r2",
    }
    return db


OLD = _pod("db-0", "db-r1", crash=True)
NEW = _pod("db-1", "db-r2")


@pytest.mark.parametrize(
    ("policy", "pods"),
    [
        ("OrderedReady", [OLD, NEW]),
        (None, [OLD, NEW]),  # stored without one: OrderedReady, the API server's default
        ("Parallel", [NEW]),
        ("parallel", [OLD, NEW]),  # no such policy: not Parallel
    ],
    ids=["ordered-ready", "unset", "parallel", "other"],
)
def test_every_copy_is_an_ordered_statefulset_s_update_s(
    policy: str | None, pods: list[Obj]
) -> None:
    assert update_pods(_db(policy), "StatefulSet", [OLD, NEW], []) == pods


def test_a_parallel_statefulset_without_an_update_revision_counts_every_copy() -> None:
    db = _db("Parallel")
    del db["status"]["updateRevision"]
    assert update_pods(db, "StatefulSet", [OLD, NEW], []) == [OLD, NEW]


@pytest.mark.parametrize(
    ("policy", "under_way"),
    [("OrderedReady", False), (None, False), ("Parallel", True)],
    ids=["ordered-ready", "unset", "parallel"],
)
def test_an_old_copy_s_crash_loop_stops_only_an_ordered_statefulset_s_update(
    policy: str | None, under_way: bool
) -> None:
    assert rolling(_db(policy), [OLD, _pod("db-1", "db-r1")]) is under_way
