"""What a refresh tick did: per workload an outcome, its reason and its writes; one exit code."""

from collections.abc import Mapping
from enum import StrEnum

from msgspec import Struct, field

from truegreen.cluster.reads import CantRead
from truegreen.exitcodes import ExitCode
from truegreen.refresh.annotations import EventReason
from truegreen.refresh.plan import ContainerPlan


class Outcome(StrEnum):
    """How a workload ended the tick."""

    CONVERGED = "converged"
    RESTARTED = "restarted"
    RESTARTED_BY_OTHER = "restarted-by-other"
    """Another tick (running now, or one that died) made the restart this tick found; this tick
    waited for it, or found it already recorded. Never a second restart toward the same digests."""
    LATCHED = "latched"
    PAUSED = "paused"
    IN_PROGRESS = "in-progress"
    PLANNED = "planned"
    ROLLOUT_FAILED = "rollout-failed"
    REFUSED = "refused"
    DANGLING_PIN = "dangling-pin"
    INVALID_IMAGE = "invalid-image"
    COULD_NOT_CHECK = "could-not-check"
    INTERRUPTED = "interrupted"
    """A signal ended the tick before this workload's end: its writes so far are listed, and
    nothing was recorded that a verified rollout did not earn."""


_FAILED = {Outcome.ROLLOUT_FAILED, Outcome.REFUSED, Outcome.DANGLING_PIN, Outcome.INVALID_IMAGE}


class Write(Struct, frozen=True):
    """One write the tick made (or, in a dry run, would make)."""

    step: str
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    template: str = ""
    applied: bool = True
    error: str = ""


class EventNote(Struct, frozen=True):
    """One Event the tick wrote (or tried to) on the workload; a failed one never fails it."""

    reason: EventReason
    message: str
    written: bool = True
    error: str = ""


class WorkloadReport(Struct, frozen=True):
    """What happened to one workload."""

    namespace: str
    name: str
    outcome: Outcome
    reason: str
    containers: tuple[ContainerPlan, ...] = ()
    writes: tuple[Write, ...] = ()
    events: tuple[EventNote, ...] = ()
    kind: str = "Deployment"
    """Deployment, StatefulSet or DaemonSet."""


class TickReport(Struct, frozen=True):
    """The whole tick."""

    workloads: tuple[WorkloadReport, ...]
    cant_read: tuple[str, ...] = ()
    registry_requests: int = 0
    distinct_references: int = 0
    first_read: CantRead | None = None
    """The tick's first read (the opted-in workloads), when it failed: nothing else was read,
    and what to do depends on how it failed (the address, the login, a permission)."""

    @property
    def exit_code(self) -> ExitCode:
        """2 a rollout failed (or a pin dangles, or a restart was refused); else 3 when a read
        failed; else 0 (converged, or deliberately held)."""
        outcomes = {w.outcome for w in self.workloads}
        if outcomes & _FAILED:
            return ExitCode.FAILED
        if self.cant_read or Outcome.COULD_NOT_CHECK in outcomes:
            return ExitCode.UNKNOWN
        return ExitCode.GOOD
