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


BOOKMARK_SECONDS = 60.0
"""How often kube-apiserver confirms a quiet watch that asked for bookmarks (every watch here
does, `allowWatchBookmarks=true`): one bookmark about every minute, and one 2 s before the
watch's deadline (cacher.go `defaultBookmarkFrequency`, cache_watcher.go `nextBookmarkTime`)."""

BOOKMARK_LATE_SECONDS = 2.25
"""How much later than its minute a bookmark may come: the watcher waits in a one-second
bucket (cacher.go `watcherBookmarkTimeBuckets`: "within (X-1,X+1)"), which a timer firing
every 1 to 1.25 s empties (cacher.go `dispatchEvents`, `wait.Jitter(time.Second, 0.25)`)."""


def longest_unconfirmed(interval: float, watch_timeout: float) -> float:
    """The longest a read may go unconfirmed on a healthy, quiet cluster, as an evaluation finds
    it: a watched collection until its next bookmark, or until the server ends the watch,
    cleanly, within 2x `watch_timeout` (cluster/reflector.py asks for [T, 2T)), whichever
    comes first; a get made live until it is made again, `interval` later (cache.py
    `_read_live`). An open watch that brings nothing confirms nothing: no heartbeat tells a
    quiet connection from a dead one."""
    watched = min(BOOKMARK_SECONDS + BOOKMARK_LATE_SECONDS, 2 * watch_timeout)
    return max(watched, interval)


def shortest_max_age(interval: float, watch_timeout: float) -> float:
    """What `--max-age` must be longer than for a healthy, quiet monitor never to read unknown:
    an evaluation may find a read `longest_unconfirmed` old, and its verdict is served until
    the next one, up to `interval` later."""
    return interval + longest_unconfirmed(interval, watch_timeout)


def is_stale(as_of: float, now: float, max_age: float) -> bool:
    """Whether a value confirmed at `as_of` is past `max_age` seconds at `now`."""
    return now - as_of > max_age
