"""kube-scheduler's filters between a training job's pods, the pods already running, its volumes
and its devices, as the constraints its placement must meet.

Pure: a function of the job's pod sets and what was read. Each filter is either evaluated, or
named in an `Unchecked` that says which rule could not be and why (a read that failed, a field
doctor does not understand, pods of other namespaces it would need); none is passed silently.

- Required inter-pod affinity and anti-affinity (pkg/scheduler/framework/plugins/
  interpodaffinity/filtering.go): the incoming pod's terms against the pods already placed, and
  the placed pods' anti-affinity terms against it; a pod that matches its own affinity terms
  may start a domain while no pod matches them anywhere (`satisfyPodAffinity`).
- Topology spread with `whenUnsatisfiable: DoNotSchedule` (podtopologyspread/filtering.go,
  common.go): `maxSkew`, `minDomains`, `matchLabelKeys`, the node inclusion policies
  (`nodeAffinityPolicy` Honor and `nodeTaintsPolicy` Ignore by default).
- A bound claim's PersistentVolume node affinity (volumebinding/binder.go `checkBoundClaims`,
  component-helpers/storage/volume `CheckNodeAffinity`: the machine's labels only).
- ReadWriteOncePod claims in use by another pod (volumerestrictions/volume_restrictions.go).
- ReadWriteOnce volumes attached to another machine: not a scheduler filter but the
  attach-detach controller's Multi-Attach refusal (pkg/controller/volume/attachdetach, pkg/
  volume/util `IsMultiAttachAllowed`): the pods are placed and then hang, so it is inferred.
- Devices of dynamic resource allocation: doctor/checks/capacity/filters/dynamic_resources.py.
"""

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, GetRead, Got, Kind, KubeObject, ListRead
from truegreen.doctor.checks.capacity.filters.dynamic_resources import (
    DeviceRoom,
    device_rules,
)
from truegreen.doctor.checks.capacity.filters.framework import (
    Exclusion,
    FailedRead,
    Found,
    JobPodSet,
    Unchecked,
)
from truegreen.doctor.checks.capacity.placement import Apart, Near, Rule, Spread
from truegreen.doctor.environment import DeviceReads
from truegreen.doctor.knowledge.fit import matches_node_selector, tolerates
from truegreen.doctor.knowledge.last_answer import LastAnswer
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
_SHARED_ACCESS = frozenset({"ReadWriteMany", "ReadOnlyMany"})
_NOT_ATTACHED = ("nfs", "hostPath", "local", "cephfs", "glusterfs")
"""Volume sources the attach-detach controller never attaches (no attachable plugin)."""


class Rules(Struct, frozen=True):
    """What the scheduler's filters ask of the job's placement."""

    exclusions: tuple[Exclusion, ...] = ()
    rules: tuple[tuple[str, tuple[Rule, ...]], ...] = ()
    """Per pod set, the rules between pods it carries."""
    todos: tuple[tuple[str, str], ...] = ()
    """Per rule (by its words), the step that makes room for it."""
    unchecked: tuple[Unchecked, ...] = ()
    failed: tuple[FailedRead, ...] = ()
    details: tuple[str, ...] = ()
    devices: DeviceRoom = DeviceRoom()
    """The devices each pod set asks for and each machine has."""

    def rules_of(self, group: str) -> tuple[Rule, ...]:
        """The rules pod set `group` carries."""
        return dict(self.rules).get(group, ())

    def allowed(self, group: str, machines: Iterable[str]) -> list[str]:
        """`machines` less the ones these rules take away from `group`."""
        refused = {m for e in self.exclusions if e.group == group for m in e.machines}
        return [m for m in machines if m not in refused]

    def todo(self, words: str) -> str:
        """The step that makes room under the rule whose words are `words`."""
        return dict(self.todos).get(words, "")


class _Selector(Struct, frozen=True):
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


def _selector(value: object) -> _Selector | None:
    """The selector `value` states; None when it is not one doctor can read (an operator the
    API does not define)."""
    if value is None:
        return _Selector(None)
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
    return _Selector(tuple(requirements))


