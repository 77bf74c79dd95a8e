"""The transport against hostile servers on loopback: every request ends by its deadline and
within its byte cap, with the exact error class, bounded by counting what the server managed."""

import pytest

from tests.support import hostile
from tests.support.fake_apiserver import FakeApiServer
from tests.support.hostile import DRIP_CAP, DRIP_INTERVAL, HostileServer
from truegreen.http.deadline import Deadline
from truegreen.http.errors import (
    AnswerTooLargeError,
    ConnectionDroppedError,
    ProtocolViolationError,
    TimedOutError,
)
from truegreen.http.transport import Transport

DEADLINE = 0.5
# At one byte per DRIP_INTERVAL, a client that stops at its deadline receives about
# DEADLINE / DRIP_INTERVAL bytes; one whose timeout restarts with every byte never stops.
BOUNDED_DRIP = 4 * DEADLINE / DRIP_INTERVAL


def _get(server: HostileServer, *, max_bytes: int = 1 << 20, deadline: float = DEADLINE) -> None:
    with Transport() as transport:
        transport.request(
            "GET", server.url + "/", deadline=Deadline.after(deadline), max_bytes=max_bytes
        )


@pytest.mark.parametrize("behaviour", [hostile.drip_headers, hostile.drip_body])
def test_a_drip_ends_at_the_deadline(behaviour: hostile.Behaviour) -> None:
    with HostileServer(behaviour) as server:
        with pytest.raises(TimedOutError) as caught:
            _get(server)
        assert server.hung_up.wait(5), "the client never hung up on the drip"
    assert caught.value.connected is True
    assert not server.drip_capped.is_set()
    assert 0 < server.counts["bytes_sent"] < BOUNDED_DRIP + 60, server.counts


def test_a_huge_content_length_fails_before_the_body_is_read() -> None:
    with HostileServer(hostile.huge_content_length) as server:
        with pytest.raises(AnswerTooLargeError) as caught:
            _get(server, max_bytes=4096, deadline=30)
        assert server.hung_up.wait(5), "the client kept the connection after refusing the body"
    assert caught.value.limit == 4096


def test_an_endless_chunked_body_fails_as_soon_as_it_passes_the_cap() -> None:
    cap = 1 << 20
    with HostileServer(hostile.endless_chunked) as server:
        with pytest.raises(AnswerTooLargeError) as caught:
            _get(server, max_bytes=cap, deadline=30)
        assert server.hung_up.wait(10), "the client kept reading past its cap"
    assert caught.value.limit == cap
    assert not server.drip_capped.is_set()
    # What the server pushed before the hang-up: the cap plus what the socket buffers held.
    assert server.counts["bytes_sent"] < 16 * cap, server.counts


def test_garbage_is_a_protocol_violation() -> None:
    with HostileServer(hostile.garbage) as server, pytest.raises(ProtocolViolationError):
        _get(server, deadline=30)


def test_a_reset_mid_body_is_a_dropped_connection_sent_once() -> None:
    with HostileServer(hostile.reset_mid_body) as server, pytest.raises(ConnectionDroppedError):
        _get(server, deadline=30)
    assert server.counts["requests"] == 1


def test_a_server_that_never_answers_ends_at_the_deadline() -> None:
    with HostileServer(hostile.silent) as server:
        with pytest.raises(TimedOutError) as caught:
            _get(server)
        assert server.hung_up.wait(5)
    assert caught.value.connected is True
    assert server.counts["bytes_sent"] == 0


def test_a_listener_that_never_accepts_is_a_connect_timeout() -> None:
    with (
        hostile.full_backlog() as port,
        Transport() as transport,
        pytest.raises(TimedOutError) as caught,
    ):
        transport.request(
            "GET", f"http://127.0.0.1:{port}/", deadline=Deadline.after(0.5), max_bytes=10
        )
    assert caught.value.connected is False


def test_keep_alive_reuses_one_connection() -> None:
    with HostileServer(hostile.keep_alive) as server, Transport() as transport:
        for _ in range(3):
            answer = transport.request(
                "GET", server.url + "/", deadline=Deadline.after(10), max_bytes=100
            )
            assert (answer.status, answer.body) == (200, b'{"ok": true}')
    assert (server.counts["connections"], server.counts["requests"]) == (1, 3)


def test_a_pooled_connection_the_server_closed_still_gets_an_answer() -> None:
    """The server closed the kept-alive connection while it was idle: a new one is used."""
    with HostileServer(hostile.close_after_first_answer) as server, Transport() as transport:
        for _ in range(2):
            answer = transport.request(
                "GET", server.url + "/", deadline=Deadline.after(10), max_bytes=100
            )
            assert answer.status == 200
            server.hung_up.wait(0.3)  # let the server's close arrive
    assert (server.counts["connections"], server.counts["requests"]) == (2, 2)


def test_a_stale_pooled_connection_is_retried_once_on_a_fresh_one() -> None:
    """The server closed the kept-alive connection on reading our request, answering nothing:
    sent again, once, on a new connection."""
    with HostileServer(hostile.close_on_second_request) as server, Transport() as transport:
        first = transport.request(
            "GET", server.url + "/", deadline=Deadline.after(10), max_bytes=100
        )
        second = transport.request(
            "GET", server.url + "/", deadline=Deadline.after(10), max_bytes=100
        )
    assert (first.status, second.status) == (200, 200)
    assert (server.counts["connections"], server.counts["requests"]) == (2, 3)


