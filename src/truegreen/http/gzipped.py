"""A gzip-encoded body (`Content-Encoding: gzip`), decompressed within bounds.

kube-apiserver gzips an answer over 128 KiB for a client that asks (APIResponseCompression,
pkg/endpoints/handlers/responsewriters/writers.go), at level 1; a page of 500 pods shrinks
about tenfold. What it expands to is capped twice: by the answer's own cap, as an unencoded
body is, and by a ratio to its compressed size, so that a few kilobytes can never claim the
whole cap (a "gzip bomb"). Members follow one another as Go's gzip reader reads them
(multistream); bytes after the last member that start no member are refused, as Go refuses
them ("gzip: invalid header").
"""

import zlib
from collections.abc import Callable

from truegreen.http.errors import AnswerTooLargeError, ProtocolViolationError
from truegreen.http.framing import Body, BodyBuffers

MAX_RATIO = 200
"""A body may expand at most this many times its compressed size. JSON lists of Kubernetes
objects compress 8-20 times (the bench's pods about 12 at level 1); a run of one repeated
byte compresses a thousandfold."""
_STEP = 1 << 20
"""Bytes decompressed at a time: each step's output is checked against the caps before the
next is made."""
_GZIP = 16 + zlib.MAX_WBITS
"""zlib's window bits for a gzip header and trailer, nothing else."""


def gunzip(compressed: Body, max_bytes: int, into: BodyBuffers | None = None) -> Body:
    """The body `compressed` holds, into one of `into`'s buffers when given; at most
    `max_bytes` and MAX_RATIO times its own size, else AnswerTooLargeError as soon as it is
    known to pass; ProtocolViolationError when it is not gzip."""
    limit = min(max_bytes, MAX_RATIO * len(compressed))
    if into is None:
        out = bytearray()
        _inflate(memoryview(compressed), limit, out.extend, out.__len__)
        return out
    buffer = into.take()
    try:
        written = 0

        def write(piece: bytes) -> None:
            nonlocal written
            if written + len(piece) > len(buffer):
                buffer.resize(max(2 * len(buffer), written + len(piece)))
            buffer.write(piece)
            written += len(piece)

        _inflate(memoryview(compressed), limit, write, lambda: written)
        view = memoryview(buffer)[:written]
    finally:
        into.give_back(buffer)  # viewed before it goes back: no other read may take it
    return view


def _inflate(
    data: memoryview, limit: int, write: Callable[[bytes], object], size: Callable[[], int]
) -> None:
    """Decompress each member of `data` with `write`, a step at a time, never past `limit`."""
    if not data:
        raise ProtocolViolationError("the answer's gzip body is empty")
    try:
        while data:
            member = zlib.decompressobj(_GZIP)
            pending: bytes | memoryview = data
            while not member.eof:
                step = min(_STEP, limit - size() + 1)
                piece = member.decompress(pending, step)
                if size() + len(piece) > limit:
                    raise AnswerTooLargeError(limit)
                write(piece)
                pending = member.unconsumed_tail
                if not pending and len(piece) < step:
                    break  # every byte given is in, and nothing is held back
            if not member.eof:
                raise ProtocolViolationError("the answer's gzip body was cut short")
            data = memoryview(member.unused_data)  # the next member's bytes, if any
    except zlib.error:
        raise ProtocolViolationError("the answer's gzip body is not valid gzip") from None
