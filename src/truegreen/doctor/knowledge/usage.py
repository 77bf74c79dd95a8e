"""What the cluster's pods reserve on each machine, summed while the pages stream in.

At 30,000 pods the pods themselves must never be held: each page is decoded into the few
fields the scheduler's fit reads, added to its machine's sum, and dropped. Only this
namespace's pods are kept whole (as fit views): the capacity check names them.

One module past 600 lines: the partial views (structs that decode only what the fold reads) and
the fold that sums them change together, and bench/decode_floor.py measures them as one.
"""

import heapq
import math
from collections.abc import Collection, Iterable
from typing import Any

import msgspec

from truegreen import kubeobjects as o
from truegreen.cluster import (
    CantRead,
    Folded,
    FoldRead,
    Kind,
    KubeObject,
    Listed,
    ListRead,
    ReadFailure,
)
from truegreen.cluster.classify import describe
from truegreen.cluster.kinds import stamped
from truegreen.doctor.knowledge.fit import container_requests, pod_requests
from truegreen.doctor.knowledge.last_answer import LastAnswer
from truegreen.kubeobjects import TERMINATED_PHASES
from truegreen.quantity import QuantityError, Resources

AnyMapping = dict[str, Any] | None
_NOTHING = msgspec.Raw(b"null")
_ABSENT = (None, _NOTHING)
"""A part of a pod spec not sent (either view's default) or sent as null."""
_encode = msgspec.json.encode
# One decoder for every holder's owner references: `decode(type=...)` looks the type up per call.
_decode_owner_references = msgspec.json.Decoder(list[dict[str, Any]] | None).decode
_decode_resources = msgspec.json.Decoder(AnyMapping).decode
HOLDERS_KEPT = 3
"""Per machine and resource, how many of the largest holders are kept to be named."""


# What the capacity check keeps of a pod, each field checked for its type.
class _Container(msgspec.Struct, omit_defaults=True, rename="camel"):
    name: str | None = None
    resources: AnyMapping = None
    restart_policy: str | None = None
    ports: list[dict[str, Any]] | None = None


class _Spec(msgspec.Struct, omit_defaults=True, rename="camel"):
    node_name: str | None = None
    priority: int | None = None
    containers: list[_Container] | None = None
    init_containers: list[_Container] | None = None
    overhead: AnyMapping = None
    resources: AnyMapping = None
    host_network: bool | None = None
    affinity: AnyMapping = None


class _Metadata(msgspec.Struct, omit_defaults=True, rename="camel"):
    name: str | None = None
    namespace: str | None = None
    creation_timestamp: str | None = None
    labels: dict[str, str] | None = None
    owner_references: list[dict[str, Any]] | None = None


class _Condition(msgspec.Struct, omit_defaults=True, rename="camel"):
    type: str | None = None
    status: str | None = None
    reason: str | None = None
    message: str | None = None


class _Status(msgspec.Struct, omit_defaults=True, rename="camel"):
    phase: str | None = None
    conditions: list[_Condition] | None = None
    nominated_node_name: str | None = None


class CheckedPodView(msgspec.Struct, omit_defaults=True, rename="camel"):
    """`PodView`'s fields, every one checked as it is decoded: how the monitor holds a pod
    from a watch, where a malformed pod must end the stream, not a later sum."""

    metadata: _Metadata = msgspec.field(default_factory=_Metadata)
    spec: _Spec = msgspec.field(default_factory=_Spec)
    status: _Status = msgspec.field(default_factory=_Status)


# The same fields as every pod of the cluster arrives: what only this namespace's pods need,
# and what a pod's requests are computed from, stay raw bytes until a pod needs them.
class _RawContainer(msgspec.Struct, omit_defaults=True, rename="camel", gc=False):
    name: str | None = None
    resources: msgspec.Raw = _NOTHING
    restart_policy: str | None = None
    ports: msgspec.Raw = _NOTHING


