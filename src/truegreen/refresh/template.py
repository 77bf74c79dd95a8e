"""The pod-template change a restart writes, and how a report describes it."""

from collections.abc import Mapping, Sequence
from typing import Any

from truegreen import kubeobjects as o
from truegreen.refresh.plan import ContainerPlan, RefreshMode

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


def template_change(
    deployment: Mapping[str, Any], restart: Sequence[ContainerPlan], mode: RefreshMode, stamp: str
) -> dict[str, Any]:
    """Restart mode: the restartedAt annotation `kubectl rollout restart` sets. Pin mode: each
    restarted container's image set to `registry/repository:tag@newest`."""
    if mode is RefreshMode.RESTART:
        return {"metadata": {"annotations": {RESTARTED_AT: stamp}}}
    spec = o.pod_spec(o.pod_template(deployment))
    pinned = {
        p.container: f"{p.reference.registry}/{p.reference.repository}:{p.reference.tag}@{p.newest}"
        for p in restart
        if p.reference is not None
    }
    change: dict[str, Any] = {}
    for field_name, entries in (
        ("initContainers", o.init_containers(spec)),
        ("containers", o.containers(spec)),
    ):
        updates = [
            {"name": c.get("name"), "image": pinned[str(c.get("name"))]}
            for c in entries
            if str(c.get("name")) in pinned
        ]
        if updates:
            change[field_name] = updates
    return {"spec": change}


def describe_template(template: Mapping[str, Any]) -> str:
    """One line for the report: the restart annotation, or the images set."""
    annotations = o.mapping(o.mapping(template.get("metadata")).get("annotations"))
    if RESTARTED_AT in annotations:
        return f"template annotation {RESTARTED_AT}={annotations[RESTARTED_AT]}"
    spec = o.mapping(template.get("spec"))
    images = [
        f"{c['name']}={c['image']}"
        for key in ("initContainers", "containers")
        for c in spec.get(key, [])
    ]
    return "template images " + ", ".join(images)
