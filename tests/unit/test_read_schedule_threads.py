"""The read schedule (cluster/schedule.py): reads run at most `in_flight` at a time, on at most
`in_flight` threads, started in the order submitted, each with the ticket it was given; a read
that raises hands its error to whoever waits for it; on an error, reads not started are
dropped. For a reader answering from memory (`IN_MEMORY`), each read runs in the caller's
thread as it is submitted, with its ticket."""

import threading

import pytest

from truegreen.cluster.schedule import IN_MEMORY, ReadSchedule, read_ticket


def _read_threads() -> set[int]:
    return {t.ident or 0 for t in threading.enumerate() if t.name == "read"}


def test_many_reads_run_on_as_many_threads_as_may_be_in_flight() -> None:
    before = _read_threads()
    seen: set[threading.Thread] = set()  # the threads themselves: an ident is reused
    lock = threading.Lock()

    def read(n: int) -> int:
        with lock:
            seen.add(threading.current_thread())
        return n * n

    with ReadSchedule(3) as schedule:
        pending = [schedule.submit(lambda n=n: read(n)) for n in range(60)]  # type: ignore[misc]
    assert [p.result() for p in pending] == [n * n for n in range(60)]
    assert seen, "no read ran on a thread of its own"
    assert len(seen) <= 3, f"60 reads started {len(seen)} threads, not at most 3"
    assert _read_threads() <= before, "the schedule's threads outlived its block"


def test_reads_in_flight_stay_within_the_bound_and_reach_it() -> None:
    running = 0
    most = 0
    lock = threading.Lock()
    # The first two reads wait for each other: a bound of one breaks the barrier.
    together = threading.Barrier(2, timeout=10)

    def read() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        together.wait()
        with lock:
            running -= 1

    with ReadSchedule(2) as schedule:
        pending = [schedule.submit(read) for _ in range(10)]
    for p in pending:
        p.result()
    assert most == 2


def test_reads_start_in_the_order_submitted_with_their_tickets() -> None:
    started: list[int] = []
    tickets: list[int] = []

    def read(n: int) -> None:
        started.append(n)
        tickets.append(read_ticket())

    with ReadSchedule(1) as schedule:
        for n in range(20):
            schedule.submit(lambda n=n: read(n))  # type: ignore[misc]
    assert started == list(range(20))
    assert tickets == sorted(tickets)
    assert len(set(tickets)) == 20


def test_an_error_in_a_read_is_raised_to_whoever_waits_for_it() -> None:
    def broken() -> int:
        raise KeyError("bug")

    with ReadSchedule(2) as schedule:
        failed = schedule.submit(broken)
        fine = schedule.submit(lambda: 7)
    assert fine.result() == 7
    with pytest.raises(KeyError, match="bug"):
        failed.result()


def test_on_an_error_in_the_block_reads_not_started_are_dropped() -> None:
    ran: list[int] = []
    release = threading.Event()

    def first() -> None:
        release.wait(10)
        ran.append(0)

    def caller() -> None:
        with ReadSchedule(1) as schedule:
            schedule.submit(first)
            for n in range(1, 5):
                schedule.submit(lambda n=n: ran.append(n))  # type: ignore[misc]
            raise RuntimeError("the caller's bug")

    with pytest.raises(RuntimeError, match="the caller's bug"):
        caller()
    release.set()
    for thread in threading.enumerate():
        if thread.name == "read":
            thread.join(10)
    assert ran == [0], f"reads queued behind the error still ran: {ran}"


def test_in_memory_reads_run_in_the_callers_thread_as_submitted_with_their_tickets() -> None:
    before = _read_threads()
    ran: list[tuple[int, threading.Thread, int]] = []

    def read(n: int) -> int:
        ran.append((n, threading.current_thread(), read_ticket()))
        return n * n

    with ReadSchedule(IN_MEMORY) as schedule:
        pending = []
        for n in range(20):
            pending.append(schedule.submit(lambda n=n: read(n)))  # type: ignore[misc]
            assert [r[0] for r in ran] == list(range(n + 1)), "a read waited to be run"
        outside = read_ticket()
    assert [p.result() for p in pending] == [n * n for n in range(20)]
    assert {thread for _, thread, _ in ran} == {threading.current_thread()}
    assert _read_threads() <= before, "a read thread was started"
    tickets = [ticket for _, _, ticket in ran]
    assert tickets == sorted(tickets)
    assert len(set(tickets)) == 20
    assert outside > tickets[-1], "the last read's ticket outlived it"


def test_an_in_memory_read_that_raises_hands_its_error_to_whoever_waits_for_it() -> None:
    def broken() -> int:
        raise KeyError("bug")

    with ReadSchedule(IN_MEMORY) as schedule:
        failed = schedule.submit(broken)
        fine = schedule.submit(lambda: 7)
    assert fine.result() == 7
    with pytest.raises(KeyError, match="bug"):
        failed.result()
