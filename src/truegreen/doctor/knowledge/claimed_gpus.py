"""The GPUs a pod asks for through dynamic resource allocation (resource.k8s.io/v1), rather
than through a GPU extended resource: each request of its device claims whose DeviceClass is a
GPU class (truegreen.gpu_resources.is_gpu_class), counted as the API defines it
(staging/src/k8s.io/api/resource/v1/types.go): `exactly` with `allocationMode: ExactCount`
(the default) gives `count` devices (default one); `All` every matching device in a pool, at
least one ("At least one device must exist on the node for the allocation to succeed"), a
number not fixed ahead; `firstAvailable` one of its alternatives, fixed only where every one is
a GPU class asking for the same count."""

from collections.abc import Mapping
from typing import Any

from truegreen import kubeobjects as o
from truegreen.cluster import GetRead, Got, Listed, ListRead
from truegreen.gpu_resources import ClaimedGpus, is_gpu_class


def claimed_gpus(
    spec: Mapping[str, Any],
    namespace: str,
    templates: Mapping[str, GetRead],
    claims: ListRead,
    classes: ListRead,
) -> tuple[ClaimedGpus, ...]:
    """The GPUs each request of the pod's device claims asks for: from the ResourceClaimTemplate
    a `resourceClaimTemplateName` names (`spec.spec`), or the ResourceClaim a
    `resourceClaimName` names (`spec`). A claim that could not be read may hold GPUs: it counts
    none, not fixed."""
    by_class = {o.name_of(c): c for c in classes.items} if isinstance(classes, Listed) else {}
    shared = (
        {o.name_of(c): c for c in claims.items if o.namespace_of(c) == namespace}
        if isinstance(claims, Listed)
        else {}
    )
    found: list[ClaimedGpus] = []
    for ref in (o.mapping(r) for r in o.sequence(spec.get("resourceClaims"))):
        name = str(ref.get("name") or "")
        template = templates.get(str(ref.get("resourceClaimTemplateName") or ""))
        claim = shared.get(str(ref.get("resourceClaimName") or ""))
        if isinstance(template, Got):
            claim_spec = o.mapping(o.mapping(template.obj.get("spec")).get("spec"))
        elif claim is not None:
            claim_spec = o.mapping(claim.get("spec"))
        else:
            found.append(ClaimedGpus(name, "", 0, exact=False))
            continue
        for request in o.sequence(o.mapping(claim_spec.get("devices")).get("requests")):
            counted = _request(name, o.mapping(request), by_class)
            if counted is not None:
                found.append(counted)
    return tuple(found)


def _request(
    claim: str, request: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]]
) -> ClaimedGpus | None:
    """The GPUs of one request; None when none of its devices are GPUs."""
    exactly = o.mapping(request.get("exactly"))
    choices = (
        [exactly] if exactly else [o.mapping(a) for a in o.sequence(request.get("firstAvailable"))]
    )
    counts = [_count(choice, classes) for choice in choices]
    if not any(count is not None for count, _ in counts):
        return None
    name = str(request.get("name") or "")
    fewest = min(count or 0 for count, _ in counts)
    fixed = all(count is not None and exact for count, exact in counts)
    return ClaimedGpus(claim, name, fewest, exact=fixed and len({c for c, _ in counts}) == 1)


def _count(
    choice: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]]
) -> tuple[int | None, bool]:
    """The GPUs one way of meeting a request gives, and whether that number is fixed; None
    when its devices are not GPUs."""
    class_name = str(choice.get("deviceClassName") or "")
    if not is_gpu_class(class_name, classes.get(class_name)):
        return None, False
    if str(choice.get("allocationMode") or "ExactCount") != "ExactCount":
        return 1, False
    return max(o.integer(choice.get("count"), 1), 1), True
