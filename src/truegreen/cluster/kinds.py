"""The Kubernetes kinds truegreen reads, with the coordinates of their API endpoints."""

from collections.abc import Mapping
from enum import Enum
from typing import Any

from msgspec import Struct


class KindSpec(Struct, frozen=True):
    """Where a kind lives in the API: group, version, plural, and whether it is namespaced."""

    name: str
    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        """The apiVersion string of objects of this kind (`v1`, `apps/v1`)."""
        return f"{self.group}/{self.version}" if self.group else self.version


class Kind(Enum):
    """Every kind truegreen reads or writes."""

    POD = KindSpec("Pod", "", "v1", "pods", True)
    NODE = KindSpec("Node", "", "v1", "nodes", False)
    SECRET = KindSpec("Secret", "", "v1", "secrets", True)
    SERVICE_ACCOUNT = KindSpec("ServiceAccount", "", "v1", "serviceaccounts", True)
    PERSISTENT_VOLUME_CLAIM = KindSpec(
        "PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True
    )
    LIMIT_RANGE = KindSpec("LimitRange", "", "v1", "limitranges", True)
    NAMESPACE = KindSpec("Namespace", "", "v1", "namespaces", False)
    RESOURCE_QUOTA = KindSpec("ResourceQuota", "", "v1", "resourcequotas", True)
    DEPLOYMENT = KindSpec("Deployment", "apps", "v1", "deployments", True)
    STATEFUL_SET = KindSpec("StatefulSet", "apps", "v1", "statefulsets", True)
    DAEMON_SET = KindSpec("DaemonSet", "apps", "v1", "daemonsets", True)
    REPLICA_SET = KindSpec("ReplicaSet", "apps", "v1", "replicasets", True)
    JOB = KindSpec("Job", "batch", "v1", "jobs", True)
    STORAGE_CLASS = KindSpec("StorageClass", "storage.k8s.io", "v1", "storageclasses", False)
    EVENT = KindSpec("Event", "", "v1", "events", True)
    ENDPOINT_SLICE = KindSpec("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", True)
    VALIDATING_WEBHOOK_CONFIGURATION = KindSpec(
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        False,
    )
    MUTATING_WEBHOOK_CONFIGURATION = KindSpec(
        "MutatingWebhookConfiguration",
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        False,
    )

    @property
    def spec(self) -> KindSpec:
        """The API coordinates of this kind."""
        value: KindSpec = self.value
        return value

    @property
    def plural(self) -> str:
        """The resource name used in URLs and RBAC rules (`pods`)."""
        return self.spec.plural

    @property
    def namespaced(self) -> bool:
        """Whether objects of this kind live in a namespace."""
        return self.spec.namespaced

    @classmethod
    def from_plural(cls, plural: str) -> "Kind":
        """The kind whose resource name is `plural`; ValueError when none is."""
        for kind in cls:
            if kind.plural == plural:
                return kind
        raise ValueError(f"unknown resource {plural!r}")


def stamp(obj: dict[str, Any], kind: Kind) -> dict[str, Any]:
    """`obj` itself, with its kind and apiVersion set where the server left them out.

    A real API server sends list items without them (kubernetes/kubernetes#3030); kubectl's
    printers add them back the same way, from the request that fetched the list.
    """
    if not obj.get("kind"):
        obj["kind"] = kind.spec.name
    if not obj.get("apiVersion"):
        obj["apiVersion"] = kind.spec.api_version
    return obj


def stamped(kind: Kind, obj: Mapping[str, Any]) -> dict[str, Any]:
    """A stamped copy of `obj` (see `stamp`), for objects this package does not own."""
    return stamp(dict(obj), kind)
