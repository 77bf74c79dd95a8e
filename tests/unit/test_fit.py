"""kube-scheduler's fit arithmetic (component-helpers PodRequests, NodeResourcesFit and friends)."""

from typing import Any

import pytest

from truegreen.doctor.checks.capacity.filters.rules import node_exclusion as exclusion
from truegreen.doctor.knowledge.fit import (
    MachineRoom,
    machine_room,
    pod_requests,
    shortfalls,
    tolerates,
)
from truegreen.quantity import Resources


def c(name: str, cpu: str | None = None, memory: str | None = None, **extra: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: dict[str, Any] = {"name": name, "resources": {"requests": requests}}
    container.update(extra)
    return container


def test_sum_of_containers() -> None:
    spec = {"containers": [c("a", "500m", "1Gi"), c("b", "250m", "512Mi")]}
    assert pod_requests(spec) == Resources.of({"cpu": 750, "memory": 1536 * 1024**2})


def test_init_container_peak_exceeds_sum() -> None:
    spec = {"containers": [c("a", "1", "1Gi")], "initContainers": [c("init", "3", "512Mi")]}
    # max(sum of containers, each init container): cpu from the init, memory from the main
    assert pod_requests(spec) == Resources.of({"cpu": 3000, "memory": 1024**3})


def test_sidecars_add_to_the_sum_and_to_later_init_containers() -> None:
    spec = {
        "containers": [c("main", "1")],
        "initContainers": [
            c("sidecar", "500m", restartPolicy="Always"),
            c("init-after-sidecar", "2"),
        ],
    }
    # containers + sidecar = 1.5; init-after-sidecar runs beside the sidecar: 2 + 0.5 = 2.5
    assert pod_requests(spec).get("cpu") == 2500


def test_init_before_sidecar_does_not_count_it() -> None:
    spec = {
        "containers": [c("main", "1")],
        "initContainers": [c("early", "2"), c("sidecar", "500m", restartPolicy="Always")],
    }
    assert pod_requests(spec).get("cpu") == 2000  # max(1 + 0.5, 2)


def test_pod_level_requests_replace_cpu_and_memory_and_overhead_is_added() -> None:
    spec = {
        "containers": [
            c("a", "1", "1Gi", resources={"requests": {"cpu": "1", "nvidia.com/gpu": "1"}})
        ],
        "resources": {"requests": {"cpu": "3"}},
        "overhead": {"cpu": "100m", "memory": "64Mi"},
    }
    assert pod_requests(spec) == Resources.of(
        {"cpu": 3100, "memory": 64 * 1024**2, "nvidia.com/gpu": 1}
    )


def test_limit_without_request_counts_as_request() -> None:
    spec = {"containers": [{"name": "a", "resources": {"limits": {"cpu": "2", "memory": "4Gi"}}}]}
    assert pod_requests(spec) == Resources.of({"cpu": 2000, "memory": 4 * 1024**3})


def test_allocatable_not_capacity_and_pod_limit() -> None:
    node = {
        "metadata": {"name": "n"},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "7500m", "memory": "30Gi", "pods": "3"},
        },
    }
    room = machine_room(node)
    assert room.allocatable == Resources.of({"cpu": 7500, "memory": 30 * 1024**3})
    assert room.max_pods == 3
    full = MachineRoom("n", room.allocatable, 3, Resources(), 3)
    assert [s.resource for s in shortfalls(Resources.of({"cpu": 100}), full)] == ["pods"]


def test_shortfall_amounts() -> None:
    room = MachineRoom(
        "gpu",
        Resources.of({"cpu": 16000, "nvidia.com/gpu": 2}),
        110,
        Resources.of({"cpu": 15000, "nvidia.com/gpu": 1}),
        4,
    )
    missing = shortfalls(Resources.of({"cpu": 1000, "nvidia.com/gpu": 2}), room)
    assert [(s.resource, s.missing) for s in missing] == [("nvidia.com/gpu", 1)]
    assert str(missing[0]) == "1 nvidia.com/gpu short"
    # exactly the free amount fits: the scheduler's test is request > free
    assert shortfalls(Resources.of({"cpu": 1000, "nvidia.com/gpu": 1}), room) == []


