"""The monitor's decisions, to the value: schedule, ages, back-off, watch steps, request labels,
verdict Events, refresh state, check encodings, the listen address and the page's escaping."""

import re
from datetime import UTC, datetime

import pytest

from truegreen.cluster import CantRead, ReadFailure
from truegreen.cluster.reflector import Backoff, Next, after_watch
from truegreen.cluster.settings import ConnectionSettings
from truegreen.cluster.watch import Closed, Expired, WatchRefused
from truegreen.doctor.command.request import DoctorRequest
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.rollup import NotChecked, Verdict, roll_up
from truegreen.errors import UsageError
from truegreen.http.errors import ConnectionDroppedError, ConnectRefusedError, TimedOutError
from truegreen.monitor.age import Held, is_stale, served
from truegreen.monitor.command import MonitorRequest, check_request
from truegreen.monitor.engine import Evaluation, stale_report
from truegreen.monitor.events import EventCorrelator, Write, event_due, verdict_event
from truegreen.monitor.metrics import check_codes
from truegreen.monitor.page import status_page
from truegreen.monitor.refresh_state import RefreshState, last_refreshed, refresh_states
from truegreen.monitor.requests import failure_outcome, outcome_of, request_kind
from truegreen.monitor.schedule import Schedule
from truegreen.monitor.server import parse_listen, status_url

FORBIDDEN = CantRead(ReadFailure.FORBIDDEN, "list nodes: no permission (403)")
TIMEOUT = CantRead(ReadFailure.TIMEOUT, "list nodes: no answer in time")

# -- schedule -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("last", "changed", "due"),
    [
        (None, None, 0.0),  # never evaluated: now
        (None, 5.0, 0.0),
        (100.0, None, 160.0),  # quiet: at least every interval
        (100.0, 101.0, 110.0),  # a change right after: not before min-interval
        (100.0, 130.0, 130.0),  # a change later: at once
        (100.0, 170.0, 160.0),  # the interval comes first anyway
    ],
)
def test_the_next_evaluation_is_due(last: float | None, changed: float | None, due: float) -> None:
    assert Schedule(min_interval=10.0, interval=60.0).next_due(last, changed) == due


# -- ages: never a stale green -----------------------------------------------------------------


def test_a_read_confirmed_within_the_maximum_age_may_be_used() -> None:
    assert served(Held(True, 100.0, None), now=280.0, max_age=180.0, action="list nodes") is None


def test_a_read_past_its_maximum_age_is_could_not_read_as_unconfirmed_not_a_timeout() -> None:
    """docs/monitor.md: `not confirmed by the cluster for N s`. Nothing failed, so nothing timed
    out: the cluster sent no confirmation (a quiet watch gets one about once a minute)."""
    why = served(Held(True, 100.0, None), now=280.5, max_age=180.0, action="list nodes")
    assert why == CantRead(
        ReadFailure.UNCONFIRMED,
        "list nodes: not confirmed by the cluster for 180 s (the limit is 180 s)",
    )


def test_a_transient_failure_keeps_the_objects_until_they_age_then_names_itself() -> None:
    assert served(Held(True, 100.0, TIMEOUT), now=200.0, max_age=180.0, action="x") is None
    aged = served(Held(True, 100.0, TIMEOUT), now=300.0, max_age=180.0, action="x")
    assert aged == CantRead(
        ReadFailure.TIMEOUT,
        "list nodes: no answer in time; not confirmed by the cluster for 200 s "
        "(the limit is 180 s)",
    )


def test_a_refusal_is_reported_at_once_whatever_the_objects_age() -> None:
    assert served(Held(True, 100.0, FORBIDDEN), now=100.0, max_age=180.0, action="x") == FORBIDDEN


def test_nothing_listed_yet_is_the_failure_or_not_listed() -> None:
    assert served(Held(False, None, FORBIDDEN), now=1.0, max_age=180.0, action="x") == FORBIDDEN
    assert served(Held(False, None, None), now=1.0, max_age=180.0, action="list pods") == CantRead(
        ReadFailure.TIMEOUT, "list pods: no answer in time (not listed yet)"
    )


def _asked(interval: float, max_age: float, watch_timeout: float) -> MonitorRequest:
    connection = ConnectionSettings(None, None, None, 5.0, False, None)
    return MonitorRequest(
        DoctorRequest(connection),
        interval=interval,
        min_interval=1.0,
        max_age=max_age,
        watch_timeout=watch_timeout,
    )


