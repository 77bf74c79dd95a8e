"""Admission for the fake API server: what a POST create of a pod meets in kube-apiserver.

Only the gates doctor checks, each worded as the real one words it (the table, with the real
source of each behaviour, is in tests/support/README.md under "Admission"). It is a witness
written apart from truegreen's own admission code: nothing here imports truegreen.

Order, as kube-apiserver runs the plugins: authorization, NamespaceLifecycle, mutating
webhooks, PodSecurity, validating webhooks, ResourceQuota. A dry run (`?dryRun=All`) runs them
all and stores nothing; any other create is refused by authorization unless a test allows it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.fake_apiserver import FakeApiServer

JsonObject = dict[str, Any]


class AdmissionRefusedError(Exception):
    """A refusal, as the Status the server sends."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message


@dataclass
class AdmissionSettings:
    """What a test changes about admission on the fake server."""

    allow_creates: bool = False
    """Let a create that is not a dry run through (and store it)."""
    webhook_denial: tuple[str, str] | None = None
    """(webhook name, message): a webhook that is called and denies every pod create."""


def _forbidden(name: str, why: str) -> AdmissionRefusedError:
    # apimachinery errors.NewForbidden: `pods "<name>" is forbidden: <why>`.
    return AdmissionRefusedError(403, "Forbidden", f'pods "{name}" is forbidden: {why}')


# -- quantities, as resource.Quantity parses and prints them -------------------------------------

_SUFFIXES: dict[str, Decimal | int] = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "m": Decimal("0.001"),
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
}


def _quantity(text: object) -> Decimal:
    match = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(text))
    if match is None:
        raise ValueError(f"bad quantity {text!r}")
    return Decimal(match[1]) * Decimal(_SUFFIXES.get(match[2], 1))


def _canonical(value: Decimal) -> str:
    """Quantity.String() for the values tests use: whole binary units, cores or millicores."""
    if value != value.to_integral_value():
        return f"{math.ceil(value * 1000)}m"
    whole = int(value)
    for suffix in ("Ti", "Gi", "Mi", "Ki"):
        unit = int(_SUFFIXES[suffix])
        if whole >= unit and whole % unit == 0:
            return f"{whole // unit}{suffix}"
    return str(whole)


# -- the gates ------------------------------------------------------------------------------------


def _namespace_lifecycle(server: FakeApiServer, namespace: str, name: str) -> None:
    """plugin/pkg/admission/namespace/lifecycle/admission.go."""
    found = server.get_object("Namespace", namespace)
    if found is None:
        raise AdmissionRefusedError(404, "NotFound", f'namespaces "{namespace}" not found')
    if found.get("status", {}).get("phase") == "Terminating":
        raise _forbidden(
            name,
            f"unable to create new content in namespace {namespace} because it is being terminated",
        )


def _calls_pod_create(hook: JsonObject) -> bool:
    """A rule naming CREATE of pods (selectors are not evaluated by the fake)."""
    return any(
        {"CREATE", "*"} & set(rule.get("operations", []))
        and {"pods", "*", "*/*", "pods/*"} & set(rule.get("resources", []))
        for rule in hook.get("rules", [])
    )


def _webhooks(server: FakeApiServer, kind: str, name: str, dry_run: bool) -> None:
    """apiserver/pkg/admission/plugin/webhook: dispatch, errors/statuserror.go."""
    for configuration in server.list_objects(kind):
        for hook in configuration.get("webhooks", []):
            if not _calls_pod_create(hook):
                continue
            if dry_run and hook.get("sideEffects", "None") not in ("None", "NoneOnDryRun"):
                raise AdmissionRefusedError(
                    400,
                    "BadRequest",
                    f'admission webhook "{hook["name"]}" does not support dry run',
                )
            service = hook.get("clientConfig", {}).get("service")
            if service is None or _ready(server, service):
                continue
            if hook.get("failurePolicy", "Fail") == "Ignore":
                continue
            svc, ns = service["name"], service["namespace"]
            raise AdmissionRefusedError(
                500,
                "InternalError",
                f'Internal error occurred: failed calling webhook "{hook["name"]}": failed to '
                f'call webhook: Post "https://{svc}.{ns}.svc:443{service.get("path", "")}'
                f'?timeout=10s": no endpoints available for service "{svc}"',
            )


def _ready(server: FakeApiServer, service: JsonObject) -> bool:
    return any(
        endpoint.get("conditions", {}).get("ready", True) is not False
        for endpoint_slice in server.list_objects("EndpointSlice", service["namespace"])
        if endpoint_slice.get("metadata", {}).get("labels", {}).get("kubernetes.io/service-name")
        == service["name"]
        for endpoint in endpoint_slice.get("endpoints", [])
    )


