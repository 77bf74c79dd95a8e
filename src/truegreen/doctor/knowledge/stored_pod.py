"""The pod as the API server stores it, in the order kube-apiserver changes and checks it.

A training job's controller posts pods made from its template; what the scheduler later places
is the pod the API server stored, and that can differ from the template as written:
1. Defaulting, when the request is decoded (pkg/apis/core/v1/defaults.go `SetDefaults_Pod`): a
   container's (and init container's) limits become its requests where it states none, and
   pod-level requests are filled from the containers or the pod-level limits
   (`defaultPodResources`). This runs before any admission plugin.
2. LimitRanger, mutating (plugin/pkg/admission/limitranger/admission.go `PodMutateLimitFunc`):
   each LimitRange in turn fills the requests and limits a container or init container still
   lacks from its Container items' `defaultRequest` and `default`, so the first range to default
   a resource wins. An item's own defaults are as `SetDefaults_LimitRangeItem` stores them
   (`default` from `max`, `defaultRequest` from `default`, then from `min`).
3. Priority (plugin/pkg/admission/priority/admission.go): the pod's priority from its
   PriorityClass, else the `globalDefault` class, else 0 (see `job_priority`).
4. ExtendedResourceToleration (plugin/pkg/admission/extendedresourcetoleration/admission.go):
   for every extended resource the pod requests, a toleration {key: <name>, operator: Exists,
   effect: NoSchedule}, where the cluster runs the plugin (see `extended_tolerations`).
5. RuntimeClass (plugin/pkg/admission/runtimeclass/admission.go): a pod naming
   `runtimeClassName` is refused when that RuntimeClass does not exist ("pod rejected:
   RuntimeClass %q not found"); else it takes the class's `overhead.podFixed` as its overhead
   and the class's `scheduling`: its nodeSelector merged into the pod's (a key the pod sets to
   another value is refused: "conflict: runtimeClass.scheduling.nodeSelector[k] = v;
   pod.spec.nodeSelector[k] = w") and its tolerations added (`with_runtime_class`).
6. LimitRanger, validating (`PodValidateLimitFunc`): `min`, `max` and `maxLimitRequestRatio`
   per Container (containers and init containers) and per Pod (the pod's requests and limits as
   component-helpers sums them); the first LimitRange with a violation refuses the pod with
   all of that range's violations (`limit_range_refusal`).
Between the mutating steps and 6, the create's validation refuses a request above a limit a
range's `default` filled in (doctor/knowledge/default_limits.py). ResourceQuota comes after
(doctor/checks/admission/quota.py) and sees the same stored pod.

Everything here is pure: a function of the objects read, unit-tested value by value.

One module past 600 lines: the API server's storing of a pod is one pipeline (defaulting,
LimitRange, admission mutations, the RuntimeClass, the extended-resource toleration), kept in
the order the server applies it.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.container_resources import is_extended
from truegreen.doctor.knowledge.fit import pod_requests
from truegreen.doctor.knowledge.last_answer import LastAnswer
from truegreen.quantity import CPU, MEMORY, QuantityError, parse_quantity

_POD_LEVEL = (CPU, MEMORY)
"""The resources pod-level requests and limits may name (component-helpers
IsSupportedPodLevelResource)."""
_MILLI = Decimal("0.001")


# -- quantities as the plugin prints them ----------------------------------------------------------


class Form(StrEnum):
    """How a quantity was written, which decides how resource.Quantity prints it."""

    BINARY = "BinarySI"
    DECIMAL = "DecimalSI"
    EXPONENT = "DecimalExponent"


class Amount(Struct, frozen=True):
    """A quantity as the API server holds it: its value, rounded up to thousandths as
    SetDefaults_ResourceList stores it, and the form it was written in."""

    value: Decimal
    form: Form

    @classmethod
    def parse(cls, text: object) -> "Amount":
        """`1536Mi`, `500m`, `1e3`; QuantityError when it is not a quantity."""
        written = str(text).strip()
        value = parse_quantity(written)
        form = (
            Form.BINARY
            if written.endswith("i")
            else Form.EXPONENT
            if "e" in written.lower() and not written[-1].isalpha()
            else Form.DECIMAL
        )
        return cls(_milli_ceiling(value), form)

    def __add__(self, other: "Amount") -> "Amount":
        # Quantity.Add keeps the form of the quantity added to.
        return Amount(self.value + other.value, self.form)

    def __str__(self) -> str:
        return canonical(self.value, self.form)


def _milli_ceiling(value: Decimal) -> Decimal:
    return Decimal(math.ceil(value * 1000)) * _MILLI


_DECIMAL_SUFFIXES = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def canonical(value: Decimal, form: Form) -> str:
    """resource.Quantity's String(): CanonicalizeBytes (apimachinery/pkg/api/resource/
    quantity.go). Binary amounts are whole multiples of the largest power of 1024 that divides
    them (`1536Mi`), unless below 1024 or fractional; decimal ones the mantissa with every
    factor of ten removed and the exponent brought down to a multiple of three (`500m`, `2`,
    `1500`, `1k`)."""
    if value == 0:
        return "0"
    if form is Form.BINARY and abs(value) >= 1024 and value == value.to_integral_value():
        number, power = int(value), 0
        while number % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
            number //= 1024
            power += 1
        return f"{number}{_BINARY_SUFFIXES[power]}"
    sign, digits, exponent = value.normalize().as_tuple()
    assert isinstance(exponent, int)  # a finite quantity
    mantissa = int("".join(map(str, digits)))
    shift = exponent % 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    text = f"{'-' if sign else ''}{mantissa}"
    if form is Form.EXPONENT:
        return text + (f"e{exponent}" if exponent else "")
    suffix = _DECIMAL_SUFFIXES.get(exponent)
    return text + suffix if suffix is not None else f"{text}e{exponent}"


# -- 1. defaulting ---------------------------------------------------------------------------------


def _resources(container: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A container's (requests, limits), copied."""
    resources = o.mapping(container.get("resources"))
    return dict(o.mapping(resources.get("requests"))), dict(o.mapping(resources.get("limits")))


