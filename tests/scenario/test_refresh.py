"""refresh ticks against the fake API server and a real docker-registry.

The rollout simulator plays the Deployment controller: new pods report the digest the real
registry serves when they start.
"""

import base64
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import REGISTRY_PASSWORD
from tests.support import rbac
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.monitoring import signal_ended, wait_for, with_default_ctrl_c
from tests.support.plain_words import jargon_in
from tests.support.refresh_kit import container, deployment
from tests.support.registry import Registry, TokenFront
from tests.support.rollout import RolloutSimulator
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings
from truegreen.images import parse_image
from truegreen.refresh.annotations import (
    ATTEMPTS,
    DANGLING_PIN,
    LATCHED,
    PENDING,
    RECORDED_DIGEST,
    RESTARTED,
    STALE_PIN,
    TRACK_TAG,
    container_key,
)
from truegreen.refresh.registry import PullCredentials, RegistryClient, Resolved
from truegreen.refresh.tick import RefreshSettings, TickInterrupted, run_tick

Obj = dict[str, Any]
NS = "train"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


_LOGIN_TYPES = {
    ".dockerconfigjson": "kubernetes.io/dockerconfigjson",
    ".dockercfg": "kubernetes.io/dockercfg",
}
"""The secret type that holds each login key, as `kubectl create secret docker-registry` makes
it (and the API server's ValidateSecret requires the key of each type)."""


def _login_secret(
    name: str, key: str, hosts: dict[str, str], secret_type: str | None = None
) -> Obj:
    """A pull secret named `name` holding `key` (.dockerconfigjson or the legacy .dockercfg),
    with one login per host: host -> password for user robot; of the type that key belongs to
    unless `secret_type` names another."""
    entries = {
        host: {"auth": base64.b64encode(f"robot:{password}".encode()).decode()}
        for host, password in hosts.items()
    }
    config = {"auths": entries} if key == ".dockerconfigjson" else entries
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": secret_type or _LOGIN_TYPES[key],
        "metadata": {"name": name, "namespace": NS},
        "data": {key: base64.b64encode(json.dumps(config).encode()).decode()},
    }


def _account(name: str, *pull_secrets: str) -> Obj:
    """A ServiceAccount in `train` naming `pull_secrets`: the logins the ServiceAccount
    admission plugin copies into a pod that names none (admission.go Admit)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": NS},
        "imagePullSecrets": [{"name": n} for n in pull_secrets],
    }


def _regcred(*hosts: str) -> Obj:
    """The `regcred` pull secret the Deployments name, with the robot's login for each host."""
    return _login_secret("regcred", ".dockerconfigjson", dict.fromkeys(hosts, REGISTRY_PASSWORD))


@dataclass
class RefreshEnv:
    server: FakeApiServer
    registry: Registry
    simulator: RolloutSimulator
    kubeconfig: Path

    def image(self, repository: str, tag: str) -> str:
        return f"{self.registry.host}/{repository}:{tag}"

    def install(self, workload: Obj) -> None:
        """Store the Deployment with one pod running what its template names right now."""
        self.server.add(workload)
        meta = workload["metadata"]
        stored = self.server.get_object("Deployment", meta["name"], meta["namespace"])
        assert stored is not None
        self.simulator.remember(stored)
        self.server.add(self.simulator.make_pod(stored, f"{workload['metadata']['name']}-0"))

    def tick(self, *args: str) -> CliResult:
        result = run_cli(
            "refresh",
            "--kubeconfig",
            str(self.kubeconfig),
            "-o",
            "json",
            "--rollout-timeout",
            "5",
            *args,
        )
        assert REGISTRY_PASSWORD not in result.stdout + result.stderr
        return result

    def set_regcred(self, secret: Obj) -> None:
        """Replace the stored `regcred` secret's data with `secret`'s (new logins)."""
        stored = self.server.get_object("Secret", "regcred", NS)
        assert stored is not None
        stored["data"] = secret["data"]
        self.server.update_object(stored)

    def annotations(self, name: str) -> dict[str, str]:
        stored = self.server.get_object("Deployment", name, NS)
        assert stored is not None
        return dict(stored["metadata"].get("annotations") or {})

    def restarts(self, name: str) -> int:
        """PATCHes of the Deployment that changed its pod template."""
        return self.simulator.rollouts.get(name, 0)


@pytest.fixture
def env(fake_api: FakeApiServer, kubeconfig: Path, registry: Registry) -> Iterator[RefreshEnv]:
    logins = PullCredentials.from_docker_configs(
        [(".dockerconfigjson", _regcred(registry.host)["data"][".dockerconfigjson"])]
    )
    client = RegistryClient()

    def digest_for(image: str) -> str:
        reference = parse_image(image)
        if reference.digest:
            return reference.digest
        result = client.lookup_each(reference, logins.applying_to(reference))
        # an image the registry lacks still runs (from a node's cache) in some scenarios
        return result.digest if isinstance(result, Resolved) else "sha256:" + "0" * 64

    fake_api.add(_regcred(registry.host))
    yield RefreshEnv(fake_api, registry, RolloutSimulator(fake_api, digest_for), kubeconfig)
    client.close()


