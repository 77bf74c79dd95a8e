"""Admission for the fake API server: what a POST create of a pod meets in kube-apiserver.

Only the gates doctor checks, each worded as the real one words it (the table, with the real
source of each behaviour, is in tests/support/README.md under "Admission"). It is a witness
written apart from truegreen's own admission code: nothing here imports truegreen.

Order, as kube-apiserver runs the plugins: authorization, defaulting on decoding
(SetDefaults_Pod), then the mutating phase (NamespaceLifecycle, LimitRanger's defaults,
Priority, ExtendedResourceToleration when a test turns it on, mutating webhooks), then the
pod's validation (a request above its limit), then the validating phase (LimitRanger's
limits, PodSecurity, validating webhooks, ResourceQuota). A dry run (`?dryRun=All`) runs
them all, stores nothing and answers the pod as it would be stored; any other create is
refused by authorization unless a test allows it.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
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
    extended_resource_toleration: bool = False
    """Run ExtendedResourceToleration (EKS, GKE and AKS enable it; kube-apiserver does not by
    default)."""
    kueue_pods: KueuePods | None = None
    """Kueue's `pod` integration, on for every namespace (its webhook and its admission of a
    plain pod's Workload); None: not installed."""


@dataclass
class KueuePods:
    """Kueue's pod integration, as far as a plain pod's create and start meet it.

    Its mutating webhook (kueue pkg/controller/jobs/pod/pod_webhook.go `Default`) suspends a
    pod owned by no Kueue-managed job when the pod names a queue (`kueue.x-k8s.io/queue-name`)
    or Kueue manages pods without one (`manageJobsWithoutQueueName`): the label
    `kueue.x-k8s.io/managed: "true"`, the finalizer `kueue.x-k8s.io/managed` and the scheduling
    gate `kueue.x-k8s.io/admission`. The gate is removed when the pod's Workload is admitted
    (pkg/controller/jobs/pod/pod_controller.go `Run` ungates). The fake admits at once a pod
    whose queue names a LocalQueue of its namespace, when `admits`; a pod with no queue, or a
    queue that does not exist, or `admits` False, stays gated (what a queue without room, or
    a Workload with no LocalQueue, looks like from the pod)."""

    manage_without_queue_name: bool = False
    admits: bool = True


KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_GATE = "kueue.x-k8s.io/admission"
KUEUE_MANAGED = "kueue.x-k8s.io/managed"


def _kueue_pod_webhook(pod: JsonObject, kueue: KueuePods) -> None:
    labels = pod.setdefault("metadata", {}).setdefault("labels", {})
    if any(ref.get("controller") for ref in pod["metadata"].get("ownerReferences") or []):
        return  # FindAncestorJobManagedByKueue: a job's pod is the job's business (simplified)
    if not (labels.get(KUEUE_QUEUE_LABEL) or kueue.manage_without_queue_name):
        return
    labels[KUEUE_MANAGED] = "true"
    pod["metadata"].setdefault("finalizers", []).append(KUEUE_MANAGED)
    pod["spec"].setdefault("schedulingGates", []).append({"name": KUEUE_GATE})


def _kueue_admits(server: FakeApiServer, namespace: str, pod: JsonObject) -> bool:
    kueue = server.admission.kueue_pods
    queue = (pod["metadata"].get("labels") or {}).get(KUEUE_QUEUE_LABEL)
    return bool(
        kueue is not None
        and kueue.admits
        and queue
        and any(
            q["metadata"]["name"] == queue for q in server.list_objects("LocalQueue", namespace)
        )
    )


def _scheduling_gated(pod: JsonObject) -> None:
    """pkg/registry/core/pod/strategy.go PrepareForCreate (applySchedulingGatedCondition): a pod
    created with scheduling gates is stored Pending with `PodScheduled` False,
    `SchedulingGated`."""
    if pod["spec"].get("schedulingGates"):
        pod["status"] = {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates",
                }
            ],
        }


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


def _quantity_string(text: object) -> str:
    """resource.Quantity's String() for the amounts tests write (binary suffixes, cores,
    millicores)."""
    return _canonical(_quantity(text))


# -- the gates ------------------------------------------------------------------------------------


def _defaulted(spec: JsonObject) -> None:
    """pkg/apis/core/v1/defaults.go SetDefaults_Pod: a container's limits are its requests
    where it states none (containers and init containers), before any admission plugin."""
    for container in _containers(spec):
        resources = container.setdefault("resources", {})
        if "limits" in resources:
            requests = resources.setdefault("requests", {})
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)


def _range_items(limit_range: JsonObject) -> list[JsonObject]:
    """pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem, as the server stores a range:
    a Container item's default from its max, its defaultRequest from its default, then min."""
    items = []
    for raw in limit_range.get("spec", {}).get("limits", []):
        item = copy.deepcopy(raw)
        if item.get("type") == "Container":
            default = item.setdefault("default", {})
            request = item.setdefault("defaultRequest", {})
            for name, value in item.get("max", {}).items():
                default.setdefault(name, value)
            for name, value in default.items():
                request.setdefault(name, value)
            for name, value in item.get("min", {}).items():
                request.setdefault(name, value)
        items.append(item)
    return items


