"""The monitor's metrics and page for many namespaces: every series names its cluster (or
none, for Prometheus's external labels to name it), each namespace its own series, the time
it was last measured ready, and the page worst first."""

import re
from datetime import UTC, datetime, timedelta

import pytest

from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.command.request import DoctorRequest
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.rollup import roll_up
from truegreen.errors import UsageError
from truegreen.monitor.command import MonitorRequest, check_request
from truegreen.monitor.engine import Evaluation
from truegreen.monitor.metrics import MonitorMetrics
from truegreen.monitor.page import fleet_page

AT = datetime(2026, 5, 1, 12, tzinfo=UTC)


def _evaluation(namespace: str, status: Status, ready_at: datetime | None) -> Evaluation:
    basis = Basis.CANT_CHECK if status is Status.UNKNOWN else Basis.MEASURED
    findings = [Finding(CheckId.STORAGE, status, basis, f"storage.{status.value}", "h", "r")]
    report = roll_up(findings, [CheckId.STORAGE])
    return Evaluation(namespace, report, AT, 0.0, 0.1, (), AT, 1, ready_at)


def _samples(exposition: bytes) -> list[str]:
    return [line for line in exposition.decode().splitlines() if not line.startswith("#")]


def test_every_series_names_the_cluster_each_namespace_its_own() -> None:
    evaluations = (
        ("team-a", _evaluation("team-a", Status.OK, AT)),
        ("team-b", _evaluation("team-b", Status.FAIL, AT - timedelta(hours=2))),
        ("team-c", None),
    )
    metrics = MonitorMetrics("prod-east", lambda: evaluations)
    metrics.count_request("list", "pods", "ok")
    lines = _samples(metrics.exposition())
    assert any(line.startswith("process_") for line in lines), "precondition: process metrics"
    unlabelled = [line for line in lines if 'cluster="prod-east"' not in line]
    assert unlabelled == []
    assert 'truegreen_verdict{cluster="prod-east",namespace="team-a"} 0.0' in lines
    assert 'truegreen_verdict{cluster="prod-east",namespace="team-b"} 2.0' in lines
    # not evaluated yet: could not check, as for one namespace
    assert 'truegreen_verdict{cluster="prod-east",namespace="team-c"} 3.0' in lines
    assert 'truegreen_namespaces_watched{cluster="prod-east"} 3.0' in lines
    ready = {
        m.group(1): float(m.group(2))
        for line in lines
        if (
            m := re.match(
                r'truegreen_last_ready_timestamp_seconds\{.*namespace="([^"]+)"\} (\S+)', line
            )
        )
    }
    assert ready == {"team-a": AT.timestamp(), "team-b": (AT - timedelta(hours=2)).timestamp()}
    assert (
        'truegreen_api_requests_total{cluster="prod-east",outcome="ok",resource="pods",verb="list"}'
        " 1.0"
    ) in lines


def test_without_a_cluster_name_no_series_has_a_cluster_label() -> None:
    evaluations = (("train", _evaluation("train", Status.OK, None)),)
    lines = _samples(MonitorMetrics("", lambda: evaluations).exposition())
    assert 'truegreen_verdict{namespace="train"} 0.0' in lines
    assert [line for line in lines if "cluster=" in line] == []
    # never measured ready since the monitor started: absent, not a made-up time
    assert [line for line in lines if "last_ready" in line] == []


@pytest.mark.parametrize("name", ["", "a" * 254, "east\n1", "east\x1b[31m"])
def test_a_cluster_name_that_cannot_label_the_metrics_is_bad_usage(name: str) -> None:
    request = MonitorRequest(
        DoctorRequest(ConnectionSettings(None, None, None, 5.0, False, None)), cluster_name=name
    )
    with pytest.raises(
        UsageError,
        match=r"^--cluster-name .* cannot label the metrics: it must be 1 to 253 printable",
    ):
        check_request(request)


def test_a_253_character_cluster_name_is_accepted() -> None:
    request = MonitorRequest(
        DoctorRequest(ConnectionSettings(None, None, None, 5.0, False, None)),
        cluster_name="a" * 253,
    )
    check_request(request)


def test_the_fleet_page_lists_every_namespace_worst_first_and_details_the_not_ready() -> None:
    unknown = _evaluation("b-unknown", Status.UNKNOWN, None)
    evaluations = (
        ("a-ready", _evaluation("a-ready", Status.OK, AT)),
        ("b-unknown", unknown),
        ("c-failing", _evaluation("c-failing", Status.FAIL, None)),
        ("d-new", None),
    )
    page = fleet_page("prod-east", evaluations, AT)
    order = re.findall(r'<tr><td><a href="#ns-([^"]+)">', page)
    assert order == ["c-failing", "b-unknown", "d-new", "a-ready"]
    details = re.findall(r'<h2 id="ns-([^"]+)">', page)
    assert details == ["c-failing", "b-unknown"]
    assert "<title>truegreen: prod-east</title>" in page


def test_the_fleet_page_says_when_the_selection_matches_no_namespace() -> None:
    page = fleet_page("prod-east", (), AT)
    assert "No namespace is selected: the selection matches none." in page
