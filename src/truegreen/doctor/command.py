"""The doctor and snapshot commands below the CLI: build the reader, run, return values."""

import gc
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from truegreen.cluster import CantRead
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.redact import RedactingReader
from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.config import DoctorConfig, doctor_settings, load_config
from truegreen.doctor.environment import gather
from truegreen.doctor.rollup import Report
from truegreen.doctor.run import diagnose

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


def _settled() -> None:
    """What is built so far (modules, settings, the client) lives for the whole run: the cyclic
    garbage collector need not walk it again each time a page's objects come and go."""
    gc.freeze()


def run_doctor(request: DoctorRequest) -> Report:
    """Check the namespace live, or offline from a snapshot."""
    config = load_config(request.config)
    connection = _with_config(request.connection, config)
    if request.snapshot is not None:
        from truegreen.cluster.snapshot import SnapshotReader

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
        source = f"the snapshot {request.snapshot}"
        return diagnose(snapshot, namespace, snapshot.info.taken_at, settings, source)
    settings = doctor_settings(config, request.job_requests, request.credentials_secret)
    with LiveCluster.connect(connection, _run_limit(connection)) as cluster:
        _settled()
        return diagnose(cluster, cluster.namespace, datetime.now(UTC), settings, cluster.source)


def take_snapshot(request: DoctorRequest, directory: Path) -> SnapshotSummary:
    """Make every read doctor makes and save them, failed reads included, redacted."""
    from truegreen.cluster.snapshot import RecordingReader, SnapshotInfo, write_snapshot

    config = load_config(request.config)
    settings = doctor_settings(config, request.job_requests, request.credentials_secret)
    connection = _with_config(request.connection, config)
    with LiveCluster.connect(connection, _run_limit(connection)) as cluster:
        _settled()
        recorder = RecordingReader(RedactingReader(cluster))
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