def _limit_range_defaults(server: FakeApiServer, namespace: str, spec: JsonObject) -> None:
    """plugin/pkg/admission/limitranger/admission.go PodMutateLimitFunc, range by range: what a
    container or init container still lacks, from the range's Container items."""
    for limit_range in server.list_objects("LimitRange", namespace):
        default: JsonObject = {}
        request: JsonObject = {}
        for item in _range_items(limit_range):
            if item.get("type") == "Container":
                default.update(item["default"])
                request.update(item["defaultRequest"])
        for container in _containers(spec):
            resources = container.setdefault("resources", {})
            for part, values in (("limits", default), ("requests", request)):
                stated = resources.setdefault(part, {})
                for name, value in values.items():
                    stated.setdefault(name, value)


def _validated(name: str, spec: JsonObject) -> None:
    """The create's validation, after every mutating plugin and before the validating ones
    (apiserver pkg/registry/generic/registry/store.go `create`: rest.BeforeCreate runs the
    strategy's Validate before createValidation). Of pkg/apis/core/validation
    `ValidateResourceRequirements` only a request above its limit, containers then init
    containers (`ValidatePodSpec`), a container's resources sorted (Go walks the map in no
    order): 422 `Pod "<name>" is invalid: …` (apimachinery errors.NewInvalid; several errors
    in brackets, repeats once, field.ErrorList.ToAggregate)."""
    errors = []
    for field in ("containers", "initContainers"):
        for index, container in enumerate(spec.get(field, [])):
            resources = container.get("resources", {})
            limits = resources.get("limits", {})
            for resource, request in sorted(resources.get("requests", {}).items()):
                if resource in limits and _quantity(request) > _quantity(limits[resource]):
                    errors.append(
                        f"spec.{field}[{index}].resources.requests: Invalid value: "
                        f'"{_quantity_string(request)}": must be less than or equal to '
                        f"{resource} limit of {_quantity_string(limits[resource])}"
                    )
    unique = list(dict.fromkeys(errors))
    if unique:
        why = unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"
        raise AdmissionRefusedError(422, "Invalid", f'Pod "{name}" is invalid: {why}')


def _constraint_errors(
    scope: str, item: JsonObject, requests: JsonObject, limits: JsonObject
) -> list[str]:
    """minConstraint, maxConstraint and limitRequestRatioConstraint, worded as they are."""
    errors = []
    for name, value in item.get("min", {}).items():
        head = f"minimum {name} usage per {scope} is {_quantity_string(value)}"
        if name not in requests:
            errors.append(f"{head}.  No request is specified")
        elif _quantity(requests[name]) < _quantity(value):
            errors.append(f"{head}, but request is {_quantity_string(requests[name])}")
        elif name in limits and _quantity(limits[name]) < _quantity(value):
            errors.append(f"{head}, but limit is {_quantity_string(limits[name])}")
    for name, value in item.get("max", {}).items():
        head = f"maximum {name} usage per {scope} is {_quantity_string(value)}"
        if name not in limits:
            errors.append(f"{head}.  No limit is specified")
        elif _quantity(limits[name]) > _quantity(value):
            errors.append(f"{head}, but limit is {_quantity_string(limits[name])}")
        elif name in requests and _quantity(requests[name]) > _quantity(value):
            errors.append(f"{head}, but request is {_quantity_string(requests[name])}")
    for name, value in item.get("maxLimitRequestRatio", {}).items():
        head = f"{name} max limit to request ratio per {scope} is {_quantity_string(value)}"
        request = _quantity(requests.get(name, 0))
        limit = _quantity(limits.get(name, 0))
        if not request:
            errors.append(f"{head}, but no request is specified or request is 0")
        elif not limit:
            errors.append(f"{head}, but no limit is specified or limit is 0")
        elif limit / request > _quantity(value):
            errors.append(f"{head}, but provided ratio is {float(limit / request):f}")
    return errors


def _pod_total(spec: JsonObject, part: str) -> JsonObject:
    """podRequests/podLimits for pods without sidecars: containers added, each init container a
    floor."""
    total: dict[str, Decimal] = {}
    for container in spec.get("containers", []):
        for name, value in container.get("resources", {}).get(part, {}).items():
            total[name] = total.get(name, Decimal(0)) + _quantity(value)
    for container in spec.get("initContainers", []):
        for name, value in container.get("resources", {}).get(part, {}).items():
            total[name] = max(total.get(name, Decimal(0)), _quantity(value))
    return {name: _canonical(value) for name, value in total.items()}


