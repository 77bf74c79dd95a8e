"""ResourceQuota admission of the claims a training job's pods make, as pure functions.

A pod's generic ephemeral volume (`volumes[].ephemeral.volumeClaimTemplate`) is a claim the
ephemeral volume controller creates once the pod exists (pkg/controller/volume/ephemeral/
controller.go `handleVolume`), one per pod per such volume. That create goes through the quota
plugin like any other (plugin/pkg/admission/resourcequota, `checkRequest`), charged by the
claim evaluator, pkg/quota/v1/evaluator/core/persistent_volume_claims.go:
- `Usage`: `persistentvolumeclaims` and `count/persistentvolumeclaims` 1, `requests.storage`
  the claim's storage request rounded up to whole bytes (`getStorageUsage`), and, for a claim of
  a storage class, `<class>.storageclass.storage.k8s.io/persistentvolumeclaims` and
  `…/requests.storage` alike;
- `MatchingResources`: those names, a class's by their suffix;
- `Matches`: the quota covers one of them and every scope matches the claim, and only the
  `VolumeAttributesClass` scope can (`pvcMatchesScopeFunc`; the VolumeAttributesClass feature is
  GA and on since 1.34): a quota scoped by anything else never counts a claim;
- `Constraints`: none (no size a claim must state).
A claim refused is retried by the controller and never made while the quota stays full; its
pod waits for it forever ("waiting for ephemeral volume controller to create the
persistentvolumeclaim").
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.doctor.checks.admission.quota import (
    Quota,
    QuotaVerdict,
    Refusal,
    ScopeTerm,
    Shortfall,
    amount,
    let_in,
    total_charge,
)

CLAIM_COUNT = "persistentvolumeclaims"
CLAIM_OBJECTS = "count/persistentvolumeclaims"
STORAGE = "requests.storage"
BY_CLASS = ".storageclass.storage.k8s.io/"
"""The infix of a resource counted per storage class: `gold.storageclass.storage.k8s.io/…`."""
_ATTRIBUTES_SCOPE = "VolumeAttributesClass"


class QuotaClaim(Struct, frozen=True):
    """What the quota plugin looks at in a claim about to be created."""

    volume: str
    """The pod's volume the claim is made for."""
    storage_class: str
    """The class the claim names; "" when it names none (the DefaultStorageClass admission
    plugin then gives it the cluster's default class, which doctor does not read)."""
    storage: int | None
    """The storage it requests, in bytes; None when it states none."""
    attributes_class: str = ""
    """`volumeAttributesClassName`, for the VolumeAttributesClass scope."""


def quota_claim(volume: str, spec: Mapping[str, Any]) -> QuotaClaim:
    """The quota view of a claim template's spec; QuantityError on a bad size."""
    requested = o.mapping(o.mapping(spec.get("resources")).get("requests")).get("storage")
    return QuotaClaim(
        volume,
        str(spec.get("storageClassName") or ""),
        None if requested is None else amount(STORAGE, requested),
        str(spec.get("volumeAttributesClassName") or ""),
    )


def claim_charge(claim: QuotaClaim) -> dict[str, int]:
    """What creating the claim counts against a quota (pvcEvaluator.Usage)."""
    charged = {CLAIM_COUNT: 1, CLAIM_OBJECTS: 1}
    if claim.storage_class:
        charged[f"{claim.storage_class}{BY_CLASS}{CLAIM_COUNT}"] = 1
    if claim.storage is not None:
        charged[STORAGE] = claim.storage
        if claim.storage_class:
            charged[f"{claim.storage_class}{BY_CLASS}{STORAGE}"] = claim.storage
    return charged


def covered_for_claims(quota: Quota) -> frozenset[str]:
    """The quota's resources a claim is charged for (pvcEvaluator.MatchingResources)."""
    return frozenset(
        name
        for name in quota.hard
        if name in (CLAIM_COUNT, CLAIM_OBJECTS, STORAGE)
        or name.endswith((f"{BY_CLASS}{CLAIM_COUNT}", f"{BY_CLASS}{STORAGE}"))
    )


def _term_matches(term: ScopeTerm, claim: QuotaClaim) -> bool:
    """pvcMatchesScopeFunc: a label selector over {"VolumeAttributesClass": <class>}, empty
    when the claim names none; every other scope matches no claim."""
    if term.scope != _ATTRIBUTES_SCOPE:
        return False
    named = claim.attributes_class
    if term.operator == "Exists":
        return bool(named)
    if term.operator == "DoesNotExist":
        return not named
    inside = bool(named) and named in term.values
    return inside if term.operator == "In" else term.operator == "NotIn" and not inside