@pytest.mark.parametrize(
    ("interval", "max_age", "watch_timeout", "shortest"),
    [
        # A quiet watch is confirmed by kube-apiserver's bookmark about once a minute (up to
        # 62.25 s apart) or by its end within 2x --watch-timeout: the review's settings read
        # unknown every minute on a healthy cluster, however many evaluations ran.
        (10.0, 30.0, 300.0, 72.25),
        (5.0, 12.0, 5.0, 15.0),  # watches renewed within 10 s, served up to 5 s after
        # A login read live is used until an --interval old: the verdict may then be served
        # up to two --interval after it was read.
        (60.0, 100.0, 300.0, 122.25),
        (60.0, 122.25, 300.0, 122.25),  # strictly longer
        (1.0, 5.0, 2.0, 5.0),
    ],
)
def test_a_max_age_a_quiet_healthy_monitor_cannot_meet_is_bad_usage(
    interval: float, max_age: float, watch_timeout: float, shortest: float
) -> None:
    with pytest.raises(UsageError) as refused:
        check_request(_asked(interval, max_age, watch_timeout))
    assert refused.value.exit_code == 64
    assert refused.value.what == f"--max-age {max_age:g} must be longer than {shortest:g} s"


@pytest.mark.parametrize(
    ("interval", "max_age", "watch_timeout"),
    [
        (60.0, 180.0, 300.0),  # the defaults (and doctor --watch's)
        (60.0, 123.0, 300.0),
        (5.0, 30.0, 2.0),  # the tests' monitors
        (15.0, 60.0, 5.0),  # examples/monitor_demo.py
        (10.0, 73.0, 300.0),
    ],
)
def test_a_max_age_that_outlasts_the_cluster_s_confirmations_is_accepted(
    interval: float, max_age: float, watch_timeout: float
) -> None:
    check_request(_asked(interval, max_age, watch_timeout))


def test_the_refusal_says_where_the_shortest_max_age_comes_from() -> None:
    with pytest.raises(UsageError) as refused:
        check_request(_asked(10.0, 30.0, 300.0))
    assert refused.value.line() == (
        "--max-age 30 must be longer than 72.25 s: on a quiet, healthy cluster a read may go "
        "62.25 s unconfirmed (a watch is confirmed about once a minute, or when it ends, within "
        "2x --watch-timeout 300; a read made live is made again each --interval), and a verdict "
        "is served until the next evaluation, up to --interval 10 later: a healthy monitor "
        "would read unknown. Pass a longer --max-age, or a shorter --interval or "
        "--watch-timeout."
    )


def test_staleness_is_strictly_past_the_limit() -> None:
    assert (is_stale(0.0, 180.0, 180.0), is_stale(0.0, 180.1, 180.0)) == (False, True)


def _ok(check: CheckId) -> Finding:
    return Finding(check, Status.OK, Basis.MEASURED, f"{check.value}.ok", "fine", "")


def test_a_check_past_its_maximum_age_reads_unknown() -> None:
    report = roll_up(
        [_ok(CheckId.STORAGE), _ok(CheckId.CAPACITY)],
        [CheckId.STORAGE, CheckId.CAPACITY],
        [NotChecked(CheckId.CREDENTIALS, "not asked for", asked=False)],
    )
    assert (report.verdict, check_codes(report)) == (
        Verdict.READY,
        {CheckId.STORAGE: 0, CheckId.CAPACITY: 0},
    )
    aged = stale_report(report, 181.0)
    assert (aged.verdict, int(aged.exit_code)) == (Verdict.UNKNOWN, 3)
    assert check_codes(aged) == {CheckId.STORAGE: 3, CheckId.CAPACITY: 3}
    assert {(f.check, f.status, f.code) for f in aged.findings} == {
        (CheckId.STORAGE, Status.UNKNOWN, "monitor-stale"),
        (CheckId.CAPACITY, Status.UNKNOWN, "monitor-stale"),
    }
    assert aged.headline.text == (
        "Couldn't keep the verdict current: nothing was confirmed for 181 seconds."
    )
    assert [(n.check, n.asked) for n in aged.not_checked] == [
        (CheckId.CREDENTIALS, False),
        (CheckId.STORAGE, True),
        (CheckId.CAPACITY, True),
    ]


