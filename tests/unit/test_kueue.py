"""doctor/knowledge/kueue.py value by value: Kueue's objects read in both versions, the quota tree
of pkg/cache/scheduler/resource_node.go, the flavor assignment of
pkg/scheduler/flavorassigner/flavorassigner.go, and what a Workload's conditions say."""

from datetime import UTC, datetime
from typing import Any

import pytest

from truegreen.cluster import Kind
from truegreen.doctor.checks.queue import flavor_assigner as fa
from truegreen.doctor.knowledge import kueue as k
from truegreen.doctor.knowledge.kueue_kinds import V1BETA1, V1BETA2, kinds_served
from truegreen.quantity import Resources

GPU = "nvidia.com/gpu"
FR = ("f", GPU)


def _cq(
    name: str = "cq",
    *,
    quotas: dict[tuple[str, str], k.Quota] | None = None,
    groups: tuple[k.ResourceGroup, ...] = (k.ResourceGroup((GPU,), ("f",)),),
    parent: str = "",
    reserved: dict[tuple[str, str], int] | None = None,
    **queue: Any,
) -> k.ClusterQueue:
    return k.ClusterQueue(
        k.QuotaNode(name, parent, quotas or {FR: k.Quota(8)}, groups, reserved or {}), **queue
    )


def _pod_set(gpus: int, count: int = 1, name: str = "main", **spec: Any) -> k.PodSetRequest:
    return k.PodSetRequest(name, count, Resources.of({GPU: gpus}), spec)


# -- versions and objects ------------------------------------------------------------------------


def test_discovery_picks_v1beta2_where_served_else_v1beta1() -> None:
    assert kinds_served(("v1beta1", "v1beta2")) is V1BETA2
    assert kinds_served(("v1beta1",)) is V1BETA1
    assert kinds_served(("v1alpha1",)) is None
    assert kinds_served(()) is None
    assert V1BETA2.cluster_queue is Kind.CLUSTER_QUEUE
    assert V1BETA1.workload.spec.api_version == "kueue.x-k8s.io/v1beta1"


def _cluster_queue_object(version: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"team": "a"}},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", GPU],
                "flavors": [
                    {
                        "name": "a100",
                        "resources": [
                            {
                                "name": "cpu",
                                "nominalQuota": "500m",
                                "borrowingLimit": "250m",
                                "lendingLimit": "100m",
                            },
                            {
                                "name": GPU,
                                "nominalQuota": "8",
                                "borrowingLimit": "2",
                                "lendingLimit": "1",
                            },
                        ],
                    },
                    {"name": "h100", "resources": [{"name": GPU, "nominalQuota": 4}]},
                ],
            }
        ],
        "stopPolicy": "Hold",
        "flavorFungibility": {
            "whenCanBorrow": "TryNextFlavor",
            "preference": "PreemptionOverBorrowing",
        },
    }
    if version == "v1beta2":
        spec["cohortName"] = "research"
        spec["admissionChecksStrategy"] = {
            "admissionChecks": [{"name": "prov", "onFlavors": ["a100"]}, {"name": "all"}]
        }
    else:
        spec["cohort"] = "research"
        spec["admissionChecks"] = ["all"]
        spec["admissionChecksStrategy"] = {
            "admissionChecks": [{"name": "prov", "onFlavors": ["a100"]}]
        }
    return {
        "kind": "ClusterQueue",
        "metadata": {"name": "team-a"},
        "spec": spec,
        "status": {
            "conditions": [
                {"type": "Active", "status": "False", "reason": "FlavorNotFound", "message": "m"}
            ],
            "flavorsReservation": [
                {
                    "name": "a100",
                    "resources": [
                        {"name": GPU, "total": "3"},
                        {"name": "cpu", "total": "250m"},
                        {"name": "memory", "total": "0"},
                    ],
                }
            ],
            "pendingWorkloadsStatus": {
                "clusterQueuePendingWorkload": [
                    {"name": "w1", "namespace": "ns"},
                    {"name": "w2", "namespace": "ns"},
                ]
            },
        },
    }


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_a_cluster_queue_is_read_in_either_version(version: str) -> None:
    queue = k.cluster_queue(_cluster_queue_object(version))
    assert queue.name == "team-a"
    assert queue.node.parent == "research"
    assert queue.node.groups == (k.ResourceGroup(("cpu", GPU), ("a100", "h100")),)
    assert queue.node.quotas == {
        ("a100", "cpu"): k.Quota(500, 250, 100),
        ("a100", GPU): k.Quota(8, 2, 1),
        ("h100", GPU): k.Quota(4),
    }
    assert queue.node.reserved == {("a100", GPU): 3, ("a100", "cpu"): 250}
    assert queue.stop_policy == "Hold"
    assert queue.active == k.Condition("False", "FlavorNotFound", "m")
    assert queue.namespace_selector == {"matchLabels": {"team": "a"}}
    assert sorted(queue.admission_checks) == [("all", ()), ("prov", ("a100",))]
    assert queue.when_can_borrow == "TryNextFlavor"
    assert queue.preference == "PreemptionOverBorrowing"
    assert queue.pending_head == (("ns", "w1"), ("ns", "w2"))


def test_a_cluster_queue_s_defaults() -> None:
    queue = k.cluster_queue({"metadata": {"name": "q"}, "spec": {}})
    assert queue == k.ClusterQueue(k.QuotaNode("q"))
    assert queue.stop_policy == "None"
    assert queue.namespace_selector is None
    assert queue.when_can_borrow == "MayStopSearch"
    assert queue.active is None


def test_a_quantity_that_is_no_quantity_counts_as_none() -> None:
    queue = k.cluster_queue(
        {
            "metadata": {"name": "q"},
            "spec": {
                "resourceGroups": [
                    {
                        "coveredResources": [GPU],
                        "flavors": [
                            {
                                "name": "f",
                                "resources": [
                                    {"name": GPU, "nominalQuota": "lots", "borrowingLimit": "x"}
                                ],
                            }
                        ],
                    }
                ]
            },
        }
    )
    assert queue.node.quotas == {FR: k.Quota(0, None)}