def test_extended_resource_absent_on_machine_does_not_fit() -> None:
    room = MachineRoom("cpu", Resources.of({"cpu": 8000}), 110)
    assert [s.resource for s in shortfalls(Resources.of({"nvidia.com/gpu": 1}), room)] == [
        "nvidia.com/gpu"
    ]


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        ({"key": "gpu", "operator": "Exists"}, {"key": "gpu", "effect": "NoSchedule"}, True),
        (
            {"key": "gpu", "value": "a", "effect": "NoSchedule"},
            {"key": "gpu", "value": "a", "effect": "NoSchedule"},
            True,
        ),
        ({"key": "gpu", "value": "b"}, {"key": "gpu", "value": "a", "effect": "NoSchedule"}, False),
        (
            {"key": "gpu", "operator": "Exists", "effect": "NoExecute"},
            {"key": "gpu", "effect": "NoSchedule"},
            False,
        ),
        ({"operator": "Exists"}, {"key": "anything", "effect": "NoSchedule"}, True),
        ({"key": "other", "operator": "Exists"}, {"key": "gpu", "effect": "NoSchedule"}, False),
    ],
)
def test_toleration_matching(
    toleration: dict[str, str], taint: dict[str, str], expected: bool
) -> None:
    assert tolerates([toleration], taint) is expected


def _node(**spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    return {"metadata": {"name": "n1", "labels": labels}, "spec": spec}


def test_exclusions() -> None:
    assert exclusion(_node(unschedulable=True), {}) == "cordoned"
    tolerate_cordon = {
        "tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    }
    assert exclusion(_node(unschedulable=True), tolerate_cordon) is None
    tainted = _node(taints=[{"key": "gpu", "value": "only", "effect": "NoSchedule"}])
    assert exclusion(tainted, {}) == "taint gpu=only:NoSchedule not tolerated"
    soft = _node(taints=[{"key": "gpu", "effect": "PreferNoSchedule"}])
    assert exclusion(soft, {}) is None
    assert exclusion(_node(labels={"pool": "cpu"}), {"nodeSelector": {"pool": "gpu"}}) == (
        "nodeSelector does not match"
    )
    affinity = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["3"]}]},
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                            ]
                        },
                    ]
                }
            }
        }
    }
    assert exclusion(_node(labels={"gpus": "2"}), affinity) is None  # second term matches by name
    affinity["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ].pop()
    assert (
        exclusion(_node(labels={"gpus": "2"}), affinity) == "required node affinity does not match"
    )
    assert exclusion(_node(labels={"gpus": "4"}), affinity) is None


def test_sidecar_counts_in_the_running_sum() -> None:
    spec = {
        "containers": [c("main", "2")],
        "initContainers": [c("proxy", "1", restartPolicy="Always")],
    }
    assert pod_requests(spec).get("cpu") == 3000  # the sidecar runs beside main for the pod's life


def _affinity(*expressions: dict[str, Any]) -> dict[str, Any]:
    term = {"matchExpressions": list(expressions)}
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        }
    }