def _containers(spec: JsonObject) -> list[JsonObject]:
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def _pod_security(server: FakeApiServer, namespace: str, name: str, spec: JsonObject) -> None:
    """pod-security-admission: the checks of the levels that training templates trip over
    (policy/check_privileged.go, check_allowPrivilegeEscalation.go, check_runAsNonRoot.go,
    check_seccompProfile_restricted.go, check_capabilities_restricted.go)."""
    labels = (server.get_object("Namespace", namespace) or {}).get("metadata", {}).get("labels", {})
    level = labels.get("pod-security.kubernetes.io/enforce", "privileged")
    if level == "privileged":
        return
    version = labels.get("pod-security.kubernetes.io/enforce-version", "latest")
    containers = _containers(spec)

    def names(test: Any) -> str:
        bad = [c["name"] for c in containers if test(c.get("securityContext", {}))]
        quoted = ", ".join(f'"{n}"' for n in bad)
        return f"container{'s' if len(bad) > 1 else ''} {quoted}" if bad else ""

    problems = []
    privileged = names(lambda sc: sc.get("privileged") is True)
    if privileged:
        problems.append(f"privileged ({privileged} must not set securityContext.privileged=true)")
    if level == "restricted":
        escalation = names(lambda sc: sc.get("allowPrivilegeEscalation") is not False)
        if escalation:
            problems.append(
                f"allowPrivilegeEscalation != false ({escalation} must set "
                "securityContext.allowPrivilegeEscalation=false)"
            )
        drop = names(lambda sc: "ALL" not in sc.get("capabilities", {}).get("drop", []))
        if drop:
            problems.append(
                f"unrestricted capabilities ({drop} must set "
                'securityContext.capabilities.drop=["ALL"])'
            )
        pod_context = spec.get("securityContext", {})
        if pod_context.get("runAsNonRoot") is not True:
            missing = names(lambda sc: sc.get("runAsNonRoot") is not True)
            if missing:
                problems.append(
                    f"runAsNonRoot != true (pod or {missing} must set "
                    "securityContext.runAsNonRoot=true)"
                )
        if pod_context.get("seccompProfile", {}).get("type") not in ("RuntimeDefault", "Localhost"):
            unset = names(
                lambda sc: (
                    sc.get("seccompProfile", {}).get("type") not in ("RuntimeDefault", "Localhost")
                )
            )
            if unset:
                problems.append(
                    f"seccompProfile (pod or {unset} must set securityContext.seccompProfile.type "
                    'to "RuntimeDefault" or "Localhost")'
                )
    if problems:
        raise _forbidden(name, f'violates PodSecurity "{level}:{version}": {", ".join(problems)}')


def _charge(spec: JsonObject) -> dict[str, Decimal]:
    """pkg/quota/v1/evaluator/core/pods.go podComputeUsageHelper, containers summed."""
    charged = {"pods": Decimal(1), "count/pods": Decimal(1)}
    for container in spec.get("containers", []):
        resources = container.get("resources", {})
        # API defaulting: a limit without a request is the request too.
        requests = {**resources.get("limits", {}), **resources.get("requests", {})}
        for resource, value in requests.items():
            key = f"requests.{resource}"
            charged[key] = charged.get(key, Decimal(0)) + _quantity(value)
            if resource in ("cpu", "memory"):
                charged[resource] = charged[key]
        for resource, value in resources.get("limits", {}).items():
            if resource in ("cpu", "memory"):
                key = f"limits.{resource}"
                charged[key] = charged.get(key, Decimal(0)) + _quantity(value)
    return charged


def _pretty(values: dict[str, str]) -> str:
    """controller.go prettyPrint: sorted `name=quantity`, comma-joined."""
    return ",".join(f"{k}={values[k]}" for k in sorted(values))


def _resource_quota(server: FakeApiServer, namespace: str, name: str, spec: JsonObject) -> None:
    """plugin/pkg/admission/resourcequota/controller.go checkRequest (unscoped quotas)."""
    charged = _charge(spec)
    for quota in server.list_objects("ResourceQuota", namespace):
        if quota.get("spec", {}).get("scopes") or quota.get("spec", {}).get("scopeSelector"):
            continue  # the fake does not evaluate scopes
        status = quota.get("status", {})
        hard, used = status.get("hard", {}), status.get("used", {})
        covered = [r for r in hard if r in charged]
        if not covered:
            continue
        missing = [r for r in covered if r not in used]
        if missing:
            raise _forbidden(
                name,
                f"status unknown for quota: {quota['metadata']['name']}, resources: "
                + ",".join(sorted(missing)),
            )
        exceeded = [r for r in covered if _quantity(used[r]) + charged[r] > _quantity(hard[r])]
        if exceeded:
            raise _forbidden(
                name,
                f"exceeded quota: {quota['metadata']['name']}, "
                f"requested: {_pretty({r: _canonical(charged[r]) for r in exceeded})}, "
                f"used: {_pretty({r: str(used[r]) for r in exceeded})}, "
                f"limited: {_pretty({r: str(hard[r]) for r in exceeded})}",
            )


def create_pod(
    server: FakeApiServer, namespace: str, query: Mapping[str, str], body: bytes
) -> JsonObject:
    """A POST of a pod: every admission gate in order; stored only when not a dry run."""
    pod: JsonObject = json.loads(body or b"{}")
    name = pod.get("metadata", {}).get("name", "")
    dry_run = query.get("dryRun") == "All"
    settings: AdmissionSettings = server.admission
    if not dry_run and not settings.allow_creates:
        # endpoints/handlers/responsewriters/errors.go: authorization names no object.
        raise AdmissionRefusedError(
            403,
            "Forbidden",
            'pods is forbidden: User "system:serviceaccount:train:reader" cannot create '
            f'resource "pods" in API group "" in the namespace "{namespace}"',
        )
    spec = pod.get("spec", {})
    _namespace_lifecycle(server, namespace, name)
    _webhooks(server, "MutatingWebhookConfiguration", name, dry_run)
    _pod_security(server, namespace, name, spec)
    if settings.webhook_denial is not None:
        hook, message = settings.webhook_denial
        raise _forbidden(name, f'admission webhook "{hook}" denied the request: {message}')
    _webhooks(server, "ValidatingWebhookConfiguration", name, dry_run)
    _resource_quota(server, namespace, name, spec)
    pod.setdefault("metadata", {})["namespace"] = namespace
    if not dry_run:
        server.add(pod)
        stored = server.get_object("Pod", name, namespace)
        assert stored is not None
        return stored
    return pod
