"""Independent reads sent together, a bounded number at a time, in an order that is kept.

The live client is thread-safe and pools as many connections per server as `IN_FLIGHT`, like a
browser to one host. Every read is given a ticket when it is asked for, in the caller's order;
a reader that records (the snapshot writer) keeps its records in ticket order, so a snapshot
taken with reads in flight together is the same as one taken with reads one after another.
"""

import itertools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import ContextVar
from types import TracebackType
from typing import TypeVar

T = TypeVar("T")

IN_FLIGHT = 6
"""Reads in flight at once (the transport keeps six connections per server)."""

_tickets = itertools.count()
_current: ContextVar[int | None] = ContextVar("read_ticket", default=None)


def read_ticket() -> int:
    """The running read's place in the order reads were asked for.

    A read run by a `ReadSchedule` carries the ticket it was given when submitted; any other
    read takes the next ticket now, which is also the order it was asked for.
    """
    ticket = _current.get()
    return next(_tickets) if ticket is None else ticket


class ReadSchedule:
    """Runs submitted reads on at most `in_flight` threads; results come back as futures.

    Leaving the `with` block waits for every read submitted (each is bounded by its request
    deadline); on an error it cancels those that have not started.
    """

    def __init__(self, in_flight: int = IN_FLIGHT) -> None:
        self._pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="read")

    def submit(self, read: Callable[[], T]) -> "Future[T]":
        """Start `read` when a thread is free, with the next ticket."""
        return self._pool.submit(_with_ticket, next(_tickets), read)

    def __enter__(self) -> "ReadSchedule":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._pool.shutdown(wait=True, cancel_futures=exc is not None)


def _with_ticket(ticket: int, read: Callable[[], T]) -> T:
    token = _current.set(ticket)
    try:
        return read()
    finally:
        _current.reset(token)
