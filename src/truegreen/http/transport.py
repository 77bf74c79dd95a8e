"""A small, fully bounded HTTP/1.1 client on sockets and `ssl`; heads are written and read in
`head`, bodies in `framing`.

Every request has ONE deadline covering the wait for a pooled connection, connect, TLS, sending,
headers and body: each blocking step is armed with what is left of it, so a server dripping a
byte at a time ends at the deadline, never resets it. Every answer has a cap on its body. Kept-
alive connections are pooled per origin (scheme, host, port, TLS settings), a bounded number
each. The transport knows nothing of Kubernetes or registries.
"""

import threading
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import TypeVar
from urllib.parse import unquote, urlsplit

from msgspec import Struct

from truegreen import __version__
from truegreen.http.deadline import Deadline
from truegreen.http.dial import Dialer, DirectDialer, Stream
from truegreen.http.errors import (
    AnswerCutError,
    AnswerTooLargeError,
    ConnectFailedError,
    ConnectionDroppedError,
    ProtocolViolationError,
    SendFailedError,
    TimedOutError,
)
from truegreen.http.framing import Body, BodyBuffers, FramedBody, Piece
from truegreen.http.head import AnswerHead, Framing, read_final_head, request_head, says_close
from truegreen.http.tls import TlsSettings

CONNECTIONS_PER_HOST = 32
"""Connections open at once to one origin: one per read in flight (cluster/schedule.py
IN_FLIGHT), since HTTP/1.1 carries one request per connection at a time."""
MAX_HEAD_BYTES = 65536
"""The status line and headers of an answer may not exceed this."""
_REPLAYABLE = frozenset({"GET", "HEAD", "OPTIONS"})
_USER_AGENT = f"truegreen/{__version__}"

Headers = Sequence[tuple[str, str]]
Route = Callable[[str, str, int], Dialer]
"""The dialer for one origin's scheme, host and port: the way Go's `Transport.Proxy` picks per
request, directly or through a proxy (`proxy_dial.EnvironmentProxies.dialer`)."""
T = TypeVar("T")


class Response(Struct, frozen=True):
    """A whole answer: status, headers (names lower-cased) and a body no larger than its cap."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: Body
    """A body read by its framing is the buffer it was received into (not copied again): a
    view of one of the caller's `BodyBuffers`, else a bytearray."""

    def header(self, name: str) -> str | None:
        """The last value of header `name` (case-insensitive), or None."""
        return _header(self.headers, name)


def _header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    wanted = name.lower()
    found = None
    for key, value in headers:
        if key == wanted:
            found = value
    return found


class _Origin(Struct, frozen=True):
    scheme: str
    host: str
    port: int
    tls: TlsSettings | None

    @property
    def authority(self) -> str:
        # Without an IPv6 zone, which names this machine's interface (net/http `removeZone`).
        host = f"[{self.host.partition('%')[0]}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def _split(url: str, tls: TlsSettings) -> tuple[_Origin, str]:
    try:
        parts = urlsplit(url)
    except ValueError:  # `https://[::1`: an address that does not parse is no address
        raise ConnectFailedError(f"cannot connect to {url!r}: not a valid address") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ConnectFailedError(f"cannot connect to {url!r}: not an http or https address")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise ConnectFailedError(f"cannot connect to {url!r}: the port is not valid") from None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # Go dials the host unescaped: an IPv6 zone written `%25eth0` (RFC 6874) is `%eth0`.
    host = unquote(parts.hostname)
    return _Origin(scheme, host, port, tls if scheme == "https" else None), target


class _StaleConnectionError(Exception):
    """A kept-alive connection turned out closed before one byte of the answer arrived."""


