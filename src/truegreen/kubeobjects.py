"""Reading the parts of Kubernetes objects the checks need, tolerating missing fields."""

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from truegreen.cluster import KubeObject

TERMINATED_PHASES = ("Succeeded", "Failed")


def mapping(value: object) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def sequence(value: object) -> Sequence[Any]:
    """`value` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def integer(value: object, default: int = 0) -> int:
    """`value` if it is an integer (not a bool), else `default`."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def namespace_of(obj: KubeObject) -> str:
    """metadata.namespace ('' for a cluster-scoped object)."""
    return str(mapping(obj.get("metadata")).get("namespace", ""))


def name_of(obj: KubeObject) -> str:
    """metadata.name."""
    return str(mapping(obj.get("metadata")).get("name", ""))


def uid_of(obj: KubeObject) -> str:
    """metadata.uid ('' where the object has none, as a planned one)."""
    return str(mapping(obj.get("metadata")).get("uid") or "")


def labels_of(obj: KubeObject) -> Mapping[str, str]:
    """metadata.labels."""
    return mapping(mapping(obj.get("metadata")).get("labels"))


def annotations_of(obj: KubeObject) -> Mapping[str, str]:
    """metadata.annotations."""
    return mapping(mapping(obj.get("metadata")).get("annotations"))


class KindMissingError(ValueError):
    """An object reached a finding without its kind: `cluster/` failed to stamp it. A bug in
    truegreen, never a cluster's answer, so it is raised rather than guessed around."""


def ref(obj: KubeObject) -> str:
    """`Kind/name`, as findings list the objects they looked at."""
    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        raise KindMissingError(f"an object without kind reached a finding: {name_of(obj)!r}")
    return f"{kind}/{name_of(obj)}"


def parse_time(value: object) -> datetime | None:
    """An API timestamp (`2026-01-01T00:00:00Z`) as an aware datetime; None when absent/invalid."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None


def created_at(obj: KubeObject) -> datetime | None:
    """metadata.creationTimestamp."""
    return parse_time(mapping(obj.get("metadata")).get("creationTimestamp"))


def pod_template(workload: KubeObject) -> Mapping[str, Any]:
    """spec.template of a Deployment, StatefulSet, DaemonSet or Job."""
    return mapping(mapping(workload.get("spec")).get("template"))


def pod_spec(template_or_pod: KubeObject) -> Mapping[str, Any]:
    """spec of a pod or pod template."""
    return mapping(template_or_pod.get("spec"))


def containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The main containers of a pod spec."""
    return [mapping(c) for c in sequence(spec.get("containers"))]