def test_cohort_flavor_and_local_queue() -> None:
    cohort = k.cohort(
        {
            "metadata": {"name": "research"},
            "spec": {
                "parentName": "org",
                "resourceGroups": [
                    {
                        "coveredResources": [GPU],
                        "flavors": [
                            {"name": "f", "resources": [{"name": GPU, "nominalQuota": "2"}]}
                        ],
                    }
                ],
            },
        }
    )
    assert cohort == k.QuotaNode(
        "research", "org", {FR: k.Quota(2)}, (k.ResourceGroup((GPU,), ("f",)),)
    )
    flavor = k.flavor(
        {
            "metadata": {"name": "f"},
            "spec": {
                "nodeLabels": {"pool": "gpu"},
                "nodeTaints": [{"key": "gpu", "effect": "NoSchedule"}],
                "tolerations": [{"key": "spot", "operator": "Exists"}],
            },
        }
    )
    assert flavor == k.Flavor(
        "f",
        {"pool": "gpu"},
        ({"key": "gpu", "effect": "NoSchedule"},),
        ({"key": "spot", "operator": "Exists"},),
    )
    assert k.local_queue(
        {"metadata": {"name": "lq"}, "spec": {"clusterQueue": "cq", "stopPolicy": "Hold"}}
    ) == (k.LocalQueue("lq", "cq", "Hold"))
    assert k.local_queue({"metadata": {"name": "lq"}}) == k.LocalQueue("lq", "", "None")


def _workload_object(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "job-run-abcde",
            "namespace": "train",
            "labels": {k.JOB_UID_LABEL: "uid-label"},
            "ownerReferences": [
                {"kind": "Other", "name": "not-it", "uid": "uid-other"},
                {"kind": "Job", "name": "run", "uid": "uid-run", "controller": True},
            ],
        },
        "spec": {
            "queueName": "team-a",
            "priority": 7,
            "active": False,
            "podSets": [
                {"name": "main", "count": 3, "template": {"spec": {"containers": [{"name": "c"}]}}},
                {"name": "bad", "count": 1, "template": {"spec": {}}},
            ],
        },
        "status": status,
    }


def test_a_workload_s_record() -> None:
    status = {
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "ok"},
            {"type": "Admitted", "status": "False"},
        ],
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {
                    "name": "main",
                    "flavors": {GPU: "f", "cpu": "c"},
                    "resourceUsage": {GPU: "6", "cpu": "1500m"},
                },
                {
                    "name": "other",
                    "flavors": {GPU: "f"},
                    "resourceUsage": {GPU: "2", "memory": "0"},
                },
            ],
        },
        "admissionChecks": [{"name": "prov", "state": "Pending", "message": "wait"}, {"name": "x"}],
        "requeueState": {"count": 2, "requeueAt": "2026-12-01T12:10:00Z"},
    }

    def sizes(spec: Any) -> Resources:
        if not spec:
            from truegreen.quantity import QuantityError

            raise QuantityError("bad")
        return Resources.of({GPU: 2})

    found = k.workload(_workload_object(**status), sizes)
    assert found.name == "job-run-abcde"
    assert found.namespace == "train"
    assert found.queue == "team-a"
    assert found.owner_uids == frozenset({"uid-other", "uid-run"})
    assert found.owner == "run"
    assert found.job_uid == "uid-label"
    assert found.active is False
    assert found.priority == 7
    assert found.cluster_queue == "cq"
    assert found.usage == {("f", GPU): 8, ("c", "cpu"): 1500}
    assert found.conditions == {
        "QuotaReserved": k.Condition("True", "QuotaReserved", "ok"),
        "Admitted": k.Condition("False"),
    }
    assert found.holds("QuotaReserved")
    assert not found.holds("Admitted")
    assert not found.holds("Finished")
    assert found.checks == (k.CheckState("prov", "Pending", "wait"), k.CheckState("x", ""))
    assert [(p.name, p.count, p.requests) for p in found.pod_sets] == [
        ("main", 3, Resources.of({GPU: 2})),
        ("bad", 1, Resources()),
    ]
    assert found.pod_sets[0].spec == {"containers": [{"name": "c"}]}
    assert found.requeue_at == datetime(2026, 12, 1, 12, 10, tzinfo=UTC)
    assert found.requeue_count == 2


def test_a_workload_without_a_controller_owner_is_its_first_owner_s() -> None:
    obj = _workload_object()
    obj["metadata"]["ownerReferences"] = [{"kind": "Job", "name": "first", "uid": ""}]
    obj["spec"].pop("active")
    found = k.workload(obj, lambda spec: Resources())
    assert found.owner == "first"
    assert found.owner_uids == frozenset()
    assert found.active is True
    assert found.cluster_queue == ""
    assert found.requeue_at is None
    assert found.requeue_count == 0


def test_the_job_s_workload_by_owner_or_by_the_job_uid_label() -> None:
    by_owner = k.Workload("a", "ns", "q", frozenset({"u1"}))
    by_label = k.Workload("b", "ns", "q", frozenset(), job_uid="u2")
    found = [by_owner, by_label]
    assert k.workload_of(found, "u1") is by_owner
    assert k.workload_of(found, "u2") is by_label
    assert k.workload_of(found, "u3") is None
    assert k.workload_of([k.Workload("c", "ns", "q", frozenset({""}), job_uid="")], "") is None


# -- the quota tree ------------------------------------------------------------------------------


def _tree() -> tuple[k.QuotaTree, k.QuotaNode, k.QuotaNode]:
    """CQ a: 8, lending limit 2 (6 kept), 3 used; CQ b: 4, borrowing limit 1; cohort root."""
    a = _cq("a", quotas={FR: k.Quota(8, None, 2)}, parent="root", reserved={FR: 3})
    b = _cq("b", quotas={FR: k.Quota(4, 1)}, parent="root")
    tree = k.QuotaTree.of([a, b], [])
    return tree, a.node, b.node


def test_subtree_and_local_quota() -> None:
    tree, a, b = _tree()
    root = tree.cohorts["root"]
    assert tree.subtree_quota(a, FR) == 8
    assert tree.local_quota(a, FR) == 6
    assert tree.local_quota(b, FR) == 0
    assert tree.subtree_quota(root, FR) == 6  # a lends 2, b lends 4
    assert tree.usage(a, FR) == 3
    assert tree.usage(root, FR) == 0  # a's use is within what it keeps
    assert tree.local_available(a, FR) == 3
    assert tree.local_available(b, FR) == 0


def test_available_and_potential_with_lending_and_borrowing_limits() -> None:
    tree, a, b = _tree()
    assert tree.available(a, FR) == 9  # 3 of its own, 6 from the cohort
    assert tree.available(b, FR) == 5  # its 4 and 1 borrowed, at most
    assert tree.potential(a, FR) == 12
    assert tree.potential(b, FR) == 5
    assert tree.borrows_with(a, FR, 5) is False
    assert tree.borrows_with(a, FR, 6) is True
    assert tree.borrows_with(b, FR, 4) is False
    assert tree.borrows_with(b, FR, 5) is True


