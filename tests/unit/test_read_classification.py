"""Each way a read can fail is classified once, in cluster/, from status codes and exceptions.

These go through the real LiveCluster over HTTP against the fake API server.
"""

from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from tests.support.fake_apiserver import FakeApiServer, Fault
from truegreen.cluster import CantRead, Got, Kind, Listed, ReadFailure
from truegreen.cluster.classify import (
    SERVER_MESSAGE_LIMIT,
    RunTimeLimitError,
    TooManyPagesError,
    classify,
    from_status,
)
from truegreen.cluster.credentials import CredentialError
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.reader import FieldIsNot
from truegreen.cluster.settings import ConnectionSettings
from truegreen.http.errors import (
    AddressNotFoundError,
    AnswerTooLargeError,
    CertificateNameError,
    CommonNameOnlyError,
    ConnectFailedError,
    ConnectionDroppedError,
    ConnectRefusedError,
    InvalidRequestError,
    ProtocolViolationError,
    SendFailedError,
    TimedOutError,
    TlsClosedError,
    TlsFailedError,
)

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "train"}}


def _connect(kubeconfig: Path, timeout: float = 10.0) -> LiveCluster:
    return LiveCluster.connect(ConnectionSettings(kubeconfig=kubeconfig, request_timeout=timeout))


@pytest.mark.parametrize(
    ("fault", "expected", "reason"),
    [
        (
            Fault.UNAUTHORIZED,
            ReadFailure.UNAUTHORIZED,
            "the cluster did not accept the credentials (401)",
        ),
        (
            Fault.FORBIDDEN,
            ReadFailure.FORBIDDEN,
            "no permission (403); needs list pods in namespace train",
        ),
        (Fault.CONFLICT, ReadFailure.SERVER_ERROR, "the cluster answered with an error (409)"),
        (
            Fault.TOO_MANY_REQUESTS,
            ReadFailure.SERVER_ERROR,
            "the cluster answered with an error (429)",
        ),
        (Fault.SERVER_ERROR, ReadFailure.SERVER_ERROR, "the cluster answered with an error (500)"),
        (Fault.UNAVAILABLE, ReadFailure.SERVER_ERROR, "the cluster answered with an error (503)"),
        (Fault.DELAY, ReadFailure.TIMEOUT, "no answer in time"),
        (Fault.RESET, ReadFailure.UNREACHABLE, "could not connect (connection dropped)"),
        (Fault.MALFORMED, ReadFailure.MALFORMED, "the cluster's answer was not valid"),
        (Fault.WRONG_KIND, ReadFailure.MALFORMED, "the cluster's answer was not valid"),
    ],
)
def test_list_failure_is_classified(
    fake_api: FakeApiServer, kubeconfig: Path, fault: Fault, expected: ReadFailure, reason: str
) -> None:
    fake_api.add(POD)
    fake_api.inject(fault, r"/pods$", delay=3.0)
    with _connect(kubeconfig, timeout=0.5) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
    assert isinstance(read, CantRead), f"{fault} should not yield objects, got {read}"
    # the server answered (or at least accepted the connection): later reads may still work
    assert replace(read, server_message="") == CantRead(expected, f"list pods: {reason}")
    assert not read.is_measurement
    # A Status answer's message is kept apart (its exact text: test_only_a_status_answer_is_quoted);
    # priority-and-fairness's 429 is plain text, so there is nothing to quote.
    sends_status = isinstance(fault.value, int) and fault is not Fault.TOO_MANY_REQUESTS
    assert bool(read.server_message) is sends_status


