"""The rollout simulator's StatefulSets and DaemonSets, judged by `kubectl rollout status`
(kubectl's StatefulSetStatusViewer and DaemonSetStatusViewer, pkg/polymorphichelpers/
rollout_status.go): kubectl restarts them through the fake, and its verdicts are the oracle."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_apiserver import FakeApiServer
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import daemonset, statefulset
from tests.support.rollout import REVISION_LABEL, RolloutSimulator

pytestmark = pytest.mark.kubectl


def _verdict(kubeconfig: Path, target: str) -> tuple[int, str]:
    """kubectl's exit code and the last line it printed of the rollout of `target` (done, or
    what it was still waiting for when its 1s ran out)."""
    result = kubectl(kubeconfig, "rollout", "status", target, "--timeout=1s")
    lines = result.stdout.strip().splitlines()
    return result.returncode, (lines[-1] if lines else result.stderr.strip())


def _pods(kubeconfig: Path) -> list[tuple[str, bool, str]]:
    """(name, terminating, revision label) of each pod, as kubectl lists them (a read: the
    controllers act)."""
    listed = json.loads(kubectl(kubeconfig, "get", "pods", "-o", "json").stdout)["items"]
    return [
        (
            p["metadata"]["name"],
            "deletionTimestamp" in p["metadata"],
            p["metadata"]["labels"].get(REVISION_LABEL, ""),
        )
        for p in listed
    ]


def _simulator(fake_api: FakeApiServer, behaviour: str, name: str) -> RolloutSimulator:
    simulator = RolloutSimulator(fake_api, lambda image: "sha256:" + "1" * 64, terminating_reads=1)
    simulator.behaviour[name] = behaviour
    return simulator


def _settled(fake_api: FakeApiServer, simulator: RolloutSimulator, workload: dict[str, Any]) -> str:
    simulator.settle(workload, nodes=("node-1", "node-2"))
    stored = fake_api.get_object(workload["kind"], workload["metadata"]["name"], "train")
    assert stored is not None
    return str(stored["status"].get("updateRevision", ""))


def test_a_statefulset_replaces_its_highest_ordinal_first_and_kubectl_sees_it_through(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    simulator = _simulator(fake_api, "ok", "db")
    first = _settled(fake_api, simulator, statefulset("db", replicas=2))
    assert _verdict(kubeconfig, "statefulset/db") == (
        0,
        "partitioned roll out complete: 2 new pods have been updated...",
    )
    assert kubectl(kubeconfig, "rollout", "restart", "statefulset/db").returncode == 0
    assert _verdict(kubeconfig, "statefulset/db") == (
        1,
        "Waiting for partitioned roll out to finish: 0 out of 2 new pods have been updated...",
    )
    # db-1 goes first; once it is back on the new revision, db-0 follows.
    assert _pods(kubeconfig) == [("db-0", False, first), ("db-1", True, first)]
    listed = _pods(kubeconfig)
    new = listed[1][2]
    assert listed == [("db-0", True, first), ("db-1", False, new)]
    assert new != first
    _pods(kubeconfig)
    assert _pods(kubeconfig) == [("db-0", False, new), ("db-1", False, new)]
    assert simulator.replaced == ["db-1", "db-0"]
    assert _verdict(kubeconfig, "statefulset/db") == (
        0,
        "partitioned roll out complete: 2 new pods have been updated...",
    )
    stored = fake_api.get_object("StatefulSet", "db", "train")
    assert stored is not None
    assert (stored["status"]["currentRevision"], stored["status"]["updateRevision"]) == (new, new)


def test_a_statefulset_stops_at_a_crashing_pod_and_keeps_its_partition(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    simulator = _simulator(fake_api, "crash", "db")
    workload = statefulset("db", replicas=3)
    workload["spec"]["updateStrategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 1},
    }
    first = _settled(fake_api, simulator, workload)
    assert kubectl(kubeconfig, "rollout", "restart", "statefulset/db").returncode == 0
    for _ in range(4):
        _pods(kubeconfig)
    assert simulator.replaced == ["db-2"]  # crashing: db-1 is never touched, db-0 is partitioned
    assert [(name, revision == first) for name, _, revision in _pods(kubeconfig)] == [
        ("db-0", True),
        ("db-1", True),
        ("db-2", False),
    ]
    assert _verdict(kubeconfig, "statefulset/db") == (1, "Waiting for 1 pods to be ready...")


def test_a_daemonset_replaces_one_node_at_a_time_and_kubectl_sees_it_through(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    simulator = _simulator(fake_api, "ok", "agent")
    _settled(fake_api, simulator, daemonset("agent"))
    assert _verdict(kubeconfig, "daemonset/agent") == (
        0,
        'daemon set "agent" successfully rolled out',
    )
    assert kubectl(kubeconfig, "rollout", "restart", "daemonset/agent").returncode == 0
    assert _verdict(kubeconfig, "daemonset/agent") == (
        1,
        'Waiting for daemon set "agent" rollout to finish: 0 out of 2 new pods have been '
        "updated...",
    )
    for _ in range(6):
        _pods(kubeconfig)
    assert simulator.replaced == ["agent-node-1", "agent-node-2"]
    assert _verdict(kubeconfig, "daemonset/agent") == (
        0,
        'daemon set "agent" successfully rolled out',
    )


def test_a_daemonset_stops_at_a_crashing_pod(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    simulator = _simulator(fake_api, "crash", "agent")
    _settled(fake_api, simulator, daemonset("agent"))
    assert kubectl(kubeconfig, "rollout", "restart", "daemonset/agent").returncode == 0
    for _ in range(6):
        _pods(kubeconfig)
    assert simulator.replaced == ["agent-node-1"]
    assert _verdict(kubeconfig, "daemonset/agent") == (
        1,
        'Waiting for daemon set "agent" rollout to finish: 1 out of 2 new pods have been '
        "updated...",
    )


def test_a_statefulset_whose_last_new_pod_is_never_ready_is_waited_on_by_kubectl(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """`last-unready`: every copy replaced, the last one running and never Ready. kubectl's
    StatefulSetStatusViewer has no deadline: it keeps waiting for the copy to be ready."""
    simulator = _simulator(fake_api, "last-unready", "db")
    _settled(fake_api, simulator, statefulset("db", replicas=2))
    assert kubectl(kubeconfig, "rollout", "restart", "statefulset/db").returncode == 0
    for _ in range(4):
        _pods(kubeconfig)
    assert simulator.replaced == ["db-1", "db-0"]
    stored = fake_api.get_object("StatefulSet", "db", "train")
    assert stored is not None
    status = stored["status"]
    assert (status["updatedReplicas"], status["readyReplicas"]) == (2, 1)
    assert status["currentRevision"] != status["updateRevision"]
    assert _verdict(kubeconfig, "statefulset/db") == (1, "Waiting for 1 pods to be ready...")
