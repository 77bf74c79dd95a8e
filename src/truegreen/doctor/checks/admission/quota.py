"""ResourceQuota admission, as pure functions: would a new training pod (or Job) be refused?

Ground truth, kubernetes/kubernetes:
- plugin/pkg/admission/resourcequota/controller.go (checkRequest): a quota matters when it
  covers one of the object's resources and every scope matches; each covered resource the
  container must state (Constraints), a usage the quota controller has not counted yet, and
  used + requested > hard, are refusals.
- staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go (checkQuotas):
  each create is admitted on its own and charged as it is let in (`quotas = newQuotas` after
  each checkRequest, then UpdateQuotaStatus), so a job's pods, created one by one, use the room
  up between them: a job whose pods run only together needs room for all of them at once.
- pkg/quota/v1/evaluator/core/pods.go: what one pod is charged (podComputeUsageHelper,
  PodUsageFunc) and how a pod matches a scope (podMatchesScopeFunc).
- staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go: any other kind is charged
  `count/<resource>.<group>` of its own resource and matches no scope (a Job:
  `count/jobs.batch`, a PyTorchJob: `count/pytorchjobs.kubeflow.org`).
"""

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.fit import pod_requests
from truegreen.quantity import CPU, MEMORY, Resources, parse_quantity, scheduler_units

POD_COUNT = "pods"
JOB_COUNT = "count/jobs.batch"
_POD_OBJECTS = "count/pods"
_EPHEMERAL = "ephemeral-storage"
_COMPUTE = (CPU, MEMORY, _EPHEMERAL)
# podResources in pods.go: what the pod evaluator covers by name.
_POD_RESOURCES = frozenset(
    {_POD_OBJECTS, POD_COUNT}
    | set(_COMPUTE)
    | {f"requests.{r}" for r in _COMPUTE}
    | {f"limits.{r}" for r in _COMPUTE}
)
# validationSet in pods.go: a quota on these makes every container state them.
_MUST_BE_STATED = {
    CPU: ("requests", CPU),
    MEMORY: ("requests", MEMORY),
    f"requests.{CPU}": ("requests", CPU),
    f"requests.{MEMORY}": ("requests", MEMORY),
    f"limits.{CPU}": ("limits", CPU),
    f"limits.{MEMORY}": ("limits", MEMORY),
}
_HUGEPAGES = "hugepages-"
# An object count outlives the work: a finished pod or Job counts until it is deleted.
_COUNT_PREFIX = "count/"


def amount(resource: str, text: object) -> int:
    """A quota amount in the units doctor compares: millicores for CPU, whole units otherwise."""
    unit = resource.removeprefix("requests.").removeprefix("limits.")
    return scheduler_units(unit, parse_quantity(str(text)))


def _extended(name: str) -> bool:
    """An extended resource (`nvidia.com/gpu`): not native, so quota charges `requests.<name>`."""
    return "/" in name and "kubernetes.io/" not in name


class QuotaPod(Struct, frozen=True):
    """What the quota plugin looks at in a pod about to be created."""

    requests: Resources
    limits: Resources
    stated: tuple[tuple[str, frozenset[tuple[str, str]]], ...] = ()
    """Per container: which (requests|limits, cpu|memory) it states, LimitRange defaults in."""
    terminating: bool = False
    """spec.activeDeadlineSeconds >= 0: the Terminating scope."""
    priority_class: str = ""
    cross_namespace_affinity: bool = False
    pod_level: bool = False
    """Pod-level requests or limits name cpu or memory (IsPodLevelResourcesSet): the quota
    plugin then asks the containers for no sizes."""

    @property
    def best_effort(self) -> bool:
        """No CPU or memory requested or limited anywhere: the BestEffort quality of service."""
        return not {CPU, MEMORY} & (self.requests.names | self.limits.names)


