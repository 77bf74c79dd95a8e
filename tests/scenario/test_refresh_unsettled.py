"""refresh where a workload is left unsettled: a rollout stuck after refresh's own failed
restart, a pin whose tag could not be looked up, bookkeeping a person wrote by hand, an
annotation that names no tag, and a paused Deployment whose pin went stale.

Against the fake API server (the rollout simulator plays the Deployment controller) and a real
docker-registry, through the CLI.
"""

from typing import Any

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.support.cli import run_cli
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import container, deployment
from tests.support.rollout import NO_DEADLINE
from truegreen.refresh.annotations import ATTEMPTS, PENDING, STALE_PIN, TRACK_TAG, container_key

NS = "train"

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _only(result: Any) -> dict[str, Any]:
    workloads = result.json()["workloads"]
    assert len(workloads) == 1, workloads
    return dict(workloads[0])


def _four_copies(env: RefreshEnv, name: str) -> None:
    """A Deployment of four copies whose update keeps every old copy until a new one is
    ready (maxSurge 1, maxUnavailable 0), all four running what the tag names now."""
    workload = deployment(name, container("runner", env.image("r/web", "stable")))
    workload["spec"]["replicas"] = 4
    workload["spec"]["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    workload["status"] |= {
        "replicas": 4,
        "updatedReplicas": 4,
        "readyReplicas": 4,
        "availableReplicas": 4,
    }
    env.server.add(workload)
    stored = env.server.get_object("Deployment", name, NS)
    assert stored is not None
    env.simulator.remember(stored)
    for index in range(4):
        env.server.add(env.simulator.make_pod(stored, f"{name}-{index}"))


@pytest.mark.parametrize("behaviour", ["crash", "deadline"])
def test_a_rollout_left_stuck_by_refresh_s_failed_restart_is_retried_then_latched(
    env: RefreshEnv, behaviour: str
) -> None:
    """After a failed restart of four copies, the update stands stopped with 1 of 4 copies
    updated: kubectl's rules call it stuck (ProgressDeadlineExceeded) or a new copy crash-loops.
    That is a failed rollout, not one under way by someone else's hand: later ticks retry it,
    latch it, and take a fixed tag, never "in-progress"."""
    env.registry.push_image("r/web", "stable", content="v1")
    _four_copies(env, "web")
    assert _only(env.tick("--max-attempts", "2"))["outcome"] == "converged"
    env.registry.push_image("r/web", "stable", content="v2-broken")
    env.simulator.behaviour["web"] = behaviour
    first = env.tick("--max-attempts", "2")
    assert (first.exit_code, _only(first)["outcome"]) == (2, "rollout-failed")
    env.simulator.finish_terminating()
    status = env.server.get_object("Deployment", "web", NS)["status"]  # type: ignore[index]
    assert status["updatedReplicas"] < 4, "precondition: the update stands stopped"

    second = env.tick("--max-attempts", "2")
    assert (second.exit_code, _only(second)["outcome"]) == (2, "rollout-failed")
    assert env.restarts("web") == 2
    third = env.tick("--max-attempts", "2")
    assert _only(third)["outcome"] == "latched"
    assert env.restarts("web") == 2


def test_a_stuck_rollout_takes_a_fixed_tag(env: RefreshEnv) -> None:
    """The tag moves to a working image while the failed update stands: the next tick rolls
    it out and records it."""
    env.registry.push_image("r/web", "stable", content="v1")
    _four_copies(env, "web")
    env.tick()
    env.registry.push_image("r/web", "stable", content="v2-broken")
    env.simulator.behaviour["web"] = "crash"
    env.tick()
    env.simulator.finish_terminating()
    fixed = env.registry.push_image("r/web", "stable", content="v3-fixed")
    env.simulator.behaviour["web"] = "ok"
    result = env.tick()
    assert (result.exit_code, _only(result)["outcome"]) == (0, "restarted")
    assert env.annotations("web")[container_key("digest", "runner")] == fixed


