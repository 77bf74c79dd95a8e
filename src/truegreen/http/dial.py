"""Opening the connection a request travels on: directly, or through a proxy.

A dialer returns a `Stream`, not a socket: a proxy reached over TLS hands back a stream that is
itself TLS, and the request's own TLS must run inside it (TLS in TLS). `start_tls` in
`truegreen.http.tlsstream` runs over any `Stream`, so every dialer composes with every target.
"""

import contextlib
import errno
import ipaddress
import select
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from truegreen.http.deadline import Deadline
from truegreen.http.errors import (
    AddressNotFoundError,
    ConnectionDroppedError,
    SendFailedError,
    TimedOutError,
)
from truegreen.http.racing import Address, connect_first

CHUNK = 65536
"""Bytes asked of the operating system per receive."""


class Stream(Protocol):
    """A connected byte stream whose every blocking step ends by the caller's deadline."""

    def send_all(self, data: bytes, deadline: Deadline) -> None:
        """Send every byte of `data`, or raise (TimedOutError, ConnectionDroppedError)."""
        ...

    def receive(self, deadline: Deadline) -> bytes:
        """The next bytes to arrive (at most `CHUNK`); b"" once the peer has closed."""
        ...

    def is_reusable(self) -> bool:
        """True when an idle stream is still open with nothing unexpected waiting on it."""
        ...

    def close(self) -> None:
        """Release the connection; never raises."""
        ...


class Dialer(Protocol):
    """Opens a stream to `host:port`, bounded by `deadline`.

    Raises `ConnectFailedError` (or `TimedOutError` with connected=False) when it cannot; the
    stream it returns reaches `host:port` end to end, TLS to the target not yet started.
    """

    def connect(self, host: str, port: int, deadline: Deadline) -> Stream:
        """A stream to `host:port` (through whatever this dialer goes through)."""
        ...

    def describe(self) -> str:
        """Plain words for messages: `directly`, `through the proxy proxy.corp:3128`."""
        ...


class SocketStream:
    """A `Stream` over a connected TCP socket.

    Before every blocking call the socket's timeout is set to what is left of the deadline, so
    a peer that drips one byte at a time still ends at the deadline, never per read.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def _arm(self, deadline: Deadline, doing: str) -> None:
        left = deadline.remaining()
        if left <= 0:
            raise TimedOutError(f"the deadline passed while {doing}", connected=True)
        self._sock.settimeout(left)

    def send_all(self, data: bytes, deadline: Deadline) -> None:
        """Send all of `data`, re-arming the timeout from the deadline between partial sends."""
        view = memoryview(data)
        while view:
            self._arm(deadline, "sending")
            try:
                sent = self._sock.send(view)
            except TimeoutError:
                raise TimedOutError("the deadline passed while sending", connected=True) from None
            except OSError as error:
                raise SendFailedError(
                    f"the connection broke while sending ({_errno_name(error)})"
                ) from None
            view = view[sent:]

    def receive(self, deadline: Deadline) -> bytes:
        """Up to `CHUNK` bytes; b"" at end of stream; TimedOutError at the deadline."""
        self._arm(deadline, "waiting for the answer")
        try:
            data = self._sock.recv(CHUNK)
        except TimeoutError:
            raise TimedOutError("no answer before the deadline", connected=True) from None
        except OSError as error:
            raise ConnectionDroppedError(f"the connection broke ({_errno_name(error)})") from None
        if data and deadline.expired:
            raise TimedOutError("the answer was still arriving at the deadline", connected=True)
        return data

    def is_reusable(self) -> bool:
        """An idle HTTP connection has nothing to read; readable means closed or garbage."""
        try:
            poller = select.poll()  # poll, not select: descriptors past 1024 are fine
            poller.register(self._sock, select.POLLIN)
            return not poller.poll(0)
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        """Close the socket, ignoring errors from a peer already gone."""
        with contextlib.suppress(OSError):
            self._sock.close()


def _errno_name(error: OSError) -> str:
    return errno.errorcode.get(error.errno or 0, type(error).__name__)


Resolver = Callable[[str, int, Deadline], list[Address]]
"""The addresses of a host and port, found by a deadline (`resolve_name`)."""
AddressCheck = Callable[[str, int, Address], None]
"""Raises AddressRefusedError for an address `host:port` resolved to that may not be dialled
(`http/address_policy.py`)."""
Connector = Callable[[Sequence[Address], str, Deadline], socket.socket]
"""Connects to the first of the addresses that answers (`connect_first`)."""


class DirectDialer:
    """Connects straight to the target with TCP, as Go's dialer connects for kubectl: each of
    the name's addresses gets its share of the deadline, and the other address family joins
    after 300 ms (`http/racing.py`). Name resolution is bounded by the deadline too."""

    def __init__(
        self,
        resolver: Resolver | None = None,
        check: AddressCheck | None = None,
        connector: Connector | None = None,
    ) -> None:
        """`resolver` finds a name's addresses (`resolve_name` unless given); `check`, when
        given, judges every one of them before any is dialled (one refused refuses the name:
        a name that resolves to a metadata address is not to be trusted with the others);
        `connector` dials them (`connect_first` unless given)."""
        self._resolver = resolver or resolve_name
        self._check = check
        self._connector = connector or connect_first

    def connect(self, host: str, port: int, deadline: Deadline) -> Stream:
        """A TCP stream to `host:port`, to the first of its addresses that answers."""
        addresses = self._resolver(host, port, deadline)
        if self._check is not None:
            for address in addresses:
                self._check(host, port, address)
        sock = self._connector(addresses, f"{host}:{port}", deadline)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return SocketStream(sock)

    def describe(self) -> str:
        """How this dialer reaches a server."""
        return "directly"


def _zone(name: str) -> int:
    """The interface index of an IPv6 zone, as Go reads one (net/interface.go `zoneToInt`
    after `zoneCache.index`): an interface's name, else a number, else 0."""
    try:
        return socket.if_nametoindex(name)
    except OSError:
        return int(name) if name.isascii() and name.isdigit() else 0


def resolve_name(host: str, port: int, deadline: Deadline) -> list[Address]:
    """The addresses of `host`, in the order the system's resolver sorts them (RFC 6724, as
    Go sorts them); a literal IP without asking anyone.

    `getaddrinfo` ignores socket timeouts, so a name is resolved on a thread of its own and
    abandoned at the deadline rather than holding the request past it.
    """
    bare = host.strip("[]")
    try:
        literal = ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        if isinstance(literal, ipaddress.IPv6Address) and literal.scope_id:
            return [(socket.AF_INET6, (bare.partition("%")[0], port, 0, _zone(literal.scope_id)))]
        family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
        return [(family, (bare, port))]
    found: list[Address] = []
    errors: list[OSError] = []

    def look_up() -> None:
        try:
            # As bytes, as Go's resolver passes it: a text name would go through the idna codec,
            # which loads stringprep's tables and raises UnicodeError (in this thread) for a
            # name such as `a..b`, where the resolver's own answer is "not found".
            answers = socket.getaddrinfo(bare.encode(), port, type=socket.SOCK_STREAM)
            for family, _, _, _, address in answers:
                found.append((family, (str(address[0]), int(address[1]))))
        except OSError as error:
            errors.append(error)

    worker = threading.Thread(target=look_up, name=f"resolve {bare}", daemon=True)
    worker.start()
    worker.join(deadline.remaining())
    if worker.is_alive():
        raise TimedOutError(f"the name {bare} did not resolve before the deadline", connected=False)
    if errors or not found:
        raise AddressNotFoundError(f"the name {bare} was not found")
    return found
