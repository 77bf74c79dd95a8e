"""refresh where every copy already runs the tag's newest digest while another digest is
recorded: the operator moved the workload to another tag, deleted an `OnDelete` workload's pods,
or replaced the copies with `kubectl rollout restart` after the tag moved. A restart would
change nothing (or be refused for ever): the digest is recorded once the rollout is healthy, as
on a first run, with nothing restarted and nothing refused.

Against the fake API server (the rollout simulator plays the controllers and the kubelet), a
real docker-registry, and the real kubectl as the operator's hand and the rollout's oracle.
"""

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.scenario.test_refresh_kinds import NODES, RUNNER, _annotations, _pods_run, _workload
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from truegreen.refresh.annotations import ATTEMPTS, LATCHED, PENDING, RESTARTED

NS = "train"

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _tick(env: RefreshEnv, *args: str) -> tuple[dict[str, object], int]:
    result = env.tick("--rollout-timeout", "5", *args)
    return result.json(), result.exit_code


def _recorded_and_converged(env: RefreshEnv, kind: str, name: str, newest: str, old: str) -> None:
    """The tick records `newest` over `old` without a restart: `converged`, exit 0, the record
    its only write, and the next tick has nothing to do."""
    restarts = env.restarts(name)
    report, code = _tick(env, "-v")
    found = _workload(report, name)
    assert (found["outcome"], code) == ("converged", 0), found["reason"]
    assert found["reason"] == "every tracked image runs its newest digest"
    assert found["containers"][0]["decision"] == "record-running"
    assert found["containers"][0]["reason"] == (
        f"the pods already run the newest digest, not the recorded {old[:19]}…"
    )
    assert [w["step"] for w in found["writes"]] == ["record"]
    annotations = _annotations(env, kind, name)
    assert annotations[RUNNER] == newest
    assert not {ATTEMPTS, PENDING, RESTARTED, LATCHED} & annotations.keys()
    assert env.restarts(name) == restarts
    again, code = _tick(env)
    assert (_workload(again, name)["outcome"], code) == ("converged", 0)
    assert _workload(again, name)["writes"] == []
    assert env.restarts(name) == restarts


@pytest.mark.parametrize(
    ("kind", "name"), [("StatefulSet", "db"), ("DaemonSet", "agent")], ids=str.lower
)
def test_an_on_delete_workload_whose_pods_the_operator_deleted_is_recorded(
    env: RefreshEnv, kind: str, name: str
) -> None:
    """`updateStrategy: OnDelete` takes a new version when someone deletes a pod: the
    StatefulSet controller makes it again from the update revision (stateful_set_utils.go
    `newVersionedStatefulSetPod`), the DaemonSet controller makes the machine's missing copy
    from the current template (daemon_controller.go `syncNodes`), and under `imagePullPolicy:
    Always` the kubelet pulls the tag (pkg/kubelet/images/image_manager.go
    `EnsureImageExists`). Before the pods are deleted the restart is refused, as before; after,
    every copy runs the newest digest, Ready, and it is recorded (docs/refresh.md: "Its digest
    is still recorded when its pods already run the newest one")."""
    image = env.image("r/ondelete", "stable")
    runner = container("runner", image)
    workload = (
        statefulset(name, runner, replicas=2) if kind == "StatefulSet" else daemonset(name, runner)
    )
    workload["spec"]["updateStrategy"] = {"type": "OnDelete"}
    old = env.registry.push_image("r/ondelete", "stable", content="v1")
    env.simulator.settle(workload, nodes=NODES)
    report, code = _tick(env)
    assert (_workload(report, name)["outcome"], code) == ("converged", 0)
    assert _annotations(env, kind, name)[RUNNER] == old
    newest = env.registry.push_image("r/ondelete", "stable", content="v2")
    report, code = _tick(env)
    assert (_workload(report, name)["outcome"], code) == ("refused", 2)
    env.simulator.delete_pods(kind, name)
    assert {digest for _, digest, ready in _pods_run(env, name) if ready} == {newest}
    assert len(_pods_run(env, name)) == 2
    _recorded_and_converged(env, kind, name, newest, old)


@pytest.mark.parametrize("policy", ["IfNotPresent", "Always"])
def test_a_deployment_moved_to_another_tag_is_recorded_not_restarted_or_refused(
    env: RefreshEnv, policy: str
) -> None:
    """`kubectl set image deployment/web runner=…/r/app:2.0`: the Deployment controller rolls
    the new template out (sync.go `getNewReplicaSet`), its copy pulls app:2.0 and kubectl
    calls the rollout done. The digest recorded is app:1.0's: the pods already run app:2.0's
    newest, so a restart would change nothing. Under `IfNotPresent` (the API server's default
    for a versioned tag, pkg/apis/core/v1/defaults.go `SetDefaults_Container`) it is not
    refused ("a restart would keep the old image"); under `Always` no copy is restarted
    again. Both record it."""
    old = env.registry.push_image("r/app", "1.0", content="v1")
    newest = env.registry.push_image("r/app", "2.0", content="v2")
    env.install(deployment("web", container("runner", env.image("r/app", "1.0"), policy)))
    report, code = _tick(env)
    assert (_workload(report, "web")["outcome"], code) == ("converged", 0)
    assert env.annotations("web")[RUNNER] == old
    moved = kubectl(
        env.kubeconfig,
        *("-n", NS, "set", "image", "deployment/web", f"runner={env.image('r/app', '2.0')}"),
    )
    assert moved.returncode == 0, moved.stderr
    env.simulator.finish_terminating()
    said = kubectl(env.kubeconfig, "-n", NS, "rollout", "status", "deployment/web", "--watch=false")
    assert said.stdout.strip() == 'deployment "web" successfully rolled out', said.stderr
    assert env.restarts("web") == 1  # kubectl's
    _recorded_and_converged(env, "Deployment", "web", newest, old)


def test_copies_replaced_by_kubectl_rollout_restart_after_the_tag_moved_are_recorded(
    env: RefreshEnv,
) -> None:
    """The tag moves and, before a tick, the operator runs `kubectl rollout restart` (or the
    copies are evicted and made again): the new copies pull the tag under `Always` and run its
    newest digest. Another restart would replace them with the same image, and count an
    attempt: they are recorded instead."""
    old = env.registry.push_image("r/app", "stable", content="v1")
    env.install(deployment("web", container("runner", env.image("r/app", "stable"))))
    report, code = _tick(env)
    assert (_workload(report, "web")["outcome"], code) == ("converged", 0)
    newest = env.registry.push_image("r/app", "stable", content="v2")
    restarted = kubectl(env.kubeconfig, "-n", NS, "rollout", "restart", "deployment/web")
    assert restarted.returncode == 0, restarted.stderr
    env.simulator.finish_terminating()
    assert env.restarts("web") == 1  # kubectl's
    _recorded_and_converged(env, "Deployment", "web", newest, old)
