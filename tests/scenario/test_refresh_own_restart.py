"""refresh never loses its own restart while the update it started stands unfinished.

A StatefulSet and a DaemonSet have no progress deadline (apps/v1 StatefulSetSpec and
DaemonSetSpec have no progressDeadlineSeconds), nor has a Deployment whose deadline is
2147483647 (pkg/controller/deployment/util/deployment_util.go `HasProgressDeadline`): their
controllers wait for a new copy that never becomes Ready for as long as it takes
(pkg/controller/statefulset/stateful_set_control.go `processReplica`, "waiting for Pod to be
Running and Ready"; pkg/controller/daemon/update.go `rollingUpdate`), and `kubectl rollout
status` waits with them (pkg/polymorphichelpers/rollout_status.go `StatefulSetStatusViewer`,
`DaemonSetStatusViewer`). refresh bounds its own wait on such an update by its counts (a whole
`--rollout-timeout` in which they did not move: rollout-failed, counted, then latched) and
tells its own stopped update from someone else's by its record of its latest restart. These
tests hold that the record survives every way a failed restart is left: the tag moved back to
the recorded image, and a restart marked only by its pending marker.

Through the CLI, against the fake API server (the rollout simulator plays the controllers)
and a real docker-registry.
"""

import json
from typing import Any

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.scenario.test_refresh_unsettled import _without_deadline
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from truegreen.refresh.annotations import (
    ATTEMPTS,
    PENDING,
    RECORDED_DIGEST,
    RESTARTED,
    PendingRestart,
    container_key,
)
from truegreen.refresh.plan import target_id
from truegreen.refresh.template import RESTARTED_AT

NS = "train"
NODES = ("node-1", "node-2")
RUNNER = container_key(RECORDED_DIGEST, "runner")
KINDS = ("StatefulSet", "DaemonSet", "Deployment")
LAST_UNREADY = {
    "StatefulSet": "last-unready",
    "DaemonSet": "last-unready",
    "Deployment": "deadline",
}
"""Each kind's update stopped at a copy that runs and never becomes Ready (a readiness probe
that keeps failing): the last one a StatefulSet or DaemonSet replaces; a Deployment's new copy,
beside the old one it keeps while no new copy is available (rolling.go)."""
FIRST_UNREADY = {"StatefulSet": "unready", "DaemonSet": "unready", "Deployment": "deadline"}
"""Each kind's update stopped at its first new copy, which runs and never becomes Ready (a
readiness probe that keeps failing), while every other copy still runs the old digest."""
FAILED = ("Warning", "RefreshRolloutFailed")

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _install(env: RefreshEnv, kind: str) -> None:
    """`db` of `kind`, opted in, its copies running what the tag names now. The StatefulSet's
    copies are managed in parallel (podManagementPolicy Parallel), so that its controller
    replaces a copy that never became Ready when its template changes again, as the
    simulator does (stateful_set_control.go `updateStatefulSet` deletes the highest copy not on
    the update revision); with OrderedReady `processReplica` waits for that copy first, and
    someone must delete it by hand (the StatefulSet documentation's "forced rollback")."""
    image = env.image("r/own", "stable")
    if kind == "StatefulSet":
        workload = statefulset("db", container("runner", image), replicas=2)
        workload["spec"]["podManagementPolicy"] = "Parallel"
        env.simulator.settle(workload, nodes=NODES)
    elif kind == "DaemonSet":
        env.simulator.settle(daemonset("db", container("runner", image)), nodes=NODES)
    else:
        env.install(deployment("db", container("runner", image)))
        _without_deadline(env, "db")


def _tick(env: RefreshEnv, *args: str) -> tuple[dict[str, Any], int]:
    """One tick's report of `db`, and its exit code."""
    result = env.tick("--max-attempts", "2", *args)
    (found,) = result.json()["workloads"]
    return found, result.exit_code


def _annotations(env: RefreshEnv, kind: str) -> dict[str, str]:
    stored = env.server.get_object(kind, "db", NS)
    assert stored is not None
    return dict(stored["metadata"].get("annotations") or {})


def _pods_run(env: RefreshEnv) -> list[tuple[str, bool]]:
    """(digest of its runner, Ready) of each of db's copies that stays, sorted."""
    return sorted((digest, ready) for _, digest, ready in test_refresh_kinds._pods_run(env, "db"))


def _events(env: RefreshEnv, kind: str) -> list[tuple[str, str]]:
    return test_refresh_kinds._events(env, kind, "db")


