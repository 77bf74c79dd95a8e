"""kube-scheduler's fit rules, as pure functions.

Ground truth: component-helpers/resource/helpers.go (PodRequests), the NodeResourcesFit filter
plugin, and component-helpers/scheduling/corev1 (tolerations, node selector terms), which the
NodeUnschedulable, TaintToleration and NodeAffinity filters and Kueue's flavor assignment share.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources, format_amount

_POD_LEVEL = (CPU, MEMORY)


def container_requests(container: Mapping[str, Any]) -> Resources:
    """A container's requests; a limit whose resource the requests do not name counts as the
    request (pkg/apis/core/v1/defaults.go SetDefaults_Pod copies it only where the key is
    absent, so an explicit `cpu: "0"` stays 0 beside any limit)."""
    resources = o.mapping(container.get("resources"))
    limits = Resources.parse(o.mapping(resources.get("limits")))
    stated = o.mapping(resources.get("requests"))
    requests = Resources.parse(stated)
    return requests.replaced(limits, limits.names - {str(name) for name in stated})


def pod_requests(spec: Mapping[str, Any]) -> Resources:
    """What the scheduler reserves for a pod.

    max(sum of containers + sidecars, each init container plus the sidecars started before
    it); pod-level cpu/memory requests replace the aggregate; overhead is added.
    """
    total = Resources()
    for container in o.containers(spec):
        total += container_requests(container)
    sidecars = Resources()
    init_peak = Resources()
    for container in o.init_containers(spec):
        requests = container_requests(container)
        if o.is_sidecar(container):
            total += requests
            sidecars += requests
            during = sidecars
        else:
            during = requests + sidecars
        init_peak = init_peak.max_with(during)
    total = total.max_with(init_peak)
    pod_level = Resources.parse(
        {
            k: v
            for k, v in o.mapping(o.mapping(spec.get("resources")).get("requests")).items()
            if k in _POD_LEVEL
        }
    )
    if pod_level.names:
        total = total.replaced(pod_level, pod_level.names)
    return total + Resources.parse(o.mapping(spec.get("overhead")))


def tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    """Whether any toleration tolerates the taint (v1 helper ToleratesTaint)."""
    for toleration in tolerations:
        effect = toleration.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key = toleration.get("key") or ""
        operator = toleration.get("operator") or "Equal"
        if key and key != taint.get("key"):
            continue
        if operator == "Exists":
            return True
        if (
            operator == "Equal"
            and key
            and (toleration.get("value") or "") == (taint.get("value") or "")
        ):
            return True
    return False


def _expression_matches(expression: Mapping[str, Any], value: str | None) -> bool:
    operator = expression.get("operator")
    values = [str(v) for v in o.sequence(expression.get("values"))]
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        left, right = _go_int64(value), _go_int64(values[0])
        if left is None or right is None:
            return False
        return left > right if operator == "Gt" else left < right
    return False


_INT64 = range(-(2**63), 2**63)


def _go_int64(text: str) -> int | None:
    """`text` as Go's `strconv.ParseInt(text, 10, 64)` reads it, which Gt and Lt use for both
    the label and the value (apimachinery labels/selector.go `Requirement.Matches`): an
    optional sign and ASCII digits only (no spaces or underscores, which Python's int()
    takes), within 64 bits; None where Go fails, and the term then does not match."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not (digits.isascii() and digits.isdigit()):
        return None
    number = int(text)
    return number if number in _INT64 else None


def _term_matches(term: Mapping[str, Any], node: KubeObject) -> bool:
    expressions = [o.mapping(e) for e in o.sequence(term.get("matchExpressions"))]
    fields = [o.mapping(e) for e in o.sequence(term.get("matchFields"))]
    if not expressions and not fields:
        return False  # an empty term selects no machine
    labels = o.labels_of(node)
    if not all(_expression_matches(e, labels.get(str(e.get("key")))) for e in expressions):
        return False
    return all(
        _expression_matches(f, o.name_of(node) if f.get("key") == "metadata.name" else None)
        for f in fields
    )


def matches_required_affinity(node: KubeObject, spec: Mapping[str, Any]) -> bool:
    """Whether the pod spec's required node affinity terms admit `node` (no terms: any)."""
    required = o.mapping(
        o.mapping(o.mapping(spec.get("affinity")).get("nodeAffinity")).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    )
    if not required:
        return True
    terms = [o.mapping(t) for t in o.sequence(required.get("nodeSelectorTerms"))]
    return any(_term_matches(t, node) for t in terms)


