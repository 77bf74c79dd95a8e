"""A list's next page is asked for while the page before it is decoded and folded, as soon as
that page's head names the continue token; and everything a list promises still holds: the
right pages, in order, one request at a time, none outliving the read.

kube-apiserver writes a list's metadata before its items (cluster/live.py `_head_token` cites
the source); a page laid out otherwise, or whose head disagrees with the page decoded whole,
is followed one page after another.
"""

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.hostile import Answer, Received, ScriptedApi
from truegreen.cluster import CantRead, Kind, Listed, ReadFailure
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.reads import Folded
from truegreen.cluster.schedule import IN_FLIGHT, ReadSchedule
from truegreen.cluster.settings import ConnectionSettings
from truegreen.http.transport import Transport

PODS_PATH = "/api/v1/pods"
WAIT = 5.0
"""How long a fold waits to see the next page asked for before it calls the wait failed."""


class _Name(msgspec.Struct):
    name: str


class _PodName(msgspec.Struct):
    metadata: _Name


class _Names:
    """Folds pod names; `on_add(name)` runs before each is kept."""

    name = "names"
    view = _PodName

    def __init__(self, on_add: Callable[[str], None] = lambda _: None) -> None:
        self.names: list[str] = []
        self._on_add = on_add

    def add(self, item: _PodName) -> None:
        self._on_add(item.metadata.name)
        self.names.append(item.metadata.name)

    def summary(self) -> dict[str, Any]:
        return {"names": self.names}


def _pods(server: FakeApiServer, namespace: str, count: int) -> list[str]:
    names = [f"p{i}" for i in range(count)]
    server.add(
        *(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"nodeName": "n1"},
            }
            for name in names
        )
    )
    return names


def _connect(
    kubeconfig: Path, timeout: float = 10.0, per_host: int = 6, transport: Transport | None = None
) -> LiveCluster:
    """A client whose pool keeps `per_host` connections, or that uses `transport`'s."""
    return LiveCluster.connect(
        ConnectionSettings(kubeconfig=kubeconfig, request_timeout=timeout),
        make_transport=lambda tls, dialer: transport or Transport(tls, dialer, per_host=per_host),
    )


def _wait_for(seen: Callable[[], bool]) -> bool:
    until = time.monotonic() + WAIT
    while not seen():
        if time.monotonic() > until:
            return False
        time.sleep(0.005)
    return True


def _next_page_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "next-page"]


@pytest.fixture(autouse=True)
def ask_ahead_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page is asked ahead however fast the fake answers (the threshold has its own
    tests in test_pages_ahead_threshold.py, over a server that takes its time)."""
    from truegreen.cluster import live

    monkeypatch.setattr(live, "ASK_AHEAD_AFTER", 0.0)


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages of two pods, so a handful of pods make a list of several pages."""
    from truegreen.cluster import live

    monkeypatch.setattr(live, "PAGE_SIZE", 2)


# -- the overlap -----------------------------------------------------------------------------


