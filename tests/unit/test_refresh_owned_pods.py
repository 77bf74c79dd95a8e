"""Which of the pods a workload's selector matches are its copies: those its controller claims
(kubernetes pkg/controller/controller_ref_manager.go `ClaimPods`: a pod whose controller is
another object is "Owned by someone else. Ignore."; an orphan is adopted while the owner is not
being deleted). A Deployment owns its pods through the ReplicaSets it claims
(pkg/controller/deployment/deployment_controller.go `getPodMapForDeployment` skips a pod with no
controllerRef); an orphan pod is adopted only by a ReplicaSet whose own selector, with
`pod-template-hash`, matches it (pkg/controller/replicaset/replica_set.go
`getPodsForReplicaSet`). A StatefulSet claims only pods named `<set>-<ordinal>`
(pkg/controller/statefulset/stateful_set.go `getPodsForStatefulSet`, stateful_set_utils.go
`isMemberOf`); a DaemonSet every pod its selector matches (daemon_controller.go
`getDaemonPods`)."""

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


def _labelled(obj: Obj, labels: dict[str, str]) -> Obj:
    obj["metadata"]["labels"] = labels
    return obj


def _replica_set(name: str, uid: str, owner_uid: str | None, template_hash: str) -> Obj:
    """A ReplicaSet as deployment/sync.go `getNewReplicaSet` writes it: the template's labels
    and a selector, both with `pod-template-hash`, controlled by the Deployment (or an orphan
    where `owner_uid` is None)."""
    labels = {"app": "web", "pod-template-hash": template_hash}
    rs: Obj = {"metadata": {"name": name}}
    if owner_uid:
        rs = _owned_by(name, "Deployment", owner_uid)
    rs["metadata"] |= {"uid": uid, "labels": labels}
    rs["spec"] = {"selector": {"matchLabels": dict(labels)}}
    return rs


def test_a_deployment_counts_the_pods_of_its_own_replicasets() -> None:
    web = _with_uid(deployment("web"), "uid-web")
    replica_sets = [
        _replica_set("web-1", "uid-rs-1", "uid-web", "h1"),
        _replica_set("web-old", "uid-rs-old", "uid-web", "h0"),
        _replica_set("other-1", "uid-rs-other", "uid-other", "h9"),
        # Orphans: adopted when the Deployment's selector matches them (ClaimReplicaSets).
        _labelled(_replica_set("loose", "uid-rs-loose", None, "h8"), {"app": "other"}),
        _replica_set("adopted", "uid-rs-adopted", None, "h2"),
    ]
    pods = [
        _owned_by("new", "ReplicaSet", "uid-rs-1"),
        _owned_by("old", "ReplicaSet", "uid-rs-old"),
        _owned_by("others", "ReplicaSet", "uid-rs-other"),
        _owned_by("loose", "ReplicaSet", "uid-rs-loose"),
        _owned_by("adopted", "ReplicaSet", "uid-rs-adopted"),
        _owned_by("job", "Job", "uid-job"),
        _owned_by("web", "Deployment", "uid-web"),  # a Deployment controls no pod itself
    ]
    assert _names(owned_pods(web, pods, replica_sets)) == ["new", "old", "adopted"]
    assert _names(owned_pods(web, pods, [])) == []
    web["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # adopts no ReplicaSet now
    assert _names(owned_pods(web, pods, replica_sets)) == ["new", "old"]


def test_an_orphan_pod_is_a_deployments_copy_only_once_its_replicaset_would_adopt_it() -> None:
    web = _with_uid(deployment("web"), "uid-web")
    current = _replica_set("web-h1", "uid-rs-1", "uid-web", "h1")
    orphan_rs = _replica_set("web-h2", "uid-rs-2", None, "h2")  # the Deployment adopts it
    other = _replica_set("api-h3", "uid-rs-3", "uid-api", "h3")  # another Deployment's
    pods = [
        # `kubectl run web-debug --labels app=web`: no pod-template-hash, no ReplicaSet adopts it.
        _labelled({"metadata": {"name": "bare"}}, {"app": "web"}),
        _labelled({"metadata": {"name": "stale"}}, {"app": "web", "pod-template-hash": "h0"}),
        _labelled({"metadata": {"name": "h1"}}, {"app": "web", "pod-template-hash": "h1"}),
        _labelled({"metadata": {"name": "h2"}}, {"app": "web", "pod-template-hash": "h2"}),
        _labelled({"metadata": {"name": "h3"}}, {"app": "web", "pod-template-hash": "h3"}),
        # Not controlled (controller unset): still an orphan, adopted as one.
        _labelled(
            _owned_by("garbage", "ReplicaSet", "uid-rs-1", controller=False),
            {"app": "web", "pod-template-hash": "h1"},
        ),
    ]
    assert _names(owned_pods(web, pods, [current, orphan_rs, other])) == ["h1", "h2", "garbage"]
    current["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # adopts no pod now
    assert _names(owned_pods(web, pods, [current, orphan_rs, other])) == ["h2"]
    web["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # claims no orphan ReplicaSet
    assert _names(owned_pods(web, pods, [current, orphan_rs, other])) == []


def test_a_statefulset_counts_only_pods_named_as_its_members() -> None:
    db = _with_uid(statefulset("db"), "uid-me")
    pods = [
        _owned_by("db-0", "StatefulSet", "uid-me"),
        _owned_by("db-1", "StatefulSet", "uid-twin"),
        _owned_by("db-2", "Job", "uid-job"),
        {"metadata": {"name": "db-3", "ownerReferences": []}},  # an orphan member: adopted
        {"metadata": {"name": "db-debug"}},  # an orphan whose name is no member's
        {"metadata": {"name": "db-"}},
        {"metadata": {"name": "db-٣"}},  # not an ASCII ordinal: `[0-9]+`
        {"metadata": {"name": "xdb-4"}},
        {"metadata": {"name": "db-x-5"}},  # parent "db-x"
        {"metadata": {"name": "db-10"}},
        _owned_by("web-0", "StatefulSet", "uid-me"),  # owned, yet no member: released
    ]
    # Its ReplicaSets are a Deployment's matter only.
    rs = [_with_uid(_owned_by("rs", "StatefulSet", "uid-me"), "uid-job")]
    assert _names(owned_pods(db, pods, rs)) == ["db-0", "db-3", "db-10"]


def test_a_daemonset_counts_the_pods_it_controls_and_orphans() -> None:
    agent = _with_uid(daemonset("agent"), "uid-me")
    pods = [
        _owned_by("mine", "DaemonSet", "uid-me"),
        _owned_by("twin", "DaemonSet", "uid-twin"),
        _owned_by("job", "Job", "uid-job"),
        {"metadata": {"name": "bare", "ownerReferences": []}},
    ]
    rs = [_with_uid(_owned_by("rs", "DaemonSet", "uid-me"), "uid-job")]
    assert _names(owned_pods(agent, pods, rs)) == ["mine", "bare"]


def test_a_workload_being_deleted_adopts_no_orphan() -> None:
    for workload, mine in ((statefulset("db"), "db-0"), (daemonset("agent"), "agent-x")):
        owner = _with_uid(workload, "uid-me")
        owner["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        pods = [_owned_by(mine, workload["kind"], "uid-me"), {"metadata": {"name": "db-1"}}]
        assert _names(owned_pods(owner, pods, [])) == [mine]