def _with_resources(
    container: Mapping[str, Any], requests: Mapping[str, Any], limits: Mapping[str, Any]
) -> dict[str, Any]:
    resources = dict(o.mapping(container.get("resources")))
    resources["requests"], resources["limits"] = dict(requests), dict(limits)
    return {**container, "resources": resources}


def _requests_from_limits(container: Mapping[str, Any]) -> dict[str, Any]:
    requests, limits = _resources(container)
    for name, value in limits.items():
        requests.setdefault(name, value)
    return _with_resources(container, requests, limits)


def _amount_text(resource: str, amount: int) -> str:
    """A scheduler amount written as a quantity: millicores for CPU, whole units otherwise."""
    return f"{amount}m" if resource == CPU else str(amount)


def defaulted(spec: Mapping[str, Any]) -> dict[str, Any]:
    """SetDefaults_Pod: requests from limits in every container and init container; pod-level
    requests, when pod-level limits are set, from the containers' requests of that resource,
    else from the pod-level limit (defaultPodResources, KEP-2837)."""
    stored = {
        **spec,
        "containers": [_requests_from_limits(c) for c in o.containers(spec)],
        "initContainers": [_requests_from_limits(c) for c in o.init_containers(spec)],
    }
    pod_level = o.mapping(spec.get("resources"))
    limits = {k: v for k, v in o.mapping(pod_level.get("limits")).items() if k in _POD_LEVEL}
    if not limits:
        return stored
    requests = dict(o.mapping(pod_level.get("requests")))
    try:
        from_containers = pod_requests({**stored, "resources": {}, "overhead": {}})
    except QuantityError:
        return stored  # an amount that is not a quantity: the capacity check names it
    for name in _POD_LEVEL:
        if name in requests:
            continue
        if from_containers.get(name):
            requests[name] = _amount_text(name, from_containers.get(name))
        elif name in limits:
            requests[name] = limits[name]
    stored["resources"] = {**pod_level, "requests": requests}
    return stored


# -- 2. LimitRanger's defaults ---------------------------------------------------------------------


class LimitItem(Struct, frozen=True):
    """One item of a LimitRange, as the API server stores it."""

    type: str
    """`Container` or `Pod` (a `PersistentVolumeClaim` item does not touch pods)."""
    max: Mapping[str, Any]
    min: Mapping[str, Any]
    default: Mapping[str, Any]
    default_request: Mapping[str, Any]
    max_ratio: Mapping[str, Any]


