"""doctor over many clusters in one run: each kubeconfig context checked as `--context NAME`
checks it (its own cluster, login, proxy and run deadline), a few clusters at a time.

A cluster that cannot be checked at all (unreachable, its login refused, its kubeconfig entry
unusable, its namespaces not listable) is that cluster's one unknown line, never the end of the
run; the run's exit code is the worst of all: not ready (2), else could not check (3), else 0.
Plain threads, not concurrent.futures (schedule.py says why).
"""

import threading
from collections.abc import Callable

from msgspec import Struct

from truegreen.doctor.fleet import FleetReport
from truegreen.doctor.rollup import Verdict
from truegreen.errors import TruegreenError
from truegreen.exitcodes import ExitCode

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
    """`check` each context, CLUSTERS_IN_FLIGHT at a time; an expected error (TruegreenError)
    becomes that cluster's failure, anything else (a bug) is raised once all have ended."""
    reports: dict[str, ClusterReport] = {}
    bugs: list[BaseException] = []
    waiting = list(reversed(contexts))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not waiting or bugs:
                    return
                context = waiting.pop()
            try:
                report = ClusterReport(context, fleet=check(context))
            except TruegreenError as error:
                text = f"{error.what}: {error.why}" if error.why else error.what
                report = ClusterReport(
                    context, failure=ClusterFailure(error.code, text, error.todo)
                )
            except BaseException as error:  # noqa: BLE001 - raised below, in the caller's thread
                with lock:
                    bugs.append(error)
                return
            with lock:
                reports[context] = report

    workers = [
        threading.Thread(target=work, name="cluster", daemon=True)
        for _ in range(min(CLUSTERS_IN_FLIGHT, len(contexts)))
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if bugs:
        raise bugs[0]
    return ClustersReport(tuple(reports[context] for context in contexts))