def test_check_codes_put_a_failure_above_an_unknown_and_warnings_at_zero() -> None:
    report = roll_up(
        [
            Finding(CheckId.STORAGE, Status.FAIL, Basis.MEASURED, "storage.x", "bad", "fix"),
            Finding(CheckId.STORAGE, Status.UNKNOWN, Basis.CANT_CHECK, "storage.y", "?", "?"),
            Finding(CheckId.CAPACITY, Status.WARN, Basis.INFERRED, "capacity.w", "wait", ""),
            Finding(CheckId.PROBES, Status.UNKNOWN, Basis.CANT_CHECK, "probes.z", "?", "?"),
        ],
        [CheckId.STORAGE, CheckId.CAPACITY, CheckId.PROBES],
    )
    assert check_codes(report) == {CheckId.STORAGE: 2, CheckId.CAPACITY: 0, CheckId.PROBES: 3}


# -- the reflector's back-off and steps ------------------------------------------------------


def test_backoff_doubles_to_its_cap_with_jitter_and_resets_after_quiet() -> None:
    now = [0.0]
    backoff = Backoff(lambda: now[0], lambda: 0.5)
    waits = [round(backoff.next_wait(), 6) for _ in range(8)]
    assert waits == [1.2, 2.4, 4.8, 9.6, 19.2, 38.4, 45.0, 45.0]
    now[0] = 120.0
    assert round(backoff.next_wait(), 6) == 45.0  # 120 s is not more than two quiet minutes
    now[0] = 240.5
    assert round(backoff.next_wait(), 6) == 1.2


def test_backoff_without_jitter_is_client_go_s_sequence() -> None:
    backoff = Backoff(lambda: 0.0, lambda: 0.0)
    assert [round(backoff.next_wait(), 3) for _ in range(7)] == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30]


@pytest.mark.parametrize(
    ("end", "lasted", "events", "step"),
    [
        (Closed(clean=True), 300.0, 0, Next.WATCH),  # the server's timeout: watch on
        (Closed(clean=False), 5.0, 0, Next.WATCH),  # a dropped connection: watch on
        (Closed(clean=True), 0.5, 1, Next.WATCH),
        (Closed(clean=True), 0.5, 0, Next.BACK_OFF_THEN_LIST),  # "very short watch"
        (Expired("too old resource version: 1 (5)"), 10.0, 3, Next.BACK_OFF_THEN_LIST),
        (FORBIDDEN, 10.0, 3, Next.BACK_OFF_THEN_LIST),
        (WatchRefused(FORBIDDEN, 403), 0.0, 0, Next.BACK_OFF_THEN_LIST),
        (
            WatchRefused(CantRead(ReadFailure.SERVER_ERROR, "x"), 429),
            0.0,
            0,
            Next.BACK_OFF_THEN_WATCH,
        ),
        (
            WatchRefused(CantRead(ReadFailure.SERVER_ERROR, "x"), 500),
            0.0,
            0,
            Next.BACK_OFF_THEN_LIST,
        ),
        (
            WatchRefused(CantRead(ReadFailure.UNREACHABLE, "refused", reached=False), None),
            0.0,
            0,
            Next.BACK_OFF_THEN_WATCH,
        ),
        (WatchRefused(TIMEOUT, None), 0.0, 0, Next.BACK_OFF_THEN_LIST),
    ],
)
def test_after_a_watch(end: object, lasted: float, events: int, step: Next) -> None:
    assert after_watch(end, lasted, events) is step  # type: ignore[arg-type]


# -- request labels ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url", "kind"),
    [
        ("GET", "https://k:6443/api/v1/namespaces/train/pods?limit=500", ("list", "pods")),
        ("GET", "https://k/api/v1/pods?watch=1&resourceVersion=5", ("watch", "pods")),
        ("GET", "https://k/api/v1/nodes", ("list", "nodes")),
        ("GET", "https://k/api/v1/namespaces/train/secrets/regcred", ("get", "secrets")),
        (
            "GET",
            "https://k/apis/apps/v1/namespaces/t/deployments?watch=true",
            ("watch", "deployments"),
        ),
        ("GET", "https://k/apis/storage.k8s.io/v1/storageclasses/std", ("get", "storageclasses")),
        ("GET", "https://k/api/v1/namespaces/train", ("get", "namespaces")),
        ("POST", "https://k/api/v1/namespaces/train/events", ("create", "events")),
        ("PATCH", "https://k/apis/apps/v1/namespaces/t/deployments/m", ("patch", "deployments")),
        ("GET", "https://k/version", ("other", "")),
    ],
)
def test_request_kind(method: str, url: str, kind: tuple[str, str]) -> None:
    assert request_kind(method, url) == kind