def applies_to_claim(quota: Quota, claim: QuotaClaim) -> bool:
    """generic.Matches: the quota covers a claim resource and every scope matches the claim."""
    return bool(covered_for_claims(quota)) and all(_term_matches(t, claim) for t in quota.scopes)


def unnamed_class_limits(quota: Quota, claims: Iterable[QuotaClaim]) -> list[str]:
    """The volumes whose per-class charge this quota may take but doctor cannot say: they name
    no class, and the per-class resources the quota limits are of the default class's name."""
    if not any(BY_CLASS in name for name in covered_for_claims(quota)):
        return []
    return [c.volume for c in claims if not c.storage_class and applies_to_claim(quota, c)]


class ClaimHolder(Struct, frozen=True):
    """A running pod of a training job and the claims its generic ephemeral volumes made. The
    ephemeral volume controller makes each claim owned by its pod (`handleVolume`: an
    OwnerReference to the pod, controller: true), so the garbage collector deletes the claims
    with the pod: they are held by its job, as the pod's own sizes are."""

    training_job: str
    """The training job (`Kind/name`) the pod belongs to."""
    claims: tuple[QuotaClaim, ...]


def _released_by_jobs(
    quota: Quota, shortfalls: Sequence[Shortfall], holders: Sequence[ClaimHolder]
) -> tuple[str, ...]:
    """The training jobs whose pods' claims, gone, would leave room for every shortfall; ()
    when they would not. Every claim resource, `count/persistentvolumeclaims` too, goes with
    the claim (a finished pod keeps its claims until deleted, so only running pods count)."""
    short = {s.resource for s in shortfalls}
    held = [
        (h.training_job, [claim_charge(c) for c in h.claims if applies_to_claim(quota, c)])
        for h in holders
    ]
    held = [(job, charges) for job, charges in held if any(short & c.keys() for c in charges)]
    if not held:
        return ()
    for shortfall in shortfalls:
        freed = sum(c.get(shortfall.resource, 0) for _, charges in held for c in charges)
        if shortfall.used - min(freed, shortfall.used) + shortfall.requested > shortfall.hard:
            return ()
    return tuple(sorted({job for job, _ in held}))


class ClaimVerdict(Struct, frozen=True):
    """A quota that refuses some of the claims, and how many of them it lets in."""

    verdict: QuotaVerdict
    claims: int
    """How many claims were judged together (one pod's, or the whole job's)."""
    made: int
    """Of those, how many the quota lets in, created one by one."""
    present: int = 0
    """Of those `claims`, how many a job under way already has, counted in `used`: the
    shortfalls charge only the rest."""


def claim_verdicts(
    quotas: Sequence[Quota],
    claims: Sequence[QuotaClaim],
    judged: Iterable[str] = (),
    present: int = 0,
    holders: Sequence[ClaimHolder] = (),
) -> list[ClaimVerdict]:
    """Every quota that would refuse some of `claims`, which all must be made for the work to
    start (one pod's claims, or every pod's of a job whose pods run only together), in the
    quotas' order. A covered resource the quota controller has not counted refuses every
    claim (`status unknown for quota`); else the claims' charges together against
    `hard - used`. `judged` names quotas already said for these claims (per pod set);
    `present`, the claims a job under way already has, in `used` and never made again;
    `holders`, running training jobs' pods' claims: where their end alone makes room, the
    verdict names those jobs to wait for."""
    skipped = set(judged)
    verdicts = []
    for quota in quotas:
        applied = [c for c in claims if applies_to_claim(quota, c)]
        if quota.name in skipped or not applied:
            continue
        uncounted = sorted(n for n in covered_for_claims(quota) if n not in quota.used)
        if uncounted:
            verdict = QuotaVerdict(quota.name, Refusal.UNCOUNTED, uncounted=tuple(uncounted))
            verdicts.append(ClaimVerdict(verdict, present + len(claims), present, present))
            continue
        charges = [claim_charge(c) for c in applied]
        total = total_charge(charges)
        shortfalls = tuple(
            Shortfall(name, total[name], quota.used[name], hard)
            for name, hard in sorted(quota.hard.items())
            if name in total and quota.used[name] + total[name] > hard
        )
        if shortfalls:
            verdict = QuotaVerdict(
                quota.name,
                Refusal.EXCEEDED,
                shortfalls=shortfalls,
                waiting_for=_released_by_jobs(quota, shortfalls, holders),
            )
            made = present + len(claims) - len(applied) + let_in(quota, charges)
            verdicts.append(ClaimVerdict(verdict, present + len(claims), made, present))
    return verdicts
