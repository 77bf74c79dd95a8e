"""The Kubernetes client on the transport: URLs, kinds stamped, throttling retried as client-go
retries it, a 401 answered once with a fresh credential, caps and the run's deadline.

The servers are scripted loopback servers (`tests/support/hostile.py`) where an exact answer
matters, and the fake API server where a whole API does.
"""

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from tests.support import hostile
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.hostile import Answer, HostileServer, Received, ScriptedApi
from truegreen.cluster import CantRead, Conflict, Created, Got, Kind, Listed, Patched, ReadFailure
from truegreen.cluster.credentials import Credential, CredentialError, StaticCredentials
from truegreen.cluster.kubeconfig import ResolvedConnection
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.reads import Folded
from truegreen.cluster.settings import ConnectionSettings
from truegreen.http.deadline import Deadline
from truegreen.http.tls import TlsSettings

POD_LIST_WITHOUT_KINDS = {
    "kind": "PodList",
    "apiVersion": "v1",
    "metadata": {"resourceVersion": "7"},
    # What a real API server sends: items carry no kind or apiVersion (kubernetes#3030).
    "items": [{"metadata": {"name": "p1", "namespace": "train"}, "spec": {"nodeName": "n1"}}],
}


def _json(document: object, status: int = 200, **headers: str) -> Answer:
    return status, {"Content-Type": "application/json", **headers}, json.dumps(document).encode()


def _status(code: int, message: str, **headers: str) -> Answer:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message}
    return _json({**body, "code": code}, code, **headers)


