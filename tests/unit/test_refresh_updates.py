"""Whether a workload's update is under way, and whose (refresh/updates.py): refresh's own
latest restart, or someone else's change, told for a Deployment by the templates of the
ReplicaSets its copies still run, for a StatefulSet or DaemonSet by its template.

The shapes are the controllers': each ReplicaSet holds the whole template it rolled out with
`pod-template-hash` added to its labels, controlled by the Deployment, and each copy is
controlled by its ReplicaSet (pkg/controller/deployment/sync.go `getNewReplicaSet`,
apimachinery metav1.NewControllerRef)."""

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from tests.support.rollout import controller_reference
from truegreen.refresh.annotations import PENDING, RESTARTED, PendingRestart
from truegreen.refresh.template import RESTARTED_AT
from truegreen.refresh.updates import carried_restart, own_update, updating

Obj = dict[str, Any]
IMAGE = "registry.example.com/team/web:stable"
DIGEST = "sha256:" + "4" * 64
STAMP = "2026-12-04T11:00:00.000000Z"
OURS = PendingRestart({"runner": DIGEST}, STAMP)
"""Refresh's latest restart, as its record holds it: the digest aimed at, the stamp written."""


def _web() -> Obj:
    web = deployment("web", container("runner", IMAGE))
    web["metadata"]["uid"] = "uid-web"
    return web


def _replica_set(web: Obj, template: Obj, template_hash: str) -> Obj:
    held = copy.deepcopy(template)
    held["metadata"]["labels"] = {**held["metadata"]["labels"], "pod-template-hash": template_hash}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"web-{template_hash}",
            "uid": f"uid-{template_hash}",
            "labels": held["metadata"]["labels"],
            "ownerReferences": [controller_reference(web)],
        },
        "spec": {"template": held},
    }


def _pod(replica_set: Obj, index: int) -> Obj:
    return {
        "metadata": {
            "name": f"{replica_set['metadata']['name']}-{index}",
            "ownerReferences": [controller_reference(replica_set)],
        },
        "status": {"phase": "Running"},
    }


def mid_update(change: Callable[[Obj], None]) -> tuple[Obj, list[Obj], list[Obj]]:
    """The Deployment after `change` to its template, one copy of four updated: three copies
    still on the template before it."""
    web = _web()
    old = _replica_set(web, web["spec"]["template"], "b4c5d6")
    change(web["spec"]["template"])
    new = _replica_set(web, web["spec"]["template"], "f7g8h9")
    pods = [_pod(old, i) for i in range(3)] + [_pod(new, 0)]
    return web, pods, [old, new]


def restarted(template: Obj) -> None:
    """Refresh's --mode restart: its stamp on the template."""
    template["metadata"].setdefault("annotations", {})[RESTARTED_AT] = STAMP


def kubectl_restart(template: Obj) -> None:
    """`kubectl rollout restart`: a stamp of its own (RFC 3339, whole seconds)."""
    template["metadata"].setdefault("annotations", {})[RESTARTED_AT] = "2026-12-04T11:00:00Z"


def _pinned(template: Obj) -> None:
    template["spec"]["containers"][0]["image"] = f"{IMAGE}@{DIGEST}"


def _both(template: Obj) -> None:
    restarted(template)
    _pinned(template)


def env_set(template: Obj) -> None:
    template["spec"]["containers"][0]["env"] = [{"name": "MODE", "value": "train"}]


def _tag_moved(template: Obj) -> None:
    template["spec"]["containers"][0]["image"] = "registry.example.com/team/web:v2"


def _other_repository(template: Obj) -> None:
    template["spec"]["containers"][0]["image"] = f"registry.example.com/team/api:stable@{DIGEST}"


def _restart_and_label(template: Obj) -> None:
    restarted(template)
    template["metadata"]["labels"]["team"] = "payments"


@pytest.mark.parametrize(
    ("change", "ours"),
    [
        (restarted, True),  # refresh's --mode restart
        (_pinned, True),  # refresh's --mode pin: the tag's digest pinned
        (_both, True),
        (kubectl_restart, False),  # `kubectl rollout restart`: someone else's restart
        (env_set, False),  # `kubectl set env`: someone else's change
        (_tag_moved, False),  # another tag
        (_other_repository, False),
        (_restart_and_label, False),  # a restart beside another change is not only a restart
    ],
)
def test_an_update_is_refresh_s_only_where_the_older_copies_differ_by_its_latest_restart(
    change: Callable[[Obj], None], ours: bool
) -> None:
    web, pods, replica_sets = mid_update(change)
    assert own_update(web, "Deployment", pods, replica_sets, OURS) is ours
    # Without refresh's record of a restart, no restart is its own.
    assert own_update(web, "Deployment", pods, replica_sets, None) is False


