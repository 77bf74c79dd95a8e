"""Devices of dynamic resource allocation as room per machine
(doctor/checks/capacity/filters/dynamic_resources.py, device_room.py).

Sources: staging/src/k8s.io/api/resource/v1/types.go; staging/src/k8s.io/
dynamic-resource-allocation/structured/internal/stable/pools_stable.go (`GatherPools`,
`nodeMatches`) and allocator_stable.go; kubernetes-sigs/dra-example-driver's objects.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from tests.support.plain_words import jargon_in
from truegreen.cluster import CantRead, GetRead, Got, Kind, Listed, ListRead, ReadFailure
from truegreen.doctor.checks.capacity.filters.dynamic_resources import (
    claim_refs,
    device_rules,
    template_names,
)
from truegreen.doctor.checks.capacity.filters.framework import (
    DeviceRoom,
    Exclusion,
    FailedRead,
    Found,
    JobPodSet,
    Unchecked,
)
from truegreen.doctor.checks.capacity.placement import Near
from truegreen.doctor.environment import DeviceReads
from truegreen.kubectl import Kubectl
from truegreen.quantity import Resources

NS = "train"
DRIVER = "gpu.example.com"
GPUS = f"{DRIVER} devices"
Obj = dict[str, Any]
RULE = "whether the machines have the devices the training job asks for"
SEE = (
    "Check the devices each machine has free with `kubectl get resourceslices,resourceclaims "
    "--all-namespaces -o wide`"
)


def _nodes(*names: str) -> list[Obj]:
    return [{"kind": "Node", "metadata": {"name": n, "labels": {"pool": n[0]}}} for n in names]


def _slice(
    machine: str | None, devices: int, *, pool: str | None = None, generation: int = 1, **where: Any
) -> Obj:
    spec: Obj = {
        "driver": DRIVER,
        "pool": {"name": pool or machine, "generation": generation, "resourceSliceCount": 1},
        "devices": [{"name": f"gpu-{i}"} for i in range(devices)],
        **where,
    }
    if machine is not None:
        spec["nodeName"] = machine
    return {"kind": "ResourceSlice", "metadata": {"name": f"{machine}-slice"}, "spec": spec}


def _class(name: str = DRIVER, *expressions: str) -> Obj:
    selectors = [
        {"cel": {"expression": e}} for e in expressions or (f"device.driver == '{DRIVER}'",)
    ]
    return {"kind": "DeviceClass", "metadata": {"name": name}, "spec": {"selectors": selectors}}


def _request(name: str = "gpu", **exactly: Any) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": DRIVER, **exactly}}


def _template(*requests: Obj, **devices: Any) -> Got:
    return Got(
        {
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": NS},
            "spec": {"spec": {"devices": {"requests": list(requests or (_request(),)), **devices}}},
        }
    )


def _allocated(machine: str, *devices: str, namespace: str = "other", **allocation: Any) -> Obj:
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": f"held-{machine}", "namespace": namespace},
        "spec": {"devices": {"requests": [_request()]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": machine, "device": d}
                        for d in devices
                    ]
                },
                **allocation,
            }
        },
    }


def _set(name: str = "worker", **claim: str) -> JobPodSet:
    ref = {"name": "gpu", **(claim or {"resourceClaimTemplateName": "t"})}
    return JobPodSet(name, {"resourceClaims": [ref]}, {})


def _reads(
    slices: Sequence[Obj] = (),
    claims: Sequence[Obj] = (),
    classes: Sequence[Obj] | None = None,
    templates: Mapping[str, GetRead] | None = None,
    *,
    served: bool = True,
    failed: Mapping[str, CantRead] | None = None,
) -> DeviceReads:
    failed = failed or {}

    def listed(key: str, items: Sequence[Obj]) -> ListRead:
        return failed.get(key) or Listed(tuple(items))

    return DeviceReads(
        served,
        listed("slices", slices),
        listed("claims", claims),
        listed("classes", [_class()] if classes is None else classes),
        {"t": _template()} if templates is None else templates,
    )


def _run(
    reads: DeviceReads | None,
    sets: Sequence[JobPodSet] = (),
    nodes: Sequence[Obj] | None = None,
) -> tuple[DeviceRoom, Found]:
    found = Found()
    room = device_rules(
        sets or [_set()],
        NS,
        _nodes("a", "b") if nodes is None else nodes,
        reads,
        Kubectl(),
        found,
    )
    # Every word an operator reads holds no jargon (the jargon test's list).
    words = [text for e in found.exclusions for text in (e.reason, e.todo)]
    words += [text for u in found.unchecked for text in (u.rule, u.why, u.todo)]
    words += [rule.words for group in found.rules.values() for rule in group]
    words += list(found.todos.values())
    for text in words:
        assert not jargon_in(text), f"jargon {jargon_in(text)} in {text!r}"
    return room, found


def test_a_job_without_device_claims_asks_nothing_and_reads_nothing() -> None:
    found = Found()
    assert device_rules([JobPodSet("w", {}, {})], NS, _nodes("a"), None, Kubectl(), found) == (
        DeviceRoom()
    )
    assert (found.unchecked, found.failed) == ([], [])


def test_claim_refs_and_template_names() -> None:
    specs = [
        {
            "resourceClaims": [
                {"name": "g", "resourceClaimTemplateName": "t"},
                {"name": "s", "resourceClaimName": "c"},
            ]
        },
        {
            "resourceClaims": [
                {"name": "g", "resourceClaimTemplateName": "t"},
                {"name": "h", "resourceClaimTemplateName": "u"},
            ]
        },
        {},
    ]
    assert claim_refs(specs[0]) == specs[0]["resourceClaims"]
    assert claim_refs(specs[2]) == []
    assert template_names(specs) == ["t", "u"]


def test_each_machine_offers_its_devices_less_those_allocated() -> None:
    room, found = _run(
        _reads([_slice("a", 2), _slice("b", 4)], [_allocated("b", "gpu-0", "gpu-3")]),
        [_set(), _set("leader")],
    )
    assert room == DeviceRoom(
        (("worker", Resources.of({GPUS: 1})), ("leader", Resources.of({GPUS: 1}))),
        (
            ("a", Resources.of({GPUS: 2}), Resources()),
            ("b", Resources.of({GPUS: 4}), Resources.of({GPUS: 2})),
        ),
        offered=((GPUS, ("a", "b")),),
        classes=((GPUS, DRIVER),),
    )
    assert room.of("worker") == Resources.of({GPUS: 1})
    assert room.of("driver") == Resources()
    assert room.on("b") == (Resources.of({GPUS: 4}), Resources.of({GPUS: 2}))
    assert room.on("z") == (Resources(), Resources())
    assert found.details == [
        f"a: 2 {GPUS} (0 allocated)",
        f"b: 4 {GPUS} (2 allocated)",
    ]
    assert (found.unchecked, found.exclusions, found.failed) == ([], [], [])


def test_a_request_for_several_devices_counts_them_all() -> None:
    reads = _reads(
        [_slice("a", 4)], templates={"t": _template(_request(count=3), _request("more"))}
    )
    room, _ = _run(reads)
    assert room.of("worker") == Resources.of({GPUS: 4})


def test_admin_access_holds_no_device_and_older_generations_are_ignored() -> None:
    held = _allocated("a", "gpu-0")
    held["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True
    old = _slice("a", 8, generation=1)
    new = _slice("a", 2, generation=2)
    room, _ = _run(_reads([old, new], [held]))
    assert room.on("a") == (Resources.of({GPUS: 2}), Resources())


def test_devices_of_another_driver_are_not_the_class_s() -> None:
    other = _slice("a", 3)
    other["spec"]["driver"] = "nic.example.com"
    room, _ = _run(_reads([other, _slice("b", 1)]))
    assert room.machines == (
        ("a", Resources(), Resources()),
        ("b", Resources.of({GPUS: 1}), Resources()),
    )


def test_a_class_without_selectors_takes_every_device() -> None:
    other = _slice("a", 3)
    other["spec"]["driver"] = "nic.example.com"
    bare = {"kind": "DeviceClass", "metadata": {"name": DRIVER}, "spec": {}}
    room, _ = _run(_reads([other], classes=[bare]))
    assert room.on("a") == (Resources.of({GPUS: 3}), Resources())


def test_a_request_s_own_driver_selector_narrows_the_class() -> None:
    bare = {"kind": "DeviceClass", "metadata": {"name": DRIVER}, "spec": {}}
    other = _slice("a", 3)
    other["spec"]["driver"] = "nic.example.com"
    request = _request(selectors=[{"cel": {"expression": f'device.driver == "{DRIVER}"'}}])
    room, _ = _run(
        _reads([other, _slice("b", 1)], classes=[bare], templates={"t": _template(request)})
    )
    assert room.machines == (
        ("a", Resources(), Resources()),
        ("b", Resources.of({GPUS: 1}), Resources()),
    )


def test_tainted_devices_are_not_taken_unless_tolerated() -> None:
    tainted = _slice("a", 2)
    tainted["spec"]["devices"][0]["taints"] = [{"key": "broken", "effect": "NoSchedule"}]
    tainted["spec"]["devices"][1]["taints"] = [{"key": "note", "effect": "None"}]
    room, _ = _run(_reads([tainted]))
    assert room.on("a") == (Resources.of({GPUS: 1}), Resources())
    tolerating = _request(tolerations=[{"key": "broken", "operator": "Exists"}])
    room, _ = _run(_reads([tainted], templates={"t": _template(tolerating)}))
    assert room.on("a") == (Resources.of({GPUS: 2}), Resources())


def test_slices_reach_machines_by_selector_or_per_device() -> None:
    """A pool per machine published through a node selector, and one slice whose devices say
    each where they are (pools_stable.go `nodeMatches`)."""
    selected = _slice(
        None,
        2,
        pool="p-b",
        nodeSelector={
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
            ]
        },
    )
    per_device = _slice(None, 0, pool="p-a", perDeviceNodeSelection=True)
    per_device["spec"]["devices"] = [{"name": "x", "nodeName": "a"}, {"name": "y", "nodeName": "a"}]
    nowhere = _slice(None, 5, pool="p-z")
    room, found = _run(_reads([selected, per_device, nowhere]))
    assert room.machines == (
        ("a", Resources.of({GPUS: 2}), Resources()),
        ("b", Resources.of({GPUS: 2}), Resources()),
    )
    assert found.unchecked == []


def test_devices_several_machines_reach_are_unchecked() -> None:
    shared = _slice(None, 2, pool="net", allNodes=True)
    room, found = _run(_reads([shared]))
    assert room == DeviceRoom()
    assert found.unchecked == [
        Unchecked(
            RULE,
            "some of the devices it could take are reached by several machines, which doctor "
            "doesn't count",
            SEE,
            "worker: request gpu: devices of a pool with nodeSelector or allNodes",
        )
    ]


def test_partitionable_or_shareable_devices_are_unchecked() -> None:
    for field in ("consumesCounters", "allowMultipleAllocations"):
        parted = _slice("a", 1)
        parted["spec"]["devices"][0][field] = (
            [{"counterSet": "x"}] if field == "consumesCounters" else True
        )
        room, found = _run(_reads([parted]))
        assert room == DeviceRoom()
        assert found.unchecked == [
            Unchecked(
                RULE,
                "some devices are parts of one device or shared between programs, which doctor "
                "doesn't count",
                "Check the devices each machine offers with `kubectl get resourceslices -o yaml`",
                "ResourceSlice a-slice: device gpu-0 consumes shared counters or allows multiple "
                "allocations",
            )
        ]


def test_a_selector_doctor_cannot_evaluate_is_unchecked_naming_it() -> None:
    """The devices have no attribute in the driver's domain: Kubernetes reads an empty map and
    fails on `.model`, as doctor does; it can't say more than that a free device might match."""
    expression = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].model == 'x'"
    room, found = _run(_reads([_slice("a", 1)], classes=[_class(DRIVER, expression)]))
    assert room == DeviceRoom()
    assert found.unchecked == [
        Unchecked(
            RULE,
            f"its devices are picked by a rule doctor can't evaluate (`{expression}`)",
            SEE,
            "worker: request gpu: a CEL selector of DeviceClass gpu.example.com or of the request "
            f"not evaluated (device {DRIVER}/a/gpu-0: no entry 'model'): {expression}; "
            f"1 unallocated devices might match: {DRIVER}/a/gpu-0",
        )
    ]


