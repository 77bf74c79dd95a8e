"""refresh and a workload short of a copy its controller cannot make (a quota reached), long
after its last rollout completed: a Deployment's controller says why (ReplicaFailure), so no
update is under way and the table judges it (never `in-progress` for ever), its reason
(`FailedCreate: … exceeded quota …`) quoted where refresh says why it did not end; a
StatefulSet's or DaemonSet's says nothing refresh reads, so theirs is left `in-progress`.

kubectl is the oracle of the rollout (it still waits for the copy); the fake API server holds
the workloads in the shapes their controllers write, and a real docker-registry serves the tag.
"""

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.scenario.test_refresh_kinds import NODES, RUNNER, _annotations, _stored, _workload
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import (
    complete_but_unavailable,
    container,
    daemonset,
    deployment,
    statefulset,
)
from truegreen.refresh.annotations import ATTEMPTS

NS = "train"
LONG_AGO = "2024-01-01T00:00:00Z"
QUOTA = (
    'pods "web-{hash}-x2x9z" is forbidden: exceeded quota: train-quota, requested: '
    "nvidia.com/gpu=1, used: nvidia.com/gpu=8, limited: nvidia.com/gpu=8"
)

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _failure(message: str) -> dict[str, str]:
    """The ReplicaFailure condition replica_set.go `manageReplicas` leaves after a failed
    create (`calculateStatus`: reason FailedCreate, the API server's refusal as message)."""
    return {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": message,
        "lastTransitionTime": LONG_AGO,
    }


def _web_short_of_a_copy(env: RefreshEnv, recorded: str) -> str:
    """Deployment `web`, 2 copies wanted, 1 made: its ReplicaSet's create of the second was
    refused by a quota. The Deployment controller's status (progress.go `syncRolloutStatus`):
    every copy it has updated, Progressing kept at NewReplicaSetAvailable (`isCompleteDeployment`
    skips any further estimate), Available False (MinimumReplicasUnavailable), and the
    ReplicaSet's ReplicaFailure copied over (`getReplicaFailures`). Returns the quota's words."""
    web = deployment(
        "web", container("runner", env.image("r/web", "stable")), annotations={RUNNER: recorded}
    )
    web["spec"]["replicas"] = 2
    env.server.add(web)
    stored = _stored(env, "Deployment", "web")
    env.simulator.remember(stored)
    pod = env.simulator.make_pod(stored, "web-0")
    env.server.add(pod)
    owner = pod["metadata"]["ownerReferences"][0]["name"]
    quota = QUOTA.format(hash=owner.removeprefix("web-"))
    replica_set = _stored(env, "ReplicaSet", owner)
    replica_set["status"] = {
        "observedGeneration": 1,
        "replicas": 1,
        "fullyLabeledReplicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "conditions": [_failure(quota)],
    }
    env.server.update_object(replica_set)
    stored["status"] = {
        "observedGeneration": stored["metadata"]["generation"],
        "replicas": 1,
        "updatedReplicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "unavailableReplicas": 1,
        "conditions": [*complete_but_unavailable(owner, LONG_AGO), _failure(quota)],
    }
    env.server.update_object(stored)
    return quota


def _db_short_of_a_copy(env: RefreshEnv, recorded: str) -> None:
    """StatefulSet `db`, 2 copies wanted, `db-1` refused by a quota: the controller counts the
    copy it has (stateful_set_control.go `computeReplicaStatus`: replicas 1) and, that copy
    updated and ready, makes currentRevision the updateRevision (stateful_set_utils.go
    `completeRollingUpdate` compares status.replicas)."""
    db = statefulset("db", container("runner", env.image("r/web", "stable")), replicas=2)
    db["metadata"]["annotations"] = {RUNNER: recorded}
    env.simulator.settle(db, nodes=NODES)
    env.server.delete_object("Pod", "db-1", NS)
    stored = _stored(env, "StatefulSet", "db")
    stored["status"] |= {
        "replicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "currentReplicas": 1,
        "updatedReplicas": 1,
    }
    env.server.update_object(stored)