class _RawSpec(msgspec.Struct, omit_defaults=True, rename="camel", gc=False):
    node_name: str | None = None
    priority: int | None = None
    containers: list[_RawContainer] | None = None
    init_containers: list[_RawContainer] | None = None
    overhead: msgspec.Raw = _NOTHING
    resources: msgspec.Raw = _NOTHING
    host_network: bool | None = None
    affinity: msgspec.Raw = _NOTHING


class _RawMetadata(msgspec.Struct, omit_defaults=True, rename="camel", gc=False):
    name: str | None = None
    namespace: str | None = None
    creation_timestamp: str | None = None
    labels: msgspec.Raw = _NOTHING
    owner_references: msgspec.Raw = _NOTHING


class _RawStatus(msgspec.Struct, omit_defaults=True, rename="camel", gc=False):
    phase: str | None = None
    conditions: msgspec.Raw = _NOTHING
    nominated_node_name: str | None = None


class PodView(msgspec.Struct, omit_defaults=True, rename="camel", gc=False):
    """The part of a pod the capacity check reads: requests, machine, phase, owner, scheduling.

    Decoding is most of doctor's work at cluster scale: what is read of every pod (phase,
    namespace, machine) is decoded, the rest is kept as raw bytes until it is needed (a new
    shape of requests; a pod of this namespace). Views are trees: untracked by the cyclic
    garbage collector, so the pods passing through never make it walk what is held.
    """

    metadata: _RawMetadata = msgspec.field(default_factory=_RawMetadata)
    spec: _RawSpec = msgspec.field(default_factory=_RawSpec)
    status: _RawStatus = msgspec.field(default_factory=_RawStatus)


# What kube-scheduler's NodePorts and InterPodAffinity read of a pod of any namespace on a machine
# (NodeInfo.UsedPorts, the existing pods' anti-affinity): kept for the few pods that hold a host
# port or carry required pod anti-affinity.
class _PortsContainer(msgspec.Struct, omit_defaults=True, rename="camel"):
    name: str | None = None
    restart_policy: str | None = None
    ports: list[dict[str, Any]] | None = None


class _RulesAffinity(msgspec.Struct, omit_defaults=True, rename="camel"):
    pod_anti_affinity: AnyMapping = None


class _RulesSpec(msgspec.Struct, omit_defaults=True, rename="camel"):
    node_name: str | None = None
    priority: int | None = None
    host_network: bool | None = None
    containers: list[_PortsContainer] | None = None
    init_containers: list[_PortsContainer] | None = None
    affinity: _RulesAffinity | None = None


class _RulesMetadata(msgspec.Struct, omit_defaults=True, rename="camel"):
    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None


class _RulesPod(msgspec.Struct, omit_defaults=True, rename="camel"):
    metadata: _RulesMetadata = msgspec.field(default_factory=_RulesMetadata)
    spec: _RulesSpec = msgspec.field(default_factory=_RulesSpec)


def _holds_host_port(ports: msgspec.Raw | list[dict[str, Any]] | None) -> bool:
    """A container's ports name a host port (a raw view's bytes are only searched: most
    pods' ports are container ports alone)."""
    if isinstance(ports, msgspec.Raw):
        return b'"hostPort"' in bytes(ports)
    return any(isinstance(p, dict) and p.get("hostPort") for p in ports or ())


def _anti_affinity(affinity: msgspec.Raw | AnyMapping) -> bool:
    """A pod's affinity may hold required pod anti-affinity."""
    if isinstance(affinity, msgspec.Raw):
        return b'"podAntiAffinity"' in bytes(affinity)
    return bool(affinity and affinity.get("podAntiAffinity"))


