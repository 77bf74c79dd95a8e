"""The registry client against hostile registries on loopback: credentials never downgraded or
sent elsewhere, digests verified against the bytes, every answer bounded in time and size, and
every hostile value a plain reason, never a crash.

A registry with a name (not loopback) is reached over https, so the tests that need one name
it `registry.test` and route that name's ports to loopback servers with a dialer: the client's
own rules about schemes, hosts and ports decide everything, as they would on a network.
"""

import base64
import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import hostile
from tests.support.hostile import (
    DRIP_INTERVAL,
    Answer,
    HostileServer,
    Received,
    ScriptedApi,
    ServerCertificate,
)
from truegreen.http.deadline import Deadline
from truegreen.http.dial import DirectDialer, Stream
from truegreen.http.tls import TlsSettings
from truegreen.http.transport import Transport
from truegreen.images import parse_image
from truegreen.refresh.registry import (
    LOOKUPS_IN_FLIGHT,
    MAX_ANSWER_BYTES,
    LookupFailed,
    LookupFailure,
    RegistryAccess,
    RegistryClient,
    RegistryLogin,
    Resolved,
)

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"
BODY = json.dumps({"schemaVersion": 2, "mediaType": MANIFEST, "layers": []}).encode()
SHA256 = "sha256:" + hashlib.sha256(BODY).hexdigest()
SHA512 = "sha512:" + hashlib.sha512(BODY).hexdigest()
OTHER = "sha256:" + "ab" * 32
SECRET = "hunter2-registry-secret"


def _basic(login: RegistryLogin) -> str:
    return "Basic " + base64.b64encode(f"{login.username}:{login.password}".encode()).decode()


class _Hosts:
    """A dialer that routes (name, port) to a loopback port: a test's own name service."""

    def __init__(self, routes: dict[tuple[str, int], int]) -> None:
        self.routes = routes

    def connect(self, host: str, port: int, deadline: Deadline) -> Stream:
        return DirectDialer().connect("127.0.0.1", self.routes[(host, port)], deadline)

    def describe(self) -> str:
        return "through the test's routes"


@dataclass
class Named:
    """`registry.test` over https on 443, and over plain http on 80, both on loopback."""

    secure: ScriptedApi
    plain: ScriptedApi
    ca: Path

    def client(self, access: RegistryAccess | None = None) -> RegistryClient:
        routes = {("registry.test", 443): self.secure.port, ("registry.test", 80): self.plain.port}
        transport = Transport(TlsSettings(ca_pem=self.ca.read_bytes()), dialer=_Hosts(routes))
        return RegistryClient(access or RegistryAccess(timeout=5), transport=transport)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> ServerCertificate:
    folder = tmp_path_factory.mktemp("pki")
    return hostile.issue(folder, hostile.make_authority(folder), "registry", "DNS:registry.test")


@contextmanager
def _named(
    certificate: ServerCertificate,
    secure: Callable[[Received, int], Answer],
    plain: Callable[[Received, int], Answer],
) -> Iterator[Named]:
    with ScriptedApi(secure, certificate) as tls_side, ScriptedApi(plain) as plain_side:
        yield Named(tls_side, plain_side, certificate.ca)


LOGIN = RegistryLogin("registry.test", "robot", SECRET)


def _login_then(answer: Answer) -> Callable[[Received, int], Answer]:
    """A registry that asks for a Basic login, then gives `answer` to the logged-in request."""

    def script(request: Received, _: int) -> Answer:
        if request.headers.get("authorization") != _basic(LOGIN):
            return 401, {"WWW-Authenticate": 'Basic realm="registry"'}, b""
        return answer

    return script


def _manifest(request: Received, _: int) -> Answer:
    return 200, {"Content-Type": MANIFEST, "Docker-Content-Digest": SHA256}, BODY


def test_a_redirect_from_https_to_http_on_the_same_host_is_not_followed(
    certificate: ServerCertificate,
) -> None:
    """The attack of issue 14: https://registry.test → http://registry.test (same host name,
    another scheme and port). Neither the login nor the request may go out in clear text."""
    moved = (307, {"Location": "http://registry.test/v2/team/app/manifests/v1"}, b"")
    with _named(certificate, _login_then(moved), _manifest) as named:
        result = named.client().lookup(parse_image("registry.test/team/app:v1"), LOGIN)
        assert result == LookupFailed(
            LookupFailure.INSECURE_REFUSED,
            "registry.test redirected from https to plain http; not followed",
        )
        assert [r.headers.get("authorization") for r in named.secure.received] == [
            None,
            _basic(LOGIN),
        ], "precondition: the login went over https and was answered with the redirect"
        assert named.plain.received == []


