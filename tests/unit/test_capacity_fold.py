"""The fold of the cluster's pods: sums per machine, this namespace's pods, invalid amounts."""

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truegreen.cluster import CantRead, Folded, Listed, ReadFailure
from truegreen.doctor.knowledge.fit import pod_requests
from truegreen.doctor.knowledge.usage import (
    CapacityTally,
    ClusterUsage,
    MachineUsage,
    PodView,
    PriorityShare,
    cluster_usage,
    machines_for_fit,
)
from truegreen.quantity import Resources


def _pod(name: str, namespace: str, node: str | None, cpu: str, phase: str = "Running") -> Any:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    raw = {
        "metadata": {"name": name, "namespace": namespace, "labels": {"a": "b"}},
        "spec": {**spec, "serviceAccountName": "x"},
        "status": {"phase": phase, "podIP": "10.0.0.1"},
    }
    return msgspec.json.decode(msgspec.json.encode(raw), type=PodView)


def _fold(*pods: Any) -> ClusterUsage:
    tally = CapacityTally("train")
    for pod in pods:
        tally.add(pod)
    usage = cluster_usage(Folded(tally.summary()))
    assert isinstance(usage, ClusterUsage)
    return usage


def test_pods_are_summed_per_machine_and_only_this_namespace_is_kept() -> None:
    usage = _fold(
        _pod("a", "train", "m1", "250m"),
        _pod("b", "other", "m1", "250m"),
        _pod("c", "other", "m2", "1"),
        _pod("waiting", "train", None, "4"),
        _pod("done", "train", "m2", "8", phase="Succeeded"),
    )
    assert usage.machines == {
        "m1": MachineUsage(2, {"cpu": 500}),
        "m2": MachineUsage(1, {"cpu": 1000}),
    }
    assert usage.reserved_on("m1") == (Resources.of({"cpu": 500}), 2)
    assert usage.reserved_on("unknown") == (Resources(), 0)
    # Kept as the fit reads them: the fields the view names, nothing else; stamped as pods.
    # Labels stay: a JobSet's, a Kubeflow job's or a Ray cluster's pods are known by them.
    assert usage.pods_here == [
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "a", "namespace": "train", "labels": {"a": "b"}},
            "spec": {
                "nodeName": "m1",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "250m"}}}],
            },
            "status": {"phase": "Running"},
        },
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "waiting", "namespace": "train", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]},
            "status": {"phase": "Running"},
        },
    ]
    assert usage.invalid == ""


def test_pods_of_every_namespace_with_a_host_port_or_anti_affinity_are_kept_for_the_filters() -> (
    None
):
    """NodePorts and InterPodAffinity read every namespace's pods on a machine (NodeInfo's used
    ports, existingAntiAffinityCounts): the fold keeps what they read of those that have any."""
    port = _pod("exporter", "monitoring", "m1", "100m")
    port.spec.containers[0].ports = msgspec.Raw(b'[{"containerPort":9100,"hostPort":9100}]')
    anti = msgspec.json.decode(
        msgspec.json.encode(
            {
                "metadata": {"name": "db-0", "namespace": "data", "labels": {"app": "db"}},
                "spec": {
                    "nodeName": "m2",
                    "priority": 5,
                    "affinity": {
                        "nodeAffinity": {"x": 1},
                        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []},
                    },
                    "containers": [{"name": "c", "ports": [{"containerPort": 5432}]}],
                },
                "status": {"phase": "Running"},
            }
        ),
        type=PodView,
    )
    plain = _pod("web", "other", "m1", "100m")
    plain.spec.containers[0].ports = msgspec.Raw(b'[{"containerPort":8080}]')
    unplaced = _pod("waiting", "monitoring", None, "100m")
    unplaced.spec.containers[0].ports = port.spec.containers[0].ports
    usage = _fold(port, anti, plain, unplaced)
    assert usage.rule_pods == [
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "exporter", "namespace": "monitoring", "labels": {"a": "b"}},
            "spec": {
                "nodeName": "m1",
                "containers": [{"name": "c", "ports": [{"containerPort": 9100, "hostPort": 9100}]}],
            },
        },
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "db-0", "namespace": "data", "labels": {"app": "db"}},
            "spec": {
                "nodeName": "m2",
                "priority": 5,
                "containers": [{"name": "c", "ports": [{"containerPort": 5432}]}],
                "affinity": {
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}
                },
            },
        },
    ]
    old = cluster_usage(Folded({"machines": {}}))
    assert isinstance(old, ClusterUsage)
    assert old.rule_pods is None  # an older snapshot's: the filters say what was not read


