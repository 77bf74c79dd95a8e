"""The claims a training job's pods make, through admission: its generic ephemeral volumes.

The ephemeral volume controller creates a claim `<pod>-<volume>` for each of a pod's
`volumes[].ephemeral` once the pod exists (pkg/controller/volume/ephemeral/controller.go
`handleVolume`). That create passes the API server's admission like any other: LimitRanger's
`PersistentVolumeClaim` items (plugin/pkg/admission/limitranger/admission.go
`PersistentVolumeClaimValidateLimitFunc`: `min` through minConstraint, `max` through
maxRequestConstraint, both of the claim's storage request; the first range that breaks refuses
it), then ResourceQuota (claim_quota.py). A refused claim is retried and never made while the
limit stands, and its pod waits for it forever. The pods themselves were let in, so a trial
start of one pod (`--admission-dry-run`) answers none of this.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject, Listed
from truegreen.doctor.checks.admission.claim_quota import (
    BY_CLASS,
    STORAGE,
    ClaimHolder,
    ClaimVerdict,
    QuotaClaim,
    applies_to_claim,
    claim_verdicts,
    quota_claim,
    unnamed_class_limits,
)
from truegreen.doctor.checks.admission.quota import Quota, Refusal, Shortfall
from truegreen.doctor.checks.admission.under_way import StillToCreate
from truegreen.doctor.checks.admission.words import (
    LIMIT_RANGE_REFUSED,
    QUOTA_EXCEEDED,
    QUOTA_HELD_BY_RUNNING_JOB,
    QUOTA_NOT_COUNTED,
    SAY,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.stored_pod import (
    Amount,
    LimitRangeRefusal,
    Violation,
    limit_items,
    min_constraint,
)
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.quantity import MEMORY, QuantityError, format_amount, scheduler_units

_SCOPE = "PersistentVolumeClaim"
_WAITS = (
    "the ephemeral volume controller makes one for each pod once it exists, and the pod waits "
    "for it"
)


def _set_claims(job: TrainingJob) -> list[tuple[str, int, list[QuotaClaim]]]:
    """(pod set, its pods, the claims one of its pods makes) for each pod set that makes any;
    QuantityError on a size that is not a quantity."""
    found = []
    for pod_set in job.pod_sets:
        claims = [quota_claim(v, spec) for v, spec in o.ephemeral_claims(pod_set.spec)]
        if claims:
            found.append((pod_set.name, pod_set.count, claims))
    return found


def claim_quota_findings(
    env: Environment,
    job: TrainingJob | None,
    quotas: Sequence[Quota],
    still: StillToCreate,
    holders: Sequence[ClaimHolder] = (),
) -> tuple[list[Finding], set[str], list[str]]:
    """(refusals of the claims the job's pods make, the quotas compared with them, notes):
    one pod's claims for each pod set with pods `still` to create, and, for a job whose pods
    run only together, the claims of every pod it still creates, made one by one and each
    charged as it is let in. A job under way is charged nothing for the pods it has: the
    ephemeral volume controller makes a claim only for a pod that lacks it (`handleVolume`
    returns when `<pod>-<volume>` exists), and those claims are already in `used`. Where the
    claims of running training jobs' pods (`holders`) alone fill a quota, it is a wait."""
    try:
        sets = _set_claims(job) if job is not None else []
    except QuantityError:
        return [], set(), ["the sizes of the training job's own volumes are invalid"]
    if job is None or not sets:
        return [], set(), []
    every = [c for _, _, claims in sets for c in claims]
    compared = {q.name for q in quotas if any(applies_to_claim(q, c) for c in every)}
    notes = [
        f"usage limit {q.name}: its limits per storage type are not compared for the volume "
        f"{', '.join(dict.fromkeys(names))}, which names no storage type (it gets the "
        "cluster's default)"
        for q in quotas
        if (names := unnamed_class_limits(q, every))
    ]
    # The claims of the pods a job under way has, which it never makes again.
    present = sum((count - still.counts.get(name, 0)) * len(claims) for name, count, claims in sets)
    # A set whose pods are all there (a job under way) makes no claim: nothing of it is judged.
    sets = [(name, count, claims) for name, count, claims in sets if still.counts.get(name)]
    refused: dict[ClaimVerdict, list[str]] = {}
    for name, _, claims in sets:
        for verdict in claim_verdicts(quotas, claims, holders=holders):
            refused.setdefault(verdict, []).append(name)
    findings = [_finding(env, job, v, names) for v, names in refused.items()]
    if job.together and sets:
        whole = [c for name, _, claims in sets for _ in range(still.counts[name]) for c in claims]
        judged = {v.verdict.quota for v in refused}
        findings += [
            _finding(env, job, v, [name for name, _, _ in sets], whole=True)
            for v in claim_verdicts(quotas, whole, judged, present, holders)
        ]
    return findings, compared, notes


def _noun(resource: str) -> str:
    """A claim resource in plain words."""
    storage_class, _, base = resource.rpartition(BY_CLASS)
    noun = "volume space" if base == STORAGE else "volumes"
    return f"{noun} of storage type '{storage_class}'" if storage_class else noun


def _amount(resource: str, value: int) -> str:
    return format_amount(MEMORY, value) if resource.endswith(STORAGE) else str(value)


def _shortfall(s: Shortfall, more: bool) -> str:
    """One shortfall in plain words; `more` where a job under way is charged only the rest."""
    return (
        f"{_noun(s.resource)}: {_amount(s.resource, s.used)} of {_amount(s.resource, s.hard)} "
        f"in use, the job needs {_amount(s.resource, s.requested)}{' more' if more else ''}"
    )


def _finding(
    env: Environment, job: TrainingJob, found: ClaimVerdict, sets: list[str], *, whole: bool = False
) -> Finding:
    """One quota's refusal of the claims the pods of `sets` make (`whole`: of every pod's)."""
    verdict = found.verdict
    volumes = sorted(
        {v for s in job.pod_sets if s.name in sets for v, _ in o.ephemeral_claims(s.spec)}
    )
    whose = (
        f"refuses the claims of volume{'s' if len(volumes) > 1 else ''} {', '.join(volumes)} of "
        f"the pods of {job.ref} ({', '.join(sets)}): {_WAITS}"
    )
    objects = [f"ResourceQuota/{verdict.quota}", job.ref]
    if verdict.refusal is Refusal.UNCOUNTED:
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            QUOTA_NOT_COUNTED,
            details=[
                f"quota {verdict.quota}: no status.used for {', '.join(verdict.uncounted)}",
                whose,
            ],
            objects=objects,
            quota=verdict.quota,
        )
    shortfall = "; ".join(_shortfall(s, bool(found.present)) for s in verdict.shortfalls)
    details = [
        f"quota {verdict.quota}: {s.resource} used {s.used} + requested {s.requested} "
        f"> hard {s.hard}"
        for s in verdict.shortfalls
    ]
    details.append(whose)
    if found.present:
        details.append(
            f"{found.present} of the job's {found.claims} volumes were made and are counted in "
            f"used: charged the {found.claims - found.present} still to make"
        )
    if whole:
        shortfall += (
            f"; only {found.made} of its {found.claims} volumes would be made, and its "
            "programs run only all together"
        )
        details.append(
            f"the job's {found.claims} volumes are made one by one, each charged as it is let "
            f"in: {found.made} made, {found.claims - found.made} refused"
        )
    if verdict.waiting_for:
        jobs = ", ".join(f"'{ref.partition('/')[2]}'" for ref in verdict.waiting_for)
        details.insert(
            len(verdict.shortfalls),
            f"held by the claims of the running programs of {jobs}, each owned by its program "
            "and deleted with it",
        )
        return SAY.finding(
            Status.WARN,
            Basis.INFERRED,
            QUOTA_HELD_BY_RUNNING_JOB,
            details=details,
            objects=[f"ResourceQuota/{verdict.quota}", *verdict.waiting_for],
            quota=verdict.quota,
            jobs=jobs,
        )
    if all(s.hard == 0 for s in verdict.shortfalls):
        free = "This environment allows none of it, so run the job elsewhere"
    else:
        listed = env.settings.kubectl.here("get", "persistentvolumeclaims")
        free = f"Delete volumes that are no longer needed ({listed} lists them)"
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        QUOTA_EXCEEDED,
        details=details,
        objects=objects,
        quota=verdict.quota,
        shortfall=shortfall,
        free=free,
    )