def _with_label_keys(
    selector: _Selector, term: Mapping[str, Any], labels: Mapping[str, str]
) -> _Selector:
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
    return _Selector((*selector.requirements, *added)) if added else selector


def _label_keys(term: Mapping[str, Any]) -> frozenset[str]:
    """The keys a term's `matchLabelKeys` and `mismatchLabelKeys` name."""
    return frozenset(
        str(k) for f in ("matchLabelKeys", "mismatchLabelKeys") for k in o.sequence(term.get(f))
    )


def _per_pod_keys(keys: Iterable[str], labels: Mapping[str, str]) -> list[str]:
    """Of the keys a rule selects by, those the pod set's controller sets on each pod and the
    template does not carry: the pods' real labels are not known."""
    return sorted(k for k in set(keys) if k not in labels and k.startswith(_CONTROLLER_LABELS))


def domain_words(key: str, many: bool = False) -> str:
    """A topology key in plain words: `machine`, `zone`, `'rack' group of machines`; `many`:
    `machines`, `zones`, `'rack' groups of machines`."""
    if key in _DOMAIN_WORDS:
        return _DOMAIN_WORDS[key] + ("s" if many else "")
    return f"'{key}' {'groups' if many else 'group'} of machines"


class _Placed(Struct, frozen=True):
    """A pod already on a machine, as the rules read it."""

    name: str
    machine: str
    labels: Mapping[str, str]
    spec: Mapping[str, Any]
    terminating: bool


class _Cluster(Struct, frozen=True):
    """What every rule reads of the cluster."""

    namespace: str
    namespace_labels: Mapping[str, str] | None
    nodes: tuple[KubeObject, ...]
    labels: Mapping[str, Mapping[str, str]]
    """Each machine's labels."""
    placed: tuple[_Placed, ...] | None
    """This namespace's pods on a machine (None: the list could not be read)."""
    kubectl: Kubectl

    def values(self, key: str) -> dict[str, str]:
        """(machine → its value of `key`) for the machines that have the key."""
        return {m: str(labels[key]) for m, labels in self.labels.items() if key in labels}


_labels = LastAnswer(lambda nodes: MappingProxyType({o.name_of(n): o.labels_of(n) for n in nodes}))
"""Each machine's labels, for the last machine list (doctor/knowledge/last_answer.py): the
namespaces of
a run over many read the same machines."""


def scheduling_rules(
    sets: Sequence[JobPodSet],
    *,
    namespace: str,
    namespace_labels: Mapping[str, str] | None,
    nodes: Sequence[KubeObject],
    pods: ListRead,
    claims: Mapping[str, GetRead],
    volumes: Mapping[str, GetRead],
    devices: DeviceReads | None,
    kubectl: Kubectl,
) -> Rules:
    """The constraints the scheduler's filters put on placing `sets` (the judged job's pods
    still to place) in `namespace`, from the machines, the namespace's pods, the claims and
    their volumes, and the device objects."""
    placed = (
        tuple(_placed(p) for p in pods.items if o.node_name(p) and not o.is_terminated(p))
        if not isinstance(pods, CantRead)
        else None
    )
    cluster = _Cluster(namespace, namespace_labels, tuple(nodes), _labels(nodes), placed, kubectl)
    found = Found()
    if placed is None and isinstance(pods, CantRead):
        # The namespace's pods decide the pod rules and who uses a volume, and any of them may
        # hold a rule that keeps the job away: none of it can be judged.
        found.fail(FailedRead(Kind.POD, pods))
    else:
        for pod_set in sets:
            _affinity(pod_set, sets, cluster, found)
            _anti_affinity(pod_set, sets, cluster, found)
            _existing_anti_affinity(pod_set, cluster, found)
            _spread(pod_set, sets, cluster, found)
        _volumes(sets, cluster, claims, volumes, found)
    room = device_rules(sets, namespace, nodes, devices, kubectl, found)
    return Rules(
        tuple(found.exclusions),
        tuple((g, tuple(r)) for g, r in found.rules.items()),
        tuple(found.todos.items()),
        tuple(found.unchecked),
        tuple(found.failed),
        tuple(found.details),
        room,
    )


