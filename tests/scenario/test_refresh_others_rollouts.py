"""refresh and a rollout someone else has under way: left alone (`in-progress`, nothing written,
no restart over it) in every state `kubectl rollout status` calls unfinished and the workload's
controller shows an update in, for Deployments, StatefulSets and DaemonSets alike; refresh's
own restart still rolling is its table's to decide.

kubectl is the oracle of each state (pkg/polymorphichelpers/rollout_status.go
`DeploymentStatusViewer`, `StatefulSetStatusViewer`, `DaemonSetStatusViewer`); the fake API
server's rollout simulator plays the controllers, and a real docker-registry serves the tag.
"""

import copy
from typing import Any

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from tests.support.rollout import NO_DEADLINE
from truegreen.refresh.annotations import PENDING, RESTARTED

NS = "train"
IN_PROGRESS = (0, "in-progress", "a rollout is in progress; not touching it")

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _only(result: Any) -> dict[str, Any]:
    workloads = result.json()["workloads"]
    assert len(workloads) == 1, workloads
    return dict(workloads[0])


def _stored(env: RefreshEnv, kind: str, name: str) -> dict[str, Any]:
    stored = env.server.get_object(kind, name, NS)
    assert stored is not None
    return stored


def _oracle(env: RefreshEnv, target: str) -> str:
    """kubectl's verdict on the rollout of `target`, as it prints it without waiting."""
    said = kubectl(env.kubeconfig, "-n", NS, "rollout", "status", target, "--watch=false")
    return (said.stdout + said.stderr).strip()


def _four_available_copies(env: RefreshEnv, name: str, strategy: dict[str, Any]) -> None:
    """A Deployment of four copies on what the tag names now, each Ready for an hour, whose new
    copies count as available only an hour after they are Ready (minReadySeconds 3600, as a
    training server that loads for long): an update someone makes stays under way."""
    web = deployment(name, container("runner", env.image("r/web", "stable")))
    web["spec"] |= {"replicas": 4, "minReadySeconds": 3600, "strategy": strategy}
    web["status"] |= {"replicas": 4, "updatedReplicas": 4, "readyReplicas": 4}
    web["status"] |= {"availableReplicas": 4}
    env.server.add(web)
    stored = _stored(env, "Deployment", name)
    env.simulator.remember(stored)
    for index in range(4):
        pod = copy.deepcopy(env.simulator.make_pod(stored, f"{name}-{index}"))
        for condition in pod["status"]["conditions"]:
            condition["lastTransitionTime"] = "2020-01-01T00:00:00Z"  # Ready long ago
        env.server.add(pod)


def _left_alone(env: RefreshEnv, name: str, content: str = "v2") -> None:
    """The tag moves (to an image of `content`) and a tick runs: in-progress, no write, no
    restart over the rollout."""
    kind = {"db": "StatefulSet", "agent": "DaemonSet"}.get(name, "Deployment")
    restarts = env.restarts(name)
    annotations = _stored(env, kind, name)["metadata"].get("annotations")
    env.registry.push_image("r/web", "stable", content=content)
    result = env.tick("--rollout-timeout", "1")
    found = _only(result)
    assert (result.exit_code, found["outcome"], found["reason"]) == IN_PROGRESS
    assert found["writes"] == []
    assert env.restarts(name) == restarts
    assert _stored(env, kind, name)["metadata"].get("annotations") == annotations


@pytest.mark.parametrize(
    ("strategy", "reads", "said"),
    [
        (
            # Every new copy made beside the old ones (maxSurge 100%), which stay until the new
            # are available (maxUnavailable 0): updatedReplicas is replicas, status.replicas
            # is more.
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}},
            0,
            'Waiting for deployment "web" rollout to finish: 4 old replicas are pending '
            "termination...",
        ),
        (
            # Recreate (recreate.go): the old copies go first, then the new start; none is
            # available for an hour.
            {"type": "Recreate"},
            2,
            'Waiting for deployment "web" rollout to finish: 0 of 4 updated replicas are '
            "available...",
        ),
    ],
    ids=["old-copies-pending-termination", "updated-copies-not-available"],
)
def test_someone_else_s_rollout_of_a_deployment_with_every_copy_updated_is_left_alone(
    env: RefreshEnv, strategy: dict[str, Any], reads: int, said: str
) -> None:
    """A Deployment with a progress deadline (the API server's 600s) whose template someone
    changed (`kubectl set env`): every copy is updated, but the old copies still run, or the
    new ones are not available yet. kubectl says the rollout is unfinished, and the controller
    says it is under way (its Progressing condition: ReplicaSetUpdated, progress.go
    `syncRolloutStatus`). refresh leaves it in progress: no restart over it, no rollout-failed
    (exit 2), no attempt counted against its own flap guard."""
    env.registry.push_image("r/web", "stable", content="v1")
    _four_available_copies(env, "web", strategy)
    assert _only(env.tick())["outcome"] == "converged"
    changed = kubectl(env.kubeconfig, "-n", NS, "set", "env", "deployment/web", "MODE=train")
    assert changed.returncode == 0, changed.stderr
    for _ in range(reads):
        kubectl(env.kubeconfig, "-n", NS, "get", "pods")  # the old copies' grace period ends
    assert _oracle(env, "deployment/web") == said
    progressing = _stored(env, "Deployment", "web")["status"]["conditions"]
    assert [(c["type"], c["reason"]) for c in progressing] == [("Progressing", "ReplicaSetUpdated")]
    _left_alone(env, "web")