# -- LimitRanger's PersistentVolumeClaim items -------------------------------------------------


def _max_request(name: str, enforced: Amount, requests: Mapping[str, Amount]) -> Violation | None:
    """maxRequestConstraint: the request must be stated and within it."""
    head = f"maximum {name} usage per {_SCOPE} is {enforced}"
    request = requests.get(name)
    if request is None:
        return Violation(
            _SCOPE, name, "max", str(enforced), "", "", f"{head}.  No request is specified"
        )
    if request.value > enforced.value:
        return Violation(
            _SCOPE,
            name,
            "max",
            str(enforced),
            "request",
            str(request),
            f"{head}, but request is {request}",
        )
    return None


def claim_limit_refusal(
    spec: Mapping[str, Any], limit_ranges: Iterable[KubeObject]
) -> LimitRangeRefusal | None:
    """The refusal of a claim spec by the first LimitRange it breaks; None when every range
    lets it in. QuantityError when an amount is not a quantity."""
    requests = {
        str(k): Amount.parse(v)
        for k, v in o.mapping(o.mapping(spec.get("resources")).get("requests")).items()
    }
    for limit_range in limit_ranges:
        found: list[Violation] = []
        for item in (i for i in limit_items(limit_range) if i.type == _SCOPE):
            for name, value in item.min.items():
                broken = min_constraint(_SCOPE, str(name), Amount.parse(value), requests, {})
                if broken is not None:
                    stated, asked, message = broken
                    found.append(
                        Violation(
                            _SCOPE,
                            str(name),
                            "min",
                            str(Amount.parse(value)),
                            stated,
                            asked,
                            message,
                        )
                    )
            for name, value in item.max.items():
                violation = _max_request(str(name), Amount.parse(value), requests)
                if violation is not None:
                    found.append(violation)
        if found:
            return LimitRangeRefusal(o.name_of(limit_range), tuple(found))
    return None


