"""Where each kind lives in the API, and the kind stamped on every object that leaves.

A real API server omits `kind` and `apiVersion` on the items of a list (kubernetes#3030);
kubectl's printers add them back, and so does everything that leaves `cluster/`.
"""

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from msgspec.structs import force_setattr

from truegreen.cluster.kinds import Kind

DISCOVERY_PATH = "/apis"
"""The APIGroupList: every group the server serves and its versions, answered to any
authenticated user (the system:discovery ClusterRole). A client that does not ask for the
aggregated form (`Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`)
gets this one (staging/src/k8s.io/apiserver/pkg/endpoints/discovery/root.go)."""


def collection_path(kind: Kind, namespace: str | None) -> str:
    """`/api/v1/namespaces/train/pods`, `/apis/apps/v1/deployments` (every namespace)."""
    if kind is Kind.API_GROUPS:
        return DISCOVERY_PATH
    spec = kind.spec
    base = f"/apis/{spec.group}/{spec.version}" if spec.group else f"/api/{spec.version}"
    if spec.namespaced and namespace is not None:
        return f"{base}/namespaces/{quote(namespace, safe='')}/{spec.plural}"
    return f"{base}/{spec.plural}"


NAME_RULE = "a name is not empty, '.' or '..', and holds no '/' or '%'"
"""apimachinery's path-segment rule for every object's name (api/validation/path
`IsValidPathSegmentName`), which the API server applies to every name it stores."""


def is_path_segment_name(name: str) -> bool:
    """Whether an object could have `name` (`NAME_RULE`)."""
    return name not in ("", ".", "..") and "/" not in name and "%" not in name


def object_path(kind: Kind, name: str, namespace: str | None) -> str:
    """The path of one named object; discovery's list of groups is one object, unnamed."""
    if kind is Kind.API_GROUPS:
        return DISCOVERY_PATH
    return f"{collection_path(kind, namespace)}/{quote(name, safe='')}"


def view_stamper(view: type[Any], kind: Kind) -> Callable[[Any], None] | None:
    """A function that stamps decoded `view` items, or None when the view has neither field.

    Only fields a view declares are set (`kind`, `api_version`), and only when left empty.
    """
    fields = set(view.__struct_fields__)
    wants = [
        (f, v)
        for f, v in (("kind", kind.spec.name), ("api_version", kind.spec.api_version))
        if f in fields
    ]
    if not wants:
        return None

    def stamp_view(item: Any) -> None:
        for field, value in wants:
            if not getattr(item, field):
                force_setattr(item, field, value)  # frozen views too

    return stamp_view


def get_action(kind: Kind, name: str) -> str:
    """The plain words for reading one object, used in can't-read reasons."""
    if kind is Kind.API_GROUPS:
        return "read the API groups the server serves"
    return f"read {kind.spec.name.lower()} {name!r}"
