"""The monitor's status server under clients that misbehave, on loopback: a head trickled in
line by line or byte by byte, more connections than it serves, clients that reset mid-request;
and the addresses it listens on (Go's net/http: ReadHeaderTimeout bounds the whole head; `:PORT`
listens on IPv6 and IPv4)."""

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest

from truegreen.monitor.server import Page, StatusServer, parse_listen

ROUTES = {"/healthz": lambda: Page(200, "text/plain; charset=utf-8", b"ok\n")}


@pytest.fixture
def said() -> list[str]:
    return []


@pytest.fixture
def server(said: list[str]) -> Iterator[StatusServer]:
    running = StatusServer(
        ("127.0.0.1", 0), ROUTES, on_client_error=said.append, head_seconds=1.0, max_connections=4
    ).start()
    yield running
    running.stop()


def _get(
    host: str,
    port: int,
    family: socket.AddressFamily = socket.AF_INET,
    line: bytes = b"GET /healthz HTTP/1.1",
) -> bytes:
    with socket.socket(family) as client:
        client.settimeout(5)
        client.connect((host, port))
        client.sendall(line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := client.recv(4096):
            answer += chunk
    return answer


def test_a_head_trickled_in_line_by_line_is_cut_at_its_deadline(server: StatusServer) -> None:
    """One header line every 0.3 s would keep a per-read timeout of 1 s waiting forever; the
    whole head has 1 s, so the server closes the connection within a second or so."""
    host, port = server.address
    assert _get(host, port).startswith(b"HTTP/1.0 200"), "precondition: it serves"
    with socket.create_connection((host, port), timeout=10) as slow:
        slow.sendall(b"GET /healthz HTTP/1.1\r\n")
        dropped = False
        for index in range(30):  # up to 9 s of trickling
            time.sleep(0.3)
            try:
                slow.sendall(f"X-Slow-{index}: 1\r\n".encode())
            except OSError:
                dropped = True
                break
            slow.setblocking(False)
            try:
                if slow.recv(1) == b"":
                    dropped = True
                    break
            except BlockingIOError:
                pass
            finally:
                slow.setblocking(True)
    assert dropped, "the trickling client was never dropped"


def test_connections_past_the_bound_are_closed_and_start_no_thread() -> None:
    """Four requests being answered hold the four slots (their page waits); twenty more
    connections are closed at once (each read ends well inside its 5 s socket timeout), with no
    thread started for them, since none of the four is waiting for its head and could make
    room; once the four are answered, it serves again."""
    release = threading.Event()

    def slow_page() -> Page:
        release.wait(30)
        return Page(200, "text/plain; charset=utf-8", b"slow\n")

    routes = {**ROUTES, "/slow": slow_page}
    server = StatusServer(("127.0.0.1", 0), routes, head_seconds=30.0, max_connections=4)
    server.start()
    host, port = server.address
    try:
        busy = [socket.create_connection((host, port), timeout=10) for _ in range(4)]
        for client in busy:
            client.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.3)  # let the server take them (not a measurement)
        threads = threading.active_count()
        extra = [socket.create_connection((host, port), timeout=5) for _ in range(20)]
        for client in extra:
            with contextlib.suppress(ConnectionResetError):
                assert client.recv(1) == b"", "refused: closed, nothing served"
            client.close()
        assert threading.active_count() <= threads, "no thread for a refused connection"
        release.set()
        for client in busy:
            assert client.recv(12) == b"HTTP/1.0 200"
            client.close()
        deadline = time.monotonic() + 10
        answer = b""
        while not answer.startswith(b"HTTP/1.0 200") and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                answer = _get(host, port)
        assert answer.startswith(b"HTTP/1.0 200"), "the slots came back"
    finally:
        release.set()
        server.stop()


def test_a_client_that_resets_mid_request_is_one_line(
    server: StatusServer, said: list[str]
) -> None:
    host, port = server.address
    for _ in range(3):
        client = socket.create_connection((host, port), timeout=5)
        client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # no blank line yet
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # RST
    deadline = time.monotonic() + 5
    while len(said) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(said) <= 3
    assert all("\n" not in line and line.startswith("a client of the status page") for line in said)