class MachineRoom(Struct, frozen=True):
    """One machine's allocatable resources and what its pods already reserve."""

    name: str
    allocatable: Resources
    max_pods: int
    requested: Resources = Resources()
    pod_count: int = 0

    def without(self, requests: Resources, pods: int) -> "MachineRoom":
        """This machine as it would be once pods reserving `requests` finish."""
        return MachineRoom(
            self.name,
            self.allocatable,
            self.max_pods,
            self.requested - requests,
            self.pod_count - pods,
        )

    def emptied(self) -> "MachineRoom":
        """This machine with nothing running on it."""
        return MachineRoom(self.name, self.allocatable, self.max_pods)


class Shortfall(Struct, frozen=True):
    """How much of one resource a machine lacks for a pod."""

    resource: str
    missing: int

    def __str__(self) -> str:
        if self.resource == PODS:
            return "at its limit of running programs"
        return f"{format_amount(self.resource, self.missing)} short"


def shortfalls(request: Resources, room: MachineRoom) -> list[Shortfall]:
    """What `room` lacks to host a pod requesting `request` (NodeResourcesFit's fitsRequest)."""
    missing: list[Shortfall] = []
    if room.pod_count + 1 > room.max_pods:
        missing.append(Shortfall(PODS, 1))
    for resource, amount in request.amounts:
        free = room.allocatable.get(resource) - room.requested.get(resource)
        if amount > free:
            missing.append(Shortfall(resource, amount - free))
    return missing


def closest(
    request: Resources, rooms: Sequence[MachineRoom]
) -> tuple[MachineRoom, list[Shortfall]] | None:
    """The machine that misses the request by the least: fewest resources short, then least."""
    if not rooms:
        return None
    scored = []
    for room in rooms:
        missing = shortfalls(request, room)
        relative = sum(
            s.missing / max(request.get(s.resource), 1) for s in missing if s.resource != PODS
        )
        scored.append((len(missing), relative, room.name, room, missing))
    _, _, _, room, missing = min(scored, key=lambda entry: entry[:3])
    return room, missing


def machine_room(node: KubeObject) -> MachineRoom:
    """A machine's allocatable resources (not its capacity) and its pod limit."""
    allocatable = dict(o.mapping(o.mapping(node.get("status")).get("allocatable")))
    max_pods_value = allocatable.pop(PODS, "110")
    max_pods = Resources.parse({PODS: max_pods_value}).get(PODS)
    return MachineRoom(o.name_of(node), Resources.parse(allocatable), max_pods)


_EVERY_MACHINE = frozenset({CPU, EPHEMERAL_STORAGE, MEMORY})
"""The resources every machine has (core/v1 ResourceName), said before the others."""
_BYTE_NOUNS = {MEMORY: "memory", EPHEMERAL_STORAGE: "scratch disk"}
"""What an amount of bytes is of: both read `16 GiB` alone."""


def format_resources(resources: Resources) -> str:
    """`4 CPUs, 10 GiB scratch disk, 16 GiB memory, 1 nvidia.com/gpu`: what every machine has
    first, then the GPUs and devices some machines have, by name (by name alone, `1
    amd.com/gpu` would come before the CPUs and `gpu.nvidia.com devices` between the CPUs and
    the memory)."""
    parts = []
    for name, amount in sorted(resources.amounts, key=lambda a: (a[0] not in _EVERY_MACHINE, a)):
        text = format_amount(name, amount)
        parts.append(f"{text} {_BYTE_NOUNS[name]}" if name in _BYTE_NOUNS else text)
    return ", ".join(parts) or "no resources"


def matches_node_selector(terms: Sequence[Mapping[str, Any]], node: KubeObject) -> bool:
    """Whether `node` matches any of a node selector's terms (component-helpers/scheduling/
    corev1 `MatchNodeSelectorTerms`): a term matches when all of its expressions on labels and
    fields on `metadata.name` do; an empty term, or no term, matches none."""
    return any(_term_matches(term, node) for term in terms)


def volume_reaches(volume: KubeObject, labels: Mapping[str, str]) -> bool:
    """Whether a PersistentVolume's node affinity admits a machine of these labels
    (component-helpers storage/volume `CheckNodeAffinity`: no `required` admits every machine;
    it builds a machine of labels alone, so a term on `metadata.name` never matches)."""
    required = o.mapping(
        o.mapping(o.mapping(volume.get("spec")).get("nodeAffinity")).get("required")
    )
    if "nodeSelectorTerms" not in required:
        return True
    terms = [o.mapping(t) for t in o.sequence(required.get("nodeSelectorTerms"))]
    return matches_node_selector(terms, {"metadata": {"labels": labels}})