def test_get_of_absent_object_is_a_measured_absence(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    fake_api.add(POD)
    with _connect(kubeconfig) as cluster:
        present = cluster.get(Kind.POD, "p", namespace="train")
        absent = cluster.get(Kind.POD, "gone", namespace="train")
    assert isinstance(present, Got)
    assert present.obj["metadata"]["name"] == "p"
    assert absent == CantRead(
        ReadFailure.NOT_FOUND,
        "read pod 'gone': not found (404)",
        server_message='pods "gone" not found',
    )
    assert absent.is_measurement


NO_API = (
    "not the API server (nothing at this address serves the Kubernetes API; "
    "it answers 404 not found)"
)


@pytest.mark.parametrize("fault", [Fault.NOT_FOUND, Fault.PAGE_NOT_FOUND])
def test_a_404_for_discovery_or_a_built_in_list_says_the_address_serves_no_api(
    fake_api: FakeApiServer, kubeconfig: Path, fault: Fault
) -> None:
    """Every API server serves `/apis` and the core and apps collections (a namespace that does
    not exist lists empty): a 404 for them is no absence, it is the wrong address."""
    fake_api.add(POD)
    fake_api.inject(fault, r"^/apis$|/pods$|/deployments$")
    with _connect(kubeconfig) as cluster:
        groups = cluster.get(Kind.API_GROUPS, "", namespace=None)
        pods = cluster.list(Kind.POD, namespace="train")
        deployments = cluster.list(Kind.DEPLOYMENT, namespace="train")
    assert [r.status for r in fake_api.log if r.fault is fault] == [404, 404, 404]
    assert groups == CantRead(
        ReadFailure.UNREACHABLE, f"read the API groups the server serves: {NO_API}", reached=False
    )
    assert pods == CantRead(ReadFailure.UNREACHABLE, f"list pods: {NO_API}", reached=False)
    assert deployments == CantRead(
        ReadFailure.UNREACHABLE, f"list deployments: {NO_API}", reached=False
    )
    assert not pods.is_measurement


def test_a_404_for_a_custom_kind_not_served_is_a_measured_absence(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """A group that is not installed: the real server answers Go's bare `404 page not found`,
    and that is the kind's measured absence."""
    with _connect(kubeconfig) as cluster:
        queues = cluster.list(Kind.LOCAL_QUEUE, namespace="train")
        queue = cluster.get(Kind.LOCAL_QUEUE, "main", namespace="train")
    assert [(r.path, r.status) for r in fake_api.log][-2:] == [
        ("/apis/kueue.x-k8s.io/v1beta2/namespaces/train/localqueues", 404),
        ("/apis/kueue.x-k8s.io/v1beta2/namespaces/train/localqueues/main", 404),
    ]
    assert queues == CantRead(ReadFailure.NOT_FOUND, "list localqueues: not found (404)")
    assert isinstance(queue, CantRead)
    assert queue.failure is ReadFailure.NOT_FOUND
    assert queues.is_measurement
    assert queue.is_measurement


def test_a_404_that_names_no_object_measures_no_absence(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """The API server's NotFound for an object names it (`details.name`); a 404 for a built-in
    kind that does not (a proxy, a wrong path) is no measurement of the object."""
    fake_api.inject(Fault.PAGE_NOT_FOUND, r"/secrets/regcred$")
    with _connect(kubeconfig) as cluster:
        unnamed = cluster.get(Kind.SECRET, "regcred", namespace="train")
        named = cluster.get(Kind.SECRET, "other", namespace="train")
    assert unnamed == CantRead(
        ReadFailure.SERVER_ERROR,
        "read secret 'regcred': the cluster answered with an error "
        "(404, but not the API server saying what is absent)",
    )
    assert not unnamed.is_measurement
    assert named == CantRead(
        ReadFailure.NOT_FOUND,
        "read secret 'other': not found (404)",
        server_message='secrets "other" not found',
    )
    assert named.is_measurement


def test_forbidden_get_is_not_a_measurement(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    fake_api.add(POD)
    fake_api.inject(Fault.FORBIDDEN, r"/pods/p$")
    with _connect(kubeconfig) as cluster:
        read = cluster.get(Kind.POD, "p", namespace="train")
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.FORBIDDEN
    assert read.reason == "read pod 'p': no permission (403); needs get pods in namespace train"
    assert not read.is_measurement


def test_a_forbidden_read_names_the_exact_permission(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """What `kubectl auth can-i` would be asked: verb, resource.group, scope."""
    from truegreen.cluster.reader import FieldIsNot
    from truegreen.doctor.knowledge.usage import CapacityTally

    fake_api.inject(Fault.FORBIDDEN, r".")
    with _connect(kubeconfig) as cluster:
        reads = {
            "nodes": cluster.list(Kind.NODE, namespace=None),
            "jobs": cluster.list(Kind.JOB, namespace="train"),
            "storage": cluster.get(Kind.STORAGE_CLASS, "fast", namespace=None),
            "pods": cluster.fold(
                Kind.POD,
                CapacityTally("train"),
                namespace=None,
                fields={"status.phase": FieldIsNot(("Failed",))},
            ),
            "patch": cluster.patch(Kind.DEPLOYMENT, "api", namespace="train", patch={}),
        }
    reasons = {name: read.reason for name, read in reads.items() if isinstance(read, CantRead)}
    assert reasons == {
        "nodes": "list nodes: no permission (403); needs list nodes (cluster-wide: a ClusterRole)",
        "jobs": "list jobs: no permission (403); needs list jobs.batch in namespace train",
        "storage": "read storageclass 'fast': no permission (403); needs get "
        "storageclasses.storage.k8s.io (cluster-wide: a ClusterRole)",
        "pods": "list pods: no permission (403); needs list pods in every namespace "
        "(a ClusterRole)",
        "patch": "patch deployment 'api': no permission (403); needs patch deployments.apps in "
        "namespace train",
    }


def test_unreachable_server(tmp_path: Path) -> None:
    server = FakeApiServer().start()
    kubeconfig = server.write_kubeconfig(tmp_path / "kc")
    server.stop()  # nothing listens on that port any more
    with _connect(kubeconfig, timeout=2) as cluster:
        read = cluster.list(Kind.NODE, namespace=None)
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.UNREACHABLE
    assert read.reason == "list nodes: could not connect (connection refused)"


def test_list_follows_every_page_and_counts_requests(
    fake_api: FakeApiServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from truegreen.cluster import live

    fake_api.add(*[{**POD, "metadata": {"name": f"p{i}", "namespace": "train"}} for i in range(7)])
    monkeypatch.setattr(live, "PAGE_SIZE", 3)  # the page size, not the client, is what varies
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
        assert isinstance(read, Listed)
        assert sorted(p["metadata"]["name"] for p in read.items) == [f"p{i}" for i in range(7)]
        assert cluster.requests_made == 3
    assert [r.query.get("limit") for r in fake_api.requests("GET", "/pods$")] == ["3", "3", "3"]


def test_stale_continue_token_is_not_a_partial_list(
    fake_api: FakeApiServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from truegreen.cluster import live

    fake_api.add(*[{**POD, "metadata": {"name": f"p{i}", "namespace": "train"}} for i in range(4)])
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    original = fake_api.handle

    def compacting_handle(*args: object, **kwargs: object) -> object:
        result = original(*args, **kwargs)  # type: ignore[arg-type]
        fake_api.compact()
        return result

    monkeypatch.setattr(fake_api, "handle", compacting_handle)
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace="train")
    assert isinstance(read, CantRead), "a list whose later page expired must not look complete"
    assert read.failure is ReadFailure.SERVER_ERROR
    assert read.reason == "list pods: the cluster answered with an error (410)"


def test_field_selector_not_equal_is_sent(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    def pod(name: str, phase: str) -> dict[str, object]:
        return {**POD, "metadata": {"name": name, "namespace": "train"}, "status": {"phase": phase}}

    fake_api.add(pod("run", "Running"), pod("done", "Succeeded"), pod("failed", "Failed"))
    terminated = FieldIsNot(("Succeeded", "Failed"))
    with _connect(kubeconfig) as cluster:
        read = cluster.list(Kind.POD, namespace="train", fields={"status.phase": terminated})
    assert isinstance(read, Listed)
    assert [p["metadata"]["name"] for p in read.items] == ["run"]
    sent = fake_api.requests("GET", "/pods$")[-1].query["fieldSelector"]
    assert set(sent.split(",")) == {"status.phase!=Succeeded", "status.phase!=Failed"}


@pytest.mark.parametrize("fault", [Fault.MALFORMED, Fault.WRONG_KIND])
def test_get_of_a_garbled_answer_is_malformed(
    fake_api: FakeApiServer, kubeconfig: Path, fault: Fault
) -> None:
    fake_api.add(POD)
    fake_api.inject(fault, r"/pods/p$")
    with _connect(kubeconfig) as cluster:
        read = cluster.get(Kind.POD, "p", namespace="train")
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.MALFORMED


@pytest.mark.parametrize(
    ("failure", "line"),
    [
        (ReadFailure.NOT_FOUND, "list pods: not found"),
        (ReadFailure.UNAUTHORIZED, "list pods: the cluster did not accept the credentials"),
        (ReadFailure.FORBIDDEN, "list pods: no permission"),
        (ReadFailure.TIMEOUT, "list pods: no answer in time"),
        (ReadFailure.UNREACHABLE, "list pods: could not connect"),
        (ReadFailure.SERVER_ERROR, "list pods: the cluster answered with an error"),
        (ReadFailure.MALFORMED, "list pods: the cluster's answer was not valid"),
        (ReadFailure.TOO_LARGE, "list pods: the cluster's answer was too large"),
        (ReadFailure.NOT_CAPTURED, "list pods: not in the snapshot"),
    ],
)
def test_every_reason_reads_plainly(failure: ReadFailure, line: str) -> None:
    from truegreen.cluster.classify import describe

    assert describe(failure, "list pods") == line
    if failure is ReadFailure.TOO_LARGE:  # its detail says it all: "…larger than 64 MiB"
        assert describe(failure, "list pods", "more than 9 pages") == "list pods: more than 9 pages"
    else:
        assert describe(failure, "list pods", "403") == f"{line} (403)"


@pytest.mark.parametrize(
    ("error", "cause", "reached"),
    [
        (TlsFailedError("certificate verify failed"), "TLS certificate was not accepted", False),
        (
            TlsClosedError("the server closed the connection during TLS setup"),
            "the server closed the connection during TLS setup",
            False,
        ),
        (
            CertificateNameError("does not name 127.0.0.1"),
            "TLS certificate does not name this server",
            False,
        ),
        (
            CommonNameOnlyError("names api.internal only in its Common Name"),
            "TLS certificate does not name this server among its subject alternative names, "
            "as it must; a Common Name alone is not enough",
            False,
        ),
        (ConnectRefusedError("refused"), "connection refused", False),
        (AddressNotFoundError("no such name"), "address not found", False),
        (ConnectFailedError("no route to host"), "no route to the server", False),
        (ConnectionDroppedError("reset by peer"), "connection dropped", True),
        (SendFailedError("broken pipe"), "connection dropped", True),
    ],
)
def test_connection_causes(error: Exception, cause: str, reached: bool) -> None:
    """By exception class alone: the message never decides."""
    cant = classify(error, "list nodes")
    assert cant == CantRead(
        ReadFailure.UNREACHABLE, f"list nodes: could not connect ({cause})", reached
    )
    misleading = type(error)("connection refused: certificate verify failed, name not known")
    assert classify(misleading, "list nodes") == cant


def test_a_request_http_cannot_carry_is_a_cluster_never_reached() -> None:
    """Refused before a byte was sent (a token, or a user to act as, holding a line break): the
    reason says which header, and no later read can succeed either."""
    error = InvalidRequestError("the request's 'Impersonate-User' header holds what HTTP forbids")
    assert classify(error, "list pods") == CantRead(
        ReadFailure.UNREACHABLE,
        "list pods: could not connect (the request's 'Impersonate-User' header holds what HTTP "
        "forbids)",
        False,
    )


def test_an_unexpected_exception_is_not_a_read_failure() -> None:
    assert classify(KeyError("bug"), "list nodes") is None
    assert classify(ValueError("a bug, not an answer"), "list nodes") is None


def test_past_the_run_s_time_limit_is_a_timeout_that_reached_the_server() -> None:
    cant = classify(RunTimeLimitError(60), "list pods")
    assert cant == CantRead(
        ReadFailure.TIMEOUT, "list pods: no answer in time (the run's time limit of 60 s passed)"
    )


@pytest.mark.parametrize("connected", [True, False])
def test_a_timeout_says_whether_the_server_was_reached(connected: bool) -> None:
    cant = classify(TimedOutError("deadline", connected=connected), "list nodes")
    assert cant == CantRead(ReadFailure.TIMEOUT, "list nodes: no answer in time", connected)


def test_a_failing_credential_source_is_one_line_and_unreached() -> None:
    error = CredentialError("the login plugin 'aws' failed", "exit status 1", "log in again")
    cant = classify(error, "list nodes")
    assert cant == CantRead(
        ReadFailure.UNAUTHORIZED,
        "the login plugin 'aws' failed: exit status 1. log in again",
        reached=False,
        todo="log in again",  # kept apart too, so doctor's remedy can say it once
    )


@pytest.mark.parametrize(
    "error",
    [
        msgspec.DecodeError("truncated"),
        msgspec.ValidationError("array, not object"),
        ProtocolViolationError("not HTTP"),
    ],
)
def test_an_answer_of_the_wrong_shape_is_malformed(error: Exception) -> None:
    assert classify(error, "list pods") == CantRead(
        ReadFailure.MALFORMED, "list pods: the cluster's answer was not valid"
    )


@pytest.mark.parametrize(
    ("cap", "limit", "reason"),
    [
        (AnswerTooLargeError, 64 << 20, "the server's answer was larger than 64 MiB"),
        (AnswerTooLargeError, 1 << 20, "the server's answer was larger than 1 MiB"),
        (AnswerTooLargeError, (1 << 20) + 1, "the server's answer was larger than 1,048,577 bytes"),
        (AnswerTooLargeError, 4096, "the server's answer was larger than 4,096 bytes"),
        (TooManyPagesError, 10_000, "the list had more than 10,000 pages"),
    ],
)
def test_past_a_cap_is_too_large(cap: type[Exception], limit: int, reason: str) -> None:
    assert classify(cap(limit), "list pods") == CantRead(
        ReadFailure.TOO_LARGE, f"list pods: {reason}"
    )


def test_only_a_status_answer_is_quoted() -> None:
    status = b'{"kind": "Status", "message": "exceeded quota: compute"}'
    assert from_status(403, status, "create pod").server_message == "exceeded quota: compute"
    assert from_status(403, b'{"message": "not a Status"}', "create pod").server_message == ""
    assert from_status(500, b"<html>secret=hunter2</html>", "create pod").server_message == ""
    whole = b'{"kind": "Status", "message": "' + b"w" * SERVER_MESSAGE_LIMIT + b'"}'
    assert from_status(403, whole, "create pod").server_message == "w" * SERVER_MESSAGE_LIMIT
    long = b'{"kind": "Status", "message": "' + b"m" * 2000 + b'"}'
    quoted = from_status(403, long, "create pod").server_message
    assert quoted == "m" * SERVER_MESSAGE_LIMIT + "…"


@pytest.mark.parametrize(
    ("kind", "namespace", "path"),
    [
        (Kind.POD, "train", "/api/v1/namespaces/train/pods"),
        (Kind.POD, None, "/api/v1/pods"),
        (Kind.NODE, "train", "/api/v1/nodes"),  # not namespaced: the namespace is ignored
        (Kind.DEPLOYMENT, "train", "/apis/apps/v1/namespaces/train/deployments"),
        (Kind.STORAGE_CLASS, None, "/apis/storage.k8s.io/v1/storageclasses"),
        (Kind.JOB, "a/b", "/apis/batch/v1/namespaces/a%2Fb/jobs"),
    ],
)
def test_collection_paths(kind: Kind, namespace: str | None, path: str) -> None:
    from truegreen.cluster.endpoints import collection_path

    assert collection_path(kind, namespace) == path


def test_object_paths_quote_the_name() -> None:
    from truegreen.cluster.endpoints import object_path

    assert object_path(Kind.SECRET, "a b/../c", "train") == (
        "/api/v1/namespaces/train/secrets/a%20b%2F..%2Fc"
    )


def test_stamping_fills_only_what_is_missing() -> None:
    from truegreen.cluster.kinds import stamp

    assert stamp({"metadata": {}}, Kind.JOB) == {
        "metadata": {},
        "kind": "Job",
        "apiVersion": "batch/v1",
    }
    assert stamp({"kind": "", "apiVersion": "v1"}, Kind.POD) == {"kind": "Pod", "apiVersion": "v1"}
    kept = {"kind": "PodTemplate", "apiVersion": "v1beta9"}
    assert stamp(dict(kept), Kind.POD) == kept


def test_views_are_stamped_only_where_they_declare_the_fields() -> None:
    from truegreen.cluster.endpoints import view_stamper

    class Both(msgspec.Struct, frozen=True):
        kind: str = ""
        api_version: str = ""

    class KindOnly(msgspec.Struct):
        kind: str = ""
        name: str = ""

    class Neither(msgspec.Struct):
        name: str = ""

    both = Both()
    stamp_both = view_stamper(Both, Kind.DEPLOYMENT)
    assert stamp_both is not None
    stamp_both(both)
    assert (both.kind, both.api_version) == ("Deployment", "apps/v1")
    only = KindOnly(kind="Set")
    stamp_only = view_stamper(KindOnly, Kind.POD)
    assert stamp_only is not None
    stamp_only(only)
    assert only == KindOnly(kind="Set")
    assert view_stamper(Neither, Kind.POD) is None


@pytest.mark.parametrize(
    ("name", "possible"),
    [
        ("regcred", True),
        ("a.b", True),
        ("...", True),
        ("", False),
        (".", False),
        ("..", False),
        ("team/regcred", False),
        ("50%off", False),
    ],
)
def test_a_name_an_object_could_have_follows_the_path_segment_rule(
    name: str, possible: bool
) -> None:
    """apimachinery api/validation/path IsValidPathSegmentName."""
    from truegreen.cluster.endpoints import is_path_segment_name

    assert is_path_segment_name(name) is possible
