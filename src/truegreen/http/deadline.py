"""A point in time after which work must stop, on the monotonic clock."""

import time

from msgspec import Struct


class Deadline(Struct, frozen=True):
    """When a request (or a whole run) must be over; immune to wall-clock changes."""

    at: float
    """`time.monotonic()` value of the deadline."""

    @classmethod
    def after(cls, seconds: float) -> "Deadline":
        """The deadline `seconds` from now."""
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.at - time.monotonic())

    @property
    def expired(self) -> bool:
        """True once the deadline has passed."""
        return time.monotonic() >= self.at

    def earliest(self, other: "Deadline | None") -> "Deadline":
        """Whichever of the two deadlines comes first (`other` None: this one)."""
        return self if other is None or self.at <= other.at else other
