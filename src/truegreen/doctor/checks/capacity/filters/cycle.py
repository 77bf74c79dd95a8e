"""What one pass of the filters shares, as kube-scheduler's CycleState does: the machines and
their labels, the namespace's pods already placed, the other namespaces' pods that hold a host
port or carry required pod anti-affinity (what NodeInfo holds of every pod for NodePorts and
InterPodAffinity), and the label selectors and topology terms the pod rules are written in
(metav1.LabelSelectorAsSelector).
"""

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from msgspec import Struct, field

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, GetRead, Got, Kind, KubeObject, ListRead
from truegreen.doctor.checks.capacity.filters.framework import (
    FailedRead,
    Found,
    JobPodSet,
    Unchecked,
)
from truegreen.doctor.environment import DeviceReads
from truegreen.doctor.knowledge.last_answer import LastAnswer
from truegreen.doctor.knowledge.training import training_owner
from truegreen.kubectl import Kubectl

HOSTNAME = "kubernetes.io/hostname"


_DOMAIN_WORDS = {
    HOSTNAME: "machine",
    "topology.kubernetes.io/zone": "zone",
    "topology.kubernetes.io/region": "region",
    "failure-domain.beta.kubernetes.io/zone": "zone",
    "failure-domain.beta.kubernetes.io/region": "region",
}


_CONTROLLER_LABELS = (
    "batch.kubernetes.io/",
    "controller-uid",
    "job-name",
    "jobset.sigs.k8s.io/",
    "training.kubeflow.org/",
    "trainer.kubeflow.org/",
    "ray.io/",
    "leaderworkerset.sigs.k8s.io/",
    "apps.kubernetes.io/",
    "statefulset.kubernetes.io/",
)
"""Label keys a training controller sets on the pods it creates, some per pod (a Job's
`batch.kubernetes.io/job-completion-index`, JobSet's `jobset.sigs.k8s.io/job-index`): a rule
that selects by one the template does not carry cannot be judged from the template."""


class Selector(Struct, frozen=True):
    """A label selector as metav1.LabelSelectorAsSelector reads it: `requirements` None for a
    nil selector (matches nothing), () for an empty one (matches everything)."""

    requirements: tuple[tuple[str, str, frozenset[str]], ...] | None

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.requirements is None:
            return False
        return all(_requirement(key, op, values, labels) for key, op, values in self.requirements)

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(key for key, _, _ in self.requirements or ())


_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


def _requirement(key: str, op: str, values: frozenset[str], labels: Mapping[str, str]) -> bool:
    """One requirement (apimachinery labels/selector.go `Requirement.Matches`): NotIn and
    DoesNotExist match a pod without the key."""
    if op == "In":
        return key in labels and str(labels[key]) in values
    if op == "NotIn":
        return key not in labels or str(labels[key]) not in values
    if op == "Exists":
        return key in labels
    return key not in labels


def selector_of(value: object) -> Selector | None:
    """The selector `value` states; None when it is not one doctor can read (an operator the
    API does not define)."""
    if value is None:
        return Selector(None)
    selector = o.mapping(value)
    requirements = [
        (str(key), "In", frozenset({str(label)}))
        for key, label in o.mapping(selector.get("matchLabels")).items()
    ]
    for expression in (o.mapping(e) for e in o.sequence(selector.get("matchExpressions"))):
        operator = str(expression.get("operator"))
        if operator not in _OPERATORS:
            return None
        values = frozenset(str(v) for v in o.sequence(expression.get("values")))
        requirements.append((str(expression.get("key")), operator, values))
    return Selector(tuple(requirements))


