"""NodeAffinity (pkg/scheduler/framework/plugins/nodeaffinity): the pod's `nodeSelector`, then
its required node affinity terms, against the machine's labels (and name, for `matchFields`)."""

from collections.abc import Mapping
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.fit import matches_required_affinity

NAME: Final = "NodeAffinity"
SELECTOR_MISMATCH: Final = "nodeSelector does not match"
AFFINITY_MISMATCH: Final = "required node affinity does not match"


def exclusion(node: KubeObject, spec: Mapping[str, Any]) -> str | None:
    """Why the pod spec's node selector or required node affinity refuses `node`; else None."""
    labels = o.labels_of(node)
    selector = o.mapping(spec.get("nodeSelector"))
    if any(labels.get(k) != v for k, v in selector.items()):
        return SELECTOR_MISMATCH
    if not matches_required_affinity(node, spec):
        return AFFINITY_MISMATCH
    return None
