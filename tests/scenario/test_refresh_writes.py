"""refresh's writes hold what its outcome says: a record is made only on a rollout verified
healthy on the read it is written against, an outcome that rests on a write (a record, the
latch) holds only once the write lands, stale-pin findings are written whatever else stops
the workload, and a rollout by another hand is left alone whatever marker an earlier tick left.

Against the fake API server (tests/support/fake_apiserver.py) with its rollout simulator and
the real registry, as tests/scenario/test_refresh.py runs refresh.
"""

import copy
from typing import Any

from tests.scenario import test_refresh
from tests.scenario.test_refresh import RefreshEnv, _workload
from tests.support.fake_apiserver import Fault
from tests.support.refresh_kit import container, deployment
from truegreen.refresh.annotations import (
    ATTEMPTS,
    LATCHED,
    PENDING,
    RECORDED_DIGEST,
    STALE_PIN,
    container_key,
)
from truegreen.refresh.plan import target_id
from truegreen.rollout import rollout_status

env = test_refresh.env
NAMESPACE = "train"
RECORD = container_key(RECORDED_DIGEST, "runner")


def _stored(env: RefreshEnv, kind: str, name: str) -> dict[str, Any]:
    found = env.server.get_object(kind, name, NAMESPACE)
    assert found is not None, f"precondition: {kind} {name} is stored"
    return found


def _install(env: RefreshEnv, name: str) -> None:
    """A Deployment `name` whose one container tracks `r/<name>:stable`, pushed once."""
    env.registry.push_image(f"r/{name}", "stable", content="v1")
    env.install(deployment(name, container("runner", env.image(f"r/{name}", "stable"))))


def _steps(workload: dict[str, Any]) -> list[tuple[str, bool]]:
    return [(w["step"], w["applied"]) for w in workload["writes"]]


def test_a_record_that_meets_a_conflict_is_verified_again_first(env: RefreshEnv) -> None:
    """The rollout verified, the new copy starts crash-looping just before the record: its
    controller's status update makes the record a 409. The record is then not written on the
    fresh read; the workload and its pods are looked at anew (kubectl's
    DeploymentStatusViewer: `availableReplicas < updatedReplicas` is not done)."""
    _install(env, "flaky")
    assert env.tick().exit_code == 0
    newest = env.registry.push_image("r/flaky", "stable", content="v2")
    patches: list[str] = []
    seen: dict[str, Any] = {}

    def crash_before_the_record(server: Any, method: str, path: str) -> None:
        if method != "PATCH" or not path.endswith("/deployments/flaky"):
            return
        patches.append(path)
        if len(patches) != 2:  # the restart, then the record
            return
        for stored_pod in server.list_objects("Pod", NAMESPACE):
            if "deletionTimestamp" in stored_pod["metadata"]:
                continue
            pod = copy.deepcopy(stored_pod)
            for condition in pod["status"]["conditions"]:
                if condition["type"] in ("Ready", "ContainersReady"):
                    condition["status"] = "False"
            for status in pod["status"]["containerStatuses"]:
                status.update(
                    ready=False, restartCount=4, state={"waiting": {"reason": "CrashLoopBackOff"}}
                )
            server.update_object(pod)
        stored = copy.deepcopy(server.get_object("Deployment", "flaky", NAMESPACE))
        stored["status"].update(readyReplicas=0, availableReplicas=0, unavailableReplicas=1)
        server.update_object(stored)
        seen["status"] = rollout_status(stored)

    env.server.request_hooks.append(crash_before_the_record)
    result = env.tick()
    workload = _workload(result.json(), "flaky")
    assert seen["status"].done is False, "precondition: kubectl calls the rollout unfinished"
    assert _steps(workload)[0] == ("restart", True), "precondition: the tick restarted it"
    assert env.annotations("flaky").get(RECORD) != newest, workload
    assert workload["outcome"] == "rollout-failed", workload
    assert "keeps crashing" in workload["reason"], workload["reason"]
    assert result.exit_code == 2


def test_a_first_record_that_does_not_land_is_not_converged(env: RefreshEnv) -> None:
    """ "converged (recorded if it was not)": a record the cluster refused is could-not-check,
    or a refresh without `patch` would report success on every run while recording nothing."""
    _install(env, "first")
    env.server.inject(Fault.SERVER_ERROR, r"/deployments/first$", method="PATCH")
    result = env.tick()
    workload = _workload(result.json(), "first")
    assert _steps(workload) == [("record", False)], "precondition: the record was refused"
    assert RECORD not in env.annotations("first")
    assert workload["outcome"] == "could-not-check", workload
    assert workload["reason"] == (
        "every tracked image runs its newest digest, but the record failed: patch deployment "
        "'first': the cluster answered with an error (500)"
    )
    assert result.exit_code == 3
    env.server.clear_faults()
    healed = env.tick()
    assert _workload(healed.json(), "first")["outcome"] == "converged"
    assert RECORD in env.annotations("first")


