"""Compressed lists over loopback: a list's pages are asked for gzip-encoded where the
connection says it pays, decoded exact (asked ahead or not), and a hostile encoding is refused
within its bounds; nothing else is asked for compressed."""

import gzip
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.fake_apiserver import FakeApiServer
from tests.support.hostile import HostileServer, answering
from truegreen.cluster import Got, Kind, Listed
from truegreen.cluster.credentials import Credential, StaticCredentials
from truegreen.cluster.kubeconfig import ResolvedConnection, resolve
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings
from truegreen.http.deadline import Deadline
from truegreen.http.errors import AnswerTooLargeError, ProtocolViolationError
from truegreen.http.gzipped import MAX_RATIO
from truegreen.http.tls import TlsSettings
from truegreen.http.transport import Transport


def _gzipped_answer(body: bytes, encoding: str = "gzip") -> bytes:
    compressed = gzip.compress(body, compresslevel=1)
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\n"
        f"Content-Length: {len(compressed)}\r\n\r\n"
    ).encode()
    return head + compressed


def test_a_gzip_bomb_is_refused_at_its_ratio_not_at_the_answer_s_cap() -> None:
    """64 MiB of zeros, about 64 KiB compressed: refused once it passes 200 times that, with
    the memory of the ratio's bound, not of the whole cap."""
    answer = _gzipped_answer(b"\0" * (64 << 20))
    compressed = len(answer) - answer.index(b"\r\n\r\n") - 4
    with HostileServer(answering(answer)) as server, Transport() as transport:
        tracemalloc.start()
        try:
            with pytest.raises(AnswerTooLargeError) as caught:
                transport.request(
                    "GET", server.url, deadline=Deadline.after(30), max_bytes=64 << 20, gzip=True
                )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert caught.value.limit == MAX_RATIO * compressed
    assert peak < MAX_RATIO * compressed + (4 << 20)


def test_an_encoding_not_asked_for_is_refused() -> None:
    with (
        HostileServer(answering(_gzipped_answer(b"{}", encoding="br"))) as server,
        Transport() as transport,
        pytest.raises(ProtocolViolationError, match="encoded as 'br', unasked"),
    ):
        transport.request(
            "GET", server.url, deadline=Deadline.after(10), max_bytes=1 << 20, gzip=True
        )


def _pods(count: int) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"p{n:04}",
                "namespace": "train",
                "labels": {"n": str(n)},
                "annotations": {"note": "as large as a small pod " * 10},
            },
            "spec": {"nodeName": f"node-{n % 7}", "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Running"},
        }
        for n in range(count)
    ]


def _connection(api: FakeApiServer, compressed: bool) -> ResolvedConnection:
    anonymous = StaticCredentials(Credential(), "no login")
    return ResolvedConnection(
        api.url, "train", "test", TlsSettings(), anonymous, compressed_lists=compressed
    )


@pytest.mark.parametrize("compressed", [True, False], ids=["compressed", "plain"])
def test_list_pages_are_asked_for_compressed_where_the_connection_says_and_come_out_exact(
    fake_api: FakeApiServer, compressed: bool
) -> None:
    fake_api.add(*_pods(1500))  # three pages of 500, each past the server's 128 KiB threshold
    with LiveCluster(_connection(fake_api, compressed), 10.0) as cluster:
        pods = cluster.list(Kind.POD, namespace="train")
        one = cluster.get(Kind.POD, "p0001", namespace="train")
    assert isinstance(pods, Listed)
    assert [p["metadata"]["name"] for p in pods.items] == [f"p{n:04}" for n in range(1500)]
    assert isinstance(one, Got)
    assert one.obj["metadata"]["name"] == "p0001"
    asked = {(r.path.rsplit("/", 1)[-1], tuple(r.all("accept-encoding"))) for r in fake_api.heard}
    gzip_asked = ("gzip",) if compressed else ()
    assert asked == {("pods", gzip_asked), ("p0001", ())}


def _kubeconfig(tmp_path: Path, server: str, **cluster: Any) -> Path:
    config = {
        "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    (tmp_path / "kc").write_text(yaml.safe_dump(config))
    return tmp_path / "kc"


@pytest.mark.parametrize(
    ("server", "cluster", "compressed"),
    [
        ("https://api.example:6443", {}, True),
        ("https://10.0.0.1:6443", {}, True),
        ("https://127.0.0.1:6443", {}, False),  # on this machine: moving bytes is free
        ("https://[::1]:6443", {}, False),
        ("https://localhost:6443", {}, False),
        ("https://api.example:6443", {"disable-compression": True}, False),
    ],
)
def test_compressing_is_asked_for_only_where_it_pays(
    tmp_path: Path, server: str, cluster: dict[str, Any], compressed: bool
) -> None:
    resolved = resolve(ConnectionSettings(kubeconfig=_kubeconfig(tmp_path, server, **cluster)))
    assert resolved.compressed_lists is compressed


def test_the_fake_compresses_as_the_api_server_does(fake_api: FakeApiServer) -> None:
    """writers.go: gzip above 128 KiB to a client that asks, at level 1."""
    fake_api.add(*_pods(1500))
    with Transport() as transport:
        url = fake_api.url + "/api/v1/namespaces/train/pods?limit=500"
        small = fake_api.url + "/api/v1/namespaces/train/pods/p0001"
        big = transport.request(
            "GET", url, deadline=Deadline.after(10), max_bytes=1 << 24, gzip=True
        )
        whole = transport.request("GET", url, deadline=Deadline.after(10), max_bytes=1 << 24)
        one = transport.request(
            "GET", small, deadline=Deadline.after(10), max_bytes=1 << 24, gzip=True
        )
    assert bytes(big.body) == bytes(whole.body)
    assert len(whole.body) > 128 * 1024, "precondition: past the threshold"
    assert big.header("vary") == "Accept-Encoding"
    assert (big.header("content-encoding"), whole.header("content-encoding")) == (None, None)
    assert one.header("vary") is None  # too small to compress
