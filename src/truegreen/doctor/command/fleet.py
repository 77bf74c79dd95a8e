"""doctor over many namespaces in one run: each namespace judged as doctor judges one, the
reads outside them made once for all (cluster/shared_reads.py), the worst namespace first.

The fleet's verdict and exit code follow the rollup's own rule over every namespace's
findings: any namespace not ready → not ready (2); else any namespace that could not be
checked → could not check (3); else ready (0). A namespace that cannot be read is that
namespace's unknown, never the end of the run; so is a bug met checking one namespace (every
check of it unknown, `internal-error`, named by the exception's type): the other namespaces keep
their reports. A cluster that cannot be reached is read once: every namespace then says so,
without a read of its own.
"""

import gc
from collections.abc import Callable
from datetime import datetime
from functools import partial

from msgspec import Struct
from msgspec.structs import replace

from truegreen.apinames import is_namespace_name
from truegreen.cluster import ClusterReader
from truegreen.cluster.redact import RedactingReader
from truegreen.cluster.schedule import IN_FLIGHT, ReadSchedule
from truegreen.cluster.shared_reads import SharedReads
from truegreen.doctor.diagnose import (
    MONITOR_REGISTRY_OFF,
    RegistryOff,
    Where,
    every_check_unknown,
    impossible_namespace_report,
    report_of,
)
from truegreen.doctor.environment import DoctorSettings, PodCreator, Unreachable
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.image_presence import ImageRegistry
from truegreen.doctor.reads.gather import gather
from truegreen.doctor.rollup import Report, Verdict
from truegreen.exitcodes import ExitCode
from truegreen.failure import Failure

NAMESPACES_IN_FLIGHT = 3
"""Namespaces checked at once after the first, each with IN_FLIGHT // 3 reads in flight."""
_WORST_FIRST = {Verdict.NOT_READY: 0, Verdict.UNKNOWN: 1, Verdict.READY: 2}


class NamespaceReport(Struct, frozen=True):
    """One namespace's report, as `doctor -n NAMESPACE` gives it."""

    namespace: str
    report: Report


class FleetReport(Struct, frozen=True):
    """Every namespace's report, the worst first (not ready, could not check, ready; then by
    name)."""

    namespaces: tuple[NamespaceReport, ...]
    shared_reads: int = 0
    """Reads answered from one another namespace made: the work a loop of runs would repeat."""

    @property
    def exit_code(self) -> ExitCode:
        """The worst namespace's: 2 beats 3 beats 0, as any fail beats any unknown in one."""
        codes = {entry.report.exit_code for entry in self.namespaces}
        for code in (ExitCode.FAILED, ExitCode.UNKNOWN):
            if code in codes:
                return code
        return ExitCode.GOOD

    @property
    def verdict(self) -> Verdict:
        """The fleet's one word, from its exit code."""
        return {
            ExitCode.FAILED: Verdict.NOT_READY,
            ExitCode.UNKNOWN: Verdict.UNKNOWN,
        }.get(self.exit_code, Verdict.READY)

    def count(self, verdict: Verdict) -> int:
        """How many namespaces have `verdict`."""
        return sum(1 for entry in self.namespaces if entry.report.verdict is verdict)


Registries = Callable[[ClusterReader], tuple[ClusterReader, ImageRegistry | RegistryOff]]
"""Given the cluster's reader, one namespace's registry (or why none is asked) and the reader
its own reads go through (one that keeps the registry logins it reads, for that registry)."""


def no_registries(reader: ClusterReader) -> tuple[ClusterReader, ImageRegistry | RegistryOff]:
    """No registry is asked in any namespace (the monitor's way)."""
    return reader, MONITOR_REGISTRY_OFF