def _kubeconfig(
    path: Path, url: str, user: dict[str, Any] | None = None, ca: Path | None = None
) -> Path:
    cluster: dict[str, Any] = {"server": url}
    if ca is not None:
        cluster["certificate-authority"] = str(ca)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user or {"token": "t0ken"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "train"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def _connect(kubeconfig: Path, timeout: float = 5.0, **kwargs: Any) -> LiveCluster:
    return LiveCluster.connect(
        ConnectionSettings(kubeconfig=kubeconfig, request_timeout=timeout), **kwargs
    )


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> hostile.ServerCertificate:
    """For the credential tests: kubectl sends a user's credentials only over TLS."""
    folder = tmp_path_factory.mktemp("pki")
    return hostile.issue(folder, hostile.make_authority(folder), "api", "IP:127.0.0.1")


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[tuple[list[Answer], ScriptedApi, Path]]:
    """A server that answers from a list (the last answer repeats) and its kubeconfig."""
    answers: list[Answer] = []

    def answer(_: Received, index: int) -> Answer:
        return answers[min(index, len(answers) - 1)]

    with ScriptedApi(answer) as server:
        yield answers, server, _kubeconfig(tmp_path / "kc", server.url)


# -- URLs and kinds --------------------------------------------------------------------------


def test_list_items_get_their_kind_and_api_version(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, server, kubeconfig = scripted
    answers.append(_json(POD_LIST_WITHOUT_KINDS))
    assert "kind" not in POD_LIST_WITHOUT_KINDS["items"][0]  # type: ignore[index]
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace="train", labels={"app": "x"})
    assert isinstance(read, Listed)
    assert [(i["kind"], i["apiVersion"], i["metadata"]["name"]) for i in read.items] == [
        ("Pod", "v1", "p1")
    ]
    assert server.received[0].target == (
        "/api/v1/namespaces/train/pods?limit=500&labelSelector=app%3Dx"
    )
    assert "authorization" not in server.received[0].headers  # plain http: no credentials


class _PodKinds(msgspec.Struct, rename="camel"):
    kind: str = ""
    api_version: str = ""


class _KindFold:
    name = "kinds"
    view = _PodKinds

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def add(self, item: _PodKinds) -> None:
        self.seen.append((item.kind, item.api_version))

    def summary(self) -> dict[str, Any]:
        return {"seen": self.seen}


def test_fold_views_that_declare_kind_fields_get_them(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, server, kubeconfig = scripted
    answers.append(_json(POD_LIST_WITHOUT_KINDS))
    with _connect(kubeconfig) as cluster:
        read = cluster.fold(Kind.POD, _KindFold(), namespace=None)
    assert read == Folded({"seen": [("Pod", "v1")]})
    assert server.received[0].target == "/api/v1/pods?limit=500"


def test_get_patch_and_create_answers_are_stamped_and_sent_right(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, server, kubeconfig = scripted
    stored = {"metadata": {"name": "api", "namespace": "train"}}
    answers.extend([_json(stored), _json(stored), _json(stored), _json(stored, 201)])
    with _connect(kubeconfig) as cluster:
        got = cluster.get(Kind.DEPLOYMENT, "api", namespace="train")
        merged = cluster.patch(Kind.DEPLOYMENT, "api", namespace="train", patch={"a": 1})
        strategic = cluster.patch(
            Kind.DEPLOYMENT, "api", namespace="train", patch={"b": 2}, strategic=True
        )
        created = cluster.create(Kind.POD, {"metadata": {}}, namespace="train", dry_run=True)
    for read in (got, merged, strategic):
        assert isinstance(read, Got | Patched)
        assert (read.obj["kind"], read.obj["apiVersion"]) == ("Deployment", "apps/v1")
    assert isinstance(created, Created)
    assert (created.obj["kind"], created.obj["apiVersion"]) == ("Pod", "v1")
    sent = [(r.method, r.target, r.headers.get("content-type"), r.body) for r in server.received]
    assert sent == [
        ("GET", "/apis/apps/v1/namespaces/train/deployments/api", None, b""),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/train/deployments/api?fieldManager=truegreen",
            "application/merge-patch+json",
            b'{"a":1}',
        ),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/train/deployments/api?fieldManager=truegreen",
            "application/strategic-merge-patch+json",
            b'{"b":2}',
        ),
        (
            "POST",
            "/api/v1/namespaces/train/pods?fieldManager=truegreen&dryRun=All",
            "application/json",
            b'{"metadata":{}}',
        ),
    ]


def test_a_refused_create_carries_the_server_s_message(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, _, kubeconfig = scripted
    message = 'pods "job-0" is forbidden: exceeded quota: compute, requested: cpu=4'
    answers.append(_status(403, message))
    with _connect(kubeconfig) as cluster:
        created = cluster.create(Kind.POD, {"metadata": {}}, namespace="train", dry_run=True)
    assert created == CantRead(
        ReadFailure.FORBIDDEN,
        "create pod: no permission (403); needs create pods in namespace train",
        server_message=message,
    )


def test_a_conflicting_patch_is_a_conflict(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, server, kubeconfig = scripted
    answers.append(_status(409, "the object has been modified"))
    with _connect(kubeconfig) as cluster:
        result = cluster.patch(Kind.DEPLOYMENT, "api", namespace="train", patch={})
    assert result == Conflict()
    assert len(server.received) == 1


# -- throttling, as client-go retries it -----------------------------------------------------


@pytest.mark.parametrize(
    ("first", "sends", "outcome"),
    [
        (_status(429, "slow down", **{"Retry-After": "0"}), 2, "listed"),
        (_status(503, "shutting down", **{"Retry-After": "0"}), 2, "listed"),
        (_status(500, "etcd", **{"Retry-After": "0"}), 2, "listed"),
        (_status(429, "slow down"), 1, "server-error"),  # no Retry-After: final
        (_status(503, "down", **{"Retry-After": "0.5"}), 1, "server-error"),  # not whole seconds
        (_status(429, "slow down", **{"Retry-After": "soon"}), 1, "server-error"),
        # Not 429 or 5xx; a 404 for the pods collection says no API server answers there.
        (_status(404, "gone", **{"Retry-After": "0"}), 1, "unreachable"),
        (_status(409, "conflict", **{"Retry-After": "0"}), 1, "server-error"),
    ],
)
def test_which_answers_are_sent_again(
    scripted: tuple[list[Answer], ScriptedApi, Path], first: Answer, sends: int, outcome: str
) -> None:
    answers, server, kubeconfig = scripted
    answers.extend([first, _json(POD_LIST_WITHOUT_KINDS)])
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
        assert cluster.requests_made == sends
    assert len(server.received) == sends
    assert (read.failure.value if isinstance(read, CantRead) else "listed") == outcome


def _reset_first_connection(peer: hostile.Peer, index: int) -> None:
    """The first connection is reset before any answer (a load balancer or an API server
    going away); later ones answer a pod list."""
    if index == 0:
        if peer.read_request() is not None:
            peer.reset()
        return
    while peer.read_request() is not None:
        if not peer.send(hostile.ok_answer(json.dumps(POD_LIST_WITHOUT_KINDS).encode())):
            return


def test_a_reset_read_is_sent_again_as_client_go_does(tmp_path: Path) -> None:
    with HostileServer(_reset_first_connection) as server:
        kubeconfig = _kubeconfig(tmp_path / "kc", server.url)
        with _connect(kubeconfig) as cluster:
            read = cluster.list(Kind.POD, namespace="train")
            assert cluster.requests_made == 2
    assert server.counts["connections"] == 2, "precondition: the first connection was reset"
    assert isinstance(read, Listed)
    assert [item["metadata"]["name"] for item in read.items] == ["p1"]


def test_a_read_cut_mid_answer_is_not_sent_again(tmp_path: Path) -> None:
    """client-go sends a GET again only for an error before the status line: a body cut short
    after it is the caller's error (rest/request.go request())."""
    with HostileServer(hostile.reset_mid_body) as server:
        kubeconfig = _kubeconfig(tmp_path / "kc", server.url)
        with _connect(kubeconfig) as cluster:
            read = cluster.list(Kind.POD, namespace="train")
            assert cluster.requests_made == 1
    assert server.counts["requests"] == 1
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.UNREACHABLE


def test_a_reset_write_is_sent_once(tmp_path: Path) -> None:
    with HostileServer(hostile.reset_mid_body) as server:
        kubeconfig = _kubeconfig(tmp_path / "kc", server.url)
        with _connect(kubeconfig) as cluster:
            written = cluster.patch(Kind.DEPLOYMENT, "api", namespace="train", patch={"a": 1})
            assert cluster.requests_made == 1
    assert server.counts["requests"] == 1
    assert isinstance(written, CantRead)
    assert written.failure is ReadFailure.UNREACHABLE


def test_throttling_that_never_ends_stops_after_ten_retries(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, server, kubeconfig = scripted
    answers.append(_status(429, "slow down", **{"Retry-After": "0"}))
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
    assert isinstance(read, CantRead)
    assert read.reason == "list pods: the cluster answered with an error (429)"
    assert read.server_message == "slow down"
    assert len(server.received) == 11


def test_a_wait_past_the_deadline_ends_the_request_now(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, server, kubeconfig = scripted
    answers.extend(
        [_status(429, "slow down", **{"Retry-After": "3"}), _json(POD_LIST_WITHOUT_KINDS)]
    )
    with _connect(kubeconfig, timeout=2.0) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.SERVER_ERROR
    assert len(server.received) == 1


def test_the_fake_s_throttling_is_waited_out(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """The fake's 429 carries `Retry-After: 1`; within a 5 s deadline it is sent again."""
    fake_api.add(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "train"}}
    )
    fake_api.inject(Fault.TOO_MANY_REQUESTS, r"/pods$", count=1)
    with _connect(kubeconfig, timeout=5.0) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
    assert isinstance(read, Listed)
    assert [r.status for r in fake_api.requests("GET", r"/pods$")] == [429, 200]


# -- credentials -----------------------------------------------------------------------------


def _accepts(token: str) -> Any:
    def answer(request: Received, _: int) -> Answer:
        if request.headers.get("authorization") != f"Bearer {token}":
            return _status(401, "Unauthorized")
        return _json(POD_LIST_WITHOUT_KINDS)

    return answer


def test_a_401_rereads_the_token_file_and_resends_once(
    tmp_path: Path, certificate: hostile.ServerCertificate
) -> None:
    token = tmp_path / "token"
    token.write_text("old\n")
    with ScriptedApi(_accepts("new"), certificate) as server:
        kubeconfig = _kubeconfig(
            tmp_path / "kc", server.url, {"tokenFile": "token"}, certificate.ca
        )
        with _connect(kubeconfig) as cluster:
            token.write_text("new\n")  # rotated, as a projected service account token is
            read = cluster.list(Kind.POD, namespace="train")
            still = cluster.list(Kind.POD, namespace="train")
    assert isinstance(read, Listed)
    assert isinstance(still, Listed)
    assert [r.headers["authorization"] for r in server.received] == [
        "Bearer old",
        "Bearer new",
        "Bearer new",
    ]


def test_a_401_with_nothing_fresher_is_sent_once(
    tmp_path: Path, certificate: hostile.ServerCertificate
) -> None:
    with ScriptedApi(_accepts("other"), certificate) as server:
        kubeconfig = _kubeconfig(tmp_path / "kc", server.url, {"token": "mine"}, certificate.ca)
        with _connect(kubeconfig) as cluster:
            read = cluster.list(Kind.POD, namespace="train")
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.UNAUTHORIZED
    assert len(server.received) == 1


def test_basic_login_is_sent(tmp_path: Path, certificate: hostile.ServerCertificate) -> None:
    def answer(request: Received, _: int) -> Answer:
        return _json({"seen": request.headers.get("authorization"), "metadata": {}})

    with ScriptedApi(answer, certificate) as server:
        kubeconfig = _kubeconfig(
            tmp_path / "kc", server.url, {"username": "admin", "password": "pa:ss"}, certificate.ca
        )
        with _connect(kubeconfig) as cluster:
            read = cluster.get(Kind.NODE, "n1", namespace=None)
    assert isinstance(read, Got)
    assert read.obj["seen"] == "Basic YWRtaW46cGE6c3M="  # base64("admin:pa:ss")


class _FailingSource:
    def current(self, deadline: Deadline | None = None) -> Credential:
        raise CredentialError("the login plugin 'cloud-login' failed", "exit status 1")

    def after_unauthorized(
        self, refused: Credential, deadline: Deadline | None = None
    ) -> Credential | None:
        return None

    def describe(self) -> str:
        return "a failing plugin"

    @property
    def login_command(self) -> str:
        return "cloud-login"


def test_a_credential_source_that_fails_is_an_unreached_cluster() -> None:
    with HostileServer(hostile.keep_alive) as server:
        connection = ResolvedConnection(
            server.url, "train", "test", TlsSettings(), _FailingSource()
        )
        with LiveCluster(connection, 5.0) as cluster:
            read = cluster.list(Kind.DEPLOYMENT, namespace="train")
    assert read == CantRead(
        ReadFailure.UNAUTHORIZED,
        "the login plugin 'cloud-login' failed: exit status 1",
        reached=False,
    )
    assert server.counts["requests"] == 0


# -- caps and deadlines ----------------------------------------------------------------------


def test_an_answer_past_the_cap_is_too_large(
    scripted: tuple[list[Answer], ScriptedApi, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from truegreen.cluster import live

    answers, _, kubeconfig = scripted
    answers.append(_json({**POD_LIST_WITHOUT_KINDS, "padding": "x" * 5000}))
    monkeypatch.setattr(live, "MAX_ANSWER_BYTES", 4 << 10)  # the cap, not the client, varies
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
    assert read == CantRead(
        ReadFailure.TOO_LARGE, "list pods: the server's answer was larger than 4,096 bytes"
    )


def test_continue_tokens_that_never_end_stop_at_the_page_cap(
    scripted: tuple[list[Answer], ScriptedApi, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from truegreen.cluster import live

    answers, server, kubeconfig = scripted
    endless = {**POD_LIST_WITHOUT_KINDS, "metadata": {"continue": "again"}}
    answers.append(_json(endless))
    monkeypatch.setattr(live, "MAX_PAGES", 5)
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
    assert read == CantRead(ReadFailure.TOO_LARGE, "list pods: the list had more than 5 pages")
    assert len(server.received) == 5
    assert server.received[-1].target.endswith("&continue=again")


def test_past_the_run_s_deadline_nothing_is_sent(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, server, kubeconfig = scripted
    answers.append(_json(POD_LIST_WITHOUT_KINDS))
    with _connect(kubeconfig, run_seconds=0.0) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
        assert cluster.requests_made == 0
    assert read == CantRead(
        ReadFailure.TIMEOUT, "list pods: no answer in time (the run's time limit of 0 s passed)"
    )
    assert server.received == []


def test_the_run_s_deadline_cuts_a_request_short(tmp_path: Path) -> None:
    with HostileServer(hostile.drip_body) as server:
        kubeconfig = _kubeconfig(tmp_path / "kc", server.url)
        with _connect(kubeconfig, timeout=60, run_seconds=0.5) as cluster:
            read = cluster.list(Kind.POD, namespace="train")
        assert server.hung_up.wait(5)
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.TIMEOUT
    assert read.reason.endswith("(the run's time limit of 0.5 s passed)")
    assert not server.drip_capped.is_set()


def test_concurrent_reads_share_one_client(
    scripted: tuple[list[Answer], ScriptedApi, Path],
) -> None:
    answers, server, kubeconfig = scripted
    answers.append(_json(POD_LIST_WITHOUT_KINDS))
    results: list[object] = []
    with _connect(kubeconfig) as cluster:

        def read() -> None:
            for _ in range(5):
                results.append(cluster.list(Kind.POD, namespace="train"))

        workers = [threading.Thread(target=read) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
        assert cluster.requests_made == 20
    assert len(results) == 20
    assert all(isinstance(r, Listed) and len(r.items) == 1 for r in results)
    assert server.counts["connections"] <= 4


def test_static_credentials_never_refresh() -> None:
    source = StaticCredentials(Credential("Bearer x"), "user 'a'")
    assert source.after_unauthorized(Credential("Bearer x")) is None
    assert source.current() == Credential("Bearer x")