def _plain(resource: str, text: str) -> str:
    """`200 GiB` for a storage amount as the plugin prints it; others as written."""
    if resource != "storage":
        return f"{text} {resource}"
    return format_amount(MEMORY, scheduler_units(MEMORY, Amount.parse(text).value))


def _limit_words(volume: str, v: Violation) -> str:
    who = f"the volume '{volume}' each program makes"
    if not v.stated:
        return f"{who} doesn't state how much {v.resource} it asks for, which each volume must here"
    asked, allowed = _plain(v.resource, v.asked), _plain(v.resource, v.allowed)
    if v.bound == "max":
        return f"{who} asks for {asked}, more than the {allowed} each volume may have"
    return f"{who} asks for {asked}, less than the {allowed} each volume must have"


def claim_limit_findings(env: Environment, job: TrainingJob | None) -> list[Finding]:
    """LimitRanges' refusals of the claims the job's pods make, one finding per range and
    problem, naming the pod sets; none where the ranges could not be read (the pods' own
    LimitRange gate says so)."""
    read = env.limit_ranges
    if job is None or not isinstance(read, Listed):
        return []
    refused: dict[tuple[str, str], tuple[str, LimitRangeRefusal, list[str]]] = {}
    for pod_set in job.pod_sets:
        for volume, spec in o.ephemeral_claims(pod_set.spec):
            try:
                refusal = claim_limit_refusal(spec, read.items)
            except QuantityError:
                continue  # the ephemeral volume controller's create would be invalid anyway
            if refusal is not None:
                key = (volume, refusal.message)
                refused.setdefault(key, (volume, refusal, []))[2].append(pod_set.name)
    return [
        SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            LIMIT_RANGE_REFUSED,
            details=[
                f"LimitRange {refusal.limit_range} refuses the claim of volume {volume} of the "
                f"pods of {job.ref} ({', '.join(sets)}): forbidden: {refusal.message}; {_WAITS}"
            ],
            objects=[f"LimitRange/{refusal.limit_range}", job.ref],
            limit=refusal.limit_range,
            problem=_limit_words(volume, refusal.violations[0])
            + (f", and {len(refusal.violations) - 1} more" if refusal.violations[1:] else ""),
            command=env.settings.kubectl.here("describe", "limitrange", refusal.limit_range),
        )
        for volume, refusal, sets in refused.values()
    ]