def rules_part(item: PodView | CheckedPodView) -> dict[str, Any] | None:
    """What the scheduler's NodePorts and InterPodAffinity filters read of a pod on a machine
    (its host ports, under `hostNetwork` every port, and its required pod anti-affinity), for a
    pod that holds either; None for the rest, which neither filter looks at. ValidationError
    when a part is not what the API defines."""
    spec = item.spec
    if not spec.node_name:
        return None
    containers = (*(spec.containers or ()), *(spec.init_containers or ()))
    if not (
        spec.host_network
        or any(_holds_host_port(c.ports) for c in containers)
        or _anti_affinity(spec.affinity)
    ):
        return None
    part: dict[str, Any] = msgspec.to_builtins(_checked(item, _RulesPod))
    return part


class Holder(msgspec.Struct, frozen=True, omit_defaults=True):
    """One pod among the largest holders of a resource on its machine, and what owns it."""

    namespace: str
    pod: str
    owner_kind: str
    """The kind of the pod's controller (`ReplicaSet`, `StatefulSet`, `Job`); "" for none."""
    owner: str
    requested: dict[str, int]
    priority: int = 0
    """Its `spec.priority`, as the Priority admission plugin set it (0 when none)."""


class PriorityShare(msgspec.Struct, frozen=True):
    """What the pods of one priority reserve on one machine."""

    priority: int
    pods: int
    requested: dict[str, int]


class MachineUsage(msgspec.Struct, frozen=True, omit_defaults=True):
    """What the pods bound to one machine reserve, in scheduler units."""

    pods: int
    requested: dict[str, int]
    by_priority: list[PriorityShare] = []
    """The part of it held by pods of each priority other than 0, lowest first: what
    preemption could take back (the rest is priority 0)."""
    nominated: list[PriorityShare] = []
    """Pods not bound yet that the scheduler nominated for this machine (status.
    nominatedNodeName: it is making room for them), per priority, lowest first."""


class ClusterUsage(msgspec.Struct, frozen=True):
    """Every machine's reserved resources, and this namespace's pods as fit views (each with
    its kind, as every object leaving a read carries it)."""

    machines: dict[str, MachineUsage] = msgspec.field(default_factory=dict)
    pods_here: list[dict[str, Any]] = msgspec.field(default_factory=list)
    invalid: str = ""
    """The first resource amount that is not a quantity; the sums cannot be trusted then."""
    holders: dict[str, list[Holder]] = msgspec.field(default_factory=dict)
    """Per machine, the pods that hold the most of each resource among the pods of each
    priority (HOLDERS_KEPT per resource and priority), so a finding can name what holds the
    room, or what preemption would stop (older snapshots have none)."""
    rule_pods: list[dict[str, Any]] | None = None
    """The pods of every namespace on a machine that hold a host port or carry required pod
    anti-affinity, as `rules_part` keeps them: what NodePorts and InterPodAffinity read of the
    cluster's pods. None where they were not kept (a snapshot older than them)."""

    def reserved_on(self, machine: str) -> tuple[Resources, int]:
        """What the pods on `machine` reserve, and how many there are."""
        usage = self.machines.get(machine)
        if usage is None:
            return Resources(), 0
        return Resources.of(usage.requested), usage.pods

    def held_below(self, machine: str, priority: int) -> tuple[Resources, int]:
        """What the pods on `machine` of a priority below `priority` reserve, and how many
        there are: the room preemption could take back for a pod of `priority`."""
        usage = self.machines.get(machine)
        if usage is None:
            return Resources(), 0
        held, pods = Resources(), 0
        for share in usage.by_priority:
            if share.priority < priority:
                held += Resources.of(share.requested)
                pods += share.pods
        if priority > 0:  # the part no share names is priority 0
            total, count = self.reserved_on(machine)
            other = sum((Resources.of(s.requested) for s in usage.by_priority), Resources())
            held += total - other
            pods += count - sum(s.pods for s in usage.by_priority)
        return held, pods

    def nominated_to(self, machine: str, priority: int | None) -> tuple[Resources, int]:
        """What the pods nominated for `machine` of `priority` or above reserve there (all of
        them for None: a priority not known), and how many there are."""
        usage = self.machines.get(machine)
        if usage is None:
            return Resources(), 0
        shares = [s for s in usage.nominated if priority is None or s.priority >= priority]
        held = sum((Resources.of(s.requested) for s in shares), Resources())
        return held, sum(s.pods for s in shares)

    def priorities(self) -> set[int]:
        """Every priority other than 0 that holds room on a machine."""
        return {s.priority for usage in self.machines.values() for s in usage.by_priority}

    @property
    def any_nominated(self) -> bool:
        """Some pod is nominated for a machine and not bound yet."""
        return _any_nominated(self.machines)


