"""The doctor and snapshot commands below the CLI: build the reader, run, return values."""

from __future__ import annotations

import errno
import gc
import math
import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct
from msgspec.structs import replace

from truegreen.cluster import CantRead, ClusterReader, Folded, Kind, Listed, ReadFailure
from truegreen.cluster.discovery_memory import DiscoveryMemory, memory_folder
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.redact import RedactingReader
from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.command.config import (
    MAX_PENDING_GRACE_SECONDS,
    DoctorConfig,
    doctor_settings,
    load_config,
)
from truegreen.doctor.diagnose import RegistryOff, Where, diagnose
from truegreen.doctor.environment import DoctorSettings, Environment, Unreachable
from truegreen.doctor.findings import CheckId
from truegreen.doctor.knowledge.image_presence import ImageRegistry
from truegreen.doctor.reads.gather import gather
from truegreen.doctor.rollup import Report
from truegreen.errors import TruegreenError, UsageError, WriteError
from truegreen.exitcodes import ExitCode
from truegreen.kubectl import Kubectl, for_connection, truegreen_command

if TYPE_CHECKING:  # logs and events are read only for a snapshot; progress only to a terminal
    from truegreen.cluster.context_selection import ContextSelection
    from truegreen.cluster.logs import LogRead, LogRequest
    from truegreen.cluster.namespace_selection import NamespaceSelection, NamespacesNotListedError
    from truegreen.cluster.reader import ReadKey
    from truegreen.cluster.snapshot_reads import Recorded
    from truegreen.doctor.command.clusters import ClustersReport
    from truegreen.doctor.command.fleet import FleetReport
    from truegreen.doctor.command.progress import Told
    from truegreen.doctor.reads.registry_budget import RegistryBudget
    from truegreen.doctor.reads.registry_lookups import LiveRegistry, RecordingRegistry
    from truegreen.trial.readback import TrialRun

NO_REGISTRY = RegistryOff("--no-registry")
SNAPSHOT_WITHOUT_REGISTRY = RegistryOff("the snapshot holds no registry answers")

DRY_RUN_UNANSWERED = CantRead(
    ReadFailure.NOT_CAPTURED,
    "the trial start of the training job's pod (admission-dry-run) asks the live cluster; "
    "a snapshot cannot answer it",
)
"""Offline, a config's `admission-dry-run: true` (or the snapshot's): no server to ask, so the
trial start is an unknown finding, as a trial the snapshot holds no record of is (the flag
itself is refused: the operator asked this run)."""

MAX_TRIAL_SECONDS = 3600
"""An hour: a trial holds GPUs while it runs; longer is a typo, not a trial."""
RUN_LIMIT_IN_REQUESTS = 30
"""doctor and snapshot stop reading after this many request timeouts in all."""
REGISTRY_LIMIT_IN_REQUESTS = 10
"""The registry look-ups of a run end after this many request timeouts in all; the cluster's
run limit grows by as much, so waiting on a registry never spends the cluster's time."""


class DoctorRequest(Struct, frozen=True):
    """What the operator asked doctor to do."""

    connection: ConnectionSettings
    snapshot: Path | None = None
    job_requests: str | None = None
    credentials_secret: str | None = None
    config: Path | None = None
    admission_dry_run: bool = False
    """`--admission-dry-run`: a trial start of the training job's pod, live only."""
    job_file: Path | None = None
    """`--job-file`: a training job's manifest (`-`: standard input), judged before it is
    submitted instead of the newest training job."""
    no_registry: bool = False
    """`--no-registry`: do not ask the registries whether the images are there."""
    registry_allow: frozenset[str] = frozenset()
    """`--registry-allow HOST[:PORT]`: registries the operator names, which doctor may ask on
    this computer's own address and over plain HTTP (docs/image-pull.md)."""
    trial: bool = False
    """`--trial`: start the training job's own pods for a few seconds, live only."""
    trial_timeout: float = 300.0
    """`--trial-timeout`: the trial's whole time in seconds, the image pull included."""


def with_planned_job(settings: DoctorSettings, job_file: Path | None) -> DoctorSettings:
    """`settings` with the job of `job_file` to judge, when one is given."""
    if job_file is None:
        return settings
    from truegreen.doctor.command.job_file import load_job_file

    return replace(settings, planned_job=load_job_file(job_file))


