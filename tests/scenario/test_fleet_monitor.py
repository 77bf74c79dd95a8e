"""One monitor over many namespaces, against the fake API server through the real client.

Each namespace is judged as a monitor of that namespace alone judges it; every collection is
followed by ONE watch of every namespace (a fleet costs the collections one namespace costs,
not one per namespace and kind), and each namespace's own object and logins come from a
watch of the cluster's Namespaces and of each login by name, redacted as a get's answer is; a
selector is read again every --interval, so a namespace labelled into it is watched and one
labelled out is no longer reported; one namespace whose reads are refused is that namespace's
could-not-check.
"""

import base64
import binascii
import copy
import json
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_apiserver import FakeApiServer, Fault, RequestRecord
from tests.support.monitoring import BOUND, wait_for
from tests.support.scenarios import (
    NAMESPACE,
    PULL_SECRET_VALUE,
    damaged_pull_credentials,
    healthy,
    held_by_running_job,
)
from truegreen.cluster import Got, Kind, Listed
from truegreen.cluster.label_selector import parse_selector
from truegreen.cluster.namespace_selection import (
    NamespaceSelection,
    NamespacesNotListedError,
    SelectionMode,
)
from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.command.request import DoctorRequest
from truegreen.doctor.findings import CheckId
from truegreen.doctor.knowledge.usage import CapacityTally
from truegreen.doctor.reads.gather import HOLDING_CAPACITY
from truegreen.doctor.rollup import Verdict
from truegreen.monitor.command import MonitorRequest, RunningMonitor
from truegreen.monitor.metrics import check_codes
from truegreen.monitor.redacted import RedactedOnce

Obj = dict[str, Any]


def _moved(objects: list[Obj], namespace: str) -> list[Obj]:
    """The scenario's namespaced objects, moved to `namespace` (machines stay the cluster's)."""
    moved = []
    for obj in copy.deepcopy(objects):
        if obj["metadata"].get("namespace") == NAMESPACE:
            obj["metadata"]["namespace"] = namespace
            moved.append(obj)
    return moved


