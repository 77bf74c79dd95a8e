"""Devices of dynamic resource allocation (resource.k8s.io/v1) as room on each machine, for a job
that claims devices (the DynamicResources filter, dynamic_resources.py, asks).

A pod asks for devices through `spec.resourceClaims`: a ResourceClaimTemplate gives each pod a
claim of its own, a ResourceClaim is shared by every pod that names it. kube-scheduler's
DynamicResources plugin (pkg/scheduler/framework/plugins/dynamicresources) allocates a claim on
the machine it tries: the devices the drivers publish in ResourceSlices that reach that machine
(`spec.nodeName`, `nodeSelector`, `allNodes`, or per device), of the newest generation of each
pool (none of a pool that lists a device name twice: it is invalid), that every selector of
the request's DeviceClass and of the request accepts, and that no claim's `status.allocation`
holds already (staging/src/k8s.io/dynamic-resource-allocation/structured: `GatherPools`, the
allocator). An allocated shared claim is usable only where its `allocation.nodeSelector` says;
one being deleted is usable nowhere (`foreachPodResourceClaim`). Every request of a pod's claims
takes devices of its own (the allocator's `deviceInUse`), so a shared claim not allocated yet
takes its devices out of the room for the pods' own claims.

doctor counts, per machine, the devices each request could take and how many are in use; a
pod's requests become its need, and the placement does the rest. The selectors (CEL) are
evaluated as Kubernetes does (doctor/knowledge/device_cel.py). A selector doctor cannot evaluate
still bounds the answer: when no free device is left that no selector refuses before one it
cannot judge, the request cannot be met (measured); otherwise it is unknown, naming the
expression. Prioritized alternatives (`firstAvailable`) are counted when one alone might still
be met. What it does not evaluate is named, never passed: several alternatives that might be
met, `allocationMode: All`, admin access, requests that must share an attribute
(`constraints`), partitionable and shareable devices, devices several machines reach, a shared
claim not allocated yet whose kinds of device programs that don't share it ask for too, devices
of a pool whose driver has not published all its slices.

Devices allocated to a claim of the namespace reserved for its pods alone are tied to those pods
(`DeviceRoom.holders`): they come back when the pods are done, as the pods' own requests do.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, GetRead, Kind, KubeObject, Listed, ReadFailure
from truegreen.doctor.checks.capacity.filters.dynamic_resources import claim_refs
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
from truegreen.doctor.knowledge.device_cel import Selectors, Unevaluable
from truegreen.doctor.knowledge.fit import matches_node_selector, tolerates
from truegreen.kubectl import Kubectl
from truegreen.quantity import Resources, devices_of, format_amount

_RULE = "whether the machines have the devices the training job asks for"
_SHOWN = 100
"""Characters of an expression an operator reads in a headline."""
_NOT_READ = CantRead(ReadFailure.NOT_CAPTURED, "not read")


def unserved(kubectl: Kubectl) -> Unchecked:
    """Device claims on a cluster that does not serve resource.k8s.io/v1: not evaluated."""
    return Unchecked(
        _RULE,
        "the cluster doesn't offer devices the way its programs ask for them",
        "Check which device interfaces the cluster offers with " + kubectl.cluster("api-versions"),
        "pod resourceClaims, and discovery lists no resource.k8s.io/v1",
    )


class _Device(Struct, frozen=True):
    driver: str
    pool: str
    name: str
    machines: frozenset[str]
    spec: Mapping[str, Any]
    slices: tuple[int, int]
    """Its pool's slices of the newest generation: published, and declared
    (`resourceSliceCount`)."""

    @property
    def id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.name)


class _Request(Struct, frozen=True):
    """One request of a claim, as doctor counts it: which devices, how many."""

    name: str
    device_class: str
    candidates: frozenset[tuple[str, str, str]]
    count: int

    @property
    def resource(self) -> str:
        """The name its devices are counted under (`gpu.nvidia.com devices`)."""
        return devices_of(self.device_class)


class _Context(Struct, frozen=True):
    """What every claim of the job is judged against."""

    nodes: tuple[KubeObject, ...]
    classes: Mapping[str, KubeObject]
    devices: tuple[_Device, ...]
    in_use: frozenset[tuple[str, str, str]]
    reserved: Mapping[tuple[str, str, str], frozenset[str]]
    """Of the devices in use, those whose claim is reserved for pods of the namespace alone,
    with those pods' names."""
    asking: tuple[JobPodSet, ...]
    kubectl: Kubectl
    selectors: Selectors

    @property
    def machines(self) -> tuple[str, ...]:
        return tuple(sorted(o.name_of(n) for n in self.nodes))


