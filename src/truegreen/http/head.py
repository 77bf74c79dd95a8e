"""HTTP/1.1 heads (RFC 9112 sections 2-6): a request's written, an answer's read and framed.

An answer is read by the rules of h11, the strict sans-IO parser: its grammar for the status
line and header fields, its line folding, its checks of Content-Length and Transfer-Encoding;
beside chunks a length is dropped, as Go's transport drops it. A request
is written as Go's transport writes it: values trimmed of spaces and tabs, refused with any
other control character. Written here, the rules spare every command h11's import (about
12 ms, a tenth of doctor's start-up). tests/unit/test_head.py holds them against h11 itself.
"""

import re
from collections.abc import Sequence
from enum import Enum

from msgspec import Struct

from truegreen.http.deadline import Deadline
from truegreen.http.dial import Stream
from truegreen.http.errors import (
    ConnectionDroppedError,
    InvalidRequestError,
    ProtocolViolationError,
)

# RFC 9110 5.1, 5.5 and RFC 9112 4, as h11's _abnf.py spells them.
TOKEN = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
"""RFC 9110 5.6.2 token, as a regular expression."""
_FIELD_CHAR = rb"[^\x00\s]"
_FIELD_VALUE = rb"(?:" + _FIELD_CHAR + rb"+(?:[ \t]+" + _FIELD_CHAR + rb"+)*)?"
_NAME = re.compile(TOKEN)
_SENDABLE_VALUE = re.compile(rb"[^\x00-\x08\x0a-\x1f\x7f]*")
"""A value Go's transport sends (httpguts.ValidHeaderFieldValue): no control character but
the tab."""
_TARGET = re.compile(rb"[\x21-\x7e]+")
_FIELD_LINE = re.compile(rb"(" + TOKEN + rb"):[ \t]*(" + _FIELD_VALUE + rb")[ \t]*")
_STATUS_LINE = re.compile(rb"HTTP/([0-9]\.[0-9]) ([0-9]{3})(?: ((?:[ \t]|[^\x00\s])*))?")
_FOLDED = re.compile(rb"[ \t]+")
_HEAD_END = re.compile(rb"\n\r?\n")
_DIGITS = re.compile(rb"[0-9]+")
MAX_INTERIM_ANSWERS = 5
"""1xx answers passed over before the answer, as Go's transport allows (`max1xxResponses`)."""
_MAX_LENGTH_DIGITS = 20
"""A Content-Length longer than this is refused (h11's bound; 20 digits pass 2**64)."""

Headers = Sequence[tuple[str, str]]


def request_head(method: str, target: str, headers: Headers) -> bytes:
    """The request line and header fields of a request, ready to send (a body follows as is).

    Raises InvalidRequestError when a part holds what HTTP cannot carry (a line break in a
    header value would start a header, or a request, of its own).
    """
    start = (_encoded(method), _encoded(target))
    if not _NAME.fullmatch(start[0]) or not _TARGET.fullmatch(start[1]):
        raise InvalidRequestError("the request's method or path is not valid HTTP")
    lines = [b"%s %s HTTP/1.1" % start]
    for name, value in headers:
        # Go trims a value's spaces and tabs as it writes it (textproto.TrimString).
        field = (_encoded(name), _encoded(value.strip(" \t")))
        if not _NAME.fullmatch(field[0]) or not _SENDABLE_VALUE.fullmatch(field[1]):
            raise InvalidRequestError(f"the request's {name!r} header holds what HTTP forbids")
        lines.append(b"%s: %s" % field)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _encoded(text: str) -> bytes:
    """UTF-8: past 0x7f a header value's bytes are obs-text, which HTTP carries as they are."""
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate, as a JSON escape can make
        raise InvalidRequestError("the request holds text that is not valid Unicode") from None


class Framing(Enum):
    """How the answer's body is delimited (RFC 9112 6.3)."""

    NONE = "none"
    """No body: the answer to HEAD, a 204 or a 304."""
    LENGTH = "length"
    CHUNKED = "chunked"
    UNTIL_CLOSE = "until close"
    """Neither length nor chunks: the body ends when the server closes the connection."""


class AnswerHead(Struct, frozen=True):
    """An answer's status line and header fields, names lower-cased."""

    status: int
    reason: str
    version: str
    """`1.1`, `1.0`: the status line's protocol version."""
    headers: tuple[tuple[str, str], ...]
    length: int | None
    """The valid Content-Length, when one was sent."""
    chunked: bool
    """Whether Transfer-Encoding is `chunked` (the only coding allowed, as in h11 and Go)."""

    def framing(self, method: str) -> Framing:
        """How this answer's body, if any, is delimited; Transfer-Encoding outranks a length."""
        if method == "HEAD" or self.status in (204, 304):
            return Framing.NONE
        if self.chunked:
            return Framing.CHUNKED
        return Framing.UNTIL_CLOSE if self.length is None else Framing.LENGTH

    def keeps_alive(self) -> bool:
        """Whether the server allows another request on this connection (HTTP/1.1, no close)."""
        return self.version >= "1.1" and not says_close(self.headers)