class SnapshotTarget(Struct, frozen=True):
    """Where `truegreen snapshot` writes: an archive (`path` None: a default name in the
    current folder) or a folder."""

    path: Path | None = None
    folder: bool = False


class SnapshotSummary(Struct, frozen=True):
    """What `truegreen snapshot` saved."""

    saved_to: Path
    folder: bool
    namespace: str
    reads: int
    """Every read saved: doctor's, the events, each log."""
    could_not_read: tuple[str, ...]
    """The reason of each read that failed (a measured absence is not a failure)."""
    events: int | None
    """Events kept; None when the events could not be read."""
    logs: int
    """Logs saved (a container's previous and current log count as two)."""
    logs_left_out: int
    """Failing containers whose logs were not read: more than the cap."""
    failed_plainly: tuple[str, ...] = ()
    """What could not be read and why, in plain words, each once (`no permission to read the
    machines`)."""


def _run_limit(connection: ConnectionSettings, registries: bool) -> float:
    """Seconds for the whole run: a fixed number of request timeouts, so a cluster that answers
    every request just in time still cannot hold the run for long; with the registries'
    own budget on top when they are asked (`registries`)."""
    limit = RUN_LIMIT_IN_REQUESTS + (REGISTRY_LIMIT_IN_REQUESTS if registries else 0)
    return limit * connection.request_timeout


def _registry_budget(connection: ConnectionSettings) -> RegistryBudget:
    """The run's time for registry look-ups, from now."""
    from truegreen.doctor.reads.registry_budget import RegistryBudget

    return RegistryBudget(REGISTRY_LIMIT_IN_REQUESTS * connection.request_timeout)


def _with_config(connection: ConnectionSettings, config: DoctorConfig) -> ConnectionSettings:
    return replace(
        connection,
        namespace=connection.namespace or config.namespace,
        context=connection.context or config.context,
        kubeconfig=connection.kubeconfig or config.kubeconfig,
    )


def _settled() -> None:
    """What is built so far (modules, settings, the client) lives for the whole run: the cyclic
    garbage collector need not walk it again each time a page's objects come and go."""
    gc.freeze()


def _where(cluster: LiveCluster) -> Where:
    """Which cluster doctor reads, and as whom, each with the file that says so."""
    return Where(
        cluster.server,
        cluster.source,
        cluster.login,
        cluster.login_command,
        login_source=cluster.login_source,
    )


def _telling(cluster: LiveCluster, told: Told | None) -> ClusterReader:
    """The cluster, or when someone watches, a reader that tells them each read."""
    if told is None:
        return cluster
    from truegreen.doctor.command.progress import ProgressReader

    return ProgressReader(cluster, told)