def test_too_many_interim_answers_are_a_protocol_violation() -> None:
    """Go's transport passes over five 1xx answers at most (`max1xxResponses`)."""
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    with (
        HostileServer(hostile.answering(interim * 6 + hostile.ok_answer())) as server,
        Transport() as transport,
        pytest.raises(ProtocolViolationError, match="too many interim answers"),
    ):
        transport.request("GET", server.url + "/", deadline=Deadline.after(10), max_bytes=100)
    with (
        HostileServer(hostile.answering(interim * 5 + hostile.ok_answer())) as server,
        Transport() as transport,
    ):
        five = transport.request(
            "GET", server.url + "/", deadline=Deadline.after(10), max_bytes=100
        )
    assert five.status == 200


def test_a_write_is_not_resent_after_the_server_read_it() -> None:
    """A PATCH the server may have acted on is never sent twice."""
    with HostileServer(hostile.close_on_second_request) as server, Transport() as transport:
        transport.request("GET", server.url + "/", deadline=Deadline.after(10), max_bytes=100)
        with pytest.raises(ConnectionDroppedError):
            transport.request(
                "PATCH", server.url + "/", deadline=Deadline.after(10), max_bytes=100, body=b"{}"
            )
    assert (server.counts["connections"], server.counts["requests"]) == (1, 2)


def test_the_pool_holds_at_most_its_bound_per_host() -> None:
    import threading

    with HostileServer(hostile.keep_alive) as server, Transport(per_host=2) as transport:

        def fetch() -> None:
            for _ in range(5):
                transport.request(
                    "GET", server.url + "/", deadline=Deadline.after(20), max_bytes=100
                )

        workers = [threading.Thread(target=fetch) for _ in range(6)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
    assert server.counts["requests"] == 30
    assert server.counts["connections"] <= 2


def test_a_stream_yields_lines_and_caps_each() -> None:
    with HostileServer(hostile.lines(b'{"a": 1}', b'{"b": 2}')) as server, Transport() as t:
        stream = t.stream_lines(
            "GET", server.url + "/", deadline=Deadline.after(10), idle_seconds=5, max_line=100
        )
        assert stream.status == 200
        assert list(stream.lines()) == [b'{"a": 1}', b'{"b": 2}']
        stream.close()
    with HostileServer(hostile.lines(b"x" * 5000, hold=True)) as server, Transport() as t:
        with (
            t.stream_lines(
                "GET", server.url + "/", deadline=Deadline.after(10), idle_seconds=5, max_line=1000
            ) as stream,
            pytest.raises(AnswerTooLargeError) as caught,
        ):
            list(stream.lines())
        assert caught.value.limit == 1000


def test_a_quiet_stream_ends_at_its_idle_bound() -> None:
    with HostileServer(hostile.lines(b'{"a": 1}', hold=True)) as server, Transport() as t:
        with t.stream_lines(
            "GET", server.url + "/", deadline=Deadline.after(60), idle_seconds=0.3, max_line=100
        ) as stream:
            lines = stream.lines()
            first = next(lines)
            with pytest.raises(TimedOutError):
                next(lines)
        assert server.hung_up.wait(5), "closing the stream must release the connection"
    assert first == b'{"a": 1}'


def test_the_drip_bound_is_meaningful() -> None:
    """Precondition of the drip tests: the drip outlasts the deadline many times over."""
    assert DRIP_CAP * DRIP_INTERVAL > 20 * DEADLINE


def test_a_head_answer_s_length_is_not_a_body() -> None:
    """HEAD (the registry's digest look-up) announces the size of a body it does not send."""

    def head(peer: hostile.Peer, _: int) -> None:
        while peer.read_request() is not None:
            peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\nX-Digest: d\r\n\r\n")

    with HostileServer(head) as server, Transport() as transport:
        for _ in range(2):
            answer = transport.request(
                "HEAD", server.url + "/", deadline=Deadline.after(10), max_bytes=100
            )
            assert (answer.status, answer.header("x-digest"), answer.body) == (200, "d", b"")
    assert (server.counts["connections"], server.counts["requests"]) == (1, 2)


def test_watches_never_take_the_connections_the_short_requests_need(
    fake_api: FakeApiServer,
) -> None:
    """A monitor follows up to about 40 collections, each watch holding a connection for its
    whole life over HTTP/1.1: with `streams` below `per_host`, a watch past that bound waits
    (and ends at its deadline), while a request still gets a connection. Without the bound,
    the watches filled the pool and the monitor's Event writes timed out."""
    watch = fake_api.url + "/api/v1/namespaces/train/pods?watch=true"
    with Transport(per_host=2, streams=1) as transport:
        auth = (("authorization", "Bearer t0ken"),)
        first = transport.stream_lines(
            "GET",
            watch,
            deadline=Deadline.after(30),
            idle_seconds=30,
            max_line=1 << 16,
            headers=auth,
        )
        assert first.status == 200, "precondition: the first watch is open"
        with pytest.raises(TimedOutError, match="no connection came free for a watch"):
            transport.stream_lines(
                "GET",
                watch,
                deadline=Deadline.after(0.3),
                idle_seconds=30,
                max_line=1 << 16,
                headers=auth,
            )
        answer = transport.request(
            "GET",
            fake_api.url + "/api/v1/namespaces/train/pods",
            deadline=Deadline.after(5),
            max_bytes=1 << 20,
            headers=auth,
        )
        assert answer.status == 200
        first.close()
        again = transport.stream_lines(
            "GET",
            watch,
            deadline=Deadline.after(5),
            idle_seconds=30,
            max_line=1 << 16,
            headers=auth,
        )
        assert again.status == 200, "closing a watch gives its slot back"
        again.close()