_any_nominated = LastAnswer(lambda machines: any(u.nominated for u in machines.values()))
"""Kept for the last machines' sums (doctor/knowledge/last_answer.py): each namespace of a run over
many has its own usage (its own pods) around the same sums."""

_Refs = bytes | list[dict[str, Any]] | None
_Held = tuple[str, str, int, _Refs, Resources, int]
"""A pod that may end among its machine's largest holders: (namespace, pod, arrival, owner
references, requests, priority). The references are copied out of the page (which is not kept)
and decoded only for the holders still kept at the end."""
_Kept = tuple[int, str, str, int, _Refs, Resources, int]
"""A kept holder of one resource: its amount, then the pod (`_Held`). Ordered by the first
three; the arrival (one per pod, so unique within a heap) breaks ties, so what follows it is
never compared."""


class _Resource(msgspec.Struct, gc=False):
    """One resource on one machine: what its pods request so far, and its largest holders (a
    min-heap of at most HOLDERS_KEPT, its smallest first) with the smallest amount of a full
    heap beside it, so that most pods are compared with one number."""

    requested: int = 0
    kept: list[_Kept] = msgspec.field(default_factory=list)
    least: float = -math.inf
    """The amount of `kept[0]` once HOLDERS_KEPT are kept; until then none is too small."""


class _Tally(msgspec.Struct):
    """What the pods of one priority on one machine add up to so far, per resource in the
    order first asked."""

    pods: int = 0
    resources: dict[str, _Resource] = msgspec.field(default_factory=dict)