def test_ipv6_loopback_and_every_address_on_both_families() -> None:
    assert parse_listen("[::1]:0") == ("::1", 0)
    six = StatusServer(parse_listen("[::1]:0"), ROUTES).start()
    try:
        assert _get("::1", six.address[1], socket.AF_INET6).startswith(b"HTTP/1.0 200")
    finally:
        six.stop()
    every = StatusServer(parse_listen(":0"), ROUTES).start()
    try:
        port = every.address[1]
        assert _get("127.0.0.1", port).startswith(b"HTTP/1.0 200")
        assert _get("::1", port, socket.AF_INET6).startswith(b"HTTP/1.0 200")
    finally:
        every.stop()


@pytest.mark.parametrize(
    ("line", "status"),
    [
        (b"GET http://127.0.0.1/healthz HTTP/1.1", b"HTTP/1.0 200 OK"),
        (b"GET HTTP://127.0.0.1:9108/healthz?x=1 HTTP/1.1", b"HTTP/1.0 200 OK"),
        (b"HEAD http://127.0.0.1/healthz HTTP/1.1", b"HTTP/1.0 200 OK"),
        (b"GET http://127.0.0.1/nothing HTTP/1.1", b"HTTP/1.0 404 Not Found"),
        (b"GET /metrics HTTP/2.0", b"HTTP/1.0 505 HTTP Version Not Supported"),
        (b"GET /healthz", b"HTTP/1.0 400 Bad Request"),
    ],
)
def test_a_request_target_in_absolute_form_is_routed_and_every_answer_has_a_status_line(
    server: StatusServer, line: bytes, status: bytes
) -> None:
    """RFC 9112 section 3.2.2: a server MUST accept a target in absolute form, as a proxy
    forwards it; Go's server routes on its path (net/http server.go: ServeMux matches
    r.URL.Path). A version other than HTTP/1.x is refused with a status line: Go answers 505
    (server.go `readRequest`: `http1ServerSupportsRequest`), and a request line without one
    (HTTP/0.9) 400 (request.go `parseRequestLine`: "malformed HTTP request")."""
    host, port = server.address
    answer = _get(host, port, line=line)
    assert answer.split(b"\r\n", 1)[0] == status, answer[:200]


def _trickle_byte_by_byte(host: str, port: int, seconds: float, outcome: list[float]) -> None:
    """A slowloris client: a header line begun and never ended, one byte every 0.25 s; it
    records how long the server kept the connection open (or `seconds` if it never closed)."""
    with socket.create_connection((host, port), timeout=10) as slow:
        slow.sendall(b"GET /healthz HTTP/1.1\r\nX-Pad: ")
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            time.sleep(0.25)
            try:
                slow.sendall(b"a")
                slow.setblocking(False)
                try:
                    if slow.recv(1) == b"":
                        break
                except BlockingIOError:
                    pass
                finally:
                    slow.setblocking(True)
            except OSError:
                break
        outcome.append(time.monotonic() - started)


def test_a_head_trickled_byte_by_byte_is_cut_at_its_deadline_and_honest_clients_are_served(
    said: list[str],
) -> None:
    """Go's net/http server.go (*conn).readRequest: `hdrDeadline = t0.Add(ReadHeaderTimeout)`;
    `c.rwc.SetReadDeadline(hdrDeadline)` is one absolute deadline for the whole head, however
    the bytes trickle in (a socket timeout bounds each recv, so a byte every 0.25 s would keep a
    line open forever). Four slow clients fill the four slots: an honest client is still
    served at once (the one that has waited longest for its head is closed to make room), and
    every slow one is closed by its 2 s deadline."""
    server = StatusServer(
        ("127.0.0.1", 0), ROUTES, on_client_error=said.append, head_seconds=2.0, max_connections=4
    ).start()
    host, port = server.address
    try:
        kept_open: list[float] = []
        slow = [
            threading.Thread(target=_trickle_byte_by_byte, args=(host, port, 8.0, kept_open))
            for _ in range(4)
        ]
        for client in slow:
            client.start()
        time.sleep(0.5)  # all four are trickling (not a measurement)
        assert _get(host, port).startswith(b"HTTP/1.0 200"), "an honest client is served"
        for client in slow:
            client.join()
        assert len(kept_open) == 4
        assert max(kept_open) < 3.0, f"slow heads kept open {sorted(kept_open)} s (deadline 2 s)"
    finally:
        server.stop()


