"""Admission webhooks, as pure functions: which ones are called when a pod is created here, and
whether anything answers behind them.

Ground truth, kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook:
- predicates/rules/rules.go: a rule matches on operation, group, version, resource (with its
  subresource) and scope;
- predicates/namespace/matcher.go and predicates/object/matcher.go: an empty selector matches
  everything, otherwise the namespace's labels and the object's labels must match;
- api/admissionregistration/v1 defaults: failurePolicy Fail, selectors `{}`.
api/discovery/v1 EndpointConditions: a missing `ready` means ready.
"""

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
"""The label that ties an EndpointSlice to its Service."""


class Applies(Enum):
    """Whether a webhook is called for the training pod's create."""

    YES = "yes"
    NO = "no"
    UNSURE = "unsure"
    """It depends on something doctor cannot evaluate (CEL match conditions, unread labels)."""


class Webhook(Struct, frozen=True):
    """One webhook of a Validating- or MutatingWebhookConfiguration."""

    configuration: str
    """`Kind/name` of the configuration that declares it."""
    name: str
    fail_closed: bool
    """failurePolicy Fail (the default): when it cannot be called, the create is refused."""
    service: tuple[str, str] | None
    """(namespace, name) of the Service behind it; None when it is called at a URL."""
    applies: Applies
    unsure_why: str = ""
    """Plain words for what doctor could not evaluate, when `applies` is UNSURE."""

    @property
    def service_text(self) -> str:
        """`namespace/name` of its Service, or `a URL` for a webhook outside the cluster."""
        return "/".join(self.service) if self.service else "a URL"


def _any(items: object, wanted: str) -> bool:
    """exactOrWildcard: `wanted` or `*` is listed."""
    return any(item in ("*", wanted) for item in o.sequence(items))


def _rule_matches_pod_create(rule: Mapping[str, Any]) -> bool:
    """rules.go Matcher.Matches for CREATE of core/v1 pods (no subresource) in a namespace."""
    resources = [str(r).partition("/") for r in o.sequence(rule.get("resources"))]
    return (
        rule.get("scope") in (None, "*", "Namespaced")
        and _any(rule.get("operations"), "CREATE")
        and _any(rule.get("apiGroups"), "")
        and _any(rule.get("apiVersions"), "v1")
        and any(res in ("*", "pods") and sub in ("*", "") for res, _, sub in resources)
    )


def _selector_matches(selector: object, labels: Mapping[str, str] | None) -> bool | None:
    """An empty or absent selector matches everything; otherwise None when the labels are
    unknown."""
    chosen = o.mapping(selector)
    if not chosen.get("matchLabels") and not chosen.get("matchExpressions"):
        return True
    if labels is None:
        return None
    return o.selector_matches(chosen, labels)


_NOT_CALLED = (Applies.NO, "")


def _applies(
    hook: Mapping[str, Any],
    namespace_labels: Mapping[str, str] | None,
    pod_labels: Mapping[str, str] | None,
) -> tuple[Applies, str]:
    if not any(_rule_matches_pod_create(o.mapping(r)) for r in o.sequence(hook.get("rules"))):
        return _NOT_CALLED
    in_namespace = _selector_matches(hook.get("namespaceSelector"), namespace_labels)
    on_object = _selector_matches(hook.get("objectSelector"), pod_labels)
    if in_namespace is False or on_object is False:
        return _NOT_CALLED
    if in_namespace is None:
        return Applies.UNSURE, "it is limited to some places, and doctor couldn't read this one"
    if on_object is None:
        return Applies.UNSURE, "it is limited to some programs, and no training job shows which"
    if o.sequence(hook.get("matchConditions")):
        return Applies.UNSURE, "it is limited by conditions doctor can't evaluate"
    return Applies.YES, ""


def _applies_to_any(
    hook: Mapping[str, Any],
    namespace_labels: Mapping[str, str] | None,
    pod_labels: Sequence[Mapping[str, str]] | None,
) -> tuple[Applies, str]:
    """Whether creating a pod of any of the pod sets calls the hook: the surest answer."""
    sets: Sequence[Mapping[str, str] | None] = pod_labels or [None]
    answers = [_applies(hook, namespace_labels, labels) for labels in sets]
    for wanted in (Applies.YES, Applies.UNSURE):
        for answer in answers:
            if answer[0] is wanted:
                return answer
    return _NOT_CALLED


def pod_create_webhooks(
    configurations: Sequence[KubeObject],
    namespace_labels: Mapping[str, str] | None,
    pod_labels: Sequence[Mapping[str, str]] | None,
) -> list[Webhook]:
    """The webhooks of `configurations` that are (or may be) called when the training job's
    pods are created: `pod_labels` holds the labels of each of its pod sets (a Master's may
    differ from its Workers'), and a hook called for one of them is called; labels are None
    when they could not be learned."""
    found = []
    for configuration in configurations:
        for hook in map(o.mapping, o.sequence(configuration.get("webhooks"))):
            applies, why = _applies_to_any(hook, namespace_labels, pod_labels)
            if applies is Applies.NO:
                continue
            service = o.mapping(o.mapping(hook.get("clientConfig")).get("service"))
            found.append(
                Webhook(
                    o.ref(configuration),
                    str(hook.get("name")),
                    hook.get("failurePolicy") != "Ignore",
                    (str(service.get("namespace")), str(service.get("name"))) if service else None,
                    applies,
                    why,
                )
            )
    return found


def ready_endpoints(slices: Sequence[KubeObject]) -> int:
    """How many endpoints of a Service's EndpointSlices are ready to answer."""
    return sum(
        1
        for endpoint_slice in slices
        for endpoint in map(o.mapping, o.sequence(endpoint_slice.get("endpoints")))
        if o.mapping(endpoint.get("conditions")).get("ready") is not False
    )
