"""Watches through truegreen's own client against the fake API server: the stream, the
reflector's list-then-watch, and the monitor's engine over the watch cache."""

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support import refresh_kit
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.scenarios import NAMESPACE, REGISTRY, healthy, node
from truegreen.cluster import CantRead, Kind, ReadFailure
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.reflector import Reflector, WatchSettings
from truegreen.cluster.settings import ConnectionSettings
from truegreen.cluster.watch import Change, Closed, Expired, ListedAt, WatchRefused, WatchStream
from truegreen.doctor.diagnose import Where
from truegreen.doctor.environment import DoctorSettings
from truegreen.doctor.findings import CheckId
from truegreen.doctor.rollup import Verdict
from truegreen.http.transport import Transport
from truegreen.monitor.engine import Evaluation, Monitor, MonitorSettings
from truegreen.monitor.metrics import MonitorMetrics, check_codes
from truegreen.monitor.requests import CONNECTIONS, request_kind

BOUND = 30.0
"""Seconds any awaited state may take on a slow, shared machine before the test fails."""


def wait_for(what: str, condition: Callable[[], bool]) -> None:
    """Poll `condition` until it holds; fail naming `what` after BOUND seconds."""
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"waited {BOUND:g} s for {what}"
        time.sleep(0.02)


def _pod(name: str, phase: str = "Running", app: str = "a") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "t", "labels": {"app": app}},
        "status": {"phase": phase},
    }


@pytest.fixture
def cluster(fake_api: FakeApiServer, tmp_path: Path) -> Iterator[LiveCluster]:
    fake_api.watch_bookmark_seconds = 0.2
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace="t")
    with LiveCluster.connect(ConnectionSettings(kubeconfig, None, None, 5.0, False, None)) as live:
        yield live


def _listed(cluster: LiveCluster, **where: object) -> ListedAt:
    listed = cluster.list_at(Kind.POD, namespace="t", **where)  # type: ignore[arg-type]
    assert isinstance(listed, ListedAt), listed
    return listed


def _watch(cluster: LiveCluster, version: str, timeout: int = 2, **where: object) -> WatchStream:
    stream = cluster.watch(
        Kind.POD,
        namespace="t",
        resource_version=version,
        timeout_seconds=timeout,
        **where,  # type: ignore[arg-type]
    )
    assert isinstance(stream, WatchStream), stream
    return stream