class _Pending(Struct, frozen=True):
    """A shared claim not allocated yet: the scheduler allocates it on the machine of the first
    pod that names it, and every other pod that names it must run there."""

    name: str
    requests: tuple[_Request, ...]
    users: frozenset[str]
    """The job's pod sets that name it."""


def device_room(
    sets: Sequence[JobPodSet],
    namespace: str,
    nodes: Sequence[KubeObject],
    reads: DeviceReads | None,
    kubectl: Kubectl,
    found: Found,
    pods: Mapping[str, str],
) -> DeviceRoom:
    """The devices the job's pod sets ask for, some of which claim devices, as room per machine;
    what cannot be evaluated goes to `found`. `pods`: the uid of each of the namespace's pods on
    a machine, by name (the devices reserved for them alone are theirs)."""
    asking = tuple(s for s in sets if claim_refs(s.spec))
    if reads is None or not reads.served:
        found.uncheck(unserved(kubectl))
        return DeviceRoom()
    slices, claims, classes = reads.slices, reads.claims, reads.classes
    if not (
        isinstance(slices, Listed) and isinstance(claims, Listed) and isinstance(classes, Listed)
    ):
        for kind, read in (
            (Kind.RESOURCE_SLICE, slices),
            (Kind.RESOURCE_CLAIM, claims),
            (Kind.DEVICE_CLASS, classes),
        ):
            if isinstance(read, CantRead):
                found.fail(FailedRead(kind, read, everywhere=kind is Kind.RESOURCE_CLAIM))
        return DeviceRoom()
    devices = _devices(slices.items, nodes, kubectl, found)
    if devices is None:
        return DeviceRoom()
    context = _Context(
        tuple(nodes),
        {o.name_of(c): c for c in classes.items},
        tuple(devices),
        _allocated(claims.items),
        _reserved(claims.items, namespace, pods),
        asking,
        kubectl,
        Selectors(),
    )
    shared = {o.name_of(c): c for c in claims.items if o.namespace_of(c) == namespace}
    per_pod: dict[str, list[_Request]] = {}
    pending: dict[str, _Pending] = {}
    for pod_set in asking:
        for ref in claim_refs(pod_set.spec):
            template = str(ref.get("resourceClaimTemplateName") or "")
            claim = str(ref.get("resourceClaimName") or "")
            if template:
                spec = _template_spec(
                    template, reads.templates.get(template), context, pod_set, found
                )
                requests = None if spec is None else _requests(spec, context, pod_set.name, found)
                if requests is not None:
                    per_pod.setdefault(pod_set.name, []).extend(requests)
            elif claim:
                requests = _shared_claim(claim, shared.get(claim), pod_set, context, found)
                if requests is not None:
                    pending[claim] = _Pending(claim, tuple(requests), _users(claim, context))
    asked = [*per_pod.values(), *(p.requests for p in pending.values())]
    names = _resources(asked, kubectl, found)
    if not names:
        return DeviceRoom()
    kept = [p for p in pending.values() if _kept(p, per_pod, pending, names, context, found)]
    room = replace(
        _room(per_pod, names, kept, context, found),
        classes=tuple(sorted({(names[r.candidates], r.device_class) for q in asked for r in q})),
    )
    for waiting in pending.values():
        _placed_once(waiting, names, context, found)
    return room