def test_usage_past_what_a_member_keeps_is_the_cohort_s() -> None:
    a = _cq("a", quotas={FR: k.Quota(8, None, 2)}, parent="root", reserved={FR: 10})
    b = _cq("b", quotas={FR: k.Quota(4, 1)}, parent="root", reserved={FR: 2})
    tree = k.QuotaTree.of([a, b], [])
    root = tree.cohorts["root"]
    assert tree.usage(root, FR) == 6  # a: 10 - 6 kept; b: 2 - 0
    assert tree.available(b.node, FR) == 0  # the cohort has 6 - 6 left
    assert tree.available(a.node, FR) == 0
    over = _cq("o", quotas={FR: k.Quota(1)}, reserved={FR: 3})
    assert k.QuotaTree.of([over], []).available(over.node, FR) == 0  # never below 0


def test_a_queue_alone_has_only_its_own_quota() -> None:
    queue = _cq(reserved={FR: 5})
    tree = k.QuotaTree.of([queue], [])
    assert tree.parent(queue.node) is None
    assert tree.available(queue.node, FR) == 3
    assert tree.potential(queue.node, FR) == 8
    assert tree.borrows_with(queue.node, FR, 100) is False
    assert tree.subtree_quota(queue.node, ("g", GPU)) == 0
    assert tree.borrows_with(queue.node, ("g", GPU), 1) is False


def test_a_cohort_s_own_quota_and_its_parent() -> None:
    leaf = _cq("leaf", quotas={FR: k.Quota(0)}, parent="mid")
    mid = k.QuotaNode("mid", "top", {FR: k.Quota(2)})
    top = k.QuotaNode("top", "", {FR: k.Quota(3)})
    tree = k.QuotaTree.of([leaf], [mid, top])
    assert tree.subtree_quota(tree.cohorts["top"], FR) == 5
    assert tree.available(leaf.node, FR) == 5
    assert tree.potential(leaf.node, FR) == 5
    assert tree.borrows_with(leaf.node, FR, 1) is True


def test_a_cycle_of_cohorts_ends() -> None:
    leaf = _cq("leaf", parent="x")
    tree = k.QuotaTree.of([leaf], [k.QuotaNode("x", "y"), k.QuotaNode("y", "x")])
    assert tree.potential(leaf.node, FR) >= 0
    assert tree.available(leaf.node, FR) >= 0


def test_a_cohort_named_without_an_object_has_no_quota() -> None:
    tree = k.QuotaTree.of([_cq("a", parent="implicit")], [])
    assert tree.cohorts["implicit"] == k.QuotaNode("implicit")


# -- flavor assignment ---------------------------------------------------------------------------

TWO_FLAVORS = (k.ResourceGroup((GPU,), ("first", "second")),)
FLAVORS = {"first": k.Flavor("first"), "second": k.Flavor("second"), "f": k.Flavor("f")}


def _assign(queue: k.ClusterQueue, *pod_sets: k.PodSetRequest, cohorts: Any = ()) -> fa.Assignment:
    lenders = [q for q in cohorts if isinstance(q, k.ClusterQueue)]
    return fa.assign(queue, k.QuotaTree.of([queue, *lenders], []), FLAVORS, pod_sets)


def test_a_pod_set_that_fits_takes_the_first_flavor() -> None:
    assignment = _assign(_cq(), _pod_set(4, 2))
    assert assignment.mode is fa.Mode.FITS
    assert assignment.pod_sets == (fa.PodSetAssignment("main", fa.Mode.FITS, {GPU: "f"}),)
    assert not assignment.borrows
    assert assignment.reasons == ()
    assert assignment.short == {}


def test_in_use_quota_waits_and_says_how_much_more() -> None:
    assignment = _assign(_cq(reserved={FR: 6}), _pod_set(4))
    assert assignment.mode is fa.Mode.WAITS
    assert assignment.reasons == (
        "couldn't assign flavors to pod set main: insufficient unused quota for "
        "nvidia.com/gpu in flavor f, 2 more needed",
    )
    assert assignment.short == {FR: 2}
    assert assignment.pod_sets[0].flavors == {GPU: "f"}


def test_more_than_the_quota_ever_is_no_fit() -> None:
    assignment = _assign(_cq(), _pod_set(9))
    assert assignment.mode is fa.Mode.NO_FIT
    assert assignment.pod_sets[0].flavors == {}
    assert assignment.reasons == (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
        "flavor f, previously considered podsets requests (0) + current podset request (9) > "
        "maximum capacity (8)",
    )


def test_earlier_pod_sets_count_against_later_ones_and_a_failure_ends_it() -> None:
    assignment = _assign(
        _cq(), _pod_set(2, 2, "launcher"), _pod_set(5, 1, "worker"), _pod_set(1, 1, "never")
    )
    assert [p.name for p in assignment.pod_sets] == ["launcher", "worker"]
    assert assignment.pod_sets[1].mode is fa.Mode.NO_FIT
    assert (
        "previously considered podsets requests (4) + current podset request (5)"
        in (assignment.reasons[0])
    )


def test_a_resource_no_group_covers_is_no_fit() -> None:
    queue = _cq()
    pod_set = k.PodSetRequest("main", 1, Resources.of({"cpu": 1000, GPU: 1}), {})
    assignment = _assign(queue, pod_set)
    assert assignment.mode is fa.Mode.NO_FIT
    assert assignment.reasons == (
        "couldn't assign flavors to pod set main: resource cpu unavailable in ClusterQueue",
    )


def test_the_pods_resource_counts_where_the_queue_covers_it() -> None:
    groups = (k.ResourceGroup((GPU, "pods"), ("f",)),)
    queue = _cq(groups=groups, quotas={FR: k.Quota(8), ("f", "pods"): k.Quota(2)})
    assert _assign(queue, _pod_set(1, 2)).mode is fa.Mode.FITS
    assert _assign(queue, _pod_set(1, 3)).mode is fa.Mode.NO_FIT
    assert _assign(_cq(), _pod_set(1, 300)).mode is fa.Mode.NO_FIT  # gpus, not pods


def test_a_flavor_in_use_is_passed_over_for_one_with_room() -> None:
    quotas = {("first", GPU): k.Quota(4), ("second", GPU): k.Quota(4)}
    queue = _cq(groups=TWO_FLAVORS, quotas=quotas, reserved={("first", GPU): 4})
    assignment = _assign(queue, _pod_set(2))
    assert assignment.pod_sets[0].flavors == {GPU: "second"}
    assert assignment.mode is fa.Mode.FITS
    both = _cq(groups=TWO_FLAVORS, quotas=quotas, reserved={("first", GPU): 4, ("second", GPU): 4})
    waits = _assign(both, _pod_set(2))
    assert waits.mode is fa.Mode.WAITS
    assert waits.pod_sets[0].flavors == {GPU: "first"}, "of equals, the first"
    assert waits.short == {("first", GPU): 2}