def test_a_watch_streams_each_change_after_the_list_then_ends_at_its_timeout(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    fake_api.add(_pod("a"), _pod("b"))
    listed = _listed(cluster)
    assert [key for key, _ in listed.items] == [("t", "a"), ("t", "b")]
    assert [obj["kind"] for _, obj in listed.items] == ["Pod", "Pod"]  # stamped: #3030
    changed = fake_api.get_object("Pod", "a", "t")
    assert changed is not None
    changed["status"]["phase"] = "Pending"
    fake_api.update_object(changed)
    fake_api.delete_object("Pod", "b", "t")
    fake_api.add(_pod("c"))
    stream = _watch(cluster, listed.resource_version)
    seen = [(e.change, e.key) for e in stream if e.change is not Change.BOOKMARK]
    assert seen == [
        (Change.MODIFIED, ("t", "a")),
        (Change.DELETED, ("t", "b")),
        (Change.ADDED, ("t", "c")),
    ]
    assert stream.end == Closed(clean=True)
    watches = fake_api.requests("GET", "/pods")[-1]
    assert watches.query == {
        "watch": "1",
        "resourceVersion": listed.resource_version,
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "2",
    }


def test_a_watch_decodes_only_the_objects_it_is_told_are_wanted(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    """A fleet's watch of every namespace drops the other namespaces' objects: their events
    carry their key and version, not a decoded object."""
    fake_api.add(_pod("a"), _pod("b"))
    listed = _listed(cluster)
    for name in ("a", "b"):
        changed = fake_api.get_object("Pod", name, "t")
        assert changed is not None
        changed["status"]["phase"] = "Pending"
        fake_api.update_object(changed)
    stream = _watch(cluster, listed.resource_version, wanted=lambda key: key[1] == "a")
    seen = [(e.key, e.obj is None) for e in stream if e.change is Change.MODIFIED]
    assert seen == [(("t", "a"), False), (("t", "b"), True)]
    unfiltered = _watch(cluster, listed.resource_version)
    assert [e.obj is None for e in unfiltered if e.change is Change.MODIFIED] == [False, False], (
        "precondition: without `wanted` every object is decoded"
    )


def test_a_watch_dropped_from_another_thread_ends_quietly_as_unclean(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    """The monitor stops a reflector by closing its stream under the reading thread; the
    socket then fails in whatever way it was caught, which is the drop, not an error."""
    fake_api.add(_pod("a"))
    stream = _watch(cluster, _listed(cluster).resource_version, timeout=30)
    events = iter(stream)
    first = next(events)
    assert first.change is Change.BOOKMARK, "precondition: the stream is open and read"
    stream.close()
    assert list(events) == []
    assert stream.end == Closed(clean=False)


def test_an_object_that_leaves_the_selection_is_deleted_with_its_last_state(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    fake_api.add(_pod("a"))
    running = {"fields": {"status.phase": "Running"}}
    listed = _listed(cluster, **running)
    done = fake_api.get_object("Pod", "a", "t")
    assert done is not None
    done["status"]["phase"] = "Succeeded"
    fake_api.update_object(done)
    events = list(_watch(cluster, listed.resource_version, 2, **running))
    deleted = [e for e in events if e.change is Change.DELETED]
    assert [(e.key, e.obj["status"]["phase"]) for e in deleted] == [(("t", "a"), "Running")]
    assert int(deleted[0].resource_version) > int(listed.resource_version)


def test_an_idle_watch_gets_bookmarks_that_carry_the_newest_version(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    fake_api.add(_pod("a"))
    listed = _listed(cluster)
    fake_api.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    events = list(_watch(cluster, listed.resource_version, timeout=1))
    assert events, "an idle watch of 1 s with bookmarks every 0.2 s got nothing"
    assert {e.change for e in events} == {Change.BOOKMARK}
    assert int(events[-1].resource_version) == int(listed.resource_version) + 1


def test_a_version_older_than_the_server_keeps_is_expired(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    fake_api.add(_pod("a"))
    listed = _listed(cluster)
    fake_api.compact()
    stream = _watch(cluster, listed.resource_version)
    assert list(stream) == []
    assert isinstance(stream.end, Expired)
    assert stream.end.message.startswith(f"too old resource version: {listed.resource_version} (")


def test_a_watch_refused_for_permission_names_the_grant_it_needs(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    fake_api.inject(Fault.FORBIDDEN, "/pods$")
    refused = cluster.watch(Kind.POD, namespace="t", resource_version="1", timeout_seconds=1)
    assert isinstance(refused, WatchRefused)
    assert (refused.status, refused.retry_watch, refused.cant.failure) == (
        403,
        False,
        ReadFailure.FORBIDDEN,
    )
    assert refused.cant.reason == (
        "watch pods: no permission (403); needs watch pods in namespace t"
    )


def test_a_garbled_event_ends_the_stream_as_malformed(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    fake_api.inject(Fault.MALFORMED, "/pods$")
    stream = _watch(cluster, "1")
    assert list(stream) == []
    assert isinstance(stream.end, CantRead)
    assert stream.end.failure is ReadFailure.MALFORMED


def _collection_lists(fake_api: FakeApiServer) -> list[str]:
    """The list requests made so far (not watches, not gets of one object)."""
    return [
        f"{r.path}?{r.query.get('fieldSelector', '')}"
        for r in fake_api.requests("GET")
        if "watch" not in r.query and request_kind("GET", r.path)[0] == "list"
    ]


def _lists(fake_api: FakeApiServer) -> int:
    return sum(1 for r in fake_api.requests("GET", "/pods$") if "watch" not in r.query)


def test_the_reflector_follows_changes_rewatches_and_lists_again_only_when_expired(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    fake_api.add(_pod("a"))
    reflector = Reflector(cluster, Kind.POD, namespace="t", settings=WatchSettings(2.0)).start()
    try:
        assert reflector.wait_attempted(BOUND)
        assert [o["metadata"]["name"] for o in reflector.state().items] == ["a"]
        fake_api.add(_pod("b"))
        wait_for("b to arrive", lambda: reflector.find("t", "b") is not None)
        fake_api.drop_watches()
        fake_api.delete_object("Pod", "a", "t")
        wait_for("a to go", lambda: reflector.find("t", "a") is None)
        assert _lists(fake_api) == 1, "a watch the server ended is watched again, not listed"
        fake_api.compact()
        fake_api.drop_watches()
        wait_for("the list after 410 Expired", lambda: _lists(fake_api) == 2)
        fake_api.add(_pod("c"))
        wait_for("c after the new list", lambda: reflector.find("t", "c") is not None)
        state = reflector.state()
        assert (state.listed, state.failure) == (True, None)
    finally:
        reflector.stop()


def test_the_reflector_keeps_a_refusal_beside_its_objects(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    fake_api.add(_pod("a"))
    reflector = Reflector(cluster, Kind.POD, namespace="t", settings=WatchSettings(1.0)).start()
    try:
        assert reflector.wait_attempted(BOUND)
        fake_api.inject(Fault.FORBIDDEN, "/pods$")
        fake_api.drop_watches()
        wait_for("the refusal", lambda: reflector.state().failure is not None)
        state = reflector.state()
        assert state.failure is not None
        assert state.failure.failure is ReadFailure.FORBIDDEN
        assert len(state.items) == 1
        fake_api.clear_faults()
        wait_for("the recovery", lambda: reflector.state().failure is None)
    finally:
        reflector.stop()


# -- the engine over the watch cache ---------------------------------------------------------


@pytest.fixture
def training(fake_api: FakeApiServer, tmp_path: Path) -> Iterator[LiveCluster]:
    fake_api.watch_bookmark_seconds = 0.2
    for obj in healthy(datetime.now(UTC)):
        fake_api.add(obj)
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
    settings = ConnectionSettings(kubeconfig, None, None, 5.0, False, None)
    # Each followed collection holds a connection for its watch, as in `truegreen monitor`.
    pooled = partial(Transport, per_host=CONNECTIONS)
    with LiveCluster.connect(settings, make_transport=pooled) as live:
        yield live


def _settings(**overrides: float) -> MonitorSettings:
    values = {"interval": 60.0, "min_interval": 0.1, "max_age": 180.0, **overrides}
    return MonitorSettings(
        DoctorSettings(),
        Where("http://127.0.0.1", "the test kubeconfig"),
        watch=WatchSettings(2.0),
        interval=values["interval"],
        min_interval=values["min_interval"],
        max_age=values["max_age"],
    )


def test_the_engine_follows_the_cluster_without_listing_it_again(
    fake_api: FakeApiServer, training: LiveCluster
) -> None:
    seen: list[Evaluation] = []
    monitor = Monitor(training, _settings(), on_evaluation=lambda new, old: seen.append(new))
    try:
        first = monitor.evaluate()
        assert (first.report.verdict, first.report.headline.text) == (
            Verdict.READY,
            "Ready: training can run.",
        )
        lists = _collection_lists(fake_api)
        assert len(lists) >= 8, lists
        again = monitor.evaluate()
        assert (again.number, again.changed_at) == (2, first.changed_at)
        claim = fake_api.get_object("PersistentVolumeClaim", "datasets", NAMESPACE)
        assert claim is not None
        claim["status"] = {"phase": "Pending"}
        fake_api.update_object(claim)
        wait_for(
            "the claim to go pending in the cache",
            lambda: monitor.evaluate().report.verdict is Verdict.NOT_READY,
        )
        latest = monitor.latest()
        assert latest is not None
        assert latest.report.headline.code == "storage.volume-unbound"
        assert latest.changed_at == latest.at > first.changed_at
        # last measured ready: the last ready evaluation's time, kept while not ready (the
        # evaluations waiting for the change may have been ready too)
        assert (first.ready_at, again.ready_at) == (first.at, again.at)
        last_ready = [e for e in seen if e.report.verdict is Verdict.READY][-1]
        assert last_ready.number >= again.number
        assert latest.ready_at == last_ready.at
        assert _collection_lists(fake_api) == lists, (
            "after the first evaluation the cache follows watches; nothing is listed again"
        )
        assert monitor.latest().number >= 2  # type: ignore[union-attr]
        logins = fake_api.requests("GET", "/secrets/regcred$")
        assert len(logins) == 1, "a login read live is read again only after --interval"
    finally:
        monitor.cache.close()


def test_machines_that_become_forbidden_make_capacity_unknown(
    fake_api: FakeApiServer, training: LiveCluster
) -> None:
    monitor = Monitor(training, _settings())
    try:
        assert monitor.evaluate().report.verdict is Verdict.READY
        fake_api.inject(Fault.FORBIDDEN, "^/api/v1/nodes$")
        fake_api.drop_watches()
        wait_for(
            "capacity to read unknown",
            lambda: check_codes(monitor.evaluate().report).get(CheckId.CAPACITY) == 3,
        )
        latest = monitor.latest()
        assert latest is not None
        assert latest.report.verdict is Verdict.UNKNOWN
        assert latest.report.headline.text == (
            "Couldn't check whether there is room for a training job: "
            "no permission to read the machines."
        )
    finally:
        monitor.cache.close()


def test_a_verdict_past_its_maximum_age_is_served_as_unknown(training: LiveCluster) -> None:
    now = [1000.0]
    epoch = datetime(2026, 1, 1, tzinfo=UTC)
    monitor = Monitor(
        training,
        _settings(max_age=120.0),
        clock=lambda: now[0],
        wall=lambda: epoch + timedelta(seconds=now[0]),
    )
    metrics = MonitorMetrics("", monitor.evaluations)
    try:
        evaluated = monitor.evaluate()
        assert evaluated.report.verdict is Verdict.READY
        assert b'truegreen_verdict{namespace="train"} 0.0' in metrics.exposition()
        now[0] += 120.0
        current = monitor.current()
        assert current is not None
        assert current.report.verdict is Verdict.READY
        now[0] += 0.5
        current = monitor.current()
        assert current is not None
        assert (current.report.verdict, set(check_codes(current.report).values())) == (
            Verdict.UNKNOWN,
            {3},
        )
        # The served verdict changed when the reads aged past the limit, at every look.
        went_stale = epoch + timedelta(seconds=evaluated.as_of + 120.0)
        assert went_stale > evaluated.changed_at, "precondition: the ready verdict came first"
        assert current.changed_at == went_stale
        now[0] += 30.0
        later = monitor.current()
        assert later is not None
        assert later.changed_at == went_stale
        exposed = metrics.exposition().decode()
        (served,) = [
            float(line.rsplit(" ", 1)[1])
            for line in exposed.splitlines()
            if line.startswith('truegreen_verdict_changed_timestamp_seconds{namespace="train"}')
        ]
        assert served == went_stale.timestamp()
        assert 'truegreen_verdict{namespace="train"} 3.0' in exposed
        assert 'truegreen_check_status{check="capacity",namespace="train"} 3.0' in exposed
        assert (
            'truegreen_finding{check="storage",code="monitor-stale",namespace="train",'
            'status="unknown"} 1.0'
        ) in exposed
    finally:
        monitor.cache.close()


def _watched(fake_api: FakeApiServer, since: int = 0) -> set[tuple[str, str, str]]:
    """Each collection watched in the requests from `since` on: path and selectors."""
    return {
        (r.path, r.query.get("labelSelector", ""), r.query.get("fieldSelector", ""))
        for r in fake_api.requests()[since:]
        if r.method == "GET" and r.query.get("watch") == "1"
    }


def _served_change_time(metrics: MonitorMetrics) -> float:
    (value,) = [
        float(line.rsplit(" ", 1)[1])
        for line in metrics.exposition().decode().splitlines()
        if line.startswith('truegreen_verdict_changed_timestamp_seconds{namespace="train"}')
    ]
    return value


def test_the_answer_s_change_time_moves_on_when_a_stale_verdict_is_current_again(
    fake_api: FakeApiServer, training: LiveCluster
) -> None:
    """docs/monitor.md Metrics: `truegreen_verdict_changed_timestamp_seconds` (and the page's
    "the answer last changed") is when the verdict served last changed. The unknown served past
    --max-age is a change, and so is its end: a ready verdict that comes back after a stale
    spell changed when it came back. Never the time from before the spell, which would make
    `time() - truegreen_verdict_changed_timestamp_seconds` read the namespace as ready all
    along, and the served time go back."""
    now = [1000.0]
    epoch = datetime(2026, 1, 1, tzinfo=UTC)
    monitor = Monitor(
        training,
        _settings(max_age=120.0),
        clock=lambda: now[0],
        wall=lambda: epoch + timedelta(seconds=now[0]),
    )
    metrics = MonitorMetrics("", monitor.evaluations)
    try:
        first = monitor.evaluate()
        assert first.report.verdict is Verdict.READY
        now[0] += 121.0
        stale = monitor.current()
        assert stale is not None
        assert stale.report.verdict is Verdict.UNKNOWN
        assert _served_change_time(metrics) == stale.changed_at.timestamp() > first.at.timestamp()
        # Every watch ends cleanly and is opened again: the reflector confirms its collection
        # (at the new time) before it asks again, so the next evaluation reads nothing stale.
        watched = _watched(fake_api)
        mark = len(fake_api.requests())
        fake_api.drop_watches()
        wait_for("every watch opened again", lambda: _watched(fake_api, mark) >= watched)
        back = monitor.evaluate()
        assert (back.report.verdict, back.report.headline.text) == (
            first.report.verdict,
            first.report.headline.text,
        ), "precondition: the same verdict as before the spell, every read current"
        assert back.changed_at == back.at
        assert _served_change_time(metrics) == back.at.timestamp() > stale.changed_at.timestamp()
        current = monitor.current()
        assert current is not None
        assert current.changed_at == back.at
        now[0] += 1.0
        assert monitor.evaluate().changed_at == back.at, "a verdict that stays keeps its time"
    finally:
        monitor.cache.close()


def test_a_read_left_unconfirmed_past_the_maximum_age_says_so_not_that_the_cluster_timed_out(
    fake_api: FakeApiServer, training: LiveCluster
) -> None:
    """docs/monitor.md, Never a stale green: a read unconfirmed for --max-age is a could-not-read
    `not confirmed by the cluster for N s`. Here nothing failed: every request was answered,
    and the cluster sent no bookmark and ended no watch in that time (kube-apiserver's come
    about once a minute and at the watch's end: cacher.go defaultBookmarkFrequency,
    cache_watcher.go nextBookmarkTime). Saying the cluster "did not answer in time", and
    advising a longer --request-timeout, would blame what did not happen."""
    fake_api.watch_bookmark_seconds = 3600.0
    now = [1000.0]
    settings = replace(_settings(max_age=120.0), watch=WatchSettings(300.0))
    monitor = Monitor(training, settings, clock=lambda: now[0])
    try:
        assert monitor.evaluate().report.verdict is Verdict.READY
        now[0] += 121.0
        aged = monitor.evaluate()
        assert aged.report.verdict is Verdict.UNKNOWN
        assert {r.status for r in fake_api.requests()} == {200}, "precondition: all answered"
        assert aged.report.headline.text == (
            "Couldn't check whether training images can be downloaded: the cluster has not "
            "confirmed the workloads for longer than the monitor allows."
        )
        unknown = [f for f in aged.report.findings if f.status.value == "unknown"]
        assert {f.code.rpartition(".")[2] for f in unknown} == {"cant-read"}
        said = [text for f in unknown for text in (f.headline, f.remedy, *f.details)]
        assert [text for text in said if "in time" in text or "request-timeout" in text] == []
        assert "list nodes: not confirmed by the cluster for 121 s (the limit is 120 s)" in said
    finally:
        monitor.cache.close()


def test_a_login_read_live_can_hold_a_healthy_verdict_two_intervals(
    fake_api: FakeApiServer, training: LiveCluster
) -> None:
    """Why --max-age must outlast two --interval (monitor/age.py `shortest_max_age`): a login
    read live is used until it is an --interval old, so an evaluation just before that uses it
    as it was, and its verdict is served until the next evaluation, an --interval later. With
    --interval 60 and --max-age 100, a healthy cluster read unknown here."""
    now = [1000.0]
    monitor = Monitor(training, _settings(max_age=100.0), clock=lambda: now[0])
    try:
        assert monitor.evaluate().report.verdict is Verdict.READY
        now[0] += 59.0
        reused = monitor.evaluate()
        assert (reused.report.verdict, reused.as_of) == (Verdict.READY, 1000.0)
        assert _login_reads(fake_api) == [200], "precondition: the login was not read again"
        now[0] += 42.0  # before the next evaluation is due, 60 s after the last one
        current = monitor.current()
        assert current is not None
        assert current.report.verdict is Verdict.UNKNOWN
    finally:
        monitor.cache.close()


def _login_reads(fake_api: FakeApiServer) -> list[int]:
    """The status of each live get of the registry login, in order."""
    return [r.status for r in fake_api.requests("GET", "/secrets/regcred$")]


def _login_findings(evaluation: Evaluation) -> list[tuple[str, str]]:
    return [
        (f.code, f.status.value)
        for f in evaluation.report.findings
        if f.check is CheckId.IMAGE_PULL and f.status.value != "ok"
    ]


def test_a_live_get_that_fails_for_a_moment_keeps_its_last_answer_until_it_ages(
    fake_api: FakeApiServer, training: LiveCluster
) -> None:
    """docs/monitor.md, Never a stale green: a transient failure (a 5xx, a timeout, no
    connection) keeps what was read before usable until it ages past --max-age; a refusal
    (403) is could-not-read at once. As a client-go informer keeps serving its store through a
    failed list or watch (client-go tools/cache/reflector.go `Run`: ListAndWatch's error goes
    to the watchErrorHandler and is retried after a back-off; the store is not emptied). The
    registry login is a live get, read again once an --interval (60 s here)."""
    now = [1000.0]
    monitor = Monitor(training, _settings(max_age=180.0), clock=lambda: now[0])
    try:
        assert monitor.evaluate().report.verdict is Verdict.READY
        assert _login_reads(fake_api) == [200], "precondition: the login read live"
        # one 503, an --interval later: the login read 61 s ago still answers
        fake_api.inject(Fault.UNAVAILABLE, "/secrets/regcred$", count=1)
        now[0] += 61.0
        blip = monitor.evaluate()
        assert _login_reads(fake_api) == [200, 503], "precondition: the 503 was answered"
        assert (blip.report.verdict, _login_findings(blip)) == (Verdict.READY, [])
        assert blip.as_of == 1000.0, "the verdict is as current as the login's last answer"
        # the 503s go on until that answer is past --max-age: could not check, saying why
        fake_api.inject(Fault.UNAVAILABLE, "/secrets/regcred$")
        now[0] += 120.0
        wait_for(  # the watches' bookmarks confirm the other reads at the new time
            "the login alone to read unknown",
            lambda: (
                check_codes(monitor.evaluate().report)
                == {**check_codes(blip.report), CheckId.IMAGE_PULL: 3}
            ),
        )
        aged = monitor.latest()
        assert aged is not None
        assert aged.report.verdict is Verdict.UNKNOWN
        assert {status for _, status in _login_findings(aged)} == {"unknown"}
        details = " ".join(d for f in aged.report.findings for d in f.details)
        assert "not confirmed by the cluster for 181 s (the limit is 180 s)" in details
        # the server answers again: ready; then a refusal is reported at once, and forgets
        # the answer from before it: a 503 right after it is no reason to use that again
        fake_api.clear_faults()
        now[0] += 1.0
        assert monitor.evaluate().report.verdict is Verdict.READY
        fake_api.inject(Fault.FORBIDDEN, "/secrets/regcred$", count=1)
        now[0] += 61.0
        refused = monitor.evaluate()
        fake_api.inject(Fault.UNAVAILABLE, "/secrets/regcred$", count=1)
        now[0] += 1.0
        after = monitor.evaluate()
        assert _login_reads(fake_api)[-2:] == [403, 503], "precondition: both answered"
        assert _login_findings(refused) == [("image-pull.cant-read", "unknown")]
        assert _login_findings(after) == [("image-pull.cant-read", "unknown")]
    finally:
        monitor.cache.close()


def test_refresh_state_past_the_maximum_age_is_served_as_no_series(
    fake_api: FakeApiServer, training: LiveCluster
) -> None:
    """docs/monitor.md: a value the monitor could not keep current reads could not check, and a
    refresh state that could not be read has no series (Prometheus reads an absent series as
    unknown). The opted-in Deployment carries refresh's attempt counter as refresh writes it
    (src/truegreen/refresh/annotations.py); once the verdict is past --max-age its refresh
    series go with it, and come back with the next current evaluation."""
    fake_api.add(
        refresh_kit.deployment(
            "trainer",
            refresh_kit.container("c", f"{REGISTRY}/x:1"),
            annotations={"truegreen.io/refresh-attempts": "2"},
        )
    )
    now = [1000.0]
    monitor = Monitor(training, _settings(max_age=120.0), clock=lambda: now[0])
    metrics = MonitorMetrics("", monitor.evaluations)
    attempts = (
        'truegreen_refresh_attempts{kind="Deployment",namespace="train",workload="trainer"} 2.0'
    )
    try:
        assert monitor.evaluate().report.verdict is Verdict.READY
        assert attempts in metrics.exposition().decode(), "precondition: the series is served"
        now[0] += 120.5
        exposed = metrics.exposition().decode()
        assert 'truegreen_verdict{namespace="train"} 3.0' in exposed
        served = [line for line in exposed.splitlines() if line.startswith("truegreen_refresh_")]
        assert served == [], "a stale evaluation's refresh state is served as current"
        current = monitor.current()
        assert current is not None
        assert current.refresh == ()
        wait_for(  # the watches' bookmarks confirm the reads at the new time
            "a current evaluation",
            lambda: monitor.evaluate().report.verdict is not Verdict.UNKNOWN,
        )
        assert attempts in metrics.exposition().decode()
    finally:
        monitor.cache.close()


def _gpu_machine_short_of_a_gpu(name: str) -> dict[str, object]:
    """A GPU machine as GPU feature discovery labels it (NVIDIA gpu-feature-discovery:
    `nvidia.com/gpu.present`, `nvidia.com/gpu.count`) whose device plugin reports one of its
    eight GPUs unhealthy: the kubelet's device manager leaves it out of allocatable
    (pkg/kubelet/cm/devicemanager/manager.go GetCapacity)."""
    machine = node(name, "16", "64Gi", gpus=8)
    machine["metadata"]["labels"].update(
        {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8"}
    )
    machine["status"]["capacity"]["nvidia.com/gpu"] = "8"
    machine["status"]["allocatable"]["nvidia.com/gpu"] = "7"
    return machine


def _machine_pod_watches(fake_api: FakeApiServer, since: int) -> set[str]:
    return {
        r.query.get("fieldSelector", "")
        for r in fake_api.requests()[since:]
        if r.path == "/api/v1/pods"
        and r.query.get("watch") in ("1", "true")
        and r.query.get("fieldSelector", "").startswith("spec.nodeName=")
    }


def _evaluated_and_watched(monitor: Monitor, fake_api: FakeApiServer, machine: str) -> bool:
    monitor.evaluate_all()
    return f"spec.nodeName={machine}" in _machine_pod_watches(fake_api, 0)


def test_a_collection_no_evaluation_asks_for_any_more_is_no_longer_watched(
    fake_api: FakeApiServer, training: LiveCluster
) -> None:
    """client-go's informers follow a fixed set of collections; the per-machine pod reads
    doctor makes for a GPU machine in trouble come and go with the machine. Three machines in
    trouble one after another, each deleted (replaced, as an autoscaler or a repair loop does):
    once two rounds of evaluations have not asked for a machine's pods, their watch is stopped:
    it is not renewed, while the collections still asked for are."""
    monitor = Monitor(training, _settings())
    try:
        monitor.evaluate_all()
        for index in range(3):
            name = f"gpu-bad-{index}"
            fake_api.add(_gpu_machine_short_of_a_gpu(name))
            watched = partial(_evaluated_and_watched, monitor, fake_api, name)
            wait_for(f"{name}'s pods to be watched", watched)
            fake_api.delete_object("Node", name)
        assert _machine_pod_watches(fake_api, 0) == {
            "spec.nodeName=gpu-bad-0",
            "spec.nodeName=gpu-bad-1",
            "spec.nodeName=gpu-bad-2",
        }, "precondition: each machine's pods were watched"
        wait_for(
            "the machines to be gone from the cache",
            lambda: "gpu-bad" not in str(monitor.evaluate_all()[0].report),
        )
        monitor.evaluate_all()
        monitor.evaluate_all()
        mark = len(fake_api.requests())
        time.sleep(4.5)  # past 2x the 2 s watch timeout: every followed watch is renewed
        renewed = {r.path for r in fake_api.requests()[mark:] if r.query.get("watch") == "1"}
        assert "/api/v1/nodes" in renewed, "precondition: the watches still asked for renew"
        assert _machine_pod_watches(fake_api, mark) == set(), (
            "pod watches of machines no evaluation asks about are still followed"
        )
    finally:
        monitor.cache.close()


def test_a_reflector_keeps_only_what_it_is_told_to_keep(
    fake_api: FakeApiServer, cluster: LiveCluster
) -> None:
    """A fleet's watch of every namespace, held to the selected ones: the others' objects are
    neither kept from the list nor from the watch, and their changes wake nobody."""
    fake_api.add(_pod("a"), {**_pod("b"), "metadata": {"name": "b", "namespace": "other"}})
    changes: list[int] = []
    reflector = Reflector(
        cluster,
        Kind.POD,
        namespace=None,
        settings=WatchSettings(2.0),
        on_change=lambda: changes.append(1),
        keep=lambda key: key[0] == "t",
    ).start()
    try:
        assert reflector.wait_attempted(BOUND)
        assert [p["metadata"]["name"] for p in reflector.state().items] == ["a"]
        woken = len(changes)
        fake_api.add({**_pod("c"), "metadata": {"name": "c", "namespace": "other"}})
        fake_api.add(_pod("d"))
        wait_for("d", lambda: len(reflector.state().items) == 2)
        assert sorted(p["metadata"]["name"] for p in reflector.state().items) == ["a", "d"]
        assert len(changes) == woken + 1, "the other namespace's pod woke no one"
        assert [p["metadata"]["name"] for p in reflector.state("t").items] == ["a", "d"]
        assert reflector.state("other").items == ()
    finally:
        reflector.stop()


def test_doctor_watch_s_verdict_past_its_maximum_age_speaks_to_who_runs_it(
    training: LiveCluster,
) -> None:
    """doctor --watch runs the monitor's engine in the operator's terminal: an aged verdict
    there is no monitor to check on or log to read (`watch-stale`); the monitor's own stays
    `monitor-stale`."""
    said: dict[bool, tuple[str, str]] = {}
    now = [1000.0]
    for watching in (False, True):
        now[0] = 1000.0
        settings = replace(_settings(max_age=120.0), watching=watching)
        monitor = Monitor(training, settings, clock=lambda: now[0])
        try:
            assert monitor.evaluate().report.verdict is Verdict.READY, "precondition: ready"
            now[0] += 120.5
            current = monitor.current()
            assert current is not None
            assert current.report.verdict is Verdict.UNKNOWN, "precondition: aged past the limit"
            finding = current.report.findings[0]
            said[watching] = (finding.code, finding.remedy)
        finally:
            monitor.cache.close()
    assert said[False] == (
        "monitor-stale",
        "Check that truegreen monitor is running and can reach the cluster; its log says why.",
    )
    assert said[True] == (
        "watch-stale",
        "Check that this computer still reaches the cluster; --watch checks again by itself "
        "as soon as the cluster answers.",
    )
