"""TaintToleration (pkg/scheduler/framework/plugins/tainttoleration): a machine's NoSchedule
and NoExecute taints refuse every pod that does not tolerate them (PreferNoSchedule only
scores)."""

from collections.abc import Mapping
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.fit import tolerates

NAME: Final = "TaintToleration"
UNTOLERATED: Final = "taint {key}={value}:{effect} not tolerated"
"""The reason, naming the first taint the pod does not tolerate."""


def exclusion(node: KubeObject, spec: Mapping[str, Any]) -> str | None:
    """UNTOLERATED for the machine's first refusing taint the pod spec does not tolerate;
    else None."""
    tolerations = [o.mapping(t) for t in o.sequence(spec.get("tolerations"))]
    for taint in (o.mapping(t) for t in o.sequence(o.mapping(node.get("spec")).get("taints"))):
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            key, value, effect = taint.get("key"), taint.get("value", ""), taint.get("effect")
            return UNTOLERATED.format(key=key, value=value, effect=effect)
    return None