def test_a_flavor_too_small_is_passed_over() -> None:
    quotas = {("first", GPU): k.Quota(1), ("second", GPU): k.Quota(4)}
    queue = _cq(groups=TWO_FLAVORS, quotas=quotas)
    assignment = _assign(queue, _pod_set(2))
    assert assignment.pod_sets[0].flavors == {GPU: "second"}
    assert assignment.pod_sets[0].reasons == ()


def _borrowing_queue(**queue: Any) -> tuple[k.ClusterQueue, k.ClusterQueue]:
    quotas = {("first", GPU): k.Quota(0), ("second", GPU): k.Quota(4)}
    lender = _cq("lender", groups=TWO_FLAVORS, quotas={("first", GPU): k.Quota(8)}, parent="c")
    return _cq(groups=TWO_FLAVORS, quotas=quotas, parent="c", **queue), lender


def test_borrowing_stops_the_search_unless_told_to_try_the_next_flavor() -> None:
    queue, lender = _borrowing_queue()
    borrows = _assign(queue, _pod_set(2), cohorts=[lender])
    assert borrows.pod_sets[0].flavors == {GPU: "first"}
    assert borrows.borrows
    assert borrows.mode is fa.Mode.FITS
    queue, lender = _borrowing_queue(when_can_borrow="TryNextFlavor")
    own = _assign(queue, _pod_set(2), cohorts=[lender])
    assert own.pod_sets[0].flavors == {GPU: "second"}
    assert not own.borrows


def test_which_flavor_is_preferred() -> None:
    queue = _cq()
    fits = fa.Trial("a", fa.Mode.FITS)
    borrows = fa.Trial("b", fa.Mode.FITS, True)
    waits = fa.Trial("c", fa.Mode.WAITS)
    never = fa.Trial("d", fa.Mode.NO_FIT)
    assert fa._preferred(fits, None, queue)
    assert not fa._preferred(never, None, queue)
    assert fa._preferred(waits, never, queue)
    assert fa._preferred(fits, borrows, queue)
    assert not fa._preferred(borrows, fits, queue)
    assert fa._preferred(borrows, waits, queue), "borrowing over waiting, by default"
    assert not fa._preferred(fits, fits, queue)
    other = _cq(preference="PreemptionOverBorrowing")
    assert fa._preferred(waits, borrows, other)
    assert not fa._preferred(borrows, waits, other)
    assert fa._preferred(fits, waits, other)
    assert not fa._preferred(waits, waits, other)


def test_when_to_look_at_the_next_flavor() -> None:
    queue = _cq()
    assert fa._try_next(fa.Trial("a", fa.Mode.NO_FIT), queue)
    assert fa._try_next(fa.Trial("a", fa.Mode.WAITS), queue)
    assert not fa._try_next(fa.Trial("a", fa.Mode.FITS), queue)
    assert not fa._try_next(fa.Trial("a", fa.Mode.FITS, True), queue)
    assert fa._try_next(fa.Trial("a", fa.Mode.FITS, True), _cq(when_can_borrow="TryNextFlavor"))
    assert not fa._try_next(fa.Trial("a", fa.Mode.FITS), _cq(when_can_borrow="TryNextFlavor"))


def test_every_resource_of_a_group_takes_the_same_flavor() -> None:
    groups = (k.ResourceGroup(("cpu", GPU), ("first", "second")),)
    quotas = {
        ("first", "cpu"): k.Quota(1000),
        ("first", GPU): k.Quota(8),
        ("second", "cpu"): k.Quota(8000),
        ("second", GPU): k.Quota(8),
    }
    queue = _cq(groups=groups, quotas=quotas)
    pod_set = k.PodSetRequest("main", 1, Resources.of({"cpu": 2000, GPU: 1}), {})
    assignment = _assign(queue, pod_set)
    assert assignment.pod_sets[0].flavors == {"cpu": "second", GPU: "second"}
    assert assignment.reasons == ()


def test_a_worse_resource_decides_and_any_borrowing_borrows() -> None:
    groups = (k.ResourceGroup(("cpu", GPU), ("f",)),)
    quotas = {("f", "cpu"): k.Quota(1000), FR: k.Quota(0)}
    lender = _cq(
        "l", groups=(k.ResourceGroup((GPU,), ("f",)),), quotas={FR: k.Quota(4)}, parent="c"
    )
    queue = _cq(groups=groups, quotas=quotas, parent="c", reserved={("f", "cpu"): 1000})
    pod_set = k.PodSetRequest("main", 1, Resources.of({"cpu": 500, GPU: 1}), {})
    assignment = _assign(queue, pod_set, cohorts=[lender])
    assert assignment.mode is fa.Mode.WAITS
    assert assignment.borrows
    assert assignment.short == {("f", "cpu"): 500}
    assert assignment.reasons == (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
        "flavor f, 500m more needed",
    )


def test_a_flavor_whose_machines_the_job_may_not_use() -> None:
    tainted = k.Flavor("f", node_taints=({"key": "gpu", "value": "a100", "effect": "NoSchedule"},))
    assert (
        fa._flavor_mismatch(tainted, "f", {}) == "untolerated taint gpu=a100:NoSchedule in flavor f"
    )
    assert (
        fa._flavor_mismatch(tainted, "f", {"tolerations": [{"key": "gpu", "operator": "Exists"}]})
        is None
    )
    own = k.Flavor("f", node_taints=tainted.node_taints, tolerations=({"operator": "Exists"},))
    assert fa._flavor_mismatch(own, "f", {}) is None
    soft = k.Flavor("f", node_taints=({"key": "gpu", "effect": "PreferNoSchedule"},))
    assert fa._flavor_mismatch(soft, "f", {}) is None
    bare = k.Flavor("f", node_taints=({"key": "gpu", "effect": "NoExecute"},))
    assert fa._flavor_mismatch(bare, "f", {}) == "untolerated taint gpu:NoExecute in flavor f"
    assert fa._flavor_mismatch(None, "gone", {}) == "flavor gone not found"


