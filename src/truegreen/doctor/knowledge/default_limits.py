"""Limits a LimitRange's defaults give a container below what it requests: the pod the API
server then refuses as invalid.

LimitRanger fills every limit a container does not state from the range's Container `default`
and never looks at the request (plugin/pkg/admission/limitranger/admission.go
`defaultContainerResourceRequirements`, `mergeContainerResources`: `if _, found :=
container.Resources.Limits[k]; !found`). The create's validation runs after every mutating
plugin and before the validating ones (staging/src/k8s.io/apiserver/pkg/registry/generic/
registry/store.go `create`: rest.BeforeCreate, then createValidation), and refuses a request
above its limit (pkg/apis/core/validation/validation.go `ValidateResourceRequirements`: `must
be less than or equal to cpu limit of 1`). kubernetes.io concepts/policy/limit-range ("LimitRange
and admission checks for Pods") shows the same trap.

A limit the template states itself was validated with the template already (a Job's, or
`--job-file`'s by knowledge/pod_validation.py); only a limit a range filled in is judged here.
A request never comes from a range above a stated limit: defaulting copies a stated limit into
a missing request before any plugin runs (`SetDefaults_Pod`).
"""

from collections.abc import Iterable, Mapping
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.stored_pod import (
    Amount,
    defaulted,
    limit_items,
    with_limit_range_defaults,
)


class DefaultBelowRequest(Struct, frozen=True):
    """A container's request above the limit a LimitRange's `default` gave it."""

    container: str
    path: str
    """Where the container is in the pod spec (`spec.containers[0]`)."""
    resource: str
    request: str
    """The request as resource.Quantity prints it (`16Gi`)."""
    limit: str
    """The limit the range filled in, printed the same way (`2Gi`)."""
    limit_range: str
    """The range whose default gave the limit (the first range to default a resource wins)."""

    @property
    def message(self) -> str:
        """The validation error, in the API server's words (field.Invalid on the requests)."""
        return (
            f'{self.path}.resources.requests: Invalid value: "{self.request}": must be less '
            f"than or equal to {self.resource} limit of {self.limit}"
        )


def invalid_message(found: Iterable[DefaultBelowRequest]) -> str:
    """What follows `Pod "<name>" is invalid: ` (field.ErrorList.ToAggregate: one error as it
    is, several in brackets, repeats once)."""
    messages = list(dict.fromkeys(f.message for f in found))
    return messages[0] if len(messages) == 1 else f"[{', '.join(messages)}]"


def _default_giver(resource: str, limit_ranges: Iterable[KubeObject]) -> str:
    """The first range whose Container items default the limit of `resource`."""
    for limit_range in limit_ranges:
        if any(i.type == "Container" and resource in i.default for i in limit_items(limit_range)):
            return o.name_of(limit_range)
    return ""


def defaults_below_requests(
    spec: Mapping[str, Any], limit_ranges: Iterable[KubeObject]
) -> list[DefaultBelowRequest]:
    """Every request of `spec`'s containers, then init containers (ValidatePodSpec's order),
    above a limit a range's default filled in; a container's resources sorted by name (Go walks
    the map in no order). QuantityError when an amount is not a quantity."""
    ranges = list(limit_ranges)
    before = defaulted(spec)
    after = with_limit_range_defaults(before, ranges)
    found = []
    for field, stated, stored in (
        ("containers", o.containers(before), o.containers(after)),
        ("initContainers", o.init_containers(before), o.init_containers(after)),
    ):
        for index, (own, container) in enumerate(zip(stated, stored, strict=True)):
            own_limits = o.mapping(o.mapping(own.get("resources")).get("limits"))
            resources = o.mapping(container.get("resources"))
            limits = o.mapping(resources.get("limits"))
            for name, value in sorted(o.mapping(resources.get("requests")).items()):
                if name in own_limits or name not in limits:
                    continue
                request, limit = Amount.parse(value), Amount.parse(limits[name])
                if request.value > limit.value:
                    found.append(
                        DefaultBelowRequest(
                            str(container.get("name") or ""),
                            f"spec.{field}[{index}]",
                            str(name),
                            str(request),
                            str(limit),
                            _default_giver(str(name), ranges),
                        )
                    )
    return found