def _workload(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(w for w in report["workloads"] if w["name"] == name)


def _staying(env: RefreshEnv) -> list[Obj]:
    """The namespace's pods that are not terminating (replaced ones linger, as on a cluster)."""
    return [
        p for p in env.server.list_objects("Pod", NS) if "deletionTimestamp" not in p["metadata"]
    ]


def _events(env: RefreshEnv, name: str, namespace: str = NS) -> list[tuple[str, str]]:
    """(type, reason) of the Events stored about Deployment `name`, oldest first."""
    about = [
        e
        for e in env.server.list_objects("Event", namespace)
        if e["involvedObject"]["name"] == name
    ]
    about.sort(key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [(e["type"], e["reason"]) for e in about]


def test_first_run_records_what_the_pods_already_run(env: RefreshEnv) -> None:
    digest = env.registry.push_image("r/fresh", "stable", content="v1")
    env.install(deployment("fresh", container("runner", env.image("r/fresh", "stable"))))
    bystander = deployment("bystander", container("runner", env.image("r/fresh", "stable")))
    del bystander["metadata"]["labels"]["truegreen.io/refresh"]  # not opted in
    env.install(bystander)
    result = env.tick()
    assert [w["name"] for w in result.json()["workloads"]] == ["fresh"]
    workload = _workload(result.json(), "fresh")
    assert (workload["outcome"], workload["containers"][0]["decision"]) == (
        "converged",
        "record-running",
    )
    assert workload["writes"] == [
        {
            "step": "record",
            "annotations": {container_key(RECORDED_DIGEST, "runner"): digest},
            "template": "",
            "applied": True,
            "error": "",
        }
    ]
    assert env.annotations("fresh")[container_key(RECORDED_DIGEST, "runner")] == digest
    assert env.restarts("fresh") == 0
    assert result.exit_code == 0


def test_moved_tag_restarts_verifies_and_records(env: RefreshEnv) -> None:
    env.registry.push_image("r/moving", "stable", content="v1")
    env.install(deployment("moving", container("runner", env.image("r/moving", "stable"))))
    assert env.tick().exit_code == 0  # records v1
    newest = env.registry.push_image("r/moving", "stable", content="v2")
    before = len(env.server.log)
    result = env.tick()
    workload = _workload(result.json(), "moving")
    assert workload["outcome"] == "restarted"
    restarted = env.server.get_object("Deployment", "moving", NS)
    assert restarted is not None
    stamp = restarted["spec"]["template"]["metadata"]["annotations"][RESTARTED_AT]
    restart = workload["writes"][0]
    assert (restart["template"], restart["applied"]) == (
        f"template annotation {RESTARTED_AT}={stamp}",
        True,
    )
    # The first pass lists the namespace's pods once; the rollout wait asks for this
    # Deployment's pods only, by its selector.
    pod_lists = [
        r.query for r in env.server.log[before:] if r.path == f"/api/v1/namespaces/{NS}/pods"
    ]
    assert pod_lists[0].get("labelSelector") is None
    assert {q.get("labelSelector") for q in pod_lists[1:]} == {"app=moving"}, pod_lists
    assert [w["step"] for w in workload["writes"]] == ["restart", "record"]
    annotations = env.annotations("moving")
    assert annotations[container_key(RECORDED_DIGEST, "runner")] == newest
    assert not {ATTEMPTS, PENDING, LATCHED} & annotations.keys()
    assert env.restarts("moving") == 1
    pods = _staying(env)
    assert [p["status"]["containerStatuses"][0]["imageID"].split("@")[1] for p in pods] == [newest]
    assert env.tick().json()["workloads"][0]["outcome"] == "converged"
    assert env.restarts("moving") == 1


def _leaving(env: RefreshEnv) -> list[Obj]:
    """The namespace's pods that are terminating."""
    return [p for p in env.server.list_objects("Pod", NS) if "deletionTimestamp" in p["metadata"]]


@pytest.mark.parametrize("status_lag", [0, 1], ids=["status-on-time", "status-late"])
def test_old_pods_still_terminating_mean_one_restart_a_record_and_a_quiet_next_tick(
    env: RefreshEnv, status_lag: int
) -> None:
    """kubectl#1628, kubernetes#110171: the Deployment reports complete while the replaced
    pod is still Terminating, Running, with the OLD imageID; its status may even come late.
    The tick verifies the pods that stay, records, and the next tick does nothing."""
    old = env.registry.push_image("r/linger", "stable", content="v1")
    env.install(deployment("linger", container("runner", env.image("r/linger", "stable"))))
    assert env.tick().exit_code == 0  # records v1
    newest = env.registry.push_image("r/linger", "stable", content="v2")
    env.simulator.terminating_reads = 50  # the replaced pod outlives both ticks
    env.simulator.status_lag_reads = status_lag
    reads = len(env.server.requests("GET", r"/deployments/linger$"))
    result = env.tick()
    workload = _workload(result.json(), "linger")
    assert (workload["outcome"], result.exit_code) == ("restarted", 0), workload["reason"]
    assert env.restarts("linger") == 1
    assert env.annotations("linger")[container_key(RECORDED_DIGEST, "runner")] == newest
    (leaving,) = _leaving(env)  # precondition: the old pod was there all along
    assert leaving["metadata"]["deletionGracePeriodSeconds"] == 30
    assert leaving["status"]["phase"] == "Running"
    assert leaving["status"]["containerStatuses"][0]["imageID"].endswith(old)
    polls = len(env.server.requests("GET", r"/deployments/linger$")) - reads
    assert polls == 1 + status_lag, "precondition: the tick saw the late status"
    patches = len(env.server.requests("PATCH"))
    again = env.tick()
    quiet = _workload(again.json(), "linger")
    assert (quiet["outcome"], quiet["writes"], again.exit_code) == ("converged", [], 0)
    assert len(env.server.requests("PATCH")) == patches
    assert env.restarts("linger") == 1
    assert len(_leaving(env)) == 1, "precondition: still terminating on the next tick"


def test_first_run_judges_the_pods_that_stay_not_the_terminating_ones(env: RefreshEnv) -> None:
    """Someone else's rollout to the newest digest just finished; its old pod still runs the
    old one while it terminates. Nothing recorded yet: record, do not restart."""
    env.registry.push_image("r/handover", "stable", content="v1")
    env.install(deployment("handover", container("runner", env.image("r/handover", "stable"))))
    newest = env.registry.push_image("r/handover", "stable", content="v2")
    env.simulator.terminating_reads = 50
    stored = env.server.get_object("Deployment", "handover", NS)
    assert stored is not None
    env.simulator.roll_out(stored, "ok")  # the controller replaced the pod on its own
    assert len(_leaving(env)) == 1, "precondition: the old pod is terminating"
    assert [p["status"]["containerStatuses"][0]["imageID"] for p in _staying(env)] == [
        f"{env.image('r/handover', 'stable').rsplit(':', 1)[0]}@{newest}"
    ]
    result = env.tick()
    workload = _workload(result.json(), "handover")
    assert (workload["outcome"], workload["containers"][0]["decision"]) == (
        "converged",
        "record-running",
    )
    assert env.annotations("handover")[container_key(RECORDED_DIGEST, "runner")] == newest
    assert env.restarts("handover") == 0


def test_failed_rollout_records_nothing_and_the_guard_latches(env: RefreshEnv) -> None:
    old = env.registry.push_image("r/crashy", "stable", content="v1")
    env.install(deployment("crashy", container("runner", env.image("r/crashy", "stable"))))
    env.tick()
    env.registry.push_image("r/crashy", "stable", content="v2")
    env.simulator.behaviour["crashy"] = "crash"
    failed = ("Warning", "RefreshRolloutFailed")
    for attempt in (1, 2):
        result = env.tick("--max-attempts", "2")
        workload = _workload(result.json(), "crashy")
        assert (workload["outcome"], result.exit_code) == ("rollout-failed", 2)
        assert "keeps crashing (CrashLoopBackOff)" in workload["reason"]
        annotations = env.annotations("crashy")
        assert annotations[container_key(RECORDED_DIGEST, "runner")] == old
        assert annotations[ATTEMPTS].startswith(f"{attempt} ")
        assert PENDING not in annotations
        assert _events(env, "crashy") == [failed] * attempt
    result = env.tick("--max-attempts", "2")
    workload = _workload(result.json(), "crashy")
    assert (workload["outcome"], result.exit_code) == ("latched", 0)
    assert env.restarts("crashy") == 2
    assert LATCHED in env.annotations("crashy")
    latched = ("Warning", "RefreshLatched")
    assert _events(env, "crashy") == [failed, failed, latched]
    assert env.tick("--max-attempts", "2").exit_code == 0
    assert _events(env, "crashy") == [failed, failed, latched]  # latched once, said once


def test_a_new_pod_that_crashed_between_two_looks_fails_the_rollout(env: RefreshEnv) -> None:
    """Between two crashes of a crash loop the kubelet shows the container running, even Ready,
    with its restartCount up and the run that ended in lastState: kubectl calls the rollout
    done, but a pod the restart made that was started again is not healthy."""
    old = env.registry.push_image("r/flaky", "stable", content="v1")
    env.install(deployment("flaky", container("runner", env.image("r/flaky", "stable"))))
    env.tick()
    env.registry.push_image("r/flaky", "stable", content="v2")

    def crashed_since(server: FakeApiServer, method: str, path: str) -> None:
        """Each new pod, when listed, has crashed once and is running again."""
        if method != "GET" or "/pods" not in path:
            return
        for pod in server.list_objects("Pod", NS):
            if RESTARTED_AT not in (pod["metadata"].get("annotations") or {}):
                continue
            status = pod["status"]["containerStatuses"][0]
            if status["restartCount"]:
                continue
            ended = (datetime.now(UTC) - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            status["restartCount"] = 5
            status["lastState"] = {
                "terminated": {"exitCode": 137, "reason": "Error", "finishedAt": ended}
            }
            server.update_object(pod)

    env.server.request_hooks.append(crashed_since)
    result = env.tick()
    workload = _workload(result.json(), "flaky")
    assert (workload["outcome"], result.exit_code) == ("rollout-failed", 2)
    assert "crashed and was started again" in workload["reason"]
    assert "restartCount 5, last exit code 137" in workload["reason"]
    annotations = env.annotations("flaky")
    assert annotations[container_key(RECORDED_DIGEST, "runner")] == old
    assert annotations[ATTEMPTS].startswith("1 ")
    assert PENDING not in annotations
    assert _events(env, "flaky") == [("Warning", "RefreshRolloutFailed")]


def test_rollout_whose_pods_run_the_old_digest_records_nothing(env: RefreshEnv) -> None:
    old = env.registry.push_image("r/cache", "stable", content="v1")
    env.install(deployment("cache", container("runner", env.image("r/cache", "stable"))))
    env.tick()
    env.registry.push_image("r/cache", "stable", content="v2")
    env.simulator.behaviour["cache"] = "old-image"
    result = env.tick()
    workload = _workload(result.json(), "cache")
    assert (workload["outcome"], result.exit_code) == ("rollout-failed", 2)
    assert workload["reason"] == "the new pods do not run the newest digest (runner)"
    assert env.annotations("cache")[container_key(RECORDED_DIGEST, "runner")] == old
    assert env.restarts("cache") == 1  # precondition: the rollout did happen


def test_latched_tick_still_lands_its_stale_pin_writes(env: RefreshEnv) -> None:
    """The seed's regression: off-digest AND latched, the stale-pin clear and set still land,
    and the digest is not recorded."""
    env.registry.push_image("r/app", "stable", content="v1")
    pinned_old = env.registry.push_image("r/side", "v3", content="old")
    current = env.registry.push_image("r/helper", "v1", content="helper")
    workload = deployment(
        "seed",
        container("runner", env.image("r/app", "stable")),
        container("side", f"{env.image('r/side', 'v3')}@{pinned_old}"),
        container("helper", f"{env.image('r/helper', 'v1')}@{current}"),
    )
    env.install(workload)
    env.tick()  # records the runner's digest
    recorded = env.annotations("seed")[container_key(RECORDED_DIGEST, "runner")]
    moved = env.registry.push_image("r/side", "v3", content="new")  # side's pin is now stale
    env.registry.push_image("r/app", "stable", content="v2")  # runner is off-digest
    stored = env.server.get_object("Deployment", "seed", NS)
    assert stored is not None
    target = "0" * 12
    stored["metadata"]["annotations"].update(
        {
            ATTEMPTS: f"3 {target}",  # replaced below by the real target id
            container_key(STALE_PIN, "helper"): "v1 sha256:" + "f" * 64,  # a stale finding to clear
        }
    )
    env.server.update_object(stored)
    from truegreen.refresh.plan import target_id

    newest_runner = env.registry.push_image("r/app", "stable", content="v2")
    stored = env.server.get_object("Deployment", "seed", NS)
    assert stored is not None
    stored["metadata"]["annotations"][ATTEMPTS] = f"3 {target_id({'runner': newest_runner})}"
    env.server.update_object(stored)
    result = env.tick()
    report = _workload(result.json(), "seed")
    assert report["outcome"] == "latched"
    assert report["writes"][0]["step"] == "stale-pins"
    annotations = env.annotations("seed")
    assert annotations[container_key(STALE_PIN, "side")] == f"v3 {moved}"
    assert container_key(STALE_PIN, "helper") not in annotations
    assert annotations[container_key(RECORDED_DIGEST, "runner")] == recorded
    assert env.restarts("seed") == 0


def test_pins_are_never_restarted_and_their_findings_follow_the_four_paths(env: RefreshEnv) -> None:
    first = env.registry.push_image("r/pinned", "v1", content="a")
    env.install(deployment("pins", container("p", f"{env.image('r/pinned', 'v1')}@{first}")))
    key = container_key(STALE_PIN, "p")
    assert env.tick().exit_code == 0
    assert key not in env.annotations("pins")  # current pin: no finding
    moved = env.registry.push_image("r/pinned", "v1", content="b")
    env.tick()
    assert env.annotations("pins")[key] == f"v1 {moved}"  # tag moved past the pin: set
    assert env.restarts("pins") == 0
    stored = env.server.get_object("Deployment", "pins", NS)
    assert stored is not None
    stored["spec"]["template"]["spec"]["containers"][0]["image"] = (
        f"{env.registry.host}/r/pinned@{first}"
    )
    env.server.update_object(stored)
    env.tick()
    assert key not in env.annotations("pins")  # digest-only, no tag tracked: cleared
    stored = env.server.get_object("Deployment", "pins", NS)
    assert stored is not None
    stored["metadata"]["annotations"][key] = "v1 sha256:" + "e" * 64
    stored["spec"]["template"]["spec"]["containers"][0]["image"] = env.image("r/pinned", "v1")
    env.server.update_object(stored)
    env.tick()
    assert key not in env.annotations("pins")  # no longer pinned: cleared


def test_dangling_pin_is_a_measured_failure(env: RefreshEnv) -> None:
    digest = env.registry.push_image("r/dangling", "v1", content="gone-soon")
    env.install(deployment("dangle", container("p", f"{env.image('r/dangling', 'v1')}@{digest}")))
    env.registry.delete_manifest("r/dangling", digest)
    for _ in range(2):  # the finding stays a failure; its Event is said when it appears
        result = env.tick()
        workload = _workload(result.json(), "dangle")
        assert (workload["outcome"], result.exit_code) == ("dangling-pin", 2)
        assert digest in env.annotations("dangle")[container_key(DANGLING_PIN, "p")]
        assert _events(env, "dangle") == [("Warning", "DanglingPin")]


def test_pull_policy_that_keeps_the_old_image_is_refused(env: RefreshEnv) -> None:
    env.registry.push_image("r/cached", "v1", content="a")
    env.install(deployment("cached", container("runner", env.image("r/cached", "v1"), policy=None)))
    env.tick()
    env.registry.push_image("r/cached", "v1", content="b")
    result = env.tick()
    workload = _workload(result.json(), "cached")
    assert (workload["outcome"], result.exit_code) == ("refused", 2)
    assert "imagePullPolicy is not Always for runner (IfNotPresent)" in workload["reason"]
    assert env.restarts("cached") == 0


def test_pin_mode_sets_the_template_image_to_the_digest(env: RefreshEnv) -> None:
    env.registry.push_image("r/pinmode", "stable", content="a")
    env.registry.push_image("r/pinside", "stable", content="side")
    runner = container("runner", env.image("r/pinmode", "stable"), policy=None)
    runner["env"] = [{"name": "MODE", "value": "train"}]
    side = container("side", env.image("r/pinside", "stable"), policy=None)
    env.install(deployment("pinmode", runner, side))
    env.tick("--mode", "pin")
    newest = env.registry.push_image("r/pinmode", "stable", content="b")
    result = env.tick("--mode", "pin")
    assert _workload(result.json(), "pinmode")["outcome"] == "restarted"
    stored = env.server.get_object("Deployment", "pinmode", NS)
    assert stored is not None
    # Only the runner's image changes: the patch merges containers by name, keeping the rest.
    pinned = {**runner, "image": f"{env.image('r/pinmode', 'stable')}@{newest}"}
    assert stored["spec"]["template"]["spec"]["containers"] == [pinned, side]
    # Refresh's own pin tracks its tag: the next move restarts again, and is never a stale
    # operator pin (nor looked up as one).
    again = env.registry.push_image("r/pinmode", "stable", content="c")
    moved = env.tick("--mode", "pin").json()
    assert (_workload(moved, "pinmode")["outcome"], moved["distinct_references"]) == (
        "restarted",
        2,
    )
    stored = env.server.get_object("Deployment", "pinmode", NS)
    assert stored is not None
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"].endswith(again)
    assert not [k for k in env.annotations("pinmode") if "stale-pin" in k]
    assert env.tick("--mode", "pin").json()["workloads"][0]["outcome"] == "converged"


def test_pin_mode_leaves_an_operators_pin_alone(env: RefreshEnv) -> None:
    """`repo:tag@digest` that refresh neither recorded nor aimed a restart at is the operator's
    pin in pin mode too: never restarted, never recorded, its stale-pin finding written."""
    pinned = env.registry.push_image("r/oppin", "stable", content="a")
    image = f"{env.image('r/oppin', 'stable')}@{pinned}"
    env.install(deployment("oppin", container("runner", image, policy=None)))
    moved = env.registry.push_image("r/oppin", "stable", content="b")
    assert not [k for k in env.annotations("oppin") if k.startswith("truegreen.io/")], (
        "precondition: refresh never recorded nor restarted anything here"
    )
    result = env.tick("--mode", "pin")
    workload = _workload(result.json(), "oppin")
    assert (workload["outcome"], result.exit_code) == ("converged", 0), workload
    annotations = env.annotations("oppin")
    assert annotations[container_key(STALE_PIN, "runner")] == f"stable {moved}"
    assert container_key(RECORDED_DIGEST, "runner") not in annotations
    assert env.restarts("oppin") == 0
    stored = env.server.get_object("Deployment", "oppin", NS)
    assert stored is not None
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == image


def test_paused_and_moving_deployments_are_left_alone(env: RefreshEnv) -> None:
    env.registry.push_image("r/held", "stable", content="a")
    image = env.image("r/held", "stable")
    paused = deployment("paused", container("runner", image))
    paused["spec"]["paused"] = True
    moving = deployment("moving", container("runner", image))
    moving["metadata"]["generation"] = 2  # someone else's change, not yet picked up
    for workload in (paused, moving):
        env.install(workload)
    stored = env.server.get_object("Deployment", "moving", NS)
    assert stored is not None
    assert stored["metadata"]["generation"] > stored["status"]["observedGeneration"], "precondition"
    result = env.tick()
    outcomes = {
        w["name"]: (w["namespace"], w["outcome"], w["reason"], w["writes"])
        for w in result.json()["workloads"]
    }
    assert outcomes == {
        "paused": (NS, "paused", "the Deployment is paused", []),
        "moving": (NS, "in-progress", "a rollout is in progress; not touching it", []),
    }
    assert (result.exit_code, env.server.requests("PATCH")) == (0, [])


@pytest.mark.parametrize(
    ("pod_secrets", "account_secrets", "sends_login"),
    [
        # the login is in the pod's second secret: every secret is read, not only the last
        (["other-registry", "login"], [], True),
        # a pod naming none gets its service account's
        ([], ["login"], True),
        (["login"], ["other-registry"], True),
        # a pod naming its own gets none of its service account's
        (["other-registry"], ["login"], False),
        # a secret of another type holding a login's key is no login
        (["opaque-login"], [], False),
        ([], ["opaque-login"], False),
    ],
)
@pytest.mark.parametrize("key", [".dockerconfigjson", ".dockercfg"])
def test_registry_logins_are_those_the_kubelet_sends(
    env: RefreshEnv, pod_secrets: list[str], account_secrets: list[str], sends_login: bool, key: str
) -> None:
    """The logins a pod sends: its own image pull secrets; only when it names none, its service
    account's, which the ServiceAccount admission plugin copies into it
    (kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go, Admit). Of each,
    the key of its type alone: `.dockerconfigjson` of a kubernetes.io/dockerconfigjson secret,
    `.dockercfg` of a kubernetes.io/dockercfg one (pkg/credentialprovider/secrets/secrets.go,
    MakeDockerKeyring)."""
    digest = env.registry.push_image("r/login", "stable", content="a")
    host = env.registry.host
    env.server.add(_login_secret("login", key, {host: REGISTRY_PASSWORD}))
    env.server.add(_login_secret("other-registry", key, {"registry.example.com": "x"}))
    env.server.add(_login_secret("opaque-login", key, {host: REGISTRY_PASSWORD}, "Opaque"))
    env.server.add(_account("runner", *account_secrets))
    workload = deployment("login", container("runner", env.image("r/login", "stable")))
    pod_spec = workload["spec"]["template"]["spec"]
    pod_spec["imagePullSecrets"] = [{"name": n} for n in pod_secrets]
    pod_spec["serviceAccountName"] = "runner"
    env.install(workload)
    result = env.tick()
    report = _workload(result.json(), "login")
    found = (report["outcome"], report["containers"][0]["newest_digest"], result.exit_code)
    if sends_login:
        assert found == ("converged", digest, 0)
    else:
        assert found == ("could-not-check", None, 3)
        needs = f"{host} needs a login; the workload's pull secrets hold none for it"
        assert report["reason"] == needs
    account_reads = env.server.requests("GET", r"/serviceaccounts/runner$")
    assert len(account_reads) == (0 if pod_secrets else 1), "the account is read only when needed"


def test_each_login_that_applies_is_tried_in_turn(env: RefreshEnv) -> None:
    """The kubelet pulls with each login the keyring returns for the image, in its order, until
    one pull succeeds (pkg/kubelet/kuberuntime/kuberuntime_image.go, PullImage; keyring.go
    BasicDockerKeyring.Lookup returns every match): a login the registry refuses, named first,
    leaves the look-up to the next."""
    digest = env.registry.push_image("r/turn", "stable", content="a")
    host = env.registry.host
    env.server.add(_login_secret("expired", ".dockerconfigjson", {host: "expired-password"}))
    workload = deployment(
        "turn", container("runner", env.image("r/turn", "stable")), pull_secret="expired"
    )
    workload["spec"]["template"]["spec"]["imagePullSecrets"].append({"name": "regcred"})
    env.install(workload)
    result = env.tick()
    report = _workload(result.json(), "turn")
    assert (report["outcome"], report["containers"][0]["newest_digest"], result.exit_code) == (
        "converged",
        digest,
        0,
    )
    # Refused by every login: the first refusal is the reason, nothing is measured.
    env.set_regcred(_login_secret("regcred", ".dockerconfigjson", {host: "also-expired"}))
    refused = env.tick()
    report = _workload(refused.json(), "turn")
    assert (report["outcome"], report["reason"], refused.exit_code) == (
        "could-not-check",
        f"{host} refused the credentials for r/turn",
        3,
    )


def test_an_image_that_is_no_reference_still_lets_its_neighbours_be_looked_up(
    env: RefreshEnv,
) -> None:
    digest = env.registry.push_image("r/neighbour", "stable", content="a")
    bad = container("bad", "Not An Image")
    # No pod: no kubelet could pull the bad image either.
    env.server.add(
        deployment("mixed", bad, container("runner", env.image("r/neighbour", "stable")))
    )
    result = env.tick()
    workload = _workload(result.json(), "mixed")
    assert (workload["outcome"], result.exit_code) == ("invalid-image", 2)
    assert workload["reason"] == (  # the kubelet's words (image_manager.go, reference.go)
        'bad: couldn\'t parse image reference "Not An Image": invalid reference format: '
        "repository name (library/Not An Image) must be lowercase"
    )
    assert [(c["decision"], c["newest_digest"]) for c in workload["containers"]] == [
        ("invalid-image", None),
        ("restart", digest),
    ]


def test_an_image_or_track_tag_that_is_no_reference_is_reported_redacted(env: RefreshEnv) -> None:
    """refresh reads its workloads as written (it writes them back); what it prints of an
    image text that is no reference, or of a track-tag annotation that names no tag, is
    redacted as doctor's reads redact it (docs/snapshot.md: "an `image` that is no reference
    is redacted as any text": URL userinfo, `--name=value`)."""
    pinned = env.registry.push_image("r/tagless", "stable", content="a")
    env.server.add(
        deployment("userinfo", container("app", "https://deploy:PLANTED7731@example.com/app:1")),
        deployment("flag", container("app", "example.com/app:1 --password=PLANTED7732")),
        deployment(
            "annotated",
            container("app", f"{env.registry.host}/r/tagless@{pinned}"),
            annotations={container_key(TRACK_TAG, "app"): "v1 https://u:PLANTED7733@x"},
        ),
    )
    outputs = [env.tick("-v"), env.tick("-v", "-o", "text")]
    reasons = {w["name"]: w["reason"] for w in outputs[0].json()["workloads"]}
    assert reasons == {
        "userinfo": 'app: couldn\'t parse image reference "https://<redacted>@example.com/app:1": '
        "invalid reference format",
        "flag": 'app: couldn\'t parse image reference "example.com/app:1 --password=<redacted>": '
        "invalid reference format",
        "annotated": 'app: couldn\'t parse image reference "v1 https://<redacted>@x": the '
        f"annotation {container_key(TRACK_TAG, 'app')} names no valid tag",
    }
    images = {w["name"]: w["containers"][0]["image"] for w in outputs[0].json()["workloads"]}
    assert images["annotated"] == f"{env.registry.host}/r/tagless@{pinned}"  # a reference, whole
    for result in outputs:
        assert result.exit_code == 2
        assert "PLANTED773" not in result.stdout + result.stderr


def test_deployments_that_cannot_be_listed_are_a_tick_that_could_not_look(
    env: RefreshEnv,
) -> None:
    env.server.inject(Fault.FORBIDDEN, r"/deployments$", method="GET")
    result = env.tick()
    report = result.json()
    assert (result.exit_code, report["workloads"], report["registry_requests"]) == (3, [], 0)
    assert [r.split(" (")[0] for r in report["cant_read"]] == ["list deployments: no permission"]


def test_pods_that_cannot_be_read_leave_the_workload_unchecked(env: RefreshEnv) -> None:
    env.registry.push_image("r/blind", "stable", content="a")
    env.install(deployment("blind", container("runner", env.image("r/blind", "stable"))))
    env.install(deployment("blinder", container("runner", env.image("r/blind", "stable"))))
    env.server.inject(Fault.FORBIDDEN, r"/pods$", method="GET")
    result = env.tick()
    assert [w["outcome"] for w in result.json()["workloads"]] == ["could-not-check"] * 2
    workload = _workload(result.json(), "blind")
    assert (workload["namespace"], workload["outcome"], result.exit_code) == (
        NS,
        "could-not-check",
        3,
    )
    assert workload["reason"].startswith("list pods: no permission (403)"), workload["reason"]
    assert env.server.requests("PATCH") == []


def test_dry_run_writes_nothing(env: RefreshEnv) -> None:
    digest = env.registry.push_image("r/dry", "stable", content="a")
    env.install(deployment("dry", container("runner", env.image("r/dry", "stable"))))
    before = env.server.get_object("Deployment", "dry", NS)
    result = env.tick("--dry-run")
    workload = _workload(result.json(), "dry")
    assert workload["writes"] == [
        {
            "step": "record",
            "annotations": {container_key(RECORDED_DIGEST, "runner"): digest},
            "template": "",
            "applied": False,
            "error": "",
        }
    ]
    assert env.server.requests("PATCH") == []
    assert env.server.get_object("Deployment", "dry", NS) == before


def test_a_dry_run_shows_the_restart_it_would_make_stamped_in_utc(
    env: RefreshEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re
    import time
    from datetime import UTC, datetime

    env.registry.push_image("r/plan", "stable", content="a")
    image = env.image("r/plan", "stable")
    env.install(deployment("plan", container("runner", image), container("helper", image)))
    assert env.tick().exit_code == 0  # records what runs
    recorded = env.annotations("plan")[container_key(RECORDED_DIGEST, "runner")]
    env.registry.push_image("r/plan", "stable", content="b")
    before = env.server.get_object("Deployment", "plan", NS)
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: a local stamp would be a day off
    time.tzset()
    try:
        result = env.tick("--dry-run")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    workload = _workload(result.json(), "plan")
    assert (workload["outcome"], result.exit_code) == ("planned", 0)
    behind = f"recorded {recorded[:19]}… is not the newest"
    assert workload["reason"] == f"would restart: {behind}, {behind}"
    [write] = workload["writes"]
    assert (write["step"], write["applied"], write["error"]) == ("restart", False, "")
    assert set(write["annotations"]) == {ATTEMPTS, PENDING, RESTARTED}
    assert write["annotations"][ATTEMPTS].startswith("1 ")
    stamp = write["template"].removeprefix("template annotation kubectl.kubernetes.io/restartedAt=")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp), write["template"]
    taken = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - taken).total_seconds()) < 60
    assert json.loads(write["annotations"][PENDING])["stamp"] == stamp
    assert env.server.get_object("Deployment", "plan", NS) == before


def test_an_annotation_write_refused_with_a_conflict_is_decided_again_from_a_fresh_read(
    env: RefreshEnv,
) -> None:
    digest = env.registry.push_image("r/clash", "stable", content="a")
    env.install(deployment("clash", container("runner", env.image("r/clash", "stable"))))
    env.server.inject(Fault.CONFLICT, r"/deployments/clash$", method="PATCH", count=1)
    before = len(env.server.log)
    workload = _workload(env.tick().json(), "clash")
    assert workload["outcome"] == "converged"
    assert workload["writes"] == [
        {
            "step": "record",
            "annotations": {container_key(RECORDED_DIGEST, "runner"): digest},
            "template": "",
            "applied": True,
            "error": "",
        }
    ]
    made = [(r.method, r.status) for r in env.server.log[before:] if r.path.endswith("/clash")]
    assert made == [("PATCH", 409), ("GET", 200), ("PATCH", 200)]  # refused, re-read, written
    assert env.annotations("clash")[container_key(RECORDED_DIGEST, "runner")] == digest


def test_registry_failure_restarts_nothing_and_exits_3(env: RefreshEnv) -> None:
    env.install(deployment("missing", container("runner", env.image("r/never-pushed", "v1"))))
    result = env.tick()
    workload = _workload(result.json(), "missing")
    assert (workload["outcome"], result.exit_code) == ("could-not-check", 3)
    assert env.server.requests("PATCH") == []


def _concurrent_ticks(env: RefreshEnv, count: int) -> list[str]:
    """`count` ticks at once, each with its own client, as CronJob pods would be (the in-process
    runner swaps sys.stdout process-wide, so the ticks run below the CLI here)."""
    import threading

    settings = RefreshSettings(namespace=NS, selector={"truegreen.io/refresh": "enabled"})
    outcomes: list[str] = []

    def tick() -> None:
        with LiveCluster.connect(ConnectionSettings(kubeconfig=env.kubeconfig)) as cluster:
            outcomes.append(run_tick(cluster, settings).workloads[0].outcome.value)

    threads = [threading.Thread(target=tick) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(outcomes)


def test_concurrent_ticks_restart_once(env: RefreshEnv) -> None:
    env.registry.push_image("r/race", "stable", content="a")
    env.install(deployment("race", container("runner", env.image("r/race", "stable"))))
    env.tick()
    env.registry.push_image("r/race", "stable", content="b")
    # The first restart write waits a moment, so the other tick reads the same version first.
    env.server.inject(Fault.DELAY, r"/deployments/race$", method="PATCH", count=1, delay=1.0)
    outcomes = _concurrent_ticks(env, 2)
    # The loser says who restarted: another tick did, not it.
    assert outcomes == ["restarted", "restarted-by-other"]
    patches = [(r.status, r.fault) for r in env.server.requests("PATCH", r"/deployments/race$")]
    assert env.restarts("race") == 1, patches
    assert [status for status, _ in patches].count(409) == 1, patches


def test_three_concurrent_ticks_make_one_restart_per_digest(env: RefreshEnv) -> None:
    """Issue 14's case: three ticks at once, twice, as the tag moves twice. Each digest gets
    one restart; one tick says restarted, the others restarted-by-other; nothing is left."""
    env.registry.push_image("r/three", "stable", content="a")
    env.install(deployment("three", container("runner", env.image("r/three", "stable"))))
    env.tick()
    for round_, content in enumerate(("b", "c"), start=1):
        newest = env.registry.push_image("r/three", "stable", content=content)
        # Each tick's restart write is held, so all three have read the same version first.
        env.server.inject(Fault.DELAY, r"/deployments/three$", method="PATCH", count=3, delay=3)
        before = len(env.server.requests("PATCH", r"/deployments/three$"))
        outcomes = _concurrent_ticks(env, 3)
        held = env.server.requests("PATCH", r"/deployments/three$")[before : before + 3]
        assert [r.fault for r in held] == [Fault.DELAY] * 3, "precondition: three restart writes"
        assert [r.status for r in held].count(409) == 2, "precondition: they raced"
        assert outcomes == ["restarted", "restarted-by-other", "restarted-by-other"]
        assert env.restarts("three") == round_
        annotations = env.annotations("three")
        assert annotations[container_key(RECORDED_DIGEST, "runner")] == newest
        assert not {PENDING, ATTEMPTS, LATCHED} & annotations.keys()
        refreshed = [
            e for e in env.server.list_objects("Event", NS) if e["reason"] == "ImageRefreshed"
        ]
        assert len(refreshed) == round_  # one Event per rollout, from whoever recorded it


def test_a_record_never_lands_on_a_marker_it_did_not_wait_on(env: RefreshEnv) -> None:
    """While a tick's record write is in flight, another tick restarts toward a newer digest
    (its marker replaces ours). The record carries the version it read: 409, read again,
    and the other tick's marker survives."""
    import threading
    import time

    env.registry.push_image("r/erase", "stable", content="a")
    env.install(deployment("erase", container("runner", env.image("r/erase", "stable"))))
    env.tick()
    env.registry.push_image("r/erase", "stable", content="b")
    path = r"/deployments/erase$"
    # PATCH 0 is this tick's restart, PATCH 1 its record: hold the record a moment.
    env.server.inject(Fault.DELAY, path, method="PATCH", after=1, count=1, delay=2)
    theirs = json.dumps({"target": {"runner": "sha256:" + "c" * 64}, "stamp": "theirs"})

    def other_tick() -> None:
        deadline = time.monotonic() + 30
        while not any(r.fault is Fault.DELAY for r in env.server.requests("PATCH", path)):
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        stored = env.server.get_object("Deployment", "erase", NS)
        assert stored is not None
        stored["metadata"]["annotations"][PENDING] = theirs
        env.server.update_object(stored)

    racer = threading.Thread(target=other_tick)
    racer.start()
    result = env.tick()
    racer.join()
    workload = _workload(result.json(), "erase")
    assert env.annotations("erase").get(PENDING) == theirs, "another tick's marker was erased"
    assert (workload["outcome"], workload["reason"]) == (
        "restarted",
        "rolled out and verified; not recorded: another tick has restarted since",
    )
    statuses = [r.status for r in env.server.requests("PATCH", path)]
    assert statuses[-2:] == [200, 409], "the restart landed, the record met the other's write"


def test_a_deployment_that_keeps_changing_is_not_restarted_blindly(env: RefreshEnv) -> None:
    env.registry.push_image("r/busy", "stable", content="a")
    busy = deployment("busy", container("runner", env.image("r/busy", "stable")))
    login = _regcred(env.registry.host)
    for obj in (busy, login):
        obj["metadata"]["namespace"] = "elsewhere"  # the re-read must ask in the right place
    env.server.add(login)
    env.install(busy)
    assert env.tick("-A").exit_code == 0  # records what runs
    env.registry.push_image("r/busy", "stable", content="b")
    env.server.inject(Fault.CONFLICT, r"/deployments/busy$", method="PATCH")
    before = len(env.server.log)
    result = env.tick("-A")
    workload = _workload(result.json(), "busy")
    assert (workload["outcome"], workload["reason"], result.exit_code) == (
        "could-not-check",
        "the Deployment kept changing under the tick",
        3,
    )
    made = [(r.method, r.path) for r in env.server.log[before:] if r.path.endswith("/busy")]
    busy_path = "/apis/apps/v1/namespaces/elsewhere/deployments/busy"
    assert made == [("PATCH", busy_path), ("GET", busy_path)] * 3  # write, 409, re-read
    assert env.restarts("busy") == 0


def test_a_tick_that_died_mid_rollout_is_resumed_not_restarted(env: RefreshEnv) -> None:
    env.registry.push_image("r/resume", "stable", content="a")
    env.install(deployment("resume", container("runner", env.image("r/resume", "stable"))))
    env.tick()
    newest = env.registry.push_image("r/resume", "stable", content="b")
    env.simulator.behaviour["resume"] = "stall"
    result = env.tick("--rollout-timeout", "1")
    assert _workload(result.json(), "resume")["reason"].startswith("timed out")
    assert PENDING in env.annotations("resume")  # the marker survives for the next tick
    stored = env.server.get_object("Deployment", "resume", NS)
    assert stored is not None
    env.simulator.roll_out(stored, "ok")  # the controller finishes on its own
    patches = len(env.server.requests("PATCH"))
    dry = _workload(env.tick("--dry-run").json(), "resume")  # a dry run neither waits nor records
    assert (dry["outcome"], dry["writes"]) == ("planned", [])
    assert dry["reason"] == "a restart is under way: would wait for it and record"
    assert len(env.server.requests("PATCH")) == patches
    assert env.annotations("resume")[container_key(RECORDED_DIGEST, "runner")] != newest
    result = env.tick()
    workload = _workload(result.json(), "resume")
    # This tick restarted nothing: it verified and recorded the restart the dead tick made.
    assert (workload["outcome"], result.exit_code) == ("restarted-by-other", 0)
    assert [w["step"] for w in workload["writes"]] == ["record"]
    assert env.restarts("resume") == 1
    assert env.annotations("resume")[container_key(RECORDED_DIGEST, "runner")] == newest


def test_a_rollout_that_takes_a_while_is_waited_for(env: RefreshEnv) -> None:
    import threading
    import time

    env.registry.push_image("r/slow", "stable", content="a")
    env.install(deployment("slow", container("runner", env.image("r/slow", "stable"))))
    env.tick()
    newest = env.registry.push_image("r/slow", "stable", content="b")
    env.simulator.behaviour["slow"] = "stall"
    reads = r"/deployments/slow$"

    def controller() -> None:
        """Finish the rollout only once the tick has looked at it after the restart."""
        deadline = time.monotonic() + 10
        while not env.restarts("slow") and time.monotonic() < deadline:
            time.sleep(0.01)
        seen = len(env.server.requests("GET", reads))
        while len(env.server.requests("GET", reads)) == seen and time.monotonic() < deadline:
            time.sleep(0.01)
        stored = env.server.get_object("Deployment", "slow", NS)
        assert stored is not None
        env.simulator.roll_out(stored, "ok")

    finisher = threading.Thread(target=controller)
    finisher.start()
    result = env.tick()
    finisher.join()
    workload = _workload(result.json(), "slow")
    assert (workload["outcome"], result.exit_code) == ("restarted", 0), workload["reason"]
    assert len(env.server.requests("GET", reads)) >= 2, "precondition: the tick looked twice"
    assert env.annotations("slow")[container_key(RECORDED_DIGEST, "runner")] == newest


def test_role_grants_exactly_what_a_tick_uses(env: RefreshEnv) -> None:
    """Least privilege, measured: the verbs a restarting tick really sends are the Role's."""
    env.registry.push_image("r/rbac", "stable", content="a")
    pinned = env.registry.push_image("r/rbac-pin", "v1", content="p")
    env.server.add(_account("default", "regcred"))  # read for a pod naming no login
    env.install(
        deployment(
            "rbac",
            container("runner", env.image("r/rbac", "stable")),
            container("pin", f"{env.image('r/rbac-pin', 'v1')}@{pinned}"),
            pull_secret=None,
        )
    )
    env.tick()
    env.registry.push_image("r/rbac", "stable", content="b")
    env.registry.push_image("r/rbac-pin", "v1", content="q")  # a stale pin to write
    assert _workload(env.tick().json(), "rbac")["outcome"] == "restarted"
    namespaced, cluster_wide = rbac.used(env.server.requests())
    assert cluster_wide == set()
    # StatefulSets and DaemonSets are listed, and read and patched only when one is opted in
    # (test_refresh_kinds.py restarts one of each).
    unmet = {("apps", r, v) for r in ("statefulsets", "daemonsets") for v in ("get", "patch")}
    assert namespaced == rbac.granted("refresh/role.yaml") - unmet


def _runner_and_pin_moved(env: RefreshEnv, name: str) -> tuple[str, str]:
    """A recorded workload whose tag then moves (a restart is due) and whose pinned sidecar's
    tag moves too (a stale-pin finding is due). Returns (newest digest, moved pin digest)."""
    env.registry.push_image(f"r/{name}", "stable", content="a")
    first_pin = env.registry.push_image(f"r/{name}-pin", "v1", content="p")
    env.install(
        deployment(
            name,
            container("runner", env.image(f"r/{name}", "stable")),
            container("pin", f"{env.image(f'r/{name}-pin', 'v1')}@{first_pin}"),
        )
    )
    env.tick()
    newest = env.registry.push_image(f"r/{name}", "stable", content="b")
    return newest, env.registry.push_image(f"r/{name}-pin", "v1", content="q")


def _assert_converged(env: RefreshEnv, name: str, newest: str, moved_pin: str) -> None:
    """Recorded what the pods run, the stale pin reported, nothing left over, one restart."""
    annotations = env.annotations(name)
    assert annotations[container_key(RECORDED_DIGEST, "runner")] == newest
    assert annotations[container_key(STALE_PIN, "pin")] == f"v1 {moved_pin}"
    assert not {PENDING, ATTEMPTS, LATCHED} & annotations.keys()
    assert env.restarts(name) == 1


_PATCH_FAILED = "patch deployment 'steps': the cluster answered with an error (500)"
_READ_FAILED = "read deployment 'steps': the cluster answered with an error (500)"


@pytest.mark.parametrize(
    ("step", "method", "after", "reason"),
    [
        ("stale-pin write", "PATCH", 0, f"{_PATCH_FAILED}"),
        ("restart write", "PATCH", 1, f"{_PATCH_FAILED}"),
        # the controller's status update after the stale-pin write makes the first restart
        # attempt a 409: the tick reads the Deployment again before deciding again ...
        ("re-read after a conflict", "GET", 0, f"{_READ_FAILED}"),
        # ... so the rollout wait's first read is the second, and the record the fourth PATCH
        ("rollout wait", "GET", 1, f"{_READ_FAILED}; the next tick resumes the wait"),
        (
            "record write",
            "PATCH",
            3,
            "rolled out and verified: the pods run the newest digest, but the record failed: "
            f"{_PATCH_FAILED}",
        ),
    ],
)
def test_a_tick_broken_at_any_step_converges_on_the_next(
    env: RefreshEnv, step: str, method: str, after: int, reason: str
) -> None:
    """Break a tick from one step on (every later request of that kind fails, as if the process
    died there); the next tick converges: one restart, and a record of what the pods run."""
    newest, moved_pin = _runner_and_pin_moved(env, "steps")
    env.server.inject(Fault.SERVER_ERROR, r"/deployments/steps$", method=method, after=after)
    broken = env.tick()
    env.server.clear_faults()
    writes = broken.json()["workloads"][0]["writes"]
    failed = [w["step"] for w in writes if w["error"]]
    expected_first_failure = {
        "stale-pin write": "stale-pins",
        "restart write": "restart",
        "record write": "record",
    }.get(step)
    assert (failed[:1] == [expected_first_failure]) if expected_first_failure else not failed
    assert [w["applied"] for w in writes if w["error"]] == [False] * len(failed)
    restarts = [w["template"] for w in writes if w["step"] == "restart"]
    assert all(
        t.startswith("template annotation kubectl.kubernetes.io/restartedAt=") for t in restarts
    )
    assert restarts or step in ("stale-pin write", "re-read after a conflict"), "precondition"
    assert broken.exit_code == 3, f"precondition: the tick broke at the {step}"
    assert broken.json()["workloads"][0]["reason"] == reason
    healed = env.tick()
    assert healed.exit_code == 0, healed.stdout
    _assert_converged(env, "steps", newest, moved_pin)
    running = [
        s["imageID"]
        for p in _staying(env)
        for s in p["status"]["containerStatuses"]
        if s["name"] == "runner"
    ]
    assert running, "precondition: the runner has pods"
    assert all(newest in image_id for image_id in running)


def test_progress_counts_every_distinct_lookup(env: RefreshEnv) -> None:
    env.registry.push_image("r/progress", "stable", content="a")
    pinned = env.registry.push_image("r/progress-pin", "v1", content="p")
    env.install(
        deployment(
            "progress",
            container("a", env.image("r/progress", "stable")),
            container("b", env.image("r/progress", "stable")),  # the same reference: one look-up
            container("pin", f"{env.image('r/progress-pin', 'v1')}@{pinned}"),
        )
    )
    totals: list[int] = []
    done: list[int] = []

    class Progress:
        def looking_up(self, total: int) -> None:
            totals.append(total)

        def looked_up(self) -> None:
            done.append(1)

        def restarting(self, workload: str) -> None:
            raise AssertionError("nothing moved: no restart")

        def waiting(self, workload: str, progress: str) -> None:
            raise AssertionError("nothing moved: no wait")

    settings = RefreshSettings(namespace=NS, selector={"truegreen.io/refresh": "enabled"})
    with LiveCluster.connect(ConnectionSettings(kubeconfig=env.kubeconfig)) as cluster:
        report = run_tick(cluster, settings, progress=Progress())
    # one tag look-up shared by a and b, the pin's tag, and the pin's digest
    assert (totals, len(done), report.distinct_references) == ([3], 3, 3)


def test_no_credential_reaches_any_output(env: RefreshEnv) -> None:
    """Verbose, debug and error paths included: the registry password and the docker-config
    forms it travels in never appear."""
    env.registry.push_image("r/secret", "stable", content="a")
    env.install(deployment("secret", container("runner", env.image("r/secret", "stable"))))
    forms = [
        REGISTRY_PASSWORD,
        base64.b64encode(f"robot:{REGISTRY_PASSWORD}".encode()).decode(),
        _regcred(env.registry.host)["data"][".dockerconfigjson"],
    ]
    outputs = [
        env.tick("-v", "-o", "text"),
        env.tick("--debug", "-v", "-o", "text"),
        env.tick("-v"),
    ]
    broken = _regcred(env.registry.host)
    broken["data"][".dockerconfigjson"] = base64.b64encode(
        json.dumps(
            {
                "auths": {
                    env.registry.host: {"username": "robot", "password": REGISTRY_PASSWORD + "x"}
                }
            }
        ).encode()
    ).decode()
    env.set_regcred(broken)
    refused = env.tick("--debug", "-v")
    assert _workload(refused.json(), "secret")["outcome"] == "could-not-check"  # precondition
    for result in [*outputs, refused]:
        for form in forms:
            assert form not in result.stdout + result.stderr


def test_all_namespaces(env: RefreshEnv) -> None:
    env.registry.push_image("r/everywhere", "stable", content="a")
    env.install(deployment("everywhere", container("runner", env.image("r/everywhere", "stable"))))
    result = run_cli("refresh", "--kubeconfig", str(env.kubeconfig), "-A", "-o", "json")
    assert result.exit_code == 0, result.stderr
    elsewhere = run_cli("refresh", "--kubeconfig", str(env.kubeconfig), "-n", "other", "-o", "json")
    assert [w["name"] for w in elsewhere.json()["workloads"]] == []
    everywhere = run_cli(
        "refresh", "--kubeconfig", str(env.kubeconfig), "-n", "other", "-o", "json", "-A"
    )
    assert everywhere.exit_code == 64  # -n and -A together
    listed = env.server.requests("GET", r"^/apis/apps/v1/deployments$")
    assert listed, "precondition: -A lists across namespaces"
    assert [w["namespace"] for w in result.json()["workloads"]] == [NS]


@pytest.mark.parametrize("login_on", ["pod", "service account"])
def test_a_restart_outside_the_kubeconfig_s_namespace_stays_in_its_own(
    env: RefreshEnv, login_on: str
) -> None:
    env.registry.push_image("r/away", "stable", content="a")
    # Its login exists only there: reading it anywhere else finds nothing to log in with.
    secret = "away-login" if login_on == "pod" else None
    away = deployment(
        "away", container("runner", env.image("r/away", "stable")), pull_secret=secret
    )
    login = _regcred(env.registry.host)
    login["metadata"]["name"] = "away-login"
    account: Obj = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "default"},
        "imagePullSecrets": [] if secret else [{"name": "away-login"}],
    }
    for obj in (away, login, account):
        obj["metadata"]["namespace"] = "elsewhere"
    env.server.add(login)
    env.server.add(account)
    env.install(away)
    assert env.tick("-A").exit_code == 0  # records what runs
    newest = env.registry.push_image("r/away", "stable", content="b")
    result = env.tick("-A")
    workload = _workload(result.json(), "away")
    assert (workload["namespace"], workload["outcome"]) == ("elsewhere", "restarted")
    restarted = env.server.get_object("Deployment", "away", "elsewhere")
    assert restarted is not None
    assert restarted["metadata"]["annotations"][container_key(RECORDED_DIGEST, "runner")] == newest