def _namespace(name: str, **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


@pytest.fixture
def fleet(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    """`train` and `team-a` healthy and labelled team=ml; `team-b` with a damaged
    registry login, labelled team=web."""
    fake_api.watch_bookmark_seconds = 0.2
    now = datetime.now(UTC)
    fake_api.add(_namespace(NAMESPACE, team="ml"), _namespace("team-a", team="ml"))
    fake_api.add(_namespace("team-b", team="web"))
    fake_api.add(*healthy(now))
    fake_api.add(*_moved(healthy(now), "team-a"))
    fake_api.add(*_moved(damaged_pull_credentials(now), "team-b"))
    return fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)


def _request(
    kubeconfig: Path,
    selection: NamespaceSelection,
    interval: float = 5.0,
    namespace: str | None = None,
) -> MonitorRequest:
    return MonitorRequest(
        DoctorRequest(ConnectionSettings(kubeconfig, None, namespace, 5.0, False, None)),
        listen=None,
        min_interval=0.1,
        interval=interval,
        max_age=30.0,
        watch_timeout=2.0,
        events=False,
        selection=selection,
    )


@pytest.fixture
def running() -> Iterator[list[RunningMonitor]]:
    """Monitors started by a test, stopped and closed after it."""
    started: list[RunningMonitor] = []
    yield started
    for monitor in started:
        monitor.close()


def _start(running: list[RunningMonitor], request: MonitorRequest) -> RunningMonitor:
    monitor = RunningMonitor(request, on_evaluation=lambda n, o: None, on_event=lambda e: None)
    running.append(monitor)
    threading.Thread(target=monitor.run, daemon=True).start()
    return monitor


def _verdicts(monitor: RunningMonitor) -> dict[str, Verdict | None]:
    return {
        name: None if e is None else e.report.verdict for name, e in monitor.monitor.evaluations()
    }


def _found(monitor: RunningMonitor, namespace: str) -> list[tuple[str, str, str, str]]:
    """Every finding of the namespace's evaluation: check, code, status and headline."""
    evaluation = monitor.monitor.current(namespace)
    assert evaluation is not None
    return sorted(
        (f.check.value, f.code, f.status.value, f.headline) for f in evaluation.report.findings
    )


def _collections(server: FakeApiServer) -> set[str]:
    """The paths listed (every list is paged: `limit`) or watched: each followed collection."""
    return {r.path for r in server.requests("GET") if "watch" in r.query or "limit" in r.query}


def _selected(record: RequestRecord) -> tuple[str, str]:
    """A request's path and selectors."""
    query = record.query
    return record.path, f"{query.get('labelSelector', '')}|{query.get('fieldSelector', '')}"


def _watched(server: FakeApiServer, paths: set[str]) -> set[tuple[str, str]]:
    """Each distinct collection followed: path and selectors."""
    return {_selected(r) for r in server.requests("GET") if r.path in paths and "watch" in r.query}


def _each_list_watched(server: FakeApiServer) -> bool:
    """Whether every collection listed is also watched: a monitor's evaluation can complete
    before the watch that follows its last list is sent."""
    sent = server.requests("GET")
    listed = {_selected(r) for r in sent if "limit" in r.query and "continue" not in r.query}
    return listed <= {_selected(r) for r in sent if "watch" in r.query}


def _selections(server: FakeApiServer) -> list[RequestRecord]:
    """The lists of namespaces by their labels: the selection."""
    sent = server.requests("GET", r"^/api/v1/namespaces$")
    return [r for r in sent if "labelSelector" in r.query]


SELECTOR = NamespaceSelection(SelectionMode.SELECTOR, selector=parse_selector("team=ml"))


def test_each_namespace_is_judged_alone_over_one_watch_per_collection(
    fake_api: FakeApiServer, fleet: Path, running: list[RunningMonitor]
) -> None:
    names = NamespaceSelection(SelectionMode.LIST, ("train", "team-a", "team-b"))
    monitor = _start(running, _request(fleet, names))
    wait_for("every namespace evaluated", monitor.monitor.complete)
    assert _verdicts(monitor) == {
        "train": Verdict.READY,
        "team-a": Verdict.READY,
        "team-b": Verdict.NOT_READY,
    }
    team_b = monitor.monitor.current("team-b")
    assert team_b is not None
    assert team_b.report.headline.code.startswith("image-pull."), team_b.report.headline.code
    wait_for("each listed collection watched", lambda: _each_list_watched(fake_api))
    fleet_collections = _collections(fake_api)
    per_namespace = {p for p in fleet_collections if "/namespaces/" in p}
    assert per_namespace == set(), "a fleet follows no collection per namespace"
    fleet_watched = _watched(fake_api, fleet_collections)
    in_fleet = _found(monitor, "team-a")
    lists: dict[tuple[str, str], int] = {}
    for r in fake_api.requests("GET"):
        if "limit" in r.query and "continue" not in r.query and r.path != "/api/v1/namespaces":
            lists[_selected(r)] = lists.get(_selected(r), 0) + 1
    assert {k: n for k, n in lists.items() if n > 1} == {}, "each collection is listed once"
    running.pop().close()
    # the same cluster, one namespace: the same collections, each of every namespace
    fake_api.log.clear()
    one = NamespaceSelection(names=("team-a",))
    alone = _start(running, _request(fleet, one, namespace="team-a"))
    wait_for("the namespace evaluated", alone.monitor.complete)
    assert _verdicts(alone) == {"team-a": Verdict.READY}
    assert _found(alone, "team-a") == in_fleet, "judged in a fleet as alone"
    wait_for("each listed collection watched", lambda: _each_list_watched(fake_api))
    single = _collections(fake_api)
    # the fleet follows the same collections, and in place of each namespace's gets of its
    # Namespace and its login, the cluster's Namespaces and each login by name
    in_place_of_gets = {"/api/v1/namespaces", "/api/v1/secrets"}
    assert in_place_of_gets.isdisjoint(single), "precondition: one namespace gets them"
    assert {p.replace("/namespaces/team-a", "") for p in single} | in_place_of_gets == (
        fleet_collections
    )
    # the same number of followed collections (the namespace's pods and the cluster's pods
    # are two watches in both: the cluster's are decoded as a view for the capacity sums)
    assert len(_watched(fake_api, single)) + len(in_place_of_gets) == len(fleet_watched) >= 12


def test_a_namespace_of_a_fleet_is_judged_as_a_monitor_of_it_alone_judges_it(
    fake_api: FakeApiServer, fleet: Path, running: list[RunningMonitor]
) -> None:
    """team-c's training job holds the GPUs another of its jobs waits for: its own pods, and
    never another namespace's, are the ones whose finishing it may wait for."""
    fake_api.add(*_moved(held_by_running_job(datetime.now(UTC)), "team-c"))
    names = ("train", "team-a", "team-c")
    monitor = _start(running, _request(fleet, NamespaceSelection(SelectionMode.LIST, names)))
    wait_for("every namespace evaluated", monitor.monitor.complete)
    in_fleet = {name: _found(monitor, name) for name in names}
    assert any(
        code.startswith("capacity.") and status == "warn"
        for _, code, status, _ in in_fleet["team-c"]
    ), "precondition: team-c waits for its running job"
    running.pop().close()
    for name in names:
        alone = _start(running, _request(fleet, NamespaceSelection(names=(name,)), namespace=name))
        wait_for(f"{name} alone", alone.monitor.complete)
        assert _found(alone, name) == in_fleet[name], name
        running.pop().close()


def test_a_selector_is_read_again_and_follows_the_labels(
    fake_api: FakeApiServer, fleet: Path, running: list[RunningMonitor]
) -> None:
    monitor = _start(running, _request(fleet, SELECTOR, interval=1.0))
    wait_for("both team=ml namespaces", lambda: set(_verdicts(monitor)) == {"train", "team-a"})
    wait_for("both evaluated", monitor.monitor.complete)
    lists_before = len(_selections(fake_api))
    assert lists_before >= 1, "precondition: the selector was sent as a namespace list"
    # team-b is labelled in, team-a out
    fake_api.update_object(_namespace("team-b", team="ml"))
    fake_api.update_object(_namespace("team-a", team="web"))
    wait_for(
        "team-b watched, team-a no longer",
        lambda: _verdicts(monitor) == {"train": Verdict.READY, "team-b": Verdict.NOT_READY},
    )
    selections = _selections(fake_api)
    assert len(selections) > lists_before, "the selector is read again"
    assert {r.query["labelSelector"] for r in selections} == {"team=ml"}
    # the rest follow every Namespace, for the selected namespaces' own objects
    followed = [r for r in fake_api.requests("GET", r"^/api/v1/namespaces$") if r not in selections]
    assert followed, "precondition: the Namespaces are followed"
    assert all("watch" in r.query or "limit" in r.query for r in followed)


def test_a_namespace_whose_reads_are_refused_is_its_own_could_not_check(
    fake_api: FakeApiServer, fleet: Path, running: list[RunningMonitor]
) -> None:
    # as deployed without the optional logins role: no secret is watched cluster-wide, and
    # team-a's own logins are refused
    fake_api.inject(Fault.FORBIDDEN, r"^/api/v1/secrets$")
    fake_api.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces/team-a/secrets/")
    names = NamespaceSelection(SelectionMode.LIST, ("train", "team-a"))
    monitor = _start(running, _request(fleet, names))
    wait_for("both evaluated", monitor.monitor.complete)
    assert _verdicts(monitor) == {"train": Verdict.READY, "team-a": Verdict.UNKNOWN}
    team_a = monitor.monitor.current("team-a")
    assert team_a is not None
    assert check_codes(team_a.report)[CheckId.IMAGE_PULL] == 3


def test_a_listed_name_no_namespace_can_have_is_could_not_check_and_never_asked(
    fake_api: FakeApiServer, fleet: Path, running: list[RunningMonitor]
) -> None:
    """The API server admits a namespace only under a DNS-1123 label (pkg/apis/core/validation
    `ValidateNamespaceName`), and client-go sends no request naming another (rest/request.go
    `(*Request).Namespace`, `IsValidPathSegmentName`): `..` would name the collection above."""
    fake_api.add(_namespace("..", team="ml"))
    monitor = _start(running, _request(fleet, SELECTOR))
    wait_for("every namespace evaluated", monitor.monitor.complete)
    assert _verdicts(monitor) == {
        "..": Verdict.UNKNOWN,
        "team-a": Verdict.READY,
        "train": Verdict.READY,
    }
    impossible = monitor.monitor.current("..")
    assert impossible is not None
    assert impossible.report.headline.code == "namespace-name-impossible"
    assert not [r.path for r in fake_api.requests() if "/namespaces/../" in r.path]


def test_the_context_s_own_namespace_is_asked_about_whatever_its_name(
    fake_api: FakeApiServer, fleet: Path, tmp_path: Path, running: list[RunningMonitor]
) -> None:
    """No list named `Bad_NS`: the kubeconfig's context did, and client-go sends it (only `.`,
    `..` and names holding `/` or `%` are refused: rest/request.go `IsValidPathSegmentName`);
    the API server's NotFound is the measurement, as doctor --context measures it. The monitor
    said "the cluster listed it" and could not check."""
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "odd", namespace="Bad_NS")
    monitor = _start(running, _request(kubeconfig, NamespaceSelection()))
    wait_for("evaluated", monitor.monitor.complete)
    odd = monitor.monitor.current("Bad_NS")
    assert odd is not None
    assert (odd.report.verdict, odd.report.headline.code) == (
        Verdict.NOT_READY,
        "admission.namespace-missing",
    )