def _agent_short_of_a_copy(env: RefreshEnv, recorded: str) -> None:
    """DaemonSet `agent` on three machines, the copy for the third refused by a quota
    (daemon_controller.go `syncNodes`, an Event FailedCreate): desired 3, current 2, both of
    them updated and available (`updateDaemonSetStatus`)."""
    agent = daemonset("agent", container("runner", env.image("r/web", "stable")))
    agent["metadata"]["annotations"] = {RUNNER: recorded}
    env.simulator.settle(agent, nodes=NODES)
    stored = _stored(env, "DaemonSet", "agent")
    stored["status"] |= {"desiredNumberScheduled": 3, "numberUnavailable": 1}
    env.server.update_object(stored)


def test_a_deployment_short_of_a_copy_it_cannot_make_is_judged_not_left_in_progress(
    env: RefreshEnv,
) -> None:
    """Its last rollout completed and nobody updates it; the tag moves. kubectl still waits for
    the missing copy, but its controller says why the copy is missing (ReplicaFailure) and no
    copy of an older template is there: no update is under way, and the table decides (a
    restart, planned here as a dry run), on this tick and every later one alike."""
    recorded = env.registry.push_image("r/web", "stable", content="v1")
    _web_short_of_a_copy(env, recorded)
    oracle = kubectl(
        env.kubeconfig, "-n", NS, "rollout", "status", "deployment/web", "--watch=false"
    )
    assert oracle.stdout.strip() == (
        'Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been '
        "updated..."
    ), oracle.stderr
    env.registry.push_image("r/web", "stable", content="v2")
    for _ in range(2):
        result = env.tick("--dry-run")
        found = _workload(result.json(), "web")
        assert (found["outcome"], result.exit_code) == ("planned", 0), found["reason"]
        assert found["reason"] == f"would restart: recorded {recorded[:19]}… is not the newest"
        assert env.restarts("web") == 0


@pytest.mark.parametrize(
    ("kind", "name", "said"),
    [
        ("StatefulSet", "db", "Waiting for 1 pods to be ready..."),
        (
            "DaemonSet",
            "agent",
            'Waiting for daemon set "agent" rollout to finish: 2 out of 3 new pods have been '
            "updated...",
        ),
    ],
    ids=["statefulset", "daemonset"],
)
def test_a_statefulset_or_daemonset_short_of_a_copy_is_left_in_progress(
    env: RefreshEnv, kind: str, name: str, said: str
) -> None:
    """Their controllers write no condition for a copy they could not make (only an Event,
    which refresh does not read), and leave a copy deleted by an update out of their counts
    until they make it again: a missing copy cannot be told from an update replacing it, so
    it is an update under way, left alone."""
    recorded = env.registry.push_image("r/web", "stable", content="v1")
    (_db_short_of_a_copy if name == "db" else _agent_short_of_a_copy)(env, recorded)
    target = f"{kind.lower()}/{name}"
    oracle = kubectl(env.kubeconfig, "-n", NS, "rollout", "status", target, "--watch=false")
    assert oracle.stdout.strip() == said, oracle.stderr
    env.registry.push_image("r/web", "stable", content="v2")
    result = env.tick("--dry-run")
    found = _workload(result.json(), name)
    assert (found["outcome"], result.exit_code) == ("in-progress", 0), found["reason"]
    assert env.restarts(name) == 0


def test_the_quota_that_keeps_a_copy_from_being_made_is_quoted(env: RefreshEnv) -> None:
    """The copy `web` has already runs the tag's newest digest (the recorded one is older):
    nothing to restart, but the rollout is never complete while the second copy cannot be
    made, so nothing is recorded. The failure counted says why, in the cluster's words."""
    recorded = env.registry.push_image("r/web", "stable", content="v1")
    env.registry.push_image("r/web", "stable", content="v2")
    quota = _web_short_of_a_copy(env, recorded)
    result = env.tick("--rollout-timeout", "1")
    found = _workload(result.json(), "web")
    assert (found["outcome"], result.exit_code) == ("rollout-failed", 2)
    assert found["reason"] == (
        "the pods run the newest digest, but timed out after 1s (1 of 2 copies updated; the "
        f"cluster says FailedCreate: {quota})"
    )
    annotations = _annotations(env, "Deployment", "web")
    assert annotations[RUNNER] == recorded
    assert annotations[ATTEMPTS].startswith("1 ")
    assert env.restarts("web") == 0