class CapacityTally:
    """The fold behind `ClusterUsage`: sums each holding pod's requests onto its machine."""

    name = "capacity"
    view = PodView

    def __init__(self, namespace: str, also: Collection[str] = ()) -> None:
        self._kept = frozenset((namespace, *also))
        self.namespace = namespace
        """Whose pods are kept whole (as `ClusterUsage.pods_here`), with those of `also`: the
        other namespaces of a run over many, which share this one fold."""
        self._machines: dict[str, _Tally] = {}
        """Per machine, its pods of priority 0: their sums and largest holders."""
        self._prioritized: dict[tuple[str, int], _Tally] = {}
        """Per machine and priority other than 0, the same."""
        self._nominated: dict[str, dict[int, _Tally]] = {}
        self._here: list[dict[str, Any]] = []
        self._rule_pods: list[dict[str, Any]] = []
        self._invalid = ""
        self._arrived = 0
        # Pods share shapes (replicas one spec, services the same sizes): each distinct shape
        # is summed up once, not per pod; a shape that is not a quantity is None.
        self._requests_by_shape: dict[bytes, Resources | None] = {}
        self._requests_by_container: dict[bytes, Resources] = {}

    def add(self, item: PodView) -> None:
        """Count one pod; Succeeded and Failed pods hold nothing (the scheduler skips them)."""
        if item.status.phase in TERMINATED_PHASES:
            return
        metadata = item.metadata
        if metadata.namespace in self._kept:
            self._here.append(pod_whole(item))
        spec = item.spec
        machine = spec.node_name
        rules = rules_part(item)
        if rules is not None:
            self._rule_pods.append(rules)
        if not machine:
            nominated = item.status.nominated_node_name
            if nominated:
                self._nominate(nominated, spec)
            return
        shape = request_shape(spec)
        try:
            requests = self._requests_by_shape[shape]
        except KeyError:
            requests = self._new_shape(shape, spec)
        if requests is None:
            return
        priority = spec.priority or 0
        # Most pods have priority 0: one look-up, as before priorities were kept.
        tally = self._machines.get(machine) if not priority else self._ranked(machine, priority)
        if tally is None:
            tally = self._machines[machine] = _Tally()
        tally.pods += 1
        resources = tally.resources
        namespace = metadata.namespace or ""
        pod = metadata.name or ""
        held: _Held | None = None
        for name, amount in requests.amounts:
            resource = resources.get(name)
            if resource is None:
                resource = resources[name] = _Resource()
            resource.requested += amount
            if amount < resource.least:
                continue  # most pods: less than the smallest one kept
            kept = resource.kept
            full = len(kept) >= HOLDERS_KEPT
            if full and amount == resource.least and (namespace, pod) <= kept[0][1:3]:
                continue
            if held is None:
                self._arrived += 1
                refs = metadata.owner_references
                copied = bytes(refs) if isinstance(refs, msgspec.Raw) else refs
                held = (namespace, pod, self._arrived, copied, requests, priority)
            if full:
                heapq.heapreplace(kept, (amount, *held))
            else:
                heapq.heappush(kept, (amount, *held))
            if len(kept) >= HOLDERS_KEPT:
                resource.least = kept[0][0]

    def _ranked(self, machine: str, priority: int) -> _Tally:
        """The tally of `machine`'s pods of a priority other than 0."""
        tally = self._prioritized.get((machine, priority))
        if tally is None:
            tally = self._prioritized[machine, priority] = _Tally()
        return tally

    def _nominate(self, machine: str, spec: _RawSpec) -> None:
        """A pod the scheduler nominated for `machine` and has not bound: its requests are
        promised there (few pods are; no holders are kept of them)."""
        shape = request_shape(spec)
        try:
            requests = self._requests_by_shape[shape]
        except KeyError:
            requests = self._new_shape(shape, spec)
        if requests is None:
            return
        tally = self._nominated.setdefault(machine, {}).setdefault(spec.priority or 0, _Tally())
        tally.pods += 1
        for name, amount in requests.amounts:
            tally.resources.setdefault(name, _Resource()).requested += amount

    def _new_shape(self, shape: bytes, spec: _RawSpec) -> Resources | None:
        """What a pod with `spec`, the first of its `shape`, requests; None when an amount is
        not a quantity (the first such is kept as `invalid`)."""
        main_only = shape[:1] == b"["  # how request_shape keys a pod of main containers alone
        try:
            requests: Resources | None = (
                self._main_containers(spec) if main_only else requests_of(spec)
            )
        except QuantityError as error:
            self._invalid = self._invalid or str(error)
            requests = None
        self._requests_by_shape[shape] = requests
        return requests

    def _main_containers(self, spec: _RawSpec) -> Resources:
        """What a pod of main containers alone requests: their requests' sum (as pod_requests
        adds them), each distinct container's resources read once (shapes share containers:
        674 shapes of the bench's 30,000 pods hold 48 kinds of container)."""
        total = Resources()
        for container in spec.containers or ():
            resources = bytes(container.resources)
            try:
                requests = self._requests_by_container[resources]
            except KeyError:
                try:
                    whole = {"resources": _decode_resources(resources)}
                except msgspec.ValidationError:
                    return requests_of(spec)  # which says where the wrong type is
                requests = self._requests_by_container[resources] = container_requests(whole)
            total += requests
        return total

    def summary(self) -> dict[str, Any]:
        """The sums per machine, this namespace's pods and the first invalid amount."""
        bound: dict[str, dict[int, _Tally]] = {m: {0: t} for m, t in self._machines.items()}
        for (machine, priority), tally in self._prioritized.items():
            bound.setdefault(machine, {})[priority] = tally
        names = sorted(bound.keys() | self._nominated.keys())
        usage = ClusterUsage(
            {
                machine: machine_usage(
                    _shares(bound.get(machine, {})), _shares(self._nominated.get(machine, {}))
                )
                for machine in names
            },
            self._here,
            self._invalid,
            {machine: _holders(bound[machine]) for machine in names if machine in bound},
            self._rule_pods,
        )
        result: dict[str, Any] = msgspec.to_builtins(usage)
        return result


