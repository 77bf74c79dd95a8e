"""The scheduler's filters as placement constraints (doctor/checks/capacity/filters/rules.py),
value by value.

Sources: pkg/scheduler/framework/plugins/interpodaffinity/filtering.go, podtopologyspread/
filtering.go and common.go, volumebinding/binder.go, volumerestrictions/volume_restrictions.go,
pkg/volume/util `IsMultiAttachAllowed`, component-helpers storage/volume `CheckNodeAffinity`.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tests.support.plain_words import jargon_in
from truegreen.cluster import CantRead, GetRead, Got, Kind, Listed, ReadFailure
from truegreen.doctor.checks.capacity.filters.cycle import domain_words
from truegreen.doctor.checks.capacity.filters.framework import (
    Blocker,
    Exclusion,
    FailedRead,
    JobPodSet,
    Unchecked,
    Wait,
)
from truegreen.doctor.checks.capacity.filters.rules import Rules, scheduling_rules
from truegreen.doctor.checks.capacity.filters.volume_attachment import driver_to_ask
from truegreen.doctor.checks.capacity.filters.volume_zone import (
    label_values,
    refuses,
    volume_topologies,
)
from truegreen.doctor.checks.capacity.placement import Apart, Near, Spread
from truegreen.kubectl import Kubectl

NS = "train"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
Obj = dict[str, Any]


def _node(name: str, labels: Mapping[str, str] | None = None, taints: Sequence[Obj] = ()) -> Obj:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, **(labels or {})}},
        "spec": {"taints": list(taints)},
    }


def _nodes() -> list[Obj]:
    """Machines a and b in zone z1, c in zone z2 (fresh each time: tests change them)."""
    return [_node("a", {ZONE: "z1"}), _node("b", {ZONE: "z1"}), _node("c", {ZONE: "z2"})]


def _pod(
    name: str,
    machine: str,
    labels: Mapping[str, str] | None = None,
    namespace: str = NS,
    **spec: Any,
) -> Obj:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": {"nodeName": machine, **spec},
        "status": {"phase": "Running"},
    }


def _set(name: str = "worker", labels: Mapping[str, str] | None = None, **spec: Any) -> JobPodSet:
    return JobPodSet(name, spec, dict({"job-name": "run"} if labels is None else labels))


def _rules(
    sets: Sequence[JobPodSet],
    *,
    nodes: Sequence[Obj] | None = None,
    pods: Sequence[Obj] | CantRead = (),
    claims: Mapping[str, GetRead] | None = None,
    volumes: Mapping[str, GetRead] | None = None,
    drivers: Mapping[str, GetRead] | None = None,
    namespace_labels: Mapping[str, str] | None = None,
    rule_pods: Sequence[Obj] | None = (),
) -> Rules:
    rules = scheduling_rules(
        sets,
        namespace=NS,
        namespace_labels={"team": "ml"} if namespace_labels is None else namespace_labels,
        nodes=_nodes() if nodes is None else nodes,
        pods=pods if isinstance(pods, CantRead) else Listed(tuple(pods)),
        claims=claims or {},
        volumes=volumes or {},
        drivers=drivers or {},
        devices=None,
        kubectl=Kubectl(),
        rule_pods=rule_pods,
    )
    _assert_plain(rules)
    return rules


def _assert_plain(rules: Rules) -> None:
    """Every filter's words an operator reads (reasons, steps, rules) hold no jargon: the
    jargon test's list, applied to each plugin's own words as the tests here produce them."""
    words = [text for e in rules.exclusions for text in (e.reason, e.todo)]
    words += [text for u in rules.unchecked for text in (u.rule, u.why, u.todo)]
    words += [rule.words for _, group in rules.rules for rule in group]
    words += [todo for _, todo in rules.todos]
    for text in words:
        assert not jargon_in(text), f"jargon {jargon_in(text)} in {text!r}"


def _anti(*terms: Obj) -> Obj:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def _near(*terms: Obj) -> Obj:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def _term(key: str = HOST, **selector: Any) -> Obj:
    return {"labelSelector": selector or {"matchLabels": {"job-name": "run"}}, "topologyKey": key}


ONE_PER_MACHINE = "may not share a machine with another of its programs"


# -- words ------------------------------------------------------------------------------------


def test_topology_keys_in_plain_words() -> None:
    assert domain_words(HOST) == "machine"
    assert domain_words(ZONE) == "zone"
    assert domain_words("topology.kubernetes.io/region") == "region"
    assert domain_words("failure-domain.beta.kubernetes.io/zone") == "zone"
    assert domain_words("failure-domain.beta.kubernetes.io/region") == "region"
    assert domain_words("rack") == "'rack' group of machines"
    assert domain_words(HOST, many=True) == "machines"
    assert domain_words(ZONE, many=True) == "zones"
    assert domain_words("rack", many=True) == "'rack' groups of machines"


# -- anti-affinity ------------------------------------------------------------------------------


def test_a_set_kept_apart_from_itself_carries_one_rule_and_takes_nothing() -> None:
    rules = _rules([_set(affinity=_anti(_term()))])
    assert rules.exclusions == ()
    assert rules.rules_of("worker") == (
        Apart("worker", "worker", (("a", "a"), ("b", "b"), ("c", "c")), ONE_PER_MACHINE),
    )
    assert rules.todo(ONE_PER_MACHINE) == (
        "add machines with room, one for each program it keeps apart, or let them share a "
        "machine in the training job's settings"
    )
    assert rules.details == (
        "worker: required pod anti-affinity on kubernetes.io/hostname with pods matching "
        "job-name In (run): against worker",
    )
    assert rules.rules_of("leader") == ()
    assert rules.todo("something else") == ""


def test_a_running_match_takes_its_domain() -> None:
    """A running pod matching the term holds zone z1: machines a and b are refused."""
    pods = [_pod("old-0", "b", {"job-name": "run"}), _pod("other", "c", {"app": "x"})]
    rules = _rules([_set(affinity=_anti(_term(ZONE)))], pods=pods)
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b"),
            "already running a program it may not share a zone with",
            "stop what it must stay apart from when it is done, or let it share a zone in the "
            "training job's settings",
            "worker: required pod anti-affinity on topology.kubernetes.io/zone with pods "
            "matching job-name In (run): z1 already hold one",
            blockers=tuple(
                Blocker(m, NS, "old-0", "b", 0, "the job may not share a zone with it")
                for m in ("a", "b")
            ),
        ),
    )
    assert rules.allowed("worker", ["a", "b", "c"]) == ["c"]
    assert rules.allowed("leader", ["a", "b", "c"]) == ["a", "b", "c"]


def test_terminated_and_unplaced_pods_hold_no_domain() -> None:
    done = _pod("done", "a", {"job-name": "run"})
    done["status"]["phase"] = "Succeeded"
    waiting = _pod("waiting", "", {"job-name": "run"})
    elsewhere = _pod("gone-machine", "zz", {"job-name": "run"})
    rules = _rules([_set(affinity=_anti(_term()))], pods=[done, waiting, elsewhere])
    assert rules.exclusions == ()


def test_two_sets_apart_from_each_other() -> None:
    leader = _set("leader", {"role": "leader"}, affinity=_anti(_term(matchLabels={"role": "w"})))
    worker = _set("worker", {"role": "w"})
    rules = _rules([leader, worker])
    words = "may not share a machine with the programs of 'worker'"
    assert rules.rules_of("leader") == (
        Apart("leader", "worker", (("a", "a"), ("b", "b"), ("c", "c")), words),
    )
    assert rules.rules_of("worker") == ()


def test_an_anti_affinity_term_over_other_namespaces_is_unchecked() -> None:
    other = {**_term(), "namespaces": ["research"]}
    selected = {**_term(), "namespaceSelector": {"matchLabels": {"team": "ml"}}}
    rules = _rules([_set(affinity=_anti(other, selected))])
    assert rules.rules == ()
    assert rules.unchecked == (
        Unchecked(
            "the training job's rule about which programs it must stay apart from",
            "it looks at programs of other spaces ('research'), which doctor doesn't read",
            "See which programs it selects with `kubectl get pods --all-namespaces -o wide -l "
            "'job-name in (run)'`",
            "worker: required pod anti-affinity term with namespaces ['research'] or a "
            "namespaceSelector: pods of other namespaces are not read",
        ),
        Unchecked(
            "the training job's rule about which programs it must stay apart from",
            "it looks at programs of other spaces, which doctor doesn't read",
            "See which programs it selects with `kubectl get pods --all-namespaces -o wide -l "
            "'job-name in (run)'`",
            "worker: required pod anti-affinity term with namespaces [] or a namespaceSelector: "
            "pods of other namespaces are not read",
        ),
    )


def test_a_term_naming_its_own_namespace_is_evaluated() -> None:
    own = {**_term(), "namespaces": [NS]}
    rules = _rules([_set(affinity=_anti(own))])
    assert rules.unchecked == ()
    assert len(rules.rules_of("worker")) == 1


def test_a_term_doctor_cannot_read_is_unchecked() -> None:
    bad = _term(matchExpressions=[{"key": "job-name", "operator": "Like", "values": ["x"]}])
    no_key = {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": ""}
    rules = _rules([_set(affinity=_anti(bad, no_key))])
    assert rules.rules == ()
    assert rules.unchecked == (
        Unchecked(
            "the training job's rule about which programs it must stay apart from",
            "the rule states something doctor can't read (a way of choosing programs or a "
            "grouping it doesn't know)",
            "Check the training job's settings for that rule",
            "worker: a required pod anti-affinity term doctor cannot parse",
        ),
    )


def test_a_bad_namespace_selector_is_unreadable_too() -> None:
    term = {
        **_term(),
        "namespaceSelector": {"matchExpressions": [{"key": "t", "operator": "Bogus"}]},
    }
    rules = _rules([_set(affinity=_anti(term))])
    assert [u.detail for u in rules.unchecked] == [
        "worker: a required pod anti-affinity term doctor cannot parse"
    ]


def test_a_rule_on_labels_the_controller_sets_per_pod_is_unchecked() -> None:
    term = _term(
        matchExpressions=[
            {"key": "batch.kubernetes.io/job-completion-index", "operator": "In", "values": ["0"]}
        ]
    )
    keys_term = {**_term(), "matchLabelKeys": ["jobset.sigs.k8s.io/job-index"]}
    rules = _rules([_set(affinity=_anti(term, keys_term))])
    assert rules.rules == ()
    assert rules.unchecked == (
        Unchecked(
            "the training job's rule about which programs it must stay apart from",
            "it selects programs by marks their controller gives each one, which the job's "
            "template doesn't show",
            "Check the programs the job has made, once it runs, with their marks",
            "worker: a required pod anti-affinity term selects by "
            "batch.kubernetes.io/job-completion-index, set per pod by the controller",
        ),
        Unchecked(
            "the training job's rule about which programs it must stay apart from",
            "it selects programs by marks their controller gives each one, which the job's "
            "template doesn't show",
            "Check the programs the job has made, once it runs, with their marks",
            "worker: a required pod anti-affinity term selects by jobset.sigs.k8s.io/job-index, "
            "set per pod by the controller",
        ),
    )


def test_a_controller_label_the_template_carries_is_evaluated() -> None:
    rules = _rules([_set(affinity=_anti(_term()))])  # job-name is in the template
    assert rules.unchecked == ()


def test_match_label_keys_select_by_the_pods_own_values() -> None:
    """`matchLabelKeys: [team]` merges `team In (a)` for a pod labelled team=a: the running
    pod of team b no longer matches; `mismatchLabelKeys` the opposite."""
    term = {"labelSelector": {"matchLabels": {"app": "t"}}, "topologyKey": HOST}
    pods = [
        _pod("b-0", "a", {"app": "t", "team": "b"}),
        _pod("a-0", "b", {"app": "t", "team": "a"}),
    ]
    same = _set(
        labels={"app": "t", "team": "a"},
        affinity=_anti({**term, "matchLabelKeys": ["team", "absent"]}),
    )
    other = _set(
        labels={"app": "t", "team": "a"}, affinity=_anti({**term, "mismatchLabelKeys": ["team"]})
    )
    assert [e.machines for e in _rules([same], pods=pods).exclusions] == [("b",)]
    assert [e.machines for e in _rules([other], pods=pods).exclusions] == [("a",)]


def test_selector_operators_follow_the_label_selector_rules() -> None:
    pods = [
        _pod("p1", "a", {"tier": "gpu"}),
        _pod("p2", "b", {"tier": "cpu"}),
        _pod("p3", "c", {}),
    ]

    def refused(*expressions: Obj) -> tuple[str, ...]:
        rules = _rules([_set(affinity=_anti(_term(matchExpressions=list(expressions))))], pods=pods)
        return tuple(m for e in rules.exclusions for m in e.machines)

    assert refused({"key": "tier", "operator": "In", "values": ["gpu"]}) == ("a",)
    assert refused({"key": "tier", "operator": "NotIn", "values": ["gpu"]}) == ("b", "c")
    assert refused({"key": "tier", "operator": "Exists"}) == ("a", "b")
    assert refused({"key": "tier", "operator": "DoesNotExist"}) == ("c",)
    assert refused(
        {"key": "tier", "operator": "Exists"},
        {"key": "tier", "operator": "NotIn", "values": ["cpu"]},
    ) == ("a",)


def test_an_empty_selector_matches_every_pod_and_a_missing_one_none() -> None:
    pods = [_pod("p1", "a", {"x": "y"})]
    everything = {"labelSelector": {}, "topologyKey": HOST}
    nothing = {"topologyKey": HOST}
    assert [
        e.machines for e in _rules([_set(affinity=_anti(everything))], pods=pods).exclusions
    ] == [("a",)]
    assert _rules([_set(affinity=_anti(nothing))], pods=pods).exclusions == ()
    assert _rules([_set(affinity=_anti(nothing))]).rules == ()


def test_a_machine_without_the_topology_key_holds_no_domain() -> None:
    nodes = [*_nodes(), _node("d")]
    rules = _rules([_set(affinity=_anti(_term(ZONE)))], nodes=nodes)
    (rule,) = rules.rules_of("worker")
    assert isinstance(rule, Apart)
    assert rule.domains == (("a", "z1"), ("b", "z1"), ("c", "z2"))


# -- the running pods' own anti-affinity ------------------------------------------------------


def test_a_running_pod_keeps_matching_pods_off_its_domain() -> None:
    keeper = _pod(
        "keeper",
        "a",
        affinity=_anti(_term(ZONE, matchExpressions=[{"key": "job-name", "operator": "Exists"}])),
    )
    rules = _rules([_set()], pods=[keeper])
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b"),
            "running a program that won't share its place with the job's programs",
            "stop 'keeper' when it is done, or change its rule about what may run beside it",
            "worker: the required pod anti-affinity of keeper matches it: a, b refused",
            blockers=tuple(
                Blocker(m, NS, "keeper", "a", 0, "won't share its zone with the job's programs")
                for m in ("a", "b")
            ),
        ),
    )


def test_another_namespace_s_running_pod_keeps_the_pods_its_term_covers_off_its_domain() -> None:
    """existingAntiAffinityCounts takes every namespace's pods' required anti-affinity; a term
    covers the job's namespace by `namespaces`, by `namespaceSelector` ({} is every one), never
    by default (the pod's own namespace)."""

    def refused(term: Obj) -> tuple[str, ...]:
        pod = _pod("db-0", "a", namespace="data", affinity=_anti(term))
        return tuple(m for e in _rules([_set()], rule_pods=[pod]).exclusions for m in e.machines)

    assert refused({**_term(), "namespaceSelector": {}}) == ("a",)
    assert refused({**_term(), "namespaces": [NS]}) == ("a",)
    assert refused({**_term(), "namespaceSelector": {"matchLabels": {"team": "ml"}}}) == ("a",)
    assert refused(_term()) == ()
    assert refused({**_term(), "namespaceSelector": {"matchLabels": {"team": "web"}}}) == ()
    # `{}` selects every namespace whether or not this one's labels were read.
    pod = _pod("db-0", "a", namespace="data", affinity=_anti({**_term(), "namespaceSelector": {}}))
    unread = scheduling_rules(
        [_set()],
        namespace=NS,
        namespace_labels=None,
        nodes=_nodes(),
        pods=Listed(()),
        claims={},
        volumes={},
        drivers={},
        devices=None,
        kubectl=Kubectl(),
        rule_pods=[pod],
    )
    assert ([e.machines for e in unread.exclusions], unread.unchecked) == ([("a",)], ())


def test_a_running_pod_s_term_that_does_not_match_takes_nothing() -> None:
    keeper = _pod("keeper", "a", affinity=_anti(_term(matchLabels={"app": "db"})))
    on_no_key = _pod("odd", "a", affinity=_anti(_term("rack")))
    assert _rules([_set()], pods=[keeper, on_no_key]).exclusions == ()


def test_a_running_pod_s_term_covers_this_namespace_by_its_labels() -> None:
    term = {**_term(), "namespaceSelector": {"matchLabels": {"team": "ml"}}}
    keeper = _pod("keeper", "a", affinity=_anti(term))
    assert [e.machines for e in _rules([_set()], pods=[keeper]).exclusions] == [("a",)]
    other_team = _rules([_set()], pods=[keeper], namespace_labels={"team": "web"})
    assert other_team.exclusions == ()
    listed = _pod("keeper", "a", affinity=_anti({**_term(), "namespaces": ["web"]}))
    assert _rules([_set()], pods=[listed]).exclusions == ()


def test_a_running_pod_s_namespace_selector_without_this_namespace_s_labels_is_unchecked() -> None:
    term = {**_term(), "namespaceSelector": {"matchLabels": {"team": "ml"}}}
    keeper = _pod("keeper", "a", affinity=_anti(term))
    rules = scheduling_rules(
        [_set(), _set("leader")],
        namespace=NS,
        namespace_labels=None,
        nodes=_nodes(),
        pods=Listed((keeper,)),
        claims={},
        volumes={},
        drivers={},
        devices=None,
        kubectl=Kubectl(),
    )
    assert rules.exclusions == ()
    assert rules.unchecked == (
        Unchecked(
            "the rules of running programs about what may run beside them",
            "one of them selects spaces by their marks, and this space's could not be read",
            "Let doctor read this space, then run again",
            "pod keeper: anti-affinity namespaceSelector; the namespace was not read",
        ),
    )


def test_a_running_pod_s_unreadable_or_per_pod_term_is_unchecked() -> None:
    bad = _pod(
        "bad", "a", affinity=_anti(_term(matchExpressions=[{"key": "x", "operator": "Nope"}]))
    )
    per_pod = _pod(
        "idx", "b", affinity=_anti(_term(matchLabels={"jobset.sigs.k8s.io/job-index": "0"}))
    )
    rules = _rules([_set()], pods=[bad, per_pod])
    assert [u.detail for u in rules.unchecked] == [
        "bad: a required pod anti-affinity term doctor cannot parse",
        "idx: a required pod anti-affinity term selects by jobset.sigs.k8s.io/job-index, set "
        "per pod by the controller",
    ]
    assert [u.rule for u in rules.unchecked] == [
        "the rules of running programs about what may run beside them"
    ] * 2


# -- affinity ------------------------------------------------------------------------------------


def test_affinity_to_a_running_pod_follows_its_domain() -> None:
    cache = _pod("cache-0", "c", {"app": "cache"})
    rules = _rules([_set(affinity=_near(_term(ZONE, matchLabels={"app": "cache"})))], pods=[cache])
    assert rules.exclusions == ()
    assert rules.rules_of("worker") == (
        Near(
            "worker",
            (((("a", "z1"), ("b", "z1"), ("c", "z2")), frozenset({"z2"})),),
            frozenset(),
            False,
            "must run in the same zone as the programs it must run beside",
        ),
    )
    assert rules.todo("must run in the same zone as the programs it must run beside") == (
        "free room in the zone where the programs it must run beside run, or change the "
        "training job's rule"
    )
    assert rules.details == (
        "worker: required pod affinity on topology.kubernetes.io/zone with pods matching app "
        "In (cache): domains ['z2'], with []",
    )


def test_affinity_to_its_own_pods_may_start_anywhere() -> None:
    rules = _rules([_set(affinity=_near(_term(ZONE)))])
    assert rules.rules_of("worker") == (
        Near(
            "worker",
            (((("a", "z1"), ("b", "z1"), ("c", "z2")), frozenset()),),
            frozenset({"worker"}),
            True,
            "must run in the same zone as its other programs",
        ),
    )


def test_affinity_to_its_own_pods_that_already_run_follows_them() -> None:
    running = _pod("run-0", "a", {"job-name": "run"})
    (rule,) = _rules([_set(affinity=_near(_term(ZONE)))], pods=[running]).rules_of("worker")
    assert isinstance(rule, Near)
    assert (rule.may_start, rule.terms[0][1]) == (False, frozenset({"z1"}))


def test_affinity_to_nothing_that_runs_refuses_every_machine() -> None:
    rules = _rules([_set(affinity=_near(_term(matchLabels={"app": "cache"})))])
    assert rules.rules == ()
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b", "c"),
            "none of the programs runs that its rules require it to run beside",
            "start what it must run beside first, or change the training job's rule",
            "worker: required pod affinity on kubernetes.io/hostname with pods matching app In "
            "(cache): no pod matches",
            everywhere=True,
        ),
    )


