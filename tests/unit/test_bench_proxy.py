"""The bench's link (bench/latency_proxy.py) charges what a real network charges: a round trip
for every request, and one for every new connection before its first byte goes on.

A TCP connection is set up by a handshake (SYN, SYN-ACK) that takes a round trip before the
client can send (RFC 9293 section 3.5). kubectl sends every request over one HTTP/2 connection
(kubernetes/apimachinery pkg/util/net/http.go SetTransportDefaults, which calls
http2.ConfigureTransport unless DISABLE_HTTP2 is set), so a link that made opening connections
free would favour a client that opens many. No wall-clock time is asserted: the proxy's own
ledger of what it charged is, and when.
"""

import socket
import threading
from typing import Any

from bench.latency_proxy import LatencyProxy

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


class _Upstream:
    """A loopback server answering each request line; at each connection's first byte it notes
    how many round trips the proxy had charged by then. Nothing more is charged until it
    answers (the client waits for each answer before it asks again or connects anew), so the
    count is exact however late this thread runs; at its accept it would not be."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.proxy: Any = None
        self.charged_at_first_byte: list[int | None] = []
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            first = True
            while connection.recv(65536):
                if first:
                    charged = getattr(self.proxy, "round_trips_charged", None)
                    self.charged_at_first_byte.append(charged)
                    first = False
                connection.sendall(ANSWER)


def _ask(connection: socket.socket) -> bytes:
    connection.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = b""
    while not answer.endswith(b"ok"):
        answer += connection.recv(65536)
    return answer


def test_each_connection_costs_a_round_trip_before_its_first_byte_goes_on() -> None:
    upstream = _Upstream()
    with LatencyProxy(upstream.port, 0.001) as proxy:
        upstream.proxy = proxy
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as first:
            assert _ask(first) == ANSWER
            assert _ask(first) == ANSWER
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as second:
            assert _ask(second) == ANSWER
    upstream.listener.close()
    # The first connection's request reached the server after its set-up and itself were
    # charged (2); the second's after the first's set-up and two requests, its own set-up and
    # itself (5).
    assert upstream.charged_at_first_byte == [2, 5], "a request reached the server uncharged"
    assert (proxy.connections, proxy.requests) == (2, 3)
    assert proxy.round_trips_charged == 5, "2 connections and 3 requests: 5 round trips"


def test_a_proxy_on_a_network_address_answers_only_this_machine() -> None:
    """The compression part listens on this machine's network address (doctor asks for gzip
    only from a server that is not on loopback): a connection from any other address is
    closed before anything reaches the server behind it."""
    upstream = _Upstream()
    with LatencyProxy(upstream.port, 0.0, peers=("192.0.2.1",)) as proxy:
        upstream.proxy = proxy
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as stranger:
            stranger.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                answer = stranger.recv(65536)
            except ConnectionResetError:  # closed with the request unread
                answer = b""
            assert answer == b"", "the connection was answered"
        assert (proxy.connections, proxy.requests) == (1, 0)
    upstream.listener.close()
    assert upstream.accepted == 0, "a connection reached the server"
