"""A gzip-encoded body comes out exact, member after member as Go's gzip reader reads them, and
is refused (never expanded past its caps) when it would grow beyond the answer's cap or its
ratio, or is no gzip."""

import gzip
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truegreen.http.errors import AnswerTooLargeError, ProtocolViolationError
from truegreen.http.framing import BodyBuffers
from truegreen.http.gzipped import MAX_RATIO, gunzip

WITH_OR_WITHOUT_BUFFERS = pytest.mark.parametrize(
    "into", [None, BodyBuffers], ids=["own", "into-buffers"]
)


@settings(max_examples=200, deadline=None)
@given(
    members=st.lists(st.binary(max_size=3000), min_size=1, max_size=3),
    level=st.integers(0, 9),
    buffers=st.booleans(),
)
def test_a_body_comes_out_exact_member_after_member(
    members: list[bytes], level: int, buffers: bool
) -> None:
    wire = b"".join(gzip.compress(member, compresslevel=level) for member in members)
    body = gunzip(wire, 1 << 20, BodyBuffers() if buffers else None)
    assert bytes(body) == b"".join(members)


@WITH_OR_WITHOUT_BUFFERS
def test_a_large_body_comes_out_exact(into: type[BodyBuffers] | None) -> None:
    body = bytes(range(256)) * 40_000  # 10 MB: several steps, a buffer that grows
    wire = gzip.compress(body, compresslevel=1)
    assert bytes(gunzip(wire, 64 << 20, into() if into else None)) == body


@WITH_OR_WITHOUT_BUFFERS
def test_a_body_past_the_answer_s_cap_is_refused(into: type[BodyBuffers] | None) -> None:
    wire = gzip.compress(bytes(range(256)) * 100)  # 25,600 bytes, compressed about tenfold
    assert MAX_RATIO * len(wire) > 25_600, "precondition: within the ratio"
    with pytest.raises(AnswerTooLargeError) as caught:
        gunzip(wire, 25_599, into() if into else None)
    assert caught.value.limit == 25_599
    assert bytes(gunzip(wire, 25_600, into() if into else None)) == bytes(range(256)) * 100


@WITH_OR_WITHOUT_BUFFERS
def test_a_body_that_expands_past_the_ratio_is_refused_though_under_the_cap(
    into: type[BodyBuffers] | None,
) -> None:
    """A megabyte of one byte is a kilobyte compressed: a thousandfold."""
    wire = gzip.compress(b"\0" * (1 << 20))
    assert len(wire) * MAX_RATIO < 1 << 20, "precondition: past the ratio"
    with pytest.raises(AnswerTooLargeError) as caught:
        gunzip(wire, 64 << 20, into() if into else None)
    assert caught.value.limit == len(wire) * MAX_RATIO


_ABC = gzip.compress(b"abc", mtime=0)


@pytest.mark.parametrize(
    "wire",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"not gzip", id="not-gzip"),
        pytest.param(_ABC[:-4], id="trailer-cut"),
        pytest.param(_ABC[:12], id="data-cut"),
        pytest.param(_ABC + b"garbage after", id="garbage-after"),  # Go: "gzip: invalid header"
        pytest.param(zlib.compress(b"abc"), id="zlib"),
        pytest.param(_ABC[:-8] + b"\0\0\0\0\3\0\0\0", id="wrong-checksum"),
    ],
)
def test_a_body_that_is_no_gzip_is_refused(wire: bytes) -> None:
    with pytest.raises(ProtocolViolationError):
        gunzip(wire, 1 << 20)
