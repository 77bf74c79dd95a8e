"""refresh ticks on StatefulSets and DaemonSets, against the fake API server and a real
docker-registry: opted in by the same label, restarted by the same template change, a digest
recorded only once the rollout is complete by kubectl's rules for the kind
(pkg/polymorphichelpers/rollout_status.go) and every pod runs it, Ready.

The rollout simulator plays their controllers: a StatefulSet's pods replaced from the highest
ordinal down, a DaemonSet's one node at a time, each stopping at a new pod that is not Ready.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.test_refresh import RefreshEnv, _account, _regcred
from tests.support import rbac
from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from tests.support.registry import Registry
from tests.support.rollout import RolloutSimulator
from truegreen.images import parse_image
from truegreen.refresh.annotations import (
    ATTEMPTS,
    LATCHED,
    PENDING,
    RECORDED_DIGEST,
    RESTARTED,
    PendingRestart,
    container_key,
)
from truegreen.refresh.registry import PullCredentials, RegistryClient, Resolved
from truegreen.rollout import rollout_status

Obj = dict[str, Any]
NS = "train"
NODES = ("node-1", "node-2")
RUNNER = container_key(RECORDED_DIGEST, "runner")


@pytest.fixture
def env(fake_api: FakeApiServer, kubeconfig: Path, registry: Registry) -> Iterator[RefreshEnv]:
    """As test_refresh's, with a replaced pod Terminating for one pod read, so that a two-pod
    update ends within a few of the tick's looks."""
    logins = PullCredentials.from_docker_configs(
        [(".dockerconfigjson", _regcred(registry.host)["data"][".dockerconfigjson"])]
    )
    client = RegistryClient()

    def digest_for(image: str) -> str:
        reference = parse_image(image)
        if reference.digest:
            return reference.digest
        result = client.lookup_each(reference, logins.applying_to(reference))
        assert isinstance(result, Resolved), result
        return result.digest

    fake_api.add(_regcred(registry.host))
    simulator = RolloutSimulator(fake_api, digest_for, terminating_reads=1)
    yield RefreshEnv(fake_api, registry, simulator, kubeconfig)
    client.close()


def _tick(env: RefreshEnv, *args: str) -> tuple[dict[str, Any], int]:
    result = env.tick("--rollout-timeout", "30", *args)
    return result.json(), result.exit_code


def _workload(report: dict[str, Any], name: str) -> dict[str, Any]:
    """The tick's report of `name`, which it must have seen."""
    seen: dict[str, dict[str, Any]] = {w["name"]: w for w in report["workloads"]}
    assert name in seen, f"the tick did not see {name}, only {sorted(seen)}"
    return seen[name]


def _stored(env: RefreshEnv, kind: str, name: str) -> Obj:
    stored = env.server.get_object(kind, name, NS)
    assert stored is not None
    return stored


def _annotations(env: RefreshEnv, kind: str, name: str) -> dict[str, str]:
    return dict(_stored(env, kind, name)["metadata"].get("annotations") or {})


def _pods_run(env: RefreshEnv, app: str) -> list[tuple[str, str, bool]]:
    """(pod, digest of its runner, Ready) of the app's pods that are not terminating."""
    found = []
    for pod in env.server.list_objects("Pod", NS):
        if pod["metadata"]["labels"].get("app") != app or "deletionTimestamp" in pod["metadata"]:
            continue
        ready = any(
            c["type"] == "Ready" and c["status"] == "True" for c in pod["status"]["conditions"]
        )
        image_id = pod["status"]["containerStatuses"][0].get("imageID", "")
        found.append((pod["metadata"]["name"], image_id.rsplit("@", 1)[-1], ready))
    return sorted(found)