def _devices(
    slices: Sequence[KubeObject], nodes: Sequence[KubeObject], kubectl: Kubectl, found: Found
) -> list[_Device] | None:
    """Every device of the newest generation of each valid pool, with the machines it reaches;
    None when a pool holds devices doctor cannot count."""
    pools: dict[tuple[str, str], list[KubeObject]] = {}
    for item in slices:
        pools.setdefault(_pool_of(item), []).append(item)
    devices: list[_Device] = []
    for (driver, pool), items in pools.items():
        newest = max(_generation(i) for i in items)
        # Out of date: GatherPools keeps the newest generation only.
        current = [i for i in items if _generation(i) == newest]
        twice = _listed_twice(current)
        if twice:
            # pools_stable.go `poolIsInvalid`; allocator_stable.go `allocateOne` skips the pool.
            found.details.append(
                f"ResourceSlice pool {driver}/{pool}: device name {twice} listed twice: the pool "
                "is invalid and none of its devices is given out"
            )
            continue
        declared = o.integer(o.mapping(_spec(current[0]).get("pool")).get("resourceSliceCount"))
        for item in current:
            spec = _spec(item)
            for device in (o.mapping(d) for d in o.sequence(spec.get("devices"))):
                if device.get("consumesCounters") or device.get("allowMultipleAllocations"):
                    found.uncheck(
                        Unchecked(
                            _RULE,
                            "some devices are parts of one device or shared between programs, "
                            "which doctor doesn't count",
                            "Check the devices each machine offers with "
                            + kubectl.cluster("get", "resourceslices", "-o", "yaml"),
                            f"ResourceSlice {o.name_of(item)}: device {device.get('name')} "
                            "consumes shared counters or allows multiple allocations",
                        )
                    )
                    return None
                where = spec if not spec.get("perDeviceNodeSelection") else device
                devices.append(
                    _Device(
                        driver,
                        pool,
                        str(device.get("name") or ""),
                        _reaches(where, nodes),
                        device,
                        (len(current), declared),
                    )
                )
    return devices


def _spec(item: KubeObject) -> Mapping[str, Any]:
    return o.mapping(item.get("spec"))


def _pool_of(item: KubeObject) -> tuple[str, str]:
    spec = _spec(item)
    return (str(spec.get("driver") or ""), str(o.mapping(spec.get("pool")).get("name") or ""))


def _generation(item: KubeObject) -> int:
    return o.integer(o.mapping(_spec(item).get("pool")).get("generation"))


def _listed_twice(slices: Sequence[KubeObject]) -> str:
    """The first device name a pool's slices list twice; empty when none is."""
    seen: set[str] = set()
    for item in slices:
        for device in (o.mapping(d) for d in o.sequence(_spec(item).get("devices"))):
            name = str(device.get("name") or "")
            if name in seen:
                return name
            seen.add(name)
    return ""


def _reaches(where: Mapping[str, Any], nodes: Sequence[KubeObject]) -> frozenset[str]:
    """The machines a slice (or a device of it) reaches (pools_stable.go `nodeMatches`)."""
    name = str(where.get("nodeName") or "")
    if name:
        return frozenset(o.name_of(n) for n in nodes if o.name_of(n) == name)
    if where.get("allNodes") is True:
        return frozenset(o.name_of(n) for n in nodes)
    selector = o.mapping(where.get("nodeSelector"))
    if selector:
        terms = [o.mapping(t) for t in o.sequence(selector.get("nodeSelectorTerms"))]
        return frozenset(o.name_of(n) for n in nodes if matches_node_selector(terms, n))
    return frozenset()


def _allocated(claims: Sequence[KubeObject]) -> frozenset[tuple[str, str, str]]:
    """The devices every claim's allocation holds (admin access holds none)."""
    held = set()
    for claim in claims:
        allocation = o.mapping(o.mapping(claim.get("status")).get("allocation"))
        results = o.sequence(o.mapping(allocation.get("devices")).get("results"))
        for result in (o.mapping(r) for r in results):
            if result.get("adminAccess") is True:
                continue
            held.add(
                (str(result.get("driver")), str(result.get("pool")), str(result.get("device")))
            )
    return frozenset(held)