def says_close(headers: Headers) -> bool:
    """Whether a `Connection` header asks to close after this exchange."""
    return any(
        name.lower() == "connection"
        and "close" in (token.strip(" \t").lower() for token in value.split(","))
        for name, value in headers
    )


def parse_answer_head(block: bytes) -> AnswerHead:
    """The answer head in `block` (its lines up to and with the empty line ending it).

    Raises ProtocolViolationError when it is not valid HTTP/1.1.
    """
    lines = block.split(b"\n")[:-2]  # the head ends "\n\n" (each "\n" maybe after "\r")
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    status = _STATUS_LINE.fullmatch(lines[0]) if lines else None
    if status is None or status[2] < b"100":
        raise _not_http()  # no status line, or a status no class of answers has
    headers: list[tuple[str, str]] = []
    length: bytes | None = None
    chunked = False
    for name, written in parse_fields(lines[1:]):
        value = written
        if name == b"content-length":
            given = {part.strip() for part in value.split(b",")}
            one = given.pop() if len(given) == 1 else b""
            if not _DIGITS.fullmatch(one) or len(one) > _MAX_LENGTH_DIGITS:
                raise _not_http()
            if length is not None:
                if length != one:
                    raise _not_http()  # two lengths: which body is the answer's?
                continue  # the same length again says nothing new
            length, value = one, one
        elif name == b"transfer-encoding":
            if chunked or value.lower() != b"chunked":
                raise _not_http()
            chunked, value = True, b"chunked"
        headers.append((name.decode("latin-1"), value.decode("latin-1")))
    if chunked:  # Go deletes a length that chunks outrank: no cap may be judged by it
        headers = [(name, value) for name, value in headers if name != "content-length"]
        length = None
    return AnswerHead(
        status=int(status[2]),
        reason=(status[3] or b"").decode("latin-1"),
        version=status[1].decode(),
        headers=tuple(headers),
        length=None if length is None else int(length),
        chunked=chunked,
    )


def parse_fields(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    """The fields of a head's (or a trailer section's) lines, each as its lower-cased name and
    its value; ProtocolViolationError for a line that is no field by h11's grammar."""
    fields = []
    for line in _unfolded(lines):
        field = _FIELD_LINE.fullmatch(line)
        if field is None:
            raise _not_http()
        fields.append((field[1].lower(), field[2]))
    return fields


def _unfolded(lines: list[bytes]) -> list[bytes]:
    """Header lines with obsolete line folding undone: a continuation joins the line before
    it with one space (RFC 9112 5.2)."""
    joined: list[bytes] = []
    for line in lines:
        fold = _FOLDED.match(line)
        if fold is None:
            joined.append(line)
        elif not joined:
            raise _not_http()  # a continuation with nothing to continue
        else:
            joined[-1] += b" " + line[fold.end() :]
    return joined


def _not_http() -> ProtocolViolationError:
    return ProtocolViolationError("the answer was not valid HTTP/1.1")


def read_answer_head(
    stream: Stream, buffered: bytes, deadline: Deadline, limit: int
) -> tuple[AnswerHead, bytes] | None:
    """The next answer head on `stream`, after the bytes already `buffered`, and the bytes
    that arrived past it; None when the stream ended before any byte of a head.

    Raises ProtocolViolationError when the bytes are not an HTTP head or pass `limit` without
    one, ConnectionDroppedError when the stream ends mid-head, and what the stream raises.
    """
    buffer = bytearray(buffered)  # a server may drip a byte at a time: no copy per byte
    searched = 0
    while True:
        if buffer[:1] == b"\n" or buffer[:2] == b"\r\n" or (buffer and buffer[0] < 0x21):
            raise _not_http()  # no status line; a TLS server's first byte is 0x16
        end = _HEAD_END.search(buffer, max(0, searched - 2))
        if end is not None:
            return parse_answer_head(bytes(buffer[: end.end()])), bytes(buffer[end.end() :])
        if len(buffer) > limit:
            raise ProtocolViolationError("the answer's head was too large")
        searched = len(buffer)
        data = stream.receive(deadline)
        if not data:
            if not buffer:
                return None
            raise ConnectionDroppedError("the connection closed before the whole answer arrived")
        buffer += data


def read_final_head(
    stream: Stream, buffered: bytes, deadline: Deadline, limit: int
) -> tuple[AnswerHead, bytes] | None:
    """The answer's head past any interim (1xx) answers, as `read_answer_head` reads each;
    None only when the stream ended before any byte arrived.

    Raises ProtocolViolationError for a 101 (a protocol switch this client never asks for)
    or more than MAX_INTERIM_ANSWERS interim answers, ConnectionDroppedError when the stream
    ends after an interim answer, and what `read_answer_head` raises.
    """
    for interim in range(MAX_INTERIM_ANSWERS + 1):
        read = read_answer_head(stream, buffered, deadline, limit)
        if read is None:
            if interim:
                raise ConnectionDroppedError("the connection closed before the answer arrived")
            return None
        head, buffered = read
        if head.status >= 200:
            return head, buffered
        if head.status == 101:
            raise ProtocolViolationError("the server switched protocols unasked")
    raise ProtocolViolationError("the server sent too many interim answers")
