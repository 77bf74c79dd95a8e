"""Reading a body by its framing, over a stream that hands the wire over in arbitrary pieces:
the body comes out whole and exact however the bytes were split, and bad framing is refused."""

import itertools
import tracemalloc
from collections.abc import Callable

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.scripted_stream import ScriptedStream
from truegreen.http.deadline import Deadline
from truegreen.http.errors import (
    AnswerTooLargeError,
    ConnectionDroppedError,
    ProtocolViolationError,
)
from truegreen.http.framing import MAX_CHUNK_LINE, MAX_TRAILER_BYTES, BodyBuffers, FramedBody


class _Socket(ScriptedStream):
    """A wire whose every receive returns new bytes, as a socket's does."""

    def receive(self, deadline: Deadline) -> bytes:
        return bytes(bytearray(super().receive(deadline)))


def _split(wire: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(wire) + 1) for c in cuts} | {0, len(wire)})
    return [wire[a:b] for a, b in itertools.pairwise(points)]


def _pieces(body: FramedBody) -> bytes:
    """The body piece by piece, as a watch reads it."""
    deadline = Deadline.after(5)
    parts = []
    while (piece := body.next_piece(deadline)) is not None:
        parts.append(bytes(piece))
    return b"".join(parts)


def _whole(body: FramedBody) -> bytes | bytearray | memoryview:
    """The body at once, as an answer is read."""
    return body.read_all(Deadline.after(5), 1 << 30)


def _into_buffers(body: FramedBody) -> bytes | bytearray | memoryview:
    """The body at once into a buffer of a list's own, as a list's page is read."""
    return body.read_all(Deadline.after(5), 1 << 30, BodyBuffers())


_read = _whole
EACH_WAY = pytest.mark.parametrize(
    "read", [_pieces, _whole, _into_buffers], ids=["pieces", "whole", "into-buffers"]
)
WITH_OR_WITHOUT_BUFFERS = pytest.mark.parametrize(
    "into", [None, BodyBuffers], ids=["own", "into-buffers"]
)


def _chunked(body: bytes, sizes: list[int], extension: bytes = b"", trailer: bytes = b"") -> bytes:
    wire, at = b"", 0
    for size in sizes:
        piece = body[at : at + size]
        if not piece:
            break
        wire += b"%x%s\r\n%s\r\n" % (len(piece), extension, piece)
        at += len(piece)
    if at < len(body):
        wire += b"%x\r\n%s\r\n" % (len(body) - at, body[at:])
    return wire + b"0" + extension + b"\r\n" + trailer + b"\r\n"


@settings(max_examples=300, deadline=None)
@given(
    body=st.binary(max_size=3000),
    sizes=st.lists(st.integers(1, 700), max_size=12),
    cuts=st.lists(st.integers(0, 10_000), max_size=20),
    head_share=st.integers(0, 10_000),
    extension=st.sampled_from([b"", b";name=value", b' ; q="x;y"', b"\t"]),
    trailer=st.sampled_from([b"", b"Checksum: abc\r\n", b"A: 1\r\nB: 2\r\n"]),
)
@EACH_WAY
def test_a_chunked_body_comes_out_exact_however_the_wire_is_split(
    read: Callable[[FramedBody], bytes],
    body: bytes,
    sizes: list[int],
    cuts: list[int],
    head_share: int,
    extension: bytes,
    trailer: bytes,
) -> None:
    wire = _chunked(body, sizes, extension, trailer)
    buffered = wire[: head_share % (len(wire) + 1)]  # what arrived together with the head
    reader = FramedBody(ScriptedStream(_split(wire[len(buffered) :], cuts)), buffered, None)
    assert read(reader) == body
    assert reader.leftover is False