def test_namespaces_that_cannot_be_listed_stop_the_monitor_at_start(
    fake_api: FakeApiServer, fleet: Path
) -> None:
    fake_api.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces$")
    with pytest.raises(NamespacesNotListedError, match=r"^This login may not list namespaces"):
        RunningMonitor(
            _request(fleet, SELECTOR), on_evaluation=lambda n, o: None, on_event=lambda e: None
        )


def test_a_selector_matching_nothing_watches_nothing_and_says_so(
    fleet: Path, running: list[RunningMonitor]
) -> None:
    nothing = NamespaceSelection(SelectionMode.SELECTOR, selector=parse_selector("team=none"))
    monitor = _start(running, _request(fleet, nothing))
    wait_for("the first round", monitor.monitor.complete, BOUND)
    assert monitor.monitor.evaluations() == ()


def test_every_namespace_is_given_the_very_same_cluster_wide_answers_while_they_stand(
    fake_api: FakeApiServer, fleet: Path, running: list[RunningMonitor]
) -> None:
    """What doctor computes from the machines and the capacity sums it keeps for the very same
    answer (doctor/knowledge/last_answer.py): the cache hands each namespace, and each round, the
    same object until the objects under it change."""
    names = NamespaceSelection(SelectionMode.LIST, ("train", "team-a"))
    monitor = _start(running, _request(fleet, names))
    wait_for("both evaluated", monitor.monitor.complete)
    cache = monitor.monitor.cache
    machines = cache.list(Kind.NODE, namespace=None)
    sums = [
        cache.fold(
            Kind.POD, CapacityTally(ns, names.names), namespace=None, fields=HOLDING_CAPACITY
        )
        for ns in names.names
    ]
    assert isinstance(machines, Listed), machines
    assert cache.list(Kind.NODE, namespace=None) is machines
    assert sums[0] is sums[1]
    node = fake_api.get_object("Node", "cpu-1", "")
    assert node is not None
    node["metadata"]["labels"] = {"changed": "yes"}
    fake_api.update_object(node)
    wait_for("the changed machine", lambda: cache.list(Kind.NODE, namespace=None) is not machines)
    assert (
        cache.fold(
            Kind.POD, CapacityTally("train", names.names), namespace=None, fields=HOLDING_CAPACITY
        )
        is sums[0]
    ), "a machine's labels move no sum"


