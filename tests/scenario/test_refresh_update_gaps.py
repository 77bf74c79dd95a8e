"""refresh and someone else's update caught in a gap its controller's status does not show: old
copies gone from the counts, their replacements not made yet. kubectl still waits for the
rollout, and refresh leaves it alone (`in-progress`, exit 0) rather than judge it finished,
restart on top of it or refuse it.

kubectl is the oracle of the rollout; the fake API server holds the workloads in the shapes
their controllers write in that gap, and a real docker-registry serves the tag.
"""

import copy
from typing import Any

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.scenario.test_refresh_kinds import NODES, RUNNER, _stored, _workload
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import (
    complete_but_unavailable,
    container,
    daemonset,
    deployment,
    statefulset,
)
from truegreen.refresh.updates import POD_TEMPLATE_GENERATION, REVISION_HASH, TEMPLATE_GENERATION

Obj = dict[str, Any]
NS = "train"
LONG_AGO = "2024-01-01T00:00:00Z"

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _web_recreating(env: RefreshEnv, policy: str, recorded: str) -> None:
    """Deployment `web`, `strategy: Recreate`, one copy: the operator's `kubectl set image`
    to r/web:v2 is picked up, its old copy terminating (its grace period running), no new
    ReplicaSet made yet. recreate.go `rolloutRecreate` makes the new ReplicaSet only once no
    old copy runs (`oldPodsRunning`), so no NewReplicaSetCreated is written; sync.go
    `calculateStatus` counts no updated copy (no new ReplicaSet) and no terminating one (the
    old ReplicaSet counts active pods only); progress.go `syncRolloutStatus` then finds
    `isCompleteDeployment` (0 == 0, the reason NewReplicaSetAvailable) and keeps the
    condition as it was (kubernetes#115538)."""
    web = deployment(
        "web", container("runner", env.image("r/web", "v1"), policy), annotations={RUNNER: recorded}
    )
    web["spec"]["strategy"] = {"type": "Recreate"}
    env.server.add(web)
    stored = _stored(env, "Deployment", "web")
    old = copy.deepcopy(env.simulator.make_pod(stored, "web-old-0"))
    old["metadata"] |= {
        "deletionTimestamp": "2099-01-01T00:00:00Z",
        "deletionGracePeriodSeconds": 30,
    }
    env.server.add(old)
    owner = old["metadata"]["ownerReferences"][0]["name"]
    replica_set = _stored(env, "ReplicaSet", owner)
    replica_set["spec"]["replicas"] = 0
    replica_set["status"] = {"observedGeneration": 2, "replicas": 0}
    env.server.update_object(replica_set)
    stored = _stored(env, "Deployment", "web")
    stored["spec"]["template"]["spec"]["containers"][0]["image"] = env.image("r/web", "v2")
    stored["metadata"]["generation"] = 2
    stored["status"] = {
        "observedGeneration": 2,
        "replicas": 0,
        "updatedReplicas": 0,
        "readyReplicas": 0,
        "availableReplicas": 0,
        "unavailableReplicas": 1,
        "conditions": complete_but_unavailable(owner, LONG_AGO),
    }
    env.server.update_object(stored)
    env.simulator.remember(_stored(env, "Deployment", "web"))


@pytest.mark.parametrize("policy", ["IfNotPresent", "Always"])
def test_a_recreate_rollout_whose_old_copies_terminate_is_left_in_progress(
    env: RefreshEnv, policy: str
) -> None:
    """kubectl waits for the new copy; refresh neither refuses the operator's rollout (a false
    exit 2 under IfNotPresent) nor restarts on top of it (under Always)."""
    recorded = env.registry.push_image("r/web", "v1", content="v1")
    env.registry.push_image("r/web", "v2", content="v2")
    _web_recreating(env, policy, recorded)
    oracle = kubectl(
        env.kubeconfig, "-n", NS, "rollout", "status", "deployment/web", "--watch=false"
    )
    assert oracle.stdout.strip() == (
        'Waiting for deployment "web" rollout to finish: 0 out of 1 new replicas have been '
        "updated..."
    ), oracle.stderr
    result = env.tick("--rollout-timeout", "1")
    found = _workload(result.json(), "web")
    assert (found["outcome"], result.exit_code) == ("in-progress", 0), found["reason"]
    assert found["reason"] == "a rollout is in progress; not touching it"
    assert env.restarts("web") == 0


