"""Reading an answer's body by its framing: a declared length, or chunked (RFC 9112, 6 and 7.1).

`head` reads the status line and headers; the body, which is nearly every byte of a list of
pods, is read here straight off the stream. (h11 hands each received piece through its own
buffer and an event object: three copies of every byte.) Here a piece is a view of what the
stream returned, copied once: into the body's one buffer as it arrives (`read_all`), or by a
caller that streams the pieces.
"""

import mmap
import re
import threading
from collections.abc import Callable
from functools import cache, partial

from truegreen.http.deadline import Deadline
from truegreen.http.dial import Stream
from truegreen.http.errors import (
    AnswerTooLargeError,
    ConnectionDroppedError,
    ProtocolViolationError,
)
from truegreen.http.head import TOKEN, parse_fields

MAX_CHUNK_LINE = 4096
"""A chunk's size line (with any extensions) may not exceed this (Go's maxLineLength)."""
MAX_TRAILER_BYTES = 65536
"""The trailer section of a chunked body may not exceed this, as a head may not."""
_SIZE = rb"([0-9A-Fa-f]{1,16})"
"""A chunk's size: hexadecimal digits, 16 at most (no length needs more)."""
_QUOTED = rb'"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"'
"""RFC 9110 5.6.4 quoted-string: qdtext or quoted-pair between double quotes."""
_EXTENSION = rb"[ \t]*" + TOKEN + rb"(?:[ \t]*=[ \t]*(?:" + TOKEN + rb"|" + _QUOTED + rb"))?"
_SIZE_LINE = re.compile(
    _SIZE + rb"(?:;" + _EXTENSION + rb"(?:[ \t]*;" + _EXTENSION + rb")*)?[ \t]*"
)
"""A whole chunk-size line: its size, each extension `;name` or `;name=value`, and the spaces
and tabs Go and h11 allow before the line's end (not before the first `;`: neither allows
that)."""
_SECTION_END = re.compile(rb"\n\r?\n")
"""The empty line ending a trailer section, as it ends a head."""
# A whole chunk's head: the CRLF ending the chunk before it, and a plain size line. Anything
# else (an extension, bad framing) is left to the careful path.
_FIRST_CHUNK = re.compile(_SIZE + rb"\r\n")
_NEXT_CHUNK = re.compile(rb"\r\n" + _SIZE + rb"\r\n")
_CRLF = b"\r\n"

Piece = bytes | memoryview
Body = bytes | bytearray | memoryview
"""A whole body as read: the buffer it was received into, not copied again."""


@cache
def mappings_can_grow() -> bool:
    """Whether this system grows an anonymous mapping in place (Linux's mremap). Elsewhere
    (macOS, Windows) `mmap.resize` raises, and bodies are read into bytearrays instead."""
    try:
        probe = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        probe.resize(2 * mmap.PAGESIZE)
        probe.close()
    except (AttributeError, OSError, SystemError, ValueError):
        return False
    return True