@pytest.mark.parametrize(
    ("expression", "labels", "allowed"),
    [
        ({"key": "pool", "operator": "In", "values": ["gpu", "big"]}, {"pool": "big"}, True),
        ({"key": "pool", "operator": "In", "values": ["gpu"]}, {"pool": "cpu"}, False),
        ({"key": "pool", "operator": "In", "values": ["gpu"]}, {}, False),
        ({"key": "pool", "operator": "NotIn", "values": ["cpu"]}, {"pool": "gpu"}, True),
        ({"key": "pool", "operator": "NotIn", "values": ["cpu"]}, {"pool": "cpu"}, False),
        ({"key": "pool", "operator": "NotIn", "values": ["cpu"]}, {}, True),  # absent key: not in
        ({"key": "gpu", "operator": "Exists"}, {"gpu": ""}, True),
        ({"key": "gpu", "operator": "Exists"}, {}, False),
        ({"key": "gpu", "operator": "DoesNotExist"}, {}, True),
        ({"key": "gpu", "operator": "DoesNotExist"}, {"gpu": "a100"}, False),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": "4"}, True),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": "3"}, False),
        ({"key": "gpus", "operator": "Lt", "values": ["3"]}, {"gpus": "2"}, True),
        ({"key": "gpus", "operator": "Lt", "values": ["3"]}, {"gpus": "3"}, False),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": "many"}, False),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {}, False),
        ({"key": "gpus", "operator": "Gt", "values": ["3", "4"]}, {"gpus": "9"}, False),
        # Go's strconv.ParseInt(s, 10, 64): a sign and ASCII digits, 64 bits
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": "1_000"}, False),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": "+4"}, True),
        ({"key": "gpus", "operator": "Lt", "values": ["-3"]}, {"gpus": "-4"}, True),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": "\u0664"}, False),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": "-"}, False),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": str(2**63)}, False),
        ({"key": "gpus", "operator": "Gt", "values": ["3"]}, {"gpus": str(2**63 - 1)}, True),
        ({"key": "gpus", "operator": "Lt", "values": ["3"]}, {"gpus": str(-(2**63))}, True),
        ({"key": "gpus", "operator": "Lt", "values": ["3"]}, {"gpus": str(-(2**63) - 1)}, False),
        ({"key": "pool", "operator": "Unknown", "values": ["x"]}, {"pool": "x"}, False),
    ],
)
def test_node_affinity_operators(
    expression: dict[str, Any], labels: dict[str, str], allowed: bool
) -> None:
    reason = exclusion(_node(labels=labels), _affinity(expression))
    assert (reason is None) is allowed, reason


def test_all_expressions_of_a_term_must_match() -> None:
    both = _affinity(
        {"key": "pool", "operator": "In", "values": ["gpu"]}, {"key": "zone", "operator": "Exists"}
    )
    assert exclusion(_node(labels={"pool": "gpu", "zone": "a"}), both) is None
    assert exclusion(_node(labels={"pool": "gpu"}), both) == "required node affinity does not match"


def test_an_empty_term_selects_no_machine() -> None:
    empty: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}
            }
        }
    }
    assert exclusion(_node(), empty) == "required node affinity does not match"


@pytest.mark.parametrize(
    ("toleration", "allowed"),
    [
        ({"key": "gpu", "operator": "Equal", "value": "only", "effect": "NoSchedule"}, True),
        ({"key": "gpu", "value": "only"}, True),  # operator defaults to Equal; any effect
        ({"key": "gpu", "operator": "Equal", "value": "other"}, False),
        ({"operator": "Equal", "value": "only"}, False),  # Equal needs a key
        ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"operator": "Exists", "effect": "NoSchedule"}, True),
    ],
)
def test_taint_toleration_rules(toleration: dict[str, str], allowed: bool) -> None:
    tainted = _node(taints=[{"key": "gpu", "value": "only", "effect": "NoSchedule"}])
    assert (exclusion(tainted, {"tolerations": [toleration]}) is None) is allowed


def test_no_execute_taints_exclude_too() -> None:
    tainted = _node(taints=[{"key": "maintenance", "effect": "NoExecute"}])
    assert exclusion(tainted, {}) == "taint maintenance=:NoExecute not tolerated"


def test_resources_read_as_plain_amounts() -> None:
    from truegreen.doctor.knowledge.fit import format_resources

    amounts = Resources.of({"cpu": 4500, "memory": 16 * 2**30, "nvidia.com/gpu": 1})
    assert format_resources(amounts) == "4.5 CPUs, 16 GiB memory, 1 nvidia.com/gpu"
    assert format_resources(Resources()) == "no resources"


def test_local_disk_reads_with_its_noun() -> None:
    """An ephemeral-storage request (k8s.io/api/core/v1 ResourceEphemeralStorage) is bytes like
    memory: without a noun `10 GiB` beside `16 GiB memory` says nothing of what it is."""
    from truegreen.doctor.knowledge.fit import format_resources

    amounts = Resources.of({"cpu": 4000, "ephemeral-storage": 10 * 2**30, "memory": 16 * 2**30})
    assert format_resources(amounts) == "4 CPUs, 10 GiB scratch disk, 16 GiB memory"