def _changed(workload: Obj) -> Obj:
    """`workload` with the operator's change to its template (`kubectl set env MODE=train`)."""
    new = copy.deepcopy(workload)
    new["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "MODE", "value": "train"}]
    new["metadata"]["generation"] = 2
    return new


def _agent_between_copies(env: RefreshEnv, recorded: str) -> str:
    """DaemonSet `agent` on two machines, its update half done: node-1 runs the new copy,
    node-2's old copy is gone and its new one not made yet (daemon_controller.go
    `podsShouldBeOnNode` makes none while the old copy terminates, and a later sync makes it).
    `updateDaemonSetStatus` counts node-2 in no count but desiredNumberScheduled."""
    agent = daemonset("agent", container("runner", env.image("r/web", "stable")))
    agent["metadata"]["annotations"] = {RUNNER: recorded}
    env.simulator.settle(agent, nodes=NODES)
    new = _changed(_stored(env, "DaemonSet", "agent"))
    new["metadata"]["annotations"][TEMPLATE_GENERATION] = "2"
    env.server.delete_object("Pod", "agent-node-1", NS)
    env.server.delete_object("Pod", "agent-node-2", NS)
    pod = env.simulator.make_pod(new, "agent-node-1")
    pod["metadata"]["labels"][POD_TEMPLATE_GENERATION] = "2"
    env.server.add(pod)
    new["status"] = {
        "observedGeneration": 2,
        "desiredNumberScheduled": 2,
        "currentNumberScheduled": 1,
        "numberMisscheduled": 0,
        "numberReady": 1,
        "updatedNumberScheduled": 1,
        "numberAvailable": 1,
        "numberUnavailable": 1,
    }
    env.server.update_object(new)
    env.simulator.remember(_stored(env, "DaemonSet", "agent"))
    return "daemonset/agent"


def _db_between_copies(env: RefreshEnv, recorded: str) -> str:
    """StatefulSet `agent`, three copies, its update replacing the copies numbered 1 and up
    (partition 1): agent-2 updated, agent-1 deleted and not made again yet
    (stateful_set_control.go makes it in a later sync). `computeReplicaStatus` counts the
    copies there are: replicas 2, updated 1."""
    db = statefulset("agent", container("runner", env.image("r/web", "stable")), replicas=3)
    db["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 1
    db["metadata"]["annotations"] = {RUNNER: recorded}
    env.simulator.settle(db, nodes=NODES)
    stored = _stored(env, "StatefulSet", "agent")
    new = _changed(stored)
    current = stored["status"]["currentRevision"]
    env.server.delete_object("Pod", "agent-2", NS)
    env.server.delete_object("Pod", "agent-1", NS)
    pod = env.simulator.make_pod(new, "agent-2")
    pod["metadata"]["labels"][REVISION_HASH] = "agent-r2"
    env.server.add(pod)
    new["status"] = {
        "observedGeneration": 2,
        "replicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 2,
        "currentReplicas": 1,
        "updatedReplicas": 1,
        "currentRevision": current,
        "updateRevision": "agent-r2",
        "collisionCount": 0,
    }
    env.server.update_object(new)
    return "statefulset/agent"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            _agent_between_copies,
            'Waiting for daemon set "agent" rollout to finish: 1 out of 2 new pods have been '
            "updated...",
        ),
        (_db_between_copies, "Waiting for 1 pods to be ready..."),
    ],
    ids=["daemonset", "statefulset-partition"],
)
def test_an_update_between_deleting_a_copy_and_making_it_again_is_left_in_progress(
    env: RefreshEnv, make: Any, said: str
) -> None:
    """The copy deleted last drops out of the counts the update is read from; its controller
    writes no condition that says why a copy is missing, so the update is under way until
    every copy wanted is updated."""
    recorded = env.registry.push_image("r/web", "stable", content="v1")
    target = make(env, recorded)
    env.registry.push_image("r/web", "stable", content="v2")
    oracle = kubectl(env.kubeconfig, "-n", NS, "rollout", "status", target, "--watch=false")
    assert oracle.stdout.strip() == said, oracle.stderr
    result = env.tick("--rollout-timeout", "1", "--dry-run")
    found = _workload(result.json(), "agent")
    assert (found["outcome"], result.exit_code) == ("in-progress", 0), found["reason"]
