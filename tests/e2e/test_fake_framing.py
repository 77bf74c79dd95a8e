"""The fake frames its answers as kube-apiserver 1.36 over Go's net/http does (the table atop
fake_apiserver.py): read off the socket, with no client in between to smooth it over."""

import json
from typing import Any

from tests.support.fake_apiserver import GO_WRITE_BUFFER, FakeApiServer
from tests.support.raw_http import raw_get


def _pod(name: str, note: str = "") -> dict[str, Any]:
    annotations = {"note": note} if note else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "train", "annotations": annotations},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        "status": {"phase": "Running"},
    }


def test_a_big_list_is_chunked_as_its_items_are_written(fake_api: FakeApiServer) -> None:
    # Every item longer than Go's buffer: each fills the buffer (one 2048-byte chunk, the `,`
    # before it included) and its rest, still longer than the buffer, goes out on its own.
    fake_api.add(*(_pod(f"p{i}", note="x" * 5000) for i in range(5)))
    answer = raw_get(fake_api, "/api/v1/namespaces/train/pods?limit=4")
    assert answer.status == 200
    assert answer.chunks is not None, (
        f"a {len(answer.body)}-byte list must go out chunked, not with a Content-Length: "
        f"{answer.headers}"
    )
    assert answer.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in answer.headers
    items = [
        json.dumps(i, separators=(",", ":")).encode() for i in json.loads(answer.body)["items"]
    ]
    assert len(items) == 4
    sizes = [len(chunk) for chunk in answer.chunks]
    assert sizes[0::2] == [GO_WRITE_BUFFER] * 4 + [3], f"one full buffer per item: {sizes}"
    assert all(size > GO_WRITE_BUFFER for size in sizes[1::2]), f"item tails: {sizes}"
    assert answer.chunks[-1] == b"]}\n", "the list's end, flushed when the handler returns"
    for index, item in enumerate(items):
        head, tail = answer.chunks[2 * index], answer.chunks[2 * index + 1]
        assert item.endswith(tail), f"item {index}: its tail is not a chunk of its own"
        assert (head + tail).endswith(item), f"item {index}: its head is not in the chunk before"
        if index:
            assert head.startswith(b","), "the separator is written before the next item"


def test_a_list_that_fits_the_buffer_has_a_content_length(fake_api: FakeApiServer) -> None:
    fake_api.add(_pod("small"))
    answer = raw_get(fake_api, "/api/v1/namespaces/train/pods")
    assert answer.chunks is None, f"a small list was chunked: {answer.headers}"
    assert int(answer.headers["content-length"]) == len(answer.body) <= GO_WRITE_BUFFER
    assert answer.body.endswith(b"]}\n")
    assert json.loads(answer.body)["items"][0]["metadata"]["name"] == "small"


def test_a_big_object_is_one_chunk_and_a_small_one_has_a_content_length(
    fake_api: FakeApiServer,
) -> None:
    fake_api.add(_pod("big", note="y" * 3000), _pod("small"))
    big = raw_get(fake_api, "/api/v1/namespaces/train/pods/big")
    assert big.chunks is not None, f"a {len(big.body)}-byte get went out with {big.headers}"
    assert len(big.chunks) == 1, "an object is encoded whole, in one write: one chunk"
    assert big.body.endswith(b"}\n"), "encoding/json's Encoder ends it with a newline"
    small = raw_get(fake_api, "/api/v1/namespaces/train/pods/small")
    assert small.chunks is None, f"a {len(small.body)}-byte get was chunked"
    assert int(small.headers["content-length"]) == len(small.body)


def test_an_error_status_has_a_content_length(fake_api: FakeApiServer) -> None:
    answer = raw_get(fake_api, "/api/v1/namespaces/train/pods/missing")
    assert answer.status == 404
    assert answer.chunks is None
    assert json.loads(answer.body)["reason"] == "NotFound"


def test_a_pod_log_is_chunked_even_when_small(fake_api: FakeApiServer) -> None:
    pod = _pod("logged")
    running = {"name": "main", "containerID": "containerd://1", "state": {"running": {}}}
    pod["status"]["containerStatuses"] = [running]
    fake_api.add(pod)
    fake_api.container_logs["containerd://1"] = "hello\n"
    answer = raw_get(fake_api, "/api/v1/namespaces/train/pods/logged/log")
    assert answer.status == 200, answer.body
    assert answer.chunks == [b"hello\n"], (
        f"StreamObject flushes the headers before the body: chunked however small, not "
        f"{answer.headers}"
    )
