"""The doctor and snapshot commands below the CLI: build the reader, run, return values."""

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from truegreen.cluster import CantRead
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.redact import RedactingReader
from truegreen.cluster.settings import ConnectionSettings
from truegreen.cluster.snapshot import RecordingReader, SnapshotInfo, SnapshotReader, write_snapshot
from truegreen.doctor.config import DoctorConfig, doctor_settings, load_config
from truegreen.doctor.environment import gather
from truegreen.doctor.progress import ProgressReader, Told
from truegreen.doctor.rollup import Report
from truegreen.doctor.run import Where, diagnose
from truegreen.errors import UsageError
from truegreen.kubectl import Kubectl, for_connection

RUN_LIMIT_IN_REQUESTS = 30
"""doctor and snapshot stop reading after this many request timeouts in all."""


@dataclass(frozen=True)
class DoctorRequest:
    """What the operator asked doctor to do."""

    connection: ConnectionSettings
    snapshot: Path | None = None
    job_requests: str | None = None
    credentials_secret: str | None = None
    config: Path | None = None
    admission_dry_run: bool = False
    """`--admission-dry-run`: a trial start of the training job's pod, live only."""


@dataclass(frozen=True)
class SnapshotSummary:
    """What `truegreen snapshot` saved."""

    directory: Path
    namespace: str
    reads: int
    failed_reads: int


def _run_limit(connection: ConnectionSettings) -> float:
    """Seconds for the whole run: a fixed number of request timeouts, so a cluster that answers
    every request just in time still cannot hold the run for long."""
    return RUN_LIMIT_IN_REQUESTS * connection.request_timeout


def _with_config(connection: ConnectionSettings, config: DoctorConfig) -> ConnectionSettings:
    return replace(
        connection,
        namespace=connection.namespace or config.namespace,
        context=connection.context or config.context,
        kubeconfig=connection.kubeconfig or config.kubeconfig,
    )


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
        snapshot = SnapshotReader(request.snapshot)
        # Flags, then the config file, then the settings the snapshot was taken with.
        taken_with = snapshot.info.settings
        settings = doctor_settings(
            config,
            request.job_requests or config.job_requests or taken_with.get("job_requests"),
            request.credentials_secret
            or config.credentials_secret
            or taken_with.get("credentials_secret"),
        )
        namespace = connection.namespace or snapshot.namespace
        # Commands in remedies are for the cluster the snapshot came from: name the namespace.
        settings = replace(settings, kubectl=Kubectl(namespace=namespace))
        where = Where(snapshot.info.server, f"the snapshot {request.snapshot}")
        return diagnose(snapshot, namespace, snapshot.info.taken_at, settings, where)
    settings = doctor_settings(
        config, request.job_requests, request.credentials_secret, request.admission_dry_run
    )
    settings = replace(settings, kubectl=for_connection(connection))
    with LiveCluster.connect(connection, _run_limit(connection)) as cluster:
        where = Where(cluster.server, cluster.source, cluster.login, cluster.login_command)
        reader = cluster if told is None else ProgressReader(cluster, told)
        return diagnose(reader, cluster.namespace, datetime.now(UTC), settings, where, cluster)


def take_snapshot(
    request: DoctorRequest, directory: Path, told: Told | None = None
) -> SnapshotSummary:
    """Make every read doctor makes and save them, failed reads included, redacted; `told`
    hears each read."""
    config = load_config(request.config)
    settings = doctor_settings(config, request.job_requests, request.credentials_secret)
    connection = _with_config(request.connection, config)
    with LiveCluster.connect(connection, _run_limit(connection)) as cluster:
        reader = cluster if told is None else ProgressReader(cluster, told)
        recorder = RecordingReader(RedactingReader(reader))
        now = datetime.now(UTC).replace(microsecond=0)
        gather(recorder, cluster.namespace, now, settings)
        taken_with = {
            "credentials_secret": request.credentials_secret or config.credentials_secret,
            "job_requests": request.job_requests or config.job_requests,
        }
        info = SnapshotInfo(
            cluster.namespace,
            now,
            cluster.server,
            {key: value for key, value in taken_with.items() if value},
        )
    write_snapshot(directory, info, recorder.recorded)
    failed = sum(1 for _, read in recorder.recorded if isinstance(read, CantRead))
    return SnapshotSummary(directory, info.namespace, len(recorder.recorded), failed)