def limit_items(limit_range: KubeObject) -> list[LimitItem]:
    """A LimitRange's items, a Container item's defaults filled as SetDefaults_LimitRangeItem
    stores them: `default` from `max`, then `defaultRequest` from `default`, then from `min`."""
    items = []
    for raw in o.sequence(o.mapping(limit_range.get("spec")).get("limits")):
        item = o.mapping(raw)
        kind = str(item.get("type") or "")
        maximum, minimum = o.mapping(item.get("max")), o.mapping(item.get("min"))
        default = dict(o.mapping(item.get("default")))
        default_request = dict(o.mapping(item.get("defaultRequest")))
        if kind == "Container":
            for source, target in ((maximum, default), (default, default_request)):
                for name, value in source.items():
                    target.setdefault(name, value)
            for name, value in minimum.items():
                default_request.setdefault(name, value)
        items.append(
            LimitItem(
                kind,
                maximum,
                minimum,
                default,
                default_request,
                o.mapping(item.get("maxLimitRequestRatio")),
            )
        )
    return items


def with_limit_range_defaults(
    spec: Mapping[str, Any], limit_ranges: Iterable[KubeObject]
) -> dict[str, Any]:
    """LimitRanger's mutation: each range in turn (defaultContainerResourceRequirements, then
    mergeContainerResources on containers and init containers) fills what is still missing."""
    containers = [dict(c) for c in o.containers(spec)]
    init_containers = [dict(c) for c in o.init_containers(spec)]
    for limit_range in limit_ranges:
        default: dict[str, Any] = {}
        default_request: dict[str, Any] = {}
        for item in limit_items(limit_range):
            if item.type == "Container":
                # Within one range a later Container item overwrites an earlier one's default.
                default.update(item.default)
                default_request.update(item.default_request)
        for group in (containers, init_containers):
            for index, container in enumerate(group):
                requests, limits = _resources(container)
                limits.update((k, v) for k, v in default.items() if k not in limits)
                requests.update((k, v) for k, v in default_request.items() if k not in requests)
                group[index] = _with_resources(container, requests, limits)
    return {**spec, "containers": containers, "initContainers": init_containers}


# -- 4. ExtendedResourceToleration -----------------------------------------------------------------