def test_rate_limit_reserve_holds_every_restart(
    env: RefreshEnv, open_registry: Registry, token_registry: TokenFront
) -> None:
    """One registry near its limit: no workload restarts this tick, not even on other registries."""
    env.registry.push_image("r/busy", "stable", content="a")
    env.install(deployment("busy", container("runner", env.image("r/busy", "stable"))))
    open_registry.push_image("team/limited", "v1", content="l")
    env.install(
        deployment("limited", container("runner", f"{token_registry.host}/team/limited:v1"))
    )
    env.tick()
    env.registry.push_image("r/busy", "stable", content="b")  # busy needs a restart
    token_registry.faults["/team/limited/"] = "low-remaining"
    env.set_regcred(_regcred(env.registry.host, token_registry.host))
    result = env.tick()
    busy = _workload(result.json(), "busy")
    assert busy["containers"][0]["decision"] == "restart"  # precondition: it would restart
    assert busy["outcome"] == "could-not-check"
    assert "holding every restart this tick" in busy["reason"]
    assert result.exit_code == 3
    assert env.restarts("busy") == 0


def test_the_request_timeout_bounds_registry_requests_too(
    env: RefreshEnv, open_registry: Registry, token_registry: TokenFront
) -> None:
    open_registry.push_image("team/slow", "v1", content="s")
    env.install(deployment("slow", container("runner", f"{token_registry.host}/team/slow:v1")))
    env.set_regcred(_regcred(token_registry.host))
    token_registry.faults["/team/slow/"] = "slow"
    assert token_registry.slow_seconds > 1, "precondition: slower than the timeout below"
    result = env.tick("--request-timeout", "1")
    workload = _workload(result.json(), "slow")
    assert (workload["outcome"], result.exit_code) == ("could-not-check", 3)
    assert workload["containers"][0]["reason"] == f"{token_registry.host} did not answer in time"