def _reserved(
    claims: Sequence[KubeObject], namespace: str, pods: Mapping[str, str]
) -> dict[tuple[str, str, str], frozenset[str]]:
    """The devices of the namespace's claims reserved for its pods alone, with those pods'
    names. A reservation names a pod by name and uid (resourceclaim.go `IsReservedForPod`
    compares the uid): one for a pod replaced since, or for anything but a pod, ties the devices
    to no pod doctor knows, so they stay taken."""
    held: dict[tuple[str, str, str], frozenset[str]] = {}
    for claim in (c for c in claims if o.namespace_of(c) == namespace):
        status = o.mapping(claim.get("status"))
        reservations = [o.mapping(r) for r in o.sequence(status.get("reservedFor"))]
        if not reservations or not all(_names_pod(r, pods) for r in reservations):
            continue
        names = frozenset(str(r.get("name")) for r in reservations)
        results = o.sequence(
            o.mapping(o.mapping(status.get("allocation")).get("devices")).get("results")
        )
        for result in (o.mapping(r) for r in results):
            if result.get("adminAccess") is not True:
                device = (
                    str(result.get("driver")),
                    str(result.get("pool")),
                    str(result.get("device")),
                )
                held[device] = names
    return held


def _names_pod(reservation: Mapping[str, Any], pods: Mapping[str, str]) -> bool:
    """Whether a reservation (`status.reservedFor[]`) names one of `pods` (uid by name)."""
    uid = str(reservation.get("uid") or "")
    return (
        not reservation.get("apiGroup")
        and reservation.get("resource") == "pods"
        and bool(uid)
        and pods.get(str(reservation.get("name") or "")) == uid
    )


def _template_spec(
    name: str,
    read: GetRead | None,
    context: _Context,
    pod_set: JobPodSet,
    found: Found,
) -> Mapping[str, Any] | None:
    """The claim spec a template stamps out; None (and why in `found`) when it can't be read."""
    if read is None or (isinstance(read, CantRead) and not read.is_measurement):
        found.fail(FailedRead(Kind.RESOURCE_CLAIM_TEMPLATE, read or _NOT_READ))
        return None
    if isinstance(read, CantRead):
        found.exclude(
            Exclusion(
                pod_set.name,
                context.machines,
                f"the device request '{name}' its programs name doesn't exist",
                f"create the device request '{name}', or point the training job at one that exists",
                f"ResourceClaimTemplate {name} not found: no claim is created for the pods",
                everywhere=True,
            )
        )
        return None
    return o.mapping(o.mapping(read.obj.get("spec")).get("spec"))


def _requests(
    spec: Mapping[str, Any], context: _Context, group: str, found: Found
) -> list[_Request] | None:
    """A claim spec's requests as counts of candidate devices; None when one can't be
    evaluated (the reason is in `found`)."""
    claim_devices = o.mapping(spec.get("devices"))
    if o.sequence(claim_devices.get("constraints")):
        found.uncheck(
            _not_counted(
                "its devices must share a property, which doctor doesn't evaluate",
                f"{group}: claim constraints (matchAttribute)",
                context.kubectl,
            )
        )
        return None
    requests: list[_Request] = []
    for request in (o.mapping(r) for r in o.sequence(claim_devices.get("requests"))):
        name = str(request.get("name") or "")
        exactly = o.mapping(request.get("exactly")) or _first_available(
            request, context, group, found
        )
        if not exactly:
            return None
        mode = str(exactly.get("allocationMode") or "ExactCount")
        if mode != "ExactCount" or exactly.get("adminAccess") is True or exactly.get("capacity"):
            found.uncheck(
                _not_counted(
                    "it asks for devices in a way doctor doesn't count (all of a kind, "
                    "administrator access, or a share of a device)",
                    f"{group}: request {name}: allocationMode {mode}, adminAccess or capacity",
                    context.kubectl,
                )
            )
            return None
        class_name = str(exactly.get("deviceClassName") or "")
        device_class = context.classes.get(class_name)
        if device_class is None:
            found.exclude(
                Exclusion(
                    group,
                    context.machines,
                    f"it asks for devices of a kind ('{class_name}') the cluster doesn't define",
                    "ask for a kind of device the cluster defines ("
                    + context.kubectl.cluster("get", "deviceclasses")
                    + " lists them)",
                    f"{group}: request {name}: DeviceClass {class_name} not found",
                    everywhere=True,
                )
            )
            return None
        candidates, possible, unevaluable = _selected(exactly, device_class, context)
        if unevaluable is not None:
            _unevaluable(unevaluable, possible, context, group, name, class_name, found)
            return None
        incomplete = _incomplete(candidates, context)
        if incomplete:
            found.uncheck(
                _not_counted(
                    "some of the devices it could take are still being published by their driver",
                    f"{group}: request {name}: {incomplete}",
                    context.kubectl,
                )
            )
            return None
        if any(len(d.machines) > 1 for d in context.devices if d.id in candidates):
            found.uncheck(
                _not_counted(
                    "some of the devices it could take are reached by several machines, "
                    "which doctor doesn't count",
                    f"{group}: request {name}: devices of a pool with nodeSelector or allNodes",
                    context.kubectl,
                )
            )
            return None
        count = max(o.integer(exactly.get("count"), 1), 1)
        requests.append(_Request(name, class_name, candidates, count))
    return requests