@pytest.mark.usefixtures("small_pages")
def test_the_next_page_is_asked_for_before_this_one_is_folded(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    names = _pods(fake_api, "train", 5)  # pages p0 p1 | p2 p3 | p4
    asked_when_folded: dict[str, int] = {}

    def on_add(name: str) -> None:
        if name in ("p0", "p2"):  # the first pod of a page that has a page after it
            pages_before = {"p0": 1, "p2": 2}[name]
            _wait_for(lambda: len(fake_api.requests("GET", PODS_PATH)) > pages_before)
        asked_when_folded[name] = len(fake_api.requests("GET", PODS_PATH))

    with _connect(kubeconfig) as cluster:
        read = cluster.fold(Kind.POD, _Names(on_add), namespace=None)
    assert read == Folded({"names": names})
    assert asked_when_folded == {"p0": 2, "p1": 2, "p2": 3, "p3": 3, "p4": 3}, (
        "page N+1 was not asked for while page N was folded (requests the server had seen "
        f"when each pod was folded: {asked_when_folded})"
    )
    # The same requests, in the same order, as one page after another sends.
    log = fake_api.requests("GET", PODS_PATH)
    assert [r.query.get("continue") is None for r in log] == [True, False, False]
    assert [r.status for r in log] == [200, 200, 200]
    assert len({r.query["continue"] for r in log[1:]}) == 2


@pytest.mark.usefixtures("small_pages")
def test_six_reads_folding_with_their_next_pages_asked_share_six_connections(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """Each of IN_FLIGHT reads holds a page and waits until its next page is asked for: every
    request of a list goes out only after the answer before it is in, so no read waits on a
    connection that a read waiting on it holds."""
    namespaces = [f"team-{i}" for i in range(IN_FLIGHT)]
    expected = {ns: _pods(fake_api, ns, 5) for ns in namespaces}
    missed: list[str] = []

    def fold_of(namespace: str) -> _Names:
        path = f"/api/v1/namespaces/{namespace}/pods"

        def on_add(name: str) -> None:
            if name == "p0" and not _wait_for(lambda: len(fake_api.requests("GET", path)) > 1):
                missed.append(namespace)

        return _Names(on_add)

    with _connect(kubeconfig, per_host=IN_FLIGHT) as cluster, ReadSchedule() as schedule:
        pending = {
            ns: schedule.submit(lambda ns=ns: cluster.fold(Kind.POD, fold_of(ns), namespace=ns))  # type: ignore[misc]
            for ns in namespaces
        }
    reads = {ns: p.result() for ns, p in pending.items()}
    assert missed == [], f"the next page was not asked for while these folded: {missed}"
    # A read stuck on the pool would end at its deadline as a CantRead, not a fold.
    assert reads == {ns: Folded({"names": expected[ns]}) for ns in namespaces}


# -- when the head does not name the token, or names another --------------------------------


def _page(names: list[str], token: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"resourceVersion": "7"}
    if token:
        metadata["continue"] = token
    items = [{"metadata": {"name": n, "namespace": "train"}} for n in names]
    return {"kind": "PodList", "apiVersion": "v1", "metadata": metadata, "items": items}


@pytest.fixture
def paged(tmp_path: Path) -> Iterator[tuple[dict[str, bytes], ScriptedApi, Path]]:
    """A server answering each list request with the body kept under its continue token
    ("" for the first page); its kubeconfig."""
    bodies: dict[str, bytes] = {}

    def answer(request: Received, _: int) -> Answer:
        token = request.target.partition("&continue=")[2]
        return 200, {"Content-Type": "application/json"}, bodies[token]

    with ScriptedApi(answer) as server:
        kubeconfig = tmp_path / "kc"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": server.url}}],
            "users": [{"name": "u", "user": {"token": "t0ken"}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
        kubeconfig.write_text(json.dumps(config))
        yield bodies, server, kubeconfig


def _asked_while_first_page_folded(server: ScriptedApi, kubeconfig: Path, ahead: bool) -> int:
    """Requests the server had when the first pod was folded: it waits to see a second one
    if `ahead`, else a moment, in which a request sent ahead would have arrived."""

    def on_add(name: str) -> None:
        if name == "a":
            if ahead:
                _wait_for(lambda: len(server.received) > 1)
            else:
                time.sleep(0.3)
            seen.append(len(server.received))

    seen: list[int] = []
    with _connect(kubeconfig) as cluster:
        read = cluster.fold(Kind.POD, _Names(on_add), namespace=None)
    assert read == Folded({"names": ["a", "b"]})
    return seen[0]


LAST = json.dumps(_page(["b"], None)).encode()


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(json.dumps(_page(["a"], "t2"), separators=(",", ":")), id="compact"),
        pytest.param(json.dumps(_page(["a"], "t2"), indent=2), id="indented"),
        pytest.param(
            '{"metadata":{"continue":"t2","resourceVersion":"7"},"kind":"PodList",'
            '"items":[{"metadata":{"name":"a"}}]}',
            id="metadata-first-then-kind",
        ),
    ],
)
def test_a_head_that_names_the_token_has_the_next_page_asked_ahead(
    paged: tuple[dict[str, bytes], ScriptedApi, Path], first: str
) -> None:
    bodies, server, kubeconfig = paged
    bodies.update({"": first.encode(), "t2": LAST})
    assert _asked_while_first_page_folded(server, kubeconfig, ahead=True) == 2
    assert [r.target for r in server.received] == [
        "/api/v1/pods?limit=500",
        "/api/v1/pods?limit=500&continue=t2",
    ]


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(
            '{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}],'
            '"metadata":{"continue":"t2"}}',
            id="metadata-after-items",
        ),
        pytest.param(
            '{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":'
            '[{"metadata":{"name":"a"}}],"metadata":{"continue":"t2"}}',
            id="the-token-only-after-items",
        ),
        pytest.param(
            '{"kind":"PodList","metadata":{"continue":"t2","x":{"y":1,"items":[]}},'
            '"items":[{"metadata":{"name":"a"}}]}',
            id="items-key-nested-in-the-head",
        ),
        pytest.param(
            '{"kind":"PodList","metadata":{"continue":"t2"},"extra":"' + "x" * (64 << 10) + '",'
            '"items":[{"metadata":{"name":"a"}}]}',
            id="items-start-past-the-head",
        ),
    ],
)
def test_a_head_that_does_not_name_the_token_is_followed_after_it_is_folded(
    paged: tuple[dict[str, bytes], ScriptedApi, Path], first: str
) -> None:
    bodies, server, kubeconfig = paged
    bodies.update({"": first.encode(), "t2": LAST})
    assert _asked_while_first_page_folded(server, kubeconfig, ahead=False) == 1
    assert [r.target for r in server.received] == [
        "/api/v1/pods?limit=500",
        "/api/v1/pods?limit=500&continue=t2",
    ]