def test_placement_rules_are_read_on_the_flavor_s_own_label_keys() -> None:
    flavor = k.Flavor("f", {"pool": "a100"})
    assert fa._flavor_mismatch(flavor, "f", {"nodeSelector": {"pool": "h100"}}) == (
        "flavor f doesn't match node affinity"
    )
    assert fa._flavor_mismatch(flavor, "f", {"nodeSelector": {"pool": "a100", "zone": "x"}}) is None

    def affinity(*terms: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
                    }
                }
            }
        }

    wrong = [{"key": "pool", "operator": "In", "values": ["h100"]}]
    other_key = [{"key": "zone", "operator": "In", "values": ["x"]}]
    right = [{"key": "pool", "operator": "In", "values": ["a100"]}]
    assert (
        fa._flavor_mismatch(flavor, "f", affinity(wrong)) == "flavor f doesn't match node affinity"
    )
    assert fa._flavor_mismatch(flavor, "f", affinity(wrong, right)) is None
    assert fa._flavor_mismatch(flavor, "f", affinity(wrong, other_key)) is None, (
        "a term with none of the flavor's keys matches any flavor"
    )
    assert fa._flavor_mismatch(flavor, "f", affinity(other_key + wrong)) == (
        "flavor f doesn't match node affinity"
    )


def test_a_mismatched_flavor_is_passed_over_with_its_reason() -> None:
    flavors = {
        "first": k.Flavor("first", {"pool": "a"}),
        "second": k.Flavor("second", {"pool": "b"}),
    }
    quotas = {("first", GPU): k.Quota(8), ("second", GPU): k.Quota(8)}
    queue = _cq(groups=TWO_FLAVORS, quotas=quotas)
    tree = k.QuotaTree.of([queue], [])
    ps = _pod_set(1, nodeSelector={"pool": "b"})
    assignment = fa.assign(queue, tree, flavors, [ps])
    assert assignment.pod_sets[0].flavors == {GPU: "second"}
    never = fa.assign(queue, tree, flavors, [_pod_set(1, nodeSelector={"pool": "c"})])
    assert never.mode is fa.Mode.NO_FIT
    assert never.reasons == (
        "couldn't assign flavors to pod set main: flavor first doesn't match node affinity, "
        "flavor second doesn't match node affinity",
    )


def test_an_empty_job_fits() -> None:
    assert fa.Assignment(()).mode is fa.Mode.FITS
    assert _assign(_cq(), k.PodSetRequest("main", 1, Resources(), {})).mode is fa.Mode.FITS


@pytest.mark.parametrize(
    ("resource", "amount", "words"),
    [
        ("cpu", 500, "500m"),
        ("cpu", 2000, "2"),
        ("cpu", 0, "0"),
        ("memory", 16 * 1024**3, "16Gi"),
        ("memory", 1536, "1536"),
        ("memory", 3 * 1024**2, "3Mi"),
        (GPU, 8, "8"),
        (GPU, 0, "0"),
    ],
)
def test_quantities_as_kueue_prints_them(resource: str, amount: int, words: str) -> None:
    assert fa.quantity_words(resource, amount) == words


# -- what the Workload says ----------------------------------------------------------------------


def _said(*conditions: tuple[str, str, str, str], active: bool = True, checks: Any = ()) -> k.Said:
    found = k.Workload(
        "w",
        "ns",
        "q",
        frozenset(),
        active=active,
        conditions={c[0]: k.Condition(c[1], c[2], c[3]) for c in conditions},
        checks=tuple(checks),
    )
    return k.said(found)


RESERVED = ("QuotaReserved", "True", "QuotaReserved", "")


def test_what_the_workload_s_conditions_say() -> None:
    assert _said() is k.Said.NOTHING
    assert _said(active=False) is k.Said.DEACTIVATED
    assert _said(RESERVED, ("Admitted", "True", "Admitted", "")) is k.Said.ADMITTED
    assert _said(RESERVED) is k.Said.CHECKS_PENDING
    assert _said(RESERVED, checks=[k.CheckState("c", "Rejected")]) is k.Said.CHECK_REJECTED
    assert _said(RESERVED, checks=[k.CheckState("c", "Pending")]) is k.Said.CHECKS_PENDING


ADMITTED = ("Admitted", "True", "Admitted", "")


@pytest.mark.parametrize(
    ("reason", "again"),
    [
        ("Preempted", True),
        ("NodeFailures", True),
        ("PodsReadyTimeout", False),
        ("AdmissionCheck", False),
        ("ClusterQueueStopped", False),
    ],
)
def test_an_eviction_under_way_is_no_admission(reason: str, again: bool) -> None:
    """jobframework/reconciler.go "handle eviction": Evicted True stops the job, then clears
    its reservation; `setRequeued` only for Preempted and NodeFailures."""
    evicted = ("Evicted", "True", reason, "m")
    assert _said(RESERVED, ADMITTED, evicted) is k.Said.EVICTED
    assert _said(RESERVED, evicted) is k.Said.EVICTED
    conditions = {"Evicted": k.Condition("True", reason)}
    found = k.Workload("w", "ns", "q", frozenset(), conditions=conditions)
    assert k.requeued(found) is again


@pytest.mark.parametrize(
    ("reason", "checks", "retry"),
    [
        ("AdmissionCheck", [k.CheckState("p", "Retry", "Retrying after failure: x")], True),
        (
            "AdmissionCheck",
            [k.CheckState("p", "Pending", "Reset to Pending after eviction. Previously: Retry")],
            True,
        ),
        ("AdmissionCheck", [], True),
        ("AdmissionCheck", [k.CheckState("p", "Rejected", "no capacity")], False),
        ("PodsReadyTimeout", [], False),
        ("Preempted", [], False),
    ],
    ids=["retry", "reset-after-eviction", "checks-unread", "rejected-before-v0.8", "pods", "pre"],
)
def test_an_eviction_for_a_check_that_said_retry(
    reason: str, checks: list[k.CheckState], retry: bool
) -> None:
    """workload_controller.go `reconcileCheckBasedEviction`: a Retry check evicts with reason
    AdmissionCheck (a wait: Kueue queues it again after the backoff); a Rejected one turns the
    workload off since v0.8, and before that was evicted with the same reason."""
    conditions = {"Evicted": k.Condition("True", reason, "m")}
    found = k.Workload("w", "ns", "q", frozenset(), conditions=conditions, checks=tuple(checks))
    assert k.check_retry(found) is retry
    assert [c.retried for c in checks] == [retry] * len(checks)


