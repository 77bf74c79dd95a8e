"""PodTopologySpread with `whenUnsatisfiable: DoNotSchedule`
(pkg/scheduler/framework/plugins/podtopologyspread/filtering.go, common.go): `maxSkew`,
`minDomains`, `matchLabelKeys`, the node inclusion policies (`nodeAffinityPolicy` Honor and
`nodeTaintsPolicy` Ignore by default).
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.checks.capacity.filters.cycle import (
    Cycle,
    domain_words,
    label_keys,
    per_pod,
    per_pod_keys,
    selector_of,
    unread_term,
    with_label_keys,
)
from truegreen.doctor.checks.capacity.filters.framework import (
    Exclusion,
    Found,
    JobPodSet,
)
from truegreen.doctor.checks.capacity.placement import Spread
from truegreen.doctor.knowledge.fit import matches_node_selector, tolerates


def _spread(pod_set: JobPodSet, sets: Sequence[JobPodSet], cluster: Cycle, found: Found) -> None:
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
        selector = selector_of(constraint.get("labelSelector"))
        skew = o.integer(constraint.get("maxSkew"))
        if selector is None or not key or skew < 1:
            found.uncheck(unread_term(rule, pod_set.name, "topology spread"))
            continue
        marks = per_pod_keys(selector.keys | label_keys(constraint), pod_set.labels)
        if marks:
            found.uncheck(per_pod(rule, pod_set.name, "topology spread", marks))
            continue
        selector = with_label_keys(selector, constraint, pod_set.labels)
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
        if selector.requirements is None:
            continue  # a nil selector counts nothing (labels.Nothing()): the skew never grows
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


NAME: Final = "PodTopologySpread"
READS_PODS: Final = True


def filter(cycle: Cycle, found: Found) -> None:
    """Each pod set's topology spread constraints."""
    for pod_set in cycle.sets:
        _spread(pod_set, cycle.sets, cycle, found)