def test_what_some_machines_have_comes_after_what_every_machine_has() -> None:
    """CPUs, scratch disk and memory first, then the GPUs and devices some machines have, by
    name: `2 CPUs, 8 GiB memory, 1 gpu.nvidia.com device`, never the devices between the
    CPUs and the memory, nor `1 amd.com/gpu` before the CPUs, as the names sort."""
    from truegreen.doctor.knowledge.fit import format_resources
    from truegreen.quantity import devices_of

    amounts = Resources.of({"cpu": 2000, devices_of("gpu.nvidia.com"): 1, "memory": 8 * 2**30})
    assert format_resources(amounts) == "2 CPUs, 8 GiB memory, 1 gpu.nvidia.com device"
    amd = Resources.of({"amd.com/gpu": 2, "cpu": 2000, "ephemeral-storage": 2**30})
    assert format_resources(amd) == "2 CPUs, 1 GiB scratch disk, 2 amd.com/gpu"


def test_the_closest_machine_misses_by_the_fewest_resources_then_the_least() -> None:
    from truegreen.doctor.knowledge.fit import MachineRoom, Shortfall, closest

    request = Resources.of({"cpu": 4000, "memory": 8 * 2**30})
    small_cpu = MachineRoom("a", Resources.of({"cpu": 3000, "memory": 64 * 2**30}), 110)
    both_short = MachineRoom("b", Resources.of({"cpu": 3900, "memory": 4 * 2**30}), 110)
    tiny_cpu = MachineRoom("c", Resources.of({"cpu": 1000, "memory": 64 * 2**30}), 110)
    full = MachineRoom("d", Resources.of({"cpu": 8000, "memory": 64 * 2**30}), 1, pod_count=1)
    assert closest(request, [both_short, tiny_cpu, small_cpu]) == (
        small_cpu,
        [Shortfall("cpu", 1000)],
    )
    # Short only of room for one more program beats being short of CPU by any amount.
    assert closest(request, [small_cpu, full]) == (full, [Shortfall("pods", 1)])
    assert closest(request, []) is None


def test_every_earlier_sidecar_runs_beside_a_later_init_container() -> None:
    spec = {
        "containers": [c("main", "1")],
        "initContainers": [
            c("proxy", "1", restartPolicy="Always"),
            c("logs", "1", restartPolicy="Always"),
            c("setup", "3"),
        ],
    }
    # running: 1 + 1 + 1 = 3; setup runs beside both sidecars: 3 + 1 + 1 = 5
    assert pod_requests(spec).get("cpu") == 5000


def test_any_toleration_in_the_list_may_be_the_one_that_tolerates() -> None:
    taint = {"key": "gpu", "value": "only", "effect": "NoSchedule"}
    other_effect = {"key": "gpu", "operator": "Exists", "effect": "NoExecute"}
    other_key = {"key": "spot", "operator": "Exists"}
    matching = {"key": "gpu", "operator": "Exists"}
    assert tolerates([other_effect, matching], taint)
    assert tolerates([other_key, matching], taint)
    assert not tolerates([other_effect, other_key], taint)


def test_equal_without_a_value_matches_a_taint_without_one() -> None:
    taint = {"key": "dedicated", "effect": "NoSchedule"}
    assert tolerates([{"key": "dedicated", "operator": "Equal"}], taint)
    assert tolerates([{"key": "dedicated", "operator": "Equal", "value": ""}], taint)
    assert not tolerates([{"key": "dedicated", "operator": "Equal", "value": "x"}], taint)
    valued = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    assert not tolerates([{"key": "dedicated", "operator": "Equal"}], valued)


def _required(term: dict[str, Any]) -> dict[str, Any]:
    selector = {"nodeSelectorTerms": [term]}
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}
    }


def test_match_fields_know_only_the_machine_s_name() -> None:
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    assert exclusion(_node(), _required(by_name)) is None
    other = {"matchFields": [{"key": "metadata.namespace", "operator": "In", "values": ["n1"]}]}
    assert exclusion(_node(), _required(other)) == "required node affinity does not match"


