"""refresh and a StatefulSet whose update an old copy's crash loop stops for good: with the
default podManagementPolicy (OrderedReady) its controller waits on every copy that is not
Running and Ready, whatever its revision, before it replaces any (stateful_set_control.go
`processReplica`: `!isRunningAndReady(replicas[i]) && monotonic` returns before the rolling
update; the StatefulSet documentation's "forced rollback", kubernetes#67250). The update never
moves, so it is not left `in-progress` for ever: the table judges it. Under
`podManagementPolicy: Parallel` the controller replaces that copy (`updateStatefulSet` deletes
the highest copy not at the update revision), so the update is under way.

kubectl is the oracle of the rollout; the fake API server holds the StatefulSet in the shape its
controller writes, and a real docker-registry serves the tag.
"""

import copy
from typing import Any

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.scenario.test_refresh_kinds import NODES, RUNNER, _stored, _workload
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import container, statefulset
from truegreen.refresh.updates import REVISION_HASH

Obj = dict[str, Any]
NS = "train"

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _copy(env: RefreshEnv, workload: Obj, name: str, revision: str, behaviour: str) -> None:
    """Copy `name` of `workload`'s template at `revision`, running as `behaviour` says."""
    env.server.delete_object("Pod", name, NS)
    pod = env.simulator.make_pod(workload, name, behaviour)
    pod["metadata"]["labels"][REVISION_HASH] = revision
    env.server.add(pod)


def _db_stalled_by_an_old_copy(env: RefreshEnv, recorded: str, policy: str) -> None:
    """StatefulSet `db`, two copies, the operator's `kubectl set env FIX=1` picked up (update
    revision db-r2), and db-0, an old copy (db-r1), crash-looping: no copy replaced yet
    (`computeReplicaStatus`: updated 0, current 2)."""
    db = statefulset("db", container("runner", env.image("r/web", "stable")), replicas=2)
    db["metadata"]["annotations"] = {RUNNER: recorded}
    db["spec"]["podManagementPolicy"] = policy
    env.simulator.settle(db, nodes=NODES)
    stored = _stored(env, "StatefulSet", "db")
    for ordinal, behaviour in ((0, "crash"), (1, "ok")):
        _copy(env, stored, f"db-{ordinal}", "db-r1", behaviour)
    fixed = copy.deepcopy(stored)
    fixed["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "FIX", "value": "1"}]
    fixed["metadata"]["generation"] = 2
    fixed["status"] = {
        "observedGeneration": 2,
        "replicas": 2,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "currentReplicas": 2,
        "updatedReplicas": 0,
        "currentRevision": "db-r1",
        "updateRevision": "db-r2",
        "collisionCount": 0,
    }
    env.server.update_object(fixed)


@pytest.mark.parametrize(
    ("policy", "outcome"),
    [("OrderedReady", "planned"), ("Parallel", "in-progress")],
)
def test_an_old_copy_s_crash_loop_stops_an_ordered_statefulset_s_update(
    env: RefreshEnv, policy: str, outcome: str
) -> None:
    """The tag moves while db-0 crash-loops: kubectl waits; OrderedReady's update never moves,
    so the table decides (a restart, planned here as a dry run); Parallel's replaces db-0."""
    recorded = env.registry.push_image("r/web", "stable", content="v1")
    _db_stalled_by_an_old_copy(env, recorded, policy)
    env.registry.push_image("r/web", "stable", content="v2")
    oracle = kubectl(
        env.kubeconfig, "-n", NS, "rollout", "status", "statefulset/db", "--watch=false"
    )
    assert oracle.stdout.strip() == "Waiting for 1 pods to be ready...", oracle.stderr
    result = env.tick("--rollout-timeout", "1", "--dry-run")
    found = _workload(result.json(), "db")
    assert (found["outcome"], result.exit_code) == (outcome, 0), found["reason"]