def test_outcomes_are_a_small_fixed_set() -> None:
    statuses = [200, 201, 401, 403, 404, 409, 410, 429, 500, 503, 400, 422]
    assert [outcome_of(s) for s in statuses] == [
        "ok", "ok", "unauthorized", "forbidden", "not-found", "conflict", "expired",
        "throttled", "server-error", "server-error", "refused", "refused",
    ]  # fmt: skip
    errors = [
        TimedOutError("t", connected=True),
        ConnectRefusedError("r"),
        ConnectionDroppedError("d"),
    ]
    assert [failure_outcome(e) for e in errors] == ["timeout", "unreachable", "broken"]


# -- verdict Events ---------------------------------------------------------------------------


def test_an_event_is_due_for_the_first_verdict_and_each_change_only() -> None:
    assert event_due(None, Verdict.READY) is True
    assert event_due(Verdict.READY, Verdict.READY) is False
    assert event_due(Verdict.READY, Verdict.NOT_READY) is True
    assert event_due(Verdict.NOT_READY, Verdict.UNKNOWN) is True


def _verdict_event(verdict: Verdict, second: int) -> dict[str, object]:
    now = datetime(2026, 5, 1, 12, 0, second, tzinfo=UTC)
    return verdict_event(verdict, f"{verdict.value}.", namespace="train", now=now, instance="m")


def test_a_repeated_event_patches_the_first_count_by_count() -> None:
    """client-go tools/record/events_cache.go eventObserve: a repeat keeps the first Event's
    name and firstTimestamp, counts one more, and is written as the patch
    {count, lastTimestamp, message}; the server's answer (UpdateState) is what later repeats
    count from."""
    correlator = EventCorrelator(clock=lambda: 0.0)
    first = correlator.correlate(_verdict_event(Verdict.READY, 0))
    assert first is not None
    assert first.patch is None
    correlator.written(first.event)
    assert correlator.correlate(_verdict_event(Verdict.NOT_READY, 1)) is not None
    again = correlator.correlate(_verdict_event(Verdict.READY, 2))
    assert again == Write(
        {
            **_verdict_event(Verdict.READY, 2),
            "metadata": first.event["metadata"],
            "count": 2,
            "firstTimestamp": "2026-05-01T12:00:00Z",
        },
        {"count": 2, "lastTimestamp": "2026-05-01T12:00:02Z", "message": "ready."},
    )


def test_one_source_writes_25_events_about_the_namespace_then_one_per_5_minutes() -> None:
    """client-go EventSourceObjectSpamFilter: defaultSpamBurst 25, defaultSpamQPS 1/300 per
    source and involved object; a dropped repeat is still counted (eventObserve runs first)."""
    now = [0.0]
    correlator = EventCorrelator(clock=lambda: now[0])
    verdicts = [Verdict.READY, Verdict.NOT_READY] * 13
    writes = [correlator.correlate(_verdict_event(v, i)) for i, v in enumerate(verdicts)]
    assert [w is not None for w in writes] == [True] * 25 + [False]
    assert correlator.correlate(_verdict_event(Verdict.READY, 30)) is None
    now[0] += 299.0
    assert correlator.correlate(_verdict_event(Verdict.READY, 31)) is None
    now[0] += 1.0
    allowed = correlator.correlate(_verdict_event(Verdict.READY, 32))
    assert allowed is not None
    assert allowed.patch == {
        "count": 16,
        "lastTimestamp": "2026-05-01T12:00:32Z",
        "message": "ready.",
    }
    now_ = datetime.now(UTC)
    other = verdict_event(Verdict.READY, "ready.", namespace="team-a", now=now_, instance="m")
    assert correlator.correlate(other) is not None, "another namespace has its own burst"


