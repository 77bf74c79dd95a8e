"""doctor from end to end: gather once, run every check, roll up."""

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from msgspec import Struct
from msgspec.structs import replace

from truegreen.apinames import NAMESPACE_NAME_RULE
from truegreen.cluster import CantRead, ClusterReader, ReadFailure
from truegreen.cluster.discovery_memory import DiscoveryMemory
from truegreen.cluster.redact import RedactingReader
from truegreen.doctor.catalogue import OFFLINE_REMEDY, render
from truegreen.doctor.checks.capacity.shape import job_summary
from truegreen.doctor.checks.registry import CHECKS
from truegreen.doctor.checks.trial import untried
from truegreen.doctor.environment import DoctorSettings, Environment, PodCreator, Unreachable
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.image_presence import ImageRegistry
from truegreen.doctor.reads.gather import gather
from truegreen.doctor.rollup import NotChecked, Report, roll_up
from truegreen.kubectl import Kubectl, truegreen_command
from truegreen.plain_words import Login, login_todo, no_login, plain_connection_why
from truegreen.redaction.text import redact_text

if TYPE_CHECKING:
    from truegreen.trial.readback import TrialRun
    from truegreen.trial.run import TrialClient

_NO_CREDENTIALS = "not asked for: pass --credentials-secret NAME:KEY1,KEY2"
REGISTRY_PART = "whether the images are in their registry"
"""The part of the image-pull check that asks the registries."""


class RegistryOff(Struct, frozen=True):
    """The registries are not asked, and why (`--no-registry`, a snapshot that holds no
    registry answers, the monitor)."""

    why: str


MONITOR_REGISTRY_OFF = RegistryOff("the monitor does not ask registries")
WATCH_REGISTRY_OFF = RegistryOff("--watch does not ask them; doctor without --watch does")


class Where(Struct, frozen=True):
    """Which cluster doctor read, and as whom, for the lines that say it could not."""

    server: str
    source: str
    """Where the connection settings came from: the kubeconfig file of the context's cluster,
    `in-cluster`, a snapshot."""
    login: str = ""
    """Plain words naming the login (`user 'admin'`, `the credential plugin aws of user …`)."""
    login_command: str | None = None
    """The credential plugin's command, when one logs in."""
    login_source: str = ""
    """Where the login comes from: the kubeconfig file of the context's user; "" where that
    is `source` (a snapshot holds no login)."""
    offline: bool = False
    """Read from a snapshot: what to do is take a new one, not fix an address."""

    def login_of(self) -> Login:
        """The login, for the lines that say none could be made."""
        return Login(self.login, self.login_command, self.login_source or self.source)


def diagnose(
    reader: ClusterReader,
    namespace: str,
    now: datetime,
    settings: DoctorSettings,
    where: Where,
    creator: PodCreator | None = None,
    registry: ImageRegistry | RegistryOff = MONITOR_REGISTRY_OFF,
    trial: "TrialClient | None" = None,
    recorded_trial: "TrialRun | CantRead | None" = None,
    recorded_dry_run: CantRead | None = None,
    memory: DiscoveryMemory | None = None,
) -> Report:
    """Check one namespace. `where` names the cluster and login for the lines that say it could
    not be read; `creator` makes the trial start when one is asked for (live only);
    `registry` answers whether the images are in their registry, or says why it is not asked;
    `trial` runs the trial pods (`--trial`, live only), after every other read;
    `recorded_trial` is what a snapshot's trial read back, judged in its place;
    `recorded_dry_run` is what a snapshot holds of the trial start it was asked for: no answer
    (a create only the live server answers), judged as a could-not-check; `memory` is what the
    live server served at an earlier run (reads/gather.py)."""
    asked = None if isinstance(registry, RegistryOff) else registry
    gathered = gather(
        RedactingReader(reader), namespace, now, settings, creator, registry=asked, memory=memory
    )
    if settings.trial and trial is not None and isinstance(gathered, Environment):
        from truegreen.doctor.reads.trial import with_trial

        gathered = with_trial(gathered, trial)
    elif settings.trial and recorded_trial is not None and isinstance(gathered, Environment):
        gathered = replace(gathered, trial_run=recorded_trial)
    if recorded_dry_run is not None and isinstance(gathered, Environment):
        gathered = replace(gathered, trial=recorded_dry_run)
    return report_of(gathered, settings, where, registry)