@settings(max_examples=200, deadline=None)
@given(
    body=st.binary(max_size=3000),
    cuts=st.lists(st.integers(0, 10_000), max_size=20),
    head_share=st.integers(0, 10_000),
)
@EACH_WAY
def test_a_declared_length_body_comes_out_exact_however_the_wire_is_split(
    read: Callable[[FramedBody], bytes], body: bytes, cuts: list[int], head_share: int
) -> None:
    buffered = body[: head_share % (len(body) + 1)]
    reader = FramedBody(ScriptedStream(_split(body[len(buffered) :], cuts)), buffered, len(body))
    assert read(reader) == body
    assert reader.leftover is False


def test_the_reader_stops_at_the_declared_length_and_says_more_arrived() -> None:
    wire = ScriptedStream([b"abc", b"deHTTP/1.1 200 OK\r\n"])
    reader = FramedBody(wire, b"", 5)
    assert _read(reader) == b"abcde"
    assert reader.leftover is True
    assert wire.received == 3 + 19  # nothing was asked for after the body's last byte


def test_bytes_after_the_last_chunk_are_leftover_not_body() -> None:
    reader = FramedBody(ScriptedStream([]), b"3\r\nabc\r\n0\r\n\r\nextra", None)
    assert _read(reader) == b"abc"
    assert reader.leftover is True


@pytest.mark.parametrize("buffered", [b"100000\r\n", b"2\r\nab\r\n100000\r\n"])
@WITH_OR_WITHOUT_BUFFERS
def test_a_chunk_announced_past_the_cap_fails_before_its_bytes_are_read(
    buffered: bytes, into: type[BodyBuffers] | None
) -> None:
    wire = ScriptedStream([b"x" * 10] * 1000)
    with pytest.raises(AnswerTooLargeError):
        FramedBody(wire, buffered, None).read_all(Deadline.after(5), 4096, into() if into else None)
    assert wire.received <= 10


@WITH_OR_WITHOUT_BUFFERS
def test_whole_chunks_past_the_cap_fail_once_they_pass_it(into: type[BodyBuffers] | None) -> None:
    wire = ScriptedStream([_chunked(b"y" * 100_000, [100] * 1000)])
    with pytest.raises(AnswerTooLargeError):
        FramedBody(wire, b"", None).read_all(Deadline.after(5), 4096, into() if into else None)


@pytest.mark.parametrize(
    "wire",
    [
        b"zz\r\nab\r\n0\r\n\r\n",  # not hexadecimal
        b"\r\nab\r\n0\r\n\r\n",  # no size at all
        b"-2\r\nab\r\n0\r\n\r\n",  # a sign
        b"0x2\r\nab\r\n0\r\n\r\n",  # a prefix
        b"1" * 17 + b"\r\n",  # more digits than any length
        b"2\r\nabXY0\r\n\r\n",  # the chunk does not end with CRLF
        b"2\r\nabXY3\r\nabc\r\n0\r\n\r\n",  # nor here, with a whole chunk after it
        b"2\r\nab\n0\r\n\r\n",  # a bare LF
    ],
)
def test_a_chunked_framing_that_is_not_valid_is_refused(wire: bytes) -> None:
    with pytest.raises(ProtocolViolationError):
        _read(FramedBody(ScriptedStream([wire]), b"", None))


def test_an_endless_size_line_is_refused_within_its_bound() -> None:
    wire = ScriptedStream([b"1" * 1000] * 100)
    with pytest.raises(ProtocolViolationError, match="too long"):
        _read(FramedBody(wire, b"", None))
    assert wire.received <= MAX_CHUNK_LINE + 1000


def test_an_endless_trailer_section_is_refused_within_its_bound() -> None:
    wire = ScriptedStream([b"X-Pad: " + b"p" * 100 + b"\r\n"] * 10_000)
    with pytest.raises(ProtocolViolationError, match="trailer"):
        _read(FramedBody(wire, b"0\r\n", None))
    assert wire.received <= MAX_TRAILER_BYTES + 2 * MAX_CHUNK_LINE


@pytest.mark.parametrize(
    ("buffered", "length"),
    [(b"5\r\nab", None), (b"5\r\nabcde", None), (b"5\r\nabcde\r\n", None), (b"abc", 5)],
)
def test_a_body_cut_short_is_a_dropped_connection(buffered: bytes, length: int | None) -> None:
    with pytest.raises(ConnectionDroppedError):
        _read(FramedBody(ScriptedStream([]), buffered, length))


