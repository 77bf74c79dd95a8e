"""A workload short of a copy: a Deployment's is no update under way only where its controller
says why the copy is missing (a quota reached) and no copy of an older template is still there,
and the controller's own words are quoted where the rollout is judged unfinished; a
StatefulSet's or DaemonSet's is an update under way. Pinned value by value (the scenarios in
tests/scenario/test_refresh_missing_copy.py run them through the CLI)."""

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from truegreen.refresh.steps import Health, observe, rolling
from truegreen.refresh.updates import failed_create, updating

Obj = dict[str, Any]
IMAGE = "registry.example.com/team/runner:stable"
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
QUOTA = 'pods "web-7d9c5b-x2x9z" is forbidden: exceeded quota: train-quota'
FAILED = {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": QUOTA}


def _progressing(reason: str) -> Obj:
    return {"type": "Progressing", "status": "True", "reason": reason}


def _web(*conditions: Obj, deadline: int | None = None, **status: int) -> Obj:
    """Deployment `web`, 2 copies wanted, with the status given (observed)."""
    web = deployment("web", container("runner", IMAGE))
    web["spec"]["replicas"] = 2
    if deadline is not None:
        web["spec"]["progressDeadlineSeconds"] = deadline
    web["status"] = {"observedGeneration": 1, **status, "conditions": list(conditions)}
    return web


SHORT = {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}
"""One copy of two, updated and available: the other was never made."""


@pytest.mark.parametrize(
    ("workload", "under_way"),
    [
        # progress.go `isCompleteDeployment`: every copy it has updated, NewReplicaSetAvailable
        # kept: the missing copy is no update where the controller says why it is missing...
        (_web(_progressing("NewReplicaSetAvailable"), FAILED, **SHORT), False),
        # ... and an update where it does not (a Recreate rollout keeps NewReplicaSetAvailable
        # before its new ReplicaSet is made, kubernetes#115538).
        (_web(_progressing("NewReplicaSetAvailable"), **SHORT), True),
        # A new template rolling out (sync.go `getNewReplicaSet` moves the reason off it).
        (_web(_progressing("ReplicaSetUpdated"), FAILED, **SHORT), True),
        (_web(_progressing("NewReplicaSetCreated"), **SHORT), True),
        # Copies of an older template still running, whatever the reason says.
        (_web(_progressing("NewReplicaSetAvailable"), **(SHORT | {"replicas": 2})), True),
        # No progress deadline, no Progressing condition: fewer updated copies than wanted is
        # an update under way unless the controller says a copy could not be made.
        (_web(deadline=2**31 - 1, **SHORT), True),
        (_web(FAILED, deadline=2**31 - 1, **SHORT), False),
        (_web({**FAILED, "status": "False"}, deadline=2**31 - 1, **SHORT), True),
        (_web(deadline=2**31 - 1, **(SHORT | {"updatedReplicas": 2, "replicas": 2})), False),
    ],
    ids=[
        "complete-failed-create",
        "complete-no-failure-said",
        "updating-failed-create",
        "new-replica-set",
        "old-copies",
        "no-deadline-short",
        "no-deadline-failed-create",
        "no-deadline-failure-cleared",
        "no-deadline-every-copy",
    ],
)
def test_a_deployment_short_of_a_copy_is_updating_only_as_its_controller_says(
    workload: Obj, under_way: bool
) -> None:
    assert updating(workload, "Deployment", [], []) is under_way


def _db(partition: int = 0, **status: Any) -> Obj:
    db = statefulset("db", container("runner", IMAGE), replicas=3)
    db["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = partition
    db["status"] = {"observedGeneration": 1, **status}
    return db


@pytest.mark.parametrize(
    ("workload", "under_way"),
    [
        # Two copies of three made, both updated and ready: the third is missing, made in a
        # later sync or refused (only an Event says which): under way.
        (_db(replicas=2, updatedReplicas=2, currentRevision="b", updateRevision="b"), True),
        (_db(replicas=2, updatedReplicas=1, currentRevision="b", updateRevision="b"), True),
        (_db(replicas=2, updatedReplicas=2, currentRevision="a", updateRevision="b"), True),
        (_db(replicas=3, updatedReplicas=2, currentRevision="b", updateRevision="b"), True),
        (_db(replicas=3, updatedReplicas=3, currentRevision="b", updateRevision="b"), False),
        # More copies than wanted (a scale-down under way): counted against the copies wanted.
        (_db(replicas=4, updatedReplicas=3, currentRevision="b", updateRevision="b"), False),
        # A partition: the copies above it are counted, whether they are there or not.
        (_db(1, replicas=2, updatedReplicas=1, currentRevision="a", updateRevision="b"), True),
        (_db(1, replicas=2, updatedReplicas=2, currentRevision="a", updateRevision="b"), False),
        (_db(1, replicas=3, updatedReplicas=1, currentRevision="a", updateRevision="b"), True),
    ],
    ids=[
        "missing-copy",
        "made-not-updated",
        "revisions-apart",
        "one-not-updated",
        "every-copy-updated",
        "scaling-down",
        "partition-missing-copy",
        "partition-every-copy-updated",
        "partition-one-not-updated",
    ],
)
def test_a_statefulset_short_of_a_copy_is_an_update_under_way(
    workload: Obj, under_way: bool
) -> None:
    assert updating(workload, "StatefulSet", [], []) is under_way


@pytest.mark.parametrize(
    ("counts", "under_way"),
    [
        ((3, 2, 2), True),  # a machine's copy not there, made later or refused: under way
        ((3, 2, 1), True),  # a copy made on an older template
        ((3, 3, 2), True),
        ((3, 3, 3), False),
    ],
)
def test_a_daemonset_short_of_a_copy_is_an_update_under_way(
    counts: tuple[int, int, int], under_way: bool
) -> None:
    agent = daemonset("agent", container("runner", IMAGE))
    desired, current, updated = counts
    agent["status"] = {
        "observedGeneration": 1,
        "desiredNumberScheduled": desired,
        "currentNumberScheduled": current,
        "updatedNumberScheduled": updated,
    }
    assert updating(agent, "DaemonSet", [], []) is under_way


def test_the_failed_create_is_the_condition_s_reason_and_message_while_it_holds() -> None:
    assert failed_create(_web(FAILED)) == f"FailedCreate: {QUOTA}"
    assert failed_create(_web({**FAILED, "message": ""})) == "FailedCreate"
    assert failed_create(_web({**FAILED, "reason": None})) == QUOTA
    assert failed_create(_web({**FAILED, "status": "False"})) == ""
    assert failed_create(_web({**FAILED, "status": "Unknown"})) == ""
    assert failed_create(_web(_progressing("NewReplicaSetAvailable"))) == ""


NEW_RS = "web-new"


def _pod() -> Obj:
    """A ready copy of web's current template, its ReplicaSet's (`_new_replica_set`)."""
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-04T11:00:00Z"}
    owner = {"kind": "ReplicaSet", "name": "web-7d9c5b", "uid": NEW_RS, "controller": True}
    metadata = {"name": "web-0", "uid": "u0", "ownerReferences": [owner]}
    return {"metadata": metadata, "status": {"conditions": [ready]}}


def _new_replica_set(web: Obj) -> Obj:
    """web's ReplicaSet of its current template (sync.go `getNewReplicaSet`)."""
    return {"metadata": {"uid": NEW_RS}, "spec": {"template": web["spec"]["template"]}}


def test_the_failed_create_is_quoted_where_the_rollout_is_judged_unfinished() -> None:
    short = _web(_progressing("NewReplicaSetAvailable"), FAILED, **SHORT)
    assert not rolling(short, [_pod()], [_new_replica_set(short)])
    found = observe(short, [_pod()], [], None, NOW)
    assert (found.health, found.detail) == (
        Health.STARTING,
        f"1 of 2 copies updated; the cluster says FailedCreate: {QUOTA}",
    )
    stuck = observe(
        _web(_progressing("ProgressDeadlineExceeded"), FAILED, **SHORT), [], [], None, NOW
    )
    assert (stuck.health, stuck.detail) == (
        Health.FAILING,
        f"the rollout exceeded its progress deadline; the cluster says FailedCreate: {QUOTA}",
    )
    plain = observe(_web(_progressing("NewReplicaSetAvailable"), **SHORT), [_pod()], [], None, NOW)
    assert (plain.health, plain.detail) == (Health.STARTING, "1 of 2 copies updated")
    stuck = observe(_web(_progressing("ProgressDeadlineExceeded"), **SHORT), [], [], None, NOW)
    assert stuck.detail == "the rollout exceeded its progress deadline"
