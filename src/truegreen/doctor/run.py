"""doctor from end to end: gather once, run every check, roll up."""

from datetime import datetime

from truegreen.cluster import ClusterReader
from truegreen.cluster.redact import RedactingReader
from truegreen.doctor.checks import (
    admission,
    capacity,
    credentials,
    freshness,
    image_pull,
    probes,
    storage,
    workloads,
)
from truegreen.doctor.checks.base import Check
from truegreen.doctor.environment import DoctorSettings, PodCreator, Unreachable, gather
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.rollup import NotChecked, Report, roll_up
from truegreen.doctor.wording import plain_connection_why, render

CHECKS: tuple[tuple[CheckId, Check], ...] = (
    (CheckId.CREDENTIALS, credentials.check),
    (CheckId.IMAGE_PULL, image_pull.check),
    (CheckId.STORAGE, storage.check),
    (CheckId.ADMISSION, admission.check),
    (CheckId.WORKLOADS, workloads.check),
    (CheckId.CAPACITY, capacity.check),
    (CheckId.PROBES, probes.check),
    (CheckId.FRESHNESS, freshness.check),
)
_NO_CREDENTIALS = "not asked for: pass --credentials-secret NAME:KEY1,KEY2"


def diagnose(
    reader: ClusterReader,
    namespace: str,
    now: datetime,
    settings: DoctorSettings,
    source: str,
    creator: PodCreator | None = None,
) -> Report:
    """Check one namespace. `source` names where the connection settings came from; `creator`
    makes the trial start when one is asked for (live only)."""
    ran = [check for check, _ in CHECKS if check is not CheckId.CREDENTIALS or settings.credentials]
    skipped = (
        []
        if settings.credentials
        else [NotChecked(CheckId.CREDENTIALS, _NO_CREDENTIALS, asked=False)]
    )
    gathered = gather(RedactingReader(reader), namespace, now, settings, creator)
    if isinstance(gathered, Unreachable):
        return roll_up(unreachable_findings(ran, gathered, source), ran, skipped)
    findings = [f for check, run in CHECKS if check in ran for f in run(gathered)]
    return roll_up(findings, ran, skipped)


def unreachable_findings(
    ran: list[CheckId], unreachable: Unreachable, source: str
) -> list[Finding]:
    """Every check unknown, for one reason: the cluster could not be reached."""
    why = plain_connection_why(unreachable.cant_read)
    headline, remedy = render("cluster-unreachable", why=why, source=source)
    return [
        Finding(
            check,
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            "cluster-unreachable",
            headline,
            remedy,
            (unreachable.cant_read.reason,),
            why=f"the cluster could not be reached ({why})",
        )
        for check in ran
    ]
