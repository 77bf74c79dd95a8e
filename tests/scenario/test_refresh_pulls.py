"""refresh's restart whose new pod's image pull failed: a pull the kubelet retries heals by
itself, one the registry refuses does not.

pkg/kubelet/images/image_manager.go `EnsureImageExists`: a failed pull is put in the
kubelet's back-off (`backOff.Next`), the container waits `ErrImagePull` (then
`ImagePullBackOff` until the back-off ends) with the runtime's error as its message, and the
kubelet pulls again. A registry that answered 503 once serves the next pull; one that says the
image does not exist says so again. Through the CLI, against the fake API server (the rollout
simulator plays the Deployment controller and the kubelet) and a real docker-registry.
"""

import time

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv, _events, _workload
from tests.support.refresh_kit import container, deployment
from truegreen.refresh.annotations import ATTEMPTS, PENDING, RECORDED_DIGEST, container_key

RUNNER = container_key(RECORDED_DIGEST, "runner")

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _moved(env: RefreshEnv, behaviour: str) -> tuple[str, str]:
    """`web` recorded on the tag's first image; the tag moves, and the restart's new pod pulls
    as `behaviour` says. The first digest and the moved one."""
    first = env.registry.push_image("r/web", "stable", content="v1")
    env.install(deployment("web", container("runner", env.image("r/web", "stable"))))
    assert _workload(env.tick().json(), "web")["outcome"] == "converged"
    moved = env.registry.push_image("r/web", "stable", content="v2")
    env.simulator.behaviour["web"] = behaviour
    return first, moved


def test_a_pull_the_kubelet_retries_after_its_back_off_rolls_out_and_is_recorded(
    env: RefreshEnv,
) -> None:
    """The new pod's first pull met a 503; after the kubelet's back-off the pull succeeds and
    the pod runs the newest digest, Ready. The restart is waited for, verified and recorded:
    failing it at the first ErrImagePull counted an attempt, and the next tick restarted pods
    that had healed (a rate-limited registry could latch a workload whose every rollout
    would have completed)."""
    _, moved = _moved(env, "pull-retry")
    result = env.tick("--rollout-timeout", "30")
    found = _workload(result.json(), "web")
    assert (found["outcome"], found["reason"], result.exit_code) == (
        "restarted",
        "rolled out and verified: the pods run the newest digest",
        0,
    )
    annotations = env.annotations("web")
    assert annotations[RUNNER] == moved
    assert {ATTEMPTS, PENDING} & annotations.keys() == set()
    assert _events(env, "web") == [("Normal", "ImageRefreshed")]
    assert _workload(env.tick().json(), "web")["outcome"] == "converged"
    assert env.restarts("web") == 1


def test_a_pull_the_registry_refuses_fails_the_rollout_at_once(env: RefreshEnv) -> None:
    """The registry says the image does not exist: every pull after the kubelet's back-off
    meets the same answer, so the measured failure ends the wait at its first look, not after
    the rollout timeout, and is counted toward the flap guard."""
    first, _ = _moved(env, "pull-fail")
    began = time.monotonic()
    result = env.tick("--rollout-timeout", "120")
    assert time.monotonic() - began < 60, "the wait ran on past a measured failure"
    found = _workload(result.json(), "web")
    assert (found["outcome"], found["reason"], result.exit_code) == (
        "rollout-failed",
        "new pod web-g3-0 cannot pull its image: the registry says it does not exist "
        "(ErrImagePull)",
        2,
    )
    annotations = env.annotations("web")
    assert annotations[RUNNER] == first
    assert annotations[ATTEMPTS].startswith("1 ")
    assert PENDING not in annotations
    assert _events(env, "web") == [("Warning", "RefreshRolloutFailed")]