def test_a_matching_node_selector_does_not_exclude() -> None:
    node = _node(labels={"pool": "gpu", "zone": "a"})
    assert exclusion(node, {"nodeSelector": {"pool": "gpu"}}) is None
    assert exclusion(node, {"nodeSelector": {"pool": "gpu", "zone": "b"}}) == (
        "nodeSelector does not match"
    )


def test_a_machine_without_a_pod_limit_takes_the_kubelet_default_of_110() -> None:
    node = {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}}
    assert machine_room(node) == MachineRoom("n", Resources.of({"cpu": 4000}), 110)


def test_the_pod_limit_counts_the_new_program() -> None:
    room = MachineRoom("n", Resources.of({"cpu": 8000}), 3, Resources(), 2)
    assert shortfalls(Resources.of({"cpu": 100}), room) == []
    full = MachineRoom("n", Resources.of({"cpu": 8000}), 3, Resources(), 3)
    missing = shortfalls(Resources.of({"cpu": 100}), full)
    assert [(s.resource, s.missing) for s in missing] == [("pods", 1)]
    assert str(missing[0]) == "at its limit of running programs"


def test_an_emptied_machine_keeps_its_name_size_and_limit() -> None:
    busy = MachineRoom("gpu-1", Resources.of({"cpu": 8000}), 3, Resources.of({"cpu": 500}), 2)
    assert busy.emptied() == MachineRoom("gpu-1", Resources.of({"cpu": 8000}), 3)


def test_closeness_weighs_each_shortfall_against_what_the_pod_asks() -> None:
    from truegreen.doctor.knowledge.fit import Shortfall, closest

    request = Resources.of({"cpu": 4000, "memory": 2**30, "nvidia.com/gpu": 1})
    gpu = Resources.of({"nvidia.com/gpu": 1})
    # half the memory missing (0.5) is closer than three quarters of the CPU (0.75) ...
    half_memory = MachineRoom("m", Resources.of({"cpu": 8000, "memory": 2**29}) + gpu, 110)
    most_cpu = MachineRoom("c", Resources.of({"cpu": 1000, "memory": 2**31}) + gpu, 110)
    assert closest(request, [most_cpu, half_memory]) == (half_memory, [Shortfall("memory", 2**29)])
    # ... and the one GPU asked for, missing, weighs 1: farther than 0.75.
    no_gpu = MachineRoom("g", Resources.of({"cpu": 8000, "memory": 2**31}), 110)
    assert closest(request, [no_gpu, most_cpu]) == (most_cpu, [Shortfall("cpu", 3000)])
    # A tie goes to the first name, whatever the order the machines were listed in.
    twin = MachineRoom("a", most_cpu.allocatable, 110)
    assert closest(request, [most_cpu, twin]) == (twin, [Shortfall("cpu", 3000)])


def test_a_machine_without_some_pods_gives_back_their_reservation_and_their_count() -> None:
    busy = MachineRoom("gpu-1", Resources.of({"cpu": 8000}), 3, Resources.of({"cpu": 3000}), 3)
    freed = busy.without(Resources.of({"cpu": 1000}), 1)
    assert freed == MachineRoom(
        "gpu-1", Resources.of({"cpu": 8000}), 3, Resources.of({"cpu": 2000}), 2
    )


def test_a_node_selector_matches_when_any_term_matches_whole() -> None:
    """component-helpers/scheduling/corev1 `MatchNodeSelectorTerms`: terms are ORed, a term's
    expressions and fields ANDed; no term, or an empty term, matches no machine."""
    from truegreen.doctor.knowledge.fit import matches_node_selector

    machine = {"metadata": {"name": "gpu-1", "labels": {"zone": "a", "gpu": "yes"}}}
    zone_a = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    zone_b = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
    named = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}
    assert matches_node_selector([zone_a], machine) is True
    assert matches_node_selector([zone_b], machine) is False
    assert matches_node_selector([zone_b, zone_a], machine) is True
    assert matches_node_selector([{**zone_a, **named}], machine) is True
    assert matches_node_selector([{**zone_b, **named}], machine) is False
    assert matches_node_selector([named], {"metadata": {"labels": {}}}) is False
    assert matches_node_selector([{}], machine) is False
    assert matches_node_selector([], machine) is False