def _placed(pod: KubeObject) -> _Placed:
    return _Placed(
        o.name_of(pod),
        o.node_name(pod),
        o.labels_of(pod),
        o.pod_spec(pod),
        o.is_terminating(pod),
    )


class _Term(Struct, frozen=True):
    """A required pod (anti-)affinity term, parsed for the pod it belongs to."""

    selector: _Selector
    key: str
    namespaces: frozenset[str]
    namespace_selector: _Selector | None
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
        if labels is None:
            return None
        return self.namespace_selector.matches(labels)

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector.matches(labels)


def _terms(
    spec: Mapping[str, Any], kind: str, namespace: str, labels: Mapping[str, str]
) -> tuple[list[_Term], list[Mapping[str, Any]]]:
    """The required terms of `kind` (`podAffinity`, `podAntiAffinity`) of a pod of `namespace`
    with `labels`, and the raw terms doctor cannot read."""
    rules = o.mapping(o.mapping(spec.get("affinity")).get(kind))
    parsed: list[_Term] = []
    unread: list[Mapping[str, Any]] = []
    for term in (
        o.mapping(t)
        for t in o.sequence(rules.get("requiredDuringSchedulingIgnoredDuringExecution"))
    ):
        selector = _selector(term.get("labelSelector"))
        has_selector = "namespaceSelector" in term and term.get("namespaceSelector") is not None
        namespace_selector = _selector(term.get("namespaceSelector")) if has_selector else None
        key = str(term.get("topologyKey") or "")
        if selector is None or (has_selector and namespace_selector is None) or not key:
            unread.append(term)
            continue
        listed = frozenset(str(n) for n in o.sequence(term.get("namespaces")))
        namespaces = listed or (frozenset() if has_selector else frozenset({namespace}))
        parsed.append(
            _Term(
                _with_label_keys(selector, term, labels),
                key,
                namespaces,
                namespace_selector,
                _label_keys(term),
            )
        )
    return parsed, unread


def _own_namespace_only(term: _Term, namespace: str) -> bool:
    """The term looks at this namespace's pods alone (the default): the only pods doctor reads."""
    return term.namespace_selector is None and term.namespaces == frozenset({namespace})


def _term_detail(kind: str, group: str, term: _Term) -> str:
    return (
        f"{group}: required {kind} on {term.key} with pods matching {_selector_text(term.selector)}"
    )


def _selector_text(selector: _Selector) -> str:
    if selector.requirements is None:
        return "nothing"
    if not selector.requirements:
        return "everything"
    return ", ".join(
        f"{key} {op} ({','.join(sorted(values))})" if values else f"{key} {op}"
        for key, op, values in selector.requirements
    )


_AFFINITY_RULE = "the training job's rule about which programs it must run beside"
_ANTI_RULE = "the training job's rule about which programs it must stay apart from"
_EXISTING_RULE = "the rules of running programs about what may run beside them"


def _unread_term(rule: str, group: str, kind: str) -> Unchecked:
    return Unchecked(
        rule,
        "the rule states something doctor can't read (a selector or grouping it doesn't know)",
        "Check the training job's settings for that rule",
        f"{group}: a required {kind} term doctor cannot parse",
    )


def _elsewhere(rule: str, group: str, kind: str, term: _Term, cluster: _Cluster) -> Unchecked:
    spaces = sorted(term.namespaces - {cluster.namespace})
    return Unchecked(
        rule,
        "it looks at programs of other spaces"
        + (f" ({', '.join(repr(s) for s in spaces)})" if spaces else "")
        + ", which doctor doesn't read",
        "See which programs it selects with "
        + cluster.kubectl.cluster(
            "get", "pods", "--all-namespaces", "-o", "wide", "-l", _label_query(term.selector)
        ),
        f"{group}: required {kind} term with namespaces {sorted(term.namespaces)} or a "
        "namespaceSelector: pods of other namespaces are not read",
    )