def test_the_first_invalid_amount_is_kept_and_its_pod_not_summed() -> None:
    usage = _fold(
        _pod("a", "other", "m1", "lots"),
        _pod("b", "other", "m1", "500m"),
        _pod("c", "other", "m1", "many"),
    )
    assert usage.invalid == "'lots' is not a quantity (examples: 500m, 2, 1.5Gi, 1e3)"
    assert usage.machines == {"m1": MachineUsage(1, {"cpu": 500})}


def test_a_summary_of_the_wrong_shape_is_a_malformed_read() -> None:
    read = cluster_usage(Folded({"machines": {"m1": {"pods": "many"}}}))
    assert isinstance(read, CantRead)
    assert read.failure is ReadFailure.MALFORMED
    assert read.reason.startswith("list pods: the cluster's answer was not valid (")


def test_machines_are_held_as_the_fields_the_fit_reads() -> None:
    node = {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": "m1", "labels": {"zone": "a"}, "annotations": {"x": "y"}, "uid": "1"},
        "spec": {"unschedulable": True, "taints": [{"key": "gpu"}], "podCIDR": "10.0.0.0/24"},
        "status": {
            "allocatable": {"cpu": "8"},
            "capacity": {"cpu": "9"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    held = machines_for_fit(Listed((node, {"kind": "Node", "metadata": "odd", "status": 3})))
    assert held == Listed(
        (
            {
                "kind": "Node",
                "apiVersion": "v1",
                "metadata": {"name": "m1", "labels": {"zone": "a"}},
                "spec": {"unschedulable": True, "taints": [{"key": "gpu"}]},
                "status": {
                    "capacity": {"cpu": "9"},
                    "allocatable": {"cpu": "8"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            },
            {"kind": "Node", "metadata": {}, "spec": {}, "status": {}},
        )
    )
    refused = CantRead(ReadFailure.FORBIDDEN, "list nodes: forbidden")
    assert machines_for_fit(refused) is refused


def test_requests_of_the_wrong_type_are_a_malformed_answer_whatever_the_namespace() -> None:
    """Requests stay raw bytes until a new shape is summed; then they are checked as the API
    defines them, and a page holding one cannot be folded (the read is malformed)."""
    raw = {
        "metadata": {"name": "p", "namespace": "elsewhere"},
        "spec": {
            "nodeName": "m1",
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "1"}}},
                {"name": "d", "resources": "lots"},
            ],
        },
        "status": {"phase": "Running"},
    }
    pod = msgspec.json.decode(msgspec.json.encode(raw), type=PodView)
    wrong = r"Expected `object \| null`, got `str` - at `\$\.containers\[1\]\.resources`$"
    with pytest.raises(msgspec.ValidationError, match=wrong):
        CapacityTally("train").add(pod)


def test_a_holder_names_its_controller_from_the_raw_owner_references() -> None:
    """Owner references stay raw bytes through the fold; the few holders kept decode them."""
    pod = {
        "metadata": {
            "name": "notebook-alice-7d9f",
            "namespace": "research",
            "ownerReferences": [
                {"kind": "Node", "name": "gpu-1"},
                {"kind": "ReplicaSet", "name": "notebook-alice-7d9", "controller": True},
            ],
        },
        "spec": {
            "nodeName": "gpu-1",
            "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "2"}}}],
        },
        "status": {"phase": "Running"},
    }
    view = msgspec.json.decode(msgspec.json.encode(pod), type=PodView)
    assert isinstance(view.metadata.owner_references, msgspec.Raw), "precondition: kept raw"
    (holder,) = _fold(view).holders["gpu-1"]
    assert (holder.namespace, holder.pod, holder.owner_kind, holder.owner) == (
        "research",
        "notebook-alice-7d9f",
        "ReplicaSet",
        "notebook-alice-7d9",
    )
    assert holder.requested == {"nvidia.com/gpu": 2}


def test_a_holder_is_named_after_its_first_controller() -> None:
    """The API server allows one controller reference; of a hostile pair, the first counts."""
    refs = [
        {"kind": "Node", "name": "m1"},
        {"kind": "Job", "name": "first", "controller": True},
        {"kind": "ReplicaSet", "name": "second", "controller": True},
    ]
    pod = {
        "metadata": {"name": "p", "namespace": "other", "ownerReferences": refs},
        "spec": {"nodeName": "m1", "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Running"},
    }
    view = msgspec.json.decode(msgspec.json.encode(pod), type=PodView)
    (holder,) = _fold(view).holders["m1"]
    assert (holder.owner_kind, holder.owner) == ("Job", "first")


_amounts = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]),
    st.sampled_from(["0", "100m", "1", "3", "2Gi"]),
    max_size=2,
)
_container = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["a", "b"]),
        "resources": st.fixed_dictionaries({}, optional={"requests": _amounts, "limits": _amounts}),
    },
    optional={"restartPolicy": st.just("Always")},
)
_containers = st.lists(_container, max_size=2)
_spec = st.fixed_dictionaries(
    {"containers": _containers},
    optional={
        "initContainers": _containers,
        "overhead": _amounts,
        "resources": st.fixed_dictionaries({}, optional={"requests": _amounts}),
    },
)


