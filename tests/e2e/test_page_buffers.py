"""A list's pages are read into buffers of the list's own, over real loopback connections: a
buffer is taken again once the page before is done with, never while anything still points
into it (a decoded page's msgspec.Raw fields do)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.support import hostile
from tests.support.fake_apiserver import FakeApiServer
from tests.support.hostile import HostileServer
from truegreen.cluster import Kind
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.reads import Folded
from truegreen.cluster.settings import ConnectionSettings
from truegreen.http import framing
from truegreen.http.deadline import Deadline
from truegreen.http.framing import BodyBuffers
from truegreen.http.transport import Transport
from truegreen.monitor.requests import CountingTransport

BODY = bytes(range(256)) * 400


@pytest.mark.parametrize(
    "transport_of",
    [Transport, lambda: CountingTransport(None, None, lambda *_: None)],
    ids=["transport", "monitor-transport"],
)
def test_an_answer_read_into_buffers_takes_one_nothing_views_any_more(
    transport_of: Callable[[], Transport],
) -> None:
    buffers = BodyBuffers()
    with (
        HostileServer(hostile.answering(hostile.chunked_answer(BODY, 4096))) as server,
        transport_of() as transport,
    ):

        def get() -> memoryview:
            answer = transport.request(
                "GET",
                server.url + "/",
                deadline=Deadline.after(10),
                max_bytes=1 << 20,
                into=buffers,
            )
            assert isinstance(answer.body, memoryview)
            return answer.body

        first, second = get(), get()
        assert second.obj is not first.obj  # the first is still held
        taken = first.obj
        del first
        third = get()
    assert third.obj is taken
    assert bytes(second) == bytes(third) == BODY


class _Metadata(msgspec.Struct):
    name: str


class _Pod(msgspec.Struct):
    metadata: _Metadata


class _RawPod(msgspec.Struct):
    metadata: msgspec.Raw


class _Keep:
    """Keeps every pod as decoded (views into its page's body when they hold msgspec.Raw)."""

    name = "keep"

    def __init__(self, view: type[Any]) -> None:
        self.view = view
        self.kept: list[Any] = []

    def add(self, item: Any) -> None:
        self.kept.append(item)

    def summary(self) -> dict[str, Any]:
        return {}


@pytest.fixture
def pages_of_two(monkeypatch: pytest.MonkeyPatch, fake_api: FakeApiServer) -> list[str]:
    """Five pods listed two a page (three pages), one page after another; their names."""
    from truegreen.cluster import live

    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    monkeypatch.setattr(live, "ASK_AHEAD_AFTER", float("inf"))
    names = [f"p{i}" for i in range(5)]
    fake_api.add(
        *(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n, "namespace": "train"}}
            for n in names
        )
    )
    return names


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every buffer a list's page was read into, in order."""
    buffers: list[object] = []
    take = framing.BodyBuffers.take

    def recording(self: BodyBuffers) -> object:
        buffers.append(take(self))
        return buffers[-1]

    monkeypatch.setattr(framing.BodyBuffers, "take", recording)
    return buffers


def _fold(kubeconfig: Path, fold: _Keep) -> None:
    with LiveCluster.connect(ConnectionSettings(kubeconfig=kubeconfig)) as cluster:
        assert isinstance(cluster.fold(Kind.POD, fold, namespace=None), Folded)


@pytest.mark.usefixtures("pages_of_two")
def test_the_pages_of_a_list_take_turns_in_two_buffers(
    kubeconfig: Path, taken: list[object]
) -> None:
    fold = _Keep(_Pod)
    _fold(kubeconfig, fold)
    assert [pod.metadata.name for pod in fold.kept] == ["p0", "p1", "p2", "p3", "p4"]
    # The third page goes where the first was: that page is gone once the second is decoded.
    assert [id(buffer) for buffer in taken] == [id(taken[0]), id(taken[1]), id(taken[0])]
    assert taken[0] is not taken[1]


@pytest.mark.usefixtures("pages_of_two")
def test_pods_that_point_into_their_pages_keep_those_pages_from_the_pages_after(
    kubeconfig: Path, taken: list[object]
) -> None:
    fold = _Keep(_RawPod)
    _fold(kubeconfig, fold)
    names = [msgspec.json.decode(pod.metadata, type=_Metadata).name for pod in fold.kept]
    assert names == ["p0", "p1", "p2", "p3", "p4"]
    assert len({id(buffer) for buffer in taken}) == 3