def _incomplete(candidates: frozenset[tuple[str, str, str]], context: _Context) -> str:
    """The pools of the candidates that lack some of their slices, for an operator; empty when
    none does. Kubernetes 1.35 skips such a pool (allocator_stable.go `allocateOne`), 1.34 gave
    out its devices, and doctor doesn't know the scheduler's version."""
    pools = {
        (d.driver, d.pool): d.slices
        for d in context.devices
        if d.id in candidates and d.slices[0] != d.slices[1]
    }
    return "; ".join(
        f"ResourceSlice pool {driver}/{pool}: {published} of its {declared} slices published"
        for (driver, pool), (published, declared) in sorted(pools.items())
    )


def _not_counted(why: str, detail: str, kubectl: Kubectl) -> Unchecked:
    return Unchecked(
        _RULE,
        why,
        "Check the devices each machine has free with "
        + kubectl.cluster("get", "resourceslices,resourceclaims", "--all-namespaces", "-o", "wide"),
        detail,
    )


def _selected(
    exactly: Mapping[str, Any], device_class: KubeObject, context: _Context
) -> tuple[frozenset[tuple[str, str, str]], frozenset[tuple[str, str, str]], Unevaluable | None]:
    """`_chosen` for a request (or an alternative of one) of a class: the class's selectors,
    then the request's, over the devices whose taints it tolerates."""
    expressions = [
        str(o.mapping(o.mapping(selector).get("cel")).get("expression") or "")
        for selector in (
            *o.sequence(o.mapping(device_class.get("spec")).get("selectors")),
            *o.sequence(exactly.get("selectors")),
        )
    ]
    tolerations = [o.mapping(t) for t in o.sequence(exactly.get("tolerations"))]
    usable = [d for d in context.devices if _untainted(d, tolerations)]
    return _chosen(expressions, usable, context.selectors)


def _first_available(
    request: Mapping[str, Any], context: _Context, group: str, found: Found
) -> Mapping[str, Any]:
    """A request's one alternative (`firstAvailable`) that might still be met, as the request
    doctor counts; empty (and why in `found`) otherwise. The allocator takes the first
    alternative it can meet (allocator_stable.go); one with no free device its selectors might
    take can't be met (measured), so when one alone is left, it is the request; when none is
    left, the request can't be met; several left are unchecked."""
    name = str(request.get("name") or "")
    alternatives = [o.mapping(a) for a in o.sequence(request.get("firstAvailable"))]
    left: list[Mapping[str, Any]] = []
    for alternative in alternatives:
        device_class = context.classes.get(str(alternative.get("deviceClassName") or ""))
        if device_class is None:
            left = alternatives  # the allocator fails on a missing class: not counted
            break
        _, possible, _ = _selected(alternative, device_class, context)
        if any(d not in context.in_use for d in possible):
            left.append(alternative)
    names = ", ".join(str(a.get("name") or "") for a in alternatives)
    if not alternatives:
        detail = f"{group}: request {name} has firstAvailable (or no exactly)"
    elif not left:
        found.exclude(
            Exclusion(
                group,
                context.machines,
                f"no device is free of any kind its request '{name}' accepts",
                "free a device of one of those kinds, or add machines that have one ("
                + context.kubectl.cluster(
                    "get", "resourceslices,resourceclaims", "--all-namespaces", "-o", "wide"
                )
                + " lists them)",
                f"{group}: request {name}: firstAvailable {names}: no unallocated, untainted "
                "device that their selectors might take",
                everywhere=True,
            )
        )
        return {}
    elif len(left) == 1:
        return left[0]
    else:
        detail = f"{group}: request {name}: firstAvailable {names}: {len(left)} might be met"
    found.uncheck(
        _not_counted(
            "it lists alternative devices to choose from, which doctor doesn't evaluate",
            detail,
            context.kubectl,
        )
    )
    return {}