def test_first_run_accepts_a_platform_manifest_of_an_index(env: RefreshEnv) -> None:
    index, children = env.registry.push_index("r/multi", "stable", content="m")
    env.install(deployment("multi", container("runner", env.image("r/multi", "stable"))))
    pod = env.server.get_object("Pod", "multi-0", NS)
    assert pod is not None
    pod["status"]["containerStatuses"][0]["imageID"] = f"{env.image('r/multi', 'x')}@{children[1]}"
    env.server.update_object(pod)
    result = env.tick()
    workload = _workload(result.json(), "multi")
    assert workload["containers"][0]["decision"] == "record-running"
    assert env.annotations("multi")[container_key(RECORDED_DIGEST, "runner")] == index
    assert env.restarts("multi") == 0


def test_a_pin_of_one_platforms_image_of_the_tags_index_is_current(env: RefreshEnv) -> None:
    """The tag names an index whose amd64 image the operator pinned: the pin is current, in the
    reason as in the annotations (no stale-pin finding)."""
    _, children = env.registry.push_index("r/platpin", "stable", content="p")
    image = f"{env.image('r/platpin', 'stable')}@{children[0]}"
    env.install(deployment("platpin", container("runner", image)))
    result = env.tick()
    workload = _workload(result.json(), "platpin")
    assert (workload["outcome"], result.exit_code) == ("converged", 0)
    assert container_key(STALE_PIN, "runner") not in env.annotations("platpin")
    assert workload["reason"] == "every tracked image runs its newest digest"