class _Connection(Struct):
    stream: Stream
    reused: bool = False
    buffered: bytes = b""
    """Bytes that arrived past the current answer's head, not yet read as its body."""
    framing: Framing = Framing.NONE
    body: FramedBody | None = None
    """The current answer's body when it is framed by a length or chunks."""
    keep_alive: bool = True
    """Whether both sides allow another request on this connection after the current one."""

    def send(self, request: bytes, keep_alive: bool, deadline: Deadline) -> None:
        self.keep_alive = keep_alive
        try:
            self.stream.send_all(request, deadline)
        except SendFailedError:
            if self.reused:
                raise _StaleConnectionError from None
            raise

    def _dropped(self, method: str) -> Exception:
        """The close that came before a byte of the answer: a stale kept-alive connection when
        the request may be sent again."""
        if self.reused and method in _REPLAYABLE:
            return _StaleConnectionError()
        return ConnectionDroppedError("the connection closed before the whole answer arrived")

    def head(self, deadline: Deadline, method: str) -> AnswerHead:
        """The answer's head, past any interim (1xx) answers; its body is then ready to read."""
        read = read_final_head(self.stream, self.buffered, deadline, MAX_HEAD_BYTES)
        if read is None:
            raise self._dropped(method)
        head, self.buffered = read
        self._frame_body(head, method)
        return head

    def _frame_body(self, head: AnswerHead, method: str) -> None:
        self.framing = head.framing(method)
        self.keep_alive = self.keep_alive and head.keeps_alive()
        if self.framing is Framing.UNTIL_CLOSE:
            self.keep_alive = False
        elif self.framing is not Framing.NONE:
            length = head.length if self.framing is Framing.LENGTH else None
            self.body = FramedBody(self.stream, self.buffered, length)
            self.buffered = b""

    def body_chunk(self, deadline: Deadline) -> Piece | None:
        """The next piece of the body; None at its end."""
        if self.body is not None:
            return self.body.next_piece(deadline)
        if self.framing is not Framing.UNTIL_CLOSE:
            return None
        piece, self.buffered = self.buffered or self.stream.receive(deadline), b""
        return piece or None  # b"": the close that ends this body

    def finish_cycle(self) -> bool:
        """Ready the connection for the next request; False when it must be closed instead."""
        leftover = self.body.leftover if self.body is not None else bool(self.buffered)
        if not self.keep_alive or leftover:
            return False  # bytes past the answer are not the next answer: never read them
        self.body = None
        self.framing = Framing.NONE
        self.reused = True
        return True