def _limit_ranges(server: FakeApiServer, namespace: str, name: str, spec: JsonObject) -> None:
    """PodValidateLimitFunc: the first range with a violation refuses the pod with all of its
    violations (utilerrors.NewAggregate: one as it is, several in brackets, repeats once)."""
    for limit_range in server.list_objects("LimitRange", namespace):
        errors: list[str] = []
        for item in _range_items(limit_range):
            if item.get("type") == "Container":
                # containers first, then init containers, as PodValidateLimitFunc walks them
                for container in [*spec.get("containers", []), *spec.get("initContainers", [])]:
                    resources = container.get("resources", {})
                    errors += _constraint_errors(
                        "Container",
                        item,
                        resources.get("requests", {}),
                        resources.get("limits", {}),
                    )
            elif item.get("type") == "Pod":
                errors += _constraint_errors(
                    "Pod", item, _pod_total(spec, "requests"), _pod_total(spec, "limits")
                )
        unique = list(dict.fromkeys(errors))
        if unique:
            raise _forbidden(name, unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]")


def _priority(server: FakeApiServer, name: str, spec: JsonObject) -> None:
    """plugin/pkg/admission/priority/admission.go admitPod: the class's value (the lowest
    globalDefault class when none is named, else 0) and its preemptionPolicy, refused when the
    class does not exist or the pod states a preemptionPolicy other than the class's."""
    classes = server.list_objects("PriorityClass")
    named = spec.get("priorityClassName")
    if named:
        found = next((c for c in classes if c["metadata"]["name"] == named), None)
        if found is None:
            raise _forbidden(name, f"no PriorityClass with name {named} was found")
    else:
        defaults = [c for c in classes if c.get("globalDefault")]
        found = min(defaults, key=lambda c: c["value"]) if defaults else None
        if found is not None:
            spec["priorityClassName"] = found["metadata"]["name"]
    spec["priority"] = found["value"] if found else 0
    if found is None:
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        return
    # A class always has a policy (scheduling/v1 defaults.go SetDefaults_PriorityClass): a pod
    # that states another is refused, never stored with its own.
    policy = found.get("preemptionPolicy", "PreemptLowerPriority")
    stated = spec.get("preemptionPolicy")
    if stated is not None and stated != policy:
        raise _forbidden(
            name,
            f"the string value of PreemptionPolicy ({stated}) must not be provided in pod "
            f"spec; priority admission controller computed {policy} from the given "
            "PriorityClass name",
        )
    spec["preemptionPolicy"] = policy


def _extended_resource_toleration(spec: JsonObject) -> None:
    """plugin/pkg/admission/extendedresourcetoleration/admission.go: for each extended resource
    a container requests (sorted), the toleration {key, Exists, NoSchedule} unless it is there."""
    wanted = sorted(
        {
            name
            for container in _containers(spec)
            for name in container.get("resources", {}).get("requests", {})
            if "/" in name and "kubernetes.io/" not in name
        }
    )
    tolerations = spec.setdefault("tolerations", [])
    for name in wanted:
        added = {"key": name, "operator": "Exists", "effect": "NoSchedule"}
        if added not in tolerations:
            tolerations.append(added)


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
    spec = pod.setdefault("spec", {})
    _defaulted(spec)
    _namespace_lifecycle(server, namespace, name)
    _limit_range_defaults(server, namespace, spec)
    _priority(server, name, spec)
    if settings.extended_resource_toleration:
        _extended_resource_toleration(spec)
    _webhooks(server, "MutatingWebhookConfiguration", name, dry_run)
    if settings.kueue_pods is not None:
        _kueue_pod_webhook(pod, settings.kueue_pods)
    _validated(name, spec)
    _limit_ranges(server, namespace, name, spec)
    _pod_security(server, namespace, name, spec)
    if settings.webhook_denial is not None:
        hook, message = settings.webhook_denial
        raise _forbidden(name, f'admission webhook "{hook}" denied the request: {message}')
    _webhooks(server, "ValidatingWebhookConfiguration", name, dry_run)
    _resource_quota(server, namespace, name, spec)
    pod.setdefault("metadata", {})["namespace"] = namespace
    # The server's clock at the create, whatever the client sent (apiserver
    # pkg/registry/rest/create.go BeforeCreate -> FillObjectMetaSystemFields).
    pod["metadata"]["creationTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _scheduling_gated(pod)
    if not dry_run:
        server.add(pod)
        stored = server.get_object("Pod", name, namespace)
        assert stored is not None
        if _kueue_admits(server, namespace, stored):
            # Kueue's pod controller ungates an admitted pod's Workload at once (in the fake).
            stored["spec"]["schedulingGates"] = [
                g for g in stored["spec"]["schedulingGates"] if g["name"] != KUEUE_GATE
            ]
            if not stored["spec"]["schedulingGates"]:
                del stored["spec"]["schedulingGates"]
                stored.pop("status", None)
            server.update_object(stored)
        return stored
    return pod