def _shares(by_priority: dict[int, _Tally]) -> list[PriorityShare]:
    return [
        PriorityShare(
            priority, tally.pods, {name: r.requested for name, r in tally.resources.items()}
        )
        for priority, tally in sorted(by_priority.items())
    ]


def machine_usage(bound: list[PriorityShare], nominated: list[PriorityShare]) -> MachineUsage:
    """One machine's usage from its pods' shares per priority (lowest first) and its nominated
    pods' shares: the totals in the order each resource was first asked by the lowest priority,
    the shares of priorities other than 0."""
    requested: dict[str, int] = {}
    for share in bound:
        for name, amount in share.requested.items():
            requested[name] = requested.get(name, 0) + amount
    return MachineUsage(
        sum(s.pods for s in bound),
        requested,
        [s for s in bound if s.priority != 0],
        nominated,
    )


def _holders(by_priority: dict[int, _Tally]) -> list[Holder]:
    """A machine's largest holders of each priority, each pod made a Holder once (most hold
    the most of every resource they request)."""
    pods = {
        entry[3]: entry
        for tally in by_priority.values()
        for r in tally.resources.values()
        for entry in r.kept
    }
    return each_holder_once(
        _holder(namespace, pod, _owner_references(refs), requests, priority)
        for _, namespace, pod, _, refs, requests, priority in pods.values()
    )


def _owner_references(refs: _Refs) -> list[dict[str, Any]] | None:
    """Owner references as they are read: decoded if they were kept as they arrived."""
    return _decode_owner_references(refs) if isinstance(refs, bytes) else refs


def _checked(view: msgspec.Struct, fields: type[msgspec.Struct]) -> Any:
    """The raw parts of `view` decoded as `fields`; ValidationError (a malformed read) when
    one is not what the API defines."""
    return msgspec.json.decode(msgspec.json.encode(view), type=fields)


def pod_whole(item: PodView | CheckedPodView) -> dict[str, Any]:
    """A pod of this namespace as the capacity check keeps it, every field decoded."""
    whole: dict[str, Any] = msgspec.to_builtins(_checked(item, CheckedPodView))
    return whole


def requests_of(spec: _RawSpec | _Spec) -> Resources:
    """What a pod with `spec` requests of its machine; QuantityError for an amount that is not
    a quantity."""
    return pod_requests(msgspec.to_builtins(_checked(spec, _Spec)))


def request_shape(spec: _RawSpec | _Spec) -> bytes:
    """All a pod's requests depend on: its containers' resources and restart policies (not
    their names), overhead and pod-level resources.

    Most pods have main containers alone, whose requests are their resources' sum: they are
    keyed by those resources only, a JSON list; any other pod by a JSON object of every part,
    so the two kinds of key never meet."""
    if not spec.init_containers and spec.overhead in _ABSENT and spec.resources in _ABSENT:
        return _encode([c.resources for c in spec.containers or ()])
    return _encode(
        {
            "containers": [(c.resources, c.restart_policy) for c in spec.containers or ()],
            "initContainers": [(c.resources, c.restart_policy) for c in spec.init_containers or ()],
            "overhead": spec.overhead,
            "resources": spec.resources,
        }
    )


def each_holder_once(holders: Iterable[Holder]) -> list[Holder]:
    """A machine's holders as a summary names them: each pod once, by namespace and name."""
    unique = {(h.namespace, h.pod): h for h in holders}
    return [unique[key] for key in sorted(unique)]