def test_requests_doctor_does_not_count_are_unchecked() -> None:
    cases = {
        "it lists alternative devices to choose from, which doctor doesn't evaluate": _template(
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "a", "deviceClassName": DRIVER},
                    {"name": "b", "deviceClassName": DRIVER},
                ],
            }
        ),
        "it asks for devices in a way doctor doesn't count (all of a kind, administrator "
        "access, or a share of a device)": _template(_request(allocationMode="All")),
        "its devices must share a property, which doctor doesn't evaluate": _template(
            constraints=[{"matchAttribute": f"{DRIVER}/numa"}]
        ),
    }
    for why, template in cases.items():
        room, found = _run(_reads([_slice("a", 1)], templates={"t": template}))
        assert room == DeviceRoom()
        assert [u.why for u in found.unchecked] == [why]
    for exactly in ({"adminAccess": True}, {"capacity": {"requests": {"memory": "1Gi"}}}):
        room, found = _run(
            _reads([_slice("a", 1)], templates={"t": _template(_request(**exactly))})
        )
        assert room == DeviceRoom()
        assert len(found.unchecked) == 1


def test_requests_that_could_take_the_same_devices_are_unchecked() -> None:
    """Two requests whose candidates overlap but differ would count some devices twice."""
    bare = {"kind": "DeviceClass", "metadata": {"name": DRIVER}, "spec": {}}
    one = _request("one", selectors=[{"cel": {"expression": f"device.driver == '{DRIVER}'"}}])
    every = _request("every")
    nic = _slice("a", 1)
    nic["spec"]["driver"] = "nic.example.com"
    room, found = _run(
        _reads([_slice("a", 1), nic], classes=[bare], templates={"t": _template(one, every)})
    )
    assert room == DeviceRoom()
    assert [u.why for u in found.unchecked] == [
        "two of its device requests could take the same devices, which doctor doesn't count"
    ]
    assert [u.detail for u in found.unchecked] == [
        f"requests for {GPUS} and {GPUS} (every) share candidate devices"
    ]