def test_a_latch_that_does_not_land_is_not_latched(env: RefreshEnv) -> None:
    _install(env, "tired")
    assert env.tick().exit_code == 0
    newest = env.registry.push_image("r/tired", "stable", content="v2")
    stored = _stored(env, "Deployment", "tired")
    stored["metadata"]["annotations"][ATTEMPTS] = f"3 {target_id({'runner': newest})}"
    env.server.update_object(stored)
    env.server.inject(Fault.FORBIDDEN, r"/deployments/tired$", method="PATCH")
    result = env.tick()
    workload = _workload(result.json(), "tired")
    assert _steps(workload) == [("latch", False)], "precondition: the latch was refused"
    assert LATCHED not in env.annotations("tired")
    assert workload["outcome"] == "could-not-check", workload
    assert workload["reason"].startswith("3 tries at the same digests did not roll out healthy")
    assert (
        ", but the latch failed: patch deployment 'tired': no permission (403)"
        in (workload["reason"])
    )
    assert result.exit_code == 3


def test_a_marker_toward_other_digests_does_not_make_another_s_rollout_ours(
    env: RefreshEnv,
) -> None:
    """An earlier tick timed out waiting and left its marker (docs/refresh.md); then someone
    else changes the template (generation ahead of observedGeneration: kubectl's "Waiting for
    deployment spec update to be observed") and the tag moves again. That rollout is not this
    tick's to restart over: in-progress, no write."""
    env.registry.push_image("r/slow", "stable", content="v1")
    slow = deployment("slow", container("runner", env.image("r/slow", "stable")))
    slow["spec"]["minReadySeconds"] = 3600  # a new copy takes an hour to count as available
    env.install(slow)
    pod = copy.deepcopy(_stored(env, "Pod", "slow-0"))
    for condition in pod["status"]["conditions"]:
        condition["lastTransitionTime"] = "2020-01-01T00:00:00Z"  # ready long ago: available
    env.server.update_object(pod)
    assert env.tick().exit_code == 0
    env.registry.push_image("r/slow", "stable", content="v2")
    timed_out = env.tick("--rollout-timeout", "1")
    assert _workload(timed_out.json(), "slow")["outcome"] == "rollout-failed"
    assert PENDING in env.annotations("slow"), "precondition: the marker is left"
    stored = copy.deepcopy(_stored(env, "Deployment", "slow"))
    stored["spec"]["template"]["metadata"]["labels"]["team"] = "payments"
    stored["metadata"]["generation"] += 1
    env.server.update_object(stored)
    env.simulator.remember(_stored(env, "Deployment", "slow"))
    env.registry.push_image("r/slow", "stable", content="v3")
    restarts = env.restarts("slow")
    result = env.tick("--rollout-timeout", "1")
    workload = _workload(result.json(), "slow")
    assert workload["outcome"] == "in-progress", workload
    assert env.restarts("slow") == restarts
    assert [w["step"] for w in workload["writes"]] == []
    assert result.exit_code == 0


def test_stale_pin_findings_are_written_when_the_pods_cannot_be_read(env: RefreshEnv) -> None:
    """Step (1): findings before anything can stop the tick; a stale pin needs no pod."""
    first = env.registry.push_image("r/pinned", "stable", content="v1")
    image = f"{env.image('r/pinned', 'stable')}@{first}"
    env.install(deployment("pinned", container("runner", image, policy="IfNotPresent")))
    moved = env.registry.push_image("r/pinned", "stable", content="v2")
    env.server.inject(Fault.FORBIDDEN, r"/api/v1/namespaces/train/pods$", method="GET")
    result = env.tick()
    workload = _workload(result.json(), "pinned")
    assert workload["outcome"] == "could-not-check", workload
    assert workload["reason"].startswith("list pods: no permission (403)"), workload["reason"]
    assert env.annotations("pinned").get(container_key(STALE_PIN, "runner")) == (f"stable {moved}")
    assert _steps(workload) == [("stale-pins", True)]
    assert result.exit_code == 3