def extended_requests(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The extended resources any container or init container requests, sorted (the plugin
    looks at requests, after defaulting has copied limits into them)."""
    names: set[str] = set()
    for container in [*o.containers(spec), *o.init_containers(spec)]:
        requests, _ = _resources(container)
        names.update(name for name in requests if is_extended(str(name)))
    return tuple(sorted(names))


def extended_toleration(resource: str) -> dict[str, str]:
    """The toleration the plugin adds for `resource`."""
    return {"key": resource, "operator": "Exists", "effect": "NoSchedule"}


def _same_toleration(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    # core Toleration.MatchToleration: key, operator, value and effect are equal.
    return all(
        (a.get(field) or default) == (b.get(field) or default)
        for field, default in (("key", ""), ("operator", "Equal"), ("value", ""), ("effect", ""))
    )


def with_extended_tolerations(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The plugin's mutation: a toleration per extended resource requested, unless the pod
    states that very toleration already (helper AddOrUpdateTolerationInPod)."""
    tolerations = [dict(o.mapping(t)) for t in o.sequence(spec.get("tolerations"))]
    for resource in extended_requests(spec):
        added = extended_toleration(resource)
        if not any(_same_toleration(added, t) for t in tolerations):
            tolerations.append(added)
    return {**spec, "tolerations": tolerations}


def added_tolerations(sent: Mapping[str, Any], stored: Mapping[str, Any]) -> tuple[str, ...]:
    """The extended resources `sent` requests for which the server's `stored` pod carries the
    plugin's toleration and `sent` did not: what the cluster added."""
    stated = [o.mapping(t) for t in o.sequence(sent.get("tolerations"))]
    kept = [o.mapping(t) for t in o.sequence(stored.get("tolerations"))]
    return tuple(
        resource
        for resource in extended_requests(defaulted(sent))
        if not any(_same_toleration(extended_toleration(resource), t) for t in stated)
        and any(_same_toleration(extended_toleration(resource), t) for t in kept)
    )


# -- the whole of it -------------------------------------------------------------------------------


class SelectorConflict(Struct, frozen=True):
    """A nodeSelector key the pod sets to another value than its RuntimeClass does."""

    key: str
    wanted: str
    """The RuntimeClass's value."""
    stated: str
    """The pod's value."""

    @property
    def message(self) -> str:
        """The plugin's refusal, in its words (`setScheduling`)."""
        return (
            f"conflict: runtimeClass.scheduling.nodeSelector[{self.key}] = {self.wanted}; "
            f"pod.spec.nodeSelector[{self.key}] = {self.stated}"
        )


def runtime_class_conflict(
    spec: Mapping[str, Any], runtime_class: KubeObject
) -> SelectorConflict | None:
    """The first nodeSelector key the pod sets to another value than its RuntimeClass, which
    the plugin refuses; None when none."""
    wanted = o.mapping(o.mapping(runtime_class.get("scheduling")).get("nodeSelector"))
    stated = o.mapping(spec.get("nodeSelector"))
    for key, value in wanted.items():
        if key in stated and stated[key] != value:
            return SelectorConflict(str(key), str(value), str(stated[key]))
    return None


def with_runtime_class(spec: Mapping[str, Any], runtime_class: KubeObject) -> dict[str, Any]:
    """The plugin's mutation: the class's fixed overhead, its nodeSelector merged in and its
    tolerations added where the pod does not state them already (tolerations
    MergeTolerations)."""
    stored = dict(spec)
    overhead = o.mapping(o.mapping(runtime_class.get("overhead")).get("podFixed"))
    if overhead:
        stored["overhead"] = dict(overhead)
    scheduling = o.mapping(runtime_class.get("scheduling"))
    selector = o.mapping(scheduling.get("nodeSelector"))
    if selector:
        stored["nodeSelector"] = {**o.mapping(spec.get("nodeSelector")), **selector}
    tolerations = [dict(o.mapping(t)) for t in o.sequence(spec.get("tolerations"))]
    for added in o.sequence(scheduling.get("tolerations")):
        if not any(_same_toleration(o.mapping(added), t) for t in tolerations):
            tolerations.append(dict(o.mapping(added)))
    if tolerations:
        stored["tolerations"] = tolerations
    return stored


def stored_spec(
    spec: Mapping[str, Any],
    limit_ranges: Iterable[KubeObject],
    *,
    extended_tolerations: bool,
    runtime_class: KubeObject | None = None,
) -> dict[str, Any]:
    """The pod spec the API server stores for `spec`: defaulting, LimitRange defaults, the
    RuntimeClass it names (when read), and the extended resource tolerations when the cluster
    adds them."""
    stored = with_limit_range_defaults(defaulted(spec), limit_ranges)
    if runtime_class is not None:
        stored = with_runtime_class(stored, runtime_class)
    return with_extended_tolerations(stored) if extended_tolerations else stored


# -- 5. LimitRanger's refusals ---------------------------------------------------------------------


class Violation(Struct, frozen=True):
    """One limit a stored pod breaks, in the plugin's own words and in parts."""

    scope: str
    """`Container` (each container and init container) or `Pod` (the pod's sums)."""
    resource: str
    bound: str
    """`min`, `max` or `ratio` (maxLimitRequestRatio)."""
    allowed: str
    """The limit as the plugin prints it (`1Gi`)."""
    stated: str
    """What of the pod breaks it: `limit`, `request`, `ratio`, or "" when it states none."""
    asked: str
    """What the pod states (`1536Mi`, a ratio `4.000000`), "" when it states nothing."""
    message: str
    """The plugin's sentence (`maximum memory usage per Container is 1Gi, but limit is
    1536Mi`)."""
    container: str = ""
    """The container, for the Container scope."""


class LimitRangeRefusal(Struct, frozen=True):
    """The LimitRange that refuses the pod, and every violation of it."""

    limit_range: str
    violations: tuple[Violation, ...]

    @property
    def message(self) -> str:
        """The refusal as the API server words it after `pods "<name>" is forbidden: `:
        utilerrors.NewAggregate, repeats dropped, several in brackets."""
        messages = list(dict.fromkeys(v.message for v in self.violations))
        return messages[0] if len(messages) == 1 else f"[{', '.join(messages)}]"


_Amounts = dict[str, Amount]


def _amounts(values: Mapping[str, Any]) -> _Amounts:
    return {str(name): Amount.parse(value) for name, value in values.items()}


_Broken = tuple[str, str, str] | None
"""(what breaks it, what the pod states, the plugin's sentence), or None."""


def min_constraint(
    scope: str, name: str, enforced: Amount, requests: _Amounts, limits: _Amounts
) -> _Broken:
    """minConstraint: a request must be stated and at least it, and so must a stated limit
    (a claim's items pass no limits: PersistentVolumeClaimValidateLimitFunc)."""
    head = f"minimum {name} usage per {scope} is {enforced}"
    request, limit = requests.get(name), limits.get(name)
    if request is None:
        return "", "", f"{head}.  No request is specified"
    if request.value < enforced.value:
        return "request", str(request), f"{head}, but request is {request}"
    if limit is not None and limit.value < enforced.value:
        return "limit", str(limit), f"{head}, but limit is {limit}"
    return None


def _max(scope: str, name: str, enforced: Amount, requests: _Amounts, limits: _Amounts) -> _Broken:
    """maxConstraint: the limit must be stated and within it, and so must a stated request."""
    head = f"maximum {name} usage per {scope} is {enforced}"
    request, limit = requests.get(name), limits.get(name)
    if limit is None:
        return "", "", f"{head}.  No limit is specified"
    if limit.value > enforced.value:
        return "limit", str(limit), f"{head}, but limit is {limit}"
    if request is not None and request.value > enforced.value:
        return "request", str(request), f"{head}, but request is {request}"
    return None


def _ratio(
    scope: str, name: str, enforced: Amount, requests: _Amounts, limits: _Amounts
) -> _Broken:
    """limitRequestRatioConstraint: limit / request at most the ratio, both stated and not 0."""
    head = f"{name} max limit to request ratio per {scope} is {enforced}"
    request, limit = requests.get(name), limits.get(name)
    if request is None or request.value == 0:
        return "", "", f"{head}, but no request is specified or request is 0"
    if limit is None or limit.value == 0:
        return "", "", f"{head}, but no limit is specified or limit is 0"
    ratio = limit.value / request.value
    if ratio > enforced.value:
        shown = f"{float(ratio):f}"  # Go's %f
        return "ratio", shown, f"{head}, but provided ratio is {shown}"
    return None


_CONSTRAINTS = (("min", min_constraint), ("max", _max), ("ratio", _ratio))


def _add(total: _Amounts, more: _Amounts) -> _Amounts:
    merged = dict(total)
    for name, amount in more.items():
        merged[name] = merged[name] + amount if name in merged else amount
    return merged


def _larger(total: _Amounts, other: _Amounts) -> _Amounts:
    # maxResourceList: a resource is replaced only by a strictly larger amount.
    merged = dict(total)
    for name, amount in other.items():
        if name not in merged or amount.value > merged[name].value:
            merged[name] = amount
    return merged


def pod_sums(spec: Mapping[str, Any], part: str) -> _Amounts:
    """The pod's requests or limits (`part`) as LimitRanger sums them (podRequests/podLimits):
    containers and sidecars added, each init container (with the sidecars before it) a floor."""
    index = 0 if part == "requests" else 1
    total: _Amounts = {}
    for container in o.containers(spec):
        total = _add(total, _amounts(_resources(container)[index]))
    sidecars: _Amounts = {}
    floor: _Amounts = {}
    for container in o.init_containers(spec):
        own = _amounts(_resources(container)[index])
        if o.is_sidecar(container):
            total = _add(total, own)
            sidecars = _add(sidecars, own)
            floor = _larger(floor, sidecars)
        else:
            floor = _larger(floor, _add(own, sidecars))
    return _larger(total, floor)


def _violations(item: LimitItem, spec: Mapping[str, Any]) -> list[Violation]:
    if item.type == "Container":
        checked = [
            (str(c.get("name") or ""), _amounts(_resources(c)[0]), _amounts(_resources(c)[1]))
            for c in [*o.containers(spec), *o.init_containers(spec)]
        ]
    elif item.type == "Pod":
        checked = [("", pod_sums(spec, "requests"), pod_sums(spec, "limits"))]
    else:
        return []
    found = []
    for container, requests, limits in checked:
        for bound, constraint in _CONSTRAINTS:
            values = {"min": item.min, "max": item.max, "ratio": item.max_ratio}[bound]
            for name, value in values.items():
                enforced = Amount.parse(value)
                broken = constraint(item.type, str(name), enforced, requests, limits)
                if broken is not None:
                    stated, asked, message = broken
                    found.append(
                        Violation(
                            item.type,
                            str(name),
                            bound,
                            str(enforced),
                            stated,
                            asked,
                            message,
                            container,
                        )
                    )
    return found


def limit_range_refusal(
    spec: Mapping[str, Any], limit_ranges: Iterable[KubeObject]
) -> LimitRangeRefusal | None:
    """The refusal of a stored pod spec by the first LimitRange it breaks; None when every
    range lets it in. QuantityError when an amount is not a quantity."""
    for limit_range in limit_ranges:
        found = [v for item in limit_items(limit_range) for v in _violations(item, spec)]
        if found:
            return LimitRangeRefusal(o.name_of(limit_range), tuple(found))
    return None


# -- where the cluster runs the plugin -------------------------------------------------------------


class Provider(Struct, frozen=True):
    """A managed Kubernetes service whose API server runs ExtendedResourceToleration."""

    name: str
    label: str
    """The label its machines carry."""
    source: str
    """Where the provider says it runs the plugin."""


PROVIDERS = (
    Provider(
        "EKS",
        "eks.amazonaws.com/nodegroup",
        "docs.aws.amazon.com/eks/latest/userguide/platform-versions.html (every platform "
        "version enables ExtendedResourceToleration; since 1.19, aws/containers-roadmap#739)",
    ),
    Provider(
        "GKE",
        "cloud.google.com/gke-nodepool",
        "cloud.google.com/kubernetes-engine/docs/how-to/gpus (GKE taints GPU machines "
        "nvidia.com/gpu:NoSchedule and adds the toleration with ExtendedResourceToleration)",
    ),
    Provider(
        "AKS",
        "kubernetes.azure.com/agentpool",
        "Azure/AKS#1449 (ExtendedResourceToleration enabled, resolution/shipped)",
    ),
)
CLOUDS = {"aws://": "AWS", "gce://": "Google Cloud", "azure://": "Azure"}
"""spec.providerID prefixes: the cloud a machine runs on, which is not who runs its control
plane (kops, kubeadm or Cluster API on the same cloud carry the same prefix)."""


class Knowledge(StrEnum):
    """What doctor knows of whether the cluster adds extended resource tolerations."""

    NOT_ASKED = "not-asked"
    """The job requests no extended resource: the plugin adds nothing either way."""
    MEASURED_ADDS = "measured-adds"
    MEASURED_NONE = "measured-none"
    INFERRED_ADDS = "inferred-adds"
    UNKNOWN = "unknown"


class ExtendedTolerations(Struct, frozen=True):
    """Whether the job's pods get the plugin's tolerations, how that is known, and the signal."""

    knowledge: Knowledge
    resources: tuple[str, ...] = ()
    """The extended resources the job requests."""
    signal: str = ""
    """What it was told by (a detail line, Kubernetes terms allowed)."""

    @property
    def added(self) -> bool:
        """The cluster adds them, measured or inferred."""
        return self.knowledge in (Knowledge.MEASURED_ADDS, Knowledge.INFERRED_ADDS)


class StoredPod(Struct, frozen=True):
    """A pod the API server already stored, beside the template its controller made it from."""

    name: str
    template: Mapping[str, Any]
    """The pod spec of its template, as its job states it."""
    spec: Mapping[str, Any]
    """The pod spec as stored: after every admission plugin that ran on its create."""


def _told_by_stored_pods(
    pods: Iterable[StoredPod], resources: tuple[str, ...]
) -> ExtendedTolerations | None:
    """What the first of `pods` that requests one of `resources` shows of the plugin; None
    when none shows anything.

    The plugin adds its toleration to every pod that requests the resource, unless the pod
    states that very toleration already (admission.go `Admit`, helper
    AddOrUpdateTolerationInPod), so a stored pod without it was not given it (measured none),
    and one with it that its template does not state was given it (measured adds). One whose
    template states it shows nothing either way."""
    for pod in pods:
        stated = [o.mapping(t) for t in o.sequence(pod.template.get("tolerations"))]
        kept = [o.mapping(t) for t in o.sequence(pod.spec.get("tolerations"))]
        for resource in extended_requests(pod.spec):
            if resource not in resources:
                continue
            toleration = extended_toleration(resource)
            if not any(_same_toleration(toleration, t) for t in kept):
                return ExtendedTolerations(
                    Knowledge.MEASURED_NONE,
                    resources,
                    f"pod {pod.name} requests {resource} and, as the API server stored it, "
                    f"carries no toleration {resource}:NoSchedule (operator Exists): the "
                    "cluster does not add it",
                )
            if not any(_same_toleration(toleration, t) for t in stated):
                return ExtendedTolerations(
                    Knowledge.MEASURED_ADDS,
                    resources,
                    f"pod {pod.name} requests {resource} and, as the API server stored it, "
                    f"carries the toleration {resource}:NoSchedule (operator Exists) its "
                    "template does not state: the cluster adds it",
                )
    return None


def extended_tolerations(
    specs: Iterable[Mapping[str, Any]],
    nodes: Sequence[KubeObject],
    trial: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None,
    admitted: Iterable[StoredPod] = (),
) -> ExtendedTolerations:
    """Whether the pods of `specs` (as stored before the plugin) get the plugin's tolerations.

    Measured when the trial start's answer (`trial`: the spec sent and the spec the server
    stored) shows it for a resource the sent pod requests; otherwise measured by the pods the
    server already stored (`admitted`, newest first: the cluster's setting may have changed
    since an older one) that request one of those resources; otherwise inferred from the
    managed provider whose label a machine carries; otherwise unknown."""
    resources = tuple(sorted({r for spec in specs for r in extended_requests(defaulted(spec))}))
    if not resources:
        return ExtendedTolerations(Knowledge.NOT_ASKED)
    if trial is not None:
        sent, stored = trial
        asked = extended_requests(defaulted(sent))
        if asked:
            added = added_tolerations(sent, stored)
            if added:
                return ExtendedTolerations(
                    Knowledge.MEASURED_ADDS,
                    resources,
                    "the trial start's answer carries a toleration the job does not state "
                    f"({', '.join(f'{r}:NoSchedule' for r in added)}): the cluster adds it",
                )
            stated = [o.mapping(t) for t in o.sequence(sent.get("tolerations"))]
            if not all(
                any(_same_toleration(extended_toleration(r), t) for t in stated) for r in asked
            ):
                return ExtendedTolerations(
                    Knowledge.MEASURED_NONE,
                    resources,
                    "the trial start's answer carries no toleration for "
                    f"{', '.join(asked)}: the cluster does not add it",
                )
    told = _told_by_stored_pods(admitted, resources)
    if told is not None:
        return told
    managed = _last_managed(nodes)
    if managed is not None:
        provider, machine = managed
        return ExtendedTolerations(
            Knowledge.INFERRED_ADDS,
            resources,
            f"inferred: machine {machine} carries the label {provider.label} ({provider.name}"
            f", whose API server runs ExtendedResourceToleration: {provider.source})",
        )
    cloud = _last_cloud(nodes)
    where = (
        f"the machines run on {cloud[1]} (providerID {cloud[0]}…) but carry no label of its "
        "managed service: a control plane run elsewhere may not add it"
        if cloud
        else "no machine carries the label of a managed service known to add it (EKS, GKE, AKS)"
    )
    return ExtendedTolerations(
        Knowledge.UNKNOWN,
        resources,
        f"not known whether the cluster adds a toleration for {', '.join(resources)} "
        f"(ExtendedResourceToleration): {where}",
    )


def _managed(nodes: Sequence[KubeObject]) -> tuple[Provider, str] | None:
    """The first managed provider whose label a machine carries, and the first such machine."""
    for provider in PROVIDERS:
        machine = next((o.name_of(n) for n in nodes if provider.label in o.labels_of(n)), None)
        if machine is not None:
            return provider, machine
    return None


def kept_for(nodes: Sequence[KubeObject], resources: Iterable[str]) -> list[str]:
    """The machines tainted NoSchedule with one of `resources` as the key: the only ones the
    plugin's tolerations let in, so the only ones whose fit depends on it."""
    keys = set(resources)
    return [
        o.name_of(node)
        for node in nodes
        if any(
            o.mapping(t).get("key") in keys and o.mapping(t).get("effect") == "NoSchedule"
            for t in o.sequence(o.mapping(node.get("spec")).get("taints"))
        )
    ]


def cloud_of(nodes: Sequence[KubeObject]) -> tuple[str, str] | None:
    """(providerID prefix, cloud) of the first machine whose providerID names a known cloud."""
    for node in nodes:
        provider_id = str(o.mapping(node.get("spec")).get("providerID") or "")
        for prefix, cloud in CLOUDS.items():
            if provider_id.startswith(prefix):
                return prefix, cloud
    return None


# -- 3. priority -----------------------------------------------------------------------------------

SYSTEM_PRIORITY = 1_000_000_000
"""HighestUserDefinablePriority (pkg/apis/scheduling/types.go): user classes are at most this;
the system classes (system-cluster-critical, system-node-critical) are above it."""


class PriorityLevel(Struct, frozen=True):
    """The priority the Priority admission plugin gives the job's pods, and whether they may
    preempt (preemptionPolicy: the pod's, else its class's; PreemptLowerPriority by default)."""

    value: int
    class_name: str
    preempts: bool
    missing: bool = False
    """The job names a class that does not exist: the plugin refuses its pods."""

    @property
    def words(self) -> str:
        """`priority 1000 (class 'training-high')`, for details."""
        named = f" (class '{self.class_name}')" if self.class_name else " (no class)"
        return f"priority {self.value}{named}"


def job_priority(spec: Mapping[str, Any], classes: Sequence[KubeObject]) -> PriorityLevel:
    """The Priority plugin's answer for a pod spec (admitPod): its `priorityClassName`'s value;
    with none named, the `globalDefault` class (the lowest value if several), else 0 with
    PreemptLowerPriority."""
    named = str(spec.get("priorityClassName") or "")
    stated = spec.get("preemptionPolicy")
    if named:
        found = next((c for c in classes if o.name_of(c) == named), None)
        if found is None:
            return PriorityLevel(0, named, stated != "Never", missing=True)
    else:
        defaults = [c for c in classes if c.get("globalDefault") is True]
        found = min(defaults, key=lambda c: o.integer(c.get("value"))) if defaults else None
    if found is None:
        return PriorityLevel(0, "", stated != "Never")
    policy = stated or found.get("preemptionPolicy") or "PreemptLowerPriority"
    return PriorityLevel(o.integer(found.get("value")), o.name_of(found), policy != "Never")


def with_priority(spec: Mapping[str, Any], level: PriorityLevel) -> dict[str, Any]:
    """The Priority plugin's mutation: the class name (the default class's when none was
    named), the priority and the class's preemption policy, which a quota's PriorityClass scope
    then sees (ResourceQuota runs after it)."""
    stored = dict(spec)
    if level.class_name:
        stored["priorityClassName"] = level.class_name
    stored["priority"] = level.value
    stored["preemptionPolicy"] = "PreemptLowerPriority" if level.preempts else "Never"
    return stored


def stated_priority(stored: Mapping[str, Any]) -> PriorityLevel | None:
    """The priority the server stored in a pod spec (the trial start's answer), if it did."""
    value = stored.get("priority")
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    name = str(stored.get("priorityClassName") or "")
    return PriorityLevel(value, name, stored.get("preemptionPolicy") != "Never")


# Kept for the last machine list (doctor/knowledge/last_answer.py): every namespace of a run over
# many,
# and every evaluation of a monitor while the machines stay, asks it of the same machines.
_last_managed = LastAnswer(_managed)
_last_cloud = LastAnswer(cloud_of)
