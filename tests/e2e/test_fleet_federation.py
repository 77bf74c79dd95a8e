"""Past one cluster, through Prometheus: two monitors on two clusters (two fake API servers),
each scraped by its cluster's own Prometheus, and a third Prometheus that federates both with
deploy/monitor/prometheus/federation.yml's job and evaluates truegreen-rules.yaml. Its HTTP
API answers the fleet's question, as docs/monitor.md asks it: which training namespaces
cannot run now, and why. Loopback only, every process killed at the end."""

import copy
import signal
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.fake_apiserver import FakeApiServer
from tests.support.monitoring import (
    Process,
    Prometheus,
    http_get,
    prometheus_binary,
    start_monitor,
    wait_for,
)
from tests.support.scenarios import (
    NAMESPACE,
    damaged_pull_credentials,
    healthy,
    unbound_dataset_volume,
)

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "monitor" / "prometheus" / "truegreen-rules.yaml"
FEDERATION = ROOT / "deploy" / "monitor" / "prometheus" / "federation.yml"
LABEL = "truegreen.io/training"
FLEET_QUERY = (
    "cluster_namespace_check_code:truegreen_finding_failing:max"
    " and on (cluster, namespace) (cluster_namespace:truegreen_verdict:worst == 2)"
)
"""docs/monitor.md's question: which training namespaces cannot run now, and why."""

Obj = dict[str, Any]


def _in(namespace: str, objects: list[Obj]) -> list[Obj]:
    """The scenario's namespaced objects moved to `namespace`; the cluster's own (machines,
    storage types) kept as they are."""
    moved = []
    for obj in copy.deepcopy(objects):
        if obj["metadata"].get("namespace") == NAMESPACE:
            obj["metadata"]["namespace"] = namespace
        elif namespace != NAMESPACE:
            continue
        moved.append(obj)
    return moved


def _training(name: str) -> Obj:
    meta = {"name": name, "labels": {LABEL: "true"}}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


@pytest.fixture
def prometheus_path() -> str:
    binary = prometheus_binary()
    if binary is None:
        pytest.skip("prometheus is not installed (Debian package prometheus)")
    return binary


@pytest.fixture
def clusters(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """east: `train` ready, `team-a`'s dataset volume pending; west: `train` ready, `team-b`
    with a damaged registry login; and `scratch` on west, unlabelled, never watched. west's
    kubeconfig names its cluster `west` (the monitor's default cluster label)."""
    now = datetime.now(UTC)
    with FakeApiServer() as east, FakeApiServer() as west:
        for server in (east, west):
            server.watch_bookmark_seconds = 0.5
            server.add(_training(NAMESPACE), *_in(NAMESPACE, healthy(now)))
        east.add(_training("team-a"), *_in("team-a", unbound_dataset_volume(now)))
        west.add(_training("team-b"), *_in("team-b", damaged_pull_credentials(now)))
        scratch = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "scratch"}}
        west.add(scratch, *_in("scratch", unbound_dataset_volume(now)))
        east_config = east.write_kubeconfig(tmp_path / "east.kubeconfig")
        west_config = west.write_kubeconfig(tmp_path / "west.kubeconfig")
        config = yaml.safe_load(west_config.read_text())
        config["clusters"][0]["name"] = config["contexts"][0]["context"]["cluster"] = "west"
        west_config.write_text(yaml.safe_dump(config))
        yield {"east": east_config, "west": west_config}


def _monitor(kubeconfig: Path, *args: str) -> tuple[Process, str]:
    return start_monitor(
        kubeconfig,
        *("--namespace-selector", f"{LABEL}=true", "--no-events"),
        *("--min-interval", "0.2", "--interval", "5", "--max-age", "30", "--watch-timeout", "2"),
        *args,
    )


def _federating(binary: str, directory: Path, targets: list[str]) -> Prometheus:
    """The fleet's Prometheus: the shipped federation job, pointed at `targets`, each second."""
    (job,) = yaml.safe_load(FEDERATION.read_text())["scrape_configs"]
    job = {**job, "scrape_interval": "1s", "scrape_timeout": "900ms"}
    job["static_configs"] = [{"targets": targets}]
    return Prometheus(binary, directory, [job], rule_files=(RULES,))


def _ready(base: str) -> bool:
    return http_get(base + "/readyz")[0] == 200


def _answer(prometheus: Prometheus) -> set[tuple[str, str, str, str]]:
    return {
        (m.get("cluster", "-"), m["namespace"], m["check"], m["code"])
        for m in (found["metric"] for found in prometheus.query(FLEET_QUERY))
    }


def test_the_fleet_s_prometheus_answers_which_namespaces_cannot_run_and_why(
    clusters: dict[str, Path], prometheus_path: str, tmp_path: Path
) -> None:
    monitors: list[Process] = []
    servers: list[Prometheus] = []
    expected = {
        ("east", "team-a", "storage", "storage.volume-unbound"),
        ("west", "team-b", "image-pull", "image-pull.login-damaged"),
    }
    try:
        east, east_base = _monitor(clusters["east"], "--cluster-name", "east")
        monitors.append(east)
        west, west_base = _monitor(clusters["west"])
        monitors.append(west)
        for base in (east_base, west_base):
            wait_for(f"{base}/readyz", partial(_ready, base))
        for name, base in (("east", east_base), ("west", west_base)):
            job: dict[str, object] = {
                "job_name": "truegreen-monitor",
                "scrape_interval": "500ms",
                "scrape_timeout": "400ms",
                "static_configs": [{"targets": [base.removeprefix("http://")]}],
            }
            servers.append(
                Prometheus(
                    prometheus_path,
                    tmp_path / name,
                    [job],
                    external_labels={"prometheus": f"{name}-prometheus"},
                )
            )
        fleet = _federating(prometheus_path, tmp_path / "fleet", [s.address for s in servers])
        servers.append(fleet)
        answers: list[set[tuple[str, str, str, str]]] = [set()]

        def answered() -> bool:
            answers[0] = _answer(fleet)
            return answers[0] == expected

        try:
            wait_for("the fleet query's answer", answered)
        except AssertionError as error:
            raise AssertionError(f"{error}; its last answer: {sorted(answers[0])}") from None
        not_ready = {
            r["metric"]["cluster"]: r["value"][1]
            for r in fleet.query("cluster:truegreen_namespaces_not_ready:count")
        }
        assert not_ready == {"east": "1", "west": "1"}
        watched = {
            (r["metric"]["cluster"], r["metric"]["namespace"])
            for r in fleet.query("cluster_namespace:truegreen_verdict:worst")
        }
        assert watched == {
            ("east", "train"),
            ("east", "team-a"),
            ("west", "train"),
            ("west", "team-b"),
        }, "every labelled namespace of both clusters, and the unlabelled one not"
        # federated, not scraped: each series came through its cluster's Prometheus
        origins = {
            (r["metric"]["cluster"], r["metric"]["prometheus"], r["metric"]["job"])
            for r in fleet.query("truegreen_verdict")
        }
        assert origins == {
            ("east", "east-prometheus", "truegreen-monitor"),
            ("west", "west-prometheus", "truegreen-monitor"),
        }
    finally:
        for server in servers:
            server.stop()
        codes = [monitor.end(signal.SIGTERM)[0] for monitor in monitors]
    assert codes == [0, 0], [m.err for m in monitors]


def test_the_fleet_query_is_the_one_docs_monitor_md_gives() -> None:
    assert f"```promql\n{FLEET_QUERY}\n```" in (ROOT / "docs" / "monitor.md").read_text()