def test_a_restart_aimed_elsewhere_is_not_refresh_s_latest() -> None:
    """Another stamp, or a pin of another digest than the one refresh's latest restart aimed at:
    someone else's restart or pin."""
    other = PendingRestart({"runner": "sha256:" + "5" * 64}, "2026-12-04T10:00:00.000000Z")
    for change in (restarted, _pinned):
        web, pods, replica_sets = mid_update(change)
        assert own_update(web, "Deployment", pods, replica_sets, other) is False


def test_an_unpinned_image_is_no_pin_of_refresh_s() -> None:
    """A pin taken out (`app@sha256:…` back to `app:stable`) names no digest, and a container
    refresh's restart did not aim at is no pin of its own."""

    def unpinned(template: Obj) -> None:
        template["spec"]["containers"][0]["image"] = IMAGE

    web = _web()
    web["spec"]["template"]["spec"]["containers"][0]["image"] = f"{IMAGE}@{DIGEST}"
    old = _replica_set(web, web["spec"]["template"], "b4c5d6")
    unpinned(web["spec"]["template"])
    new = _replica_set(web, web["spec"]["template"], "f7g8h9")
    pods = [_pod(old, 0), _pod(new, 0)]
    assert own_update(web, "Deployment", pods, [old, new], OURS) is False
    elsewhere = PendingRestart({"side": DIGEST}, "2026-12-04T10:00:00.000000Z")
    web, pods, replica_sets = mid_update(_pinned)
    assert own_update(web, "Deployment", pods, replica_sets, elsewhere) is False


def test_what_cannot_be_told_is_no_restart() -> None:
    """No copy on an older template (nothing to compare), or a copy whose ReplicaSet is not
    among the Deployment's (an orphan, another owner's): the update's author is not known, and
    kubectl's in-progress stands."""
    web, pods, replica_sets = mid_update(restarted)
    assert own_update(web, "Deployment", pods[3:], replica_sets, OURS) is False
    assert own_update(web, "Deployment", pods, replica_sets[1:], OURS) is False
    assert own_update(web, "Deployment", [], replica_sets, OURS) is False


def test_copies_on_their_way_out_are_not_compared() -> None:
    """A terminating copy of someone else's older template is going: what stays decides."""
    web, pods, replica_sets = mid_update(restarted)
    other = _replica_set(web, {**web["spec"]["template"], "spec": {"containers": []}}, "x1y2z3")
    leaving = _pod(other, 0)
    leaving["metadata"]["deletionTimestamp"] = "2026-12-04T11:00:00Z"
    assert own_update(web, "Deployment", [*pods, leaving], [*replica_sets, other], OURS) is True


@pytest.mark.parametrize("make", [statefulset, daemonset], ids=["statefulset", "daemonset"])
@pytest.mark.parametrize(
    ("change", "ours"),
    [(restarted, True), (_pinned, True), (kubectl_restart, False), (env_set, False)],
)
def test_a_statefulset_or_daemonset_update_is_refresh_s_where_its_template_carries_it(
    make: Callable[..., Obj], change: Callable[[Obj], None], ours: bool
) -> None:
    """Their older templates are ControllerRevisions, which refresh does not read: the template
    still carrying refresh's latest restart (its stamp, or its pins) makes the update its own."""
    workload = make("x", container("runner", IMAGE))
    change(workload["spec"]["template"])
    assert own_update(workload, workload["kind"], [], [], OURS) is ours
    assert own_update(workload, workload["kind"], [], [], None) is False


@pytest.mark.parametrize("make", [statefulset, daemonset, deployment])
@pytest.mark.parametrize(
    ("change", "carried"),
    [(restarted, True), (_pinned, True), (kubectl_restart, False), (env_set, False)],
)
@pytest.mark.parametrize("key", [RESTARTED, PENDING])
def test_refresh_s_restart_is_carried_while_its_record_stands_and_its_template_holds_it(
    make: Callable[..., Obj], change: Callable[[Obj], None], carried: bool, key: str
) -> None:
    """The restart the record (or, left before records were kept, the pending marker) names,
    while the template still carries it (its stamp, or its pins); no record, none."""
    workload = make("x", container("runner", IMAGE))
    change(workload["spec"]["template"])
    assert carried_restart(workload) is None
    workload["metadata"]["annotations"] = {key: OURS.text()}
    assert carried_restart(workload) == (OURS if carried else None)


