"""InterPodAffinity (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go): the
incoming pod's required affinity and anti-affinity terms against the pods already placed, and
the placed pods' anti-affinity terms against it; a pod that matches its own affinity terms may
start a domain while no pod matches them anywhere (`satisfyPodAffinity`).

The placed pods whose anti-affinity is read are those of every namespace, as the scheduler's
`existingAntiAffinityCounts` takes them from every NodeInfo: this namespace's pods, and the
other namespaces' pods with required anti-affinity that the capacity fold keeps. The job's own
terms over other namespaces stay unchecked: the fold keeps no other pod's labels.
"""

from collections.abc import Sequence
from typing import Final

from truegreen.doctor.checks.capacity.filters.cycle import (
    Cycle,
    Term,
    domain_words,
    label_query,
    matching_placed,
    own_namespace_only,
    per_pod,
    per_pod_keys,
    term_detail,
    terms_of,
    unread_term,
)
from truegreen.doctor.checks.capacity.filters.framework import (
    NEW_SNAPSHOT,
    Blocker,
    Exclusion,
    Found,
    JobPodSet,
    Unchecked,
)
from truegreen.doctor.checks.capacity.placement import Apart, Near

_AFFINITY_RULE = "the training job's rule about which programs it must run beside"


_ANTI_RULE = "the training job's rule about which programs it must stay apart from"


_EXISTING_RULE = "the rules of running programs about what may run beside them"


def _elsewhere(rule: str, group: str, kind: str, term: Term, cluster: Cycle) -> Unchecked:
    spaces = sorted(term.namespaces - {cluster.namespace})
    return Unchecked(
        rule,
        "it looks at programs of other spaces"
        + (f" ({', '.join(repr(s) for s in spaces)})" if spaces else "")
        + ", which doctor doesn't read",
        "See which programs it selects with "
        + cluster.kubectl.cluster(
            "get", "pods", "--all-namespaces", "-o", "wide", "-l", label_query(term.selector)
        ),
        f"{group}: required {kind} term with namespaces {sorted(term.namespaces)} or a "
        "namespaceSelector: pods of other namespaces are not read",
    )