def run_doctor(request: DoctorRequest, told: Told | None = None) -> Report:
    """Check the namespace live, or offline from a snapshot; `told` hears each live read."""
    config = load_config(request.config)
    connection = _with_config(request.connection, config)
    if request.snapshot is not None:
        if request.admission_dry_run:
            raise UsageError(
                "--admission-dry-run asks the live cluster; a snapshot cannot answer it",
                todo="drop --snapshot, or drop --admission-dry-run",
            )
        # The config file's `trial: true` is for live runs: offline, the snapshot shows the
        # trial it was taken with, if any.
        if request.trial:
            raise UsageError(
                "--trial starts pods in the live cluster; a snapshot shows the trial it was "
                "taken with (truegreen snapshot --trial)",
                todo="drop --trial",
            )
        if request.connection.context is not None:
            # The snapshot holds one cluster's answers: a context would be silently ignored.
            raise UsageError(
                f"--context {request.connection.context!r} names a live cluster; doctor "
                f"--snapshot reads only the snapshot {request.snapshot}",
                todo="drop --context to check the snapshot, or drop --snapshot to check "
                f"the cluster of context '{request.connection.context}'",
            )
        from truegreen.cluster.snapshot import SnapshotReader

        snapshot = SnapshotReader.open(request.snapshot)
        # Flags, then the config file, then the settings the snapshot was taken with.
        taken_with = snapshot.info.settings
        settings = doctor_settings(
            _with_saved_grace(config, taken_with, request.snapshot),
            request.job_requests or config.job_requests or taken_with.get("job_requests"),
            request.credentials_secret
            or config.credentials_secret
            or taken_with.get("credentials_secret"),
        )
        if connection.namespace not in (None, snapshot.namespace):
            # A snapshot holds one namespace: any other would read as a dozen could-not-checks.
            raise UsageError(
                f"the snapshot {request.snapshot} holds the namespace '{snapshot.namespace}', "
                f"not '{connection.namespace}'",
                todo=f"drop -n to check '{snapshot.namespace}', or take a snapshot of "
                f"'{connection.namespace}' with "
                + truegreen_command("snapshot", "-n", connection.namespace),
            )
        namespace = snapshot.namespace
        settings = with_planned_job(settings, request.job_file)
        _job_in_snapshot(settings, request.job_file, request.snapshot, namespace)
        # Commands in remedies are for the cluster the snapshot came from: name the namespace.
        settings = replace(
            settings,
            kubectl=Kubectl(namespace=namespace),
            trial=taken_with.get("trial") == "true",
        )
        where = Where(snapshot.info.server, f"the snapshot {request.snapshot}", offline=True)
        return diagnose(
            snapshot,
            namespace,
            snapshot.info.taken_at,
            settings,
            where,
            registry=_recorded_registry(
                snapshot.registry,
                _no_registry(request, config) or taken_with.get("no_registry") == "true",
            ),
            recorded_trial=_recorded_trial(snapshot.trial) if settings.trial else None,
            recorded_dry_run=DRY_RUN_UNANSWERED
            if config.admission_dry_run or taken_with.get("admission_dry_run") == "true"
            else None,
        )
    _check_trial_timeout(request)
    settings = doctor_settings(
        config, request.job_requests, request.credentials_secret, request.admission_dry_run
    )
    settings = with_planned_job(settings, request.job_file)
    connection = _job_namespace(connection, settings, request.job_file)
    settings = replace(
        settings,
        kubectl=for_connection(connection),
        trial=request.trial or config.trial,
        trial_timeout=request.trial_timeout,
    )
    asked = not _no_registry(request, config)
    with LiveCluster.connect(connection, _run_limit(connection, asked)) as cluster:
        _settled()
        where = _where(cluster)
        reader = _telling(cluster, told)
        registry = (
            _live_registry(connection, request.registry_allow, _registry_budget(connection))
            if asked
            else None
        )
        return diagnose(
            reader if registry is None else registry.keeping_logins(reader),
            cluster.namespace,
            datetime.now(UTC),
            settings,
            where,
            cluster,
            NO_REGISTRY if registry is None else registry,
            trial=cluster if settings.trial else None,
            memory=DiscoveryMemory(memory_folder(os.environ), cluster.address_key),
        )


def _job_namespace(
    connection: ConnectionSettings, settings: DoctorSettings, job_file: Path | None
) -> ConnectionSettings:
    """The connection to the namespace the job file's job would be created in: as kubectl
    create -f, its own namespace when none was given, and a refusal when another was."""
    if job_file is None or settings.planned_job is None:
        return connection
    # Imported past the check: only a run with --job-file reads one (doctor's start-up on a
    # small namespace, bench/imports.py).
    from truegreen.doctor.command.job_file import job_namespace, other_namespace

    named = job_namespace(settings.planned_job[1])
    if named is None or connection.namespace == named:
        return connection
    if connection.namespace is None:
        return replace(connection, namespace=named)
    raise other_namespace(job_file, named, f"doctor was told to check '{connection.namespace}'")


def _job_in_snapshot(
    settings: DoctorSettings, job_file: Path | None, snapshot: Path, namespace: str
) -> None:
    """A snapshot holds one namespace: a job file for another is refused."""
    if job_file is None or settings.planned_job is None:
        return
    from truegreen.doctor.command.job_file import job_namespace, other_namespace

    named = job_namespace(settings.planned_job[1])
    if named not in (None, namespace):
        raise other_namespace(
            job_file,
            named,
            f"the snapshot {snapshot} holds '{namespace}'",
            f"take a snapshot of '{named}' with " + truegreen_command("snapshot", "-n", named),
        )