def _per_pod(rule: str, group: str, kind: str, keys: Sequence[str]) -> Unchecked:
    return Unchecked(
        rule,
        "it selects programs by marks their controller gives each one, which the job's "
        "template doesn't show",
        "Check the programs the job has made, once it runs, with their marks",
        f"{group}: a required {kind} term selects by {', '.join(keys)}, set per pod by the "
        "controller",
    )


def _label_query(selector: _Selector) -> str:
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


def _matching_placed(term: _Term, cluster: _Cluster) -> list[_Placed]:
    """The namespace's pods on a machine that the term's selector matches."""
    return [
        p for p in cluster.placed or () if p.machine in cluster.labels and term.matches(p.labels)
    ]


def _anti_affinity(
    pod_set: JobPodSet, sets: Sequence[JobPodSet], cluster: _Cluster, found: Found
) -> None:
    """The set's required anti-affinity: no domain that holds a matching pod (placed already, or
    placed with it), `satisfyPodAntiAffinity`; a machine without the key holds none."""
    terms, unread = _terms(pod_set.spec, "podAntiAffinity", cluster.namespace, pod_set.labels)
    if unread:
        found.uncheck(_unread_term(_ANTI_RULE, pod_set.name, "pod anti-affinity"))
    for term in terms:
        if not _own_namespace_only(term, cluster.namespace):
            found.uncheck(_elsewhere(_ANTI_RULE, pod_set.name, "pod anti-affinity", term, cluster))
            continue
        keys = _per_pod_keys(term.selector.keys | term.label_keys, pod_set.labels)
        if keys:
            found.uncheck(_per_pod(_ANTI_RULE, pod_set.name, "pod anti-affinity", keys))
            continue
        values = cluster.values(term.key)
        place = domain_words(term.key)
        taken = {values[p.machine] for p in _matching_placed(term, cluster) if p.machine in values}
        found.exclude(
            Exclusion(
                pod_set.name,
                tuple(m for m, v in values.items() if v in taken),
                f"already running a program it may not share a {place} with",
                f"stop what it must stay apart from when it is done, or let it share a {place} "
                "in the training job's settings",
                _term_detail("pod anti-affinity", pod_set.name, term)
                + f": {', '.join(sorted(taken))} already hold one",
            )
        )
        for other in sets:
            if not term.matches(other.labels):
                continue
            words = (
                f"may not share a {place} with another of its programs"
                if other.name == pod_set.name
                else f"may not share a {place} with the programs of '{other.name}'"
            )
            found.rule(
                pod_set.name,
                Apart(pod_set.name, other.name, tuple(values.items()), words),
                f"add {domain_words(term.key, many=True)} with room, one for each program it "
                "keeps apart, or let them "
                f"share a {place} in the training job's settings",
                _term_detail("pod anti-affinity", pod_set.name, term) + f": against {other.name}",
            )


def _existing_anti_affinity(pod_set: JobPodSet, cluster: _Cluster, found: Found) -> None:
    """The placed pods' own required anti-affinity against the set's pods
    (`satisfyExistingPodsAntiAffinity`); other namespaces' pods are not read."""
    refused: dict[str, list[str]] = {}
    for placed in cluster.placed or ():
        terms, unread = _terms(placed.spec, "podAntiAffinity", cluster.namespace, placed.labels)
        if unread:
            found.uncheck(_unread_term(_EXISTING_RULE, placed.name, "pod anti-affinity"))
        for term in terms:
            covered = term.covers(cluster.namespace, cluster.namespace_labels)
            if covered is None:
                found.uncheck(
                    Unchecked(
                        _EXISTING_RULE,
                        "one of them selects spaces by their marks, and this space's could "
                        "not be read",
                        "Let doctor read this space, then run again",
                        f"pod {placed.name}: anti-affinity namespaceSelector; the namespace "
                        "was not read",
                    )
                )
                continue
            if not covered:
                continue
            keys = _per_pod_keys(term.selector.keys, pod_set.labels)
            if keys:
                found.uncheck(_per_pod(_EXISTING_RULE, placed.name, "pod anti-affinity", keys))
                continue
            if not term.matches(pod_set.labels):
                continue
            value = cluster.labels.get(placed.machine, {}).get(term.key)
            if value is None:
                continue
            for machine, other in cluster.values(term.key).items():
                if other == value:
                    refused.setdefault(machine, []).append(placed.name)
    if refused:
        holders = sorted({p for names in refused.values() for p in names})
        found.exclude(
            Exclusion(
                pod_set.name,
                tuple(sorted(refused)),
                "running a program that won't share its place with the job's programs",
                "stop " + ", ".join(f"'{h}'" for h in holders) + " when it is done, or change "
                "its rule about what may run beside it",
                f"{pod_set.name}: the required pod anti-affinity of "
                f"{', '.join(holders)} matches it: {', '.join(sorted(refused))} refused",
            )
        )


