"""The monitor's Prometheus metrics, through the reference client (no hand-written format).

State metrics are built at scrape time from the current evaluation, aged: a finding that went
away is gone from the next scrape, and a verdict past its maximum age reads 3. Label values are
check ids, finding codes, statuses and workload names, never free text.
"""

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from truegreen.doctor.findings import CheckId, Status
from truegreen.doctor.rollup import Report
from truegreen.exitcodes import ExitCode
from truegreen.monitor.engine import Evaluation

CONTENT_TYPE = CONTENT_TYPE_LATEST
DURATION_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def check_codes(report: Report) -> dict[CheckId, int]:
    """Each check that ran, in the verdict's encoding: 2 a failure, 3 could not check, else 0."""
    ran = [*report.checked, *(n.check for n in report.not_checked if n.asked)]
    codes: dict[CheckId, int] = {}
    for check in sorted(ran, key=list(CheckId).index):
        statuses = {f.status for f in report.findings if f.check is check}
        if Status.FAIL in statuses:
            codes[check] = int(ExitCode.FAILED)
        elif Status.UNKNOWN in statuses:
            codes[check] = int(ExitCode.UNKNOWN)
        else:
            codes[check] = int(ExitCode.GOOD)
    return codes


class _State(Collector):
    """The verdict, checks, findings and refresh state of the current evaluation."""

    def __init__(self, namespace: str, current: Callable[[], Evaluation | None]) -> None:
        self._namespace = namespace
        self._current = current

    def collect(self) -> Iterator[Metric]:
        ns = self._namespace
        evaluation = self._current()
        verdict = GaugeMetricFamily(
            "truegreen_verdict",
            "Can training run: 0 ready, 2 not ready, 3 could not check (doctor's exit codes).",
            labels=["namespace"],
        )
        verdict.add_metric([ns], 3 if evaluation is None else int(evaluation.report.exit_code))
        yield verdict
        if evaluation is None:
            return
        report = evaluation.report
        checks = GaugeMetricFamily(
            "truegreen_check_status",
            "Each check: 0 ok (warnings allowed), 2 failed, 3 could not check.",
            labels=["namespace", "check"],
        )
        for check, code in check_codes(report).items():
            checks.add_metric([ns, check.value], code)
        yield checks
        findings = GaugeMetricFamily(
            "truegreen_finding",
            "1 for each finding that is not ok, by check, code and status.",
            labels=["namespace", "check", "code", "status"],
        )
        seen: set[tuple[str, str, str]] = set()
        for finding in report.findings:
            key = (finding.check.value, finding.code, finding.status.value)
            if finding.status is not Status.OK and key not in seen:
                seen.add(key)
                findings.add_metric([ns, *key], 1)
        yield findings
        last = GaugeMetricFamily(
            "truegreen_last_evaluation_timestamp_seconds",
            "When the newest evaluation ran (Unix time).",
            labels=["namespace"],
        )
        last.add_metric([ns], evaluation.at.timestamp())
        yield last
        changed = GaugeMetricFamily(
            "truegreen_verdict_changed_timestamp_seconds",
            "When the verdict or its headline last changed (Unix time).",
            labels=["namespace"],
        )
        changed.add_metric([ns], evaluation.changed_at.timestamp())
        yield changed
        yield from _refresh(ns, evaluation)


def _refresh(ns: str, evaluation: Evaluation) -> Iterator[Metric]:
    labels = ["namespace", "workload"]
    latched = GaugeMetricFamily(
        "truegreen_refresh_latched", "1 when refresh stopped retrying a workload.", labels=labels
    )
    pending = GaugeMetricFamily(
        "truegreen_refresh_pending",
        "1 while a restart refresh started on a workload has not been recorded.",
        labels=labels,
    )
    attempts = GaugeMetricFamily(
        "truegreen_refresh_attempts",
        "Restart attempts refresh has counted toward the newest image.",
        labels=labels,
    )
    refreshed = GaugeMetricFamily(
        "truegreen_refresh_last_refreshed_timestamp_seconds",
        "When refresh last moved a workload onto a newer image (Unix time).",
        labels=labels,
    )
    for state in evaluation.refresh:
        latched.add_metric([ns, state.workload], int(state.latched))
        pending.add_metric([ns, state.workload], int(state.pending))
        attempts.add_metric([ns, state.workload], state.attempts)
        if state.last_refreshed is not None:
            refreshed.add_metric([ns, state.workload], state.last_refreshed.timestamp())
    yield from (latched, pending, attempts, refreshed)


class MonitorMetrics:
    """The registry behind `/metrics`."""

    def __init__(self, namespace: str, current: Callable[[], Evaluation | None]) -> None:
        self.registry = CollectorRegistry()
        self._requests = Counter(
            "truegreen_api_requests",
            "Requests sent to the API server, by verb, resource and outcome.",
            ["verb", "resource", "outcome"],
            registry=self.registry,
        )
        self._duration = Histogram(
            "truegreen_evaluation_duration_seconds",
            "How long one evaluation of every check took.",
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_State(namespace, current))
        ProcessCollector(registry=self.registry)

    def count_request(self, verb: str, resource: str, outcome: str) -> None:
        """Count one API request."""
        self._requests.labels(verb, resource, outcome).inc()

    def observe(self, evaluation: Evaluation) -> None:
        """Record one evaluation's duration."""
        self._duration.observe(evaluation.seconds)

    def exposition(self) -> bytes:
        """The text format, as Prometheus scrapes it."""
        return generate_latest(self.registry)