def _job_in_selection(
    selection: NamespaceSelection, settings: DoctorSettings, job_file: Path | None
) -> NamespaceSelection:
    """The namespaces to check with a job file: its own namespace when none was named (as
    kubectl create -f), and a refusal when the selection checks any other."""
    from truegreen.cluster.namespace_selection import NamespaceSelection, SelectionMode

    if job_file is None or settings.planned_job is None:
        return selection
    from truegreen.doctor.command.job_file import job_namespace, other_namespace

    named = job_namespace(settings.planned_job[1])
    if named is None:
        return selection
    if selection.mode is SelectionMode.ONE and not selection.names:
        return NamespaceSelection(names=(named,))
    if selection.mode in (SelectionMode.ONE, SelectionMode.LIST):
        others = [name for name in selection.names if name != named]
        if not others:
            return selection
        checked = ", ".join(f"'{name}'" for name in others)
        raise other_namespace(job_file, named, f"{selection.flag()} names {checked}")
    raise other_namespace(job_file, named, f"{selection.flag()} checks other namespaces too")


def _with_saved_grace(
    config: DoctorConfig, taken_with: Mapping[str, str], snapshot: Path
) -> DoctorConfig:
    """`config` with the pending grace the snapshot was taken with, unless it names its own;
    a snapshot that saved none (or older than this setting) keeps doctor's default."""
    text = taken_with.get("pending_grace_seconds")
    if config.pending_grace_seconds is not None or text is None:
        return config
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= MAX_PENDING_GRACE_SECONDS:  # `not`: NaN is in no range
        raise UsageError(
            f"the snapshot {snapshot} saved pending_grace_seconds {text!r}, not a number of "
            f"seconds from 0 to {MAX_PENDING_GRACE_SECONDS}",
            todo="fix it in its snapshot.yaml, or name one with pending-grace-seconds in --config",
        )
    return replace(config, pending_grace_seconds=seconds)


def _check_trial_timeout(request: DoctorRequest) -> None:
    if not 1 <= request.trial_timeout <= MAX_TRIAL_SECONDS:  # `not`: NaN is in no range
        raise UsageError(
            f"--trial-timeout must be a number of seconds from 1 to {MAX_TRIAL_SECONDS}"
        )


def _no_registry(request: DoctorRequest, config: DoctorConfig) -> bool:
    return request.no_registry or config.no_registry


def _live_registry(
    connection: ConnectionSettings, allowed: frozenset[str], budget: RegistryBudget
) -> LiveRegistry:
    """The registries, asked with the pods' own logins; each look-up bounded by the request
    timeout, as refresh bounds its look-ups, and all by the run's `budget`. From outside the
    cluster: this computer's own address and plain HTTP only for the registries the operator
    named (`allowed`)."""
    from truegreen.doctor.reads.registry_lookups import LiveRegistry
    from truegreen.refresh.registry import RegistryAccess

    return LiveRegistry(
        RegistryAccess(
            timeout=connection.request_timeout, insecure_registries=allowed, outside=True
        ),
        budget,
    )


def _recording(live: LiveRegistry) -> RecordingRegistry:
    from truegreen.doctor.reads.registry_lookups import RecordingRegistry

    return RecordingRegistry(live)


def _recorded_registry(record: object | None, off: bool) -> ImageRegistry | RegistryOff:
    """What a snapshot recorded of the registries; not asked when it recorded nothing (taken
    with --no-registry, or before snapshots held registry answers) or with --no-registry."""
    if off:
        return NO_REGISTRY
    if record is None:
        return SNAPSHOT_WITHOUT_REGISTRY
    from truegreen.doctor.reads.registry_lookups import RecordedRegistry

    return RecordedRegistry.from_document(record)


def _recorded_trial(record: object | None) -> TrialRun | CantRead | None:
    """What the snapshot's trial read back; a record missing or unreadable is a CantRead."""
    from truegreen.trial.record import from_record

    return from_record(record)


def run_fleet(
    request: DoctorRequest, selection: NamespaceSelection, told: Told | None = None
) -> FleetReport:
    """Check many namespaces of the live cluster in one run (docs/fleet.md): resolve the
    selection, then judge each namespace, the reads outside them made once."""
    _live_only(request, selection)
    config = load_config(request.config)
    _no_config_trial(config, request.config, selection)
    connection = _with_config(request.connection, config)
    settings = _fleet_settings(request, config)
    selection = _job_in_selection(selection, settings, request.job_file)
    off = _no_registry(request, config)
    return _fleet_of(connection, selection, settings, told, off, request.registry_allow)


