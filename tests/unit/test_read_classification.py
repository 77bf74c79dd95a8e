"""Each way a read can fail is classified once, in cluster/, from status codes and exceptions.

These go through the real LiveCluster over HTTP against the fake API server.
"""

from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer, Fault
from truegreen.cluster import CantRead, Got, Kind, Listed, ReadFailure
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.reader import FieldIsNot
from truegreen.cluster.settings import ConnectionSettings

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
        (Fault.NOT_FOUND, ReadFailure.NOT_FOUND, "not found (404)"),
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
    assert read == CantRead(expected, f"list pods: {reason}", reached=True)
    assert read.is_measurement is (expected is ReadFailure.NOT_FOUND)


def test_get_of_absent_object_is_a_measured_absence(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    fake_api.add(POD)
    with _connect(kubeconfig) as cluster:
        present = cluster.get(Kind.POD, "p", namespace="train")
        absent = cluster.get(Kind.POD, "gone", namespace="train")
    assert isinstance(present, Got)
    assert present.obj["metadata"]["name"] == "p"
    assert absent == CantRead(ReadFailure.NOT_FOUND, "read pod 'gone': not found (404)")
    assert absent.is_measurement


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
    from truegreen.doctor.usage import CapacityTally

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
        (ReadFailure.NOT_CAPTURED, "list pods: not in the snapshot"),
    ],
)
def test_every_reason_reads_plainly(failure: ReadFailure, line: str) -> None:
    from truegreen.cluster.classify import describe

    assert describe(failure, "list pods") == line
    assert describe(failure, "list pods", "403") == f"{line} (403)"


@pytest.mark.parametrize(
    ("kind", "message", "cause", "reached"),
    [
        (
            "ConnectError",
            "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
            "TLS certificate was not accepted",
            False,
        ),
        ("ConnectError", "SSL handshake failed", "TLS certificate was not accepted", False),
        (
            "ConnectError",
            "hostname mismatch, certificate is not valid for 'api'",
            "TLS certificate was not accepted",
            False,
        ),
        ("ConnectError", "[Errno 111] Connection refused", "connection refused", False),
        ("ConnectError", "[Errno -2] Name or service not known", "address not found", False),
        ("ConnectError", "nodename nor servname provided", "address not found", False),
        ("ConnectError", "", "ConnectError", False),
        ("ReadError", "peer went away", "connection dropped", True),
        ("ReadError", "", "connection dropped", True),
        ("WriteError", "broken pipe", "WriteError", True),
        ("ProxyError", "407", "ProxyError", True),
    ],
)
def test_connection_causes(kind: str, message: str, cause: str, reached: bool) -> None:
    import httpx2

    from truegreen.cluster.classify import classify

    cant = classify(getattr(httpx2, kind)(message), "list nodes")
    assert cant == CantRead(
        ReadFailure.UNREACHABLE, f"list nodes: could not connect ({cause})", reached
    )


def test_dropped_connection_was_reached() -> None:
    import httpx2

    from truegreen.cluster.classify import classify

    cant = classify(httpx2.RemoteProtocolError("peer closed"), "list nodes")
    assert cant == CantRead(
        ReadFailure.UNREACHABLE, "list nodes: could not connect (connection dropped)", True
    )


def test_an_unexpected_exception_is_not_a_read_failure() -> None:
    from truegreen.cluster.classify import classify

    assert classify(KeyError("bug"), "list nodes") is None


def test_connect_timeout_never_reached_the_server() -> None:
    import httpx2

    from truegreen.cluster.classify import classify

    cant = classify(httpx2.ConnectTimeout("timed out"), "list nodes")
    assert cant == CantRead(ReadFailure.TIMEOUT, "list nodes: no answer in time", reached=False)


def test_failing_credential_plugin_is_unauthorized() -> None:
    from lightkube.core.exceptions import ConfigError

    from truegreen.cluster.classify import classify

    cant = classify(ConfigError("exec plugin exited 1"), "list nodes")
    assert cant == CantRead(
        ReadFailure.UNAUTHORIZED,
        "list nodes: the cluster did not accept the credentials (could not obtain credentials)",
    )


@pytest.mark.parametrize("error", [ValueError("array, not object"), TypeError("not a mapping")])
def test_an_answer_of_the_wrong_shape_is_malformed(error: Exception) -> None:
    from truegreen.cluster.classify import classify

    assert classify(error, "list pods") == CantRead(
        ReadFailure.MALFORMED, "list pods: the cluster's answer was not valid"
    )
