"""A name with several addresses is dialed as Go's dialer dials it for kubectl (src/net/dial.go):
each address gets its share of the time left (partialDeadline: at least 2 s while more is
left), the other address family joins after 300 ms (fallbackDelay), and the request's one
deadline still ends it all.

The addresses are real loopback listeners: one whose listen queue is full, so the kernel drops
every SYN as a dead address does (`hostile.full_backlog`), beside one that answers. The name
is resolved by a resolver handed to the dialer, since no resolver here knows a name with
several addresses.
"""

import socket
from collections.abc import Iterator

import pytest

from tests.support import hostile
from tests.support.hostile import HostileServer
from truegreen.http.deadline import Deadline
from truegreen.http.dial import DirectDialer, resolve_name
from truegreen.http.errors import ConnectRefusedError, TimedOutError
from truegreen.http.racing import Address, share, split_by_family
from truegreen.http.transport import Transport

V4, V6 = socket.AF_INET, socket.AF_INET6


def _named(*addresses: Address) -> DirectDialer:
    """A dialer for which every name has `addresses`, in that order."""

    def resolve(host: str, port: int, deadline: Deadline) -> list[Address]:
        return list(addresses)

    return DirectDialer(resolve)


def _get(dialer: DirectDialer, seconds: float) -> int:
    with Transport(dialer=dialer) as transport:
        answer = transport.request(
            "GET", "http://api.internal/", deadline=Deadline.after(seconds), max_bytes=100
        )
    return answer.status


@pytest.fixture
def answering() -> Iterator[HostileServer]:
    with HostileServer(hostile.keep_alive) as server:
        yield server


def test_an_address_that_drops_every_syn_costs_its_share_then_the_next_answers(
    answering: HostileServer,
) -> None:
    """Two addresses and 4.5 s: the dead one gets 2.25 s, the live one the rest (before,
    the dead one took the whole deadline and the request timed out)."""
    with hostile.full_backlog() as dead:
        dialer = _named((V4, ("127.0.0.1", dead)), (V4, ("127.0.0.1", answering.port)))
        assert _get(dialer, 4.5) == 200
    assert answering.counts["connections"] == 1


def test_the_other_family_joins_after_a_moment_and_wins(answering: HostileServer) -> None:
    """An IPv6 address that drops SYNs first, IPv4 second: IPv4 is tried 300 ms in, long
    before the IPv6 address's share (the whole 20 s: it is its family's only address) ends."""
    with hostile.full_backlog("::1") as dead:
        dialer = _named((V6, ("::1", dead)), (V4, ("127.0.0.1", answering.port)))
        assert _get(dialer, 20) == 200
    assert answering.counts["connections"] == 1


def test_the_first_error_is_the_one_said_and_the_deadline_ends_the_rest() -> None:
    """dialSerial keeps the first address's error: a refusal, though the second address then
    used up the deadline."""
    with hostile.full_backlog() as dead:
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        refusing = int(closed.getsockname()[1])
        closed.close()  # nothing listens there: connecting is refused
        dialer = _named((V4, ("127.0.0.1", refusing)), (V4, ("127.0.0.1", dead)))
        with pytest.raises(ConnectRefusedError, match=r"api\.internal:80 refused the connection"):
            _get(dialer, 0.5)
        with pytest.raises(TimedOutError) as caught:
            _get(_named((V4, ("127.0.0.1", dead)), (V6, ("::1", dead))), 0.5)
    assert caught.value.connected is False


@pytest.mark.parametrize(
    ("left", "addresses", "seconds"),
    [(10.0, 4, 2.5), (4.5, 2, 2.25), (5.0, 3, 2.0), (1.5, 3, 1.5), (3.0, 1, 3.0)],
)
def test_each_address_s_share_is_go_s_partial_deadline(
    left: float, addresses: int, seconds: float
) -> None:
    assert share(left, addresses) == seconds


def test_the_first_address_s_family_goes_first() -> None:
    a, b, c = (V6, ("::1", 1)), (V4, ("127.0.0.1", 2)), (V6, ("::2", 3))
    assert split_by_family([a, b, c]) == ([a, c], [b])
    assert split_by_family([b, a, c]) == ([b], [a, c])


def test_an_ipv6_zone_is_unescaped_and_dialled_on_the_interface_it_names(
    answering: HostileServer,
) -> None:
    """`http://[::1%25lo]:8443`: the zone is `lo` (RFC 6874's `%25` is `%`, as Go's net/url
    unescapes it), dialled on lo's interface index (Go's zoneCache.index). The request itself
    goes to the answering listener, so that only the address the name resolved to is judged."""
    resolved: list[Address] = []

    def resolve(host: str, port: int, deadline: Deadline) -> list[Address]:
        resolved.extend(resolve_name(host, port, deadline))
        return [(V4, ("127.0.0.1", answering.port))]

    with Transport(dialer=DirectDialer(resolve)) as transport:
        answer = transport.request(
            "GET", "http://[::1%25lo]:8443/", deadline=Deadline.after(5), max_bytes=100
        )
    assert answer.status == 200
    assert resolved == [(V6, ("::1", 8443, 0, socket.if_nametoindex("lo")))]
