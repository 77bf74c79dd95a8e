"""Only the update's own copies (made from the current template) decide whether someone else's
update failed: an old copy's crash loop says nothing of the update replacing it. Pinned value
by value (tests/scenario/test_refresh_others_rollouts.py runs it through the CLI)."""

import copy
from typing import Any

from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from tests.support.rollout import controller_reference
from truegreen.refresh.steps import rolling
from truegreen.refresh.updates import update_pods

Obj = dict[str, Any]
IMAGE = "registry.example.com/team/runner:stable"
CRASHING = {"state": {"waiting": {"reason": "CrashLoopBackOff"}}}


def _pod(name: str, *, labels: dict[str, str] | None = None, crash: bool = False) -> Obj:
    status = {"name": "runner", **(CRASHING if crash else {"state": {"running": {}}})}
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"app": "web", **(labels or {})},
        },
        "status": {"phase": "Running", "containerStatuses": [status]},
    }


def _owned(pod: Obj, owner: Obj) -> Obj:
    pod["metadata"]["ownerReferences"] = [controller_reference(owner)]
    return pod


def _replica_set(web: Obj, name: str, template: Obj) -> Obj:
    """A ReplicaSet of `web` with `template` and its hash label, as sync.go `getNewReplicaSet`
    writes it."""
    template = copy.deepcopy(template)
    template["metadata"]["labels"]["pod-template-hash"] = name
    return {
        "kind": "ReplicaSet",
        "metadata": {"name": f"web-{name}", "uid": f"uid-rs-{name}"},
        "spec": {"template": template},
    }


def _web_updating() -> tuple[Obj, Obj, Obj]:
    """Deployment `web` whose template someone changed, under way within its deadline: its old
    ReplicaSet's and its new ReplicaSet's."""
    web = deployment("web", container("runner", IMAGE))
    web["metadata"] |= {"uid": "uid-web", "generation": 2}
    web["spec"]["replicas"] = 2
    old = _replica_set(web, "old", web["spec"]["template"])
    web["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "FIX", "value": "1"}]
    new = _replica_set(web, "new", web["spec"]["template"])
    web["status"] = {
        "observedGeneration": 2,
        "replicas": 3,
        "updatedReplicas": 1,
        "availableReplicas": 1,
        "conditions": [{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}],
    }
    return web, old, new


def test_a_deployment_s_update_pods_are_its_new_replica_set_s() -> None:
    web, old, new = _web_updating()
    old_pod, new_pod = _owned(_pod("web-old-0"), old), _owned(_pod("web-new-0"), new)
    orphan = _pod("web-orphan")
    pods = [old_pod, new_pod, orphan]
    assert update_pods(web, "Deployment", pods, [old, new]) == [new_pod]
    # No ReplicaSet of the current template (none read): not to be told, every pod.
    assert update_pods(web, "Deployment", pods, [old]) == pods
    assert update_pods(web, "Deployment", pods, []) == pods


def test_an_old_copy_s_crash_loop_leaves_someone_else_s_update_under_way() -> None:
    web, old, new = _web_updating()
    crashing_old = _owned(_pod("web-old-1", crash=True), old)
    pods = [_owned(_pod("web-old-0"), old), crashing_old, _owned(_pod("web-new-0"), new)]
    assert rolling(web, pods, [old, new])
    # The update's own copy crash-looping: it failed, the table decides.
    failed = [_owned(_pod("web-old-0"), old), _owned(_pod("web-new-0", crash=True), new)]
    assert not rolling(web, failed, [old, new])


def test_a_statefulset_s_update_pods_are_those_at_its_update_revision() -> None:
    """With podManagementPolicy Parallel (tests/unit/test_refresh_update_pods_ordered.py pins
    OrderedReady's)."""
    db = statefulset("db", container("runner", IMAGE), replicas=2)
    db["spec"]["podManagementPolicy"] = "Parallel"
    db["status"] = {"updateRevision": "db-b", "currentRevision": "db-a"}
    new = _pod("db-1", labels={"controller-revision-hash": "db-b"})
    old = _pod("db-0", labels={"controller-revision-hash": "db-a"}, crash=True)
    bare = _pod("db-2")
    assert update_pods(db, "StatefulSet", [old, new, bare], []) == [new]
    del db["status"]["updateRevision"]
    assert update_pods(db, "StatefulSet", [old, new, bare], []) == [old, new, bare]


def test_a_daemonset_s_update_pods_are_those_at_its_template_generation() -> None:
    agent = daemonset("agent", container("runner", IMAGE))
    agent["metadata"]["annotations"] = {"deprecated.daemonset.template.generation": "3"}
    new = _pod("agent-a", labels={"pod-template-generation": "3"})
    old = _pod("agent-b", labels={"pod-template-generation": "2"}, crash=True)
    bare = _pod("agent-c")
    assert update_pods(agent, "DaemonSet", [old, new, bare], []) == [new]
    agent["metadata"]["annotations"] = {}
    assert update_pods(agent, "DaemonSet", [old, new, bare], []) == [old, new, bare]
