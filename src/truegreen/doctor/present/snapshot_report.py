"""What `truegreen snapshot` says: one summary line (text) or one JSON document.

The JSON document (`schema_version` 1): `verdict` (saved, incomplete: saved but some reads
failed, unknown: nothing saved), `exit_code`, `headline` {code (the verdict), text, remedy},
`saved_to`, `format` (archive, folder), `namespace`, `reads`, `failed_reads`, `could_not_read`
(each failed read's reason), `events`, `logs`, `logs_left_out`. A run that saves nothing (bad
usage, no cluster, not one read answered) prints the shared failure document
(docs/failure.schema.json) with verdict unknown and null for the rest.
"""

from typing import Any

from truegreen.doctor.command.request import SnapshotSummary
from truegreen.exitcodes import ExitCode
from truegreen.failure import Failure, failure_document
from truegreen.textsafe import terminal_safe

SCHEMA_VERSION = 1


def exit_code(summary: SnapshotSummary) -> ExitCode:
    """3 when any read could not be made (the bundle is saved, but incomplete), else 0."""
    return ExitCode.UNKNOWN if summary.could_not_read else ExitCode.GOOD


def _counted(count: int, thing: str, things: str | None = None) -> str:
    return f"{count} {thing if count == 1 else things or thing + 's'}"


def headline(summary: SnapshotSummary) -> str:
    """`Saved 16 reads of 'train' to X (37 events, logs of 2 failing containers), 2 could not
    be read.` Names from the cluster and paths are shown terminal-safe."""
    extras = []
    if summary.events is not None:
        extras.append(_counted(summary.events, "event"))
    if summary.logs:
        extras.append(f"{_counted(summary.logs, 'log')} of failing containers")
    if summary.logs_left_out:
        extras.append(f"{_counted(summary.logs_left_out, 'more failing container')} left out")
    failed = len(summary.could_not_read)
    named = "; ".join(terminal_safe(said) for said in summary.failed_plainly)
    return (
        f"Saved {_counted(summary.reads, 'read')} of '{terminal_safe(summary.namespace)}' to "
        f"{terminal_safe(str(summary.saved_to))}"
        + (f" ({', '.join(extras)})" if extras else "")
        + (f", {failed} could not be read" if failed else "")
        + (f": {named}" if failed and named else "")
        + "."
    )


def remedy(summary: SnapshotSummary) -> str:
    """The command that checks the bundle offline."""
    return f"Check it with `truegreen doctor --snapshot {terminal_safe(str(summary.saved_to))}`."


def to_text(summary: SnapshotSummary, *, verbose: bool) -> list[str]:
    """The summary line (naming what could not be read), the command that checks the bundle,
    and with `verbose` each failed read's reason in Kubernetes' terms."""
    lines = [headline(summary), remedy(summary)]
    if verbose:
        lines += [f"  could not read: {terminal_safe(reason)}" for reason in summary.could_not_read]
    return lines


def to_json(summary: SnapshotSummary) -> dict[str, Any]:
    """The documented JSON document for a saved snapshot."""
    code = exit_code(summary)
    verdict = "incomplete" if code is ExitCode.UNKNOWN else "saved"
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": verdict,
        "exit_code": int(code),
        "headline": {"code": verdict, "text": headline(summary), "remedy": remedy(summary)},
        "saved_to": str(summary.saved_to),
        "format": "folder" if summary.folder else "archive",
        "namespace": summary.namespace,
        "reads": summary.reads,
        "failed_reads": len(summary.could_not_read),
        "could_not_read": list(summary.could_not_read),
        "events": summary.events,
        "logs": summary.logs,
        "logs_left_out": summary.logs_left_out,
    }


def failure_json(failure: Failure) -> dict[str, Any]:
    """The JSON document of a run that saved nothing: the shared failure document
    (truegreen.failure) with a snapshot's fields, null."""
    return failure_document(
        failure,
        verdict="unknown",
        saved_to=None,
        format=None,
        namespace=None,
        reads=None,
        failed_reads=None,
        could_not_read=None,
        events=None,
        logs=None,
        logs_left_out=None,
    )