class BodyBuffers:
    """Buffers for the bodies of one list's pages: anonymous mappings, reused page to page.

    A mapping goes back to the system whole once nothing holds it, where a freed body stays in
    malloc's heap of the thread that read it (several MB each, docs/performance.md); reusing it
    spares the system zeroing fresh memory for every page. A buffer is reused only once no body
    views it: a mapping refuses to resize while a view (a memoryview, a msgspec.Raw) exists.
    """

    FIRST_SIZE = 1 << 20
    """Bytes mapped for a new buffer; it doubles while a body needs more (only what is written
    is ever resident)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a page asked ahead is read on a thread of its own
        self._buffers: list[mmap.mmap] = []

    def take(self) -> mmap.mmap:
        """A buffer no body views any more, at its start; a new one when there is none."""
        with self._lock:
            for buffer in self._buffers:
                if _unviewed(buffer):
                    self._buffers.remove(buffer)
                    buffer.seek(0)
                    return buffer
        # Private: a shared anonymous mapping cannot grow (its pages past the first size fault).
        return mmap.mmap(-1, self.FIRST_SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)

    def give_back(self, buffer: mmap.mmap) -> None:
        """Keep `buffer` for a later body, once what views it now is gone."""
        with self._lock:
            self._buffers.append(buffer)


def _unviewed(buffer: mmap.mmap) -> bool:
    try:
        buffer.resize(len(buffer))  # BufferError while any view of it exists
    except BufferError:
        return False
    return True


def _grows_itself(more: int) -> None:
    """A bytearray makes room as it is written."""


def _make_room(buffer: mmap.mmap, more: int) -> None:
    """Grow `buffer` to take `more` bytes past its position (no view of it exists yet)."""
    if buffer.tell() + more > len(buffer):
        buffer.resize(max(2 * len(buffer), buffer.tell() + more))


class FramedBody:
    """The body of one answer on `stream`, whose first bytes (`buffered`) already arrived with
    the head: `length` bytes, or chunked when `length` is None.

    `next_piece` returns each piece of the body as it arrives and None at its end; afterwards
    `leftover` says whether the server sent bytes beyond the body (the connection cannot then
    carry another request).
    """

    def __init__(self, stream: Stream, buffered: bytes, length: int | None) -> None:
        self._stream = stream
        self._buffer = buffered
        self._pos = 0
        self._chunked = length is None
        self._left = 0 if length is None else length
        """Bytes of the current chunk (or of the whole declared body) still to come."""
        self._in_chunk = False
        self._done = not self._chunked and self._left == 0

    @property
    def leftover(self) -> bool:
        """Whether bytes past the body's end have arrived."""
        return self._pos < len(self._buffer)

    def next_piece(self, deadline: Deadline) -> Piece | None:
        """The next piece of the body by `deadline`; None once it has all arrived.

        Raises ConnectionDroppedError when the stream ends first, ProtocolViolationError when
        the chunked framing is not valid, and whatever the stream raises (TimedOutError).
        """
        while not self._done:
            if self._left:
                return self._take(deadline)
            if not self._chunked:
                self._done = True
            elif self._in_chunk:
                self._expect_crlf(deadline)
                self._in_chunk = False
            else:
                size = self._chunk_size(self._line(deadline))
                if size:
                    self._left = size
                    self._in_chunk = True
                else:
                    self._skip_trailers(deadline)
                    self._done = True
        return None

    def read_all(
        self, deadline: Deadline, max_bytes: int, into: BodyBuffers | None = None
    ) -> bytearray | memoryview:
        """The whole body by `deadline`, in a buffer of `into` (a view of it) or a bytearray of
        its own; AnswerTooLargeError as soon as it is known to pass `max_bytes`. Raises as
        `next_piece` does.

        Each piece is copied into one buffer as it arrives: a page of a list (3-4 MB) then
        exists once, where pieces and their join held it twice and scattered malloc's heap."""
        if into is None:
            body = bytearray()
            self._fill(deadline, max_bytes, body.extend, body.__len__, _grows_itself)
            return body
        buffer = into.take()
        try:
            room = partial(_make_room, buffer)
            self._fill(deadline, max_bytes, buffer.write, buffer.tell, room)
            view = memoryview(buffer)[: buffer.tell()]
        finally:
            into.give_back(buffer)  # viewed before it goes back: no other read may take it
        return view

    def _fill(
        self,
        deadline: Deadline,
        max_bytes: int,
        write: Callable[[Piece], object],
        size: Callable[[], int],
        make_room: Callable[[int], None],
    ) -> None:
        """Write the whole body with `write` (`size` says how much is written so far,
        `make_room` readies space for that many more bytes)."""
        while True:
            if self._chunked and not self._left and not self._done:
                make_room(len(self._buffer) - self._pos)
                self._whole_chunks(write)
                if size() > max_bytes:
                    raise AnswerTooLargeError(max_bytes)
            piece = self.next_piece(deadline)
            if piece is None:
                return
            if size() + len(piece) + self._left > max_bytes:
                raise AnswerTooLargeError(max_bytes)
            make_room(len(piece))
            write(piece)

    def _whole_chunks(self, write: Callable[[Piece], object]) -> None:
        """Write every chunk that lies whole in the buffer from here, in one tight loop (a real
        server sends a list as two chunks a pod). The last chunk, a chunk cut by the buffer's
        end and anything unusual are left to `next_piece`."""
        buffer, pos = self._buffer, self._pos
        header = _NEXT_CHUNK if self._in_chunk else _FIRST_CHUNK
        view = memoryview(buffer)
        end_of_buffer = len(buffer)
        while found := header.match(buffer, pos):
            size = int(found[1], 16)
            data = found.end()
            if not size or data + size > end_of_buffer:
                break
            write(view[data : data + size])
            pos = data + size
            header = _NEXT_CHUNK
        if pos != self._pos:
            self._pos, self._in_chunk = pos, True

    def _take(self, deadline: Deadline) -> Piece:
        if self._pos >= len(self._buffer):
            self._buffer, self._pos = self._receive(deadline), 0
        start = self._pos
        end = min(len(self._buffer), start + self._left)
        self._pos = end
        self._left -= end - start
        if start == 0 and end == len(self._buffer):
            return self._buffer
        return memoryview(self._buffer)[start:end]

    def _receive(self, deadline: Deadline) -> bytes:
        data = self._stream.receive(deadline)
        if not data:
            raise ConnectionDroppedError("the connection closed before the whole answer arrived")
        return data

    def _line(self, deadline: Deadline) -> bytes:
        """The next line of the framing, without its CRLF. A line ended by a bare LF is
        refused, as Go's chunked reader refuses it ("chunked line ends with bare LF"): a peer
        that reads it as an end of line would frame the body differently. (A CR inside the
        line is no part of a size line's grammar: `_chunk_size` refuses it.)"""
        while True:
            end = self._buffer.find(b"\n", self._pos)
            if end >= 0:
                line = self._buffer[self._pos : end - 1]
                if end == self._pos or self._buffer[end - 1 : end] != b"\r":
                    raise ProtocolViolationError(
                        "the answer's chunked body has a line ended by a bare LF"
                    )
                self._pos = end + 1
                if len(line) > MAX_CHUNK_LINE:
                    break
                return line
            if len(self._buffer) - self._pos > MAX_CHUNK_LINE:
                break
            self._more(deadline)
        raise ProtocolViolationError("the answer's chunked body has a line that is too long")

    def _more(self, deadline: Deadline) -> None:
        """Keep what is unread of the buffer and add the next bytes to arrive."""
        self._buffer = self._buffer[self._pos :] + self._receive(deadline)
        self._pos = 0

    def _expect_crlf(self, deadline: Deadline) -> None:
        while len(self._buffer) - self._pos < 2:
            self._more(deadline)
        if self._buffer[self._pos : self._pos + 2] != _CRLF:
            raise ProtocolViolationError("the answer's chunked body is not valid HTTP/1.1")
        self._pos += 2

    @staticmethod
    def _chunk_size(line: bytes) -> int:
        """chunk-size [ chunk-ext ] (RFC 9112 7.1.1), the extensions held to their grammar of
        tokens and quoted strings (RFC 9110 5.6) though nothing in them is used."""
        found = _SIZE_LINE.fullmatch(line)
        if found is None:
            raise ProtocolViolationError("the answer's chunked body has a chunk size not valid")
        return int(found[1], 16)

    def _skip_trailers(self, deadline: Deadline) -> None:
        """Read the trailer section as h11 reads it, by the rules of a head's fields (up to an
        empty line, each line ended by CRLF or LF); its fields are checked, not used."""
        while True:
            rest = self._buffer[self._pos :]
            if rest[:1] == b"\n" or rest[:2] == _CRLF:  # no trailer fields
                self._pos += 1 if rest[:1] == b"\n" else 2
                return
            end = _SECTION_END.search(rest)
            if end is not None:
                lines = [line.removesuffix(b"\r") for line in rest[: end.end()].split(b"\n")]
                parse_fields(lines[:-2])  # the empty line ending the section
                self._pos += end.end()
                return
            if len(rest) > MAX_TRAILER_BYTES:
                raise ProtocolViolationError("the answer's trailer fields are too large")
            self._more(deadline)
