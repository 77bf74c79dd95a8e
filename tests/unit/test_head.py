"""HTTP/1.1 heads as h11 reads and writes them: every answer head hypothesis can build from
valid and broken parts parses (or is refused) exactly as h11 does it, whatever pieces the wire
is cut into; every request head is h11's bytes, and what h11 refuses to send is refused."""

import itertools
import re

import h11
import h11._connection
import pytest
from hypothesis import example, find, given, settings
from hypothesis import strategies as st

from tests.support.scripted_stream import ScriptedStream
from truegreen.http.deadline import Deadline
from truegreen.http.errors import (
    ConnectionDroppedError,
    InvalidRequestError,
    ProtocolViolationError,
)
from truegreen.http.head import Framing, read_answer_head, read_final_head, request_head, says_close

_EOL = st.sampled_from([b"\r\n", b"\n"])
_VALUE_BYTES = st.lists(
    st.sampled_from(
        [
            *(b"a", b"Z", b"0", b"7", b" ", b"\t", b",", b";", b":", b"\x00", b"\x7f", b"\x80"),
            *(b"\xff", b"\x0b", b"\x0c", b"\r", b"chunked", b"close", b"CHUNKED", b"gzip", b"12"),
            b"007",
        ]
    ),
    max_size=6,
).map(b"".join)
_NAMES = st.sampled_from(
    [
        *(b"Content-Length", b"content-length", b"Transfer-Encoding", b"Connection", b"X-A"),
        *(b"x a", b"", b"x\x00", b"Bad:Name", b" leading", b"\tfolded", b"\xe9t\xe9"),
    ]
)
_FIELD = st.one_of(
    st.sampled_from(
        [
            *(b"Content-Length: 5", b"content-length:5 , 5", b"Transfer-Encoding: chunked"),
            *(b"Connection: keep-alive, Close", b"X-A: b", b"X-A:", b" continued", b"\tmore"),
        ]
    ),
    st.tuples(_NAMES, st.sampled_from([b":", b": ", b":\t", b" :"]), _VALUE_BYTES).map(b"".join),
    _VALUE_BYTES,  # no colon at all, or a continuation when it starts with a space or tab
)
_STATUS_LINE = st.one_of(
    st.tuples(
        st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/1", b"http/1.1", b"ICY"]),
        st.sampled_from([b" 200", b" 204", b" 304", b" 404", b" 100", b" 999", b" 20", b"200"])
        | st.sampled_from([b" 000", b" 099", b" 103"]),
        st.sampled_from([b"", b" ", b" OK", b" Not Found", b" a\tb", b" \x00", b" \xff", b"  x"]),
    ).map(b"".join),
    _VALUE_BYTES,
)


@st.composite
def _answer_heads(draw: st.DrawFn) -> bytes:
    """A status line and header lines, each ended by CRLF or LF, then the empty line."""
    lines = [draw(_STATUS_LINE), *draw(st.lists(_FIELD, max_size=5))]
    return b"".join(line + draw(_EOL) for line in lines) + draw(_EOL)


def _by_h11(block: bytes) -> tuple[object, ...] | str:
    """What h11, as a client that sent GET, makes of the answer head `block`."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    client.send(h11.EndOfMessage())
    client.receive_data(block)
    try:
        event = client.next_event()
    except h11.RemoteProtocolError:
        return "refused"
    assert isinstance(event, h11.Response | h11.InformationalResponse), event
    headers = tuple(
        (bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in event.headers
    )
    if ("transfer-encoding", "chunked") in headers:  # where we follow Go: chunks drop a length
        headers = tuple(field for field in headers if field[0] != "content-length")
    framing: object = "interim"
    if isinstance(event, h11.Response):
        framing = h11._connection._body_framing(b"GET", event)
    version = bytes(event.http_version)
    rest = client.trailing_data[0]
    return (event.status_code, bytes(event.reason), version, headers, framing, rest)


def _as_h11_frames(framing: Framing, length: int | None) -> tuple[str, tuple[int, ...]]:
    """h11's name for a framing: no body is a length of 0."""
    if framing is Framing.CHUNKED:
        return ("chunked", ())
    if framing is Framing.UNTIL_CLOSE:
        return ("http/1.0", ())
    return ("content-length", (length if framing is Framing.LENGTH and length else 0,))