def with_label_keys(
    selector: Selector, term: Mapping[str, Any], labels: Mapping[str, str]
) -> Selector:
    """`matchLabelKeys` (and affinity's `mismatchLabelKeys`) merged into the selector with the
    pod's own values; a key the pod does not carry is ignored (podtopologyspread/common.go
    `filterTopologySpreadConstraints`; the API server merges affinity's at creation)."""
    if selector.requirements is None:
        return selector
    added = [
        (str(k), "In", frozenset({str(labels[k])}))
        for k in o.sequence(term.get("matchLabelKeys"))
        if k in labels
    ]
    added += [
        (str(k), "NotIn", frozenset({str(labels[k])}))
        for k in o.sequence(term.get("mismatchLabelKeys"))
        if k in labels
    ]
    return Selector((*selector.requirements, *added)) if added else selector


def label_keys(term: Mapping[str, Any]) -> frozenset[str]:
    """The keys a term's `matchLabelKeys` and `mismatchLabelKeys` name."""
    return frozenset(
        str(k) for f in ("matchLabelKeys", "mismatchLabelKeys") for k in o.sequence(term.get(f))
    )


def per_pod_keys(keys: Iterable[str], labels: Mapping[str, str]) -> list[str]:
    """Of the keys a rule selects by, those the pod set's controller sets on each pod and the
    template does not carry: the pods' real labels are not known."""
    return sorted(k for k in set(keys) if k not in labels and k.startswith(_CONTROLLER_LABELS))


def domain_words(key: str, many: bool = False) -> str:
    """A topology key in plain words: `machine`, `zone`, `'rack' group of machines`; `many`:
    `machines`, `zones`, `'rack' groups of machines`."""
    if key in _DOMAIN_WORDS:
        return _DOMAIN_WORDS[key] + ("s" if many else "")
    return f"'{key}' {'groups' if many else 'group'} of machines"


class Placed(Struct, frozen=True):
    """A pod already on a machine, as the rules read it."""

    name: str
    machine: str
    labels: Mapping[str, str]
    spec: Mapping[str, Any]
    terminating: bool
    job: str | None = None
    """The training job it belongs to; None for a pod of no training job."""
    uid: str = ""
    """Its `metadata.uid`: a device claim's reservation names the pod by it."""
    namespace: str = ""
    priority: int = 0
    """Its `spec.priority` (0 when none): preemption stops only pods of a lower one."""

    def named(self, namespace: str) -> str:
        """Its name, with its namespace where that is not `namespace`."""
        return self.name if self.namespace in ("", namespace) else f"{self.namespace}/{self.name}"


class Cycle(Struct, frozen=True):
    """What every filter reads: the job's pod sets to place, and the cluster as read."""

    sets: tuple[JobPodSet, ...]
    namespace: str
    namespace_labels: Mapping[str, str] | None
    nodes: tuple[KubeObject, ...]
    labels: Mapping[str, Mapping[str, str]]
    """Each machine's labels."""
    placed: tuple[Placed, ...] | None
    """This namespace's pods on a machine (None: the list could not be read)."""
    claims: Mapping[str, GetRead]
    """The claims the environment mounts, by name."""
    volumes: Mapping[str, GetRead]
    """The volumes the job's bound claims are bound to, by name."""
    drivers: Mapping[str, GetRead]
    """The CSIDrivers of the volumes that ask for them, by name."""
    devices: DeviceReads | None
    kubectl: Kubectl
    own: frozenset[str] = frozenset()
    """The judged job's pods already placed while it waits for the rest of its pods."""
    storage_types: Mapping[str, GetRead] = field(default_factory=dict)
    """The StorageClasses of the claims not bound yet, by name."""
    made_volumes: ListRead | None = None
    """Every PersistentVolume, listed only while a claim not bound yet may bind one (doctor/
    reads/gather.py `free_volumes_matter`); None when not listed."""
    elsewhere: tuple[Placed, ...] | None = ()
    """Other namespaces' pods on a machine that hold a host port or carry required pod
    anti-affinity, from the capacity fold (None: they were not read)."""

    def on_machines(self) -> tuple[Placed, ...]:
        """Every pod read on a machine: this namespace's and, of the others, those the fold
        keeps for NodePorts and InterPodAffinity."""
        return (*(self.placed or ()), *(self.elsewhere or ()))

    def values(self, key: str) -> dict[str, str]:
        """(machine → its value of `key`) for the machines that have the key."""
        return {m: str(labels[key]) for m, labels in self.labels.items() if key in labels}


