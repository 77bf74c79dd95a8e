"""NodeUnschedulable (pkg/scheduler/framework/plugins/nodeunschedulable): a cordoned machine
takes no pod that does not tolerate the `node.kubernetes.io/unschedulable` taint."""

from collections.abc import Mapping
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.fit import tolerates

NAME: Final = "NodeUnschedulable"
CORDONED: Final = "cordoned"
"""The reason a cordoned machine refuses the pod."""
_UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def exclusion(node: KubeObject, spec: Mapping[str, Any]) -> str | None:
    """CORDONED when `node` is cordoned and the pod spec does not tolerate it; else None."""
    tolerations = [o.mapping(t) for t in o.sequence(spec.get("tolerations"))]
    if o.mapping(node.get("spec")).get("unschedulable") and not tolerates(
        tolerations, _UNSCHEDULABLE_TAINT
    ):
        return CORDONED
    return None