@pytest.mark.parametrize(
    ("checks", "evicted", "words"),
    [
        ([k.CheckState("p", "Retry", "Retrying after failure: no room")], "", "no room"),
        (
            [k.CheckState("p", "Pending", "Reset to Pending after eviction. Previously: Retry")],
            'Evicted due to AdmissionChecks in Retry state: "a" (Retrying after booking '
            'expired: gone); "p" (Retrying after failure: max node group size reached (2))',
            "max node group size reached (2)",
        ),
        (
            [k.CheckState("p", "Retry", "Retrying after booking expired: gone")],
            'Evicted due to AdmissionCheck in Retry state: "p" (Retrying after booking '
            "expired: gone)",
            "",
        ),
        (
            [k.CheckState("p", "Pending", "Reset to Pending after eviction. Previously: Retry")],
            "At least one admission check is false",
            "",
        ),
    ],
    ids=["check-retrying", "quoted-by-the-eviction", "booking-expired", "before-v0.18"],
)
def test_the_autoscaler_s_words_of_a_retried_failure(
    checks: list[k.CheckState], evicted: str, words: str
) -> None:
    """provisioning/controller.go writes "Retrying after failure: <the request's Failed
    message>" on the check; since v0.18 the eviction quotes each check as `"name" (message)`,
    joined by "; " (workload_controller.go `buildAdmissionChecksMessage`), before evict.go
    resets the check's own words."""
    conditions = {"Evicted": k.Condition("True", "AdmissionCheck", evicted)}
    found = k.Workload("w", "ns", "q", frozenset(), conditions=conditions, checks=tuple(checks))
    assert k.retry_failure(found) == words


def test_a_check_that_never_said_retry_is_not_retried() -> None:
    """evict.go `resetChecksOnEviction` writes "Previously: <state>" for every check it resets."""
    assert not k.CheckState(
        "p", "Pending", "Reset to Pending after eviction. Previously: Ready"
    ).retried
    assert not k.CheckState("p", "Pending", "Waiting for resources").retried
    assert not k.check_retry(k.Workload("w", "ns", "q", frozenset()))


@pytest.mark.parametrize(
    ("reason", "timed_out"),
    [
        ("PodsReadyTimeout", True),
        ("AdmissionCheck", False),
        ("Preempted", False),
        ("Deactivated", False),
    ],
)
def test_an_eviction_for_the_pods_ready_timeout(reason: str, timed_out: bool) -> None:
    """workload_controller.go `reconcileNotReadyTimeout` evicts with reason PodsReadyTimeout
    only while requeues remain (`triggerDeactivation` first), and Kueue queues the workload
    again once its backoff ends: a wait. Other reasons are not that wait."""
    conditions = {"Evicted": k.Condition("True", reason, "m")}
    found = k.Workload("w", "ns", "q", frozenset(), conditions=conditions)
    assert k.timed_out(found) is timed_out
    assert not k.timed_out(k.Workload("w", "ns", "q", frozenset()))


@pytest.mark.parametrize("reason", ["PodsReadyTimeout", "AdmissionCheck"])
@pytest.mark.parametrize("unreserved", ["PendingEvaluation", "Pending"])
def test_an_eviction_kueue_holds_out_of_the_queue_stands(reason: str, unreserved: str) -> None:
    """jobframework/reconciler.go "handle eviction": once the job stopped, Kueue clears the
    reservation (`PendingEvaluation`, before v0.19 `Pending`, with the eviction's message) and
    sets Requeued False for every reason but Preempted and NodeFailures; the queue takes the
    workload back only once Requeued is True again (cluster_queue.go
    `backoffWaitingTimeExpired`), which workload_controller.go writes when its backoff ends
    (`BackoffFinished`)."""
    evicted = ("Evicted", "True", reason, "m")
    cleared = ("QuotaReserved", "False", unreserved, "m")
    assert _said(cleared, evicted, ("Requeued", "False", reason, "m")) is k.Said.EVICTED
    back = ("Requeued", "True", "BackoffFinished", "The workload backoff was finished")
    assert _said(cleared, evicted, back) is k.Said.NOTHING, "back in the queue: no verdict yet"
    assert _said(cleared, ("Requeued", "False", reason, "m")) is k.Said.NOTHING, "not evicted"


def test_an_eviction_past_is_what_the_reservation_says() -> None:
    """Evicted stays True until the next reservation (workload.go `SetQuotaReservation`)."""
    evicted = ("Evicted", "True", "Preempted", "m")
    waiting = ("QuotaReserved", "False", "WaitingForQuota", "")
    assert _said(waiting, evicted) is k.Said.WAITS_FOR_QUOTA
    assert _said(RESERVED, ADMITTED, ("Evicted", "False", "QuotaReserved", "")) is k.Said.ADMITTED
    assert not k.requeued(k.Workload("w", "ns", "q", frozenset()))


TAS_NO_FIT = (
    "couldn't assign flavors to pod set main: topology \"t\" doesn't allow to fit any of 1 pod(s). "
    'Total nodes: 2; excluded: resource "g": 2'
)
"""Kueue's topology refusal of a pod set (tas_flavor_snapshot.go `notFitMessage`)."""