@pytest.mark.parametrize("how", ["tag-and-digest", "track-tag", "registry-down"])
def test_a_pin_whose_tag_cannot_be_looked_up_is_could_not_check(env: RefreshEnv, how: str) -> None:
    """docs/refresh.md: a failed look-up is could-not-check (3). A pin's tracked tag that is
    gone, or a registry that does not answer, leaves unknown whether the pin is behind: never
    "converged"."""
    pinned = env.registry.push_image("r/pin", "stable", content="v1")
    annotations = {}
    if how == "tag-and-digest":
        image = f"{env.registry.host}/r/pin:nosuchtag@{pinned}"
    elif how == "track-tag":
        image = f"{env.registry.host}/r/pin@{pinned}"
        annotations = {container_key(TRACK_TAG, "runner"): "nosuchtag"}
    else:
        image = f"127.0.0.1:9/r/pin:stable@{pinned}"
    env.install(deployment("pin", container("runner", image), annotations=annotations))
    result = env.tick()
    workload = _only(result)
    assert (result.exit_code, workload["outcome"]) == (3, "could-not-check")
    assert workload["containers"][0]["decision"] == "pinned"
    assert env.restarts("pin") == 0


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (ATTEMPTS, "\u00b2 abc"),  # str.isdigit() holds for `²`; int() refuses it
        (ATTEMPTS, "9" * 5000),  # past int()'s 4300-digit limit
        (PENDING, "[" * 5000),  # nested past the parser's stack
    ],
    ids=["superscript-count", "endless-count", "deep-marker"],
)
def test_bookkeeping_written_by_hand_is_read_as_absent_by_refresh_and_doctor(
    env: RefreshEnv, key: str, value: str
) -> None:
    """A value no refresh wrote is read as no value, in refresh and in doctor's freshness
    check: never an internal error."""
    env.registry.push_image("r/odd", "stable", content="v1")
    env.install(
        deployment(
            "odd", container("runner", env.image("r/odd", "stable")), annotations={key: value}
        )
    )
    result = env.tick()
    assert (result.exit_code, _only(result)["outcome"]) == (0, "converged"), result.stderr
    doctor = run_cli("doctor", "--kubeconfig", str(env.kubeconfig), "--no-registry", "-o", "json")
    assert doctor.exit_code in (0, 2, 3), doctor.stderr
    assert "internal error" not in doctor.stderr


@pytest.mark.parametrize(
    "written",
    ["../../other/manifests/v1", "stable?x=1", "stable#frag", "a b", "-bad", "\u00e9t\u00e9"],
)
def test_a_track_tag_annotation_that_names_no_tag_is_an_invalid_image(
    env: RefreshEnv, written: str
) -> None:
    """A tag is `[\\w][\\w.-]{0,127}` (distribution/reference). The annotation's text never
    goes into the look-up's path: `../../other/manifests/v1` fetches no other repository's
    manifest and writes no stale-pin finding for it; `stable?x=1` is not read as `stable`."""
    pinned = env.registry.push_image("r/tt", "stable", content="v1")
    env.registry.push_image("r/other", "v1", content="other")
    annotations = {container_key(TRACK_TAG, "runner"): written}
    env.install(
        deployment(
            "tt", container("runner", f"{env.registry.host}/r/tt@{pinned}"), annotations=annotations
        )
    )
    result = env.tick()
    workload = _only(result)
    assert (result.exit_code, workload["outcome"]) == (2, "invalid-image")
    assert workload["reason"].endswith(
        f"the annotation {container_key(TRACK_TAG, 'runner')} names no valid tag"
    )
    assert not any(k.startswith(f"truegreen.io/{STALE_PIN}.") for k in env.annotations("tt"))


def test_a_paused_deployment_still_gets_its_stale_pin_finding(env: RefreshEnv) -> None:
    """DESIGN: stale-pin findings are written before anything that can stop the tick; a pause
    stops it, so they are written while the Deployment stays paused."""
    pinned = env.registry.push_image("r/pp", "stable", content="v1")
    newest = env.registry.push_image("r/pp", "stable", content="v2")
    workload = deployment("pp", container("runner", f"{env.registry.host}/r/pp:stable@{pinned}"))
    workload["spec"]["paused"] = True
    env.install(workload)
    result = env.tick()
    assert (result.exit_code, _only(result)["outcome"]) == (0, "paused")
    assert env.annotations("pp")[container_key(STALE_PIN, "runner")] == f"stable {newest}"
    assert env.restarts("pp") == 0


def _without_deadline(env: RefreshEnv, name: str) -> None:
    """The stored Deployment set to no progress deadline, as the operator writes it."""
    stored = env.server.get_object("Deployment", name, NS)
    assert stored is not None
    stored["spec"]["progressDeadlineSeconds"] = NO_DEADLINE
    env.server.update_object(stored)
    env.simulator.remember(stored)