def run_clusters(
    request: DoctorRequest, selection: NamespaceSelection, contexts: ContextSelection
) -> ClustersReport:
    """Check the clusters of many kubeconfig contexts in one run, each as `--context NAME`
    reaches it and with its own deadline, a few at a time (docs/fleet.md); in each, the
    namespaces of `selection` (none given: the context's own namespace)."""
    from truegreen.cluster.context_selection import resolve_contexts
    from truegreen.doctor.command.clusters import check_clusters

    _live_only(request, contexts)
    config = load_config(request.config)
    _no_config_trial(config, request.config, contexts)
    connection = _with_config(request.connection, replace(config, context=None))
    names = resolve_contexts(contexts, connection.kubeconfig)
    settings = _fleet_settings(request, config)  # a --job-file is read once, for all
    selection = _job_in_selection(selection, settings, request.job_file)
    _settled()

    off = _no_registry(request, config)

    def check(context: str) -> FleetReport:
        here = replace(connection, context=context)
        return _fleet_of(here, selection, settings, None, off, request.registry_allow)

    return check_clusters(names, check)


def _live_only(request: DoctorRequest, many: NamespaceSelection | ContextSelection) -> None:
    """A fleet run (`many`: its namespaces or its clusters) reads the live clusters and starts
    no trial; the remedy names one of what `many` names many of, as the operator may already
    have named one namespace."""
    flag = many.flag()
    if request.snapshot is not None:
        raise UsageError(
            f"{flag} asks the live cluster; a snapshot holds one namespace",
            todo=f"drop {flag}: doctor --snapshot checks the snapshot's namespace",
        )
    if request.trial:
        # One trial per run: a trial holds GPUs and counts against quota while it runs.
        raise UsageError(
            f"--trial runs in one {many.noun}; {flag} names many",
            todo=f"drop --trial, or name one {many.noun} with {many.one_flag}",
        )


def _no_config_trial(
    config: DoctorConfig, path: Path | None, many: NamespaceSelection | ContextSelection
) -> None:
    """The config file's `trial: true` is `--trial` (README: the file holds the same settings
    as the flags), and a fleet run refuses that flag (`_live_only`): refused the same way,
    naming the key and the file, never a fleet run that silently starts no trial."""
    if config.trial:
        raise UsageError(
            f"config {path} sets trial: it runs in one {many.noun}; {many.flag()} names many",
            todo=f"remove trial from {path}, or name one {many.noun} with {many.one_flag}",
        )


def _fleet_settings(request: DoctorRequest, config: DoctorConfig) -> DoctorSettings:
    settings = doctor_settings(
        config, request.job_requests, request.credentials_secret, request.admission_dry_run
    )
    return with_planned_job(settings, request.job_file)


def _fleet_of(
    connection: ConnectionSettings,
    selection: NamespaceSelection,
    settings: DoctorSettings,
    told: Told | None,
    no_registry: bool,
    allowed: frozenset[str],
) -> FleetReport:
    """One cluster's namespaces of `selection` (none named: the context's), judged; each
    namespace asks the registries with its own logins unless `no_registry` (`allowed`: the
    registries the operator named)."""
    from truegreen.cluster.namespace_selection import (
        NamespacesNotListedError,
        NoNamespaceMatchedError,
        resolve_namespaces,
    )
    from truegreen.doctor.command.fleet import diagnose_fleet

    settings = replace(settings, kubectl=for_connection(connection))
    with LiveCluster.connect(connection, _run_limit(connection, not no_registry)) as cluster:
        _settled()
        where = _where(cluster)
        try:
            listed = resolve_namespaces(selection, cluster)
        except NamespacesNotListedError as error:
            raise namespaces_not_listed(error, where, settings.kubectl) from None
        except NoNamespaceMatchedError as error:
            # The labels to look at are this cluster's: the command names it as doctor was.
            shown = settings.kubectl.cluster("get", "namespaces", "--show-labels")
            raise NoNamespaceMatchedError(
                error.what, todo=f"check the labels with {shown}"
            ) from None
        reader = _telling(cluster, told)
        budget = _registry_budget(connection)  # one for every namespace of the cluster

        def registries(base: ClusterReader) -> tuple[ClusterReader, ImageRegistry | RegistryOff]:
            if no_registry:
                return base, NO_REGISTRY
            live = _live_registry(connection, allowed, budget)
            return live.keeping_logins(base), live

        now = datetime.now(UTC)
        return diagnose_fleet(
            reader,
            listed or (cluster.namespace,),
            now,
            settings,
            where,
            cluster,
            registries,
            listed=bool(listed),
        )


