"""Topology spread's label selector as the scheduler reads it: `labelSelector: {}` is
`labels.Everything()`, a missing one `labels.Nothing()` (apimachinery pkg/apis/meta/v1/
helpers.go `LabelSelectorAsSelector`; podtopologyspread common.go
`filterTopologySpreadConstraints`, `countPodsMatchSelector`)."""

from typing import Any

from truegreen.cluster import Listed
from truegreen.doctor.checks.capacity.filters.framework import JobPodSet
from truegreen.doctor.checks.capacity.filters.rules import Rules, scheduling_rules
from truegreen.doctor.checks.capacity.placement import Spread
from truegreen.kubectl import Kubectl

ZONE = "topology.kubernetes.io/zone"


def _node(name: str, zone: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, ZONE: zone}
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {}}


def _pod(name: str, machine: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "train", "labels": labels},
        "spec": {"nodeName": machine},
        "status": {"phase": "Running"},
    }


def _rules(selector: object) -> Rules:
    constraint: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
    }
    if selector is not None:
        constraint["labelSelector"] = selector
    sets = (
        JobPodSet("launcher", {"topologySpreadConstraints": [constraint]}, {"role": "launcher"}),
        JobPodSet("worker", {}, {"role": "worker"}),
    )
    return scheduling_rules(
        sets,
        namespace="train",
        namespace_labels={},
        nodes=[_node("a", "z1"), _node("b", "z2")],
        pods=Listed((_pod("web-0", "a", {"app": "web"}), _pod("db-0", "a", {}))),
        claims={},
        volumes={},
        drivers={},
        devices=None,
        kubectl=Kubectl(),
    )


def test_an_empty_selector_counts_every_pod_and_every_pod_set() -> None:
    assert _rules({}).rules_of("launcher") == (
        Spread(
            "launcher",
            (("a", "z1"), ("b", "z2")),
            frozenset({"a", "b"}),
            (("z1", 2), ("z2", 0)),
            1,
            1,
            frozenset({"launcher", "worker"}),
            "would put more than 1 program in one zone beyond the zone with the fewest",
        ),
    )


def test_a_missing_selector_makes_no_rule() -> None:
    assert _rules(None).rules_of("launcher") == ()