def test_the_verdict_event_is_a_core_event_on_the_namespace() -> None:
    now = datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
    event = verdict_event(
        Verdict.NOT_READY, "The dataset volume is not ready.", namespace="train", now=now,
        instance="monitor-7d9",
    )  # fmt: skip
    assert event == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "train.18ab6f405b054a00", "namespace": "train"},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Namespace",
            "name": "train",
            "namespace": "train",
        },
        "reason": "TrainingNotReady",
        "message": "The dataset volume is not ready.",
        "type": "Warning",
        "source": {"component": "truegreen-monitor"},
        "reportingComponent": "truegreen-monitor",
        "reportingInstance": "monitor-7d9",
        "firstTimestamp": "2026-05-01T12:00:00Z",
        "lastTimestamp": "2026-05-01T12:00:00Z",
        "count": 1,
    }
    assert int("18ab6f405b054a00", 16) == 1777636800123456000
    ready = verdict_event(Verdict.READY, "x" * 2000, namespace="t", now=now, instance="i")
    assert (ready["reason"], ready["type"], len(ready["message"])) == (
        "TrainingReady",
        "Normal",
        1024,
    )
    assert ready["message"].endswith("…")
    unknown = verdict_event(Verdict.UNKNOWN, "?", namespace="t", now=now, instance="i")
    assert (unknown["reason"], unknown["type"]) == ("TrainingUnknown", "Warning")


# -- refresh state ----------------------------------------------------------------------------


def _deployment(
    name: str, labels: dict[str, str], annotations: dict[str, str]
) -> dict[str, object]:
    return {
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
    }


def test_refresh_state_comes_from_the_opted_in_workloads_annotations_and_events() -> None:
    workloads = [
        _deployment("api", {"truegreen.io/refresh": "enabled"}, {
            "truegreen.io/refresh-latched": "3 attempts failed",
            "truegreen.io/refresh-attempts": "3 abc123",
        }),
        _deployment("db", {"truegreen.io/refresh": "enabled"}, {
            "truegreen.io/refresh-pending": '{"target": {}, "stamp": "x"}',
        }),
        _deployment("other", {"app": "other"}, {"truegreen.io/refresh-latched": "x"}),
    ]  # fmt: skip
    events = [
        {"reason": "ImageRefreshed", "involvedObject": {"kind": "Deployment", "name": "db"},
         "lastTimestamp": "2026-05-01T10:00:00Z"},
        {"reason": "ImageRefreshed", "involvedObject": {"kind": "Deployment", "name": "db"},
         "lastTimestamp": "2026-05-01T11:00:00Z"},
        {"reason": "RefreshLatched", "involvedObject": {"kind": "Deployment", "name": "api"},
         "lastTimestamp": "2026-05-01T12:00:00Z"},
        {"reason": "ImageRefreshed", "involvedObject": {"kind": "Pod", "name": "api"},
         "lastTimestamp": "2026-05-01T12:00:00Z"},
    ]  # fmt: skip
    refreshed = last_refreshed(events)
    assert refreshed == {("Deployment", "db"): datetime(2026, 5, 1, 11, tzinfo=UTC)}
    assert refresh_states([("Deployment", w) for w in workloads], refreshed) == (
        RefreshState(
            "Deployment", "api", latched=True, pending=False, attempts=3, last_refreshed=None
        ),
        RefreshState("Deployment", "db", False, True, 0, datetime(2026, 5, 1, 11, tzinfo=UTC)),
    )