def test_requests_of_the_same_devices_add_up() -> None:
    room, _ = _run(
        _reads([_slice("a", 4)], templates={"t": _template(_request("x"), _request("y", count=2))})
    )
    assert room.of("worker") == Resources.of({GPUS: 3})


def test_a_missing_template_or_class_refuses_every_machine() -> None:
    missing = CantRead(ReadFailure.NOT_FOUND, "gone")
    _, found = _run(_reads([_slice("a", 1)], templates={"t": missing}))
    assert found.exclusions == [
        Exclusion(
            "worker",
            ("a", "b"),
            "the device request 't' its programs name doesn't exist",
            "create the device request 't', or point the training job at one that exists",
            "ResourceClaimTemplate t not found: no claim is created for the pods",
            everywhere=True,
        )
    ]
    _, found = _run(_reads([_slice("a", 1)], classes=[]))
    assert found.exclusions == [
        Exclusion(
            "worker",
            ("a", "b"),
            "it asks for devices of a kind ('gpu.example.com') the cluster doesn't define",
            "ask for a kind of device the cluster defines (`kubectl get deviceclasses` lists them)",
            "worker: request gpu: DeviceClass gpu.example.com not found",
            everywhere=True,
        )
    ]


def test_device_reads_that_failed_are_failed_reads() -> None:
    forbidden = CantRead(ReadFailure.FORBIDDEN, "no")
    for key, kind in (
        ("slices", Kind.RESOURCE_SLICE),
        ("claims", Kind.RESOURCE_CLAIM),
        ("classes", Kind.DEVICE_CLASS),
    ):
        room, found = _run(_reads(failed={key: forbidden}))
        assert room == DeviceRoom()
        assert found.failed == [FailedRead(kind, forbidden, everywhere=kind is Kind.RESOURCE_CLAIM)]
    room, found = _run(_reads(templates={"t": forbidden}))
    assert found.failed == [FailedRead(Kind.RESOURCE_CLAIM_TEMPLATE, forbidden)]
    room, found = _run(_reads(templates={}))
    assert [f.kind for f in found.failed] == [Kind.RESOURCE_CLAIM_TEMPLATE]
    assert found.failed[0].cant.failure is ReadFailure.NOT_CAPTURED