def holder_of(item: PodView | CheckedPodView, requests: Resources) -> Holder:
    """`item` as a holder of room on its machine: its name, its controller, its requests and
    its priority.

    A raw view's owner references are decoded here, for the few pods kept as holders."""
    refs = item.metadata.owner_references
    if isinstance(refs, msgspec.Raw):
        refs = _decode_owner_references(refs)
    return _holder(
        item.metadata.namespace or "",
        item.metadata.name or "",
        refs,
        requests,
        item.spec.priority or 0,
    )


def _holder(
    namespace: str,
    pod: str,
    refs: list[dict[str, Any]] | None,
    requests: Resources,
    priority: int,
) -> Holder:
    controller: dict[str, Any] = {}
    for ref in refs or ():
        if ref.get("controller"):
            controller = ref
            break
    return Holder(
        namespace,
        pod,
        str(controller.get("kind", "")),
        str(controller.get("name", "")),
        requests.as_dict(),
        priority,
    )


def cluster_usage(read: FoldRead, namespace: str | None = None) -> ClusterUsage | CantRead:
    """The typed usage from a fold's summary, with only `namespace`'s pods kept whole when it is
    given (a fold shared by many namespaces keeps all of theirs); a summary of the wrong shape
    is malformed. The last fold's conversion is kept (doctor/knowledge/last_answer.py): every
    namespace of a run over many converts the same one."""
    if isinstance(read, CantRead):
        return read
    usage = _last_usage(read)
    if namespace is None or isinstance(usage, CantRead):
        return usage
    return msgspec.structs.replace(
        usage, pods_here=[p for p in usage.pods_here if o.namespace_of(p) == namespace]
    )


def _converted(read: Folded) -> ClusterUsage | CantRead:
    try:
        usage = msgspec.convert(read.summary, ClusterUsage)
    except msgspec.ValidationError as error:
        return CantRead(
            ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, "list pods", str(error))
        )
    # The fold views decode only what the tally reads; a snapshot's summary (old ones too)
    # holds them as they were decoded. Either way they leave here as pods.
    return msgspec.structs.replace(
        usage,
        pods_here=[stamped(Kind.POD, pod) for pod in usage.pods_here],
        rule_pods=None
        if usage.rule_pods is None
        else [stamped(Kind.POD, pod) for pod in usage.rule_pods],
    )


_last_usage = LastAnswer(_converted)


FIT_FIELDS = {
    "metadata": ("name", "labels", "creationTimestamp"),
    "spec": ("unschedulable", "taints", "providerID"),
    "status": ("capacity", "allocatable", "conditions", "nodeInfo"),
}
"""What the fit reads of a machine (fit.py: exclusion and machine_room; gpu_supply.py compares
a GPU machine's capacity with its allocatable, and tells a machine that has just joined by its
creation), the providerID that names its cloud
(stored_pod.py `cloud_of`), the conditions its kubelet and the node lifecycle controller
set (reports.py: a machine that is down is evidence), and its nodeInfo, of which the list views
keep the kubelet's version alone (pull_verification.py: from 1.35 it checks a pod's logins)."""


def machines_for_fit(nodes: ListRead) -> ListRead:
    """The machines as the fit reads them, and nothing else.

    A real machine is 5-15 KB of JSON, ten times that once decoded; at thousands of machines
    the whole objects would be most of what doctor holds. The last list's answer is kept
    (doctor/knowledge/last_answer.py): every namespace of a run over many gives the same one.
    """
    return _last_machines(nodes)


def _machines_for_fit(nodes: ListRead) -> ListRead:
    if not isinstance(nodes, Listed):
        return nodes
    return Listed(tuple(_fit_fields(node) for node in nodes.items))


_last_machines = LastAnswer(_machines_for_fit)


def _fit_fields(node: KubeObject) -> dict[str, Any]:
    kept: dict[str, Any] = {k: node[k] for k in ("kind", "apiVersion") if k in node}
    for part, names in FIT_FIELDS.items():
        value = o.mapping(node.get(part))
        kept[part] = {name: value[name] for name in names if name in value}
    return kept
