"""A real Prometheus scrapes `truegreen monitor` while the cluster changes under it: the verdict
it stores goes 0 (ready), 2 (a dataset volume goes pending), 3 (the machines become
forbidden while nothing fails). Loopback only, its own storage, killed at the end."""

import signal
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.monitoring import (
    Prometheus,
    http_get,
    prometheus_binary,
    start_monitor,
    wait_for,
)
from tests.support.scenarios import NAMESPACE, healthy


def _scraping(binary: str, target: str, directory: Path) -> Prometheus:
    """A Prometheus scraping one monitor every 0.5 s."""
    job: dict[str, object] = {
        "job_name": "truegreen-monitor",
        "scrape_interval": "500ms",
        "scrape_timeout": "400ms",
        "static_configs": [{"targets": [target]}],
    }
    return Prometheus(binary, directory, [job])


def _samples(prometheus: Prometheus, series: str) -> list[str]:
    """Every value Prometheus stored for one series in the last five minutes, in order."""
    (found,) = prometheus.query(f"{series}[5m]")
    return [str(value) for _, value in found["values"]]


def _verdict(prometheus: Prometheus) -> str | None:
    found = prometheus.query('truegreen_verdict{namespace="train"}')
    return str(found[0]["value"][1]) if found else None


def _capacity(prometheus: Prometheus) -> str | None:
    found = prometheus.query('truegreen_check_status{namespace="train",check="capacity"}')
    return str(found[0]["value"][1]) if found else None


def _changes(values: list[str]) -> list[str]:
    """The values with repeats folded: 0 0 2 2 3 -> 0 2 3."""
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]


@pytest.fixture
def prometheus_path() -> str:
    binary = prometheus_binary()
    if binary is None:
        pytest.skip("prometheus is not installed (Debian package prometheus)")
    return binary


@pytest.fixture
def training(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    fake_api.watch_bookmark_seconds = 0.5
    for obj in healthy(datetime.now(UTC)):
        fake_api.add(obj)
    return fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)


def test_prometheus_sees_the_verdict_go_ready_not_ready_then_unknown(
    fake_api: FakeApiServer, training: Path, prometheus_path: str, tmp_path: Path
) -> None:
    monitor, base = start_monitor(
        training,
        *("--min-interval", "0.2", "--interval", "5", "--max-age", "30"),
        *("--watch-timeout", "2"),
    )
    prometheus: Prometheus | None = None
    seen: list[str] = []

    def verdict_is(value: str) -> bool:
        assert prometheus is not None
        current = _verdict(prometheus)
        if current is not None and (not seen or seen[-1] != current):
            seen.append(current)
        return current == value

    try:
        wait_for("/readyz", lambda: http_get(base + "/readyz")[0] == 200)
        prometheus = _scraping(prometheus_path, base.removeprefix("http://"), tmp_path)
        wait_for("Prometheus to store verdict 0", lambda: verdict_is("0"))
        claim = fake_api.get_object("PersistentVolumeClaim", "datasets", NAMESPACE)
        assert claim is not None
        claim["status"] = {"phase": "Pending"}
        fake_api.update_object(claim)
        wait_for("Prometheus to store verdict 2", lambda: verdict_is("2"))
        failing = prometheus.query(
            'truegreen_finding{namespace="train",check="storage",status="fail"}'
        )
        assert [f["metric"]["code"] for f in failing] == ["storage.volume-unbound"]
        # Then the machines may no longer be read (the open watch learns it when renewed): the
        # capacity check cannot look, but the measured failure still decides the verdict...
        fake_api.inject(Fault.FORBIDDEN, "^/api/v1/nodes$")
        wait_for("capacity to read 3", lambda: _capacity(prometheus) == "3")
        assert _verdict(prometheus) == "2"
        # ...until the volume is bound again: nothing fails, something could not be checked.
        claim["status"] = {"phase": "Bound"}
        fake_api.update_object(claim)
        wait_for("Prometheus to store verdict 3", lambda: verdict_is("3"))
        assert prometheus.query('up{job="truegreen-monitor"}')[0]["value"][1] == "1"
        stored = _samples(prometheus, 'truegreen_verdict{namespace="train"}')
        assert _changes(stored) == ["0", "2", "3"], stored
    finally:
        if prometheus is not None:
            prometheus.stop()
        code, _ = monitor.end(signal.SIGTERM)
    assert code == 0, monitor.err
    assert seen == ["0", "2", "3"]