def test_a_cluster_without_device_claims_is_unchecked() -> None:
    for reads in (None, _reads(served=False)):
        room, found = _run(reads)
        assert room == DeviceRoom()
        assert found.unchecked == [
            Unchecked(
                RULE,
                "the cluster doesn't offer devices the way its programs ask for them",
                "Check which device interfaces the cluster offers with `kubectl api-versions`",
                "pod resourceClaims, and discovery lists no resource.k8s.io/v1",
            )
        ]


def test_a_shared_claim_allocated_is_usable_where_its_devices_are() -> None:
    claim = _allocated(
        "b",
        "gpu-0",
        namespace=NS,
        nodeSelector={
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
            ]
        },
    )
    claim["metadata"]["name"] = "shared"
    room, found = _run(_reads([_slice("b", 1)], [claim]), [_set(resourceClaimName="shared")])
    assert room.requests == ()
    assert found.exclusions == [
        Exclusion(
            "worker",
            ("a",),
            "can't use its device claim 'shared', whose devices are on b",
            "run the training job where the devices of 'shared' are",
            "ResourceClaim shared: allocated; allocation.nodeSelector refuses the others",
        )
    ]


def test_a_shared_claim_allocated_everywhere_or_on_no_machine() -> None:
    claim = _allocated("b", "gpu-0", namespace=NS)
    claim["metadata"]["name"] = "shared"
    _, found = _run(_reads([], [claim]), [_set(resourceClaimName="shared")])
    assert found.exclusions == []
    claim["status"]["allocation"]["nodeSelector"] = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["z"]}]}
        ]
    }
    _, found = _run(_reads([], [claim]), [_set(resourceClaimName="shared")])
    assert [e.reason for e in found.exclusions] == [
        "can't use its device claim 'shared', whose devices are on no machine"
    ]