def _anti_affinity(
    pod_set: JobPodSet, sets: Sequence[JobPodSet], cluster: Cycle, found: Found
) -> None:
    """The set's required anti-affinity: no domain that holds a matching pod (placed already, or
    placed with it), `satisfyPodAntiAffinity`; a machine without the key holds none."""
    terms, unread = terms_of(pod_set.spec, "podAntiAffinity", cluster.namespace, pod_set.labels)
    if unread:
        found.uncheck(unread_term(_ANTI_RULE, pod_set.name, "pod anti-affinity"))
    for term in terms:
        if not own_namespace_only(term, cluster.namespace):
            found.uncheck(_elsewhere(_ANTI_RULE, pod_set.name, "pod anti-affinity", term, cluster))
            continue
        keys = per_pod_keys(term.selector.keys | term.label_keys, pod_set.labels)
        if keys:
            found.uncheck(per_pod(_ANTI_RULE, pod_set.name, "pod anti-affinity", keys))
            continue
        values = cluster.values(term.key)
        place = domain_words(term.key)
        matching = [p for p in matching_placed(term, cluster) if p.machine in values]
        taken = {values[p.machine] for p in matching}
        refused = tuple(m for m, v in values.items() if v in taken)
        found.exclude(
            Exclusion(
                pod_set.name,
                refused,
                f"already running a program it may not share a {place} with",
                f"stop what it must stay apart from when it is done, or let it share a {place} "
                "in the training job's settings",
                term_detail("pod anti-affinity", pod_set.name, term)
                + f": {', '.join(sorted(taken))} already hold one",
                # `satisfyPodAntiAffinity` fails as Unschedulable: preemption may remove them.
                blockers=tuple(
                    Blocker(
                        machine,
                        p.namespace or cluster.namespace,
                        p.name,
                        p.machine,
                        p.priority,
                        f"the job may not share a {place} with it",
                    )
                    for machine in refused
                    for p in matching
                    if values[p.machine] == values[machine]
                ),
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
                term_detail("pod anti-affinity", pod_set.name, term) + f": against {other.name}",
            )


def _existing_anti_affinity(pod_set: JobPodSet, cluster: Cycle, found: Found) -> None:
    """The placed pods' own required anti-affinity against the set's pods, of every namespace
    (`satisfyExistingPodsAntiAffinity`); unchecked where other namespaces' pods were not read."""
    if cluster.elsewhere is None:
        found.uncheck(
            Unchecked(
                _EXISTING_RULE,
                "the snapshot holds no programs of other spaces, whose rules may keep the job "
                "away (a snapshot made before truegreen kept them)",
                NEW_SNAPSHOT,
                f"{pod_set.name}: other namespaces' pods are not in the snapshot (its capacity "
                "fold has no rule_pods) for their required pod anti-affinity",
            )
        )
    refused: dict[str, list[str]] = {}
    blockers: list[Blocker] = []
    for placed in cluster.on_machines():
        terms, unread = terms_of(
            placed.spec, "podAntiAffinity", placed.namespace or cluster.namespace, placed.labels
        )
        if unread:
            found.uncheck(
                unread_term(_EXISTING_RULE, placed.named(cluster.namespace), "pod anti-affinity")
            )
        for term in terms:
            covered = term.covers(cluster.namespace, cluster.namespace_labels)
            if covered is None:
                found.uncheck(
                    Unchecked(
                        _EXISTING_RULE,
                        "one of them selects spaces by their marks, and this space's could "
                        "not be read",
                        "Let doctor read this space, then run again",
                        f"pod {placed.named(cluster.namespace)}: anti-affinity "
                        "namespaceSelector; the namespace was not read",
                    )
                )
                continue
            if not covered:
                continue
            keys = per_pod_keys(term.selector.keys, pod_set.labels)
            if keys:
                found.uncheck(
                    per_pod(
                        _EXISTING_RULE, placed.named(cluster.namespace), "pod anti-affinity", keys
                    )
                )
                continue
            if not term.matches(pod_set.labels):
                continue
            value = cluster.labels.get(placed.machine, {}).get(term.key)
            if value is None:
                continue
            place = domain_words(term.key)
            for machine, other in cluster.values(term.key).items():
                if other == value:
                    refused.setdefault(machine, []).append(placed.named(cluster.namespace))
                    blockers.append(
                        Blocker(
                            machine,
                            placed.namespace or cluster.namespace,
                            placed.name,
                            placed.machine,
                            placed.priority,
                            f"won't share its {place} with the job's programs",
                        )
                    )
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
                # `satisfyExistingPodsAntiAffinity` fails as Unschedulable: preemption may
                # remove them.
                blockers=tuple(dict.fromkeys(blockers)),
            )
        )


def _affinity(pod_set: JobPodSet, sets: Sequence[JobPodSet], cluster: Cycle, found: Found) -> None:
    """The set's required pod affinity: every term's key on the machine, and every term's
    domain holding a pod that matches all of them (`satisfyPodAffinity`)."""
    terms, unread = terms_of(pod_set.spec, "podAffinity", cluster.namespace, pod_set.labels)
    if unread:
        found.uncheck(unread_term(_AFFINITY_RULE, pod_set.name, "pod affinity"))
        return
    if not terms:
        return
    for term in terms:
        if not own_namespace_only(term, cluster.namespace):
            found.uncheck(_elsewhere(_AFFINITY_RULE, pod_set.name, "pod affinity", term, cluster))
            return
        keys = per_pod_keys(term.selector.keys | term.label_keys, pod_set.labels)
        if keys:
            found.uncheck(per_pod(_AFFINITY_RULE, pod_set.name, "pod affinity", keys))
            return
    values = [cluster.values(t.key) for t in terms]
    lacking = sorted(m for m in cluster.labels if any(m not in v for v in values))
    places = sorted({domain_words(t.key) for t in terms})
    detail = "; ".join(term_detail("pod affinity", pod_set.name, t) for t in terms)
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


NAME: Final = "InterPodAffinity"
READS_PODS: Final = True


def filter(cycle: Cycle, found: Found) -> None:
    """Each pod set's required pod affinity and anti-affinity, and the placed pods'
    anti-affinity against it."""
    for pod_set in cycle.sets:
        _affinity(pod_set, cycle.sets, cycle, found)
        _anti_affinity(pod_set, cycle.sets, cycle, found)
        _existing_anti_affinity(pod_set, cycle, found)
