"""Whose update a Deployment is rolling out: a restart, or someone else's change to its pods.

A Deployment with no progress deadline (deployment_util.go `HasProgressDeadline`) never says
that its update stopped, so its counts cannot tell refresh's own restart that stopped (a new
copy that never becomes Ready) from someone else's rollout that takes its time; kubectl calls
both in progress (polymorphichelpers/rollout_status.go `DeploymentStatusViewer.Status`). What
the update changes tells them apart: the Deployment controller keeps each template it rolled out
as a ReplicaSet (deployment/sync.go `getNewReplicaSet`: the whole template, `pod-template-hash`
added to its labels), so the copies still running an older template are those of the
ReplicaSets whose template is not the Deployment's (deployment_util.go `FindOldReplicaSets`,
`EqualIgnoreHash`). An update that changes those templates only as a restart does
(refresh's `template_change`: the `kubectl.kubernetes.io/restartedAt` annotation that `kubectl
rollout restart` sets too, or a container's image pinned to a digest of its own repository and
tag) is a restart, which refresh may take over; any other change is someone else's.
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.images import ImageReferenceError, parse_image
from truegreen.refresh.template import RESTARTED_AT

TEMPLATE_HASH: Final = "pod-template-hash"
"""The label the Deployment controller adds to each ReplicaSet's template (apps/v1
DefaultDeploymentUniqueLabelKey), which two templates are compared without."""
_CONTAINER_LISTS: Final = ("initContainers", "containers")


def only_restarted(
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]],
) -> bool:
    """Whether the copies in `pods` (those that stay) that do not run the Deployment's template
    run one that differs from it only as a restart changes a template. False where that cannot
    be told: no copy on an older template (nothing to compare), or a copy whose ReplicaSet is
    not among `replica_sets` (the Deployment's own)."""
    current = _plain(o.pod_template(deployment))
    older: list[dict[str, Any]] = []
    for pod in o.remaining(pods):
        owner = next((r for r in replica_sets if o.controlled_by(pod, r)), None)
        if owner is None:
            return False
        template = _plain(o.pod_template(owner))
        if template != current:
            older.append(template)
    return bool(older) and all(_restart_of(template, current) for template in older)


def _plain(template: Mapping[str, Any], *, restart: bool = False) -> dict[str, Any]:
    """A copy of `template` without the ReplicaSet's hash label (`EqualIgnoreHash`) and, with
    `restart`, without the restartedAt annotation; a map left empty is left out, as the API
    server leaves it out."""
    plain: dict[str, Any] = json.loads(json.dumps(template))
    metadata = plain.get("metadata")
    if isinstance(metadata, dict):
        _drop(metadata, "labels", TEMPLATE_HASH)
        if restart:
            _drop(metadata, "annotations", RESTARTED_AT)
        if not metadata:
            del plain["metadata"]
    return plain


def _restart_of(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether `new` is `old` changed only as a restart changes it: the restartedAt annotation,
    and images pinned (`_pinned_alike`)."""
    before, after = _plain(old, restart=True), _plain(new, restart=True)
    for field in _CONTAINER_LISTS:
        earlier = {
            c.get("name"): c.get("image") for c in _entries(o.mapping(before.get("spec")), field)
        }
        for container in _entries(o.mapping(after.get("spec")), field):
            image = earlier.get(container.get("name"))
            if _pinned_alike(image, container.get("image")):
                container["image"] = image
    return bool(before == after)


def _entries(spec: Mapping[str, Any], field: str) -> list[dict[str, Any]]:
    """The container entries of a plain (copied) pod spec's `field`, to change in place."""
    entries = spec.get(field)
    return [c for c in entries if isinstance(c, dict)] if isinstance(entries, list) else []


def _pinned_alike(old: object, new: object) -> bool:
    """The same image but for a pin: one repository, the same tag where both name one, the
    digests whatever they are (`app:1` and `app:1@sha256:…`, `app@sha256:a` and
    `app:1@sha256:b`); never two tags (`app:1`, `app:2`)."""
    if not isinstance(old, str) or not isinstance(new, str):
        return False
    if old == new:
        return True
    try:
        before, after = parse_image(old), parse_image(new)
    except ImageReferenceError:
        return False
    if before.name != after.name:
        return False
    return before.tag is None or after.tag is None or before.tag == after.tag


def _drop(metadata: dict[str, Any], field: str, key: str) -> None:
    """`key` out of `metadata[field]`, and the field out where nothing is left in it."""
    values = metadata.get(field)
    if isinstance(values, dict):
        values.pop(key, None)
        if not values:
            del metadata[field]