@pytest.mark.parametrize(
    ("make", "target", "said"),
    [
        (
            lambda image: statefulset("db", container("runner", image), replicas=2),
            "statefulset/db",
            "Waiting for partitioned roll out to finish: 0 out of 2 new pods have been updated...",
        ),
        (
            lambda image: daemonset("agent", container("runner", image)),
            "daemonset/agent",
            'Waiting for daemon set "agent" rollout to finish: 0 out of 2 new pods have been '
            "updated...",
        ),
    ],
    ids=["statefulset", "daemonset"],
)
def test_someone_else_s_update_of_a_statefulset_or_daemonset_is_left_alone(
    env: RefreshEnv, make: Any, target: str, said: str
) -> None:
    """Someone changes the template (`kubectl set env`) and the controller has picked the update
    up (observedGeneration caught up), its first new copy not started yet. kubectl calls it
    unfinished; neither controller has a progress deadline, so nothing will say it stopped.
    refresh does not take it for its own stopped restart: no restart over it, no wait of a
    whole --rollout-timeout, no rollout-failed (exit 2), no attempt counted."""
    workload = make(env.image("r/web", "stable"))
    name = workload["metadata"]["name"]
    env.registry.push_image("r/web", "stable", content="v1")
    env.simulator.settle(workload, nodes=("node-1", "node-2"))
    assert _only(env.tick())["outcome"] == "converged"
    env.simulator.behaviour[name] = "stall"  # its new copy never starts
    changed = kubectl(env.kubeconfig, "-n", NS, "set", "env", target, "MODE=train")
    assert changed.returncode == 0, changed.stderr
    assert _oracle(env, target) == said
    _left_alone(env, name)