def test_refresh_state_keeps_every_kind_refresh_keeps_apart_by_kind() -> None:
    """refresh keeps opted-in Deployments, StatefulSets and DaemonSets (refresh/tick.py
    `run_tick`) and writes its Events about each (refresh/events.py `event_object`): a
    StatefulSet named like a Deployment is a workload of its own, its Events its own, and an
    Event about a kind refresh never moves (a Pod, a ReplicaSet) dates nothing."""
    opted = {"truegreen.io/refresh": "enabled"}
    workloads = [
        ("Deployment", _deployment("web", opted, {"truegreen.io/refresh-attempts": "1 t"})),
        ("StatefulSet", _deployment("web", opted, {"truegreen.io/refresh-latched": "x"})),
        ("DaemonSet", _deployment("agent", opted, {"truegreen.io/refresh-pending": "{}"})),
    ]

    def about(kind: str, name: str, hour: int) -> dict[str, object]:
        event = _refreshed(name, lastTimestamp=f"2026-05-01T{hour:02}:00:00Z")
        return {**event, "involvedObject": {"kind": kind, "name": name}}

    events = [
        about("StatefulSet", "web", 9),
        about("Deployment", "web", 10),
        about("DaemonSet", "agent", 11),
        about("ReplicaSet", "web", 12),
        about("Pod", "agent", 13),
    ]
    refreshed = last_refreshed(events)
    assert refreshed == {
        ("StatefulSet", "web"): datetime(2026, 5, 1, 9, tzinfo=UTC),
        ("Deployment", "web"): datetime(2026, 5, 1, 10, tzinfo=UTC),
        ("DaemonSet", "agent"): datetime(2026, 5, 1, 11, tzinfo=UTC),
    }
    assert refresh_states(workloads, refreshed) == (
        RefreshState("DaemonSet", "agent", False, True, 0, datetime(2026, 5, 1, 11, tzinfo=UTC)),
        RefreshState("Deployment", "web", False, False, 1, datetime(2026, 5, 1, 10, tzinfo=UTC)),
        RefreshState("StatefulSet", "web", True, False, 0, datetime(2026, 5, 1, 9, tzinfo=UTC)),
    )


def _refreshed(name: str, **stamps: object) -> dict[str, object]:
    event: dict[str, object] = {
        "reason": "ImageRefreshed",
        "involvedObject": {"kind": "Deployment", "name": name},
    }
    return {**event, **stamps}


def test_refresh_state_reads_every_event_and_workload_whatever_comes_first() -> None:
    # A skipped event or a workload without the opt-in label does not end the reading.
    events = [
        {**_refreshed("db", lastTimestamp="2026-05-01T09:00:00Z"), "reason": "RefreshLatched"},
        _refreshed("db", lastTimestamp="2026-05-01T10:00:00Z"),
    ]
    refreshed = last_refreshed(events)
    assert refreshed == {("Deployment", "db"): datetime(2026, 5, 1, 10, tzinfo=UTC)}
    workloads = [
        _deployment("api", {"app": "api"}, {}),
        _deployment("db", {"truegreen.io/refresh": "enabled"}, {}),
    ]
    assert refresh_states([("Deployment", w) for w in workloads], refreshed) == (
        RefreshState("Deployment", "db", False, False, 0, datetime(2026, 5, 1, 10, tzinfo=UTC)),
    )


def test_a_refresh_event_without_a_last_timestamp_is_dated_by_its_event_time() -> None:
    # An Event written through events.k8s.io/v1 reads back in core/v1 with a null
    # lastTimestamp and a MicroTime eventTime (k8s.io/api events/v1 `EventTime`).
    events = [_refreshed("db", lastTimestamp=None, eventTime="2026-05-01T10:00:00.250000Z")]
    assert last_refreshed(events) == {
        ("Deployment", "db"): datetime(2026, 5, 1, 10, 0, 0, 250000, tzinfo=UTC)
    }


def test_a_refresh_event_with_no_readable_time_dates_nothing() -> None:
    # A time that is not an RFC 3339 string (a broken server's number, garbage) is no time:
    # the workload keeps its newest readable refresh, or has none, and nothing fails.
    newest = _refreshed("db", lastTimestamp="2026-05-01T10:00:00Z")
    unreadable = [
        _refreshed("db", lastTimestamp=1777629600, eventTime="2026-05-01T11:00:00Z"),
        _refreshed("db", lastTimestamp="yesterday"),
        _refreshed("api", lastTimestamp="yesterday", eventTime=None),
    ]
    assert last_refreshed([newest, *unreadable]) == {
        ("Deployment", "db"): datetime(2026, 5, 1, 11, tzinfo=UTC),  # the number: eventTime
    }
    assert last_refreshed(unreadable[1:]) == {}


# -- the listen address and the page ----------------------------------------------------------


