"""The rollup's pure parts: merging repeated statements and the exit code from all findings."""

from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.rollup import exit_code_for, merge_duplicates
from truegreen.exitcodes import ExitCode


def _unknown(detail: str, obj: str) -> Finding:
    return Finding(
        CheckId.IMAGE_PULL,
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        "image-pull.cant-read",
        "Couldn't check.",
        "Look.",
        (detail,),
        (obj,),
        why="no permission",
    )


def test_repeats_merge_keeping_every_detail_and_object_once() -> None:
    merged = merge_duplicates(
        [_unknown("a", "Secret/a"), _unknown("b", "Secret/b"), _unknown("a", "Secret/a")]
    )
    assert len(merged) == 1
    assert merged[0].details == ("a", "b")
    assert merged[0].objects == ("Secret/a", "Secret/b")


def test_exit_code_is_from_every_finding() -> None:
    ok = Finding(CheckId.STORAGE, Status.OK, Basis.MEASURED, "storage.ok", "Fine.", "")
    warn = Finding(
        CheckId.CAPACITY, Status.WARN, Basis.INFERRED, "capacity.held-by-running-job", "W.", ""
    )
    fail = Finding(CheckId.WORKLOADS, Status.FAIL, Basis.MEASURED, "workloads.crash-loop", "F.", "")
    unknown = _unknown("x", "Secret/x")
    assert exit_code_for([ok, warn]) is ExitCode.GOOD
    assert exit_code_for([ok, unknown, warn]) is ExitCode.UNKNOWN
    assert exit_code_for([warn, unknown, fail]) is ExitCode.FAILED


def test_cant_check_is_only_ever_unknown() -> None:
    import pytest

    with pytest.raises(ValueError, match="unknown status and cant-check basis go together"):
        Finding(CheckId.STORAGE, Status.FAIL, Basis.CANT_CHECK, "storage.cant-read", "x", "y")