def _by_us(block: bytes) -> tuple[object, ...] | str:
    try:
        read = read_answer_head(ScriptedStream([block]), b"", Deadline.after(5), 65536)
    except ProtocolViolationError:
        return "refused"
    assert read is not None
    head, rest = read
    framing = "interim" if head.status < 200 else _as_h11_frames(head.framing("GET"), head.length)
    reason = head.reason.encode("latin-1")
    return (head.status, reason, head.version.encode(), head.headers, framing, rest)


@settings(max_examples=600, deadline=None)
@given(_answer_heads())
@example(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\ncontent-length: 5\r\n\r\n")
@example(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n")
@example(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n")
@example(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n")
@example(b"HTTP/1.1 200 OK\r\nX-A: one\r\n  two\r\n\tthree\r\n\r\n")
@example(b"HTTP/1.1 200 OK\r\n folded first\r\n\r\n")
@example(b"HTTP/1.1 200 OK\r\nContent-Length: 123456789012345678901\r\n\r\n")
def test_an_answer_head_reads_as_h11_reads_it(block: bytes) -> None:
    assert _by_us(block) == _by_h11(block)


@pytest.mark.parametrize(
    "outcome",
    [
        "refused",
        "interim",
        ("content-length", (0,)),
        ("chunked", ()),
        ("http/1.0", ()),
        "a length",
        "folded",
        "bytes past the head",
    ],
)
def test_the_heads_built_reach_every_outcome(outcome: object) -> None:
    """Precondition of the comparison: the heads built reach every outcome, so agreement is
    not merely agreement on refusal."""

    def reaches(block: bytes) -> bool:
        ours = _by_us(block)
        if isinstance(ours, str):
            return outcome == ours
        framing, rest = ours[4], ours[5]
        if isinstance(outcome, tuple):
            return framing == outcome
        return {
            "interim": framing == "interim",
            "a length": isinstance(framing, tuple) and framing[1] not in ((), (0,)),
            "folded": re.search(rb"\n[ \t]", block) is not None,  # and accepted
            "bytes past the head": rest != b"",
        }.get(str(outcome), False)

    find(
        _answer_heads(),
        reaches,
        settings=settings(max_examples=5000, database=None, derandomize=True),
    )


def _split(wire: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(wire) + 1) for c in cuts} | {0, len(wire)})
    return [wire[a:b] for a, b in itertools.pairwise(points)]


_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nX-A: b\r\n\r\nbody"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0), max_size=8), st.integers(0, len(_ANSWER)))
def test_a_head_is_read_whole_however_the_wire_is_cut(cuts: list[int], ahead: int) -> None:
    """Bytes already buffered count; what follows the head comes back untouched."""
    wire = ScriptedStream(_split(_ANSWER[ahead:], cuts))
    read = read_answer_head(wire, _ANSWER[:ahead], Deadline.after(5), 1024)
    assert read is not None
    head, rest = read
    assert (head.status, head.length, head.headers) == (
        200,
        4,
        (("content-length", "4"), ("x-a", "b")),
    )
    assert rest + b"".join(wire.pieces) == b"body"  # nothing lost, nothing read twice


def test_a_stream_that_ends_before_any_byte_has_no_head() -> None:
    assert read_answer_head(ScriptedStream([]), b"", Deadline.after(5), 1024) is None


def test_a_stream_that_ends_mid_head_dropped_the_answer() -> None:
    with pytest.raises(ConnectionDroppedError):
        read_answer_head(ScriptedStream([b"HTTP/1.1 200 OK\r\n"]), b"", Deadline.after(5), 1024)


def test_a_head_past_the_limit_is_refused_before_the_stream_ends() -> None:
    endless = [b"HTTP/1.1 200 OK\r\n"] + [b"X-A: " + b"a" * 100 + b"\r\n"] * 100
    wire = ScriptedStream(endless)
    with pytest.raises(ProtocolViolationError, match="too large"):
        read_answer_head(wire, b"", Deadline.after(5), 1024)
    assert len(wire.pieces) > 80, "refused as soon as the limit passed, not at the end"


@pytest.mark.parametrize("first", [b"\x16\x03\x01", b" HTTP/1.1", b"\r\nHTTP/1.1 200 OK\r\n"])
def test_what_cannot_start_a_status_line_is_refused_at_once(first: bytes) -> None:
    """A TLS server's hello, a leading space or an empty line: refused on the first bytes,
    without waiting for an end of head that may never come."""
    wire = ScriptedStream([first, b"never read"])
    with pytest.raises(ProtocolViolationError):
        read_answer_head(wire, b"", Deadline.after(5), 1024)
    assert wire.pieces == [b"never read"]


_HEADERS = st.lists(
    st.tuples(
        st.sampled_from(["authorization", "x-a", "bad name", "", "x:y", "caf\xe9"]),
        st.sampled_from(
            [
                *("v", "Bearer abc.def", "a b", " lead", "trail ", "\tt", "a\r\nb", "x\x00"),
                *("a\x01b", "x\x7f", ""),
            ]
        ),
    ),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["GET", "PATCH", "CONNECT", "G T", ""]),
    st.sampled_from(["/", "/api/v1/pods?limit=500", "host:443", "/a b", "/\n", ""]),
    _HEADERS,
)
@example("GET", "/", [("authorization", "Bearer a\x01b")])  # h11 sends it, Go refuses it
@example("GET", "/", [("authorization", "Bearer ab\t ")])  # Go trims it, h11 refuses it
def test_a_request_head_is_the_bytes_h11_writes(
    method: str, target: str, headers: list[tuple[str, str]]
) -> None:
    """Where we follow Go's transport instead: values trimmed of spaces and tabs as they are
    written, and refused with any other control character (h11 sends those)."""
    sent = [("host", "x"), *headers]
    trimmed = [(name, value.strip(" \t")) for name, value in sent]
    client = h11.Connection(h11.CLIENT)
    try:
        expected: bytes | None = client.send(
            h11.Request(method=method, target=target, headers=trimmed)
        )
    except (h11.LocalProtocolError, UnicodeEncodeError):  # h11 takes ASCII names only
        expected = None
    if any(re.search("[\x00-\x08\x0a-\x1f\x7f]", value) for _, value in trimmed):
        expected = None
    try:
        written: bytes | None = request_head(method, target, sent)
    except InvalidRequestError:
        written = None
    assert written == expected


def test_a_value_past_ascii_is_sent_as_its_utf8_bytes() -> None:
    """As Go sends it (obs-text is valid in a field value); h11 refused anything not ASCII."""
    assert request_head("GET", "/", [("x-a", "caf\xe9")]) == (
        b"GET / HTTP/1.1\r\nx-a: caf\xc3\xa9\r\n\r\n"
    )


def test_a_lone_surrogate_is_refused_not_sent() -> None:
    with pytest.raises(InvalidRequestError, match="not valid Unicode"):
        request_head("GET", "/", [("authorization", "Bearer \ud800")])


def test_connection_tokens_are_trimmed_of_spaces_and_tabs_only() -> None:
    """`\\x85close` is no `close` (Python's str.strip would make it one); h11 agrees."""
    assert says_close([("Connection", " keep-alive,\tClose ")])
    assert not says_close([("connection", "\x85close")])


def test_a_stream_that_ends_after_an_interim_answer_dropped_the_answer() -> None:
    """Something arrived, so this is no stale connection to send the request on again."""
    interim = ScriptedStream([b"HTTP/1.1 100 Continue\r\n\r\n"])
    with pytest.raises(ConnectionDroppedError):
        read_final_head(interim, b"", Deadline.after(5), 1024)
    assert read_final_head(ScriptedStream([]), b"", Deadline.after(5), 1024) is None