def _on(machine: str, spec: dict[str, Any]) -> PodView:
    raw = {
        "metadata": {"name": machine, "namespace": "other"},
        "spec": {"nodeName": machine, **spec},
        "status": {"phase": "Running"},
    }
    return msgspec.json.decode(msgspec.json.encode(raw), type=PodView)


@settings(max_examples=200, deadline=None)
@given(specs=st.lists(_spec, min_size=1, max_size=8))
def test_each_pod_reserves_what_the_scheduler_reserves_for_it(specs: list[dict[str, Any]]) -> None:
    """Pods of one shape are summed once: whichever pod came first, each pod's machine holds
    exactly pod_requests of that pod's own spec."""
    usage = _fold(*(_on(f"m{at}", spec) for at, spec in enumerate(specs)))
    for at, spec in enumerate(specs):
        assert usage.reserved_on(f"m{at}") == (pod_requests(spec), 1), spec


@pytest.mark.parametrize(
    "more",
    [
        {"initContainers": [{"name": "init", "resources": {"requests": {"cpu": "3"}}}]},
        {"overhead": {"cpu": "250m"}},
        {"resources": {"requests": {"cpu": "2"}}},
    ],
)
def test_a_pod_with_more_than_main_containers_is_not_taken_for_one_without(
    more: dict[str, Any],
) -> None:
    """Pods of main containers alone are keyed by their containers' resources: a pod with the
    same containers and anything else that counts is a shape of its own."""
    containers = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    usage = _fold(_on("m1", containers), _on("m2", {**containers, **more}))
    assert usage.machines["m1"].requested == {"cpu": 1000}
    assert usage.machines["m2"].requested == pod_requests({**containers, **more}).as_dict()
    assert usage.machines["m2"].requested != {"cpu": 1000}, "precondition: a different sum"


def test_the_largest_three_holders_of_each_resource_are_kept_ties_to_the_later_name() -> None:
    """Per resource, the three largest by (amount, namespace, name); a pod among them for any
    resource is named once."""
    cpus = {"a": "2", "b": "5", "c": "2", "d": "2", "e": "1", "f": "3"}
    pods = [_pod(name, "other", "m1", cpu) for name, cpu in cpus.items()]
    gpu = {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}
    pods.append(_on("m1", gpu))
    named = [h.pod for h in _fold(*pods).holders["m1"]]
    # cpu: b, f, then d of the three at 2 (a full heap's smallest, a, gives way to d; e's 1
    # is below them all); the GPU: the pod named m1, its only holder
    assert named == ["b", "d", "f", "m1"]