def _affinity(
    pod_set: JobPodSet, sets: Sequence[JobPodSet], cluster: _Cluster, found: Found
) -> None:
    """The set's required pod affinity: every term's key on the machine, and every term's
    domain holding a pod that matches all of them (`satisfyPodAffinity`)."""
    terms, unread = _terms(pod_set.spec, "podAffinity", cluster.namespace, pod_set.labels)
    if unread:
        found.uncheck(_unread_term(_AFFINITY_RULE, pod_set.name, "pod affinity"))
        return
    if not terms:
        return
    for term in terms:
        if not _own_namespace_only(term, cluster.namespace):
            found.uncheck(_elsewhere(_AFFINITY_RULE, pod_set.name, "pod affinity", term, cluster))
            return
        keys = _per_pod_keys(term.selector.keys | term.label_keys, pod_set.labels)
        if keys:
            found.uncheck(_per_pod(_AFFINITY_RULE, pod_set.name, "pod affinity", keys))
            return
    values = [cluster.values(t.key) for t in terms]
    lacking = sorted(m for m in cluster.labels if any(m not in v for v in values))
    places = sorted({domain_words(t.key) for t in terms})
    detail = "; ".join(_term_detail("pod affinity", pod_set.name, t) for t in terms)
    found.exclude(
        Exclusion(
            pod_set.name,
            tuple(lacking),
            f"in no {' or '.join(places)}, which its rules place programs by",
            "give those machines their place, or change the training job's rule",
            detail + f": {', '.join(lacking)} lack the key",
        )
    )
    matching = [
        p
        for p in cluster.placed or ()
        if p.machine in cluster.labels and all(t.matches(p.labels) for t in terms)
    ]
    present = [frozenset(v[p.machine] for p in matching if p.machine in v) for v in values]
    members = frozenset(s.name for s in sets if all(t.matches(s.labels) for t in terms))
    may_start = pod_set.name in members and not any(present)
    place = " and ".join(places)
    if not any(present) and not members:
        found.exclude(
            Exclusion(
                pod_set.name,
                tuple(sorted(cluster.labels)),
                "none of the programs runs that its rules require it to run beside",
                "start what it must run beside first, or change the training job's rule",
                detail + ": no pod matches",
                everywhere=True,
            )
        )
        return
    who = "its other programs" if members == {pod_set.name} else "the programs it must run beside"
    words = f"must run in the same {place} as {who}"
    found.rule(
        pod_set.name,
        Near(
            pod_set.name,
            tuple((tuple(v.items()), p) for v, p in zip(values, present, strict=True)),
            members,
            may_start,
            words,
        ),
        f"free room in the {place} where {who} run, or change the training job's rule",
        detail + f": domains {sorted(set().union(*present))}, with {sorted(members)}",
    )