machine_labels = LastAnswer(
    lambda nodes: MappingProxyType({o.name_of(n): o.labels_of(n) for n in nodes})
)
"""Each machine's labels, for the last machine list (doctor/knowledge/last_answer.py): the
namespaces of
a run over many read the same machines."""


def placed_pod(pod: KubeObject) -> Placed:
    return Placed(
        o.name_of(pod),
        o.node_name(pod),
        o.labels_of(pod),
        o.pod_spec(pod),
        o.is_terminating(pod),
        training_owner(pod),
        o.uid_of(pod),
        o.namespace_of(pod),
        o.integer(o.pod_spec(pod).get("priority")),
    )


class Term(Struct, frozen=True):
    """A required pod (anti-)affinity term, parsed for the pod it belongs to."""

    selector: Selector
    key: str
    namespaces: frozenset[str]
    namespace_selector: Selector | None
    """None when the term states none."""
    label_keys: frozenset[str] = frozenset()
    """The keys of its `matchLabelKeys` and `mismatchLabelKeys` (merged into `selector`)."""

    def covers(self, namespace: str, labels: Mapping[str, str] | None) -> bool | None:
        """Whether the term applies to pods of `namespace` (None: its labels, needed, are not
        known). schedutil `GetNamespacesFromPodAffinityTerm`, framework `AffinityTerm.Matches`."""
        if namespace in self.namespaces:
            return True
        if self.namespace_selector is None:
            return False
        if self.namespace_selector.requirements == ():
            return True  # `namespaceSelector: {}`: every namespace, whatever its labels
        if labels is None:
            return None
        return self.namespace_selector.matches(labels)

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector.matches(labels)


def terms_of(
    spec: Mapping[str, Any], kind: str, namespace: str, labels: Mapping[str, str]
) -> tuple[list[Term], list[Mapping[str, Any]]]:
    """The required terms of `kind` (`podAffinity`, `podAntiAffinity`) of a pod of `namespace`
    with `labels`, and the raw terms doctor cannot read."""
    rules = o.mapping(o.mapping(spec.get("affinity")).get(kind))
    parsed: list[Term] = []
    unread: list[Mapping[str, Any]] = []
    for term in (
        o.mapping(t)
        for t in o.sequence(rules.get("requiredDuringSchedulingIgnoredDuringExecution"))
    ):
        selector = selector_of(term.get("labelSelector"))
        has_selector = "namespaceSelector" in term and term.get("namespaceSelector") is not None
        namespace_selector = selector_of(term.get("namespaceSelector")) if has_selector else None
        key = str(term.get("topologyKey") or "")
        if selector is None or (has_selector and namespace_selector is None) or not key:
            unread.append(term)
            continue
        listed = frozenset(str(n) for n in o.sequence(term.get("namespaces")))
        namespaces = listed or (frozenset() if has_selector else frozenset({namespace}))
        parsed.append(
            Term(
                with_label_keys(selector, term, labels),
                key,
                namespaces,
                namespace_selector,
                label_keys(term),
            )
        )
    return parsed, unread


def own_namespace_only(term: Term, namespace: str) -> bool:
    """The term looks at this namespace's pods alone (the default): the only pods doctor reads."""
    return term.namespace_selector is None and term.namespaces == frozenset({namespace})


def term_detail(kind: str, group: str, term: Term) -> str:
    return (
        f"{group}: required {kind} on {term.key} with pods matching {_selector_text(term.selector)}"
    )