def report_of(
    gathered: Environment | Unreachable,
    settings: DoctorSettings,
    where: Where,
    registry: ImageRegistry | RegistryOff = MONITOR_REGISTRY_OFF,
) -> Report:
    """Every check run on what `gather` read, rolled up; every check unknown for one reason
    when nothing could be read. `registry` is the one `gather` asked, or why none was."""
    ran = _ran(settings)
    skipped = _not_asked(settings)
    if isinstance(gathered, Unreachable):
        return roll_up(unreachable_findings(ran, gathered, where, settings.kubectl), ran, skipped)
    if isinstance(registry, RegistryOff):
        part = f"{REGISTRY_PART}: {registry.why}"
        skipped.append(NotChecked(CheckId.IMAGE_PULL, f"not asked for: {part}", False, part))
    if CheckId.TRIAL in ran and (why := untried(gathered)):
        # Asked for, with nothing to try: no pod was made and nothing measured.
        ran = [c for c in ran if c is not CheckId.TRIAL]
        skipped.append(NotChecked(CheckId.TRIAL, why))
    findings = [f for c in CHECKS if c.CHECK in ran for f in c.check(gathered)]
    return replace(roll_up(findings, ran, skipped), job=job_summary(gathered))


def impossible_namespace_report(namespace: str, settings: DoctorSettings) -> Report:
    """The report of `namespace`, listed by the cluster under a name no namespace can have (not a
    DNS-1123 label: pkg/apis/core/validation `ValidateNamespaceName`): nothing is asked about
    it, as client-go's `Request.Namespace` sends no request for such a name, and every check is
    unknown for that one reason."""
    check = settings.kubectl.cluster("get", "namespaces")
    headline, remedy = render("namespace-name-impossible", name=namespace, check=check)
    return every_check_unknown(
        settings,
        lambda check_id: Finding(
            check_id,
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            "namespace-name-impossible",
            headline,
            remedy,
            (f"namespace {namespace!r} is not a DNS-1123 label: {NAMESPACE_NAME_RULE}",),
            why="the cluster listed a name no space can have",
        ),
    )


def every_check_unknown(settings: DoctorSettings, finding: Callable[[CheckId], Finding]) -> Report:
    """The report of a run that could not look, for one reason: `finding` for each check a run
    with `settings` makes (the trial only with --trial), those not asked for said beside them,
    so that such a report never lists a check the run would not have made."""
    ran = _ran(settings)
    return roll_up([finding(check_id) for check_id in ran], ran, _not_asked(settings))


def _ran(settings: DoctorSettings) -> list[CheckId]:
    """The checks a run with `settings` makes: the backend login and the trial when asked."""
    return [
        c.CHECK
        for c in CHECKS
        if (c.CHECK is not CheckId.CREDENTIALS or settings.credentials)
        and (c.CHECK is not CheckId.TRIAL or settings.trial)
    ]


def _not_asked(settings: DoctorSettings) -> list[NotChecked]:
    """The checks not asked for, said so beside the others."""
    if settings.credentials:
        return []
    return [NotChecked(CheckId.CREDENTIALS, _NO_CREDENTIALS, asked=False)]


def unreachable_findings(
    ran: list[CheckId], unreachable: Unreachable, where: Where, kubectl: Kubectl
) -> list[Finding]:
    """Every check unknown, for one reason: the cluster could not be reached, or it refused the
    login. One headline says which server, which login, and what to do."""
    cant = unreachable.cant_read
    check = kubectl.cluster("auth", "whoami")
    logs_in = where.login_of()
    if (unsent := no_login(cant, logs_in)) is not None:
        # No login could be made: the plugin that did not answer, or its own words.
        code, fields = unsent
        why = fields["why"]
    elif cant.failure is ReadFailure.UNAUTHORIZED:
        code = "cluster-login-refused"
        message = redact_text(cant.server_message) or "401 Unauthorized"
        # Over plain http client-go sends no login at all (client_config.go ClientConfig
        # merges the user's credentials only where IsConfigTransportTLS): what was refused is
        # a request without one, and no login detail can fix that.
        plain_http = not where.server.lower().startswith("https://")
        login = (
            "a request without a login"
            if plain_http
            else f"the login of {where.login or 'this user'}"
        )
        why = f"the cluster did not accept {login}"
        fields = {
            "login": login,
            "message": message.rstrip("."),
            "todo": (
                f"use the cluster's https address in {where.source}: over plain http no login "
                "is sent (kubectl sends none either)"
                if plain_http
                else login_todo(logs_in, "")
            ),
        }
    else:
        code, why = "cluster-unreachable", plain_connection_why(cant)
        fields = {"why": why}
        check = kubectl.cluster("cluster-info")
    headline, remedy = render(code, server=where.server, source=where.source, check=check, **fields)
    if where.offline:
        snapshot = truegreen_command("snapshot", *kubectl.flags())
        remedy = OFFLINE_REMEDY.format(snapshot=snapshot, check=check)
    return [
        Finding(
            check_id,
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            code,
            headline,
            remedy,
            (cant.reason,),
            why=why,
        )
        for check_id in ran
    ]