def test_a_login_goes_only_to_its_own_scheme_host_and_port(
    certificate: ServerCertificate,
) -> None:
    """A plain-http registry (named insecure) redirecting to https on the same host name: the
    redirect is followed, but the login stays with http://registry.test:80, where it belongs."""
    moved = (307, {"Location": "https://registry.test/v2/team/app/manifests/v1"}, b"")
    with _named(certificate, _manifest, _login_then(moved)) as named:
        access = RegistryAccess(timeout=5, insecure_registries=frozenset({"registry.test"}))
        result = named.client(access).lookup(parse_image("registry.test/team/app:v1"), LOGIN)
        assert result == Resolved(SHA256, MANIFEST)
        assert len(named.plain.received) == 2, "precondition: logged in over http, redirected"
        assert [r.headers.get("authorization") for r in named.secure.received] == [None]


def test_a_token_service_over_plain_http_elsewhere_gets_no_login(
    certificate: ServerCertificate,
) -> None:
    challenge = 'Bearer realm="http://registry.test/token",service="registry.test"'

    def secure(request: Received, _: int) -> Answer:
        return 401, {"WWW-Authenticate": challenge}, b""

    with _named(certificate, secure, _manifest) as named:
        result = named.client().lookup(parse_image("registry.test/team/app:v1"), LOGIN)
        assert result == LookupFailed(
            LookupFailure.INSECURE_REFUSED, "registry.test names a token service over plain HTTP"
        )
        assert named.plain.received == []


@contextmanager
def _loopback(script: Callable[[Received, int], Answer]) -> Iterator[ScriptedApi]:
    with ScriptedApi(script) as server:
        yield server


def _lookup(server: HostileServer, image: str = "team/app:v1", timeout: float = 5) -> object:
    client = RegistryClient(RegistryAccess(timeout=timeout))
    try:
        return client.lookup(parse_image(f"127.0.0.1:{server.port}/{image}"))
    finally:
        client.close()


def _no_digest_on_head(get: Answer) -> Callable[[Received, int], Answer]:
    """HEAD leaves the digest out (so the body must be read); GET answers `get`."""

    def script(request: Received, _: int) -> Answer:
        if request.method == "HEAD":
            return 200, {"Content-Type": MANIFEST}, b""
        return get

    return script


@pytest.mark.parametrize(
    ("head", "get", "image", "expected"),
    [
        # the digest the GET claims is not the body's
        (None, OTHER, "team/app:v1", (LookupFailure.DIGEST_MISMATCH, "sent a manifest whose")),
        # the digest the HEAD claimed for an index is not the body the GET brings
        (OTHER, None, "team/app:v1", (LookupFailure.DIGEST_MISMATCH, "sent a manifest whose")),
        # a pinned digest whose body is another
        (None, None, f"team/app@{OTHER}", (LookupFailure.DIGEST_MISMATCH, "sent a manifest")),
        # an algorithm truegreen cannot verify
        (None, "md5:" + "0" * 32, "team/app:v1", (LookupFailure.MALFORMED, "cannot verify")),
        (None, "sha256:" + "0" * 63, "team/app:v1", (LookupFailure.MALFORMED, "cannot verify")),
    ],
)
def test_a_digest_that_is_not_the_body_s_is_refused(
    head: str | None, get: str | None, image: str, expected: tuple[LookupFailure, str]
) -> None:
    def script(request: Received, _: int) -> Answer:
        claimed = head if request.method == "HEAD" else get
        headers = {"Content-Type": INDEX if head else MANIFEST}
        if claimed:
            headers["Docker-Content-Digest"] = claimed
        return 200, headers, BODY

    with _loopback(script) as server:
        result = _lookup(server, image)
        assert isinstance(result, LookupFailed), result
        assert result.failure is expected[0]
        assert expected[1] in result.reason
        assert [r.method for r in server.received] == ["HEAD", "GET"]


@pytest.mark.parametrize("digest", [SHA256, SHA512, None])
def test_a_digest_the_body_proves_is_accepted_in_either_algorithm(digest: str | None) -> None:
    headers = {"Content-Type": MANIFEST, **({"Docker-Content-Digest": digest} if digest else {})}
    with _loopback(_no_digest_on_head((200, headers, BODY))) as server:
        assert _lookup(server) == Resolved(digest or SHA256, MANIFEST)