def _runs(env: RefreshEnv, name: str, image_id: str) -> None:
    """The Deployment's one pod reports running `image_id` (as a runtime names a pulled
    platform image: repository@digest)."""
    pod = env.server.get_object("Pod", f"{name}-0", NS)
    assert pod is not None
    pod["status"]["containerStatuses"][0]["imageID"] = image_id
    env.server.update_object(pod)


def test_a_multi_platform_tag_that_did_not_move_costs_no_pull(
    env: RefreshEnv, open_registry: Registry, token_registry: TokenFront
) -> None:
    """Docker Hub counts each manifest GET as a pull and no HEAD
    (docs.docker.com/docker-hub/usage/pulls): a tick reads a tag's index only where its
    platform manifests decide something (nothing recorded yet, or the tag moved); a tick over
    a tag still on the recorded digest, and over a pin of it, makes HEADs alone."""
    index, children = open_registry.push_index("team/multi", "stable", content="one")
    image = f"{token_registry.host}/team/multi:stable"
    env.install(deployment("multi", container("runner", image)))
    env.install(deployment("pinned", container("runner", f"{image}@{index}")))
    env.set_regcred(_regcred(env.registry.host, token_registry.host))
    _runs(env, "multi", f"{token_registry.host}/team/multi@{children[0]}")
    by_tag = "/v2/team/multi/manifests/stable"

    def asked(result: CliResult) -> list[tuple[str, str]]:
        assert result.exit_code == 0, result.stdout
        made = list(token_registry.manifest_asks)
        token_registry.manifest_asks.clear()
        return made

    first = env.tick()
    assert _workload(first.json(), "multi")["containers"][0]["decision"] == "record-running"
    assert env.annotations("multi")[container_key(RECORDED_DIGEST, "runner")] == index
    assert [path for method, path in asked(first) if method == "GET"] == [by_tag]

    for _ in range(2):
        steady = env.tick()
        decisions = {w["name"]: w["containers"][0]["decision"] for w in steady.json()["workloads"]}
        assert decisions == {"multi": "up-to-date", "pinned": "pinned"}
        assert {method for method, _ in asked(steady)} == {"HEAD"}

    moved, _ = open_registry.push_index("team/multi", "stable", content="two")
    after = env.tick("--dry-run")
    assert _workload(after.json(), "multi")["containers"][0]["decision"] == "restart"
    assert _workload(after.json(), "multi")["containers"][0]["newest_digest"] == moved
    assert [path for method, path in asked(after) if method == "GET"] == [by_tag]


@pytest.mark.parametrize(
    ("step", "method", "after"),
    [
        ("stale-pin write", "PATCH", 0),
        ("restart write", "PATCH", 1),
        ("rollout wait", "GET", 0),
        ("record write", "PATCH", 3),
    ],
)
def test_sigkill_at_each_step_then_two_ticks_converge(
    env: RefreshEnv, step: str, method: str, after: int
) -> None:
    """The real process, killed with SIGKILL while its request for that step hangs."""
    import signal
    import subprocess
    import sys
    import time

    newest, moved_pin = _runner_and_pin_moved(env, "killed")
    path = r"/deployments/killed$"
    env.server.inject(Fault.DELAY, path, method=method, after=after, count=1, delay=60)
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "truegreen"),
            "refresh",
            "--kubeconfig",
            str(env.kubeconfig),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not any(r.fault is Fault.DELAY for r in env.server.requests(method, path)):
        assert process.poll() is None, f"precondition: the tick reached the {step}"
        assert time.monotonic() < deadline, f"the tick never reached the {step}"
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    env.server.clear_faults()
    env.tick()
    final = env.tick()
    assert final.exit_code == 0, final.stdout
    _assert_converged(env, "killed", newest, moved_pin)


def test_a_fleet_costs_one_pod_list_and_one_read_per_shared_login(env: RefreshEnv) -> None:
    """API requests do not grow with the number of Deployments that share a namespace and a
    registry login; each still sees only its own pods."""
    digest = env.registry.push_image("r/fleet", "stable", content="v1")
    other = env.registry.push_image("r/other", "stable", content="other")
    assert other != digest, "precondition: the two images differ"
    env.server.add(_account("default", "regcred"))  # the login of pods that name none
    for index in range(3):
        image = env.image("r/fleet", "stable")
        env.install(deployment(f"fleet-{index}", container("runner", image), pull_secret=None))
    # Another image under the same login: one more look-up, no more secret reads.
    env.install(deployment("odd", container("runner", env.image("r/other", "stable"))))
    before = len(env.server.log)
    result = env.tick()
    assert result.exit_code == 0
    # Two references, each one manifest request after the registry's login challenge, which
    # concurrent look-ups may each meet before the first answer teaches the client the login.
    assert result.json()["distinct_references"] == 2
    assert result.json()["registry_requests"] in (3, 4)
    made = env.server.log[before:]
    gets = [r.path for r in made if r.method == "GET"]
    assert gets.count(f"/api/v1/namespaces/{NS}/pods") == 1
    assert gets.count(f"/api/v1/namespaces/{NS}/serviceaccounts/default") == 1
    assert gets.count(f"/api/v1/namespaces/{NS}/secrets/regcred") == 1
    recorded = {
        w["name"]: w["containers"][0]["running_digests"] for w in result.json()["workloads"]
    }
    assert recorded == {
        "fleet-0": [digest],
        "fleet-1": [digest],
        "fleet-2": [digest],
        "odd": [other],
    }


def test_each_deployment_sees_exactly_the_pods_its_whole_selector_matches(
    env: RefreshEnv,
) -> None:
    """Pods are found through one of a selector's labels; the whole selector still decides. Two
    Deployments share `app`, a third's pod shares `tier`, and one selects by expression alone:
    each is judged on its own pod only."""
    digests = {
        name: env.registry.push_image(f"r/{name}", "stable", content=name)
        for name in ("web", "batch", "stray", "picked")
    }
    for name, labels in (
        ("web", {"app": "shop", "tier": "web"}),
        ("batch", {"app": "shop", "tier": "batch"}),
        ("stray", {"app": "stray", "tier": "web"}),
    ):
        workload = deployment(name, container("runner", env.image(f"r/{name}", "stable")))
        workload["spec"]["selector"]["matchLabels"] = labels
        workload["spec"]["template"]["metadata"]["labels"] = dict(labels)
        if name == "stray":
            del workload["metadata"]["labels"]["truegreen.io/refresh"]  # its pod is still listed
        env.install(workload)
    picked = deployment("picked", container("runner", env.image("r/picked", "stable")))
    picked["spec"]["selector"] = {
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["picked"]}]
    }
    picked["spec"]["template"]["metadata"]["labels"] = {"app": "picked"}
    env.install(picked)
    assert len(env.server.list_objects("Pod", NS)) == 4, "precondition: one pod each"
    result = env.tick()
    running = {w["name"]: w["containers"][0]["running_digests"] for w in result.json()["workloads"]}
    assert running == {
        "web": [digests["web"]],
        "batch": [digests["batch"]],
        "picked": [digests["picked"]],
    }


def test_events_tell_what_a_tick_did_once(env: RefreshEnv) -> None:
    """A restart and a stale pin: one Event each on the Deployment, as client-go's recorder
    writes them (involved object with its uid, the writer, count and timestamps)."""
    newest, moved_pin = _runner_and_pin_moved(env, "told")
    result = env.tick()
    workload = _workload(result.json(), "told")
    assert workload["outcome"] == "restarted"
    stale = f"pin stays on its pinned image while its tag v1 has moved on to {moved_pin}"
    refreshed = (
        f"restarted onto the newest image and checked the new copies run it: runner runs {newest}"
    )
    assert workload["events"] == [
        {
            "reason": "StalePin",
            "type": "Warning",
            "message": stale,
            "written": True,
            "error": "",
        },
        {
            "reason": "ImageRefreshed",
            "type": "Normal",
            "message": refreshed,
            "written": True,
            "error": "",
        },
    ]
    stored = env.server.get_object("Deployment", "told", NS)
    assert stored is not None
    events = sorted(
        env.server.list_objects("Event", NS), key=lambda e: int(e["metadata"]["resourceVersion"])
    )
    assert [(e["reason"], e["message"]) for e in events] == [
        ("StalePin", stale),
        ("ImageRefreshed", refreshed),
    ]
    for event in events:
        assert event["involvedObject"] | {"resourceVersion": ""} == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "told",
            "namespace": NS,
            "uid": stored["metadata"]["uid"],
            "resourceVersion": "",
        }
        assert event["source"] == {"component": "truegreen-refresh"}
        assert event["reportingComponent"] == "truegreen-refresh"
        assert event["count"] == 1
        assert event["firstTimestamp"] == event["lastTimestamp"]
        assert event["metadata"]["name"].startswith("told.")
    assert env.tick().exit_code == 0
    assert len(env.server.list_objects("Event", NS)) == 2  # nothing new happened: no Event