def _spread(pod_set: JobPodSet, sets: Sequence[JobPodSet], cluster: _Cluster, found: Found) -> None:
    """The set's topology spread constraints with `whenUnsatisfiable: DoNotSchedule`."""
    constraints = [
        o.mapping(c)
        for c in o.sequence(pod_set.spec.get("topologySpreadConstraints"))
        if o.mapping(c).get("whenUnsatisfiable") == "DoNotSchedule"
    ]
    if not constraints:
        return  # most jobs: no machine to count
    keys = [str(c.get("topologyKey") or "") for c in constraints]
    # Only machines with every constraint's key are counted (`nodeLabelsMatchSpreadConstraints`).
    counted_machines = [n for n in cluster.nodes if all(k in o.labels_of(n) for k in keys)]
    for constraint, key in zip(constraints, keys, strict=True):
        rule = "the training job's rule for spreading its programs over " + domain_words(
            key, many=True
        )
        selector = _selector(constraint.get("labelSelector"))
        skew = o.integer(constraint.get("maxSkew"))
        if selector is None or not key or skew < 1:
            found.uncheck(_unread_term(rule, pod_set.name, "topology spread"))
            continue
        per_pod = _per_pod_keys(selector.keys | _label_keys(constraint), pod_set.labels)
        if per_pod:
            found.uncheck(_per_pod(rule, pod_set.name, "topology spread", per_pod))
            continue
        selector = _with_label_keys(selector, constraint, pod_set.labels)
        values = cluster.values(key)
        place = domain_words(key)
        found.exclude(
            Exclusion(
                pod_set.name,
                tuple(sorted(m for m in cluster.labels if m not in values)),
                f"in no {place}, which its rules spread programs over",
                f"give those machines their {place}, or change the training job's rule",
                f"{pod_set.name}: topology spread on {key}: machines without the key are refused",
            )
        )
        if not selector.requirements:
            continue  # nothing counted (an empty or nil selector): the skew never grows
        eligible = [n for n in counted_machines if _included(n, constraint, pod_set.spec)]
        counts = {str(o.labels_of(n)[key]): 0 for n in eligible}
        eligible_names = {o.name_of(n) for n in eligible}
        for pod in cluster.placed or ():
            # Terminating pods are not counted (common.go `countPodsMatchSelector`, #87621).
            if (
                pod.machine in eligible_names
                and not pod.terminating
                and selector.matches(pod.labels)
            ):
                counts[values[pod.machine]] += 1
        members = frozenset(s.name for s in sets if selector.matches(s.labels))
        min_domains = max(o.integer(constraint.get("minDomains"), 1), 1)
        words = (
            f"would put more than {skew} program{'s' if skew != 1 else ''} in one {place} beyond "
            f"the {place} with the fewest"
        )
        found.rule(
            pod_set.name,
            Spread(
                pod_set.name,
                tuple(values.items()),
                frozenset(eligible_names),
                tuple(sorted(counts.items())),
                skew,
                min_domains,
                members,
                words,
            ),
            f"free room in the {domain_words(key, many=True)} that hold the fewest of its "
            "programs, or allow a larger "
            "difference in the training job's settings",
            f"{pod_set.name}: topology spread on {key}, maxSkew {skew}, minDomains {min_domains}:"
            f" counts {dict(sorted(counts.items()))}",
        )