def test_affinity_to_another_set_of_the_job_waits_for_it() -> None:
    worker = _set("worker", {"role": "w"}, affinity=_near(_term(matchLabels={"role": "l"})))
    leader = _set("leader", {"role": "l"})
    (rule,) = _rules([worker, leader]).rules_of("worker")
    assert isinstance(rule, Near)
    assert (rule.members, rule.may_start) == (frozenset({"leader"}), False)


def test_affinity_needs_every_term_key_and_a_pod_matching_every_term() -> None:
    nodes = [*_nodes(), _node("d", {ZONE: "z2"})]
    nodes[3]["metadata"]["labels"]["rack"] = "r1"
    nodes[2]["metadata"]["labels"]["rack"] = "r2"
    both = _pod("both", "c", {"app": "cache", "tier": "x"})
    one = _pod("one", "d", {"app": "cache"})
    terms = _near(
        _term(ZONE, matchLabels={"app": "cache"}), _term("rack", matchLabels={"tier": "x"})
    )
    rules = _rules([_set(affinity=terms)], nodes=nodes, pods=[both, one])
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b"),
            "in no 'rack' group of machines or zone, which its rules place programs by",
            "give those machines their place, or change the training job's rule",
            "worker: required pod affinity on topology.kubernetes.io/zone with pods matching "
            "app In (cache); worker: required pod affinity on rack with pods matching tier In "
            "(x): a, b lack the key",
        ),
    )
    (rule,) = rules.rules_of("worker")
    assert isinstance(rule, Near)
    assert [present for _, present in rule.terms] == [frozenset({"z2"}), frozenset({"r2"})]
    assert rule.words == (
        "must run in the same 'rack' group of machines and zone as the programs it must run beside"
    )