def test_a_failed_event_write_never_fails_the_tick(env: RefreshEnv) -> None:
    env.registry.push_image("r/mute", "stable", content="a")
    env.install(deployment("mute", container("runner", env.image("r/mute", "stable"))))
    env.tick()
    newest = env.registry.push_image("r/mute", "stable", content="b")
    env.server.inject(Fault.FORBIDDEN, r"/events$", method="POST")
    result = env.tick()
    workload = _workload(result.json(), "mute")
    assert (workload["outcome"], result.exit_code) == ("restarted", 0)
    [event] = workload["events"]
    assert (event["reason"], event["written"]) == ("ImageRefreshed", False)
    assert event["error"].startswith("create event: ")
    assert env.server.requests("POST", r"/events$"), "precondition: the write was tried"
    assert env.annotations("mute")[container_key(RECORDED_DIGEST, "runner")] == newest


@pytest.mark.kubectl
def test_kubectl_describe_shows_the_events(env: RefreshEnv) -> None:
    """kubectl is the oracle: its describe finds the Events by the Deployment's uid and shows
    type, reason, age, source and message."""
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    assert kubectl is not None, "kubectl is required (Debian: kubernetes-client)"
    newest, _ = _runner_and_pin_moved(env, "described")
    assert env.tick().exit_code == 0
    shown = subprocess.run(
        [kubectl, "--kubeconfig", str(env.kubeconfig), "describe", "deployment", "described"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    events = shown.stdout.split("Events:", 1)[1].splitlines()
    rows = [line.split() for line in events[3:] if line.strip()]
    assert [row[:2] for row in rows] == [["Warning", "StalePin"], ["Normal", "ImageRefreshed"]]
    assert all("truegreen-refresh" in row for row in rows), events
    assert events[-1].rstrip().endswith(f"runner runs {newest}")


def test_logins_never_cross_namespaces(env: RefreshEnv) -> None:
    """`refresh -A` over three namespaces naming one private image: only the namespace with
    the right login looks it up; none borrows another's, and a bogus login fails only its own."""
    digest = env.registry.push_image("r/shared", "stable", content="s")
    for namespace, password in (("has-login", REGISTRY_PASSWORD), ("bogus", "wrong")):
        secret = _login_secret("regcred", ".dockerconfigjson", {env.registry.host: password})
        secret["metadata"]["namespace"] = namespace
        env.server.add(secret)
    for namespace in ("has-login", "no-login", "bogus"):
        workload = deployment(
            "app",
            container("runner", env.image("r/shared", "stable")),
            pull_secret=None if namespace == "no-login" else "regcred",
        )
        workload["metadata"]["namespace"] = namespace
        env.install(workload)
    result = env.tick("-A")
    report = result.json()
    found = {w["namespace"]: (w["outcome"], w["reason"]) for w in report["workloads"]}
    host = env.registry.host
    assert found == {
        "has-login": ("converged", "every tracked image runs its newest digest"),
        "no-login": (
            "could-not-check",
            f"{host} needs a login; the workload's pull secrets hold none for it",
        ),
        "bogus": ("could-not-check", f"{host} refused the credentials for r/shared"),
    }
    assert result.exit_code == 3
    assert report["distinct_references"] == 3  # one reference, three different logins
    recorded = container_key(RECORDED_DIGEST, "runner")
    stored = {
        ns: (env.server.get_object("Deployment", "app", ns) or {})["metadata"]["annotations"]
        for ns in found
    }
    assert stored["has-login"][recorded] == digest
    assert recorded not in stored["no-login"]
    assert recorded not in stored["bogus"]


def test_text_output_escapes_what_the_cluster_and_registry_say(env: RefreshEnv) -> None:
    """A container name and an image carrying terminal escapes (clear the screen, recolour)
    reach the terminal as visible text, never as control sequences."""
    hostile = "runner\x1b[2J\x1b]0;owned\x07"
    env.server.add(deployment("loud", container(hostile, "evil\x1b[31m image\r\n")))
    result = run_cli("refresh", "--kubeconfig", str(env.kubeconfig), "--verbose")
    assert result.exit_code == 2  # precondition: an invalid image, a measured failure
    for control in ("\x1b", "\x07", "\r"):
        assert control not in result.stdout
    assert "runner\\x1b[2J\\x1b]0;owned\\x07" in result.stdout
    assert "evil\\x1b[31m image\\r\\n" in result.stdout


# -- refresh and doctor agree; a tick tells its phases (ux branch) -----------------------------


def _doctor_report(env: RefreshEnv) -> dict[str, object]:
    result = run_cli("doctor", "--kubeconfig", str(env.kubeconfig), "-o", "json")
    report: dict[str, object] = result.json()
    return report


def _freshness(report: dict[str, object]) -> list[dict[str, object]]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return [f for f in findings if f["check"] == "freshness"]


def test_after_a_failed_refresh_doctor_says_it_failed_and_when(env: RefreshEnv) -> None:
    env.registry.push_image("r/crashy", "stable", content="v1")
    env.install(deployment("crashy", container("runner", env.image("r/crashy", "stable"))))
    assert env.tick().exit_code == 0
    assert [f["code"] for f in _freshness(_doctor_report(env))] == ["freshness.ok"]
    env.registry.push_image("r/crashy", "stable", content="v2")
    env.simulator.behaviour["crashy"] = "crash"
    assert env.tick().exit_code == 2, "precondition: the rollout failed"
    (failed,) = _freshness(_doctor_report(env))
    assert (failed["code"], failed["status"]) == ("freshness.refresh-failed", "warn")
    assert failed["headline"] == (
        "Automatic image refresh of the workload 'crashy' could not update it (1 failed try so "
        "far); the next run tries again."
    )
    assert failed["remedy"] == (
        "See why its new copies did not become ready with "
        f"`kubectl --kubeconfig {env.kubeconfig} describe deployment/crashy`."
    )
    details = failed["details"]
    assert isinstance(details, list)
    last = [d for d in details if d.startswith("last failed rollout")]
    assert len(last) == 1, details
    assert "ago: the restart toward the newest image did not complete" in last[0]
    assert not jargon_in(str(failed["headline"]))


def test_refresh_s_failure_event_is_the_freshness_check_s_not_evidence_quoted_again(
    env: RefreshEnv,
) -> None:
    """The tour's refresh-fails scene: a copy that holds its machine's GPU is replaced with
    `strategy: Recreate` (the old copy stops before the new one starts), the tag moved to an
    image that crashes, and a real tick fails and writes its `RefreshRolloutFailed` Event. The
    freshness check says the failed try (a warning); the Event, refresh's own note of the same
    fact (refresh/events.py), is not quoted again as unexplained evidence (docs/evidence.md,
    "What another check says")."""
    env.registry.push_image("r/api", "stable", content="v1")
    api = deployment("api", container("server", env.image("r/api", "stable")))
    api["spec"]["strategy"] = {"type": "Recreate"}
    env.install(api)
    assert env.tick().exit_code == 0
    env.registry.push_image("r/api", "stable", content="v2")
    env.simulator.behaviour["api"] = "crash"
    assert env.tick().exit_code == 2, "precondition: the rollout failed"
    assert _events(env, "api") == [("Warning", "RefreshRolloutFailed")]  # precondition
    report = _doctor_report(env)
    (failed,) = _freshness(report)
    assert (failed["code"], failed["status"]) == ("freshness.refresh-failed", "warn")
    findings = report["findings"]
    assert isinstance(findings, list)
    quoting = [(f["code"], f["headline"]) for f in findings if "truegreen-refresh" in f["headline"]]
    assert quoting == [], quoting


def test_after_refresh_latched_doctor_says_it_stopped(env: RefreshEnv) -> None:
    env.registry.push_image("r/crashy", "stable", content="v1")
    env.install(deployment("crashy", container("runner", env.image("r/crashy", "stable"))))
    env.tick()
    env.registry.push_image("r/crashy", "stable", content="v2")
    env.simulator.behaviour["crashy"] = "crash"
    for _ in range(3):
        env.tick("--max-attempts", "1")
    (stopped,) = _freshness(_doctor_report(env))
    assert stopped["code"] == "freshness.refresh-stopped"
    assert stopped["headline"] == (
        "Automatic image refresh of the workload 'crashy' has stopped after 1 failed try to "
        "update it."
    )


def test_a_tick_tells_each_phase_as_it_goes(env: RefreshEnv) -> None:
    env.registry.push_image("r/moving", "stable", content="v1")
    env.install(deployment("moving", container("runner", env.image("r/moving", "stable"))))
    assert env.tick().exit_code == 0
    env.registry.push_image("r/moving", "stable", content="v2")
    told: list[tuple[str, ...]] = []

    class Recorder:
        def looking_up(self, total: int) -> None:
            told.append(("looking up", str(total)))

        def looked_up(self) -> None:
            told.append(("looked up",))

        def restarting(self, workload: str) -> None:
            told.append(("restarting", workload))

        def waiting(self, workload: str, progress: str) -> None:
            told.append(("waiting", workload, progress))

    settings = RefreshSettings(
        namespace=NS, selector={"truegreen.io/refresh": "enabled"}, rollout_timeout=5
    )
    with LiveCluster.connect(ConnectionSettings(kubeconfig=env.kubeconfig)) as cluster:
        report = run_tick(cluster, settings, progress=Recorder())
    assert report.workloads[0].outcome.value == "restarted"
    assert told[:3] == [("looking up", "1"), ("looked up",), ("restarting", f"{NS}/moving")]
    waits = told[3:]
    assert waits, "the wait was told"
    assert all(entry[:2] == ("waiting", f"{NS}/moving") for entry in waits)
    assert waits[-1] == ("waiting", f"{NS}/moving", "rolled out")


def test_refresh_with_nothing_opted_in_says_how_to_opt_in(env: RefreshEnv) -> None:
    result = run_cli("refresh", "--kubeconfig", str(env.kubeconfig))
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "No workload here is opted in to refresh (selector truegreen.io/refresh=enabled). Opt "
        f"one in with `kubectl --kubeconfig {env.kubeconfig} label deployment NAME "
        "truegreen.io/refresh=enabled`.",
        "0 workloads, 0 distinct images, 0 registry requests.",
    ]


# Verified means healthy: pods that run the newest digest but are not healthy are never recorded.


def _install_with(env: RefreshEnv, workload: Obj, replicas: int, **spec: Any) -> None:
    """Store the Deployment with `spec` merged in and `replicas` Ready pods of its template."""
    workload["spec"].update(spec, replicas=replicas)
    workload["status"].update(replicas=replicas, updatedReplicas=replicas, readyReplicas=replicas)
    workload["status"]["availableReplicas"] = replicas
    env.install(workload)
    stored = env.server.get_object("Deployment", workload["metadata"]["name"], NS)
    assert stored is not None
    for index in range(1, replicas):
        env.server.add(env.simulator.make_pod(stored, f"{workload['metadata']['name']}-{index}"))


_RECREATE = {"strategy": {"type": "Recreate"}}
_NO_SURGE = {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}}


@pytest.mark.parametrize(
    ("replicas", "spec"),
    [(2, _RECREATE), (1, _NO_SURGE)],
    ids=["recreate", "max-surge-0"],
)
def test_pods_that_run_the_newest_digest_but_crash_are_never_recorded(
    env: RefreshEnv, replicas: int, spec: Obj
) -> None:
    """Nothing recorded yet, and the strategy leaves only the new pods: after the first failed
    rollout every pod runs the newest digest, crashing. Each tick is a failed rollout, counted,
    until the guard latches; the crashing digest is never recorded."""
    env.registry.push_image("r/onlynew", "stable", content="v1")
    _install_with(
        env,
        deployment("onlynew", container("runner", env.image("r/onlynew", "stable"))),
        replicas,
        **spec,
    )
    crashing = env.registry.push_image("r/onlynew", "stable", content="v2")
    env.simulator.behaviour["onlynew"] = "crash"
    key = container_key(RECORDED_DIGEST, "runner")
    for attempt in (1, 2):
        result = env.tick("--max-attempts", "2")
        workload = _workload(result.json(), "onlynew")
        assert (workload["outcome"], result.exit_code) == ("rollout-failed", 2), workload["reason"]
        assert "keeps crashing (CrashLoopBackOff)" in workload["reason"]
        annotations = env.annotations("onlynew")
        assert key not in annotations
        assert annotations[ATTEMPTS].startswith(f"{attempt} ")
        env.simulator.finish_terminating()
        running = [s["imageID"] for p in _staying(env) for s in p["status"]["containerStatuses"]]
        assert len(running) == replicas, "precondition: only the new pods are left"
        assert all(i.endswith(crashing) for i in running), "precondition: they run the newest"
        if attempt == 1:  # a dry run says so and writes nothing
            dry = _workload(env.tick("--max-attempts", "2", "--dry-run").json(), "onlynew")
            assert (dry["outcome"], [(w["step"], w["applied"]) for w in dry["writes"]]) == (
                "rollout-failed",
                [("count", False)],
            )
            assert env.annotations("onlynew")[ATTEMPTS].startswith("1 ")
    result = env.tick("--max-attempts", "2")
    workload = _workload(result.json(), "onlynew")
    assert (workload["outcome"], result.exit_code) == ("latched", 0)
    assert key not in env.annotations("onlynew")
    assert LATCHED in env.annotations("onlynew")
    assert env.restarts("onlynew") == 1, "the pods already run the newest digest: no restart"