def _included(node: KubeObject, constraint: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    """Whether the constraint counts `node` (common.go `matchNodeInclusionPolicies`):
    `nodeAffinityPolicy` Honor (the default) counts only machines the pod's node selector and
    required node affinity accept; `nodeTaintsPolicy` Honor (Ignore by default) only machines
    whose NoSchedule and NoExecute taints it tolerates."""
    if (constraint.get("nodeAffinityPolicy") or "Honor") == "Honor" and not _affinity_matches(
        node, spec
    ):
        return False
    if (constraint.get("nodeTaintsPolicy") or "Ignore") == "Honor":
        tolerations = [o.mapping(t) for t in o.sequence(spec.get("tolerations"))]
        for taint in (o.mapping(t) for t in o.sequence(o.mapping(node.get("spec")).get("taints"))):
            if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(
                tolerations, taint
            ):
                return False
    return True


def _affinity_matches(node: KubeObject, spec: Mapping[str, Any]) -> bool:
    """The pod's node selector and required node affinity (nodeaffinity
    `GetRequiredNodeAffinity`)."""
    labels = o.labels_of(node)
    if any(labels.get(k) != v for k, v in o.mapping(spec.get("nodeSelector")).items()):
        return False
    required = o.mapping(
        o.mapping(o.mapping(spec.get("affinity")).get("nodeAffinity")).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    )
    if not required:
        return True
    terms = [o.mapping(t) for t in o.sequence(required.get("nodeSelectorTerms"))]
    return matches_node_selector(terms, node)


def _users(claim: str, cluster: _Cluster) -> list[_Placed]:
    """The namespace's pods on a machine that mount `claim`."""
    return [p for p in cluster.placed or () if claim in o.claim_names(p.spec)]


def _volumes(
    sets: Sequence[JobPodSet],
    cluster: _Cluster,
    claims: Mapping[str, GetRead],
    volumes: Mapping[str, GetRead],
    found: Found,
) -> None:
    """Where each claim the job mounts lets its pods run."""
    users: dict[str, list[JobPodSet]] = {}
    for pod_set in sets:
        for claim in dict.fromkeys(o.claim_names(pod_set.spec)):
            users.setdefault(claim, []).append(pod_set)
    for claim, sets_using in users.items():
        read = claims.get(claim)
        if read is None:
            continue
        if isinstance(read, CantRead):
            if not read.is_measurement:  # a missing claim is the storage check's finding
                found.fail(FailedRead(Kind.PERSISTENT_VOLUME_CLAIM, read))
            continue
        spec = o.mapping(read.obj.get("spec"))
        modes = frozenset(str(m) for m in o.sequence(spec.get("accessModes")))
        volume = _bound_volume(read.obj, volumes)
        if isinstance(volume, CantRead) and not volume.is_measurement:
            found.fail(FailedRead(Kind.PERSISTENT_VOLUME, volume))
            continue
        for pod_set in sets_using:
            _volume_affinity(pod_set, claim, volume, read.obj, cluster, found)
        if isinstance(volume, CantRead):
            continue  # its volume does not exist: every machine is refused already
        if "ReadWriteOncePod" in modes:
            _one_program(claim, sets_using, cluster, found)
        # Multi-Attach goes by the volume's own access modes (IsMultiAttachAllowed).
        if volume is not None:
            modes = frozenset(
                str(m) for m in o.sequence(o.mapping(volume.obj.get("spec")).get("accessModes"))
            )
        if "ReadWriteOnce" in modes and not modes & _SHARED_ACCESS and _attached(volume):
            _one_machine(claim, sets_using, cluster, found)


def _bound_volume(claim: KubeObject, volumes: Mapping[str, GetRead]) -> Got | CantRead | None:
    """The PersistentVolume a bound claim is bound to; None while it is not bound (a claim
    waiting for its first consumer is not a constraint yet) or was not read."""
    name = str(o.mapping(claim.get("spec")).get("volumeName") or "")
    if o.mapping(claim.get("status")).get("phase") != "Bound" or not name:
        return None
    return volumes.get(name)


def _volume_affinity(
    pod_set: JobPodSet,
    claim: str,
    volume: Got | CantRead | None,
    claim_obj: KubeObject,
    cluster: _Cluster,
    found: Found,
) -> None:
    """A bound claim's PersistentVolume node affinity, against each machine's labels."""
    name = str(o.mapping(claim_obj.get("spec")).get("volumeName") or "")
    if isinstance(volume, CantRead):
        # checkBoundClaims: a bound volume that is not there fails every machine.
        found.exclude(
            Exclusion(
                pod_set.name,
                tuple(sorted(cluster.labels)),
                f"its volume '{claim}' is tied to storage that doesn't exist",
                f"recreate the volume '{claim}' for the training job's data",
                f"PersistentVolumeClaim {claim}: bound to PersistentVolume {name}, not found "
                "(volumebinding: pvc(s) bound to non-existent pv(s))",
                everywhere=True,
            )
        )
        return
    if volume is None:
        return
    required = o.mapping(
        o.mapping(o.mapping(volume.obj.get("spec")).get("nodeAffinity")).get("required")
    )
    if "nodeSelectorTerms" not in required:
        return
    terms = [o.mapping(t) for t in o.sequence(required.get("nodeSelectorTerms"))]
    refused = tuple(
        sorted(
            m
            for m, labels in cluster.labels.items()
            if not matches_node_selector(terms, {"metadata": {"labels": labels}})
        )
    )
    reach = sorted(set(cluster.labels) - set(refused))
    found.exclude(
        Exclusion(
            pod_set.name,
            refused,
            f"can't reach its volume '{claim}'",
            f"run the training job where its volume '{claim}' can be used"
            + (f" ({', '.join(reach)})" if reach else "")
            + ", or keep its data on storage the job's machines can reach",
            f"PersistentVolume {name} (claim {claim}): node affinity refuses {', '.join(refused)}",
        )
    )


def _one_program(
    claim: str, sets_using: Sequence[JobPodSet], cluster: _Cluster, found: Found
) -> None:
    """A ReadWriteOncePod claim: no pod may use it while a placed pod does, and of the job's own
    pods only one at a time."""
    holders = _users(claim, cluster)
    if holders:
        for pod_set in sets_using:
            found.exclude(
                Exclusion(
                    pod_set.name,
                    tuple(sorted(cluster.labels)),
                    f"its volume '{claim}' may be used by one program at a time, and "
                    f"'{holders[0].name}' uses it",
                    f"let '{holders[0].name}' finish, or give the training job a volume of its own",
                    f"PersistentVolumeClaim {claim} is ReadWriteOncePod and used by pod "
                    f"{holders[0].name} (volumerestrictions)",
                    everywhere=True,
                )
            )
        return
    single = tuple((m, "") for m in sorted(cluster.labels))
    words = f"can't use the volume '{claim}' while another of its programs does"
    for index, pod_set in enumerate(sets_using):
        for other in sets_using[index:]:
            found.rule(
                pod_set.name,
                Apart(pod_set.name, other.name, single, words),
                f"give each program of the training job a volume of its own instead of '{claim}'",
                f"PersistentVolumeClaim {claim} is ReadWriteOncePod: one pod of "
                f"{pod_set.name}, {other.name} at a time",
            )


def _attached(volume: Got | None) -> bool:
    """Whether the attach-detach controller attaches the volume (an unread one is assumed to
    be: most single-machine volumes are disks)."""
    if volume is None:
        return True
    spec = o.mapping(volume.obj.get("spec"))
    return not any(source in spec for source in _NOT_ATTACHED)


def _one_machine(
    claim: str, sets_using: Sequence[JobPodSet], cluster: _Cluster, found: Found
) -> None:
    """A volume attached to one machine at a time: every pod that mounts it must run where it
    is attached, and all of the job's pods that mount it on one machine. Inferred: the
    scheduler places the pods, and the ones elsewhere then wait on Multi-Attach."""
    machines = sorted({p.machine for p in _users(claim, cluster)})
    if machines:
        for pod_set in sets_using:
            found.exclude(
                Exclusion(
                    pod_set.name,
                    tuple(sorted(m for m in cluster.labels if m not in machines)),
                    f"can't attach its volume '{claim}', which is attached to "
                    f"{', '.join(machines)} and can be attached to one machine at a time",
                    f"run the training job on {', '.join(machines)}, or keep its data on "
                    "storage many machines can use at once",
                    f"PersistentVolumeClaim {claim}: ReadWriteOnce, in use on "
                    f"{', '.join(machines)} (attach-detach Multi-Attach)",
                    measured=False,
                )
            )
        return
    names = frozenset(s.name for s in sets_using)
    words = (
        f"must run on the machine its other programs use the volume '{claim}' on (it can be "
        "attached to one machine at a time)"
    )
    for pod_set in sets_using:
        found.rule(
            pod_set.name,
            Near(
                pod_set.name,
                ((tuple((m, m) for m in sorted(cluster.labels)), frozenset()),),
                names,
                True,
                words,
                measured=False,
            ),
            f"make room on one machine for every program that uses '{claim}', or keep its data "
            "on storage many machines can use at once",
            f"PersistentVolumeClaim {claim}: ReadWriteOnce: its pods on one node "
            "(attach-detach Multi-Attach)",
        )