def test_a_shared_claim_of_another_namespace_or_none_does_not_exist() -> None:
    claim = _allocated("b", "gpu-0", namespace="elsewhere")
    claim["metadata"]["name"] = "shared"
    _, found = _run(_reads([], [claim]), [_set(resourceClaimName="shared")])
    assert found.exclusions == [
        Exclusion(
            "worker",
            ("a", "b"),
            "its device claim 'shared' doesn't exist",
            "create the device claim 'shared', or point the training job at one that exists",
            "ResourceClaim shared not found",
            everywhere=True,
        )
    ]


def test_a_shared_claim_not_allocated_needs_one_machine_with_its_devices_free() -> None:
    claim = {
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": NS},
        "spec": {"devices": {"requests": [_request(count=2)]}},
    }
    reads = _reads([_slice("a", 1), _slice("b", 3)], [claim, _allocated("b", "gpu-2")])
    room, found = _run(
        reads, [_set(resourceClaimName="shared"), _set("leader", resourceClaimName="shared")]
    )
    assert room.requests == ()
    words = "must run on the machine where its shared device claim 'shared' gets its devices"
    assert found.exclusions == [
        Exclusion(
            group,
            ("a",),
            "lacking the free devices its shared device claim 'shared' needs",
            "free devices on one machine for the shared device claim 'shared'",
            "ResourceClaim shared: not allocated; too few free candidate devices on a",
        )
        for group in ("worker", "leader")
    ]
    assert found.rules == {
        group: [
            Near(
                group,
                (((("a", "a"), ("b", "b")), frozenset()),),
                frozenset({"worker", "leader"}),
                True,
                words,
            )
        ]
        for group in ("worker", "leader")
    }
    assert found.todos == {
        words: "make room for every program that shares 'shared' on one machine with its devices"
    }


def test_a_shared_claim_doctor_cannot_count_stops_there() -> None:
    claim = {
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": NS},
        "spec": {"devices": {"requests": [_request(allocationMode="All")]}},
    }
    _, found = _run(_reads([_slice("a", 1)], [claim]), [_set(resourceClaimName="shared")])
    assert (found.exclusions, found.rules, len(found.unchecked)) == ([], {}, 1)


def test_devices_taken_with_no_execute_are_not_taken_either() -> None:
    tainted = _slice("a", 2)
    tainted["spec"]["devices"][0]["taints"] = [{"key": "evict", "effect": "NoExecute"}]
    room, _ = _run(_reads([tainted]))
    assert room.on("a") == (Resources.of({GPUS: 1}), Resources())


def test_requests_of_distinct_devices_are_distinct_resources() -> None:
    nic_class = _class("nic.example.com", "device.driver == 'nic.example.com'")
    nic = _slice("a", 1, pool="a-nic")
    nic["spec"]["driver"] = "nic.example.com"
    nic_request = {"name": "nic", "exactly": {"deviceClassName": "nic.example.com"}}
    reads = _reads(
        [_slice("a", 2), nic],
        classes=[_class(), nic_class],
        templates={"t": _template(_request(), nic_request)},
    )
    room, found = _run(reads)
    assert found.unchecked == []
    assert room.of("worker") == Resources.of({GPUS: 1, "nic.example.com devices": 1})
    assert room.on("a") == (Resources.of({GPUS: 2, "nic.example.com devices": 1}), Resources())
    assert found.details == [f"a: 2 {GPUS} (0 allocated), 1 nic.example.com device (0 allocated)"]


