"""A trial's evidence as the snapshot keeps it: redacted by the snapshot's policy, as plain
values, and read back as hostile input.

What is kept is what the trial read back (truegreen.trial.readback.TrialRun): each trial pod's
kubelet Events, its container states and the tail of its log (the probe's line), the create
the server refused, the pods a delete did not remove. The same redaction the snapshot applies
to everything else (cluster/redact.py) runs on it before any check sees it, live or offline,
so a snapshot's trial reads back to exactly what the live run judged.
"""

from typing import Any

import msgspec

from truegreen.cluster import CantRead, ReadFailure
from truegreen.cluster.redact import redact_value
from truegreen.trial.readback import TrialRun

NOT_SAVED = "the snapshot holds no readable record of the trial"


def redacted(run: TrialRun) -> TrialRun:
    """`run` with every text (event messages, container messages, the log, the server's
    words) passed through the redaction policy."""
    return msgspec.convert(redact_value(msgspec.to_builtins(run)), TrialRun)


def to_record(run: TrialRun | None) -> dict[str, Any]:
    """The plain values a snapshot saves: `run` is null when there was no training job to
    try."""
    return {"run": None if run is None else redact_value(msgspec.to_builtins(run))}


def from_record(record: object) -> TrialRun | CantRead | None:
    """The trial a snapshot saved; None when it held no training job to try; a CantRead when
    the record is missing or cannot be read as one (never a crash, never an empty trial)."""
    if not isinstance(record, dict) or "run" not in record:
        return CantRead(ReadFailure.NOT_CAPTURED, NOT_SAVED)
    if record["run"] is None:
        return None
    try:
        return redacted(msgspec.convert(record["run"], TrialRun))
    except msgspec.ValidationError as error:
        return CantRead(ReadFailure.MALFORMED, f"{NOT_SAVED}: {error}")