def take_snapshot(
    request: DoctorRequest, target: SnapshotTarget, told: Told | None = None
) -> SnapshotSummary:
    """Make every read doctor makes, then read the namespace's newest events and the logs of
    its failing containers; save it all, failed reads included, redacted by policy. `told`
    hears each read."""
    from truegreen.cluster.archive import check_new_archive
    from truegreen.cluster.logs import Logged, select_logs
    from truegreen.cluster.recent_events import NewestEvents
    from truegreen.cluster.schedule import Pending, ReadSchedule
    from truegreen.cluster.snapshot import (
        Capture,
        RecordingReader,
        SnapshotInfo,
        check_new_folder,
        render,
        write_folder,
    )

    config = load_config(request.config)
    settings = _snapshot_settings(request, config)
    connection = _with_config(request.connection, config)
    if target.path is not None:  # a bad target is refused before any read is made
        (check_new_folder if target.folder else check_new_archive)(target.path)
    asked = not _no_registry(request, config)
    with LiveCluster.connect(connection, _run_limit(connection, asked)) as cluster:
        _settled()
        namespace = cluster.namespace
        reader = _telling(cluster, told)
        live = (
            _live_registry(connection, request.registry_allow, _registry_budget(connection))
            if asked
            else None
        )
        registry = None if live is None else _recording(live)
        recorder = RecordingReader(
            RedactingReader(reader if live is None else live.keeping_logins(reader))
        )
        now = datetime.now(UTC).replace(microsecond=0)
        env = gather(recorder, namespace, now, settings, registry=registry)
        where = _where(cluster)
        if isinstance(env, Unreachable):
            raise _nothing_read(env, where, for_connection(connection))
        if not any(_answered(read) for _, read in recorder.recorded):
            raise _nothing_read(Unreachable(_first_failure(recorder.recorded)), where, None)
        pending: list[tuple[LogRequest, Pending[LogRead]]] = []
        left_out = 0
        # The events and every log go out together, as doctor's reads do; the recorder
        # keeps ticket order and the logs keep the selection's.
        with ReadSchedule() as schedule:
            schedule.submit(partial(recorder.fold, Kind.EVENT, NewestEvents(), namespace=namespace))
            if isinstance(env.pods, Listed):
                selection = select_logs(env.pods.items)
                left_out = selection.left_out
                pending = [
                    (wanted, schedule.submit(partial(_read_log, cluster, namespace, wanted)))
                    for wanted in selection.requests
                ]
        logs = [(wanted, read.result()) for wanted, read in pending]
        trial = _trial_record(env, cluster) if settings.trial else None
        taken_with = {
            "credentials_secret": request.credentials_secret or config.credentials_secret,
            "job_requests": request.job_requests or config.job_requests,
            "no_registry": "true" if live is None else None,
            "admission_dry_run": "true" if settings.admission_dry_run else None,
            "pending_grace_seconds": None
            if config.pending_grace_seconds is None
            else str(config.pending_grace_seconds),
            "trial": "true" if settings.trial else None,
            "trial_timeout": f"{settings.trial_timeout:g}" if settings.trial else None,
        }
        info = SnapshotInfo(
            namespace,
            now,
            cluster.server,
            {key: value for key, value in taken_with.items() if value},
        )
    registry_record = None if registry is None else registry.document()
    files = render(Capture(info, recorder.recorded, logs, left_out, registry_record, trial))
    saved_to = target.path or Path(default_archive_name(namespace, now))
    try:
        if target.folder:
            write_folder(saved_to, files)
        else:
            saved_to = _write_archive(target.path, namespace, now, files)
    except OSError as error:  # both writers leave nothing behind
        raise _write_failed(
            error, saved_to, "--output-directory" if target.folder else "--archive"
        ) from None
    reads = [read for _, read in recorder.recorded] + [log for _, log in logs]
    events = next(
        (
            len(read.summary.get("events") or ())
            for key, read in recorder.recorded
            if key.kind is Kind.EVENT and isinstance(read, Folded)
        ),
        None,
    )
    return SnapshotSummary(
        saved_to=saved_to,
        folder=target.folder,
        namespace=namespace,
        reads=len(reads),
        could_not_read=_could_not_read(recorder.recorded, logs) + _unanswered(registry),
        failed_plainly=_failed_plainly(recorder.recorded, logs) + _unanswered(registry),
        events=events,
        logs=sum(1 for log in logs if isinstance(log[1], Logged)),
        logs_left_out=left_out,
    )