def diagnose_fleet(
    reader: ClusterReader,
    namespaces: tuple[str, ...],
    now: datetime,
    settings: DoctorSettings,
    where: Where,
    creator: PodCreator | None = None,
    registries: Registries = no_registries,
    *,
    listed: bool = True,
) -> FleetReport:
    """Check each of `namespaces` with the reads doctor makes for one, sharing the reads
    outside them; remedies name each namespace (`-n`), since it is not the context's. Each
    namespace asks registries of its own: its logins are its own. Where the names are the
    cluster's namespace list (`listed`), a name no namespace can have is never asked about: it
    is that name's unknown. The context's own namespace (not `listed`) is asked about whatever
    its name, as doctor asks about it: the cluster's answer (NotFound) is the measurement."""
    impossible = [
        NamespaceReport(n, impossible_namespace_report(n, _own(settings, settings, n)))
        for n in namespaces
        if listed and not is_namespace_name(n)
    ]
    namespaces = tuple(n for n in namespaces if not listed or is_namespace_name(n))
    if not namespaces:
        return FleetReport(_worst_first(impossible))
    # Redacted once, then shared: every namespace is given the very same answer.
    shared = SharedReads(RedactingReader(reader), namespaces)
    fleet = replace(settings, fleet=namespaces)

    def check(namespace: str, in_flight: int) -> tuple[NamespaceReport, Unreachable | None]:
        own = _own(fleet, settings, namespace)
        try:
            keeping, registry = registries(reader)
            asked = None if isinstance(registry, RegistryOff) else registry
            view = shared.seen_by(RedactingReader(keeping))
            gathered = gather(view, namespace, now, own, creator, in_flight, registry=asked)
            lost = gathered if isinstance(gathered, Unreachable) else None
            return NamespaceReport(namespace, report_of(gathered, own, where, registry)), lost
        except Exception as error:  # noqa: BLE001 - a bug in one namespace is its own report
            return NamespaceReport(namespace, broken_report(error, own)), None

    # The first namespace goes alone, with the whole schedule: it makes the shared reads and
    # learns whether the cluster answers at all (if not, no other namespace tries).
    first, unreachable = check(namespaces[0], IN_FLIGHT)
    # The shared answers are all in and live for the run: the cyclic garbage collector need
    # not walk them again each time a namespace's objects come and go.
    gc.freeze()
    if unreachable is not None:
        reports = [first] + [
            NamespaceReport(n, report_of(unreachable, _own(fleet, settings, n), where))
            for n in namespaces[1:]
        ]
    else:
        reports = [first, *_each(namespaces[1:], check)]
    return FleetReport(_worst_first([*reports, *impossible]), shared.shared)


def _worst_first(reports: list[NamespaceReport]) -> tuple[NamespaceReport, ...]:
    """Not ready, then could not check, then ready; by name within each."""
    return tuple(sorted(reports, key=lambda e: (_WORST_FIRST[e.report.verdict], e.namespace)))


def broken_report(error: Exception, settings: DoctorSettings) -> Report:
    """The report of a namespace whose check met a bug: every check the run makes (the trial
    only with --trial) unknown for that one reason, the words a run on it alone would end with
    (Failure.internal: the exception's type, never its message, which may hold the cluster's
    text)."""
    failure = Failure.internal(error)
    headline = f"Couldn't check this namespace: {failure.text}."
    remedy = f"{failure.remedy[0].upper()}{failure.remedy[1:]}."

    def unknown(check: CheckId) -> Finding:
        return Finding(
            check,
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            failure.code,
            headline,
            remedy,
            why=failure.text,
        )

    return every_check_unknown(settings, unknown)


def _own(fleet: DoctorSettings, settings: DoctorSettings, namespace: str) -> DoctorSettings:
    return replace(fleet, kubectl=replace(settings.kubectl, namespace=namespace))


def _each(
    namespaces: tuple[str, ...],
    check: Callable[[str, int], tuple[NamespaceReport, Unreachable | None]],
) -> list[NamespaceReport]:
    """Each namespace checked, NAMESPACES_IN_FLIGHT at a time, each with its share of the
    read schedule, so the reads in flight stay within IN_FLIGHT (and each namespace's first
    read, made alone): one namespace's answers arrive while another's are judged; a bug in one
    is raised in the caller's thread."""
    share = max(1, IN_FLIGHT // NAMESPACES_IN_FLIGHT)
    with ReadSchedule(NAMESPACES_IN_FLIGHT) as schedule:
        pending = [schedule.submit(partial(check, namespace, share)) for namespace in namespaces]
        return [p.result()[0] for p in pending]