def _chosen(
    expressions: Sequence[str], devices: Sequence[_Device], selectors: Selectors
) -> tuple[frozenset[tuple[str, str, str]], frozenset[tuple[str, str, str]], Unevaluable | None]:
    """The devices every selector takes; the devices no selector refuses; the first selector
    that could not be evaluated, if any. allocator_stable.go `isSelectable` judges the class's
    selectors, then the request's, and stops at the first that refuses or fails: a selector
    doctor can't evaluate may be a runtime error that aborts allocation there, so a later
    selector's refusal doesn't count."""
    taken: set[tuple[str, str, str]] = set()
    possible: set[tuple[str, str, str]] = set()
    first: Unevaluable | None = None
    for device in devices:
        verdict: bool | Unevaluable = True
        for expression in expressions:
            verdict = selectors.matches(expression, device.id, device.driver, device.spec)
            if verdict is not True:
                break
        if verdict is False:
            continue
        possible.add(device.id)
        if isinstance(verdict, Unevaluable):
            first = first or verdict
        else:
            taken.add(device.id)
    return frozenset(taken), frozenset(possible), first


def _unevaluable(
    unevaluable: Unevaluable,
    possible: frozenset[tuple[str, str, str]],
    context: _Context,
    group: str,
    name: str,
    class_name: str,
    found: Found,
) -> None:
    """A request with a selector doctor can't evaluate: refused everywhere when no free device
    is left that the selectors might take (measured: whatever the selector says, there is none);
    unknown, naming the expression, otherwise."""
    shown = " ".join(unevaluable.expression.replace("`", "'").split())
    if len(shown) > _SHOWN:
        shown = shown[: _SHOWN - 1] + "…"
    free = sorted("/".join(d) for d in possible if d not in context.in_use)
    detail = (
        f"{group}: request {name}: a CEL selector of DeviceClass {class_name} or of the request "
        f"not evaluated ({unevaluable.reason}): {unevaluable.expression[:1000]}"
    )
    if not free:
        found.exclude(
            Exclusion(
                group,
                context.machines,
                f"no device is free that could be of the kind its request '{name}' asks for",
                "free a device of that kind, or add machines that have one ("
                + context.kubectl.cluster(
                    "get", "resourceslices,resourceclaims", "--all-namespaces", "-o", "wide"
                )
                + " lists them)",
                f"{detail}; none of the {len(possible)} untainted devices no selector refuses "
                "is unallocated",
                everywhere=True,
            )
        )
        return
    found.uncheck(
        _not_counted(
            f"its devices are picked by a rule doctor can't evaluate (`{shown}`)",
            f"{detail}; {len(free)} unallocated devices might match: {', '.join(free[:10])}",
            context.kubectl,
        )
    )


def _untainted(device: _Device, tolerations: Sequence[Mapping[str, Any]]) -> bool:
    """No NoSchedule or NoExecute taint of the device that the request does not tolerate
    (device taints: the same matching as a machine's)."""
    for taint in (o.mapping(t) for t in o.sequence(device.spec.get("taints"))):
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return False
    return True


