"""A realistic cluster on loopback: the fake API server for the training namespace, and the
cluster-wide pod and machine lists served from pages encoded once, before any tool runs.

Every tool in a run reads the same bytes; the server's own cost per page is a lookup and a
write (measured as the server floor). Pages are compact JSON with the list's metadata first,
framed as kube-apiserver writes them (chunked, the chunks its item-by-item writes make through
Go's buffer: `framed` in tests/support/fake_apiserver.py); the continue token has the real token's shape (base64 of
`{"v":"meta.k8s.io/v1","rv":...,"start":...}`, staging/src/k8s.io/apiserver/pkg/storage/
continue.go) and the last page has none. Only running pods outside the training namespace,
so `status.phase!=Failed,status.phase!=Succeeded` changes nothing past the first page.
"""

import base64
import json
import threading
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec
from tests.support.fake_apiserver import (
    FakeApiServer,
    Listener,
    RequestRecord,
    Wire,
    _make_handler,
    accepts_gzip,
    answer_wire,
    framed,
    list_writes,
)
from tests.support.scenarios import NAMESPACE

from bench import realistic

Obj = dict[str, Any]
PAGE = 500
HOLDING = "status.phase!=Failed,status.phase!=Succeeded"
_RV = 987654321


def _token(start: Obj) -> str:
    key = f"{start['metadata'].get('namespace', '')}/{start['metadata']['name']}\x00"
    text = json.dumps({"v": "meta.k8s.io/v1", "rv": _RV, "start": key}, separators=(",", ":"))
    return base64.b64encode(text.encode()).decode()


def _chunks(items: Iterable[Obj]) -> Iterator[list[Obj]]:
    chunk: list[Obj] = []
    for item in items:
        if len(chunk) == PAGE:
            yield chunk
            chunk = []
        chunk.append(item)
    yield chunk


class _Page:
    """One page as served: its JSON, and its framing on the wire, both made once; gzip-encoded
    as kube-apiserver encodes it for a client that asks (made on first ask)."""

    def __init__(self, kind: str, items: list[bytes], metadata: Obj) -> None:
        self._writes = list(list_writes(kind, "v1", msgspec.json.encode(metadata), items))
        self.body = b"".join(self._writes)
        self.wire: Wire = framed(self._writes)
        self._gzipped: tuple[Wire, dict[str, str]] | None = None

    def gzipped(self) -> tuple[Wire, dict[str, str]]:
        """The page's wire and headers for a client that accepts gzip."""
        if self._gzipped is None:
            self._gzipped = answer_wire(self._writes, gzipped=True)
        return self._gzipped


class _Pages:
    """One list, encoded page by page: the first page, and each token's page."""

    def __init__(self, kind: str, items: Iterable[Obj], total: int) -> None:
        self.first: _Page | None = None
        self.by_token: dict[str, _Page] = {}
        self.count = 0
        pending: list[Obj] | None = None
        token = ""
        for chunk in _chunks(items):
            if pending is not None:
                self._encode(kind, pending, token, _token(chunk[0]) if chunk else "", total)
                token = _token(chunk[0]) if chunk else ""
            pending = chunk
        if pending is not None:
            self._encode(kind, pending, token, "", total)

    def _encode(self, kind: str, page: list[Obj], token: str, following: str, total: int) -> None:
        self.count += len(page)
        metadata: Obj = {"resourceVersion": str(_RV)}
        if following:
            metadata["continue"] = following
            metadata["remainingItemCount"] = total - self.count
        served = _Page(kind, [msgspec.json.encode(item) for item in page], metadata)
        if token:
            self.by_token[token] = served
        else:
            self.first = served

    def page(self, token: str) -> _Page | None:
        return self.by_token.get(token) if token else self.first