def test_a_shared_claim_counts_only_free_devices() -> None:
    claim = {
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": NS},
        "spec": {"devices": {"requests": [_request(count=3)]}},
    }
    reads = _reads([_slice("a", 1), _slice("b", 3)], [claim, _allocated("b", "gpu-2")])
    _, found = _run(reads, [_set(resourceClaimName="shared")])
    assert [e.machines for e in found.exclusions] == [("a", "b")]
    assert found.exclusions[0].detail == (
        "ResourceClaim shared: not allocated; too few free candidate devices on a, b"
    )
    assert found.details[-1] == "ResourceClaim shared: shared by ['worker'], allocated on one node"


def test_a_shared_claim_allocated_on_several_machines_names_them() -> None:
    claim = _allocated(
        "b",
        "gpu-0",
        namespace=NS,
        nodeSelector={
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a", "b"]}]}
            ]
        },
    )
    claim["metadata"]["name"] = "shared"
    nodes = _nodes("a1", "b1", "c1")
    _, found = _run(_reads([], [claim]), [_set(resourceClaimName="shared")], nodes)
    assert [e.reason for e in found.exclusions] == [
        "can't use its device claim 'shared', whose devices are on a1, b1"
    ]


def test_the_details_of_requests_doctor_does_not_count() -> None:
    cases = {
        "worker: claim constraints (matchAttribute)": _template(
            constraints=[{"matchAttribute": "x/y"}]
        ),
        "worker: request gpu has firstAvailable (or no exactly)": _template({"name": "gpu"}),
        "worker: request gpu: allocationMode All, adminAccess or capacity": _template(
            _request(allocationMode="All")
        ),
    }
    for detail, template in cases.items():
        _, found = _run(_reads([_slice("a", 1)], templates={"t": template}))
        assert [u.detail for u in found.unchecked] == [detail]


def test_a_count_below_one_asks_for_one() -> None:
    for count in (0, -2):
        room, _ = _run(_reads([_slice("a", 2)], templates={"t": _template(_request(count=count))}))
        assert room.of("worker") == Resources.of({GPUS: 1})


def test_pools_are_told_apart_by_driver_and_name() -> None:
    """An old generation of one pool does not hide another pool's devices of the same name."""
    newer = _slice("a", 2, pool="p", generation=3)
    other_pool = _slice("b", 2, pool="q", generation=1)
    room, _ = _run(_reads([newer, other_pool]))
    assert room.machines == (
        ("a", Resources.of({GPUS: 2}), Resources()),
        ("b", Resources.of({GPUS: 2}), Resources()),
    )
    unnamed = _slice("a", 1, generation=0)
    unnamed["spec"]["pool"] = {"generation": 0, "resourceSliceCount": 1}
    room, _ = _run(_reads([unnamed]))
    assert room.on("a") == (Resources.of({GPUS: 1}), Resources())


def _shared(*requests: Obj, **metadata: Any) -> Obj:
    """A ResourceClaim the pods name directly (`resourceClaimName`), not allocated yet."""
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": NS, **metadata},
        "spec": {"devices": {"requests": list(requests)}},
    }


def test_a_shared_claim_s_requests_take_distinct_devices() -> None:
    """Two requests of one class, one device each, need two devices on one machine: the
    allocator never gives a device to two requests (allocator_stable.go `allocateDevice` skips
    a device `deviceInUse` says is taken, which holds the devices picked for earlier
    requests)."""
    claim = _shared(_request("a"), _request("b"))
    _, found = _run(
        _reads([_slice("a", 1), _slice("b", 2)], [claim]), [_set(resourceClaimName="shared")]
    )
    assert [(e.machines, e.detail) for e in found.exclusions] == [
        (("a",), "ResourceClaim shared: not allocated; too few free candidate devices on a")
    ]