def _events(env: RefreshEnv, kind: str, name: str) -> list[tuple[str, str]]:
    """(type, reason) of the Events about the workload, oldest first."""
    about = [
        e
        for e in env.server.list_objects("Event", NS)
        if (e["involvedObject"]["kind"], e["involvedObject"]["name"]) == (kind, name)
    ]
    about.sort(key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [(e["type"], e["reason"]) for e in about]


def _settled(env: RefreshEnv, workload: Obj, repository: str) -> str:
    """Store the workload with its pods on the tag's first image; the first tick records that
    digest without restarting. Returns it."""
    first = env.registry.push_image(repository, "stable", content="v1")
    env.simulator.settle(workload, nodes=NODES)
    report, code = _tick(env)
    name = workload["metadata"]["name"]
    assert (_workload(report, name)["outcome"], code) == ("converged", 0)
    assert _annotations(env, workload["kind"], name)[RUNNER] == first
    assert env.restarts(name) == 0
    return first


@pytest.mark.parametrize(
    ("make", "replaced"),
    [
        (
            lambda image: statefulset("db", container("runner", image), replicas=2),
            ["db-1", "db-0"],
        ),
        (
            lambda image: daemonset("agent", container("runner", image)),
            ["agent-node-1", "agent-node-2"],
        ),
    ],
    ids=["statefulset", "daemonset"],
)
def test_a_moved_tag_restarts_once_and_is_recorded_after_the_rollout_completes(
    env: RefreshEnv, make: Any, replaced: list[str]
) -> None:
    workload = make(env.image("r/kinds", "stable"))
    kind, name = workload["kind"], workload["metadata"]["name"]
    _settled(env, workload, "r/kinds")
    newest = env.registry.push_image("r/kinds", "stable", content="v2")
    report, code = _tick(env)
    found = _workload(report, name)
    assert (found["kind"], found["outcome"], code) == (kind, "restarted", 0), found["reason"]
    assert found["reason"] == "rolled out and verified: the pods run the newest digest"
    assert [w["step"] for w in found["writes"]] == ["restart", "record"]
    assert env.restarts(name) == 1
    # Recorded only once the controller had replaced every pod: while the last old pod was
    # still stopping, the new ones alone ran the newest digest, Ready.
    assert env.simulator.replaced == replaced
    assert rollout_status(_stored(env, kind, name)).done
    assert _pods_run(env, name) == [(pod, newest, True) for pod in sorted(replaced)]
    annotations = _annotations(env, kind, name)
    assert annotations[RUNNER] == newest
    assert {ATTEMPTS, PENDING, LATCHED} & annotations.keys() == set()
    assert _events(env, kind, name) == [("Normal", "ImageRefreshed")]
    report, code = _tick(env)
    assert (_workload(report, name)["outcome"], code, env.restarts(name)) == ("converged", 0, 1)


@pytest.mark.parametrize(
    ("make", "crashing"),
    [
        (lambda image: statefulset("db", container("runner", image), replicas=2), "db-1"),
        (lambda image: daemonset("agent", container("runner", image)), "agent-node-1"),
    ],
    ids=["statefulset", "daemonset"],
)
def test_a_crashing_digest_is_never_recorded(env: RefreshEnv, make: Any, crashing: str) -> None:
    workload = make(env.image("r/crashy", "stable"))
    kind, name = workload["kind"], workload["metadata"]["name"]
    first = _settled(env, workload, "r/crashy")
    env.registry.push_image("r/crashy", "stable", content="v2")
    env.simulator.behaviour[name] = "crash"
    failed = ("Warning", "RefreshRolloutFailed")
    for attempt in (1, 2):
        report, code = _tick(env, "--max-attempts", "2")
        found = _workload(report, name)
        assert (found["outcome"], code) == ("rollout-failed", 2)
        assert found["reason"] == f"new pod {crashing} keeps crashing (CrashLoopBackOff)"
        annotations = _annotations(env, kind, name)
        assert annotations[RUNNER] == first
        assert annotations[ATTEMPTS].startswith(f"{attempt} ")
        assert PENDING not in annotations
        assert _events(env, kind, name) == [failed] * attempt
    # The update stopped at its first new pod: the others were never touched.
    assert env.simulator.replaced == [crashing, crashing]
    report, code = _tick(env, "--max-attempts", "2")
    assert (_workload(report, name)["outcome"], code) == ("latched", 0)
    assert env.restarts(name) == 2
    assert _annotations(env, kind, name)[RUNNER] == first


@pytest.mark.parametrize("make", [statefulset, daemonset], ids=["statefulset", "daemonset"])
def test_on_delete_is_refused_in_plain_words(env: RefreshEnv, make: Any) -> None:
    workload = make("ondelete", container("runner", env.image("r/ondelete", "stable")))
    workload["spec"]["updateStrategy"] = {"type": "OnDelete"}
    first = _settled(env, workload, "r/ondelete")
    env.registry.push_image("r/ondelete", "stable", content="v2")
    for mode in ("restart", "pin"):
        report, code = _tick(env, "--mode", mode)
        found = _workload(report, "ondelete")
        assert (found["outcome"], code) == ("refused", 2)
        assert found["reason"] == (
            "a restart would change nothing: its pods take a new version only when deleted "
            "(updateStrategy OnDelete); delete them to take it, or set updateStrategy "
            "RollingUpdate"
        )
        assert found["writes"] == []
    assert env.restarts("ondelete") == 0
    assert _annotations(env, workload["kind"], "ondelete")[RUNNER] == first


def test_pin_mode_pins_a_daemonsets_image_and_records_it(env: RefreshEnv) -> None:
    workload = daemonset("agent", container("runner", env.image("r/pinned", "stable")))
    _settled(env, workload, "r/pinned")
    newest = env.registry.push_image("r/pinned", "stable", content="v2")
    report, code = _tick(env, "--mode", "pin")
    assert (_workload(report, "agent")["outcome"], code) == ("restarted", 0)
    spec = _stored(env, "DaemonSet", "agent")["spec"]["template"]["spec"]
    assert spec["containers"][0]["image"] == f"{env.image('r/pinned', 'stable')}@{newest}"
    assert _annotations(env, "DaemonSet", "agent")[RUNNER] == newest
    assert _pods_run(env, "agent") == [
        ("agent-node-1", newest, True),
        ("agent-node-2", newest, True),
    ]


def test_role_grants_exactly_what_a_tick_over_every_kind_uses(env: RefreshEnv) -> None:
    """Least privilege, measured: a tick that restarts a Deployment, a StatefulSet and a
    DaemonSet sends exactly the verbs the Role grants."""
    env.registry.push_image("r/rbac", "stable", content="a")
    image = env.image("r/rbac", "stable")
    env.server.add(_account("default", "regcred"))  # read for a pod naming no login
    env.install(deployment("web", container("runner", image)))
    env.simulator.settle(statefulset("db", container("runner", image)), nodes=NODES)
    agent = daemonset("agent", container("runner", image), pull_secret=None)
    env.simulator.settle(agent, nodes=NODES)
    _tick(env)
    env.registry.push_image("r/rbac", "stable", content="b")
    report, code = _tick(env)
    assert code == 0
    assert [(w["kind"], w["outcome"]) for w in report["workloads"]] == [
        ("Deployment", "restarted"),
        ("StatefulSet", "restarted"),
        ("DaemonSet", "restarted"),
    ]
    namespaced, cluster_wide = rbac.used(env.server.requests())
    assert cluster_wide == set()
    assert namespaced == rbac.granted("refresh/role.yaml")


def test_doctor_reads_a_statefulsets_failed_refresh_beside_a_deployment_of_the_same_name(
    env: RefreshEnv,
) -> None:
    env.registry.push_image("r/twin-web", "stable", content="w1")
    web = deployment("db", container("runner", env.image("r/twin-web", "stable")))
    web["spec"]["selector"]["matchLabels"]["app"] = "db-web"  # not the StatefulSet's pods
    web["spec"]["template"]["metadata"]["labels"]["app"] = "db-web"
    env.server.add(web)
    stored = _stored(env, "Deployment", "db")
    env.simulator.remember(stored)
    env.server.add(env.simulator.make_pod(stored, "db-web-0"))
    first = _settled(
        env, statefulset("db", container("runner", env.image("r/twin", "stable"))), "r/twin"
    )
    env.registry.push_image("r/twin", "stable", content="v2")
    env.simulator.behaviour["db"] = "crash"
    report, code = _tick(env)
    assert code == 2
    assert [(w["kind"], w["outcome"]) for w in report["workloads"]] == [
        ("Deployment", "converged"),
        ("StatefulSet", "rollout-failed"),
    ]
    assert _annotations(env, "StatefulSet", "db")[RUNNER] == first
    doctor = run_cli("doctor", "--kubeconfig", str(env.kubeconfig), "-o", "json").json()
    (failed,) = [f for f in doctor["findings"] if f["check"] == "freshness"]
    assert (failed["code"], failed["objects"]) == ("freshness.refresh-failed", ["StatefulSet/db"])
    assert failed["remedy"] == (
        "See why its new copies did not become ready with "
        f"`kubectl --kubeconfig {env.kubeconfig} describe statefulset/db`."
    )
    last = [d for d in failed["details"] if d.startswith("last failed rollout")]
    assert len(last) == 1, failed["details"]
    assert (
        "ago: the restart toward the newest image did not complete: new pod db-0 keeps " in last[0]
    )


def test_a_partitioned_statefulset_is_refused_not_restarted_toward_a_latch(
    env: RefreshEnv,
) -> None:
    """A partition keeps the lower ordinals on the old version by design
    (stateful_set_control.go updates only ordinals at or above it): no restart could ever be
    verified on every copy, so none is made: no tick restarts it, reports rollout-failed or
    latches it."""
    workload = statefulset("db", container("runner", env.image("r/part", "stable")), replicas=2)
    workload["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 1
    first = _settled(env, workload, "r/part")
    env.registry.push_image("r/part", "stable", content="v2")
    for mode in ("restart", "pin", "restart", "restart"):
        report, code = _tick(env, "--mode", mode, "--max-attempts", "2")
        found = _workload(report, "db")
        assert (found["outcome"], code) == ("refused", 2)
        assert found["reason"] == (
            "a restart would replace only the copies numbered 1 and up "
            "(updateStrategy.rollingUpdate.partition 1), so the newest digest could never be "
            "verified on every copy; set the partition to 0 to refresh it"
        )
        assert found["writes"] == []
    assert env.restarts("db") == 0
    assert env.simulator.replaced == []
    annotations = _annotations(env, "StatefulSet", "db")
    assert annotations[RUNNER] == first
    assert {ATTEMPTS, PENDING, LATCHED} & annotations.keys() == set()


@pytest.mark.parametrize(
    ("make", "nodes", "reason"),
    [
        (
            lambda image: statefulset("idle", container("runner", image), replicas=0),
            NODES,
            "scaled to zero copies (replicas 0): nothing to restart until it runs again",
        ),
        (
            lambda image: daemonset("idle", container("runner", image)),
            (),
            "no machine runs it (0 scheduled): nothing to restart until one does",
        ),
    ],
    ids=["statefulset-of-zero", "daemonset-on-no-machine"],
)
def test_a_workload_with_no_copies_is_left_alone_not_restarted_toward_a_latch(
    env: RefreshEnv, make: Any, nodes: tuple[str, ...], reason: str
) -> None:
    """No pod runs, so nothing runs an old digest and nothing could verify a new one: every
    tick leaves it alone: no restart, no rollout-failed, no latch."""
    workload = make(env.image("r/idle", "stable"))
    env.registry.push_image("r/idle", "stable", content="v1")
    env.simulator.settle(workload, nodes=nodes)
    kind = workload["kind"]
    assert env.server.list_objects("Pod", "train") == [], "precondition: no copy runs"
    for _ in range(4):
        report, code = _tick(env, "--max-attempts", "2")
        found = _workload(report, "idle")
        assert (found["outcome"], code) == ("paused", 0), found["reason"]
        assert found["reason"] == reason
        assert found["writes"] == []
    assert env.restarts("idle") == 0
    annotations = _annotations(env, kind, "idle")
    assert {RUNNER, ATTEMPTS, PENDING, LATCHED} & annotations.keys() == set()


def test_a_daemonset_that_keeps_changing_is_read_and_named_as_itself(env: RefreshEnv) -> None:
    _settled(env, daemonset("busy", container("runner", env.image("r/busy", "stable"))), "r/busy")
    env.registry.push_image("r/busy", "stable", content="v2")
    env.server.inject(Fault.CONFLICT, r"/daemonsets/busy$", method="PATCH")
    before = len(env.server.log)
    report, code = _tick(env)
    found = _workload(report, "busy")
    assert (found["outcome"], found["reason"], code) == (
        "could-not-check",
        "the DaemonSet kept changing under the tick",
        3,
    )
    made = [(r.method, r.path) for r in env.server.log[before:] if r.path.endswith("/busy")]
    path = "/apis/apps/v1/namespaces/train/daemonsets/busy"
    assert made == [("PATCH", path), ("GET", path)] * 3  # write, 409, re-read as a DaemonSet
    assert env.restarts("busy") == 0


def test_a_deployment_scaled_to_zero_is_left_alone(env: RefreshEnv) -> None:
    """A Deployment of `replicas: 0`, as a scaled-down training service is stored: no
    restart, no count, no latch; once scaled up, its new copies pull the tag."""
    env.registry.push_image("r/idle", "stable", content="v1")
    workload = deployment("idle", container("runner", env.image("r/idle", "stable")))
    workload["spec"]["replicas"] = 0
    env.server.add(workload)
    stored = env.server.get_object("Deployment", "idle", "train")
    assert stored is not None
    env.simulator.remember(stored)
    for _ in range(4):
        report, code = _tick(env, "--max-attempts", "2")
        found = _workload(report, "idle")
        assert (found["outcome"], code) == ("paused", 0), found["reason"]
        assert found["reason"] == (
            "scaled to zero copies (replicas 0): nothing to restart until it runs again"
        )
    assert env.restarts("idle") == 0
    assert {ATTEMPTS, PENDING, LATCHED} & _annotations(env, "Deployment", "idle").keys() == set()


def _short_of_copies(env: RefreshEnv, workload: Obj) -> None:
    """Store the OnDelete workload with only its first copy left: the others were deleted and
    not made again (a node gone, a quota reached), and its controller's status says so."""
    workload["spec"]["updateStrategy"] = {"type": "OnDelete"}
    env.simulator.settle(workload, nodes=("node-1", "node-2", "node-3"))
    kind, name = workload["kind"], workload["metadata"]["name"]
    keep = f"{name}-0" if kind == "StatefulSet" else f"{name}-node-1"
    for pod in env.server.list_objects("Pod", NS):
        if pod["metadata"]["labels"].get("app") == name and pod["metadata"]["name"] != keep:
            env.server.delete_object("Pod", pod["metadata"]["name"], NS)
    stored = _stored(env, kind, name)
    if kind == "StatefulSet":
        stored["status"] |= {
            "replicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "currentReplicas": 1,
            "updatedReplicas": 1,
        }
    else:
        stored["status"] |= {
            "currentNumberScheduled": 1,
            "numberReady": 1,
            "numberAvailable": 1,
            "updatedNumberScheduled": 1,
            "numberUnavailable": 2,
        }
    env.server.update_object(stored)


@pytest.mark.parametrize(
    ("make", "progress"),
    [
        (
            lambda image: statefulset("db", container("runner", image), replicas=3),
            "1 of 3 copies ready",
        ),
        (lambda image: daemonset("agent", container("runner", image)), "1 of 3 copies available"),
    ],
    ids=["statefulset", "daemonset"],
)
def test_an_on_delete_workload_short_of_copies_is_not_recorded(
    env: RefreshEnv, make: Any, progress: str
) -> None:
    """kubectl judges no OnDelete rollout ("rollout status is only available for RollingUpdate
    strategy type", kubectl pkg/polymorphichelpers/rollout_status.go), but the controller still
    counts the copies it keeps: stateful_set_control.go `computeReplicaStatus` (readyReplicas
    against spec.replicas), daemon_controller.go `updateDaemonSetStatus` (numberAvailable
    against desiredNumberScheduled). One copy of three, on the newest digest and Ready, is not
    a verified rollout: nothing is recorded and the failure is counted."""
    env.registry.push_image("r/ondelete-short", "stable", content="v1")
    workload = make(env.image("r/ondelete-short", "stable"))
    kind, name = workload["kind"], workload["metadata"]["name"]
    _short_of_copies(env, workload)
    result = env.tick("--rollout-timeout", "1")
    report, code = result.json(), result.exit_code
    found = _workload(report, name)
    assert (found["outcome"], found["reason"]) == (
        "rollout-failed",
        f"the pods run the newest digest, but timed out after 1s ({progress})",
    )
    assert [w["step"] for w in found["writes"]] == ["count"]
    annotations = _annotations(env, kind, name)
    assert RUNNER not in annotations
    assert annotations[ATTEMPTS].startswith("1 ")
    assert env.restarts(name) == 0
    assert code == 2
    # doctor judges no OnDelete rollout, as kubectl: a missing copy is no update under way.
    doctor = run_cli("doctor", "--kubeconfig", str(env.kubeconfig), "-o", "json").json()
    updates = [f for f in doctor["findings"] if f["code"].startswith("workloads.update")]
    assert updates == []


@pytest.mark.parametrize(
    ("make", "progress"),
    [
        (
            lambda image: statefulset("db", container("runner", image), replicas=2),
            "0 of 2 copies updated",
        ),
        (lambda image: daemonset("agent", container("runner", image)), "0 of 2 copies updated"),
    ],
    ids=["statefulset", "daemonset"],
)
def test_an_update_that_stops_moving_is_counted_and_latched(
    env: RefreshEnv, make: Any, progress: str
) -> None:
    """A StatefulSet or DaemonSet update stopped at a new pod that never starts (a node it
    cannot be scheduled on) has no progress deadline to say so (stateful_set_control.go,
    daemon/update.go wait for the pod; only a Deployment has progressDeadlineSeconds). A whole
    --rollout-timeout in which its controller's counts did not move is the same verdict: the
    restart failed, so the flap guard bounds the retries and the latch ends the cost."""
    workload = make(env.image("r/stuck", "stable"))
    kind, name = workload["kind"], workload["metadata"]["name"]
    first = _settled(env, workload, "r/stuck")
    env.registry.push_image("r/stuck", "stable", content="v2")
    env.simulator.behaviour[name] = "stall"
    reason = (
        f"the update stopped: no old copy was replaced in a whole --rollout-timeout ({progress})"
    )
    for attempt in (1, 2):
        result = env.tick("--rollout-timeout", "1", "--max-attempts", "2")
        found = _workload(result.json(), name)
        assert (found["outcome"], found["reason"], result.exit_code) == (
            "rollout-failed",
            reason,
            2,
        )
        annotations = _annotations(env, kind, name)
        assert annotations[ATTEMPTS].startswith(f"{attempt} ")
        assert PENDING not in annotations
    result = env.tick("--rollout-timeout", "1", "--max-attempts", "2")
    assert (_workload(result.json(), name)["outcome"], result.exit_code) == ("latched", 0)
    assert env.restarts(name) == 2
    assert _annotations(env, kind, name)[RUNNER] == first


def test_a_stopped_daemonset_update_is_counted_and_latched_while_machines_join(
    env: RefreshEnv,
) -> None:
    """refresh's restart of a DaemonSet stops at its first new copy, which runs and is never
    Ready, while a cluster autoscaler adds a machine during every wait. daemon_controller.go
    `syncNodes` gives each new machine its copy from the current template, and
    `updateDaemonSetStatus` counts it: the desired, current and updated counts rise though
    the update stands (daemon/update.go `rollingUpdate` waits within maxUnavailable). Taking
    those counts for progress resumed the same dead wait every tick, each costing the whole
    --rollout-timeout, never counted nor latched. No old copy was replaced: the update
    stopped, counted, then latched."""
    workload = daemonset("agent", container("runner", env.image("r/churn", "stable")))
    first = _settled(env, workload, "r/churn")
    env.registry.push_image("r/churn", "stable", content="v2")
    env.simulator.behaviour["agent"] = "unready"
    machines = iter(range(3, 100))
    pod_reads = [0]

    def a_machine_joins(server: FakeApiServer, method: str, path: str) -> None:
        if method == "GET" and path == f"/api/v1/namespaces/{NS}/pods":
            pod_reads[0] += 1
            # The tick's first pass, then the wait's looks a second apart: a machine joins
            # at the wait's second look, after the first and before the last.
            if pod_reads[0] == 3:
                env.simulator.join_node("agent", f"node-{next(machines)}")

    env.server.request_hooks.append(a_machine_joins)
    outcomes = []
    for _ in range(5):
        pod_reads[0] = 0
        result = env.tick("--rollout-timeout", "2", "--max-attempts", "2")
        found = _workload(result.json(), "agent")
        outcomes.append((found["outcome"], result.exit_code))
        if found["outcome"] == "latched":
            break
        assert found["outcome"] == "rollout-failed", found["reason"]
    env.server.request_hooks.remove(a_machine_joins)
    assert outcomes[-1] == ("latched", 0), outcomes
    assert env.restarts("agent") == 2
    status = _stored(env, "DaemonSet", "agent")["status"]
    assert status["desiredNumberScheduled"] > len(NODES), "precondition: machines joined"
    annotations = _annotations(env, "DaemonSet", "agent")
    assert (annotations[RUNNER], LATCHED in annotations) == (first, True)


def _scaled_to_zero(deployment_obj: Obj) -> None:
    """The Deployment as its controller writes a scaled-down one: `replicas: 0` and a status
    of no copies (deployment/sync.go `calculateStatus` sums no ReplicaSet pod)."""
    deployment_obj["spec"]["replicas"] = 0
    generation = deployment_obj["metadata"].get("generation", 1)
    deployment_obj["status"] = {
        "observedGeneration": generation,
        "replicas": 0,
        "updatedReplicas": 0,
        "readyReplicas": 0,
        "availableReplicas": 0,
    }


def test_pin_mode_leaves_a_workload_with_no_copies_alone_not_failed_toward_a_latch(
    env: RefreshEnv,
) -> None:
    """--mode pin, each template already on refresh's own pin of the tag's newest digest
    (`repo:stable@sha256:…`, the one its restart, never verified, aimed at), nothing recorded,
    and no copy running: a Deployment and a
    StatefulSet of `replicas: 0` and a DaemonSet its controller schedules on no machine
    (daemon_controller.go `updateDaemonSetStatus`: desiredNumberScheduled 0). kubectl calls a
    0-replica rollout complete (pkg/polymorphichelpers/rollout_status.go
    `DeploymentStatusViewer.Status`: updatedReplicas 0 is not below replicas 0). No pod was
    looked at, so nothing was measured: each is left alone (`paused`, exit 0), never counted,
    failed or latched, as in restart mode."""
    newest = env.registry.push_image("r/zero", "stable", content="v1")
    pinned = f"{env.image('r/zero', 'stable')}@{newest}"
    aimed = {RESTARTED: PendingRestart({"runner": newest}, "2026-11-30T12:00:00Z").text()}
    web = deployment("web", container("runner", pinned), annotations=aimed)
    _scaled_to_zero(web)
    env.server.add(web)
    stored = _stored(env, "Deployment", "web")
    env.simulator.remember(stored)
    db = statefulset("db", container("runner", pinned), replicas=0)
    agent = daemonset("agent", container("runner", pinned))
    for workload in (db, agent):
        workload["metadata"].setdefault("annotations", {}).update(aimed)
    env.simulator.settle(db, nodes=())
    env.simulator.settle(agent, nodes=())
    assert env.server.list_objects("Pod", NS) == [], "precondition: no copy runs"
    reasons = {
        "web": "scaled to zero copies (replicas 0): nothing to verify until it runs again",
        "db": "scaled to zero copies (replicas 0): nothing to verify until it runs again",
        "agent": "no machine runs it (0 scheduled): nothing to verify until one does",
    }
    for _ in range(3):
        result = env.tick("--mode", "pin", "--rollout-timeout", "1", "--max-attempts", "2")
        report = result.json()
        seen = {w["name"]: (w["outcome"], w["reason"], w["writes"]) for w in report["workloads"]}
        assert seen == {name: ("paused", reason, []) for name, reason in reasons.items()}
        assert result.exit_code == 0
    for kind, name in (("Deployment", "web"), ("StatefulSet", "db"), ("DaemonSet", "agent")):
        assert {RUNNER, ATTEMPTS, PENDING, LATCHED} & _annotations(env, kind, name).keys() == set()
        assert _events(env, kind, name) == []


def test_a_deployment_scaled_to_zero_during_its_restart_is_left_alone_not_failed(
    env: RefreshEnv,
) -> None:
    """The operator scales the Deployment to `replicas: 0` while the tick waits on its
    restart: the controller stops every copy and calls the rollout complete with none
    (rollout_status.go `DeploymentStatusViewer.Status`). No copy ran the restart, so nothing
    was measured: `paused`, exit 0, nothing recorded, and the restart's marker stays, so the
    rollout is looked at again once it runs."""
    env.registry.push_image("r/scaled", "stable", content="v1")
    env.install(deployment("web", container("runner", env.image("r/scaled", "stable"))))
    env.tick()  # records the first digest
    first = _annotations(env, "Deployment", "web")[RUNNER]
    env.registry.push_image("r/scaled", "stable", content="v2")
    env.simulator.behaviour["web"] = "stall"

    def scale_down(server: FakeApiServer, plural: str, obj: Obj) -> None:
        template = obj["spec"]["template"]["metadata"].get("annotations") or {}
        if plural != "deployments" or "kubectl.kubernetes.io/restartedAt" not in template:
            return
        current = _stored(env, "Deployment", "web")
        if current["spec"]["replicas"] == 0:
            return
        current["metadata"]["generation"] += 1
        _scaled_to_zero(current)
        server.update_object(current)
        for pod in server.list_objects("Pod", NS):
            server.delete_object("Pod", pod["metadata"]["name"], NS)

    env.server.patch_hooks.append(scale_down)
    result = env.tick("--rollout-timeout", "5")
    found = _workload(result.json(), "web")
    assert (found["outcome"], found["reason"], result.exit_code) == (
        "paused",
        "scaled to zero copies (replicas 0): nothing to verify until it runs again",
        0,
    )
    assert [w["step"] for w in found["writes"]] == ["restart"]
    annotations = _annotations(env, "Deployment", "web")
    assert annotations[RUNNER] == first
    assert PENDING in annotations
    assert _events(env, "Deployment", "web") == []