def _ranked(
    name: str, node: str | None, cpu: str, priority: int | None, nominated: str | None = None
) -> Any:
    """A pod with `spec.priority` as the Priority admission plugin sets it
    (plugin/pkg/admission/priority/admission.go), optionally not bound but nominated for a
    machine by a preemption (`status.nominatedNodeName`, pkg/scheduler/framework/preemption)."""
    raw: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "other"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": "Pending" if nominated else "Running"},
    }
    if node:
        raw["spec"]["nodeName"] = node
    if priority is not None:
        raw["spec"]["priority"] = priority
    if nominated:
        raw["status"]["nominatedNodeName"] = nominated
    return msgspec.json.decode(msgspec.json.encode(raw), type=PodView)


def test_what_each_priority_holds_is_kept_apart() -> None:
    """Preemption takes back only the room of pods of a lower priority than the preemptor
    (defaultpreemption SelectVictimsOnNode): each machine keeps what each priority holds."""
    usage = _fold(
        _ranked("unset", "m1", "1", None),
        _ranked("zero", "m1", "2", 0),
        _ranked("high", "m1", "4", 1000),
        _ranked("low", "m1", "8", -5),
        _ranked("also-high", "m1", "16", 1000),
    )
    assert usage.machines["m1"] == MachineUsage(
        5,
        {"cpu": 31000},
        by_priority=[
            PriorityShare(-5, 1, {"cpu": 8000}),
            PriorityShare(1000, 2, {"cpu": 20000}),
        ],
    )
    assert usage.held_below("m1", 1000) == (Resources.of({"cpu": 11000}), 3)
    assert usage.held_below("m1", 0) == (Resources.of({"cpu": 8000}), 1)
    assert usage.held_below("m1", -5) == (Resources(), 0)
    assert usage.held_below("m1", 1001) == (Resources.of({"cpu": 31000}), 5)
    assert usage.held_below("elsewhere", 1000) == (Resources(), 0)
    assert usage.priorities() == {-5, 1000}


def test_a_machine_of_priority_zero_alone_keeps_its_summary_as_it_was() -> None:
    usage = _fold(_ranked("a", "m1", "1", 0), _ranked("b", "m1", "1", None))
    assert msgspec.to_builtins(usage.machines) == {"m1": {"pods": 2, "requested": {"cpu": 2000}}}
    assert usage.priorities() == set()
    assert not usage.any_nominated


def test_pods_nominated_for_a_machine_are_promised_there_and_not_bound() -> None:
    """A pod the scheduler nominated (status.nominatedNodeName, no spec.nodeName) holds that
    machine's room for pods of its priority or lower (framework/runtime addNominatedPods)."""
    usage = _fold(
        _ranked("bound", "m1", "1", 0),
        _ranked("promised-high", None, "4", 2000, nominated="m2"),
        _ranked("promised-low", None, "2", 0, nominated="m2"),
        _ranked("promised-here", None, "8", 10, nominated="m1"),
        _ranked("waiting", None, "16", 5000),
    )
    assert usage.machines["m2"] == MachineUsage(
        0,
        {},
        nominated=[PriorityShare(0, 1, {"cpu": 2000}), PriorityShare(2000, 1, {"cpu": 4000})],
    )
    assert usage.reserved_on("m2") == (Resources(), 0)
    assert usage.reserved_on("m1") == (Resources.of({"cpu": 1000}), 1)
    assert usage.nominated_to("m2", 2000) == (Resources.of({"cpu": 4000}), 1)
    assert usage.nominated_to("m2", 1) == (Resources.of({"cpu": 4000}), 1)
    assert usage.nominated_to("m2", 0) == (Resources.of({"cpu": 6000}), 2)
    assert usage.nominated_to("m2", None) == (Resources.of({"cpu": 6000}), 2)
    assert usage.nominated_to("m1", 11) == (Resources(), 0)
    assert usage.nominated_to("nowhere", None) == (Resources(), 0)
    assert usage.any_nominated
    assert "m2" not in usage.holders, "a nominated pod is promised room, it holds none"


def test_the_largest_holders_of_each_priority_are_kept() -> None:
    """Three larger pods of priority 0 do not hide the one of a lower priority that
    preemption would stop."""
    usage = _fold(
        *(_ranked(f"big-{n}", "m1", "4", 0) for n in range(4)),
        _ranked("small-low", "m1", "100m", -1),
    )
    named = [(h.pod, h.priority) for h in usage.holders["m1"]]
    assert named == [("big-1", 0), ("big-2", 0), ("big-3", 0), ("small-low", -1)]
