"""doctor over many clusters runs them on a bounded schedule, in the order given: an expected
error, or a bug, is that cluster's own line; Ctrl-C still ends the run."""

import threading
import time

import pytest

from truegreen.doctor.command.clusters import CLUSTERS_IN_FLIGHT, ClusterFailure, check_clusters
from truegreen.doctor.command.fleet import FleetReport
from truegreen.errors import TruegreenError
from truegreen.failure import INTERNAL_REMEDY


def test_clusters_run_at_most_their_bound_at_once_and_report_in_the_order_given() -> None:
    running = 0
    most = 0
    entered = 0
    lock = threading.Lock()
    # The first CLUSTERS_IN_FLIGHT checks wait for one another: a lower bound breaks the
    # barrier, a higher one lets a further check in beside them.
    together = threading.Barrier(CLUSTERS_IN_FLIGHT, timeout=10)

    def check(context: str) -> FleetReport:
        nonlocal running, most, entered
        with lock:
            running += 1
            most = max(most, running)
            entered += 1
            first = entered <= CLUSTERS_IN_FLIGHT
        if first:
            together.wait()
        time.sleep(0.05)
        with lock:
            running -= 1
        if context == "c3":
            raise TruegreenError("couldn't reach c3", "connection refused", "check it")
        return FleetReport(())

    contexts = tuple(f"c{i}" for i in range(10))
    report = check_clusters(contexts, check)
    assert [c.context for c in report.clusters] == list(contexts)
    assert most == CLUSTERS_IN_FLIGHT
    failed = report.clusters[3].failure
    assert failed is not None
    assert failed.text == "couldn't reach c3: connection refused"
    assert all(c.failure is None for i, c in enumerate(report.clusters) if i != 3)


def test_a_bug_in_one_cluster_s_check_is_that_cluster_s_line_and_the_others_are_kept() -> None:
    def check(context: str) -> FleetReport:
        if context == "b":
            raise KeyError("a bug, with text of the cluster's choosing")
        return FleetReport(())

    report = check_clusters(("a", "b", "c"), check)
    assert [(c.context, c.failure) for c in report.clusters] == [
        ("a", None),
        (
            "b",
            ClusterFailure(
                "internal-error",
                "internal error (KeyError); this is a bug in truegreen",
                INTERNAL_REMEDY,
            ),
        ),
        ("c", None),
    ]
    assert int(report.exit_code) == 3


def test_ctrl_c_in_one_cluster_s_check_still_ends_the_run() -> None:
    def check(context: str) -> FleetReport:
        if context == "b":
            raise KeyboardInterrupt
        return FleetReport(())

    with pytest.raises(KeyboardInterrupt):
        check_clusters(("a", "b", "c"), check)