def _status(workload: Obj, **status: Any) -> Obj:
    workload["status"] = {"observedGeneration": 1, **status}
    return workload


def _progressing(reason: str) -> list[Obj]:
    return [{"type": "Progressing", "status": "True", "reason": reason}]


def _four(**spec: Any) -> Obj:
    web = deployment("web", container("runner", IMAGE))
    web["spec"] |= {"replicas": 4, **spec}
    return web


@pytest.mark.parametrize(
    ("workload", "under_way"),
    [
        # kubectl: "N out of M new replicas have been updated"
        (_status(_four(), replicas=4, updatedReplicas=1), True),
        # kubectl: "N old replicas are pending termination": an older template still runs
        (_status(_four(), replicas=5, updatedReplicas=4, availableReplicas=4), True),
        # kubectl: "N of M updated replicas are available", and the controller says the
        # update is not complete (progress.go `syncRolloutStatus`)
        (
            _status(
                _four(),
                replicas=4,
                updatedReplicas=4,
                availableReplicas=0,
                conditions=_progressing("ReplicaSetUpdated"),
            ),
            True,
        ),
        # ... while the controller says the rollout completed: a copy went unavailable after
        (
            _status(
                _four(),
                replicas=4,
                updatedReplicas=4,
                availableReplicas=3,
                conditions=_progressing("NewReplicaSetAvailable"),
            ),
            False,
        ),
        # ... with no progress deadline (no Progressing condition): not to be told
        (
            _status(
                _four(progressDeadlineSeconds=2147483647),
                replicas=4,
                updatedReplicas=4,
                availableReplicas=3,
            ),
            False,
        ),
    ],
    ids=["not-updated", "old-copies", "not-available", "copy-unavailable-after", "no-deadline"],
)
def test_a_deployment_s_update_is_under_way_while_its_controller_says_so(
    workload: Obj, under_way: bool
) -> None:
    assert updating(workload, "Deployment", [], []) is under_way


def _db(partition: int = 0, **status: Any) -> Obj:
    db = statefulset("db", container("runner", IMAGE), replicas=3)
    db["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = partition
    return _status(db, **status)


@pytest.mark.parametrize(
    ("workload", "under_way"),
    [
        # kubectl: "Waiting for partitioned roll out to finish: 1 out of 3 new pods ..."
        (_db(updatedReplicas=1, readyReplicas=3, currentRevision="a", updateRevision="b"), True),
        # kubectl: "Waiting for 1 pods to be ready": the update's last copy starting
        (_db(updatedReplicas=3, readyReplicas=2, currentRevision="a", updateRevision="b"), True),
        # ... or a copy that stopped being ready after the update completed (completeRollingUpdate
        # made currentRevision the updateRevision)
        (_db(updatedReplicas=3, readyReplicas=2, currentRevision="b", updateRevision="b"), False),
        # a partition keeps the revisions apart by design: only copies above it are updated
        (_db(2, updatedReplicas=0, readyReplicas=3, currentRevision="a", updateRevision="b"), True),
        (
            _db(2, updatedReplicas=1, readyReplicas=2, currentRevision="a", updateRevision="b"),
            False,
        ),
    ],
    ids=["not-updated", "last-copy-starting", "copy-unready-after", "partition", "partition-done"],
)
def test_a_statefulset_s_update_is_under_way_until_its_revisions_meet(
    workload: Obj, under_way: bool
) -> None:
    """stateful_set_utils.go `completeRollingUpdate` makes currentRevision the updateRevision
    once every copy is updated and ready; kubectl (StatefulSetStatusViewer) counts the
    partition."""
    assert updating(workload, "StatefulSet", [], []) is under_way


def test_a_daemonset_s_update_is_under_way_while_machines_wait_for_the_updated_copy() -> None:
    """kubectl (DaemonSetStatusViewer): "N out of M new pods have been updated"; "N of M updated
    pods are available" with every machine updated counts no revision that would tell the
    update's last copy starting from a copy that stopped being available after it."""
    agent = daemonset("agent", container("runner", IMAGE))
    assert updating(
        _status(agent, desiredNumberScheduled=2, updatedNumberScheduled=1), "DaemonSet", [], []
    )
    every = _status(agent, desiredNumberScheduled=2, updatedNumberScheduled=2, numberAvailable=1)
    assert not updating(every, "DaemonSet", [], [])
