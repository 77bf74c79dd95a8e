"""Devices of claims reserved for the namespace's own pods, which come back when those pods are
done (doctor/checks/capacity/filters/device_room.py `_reserved`, `_names_pod`, `_room`;
dynamic_resources.py `filter`), and shared claims not allocated yet (`_kept`, `_placed_once`).

Sources: staging/src/k8s.io/api/resource/v1/types.go (`ResourceClaimStatus.reservedFor`: a
`ResourceClaimConsumerReference` of apiGroup, resource, name, uid; at most 256);
staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim.go `IsReservedForPod`
(a reservation is a pod's when its uid is the pod's); pkg/controller/resourceclaim/controller.go
`syncClaim` (drops the reservation of a pod that is done: `apiGroup == ""`, `resource ==
"pods"`, looked up by name and compared by uid; a claim no one reserves any more loses its
allocation); pkg/scheduler/framework/plugins/dynamicresources (a shared claim not allocated yet
is allocated on the first pod's machine).
"""

from typing import Any

from tests.unit.test_devices import DRIVER, GPUS, NS, Obj, _class, _nodes, _reads, _request, _slice
from truegreen.cluster import Got
from truegreen.doctor.checks.capacity.filters import dynamic_resources
from truegreen.doctor.checks.capacity.filters.cycle import Cycle, Placed
from truegreen.doctor.checks.capacity.filters.device_room import _names_pod, _reserved, unserved
from truegreen.doctor.checks.capacity.filters.dynamic_resources import device_rules
from truegreen.doctor.checks.capacity.filters.framework import (
    DeviceRoom,
    Found,
    JobPodSet,
    Unchecked,
)
from truegreen.kubectl import Kubectl
from truegreen.quantity import Resources

NIC = "nic.example.com"
NICS = f"{NIC} devices"
FPGA = "fpga.example.com"
FPGAS = f"{FPGA} devices"
PODS = {"w-0": "uid-w-0", "w-1": "uid-w-1", "nameless": ""}
"""The namespace's placed pods, uid by name (a pod whose uid was not read has none)."""
SEE = (
    "Check the devices each machine has free with `kubectl get resourceslices,resourceclaims "
    "--all-namespaces -o wide`"
)


def _for(name: str, uid: str, **more: str) -> dict[str, str]:
    """A `reservedFor` entry as kube-scheduler writes it for a pod (dynamicresources.go
    `PreBind`: resource "pods", no apiGroup, the pod's name and uid)."""
    return {"resource": "pods", "name": name, "uid": uid, **more}


def _claim(
    name: str,
    *reservations: dict[str, str],
    results: tuple[dict[str, Any], ...] = (),
    namespace: str = NS,
) -> Obj:
    status: Obj = {"allocation": {"devices": {"results": list(results)}}}
    if reservations:
        status["reservedFor"] = list(reservations)
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [_request()]}},
        "status": status,
    }


def _result(device: str, pool: str = "a", **more: Any) -> dict[str, Any]:
    return {"request": "gpu", "driver": DRIVER, "pool": pool, "device": device, **more}


def test_a_reservation_names_a_pod_by_resource_name_and_uid() -> None:
    assert _names_pod(_for("w-0", "uid-w-0"), PODS) is True
    assert _names_pod(_for("w-1", "uid-w-1", apiGroup=""), PODS) is True


def test_a_reservation_for_a_pod_replaced_since_or_unknown_names_none() -> None:
    # A pod recreated under the same name has a new uid (IsReservedForPod compares the uid).
    assert _names_pod(_for("w-0", "uid-w-0-before"), PODS) is False
    assert _names_pod(_for("w-9", "uid-w-9"), PODS) is False
    # No uid never matches, not even a pod whose uid doctor did not read.
    assert _names_pod({"resource": "pods", "name": "nameless"}, PODS) is False
    assert _names_pod(_for("nameless", ""), PODS) is False


def test_a_reservation_for_anything_but_a_pod_names_none() -> None:
    # Consumers other than pods (types.go: "some other resource"): same name and uid or not.
    assert _names_pod(_for("w-0", "uid-w-0", apiGroup="batch.example.com"), PODS) is False
    assert _names_pod({**_for("w-0", "uid-w-0"), "resource": "jobs"}, PODS) is False
    assert _names_pod({"name": "w-0", "uid": "uid-w-0"}, PODS) is False