def test_an_empty_declared_body_asks_the_stream_for_nothing() -> None:
    wire = ScriptedStream([b"next answer"])
    reader = FramedBody(wire, b"", 0)
    assert _read(reader) == b""
    assert wire.received == 0


def test_a_size_line_longer_than_its_bound_is_refused_even_when_whole() -> None:
    wire = b"1;" + b"e" * MAX_CHUNK_LINE + b"\r\nx\r\n0\r\n\r\n"
    with pytest.raises(ProtocolViolationError, match="too long"):
        _read(FramedBody(ScriptedStream([wire]), b"", None))


@pytest.mark.parametrize("length", [None, 2_000_000], ids=["chunked", "declared"])
def test_a_long_body_is_held_once_while_it_is_read(length: int | None) -> None:
    # A list's page is 3-4 MB: pieces kept to be joined would hold it twice at the end, and
    # scatter malloc's heap with page-sized holes (docs/performance.md).
    body = bytes(range(256)) * (2_000_000 // 256) + b"x" * (2_000_000 % 256)
    wire = body if length else _chunked(body, [3400, 3700] * 300)
    socket = _Socket([wire[at : at + 65536] for at in range(0, len(wire), 65536)])
    tracemalloc.start()
    try:
        read = FramedBody(socket, b"", length).read_all(Deadline.after(5), 1 << 30)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert bytes(read) == body
    assert peak < 1.3 * len(body)


def _chunked_into(buffers: BodyBuffers, body: bytes) -> memoryview:
    read = FramedBody(ScriptedStream([_chunked(body, [1000] * (len(body) // 1000 + 1))]), b"", None)
    view = read.read_all(Deadline.after(5), 1 << 30, buffers)
    assert isinstance(view, memoryview)
    return view


def test_a_buffer_is_reused_only_once_no_body_views_it() -> None:
    buffers = BodyBuffers()
    first = _chunked_into(buffers, b"a" * 5000)
    second = _chunked_into(buffers, b"b" * 3000)  # the first is still held
    assert second.obj is not first.obj
    assert (bytes(first), bytes(second)) == (b"a" * 5000, b"b" * 3000)
    buffer = first.obj
    del first
    third = _chunked_into(buffers, b"c" * 2000)
    assert third.obj is buffer  # taken again, from its start
    assert bytes(third) == b"c" * 2000


class _RawPage(msgspec.Struct):
    items: list[msgspec.Raw]


def test_a_decoded_page_keeps_its_buffer_from_the_pages_after_it() -> None:
    # A page's msgspec.Raw fields point into the buffer itself: it must not be written again.
    buffers = BodyBuffers()
    body = _chunked_into(buffers, b'{"items":[{"name":"p0"},{"name":"p1"}]}')
    page = msgspec.json.decode(body, type=_RawPage)
    buffer = body.obj
    del body
    after = _chunked_into(buffers, b'{"items":[{"name":"XX"},{"name":"YY"}]}')
    assert after.obj is not buffer
    assert [bytes(raw) for raw in page.items] == [b'{"name":"p0"}', b'{"name":"p1"}']


def test_a_body_larger_than_a_new_buffer_grows_it_and_comes_out_exact() -> None:
    body = bytes(range(256)) * (3 * BodyBuffers.FIRST_SIZE // 256 + 7)
    wire = _chunked(body, [3400, 3700] * 500)
    pieces = [wire[at : at + 65536] for at in range(0, len(wire), 65536)]
    chunked = FramedBody(ScriptedStream(pieces), b"", None)
    assert bytes(chunked.read_all(Deadline.after(5), 1 << 30, BodyBuffers())) == body
    declared = FramedBody(ScriptedStream([body[:65536], body[65536:]]), b"", len(body))
    assert bytes(declared.read_all(Deadline.after(5), 1 << 30, BodyBuffers())) == body