def init_containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The init containers of a pod spec, sidecars included, in order."""
    return [mapping(c) for c in sequence(spec.get("initContainers"))]


def is_sidecar(container: Mapping[str, Any]) -> bool:
    """A restartable init container (restartPolicy Always): it runs beside the main containers."""
    return container.get("restartPolicy") == "Always"


def all_images(spec: Mapping[str, Any]) -> Iterator[str]:
    """Every image a pod spec runs, init containers first."""
    for container in [*init_containers(spec), *containers(spec)]:
        image = container.get("image")
        if isinstance(image, str) and image:
            yield image


def pull_secret_names(spec: Mapping[str, Any]) -> list[str]:
    """spec.imagePullSecrets names, in order."""
    names = [mapping(s).get("name") for s in sequence(spec.get("imagePullSecrets"))]
    return [str(n) for n in names if n]


def gets_account_pull_secrets(spec: Mapping[str, Any]) -> bool:
    """A pod of `spec` is given its service account's imagePullSecrets: the ServiceAccount
    admission plugin copies them only into a pod whose list is empty
    (plugin/pkg/admission/serviceaccount/admission.go Admit: `len(pod.Spec.ImagePullSecrets)
    == 0`), so an entry without a name, which the API server takes (kubernetes#99454) and the
    kubelet skips, keeps them out all the same."""
    return not sequence(spec.get("imagePullSecrets"))


def service_account_name(spec: Mapping[str, Any]) -> str:
    """The pod's service account (`default` when unset)."""
    return str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")


def runtime_class_name(spec: Mapping[str, Any]) -> str:
    """The RuntimeClass the pod names (`runtimeClassName`), "" for the cluster's default
    runtime."""
    name = spec.get("runtimeClassName")
    return name if isinstance(name, str) else ""


def claim_names(spec: Mapping[str, Any]) -> list[str]:
    """Volume claims a pod spec mounts."""
    names = [
        mapping(mapping(v).get("persistentVolumeClaim")).get("claimName")
        for v in sequence(spec.get("volumes"))
    ]
    return [str(n) for n in names if n]


def ephemeral_claims(spec: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(volume name, claim spec) of each generic ephemeral volume of a pod spec
    (volumes[].ephemeral.volumeClaimTemplate)."""
    found = []
    for volume in (mapping(v) for v in sequence(spec.get("volumes"))):
        template = mapping(volume.get("ephemeral")).get("volumeClaimTemplate")
        if isinstance(template, Mapping):
            found.append((str(volume.get("name") or ""), mapping(template.get("spec"))))
    return found


def ephemeral_claim_names(pod: KubeObject) -> list[str]:
    """The claims the ephemeral volume controller makes for a pod's generic ephemeral volumes:
    `<pod>-<volume>` (component-helpers storage/ephemeral VolumeClaimName)."""
    return [f"{name_of(pod)}-{volume}" for volume, _ in ephemeral_claims(pod_spec(pod))]


def waiting_ephemeral_claims(pods: Sequence[KubeObject]) -> dict[str, KubeObject]:
    """The claims the ephemeral volume controller makes for the pods that wait to start, with
    their pod: a pod that runs has its volumes, one that ended or is being deleted waits for
    nothing."""
    return {
        claim: pod
        for pod in remaining(pods)
        if phase(pod) == "Pending"
        for claim in ephemeral_claim_names(pod)
    }


def controller_of(obj: KubeObject) -> Mapping[str, Any] | None:
    """The owner reference marked controller (apimachinery metav1.GetControllerOf), if any."""
    refs = (mapping(r) for r in sequence(mapping(obj.get("metadata")).get("ownerReferences")))
    return next((r for r in refs if r.get("controller") is True), None)


def controlled_by(obj: KubeObject, owner: KubeObject) -> bool:
    """Whether `owner` is `obj`'s controller: the owner reference marked controller carries
    the owner's uid (apimachinery metav1.IsControlledBy)."""
    controller = controller_of(obj)
    return controller is not None and bool(uid_of(owner)) and controller.get("uid") == uid_of(owner)


def statefulset_claims(statefulset: KubeObject) -> dict[str, str]:
    """Each claim a StatefulSet's copies mount, with the name of the copy (pod) its controller
    creates it with: `<template>-<set>-<ordinal>` for each of spec.replicas ordinals from
    spec.ordinals.start (pkg/controller/statefulset/stateful_set_utils.go getStartOrdinal,
    getEndOrdinal, getPodName, getPersistentVolumeClaimName). The API defaults replicas to 1."""
    spec = mapping(statefulset.get("spec"))
    replicas = integer(spec.get("replicas"), 1)
    start = integer(mapping(spec.get("ordinals")).get("start"))
    name = name_of(statefulset)
    templates = [name_of(mapping(t)) for t in sequence(spec.get("volumeClaimTemplates"))]
    return {
        f"{template}-{name}-{ordinal}": f"{name}-{ordinal}"
        for ordinal in range(max(start, 0), max(start, 0) + max(replicas, 0))
        for template in templates
    }


def owner_kinds(obj: KubeObject) -> list[tuple[str, str]]:
    """(kind, name) of each owner reference."""
    refs = sequence(mapping(obj.get("metadata")).get("ownerReferences"))
    return [(str(mapping(r).get("kind")), str(mapping(r).get("name"))) for r in refs]


def job_owner(pod: KubeObject) -> str | None:
    """The name of the Job that owns this pod, if one does."""
    return next((name for kind, name in owner_kinds(pod) if kind == "Job"), None)


def phase(pod: KubeObject) -> str:
    """status.phase (`Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`)."""
    return str(mapping(pod.get("status")).get("phase", "Unknown"))


def is_terminated(pod: KubeObject) -> bool:
    """Succeeded or Failed: the pod holds no capacity and needs no attention."""
    return phase(pod) in TERMINATED_PHASES


def is_terminating(pod: KubeObject) -> bool:
    """Deleted and on its way out (metadata.deletionTimestamp set), though it may still run,
    hold its machine's room and report its old image for its grace period (kubectl#1628)."""
    return bool(mapping(pod.get("metadata")).get("deletionTimestamp"))


def remaining(pods: Sequence[KubeObject]) -> list[KubeObject]:
    """The pods that will stay: neither finished nor terminating."""
    return [p for p in pods if not is_terminated(p) and not is_terminating(p)]


def node_name(pod: KubeObject) -> str:
    """spec.nodeName ('' while unscheduled)."""
    return str(pod_spec(pod).get("nodeName") or "")


def condition(obj: KubeObject, kind: str) -> Mapping[str, Any] | None:
    """The status condition of `kind`, if present."""
    for cond in sequence(mapping(obj.get("status")).get("conditions")):
        if mapping(cond).get("type") == kind:
            return mapping(cond)
    return None


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against labels; an empty one matches none.

    Workload selectors are never empty in a valid object, so an empty one selecting nothing is
    the safe reading of a damaged object.
    """
    match_labels = mapping(selector.get("matchLabels"))
    expressions = [mapping(e) for e in sequence(selector.get("matchExpressions"))]
    if not match_labels and not expressions:
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    return all(_expression_matches(e, labels) for e in expressions)


def _expression_matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = str(expression.get("key")), expression.get("operator")
    values = {str(v) for v in sequence(expression.get("values"))}
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False


def container_statuses(pod: KubeObject) -> list[Mapping[str, Any]]:
    """Statuses of init and main containers."""
    status = mapping(pod.get("status"))
    return [
        mapping(s)
        for s in [
            *sequence(status.get("initContainerStatuses")),
            *sequence(status.get("containerStatuses")),
        ]
    ]