def test_only_devices_of_the_namespace_s_claims_reserved_for_its_pods_alone_are_theirs() -> None:
    claims = [
        # First, so that a claim passed over does not end the search.
        _claim("allocated-not-reserved", results=(_result("gpu-9"),)),
        _claim("empty-reservation", results=(_result("gpu-8"),)),
        _claim(
            "own",
            _for("w-0", "uid-w-0"),
            results=(
                _result("gpu-0"),
                _result("gpu-1", adminAccess=False),
                _result("gpu-2", adminAccess=True),  # admin access holds no device
            ),
        ),
        _claim(
            "shared",
            _for("w-0", "uid-w-0"),
            _for("w-1", "uid-w-1"),
            results=(_result("gpu-0", pool="b"),),
        ),
        _claim(
            "with-a-stranger",
            _for("w-0", "uid-w-0"),
            _for("w-5", "uid-w-5"),
            results=(_result("gpu-3"),),
        ),
        _claim(
            "replaced-pod",
            _for("w-1", "uid-w-1-before"),
            results=(_result("gpu-4"),),
        ),
        _claim(
            "other-namespace",
            _for("w-0", "uid-w-0"),
            results=(_result("gpu-5"),),
            namespace="elsewhere",
        ),
    ]
    claims[1]["status"]["reservedFor"] = []
    assert _reserved(claims, NS, PODS) == {
        (DRIVER, "a", "gpu-0"): frozenset({"w-0"}),
        (DRIVER, "a", "gpu-1"): frozenset({"w-0"}),
        (DRIVER, "b", "gpu-0"): frozenset({"w-0", "w-1"}),
    }
    assert _reserved(claims, NS, {}) == {}
    assert _reserved(claims, "elsewhere", PODS) == {(DRIVER, "a", "gpu-5"): frozenset({"w-0"})}


def _held_reads(*extra: Obj) -> Any:
    return _reads(
        [_slice("a", 4), _slice("b", 2)],
        [
            _claim("own", _for("w-0", "uid-w-0"), results=(_result("gpu-0"), _result("gpu-1"))),
            _claim(
                "shared",
                _for("w-0", "uid-w-0"),
                _for("w-1", "uid-w-1"),
                results=(_result("gpu-3"),),
            ),
            _claim("theirs", _for("w-1", "uid-w-1"), results=(_result("gpu-1", pool="b"),)),
            _claim("stranger", _for("x-0", "uid-x-0"), results=(_result("gpu-0", pool="b"),)),
            *extra,
        ],
    )


HOLDERS = (
    ("a", frozenset({"w-0"}), Resources.of({GPUS: 2})),
    ("a", frozenset({"w-0", "w-1"}), Resources.of({GPUS: 1})),
    ("b", frozenset({"w-1"}), Resources.of({GPUS: 1})),
)


def test_each_machine_s_devices_held_for_the_namespace_s_pods_are_counted_per_pods() -> None:
    found = Found()
    worker = JobPodSet(
        "worker", {"resourceClaims": [{"name": "g", "resourceClaimTemplateName": "t"}]}, {}
    )
    room = device_rules([worker], NS, _nodes("a", "b"), _held_reads(), Kubectl(), found, PODS)
    assert room == DeviceRoom(
        (("worker", Resources.of({GPUS: 1})),),
        (
            ("a", Resources.of({GPUS: 4}), Resources.of({GPUS: 3})),
            ("b", Resources.of({GPUS: 2}), Resources.of({GPUS: 2})),
        ),
        offered=((GPUS, ("a", "b")),),
        holders=HOLDERS,
        classes=((GPUS, DRIVER),),
    )
    assert room.held_by("a", {"w-0"}) == Resources.of({GPUS: 2})
    assert room.held_by("a", {"w-0", "w-1"}) == Resources.of({GPUS: 3})
    assert room.held_by("b", {"w-0"}) == Resources()
    assert found.details == [f"a: 4 {GPUS} (3 allocated)", f"b: 2 {GPUS} (2 allocated)"]
    # Without the pods, no device is theirs.
    assert (
        device_rules([worker], NS, _nodes("a", "b"), _held_reads(), Kubectl(), Found()).holders
        == ()
    )


def _cycle(reads: Any) -> Cycle:
    worker = JobPodSet(
        "worker", {"resourceClaims": [{"name": "g", "resourceClaimTemplateName": "t"}]}, {}
    )
    placed = tuple(Placed(name, "a", {}, {}, False, "other-job", uid) for name, uid in PODS.items())
    return Cycle(
        (worker,), NS, {}, tuple(_nodes("a", "b")), {}, placed, {}, {}, {}, reads, Kubectl()
    )


def test_the_filter_ties_devices_to_the_namespace_s_placed_pods_by_uid() -> None:
    found = Found()
    dynamic_resources.filter(_cycle(_held_reads()), found)
    assert found.devices.holders == HOLDERS
    assert found.devices.machines == (
        ("a", Resources.of({GPUS: 4}), Resources.of({GPUS: 3})),
        ("b", Resources.of({GPUS: 2}), Resources.of({GPUS: 2})),
    )
    assert found.details == [f"a: 4 {GPUS} (3 allocated)", f"b: 2 {GPUS} (2 allocated)"]
    unread = Found()
    dynamic_resources.filter(_cycle(None), unread)
    assert (unread.devices, unread.unchecked) == (DeviceRoom(), [unserved(Kubectl())])


def _kind(driver: str, machine: str, devices: int) -> Obj:
    item = _slice(machine, devices, pool=f"{driver}-{machine}")
    item["spec"]["driver"] = driver
    return item


def _shared(name: str, *classes: str) -> Obj:
    requests = [{"name": c.split(".")[0], "exactly": {"deviceClassName": c}} for c in classes]
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": requests}},
    }