def test_an_affinity_term_elsewhere_unreadable_or_per_pod_stops_the_rule() -> None:
    elsewhere = {**_term(), "namespaces": ["other"]}
    assert [u.rule for u in _rules([_set(affinity=_near(elsewhere))]).unchecked] == [
        "the training job's rule about which programs it must run beside"
    ]
    unreadable = _term(matchExpressions=[{"key": "a", "operator": "?"}])
    rules = _rules([_set(affinity=_near(_term(), unreadable))])
    assert (rules.rules, [u.detail for u in rules.unchecked]) == (
        (),
        ["worker: a required pod affinity term doctor cannot parse"],
    )
    per_pod = _term(matchLabels={"ray.io/node-type": "worker"})
    rules = _rules([_set(affinity=_near(per_pod))])
    assert (rules.rules, rules.exclusions) == ((), ())
    assert [u.detail for u in rules.unchecked] == [
        "worker: a required pod affinity term selects by ray.io/node-type, set per pod by the "
        "controller"
    ]


# -- topology spread ---------------------------------------------------------------------------


def _constraint(**fields: Any) -> Obj:
    return {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"job-name": "run"}},
        **fields,
    }


def test_spread_counts_matching_pods_per_domain() -> None:
    pods = [
        _pod("r0", "a", {"job-name": "run"}),
        _pod("r1", "b", {"job-name": "run"}),
        _pod("x", "c", {"app": "x"}),
    ]
    leaving = _pod("r2", "c", {"job-name": "run"})
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    rules = _rules([_set(topologySpreadConstraints=[_constraint()])], pods=[*pods, leaving])
    words = "would put more than 1 program in one zone beyond the zone with the fewest"
    assert rules.rules_of("worker") == (
        Spread(
            "worker",
            (("a", "z1"), ("b", "z1"), ("c", "z2")),
            frozenset({"a", "b", "c"}),
            (("z1", 2), ("z2", 0)),
            1,
            1,
            frozenset({"worker"}),
            words,
        ),
    )
    assert rules.todo(words) == (
        "free room in the zones that hold the fewest of its programs, or allow a larger "
        "difference in the training job's settings"
    )
    assert rules.details == (
        "worker: topology spread on topology.kubernetes.io/zone, maxSkew 1, minDomains 1: "
        "counts {'z1': 2, 'z2': 0}",
    )


def test_spread_skew_and_min_domains_are_kept() -> None:
    rules = _rules([_set(topologySpreadConstraints=[_constraint(maxSkew=2, minDomains=3)])])
    (rule,) = rules.rules_of("worker")
    assert isinstance(rule, Spread)
    assert (rule.max_skew, rule.min_domains) == (2, 3)
    assert (
        rule.words == "would put more than 2 programs in one zone beyond the zone with the fewest"
    )


def test_a_spread_that_may_be_unmet_is_no_filter() -> None:
    rules = _rules(
        [_set(topologySpreadConstraints=[_constraint(whenUnsatisfiable="ScheduleAnyway")])]
    )
    assert (rules.rules, rules.exclusions) == ((), ())