@pytest.mark.parametrize(
    ("reason", "message", "said"),
    [
        ("NoMatchingFlavor", "", k.Said.NEVER_FITS),
        ("ExceedsMaxQuota", "", k.Said.NEVER_FITS),
        ("Misconfigured", "LocalQueue q doesn't exist", k.Said.QUEUE_PROBLEM),
        ("Suspended", "ClusterQueue cq is inactive", k.Said.QUEUE_PROBLEM),
        ("WaitingForQuota", "", k.Said.WAITS_FOR_QUOTA),
        (
            "Pending",
            "couldn't assign flavors to pod set main: insufficient unused quota for x",
            k.Said.WAITS_FOR_QUOTA,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set main: resource x unavailable in ClusterQueue",
            k.Said.NEVER_FITS,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set main: a > maximum capacity (8)",
            k.Said.NEVER_FITS,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set main: flavor f doesn't match node affinity",
            k.Said.NEVER_FITS,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set main: untolerated taint t in flavor f",
            k.Said.NEVER_FITS,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set master: insufficient unused quota for g in "
            "flavor f, 1 more needed; couldn't assign flavors to pod set worker: insufficient "
            "quota for g in flavor f, request > maximum capacity (17 > 8)",
            k.Said.NEVER_FITS,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set a: untolerated taint t in flavor f; couldn't "
            "assign flavors to pod set b: insufficient unused quota for g in flavor f, 1 more "
            "needed",
            k.Said.NEVER_FITS,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set a: insufficient unused quota for g in flavor f, "
            "1 more needed; couldn't assign flavors to pod set b: insufficient unused quota for "
            "g in flavor f, 2 more needed",
            k.Said.WAITS_FOR_QUOTA,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set a: insufficient unused quota for g in flavor f, "
            "1 more needed, untolerated taint t in flavor e",
            k.Said.WAITS_FOR_QUOTA,
        ),
        ("Pending", "untolerated taint t in flavor f", k.Said.NOTHING),
        ("Pending", "couldn't assign flavors to pod set main: flavor f not found", k.Said.OTHER),
        ("Pending", "failed to assign flavors to pod set main: no flavor", k.Said.OTHER),
        ("Pending", "Workload no longer fits after processing another workload", k.Said.NOTHING),
        ("Pending", TAS_NO_FIT, k.Said.TOPOLOGY_REFUSED),
        (
            "Pending",
            'couldn\'t assign flavors to pod set main: topology "t" allows to fit only 1 out '
            "of 2 pod(s)",
            k.Said.TOPOLOGY_REFUSED,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set main: topology \"t\" doesn't allow to fit; "
            "0/2 slice(s) fit on level rack",
            k.Said.TOPOLOGY_REFUSED,
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set main: insufficient unused quota for g in flavor "
            f"e, 1 more needed, {TAS_NO_FIT.partition(': ')[2]}",
            k.Said.TOPOLOGY_REFUSED,
        ),
        (
            "Pending",
            f"{TAS_NO_FIT}, untolerated taint t in flavor e",
            k.Said.TOPOLOGY_REFUSED,
        ),
        ("Pending", f"{TAS_NO_FIT}. Pending the preemption of 2 workload(s)", k.Said.WAITS),
        ("Pending", f"{TAS_NO_FIT}. Preempting 1 workload(s) failed, will retry.", k.Said.WAITS),
        ("Inadmissible", "LocalQueue q doesn't exist", k.Said.QUEUE_PROBLEM),
        ("PendingEvaluation", "Workload is pending evaluation", k.Said.NOTHING),
        ("", "", k.Said.NOTHING),
        (
            "TopologyPlacementFailed",
            "couldn't assign flavors to pod set main: topology \"t\" doesn't allow to fit",
            k.Said.NEVER_FITS,
        ),
        ("WaitingForPodsReady", "waiting for all admitted workloads", k.Said.WAITS),
        ("Waiting", "waiting for all admitted workloads", k.Said.WAITS),
        ("WaitingForPreemptedWorkloads", "will fit after these preemptions", k.Said.WAITS),
        ("AdmissionGated", "Admission is gated by: x", k.Said.WAITS),
        ("OnHold", "Job is on hold", k.Said.OTHER),
        ("SomethingKueueAddsLater", "", k.Said.OTHER),
    ],
)
def test_kueue_s_reasons_for_not_reserving_quota(reason: str, message: str, said: k.Said) -> None:
    """Before v0.19 every wait is `Pending`, read by its message: flavorassigner.go
    `Assignment.Message` joins the pod sets that do not fit with "; ", each its reasons with
    ", " (`Status.Message`); one pod set that can never fit makes the job never fit
    (`assignFlavors` stops at it), whatever waits for quota beside it; within one pod set, a
    flavor whose quota is only in use means it waits (the best flavor's mode wins). The
    topology's words (tas_flavor_snapshot.go `notFitMessage`) come only once every pod set
    fits its quota, so they win over the words of flavors passed over; once Kueue asked
    other work to make room (scheduler.go `markPreemptionOutcome`) the job waits. A flavor
    assigner's message no rule reads is Kueue's refusal all the same; other `Pending` words
    (scheduler.go `markSkipped`) are no verdict."""
    assert _said(("QuotaReserved", "False", reason, message)) is said


@pytest.mark.parametrize(
    ("policy", "admitted", "stopped"),
    [
        ("None", False, False),
        ("None", True, False),
        ("Hold", False, True),
        ("Hold", True, False),
        ("HoldAndDrain", False, True),
        ("HoldAndDrain", True, True),
    ],
)
def test_hold_lets_admitted_work_finish_and_hold_and_drain_evicts_it(
    policy: str, admitted: bool, stopped: bool
) -> None:
    """workload_controller.go `reconcileOnLocalQueueActiveState`: an admitted Workload is
    evicted only where `queueStopPolicy == HoldAndDrain`."""
    assert k.stops(policy, admitted) is stopped


def test_which_namespaces_a_cluster_queue_takes() -> None:
    assert not k.namespace_allowed(_cq(), {"team": "a"})
    assert k.namespace_allowed(_cq(namespace_selector={}), {})
    selector = {"matchLabels": {"team": "a"}}
    assert k.namespace_allowed(_cq(namespace_selector=selector), {"team": "a"})
    assert not k.namespace_allowed(_cq(namespace_selector=selector), {"team": "b"})
    expressions = {"matchExpressions": [{"key": "team", "operator": "Exists"}]}
    assert k.namespace_allowed(_cq(namespace_selector=expressions), {"team": "x"})
    assert not k.namespace_allowed(_cq(namespace_selector=expressions), {})


def test_the_admission_checks_a_job_meets() -> None:
    queue = _cq(admission_checks=(("all", ()), ("a100-only", ("a100",)), ("h100-only", ("h100",))))
    assignment = fa.Assignment((fa.PodSetAssignment("main", fa.Mode.FITS, {GPU: "a100"}),))
    assert fa.checks_for(queue, assignment) == ["all", "a100-only"]


def test_who_holds_the_quota_the_job_lacks() -> None:
    reserved = {"QuotaReserved": k.Condition("True")}
    big = k.Workload(
        "big", "ns", "q", frozenset(), conditions=reserved, cluster_queue="cq", usage={FR: 6}
    )
    small = k.Workload(
        "small",
        "ns",
        "q",
        frozenset(),
        conditions=reserved,
        cluster_queue="cq",
        usage={FR: 2, ("f", "cpu"): 9},
    )
    elsewhere = k.Workload(
        "x", "ns", "q", frozenset(), conditions=reserved, cluster_queue="other", usage={FR: 8}
    )
    released = k.Workload("r", "ns", "q", frozenset(), cluster_queue="cq", usage={FR: 8})
    none_of_it = k.Workload(
        "n",
        "ns",
        "q",
        frozenset(),
        conditions=reserved,
        cluster_queue="cq",
        usage={("f", "cpu"): 1},
    )
    tie = k.Workload(
        "a-tie", "ns", "q", frozenset(), conditions=reserved, cluster_queue="cq", usage={FR: 2}
    )
    found = k.holders([small, elsewhere, big, released, none_of_it, tie], "cq", {FR: 1})
    assert [(w.name, n) for w, n in found] == [("big", 6), ("a-tie", 2), ("small", 2)]


