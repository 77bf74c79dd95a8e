"""LimitRanges' refusals of the training job's pods, as findings: the create's validation of a
limit a range's default filled in below the request (knowledge/default_limits.py), and
LimitRanger's own min, max and ratio (knowledge/stored_pod.py)."""

from collections.abc import Sequence

from msgspec.structs import replace

from truegreen.cluster import CantRead, Kind
from truegreen.doctor.checks.admission.added import added_names, operator_finding
from truegreen.doctor.checks.admission.words import (
    DEFAULT_LIMIT_BELOW_REQUEST,
    LIMIT_RANGE_REFUSED,
    NOUNS,
    SAY,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.default_limits import (
    DefaultBelowRequest,
    defaults_below_requests,
    invalid_message,
)
from truegreen.doctor.knowledge.stored_pod import (
    LimitRangeRefusal,
    Violation,
    limit_range_refusal,
    stored_spec,
)
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.quantity import MEMORY, QuantityError, format_amount, parse_quantity, scheduler_units


def _plain_quantity(resource: str, text: str) -> str:
    """`1.5 GiB memory`, `2 CPUs`, `8 nvidia.com/gpu` from a quantity as the plugin prints it."""
    amount = format_amount(resource, scheduler_units(resource, parse_quantity(text)))
    return f"{amount} {NOUNS[resource]}" if resource in (MEMORY, "ephemeral-storage") else amount


def _limit_words(v: Violation) -> str:
    """One LimitRanger violation in plain words, naming the limit and what breaks it."""
    noun = NOUNS.get(v.resource, v.resource)
    who, each = (
        (f"'{v.container}'", "each program")
        if v.scope == "Container"
        else ("each running copy of the job", "each copy")
    )
    allowed = v.allowed if v.bound == "ratio" else _plain_quantity(v.resource, v.allowed)
    if v.bound == "ratio":
        if not v.stated:
            return (
                f"{who} must state both the {noun} it asks for and the most it may use "
                f"(at most {allowed} times as much)"
            )
        return (
            f"{who} may use {float(v.asked):g} times the {noun} it asks for, more than "
            f"{allowed} times"
        )
    if not v.stated:
        need = "the most it may use" if v.bound == "max" else "how much it asks for"
        return f"{who} doesn't state {need} of {noun}, which {each} must here"
    asked = _plain_quantity(v.resource, v.asked)
    verb = "asks for" if v.stated == "request" else "may use up to"
    if v.bound == "max":
        return f"{who} {verb} {asked}, more than the {allowed} {each} may have"
    return f"{who} {verb} {asked}, less than the {allowed} {each} must have"


def _limit_range_finding(
    env: Environment, job: TrainingJob, refusal: LimitRangeRefusal, sets: list[str]
) -> Finding:
    first = refusal.violations[0]
    more = len({v.message for v in refusal.violations}) - 1
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        LIMIT_RANGE_REFUSED,
        details=[
            f"LimitRange {refusal.limit_range} refuses the pods of {job.ref} "
            f"({', '.join(sets)}): forbidden: {refusal.message}"
        ],
        objects=[f"LimitRange/{refusal.limit_range}", job.ref],
        limit=refusal.limit_range,
        problem=_limit_words(first) + (f", and {more} more" if more else ""),
        command=env.settings.kubectl.here("describe", "limitrange", refusal.limit_range),
    )


def _listed(resources: Sequence[str], amounts: Sequence[str]) -> str:
    """`4 CPUs and 16 GiB memory` from resources and their amounts as the server prints them."""
    return " and ".join(_plain_quantity(r, a) for r, a in zip(resources, amounts, strict=True))


