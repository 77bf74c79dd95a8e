"""What a rule is, and what it reports."""

from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum

from msgspec import Struct, field

from truegreen.lint.probes import WorkloadModel


class Severity(StrEnum):
    """How bad a finding is; only errors fail the run (exit 2)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class RuleHit(Struct, frozen=True):
    """One place a rule fires: the container to change and why."""

    container: str | None
    message: str
    values: Mapping[str, str] = field(default_factory=dict)
    """Plain values for doctor's wording (`port`, `setting`)."""
    probe: str = ""
    """The probe it is about (`livenessProbe`); "" when it is about the container as a whole."""


class Context(Struct, frozen=True):
    """What the rules know beyond the workload: the Services that route to its containers, and
    the work its object's other pods keep running when one restart recreates them all."""

    services_by_container: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    group_work: str = ""
    """`truegreen.lint.probes.group_work` of the object the workload belongs to."""


class RuleInfo(Struct, frozen=True, kw_only=True):
    """What every rule documents: id, severity, what it says, why, and how to fix it."""

    id: str
    severity: Severity
    summary: str
    rationale: str
    fix: str
    reads: str = ""
    """What in a manifest the rule looks at (docs/rules.md)."""
    limits: str = ""
    """What it cannot see (docs/rules.md)."""
    unchecked: bool = False
    """A finding of it says that something could not be checked, not that it failed: the run
    exits 3 when nothing failed."""


class Rule(RuleInfo, frozen=True, kw_only=True):
    """A probe rule: its documentation and the check that finds it in a workload."""

    check: Callable[[WorkloadModel, Context], Iterable[RuleHit]]