def test_a_lending_limit_of_all_keeps_nothing_back() -> None:
    queue = _cq("a", quotas={FR: k.Quota(4, None, 4)}, parent="root")
    tree = k.QuotaTree.of([queue], [])
    assert tree.local_quota(queue.node, FR) == 0
    assert tree.subtree_quota(tree.cohorts["root"], FR) == 4


def test_a_resource_a_cohort_member_has_no_quota_for_borrows_at_once() -> None:
    queue = _cq("a", parent="root")
    tree = k.QuotaTree.of([queue], [])
    assert tree.borrows_with(queue.node, ("g", GPU), 1) is True


def test_a_borrowing_limit_counts_what_the_queue_keeps_and_uses() -> None:
    """b: 4 of its own, lending limit 1 (3 kept), borrowing limit 1, 2 used."""
    a = _cq("a", quotas={FR: k.Quota(8)}, parent="root")
    b = _cq("b", quotas={FR: k.Quota(4, 1, 1)}, parent="root", reserved={FR: 2})
    tree = k.QuotaTree.of([a, b], [])
    assert tree.local_quota(b.node, FR) == 3
    assert tree.local_available(b.node, FR) == 1
    # from the cohort: what b stores there (1), less what it uses there (0), plus 1 borrowed
    assert tree.available(b.node, FR) == 3
    used = _cq("b", quotas={FR: k.Quota(4, 1, 1)}, parent="root", reserved={FR: 4})
    tree = k.QuotaTree.of([a, used], [])
    assert tree.available(used.node, FR) == 1


def test_a_workload_owned_by_nothing() -> None:
    obj = _workload_object()
    del obj["metadata"]["ownerReferences"]
    found = k.workload(obj, lambda spec: Resources())
    assert found.owner == ""
    assert found.owner_uids == frozenset()


def test_a_term_of_other_keys_still_leaves_the_node_selector() -> None:
    flavor = k.Flavor("f", {"pool": "a100"})
    spec = {
        "nodeSelector": {"pool": "h100"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["x"]}]}
                    ]
                }
            }
        },
    }
    assert fa._flavor_mismatch(flavor, "f", spec) == "flavor f doesn't match node affinity"


def test_a_second_resource_group_is_assigned_after_the_first() -> None:
    groups = (k.ResourceGroup(("cpu", "memory"), ("c",)), k.ResourceGroup((GPU,), ("g",)))
    quotas = {("c", "cpu"): k.Quota(4000), ("c", "memory"): k.Quota(2**30), ("g", GPU): k.Quota(1)}
    queue = _cq(groups=groups, quotas=quotas, reserved={("c", "cpu"): 4000, ("g", GPU): 1})
    pod_set = k.PodSetRequest("main", 1, Resources.of({"cpu": 1000, "memory": 1, GPU: 1}), {})
    assignment = fa.assign(queue, k.QuotaTree.of([queue], []), {}, [pod_set])
    assert assignment.pod_sets[0].flavors == {}, "flavors named by the queue but not defined"
    flavors = {"c": k.Flavor("c"), "g": k.Flavor("g")}
    assignment = fa.assign(queue, k.QuotaTree.of([queue], []), flavors, [pod_set])
    assert assignment.pod_sets[0].flavors == {"cpu": "c", "memory": "c", GPU: "g"}
    assert assignment.reasons == (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "c, 1 more needed, insufficient unused quota for nvidia.com/gpu in flavor g, 1 more "
        "needed",
    )


def test_three_pod_sets_add_up() -> None:
    assignment = _assign(_cq(), _pod_set(2, 1, "a"), _pod_set(2, 1, "b"), _pod_set(5, 1, "c"))
    assert [p.mode for p in assignment.pod_sets] == [fa.Mode.FITS, fa.Mode.FITS, fa.Mode.NO_FIT]


def test_more_binary_quantities() -> None:
    assert fa.quantity_words("memory", 2 * 1024) == "2Ki"
    assert fa.quantity_words("memory", 5 * 1024**4) == "5Ti"
    assert fa.quantity_words("memory", 1024**5) == "1Pi"
    assert fa.quantity_words("memory", 2 * 1024**6) == "2Ei"
    assert fa.quantity_words("memory", 1024**5 + 1024**4) == "1025Ti"


def test_preference_between_equals() -> None:
    other = _cq(preference="PreemptionOverBorrowing")
    borrows = fa.Trial("b", fa.Mode.FITS, True)
    assert not fa._preferred(borrows, borrows, other)
    assert not fa._preferred(fa.Trial("a", fa.Mode.FITS), fa.Trial("c", fa.Mode.FITS), other)
    assert fa._preferred(
        fa.Trial("a", fa.Mode.FITS, True), fa.Trial("c", fa.Mode.WAITS, True), other
    )


def test_an_admission_check_s_controller() -> None:
    check = {"metadata": {"name": "prov"}, "spec": {"controllerName": k.PROVISIONING}}
    assert k.admission_check(check) == ("prov", "kueue.x-k8s.io/provisioning-request")
    assert k.admission_check({"metadata": {"name": "bare"}}) == ("bare", "")


def test_kueue_sizes_a_limit_only_container_from_the_limit_range_not_from_its_limit() -> None:
    """Kueue applies the LimitRange's defaultRequest before it copies limits into missing
    requests (kueue pkg/workload/resources.go `AdjustResources`); the API server stores the
    pod the other way round (pkg/apis/core/v1/defaults.go `SetDefaults_Pod` runs before the
    LimitRanger plugin). A container with only a 2Gi memory limit counts 1Gi in the quota and
    2Gi on its machine."""
    from truegreen.doctor.checks.queue.kueue_verdict import kueue_sized
    from truegreen.doctor.knowledge.fit import pod_requests
    from truegreen.doctor.knowledge.stored_pod import stored_spec

    spec = {"containers": [{"name": "t", "resources": {"limits": {"memory": "2Gi"}}}]}
    limit_range = {
        "metadata": {"name": "defaults"},
        "spec": {"limits": [{"type": "Container", "defaultRequest": {"memory": "1Gi"}}]},
    }
    kueue = pod_requests(kueue_sized(spec, [limit_range]))
    stored = pod_requests(stored_spec(spec, [limit_range], extended_tolerations=False))
    assert stored.get("memory") == 2 * 1024**3, "precondition: the stored pod keeps its limit"
    assert kueue.get("memory") == 1024**3
