"""`truegreen monitor` and `doctor --watch` below the CLI: build the engine, return values."""

import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from msgspec import Struct
from msgspec.structs import replace

from truegreen.cluster import CantRead, Kind, Patched, ReadFailure
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.namespace_selection import NamespaceSelection, NamespacesNotListedError
from truegreen.cluster.reflector import WatchSettings
from truegreen.doctor.command.config import DoctorConfig, doctor_settings, load_config
from truegreen.doctor.command.request import DoctorRequest, namespaces_not_listed, with_planned_job
from truegreen.doctor.command.request import _with_config as connection_with_config
from truegreen.doctor.diagnose import Where
from truegreen.errors import TruegreenError, UsageError
from truegreen.http.dial import Dialer
from truegreen.http.tls import TlsSettings
from truegreen.kubectl import for_connection
from truegreen.monitor.age import longest_unconfirmed, shortest_max_age
from truegreen.monitor.engine import Evaluation, Monitor, MonitorSettings
from truegreen.monitor.events import EventCorrelator, Write, event_due, verdict_event
from truegreen.monitor.metrics import CONTENT_TYPE, MonitorMetrics
from truegreen.monitor.page import fleet_page, status_page
from truegreen.monitor.requests import CountingTransport
from truegreen.monitor.selection import SelectedNamespaces
from truegreen.monitor.server import Page, StatusServer, parse_listen

STOP_POLL_SECONDS = 0.1
"""How often `run()` looks whether it was stopped."""
STOP_GRACE_SECONDS = 1.0
"""How long `run()`, once stopped, waits for the evaluation under way: one from the cache ends
well within it; one whose reads wait on a cluster that does not answer is dropped."""
MAX_CLUSTER_NAME = 253
"""Characters a `--cluster-name` may have: as long as a DNS name, which most cluster names are."""


class MonitorRequest(Struct, frozen=True):
    """What the operator asked the monitor to do."""

    doctor: DoctorRequest
    listen: str | None = ":9108"
    """Where to serve /metrics and the page; None serves nothing (`doctor --watch`)."""
    interval: float = 60.0
    min_interval: float = 10.0
    max_age: float = 180.0
    watch_timeout: float = 300.0
    events: bool = True
    """Write an Event on the namespace when the verdict changes."""
    cluster_name: str | None = None
    """The `cluster` label of every metric (`--cluster-name`); None: the kubeconfig's name
    for the context's cluster, none in a pod."""
    selection: NamespaceSelection = NamespaceSelection()
    """Which namespaces: the connection's one, or a fleet's (`--namespaces`, `-A`,
    `--namespace-selector`)."""


class EventOutcome(Struct, frozen=True):
    """What became of one verdict Event."""

    reason: str
    failure: CantRead | None
    """None when the server stored it."""


class BindError(TruegreenError):
    """The status server could not listen where it was told to."""


def check_request(request: MonitorRequest) -> None:
    """UsageError for intervals that contradict each other or a `--listen` that is no address."""
    if request.doctor.snapshot is not None:
        raise UsageError(
            "a snapshot cannot be watched", "it does not change", "drop --snapshot or --watch"
        )
    if not 0 < request.min_interval <= request.interval:
        raise UsageError(
            f"--min-interval {request.min_interval:g} must be above 0 and at most "
            f"--interval {request.interval:g}"
        )
    shortest = shortest_max_age(request.interval, request.watch_timeout)
    if request.max_age <= shortest:
        unconfirmed = longest_unconfirmed(request.interval, request.watch_timeout)
        raise UsageError(
            f"--max-age {request.max_age:g} must be longer than {shortest:g} s",
            f"on a quiet, healthy cluster a read may go {unconfirmed:g} s unconfirmed (a watch "
            "is confirmed about once a minute, or when it ends, within 2x --watch-timeout "
            f"{request.watch_timeout:g}; a read made live is made again each --interval), and "
            f"a verdict is served until the next evaluation, up to --interval "
            f"{request.interval:g} later: a healthy monitor would read unknown",
            "Pass a longer --max-age, or a shorter --interval or --watch-timeout.",
        )
    name = request.cluster_name
    if name is not None and not (0 < len(name) <= MAX_CLUSTER_NAME and name.isprintable()):
        raise UsageError(
            f"--cluster-name {name[:40]!r} cannot label the metrics",
            f"it must be 1 to {MAX_CLUSTER_NAME} printable characters",
            "pass the name the fleet knows the cluster by, such as --cluster-name prod-east",
        )
    if request.listen is not None:
        try:
            parse_listen(request.listen)
        except ValueError as error:
            raise UsageError(
                f"--listen {request.listen!r} is not an address",
                str(error),
                "pass [HOST]:PORT, such as :9108 or 127.0.0.1:9108",
            ) from None