class Transport:
    """A thread-safe HTTP/1.1 client with a bounded keep-alive pool per origin.

    `tls` applies to every https origin unless a request passes its own (a client certificate
    that rotates, for instance). Use as a context manager, or call `close()`.
    """

    def __init__(
        self,
        tls: TlsSettings | None = None,
        dialer: Dialer | None = None,
        per_host: int = CONNECTIONS_PER_HOST,
        streams: int | None = None,
        route: Route | None = None,
    ) -> None:
        """`streams`: at most that many streamed answers (watches) open at once, so that they
        never hold every connection and starve the short requests (None: no bound of their
        own beyond `per_host`). `route`, when given, picks the dialer for each origin (a
        client of many servers, each maybe behind its own proxy); else `dialer` dials all."""
        self._tls = tls or TlsSettings()
        self._dialer = dialer or DirectDialer()
        self._route = route
        self._per_host = per_host
        self._stream_slots = None if streams is None else threading.Semaphore(streams)
        self._cond = threading.Condition()
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._open: dict[_Origin, int] = {}
        self._closed = False

    # -- the pool ----------------------------------------------------------------------------

    def _checkout(self, origin: _Origin, deadline: Deadline, *, fresh: bool) -> _Connection:
        """An idle kept-alive connection that still looks open, else a new one (slot permitting)."""
        while True:
            with self._cond:
                idle = self._idle.get(origin, [])
                reuse = idle.pop() if idle and not fresh else None
                if reuse is None:
                    while self._open.get(origin, 0) >= self._per_host:
                        left = deadline.remaining()
                        if left <= 0:
                            raise TimedOutError(
                                "no connection came free before the deadline", connected=False
                            )
                        self._cond.wait(left)
                        idle = self._idle.get(origin, [])
                        if idle and not fresh:
                            reuse = idle.pop()
                            break
                    if reuse is None:
                        self._open[origin] = self._open.get(origin, 0) + 1
            if reuse is None:
                return self._dial(origin, deadline)
            if reuse.stream.is_reusable():
                return reuse
            self._discard(origin, reuse)

    def _dial(self, origin: _Origin, deadline: Deadline) -> _Connection:
        try:
            route = self._route
            dialer = (
                self._dialer if route is None else route(origin.scheme, origin.host, origin.port)
            )
            stream = dialer.connect(origin.host, origin.port, deadline)
            if origin.tls is not None:
                from truegreen.http.tlsstream import start_tls  # ssl only for https

                try:
                    stream = start_tls(stream, origin.tls, origin.host, deadline)
                except BaseException:
                    stream.close()
                    raise
        except BaseException:
            self._release_slot(origin)
            raise
        return _Connection(stream)

    def _release_slot(self, origin: _Origin) -> None:
        with self._cond:
            self._open[origin] -= 1
            self._cond.notify()

    def _discard(self, origin: _Origin, connection: _Connection) -> None:
        connection.stream.close()
        self._release_slot(origin)

    def _give_back(self, origin: _Origin, connection: _Connection) -> None:
        if not connection.finish_cycle():
            self._discard(origin, connection)
            return
        with self._cond:
            if self._closed:
                connection.stream.close()
                self._open[origin] -= 1
            else:
                self._idle.setdefault(origin, []).append(connection)
            self._cond.notify()

    # -- requests ----------------------------------------------------------------------------

    def request(
        self,
        method: str,
        url: str,
        *,
        deadline: Deadline,
        max_bytes: int,
        headers: Headers = (),
        body: bytes | None = None,
        tls: TlsSettings | None = None,
        into: BodyBuffers | None = None,
        gzip: bool = False,
    ) -> Response:
        """Send one request and read its whole answer, by `deadline`, at most `max_bytes` of body
        (into one of `into`'s buffers when the body is framed). With `gzip`, the answer may come
        gzip-encoded (`Accept-Encoding: gzip`) and is handed back decoded, as Go's transport
        hands it back: the body decompressed within the same cap (`http/gzipped.py`), without
        its Content-Encoding and Content-Length.

        Raises a `TransportError`: TimedOutError, ConnectFailedError (TlsFailedError, …),
        ConnectionDroppedError, ProtocolViolationError, AnswerTooLargeError.
        """
        asked = [*headers, ("accept-encoding", "gzip")] if gzip else headers
        with self._open_answer(method, url, deadline, asked, body, tls) as answer:
            received = answer.read_all(max_bytes, into)
            encoding = answer.header("content-encoding") if gzip else None
            if encoding is None or encoding.lower() == "identity":
                return Response(answer.status, answer.headers, received)
        if encoding.lower() != "gzip":
            raise ProtocolViolationError(f"the answer came encoded as {encoding[:40]!r}, unasked")
        from truegreen.http.gzipped import gunzip  # zlib only where an answer is gzipped

        decoded = gunzip(received, max_bytes, into)
        del received  # its buffer may take the next body
        kept = tuple(
            (name, value)
            for name, value in answer.headers
            if name not in ("content-encoding", "content-length")
        )
        return Response(answer.status, kept, decoded)

    def stream_lines(
        self,
        method: str,
        url: str,
        *,
        deadline: Deadline,
        idle_seconds: float,
        max_line: int,
        headers: Headers = (),
        tls: TlsSettings | None = None,
        head_deadline: Deadline | None = None,
    ) -> "LineStream":
        """Open a streamed answer (a watch) whose body is read as lines, each at most `max_line`
        bytes; a wait longer than `idle_seconds` for the next bytes, or the `deadline`, ends it.
        `head_deadline` (default `deadline`) bounds connecting and the wait for the status line.
        Close it (or use it as a context manager) to release the connection."""
        opening = deadline if head_deadline is None else head_deadline.earliest(deadline)
        slots = self._stream_slots
        if slots is None:
            return LineStream(
                self._open_answer(method, url, opening, headers, None, tls),
                deadline,
                idle_seconds,
                max_line,
            )
        if not slots.acquire(timeout=max(opening.remaining(), 0.0)):
            raise TimedOutError("no connection came free for a watch in time", connected=False)
        try:
            answer = self._open_answer(method, url, opening, headers, None, tls)
        except BaseException:
            slots.release()
            raise
        return LineStream(answer, deadline, idle_seconds, max_line, released=slots.release)

    def _open_answer(
        self,
        method: str,
        url: str,
        deadline: Deadline,
        headers: Headers,
        body: bytes | None,
        tls: TlsSettings | None,
    ) -> "Answer":
        origin, target = _split(url, tls or self._tls)
        sent = [
            ("host", origin.authority),
            ("user-agent", _USER_AGENT),
            *((k, v) for k, v in headers if k.lower() not in ("host", "content-length")),
        ]
        if body is not None:
            sent.append(("content-length", str(len(body))))
        request = request_head(method, target, sent) + (body or b"")  # refused before dialing
        keep_alive = not says_close(sent)
        fresh = False
        while True:
            connection = self._checkout(origin, deadline, fresh=fresh)
            try:
                connection.send(request, keep_alive, deadline)
                head = connection.head(deadline, method)
            except _StaleConnectionError:
                # The server closed a kept-alive connection before our request reached it:
                # send once more, on a new connection (never twice).
                self._discard(origin, connection)
                fresh = True
                continue
            except BaseException:
                self._discard(origin, connection)
                raise
            return Answer(self, origin, connection, method, head, deadline)

    def close(self) -> None:
        """Close every idle connection; connections in use close when their answer is done."""
        with self._cond:
            self._closed = True
            for origin, idle in self._idle.items():
                for connection in idle:
                    connection.stream.close()
                    self._open[origin] -= 1
            self._idle.clear()

    def __enter__(self) -> "Transport":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Answer:
    """An answer whose head has arrived and whose body is still on the connection."""

    def __init__(
        self,
        transport: Transport,
        origin: _Origin,
        connection: _Connection,
        method: str,
        head: AnswerHead,
        deadline: Deadline,
    ) -> None:
        self._transport = transport
        self._origin = origin
        self._connection: _Connection | None = connection
        self._method = method
        self._deadline = deadline
        self.status: int = head.status
        self.headers: tuple[tuple[str, str], ...] = head.headers

    def header(self, name: str) -> str | None:
        """The last value of header `name`, or None."""
        return _header(self.headers, name)

    def chunk(self, deadline: Deadline) -> Piece | None:
        """The next piece of the body, by `deadline`; None at its end (connection released)."""
        connection = self._connection
        if connection is None:
            return None
        piece = self._reading(lambda: connection.body_chunk(deadline))
        if piece is None:
            self._connection = None
            self._transport._give_back(self._origin, connection)
        return piece

    def _reading(self, read: Callable[[], T]) -> T:
        """`read()` of the body; the connection dropped when it raises, a drop said as a cut."""
        try:
            return read()
        except _StaleConnectionError:
            # An answer already started cannot be stale; the head arrived, so this is a drop.
            self.close()
            raise AnswerCutError("the connection closed mid-answer") from None
        except ConnectionDroppedError as dropped:
            self.close()
            raise AnswerCutError(str(dropped)) from None
        except BaseException:
            self.close()
            raise

    def read_all(self, max_bytes: int, into: BodyBuffers | None = None) -> Body:
        """The whole body, or AnswerTooLargeError as soon as it is known to exceed `max_bytes`."""
        declared = self.header("content-length")
        # A HEAD answer's Content-Length describes a body that is not sent.
        bodiless = self._method == "HEAD" or self.status in (204, 304)
        if not bodiless and declared and declared.isdigit() and int(declared) > max_bytes:
            self.close()
            raise AnswerTooLargeError(max_bytes)
        connection = self._connection
        body = connection.body if connection is not None else None
        if connection is not None and body is not None:
            whole = self._reading(lambda: body.read_all(self._deadline, max_bytes, into))
            self._connection = None
            self._transport._give_back(self._origin, connection)
            return whole
        parts: list[Piece] = []
        size = 0
        while (piece := self.chunk(self._deadline)) is not None:
            size += len(piece)
            if size > max_bytes:
                self.close()
                raise AnswerTooLargeError(max_bytes)
            parts.append(piece)
        return b"".join(parts)

    def close(self) -> None:
        """Drop the connection unless the body was read to its end (then it went back)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            self._transport._discard(self._origin, connection)

    def __enter__(self) -> "Answer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LineStream:
    """The body of a streamed answer as lines (a watch: one JSON document per line)."""

    def __init__(
        self,
        answer: Answer,
        deadline: Deadline,
        idle_seconds: float,
        max_line: int,
        released: Callable[[], None] | None = None,
    ):
        self.answer = answer
        self._deadline = deadline
        self._idle = idle_seconds
        self._max_line = max_line
        self._buffer = b""
        self._released = released
        self._release_lock = threading.Lock()

    def _release(self) -> None:
        """Give back the stream's slot, once (at the body's end or on close)."""
        with self._release_lock:
            released, self._released = self._released, None
        if released is not None:
            released()

    @property
    def status(self) -> int:
        """The answer's status code."""
        return self.answer.status

    def lines(self) -> Iterator[bytes]:
        """Each non-empty line, without its newline, until the body ends.

        Raises TimedOutError when no byte arrives for `idle_seconds` or the deadline passes,
        AnswerTooLargeError when a line grows past `max_line`.
        """
        while True:
            while b"\n" in self._buffer:
                line, _, self._buffer = self._buffer.partition(b"\n")
                self._check(line)
                if line.strip():
                    yield line
            self._check(self._buffer)
            wait = Deadline.after(self._idle).earliest(self._deadline)
            piece = self.answer.chunk(wait)
            if piece is None:
                self._release()
                if self._buffer.strip():
                    yield self._buffer
                self._buffer = b""
                return
            self._buffer += piece

    def _check(self, line: bytes) -> None:
        if len(line) > self._max_line:
            self.close()
            raise AnswerTooLargeError(self._max_line)

    def close(self) -> None:
        """Release the connection (closed: a watch's body never ends on its own)."""
        self.answer.close()
        self._release()

    def __enter__(self) -> "LineStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
