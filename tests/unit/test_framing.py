"""Reading a body by its framing, over a stream that hands the wire over in arbitrary pieces:
the body comes out whole and exact however the bytes were split, and bad framing is refused."""

import itertools
import tracemalloc
from collections.abc import Callable

import h11
import msgspec
import pytest
from hypothesis import assume, example, given, settings
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
    extension=st.sampled_from([b"", b";name=value", b'; q="x;y" ;b', b"\t"]),
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
        b"2\nab\r\n0\r\n\r\n",  # a size line ended by a bare LF (Go: "bare LF")
        b"22\nab\r\n0\r\n\r\n",  # the same, where the LF's last byte would pass for a CR
        b"2;a\rb\r\nab\r\n0\r\n\r\n",  # a bare CR in an extension (Go: "invalid CR")
        b"2;a\nb\r\nab\r\n0\r\n\r\n",  # a bare LF in an extension
        b"2\r\r\nab\r\n0\r\n\r\n",  # a CR before the CRLF
        b'2;a="open\r\nab\r\n0\r\n\r\n',  # an unclosed quoted string
        b"2;=v\r\nab\r\n0\r\n\r\n",  # an extension without a name
        b"2;a b\r\nab\r\n0\r\n\r\n",  # two words where one token goes
        b"2;a\x00\r\nab\r\n0\r\n\r\n",  # a control character
        b"0\r\nnot a field\r\n\r\n",  # a trailer line that is no field
        b"0\r\n: no name\r\n\r\n",
        b"0\r\n continued\r\n\r\n",  # a continuation of nothing
        b"0\r\nX: a\x00b\r\n\r\n",
    ],
)
def test_a_chunked_framing_that_is_not_valid_is_refused(wire: bytes) -> None:
    with pytest.raises(ProtocolViolationError):
        _read(FramedBody(ScriptedStream([wire]), b"", None))


@pytest.mark.parametrize(
    "ending", [b"\n", b"X-Sum: 1\n\n", b"X-Sum: 1\r\n\n", b"X-Sum: 1\n\r\n", b"A: 1\n B\r\n\r\n"]
)
def test_a_trailer_section_ends_at_its_empty_line_whatever_its_line_ends(ending: bytes) -> None:
    """As h11 ends a head (and its trailers): CRLF or LF. It ended only at CRLF CRLF, so a
    server that ended it with LF left the read waiting until the deadline."""
    wire = ScriptedStream([b"2\r\nab\r\n0\r\n" + ending + b"next"])
    reader = FramedBody(wire, b"", None)
    assert _read(reader) == b"ab"
    assert reader.leftover is True  # "next": nothing of it was taken as the trailer's


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


# -- held to h11 ------------------------------------------------------------------------------

_HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def _by_h11(wire: bytes) -> bytes | str:
    """The body h11 reads from a chunked `wire`, or why it reads none."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    client.send(h11.EndOfMessage())
    client.receive_data(_HEAD + wire)
    body = b""
    try:
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                return "cut short"
            if isinstance(event, h11.Data):
                body += bytes(event.data)
            if isinstance(event, h11.EndOfMessage):
                return body
    except h11.RemoteProtocolError:
        return "refused"


def _by_us(wire: bytes) -> bytes | str:
    try:
        return bytes(_read(FramedBody(ScriptedStream([wire]), b"", None)))
    except ProtocolViolationError:
        return "refused"
    except ConnectionDroppedError:
        return "cut short"
    except AnswerTooLargeError:
        return "too large"  # a size past the cap: h11, which has none, waits for it


_TOKENS = st.sampled_from([b"a", b"name", b"x-1", b"!#$%&'*+.^_`|~"])
_QUOTED = st.lists(
    st.sampled_from([b"a", b" ", b"\t", b";", b"=", b'\\"', b"\\\\", b"\x80", b"\xff"]), max_size=4
).map(lambda parts: b'"' + b"".join(parts) + b'"')
_BLANK = st.sampled_from([b"", b" ", b"\t", b" \t "])
_EXTENSION = st.tuples(
    _BLANK,
    _BLANK,
    _TOKENS,
    st.one_of(
        st.just(b""),
        st.tuples(_BLANK, _BLANK, _TOKENS | _QUOTED).map(
            lambda part: part[0] + b"=" + part[1] + part[2]
        ),
    ),
).map(lambda part: part[0] + b";" + part[1] + part[2] + part[3])


@settings(max_examples=400, deadline=None)
@given(extensions=st.lists(_EXTENSION, max_size=3), blank=_BLANK)
def test_a_chunk_line_of_the_grammar_is_read_as_h11_reads_it(
    extensions: list[bytes], blank: bytes
) -> None:
    """Every size line RFC 9112's grammar allows (sizes with extensions of tokens and quoted
    strings, the spaces between, spaces before the CRLF) is read, and read as h11 reads it;
    but for spaces between the size and its first `;`, which h11 and Go both refuse."""
    if extensions:
        extensions[0] = extensions[0].lstrip(b" \t")
    line = b"2" + b"".join(extensions) + blank
    wire = line + b"\r\nab\r\n0" + b"".join(extensions) + b"\r\n\r\n"
    assert _by_us(wire) == _by_h11(wire) == b"ab"


_LINE_BYTES = st.sampled_from(
    [
        *(b"0", b"2", b"f", b"F", b"g", b";", b"=", b'"', b"\\", b"a", b" ", b"\t", b",", b":"),
        *(b"\r", b"\n", b"\r\n", b"\x00", b"\x7f", b"\x80", b"-"),
    ]
)


@settings(max_examples=1500, deadline=None)
@given(line=st.lists(_LINE_BYTES, max_size=10).map(b"".join))
@example(line=b"f0000000")  # a size past the cap: refused as too large, not compared
def test_what_we_read_of_a_chunk_line_h11_and_go_read_alike(line: bytes) -> None:
    """A size line from any bytes: what is read here, h11 reads too with the same body, and
    Go's reader takes (no CR but the last, no LF: net/http/internal/chunked.go readChunkLine);
    h11 takes more (a bare CR, any extension text), which is refused here as Go refuses it or
    as the extension grammar does."""
    assume(b"\r\n" not in line)  # the line is what comes before its CRLF
    wire = line + b"\r\nab\r\n0\r\n\r\n"
    ours = _by_us(wire)
    if ours not in ("refused", "too large"):
        assert ours == _by_h11(wire)
        assert b"\r" not in line
        assert b"\n" not in line


_TRAILER_LINES = st.lists(
    st.sampled_from(
        [
            *(b"X-Sum: abc", b"x:", b"A: 1, 2", b" folded", b"\tfolded", b"Bad Name: v"),
            *(b"no colon", b": v", b"X: a\x00b", b"X: a\rb", b"X: \xe9", b"X-Long: " + b"v" * 50),
        ]
    ),
    max_size=4,
)
_EOL = st.sampled_from([b"\r\n", b"\n"])


@settings(max_examples=800, deadline=None)
@given(lines=_TRAILER_LINES, ends=st.lists(_EOL, min_size=5, max_size=5))
def test_a_trailer_section_is_read_or_refused_as_h11_reads_it(
    lines: list[bytes], ends: list[bytes]
) -> None:
    """Trailer fields by the grammar of a head's fields, each line ended by CRLF or LF."""
    section = b"".join(line + end for line, end in zip(lines, ends, strict=False)) + ends[-1]
    wire = b"2\r\nab\r\n0\r\n" + section
    assert _by_us(wire) == _by_h11(wire)
