"""Limits a LimitRange's defaults give below a request, value by value against the sources:
plugin/pkg/admission/limitranger/admission.go (mergeContainerResources fills a missing limit
without looking at the request) and pkg/apis/core/validation/validation.go
(ValidateResourceRequirements: `must be less than or equal to cpu limit of 1`)."""

from typing import Any

from truegreen.doctor.knowledge.default_limits import (
    DefaultBelowRequest,
    defaults_below_requests,
    invalid_message,
)


def _range(name: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(items)}}


def _c(name: str, **resources: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "resources": resources}


SMALL = _range("small", {"type": "Container", "default": {"cpu": "1", "memory": "2Gi"}})


def test_a_default_limit_below_the_request_is_named_with_its_range() -> None:
    spec = {"containers": [_c("trainer", requests={"memory": "16Gi", "cpu": "4"})]}
    assert defaults_below_requests(spec, [SMALL]) == [
        DefaultBelowRequest("trainer", "spec.containers[0]", "cpu", "4", "1", "small"),
        DefaultBelowRequest("trainer", "spec.containers[0]", "memory", "16Gi", "2Gi", "small"),
    ]


def test_containers_come_before_init_containers_each_at_its_place() -> None:
    spec = {
        "initContainers": [_c("fetch", requests={"cpu": "2"})],
        "containers": [_c("ok", requests={"cpu": "1"}), _c("trainer", requests={"cpu": "1500m"})],
    }
    found = defaults_below_requests(spec, [SMALL])
    assert [(f.container, f.path, f.request) for f in found] == [
        ("trainer", "spec.containers[1]", "1500m"),
        ("fetch", "spec.initContainers[0]", "2"),
    ]


def test_a_limit_the_container_states_is_not_the_range_s_to_judge() -> None:
    """A stated limit below its request was refused with the template itself."""
    spec = {"containers": [_c("trainer", requests={"cpu": "4"}, limits={"cpu": "2"})]}
    assert defaults_below_requests(spec, [SMALL]) == []


def test_a_stated_limit_alone_is_the_request_and_the_default_request_never_exceeds_it() -> None:
    """SetDefaults_Pod copies a stated limit into a missing request before LimitRanger, so a
    range's larger defaultRequest is never used."""
    big_request = _range("big", {"type": "Container", "defaultRequest": {"cpu": "8"}})
    spec = {"containers": [_c("trainer", limits={"cpu": "2"})]}
    assert defaults_below_requests(spec, [big_request]) == []


def test_the_first_range_to_default_the_limit_is_named() -> None:
    """Each range in turn fills only what is still missing (PodMutateLimitFunc)."""
    memory_only = _range("memory", {"type": "Container", "default": {"memory": "1Gi"}})
    spec = {"containers": [_c("trainer", requests={"cpu": "4", "memory": "4Gi"})]}
    found = defaults_below_requests(spec, [memory_only, SMALL])
    assert [(f.resource, f.limit, f.limit_range) for f in found] == [
        ("cpu", "1", "small"),
        ("memory", "1Gi", "memory"),
    ]


def test_a_request_at_the_default_limit_is_valid() -> None:
    spec = {"containers": [_c("trainer", requests={"cpu": "1000m", "memory": "2048Mi"})]}
    assert defaults_below_requests(spec, [SMALL]) == []


def test_a_range_s_maximum_is_its_default_limit() -> None:
    """SetDefaults_LimitRangeItem: `default` from `max`."""
    maximum = _range("max", {"type": "Container", "max": {"memory": "8Gi"}})
    spec = {"containers": [_c("trainer", requests={"memory": "16Gi"})]}
    assert [f.message for f in defaults_below_requests(spec, [maximum])] == [
        'spec.containers[0].resources.requests: Invalid value: "16Gi": must be less than or '
        "equal to memory limit of 8Gi"
    ]


def test_the_errors_aggregate_as_the_api_server_joins_them() -> None:
    one = DefaultBelowRequest("a", "spec.containers[0]", "cpu", "4", "1", "r")
    two = DefaultBelowRequest("a", "spec.containers[0]", "memory", "4Gi", "1Gi", "r")
    assert invalid_message([one]) == one.message
    assert invalid_message([one, two, one]) == f"[{one.message}, {two.message}]"
