"""Which of the pods a workload's selector matches are its copies: those its controller claims
(kubernetes pkg/controller/controller_ref_manager.go `ClaimPods`: a pod whose controller is
another object is "Owned by someone else. Ignore."; an orphan is adopted while the owner is not
being deleted). A Deployment owns its pods through the ReplicaSets it controls
(pkg/controller/deployment/sync.go `getNewReplicaSet`)."""

from typing import Any

from tests.support.refresh_kit import daemonset, deployment, statefulset
from truegreen.refresh.tick import owned_pods

Obj = dict[str, Any]


def _with_uid(obj: Obj, uid: str) -> Obj:
    obj["metadata"]["uid"] = uid
    return obj


def _owned_by(name: str, kind: str, uid: str, *, controller: bool = True) -> Obj:
    """A pod (or ReplicaSet) named `name` with one owner reference, as
    metav1.NewControllerRef writes it."""
    reference: Obj = {"apiVersion": "apps/v1", "kind": kind, "name": "x", "uid": uid}
    if controller:
        reference |= {"controller": True, "blockOwnerDeletion": True}
    return {"metadata": {"name": name, "ownerReferences": [reference]}}


def _names(pods: list[Any]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def test_a_deployment_counts_the_pods_of_its_own_replicasets_and_orphans() -> None:
    web = _with_uid(deployment("web"), "uid-web")
    replica_sets = [
        _owned_by("web-1", "Deployment", "uid-web"),
        _owned_by("web-old", "Deployment", "uid-web"),
        _owned_by("other-1", "Deployment", "uid-other"),
        # Orphans: adopted when the Deployment's selector matches them (ClaimReplicaSets).
        {"metadata": {"name": "loose", "uid": "uid-rs-loose", "labels": {"app": "other"}}},
        {"metadata": {"name": "adopted", "uid": "uid-rs-adopted", "labels": {"app": "web"}}},
    ]
    uids = ("uid-rs-1", "uid-rs-old", "uid-rs-other")
    for rs, uid in zip(replica_sets, uids, strict=False):
        rs["metadata"]["uid"] = uid
    pods = [
        _owned_by("new", "ReplicaSet", "uid-rs-1"),
        _owned_by("old", "ReplicaSet", "uid-rs-old"),
        _owned_by("others", "ReplicaSet", "uid-rs-other"),
        _owned_by("loose", "ReplicaSet", "uid-rs-loose"),
        _owned_by("adopted", "ReplicaSet", "uid-rs-adopted"),
        _owned_by("job", "Job", "uid-job"),
        _owned_by("web", "Deployment", "uid-web"),  # a Deployment controls no pod itself
        _owned_by("garbage", "ReplicaSet", "uid-rs-1", controller=False),  # orphan
        {"metadata": {"name": "bare"}},  # orphan
    ]
    assert _names(owned_pods(web, pods, replica_sets)) == [
        "new",
        "old",
        "adopted",
        "garbage",
        "bare",
    ]
    assert _names(owned_pods(web, pods, [])) == ["garbage", "bare"]
    web["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # adopts nothing now
    assert _names(owned_pods(web, pods, replica_sets)) == ["new", "old"]


def test_a_statefulset_or_daemonset_counts_the_pods_it_controls_and_orphans() -> None:
    for workload in (statefulset("db"), daemonset("agent")):
        owner = _with_uid(workload, "uid-me")
        pods = [
            _owned_by("mine", workload["kind"], "uid-me"),
            _owned_by("twin", workload["kind"], "uid-twin"),
            _owned_by("job", "Job", "uid-job"),
            {"metadata": {"name": "bare", "ownerReferences": []}},
        ]
        # Its ReplicaSets are a Deployment's matter only.
        rs = [_with_uid(_owned_by("rs", workload["kind"], "uid-me"), "uid-job")]
        assert _names(owned_pods(owner, pods, rs)) == ["mine", "bare"]


def test_a_workload_being_deleted_adopts_no_orphan() -> None:
    db = _with_uid(statefulset("db"), "uid-db")
    db["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    pods = [_owned_by("mine", "StatefulSet", "uid-db"), {"metadata": {"name": "bare"}}]
    assert _names(owned_pods(db, pods, [])) == ["mine"]