def test_a_page_asked_with_a_token_the_page_does_not_name_is_dropped(
    paged: tuple[dict[str, bytes], ScriptedApi, Path],
) -> None:
    """The head names one token, a second metadata after the items another: the page decoded
    whole (msgspec keeps the last) decides, and the page asked ahead is never folded."""
    bodies, server, kubeconfig = paged
    bodies[""] = (
        b'{"kind":"PodList","metadata":{"continue":"wrong"},'
        b'"items":[{"metadata":{"name":"a"}}],"metadata":{"continue":"right"}}'
    )
    bodies["wrong"] = json.dumps(_page(["stray"], None)).encode()
    bodies["right"] = LAST
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace=None)
        assert _next_page_threads() == []
    assert isinstance(read, Listed)
    assert [i["metadata"]["name"] for i in read.items] == ["a", "b"]
    assert [r.target for r in server.received] == [
        "/api/v1/pods?limit=500",
        "/api/v1/pods?limit=500&continue=wrong",
        "/api/v1/pods?limit=500&continue=right",
    ]


# -- a read that stops early -----------------------------------------------------------------


@pytest.mark.usefixtures("small_pages")
def test_a_failed_next_page_is_the_read_s_failure(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    _pods(fake_api, "train", 5)
    fake_api.inject(Fault.SERVER_ERROR, PODS_PATH, after=1, count=1)
    with _connect(kubeconfig, per_host=1) as cluster:
        read = cluster.fold(Kind.POD, _Names(), namespace=None)
        assert _next_page_threads() == []
        again = cluster.fold(Kind.POD, _Names(), namespace=None)
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.SERVER_ERROR
    assert read.reason.startswith("list pods: ")
    assert again == Folded({"names": ["p0", "p1", "p2", "p3", "p4"]})
    assert [r.status for r in fake_api.requests("GET", PODS_PATH)] == [200, 500, 200, 200, 200]


@pytest.mark.usefixtures("small_pages")
@pytest.mark.parametrize("stop", ["page-does-not-decode", "fold-raises"])
def test_a_read_that_stops_early_leaves_no_request_behind(
    fake_api: FakeApiServer, kubeconfig: Path, stop: str
) -> None:
    """Page 2 is slow; page 1 fails to decode, or the fold raises on it. The read ends as it
    did before pages were asked ahead, and the one connection it may use is free again: a
    read after it, allowed less time than page 2 takes, is answered."""
    _pods(fake_api, "train", 5)
    fake_api.inject(Fault.DELAY, PODS_PATH, after=1, count=1, delay=1.0)

    def on_add(name: str) -> None:
        if stop == "fold-raises" and name == "p0":
            raise RuntimeError("a fold that breaks")

    class _BadView(msgspec.Struct):
        metadata: int  # a pod's metadata is an object: the page does not decode as this

    fold = _Names(on_add)
    if stop == "page-does-not-decode":
        fold.view = _BadView  # type: ignore[assignment]
    with Transport(per_host=1) as transport:
        cluster = _connect(kubeconfig, transport=transport)
        if stop == "fold-raises":
            with pytest.raises(RuntimeError, match="a fold that breaks"):
                cluster.fold(Kind.POD, fold, namespace=None)
        else:
            read = cluster.fold(Kind.POD, fold, namespace=None)
            assert isinstance(read, CantRead)
            assert read.failure is ReadFailure.MALFORMED
        assert _next_page_threads() == []
        # Page 2 was asked for ahead (so its request, were it still out, would hold the one
        # connection now): the one request that goes out where one page after another stops.
        assert _wait_for(lambda: len(fake_api.requests("GET", PODS_PATH)) == 2)
        fake_api.clear_faults()
        quick = _connect(kubeconfig, timeout=0.5, transport=transport)
        assert quick.fold(Kind.POD, _Names(), namespace="train") == Folded(
            {"names": ["p0", "p1", "p2", "p3", "p4"]}
        ), "the connection was still held by the page asked ahead"
    assert [r.query.get("continue") is None for r in fake_api.requests("GET", PODS_PATH)] == [
        True,
        False,
    ]


def test_no_page_is_asked_ahead_past_the_page_cap(
    paged: tuple[dict[str, bytes], ScriptedApi, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from truegreen.cluster import live

    bodies, server, kubeconfig = paged
    endless = json.dumps(_page(["a"], "again")).encode()
    bodies.update({"": endless, "again": endless})
    monkeypatch.setattr(live, "MAX_PAGES", 3)
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace=None)
        time.sleep(0.3)  # a request sent ahead of the last page would have arrived by now
    assert read == CantRead(ReadFailure.TOO_LARGE, "list pods: the list had more than 3 pages")
    assert [r.target for r in server.received] == [
        "/api/v1/pods?limit=500",
        "/api/v1/pods?limit=500&continue=again",
        "/api/v1/pods?limit=500&continue=again",
    ]