def _four_copies_without_deadline(env: RefreshEnv) -> None:
    """A Deployment `web` of four copies with no progress deadline, whose update keeps every
    old copy until a new one is ready (maxSurge 1, maxUnavailable 0), all on what the tag names
    now."""
    web = deployment("web", container("runner", env.image("r/web", "stable")))
    web["spec"] |= {"replicas": 4, "progressDeadlineSeconds": NO_DEADLINE}
    web["spec"]["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    web["status"] |= {"replicas": 4, "updatedReplicas": 4, "readyReplicas": 4}
    web["status"] |= {"availableReplicas": 4}
    env.server.add(web)
    stored = _stored(env, "Deployment", "web")
    env.simulator.remember(stored)
    for index in range(4):
        env.server.add(env.simulator.make_pod(stored, f"web-{index}"))


def test_someone_else_s_restart_of_a_deployment_with_no_progress_deadline_is_left_alone(
    env: RefreshEnv,
) -> None:
    """`kubectl rollout restart` (its own restartedAt stamp) on a Deployment with no progress
    deadline, its new copies not Ready yet: kubectl calls it unfinished. The copies still on
    the older template differ from the Deployment's only by restartedAt, as a restart of
    refresh's own would, but refresh has no record of a restart of its own: someone else's
    rollout, which refresh does not restart over."""
    env.registry.push_image("r/web", "stable", content="v1")
    _four_copies_without_deadline(env)
    assert _only(env.tick())["outcome"] == "converged"
    env.simulator.behaviour["web"] = "deadline"  # its new copies take their time
    restarted = kubectl(env.kubeconfig, "-n", NS, "rollout", "restart", "deployment/web")
    assert restarted.returncode == 0, restarted.stderr
    assert _oracle(env, "deployment/web") == (
        'Waiting for deployment "web" rollout to finish: 1 out of 4 new replicas have been '
        "updated..."
    )
    _left_alone(env, "web")


@pytest.mark.parametrize(
    ("kind", "target", "behaviour", "said"),
    [
        (
            "Deployment",
            "deployment/web",
            "deadline",
            'Waiting for deployment "web" rollout to finish: 1 out of 4 new replicas have been '
            "updated...",
        ),
        (
            "StatefulSet",
            "statefulset/db",
            "stall",
            "Waiting for partitioned roll out to finish: 0 out of 2 new pods have been updated...",
        ),
        (
            "DaemonSet",
            "daemonset/agent",
            "stall",
            'Waiting for daemon set "agent" rollout to finish: 0 out of 2 new pods have been '
            "updated...",
        ),
    ],
    ids=["deployment-without-deadline", "statefulset", "daemonset"],
)
def test_someone_else_s_restart_after_refresh_s_own_stopped_is_left_alone(
    env: RefreshEnv, kind: str, target: str, behaviour: str, said: str
) -> None:
    """Refresh's own restart stopped (no progress deadline: its controller's counts did not move
    in a whole --rollout-timeout): rollout-failed, its marker cleared, its record
    (refresh-restarted) kept. Then the operator restarts the workload themselves (`kubectl
    rollout restart`, a stamp of its own), the new copies taking their time, and the tag moves
    again. The update under way is not the restart refresh recorded: someone else's, left
    alone, where a restart of refresh's own would be retried (the table)."""
    name = target.split("/")[1]
    env.registry.push_image("r/web", "stable", content="v1")
    if kind == "Deployment":
        _four_copies_without_deadline(env)
    else:
        runner = container("runner", env.image("r/web", "stable"))
        workload = (
            statefulset(name, runner, replicas=2)
            if kind == "StatefulSet"
            else daemonset(name, runner)
        )
        env.simulator.settle(workload, nodes=("node-1", "node-2"))
    assert _only(env.tick())["outcome"] == "converged"
    env.simulator.behaviour[name] = behaviour
    env.registry.push_image("r/web", "stable", content="v2")
    stopped = _only(env.tick("--rollout-timeout", "1"))
    assert stopped["outcome"] == "rollout-failed"
    assert stopped["reason"].startswith("the update stopped: no ")
    recorded = _stored(env, kind, name)["metadata"]["annotations"]
    assert (RESTARTED in recorded, PENDING in recorded) == (True, False)
    restarted = kubectl(env.kubeconfig, "-n", NS, "rollout", "restart", target)
    assert restarted.returncode == 0, restarted.stderr
    assert _oracle(env, target) == said
    _left_alone(env, name, "v3")


def test_an_old_copy_s_crash_loop_does_not_fail_someone_else_s_update(env: RefreshEnv) -> None:
    """Deployment `web`, two copies, one of them crash-looping; the operator's fix (`kubectl
    set env`) is rolling out, well within its progress deadline (Progressing
    ReplicaSetUpdated), its new copy still being created. The crash loop is the OLD template's
    copy, which the update replaces (rolling.go `cleanupUnhealthyReplicas` scales old unhealthy
    copies down first): it says nothing of the update, whose own copies alone could say it
    failed: refresh does not restart over the operator's rollout nor count an attempt."""
    env.registry.push_image("r/web", "stable", content="v1")
    web = deployment("web", container("runner", env.image("r/web", "stable")))
    web["spec"]["replicas"] = 2
    env.server.add(web)
    old = _stored(env, "Deployment", "web")
    env.simulator.remember(old)
    env.server.add(env.simulator.make_pod(old, "web-old-0"))
    env.server.add(env.simulator.make_pod(old, "web-old-1", behaviour="crash"))
    # The operator's change as the API server stores it (generation moved on), and the
    # controller's first step: the new ReplicaSet's copy made beside the old ones (maxSurge).
    fixed = _stored(env, "Deployment", "web")
    fixed["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "FIX", "value": "1"}]
    fixed["metadata"]["generation"] = 2
    env.server.update_object(fixed)
    fixed = _stored(env, "Deployment", "web")
    env.simulator.remember(fixed)
    starting = env.simulator.make_pod(fixed, "web-new-0")
    for status in starting["status"]["containerStatuses"]:
        status |= {"state": {"waiting": {"reason": "ContainerCreating"}}, "ready": False}
        del status["imageID"]
    for condition in starting["status"]["conditions"]:
        if condition["type"] in ("Ready", "ContainersReady"):
            condition["status"] = "False"
    env.server.add(starting)
    fixed = _stored(env, "Deployment", "web")
    fixed["status"] = {
        "observedGeneration": 2,
        "replicas": 3,
        "updatedReplicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "unavailableReplicas": 2,
        "conditions": [
            {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
        ],
    }
    env.server.update_object(fixed)
    assert _oracle(env, "deployment/web") == (
        'Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been '
        "updated..."
    )
    _left_alone(env, "web")