def test_machines_without_the_spread_key_are_refused() -> None:
    nodes = [*_nodes(), _node("d")]
    rules = _rules([_set(topologySpreadConstraints=[_constraint()])], nodes=nodes)
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("d",),
            "in no zone, which its rules spread programs over",
            "give those machines their zone, or change the training job's rule",
            "worker: topology spread on topology.kubernetes.io/zone: machines without the key "
            "are refused",
        ),
    )


def test_a_missing_selector_counts_nothing_and_makes_no_rule() -> None:
    rules = _rules([_set(topologySpreadConstraints=[{**_constraint(), "labelSelector": None}])])
    assert rules.rules == ()


def test_spread_counts_only_machines_with_every_key_the_set_spreads_by() -> None:
    nodes = _nodes()
    nodes[0] = _node("a", {ZONE: "z1", "rack": "r1"})
    constraints = [_constraint(), _constraint(topologyKey="rack")]
    rules = _rules([_set(topologySpreadConstraints=constraints)], nodes=nodes)
    first, second = rules.rules_of("worker")
    assert isinstance(first, Spread)
    assert isinstance(second, Spread)
    assert (first.eligible, first.counts) == (frozenset({"a"}), (("z1", 0),))
    assert second.values == (("a", "r1"),)


def test_spread_honours_the_node_affinity_policy_by_default() -> None:
    spec: dict[str, Any] = {
        "nodeSelector": {ZONE: "z1"},
        "topologySpreadConstraints": [_constraint()],
    }
    (rule,) = _rules([_set(**spec)]).rules_of("worker")
    assert isinstance(rule, Spread)
    assert rule.eligible == frozenset({"a", "b"})
    spec["topologySpreadConstraints"] = [_constraint(nodeAffinityPolicy="Ignore")]
    (rule,) = _rules([_set(**spec)]).rules_of("worker")
    assert isinstance(rule, Spread)
    assert rule.eligible == frozenset({"a", "b", "c"})
    required = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z2"]}]}
                ]
            }
        }
    }
    (rule,) = _rules([_set(affinity=required, topologySpreadConstraints=[_constraint()])]).rules_of(
        "worker"
    )
    assert isinstance(rule, Spread)
    assert rule.eligible == frozenset({"c"})


def test_spread_ignores_taints_unless_told_to_honour_them() -> None:
    tainted = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    nodes = [
        _node("a", {ZONE: "z1"}, [tainted]),
        _node("b", {ZONE: "z2"}, [{**tainted, "effect": "PreferNoSchedule"}]),
    ]
    (rule,) = _rules([_set(topologySpreadConstraints=[_constraint()])], nodes=nodes).rules_of(
        "worker"
    )
    assert isinstance(rule, Spread)
    assert rule.eligible == frozenset({"a", "b"})
    honour = [_constraint(nodeTaintsPolicy="Honor")]
    (rule,) = _rules([_set(topologySpreadConstraints=honour)], nodes=nodes).rules_of("worker")
    assert isinstance(rule, Spread)
    assert rule.eligible == frozenset({"b"})
    tolerating = [{"key": "dedicated", "operator": "Exists"}]
    (rule,) = _rules(
        [_set(tolerations=tolerating, topologySpreadConstraints=honour)], nodes=nodes
    ).rules_of("worker")
    assert isinstance(rule, Spread)
    assert rule.eligible == frozenset({"a", "b"})


def test_spread_members_are_the_sets_its_selector_matches() -> None:
    worker = _set(
        "worker",
        {"app": "t"},
        topologySpreadConstraints=[_constraint(labelSelector={"matchLabels": {"app": "t"}})],
    )
    leader = _set("leader", {"app": "t"})
    driver = _set("driver", {"app": "d"})
    (rule,) = _rules([worker, leader, driver]).rules_of("worker")
    assert isinstance(rule, Spread)
    assert rule.members == frozenset({"worker", "leader"})


def test_a_spread_doctor_cannot_read_or_judge_is_unchecked() -> None:
    bad = _constraint(labelSelector={"matchExpressions": [{"key": "a", "operator": "X"}]})
    no_skew = _constraint(maxSkew=0)
    no_key = _constraint(topologyKey="")
    per_pod = _constraint(matchLabelKeys=["batch.kubernetes.io/job-completion-index"])
    rules = _rules([_set(topologySpreadConstraints=[bad, no_skew, no_key, per_pod])])
    assert rules.rules == ()
    assert [(u.rule, u.detail) for u in rules.unchecked] == [
        (
            "the training job's rule for spreading its programs over zones",
            "worker: a required topology spread term doctor cannot parse",
        ),
        (
            "the training job's rule for spreading its programs over '' groups of machines",
            "worker: a required topology spread term doctor cannot parse",
        ),
        (
            "the training job's rule for spreading its programs over zones",
            "worker: a required topology spread term selects by "
            "batch.kubernetes.io/job-completion-index, set per pod by the controller",
        ),
    ]


def test_spread_match_label_keys_narrow_the_selector() -> None:
    pods = [
        _pod("r0", "a", {"job-name": "run", "rev": "1"}),
        _pod("r1", "c", {"job-name": "run", "rev": "2"}),
    ]
    constraint = _constraint(matchLabelKeys=["rev"])
    (rule,) = _rules(
        [_set(labels={"job-name": "run", "rev": "2"}, topologySpreadConstraints=[constraint])],
        pods=pods,
    ).rules_of("worker")
    assert isinstance(rule, Spread)
    assert rule.counts == (("z1", 0), ("z2", 1))


# -- volumes --------------------------------------------------------------------------------------


def _claim(name: str, modes: Sequence[str], volume: str = "pv-1", phase: str = "Bound") -> Got:
    return Got(
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"accessModes": list(modes), "volumeName": volume},
            "status": {"phase": phase},
        }
    )


def _volume(modes: Sequence[str], zone: str | None = None, **source: Any) -> Got:
    spec: Obj = {"accessModes": list(modes), **(source or {"csi": {"driver": "ebs.csi.aws.com"}})}
    if zone is not None:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                ]
            }
        }
    return Got({"kind": "PersistentVolume", "metadata": {"name": "pv-1"}, "spec": spec})


def _mounting(name: str = "worker", claim: str = "data") -> JobPodSet:
    return _set(name, volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": claim}}])


def test_a_bound_volume_s_node_affinity_takes_the_machines_it_does_not_reach() -> None:
    rules = _rules(
        [_mounting()],
        claims={"data": _claim("data", ["ReadWriteMany"])},
        volumes={"pv-1": _volume(["ReadWriteMany"], "z2")},
    )
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b"),
            "can't reach its volume 'data'",
            "run the training job where its volume 'data' can be used (c), or keep its data on "
            "storage the job's machines can reach",
            "PersistentVolume pv-1 (claim data): node affinity refuses a, b",
        ),
    )


def test_a_volume_no_machine_reaches_names_none() -> None:
    rules = _rules(
        [_mounting()],
        claims={"data": _claim("data", ["ReadWriteMany"])},
        volumes={"pv-1": _volume(["ReadWriteMany"], "z9")},
    )
    (exclusion,) = rules.exclusions
    assert exclusion.machines == ("a", "b", "c")
    assert exclusion.todo == (
        "run the training job where its volume 'data' can be used, or keep its data on storage "
        "the job's machines can reach"
    )


def test_node_affinity_on_the_machine_s_name_never_matches_a_volume() -> None:
    """CheckNodeAffinity matches a node made of the labels alone: `metadata.name` is empty."""
    volume = _volume(["ReadWriteMany"])
    volume.obj["spec"]["nodeAffinity"] = {
        "required": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
            ]
        }
    }
    rules = _rules(
        [_mounting()], claims={"data": _claim("data", ["ReadWriteMany"])}, volumes={"pv-1": volume}
    )
    assert rules.exclusions[0].machines == ("a", "b", "c")


def test_a_volume_without_node_affinity_or_terms_takes_nothing() -> None:
    volume = _volume(["ReadWriteMany"])
    volume.obj["spec"]["nodeAffinity"] = {"required": {}}
    rules = _rules(
        [_mounting()], claims={"data": _claim("data", ["ReadWriteMany"])}, volumes={"pv-1": volume}
    )
    assert rules.exclusions == ()


def test_a_claim_not_bound_yet_or_not_read_is_no_constraint() -> None:
    pending = _claim("data", ["ReadWriteOnce"], volume="", phase="Pending")
    assert _rules([_mounting()], claims={"data": pending}).exclusions == ()
    prebound = _claim("data", ["ReadWriteMany"], phase="Pending")
    assert (
        _rules(
            [_mounting()],
            claims={"data": prebound},
            volumes={"pv-1": _volume(["ReadWriteMany"], "z9")},
        ).exclusions
        == ()
    )
    assert _rules([_mounting()]).exclusions == ()


