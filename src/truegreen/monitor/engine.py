"""doctor kept current: evaluate on a change, at most every min-interval, at least every
interval, from the watch cache; every value ages into `unknown` past its maximum age."""

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from msgspec import Struct, field
from msgspec.structs import replace

from truegreen.apinames import is_namespace_name
from truegreen.cluster import Kind, Listed
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.reflector import WatchSettings
from truegreen.cluster.schedule import IN_MEMORY
from truegreen.doctor.catalogue import render
from truegreen.doctor.diagnose import (
    MONITOR_REGISTRY_OFF,
    WATCH_REGISTRY_OFF,
    Where,
    impossible_namespace_report,
    report_of,
)
from truegreen.doctor.environment import DoctorSettings, Unreachable
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.reads.gather import gather
from truegreen.doctor.rollup import NotChecked, Report, roll_up
from truegreen.exitcodes import ExitCode
from truegreen.monitor.age import is_stale
from truegreen.monitor.cache import FleetScope, WatchCache
from truegreen.monitor.redacted import RedactedOnce
from truegreen.monitor.refresh_state import (
    REFRESHED_REASON,
    RefreshState,
    last_refreshed,
    refresh_states,
)
from truegreen.monitor.schedule import Schedule
from truegreen.refresh.annotations import REFRESHED_KINDS


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
    watching: bool = False
    """The engine runs for doctor --watch in the operator's terminal, not for truegreen
    monitor: every report's footer says why the registries are not asked in words for someone
    who ran doctor, and an aged verdict says so (`watch-stale`), with no monitor to look
    after."""


class Evaluation(Struct, frozen=True):
    """One run of doctor's checks over the cache."""

    namespace: str
    report: Report
    at: datetime
    """When it ran."""
    as_of: float
    """The oldest server confirmation among the reads it used (monotonic clock)."""
    seconds: float
    """How long it took."""
    refresh: tuple[RefreshState, ...]
    changed_at: datetime
    """When the verdict or headline served last changed: this evaluation's time if it changed,
    or if the one before it was served stale (`Monitor.current`) until it came."""
    number: int
    ready_at: datetime | None = None
    """When an evaluation last measured the namespace ready (this one's time if it did);
    None when none has since the monitor started."""


def stale_report(report: Report, age: float, code: str = "monitor-stale") -> Report:
    """Every check that ran reads unknown: its value is `age` seconds old, past the limit;
    `code` says whose verdict aged (`monitor-stale`, or doctor --watch's `watch-stale`)."""
    asked = [n for n in report.not_checked if n.asked]
    ran = [*report.checked, *(n.check for n in asked)]
    skipped: list[NotChecked] = [n for n in report.not_checked if not n.asked]
    headline, remedy = render(code, age=f"{age:.0f}")
    findings = [
        Finding(
            check,
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            code,
            headline,
            remedy,
            (f"the newest evaluation used reads last confirmed {age:.0f} s ago",),
            why=f"nothing confirmed for {age:.0f} s",
        )
        for check in ran
    ]
    return roll_up(findings, ran, skipped)


class NamespaceSource(Protocol):
    """The namespaces a fleet's monitor watches, read again at most every `--interval`."""

    every: bool
    """`--all-namespaces`: every namespace's objects are kept."""

    def names(self) -> tuple[str, ...] | None:
        """The namespaces selected now; None when they could not be read (the last ones stay)."""
        ...