def _shared_claim(
    name: str, claim: KubeObject | None, pod_set: JobPodSet, context: _Context, found: Found
) -> list[_Request] | None:
    """A claim every pod that names it shares: usable nowhere while it is being deleted; where
    its allocation is; not allocated yet, its requests (the machine it takes them on is
    `_placed_once`'s); None when there is nothing more to count (what was found is in
    `found`)."""
    if claim is None:
        found.exclude(
            Exclusion(
                pod_set.name,
                context.machines,
                f"its device claim '{name}' doesn't exist",
                f"create the device claim '{name}', or point the training job at one that exists",
                f"ResourceClaim {name} not found",
                everywhere=True,
            )
        )
        return None
    if o.is_terminating(claim):
        found.exclude(
            Exclusion(
                pod_set.name,
                context.machines,
                f"its device claim '{name}' is being deleted",
                f"create the device claim '{name}' again once its deletion is done, or point the "
                "training job at another one",
                f'ResourceClaim {name}: resourceclaim "{name}" is being deleted (dynamicresources)',
                everywhere=True,
            )
        )
        return None
    allocation = o.mapping(o.mapping(claim.get("status")).get("allocation"))
    if allocation:
        selector = o.mapping(allocation.get("nodeSelector"))
        if not selector:
            return None  # available everywhere
        terms = [o.mapping(t) for t in o.sequence(selector.get("nodeSelectorTerms"))]
        where = sorted(o.name_of(n) for n in context.nodes if matches_node_selector(terms, n))
        found.exclude(
            Exclusion(
                pod_set.name,
                tuple(m for m in context.machines if m not in where),
                f"can't use its device claim '{name}', whose devices are on "
                + (", ".join(where) or "no machine"),
                f"run the training job where the devices of '{name}' are",
                f"ResourceClaim {name}: allocated; allocation.nodeSelector refuses the others",
            )
        )
        return None
    return _requests(o.mapping(claim.get("spec")), context, pod_set.name, found)


def _users(name: str, context: _Context) -> frozenset[str]:
    """The job's pod sets that name the shared claim `name`."""
    return frozenset(
        s.name
        for s in context.asking
        if any(str(c.get("resourceClaimName") or "") == name for c in claim_refs(s.spec))
    )


def _demand(
    requests: Sequence[_Request], names: Mapping[frozenset[tuple[str, str, str]], str]
) -> dict[str, int]:
    """The devices requests take, per resource: each request its own (allocator_stable.go
    `allocateDevice` skips a device `deviceInUse` says is taken, those picked for the pod's
    earlier requests and claims included)."""
    amounts: dict[str, int] = {}
    for request in requests:
        resource = names[request.candidates]
        amounts[resource] = amounts.get(resource, 0) + request.count
    return amounts


def _placed_once(
    claim: _Pending,
    names: Mapping[frozenset[tuple[str, str, str]], str],
    context: _Context,
    found: Found,
) -> None:
    """A shared claim not allocated yet: on one machine with the free devices it asks, every
    program that shares it on that machine."""
    demand = _demand(claim.requests, names)
    short = tuple(
        m
        for m in context.machines
        if any(
            _free(candidates, m, context) < demand.get(resource, 0)
            for candidates, resource in names.items()
        )
    )
    users = [s.name for s in context.asking if s.name in claim.users]
    words = f"must run on the machine where its shared device claim '{claim.name}' gets its devices"
    for group in users:
        found.exclude(
            Exclusion(
                group,
                short,
                f"lacking the free devices its shared device claim '{claim.name}' needs",
                f"free devices on one machine for the shared device claim '{claim.name}'",
                f"ResourceClaim {claim.name}: not allocated; too few free candidate devices on "
                f"{', '.join(short)}",
            )
        )
        found.rule(
            group,
            Near(
                group,
                ((tuple((m, m) for m in context.machines), frozenset()),),
                claim.users,
                True,
                words,
            ),
            f"make room for every program that shares '{claim.name}' on one machine with its "
            "devices",
            f"ResourceClaim {claim.name}: shared by {sorted(claim.users)}, allocated on one node",
        )


def _free(candidates: frozenset[tuple[str, str, str]], machine: str, context: _Context) -> int:
    """The devices of `candidates` on `machine` no claim holds."""
    return sum(
        1
        for d in context.devices
        if d.id in candidates and machine in d.machines and d.id not in context.in_use
    )