@pytest.mark.parametrize("behaviour", [hostile.huge_manifest, hostile.endless_manifest])
def test_a_manifest_past_the_cap_is_refused_not_hashed(behaviour: hostile.Behaviour) -> None:
    with HostileServer(behaviour) as server:
        port = server.port
        result = _lookup(server, timeout=30)
        assert server.hung_up.wait(10), "the client kept reading past its cap"
    assert result == LookupFailed(
        LookupFailure.TOO_LARGE,
        f"127.0.0.1:{port}'s answer was larger than {MAX_ANSWER_BYTES:,} bytes",
    )
    assert MAX_ANSWER_BYTES == 4 << 20  # the distribution spec's manifest size
    # What the server got out before the hang-up: the cap plus what the socket buffers held.
    assert server.counts["bytes_sent"] < 4 * MAX_ANSWER_BYTES, server.counts


@pytest.mark.parametrize("behaviour", [hostile.drip_headers, hostile.drip_body])
def test_a_dripping_registry_ends_at_the_look_up_s_deadline(behaviour: hostile.Behaviour) -> None:
    with HostileServer(behaviour) as server:
        port = server.port
        result = _lookup(server, timeout=0.5)
        assert server.hung_up.wait(5), "the client never hung up on the drip"
    assert result == LookupFailed(LookupFailure.TIMEOUT, f"127.0.0.1:{port} did not answer in time")
    assert not server.drip_capped.is_set()
    assert server.counts["bytes_sent"] < 4 * 0.5 / DRIP_INTERVAL + 60, server.counts


def test_garbage_is_a_plain_reason() -> None:
    with HostileServer(hostile.garbage) as server:
        port = server.port
        result = _lookup(server)
    assert result == LookupFailed(
        LookupFailure.MALFORMED, f"127.0.0.1:{port} did not answer in HTTP"
    )


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (json.dumps({"errors": [{"code": "DENIED", "message": "no"}]}).encode(), "403 DENIED"),
        (json.dumps({"errors": [{"code": "DENIED\x1b[2J\u202e"}]}).encode(), "403"),
        (json.dumps({"errors": [{"code": "D" * 65}]}).encode(), "403"),
        (json.dumps({"errors": [{"code": ["DENIED"]}]}).encode(), "403"),
        (b"[" * 100_000, "403"),
        (b"<html>Forbidden</html>", "403"),
        (b"", "403"),
    ],
)
def test_a_403_names_the_registry_s_error_code_only_when_it_is_one(body: bytes, said: str) -> None:
    """A 403 refuses the repository (distribution-spec DENIED); the code the registry sends in
    the body of a GET's answer is its text, named only when it has the form of one (never a
    terminal's escape, never a page). A HEAD's answer has no body: its 403 is named alone."""

    def forbidden(request: Received, _: int) -> Answer:
        return 403, {"Content-Type": "application/json"}, body

    client = RegistryClient(RegistryAccess(timeout=5))
    with _loopback(forbidden) as server:
        host = f"127.0.0.1:{server.port}"
        try:
            read = client.manifest(parse_image(f"{host}/team/app:v1"), content=True)
            head = client.manifest(parse_image(f"{host}/team/app:v1"))
        finally:
            client.close()
    refused = f"{host} refused pull access to team/app"
    assert read == LookupFailed(LookupFailure.NOT_ALLOWED, f"{refused} ({said})")
    assert head == LookupFailed(LookupFailure.NOT_ALLOWED, f"{refused} (403)")


@pytest.mark.parametrize(
    "challenge",
    ['Bearer realm="https://auth.test/token",error="insufficient_scope"', 'Basic error="x"'],
)
def test_insufficient_scope_to_a_basic_login_is_a_refused_login(challenge: str) -> None:
    """`insufficient_scope` speaks of a token the registry took (RFC 6750 3.1): said to a
    basic login, the login was refused, as containerd reads a bearer challenge's `error` only
    after a token was sent (remotes/docker/authorizer.go, invalidAuthorization)."""

    def script(request: Received, _: int) -> Answer:
        if request.headers.get("authorization") != _basic(LOGIN):
            return 401, {"WWW-Authenticate": 'Basic realm="registry"'}, b""
        return 401, {"WWW-Authenticate": challenge}, b""

    client = RegistryClient(RegistryAccess(timeout=5))
    with _loopback(script) as server:
        host = f"127.0.0.1:{server.port}"
        try:
            result = client.lookup(
                parse_image(f"{host}/team/app:v1"), RegistryLogin(host, "robot", SECRET)
            )
        finally:
            client.close()
        assert _basic(LOGIN) in [r.headers.get("authorization") for r in server.received], (
            "precondition: the login was sent"
        )
    assert result == LookupFailed(
        LookupFailure.UNAUTHORIZED, f"{host} refused the credentials for team/app"
    )