def _write_archive(
    path: Path | None, namespace: str, now: datetime, files: Sequence[tuple[str, bytes]]
) -> Path:
    """Where the archive was written: at `path`, or without one at the first default name not
    taken. Two snapshots of one namespace in one second (a cron job and an operator) get
    `…Z.tar.gz` and `…Z-2.tar.gz`, never one over the other; a name taken while the archive
    was written is refused (`path`) or passed over (a default name)."""
    from truegreen.cluster.archive import archive_exists, top_folder, write_archive

    names = (
        [path]
        if path is not None
        else [Path(default_archive_name(namespace, now, n)) for n in range(1, _DEFAULT_NAMES + 1)]
    )
    for name in names:
        if path is None and os.path.lexists(name):
            continue
        try:
            write_archive(name, top_folder(name), files, now.timestamp())
        except FileExistsError:
            continue
        return name
    raise archive_exists(names[-1])


_DEFAULT_NAMES = 100
"""Default names tried for one second's archive: more snapshots of one namespace in one
second than that is no schedule, and is refused."""


def _write_failed(error: OSError, saved_to: Path, flag: str) -> WriteError:
    """Why the snapshot was not written. A permission refused (EACCES, EPERM) says so and
    names the folder the snapshot goes in (the file refused was a temporary one, gone by
    now): freeing room never mends a permission, as it may a full disk."""
    what = f"cannot write the snapshot to {saved_to}"
    if error.errno in (errno.EACCES, errno.EPERM):
        return WriteError(
            what,
            f"no permission to write in {saved_to.absolute().parent} ({error.strerror})",
            f"choose a folder you may write in with {flag}",
        )
    return WriteError(
        what,
        error.strerror or type(error).__name__,
        f"free some room there, or choose another place with {flag}",
    )


def _snapshot_settings(request: DoctorRequest, config: DoctorConfig) -> DoctorSettings:
    """doctor's settings for a snapshot: the trial's too, its time checked before any read."""
    _check_trial_timeout(request)
    settings = doctor_settings(config, request.job_requests, request.credentials_secret)
    return replace(
        settings, trial=request.trial or config.trial, trial_timeout=request.trial_timeout
    )


def _trial_record(env: Environment, cluster: LiveCluster) -> dict[str, object]:
    """The trial, run after every other read as doctor runs it, as the snapshot saves it."""
    from truegreen.doctor.reads.trial import trial_of
    from truegreen.trial.record import to_record

    return to_record(trial_of(env, cluster))


def _answered(read: object) -> bool:
    """A read that looked: it answered, or measured an absence."""
    return not isinstance(read, CantRead) or read.is_measurement


def _first_failure(recorded: list[tuple[ReadKey, Recorded]]) -> CantRead:
    return next(read for _, read in recorded if isinstance(read, CantRead))


def namespaces_not_listed(
    error: NamespacesNotListedError, where: Where, kubectl: Kubectl
) -> TruegreenError:
    """Namespaces that could not be listed because no cluster answered (or none took the
    login), said as one namespace's run says it: which cluster, why, and the kubectl line
    that shows whether it answers. A cluster that answered with an error is quoted in its own
    words (kubectl prints the Status message too), with the step for that failure; a refusal
    of the permission stands as it is."""
    from truegreen.cluster.namespace_selection import NamespacesNotListedError
    from truegreen.plain_words import read_remedy
    from truegreen.redaction.text import redact_text

    cant = error.cant
    if cant is None:
        return error
    if not cant.reached or cant.failure is ReadFailure.UNAUTHORIZED:
        return _nothing_read(Unreachable(cant), where, kubectl)
    # The server's words may echo what it was sent, as a webhook's do: redacted as any.
    said = f': "{redact_text(cant.server_message)}"' if cant.server_message else ""
    listed = NamespacesNotListedError(
        error.what,
        f"{cant.reason}{said}",
        read_remedy(Kind.NAMESPACE, cant, kubectl, noun="the namespaces"),
    )
    listed.cant = cant
    return listed