def _selector_text(selector: Selector) -> str:
    if selector.requirements is None:
        return "nothing"
    if not selector.requirements:
        return "everything"
    return ", ".join(
        f"{key} {op} ({','.join(sorted(values))})" if values else f"{key} {op}"
        for key, op, values in selector.requirements
    )


def unread_term(rule: str, group: str, kind: str) -> Unchecked:
    return Unchecked(
        rule,
        "the rule states something doctor can't read (a way of choosing programs or a "
        "grouping it doesn't know)",
        "Check the training job's settings for that rule",
        f"{group}: a required {kind} term doctor cannot parse",
    )


def per_pod(rule: str, group: str, kind: str, keys: Sequence[str]) -> Unchecked:
    return Unchecked(
        rule,
        "it selects programs by marks their controller gives each one, which the job's "
        "template doesn't show",
        "Check the programs the job has made, once it runs, with their marks",
        f"{group}: a required {kind} term selects by {', '.join(keys)}, set per pod by the "
        "controller",
    )


def label_query(selector: Selector) -> str:
    parts = []
    for key, op, values in selector.requirements or ():
        joined = ",".join(sorted(values))
        parts.append(
            f"{key} in ({joined})"
            if op == "In"
            else f"{key} notin ({joined})"
            if op == "NotIn"
            else key
            if op == "Exists"
            else f"!{key}"
        )
    return ",".join(parts)


def matching_placed(term: Term, cluster: Cycle) -> list[Placed]:
    """The namespace's pods on a machine that the term's selector matches."""
    return [
        p for p in cluster.placed or () if p.machine in cluster.labels and term.matches(p.labels)
    ]


def users_of(claim: str, cluster: Cycle) -> list[Placed]:
    """The namespace's pods on a machine that mount `claim`."""
    return [p for p in cluster.placed or () if claim in o.claim_names(p.spec)]


def bound_volume(claim: KubeObject, volumes: Mapping[str, GetRead]) -> Got | CantRead | None:
    """The PersistentVolume a bound claim is bound to; None while it is not bound (a claim
    waiting for its first consumer is not a constraint yet) or was not read."""
    name = str(o.mapping(claim.get("spec")).get("volumeName") or "")
    if o.mapping(claim.get("status")).get("phase") != "Bound" or not name:
        return None
    return volumes.get(name)


class ClaimUse(Struct, frozen=True):
    """A claim the job's pods mount, read, with the volume it is bound to."""

    claim: str
    sets: tuple[JobPodSet, ...]
    """The pod sets that mount it."""
    obj: KubeObject
    modes: frozenset[str]
    """The claim's access modes."""
    volume: Got | CantRead | None
    """Its volume; a CantRead only when the volume is measured absent."""


def claim_uses(cycle: Cycle, found: Found) -> list[ClaimUse]:
    """Each claim the job's pods mount that could be read, with its volume; a read that failed
    goes to `found` (a missing claim is the storage check's finding)."""
    users: dict[str, list[JobPodSet]] = {}
    for pod_set in cycle.sets:
        for claim in dict.fromkeys(o.claim_names(pod_set.spec)):
            users.setdefault(claim, []).append(pod_set)
    uses = []
    for claim, sets_using in users.items():
        read = cycle.claims.get(claim)
        if read is None:
            continue
        if isinstance(read, CantRead):
            if not read.is_measurement:
                found.fail(FailedRead(Kind.PERSISTENT_VOLUME_CLAIM, read))
            continue
        spec = o.mapping(read.obj.get("spec"))
        modes = frozenset(str(m) for m in o.sequence(spec.get("accessModes")))
        volume = bound_volume(read.obj, cycle.volumes)
        if isinstance(volume, CantRead) and not volume.is_measurement:
            found.fail(FailedRead(Kind.PERSISTENT_VOLUME, volume))
            continue
        uses.append(ClaimUse(claim, tuple(sets_using), read.obj, modes, volume))
    return uses
