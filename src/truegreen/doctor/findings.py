"""What a check reports: findings with a status, a basis, a stable code and plain words."""

from enum import StrEnum

from msgspec import Struct


class CheckId(StrEnum):
    """The checks, in the order root causes come before symptoms."""

    CREDENTIALS = "credentials"
    IMAGE_PULL = "image-pull"
    STORAGE = "storage"
    QUEUE = "queue"
    ADMISSION = "admission"
    WORKLOADS = "workloads"
    EVIDENCE = "evidence"
    CAPACITY = "capacity"
    PROBES = "probes"
    FRESHNESS = "freshness"
    TRIAL = "trial"


class Status(StrEnum):
    """How a finding stands. `unknown` means the check could not look."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"


class Basis(StrEnum):
    """How the finding was reached: a structural marker, never a string prefix."""

    MEASURED = "measured"
    """Read directly from the cluster (a 404 counts: the thing is absent)."""
    INFERRED = "inferred"
    """Concluded from measurements (a pod has waited too long, so it is stuck)."""
    CANT_CHECK = "cant-check"
    """The check could not look: no permission, a timeout, an unreachable cluster."""


class Finding(Struct, frozen=True):
    """One thing a check found."""

    check: CheckId
    status: Status
    basis: Basis
    code: str
    """Stable reason id, `<check>.<reason>`, for machines and the headline rule table."""
    headline: str
    """Plain words for the operator; no Kubernetes jargon."""
    remedy: str
    """What to do, in plain words."""
    details: tuple[str, ...] = ()
    """Kubernetes details shown with --verbose; may use Kubernetes terms."""
    objects: tuple[str, ...] = ()
    """The objects looked at, as `Kind/name`."""
    why: str = ""
    """For an unknown finding: why the check could not look, in plain words."""

    def __post_init__(self) -> None:
        # The promise, enforced where findings are made: can't-check is only ever unknown.
        if (self.basis is Basis.CANT_CHECK) != (self.status is Status.UNKNOWN):
            raise ValueError(f"{self.code}: unknown status and cant-check basis go together")