def test_someone_else_s_rollout_of_a_deployment_with_no_progress_deadline_is_left_alone(
    env: RefreshEnv,
) -> None:
    """Someone changes the pod template of a Deployment with no progress deadline
    (`kubectl set env`), and its rollout is under way, 1 of 4 copies updated, when the tag
    moves. kubectl calls it in progress (polymorphichelpers/rollout_status.go
    `DeploymentStatusViewer.Status`: observedGeneration caught up, no
    ProgressDeadlineExceeded, updatedReplicas below replicas: "Waiting for deployment ...
    rollout to finish"), so refresh leaves it alone: `in-progress`, nothing written, no restart
    over it. Without a deadline the controller never says an update stopped
    (deployment_util.go `HasProgressDeadline`); the copies still on an older template differ
    from the Deployment's by more than a restart, so the update is not one of refresh's."""
    env.registry.push_image("r/web", "stable", content="v1")
    _four_copies(env, "web")
    _without_deadline(env, "web")
    assert _only(env.tick())["outcome"] == "converged"
    env.simulator.behaviour["web"] = "deadline"  # its new copies take their time: not Ready yet
    changed = kubectl(env.kubeconfig, "-n", NS, "set", "env", "deployment/web", "MODE=train")
    assert changed.returncode == 0, changed.stderr
    status = kubectl(
        env.kubeconfig, "-n", NS, "rollout", "status", "deployment/web", "--watch=false"
    )
    assert status.stdout.startswith('Waiting for deployment "web" rollout to finish: 1 out of 4'), (
        status.stdout + status.stderr
    )
    restarts, annotations = env.restarts("web"), env.annotations("web")
    env.registry.push_image("r/web", "stable", content="v2")
    result = env.tick()
    workload = _only(result)
    assert (result.exit_code, workload["outcome"], workload["reason"]) == (
        0,
        "in-progress",
        "a rollout is in progress; not touching it",
    )
    assert workload["writes"] == []
    assert (env.restarts("web"), env.annotations("web")) == (restarts, annotations)


@pytest.mark.parametrize("copies", [1, 4])
def test_a_deployment_with_no_progress_deadline_whose_restart_stops_is_counted_and_latched(
    env: RefreshEnv, copies: int
) -> None:
    """`progressDeadlineSeconds: 2147483647` (MaxInt32) is a Deployment with no deadline
    (pkg/controller/deployment/util/deployment_util.go `HasProgressDeadline`), so its
    controller never writes ProgressDeadlineExceeded. Its restart's new copy runs but never
    becomes Ready, and the update stands where the controller stopped it (rolling.go: the old
    copies stay while no new one is available; one copy: 2 copies, 1 updated). A whole
    --rollout-timeout in which its counts did not move is the verdict the deadline would give:
    the restart failed, its marker is cleared, the next tick takes the stopped update for
    refresh's own failure (never someone else's rollout "in progress") and the flap guard
    latches the retries, instead of a wait that costs every tick the whole timeout forever."""
    env.registry.push_image("r/web", "stable", content="v1")
    if copies == 1:
        env.install(deployment("web", container("runner", env.image("r/web", "stable"))))
    else:
        _four_copies(env, "web")
    _without_deadline(env, "web")
    assert _only(env.tick())["outcome"] == "converged"
    env.registry.push_image("r/web", "stable", content="v2")
    env.simulator.behaviour["web"] = "deadline"  # new copies never Ready; no deadline to pass
    progress = "1 old copies still stopping" if copies == 1 else "1 of 4 copies updated"
    reason = (
        "the update stopped: no new copy became available in a whole --rollout-timeout "
        f"({progress})"
    )
    for attempt in (1, 2):
        result = env.tick("--rollout-timeout", "1", "--max-attempts", "2")
        found = _only(result)
        assert (found["outcome"], found["reason"], result.exit_code) == (
            "rollout-failed",
            reason,
            2,
        )
        annotations = env.annotations("web")
        assert annotations[ATTEMPTS].startswith(f"{attempt} ")
        assert PENDING not in annotations
        # progress.go `syncRolloutStatus`: without a deadline the controller removes its
        # Progressing condition, and never says the update stopped.
        conditions = env.server.get_object("Deployment", "web", NS)["status"]["conditions"]  # type: ignore[index]
        assert conditions == []
    result = env.tick("--rollout-timeout", "1", "--max-attempts", "2")
    assert (_only(result)["outcome"], result.exit_code) == ("latched", 0)
    assert env.restarts("web") == 2