@pytest.mark.parametrize("kind", KINDS)
def test_a_tag_moved_back_while_refresh_s_restart_stands_stopped_is_restarted_not_converged(
    env: RefreshEnv, kind: str
) -> None:
    """refresh restarts `db` toward the tag's new image, whose last new copy never becomes
    Ready: the restart fails (its counts stood still a whole --rollout-timeout). The image's
    owner moves the tag back to the image recorded before. The copies do not run it: the
    update refresh started stands stopped in the template, its copies on the other image. That
    is no "converged", and refresh must not forget its restart then: with its record cleared,
    the update no controller will ever call stopped read as someone else's, in progress, and
    every later move of the tag was left alone forever. The restart that brings the copies
    back to the tag is verified, recorded and announced."""
    first = env.registry.push_image("r/own", "stable", content="v1")
    _install(env, kind)
    assert _tick(env)[0]["outcome"] == "converged"
    moved = env.registry.push_image("r/own", "stable", content="v2")
    env.simulator.behaviour["db"] = LAST_UNREADY[kind]
    for _ in range(3):  # resumed from its marker while its counts still moved
        found, code = _tick(env, "--rollout-timeout", "1")
        assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
        if PENDING not in _annotations(env, kind):
            break
    assert found["reason"].startswith("the update stopped: its controller counted no change")
    annotations = _annotations(env, kind)
    assert annotations[RUNNER] == first
    assert PendingRestart.read(annotations, RESTARTED) is not None
    env.simulator.finish_terminating()  # the controller reaches its last copy, which stays so
    assert (moved, False) in _pods_run(env)
    failures = _events(env, kind)
    assert set(failures) == {FAILED}

    assert env.registry.push_image("r/own", "stable", content="v1") == first
    env.simulator.behaviour["db"] = "ok"  # the image that worked still works
    found, code = _tick(env, "--rollout-timeout", "30")
    assert (found["outcome"], found["reason"], code) == (
        "restarted",
        "rolled out and verified: the pods run the newest digest",
        0,
    )
    (plan,) = found["containers"]
    assert (plan["decision"], plan["reason"]) == (
        "restart",
        f"its last restart, toward {moved[:19]}…, never finished; the tag is back on the "
        f"recorded {first[:19]}…",
    )
    copies = 1 if kind == "Deployment" else 2
    assert _pods_run(env) == [(first, True)] * copies
    annotations = _annotations(env, kind)
    assert annotations[RUNNER] == first
    assert {ATTEMPTS, PENDING, RESTARTED} & annotations.keys() == set()
    assert _events(env, kind) == [*failures, ("Normal", "ImageRefreshed")]

    newest = env.registry.push_image("r/own", "stable", content="v3")
    found, code = _tick(env, "--rollout-timeout", "30")
    assert (found["outcome"], code) == ("restarted", 0), found["reason"]
    assert _annotations(env, kind)[RUNNER] == newest


@pytest.mark.parametrize("kind", KINDS)
def test_a_failed_restart_marked_only_by_its_marker_stays_refresh_s_own(
    env: RefreshEnv, kind: str
) -> None:
    """A restart refresh made before it kept a record of its latest restart
    (`truegreen.io/refresh-restarted`) is marked by its pending marker alone. Its first new copy
    never becomes Ready while the others still run the old digest, and the tick that waits on
    it calls it failed and clears the marker. The marker becomes the record then: without one,
    the stopped update no controller will ever call stopped read as someone else's, in
    progress, and was never retried, counted or latched."""
    first = env.registry.push_image("r/own", "stable", content="v1")
    _install(env, kind)
    assert _tick(env)[0]["outcome"] == "converged"
    newest = env.registry.push_image("r/own", "stable", content="v2")
    env.simulator.behaviour["db"] = FIRST_UNREADY[kind]
    marker = PendingRestart({"runner": newest}, "2026-01-01T00:00:00.000000Z")
    restart = {
        "metadata": {
            "annotations": {PENDING: marker.text(), ATTEMPTS: f"1 {target_id(marker.target)}"}
        },
        "spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: marker.stamp}}}},
    }
    patched = kubectl(
        env.kubeconfig, "-n", NS, "patch", kind.lower(), "db", "--type", "merge", "-p",
        json.dumps(restart),
    )  # fmt: skip
    assert patched.returncode == 0, patched.stderr
    env.simulator.finish_terminating()  # the controller stopped at its first new copy
    assert _pods_run(env) == sorted([(newest, False), (first, True)])
    assert RESTARTED not in _annotations(env, kind)

    found, code = _tick(env, "--rollout-timeout", "1")
    assert (found["outcome"], code) == ("rollout-failed", 2)
    assert found["reason"].startswith("the update stopped: its controller counted no change")
    assert [(w["step"], w["annotations"]) for w in found["writes"]] == [
        ("clear-pending", {PENDING: None, RESTARTED: marker.text()})
    ]
    assert _annotations(env, kind)[RESTARTED] == marker.text()

    found, code = _tick(env, "--rollout-timeout", "1")
    assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
    assert found["writes"][0]["step"] == "restart"
    for _ in range(2):  # its wait resumed from the marker while the counts still moved
        if PENDING not in _annotations(env, kind):
            break
        found, code = _tick(env, "--rollout-timeout", "1")
        assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
    assert _annotations(env, kind)[ATTEMPTS].startswith("2 ")
    found, code = _tick(env, "--rollout-timeout", "1")
    assert (found["outcome"], code) == ("latched", 0)
    assert _annotations(env, kind)[RUNNER] == first
    assert _events(env, kind)[-1] == ("Warning", "RefreshLatched")
