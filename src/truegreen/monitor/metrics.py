"""The monitor's Prometheus metrics, through the reference client (no hand-written format).

State metrics are built at scrape time from the current evaluation, aged: a finding that went
away is gone from the next scrape, and a verdict past its maximum age reads 3. Label values are
check ids, finding codes, statuses, workload kinds and names, never free text; every series names
its namespace and, when known, its cluster.
"""

from collections.abc import Callable, Iterator, Sequence

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


Evaluations = Callable[[], Sequence[tuple[str, Evaluation | None]]]
"""Each namespace watched and its current evaluation (None before its first)."""


class _State(Collector):
    """The verdict, checks, findings and refresh state of each namespace's current evaluation."""

    def __init__(self, evaluations: Evaluations) -> None:
        self._evaluations = evaluations

    def collect(self) -> Iterator[Metric]:
        current = self._evaluations()
        watched = GaugeMetricFamily(
            "truegreen_namespaces_watched",
            "How many namespaces the monitor checks (0: a selector matches none).",
        )
        watched.add_metric([], len(current))
        yield watched
        families = _families()
        for ns, evaluation in current:
            _add(families, ns, evaluation)
        yield from families.values()


def _families() -> dict[str, GaugeMetricFamily]:
    def gauge(name: str, text: str, *labels: str) -> tuple[str, GaugeMetricFamily]:
        return name, GaugeMetricFamily(name, text, labels=["namespace", *labels])

    return dict(
        (
            gauge(
                "truegreen_verdict",
                "Can training run: 0 ready, 2 not ready, 3 could not check (doctor's exit codes).",
            ),
            gauge(
                "truegreen_check_status",
                "Each check: 0 ok (warnings allowed), 2 failed, 3 could not check.",
                "check",
            ),
            gauge(
                "truegreen_finding",
                "1 for each finding that is not ok, by check, code and status.",
                "check",
                "code",
                "status",
            ),
            gauge(
                "truegreen_last_evaluation_timestamp_seconds",
                "When the newest evaluation ran (Unix time).",
            ),
            gauge(
                "truegreen_verdict_changed_timestamp_seconds",
                "When the verdict or its headline last changed (Unix time).",
            ),
            gauge(
                "truegreen_last_ready_timestamp_seconds",
                "When an evaluation last measured the namespace ready (Unix time); absent when "
                "none has since the monitor started.",
            ),
            gauge(
                "truegreen_refresh_latched",
                "1 when refresh stopped retrying a workload.",
                "kind",
                "workload",
            ),
            gauge(
                "truegreen_refresh_pending",
                "1 while a restart refresh started on a workload has not been recorded.",
                "kind",
                "workload",
            ),
            gauge(
                "truegreen_refresh_attempts",
                "Restart attempts refresh has counted toward the newest image.",
                "kind",
                "workload",
            ),
            gauge(
                "truegreen_refresh_last_refreshed_timestamp_seconds",
                "When refresh last moved a workload onto a newer image (Unix time).",
                "kind",
                "workload",
            ),
        )
    )


def _add(families: dict[str, GaugeMetricFamily], ns: str, evaluation: Evaluation | None) -> None:
    families["truegreen_verdict"].add_metric(
        [ns], 3 if evaluation is None else int(evaluation.report.exit_code)
    )
    if evaluation is None:
        return
    report = evaluation.report
    for check, code in check_codes(report).items():
        families["truegreen_check_status"].add_metric([ns, check.value], code)
    seen: set[tuple[str, str, str]] = set()
    for finding in report.findings:
        key = (finding.check.value, finding.code, finding.status.value)
        if finding.status is not Status.OK and key not in seen:
            seen.add(key)
            families["truegreen_finding"].add_metric([ns, *key], 1)
    families["truegreen_last_evaluation_timestamp_seconds"].add_metric(
        [ns], evaluation.at.timestamp()
    )
    families["truegreen_verdict_changed_timestamp_seconds"].add_metric(
        [ns], evaluation.changed_at.timestamp()
    )
    if evaluation.ready_at is not None:
        families["truegreen_last_ready_timestamp_seconds"].add_metric(
            [ns], evaluation.ready_at.timestamp()
        )
    _refresh(families, ns, evaluation)


def _refresh(families: dict[str, GaugeMetricFamily], ns: str, evaluation: Evaluation) -> None:
    for state in evaluation.refresh:
        labels = [ns, state.kind, state.workload]
        families["truegreen_refresh_latched"].add_metric(labels, int(state.latched))
        families["truegreen_refresh_pending"].add_metric(labels, int(state.pending))
        families["truegreen_refresh_attempts"].add_metric(labels, state.attempts)
        if state.last_refreshed is not None:
            families["truegreen_refresh_last_refreshed_timestamp_seconds"].add_metric(
                labels, state.last_refreshed.timestamp()
            )


class _Labelled(Collector):
    """Every metric of `inner` with `cluster` added to each sample, so that one Prometheus
    that federates many clusters' monitors tells their series apart. Empty, no label is
    added: Prometheus reads an empty label as absent, and its own external_labels (or a
    target label) then say the cluster."""

    def __init__(self, inner: CollectorRegistry, cluster: str) -> None:
        self._inner = inner
        self._cluster = cluster

    def collect(self) -> Iterator[Metric]:
        for metric in self._inner.collect():
            if not self._cluster:
                yield metric
                continue
            labelled = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            labelled.samples = [
                sample._replace(labels={"cluster": self._cluster, **sample.labels})
                for sample in metric.samples
            ]
            yield labelled


class MonitorMetrics:
    """The registry behind `/metrics`."""

    def __init__(self, cluster: str, evaluations: Evaluations) -> None:
        """`cluster` labels every series ("" for none); `evaluations` are each namespace's."""
        inner = CollectorRegistry()
        self._requests = Counter(
            "truegreen_api_requests",
            "Requests sent to the API server, by verb, resource and outcome.",
            ["verb", "resource", "outcome"],
            registry=inner,
        )
        self._duration = Histogram(
            "truegreen_evaluation_duration_seconds",
            "How long one evaluation of every check took.",
            buckets=DURATION_BUCKETS,
            registry=inner,
        )
        inner.register(_State(evaluations))
        ProcessCollector(registry=inner)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Labelled(inner, cluster))

    def count_request(self, verb: str, resource: str, outcome: str) -> None:
        """Count one API request."""
        self._requests.labels(verb, resource, outcome).inc()

    def observe(self, evaluation: Evaluation) -> None:
        """Record one evaluation's duration."""
        self._duration.observe(evaluation.seconds)

    def exposition(self) -> bytes:
        """The text format, as Prometheus scrapes it."""
        return generate_latest(self.registry)