def test_a_pod_s_own_claim_and_a_shared_claim_take_distinct_devices() -> None:
    """A pod claiming a device from a template and sharing a claim of one more: the allocator
    allocates all the pod's claims on the machine at once (dynamicresources.go `Filter`: its
    `claimsToAllocate`), never one device twice, so the shared claim's devices are not free
    for the pod's own claim on the machine the shared claim gets them."""
    pod_set = JobPodSet(
        "worker",
        {
            "resourceClaims": [
                {"name": "gpu", "resourceClaimTemplateName": "t"},
                {"name": "one-more", "resourceClaimName": "shared"},
            ]
        },
        {},
    )
    reads = _reads(
        [_slice("a", 1), _slice("b", 3)], [_shared(_request()), _allocated("b", "gpu-2")]
    )
    room, found = _run(reads, [pod_set])
    assert (found.exclusions, found.unchecked) == ([], [])
    assert room.of("worker") == Resources.of({GPUS: 1})
    assert room.on("a") == (Resources(), Resources())
    assert room.on("b") == (Resources.of({GPUS: 2}), Resources.of({GPUS: 1}))
    assert found.details[:2] == [
        f"a: 1 {DRIVER} device (0 allocated, 1 for ResourceClaim shared)",
        f"b: 3 {GPUS} (1 allocated, 1 for ResourceClaim shared)",
    ]


def test_a_shared_claim_and_a_pod_s_own_claim_of_overlapping_devices_are_unchecked() -> None:
    """The shared claim's requests are counted with the pod's own: candidates that overlap but
    differ would count some devices twice."""
    bare = {"kind": "DeviceClass", "metadata": {"name": DRIVER}, "spec": {}}
    one = _request("one", selectors=[{"cel": {"expression": f"device.driver == '{DRIVER}'"}}])
    nic = _slice("a", 1)
    nic["spec"]["driver"] = "nic.example.com"
    pod_set = JobPodSet(
        "worker",
        {
            "resourceClaims": [
                {"name": "a", "resourceClaimTemplateName": "t"},
                {"name": "b", "resourceClaimName": "shared"},
            ]
        },
        {},
    )
    reads = _reads(
        [_slice("a", 1), nic],
        [_shared(_request("every"))],
        classes=[bare],
        templates={"t": _template(one)},
    )
    room, found = _run(reads, [pod_set])
    assert room == DeviceRoom()
    assert [u.detail for u in found.unchecked] == [
        f"requests for {GPUS} and {GPUS} (every) share candidate devices"
    ]


def test_a_shared_claim_whose_devices_others_ask_for_too_is_unchecked() -> None:
    """Programs that don't share the claim may run on other machines than the claim's: its
    devices are taken on one machine only, which the room of each machine doesn't say."""
    sets = [_set(resourceClaimName="shared"), _set("leader")]
    room, found = _run(_reads([_slice("a", 2)], [_shared(_request())]), sets)
    assert [u.detail for u in found.unchecked] == [
        f"ResourceClaim shared: shared by ['worker'], not by leader, which asks for {GPUS} too"
    ]
    assert found.unchecked[0].why == (
        "a device claim some of its programs share takes devices its other programs ask for "
        "too, which doctor doesn't count"
    )
    assert room.on("a") == (Resources.of({GPUS: 2}), Resources())


def test_a_shared_claim_being_deleted_refuses_every_machine() -> None:
    """kube-scheduler refuses a pod whose claim is being deleted, allocated or not
    (dynamicresources.go `foreachPodResourceClaim`: `resourceclaim %q is being deleted`,
    PreFilter: UnschedulableAndUnresolvable)."""
    deleting = {
        "deletionTimestamp": "2026-01-01T00:00:00Z",
        "finalizers": ["resource.kubernetes.io/delete-protection"],
    }
    for claim in (_shared(_request(), **deleting), _allocated("b", "gpu-0", namespace=NS)):
        claim["metadata"].update(name="shared", **deleting)
        _, found = _run(_reads([_slice("b", 1)], [claim]), [_set(resourceClaimName="shared")])
        assert found.exclusions == [
            Exclusion(
                "worker",
                ("a", "b"),
                "its device claim 'shared' is being deleted",
                "create the device claim 'shared' again once its deletion is done, or point the "
                "training job at another one",
                'ResourceClaim shared: resourceclaim "shared" is being deleted (dynamicresources)',
                everywhere=True,
            )
        ]
        assert (found.rules, found.unchecked) == ({}, [])
