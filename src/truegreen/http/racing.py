"""Connecting to the first of a name's addresses that answers, as Go's dialer connects for
kubectl (src/net/dial.go `DialContext`, `dialParallel`, `dialSerial`, `partialDeadline`).

The addresses are split by family, the first address's family first (ipsock.go `partition`).
Each family's addresses are tried one after another, each with its share of the time left
(that time over the addresses left, at least two seconds unless less is left): an address
that drops every SYN costs its share, not the whole deadline. The other family starts 300 ms
later, or as soon as the first has failed (RFC 6555 Fast Fallback), and the first connection
made wins. Sockets connect without blocking and are waited on together, so nothing outlives
the call: every attempt still running when it returns is closed.
"""

import errno
import select
import socket
import time
from collections.abc import Sequence

from msgspec import Struct

from truegreen.http.deadline import Deadline
from truegreen.http.errors import (
    ConnectFailedError,
    ConnectRefusedError,
    TimedOutError,
    TransportError,
)

Address = tuple[int, tuple[str, int] | tuple[str, int, int, int]]
"""An address family (AF_INET, AF_INET6) and the (host, port) to connect to; an IPv6 address
with a zone as (host, port, flow info, the zone's interface index)."""

FALLBACK_DELAY = 0.3
"""Seconds the first family is tried alone before the other joins (Go's fallbackDelay)."""
MIN_SHARE = 2.0
"""The least time an address gets while more is left (partialDeadline's saneMinimum)."""


def share(left: float, addresses_left: int) -> float:
    """Seconds the next of `addresses_left` addresses may take, of `left` (partialDeadline)."""
    each = left / addresses_left
    return each if each >= MIN_SHARE else min(left, MIN_SHARE)


def split_by_family(addresses: Sequence[Address]) -> tuple[list[Address], list[Address]]:
    """The addresses of the first address's family, and the others, each in their order."""
    first = addresses[0][0] if addresses else None
    return (
        [address for address in addresses if address[0] == first],
        [address for address in addresses if address[0] != first],
    )


class _Attempt(Struct):
    """One connection being made, and when it gives up."""

    sock: socket.socket
    until: float


class _Family:
    """One family's addresses, tried one after another (dialSerial); the first error is kept,
    as it is the most telling."""

    def __init__(self, addresses: list[Address], name: str) -> None:
        self._waiting = addresses
        self._name = name
        self.attempt: _Attempt | None = None
        self.first_error: TransportError | None = None

    @property
    def done(self) -> bool:
        """Every address has been tried and none connected."""
        return self.attempt is None and not self._waiting

    def next_attempt(self, now: float, deadline: Deadline) -> None:
        """Start connecting to the next address unless one is under way (or none is left)."""
        while self.attempt is None and self._waiting:
            left = deadline.at - now
            if left <= 0:
                self._failed(_timed_out(self._name))
                self._waiting = []
                return
            family, address = self._waiting[0]
            until = now + share(left, len(self._waiting))
            del self._waiting[0]
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            code = sock.connect_ex(address)
            if code in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
                self.attempt = _Attempt(sock, until)
            else:
                sock.close()
                self._failed(_refused(self._name, code))

    def give_up_if_late(self, now: float) -> None:
        """Abandon the attempt under way once its share of the time is spent."""
        if self.attempt is not None and now >= self.attempt.until:
            self.attempt.sock.close()
            self.attempt = None
            self._failed(_timed_out(self._name))

    def finish(self) -> socket.socket | None:
        """The connected socket once the attempt under way has succeeded; None (and the next
        address, later) when it failed."""
        assert self.attempt is not None
        sock, self.attempt = self.attempt.sock, None
        code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code == 0:
            return sock
        sock.close()
        self._failed(_refused(self._name, code))
        return None

    def close(self) -> None:
        """Drop the attempt under way, if any."""
        if self.attempt is not None:
            self.attempt.sock.close()
            self.attempt = None

    def _failed(self, error: TransportError) -> None:
        if self.first_error is None:
            self.first_error = error


def connect_first(addresses: Sequence[Address], name: str, deadline: Deadline) -> socket.socket:
    """A socket connected to the first of `addresses` (of `name`, for messages) that answers,
    by `deadline`; the first family's first error when none does (dialParallel)."""
    first_addresses, other_addresses = split_by_family(addresses)
    first = _Family(first_addresses, name)
    other = _Family(other_addresses, name) if other_addresses else None
    racing = [first]
    other_starts = time.monotonic() + FALLBACK_DELAY
    try:
        while True:
            now = time.monotonic()
            for family in racing:
                family.give_up_if_late(now)
                family.next_attempt(now, deadline)
            if other is not None and (now >= other_starts or first.done):
                racing.append(other)  # its turn, or at once when the first family failed
                other = None
                continue
            if other is None and all(family.done for family in racing):
                raise first.first_error or _timed_out(name)
            connected = _wait(racing, other_starts if other is not None else None, deadline)
            if connected is not None:
                return connected
    finally:
        for family in racing:
            family.close()


def _wait(
    racing: list[_Family], other_starts: float | None, deadline: Deadline
) -> socket.socket | None:
    """Wait for an attempt to end, an attempt's share to pass or the other family's turn;
    the socket of an attempt that connected."""
    attempts = {family.attempt.sock.fileno(): family for family in racing if family.attempt}
    wake = min(
        [deadline.at, *(family.attempt.until for family in racing if family.attempt)]
        + ([other_starts] if other_starts is not None else [])
    )
    poller = select.poll()
    for descriptor in attempts:
        poller.register(descriptor, select.POLLOUT)
    timeout_ms = max(0, int((wake - time.monotonic()) * 1000) + 1)
    for descriptor, _ in poller.poll(timeout_ms):
        connected = attempts[descriptor].finish()
        if connected is not None:
            return connected
    return None


def _refused(name: str, code: int) -> ConnectFailedError:
    if code == errno.ECONNREFUSED:
        return ConnectRefusedError(f"{name} refused the connection")
    return ConnectFailedError(f"could not connect to {name} ({errno.errorcode.get(code, code)})")


def _timed_out(name: str) -> TimedOutError:
    return TimedOutError(f"no connection to {name} before the deadline", connected=False)