def test_in_pin_mode_a_pin_whose_pods_crash_is_never_recorded(env: RefreshEnv) -> None:
    """A pin-mode restart pins the template to the newest digest; its pods crash. The next
    tick finds the template already pinned there: that is no verified rollout either."""
    old = env.registry.push_image("r/pincrash", "stable", content="v1")
    image = env.image("r/pincrash", "stable")
    _install_with(env, deployment("pincrash", container("runner", image)), 1, **_RECREATE)
    assert env.tick("--mode", "pin").exit_code == 0  # records v1
    env.registry.push_image("r/pincrash", "stable", content="v2")
    env.simulator.behaviour["pincrash"] = "crash"
    for _ in (1, 2):
        result = env.tick("--mode", "pin", "--max-attempts", "2")
        workload = _workload(result.json(), "pincrash")
        assert (workload["outcome"], result.exit_code) == ("rollout-failed", 2), workload["reason"]
        assert env.annotations("pincrash")[container_key(RECORDED_DIGEST, "runner")] == old
    latched = _workload(env.tick("--mode", "pin", "--max-attempts", "2").json(), "pincrash")
    assert latched["outcome"] == "latched"
    assert env.annotations("pincrash")[container_key(RECORDED_DIGEST, "runner")] == old


def test_a_healthy_recreate_rollout_records_exactly_once(env: RefreshEnv) -> None:
    """Recreate: the old pods stop, the new ones start only once they are gone, then become
    Ready. One restart, one record of the newest digest, and a quiet next tick."""
    env.registry.push_image("r/recreate", "stable", content="v1")
    _install_with(
        env,
        deployment("recreate", container("runner", env.image("r/recreate", "stable"))),
        2,
        **_RECREATE,
    )
    assert env.tick().exit_code == 0  # records v1
    newest = env.registry.push_image("r/recreate", "stable", content="v2")
    result = env.tick()
    workload = _workload(result.json(), "recreate")
    assert (workload["outcome"], result.exit_code) == ("restarted", 0), workload["reason"]
    records = [w for w in workload["writes"] if w["step"] == "record"]
    assert [r["annotations"][container_key(RECORDED_DIGEST, "runner")] for r in records] == [newest]
    assert env.annotations("recreate")[container_key(RECORDED_DIGEST, "runner")] == newest
    patches = len(env.server.requests("PATCH"))
    again = env.tick()
    quiet = _workload(again.json(), "recreate")
    assert (quiet["outcome"], quiet["writes"], again.exit_code) == ("converged", [], 0)
    assert len(env.server.requests("PATCH")) == patches
    assert env.restarts("recreate") == 1


def _when_recorded(env: RefreshEnv, digest: str) -> list[datetime]:
    """When the record of `digest` lands (filled in by the fake API server as it does)."""
    key = container_key(RECORDED_DIGEST, "runner")
    landed: list[datetime] = []

    def note(server: FakeApiServer, plural: str, obj: Obj) -> None:
        if obj["metadata"].get("annotations", {}).get(key) == digest and not landed:
            landed.append(datetime.now(UTC))

    env.server.patch_hooks.append(note)
    return landed


def _ready_since(env: RefreshEnv) -> datetime:
    """When the one pod that stays became Ready, as its Ready condition says."""
    (pod,) = _staying(env)
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    return datetime.fromisoformat(ready["lastTransitionTime"].replace("Z", "+00:00"))


def test_a_rollout_is_recorded_only_once_its_pods_are_ready_for_min_ready_seconds(
    env: RefreshEnv,
) -> None:
    """The new pod is Ready at once but available only after minReadySeconds: the record lands
    no sooner than that after its Ready condition's lastTransitionTime."""
    env.registry.push_image("r/settle", "stable", content="v1")
    _install_with(
        env,
        deployment("settle", container("runner", env.image("r/settle", "stable"))),
        1,
        minReadySeconds=2,
        **_RECREATE,
    )
    assert env.tick().exit_code == 0  # records v1
    newest = env.registry.push_image("r/settle", "stable", content="v2")
    recorded_at = _when_recorded(env, newest)
    result = env.tick()
    workload = _workload(result.json(), "settle")
    assert (workload["outcome"], result.exit_code) == ("restarted", 0), workload["reason"]
    assert recorded_at, "precondition: the record landed"
    assert recorded_at[0] >= _ready_since(env) + timedelta(seconds=2)


def test_pods_already_on_the_newest_digest_still_settling_are_waited_for_not_restarted(
    env: RefreshEnv,
) -> None:
    """Nothing recorded yet; the controller has just replaced the copy on its own (its
    template unchanged) with one on the newest digest, Ready but not yet for minReadySeconds.
    No update is under way: the controller still says its rollout completed (progress.go
    `syncRolloutStatus` keeps NewReplicaSetAvailable while copies come and go under the same
    template), though kubectl waits for the copy to be available. The tick waits for it, then
    records it, with no restart."""
    env.registry.push_image("r/settling", "stable", content="v1")
    settled = deployment("settling", container("runner", env.image("r/settling", "stable")))
    settled["status"]["conditions"] = [
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
    ]
    _install_with(env, settled, 1, minReadySeconds=2, **_RECREATE)
    newest = env.registry.push_image("r/settling", "stable", content="v2")
    env.simulator.terminating_reads = 0
    stored = env.server.get_object("Deployment", "settling", NS)
    assert stored is not None
    env.simulator.roll_out(stored, "ok")
    settling = env.server.get_object("Deployment", "settling", NS)
    assert settling is not None
    assert (settling["status"]["updatedReplicas"], "availableReplicas" in settling["status"]) == (
        1,
        False,
    ), "precondition: the new pod is not available yet"
    assert [c["reason"] for c in settling["status"]["conditions"]] == ["NewReplicaSetAvailable"]
    recorded_at = _when_recorded(env, newest)
    result = env.tick()
    workload = _workload(result.json(), "settling")
    assert (workload["outcome"], result.exit_code) == ("converged", 0), workload["reason"]
    assert [w["step"] for w in workload["writes"]] == ["record"]
    assert env.annotations("settling")[container_key(RECORDED_DIGEST, "runner")] == newest
    assert recorded_at[0] >= _ready_since(env) + timedelta(seconds=2)
    assert env.restarts("settling") == 0


def test_the_tour_s_refresh_fails_scene_fails_twice_then_latches(
    registry: Registry, tmp_path: Path
) -> None:
    """The terminal tour's scene, served as the tour serves it (TLS, its own registry): the
    crashing digest is never recorded, whatever the number of ticks."""
    from tests.support.auth_echo import make_pki
    from tests.support.tour_cluster import SCENES

    pki = make_pki(tmp_path / "pki")
    server = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    cleanups = SCENES["refresh-fails"].load(server, tmp_path)
    try:
        kubeconfig = str(tmp_path / "kubeconfig")
        ticks = [
            run_cli("refresh", "--kubeconfig", kubeconfig, "-o", "json", "--max-attempts", "2")
            for _ in range(3)
        ]
        stored = server.get_object("Deployment", "api", NS)
    finally:
        for cleanup in cleanups:
            cleanup()
        server.stop()
    outcomes = [(t.json()["workloads"][0]["outcome"], t.exit_code) for t in ticks]
    assert outcomes == [("rollout-failed", 2), ("rollout-failed", 2), ("latched", 0)]
    assert stored is not None
    assert container_key(RECORDED_DIGEST, "server") not in stored["metadata"]["annotations"]


def _controlled_by(obj: Obj, owner: Obj) -> Obj:
    """`obj` with `owner` as its controller, as the owner's controller writes the reference
    (apimachinery's metav1.NewControllerRef: controller and blockOwnerDeletion true)."""
    obj["metadata"]["ownerReferences"] = [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    return obj


def test_a_pod_another_controller_owns_is_not_one_of_the_workloads_copies(
    env: RefreshEnv,
) -> None:
    """A Job's pod that carries the Deployment's `app` label, beside the Deployment's own pod:
    the Deployment counts only the pods of the ReplicaSets it owns (controller_ref_manager.go
    `ClaimPods`: "Owned by someone else. Ignore."; deployment/sync.go `getNewReplicaSet` names
    its ReplicaSet `<deployment>-<pod-template-hash>` and owns it), so the Job's pod neither
    blocks the first run's record nor asks for a restart."""
    digest = env.registry.push_image("r/owned", "stable", content="v1")
    env.registry.push_image("r/migrate", "1", content="m1")
    web = deployment("web", container("runner", env.image("r/owned", "stable")))
    env.install(web)
    stored = env.server.get_object("Deployment", "web", NS)
    assert stored is not None
    template_labels = stored["spec"]["template"]["metadata"]["labels"]
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-7d9f6c",
            "namespace": NS,
            "labels": {**template_labels, "pod-template-hash": "7d9f6c"},
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {**template_labels, "pod-template-hash": "7d9f6c"}},
            "template": stored["spec"]["template"],
        },
    }
    env.server.add(_controlled_by(replica_set, stored))
    rs = env.server.get_object("ReplicaSet", "web-7d9f6c", NS)
    assert rs is not None
    own = env.server.get_object("Pod", "web-0", NS)
    assert own is not None
    own["metadata"]["labels"]["pod-template-hash"] = "7d9f6c"
    env.server.update_object(_controlled_by(own, rs))
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "web-migrate", "namespace": NS, "uid": "uid-job-web-migrate"},
    }
    migrate = deployment("web-migrate", container("migrate", env.image("r/migrate", "1")))
    migrate["spec"]["template"]["metadata"]["labels"] = {"app": "web", "job-name": "web-migrate"}
    migrate["metadata"]["namespace"] = NS
    env.simulator.remember(migrate)
    job_pod = env.simulator.make_pod(migrate, "web-migrate-x1")
    env.server.add(_controlled_by(job_pod, job))
    for _ in range(2):
        result = env.tick()
        found = _workload(result.json(), "web")
        assert (found["outcome"], result.exit_code) == ("converged", 0), found["reason"]
        assert found["containers"][0]["running_digests"] == [digest]
    assert env.annotations("web")[container_key(RECORDED_DIGEST, "runner")] == digest
    assert ATTEMPTS not in env.annotations("web")
    assert env.restarts("web") == 0


