"""doctor over many clusters in one run: each kubeconfig context checked as `--context NAME`
checks it (its own cluster, login, proxy and run deadline), a few clusters at a time.

A cluster that cannot be checked at all (unreachable, its login refused, its kubeconfig entry
unusable, its namespaces not listable) is that cluster's one unknown line, never the end of the
run; so is a bug met checking one cluster (its line says so, as a run on it alone would): the
other clusters keep their reports. The run's exit code is the worst of all: not ready (2),
else could not check (3), else 0.
Plain threads, not concurrent.futures (schedule.py says why).
"""

from collections.abc import Callable
from functools import partial

from msgspec import Struct

from truegreen.cluster.schedule import ReadSchedule
from truegreen.doctor.command.fleet import FleetReport
from truegreen.doctor.rollup import Verdict
from truegreen.errors import TruegreenError
from truegreen.exitcodes import ExitCode
from truegreen.failure import Failure

CLUSTERS_IN_FLIGHT = 4
"""Clusters checked at once; each has its own connections and its own deadline."""


class ClusterFailure(Struct, frozen=True):
    """Why a cluster could not be checked at all: the line a run on it alone would print."""

    code: str
    text: str
    remedy: str


class ClusterReport(Struct, frozen=True):
    """One context's cluster: its namespaces' reports, or why none could be made."""

    context: str
    fleet: FleetReport | None = None
    failure: ClusterFailure | None = None

    @property
    def exit_code(self) -> ExitCode:
        """The cluster's worst namespace's; could not check (3) when it failed."""
        return ExitCode.UNKNOWN if self.fleet is None else self.fleet.exit_code


class ClustersReport(Struct, frozen=True):
    """Every cluster's report, in the order the contexts were given (or sorted, for all)."""

    clusters: tuple[ClusterReport, ...]

    @property
    def exit_code(self) -> ExitCode:
        """The worst cluster's: 2 beats 3 beats 0."""
        codes = {cluster.exit_code for cluster in self.clusters}
        for code in (ExitCode.FAILED, ExitCode.UNKNOWN):
            if code in codes:
                return code
        return ExitCode.GOOD

    @property
    def verdict(self) -> Verdict:
        """The run's one word, from its exit code."""
        return {
            ExitCode.FAILED: Verdict.NOT_READY,
            ExitCode.UNKNOWN: Verdict.UNKNOWN,
        }.get(self.exit_code, Verdict.READY)


def check_clusters(
    contexts: tuple[str, ...], check: Callable[[str], FleetReport]
) -> ClustersReport:
    """`check` each context, CLUSTERS_IN_FLIGHT at a time (a `ReadSchedule`, whose order is
    kept); an expected error (TruegreenError) becomes that cluster's failure, and so does any
    other exception (a bug: `internal-error`, named by its type as a run's own failure is);
    Ctrl-C, SIGTERM and SIGHUP (not Exceptions) still end the run."""

    def one(context: str) -> ClusterReport:
        try:
            return ClusterReport(context, fleet=check(context))
        except TruegreenError as error:
            failure = Failure.of(error)
        except Exception as error:  # noqa: BLE001 - one cluster's bug is that cluster's line
            failure = Failure.internal(error)
        return ClusterReport(
            context, failure=ClusterFailure(failure.code, failure.text, failure.remedy)
        )

    with ReadSchedule(CLUSTERS_IN_FLIGHT) as schedule:
        pending = [schedule.submit(partial(one, context)) for context in contexts]
        return ClustersReport(tuple(p.result() for p in pending))
