"""When to evaluate next: on a change, at most every min-interval, at least every interval."""

from msgspec import Struct


class Schedule(Struct, frozen=True):
    """The two intervals, in seconds (min_interval <= interval)."""

    min_interval: float
    interval: float

    def next_due(self, last: float | None, changed: float | None) -> float:
        """The monotonic time the next evaluation is due.

        `last` is when the previous evaluation started (None: never, so now: 0.0), `changed`
        when the first change since it arrived (None: nothing changed).
        """
        if last is None:
            return 0.0
        at_least = last + self.interval
        if changed is None:
            return at_least
        return min(at_least, max(changed, last + self.min_interval))