class Monitor:
    """Runs evaluations over a watch cache of one namespace, or of a fleet's namespaces
    (`namespaces`), sharing every cluster-wide watch; `run()` until stopped.

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
        namespaces: NamespaceSource | None = None,
    ) -> None:
        self._settings = settings
        self._source = namespaces
        self._names: tuple[str, ...] = () if namespaces is not None else (cluster.namespace,)
        self._resolved_at: float | None = None
        self._schedule = Schedule(settings.min_interval, settings.interval)
        self._on_evaluation = on_evaluation
        self._clock = clock
        self._wall = wall
        self._cond = threading.Condition()
        self._changed: float | None = None
        self._last_start: float | None = None
        self._latest: dict[str, Evaluation] = {}
        self.cache = WatchCache(
            cluster,
            max_age=settings.max_age,
            watch=settings.watch,
            on_change=self._note_change,
            reread_after=settings.interval,
            clock=clock,
            fleet=None
            if namespaces is None
            else FleetScope(None if namespaces.every else frozenset()),
        )
        self._redacted = RedactedOnce(self.cache)
        self._resolve()  # a fleet's first namespaces, before anything is watched

    @property
    def namespace(self) -> str:
        """The connection's namespace (the one checked, unless a fleet's are)."""
        return self.cache.namespace

    @property
    def where(self) -> str:
        """The API server's address, for a fleet's page when the cluster has no name."""
        return self._settings.where.server

    @property
    def fleet(self) -> bool:
        """Whether a selection of namespaces is watched rather than one."""
        return self._source is not None

    def namespaces(self) -> tuple[str, ...]:
        """The namespaces checked, as last resolved."""
        return self._names

    def latest(self, namespace: str | None = None) -> Evaluation | None:
        """The newest evaluation of `namespace` (default: the connection's) as it was made."""
        return self._latest.get(namespace or self.namespace)

    def complete(self) -> bool:
        """Whether every namespace checked has been evaluated at least once."""
        latest = self._latest
        return all(name in latest for name in self._names) and (
            bool(self._names) or self._resolved_at is not None
        )

    def evaluations(self) -> tuple[tuple[str, Evaluation | None], ...]:
        """Each namespace checked and its `current` evaluation, in the order resolved."""
        return tuple((name, self.current(name)) for name in self._names)

    def current(self, namespace: str | None = None) -> Evaluation | None:
        """The newest evaluation of `namespace` (default: the connection's); past the maximum
        age every check reads unknown and its refresh state is gone (not read, not served)."""
        latest = self._latest.get(namespace or self.namespace)
        if latest is None:
            return None
        now = self._clock()
        if not is_stale(latest.as_of, now, self._settings.max_age):
            return latest
        # The verdict served changed when the reads aged past the limit: the same moment at
        # every look, so `time() - changed` reads how long it has been unknown.
        went_stale = self._wall() - timedelta(seconds=now - (latest.as_of + self._settings.max_age))
        return replace(
            latest,
            report=stale_report(
                latest.report,
                now - latest.as_of,
                "watch-stale" if self._settings.watching else "monitor-stale",
            ),
            refresh=(),
            changed_at=went_stale,
        )

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
                self.evaluate_all()
        finally:
            self.cache.close()

    def wake(self) -> None:
        """Make `run()` look at its stop event now."""
        with self._cond:
            self._cond.notify_all()

    def evaluate_all(self) -> tuple[Evaluation, ...]:
        """One evaluation of every namespace now, the selection read again first when due."""
        with self._cond:
            self._last_start = self._clock()
            self._changed = None
        self._resolve()
        evaluations = tuple(self._evaluate(name) for name in self._names)
        self.cache.end_round()
        return evaluations

    def _resolve(self) -> None:
        """A fleet's namespaces read again, at most every `--interval` (a namespace labelled
        into a selector is watched within one interval, one taken out stops being reported)."""
        source = self._source
        now = self._clock()
        due = self._resolved_at is None or now - self._resolved_at >= self._settings.interval
        if source is None or not due:
            return
        self._resolved_at = now
        names = source.names()
        if names is None:
            return
        self.cache.select(FleetScope(None if source.every else frozenset(names)))
        self._names = names
        self._latest = {k: v for k, v in self._latest.items() if k in names}

    def evaluate(self, namespace: str | None = None) -> Evaluation:
        """One evaluation of `namespace` (default: the connection's) now."""
        with self._cond:
            self._last_start = self._clock()
            self._changed = None
        return self._evaluate(namespace or self.namespace)

    def _evaluate(self, namespace: str) -> Evaluation:
        started = self._clock()
        self.cache.begin()
        doctor = self._settings.doctor
        if self.fleet:
            # commands on the page and in Events name the namespace they are about; the
            # capacity summary is the fleet's, of which doctor keeps this namespace's pods
            kubectl = replace(doctor.kubectl, namespace=namespace)
            doctor = replace(doctor, kubectl=kubectl, fleet=self._names)
        # diagnose() without its own RedactingReader: RedactedOnce redacts as it does, keeping
        # the cluster-wide answers' identity that doctor's computations are kept by. The reads
        # run in this thread: the cache answers from memory, but for the few gets made live.
        report, answered = self._report(namespace, doctor)
        as_of = self.cache.as_of()
        # Where the cluster could not be asked at all, its workloads are not asked for either:
        # each list would fail the same way, after waiting as long (a login plugin that does
        # not answer is run again for each, up to its bound each time, and the first verdict
        # would wait on all of them).
        refresh = self._refresh_states(namespace) if answered else ()
        previous = self._latest.get(namespace)
        at = self._wall()
        # The change time is the served verdict's: where the one before aged past the limit,
        # what was served until now was its stale unknown (`current`), and this evaluation
        # changes it, whatever the verdict before the spell was; the time never goes back.
        served_stale = previous is not None and is_stale(
            previous.as_of, self._clock(), self._settings.max_age
        )
        same = (
            previous is not None
            and not served_stale
            and (
                (previous.report.verdict, previous.report.headline.text)
                == (report.verdict, report.headline.text)
            )
        )
        evaluation = Evaluation(
            namespace,
            report,
            at,
            as_of,
            self._clock() - started,
            refresh,
            previous.changed_at if same and previous is not None else at,
            (previous.number + 1) if previous is not None else 1,
            at if report.exit_code == ExitCode.GOOD else previous.ready_at if previous else None,
        )
        self._latest = {**self._latest, namespace: evaluation}
        self._on_evaluation(evaluation, previous)
        return evaluation

    def _report(self, namespace: str, doctor: DoctorSettings) -> tuple[Report, bool]:
        """doctor's report of `namespace`, and False where the cluster could not be asked
        (out of reach, no login made, or the login refused: `gather` stops at its first read,
        as doctor does); a listed name no namespace can have is never asked about (doctor's
        fleet says the same of it). The context's own namespace, which no list named, is asked
        about whatever its name, as doctor asks about it (client-go's `Request.Namespace` sends
        any name but `.`, `..` and those holding `/` or `%`)."""
        if self._source is not None and not is_namespace_name(namespace):
            return impossible_namespace_report(namespace, doctor), True
        gathered = gather(self._redacted, namespace, self._wall(), doctor, None, IN_MEMORY)
        registry_off = WATCH_REGISTRY_OFF if self._settings.watching else MONITOR_REGISTRY_OFF
        report = report_of(gathered, doctor, self._settings.where, registry_off)
        return report, not isinstance(gathered, Unreachable)

    def _refresh_states(self, namespace: str) -> tuple[RefreshState, ...]:
        # The lists doctor made of the namespace's workloads, from the same reflectors; a kind
        # that could not be read has no series (absent, as Prometheus reads unknown).
        workloads = [
            (kind.value.name, item)
            for kind in REFRESHED_KINDS
            if isinstance(read := self.cache.list(kind, namespace=namespace), Listed)
            for item in read.items
        ]
        events = self.cache.list(
            Kind.EVENT, namespace=namespace, fields={"reason": REFRESHED_REASON}
        )
        refreshed = last_refreshed(events.items) if isinstance(events, Listed) else {}
        return refresh_states(workloads, refreshed)
