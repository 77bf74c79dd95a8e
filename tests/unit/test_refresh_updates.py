"""Whose update a Deployment is rolling out (refresh/updates.py): only a restart, or someone
else's change, told by the templates of the ReplicaSets its copies still run.

The shapes are the Deployment controller's: each ReplicaSet holds the whole template it rolled
out with `pod-template-hash` added to its labels, controlled by the Deployment, and each copy
is controlled by its ReplicaSet (pkg/controller/deployment/sync.go `getNewReplicaSet`,
apimachinery metav1.NewControllerRef)."""

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.refresh_kit import container, deployment
from tests.support.rollout import controller_reference
from truegreen.refresh.template import RESTARTED_AT
from truegreen.refresh.updates import only_restarted

Obj = dict[str, Any]
IMAGE = "registry.example.com/team/web:stable"
DIGEST = "sha256:" + "4" * 64


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
    ("change", "restart"),
    [
        (restarted, True),  # refresh's --mode restart, or `kubectl rollout restart`
        (_pinned, True),  # refresh's --mode pin: the tag's digest pinned
        (_both, True),
        (env_set, False),  # `kubectl set env`: someone else's change
        (_tag_moved, False),  # another tag
        (_other_repository, False),
        (_restart_and_label, False),  # a restart beside another change is not only a restart
    ],
)
def test_an_update_is_a_restart_only_where_the_older_copies_differ_only_as_a_restart(
    change: Callable[[Obj], None], restart: bool
) -> None:
    web, pods, replica_sets = mid_update(change)
    assert only_restarted(web, pods, replica_sets) is restart


def test_what_cannot_be_told_is_no_restart() -> None:
    """No copy on an older template (nothing to compare), or a copy whose ReplicaSet is not
    among the Deployment's (an orphan, another owner's): the update's author is not known, and
    kubectl's in-progress stands."""
    web, pods, replica_sets = mid_update(restarted)
    assert only_restarted(web, pods[3:], replica_sets) is False
    assert only_restarted(web, pods, replica_sets[1:]) is False
    assert only_restarted(web, [], replica_sets) is False


def test_copies_on_their_way_out_are_not_compared() -> None:
    """A terminating copy of someone else's older template is going: what stays decides."""
    web, pods, replica_sets = mid_update(restarted)
    other = _replica_set(web, {**web["spec"]["template"], "spec": {"containers": []}}, "x1y2z3")
    leaving = _pod(other, 0)
    leaving["metadata"]["deletionTimestamp"] = "2026-12-04T11:00:00Z"
    assert only_restarted(web, [*pods, leaving], [*replica_sets, other]) is True