def _as_item(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def training_namespace_names(count: int) -> list[str]:
    """`train`, then `train-01`, `train-02`, ...: the training namespaces of a fleet."""
    return [NAMESPACE, *(f"{NAMESPACE}-{i:02d}" for i in range(1, count))]


def _moved(objects: list[Obj], namespace: str) -> list[Obj]:
    """The training namespace's objects in `namespace` (cluster-scoped ones left out)."""
    moved = []
    for obj in objects:
        if obj["metadata"].get("namespace") == NAMESPACE:
            moved.append({**obj, "metadata": {**obj["metadata"], "namespace": namespace}})
    return moved


class RealisticServer(FakeApiServer):
    """The fake API server holding the training namespace (or `training_namespaces` of them,
    each its own copy); pods and nodes cluster-wide from pre-encoded pages of `pods` realistic
    pods in all."""

    def __init__(
        self,
        pods: int,
        seed: int = 7,
        training_namespaces: int = 1,
        *,
        training_kinds: bool = False,
    ) -> None:
        """`training_kinds`: the namespace also holds a job of every training kind and a job
        handed to a Kueue queue, each group served, so that doctor makes every read they cause
        (the training kinds' lists, runtimes, Kueue's kinds)."""
        super().__init__()
        machines = realistic.nodes(pods, seed)
        namespace: list[Obj] = []
        for index, name in enumerate(training_namespace_names(training_namespaces)):
            made = realistic.training_namespace(min(pods, 10), machines, seed + index)
            namespace += made if index == 0 else _moved(made, name)
        self.add(*namespace)
        if training_kinds:
            from datetime import UTC, datetime

            from tests.support.kueue_objects import every_queue_read
            from tests.support.training_kinds import ALL_GROUPS, every_training_read

            self.install(*ALL_GROUPS, "kueue.x-k8s.io")
            now = datetime.now(UTC)
            self.add(*every_training_read(now), *every_queue_read(now))
        here = [_as_item(o) for o in namespace if o["kind"] == "Pod"]
        others = realistic.other_pods(pods - len(here), machines, seed)
        self._pods = _Pages("PodList", _chained(here, others), pods)
        # Past the first page the two lists are the same bytes: only the training namespaces'
        # own pods (all on the first page) include finished ones.
        assert len(here) <= PAGE, "the training namespaces' pods fit on the first page"
        self._holding = _Pages("PodList", [], 0)
        self._holding.by_token = self._pods.by_token
        first_page = self._pods.first
        assert first_page is not None, "a list has a first page, if empty"
        self._holding.first = _only_holding(first_page)
        self._nodes = _Pages("NodeList", machines, len(machines))
        all_nodes = _Page(
            "NodeList",
            [msgspec.json.encode(machine) for machine in machines],
            {"resourceVersion": str(_RV)},
        )
        self._all_nodes = _Pages("NodeList", [], 0)
        self._all_nodes.first = all_nodes
        pod_bytes = len(first_page.body) + sum(len(p.body) for p in self._pods.by_token.values())
        first = msgspec.json.decode(first_page.body)["items"]
        managed = sum(len(msgspec.json.encode(p["metadata"]["managedFields"])) for p in first)
        self.sizes = {
            "pods": pods,
            "machines": len(machines),
            "pod_bytes": round(pod_bytes / pods),
            "machine_bytes": round(len(all_nodes.body) / len(machines)),
            "pod_managed_fields_share": round(
                managed / sum(len(msgspec.json.encode(p)) for p in first), 2
            ),
        }
        """Average sizes as served (compact JSON), and managedFields' share of a pod."""

    def __enter__(self) -> "RealisticServer":
        return self.start()

    def start(
        self, tls: tuple[Any, Any] | None = None, host: str = "127.0.0.1"
    ) -> "RealisticServer":
        """Serve on 127.0.0.1 (plain HTTP): cluster-wide pods and nodes from the pages."""
        assert tls is None, "the benchmark serves plain HTTP"
        assert host == "127.0.0.1", "the benchmark serves on 127.0.0.1"
        base = _make_handler(self)
        server = self

        class Handler(base):  # type: ignore[misc,valid-type]
            def _serve(self, method: str) -> None:
                split = urlsplit(self.path)
                pages = {"/api/v1/pods": server._pods, "/api/v1/nodes": server._nodes}.get(
                    split.path
                )
                if method != "GET" or pages is None:
                    super()._serve(method)
                    return
                query = {k: v[-1] for k, v in parse_qs(split.query).items()}
                if query.get("fieldSelector") == HOLDING and pages is server._pods:
                    pages = server._holding
                elif query.get("fieldSelector") or query.get("labelSelector"):
                    raise SystemExit(f"bench server: no pages for {self.path}")
                if pages is server._nodes and "limit" not in query:
                    pages = server._all_nodes
                elif query.get("limit") != str(PAGE):
                    raise SystemExit(f"bench server: pages are {PAGE} long, not {self.path}")
                page = pages.page(query.get("continue", ""))
                status = 200 if page is not None else 410
                server._record(RequestRecord(method, split.path, query, status))
                if page is None:
                    self._send(status, b'{"kind":"Status","code":410}\n', {})
                elif accepts_gzip(self.headers.get("Accept-Encoding", "")):
                    self._send_wire(status, *page.gzipped())
                else:
                    self._send_wire(status, page.wire, {})

        self._server = Listener(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self


def _chained(first: list[Obj], rest: Iterator[Obj]) -> Iterator[Obj]:
    yield from first
    yield from rest


def _only_holding(page: _Page) -> _Page:
    """The first page without the pods that hold nothing, its metadata kept."""
    document = msgspec.json.decode(page.body)
    kept = [p for p in document["items"] if p["status"]["phase"] not in ("Succeeded", "Failed")]
    return _Page(document["kind"], [msgspec.json.encode(p) for p in kept], document["metadata"])
