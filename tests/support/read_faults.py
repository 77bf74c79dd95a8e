"""The fault matrix for the reads one feature adds: every fault class the fake API server can
inject (tests/support/fake_apiserver.py `Fault`), on each read, against a baseline run.

What must hold in each cell, as tests/scenario/test_fault_matrix.py holds it for a healthy run:
JSON always (never a traceback); the read sent once per use (a reset resent as client-go does,
a throttle waited out); no check but the read's own owners changes; those owners become unknown,
never a fail and never a pass; a 404 on a read by name is the measured absence it stands for
where it is the API server's word (`_measures_absence`).
"""

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from tests.support.fake_apiserver import Fault, RequestRecord
from truegreen.cluster.throttle import MAX_RETRIES

if TYPE_CHECKING:
    from tests.scenario.conftest import Doctor
    from tests.support.cli import CliResult


class Absence(Struct, frozen=True):
    """What a 404 on the read measures: a finding's code, the queue check's statuses, the exit
    code."""

    code: str
    queue: frozenset[str]
    exit_code: int


class Read(Struct, frozen=True):
    """One read of the matrix: the checks that consume it, what its 404 measures (None: a
    failed read like any other), and how many times one run makes it."""

    owners: frozenset[str]
    absence: Absence | None = None
    uses: int = 1


def statuses(report: dict[str, Any]) -> dict[str, set[str]]:
    """Each check's statuses in a JSON report."""
    found: dict[str, set[str]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["check"], set()).add(finding["status"])
    return found


class Cell(Struct, frozen=True):
    """One fault class on one read: the run it gave and what reached the path."""

    fault: Fault
    name: str
    """`FAULT on GET PATH`, for the assertion that names a cell that did not hold."""
    result: "CliResult"
    sent: list[RequestRecord]
    """The run's requests to the faulted path (a retry included)."""

    @property
    def throttled(self) -> bool:
        """Turned away once with Retry-After: the run waits it out."""
        return self.fault is Fault.TOO_MANY_REQUESTS

    @property
    def resends(self) -> int:
        """How often the client may send the read again: a reset as client-go resends it, a
        throttle once it is waited out."""
        return MAX_RETRIES if self.fault is Fault.RESET else int(self.throttled)


def cells(doctor: "Doctor", path: str, *, after: int = 0) -> Iterator[Cell]:
    """Each fault class on GET `path` (past its first `after` requests, for a path other
    reads share), doctor run once for each: JSON always, never a traceback."""
    for fault in Fault:
        doctor.server.clear_faults()
        throttled = fault is Fault.TOO_MANY_REQUESTS
        doctor.server.inject(
            fault,
            "^" + path + "$",
            method="GET",
            delay=3,
            count=1 if throttled else None,
            after=after,
        )
        before = len(doctor.server.log)
        result = doctor.live("-o", "json", "--request-timeout", "3" if throttled else "0.9")
        name = f"{fault.name} on GET {path}"
        assert result.stdout.startswith("{"), f"{name}: no JSON; stderr: {result.stderr}"
        sent = [r for r in doctor.server.log[before:] if r.path == path]
        yield Cell(fault, name, result, sent)


def _measures_absence(fault: Fault, path: str) -> bool:
    """Whether a 404 on `path` measures its object absent: the API server's NotFound always;
    Go's bare `404 page not found` only for a custom resource (its group is not installed),
    never for a core object, whose NotFound would name it."""
    return fault is Fault.NOT_FOUND or (fault is Fault.PAGE_NOT_FOUND and path.startswith("/apis/"))


def hold(doctor: "Doctor", reads: Mapping[str, Read], baseline_exit: int) -> int:
    """Every fault class on each GET of `reads` (by path) against the loaded cluster; the cells
    that held (all, or an assertion names the one that did not)."""
    doctor.round_trip = False  # each fault class's round trip is pinned in test_snapshot.py
    baseline = doctor.live("-o", "json", "--request-timeout", "0.9")
    assert baseline.exit_code == baseline_exit, "precondition: the baseline's verdict"
    base = statuses(baseline.json())
    made = {r.path for r in doctor.server.requests("GET")}
    assert set(reads) <= made, f"precondition: every read is made: {set(reads) - made}"
    held = 0
    for path, read in reads.items():
        for cell in cells(doctor, path):
            name, result = cell.name, cell.result
            sends = len(cell.sent)
            assert sends <= read.uses * (1 + cell.resends), f"{name}: {sends} sends"
            report = result.json()
            found = statuses(report)
            others = {c: s for c, s in found.items() if c not in read.owners}
            assert others == {c: s for c, s in base.items() if c not in read.owners}, name
            if cell.throttled:
                assert found == base, name
                assert result.exit_code == baseline_exit, name
            elif _measures_absence(cell.fault, path) and read.absence is not None:
                assert read.absence.code in {f["code"] for f in report["findings"]}, name
                assert found["queue"] == read.absence.queue, name
                assert result.exit_code == read.absence.exit_code, name
            else:
                for check in read.owners:
                    assert "unknown" in found[check], name
                    assert "fail" not in found[check], name
                assert result.exit_code == 3, name
            held += 1
    assert held == len(reads) * len(Fault)
    return held