def _nothing_read(
    unreachable: Unreachable, where: Where, kubectl: Kubectl | None
) -> TruegreenError:
    """Not one read looked: nothing worth saving. Said as doctor says it (which cluster, why,
    what to do), with the exit code of a run that could not check (3) and no archive."""
    from truegreen.doctor.diagnose import unreachable_findings
    from truegreen.plain_words import plain_why, read_remedy

    cant = unreachable.cant_read
    if kubectl is not None:
        found = unreachable_findings([CheckId.WORKLOADS], unreachable, where, kubectl)[0]
        return NothingReadError(
            found.headline.removesuffix("."), todo=found.remedy, code=found.code
        )
    return NothingReadError(
        f"Couldn't read anything in the cluster at {where.server}",
        f"{plain_why(Kind.DEPLOYMENT, cant)}, and every other read failed too",
        read_remedy(Kind.DEPLOYMENT, cant, Kubectl()),
        code="nothing-read",
    )


def _could_not_read(
    recorded: list[tuple[ReadKey, Recorded]], logs: list[tuple[LogRequest, LogRead]]
) -> tuple[str, ...]:
    """The reason of each read that failed (`_unmade`)."""
    reads = [read for _, read in _unmade(recorded)] + [log for _, log in logs]
    return tuple(
        read.reason for read in reads if isinstance(read, CantRead) and not read.is_measurement
    )


def _unanswered(registry: RecordingRegistry | None) -> tuple[str, ...]:
    """The look-ups a registry did not answer: reads not made, as doctor on the snapshot can't
    check those images, as it could not live."""
    return () if registry is None else registry.unanswered()


def _unmade(recorded: list[tuple[ReadKey, Recorded]]) -> list[tuple[ReadKey, Recorded]]:
    """The reads as made, less those that failed and whose fallback read what they were for
    (reads/autoscaler_status.py `made_up_for`): saved, so that doctor falls back offline as it
    did live, and no read that could not be made, as doctor makes no finding of them."""
    from truegreen.doctor.reads.autoscaler_status import made_up_for

    made_up = made_up_for(recorded)
    return [(key, read) for key, read in recorded if key not in made_up]


def _failed_plainly(
    recorded: list[tuple[ReadKey, Recorded]], logs: list[tuple[LogRequest, LogRead]]
) -> tuple[str, ...]:
    """Each failed read in plain words, once: `no permission to read the machines`."""
    from truegreen.plain_words import plain_why

    said = [
        plain_why(key.kind, read)
        for key, read in _unmade(recorded)
        if isinstance(read, CantRead) and not read.is_measurement
    ]
    said += [
        f"the output of '{wanted.container}' in '{wanted.pod}' ({read.reason})"
        for wanted, read in logs
        if isinstance(read, CantRead) and not read.is_measurement
    ]
    return tuple(dict.fromkeys(said))


class NothingReadError(TruegreenError):
    """A snapshot that could not make a single read: nothing is saved (exit 3)."""

    exit_code = ExitCode.UNKNOWN


def _read_log(cluster: LiveCluster, namespace: str, wanted: LogRequest) -> LogRead:
    from truegreen.cluster.logs import LIMIT_BYTES, read_newest

    return read_newest(
        lambda lines: cluster.container_log(
            wanted.pod,
            wanted.container,
            namespace=namespace,
            previous=wanted.previous,
            tail_lines=lines,
            limit_bytes=LIMIT_BYTES,
        )
    )


def default_archive_name(namespace: str, taken_at: datetime, number: int = 1) -> str:
    """`truegreen-snapshot-train-20250102T030405Z.tar.gz`: sorts by time, names the namespace;
    the `number`th of one second ends `…Z-2.tar.gz`."""
    stamp = taken_at.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    ending = "" if number == 1 else f"-{number}"
    return f"truegreen-snapshot-{_UNSAFE.sub('-', namespace)[:63]}-{stamp}{ending}.tar.gz"


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