def test_a_claim_that_cannot_be_read_is_a_failed_read_and_a_missing_one_is_not() -> None:
    forbidden = CantRead(ReadFailure.FORBIDDEN, "no")
    rules = _rules([_mounting()], claims={"data": forbidden})
    assert rules.failed == (FailedRead(Kind.PERSISTENT_VOLUME_CLAIM, forbidden),)
    missing = CantRead(ReadFailure.NOT_FOUND, "gone")
    assert _rules([_mounting()], claims={"data": missing}).failed == ()


def test_a_volume_that_cannot_be_read_is_a_failed_read() -> None:
    timeout = CantRead(ReadFailure.TIMEOUT, "slow")
    rules = _rules(
        [_mounting(), _mounting("leader")],
        claims={"data": _claim("data", ["ReadWriteOncePod"])},
        volumes={"pv-1": timeout},
    )
    assert (rules.failed, rules.exclusions, rules.rules) == (
        (FailedRead(Kind.PERSISTENT_VOLUME, timeout),),
        (),
        (),
    )


def test_a_bound_volume_that_does_not_exist_refuses_every_machine() -> None:
    missing = CantRead(ReadFailure.NOT_FOUND, "gone")
    rules = _rules(
        [_mounting()], claims={"data": _claim("data", ["ReadWriteOnce"])}, volumes={"pv-1": missing}
    )
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b", "c"),
            "its volume 'data' is tied to storage that doesn't exist",
            "recreate the volume 'data' for the training job's data",
            "PersistentVolumeClaim data: bound to PersistentVolume pv-1, not found "
            "(volumebinding: pvc(s) bound to non-existent pv(s))",
            everywhere=True,
        ),
    )
    assert rules.rules == ()


def test_a_claim_being_deleted_refuses_every_machine_before_its_volume_s_affinity() -> None:
    """volume_binding.go `GetPodVolumeClaims`: a claim with `deletionTimestamp` set fails the
    pod (UnschedulableAndUnresolvable), Bound or not; its volume's affinity is never asked."""
    claim = _claim("data", ["ReadWriteMany"])
    claim.obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    rules = _rules(
        [_mounting()], claims={"data": claim}, volumes={"pv-1": _volume(["ReadWriteMany"], "z2")}
    )
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b", "c"),
            "its volume 'data' is being deleted",
            "create the volume 'data' again once its deletion is done, or give the training job "
            "another volume",
            'PersistentVolumeClaim data: persistentvolumeclaim "data" is being deleted '
            "(volumebinding)",
            everywhere=True,
        ),
    )


def test_a_one_program_volume_in_use_refuses_every_machine() -> None:
    holder = _pod(
        "notebook-0", "a", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]
    )
    rules = _rules(
        [_mounting()],
        pods=[holder],
        claims={"data": _claim("data", ["ReadWriteOncePod"])},
        volumes={"pv-1": _volume(["ReadWriteOncePod"])},
    )
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b", "c"),
            "its volume 'data' may be used by one program at a time, and 'notebook-0' uses it",
            "let 'notebook-0' finish, or give the training job a volume of its own",
            "PersistentVolumeClaim data is ReadWriteOncePod and used by pod notebook-0 "
            "(volumerestrictions)",
            everywhere=True,
        ),
    )


def _holding(name: str, job: str | None) -> Obj:
    """A pod on machine a mounting `data`: of the Job `job` (its controller's `job-name` label
    and owner reference, pkg/controller/job), or of no training job."""
    pod = _pod(
        name,
        "a",
        {"job-name": job} if job else {},
        volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}],
    )
    if job:
        pod["metadata"]["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "Job", "name": job, "controller": True}
        ]
    return pod


def _one_program_rules(pods: Sequence[Obj], own: frozenset[str] = frozenset()) -> Rules:
    return scheduling_rules(
        [_mounting()],
        namespace=NS,
        namespace_labels={},
        nodes=_nodes(),
        pods=Listed(tuple(pods)),
        claims={"data": _claim("data", ["ReadWriteOncePod"])},
        volumes={"pv-1": _volume(["ReadWriteOncePod"])},
        drivers={},
        devices=None,
        kubectl=Kubectl(),
        own_pods=own,
    )


def test_a_one_program_volume_running_training_jobs_use_is_a_wait_for_them() -> None:
    """volumerestrictions `Filter` answers Unschedulable: the pod waits for the holders. A
    running training job's pods go when it finishes: no machine is taken, the job waits."""
    rules = _one_program_rules([_holding("prep-0", "prep"), _holding("prep-1", "prep")])
    assert rules.exclusions == ()
    assert rules.waits == (
        Wait(
            "data",
            ("prep",),
            "PersistentVolumeClaim data is ReadWriteOncePod and used by pod prep-0 of training "
            "job prep (volumerestrictions: Unschedulable until it finishes)",
        ),
    )
    assert rules.details == (rules.waits[0].detail,)


def test_a_one_program_volume_a_pod_of_no_training_job_uses_is_no_wait() -> None:
    """Beside a running training job's pod, one of no training job holds it too: it does not
    go by itself, so no machine is left."""
    rules = _one_program_rules([_holding("prep-0", "prep"), _holding("notebook-0", None)])
    assert rules.waits == ()
    (exclusion,) = rules.exclusions
    assert (exclusion.group, exclusion.machines, exclusion.reason, exclusion.everywhere) == (
        "worker",
        ("a", "b", "c"),
        "its volume 'data' may be used by one program at a time, and 'notebook-0' uses it",
        True,
    )


def test_a_one_program_volume_the_job_s_own_waiting_pods_hold_leaves_no_machine() -> None:
    """The judged job waits for the rest of its pods while its own placed pod holds the claim
    they need: its pods never run together."""
    rules = _one_program_rules([_holding("run-0", "run")], own=frozenset({"run-0"}))
    assert rules.waits == ()
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b", "c"),
            "its volume 'data' may be used by one program at a time, and its own program "
            "'run-0' uses it",
            "give each program of the training job a volume of its own",
            "PersistentVolumeClaim data is ReadWriteOncePod and used by pod run-0 of the job "
            "itself (volumerestrictions)",
            everywhere=True,
        ),
    )


def test_a_one_program_volume_keeps_the_job_s_own_pods_one_at_a_time() -> None:
    rules = _rules(
        [_mounting(), _mounting("leader")],
        claims={"data": _claim("data", ["ReadWriteOncePod"])},
        volumes={"pv-1": _volume(["ReadWriteOncePod"])},
    )
    single = (("a", ""), ("b", ""), ("c", ""))
    words = "can't use the volume 'data' while another of its programs does"
    assert rules.rules == (
        (
            "worker",
            (Apart("worker", "worker", single, words), Apart("worker", "leader", single, words)),
        ),
        ("leader", (Apart("leader", "leader", single, words),)),
    )
    assert (
        rules.todo(words)
        == "give each program of the training job a volume of its own instead of 'data'"
    )


def test_a_disk_in_use_keeps_its_users_on_its_machine() -> None:
    holder = _pod(
        "manager", "b", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]
    )
    rules = _rules(
        [_mounting()],
        pods=[holder],
        claims={"data": _claim("data", ["ReadWriteOnce"])},
        volumes={"pv-1": _volume(["ReadWriteOnce"])},
    )
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "c"),
            "can't attach its volume 'data', which is attached to b and can be attached to one "
            "machine at a time",
            "run the training job on b, or keep its data on storage many machines can use at once",
            "PersistentVolumeClaim data: ReadWriteOnce, in use on b (attach-detach Multi-Attach)",
            measured=False,
        ),
    )


def test_a_disk_not_in_use_keeps_all_its_users_on_one_machine() -> None:
    rules = _rules(
        [_mounting()],
        claims={"data": _claim("data", ["ReadWriteOnce"])},
        volumes={"pv-1": _volume(["ReadWriteOnce"])},
    )
    words = (
        "must run on the machine its other programs use the volume 'data' on (it can be "
        "attached to one machine at a time)"
    )
    assert rules.rules_of("worker") == (
        Near(
            "worker",
            (((("a", "a"), ("b", "b"), ("c", "c")), frozenset()),),
            frozenset({"worker"}),
            True,
            words,
            measured=False,
        ),
    )
    assert rules.todo(words) == (
        "make room on one machine for every program that uses 'data', or keep its data on "
        "storage many machines can use at once"
    )


def test_multi_attach_goes_by_the_volume_s_access_modes_and_attachment() -> None:
    claim = {"data": _claim("data", ["ReadWriteOnce"])}
    shared = _rules(
        [_mounting()], claims=claim, volumes={"pv-1": _volume(["ReadWriteOnce", "ReadOnlyMany"])}
    )
    assert shared.rules == ()
    none = _rules([_mounting()], claims=claim, volumes={"pv-1": _volume([])})
    assert none.rules == ()
    nfs = _rules(
        [_mounting()],
        claims=claim,
        volumes={"pv-1": _volume(["ReadWriteOnce"], nfs={"server": "x"})},
    )
    assert nfs.rules == ()
    many = _rules([_mounting()], claims={"data": _claim("data", ["ReadWriteMany"])})
    assert many.rules == ()
    unread = _rules([_mounting()], claims={"data": _claim("data", ["ReadWriteOnce"], volume="")})
    assert [type(r).__name__ for r in unread.rules_of("worker")] == ["Near"]


