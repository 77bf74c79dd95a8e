"""doctor kept current: evaluate on a change, at most every min-interval, at least every
interval, from the watch cache; every value ages into `unknown` past its maximum age."""

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from msgspec import Struct, field
from msgspec.structs import replace

from truegreen.cluster import Kind, Listed
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.reflector import WatchSettings
from truegreen.doctor.environment import DoctorSettings
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.rollup import NotChecked, Report, roll_up
from truegreen.doctor.run import Where, diagnose
from truegreen.doctor.wording import render
from truegreen.monitor.age import is_stale
from truegreen.monitor.cache import WatchCache
from truegreen.monitor.refresh_state import (
    REFRESHED_REASON,
    RefreshState,
    last_refreshed,
    refresh_states,
)
from truegreen.monitor.schedule import Schedule


class MonitorSettings(Struct, frozen=True):
    """How the monitor runs."""

    doctor: DoctorSettings
    where: Where
    """Which cluster and login, for the lines that say it could not be read."""
    interval: float = 60.0
    min_interval: float = 10.0
    max_age: float = 180.0
    """Seconds a read, or a verdict, may go unconfirmed before it reads unknown."""
    watch: WatchSettings = field(default_factory=WatchSettings)


class Evaluation(Struct, frozen=True):
    """One run of doctor's checks over the cache."""

    report: Report
    at: datetime
    """When it ran."""
    as_of: float
    """The oldest server confirmation among the reads it used (monotonic clock)."""
    seconds: float
    """How long it took."""
    refresh: tuple[RefreshState, ...]
    changed_at: datetime
    """When the verdict or headline last changed (this evaluation's time if it changed)."""
    number: int


def stale_report(report: Report, age: float) -> Report:
    """Every check that ran reads unknown: its value is `age` seconds old, past the limit."""
    asked = [n for n in report.not_checked if n.asked]
    ran = [*report.checked, *(n.check for n in asked)]
    skipped: list[NotChecked] = [n for n in report.not_checked if not n.asked]
    headline, remedy = render("monitor-stale", age=f"{age:.0f}")
    findings = [
        Finding(
            check,
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            "monitor-stale",
            headline,
            remedy,
            (f"the newest evaluation used reads last confirmed {age:.0f} s ago",),
            why=f"nothing confirmed for {age:.0f} s",
        )
        for check in ran
    ]
    return roll_up(findings, ran, skipped)


class Monitor:
    """Runs evaluations over a watch cache of one namespace; `run()` until stopped.

    Each followed collection keeps a connection open for its watch: give `cluster` a transport
    with room for them (`monitor.requests.CONNECTIONS`), or the reads queue behind the watches.
    """

    def __init__(
        self,
        cluster: LiveCluster,
        settings: MonitorSettings,
        *,
        on_evaluation: Callable[[Evaluation, Evaluation | None], None] = lambda new, old: None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._settings = settings
        self._schedule = Schedule(settings.min_interval, settings.interval)
        self._on_evaluation = on_evaluation
        self._clock = clock
        self._wall = wall
        self._cond = threading.Condition()
        self._changed: float | None = None
        self._last_start: float | None = None
        self._latest: Evaluation | None = None
        self.cache = WatchCache(
            cluster,
            max_age=settings.max_age,
            watch=settings.watch,
            on_change=self._note_change,
            reread_after=settings.interval,
            clock=clock,
        )

    @property
    def namespace(self) -> str:
        """The namespace checked."""
        return self.cache.namespace

    def latest(self) -> Evaluation | None:
        """The newest evaluation as it was made."""
        return self._latest

    def current(self) -> Evaluation | None:
        """The newest evaluation, every check unknown once it is past the maximum age."""
        latest = self._latest
        if latest is None:
            return None
        now = self._clock()
        if not is_stale(latest.as_of, now, self._settings.max_age):
            return latest
        return replace(latest, report=stale_report(latest.report, now - latest.as_of))

    def _note_change(self) -> None:
        with self._cond:
            if self._changed is None:
                self._changed = self._clock()
            self._cond.notify_all()

    def run(self, stop: threading.Event) -> None:
        """Evaluate as the schedule says until `stop` is set (set it, then call `wake()`)."""
        try:
            while not stop.is_set():
                with self._cond:
                    while not stop.is_set():
                        wait = self._schedule.next_due(self._last_start, self._changed)
                        left = wait - self._clock()
                        if left <= 0:
                            break
                        self._cond.wait(left)
                if stop.is_set():
                    return
                self.evaluate()
        finally:
            self.cache.close()

    def wake(self) -> None:
        """Make `run()` look at its stop event now."""
        with self._cond:
            self._cond.notify_all()

    def evaluate(self) -> Evaluation:
        """One evaluation now."""
        with self._cond:
            self._last_start = self._clock()
            self._changed = None
        started = self._clock()
        namespace = self.cache.namespace
        self.cache.begin()
        report = diagnose(
            self.cache, namespace, self._wall(), self._settings.doctor, self._settings.where
        )
        as_of = self.cache.as_of()
        refresh = self._refresh_states(namespace)
        previous = self._latest
        at = self._wall()
        same = previous is not None and (
            (previous.report.verdict, previous.report.headline.text)
            == (report.verdict, report.headline.text)
        )
        evaluation = Evaluation(
            report,
            at,
            as_of,
            self._clock() - started,
            refresh,
            previous.changed_at if same and previous is not None else at,
            (previous.number + 1) if previous is not None else 1,
        )
        self._latest = evaluation
        self._on_evaluation(evaluation, previous)
        return evaluation

    def _refresh_states(self, namespace: str) -> tuple[RefreshState, ...]:
        workloads = self.cache.list(Kind.DEPLOYMENT, namespace=namespace)
        if not isinstance(workloads, Listed):
            return ()
        events = self.cache.list(
            Kind.EVENT, namespace=namespace, fields={"reason": REFRESHED_REASON}
        )
        refreshed = last_refreshed(events.items) if isinstance(events, Listed) else {}
        return refresh_states(workloads.items, refreshed)