def _head_and_body(answer: bytes) -> tuple[list[bytes], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n"), body


@pytest.mark.parametrize("method", [b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"BREW"])
def test_a_method_other_than_get_or_head_is_405_with_allow(
    server: StatusServer, method: bytes
) -> None:
    """RFC 9110 section 15.5.6: a 405 MUST carry Allow. Go's ServeMux answers a path it serves
    for other methods so (net/http server.go `(*ServeMux).findHandler`: `Allow` from
    `matchingMethods`, HEAD beside GET, then `Error(w, StatusText(405), 405)`), a short plain
    line as body; http.server would answer 501 with an HTML page."""
    host, port = server.address
    answer = _get(host, port, line=method + b" /healthz HTTP/1.1")
    head, body = _head_and_body(answer)
    assert head[0] == b"HTTP/1.0 405 Method Not Allowed", answer[:200]
    assert b"Allow: GET, HEAD" in head[1:]
    assert b"Content-Type: text/plain; charset=utf-8" in head[1:]
    assert body == b"Method Not Allowed\n"


def test_a_method_other_than_get_or_head_on_a_path_not_served_is_404(
    server: StatusServer,
) -> None:
    """Go's ServeMux: no pattern for the path under any method is Not Found, whatever the
    method (`findHandler` falls back to NotFoundHandler when `matchingMethods` is empty)."""
    host, port = server.address
    head, body = _head_and_body(_get(host, port, line=b"POST /nothing HTTP/1.1"))
    assert head[0] == b"HTTP/1.0 404 Not Found"
    assert not any(line.startswith(b"Allow:") for line in head)
    assert body == b"not found\n"


def test_the_server_header_is_the_name_alone(server: StatusServer) -> None:
    """http.server writes `server_version + " " + sys_version`: with no sys_version, a
    trailing space (RFC 9110 section 10.2.4: Server is product tokens, nothing after)."""
    host, port = server.address
    head, _ = _head_and_body(_get(host, port))
    assert [line for line in head if line.startswith(b"Server:")] == [b"Server: truegreen"]


def test_a_client_that_never_reads_its_answer_is_closed_at_the_write_deadline(
    said: list[str],
) -> None:
    """Go's http.Server WriteTimeout (server.go `(*conn).readRequest`: `SetWriteDeadline`):
    an answer larger than the client's receive window, which it never reads, stops being
    written at the deadline; the connection is closed with one line, and its slot (the only
    one here) serves the next client. The head's 30 s are not what bounds the answer."""
    body = b"x" * (16 << 20)  # far past the socket buffers on both sides
    routes = {**ROUTES, "/big": lambda: Page(200, "text/plain; charset=utf-8", body)}
    server = StatusServer(
        ("127.0.0.1", 0),
        routes,
        on_client_error=said.append,
        head_seconds=30.0,
        write_seconds=0.5,
        max_connections=1,
    ).start()
    host, port = server.address
    try:
        with socket.socket() as stalled:
            stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # before connect
            stalled.settimeout(10)
            stalled.connect((host, port))
            stalled.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            waited = time.monotonic() + 10
            while not said and time.monotonic() < waited:
                time.sleep(0.05)  # not reading: the server's writes stall
            assert said == [
                "a client of the status page at 127.0.0.1 was dropped "
                "(it did not take its answer within 0.5 s)"
            ]
            taken = 0
            with contextlib.suppress(ConnectionResetError):
                while chunk := stalled.recv(1 << 16):
                    taken += len(chunk)
            assert 0 < taken < len(body), "the answer was cut and the connection closed"
        answer = b""
        waited = time.monotonic() + 10
        while not answer.startswith(b"HTTP/1.0 200") and time.monotonic() < waited:
            with contextlib.suppress(OSError):
                answer = _get(host, port)
        assert answer.startswith(b"HTTP/1.0 200"), "the slot came back"
    finally:
        server.stop()