def test_an_orphan_pod_with_the_deployments_labels_is_not_one_of_its_copies(
    env: RefreshEnv,
) -> None:
    """A bare pod labelled `app=web` on an older digest (`kubectl run web-debug --labels
    app=web`: no owner, no pod-template-hash) beside the Deployment's own pod, which its
    ReplicaSet controls and which runs the newest digest. The orphan is no copy:
    deployment_controller.go `getPodMapForDeployment` skips a pod whose controllerRef is nil,
    and the ReplicaSet adopts only the pods its own selector, `pod-template-hash` included,
    matches (replica_set.go `getPodsForReplicaSet`). So the first run records, restarts
    nothing, and the orphan's digest is not among the running ones."""
    env.registry.push_image("r/owned", "stable", content="v1")
    debug = deployment("web-debug", container("runner", env.image("r/owned", "stable")))
    debug["spec"]["template"]["metadata"]["labels"] = {"app": "web", "run": "web-debug"}
    orphan = env.simulator.make_pod(debug, "web-debug")  # an unstored workload's: no owner
    newest = env.registry.push_image("r/owned", "stable", content="v2")
    env.install(deployment("web", container("runner", env.image("r/owned", "stable"))))
    env.server.add(orphan)
    own = env.server.get_object("Pod", "web-0", NS)
    assert own is not None
    assert own["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    assert "ownerReferences" not in orphan["metadata"]
    for _ in range(2):
        result = env.tick("--rollout-timeout", "1")
        found = _workload(result.json(), "web")
        assert (found["outcome"], result.exit_code) == ("converged", 0), found["reason"]
        assert found["containers"][0]["running_digests"] == [newest]
    assert env.annotations("web")[container_key(RECORDED_DIGEST, "runner")] == newest
    assert env.restarts("web") == 0


def test_every_workloads_stale_pin_finding_lands_before_any_wait(env: RefreshEnv) -> None:
    """Two Deployments whose restarts never roll out (no controller picks them up) each wait up
    to --rollout-timeout; a CronJob's activeDeadlineSeconds may end the tick during either
    wait. The third's stale-pin finding needs no wait, so it is written in the tick's first
    pass, before any restart or wait: it has landed by the first wait's first sleep."""
    old = env.registry.push_image("r/slow", "stable", content="v1")
    for name in ("aa-slow", "ab-slow"):
        env.install(deployment(name, container("runner", env.image("r/slow", "stable"))))
        env.simulator.behaviour[name] = "stall"
    env.install(
        deployment("zz-pinned", container("runner", f"{env.image('r/slow', 'stable')}@{old}"))
    )
    env.tick()  # records the slow ones' digest
    newest = env.registry.push_image("r/slow", "stable", content="v2")
    stale = container_key(STALE_PIN, "runner")
    seen: list[tuple[int, str | None]] = []

    def sleep(seconds: float) -> None:
        seen.append((env.restarts("aa-slow"), env.annotations("zz-pinned").get(stale)))

    settings = RefreshSettings(
        namespace=NS,
        selector={"truegreen.io/refresh": "enabled"},
        rollout_timeout=0.2,
        poll_interval=0.05,
    )
    with LiveCluster.connect(ConnectionSettings(kubeconfig=env.kubeconfig)) as cluster:
        report = run_tick(cluster, settings, sleep=sleep)
    assert seen, "the tick never waited"
    assert seen[0] == (1, f"stable {newest}")
    outcomes = [(w.name, w.outcome.value) for w in report.workloads]
    assert outcomes == [
        ("aa-slow", "rollout-failed"),
        ("ab-slow", "rollout-failed"),
        ("zz-pinned", "converged"),
    ]
    (pinned,) = [w for w in report.workloads if w.name == "zz-pinned"]
    assert [w.step for w in pinned.writes] == ["stale-pins"]


def test_a_tick_stopped_mid_wait_hands_up_what_it_wrote(env: RefreshEnv) -> None:
    """Ctrl-C during the first rollout's wait (raised where the tick sleeps, as Python raises
    KeyboardInterrupt): the tick goes up with the signal and the report so far. The workload
    it restarted is `interrupted` with its applied restart write; the one it never reached
    and the pinned one (whose finding the first pass wrote) are `interrupted` too, each with
    only what was written for it. Nothing is recorded."""
    old = env.registry.push_image("r/stop", "stable", content="v1")
    for name in ("aa-slow", "ab-slow"):
        env.install(deployment(name, container("runner", env.image("r/stop", "stable"))))
        env.simulator.behaviour[name] = "stall"
    env.install(
        deployment("zz-pinned", container("runner", f"{env.image('r/stop', 'stable')}@{old}"))
    )
    env.tick()  # records the slow ones' digest
    env.registry.push_image("r/stop", "stable", content="v2")
    recorded = env.annotations("aa-slow")[container_key(RECORDED_DIGEST, "runner")]

    def sleep(seconds: float) -> None:
        raise KeyboardInterrupt

    settings = RefreshSettings(
        namespace=NS, selector={"truegreen.io/refresh": "enabled"}, rollout_timeout=30
    )
    with (
        LiveCluster.connect(ConnectionSettings(kubeconfig=env.kubeconfig)) as cluster,
        pytest.raises(TickInterrupted) as stopped,
    ):
        run_tick(cluster, settings, sleep=sleep)
    assert isinstance(stopped.value.signal, KeyboardInterrupt)
    assert env.restarts("aa-slow") == 1, "the restart was written before the wait"
    report = stopped.value.report
    summary = [
        (w.name, w.outcome.value, [(x.step, x.applied) for x in w.writes]) for w in report.workloads
    ]
    assert summary == [
        ("aa-slow", "interrupted", [("restart", True)]),
        ("ab-slow", "interrupted", []),
        ("zz-pinned", "interrupted", [("stale-pins", True)]),
    ]
    assert report.workloads[0].reason.startswith("restarted, then the tick was stopped before")
    assert report.workloads[1].reason.startswith("the tick was stopped before this workload")
    assert env.annotations("aa-slow")[container_key(RECORDED_DIGEST, "runner")] == recorded


def test_a_tick_stopped_during_its_registry_look_ups_hands_up_every_workload_it_read(
    env: RefreshEnv,
) -> None:
    """Ctrl-C while the registry look-ups run (raised where the tick is, in the main thread:
    here as the look-ups start): the workloads were read, so the tick goes up with the signal
    and the report so far, every workload `interrupted` with nothing written, never an empty
    tick."""
    env.registry.push_image("r/look", "stable", content="v1")
    for name in ("aa-web", "bb-web"):
        env.install(deployment(name, container("runner", env.image("r/look", "stable"))))

    class Stopped:
        def looking_up(self, total: int) -> None:
            raise KeyboardInterrupt

        def looked_up(self) -> None:
            raise AssertionError("stopped before any look-up")

        def restarting(self, workload: str) -> None:
            raise AssertionError("stopped before any restart")

        def waiting(self, workload: str, progress: str) -> None:
            raise AssertionError("stopped before any wait")

    settings = RefreshSettings(namespace=NS, selector={"truegreen.io/refresh": "enabled"})
    with (
        LiveCluster.connect(ConnectionSettings(kubeconfig=env.kubeconfig)) as cluster,
        pytest.raises(TickInterrupted) as stopped,
    ):
        run_tick(cluster, settings, progress=Stopped())
    assert isinstance(stopped.value.signal, KeyboardInterrupt)
    summary = [
        (w.kind, w.name, w.outcome.value, w.reason, w.writes)
        for w in stopped.value.report.workloads
    ]
    words = "the tick was stopped before this workload was decided; nothing was restarted"
    assert summary == [
        ("Deployment", "aa-web", "interrupted", words, ()),
        ("Deployment", "bb-web", "interrupted", words, ()),
    ]
    assert env.annotations("aa-web") == {}


@pytest.mark.parametrize(
    ("how", "code", "by"),
    [
        (signal.SIGINT, 130, "Ctrl-C"),
        (signal.SIGTERM, 143, "SIGTERM"),
        (signal.SIGHUP, 129, "SIGHUP (its terminal or ssh session closed)"),
    ],
    ids=["ctrl-c", "sigterm", "sighup"],
)
def test_a_refresh_stopped_after_its_restart_says_so_in_its_document(
    env: RefreshEnv, how: signal.Signals, code: int, by: str
) -> None:
    """The signal arrives while `truegreen refresh -o json` waits on a restart it wrote: the
    document on stdout is the tick so far (the restarted workload `interrupted`, its restart
    write applied) under the signal's exit code and the `interrupted` headline, never the
    empty failure document of a run that wrote nothing."""
    env.registry.push_image("r/sig", "stable", content="v1")
    env.install(deployment("slow", container("runner", env.image("r/sig", "stable"))))
    env.simulator.behaviour["slow"] = "stall"
    env.tick()
    env.registry.push_image("r/sig", "stable", content="v2")
    argv = [str(Path(sys.executable).parent / "truegreen"), "refresh", "-o", "json"]
    argv += ["--kubeconfig", str(env.kubeconfig), "--rollout-timeout", "60"]
    with subprocess.Popen(
        with_default_ctrl_c(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as running:
        # The restart is on the server, and refresh has had its answer: it asks again (the
        # rollout's progress) only once the PATCH answered. A signal between the two is the
        # "whether it landed is not known" case, which its own test holds.
        wait_for("refresh to wait on the restart it wrote", lambda: _asked_after_restart(env))
        running.send_signal(how)
        out, err = running.communicate(timeout=60)
    line = (
        f"stopped by {by} before the tick finished. run refresh again: it looks again at each "
        "workload marked interrupted"
    )
    assert (running.returncode, err.splitlines()[-1]) == (signal_ended(code), f"truegreen: {line}")
    document = json.loads(out)
    schema = Path(__file__).parents[2] / "docs" / "failure.schema.json"
    jsonschema.validate(document, json.loads(schema.read_text()))
    assert (document["exit_code"], document["headline"]["code"]) == (code, "interrupted")
    (slow,) = document["workloads"]
    assert (slow["name"], slow["outcome"]) == ("slow", "interrupted")
    assert [(w["step"], w["applied"]) for w in slow["writes"]] == [("restart", True)]


def _asked_after_restart(env: RefreshEnv) -> bool:
    """The restart PATCH is applied and refresh has sent a request after it."""
    seen = env.server.requests()
    patches = [i for i, r in enumerate(seen) if r.method == "PATCH"]
    return env.restarts("slow") == 1 and bool(patches) and len(seen) > patches[-1] + 1


def _stopped_refresh(env: RefreshEnv, landed: "threading.Event") -> dict[str, Any]:
    """Run `truegreen refresh -o json`, SIGTERM it once `landed` is set (a write has landed on
    the server and its answer is held back), and return its document."""
    argv = [str(Path(sys.executable).parent / "truegreen"), "refresh", "-o", "json"]
    argv += ["--kubeconfig", str(env.kubeconfig), "--rollout-timeout", "30"]
    with subprocess.Popen(
        with_default_ctrl_c(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as running:
        assert landed.wait(60), "the write never reached the server"
        running.send_signal(signal.SIGTERM)
        out, _ = running.communicate(timeout=60)
    assert running.returncode == signal_ended(143)
    document: dict[str, Any] = json.loads(out)
    schema = Path(__file__).parents[2] / "docs" / "failure.schema.json"
    jsonschema.validate(document, json.loads(schema.read_text()))
    assert (document["exit_code"], document["headline"]["code"]) == (143, "interrupted")
    return document


def test_a_refresh_stopped_while_its_restart_is_answered_says_it_may_have_landed(
    env: RefreshEnv,
) -> None:
    """SIGTERM while the restart PATCH has reached the API server (stored, the template's
    restartedAt and the marker with it) but its answer has not come back: the tick cannot
    know the write landed, so it says that, and lists the restart it sent, never "nothing was
    restarted"."""
    env.registry.push_image("r/sent", "stable", content="v1")
    env.install(deployment("web", container("runner", env.image("r/sent", "stable"))))
    env.tick()
    env.registry.push_image("r/sent", "stable", content="v2")
    landed = threading.Event()

    def slow_answer(server: FakeApiServer, plural: str, obj: Obj) -> None:
        if plural == "deployments" and RESTARTED_AT in obj["spec"]["template"]["metadata"].get(
            "annotations", {}
        ):
            landed.set()
            time.sleep(3)

    env.server.patch_hooks.append(slow_answer)
    (web,) = _stopped_refresh(env, landed)["workloads"]
    assert (web["outcome"], web["reason"]) == (
        "interrupted",
        "a restart was sent, then the tick was stopped before the API server answered: whether "
        "it landed is not known; nothing was recorded, and the next run looks at this workload "
        "again",
    )
    assert [(w["step"], w["applied"], w["error"]) for w in web["writes"]] == [
        (
            "restart",
            False,
            "the tick was stopped before the API server answered: whether it landed is not known",
        )
    ]
    assert PENDING in env.annotations("web"), "the restart did land"


def test_a_refresh_stopped_while_writing_its_events_keeps_the_workloads_outcome(
    env: RefreshEnv,
) -> None:
    """SIGTERM while the Events are written, after the rollout was verified and its record
    landed: the workload reached its end, so it keeps its outcome (`restarted`) and its writes;
    the Event whose answer never came is said to be unknown, not written or failed."""
    env.registry.push_image("r/news", "stable", content="v1")
    env.install(deployment("web", container("runner", env.image("r/news", "stable"))))
    env.tick()
    newest = env.registry.push_image("r/news", "stable", content="v2")
    landed = threading.Event()

    def slow_events(server: FakeApiServer, method: str, path: str) -> None:
        if method == "POST" and path.endswith("/events"):
            landed.set()
            time.sleep(3)

    env.server.request_hooks.append(slow_events)
    (web,) = _stopped_refresh(env, landed)["workloads"]
    assert (web["outcome"], web["reason"]) == (
        "restarted",
        "rolled out and verified: the pods run the newest digest",
    )
    assert [(w["step"], w["applied"]) for w in web["writes"]] == [
        ("restart", True),
        ("record", True),
    ]
    assert [(e["reason"], e["written"], e["error"]) for e in web["events"]] == [
        (
            "ImageRefreshed",
            False,
            "the tick was stopped before the API server answered: whether it was written is "
            "not known",
        )
    ]
    annotations = env.annotations("web")
    assert annotations[container_key(RECORDED_DIGEST, "runner")] == newest
    assert PENDING not in annotations


@pytest.mark.parametrize("value", ["http://registry.local:5000", "", "evil[.example"])
def test_an_insecure_registry_that_is_no_registry_name_is_refused_before_any_request(
    fake_api: FakeApiServer, kubeconfig: Path, value: str
) -> None:
    """moby registry/config.go `loadInsecureRegistries` refuses a value holding `://`
    ("insecure registry ... should not contain '://'") before dockerd starts; truegreen names
    registries as an image does (images.split_domain), as --registry-allow already requires."""
    result = run_cli(
        "refresh", "--kubeconfig", str(kubeconfig), "--dry-run", "--insecure-registry", value
    )
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == (
        f"truegreen: --insecure-registry {value!r} is not a registry name. name it as an image "
        "does: HOST or HOST:PORT (registry.example.com:5000)\n"
    )
    assert fake_api.requests() == []


@pytest.mark.parametrize(
    ("selector", "why"),
    [
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("bad key=x", "found 'key', expected: in, notin, =, ==, !=, gt, lt"),
        # Parse takes these as "everything": no workload opted in, every one selected.
        ("", "it names no label, so it would select every workload"),
        (" ", "it names no label, so it would select every workload"),
    ],
)
def test_a_selector_kubectl_would_refuse_is_bad_usage_before_any_request(
    fake_api: FakeApiServer, kubeconfig: Path, selector: str, why: str
) -> None:
    """k8s.io/apimachinery pkg/labels/selector.go `Parse` refuses these (the API server answers
    400): the flag's fault, said in Parse's words, not the cluster's health (exit 3)."""
    result = run_cli(
        "refresh", "--kubeconfig", str(kubeconfig), "--dry-run", "--selector", selector
    )
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == (
        f"truegreen: --selector {selector!r} is not key=value[,key=value]: {why}\n"
    )
    assert fake_api.requests() == []