def _texts(value: object) -> Iterator[str]:
    """Every text in `value`, and every text base64 hides in it, however deep (a registry
    login's auth is base64 in JSON in base64)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, str):
        yield value
        try:
            decoded = base64.b64decode(value, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return
        yield decoded
        if decoded.startswith("{"):
            yield from _texts(json.loads(decoded))
        elif decoded != value:
            yield from _texts(decoded)


def test_a_login_watched_by_name_reaches_the_checks_redacted_as_a_read_login(
    fake_api: FakeApiServer, fleet: Path, running: list[RunningMonitor]
) -> None:
    names = NamespaceSelection(SelectionMode.LIST, ("train", "team-a"))
    monitor = _start(running, _request(fleet, names))
    wait_for("both evaluated", monitor.monitor.complete)
    watched = _watched(fake_api, {"/api/v1/secrets"})
    assert watched == {("/api/v1/secrets", "|metadata.name=regcred")}, (
        "precondition: the login is watched by name"
    )
    fake_api.log.clear()
    cache = monitor.monitor.cache
    held = cache.get(Kind.SECRET, "regcred", namespace="team-a")
    assert isinstance(held, Got)
    assert any(PULL_SECRET_VALUE in t for t in _texts(held.obj)), (
        "precondition: the watch holds the login's password, as a get answers it"
    )
    checked = RedactedOnce(cache).get(Kind.SECRET, "regcred", namespace="team-a")
    assert isinstance(checked, Got)
    assert not any(PULL_SECRET_VALUE in t for t in _texts(checked.obj)), (
        "the login's password reached the checks"
    )
    assert [r.path for r in fake_api.requests("GET")] == [], "answered by the watches"


def test_an_evaluation_reads_the_cache_in_its_own_thread(
    fake_api: FakeApiServer, fleet: Path, running: list[RunningMonitor]
) -> None:
    """The watch cache answers from memory: a thread per read would cost more than the read."""
    names = NamespaceSelection(SelectionMode.LIST, ("train", "team-a", "team-b"))
    monitor = _start(running, _request(fleet, names))
    wait_for("every namespace evaluated", monitor.monitor.complete)
    started: list[str] = []

    def note(*_: object) -> None:
        started.append(threading.current_thread().name)
        sys.settrace(None)  # noted once, as the thread starts

    threading.settrace(note)
    try:
        evaluations = monitor.monitor.evaluate_all()
    finally:
        threading.settrace(None)
    assert [e.namespace for e in evaluations] == ["train", "team-a", "team-b"]
    assert [e.report.verdict for e in evaluations][:2] == [Verdict.READY, Verdict.READY]
    assert [name for name in started if name == "read"] == []