def _refuse_once_only(config: DoctorConfig, path: Path | None, *, watch: bool) -> None:
    """UsageError for a config file that asks the monitor or doctor --watch for what runs
    once: the file holds the same settings as doctor's flags, and --watch refuses --trial and
    --admission-dry-run (cli/doctor.py) because it evaluates again and again over its watch
    cache and starts no pods and makes no create (`Monitor` gathers with no pod creator). The
    monitor is that engine too, and has neither flag: the file's keys are all that could ask
    it. Never a verdict that silently leaves them out."""
    for key, asked in (("trial", config.trial), ("admission-dry-run", config.admission_dry_run)):
        if not asked:
            continue
        if watch:
            raise UsageError(
                f"config {path} sets {key}: it runs once; --watch checks again and again",
                todo=f"drop --watch, or remove {key} from {path}",
            )
        raise UsageError(
            f"config {path} sets {key}: it runs once; the monitor checks again and again",
            todo=f"remove {key} from {path}",
        )


class RunningMonitor:
    """A connected monitor, its HTTP server started; `run()` until stopped, then `close()`."""

    def __init__(
        self,
        request: MonitorRequest,
        *,
        on_evaluation: Callable[[Evaluation, Evaluation | None], None],
        on_event: Callable[[EventOutcome], None],
        on_client_error: Callable[[str], None] = lambda line: None,
    ) -> None:
        check_request(request)
        config = load_config(request.doctor.config)
        # Serving nothing is doctor --watch.
        _refuse_once_only(config, request.doctor.config, watch=request.listen is None)
        connection = connection_with_config(request.doctor.connection, config)
        settings = with_planned_job(
            doctor_settings(config, request.doctor.job_requests, request.doctor.credentials_secret),
            request.doctor.job_file,
        )
        self._metrics: MonitorMetrics | None = None
        counting: list[MonitorMetrics] = []

        def transport(tls: TlsSettings, dialer: Dialer | None) -> CountingTransport:
            return CountingTransport(
                tls,
                dialer,
                lambda *labels: counting[0].count_request(*labels) if counting else None,
            )

        self.cluster = LiveCluster.connect(connection, make_transport=transport)
        namespaces: SelectedNamespaces | None = None
        if request.selection.many:
            namespaces = SelectedNamespaces(request.selection, self.cluster)
            try:
                namespaces.first()
            except NamespacesNotListedError as error:
                self.cluster.close()
                where = Where(
                    self.cluster.server,
                    self.cluster.source,
                    self.cluster.login,
                    login_source=self.cluster.login_source,
                )
                raise namespaces_not_listed(error, where, for_connection(connection)) from None
            except TruegreenError:
                self.cluster.close()
                raise
        # The page is read away from this process, where kubectl's namespace is anyone's:
        # its commands name the namespace, as doctor's do when given -n.
        kubectl = replace(for_connection(connection), namespace=self.cluster.namespace)
        settings = replace(settings, kubectl=kubectl)
        self._request = request
        self._on_evaluation = on_evaluation
        self._on_event = on_event
        self._instance = socket.gethostname()
        self._events = EventCorrelator()
        self.monitor = Monitor(
            self.cluster,
            MonitorSettings(
                settings,
                Where(
                    self.cluster.server,
                    self.cluster.source,
                    self.cluster.login,
                    self.cluster.login_command,
                    login_source=self.cluster.login_source,
                ),
                request.interval,
                request.min_interval,
                request.max_age,
                WatchSettings(request.watch_timeout),
                # Serving nothing is doctor --watch: it speaks to someone who ran doctor.
                watching=request.listen is None,
            ),
            on_evaluation=self._evaluated,
            namespaces=namespaces,
        )
        cluster = (
            request.cluster_name if request.cluster_name is not None else self.cluster.cluster_name
        )
        self.cluster_label = cluster
        """The cluster's name on every metric ("" for none)."""
        self._metrics = MonitorMetrics(cluster, self.monitor.evaluations)
        counting.append(self._metrics)
        self.server: StatusServer | None = None
        if request.listen is not None:
            try:
                self.server = StatusServer(
                    parse_listen(request.listen), self._routes(), on_client_error=on_client_error
                ).start()
            except OSError as error:
                self.cluster.close()
                raise BindError(
                    f"cannot listen on {request.listen}",
                    error.strerror or str(error),
                    "pass another address with --listen, or stop what listens there",
                ) from None
        self._stop = threading.Event()
        self._telling = threading.Lock()
        self._quiet = False
        """Set once `run()` returns: nothing more is told."""

    def _routes(self) -> dict[str, Callable[[], Page]]:
        text = "text/plain; charset=utf-8"

        def metrics() -> Page:
            assert self._metrics is not None
            return Page(200, CONTENT_TYPE, self._metrics.exposition())

        def ready() -> Page:
            if not self.monitor.complete():
                return Page(503, text, b"the first evaluation has not completed\n")
            return Page(200, text, b"ok\n")

        def page() -> Page:
            now = datetime.now(UTC)
            monitor = self.monitor
            if monitor.fleet:
                html = fleet_page(self.cluster_label or monitor.where, monitor.evaluations(), now)
            else:
                html = status_page(monitor.namespace, monitor.current(), now)
            return Page(200, "text/html; charset=utf-8", html.encode())

        return {
            "/metrics": metrics,
            "/healthz": lambda: Page(200, text, b"ok\n"),
            "/readyz": ready,
            "/": page,
        }

    def _evaluated(self, evaluation: Evaluation, previous: Evaluation | None) -> None:
        # Told under `_telling`, and not at all once `run()` has returned: an evaluation that
        # ends later is dropped, never drawn while the process exits.
        with self._telling:
            if self._quiet:
                return
            if self._metrics is not None:
                self._metrics.observe(evaluation)
            self._on_evaluation(evaluation, previous)
        verdict = evaluation.report.verdict
        before = previous.report.verdict if previous is not None else None
        if self._request.events and event_due(before, verdict):
            event = verdict_event(
                verdict,
                evaluation.report.headline.text,
                namespace=evaluation.namespace,
                now=evaluation.at,
                instance=self._instance,
            )
            write = self._events.correlate(event)
            if write is None:
                return  # the spam filter's: as client-go's recorder, nothing is written
            failure = self._write_event(write, evaluation.namespace)
            with self._telling:
                if not self._quiet:
                    self._on_event(EventOutcome(str(event["reason"]), failure))

    def _write_event(self, write: Write, namespace: str) -> CantRead | None:
        """PATCH the Event a repeat counts, or create it (client-go recordToSink: also when the
        one to patch is gone); the server's answer is remembered. The failure, if any."""
        if write.patch is not None:
            name = str(write.event["metadata"]["name"])
            patched = self.cluster.patch(
                Kind.EVENT, name, namespace=namespace, patch=write.patch, strategic=True
            )
            if isinstance(patched, Patched):
                self._events.written(patched.obj)
                return None
            if not isinstance(patched, CantRead) or patched.failure is not ReadFailure.NOT_FOUND:
                return patched if isinstance(patched, CantRead) else None
        created = self.cluster.create(Kind.EVENT, write.event, namespace=namespace, dry_run=False)
        if isinstance(created, CantRead):
            return created
        self._events.written(created.obj)
        return None

    @property
    def address(self) -> tuple[str, int] | None:
        """Where the status server listens."""
        return None if self.server is None else self.server.address

    def run(self) -> None:
        """Evaluate until `stop()`; return then within STOP_GRACE_SECONDS, whatever reads are
        in flight.

        The evaluations run on a daemon thread: a read waits up to --request-timeout for a
        cluster that does not answer, a first list for as long as its list takes, and the
        kubelet kills a pod that has not exited 30 s after SIGTERM. This thread only waits for
        the stop, in short joins rather than on an Event: `stop()` runs in a signal handler on
        this very thread, and an Event's lock is not reentrant. The evaluation under way when
        stopped is told if it ends within the grace, else dropped. An error that ends the
        evaluations is raised here.
        """
        failed: list[BaseException] = []

        def evaluate() -> None:
            try:
                self.monitor.run(self._stop)
            except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
                failed.append(error)

        worker = threading.Thread(target=evaluate, name="evaluations", daemon=True)
        worker.start()
        try:
            while worker.is_alive() and not self._stop.is_set():
                worker.join(STOP_POLL_SECONDS)
            worker.join(STOP_GRACE_SECONDS)  # the evaluation under way, from memory, ends now
        finally:
            with self._telling:  # a verdict being told is told whole, and none after it
                self._quiet = True
        if failed:
            raise failed[0]

    def stop(self) -> None:
        """Make `run()` return (from a signal handler or another thread)."""
        self._stop.set()
        self.monitor.wake()

    def close(self) -> None:
        """Stop serving and following; release the connections."""
        self.stop()
        self.monitor.cache.close()
        if self.server is not None:
            self.server.stop()
        self.cluster.close()

    def __enter__(self) -> "RunningMonitor":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