def pod_limits(spec: Mapping[str, Any]) -> Resources:
    """A pod's limits as component-helpers PodLimits sums them: containers and sidecars, the
    peak of each init container, pod-level limits replacing, overhead on what is limited."""
    total = Resources()
    sidecars = Resources()
    init_peak = Resources()
    for container in o.init_containers(spec):
        limits = _limits(container)
        if o.is_sidecar(container):
            total += limits
            sidecars += limits
            init_peak = init_peak.max_with(sidecars)
        else:
            init_peak = init_peak.max_with(limits + sidecars)
    for container in o.containers(spec):
        total += _limits(container)
    total = total.max_with(init_peak)
    pod_level = Resources.parse(
        {
            name: value
            for name, value in o.mapping(o.mapping(spec.get("resources")).get("limits")).items()
            if name in (CPU, MEMORY)
        }
    )
    total = total.replaced(pod_level, pod_level.names)
    overhead = Resources.parse(o.mapping(spec.get("overhead")))
    return total + Resources.of({n: overhead.get(n) for n in total.names})


def _limits(container: Mapping[str, Any]) -> Resources:
    return Resources.parse(o.mapping(o.mapping(container.get("resources")).get("limits")))


def _affinity_terms(spec: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    affinity = o.mapping(spec.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = o.mapping(affinity.get(kind))
        yield from map(
            o.mapping, o.sequence(rules.get("requiredDuringSchedulingIgnoredDuringExecution"))
        )
        for weighted in o.sequence(rules.get("preferredDuringSchedulingIgnoredDuringExecution")):
            yield o.mapping(o.mapping(weighted).get("podAffinityTerm"))


def _stated(container: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    """The cpu/memory sizes a container states; a limit states the request too (the API
    defaults a missing request to the limit: pkg/apis/core/v1/defaults.go SetDefaults_Pod)."""
    resources = o.mapping(container.get("resources"))
    limits = o.mapping(resources.get("limits"))
    requests = {**limits, **o.mapping(resources.get("requests"))}
    return frozenset(
        (part, name)
        for part, given in (("requests", requests), ("limits", limits))
        for name in (CPU, MEMORY)
        if name in given
    )


def _pod_level_set(spec: Mapping[str, Any]) -> bool:
    """component-helpers resource/helpers.go IsPodLevelResourcesSet: pod-level requests or
    limits name a resource pod-level resources support (cpu, memory)."""
    resources = o.mapping(spec.get("resources"))
    named = {*o.mapping(resources.get("requests")), *o.mapping(resources.get("limits"))}
    return bool(named & {CPU, MEMORY})


def quota_pod(spec: Mapping[str, Any], *, requests: Resources | None = None) -> QuotaPod:
    """The quota view of a pod spec (LimitRange defaults already applied); `requests`, when
    given, replaces what the containers request (`--job-requests`). QuantityError on a bad
    amount."""
    stated = tuple(
        (str(container.get("name")), _stated(container))
        for container in [*o.init_containers(spec), *o.containers(spec)]
    )
    return QuotaPod(
        requests=pod_requests(spec) if requests is None else requests,
        limits=pod_limits(spec),
        stated=stated,
        terminating="activeDeadlineSeconds" in spec
        and o.integer(spec["activeDeadlineSeconds"]) >= 0,
        priority_class=str(spec.get("priorityClassName") or ""),
        cross_namespace_affinity=any(
            # crossNamespacePodAffinityTerm: `namespaceSelector: null` is nil, `{}` is not.
            term.get("namespaces") or term.get("namespaceSelector") is not None
            for term in _affinity_terms(spec)
        ),
        pod_level=_pod_level_set(spec),
    )


def charge(pod: QuotaPod) -> dict[str, int]:
    """What an unfinished pod counts against a quota (podComputeUsageHelper, PodUsageFunc)."""
    charged = {_POD_OBJECTS: 1, POD_COUNT: 1}
    for name in _COMPUTE:
        if name in pod.requests.names:
            charged[name] = charged[f"requests.{name}"] = pod.requests.get(name)
        if name in pod.limits.names:
            charged[f"limits.{name}"] = pod.limits.get(name)
    for name in pod.requests.names:
        if name.startswith(_HUGEPAGES):
            charged[name] = pod.requests.get(name)
        if name.startswith(_HUGEPAGES) or _extended(name):
            charged[f"requests.{name}"] = pod.requests.get(name)
    return charged


class ScopeTerm(Struct, frozen=True):
    """One scope of a quota: `spec.scopes` entries are `Exists` terms."""

    scope: str
    operator: str = "Exists"
    values: tuple[str, ...] = ()


class Quota(Struct, frozen=True):
    """A ResourceQuota as admission reads it: status.hard, status.used and the scopes."""

    name: str
    hard: Mapping[str, int]
    used: Mapping[str, int]
    scopes: tuple[ScopeTerm, ...] = ()


def parse_quota(obj: KubeObject) -> Quota:
    """The quota view of a ResourceQuota; QuantityError on an amount that is not a quantity."""
    spec = o.mapping(obj.get("spec"))
    status = o.mapping(obj.get("status"))
    scopes = [ScopeTerm(str(s)) for s in o.sequence(spec.get("scopes"))]
    for term in o.sequence(o.mapping(spec.get("scopeSelector")).get("matchExpressions")):
        entry = o.mapping(term)
        scopes.append(
            ScopeTerm(
                str(entry.get("scopeName")),
                str(entry.get("operator")),
                tuple(str(v) for v in o.sequence(entry.get("values"))),
            )
        )
    return Quota(
        o.name_of(obj),
        {str(k): amount(str(k), v) for k, v in o.mapping(status.get("hard")).items()},
        {str(k): amount(str(k), v) for k, v in o.mapping(status.get("used")).items()},
        tuple(scopes),
    )


def _term_matches(term: ScopeTerm, pod: QuotaPod) -> bool:
    """podMatchesScopeFunc: one scope against a pod."""
    if term.scope == "Terminating":
        return pod.terminating
    if term.scope == "NotTerminating":
        return not pod.terminating
    if term.scope == "BestEffort":
        return pod.best_effort
    if term.scope == "NotBestEffort":
        return not pod.best_effort
    if term.scope == "CrossNamespacePodAffinity":
        return pod.cross_namespace_affinity
    if term.scope == "PriorityClass":
        # A label selector over {"PriorityClass": <class>}, empty when the pod names none.
        if term.operator == "Exists":
            return bool(pod.priority_class)
        if term.operator == "DoesNotExist":
            return not pod.priority_class
        inside = bool(pod.priority_class) and pod.priority_class in term.values
        return inside if term.operator == "In" else term.operator == "NotIn" and not inside
    return False


def covered_for_pods(quota: Quota) -> frozenset[str]:
    """The quota's resources a pod is charged for (podEvaluator.MatchingResources)."""
    return frozenset(
        name
        for name in quota.hard
        if name in _POD_RESOURCES
        or name.startswith((_HUGEPAGES, f"requests.{_HUGEPAGES}"))
        or (name.startswith("requests.") and _extended(name.removeprefix("requests.")))
    )


def applies_to_pod(quota: Quota, pod: QuotaPod) -> bool:
    """generic.Matches: the quota covers a pod resource and every scope matches the pod."""
    return bool(covered_for_pods(quota)) and all(_term_matches(t, pod) for t in quota.scopes)


class Shortfall(Struct, frozen=True):
    """One resource a quota cannot give: the request would take used past hard."""

    resource: str
    requested: int
    used: int
    hard: int


class Refusal(StrEnum):
    """Why the quota plugin would refuse the create."""

    EXCEEDED = "exceeded"
    """used + requested > hard for some resource."""
    UNSTATED = "unstated"
    """A container does not state a size the quota limits (`must specify`)."""
    UNCOUNTED = "uncounted"
    """The quota controller has not counted a covered resource yet (`status unknown`)."""


class Holder(Struct, frozen=True):
    """A pod of the namespace that counts against quotas now."""

    owner: str
    """Plain words for what runs it: `the training job 'run-7'`, `'mysql-0'`; a finished
    pod's own name (`'train-001-s0'`), the thing to delete."""
    training_job: str | None
    """The training job it belongs to (`Kind/name`: `PyTorchJob/bert`), if it is one."""
    pod: QuotaPod
    finished: bool = False
    """Succeeded or Failed: it holds only its object count (`count/pods`) until deleted."""


def counted(holder: Holder) -> dict[str, int]:
    """What a pod of the namespace counts against a quota (PodUsageFunc: the object count
    always, "count/pods tracks all pods independent of state"; everything else, `pods`
    included, only while the pod has not finished, QuotaV1Pod)."""
    return {_POD_OBJECTS: 1} if holder.finished else charge(holder.pod)


class QuotaVerdict(Struct, frozen=True):
    """One quota that refuses the create, and why."""

    quota: str
    refusal: Refusal
    shortfalls: tuple[Shortfall, ...] = ()
    unstated: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(resource, containers that do not state it), for `unstated`."""
    uncounted: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    """What holds the exceeded resources now and has not finished, largest first."""
    finished: tuple[str, ...] = ()
    """The finished pods that hold the exceeded object count: only deleting them frees it."""
    waiting_for: tuple[str, ...] = ()
    """The running training jobs (`Kind/name`) whose end would make room; empty when none
    would."""
    pods: int = 0
    """For the whole of a job whose pods run only together: how many pods it creates (its
    charge, in `shortfalls`, is theirs together); 0 for one pod's refusal."""
    admitted: int = 0
    """Of those `pods`, how many the quota lets in, created one by one in their sets' order."""
    present: int = 0
    """Of those `pods`, how many a job under way already has, let in and counted in `used`:
    `shortfalls` charge only the rest."""


def _shortfalls(quota: Quota, charged: Mapping[str, int]) -> list[Shortfall]:
    """quota.LessThanOrEqual(used + requested, hard) over the resources the request names."""
    return [
        Shortfall(name, charged[name], quota.used[name], hard)
        for name, hard in sorted(quota.hard.items())
        if name in charged and quota.used[name] + charged[name] > hard
    ]


def _unstated(quota: Quota, pod: QuotaPod) -> list[tuple[str, tuple[str, ...]]]:
    """Constraints: each quota-limited cpu/memory size that some container does not state; none
    asked for when pod-level resources are set (the PodLevelResources gate, beta and on by
    default since 1.34, is taken as on, as for the pod's charge)."""
    if pod.pod_level:
        return []
    missing = []
    for resource in sorted(covered_for_pods(quota) & _MUST_BE_STATED.keys()):
        needed = _MUST_BE_STATED[resource]
        names = tuple(name for name, stated in pod.stated if needed not in stated)
        if names:
            missing.append((resource, names))
    return missing


def _holding(
    quota: Quota, holders: Sequence[Holder], shortfalls: Sequence[Shortfall]
) -> list[tuple[Holder, int]]:
    """The holders this quota counts, with how much of the exceeded resources each holds."""
    held = []
    for holder in holders:
        if all(_term_matches(t, holder.pod) for t in quota.scopes):
            charged = counted(holder)
            share = sum(charged.get(s.resource, 0) for s in shortfalls)
            if share:
                held.append((holder, share))
    return held


def pod_verdicts(
    quotas: Sequence[Quota], pod: QuotaPod, holders: Sequence[Holder] = ()
) -> list[QuotaVerdict]:
    """Every quota that would refuse `pod`, in the quotas' order.

    Where the only obstacle is what running training job pods hold (compute and `pods`, never
    an object count, which a finished pod keeps), the verdict names those jobs to wait for.
    """
    verdicts = []
    charged = charge(pod)
    for quota in quotas:
        if not applies_to_pod(quota, pod):
            continue
        unstated = _unstated(quota, pod)
        if unstated:
            verdicts.append(QuotaVerdict(quota.name, Refusal.UNSTATED, unstated=tuple(unstated)))
            continue
        uncounted = sorted(n for n in covered_for_pods(quota) if n not in quota.used)
        if uncounted:
            verdicts.append(QuotaVerdict(quota.name, Refusal.UNCOUNTED, uncounted=tuple(uncounted)))
            continue
        shortfalls = _shortfalls(quota, charged)
        if shortfalls:
            verdicts.append(_exceeded(quota, shortfalls, holders))
    return verdicts


def _exceeded(
    quota: Quota,
    shortfalls: Sequence[Shortfall],
    holders: Sequence[Holder],
    pods: int = 0,
    admitted: int = 0,
    present: int = 0,
) -> QuotaVerdict:
    """The refusal for `shortfalls`, naming what holds them, largest first, and the running
    training jobs whose end would make room."""
    held = _holding(quota, holders, shortfalls)
    largest = [h for h, _ in sorted(held, key=lambda pair: -pair[1])]
    return QuotaVerdict(
        quota.name,
        Refusal.EXCEEDED,
        shortfalls=tuple(shortfalls),
        users=tuple(dict.fromkeys(h.owner for h in largest if not h.finished)),
        finished=tuple(h.owner for h in largest if h.finished),
        waiting_for=_released_by_jobs(shortfalls, held),
        pods=pods,
        admitted=admitted,
        present=present,
    )


def total_charge(charges: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The sum of several creates' charges, per resource."""
    total: dict[str, int] = {}
    for charged in charges:
        for name, value in charged.items():
            total[name] = total.get(name, 0) + value
    return total


def let_in(quota: Quota, charges: Sequence[Mapping[str, int]]) -> int:
    """How many of the creates (pods, or the claims their volumes make) charged `charges`,
    made in that order, the quota lets in: one let in is charged at once, a refused one is
    charged nothing (checkQuotas)."""
    used = dict(quota.used)
    admitted = 0
    for charged in charges:
        covered = [name for name in charged if name in quota.hard]
        if all(used[name] + charged[name] <= quota.hard[name] for name in covered):
            admitted += 1
            for name in covered:
                used[name] += charged[name]
    return admitted


def gang_verdicts(
    quotas: Sequence[Quota],
    pods: Sequence[tuple[QuotaPod, int]],
    holders: Sequence[Holder] = (),
    judged: Iterable[str] = (),
    present: int = 0,
) -> list[QuotaVerdict]:
    """Every quota that would refuse some of the pods of a job whose pods run only together
    (`pods`: each pod set's pod and how many of it are still to be created), though it lets
    each pod in alone: the job's pods are created one by one and each is charged as it is let
    in, so the job needs room for all of them. `present` are those a job under way already has:
    the quota counts them in `used` and they are not created again. `judged` names every quota
    pod_verdicts refuses some pod set by (a size not stated, a count missing, no room for even
    one pod): those are said per pod set."""
    skipped = set(judged)
    verdicts = []
    for quota in quotas:
        if quota.name in skipped:
            continue
        charges = [
            charge(pod) for pod, count in pods if applies_to_pod(quota, pod) for _ in range(count)
        ]
        shortfalls = _shortfalls(quota, total_charge(charges))
        if not shortfalls:
            continue
        total = sum(count for _, count in pods)
        # The pods the quota does not apply to (its scopes) it lets in without a charge.
        admitted = present + total - len(charges) + let_in(quota, charges)
        verdicts.append(_exceeded(quota, shortfalls, holders, present + total, admitted, present))
    return verdicts


def _released_by_jobs(
    shortfalls: Sequence[Shortfall], held: Sequence[tuple[Holder, int]]
) -> tuple[str, ...]:
    """The training jobs whose end would leave room for every shortfall; () if that is not so."""
    jobs = [h for h, _ in held if h.training_job is not None]
    if not jobs or any(s.resource.startswith(_COUNT_PREFIX) for s in shortfalls):
        return ()
    for shortfall in shortfalls:
        freed = sum(counted(h).get(shortfall.resource, 0) for h in jobs)
        if shortfall.used - freed + shortfall.requested > shortfall.hard:
            return ()
    return tuple(sorted({str(h.training_job) for h in jobs}))


def object_count(group: str, plural: str) -> str:
    """The quota resource an object of `plural.group` is counted in (generic/evaluator.go
    ObjectCountQuotaResourceNameFor): `count/<resource>.<group>`, `count/<resource>` in core."""
    return f"{_COUNT_PREFIX}{plural}.{group}" if group else f"{_COUNT_PREFIX}{plural}"


def job_verdicts(quotas: Sequence[Quota], count: str) -> list[QuotaVerdict]:
    """Every quota that would refuse creating one more training job object, counted in `count`
    (`count/jobs.batch` for a Job, `count/pytorchjobs.kubeflow.org` for a PyTorchJob): the
    quota plugin picks the evaluator by the request's resource (controller.go checkRequest),
    and the object count evaluator matches no scope, so only unscoped quotas count."""
    verdicts = []
    for quota in quotas:
        if count not in quota.hard or quota.scopes:
            continue
        if count not in quota.used:
            verdicts.append(QuotaVerdict(quota.name, Refusal.UNCOUNTED, uncounted=(count,)))
            continue
        shortfalls = _shortfalls(quota, {count: 1})
        if shortfalls:
            verdicts.append(
                QuotaVerdict(quota.name, Refusal.EXCEEDED, shortfalls=tuple(shortfalls))
            )
    return verdicts