@pytest.mark.parametrize(
    ("retry_after", "requests", "reason"),
    [
        ("-1", 11, "is rate limiting"),  # a wait below zero is no wait; ten retries, as client-go
        ("999999999", 1, "is rate limiting (asked to wait 999999999s)"),  # past the deadline
        ("99999999999999999999", 1, "is rate limiting"),  # not a number Go's Atoi takes
        ("soon\x1b[31m", 1, "is rate limiting"),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 1, "is rate limiting"),  # client-go ignores dates
    ],
)
def test_a_hostile_retry_after_is_clamped_never_a_crash(
    retry_after: str, requests: int, reason: str
) -> None:
    def script(request: Received, _: int) -> Answer:
        return 429, {"Retry-After": retry_after}, b"{}"

    with _loopback(script) as server:
        result = _lookup(server, timeout=2)
        assert result == LookupFailed(
            LookupFailure.RATE_LIMITED, f"127.0.0.1:{server.port} {reason}"
        )
        assert len(server.received) == requests


def test_one_deadline_bounds_the_whole_look_up() -> None:
    """Each answer comes in time on its own, the two a look-up needs together do not: the
    look-up ends at --request-timeout, not a timeout per request."""
    import time

    def slow(request: Received, _: int) -> Answer:
        time.sleep(0.35)
        return _no_digest_on_head((200, {"Content-Type": MANIFEST}, BODY))(request, 0)

    with _loopback(slow) as server:
        result = _lookup(server, timeout=0.5)
        assert result == LookupFailed(
            LookupFailure.TIMEOUT, f"127.0.0.1:{server.port} did not answer in time"
        )
        assert [r.method for r in server.received] == ["HEAD", "GET"]


def test_look_ups_keep_the_bound_in_flight_on_kept_alive_connections() -> None:
    """Three rounds of distinct tags: the first answers are held until LOOKUPS_IN_FLIGHT
    requests are in flight at once, so a pool that lets fewer out (a thread waiting for a
    connection) fails here instead of only being slower; no more go out than the bound, and
    every connection opened is kept alive for the next look-up, never one per request."""
    gate = threading.Barrier(LOOKUPS_IN_FLIGHT, timeout=10)
    lock = threading.Lock()
    in_flight = {"now": 0, "most": 0}

    def held(request: Received, index: int) -> Answer:
        with lock:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        try:
            if index < LOOKUPS_IN_FLIGHT:
                gate.wait()
            return _manifest(request, index)
        except threading.BrokenBarrierError:
            return 503, {}, b""
        finally:
            with lock:
                in_flight["now"] -= 1

    with _loopback(held) as server:
        images = [f"127.0.0.1:{server.port}/team/app-{i}:v1" for i in range(3 * LOOKUPS_IN_FLIGHT)]
        client = RegistryClient(RegistryAccess(timeout=30))
        try:
            results = client.resolve_all([(parse_image(image), ()) for image in images])
        finally:
            client.close()
        assert in_flight["most"] == LOOKUPS_IN_FLIGHT == 8
        assert set(results.values()) == {Resolved(SHA256, MANIFEST)}
        assert (len(results), client.requests_made, len(server.received)) == (24, 24, 24)
        assert server.counts["connections"] == LOOKUPS_IN_FLIGHT


PAGE = b"<html><body><h1>Please sign in</h1></body></html>"


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Content-Type": "text/html; charset=utf-8"}, "answered with a web page (text/html)"),
        ({"Content-Type": "text/html", "Docker-Content-Digest": SHA256}, "answered with a web"),
        ({}, "answered with something it did not name (no Content-Type)"),
        ({"Content-Type": "text/plain"}, "answered with text/plain"),
    ],
)
def test_a_host_that_answers_no_manifest_resolves_no_digest(
    headers: dict[str, str], reason: str
) -> None:
    """A captive portal or sign-in page answering 200 to every request: containerd takes the
    Content-Type as the manifest's media type (remotes/docker/resolver.go, Resolve and
    getManifestMediaType) and refuses one that is neither a manifest nor an index
    (core/images/image.go, Manifest), so no digest is resolved from it (refresh would pin one
    no machine can pull)."""

    def portal(request: Received, _: int) -> Answer:
        return 200, headers, PAGE

    with _loopback(portal) as server:
        result = _lookup(server)
        assert isinstance(result, LookupFailed), result
        assert result.failure is LookupFailure.MALFORMED
        assert result.reason.startswith(f"127.0.0.1:{server.port} {reason}")
        assert result.reason.endswith(", not an image manifest")