def _driver(**spec: Any) -> Got:
    """A CSIDriver as storage.k8s.io/v1 serves it."""
    return Got({"kind": "CSIDriver", "metadata": {"name": "ebs.csi.aws.com"}, "spec": spec})


def test_a_csi_volume_is_attached_unless_its_driver_says_it_needs_no_attaching() -> None:
    """pkg/volume/csi/csi_plugin.go CanAttach, skipAttach: attachRequired false is never
    attached; true, unset (the API defaults it to true), or no CSIDriver at all is attached."""
    claim = {"data": _claim("data", ["ReadWriteOnce"])}
    volumes: dict[str, GetRead] = {"pv-1": _volume(["ReadWriteOnce"])}

    def near(driver: GetRead | None) -> list[str]:
        drivers = {} if driver is None else {"ebs.csi.aws.com": driver}
        rules = _rules([_mounting()], claims=claim, volumes=volumes, drivers=drivers)
        assert rules.failed == ()
        return [type(r).__name__ for r in rules.rules_of("worker")]

    assert near(_driver(attachRequired=False)) == []
    assert near(_driver(attachRequired=True)) == ["Near"]
    assert near(_driver()) == ["Near"]
    assert near(CantRead(ReadFailure.NOT_FOUND, "not found")) == ["Near"]
    assert near(None) == ["Near"]


def test_a_csi_driver_not_read_leaves_the_volume_s_machines_unknown() -> None:
    forbidden = CantRead(ReadFailure.FORBIDDEN, "no")
    rules = _rules(
        [_mounting()],
        claims={"data": _claim("data", ["ReadWriteOnce"])},
        volumes={"pv-1": _volume(["ReadWriteOnce"])},
        drivers={"ebs.csi.aws.com": forbidden},
    )
    assert (rules.failed, rules.rules) == ((FailedRead(Kind.CSI_DRIVER, forbidden),), ())


@pytest.mark.parametrize(
    ("modes", "source", "driver"),
    [
        (["ReadWriteOnce"], {"csi": {"driver": "nfs.csi.k8s.io"}}, "nfs.csi.k8s.io"),
        (["ReadWriteOnce", "ReadOnlyMany"], {"csi": {"driver": "nfs.csi.k8s.io"}}, None),
        (["ReadWriteMany"], {"csi": {"driver": "nfs.csi.k8s.io"}}, None),
        (["ReadWriteOnce"], {"nfs": {"server": "x"}}, None),
    ],
)
def test_only_a_one_machine_csi_volume_asks_for_its_driver(
    modes: list[str], source: dict[str, Any], driver: str | None
) -> None:
    assert driver_to_ask(_volume(modes, **source).obj) == driver


def test_the_namespace_s_pods_not_read_fail_every_pod_rule() -> None:
    forbidden = CantRead(ReadFailure.FORBIDDEN, "no")
    rules = _rules([_set(affinity=_anti(_term()))], pods=forbidden)
    assert (rules.failed, rules.rules, rules.exclusions) == (
        (FailedRead(Kind.POD, forbidden),),
        (),
        (),
    )


# -- the corners the words and the order of terms depend on ----------------------------------


def test_the_remedy_query_writes_every_operator_as_kubectl_takes_it() -> None:
    expressions = [
        {"key": "app", "operator": "In", "values": ["b", "a"]},
        {"key": "tier", "operator": "NotIn", "values": ["x"]},
        {"key": "gpu", "operator": "Exists"},
        {"key": "spot", "operator": "DoesNotExist"},
    ]
    term = {**_term(matchExpressions=expressions), "namespaces": ["other"]}
    (unchecked,) = _rules([_set(affinity=_anti(term))]).unchecked
    assert unchecked.todo == (
        "See which programs it selects with `kubectl get pods --all-namespaces -o wide -l "
        "'app in (a,b),tier notin (x),gpu,!spot'`"
    )


def test_a_term_s_detail_writes_its_selector() -> None:
    expressions = [
        {"key": "tier", "operator": "NotIn", "values": ["x", "w"]},
        {"key": "gpu", "operator": "Exists"},
    ]
    rules = _rules([_set(labels={"gpu": "1"}, affinity=_anti(_term(matchExpressions=expressions)))])
    assert rules.details == (
        "worker: required pod anti-affinity on kubernetes.io/hostname with pods matching tier "
        "NotIn (w,x), gpu Exists: against worker",
    )
    everything = _rules([_set(affinity=_anti({"labelSelector": {}, "topologyKey": HOST}))])
    assert everything.details[0].startswith(
        "worker: required pod anti-affinity on kubernetes.io/hostname with pods matching everything"
    )
    nothing = _rules([_set(affinity=_near({"topologyKey": HOST}))])
    assert nothing.details[0].startswith(
        "worker: required pod affinity on kubernetes.io/hostname with pods matching nothing"
    )


def test_a_null_namespace_selector_is_no_selector() -> None:
    term = {**_term(), "namespaceSelector": None}
    rules = _rules([_set(affinity=_anti(term))])
    assert (rules.unchecked, len(rules.rules_of("worker"))) == ((), 1)


def test_every_term_is_read_after_one_doctor_cannot_read() -> None:
    bad = _term(matchExpressions=[{"key": "a", "operator": "Huh"}])
    rules = _rules([_set(affinity=_anti(bad, _term()))])
    assert len(rules.unchecked) == 1
    assert len(rules.rules_of("worker")) == 1


def test_a_running_pod_s_every_term_counts_after_one_that_does_not_apply() -> None:
    elsewhere = {**_term(), "namespaces": ["web"]}
    unmatched = _term(matchLabels={"app": "db"})
    off_key = _term("rack")
    keeper = _pod("keeper", "a", affinity=_anti(elsewhere, unmatched, off_key, _term()))
    per_pod = _term(matchLabels={"jobset.sigs.k8s.io/job-key": "x"})
    second = _pod("second", "b", affinity=_anti(per_pod, _term()))
    rules = _rules([_set()], pods=[keeper, second])
    assert [e.machines for e in rules.exclusions] == [("a", "b")]
    assert len(rules.unchecked) == 1


def test_a_running_pod_s_terms_merge_its_own_label_keys() -> None:
    term = {"labelSelector": {"matchLabels": {"job-name": "run"}}, "topologyKey": HOST}
    keeper = _pod("keeper", "a", {"rev": "2"}, affinity=_anti({**term, "matchLabelKeys": ["rev"]}))
    assert _rules([_set(labels={"job-name": "run", "rev": "1"})], pods=[keeper]).exclusions == ()
    assert (
        len(_rules([_set(labels={"job-name": "run", "rev": "2"})], pods=[keeper]).exclusions) == 1
    )


def test_affinity_merges_the_set_s_own_label_keys() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": ZONE}
    cache = _pod("cache-0", "c", {"app": "cache", "team": "b"})
    near_own_team = _set(labels={"team": "a"}, affinity=_near({**term, "matchLabelKeys": ["team"]}))
    (exclusion,) = _rules([near_own_team], pods=[cache]).exclusions
    assert exclusion.everywhere is True


def test_mismatch_label_keys_the_controller_sets_per_pod_are_unchecked_too() -> None:
    term = {**_term(), "mismatchLabelKeys": ["leaderworkerset.sigs.k8s.io/group-index"]}
    (unchecked,) = _rules([_set(affinity=_anti(term))]).unchecked
    assert unchecked.detail.endswith(
        "leaderworkerset.sigs.k8s.io/group-index, set per pod by the controller"
    )


def test_spread_reads_every_constraint_after_one_that_counts_nothing() -> None:
    constraints = [
        _constraint(labelSelector=None),
        _constraint(topologyKey=HOST),
        _constraint(maxSkew=0),
        _constraint(),
    ]
    rules = _rules([_set(topologySpreadConstraints=constraints)])
    assert [type(r).__name__ for r in rules.rules_of("worker")] == ["Spread", "Spread"]
    assert len(rules.unchecked) == 1


def test_spread_taints_policy_names_ignore_and_no_execute() -> None:
    no_execute = {"key": "gone", "effect": "NoExecute"}
    nodes = [_node("a", {ZONE: "z1"}, [no_execute]), _node("b", {ZONE: "z2"})]
    ignore = [_constraint(nodeTaintsPolicy="Ignore")]
    (rule,) = _rules([_set(topologySpreadConstraints=ignore)], nodes=nodes).rules_of("worker")
    assert isinstance(rule, Spread)
    assert rule.eligible == frozenset({"a", "b"})
    honour = [_constraint(nodeTaintsPolicy="Honor")]
    (rule,) = _rules([_set(topologySpreadConstraints=honour)], nodes=nodes).rules_of("worker")
    assert isinstance(rule, Spread)
    assert rule.eligible == frozenset({"b"})