def _default_below_finding(
    env: Environment, job: TrainingJob, found: Sequence[DefaultBelowRequest], sets: list[str]
) -> Finding:
    """The pods of `sets` refused as invalid: a range's default limit is below a request."""
    first = found[0].container
    own = [f for f in found if f.container == first]
    containers = list(dict.fromkeys(f.container for f in found))
    more = len(containers) - 1
    limit = own[0].limit_range
    resources = [f.resource for f in own]
    problem = (
        f"'{first}' asks for {_listed(resources, [f.request for f in own])} but states no most "
        f"it may use, and the environment's default sizes '{limit}' set that most to "
        f"{_listed(resources, [f.limit for f in own])}"
        + (f" (and {more} more program{'s' if more > 1 else ''})" if more else "")
    )
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        DEFAULT_LIMIT_BELOW_REQUEST,
        details=[
            f"the defaults of LimitRange {limit} make the pods of {job.ref} "
            f"({', '.join(sets)}) invalid: {invalid_message(found)}"
        ],
        objects=[f"LimitRange/{limit}", job.ref],
        problem=problem,
        containers=" and ".join(f"'{c}'" for c in containers),
        sizes=" and ".join(dict.fromkeys(NOUNS.get(f.resource, f.resource) for f in found)),
        limit=limit,
        command=env.settings.kubectl.here("describe", "limitrange", limit),
    )


def limit_range_findings(
    env: Environment, job: TrainingJob | None
) -> tuple[list[Finding], list[Finding]]:
    """The refusals of the job's pods that LimitRanges cause, as the API server stores the pods
    (defaulting and the ranges' defaults first): the validation of a request above a limit a
    range's default filled in, which runs first, else LimitRanger's own. A refused pod is
    never created, so the job never runs. (Refusals of the job's own settings, refusals of
    the init containers its controller adds.)"""
    if job is None:
        return [], []
    read = env.limit_ranges
    if isinstance(read, CantRead):
        return [SAY.cant_check(env, Kind.LIMIT_RANGE, read)], []
    added = added_names(job)
    invalid: dict[str, tuple[list[DefaultBelowRequest], list[str]]] = {}
    refused: dict[str, tuple[LimitRangeRefusal, list[str]]] = {}
    by_operator: dict[str, tuple[LimitRangeRefusal, list[str]]] = {}
    for pod_set in job.pod_sets:
        try:
            below = defaults_below_requests(pod_set.created_spec, read.items)
            spec = stored_spec(pod_set.created_spec, read.items, extended_tolerations=False)
            refusal = limit_range_refusal(spec, read.items)
        except QuantityError:
            continue  # the capacity check names a size that is not a quantity
        if below:
            # Validation refuses the pod before LimitRanger's own checks are reached.
            invalid.setdefault(invalid_message(below), (below, []))[1].append(pod_set.name)
            continue
        if refusal is None:
            continue
        for into, broken in (
            (refused, [v for v in refusal.violations if v.container not in added]),
            (by_operator, [v for v in refusal.violations if v.container in added]),
        ):
            if broken:
                part = LimitRangeRefusal(refusal.limit_range, tuple(broken))
                into.setdefault(part.message, (part, []))[1].append(pod_set.name)
    return [
        *(_default_below_finding(env, job, found, sets) for found, sets in invalid.values()),
        *(_limit_range_finding(env, job, r, sets) for r, sets in refused.values()),
    ], [_operator_limit_finding(env, job, r, sets) for r, sets in by_operator.values()]


def _operator_limit_finding(
    env: Environment, job: TrainingJob, refusal: LimitRangeRefusal, sets: Sequence[str]
) -> Finding:
    """A range's refusal of the init container the training operator adds to `sets`' pods."""
    first = refusal.violations[0]
    more = len({v.message for v in refusal.violations}) - 1
    finding = operator_finding(
        env,
        job,
        sets,
        f"the environment's size limits '{refusal.limit_range}'",
        _limit_words(first) + (f", and {more} more" if more else ""),
        [
            f"LimitRange {refusal.limit_range} refuses the pods of {job.ref} "
            f"({', '.join(sets)}): forbidden: {refusal.message}"
        ],
        fits="fits the size limits",
        relax=f"change '{refusal.limit_range}'",
    )
    return replace(finding, objects=[f"LimitRange/{refusal.limit_range}", *finding.objects])
