"""How old a value may be before it reads `unknown`: never a stale green.

Two clocks matter. A cached read is as current as the last time the server confirmed it (a
list, an event, a bookmark, a watch it ended cleanly); a verdict is as current as the oldest
read it used. Past the maximum age either one reads as could-not-check.
"""

from msgspec import Struct

from truegreen.cluster.classify import describe
from truegreen.cluster.reads import CantRead, ReadFailure

TRANSIENT = frozenset(
    {
        ReadFailure.TIMEOUT,
        ReadFailure.UNREACHABLE,
        ReadFailure.SERVER_ERROR,
        ReadFailure.UNCONFIRMED,
    }
)
"""Failures that may pass by themselves: the objects read before stay usable until they age
(and a read that aged, UNCONFIRMED, is current again at the cluster's next confirmation). Any
other failure (no permission, a garbled answer) is reported at once."""


class Held(Struct, frozen=True):
    """What the cache holds for one read, as `served` judges it."""

    listed: bool
    confirmed_at: float | None
    failure: CantRead | None


def served(held: Held, now: float, max_age: float, action: str) -> CantRead | None:
    """Why the held objects may not be used for a check now; None when they may."""
    if not held.listed or held.confirmed_at is None:
        return held.failure or CantRead(
            ReadFailure.TIMEOUT, describe(ReadFailure.TIMEOUT, action, "not listed yet")
        )
    if held.failure is not None and held.failure.failure not in TRANSIENT:
        return held.failure
    age = now - held.confirmed_at
    if age > max_age:
        stale = f"not confirmed by the cluster for {age:.0f} s (the limit is {max_age:g} s)"
        if held.failure is not None:
            return CantRead(
                held.failure.failure,
                f"{held.failure.reason}; {stale}",
                held.failure.reached,
                held.failure.server_message,
            )
        # Nothing failed: the cluster sent nothing that confirms the objects (docs/monitor.md,
        # Never a stale green); never worded as a timeout, which did not happen.
        return CantRead(ReadFailure.UNCONFIRMED, f"{action}: {stale}")
    return None


def is_stale(as_of: float, now: float, max_age: float) -> bool:
    """Whether a value confirmed at `as_of` is past `max_age` seconds at `now`."""
    return now - as_of > max_age