def test_multi_attach_words_name_every_machine_it_is_attached_to() -> None:
    mount = [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]
    holders = [_pod("m1", "a", volumes=mount), _pod("m2", "b", volumes=mount)]
    rules = _rules(
        [_mounting()],
        pods=holders,
        claims={"data": _claim("data", ["ReadWriteOnce"])},
        volumes={"pv-1": _volume(["ReadWriteOnce"])},
    )
    (exclusion,) = rules.exclusions
    assert exclusion.reason == (
        "can't attach its volume 'data', which is attached to a, b and can be attached to one "
        "machine at a time"
    )
    assert exclusion.todo.startswith("run the training job on a, b, or keep")
    assert exclusion.detail == (
        "PersistentVolumeClaim data: ReadWriteOnce, in use on a, b (attach-detach Multi-Attach)"
    )


def test_the_details_of_rules_between_the_job_s_own_pods() -> None:
    claims = {"data": _claim("data", ["ReadWriteOncePod"])}
    rules = _rules([_mounting()], claims=claims, volumes={"pv-1": _volume(["ReadWriteOncePod"])})
    assert rules.details == (
        "PersistentVolumeClaim data is ReadWriteOncePod: one pod of worker, worker at a time",
    )
    disk = _rules(
        [_mounting()],
        claims={"data": _claim("data", ["ReadWriteOnce"])},
        volumes={"pv-1": _volume(["ReadWriteOnce"])},
    )
    assert disk.details == (
        "PersistentVolumeClaim data: ReadWriteOnce: its pods on one node (attach-detach "
        "Multi-Attach)",
    )


def test_words_that_list_several_names() -> None:
    pods = [_pod("r0", "a", {"job-name": "run"}), _pod("r1", "c", {"job-name": "run"})]
    (exclusion,) = _rules([_set(affinity=_anti(_term(ZONE)))], pods=pods).exclusions
    assert exclusion.detail.endswith(": z1, z2 already hold one")
    keeper = _anti(_term(matchExpressions=[{"key": "job-name", "operator": "Exists"}]))
    holders = [_pod("k1", "a", affinity=keeper), _pod("k2", "b", affinity=keeper)]
    (exclusion,) = _rules([_set()], pods=holders).exclusions
    assert exclusion.todo.startswith("stop 'k1', 'k2' when it is done")
    assert (
        exclusion.detail
        == "worker: the required pod anti-affinity of k1, k2 matches it: a, b refused"
    )
    other = {**_term(), "namespaces": ["x", "y"]}
    (unchecked,) = _rules([_set(affinity=_anti(other))]).unchecked
    assert (
        unchecked.why
        == "it looks at programs of other spaces ('x', 'y'), which doctor doesn't read"
    )
    per_pod = _term(
        matchExpressions=[
            {"key": "jobset.sigs.k8s.io/job-index", "operator": "Exists"},
            {"key": "batch.kubernetes.io/job-completion-index", "operator": "Exists"},
        ]
    )
    (unchecked,) = _rules([_set(affinity=_anti(per_pod))]).unchecked
    assert unchecked.detail == (
        "worker: a required pod anti-affinity term selects by "
        "batch.kubernetes.io/job-completion-index, jobset.sigs.k8s.io/job-index, set per pod by "
        "the controller"
    )


# -- NodePorts: pkg/scheduler/framework/plugins/nodeports, framework.HostPortInfo --------------


def _ports(*ports: Obj, host_network: bool = False) -> Obj:
    spec: Obj = {"containers": [{"name": "main", "ports": list(ports)}]}
    if host_network:
        spec["hostNetwork"] = True
    return spec


def test_a_machine_whose_pod_holds_the_port_is_taken_away() -> None:
    held = _pod("exporter", "b", **_ports({"containerPort": 9100, "hostPort": 29500}))
    other = _pod("web", "c", **_ports({"containerPort": 8080}))  # no hostPort: holds nothing
    sets = [_set(**_ports({"containerPort": 29500, "hostPort": 29500}))]
    rules = _rules(sets, pods=[held, other])
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("b",),
            "already running a program that holds a port it needs (29500/TCP)",
            "stop the programs that hold the port when they are done, or give the training "
            "job's programs another port in its settings",
            "NodePorts: worker asks for hostPort 29500/TCP; held on b by exporter",
            blockers=(Blocker("b", NS, "exporter", "b", 0, "holds port 29500/TCP"),),
        ),
    )
    assert rules.allowed("worker", ["a", "b", "c"]) == ["a", "c"]


def test_ports_conflict_by_protocol_and_address_as_host_port_info_does() -> None:
    def taken(wanted: Obj, holding: Obj) -> tuple[str, ...]:
        rules = _rules([_set(**_ports(wanted))], pods=[_pod("p", "a", **_ports(holding))])
        return tuple(m for e in rules.exclusions for m in e.machines)

    port = {"containerPort": 80, "hostPort": 8080}
    assert taken(port, port) == ("a",)
    assert taken(port, {**port, "protocol": "UDP"}) == ()  # another protocol
    assert taken({**port, "protocol": "SCTP"}, {**port, "protocol": "SCTP"}) == ("a",)
    assert taken({**port, "hostIP": "10.0.0.1"}, {**port, "hostIP": "10.0.0.2"}) == ()
    assert taken({**port, "hostIP": "10.0.0.1"}, port) == ("a",)  # 0.0.0.0 binds every address
    assert taken(port, {**port, "hostIP": "10.0.0.1"}) == ("a",)
    assert taken(port, {**port, "hostPort": 8081}) == ()
    assert taken({"containerPort": 8080}, {"containerPort": 8080}) == ()  # hostPort 0: none


def test_host_network_defaults_each_host_port_to_its_container_port() -> None:
    held = _pod("old", "a", **_ports({"containerPort": 29500, "hostPort": 29500}))
    sets = [_set(**_ports({"containerPort": 29500}, host_network=True))]
    assert [e.machines for e in _rules(sets, pods=[held]).exclusions] == [("a",)]
    plain = [_set(**_ports({"containerPort": 29500}))]
    assert _rules(plain, pods=[held]).exclusions == ()


def test_init_container_ports_are_not_held() -> None:
    init = {"name": "init", "ports": [{"containerPort": 1, "hostPort": 80}]}
    spec: Obj = {"initContainers": [init]}
    held = _pod("old", "a", **spec)
    assert (
        _rules([_set(**_ports({"containerPort": 80, "hostPort": 80}))], pods=[held]).exclusions
        == ()
    )
    assert _rules([_set(**spec)]).rules_of("worker") == ()


def test_sidecar_ports_are_held_by_the_pods_placed_and_asked_by_the_job() -> None:
    """kubernetes PR #132040 (1.34, backported to 1.33): NodePorts counts the host ports of
    init containers with restartPolicy Always, which run as long as the pod."""
    port = {"containerPort": 9400, "hostPort": 9400}
    sidecar: Obj = {
        "initContainers": [{"name": "metrics", "restartPolicy": "Always", "ports": [port]}]
    }
    held = _pod("exporter", "a", **sidecar)
    wanted = _rules([_set(**_ports(port))], pods=[held])
    assert [e.machines for e in wanted.exclusions] == [("a",)]
    asked = _rules([_set(**sidecar)], pods=[_pod("old", "b", **_ports(port))])
    assert [e.machines for e in asked.exclusions] == [("b",)]
    assert [r.words for r in _rules([_set(**sidecar)]).rules_of("worker")] == [
        "may not share a machine with another of its programs (each holds port 9400/TCP)"
    ]
    on_host: Obj = {
        "hostNetwork": True,
        "initContainers": [
            {"name": "m", "restartPolicy": "Always", "ports": [{"containerPort": 9400}]}
        ],
    }
    assert [e.machines for e in _rules([_set(**on_host)], pods=[held]).exclusions] == [("a",)]


def test_other_namespaces_pods_hold_their_ports_too() -> None:
    """NodeInfo.UsedPorts sums every pod on the machine, of any namespace."""
    port = {"containerPort": 9100, "hostPort": 9100}
    exporter = _pod("exporter", "b", namespace="monitoring", **_ports(port))
    rules = _rules([_set(**_ports(port))], rule_pods=[exporter])
    assert [(e.machines, e.detail) for e in rules.exclusions] == [
        (("b",), "NodePorts: worker asks for hostPort 9100/TCP; held on b by monitoring/exporter")
    ]
    # The namespace's own pods come from its list, not twice from the fold's.
    mine = _pod("old", "a", **_ports(port))
    assert [e.machines for e in _rules([_set(**_ports(port))], rule_pods=[mine]).exclusions] == []