def _refs(*refs: tuple[str, str]) -> dict[str, Any]:
    return {"resourceClaims": [{"name": f"r{i}", k: v} for i, (k, v) in enumerate(refs)]}


def _classes() -> list[Obj]:
    return [_class(d, f"device.driver == '{d}'") for d in (DRIVER, NIC, FPGA)]


def test_devices_of_shared_claims_not_allocated_yet_are_kept_off_each_machine_s_room() -> None:
    # One program: its own GPU, and two shared claims of a NIC each, not allocated yet.
    worker = JobPodSet(
        "worker",
        _refs(
            ("resourceClaimTemplateName", "t"),
            ("resourceClaimName", "c1"),
            ("resourceClaimName", "c2"),
        ),
        {},
    )
    reads = _reads(
        [_kind(DRIVER, "a", 2), _kind(NIC, "a", 2), _kind(NIC, "b", 2)],
        [_shared("c1", NIC), _shared("c2", NIC)],
        _classes(),
    )
    found = Found()
    room = device_rules([worker], NS, _nodes("a", "b"), reads, Kubectl(), found, PODS)
    assert room.requests == (("worker", Resources.of({GPUS: 1})),)
    # A request a shared claim does not make keeps nothing of that kind off the machine.
    assert room.machines == (
        ("a", Resources.of({GPUS: 2, NICS: 0}), Resources.of({GPUS: 0, NICS: 0})),
        ("b", Resources.of({GPUS: 0, NICS: 0}), Resources.of({GPUS: 0, NICS: 0})),
    )
    assert found.details == [
        f"a: 2 {GPUS} (0 allocated), 2 {NICS} (0 allocated, 1 for ResourceClaim c1, "
        "1 for ResourceClaim c2)",
        f"b: 2 {NICS} (0 allocated, 1 for ResourceClaim c1, 1 for ResourceClaim c2)",
        "ResourceClaim c1: shared by ['worker'], allocated on one node",
        "ResourceClaim c2: shared by ['worker'], allocated on one node",
    ]
    # Machine b has no GPU, which neither shared claim asks for: it is short of nothing.
    assert found.exclusions == []
    assert found.unchecked == []


def test_a_shared_claim_is_not_counted_when_a_program_not_sharing_it_asks_for_its_kinds() -> None:
    # c1 (a GPU and a NIC) is the worker's alone; the leader asks for a GPU and a NIC of its
    # own and shares c2 (an FPGA): c1's devices may go to either, c2's to the leader alone.
    worker = JobPodSet("worker", _refs(("resourceClaimName", "c1")), {})
    leader = JobPodSet(
        "leader", _refs(("resourceClaimTemplateName", "t"), ("resourceClaimName", "c2")), {}
    )
    template = Got(
        {
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": NS},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": DRIVER}},
                            {"name": "nic", "exactly": {"deviceClassName": NIC}},
                        ]
                    }
                }
            },
        }
    )
    reads = _reads(
        [_kind(DRIVER, "a", 2), _kind(NIC, "a", 2), _kind(FPGA, "a", 1)],
        [_shared("c1", DRIVER, NIC), _shared("c2", FPGA)],
        _classes(),
        {"t": template},
    )
    found = Found()
    room = device_rules([worker, leader], NS, _nodes("a"), reads, Kubectl(), found, PODS)
    assert found.unchecked == [
        Unchecked(
            "whether the machines have the devices the training job asks for",
            "a device claim some of its programs share takes devices its other programs ask "
            "for too, which doctor doesn't count",
            SEE,
            f"ResourceClaim c1: shared by ['worker'], not by leader, which asks for {GPUS}, "
            f"{NICS} too",
        )
    ]
    # c2 alone is kept off machine a's room.
    assert found.details == [
        f"ResourceClaim c1: shared by ['worker'], not by leader, which asks for {GPUS}, {NICS} too",
        f"a: 1 {FPGA} device (0 allocated, 1 for ResourceClaim c2), 2 {GPUS} (0 allocated), "
        f"2 {NICS} (0 allocated)",
        "ResourceClaim c1: shared by ['worker'], allocated on one node",
        "ResourceClaim c2: shared by ['leader'], allocated on one node",
    ]
    assert room.on("a") == (
        Resources.of({GPUS: 2, NICS: 2, FPGAS: 0}),
        Resources.of({GPUS: 0, NICS: 0, FPGAS: 0}),
    )


def test_a_result_with_admin_access_holds_none_and_the_next_results_still_do() -> None:
    held = _claim(
        "admin-first",
        results=(_result("gpu-0", adminAccess=True), _result("gpu-1")),
        namespace="elsewhere",
    )
    worker = JobPodSet(
        "worker", {"resourceClaims": [{"name": "g", "resourceClaimTemplateName": "t"}]}, {}
    )
    room = device_rules(
        [worker], NS, _nodes("a"), _reads([_slice("a", 2)], [held]), Kubectl(), Found(), PODS
    )
    assert room.on("a") == (Resources.of({GPUS: 2}), Resources.of({GPUS: 1}))