def _kept(
    claim: _Pending,
    per_pod: Mapping[str, Sequence[_Request]],
    pending: Mapping[str, _Pending],
    names: Mapping[frozenset[tuple[str, str, str]], str],
    context: _Context,
    found: Found,
) -> bool:
    """Whether the devices a shared claim not allocated yet takes can be kept off every
    machine's room: only when every program that asks for devices of its kinds shares it, so
    that all of them run on the one machine where it gets them; unchecked otherwise."""
    kinds = set(_demand(claim.requests, names))
    for pod_set in context.asking:
        if pod_set.name in claim.users:
            continue
        asked = set(_demand(per_pod.get(pod_set.name, ()), names))
        for other in pending.values():
            if pod_set.name in other.users:
                asked |= set(_demand(other.requests, names))
        if asked & kinds:
            found.uncheck(
                _not_counted(
                    "a device claim some of its programs share takes devices its other "
                    "programs ask for too, which doctor doesn't count",
                    f"ResourceClaim {claim.name}: shared by {sorted(claim.users)}, not by "
                    f"{pod_set.name}, which asks for {', '.join(sorted(asked & kinds))} too",
                    context.kubectl,
                )
            )
            return False
    return True


def _resources(
    claims: Sequence[Sequence[_Request]], kubectl: Kubectl, found: Found
) -> dict[frozenset[tuple[str, str, str]], str] | None:
    """One resource name per set of candidate devices, over the requests of every claim the
    job's pods make; None when two requests could take some of the same devices but not all
    (their counts would overlap)."""
    names: dict[frozenset[tuple[str, str, str]], str] = {}
    for requests in claims:
        for request in requests:
            if request.candidates not in names:
                taken = request.resource in names.values()
                names[request.candidates] = (
                    f"{request.resource} ({request.name})" if taken else request.resource
                )
    sets = list(names)
    for index, first in enumerate(sets):
        for second in sets[index + 1 :]:
            if first & second:
                found.uncheck(
                    _not_counted(
                        "two of its device requests could take the same devices, which "
                        "doctor doesn't count",
                        f"requests for {names[first]} and {names[second]} share candidate devices",
                        kubectl,
                    )
                )
                return None
    return names


def _room(
    per_pod: Mapping[str, Sequence[_Request]],
    names: Mapping[frozenset[tuple[str, str, str]], str],
    kept: Sequence[_Pending],
    context: _Context,
    found: Found,
) -> DeviceRoom:
    """Each pod's devices and each machine's, as resources the placement counts; the devices a
    shared claim not allocated yet takes are not the pods' own on any machine (every program
    that could take them runs on the one machine where it gets them: `_kept`)."""
    requests = [(group, Resources.of(_demand(asked, names))) for group, asked in per_pod.items()]
    room = []
    holders: dict[tuple[str, frozenset[str]], dict[str, int]] = {}
    offered: dict[str, list[str]] = {resource: [] for resource in names.values()}
    for machine in context.machines:
        there: dict[str, int] = {}
        used: dict[str, int] = {}
        words: list[tuple[str, str]] = []
        for candidates, resource in names.items():
            here = [d for d in context.devices if d.id in candidates and machine in d.machines]
            reserved = [(c.name, _demand(c.requests, names).get(resource, 0)) for c in kept]
            there[resource] = max(len(here) - sum(n for _, n in reserved), 0)
            used[resource] = sum(1 for d in here if d.id in context.in_use)
            for device in (d for d in here if d.id in context.reserved):
                theirs = holders.setdefault((machine, context.reserved[device.id]), {})
                theirs[resource] = theirs.get(resource, 0) + 1
            if here:
                offered[resource].append(machine)
                held = "".join(f", {n} for ResourceClaim {c}" for c, n in reserved if n)
                counted = format_amount(resource, len(here))
                words.append((resource, f"{counted} ({used[resource]} allocated{held})"))
        room.append((machine, Resources.of(there), Resources.of(used)))
        if words:
            found.details.append(f"{machine}: {', '.join(w for _, w in sorted(words))}")
    return DeviceRoom(
        tuple(requests),
        tuple(room),
        tuple((resource, tuple(machines)) for resource, machines in offered.items()),
        tuple((m, pods, Resources.of(theirs)) for (m, pods), theirs in holders.items()),
    )
