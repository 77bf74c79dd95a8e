"""Independent reads sent together, a bounded number at a time, in an order that is kept.

The live client is thread-safe and pools as many connections per server as `IN_FLIGHT`, like a
browser to one host. Every read is given a ticket when it is asked for, in the caller's order;
a reader that records (the snapshot writer) keeps its records in ticket order, so a snapshot
taken with reads in flight together is the same as one taken with reads one after another.

Plain threads, not concurrent.futures: that package imports logging (and with it traceback),
a cost every doctor run would pay before its first request.
"""

import itertools
import threading
from collections.abc import Callable
from contextvars import ContextVar
from queue import SimpleQueue
from types import TracebackType
from typing import Any, Generic, NamedTuple, TypeVar

T = TypeVar("T")

IN_FLIGHT = 32
"""Reads in flight at once (the transport keeps 32 connections per server): enough for every
read doctor makes of a namespace that depends on nothing to go out in one wave, discovery and
the lists of every training kind among them (tests/scenario/test_read_waves.py)."""

NEAR_ANSWER = 0.005
"""A server whose first answer (discovery, a new connection's included) comes within this many
seconds answers faster than truegreen's own work on each answer: reads sent over many
connections at once then only add a thread and a connection (a TLS handshake on a real
cluster) per read, and arrive no sooner (bench/run.py `doctor.small_ratio_vs_kubectl`)."""
NEAR_IN_FLIGHT = 2
"""Reads in flight at once to a server that answers within NEAR_ANSWER."""

IN_MEMORY = 0
"""For a reader that answers from memory (the monitor's watch cache): each read runs in the
caller's thread as it is submitted. A thread's start and hand-over cost more than such a read:
over 40 namespaces they are half of a threaded evaluation's CPU (bench/monitor_bench.py)."""

_tickets = itertools.count()
_current: ContextVar[int | None] = ContextVar("read_ticket", default=None)


def read_ticket() -> int:
    """The running read's place in the order reads were asked for.

    A read run by a `ReadSchedule` carries the ticket it was given when submitted; any other
    read takes the next ticket now, which is also the order it was asked for.
    """
    ticket = _current.get()
    return next(_tickets) if ticket is None else ticket


def in_flight_for(first_answer: float) -> int:
    """Reads to have in flight at once, by how many seconds the server took for its first
    answer: IN_FLIGHT over a link whose round trips are what the operator waits for,
    NEAR_IN_FLIGHT where the answers come faster than they can be used."""
    return NEAR_IN_FLIGHT if first_answer <= NEAR_ANSWER else IN_FLIGHT


class Pending(Generic[T]):
    """A read under way."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def result(self) -> T:
        """The read's answer, once it is in; what it raised (a bug), raised here."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def _settle(self, value: T | None, error: BaseException | None) -> None:
        self._value, self._error = value, error
        self._done.set()


class ReadSchedule:
    """Runs submitted reads, at most `in_flight` at a time, in the order submitted.

    At most `in_flight` threads, each started when a read is submitted while fewer are running,
    each then taking the next read waiting: a thread's start waits for the interpreter to run
    it, which under load costs more than a read answered from memory (a run over many
    namespaces submits hundreds). `in_flight` of `IN_MEMORY` runs each read in the caller's
    thread as it is submitted, in the same order with the same tickets. Leaving the `with` block
    waits for every read submitted (each is bounded by its request deadline); on an error,
    reads that have not started are dropped.
    """

    def __init__(self, in_flight: int = IN_FLIGHT) -> None:
        self._inline = in_flight == IN_MEMORY
        self._in_flight = max(1, in_flight)
        self._waiting: SimpleQueue[_Submitted[Any] | None] = SimpleQueue()  # first come, first run
        self._workers: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._dropped = False

    def submit(self, read: Callable[[], T]) -> Pending[T]:
        """Start `read` when a thread is free (now, here, for `IN_MEMORY`), with the next
        ticket."""
        pending: Pending[T] = Pending()
        if self._inline:
            self._run(_Submitted(next(_tickets), read, pending))
            return pending
        with self._lock:
            self._waiting.put(_Submitted(next(_tickets), read, pending))
            worker = None
            if len(self._workers) < self._in_flight:
                worker = threading.Thread(target=self._work, name="read", daemon=True)
                self._workers.append(worker)
        if worker is not None:
            worker.start()
        return pending

    def abandon(self) -> None:
        """Drop every read not yet started: no one will want their answers (the cluster did
        not answer the read they were sent beside). Reads under way finish, each by its
        deadline."""
        self._dropped = True

    def _work(self) -> None:
        while (submitted := self._waiting.get()) is not None:
            if not self._dropped:
                self._run(submitted)

    @staticmethod
    def _run(submitted: "_Submitted[Any]") -> None:
        token = _current.set(submitted.ticket)  # each read carries the ticket it was given
        try:
            value = submitted.read()
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits for it
            submitted.pending._settle(None, error)
        else:
            submitted.pending._settle(value, None)
        finally:
            _current.reset(token)

    def __enter__(self) -> "ReadSchedule":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            workers = list(self._workers)
        if exc is not None:
            self._dropped = True
        for _ in workers:
            self._waiting.put(None)
        if exc is None:
            for worker in workers:
                worker.join()


class _Submitted(NamedTuple, Generic[T]):
    ticket: int
    read: Callable[[], T]
    pending: Pending[T]