@pytest.mark.parametrize(
    ("listen", "address"),
    [(":9108", ("0.0.0.0", 9108)), ("127.0.0.1:0", ("127.0.0.1", 0)), ("[::1]:80", ("::1", 80))],
)
def test_parse_listen(listen: str, address: tuple[str, int]) -> None:
    assert parse_listen(listen) == address


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:9108/"),
        # An IPv6 literal is bracketed (RFC 3986 §3.2.2; Go's net.JoinHostPort), its zone's `%`
        # escaped as `%25` (RFC 6874), as a kubeconfig's `server: http://[::1%25lo]:PORT` is.
        ("::1", "http://[::1]:9108/"),
        ("fe80::1%eth0", "http://[fe80::1%25eth0]:9108/"),
        # Every address (`:PORT`): no URL names the wildcard; this machine's own name does.
        ("::", "http://localhost:9108/"),
        ("0.0.0.0", "http://localhost:9108/"),
    ],
)
def test_the_status_url_of_each_bound_address(host: str, url: str) -> None:
    assert status_url(host, 9108) == url


@pytest.mark.parametrize("listen", ["9108", "host:", ":http", ":٣", ""])
def test_parse_listen_refuses(listen: str) -> None:
    with pytest.raises(ValueError, match=r"^it is not HOST:PORT or :PORT$"):
        parse_listen(listen)


@pytest.mark.parametrize(
    ("listen", "why"),
    [
        # net.SplitHostPort's words (Go src/net/ipsock.go), as `prometheus --web.listen-address`
        # and every Go server report them.
        ("[::1", "missing ']' in address"),
        ("::1:9108", "too many colons in address"),
        ("[::1]::9108", "too many colons in address"),
        ("[::1]x:9108", "it is not HOST:PORT or :PORT"),
        ("a[b:9108", "unexpected '[' in address"),
        ("a]b:9108", "unexpected ']' in address"),
    ],
)
def test_a_listen_address_is_split_as_go_splits_it(listen: str, why: str) -> None:
    with pytest.raises(ValueError, match=rf"^{re.escape(why)}$"):
        parse_listen(listen)


@pytest.mark.parametrize("listen", [":70000", "127.0.0.1:99999"])
def test_a_port_above_65535_is_out_of_range_not_a_malformed_address(listen: str) -> None:
    port = listen.rpartition(":")[2]
    with pytest.raises(ValueError, match=rf"^port {port} is out of range \(0 to 65535\)$"):
        parse_listen(listen)


def test_the_page_escapes_what_the_cluster_wrote() -> None:
    hostile = "<script>alert(1)</script>"
    finding = Finding(CheckId.STORAGE, Status.FAIL, Basis.MEASURED, "storage.x", hostile, hostile)
    report = roll_up([finding], [CheckId.STORAGE])
    at = datetime(2026, 5, 1, 12, tzinfo=UTC)
    evaluation = Evaluation("train", report, at, 0.0, 0.1, (), at, 1)
    page = status_page("<ns>", evaluation, at)
    assert "<script>" not in page
    # the headline, its remedy, and the storage row of the checks
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3
    assert "<title>truegreen: &lt;ns&gt;</title>" in page
    assert "NOT READY" in page
    assert status_page("t", None, at).count("The first check is still running.") == 1


def test_a_check_that_could_not_look_reads_could_not_check_beside_a_warning() -> None:
    """The page's row for a check says what /metrics says of it (`check_codes`: 3 for an
    unknown beside a warning), never the warning alone."""
    findings = [
        Finding(CheckId.FRESHNESS, Status.WARN, Basis.MEASURED, "freshness.w", "Stopped.", "x"),
        Finding(CheckId.FRESHNESS, Status.UNKNOWN, Basis.CANT_CHECK, "freshness.u", "Unread.", "y"),
    ]
    report = roll_up(findings, [CheckId.FRESHNESS])
    at = datetime(2026, 5, 1, 12, tzinfo=UTC)
    page = status_page("t", Evaluation("t", report, at, 0.0, 0.1, (), at, 1), at)
    assert check_codes(report)[CheckId.FRESHNESS] == 3
    assert "<td>freshness</td><td>? could not check</td><td>Unread.</td>" in page


def test_a_command_in_backticks_is_code_and_still_escaped() -> None:
    from truegreen.monitor.page import shown

    assert shown("See why with `kubectl -n train describe pvc <x>`; then `a&b`.") == (
        "See why with <code>kubectl -n train describe pvc &lt;x&gt;</code>; then "
        "<code>a&amp;b</code>."
    )
    assert shown("no command, one ` stray") == "no command, one ` stray"