def test_ports_asked_where_other_namespaces_were_not_read_are_unchecked() -> None:
    port = {"containerPort": 9100, "hostPort": 9100}
    rules = _rules([_set(**_ports(port))], rule_pods=None)
    assert [u.rule for u in rules.unchecked] == [
        "the rule that two programs may not hold one port on a machine",
        "the rules of running programs about what may run beside them",
    ]


def test_preemption_gives_back_a_machine_only_its_own_lower_priority_pods_refuse() -> None:
    """NodePorts and InterPodAffinity's anti-affinity refuse as Unschedulable: preemption
    filters the machine again without its pods of a lower priority (SelectVictimsOnNode), so
    the machine comes back when those were all that refused it; a pod elsewhere in the zone
    stays, as does one of the job's priority or above."""
    port = {"containerPort": 9400, "hostPort": 9400}
    held = _pod("exporter", "b", priority=10, **_ports(port))
    rules = _rules([_set(**_ports(port))], pods=[held])
    assert rules.allowed_preempting("worker", ["a", "b", "c"], 1000) == ["a", "b", "c"]
    assert rules.allowed_preempting("worker", ["a", "b", "c"], 10) == ["a", "c"]
    assert [(b.pod, b.words) for b in rules.preempted("worker", "b", 1000) or ()] == [
        ("exporter", "holds port 9400/TCP")
    ]
    apart = _set(affinity=_anti(_term(ZONE, matchLabels={"app": "cache"})))
    cache = _pod("cache", "a", {"app": "cache"})
    zoned = _rules([apart], pods=[cache])
    assert [e.machines for e in zoned.exclusions] == [("a", "b")]
    assert zoned.allowed_preempting("worker", ["a", "b", "c"], 1000) == ["a", "c"]
    keeper = _pod("keeper", "c", priority=2000, affinity=_anti(_term()))
    kept = _rules([_set()], pods=[keeper])
    assert kept.allowed_preempting("worker", ["a", "b", "c"], 1000) == ["a", "b"]
    assert kept.allowed_preempting("worker", ["a", "b", "c"], 3000) == ["a", "b", "c"]


def test_the_jobs_own_pods_that_need_one_port_never_share_a_machine() -> None:
    port = {"containerPort": 29500, "hostPort": 29500}
    worker = _set("worker", **_ports(port))
    leader = _set("leader", **_ports(port, {"containerPort": 6000, "hostPort": 6000}))
    rules = _rules([leader, worker])
    machines = (("a", "a"), ("b", "b"), ("c", "c"))
    assert rules.exclusions == ()
    assert rules.rules_of("leader") == (
        Apart(
            "leader",
            "leader",
            machines,
            "may not share a machine with another of its programs (each holds port 29500/TCP, "
            "6000/TCP)",
        ),
        Apart(
            "leader",
            "worker",
            machines,
            "may not share a machine with the programs of 'worker' (both hold port 29500/TCP)",
        ),
    )
    assert rules.rules_of("worker") == (
        Apart(
            "worker",
            "worker",
            machines,
            "may not share a machine with another of its programs (each holds port 29500/TCP)",
        ),
    )
    assert rules.todo(rules.rules_of("worker")[0].words) == (
        "give the training job's programs different ports, or run them on more machines"
    )


def test_a_job_without_host_ports_carries_no_port_rule() -> None:
    held = _pod("old", "a", **_ports({"containerPort": 80, "hostPort": 80}))
    rules = _rules([_set(**_ports({"containerPort": 80}))], pods=[held])
    assert (rules.exclusions, rules.rules_of("worker"), rules.details) == ((), (), ())


# -- VolumeZone ------------------------------------------------------------------------------


def _labelled_volume(labels: Mapping[str, str]) -> Got:
    """A PersistentVolume whose zone is in its labels alone (no node affinity)."""
    volume = _volume(["ReadWriteMany"], nfs={"server": "10.0.0.5", "path": "/data"})
    volume.obj["metadata"]["labels"] = dict(labels)
    return volume


def test_a_volume_zone_label_is_a_set_split_on_double_underscores() -> None:
    """cloud-provider volume/helpers `LabelZonesToSet`: `__` separates zones, spaces are
    trimmed, an empty element makes the label unreadable (the filter ignores it)."""
    assert label_values("z1") == frozenset({"z1"})
    assert label_values("z1__ z2") == frozenset({"z1", "z2"})
    assert label_values("z1____z2") is None
    assert label_values("") is None


def test_volume_zone_refuses_by_each_label_and_the_ga_form_of_a_beta_key() -> None:
    """volume_zone.go `Filter`: a machine without any topology label is never refused; else
    every volume label needs the machine's value (a beta key looked up in its GA form)."""
    zone_a = (("failure-domain.beta.kubernetes.io/zone", frozenset({"a"})),)
    assert not refuses({}, zone_a)
    assert not refuses({HOST: "m"}, zone_a)
    assert not refuses({ZONE: "a"}, zone_a)
    assert refuses({ZONE: "b"}, zone_a)
    assert not refuses({"failure-domain.beta.kubernetes.io/zone": "a", ZONE: "b"}, zone_a)
    region = (("topology.kubernetes.io/region", frozenset({"r1"})),)
    assert refuses({ZONE: "a"}, region)
    assert not refuses({ZONE: "a", "topology.kubernetes.io/region": "r1"}, region)
    assert refuses({"topology.kubernetes.io/region": "r1"}, (*region, *zone_a))


def test_volume_zone_reads_the_labels_in_the_filter_s_order_and_skips_an_unreadable_one() -> None:
    volume = _labelled_volume(
        {
            ZONE: "z1",
            "topology.kubernetes.io/region": "r__",
            "failure-domain.beta.kubernetes.io/zone": "z1__z2",
            "other": "x",
        }
    )
    assert volume_topologies(volume) == (
        ("failure-domain.beta.kubernetes.io/zone", frozenset({"z1", "z2"})),
        (ZONE, frozenset({"z1"})),
    )


def test_a_volume_labelled_with_a_zone_takes_the_machines_outside_it() -> None:
    rules = _rules(
        [_mounting()],
        claims={"data": _claim("data", ["ReadWriteMany"])},
        volumes={"pv-1": _labelled_volume({ZONE: "z2"})},
    )
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b"),
            "can't reach its volume 'data' (in zone z2)",
            "run the training job on machines in zone z2, where its volume 'data' is, or keep "
            "its data on storage the job's machines can reach",
            "PersistentVolume pv-1 (claim data) labelled topology.kubernetes.io/zone=z2: a, b "
            "refused (volumezone: node(s) had no available volume zone)",
        ),
    )


def test_each_volume_s_zones_and_regions_are_named_after_one_without_any() -> None:
    """Two claims: the first on a volume with no topology label (no rule), the second on one
    in two zones of one region. Each of its labels is named, each zone set in full."""
    plain = _labelled_volume({"team": "ml"})
    plain.obj["metadata"]["name"] = "pv-0"
    zoned = _labelled_volume({ZONE: "z3__z2", "topology.kubernetes.io/region": "r1"})
    nodes = [*_nodes(), _node("d", {ZONE: "z3", "topology.kubernetes.io/region": "r2"})]
    for machine in nodes[:3]:
        machine["metadata"]["labels"]["topology.kubernetes.io/region"] = "r1"
    rules = _rules(
        [_mounting(claim="first"), _mounting("leader")],
        nodes=nodes,
        claims={
            "first": _claim("first", ["ReadWriteMany"], volume="pv-0"),
            "data": _claim("data", ["ReadWriteMany"]),
        },
        volumes={"pv-0": plain, "pv-1": zoned},
    )
    where = "zone z2 or z3, region r1"
    assert rules.exclusions == (
        Exclusion(
            "leader",
            ("a", "b", "d"),
            f"can't reach its volume 'data' (in {where})",
            f"run the training job on machines in {where}, where its volume 'data' is, or keep "
            "its data on storage the job's machines can reach",
            "PersistentVolume pv-1 (claim data) labelled topology.kubernetes.io/zone=z3__z2, "
            "topology.kubernetes.io/region=r1: a, b, d refused (volumezone: node(s) had no "
            "available volume zone)",
        ),
    )


def test_a_volume_without_zone_labels_or_not_bound_is_no_volume_zone_rule() -> None:
    unbound = _claim("data", ["ReadWriteMany"], phase="Pending")
    volumes = {"pv-1": _labelled_volume({ZONE: "z2"})}
    assert _rules([_mounting()], claims={"data": unbound}, volumes=volumes).exclusions == ()
    plain = {"pv-1": _labelled_volume({"team": "ml"})}
    assert (
        _rules(
            [_mounting()], claims={"data": _claim("data", ["ReadWriteMany"])}, volumes=plain
        ).exclusions
        == ()
    )
