"""A Deployment short of an updated copy is no update under way only where its controller says
why the copy is missing (ReplicaFailure True) and no copy of an older template is still there,
terminating ones included: a Recreate rollout keeps Progressing NewReplicaSetAvailable while its
old copies terminate and before its new ReplicaSet is made (recreate.go `rolloutRecreate`,
progress.go `isCompleteDeployment`; kubernetes#115538), and a terminating copy is counted in no
status (replica_set.go `calculateStatus` counts active pods). Pinned value by value."""

from typing import Any

import pytest

from tests.support.refresh_kit import container, deployment
from truegreen.refresh.updates import updating

Obj = dict[str, Any]
IMAGE = "registry.example.com/team/runner:stable"
QUOTA = 'pods "web-7d9c5b-x2x9z" is forbidden: exceeded quota: train-quota'
FAILED = {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": QUOTA}
COMPLETE = {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}


def _web(failure: Obj | None = FAILED, *, updated: int = 1) -> Obj:
    """Deployment `web`, 2 copies wanted, `updated` of them there and updated, Progressing
    complete, with the ReplicaFailure condition given."""
    web = deployment("web", container("runner", IMAGE))
    web["spec"]["replicas"] = 2
    conditions = [COMPLETE, *([failure] if failure else [])]
    web["status"] = {
        "observedGeneration": 1,
        "replicas": updated,
        "updatedReplicas": updated,
        "readyReplicas": updated,
        "availableReplicas": updated,
        "conditions": conditions,
    }
    return web


def _replica_set(uid: str, template: Obj) -> Obj:
    """A ReplicaSet of `template`, its hash label added as sync.go `getNewReplicaSet` adds it."""
    labeled = {**template, "metadata": {**template.get("metadata", {})}}
    labeled["metadata"]["labels"] = {
        **labeled["metadata"].get("labels", {}),
        "pod-template-hash": uid,
    }
    return {"metadata": {"name": f"web-{uid}", "uid": uid}, "spec": {"template": labeled}}


def _older_template(web: Obj) -> Obj:
    template: Obj = {**web["spec"]["template"]}
    template["spec"] = {**template["spec"], "containers": [container("runner", IMAGE + "-old")]}
    return template


def _pod(owner: str, *, terminating: bool = False, phase: str = "Running") -> Obj:
    metadata: Obj = {
        "name": f"web-{owner}-0",
        "ownerReferences": [{"kind": "ReplicaSet", "uid": owner, "controller": True}],
    }
    if terminating:
        metadata["deletionTimestamp"] = "2026-12-04T12:00:00Z"
    return {"metadata": metadata, "status": {"phase": phase}}


def _case(
    web: Obj, pods: list[Obj], *, new: bool = True, old: bool = True
) -> tuple[Obj, list[Obj], list[Obj]]:
    sets = [_replica_set("new", web["spec"]["template"])] if new else []
    sets += [_replica_set("old", _older_template(web))] if old else []
    return web, pods, sets


@pytest.mark.parametrize(
    ("case", "under_way"),
    [
        # The quota said, every copy there the new template's: no update.
        (_case(_web(), [_pod("new")]), False),
        # ... an old copy terminating beside it (a Recreate rollout's old copies going, or a
        # rollout's last old copy): under way.
        (_case(_web(), [_pod("new"), _pod("old", terminating=True)]), True),
        # ... an old copy running and not counted yet: under way.
        (_case(_web(), [_pod("new"), _pod("old")]), True),
        # ... an old copy finished long ago (Failed: evicted): nothing still there.
        (_case(_web(), [_pod("new"), _pod("old", phase="Failed")]), False),
        (_case(_web(), [_pod("new"), _pod("old", phase="Succeeded")]), False),
        # No ReplicaSet of the current template yet (Recreate before making it): every copy
        # there is an older one.
        (_case(_web(updated=0), [_pod("old", terminating=True)], new=False), True),
        (_case(_web(updated=0), [_pod("new")], new=False), True),
        (_case(_web(updated=0), [], new=False), False),
        # A copy no ReplicaSet of the Deployment's controls: not the new template's.
        (_case(_web(), [_pod("new"), _pod("stranger")]), True),
        # Nothing said of the missing copy: under way, whatever copies are there.
        (_case(_web(None), [_pod("new")]), True),
        (_case(_web({**FAILED, "status": "False"}), [_pod("new")]), True),
        (_case(_web(None, updated=0), [], new=False), True),
        # Every copy wanted updated: no copy missing, an old copy terminating is no update
        # (kubectl's "pending termination" counts status.replicas).
        (_case(_web(None, updated=2), [_pod("new"), _pod("old", terminating=True)]), False),
    ],
    ids=[
        "quota-new-copies",
        "quota-old-terminating",
        "quota-old-running",
        "quota-old-failed",
        "quota-old-succeeded",
        "quota-no-new-set-terminating",
        "quota-no-new-set-any-copy",
        "quota-no-new-set-no-copy",
        "quota-stranger",
        "no-failure",
        "failure-cleared",
        "no-failure-no-copy",
        "every-copy-updated",
    ],
)
def test_a_missing_copy_is_no_update_only_where_said_and_no_older_copy_is_there(
    case: tuple[Obj, list[Obj], list[Obj]], under_way: bool
) -> None:
    web, pods, replica_sets = case
    assert updating(web, "Deployment", pods, replica_sets) is under_way
