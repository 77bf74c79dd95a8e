"""The registries' own share of a run: one budget of time for every look-up of the run, and the
registries that already failed to answer in it.

A registry that accepts connections and never answers would otherwise hold each look-up for
the whole request timeout, namespace after namespace, and the cluster's reads would wait
behind it. With the budget, the registries' waits end by its deadline whatever they do (the
cluster's run limit is extended by the same amount, so the cluster's reads keep their own
time), and a registry that timed out once is not asked again in the run: its other images
are unknown for that same reason at once. One budget per run, shared by every namespace's
look-ups (it is per-run state, passed, never held by the module).
"""

import threading
import time
from collections.abc import Callable

from truegreen.http.deadline import Deadline


class RegistryBudget:
    """The time left for registry look-ups in this run, and the registries that timed out."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        """The budget's length, from the run's start."""
        self._ends = clock() + seconds
        self._clock = clock
        self._stalled: set[str] = set()
        self._lock = threading.Lock()

    @property
    def spent(self) -> bool:
        """True once the run's registry time is over: no look-up starts after it."""
        return self._clock() >= self._ends

    def deadline(self, per_lookup: float) -> Deadline:
        """One look-up's deadline: its own `per_lookup` seconds, never past the budget."""
        now = self._clock()
        # Deadline is on time.monotonic; the remaining time carries over from this clock.
        return Deadline.after(max(0.0, min(per_lookup, self._ends - now)))

    def stalled(self, registry: str) -> bool:
        """Whether `registry` already let a look-up of this run time out."""
        with self._lock:
            return registry in self._stalled

    def timed_out(self, registry: str) -> None:
        """`registry` let a look-up time out: it is not asked again in this run."""
        with self._lock:
            self._stalled.add(registry)
