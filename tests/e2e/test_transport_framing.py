"""Bodies read by their framing (a declared length, or chunked as kube-apiserver's Go server
sends a big list) over real loopback connections: exact bodies, the connection kept only when
both sides allow it and nothing followed the body, and a chunk too large refused unread."""

import pytest

from tests.support import hostile
from tests.support.hostile import HostileServer
from truegreen.http.deadline import Deadline
from truegreen.http.errors import AnswerTooLargeError, InvalidRequestError, ProtocolViolationError
from truegreen.http.transport import Response, Transport

BODY = bytes(range(256)) * 400  # 100 KiB: several receives, several chunks


def _three_gets(server: HostileServer) -> list[Response]:
    with Transport() as transport:
        return [
            transport.request(
                "GET", server.url + "/", deadline=Deadline.after(10), max_bytes=1 << 20
            )
            for _ in range(3)
        ]


@pytest.mark.parametrize(
    "answer",
    [
        hostile.chunked_answer(BODY, 4096),
        hostile.chunked_answer(BODY, len(BODY)),  # the whole list in one Write, one chunk
        hostile.ok_answer(BODY),
    ],
    ids=["chunks-of-4k", "one-chunk", "content-length"],
)
def test_a_framed_body_is_read_exactly_on_one_kept_alive_connection(answer: bytes) -> None:
    with HostileServer(hostile.answering(answer)) as server:
        answers = _three_gets(server)
    assert [(a.status, a.body) for a in answers] == [(200, BODY)] * 3
    assert (server.counts["connections"], server.counts["requests"]) == (1, 3)


@pytest.mark.parametrize(
    "answer",
    [
        hostile.ok_answer(BODY, close=True),
        hostile.ok_answer(BODY).replace(b"HTTP/1.1", b"HTTP/1.0", 1),
        hostile.chunked_answer(BODY, 4096).replace(b"\r\n", b"\r\nConnection: close\r\n", 1),
    ],
    ids=["close", "http-1.0", "chunked-close"],
)
def test_an_answer_that_closes_the_connection_is_not_followed_on_it(answer: bytes) -> None:
    """The server here would go on reading requests; the client must not send them."""
    with HostileServer(hostile.answering(answer)) as server:
        answers = _three_gets(server)
    assert [(a.status, a.body) for a in answers] == [(200, BODY)] * 3
    assert (server.counts["connections"], server.counts["requests"]) == (3, 3)


def test_bytes_after_the_body_end_the_connection_not_the_answer() -> None:
    """Whatever follows a body is no answer to anything we asked: not read as the next one."""
    stray = b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nforged!"
    with HostileServer(hostile.answering(hostile.chunked_answer(BODY, 4096) + stray)) as server:
        answers = _three_gets(server)
    assert [(a.status, a.body) for a in answers] == [(200, BODY)] * 3
    assert server.counts["connections"] == 3


def test_a_chunk_announced_past_the_cap_fails_before_it_is_read() -> None:
    with HostileServer(hostile.huge_chunk) as server:
        with pytest.raises(AnswerTooLargeError) as caught, Transport() as transport:
            transport.request("GET", server.url + "/", deadline=Deadline.after(30), max_bytes=4096)
        assert server.hung_up.wait(5), "the client kept the connection after refusing the body"
    assert caught.value.limit == 4096


def test_bytes_after_an_answer_without_a_body_end_the_connection() -> None:
    """A 204 has no body, so whatever follows its head is no answer to anything we asked."""
    stray = b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nforged!"
    with HostileServer(hostile.answering(b"HTTP/1.1 204 No Content\r\n\r\n" + stray)) as server:
        answers = _three_gets(server)
    assert [(a.status, a.body) for a in answers] == [(204, b"")] * 3
    assert server.counts["connections"] == 3


def test_an_answer_without_a_body_keeps_the_connection() -> None:
    with HostileServer(hostile.answering(b"HTTP/1.1 204 No Content\r\n\r\n")) as server:
        answers = _three_gets(server)
    assert [(a.status, a.body) for a in answers] == [(204, b"")] * 3
    assert (server.counts["connections"], server.counts["requests"]) == (1, 3)


def _until_close(peer: hostile.Peer, _: int) -> None:
    """An HTTP/1.1 answer with neither length nor chunks: its body ends with the connection."""
    if peer.read_request() is not None:
        peer.send(b"HTTP/1.1 200 OK\r\n\r\n" + BODY)


def test_a_body_without_framing_ends_where_the_connection_does() -> None:
    with HostileServer(_until_close) as server:
        answers = _three_gets(server)
    assert [(a.status, a.body) for a in answers] == [(200, BODY)] * 3
    assert server.counts["connections"] == 3


def test_interim_answers_are_passed_over() -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
    with HostileServer(hostile.answering(interim + hostile.ok_answer(BODY))) as server:
        answers = _three_gets(server)
    assert [(a.status, a.body) for a in answers] == [(200, BODY)] * 3
    assert server.counts["connections"] == 1


def test_switching_protocols_unasked_is_a_protocol_violation() -> None:
    switch = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"
    with (
        HostileServer(hostile.answering(switch + hostile.ok_answer(BODY))) as server,
        pytest.raises(ProtocolViolationError, match="switched protocols"),
    ):
        _three_gets(server)


def test_a_header_that_would_split_the_request_is_never_sent() -> None:
    """Refused before a connection is made: the server never hears of it."""
    with HostileServer(hostile.answering(hostile.ok_answer(BODY))) as server, Transport() as t:
        with pytest.raises(InvalidRequestError, match="'authorization' header"):
            t.request(
                "GET",
                server.url + "/",
                deadline=Deadline.after(10),
                max_bytes=1 << 20,
                headers=[("authorization", "Bearer abc\r\nX-Injected: 1")],
            )
        answer = t.request("GET", server.url + "/", deadline=Deadline.after(10), max_bytes=1 << 20)
    assert answer.body == BODY, "precondition: the server answers a request that can be sent"
    assert (server.counts["connections"], server.counts["requests"]) == (1, 1)


def test_a_request_that_asks_to_close_is_not_followed_on_its_connection() -> None:
    with HostileServer(hostile.answering(hostile.ok_answer(BODY))) as server, Transport() as t:
        answers = [
            t.request(
                "GET",
                server.url + "/",
                deadline=Deadline.after(10),
                max_bytes=1 << 20,
                headers=[("connection", "close")],
            )
            for _ in range(3)
        ]
    assert [(a.status, a.body) for a in answers] == [(200, BODY)] * 3
    assert (server.counts["connections"], server.counts["requests"]) == (3, 3)


def test_a_trailer_section_ended_by_bare_line_feeds_ends_the_answer_not_the_deadline() -> None:
    """The server keeps the connection open after its answer, as a kept-alive one does: the
    answer ends at the trailer section's empty line, by h11's rule for a head (CRLF or LF),
    not at the request's deadline."""
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    with (
        HostileServer(hostile.answering(head + b"2\r\nab\r\n0\r\nX-Sum: 1\n\n")) as server,
        Transport() as transport,
    ):
        answer = transport.request(
            "GET", server.url + "/", deadline=Deadline.after(30), max_bytes=100
        )
    assert (answer.status, answer.body) == (200, b"ab")
