"""Whether a workload's update is under way, and whose: refresh's own restart, or someone
else's change to its pods, which refresh leaves alone.

`kubectl rollout status` (polymorphichelpers/rollout_status.go) calls a rollout unfinished also
where no update is under way: a copy that stopped being ready or available after the rollout
completed. `updating` asks the controller: old copies still running, or its own word that the
update is not complete (a Deployment's Progressing condition, progress.go `syncRolloutStatus`;
a StatefulSet's currentRevision behind its updateRevision, stateful_set_utils.go
`completeRollingUpdate`).

A StatefulSet, a DaemonSet and a Deployment with no progress deadline (deployment_util.go
`HasProgressDeadline`) never say that their update stopped, so their counts cannot tell
refresh's own restart that stopped (a new copy that never becomes Ready) from someone else's
rollout that takes its time. Refresh's own restart is the one it recorded (`RESTARTED`: its
restartedAt stamp, the digests it pinned), and `own_update` looks for it. A Deployment keeps each
template it rolled out as a ReplicaSet (deployment/sync.go `getNewReplicaSet`: the whole
template, `pod-template-hash` added to its labels), so the copies still running an older
template are those of the ReplicaSets whose template is not the Deployment's
(deployment_util.go `FindOldReplicaSets`, `EqualIgnoreHash`): the update is refresh's only where
those templates differ from the Deployment's by refresh's latest restart alone (its
`kubectl.kubernetes.io/restartedAt` stamp, or a container's image pinned to the digest it aimed
at, of the same repository and tag). `kubectl rollout restart` writes a stamp of its own: that
restart is someone else's. A StatefulSet's or DaemonSet's older templates are ControllerRevisions,
which refresh does not read: its update is refresh's where its template still carries refresh's
latest restart.
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.images import ImageReferenceError, parse_image
from truegreen.refresh.annotations import PendingRestart, latest_restart
from truegreen.refresh.template import RESTARTED_AT

TEMPLATE_HASH: Final = "pod-template-hash"
"""The label the Deployment controller adds to each ReplicaSet's template (apps/v1
DefaultDeploymentUniqueLabelKey), which two templates are compared without."""
REVISION_HASH: Final = "controller-revision-hash"
"""The label a StatefulSet's or DaemonSet's controller puts on each pod: the revision of the
template it was made from (apps/v1 ControllerRevisionHashLabelKey)."""
TEMPLATE_GENERATION: Final = "deprecated.daemonset.template.generation"
"""The DaemonSet annotation the API server moves on with each template change (apps/v1
DeprecatedTemplateGeneration)."""
POD_TEMPLATE_GENERATION: Final = "pod-template-generation"
"""The label a DaemonSet's controller puts on each pod: the template generation it was made
at (daemon/util/daemonset_util.go `CreatePodTemplate`)."""
_CONTAINER_LISTS: Final = ("initContainers", "containers")
_PARALLEL: Final = "Parallel"
"""The StatefulSet podManagementPolicy under which its controller waits on no copy before
making or replacing another (apps/v1 ParallelPodManagement)."""
_COMPLETE: Final = "NewReplicaSetAvailable"
"""The Progressing reason a Deployment's controller writes once its latest rollout is complete,
and keeps while copies come and go (progress.go `syncRolloutStatus`: `isCompleteDeployment`)."""


def updating(
    workload: Mapping[str, Any],
    kind: str,
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]],
) -> bool:
    """Whether the controller of a workload (`kind`) whose rollout kubectl calls unfinished, and
    not stuck, shows an update of its pod template under way: a Deployment with copies of an
    older template still running ("old replicas are pending termination"), or fewer updated
    copies than desired (`_missing_copy_updating`), or whose Progressing condition does not say
    its latest rollout completed (progress.go `syncRolloutStatus`: `isCompleteDeployment`, the
    reason `NewReplicaSetAvailable`); a StatefulSet with fewer updated copies than its
    partition leaves to update, or (partition 0) its currentRevision not yet its
    updateRevision; a DaemonSet with fewer machines running the updated copy than desired.

    A StatefulSet or DaemonSet short of a copy is an update under way whatever the cause: its
    controller writes no condition for a copy it could not make (only an Event, which refresh
    does not read), and between deleting an old copy and making its replacement its counts
    leave that copy out (stateful_set_control.go `computeReplicaStatus`, daemon_controller.go
    `updateDaemonSetStatus`), so a missing copy cannot be told from an update replacing it. A
    copy short of ready or available after the update completed is no update: the tick judges
    it. A Deployment with no progress deadline has no Progressing condition (the controller
    removes it) and a DaemonSet counts no revision, so their updated copies not all available
    yet cannot be told from a copy that stopped being so: no update either. `pods` and
    `replica_sets`: a Deployment's own, terminating copies included."""
    spec, status = o.mapping(workload.get("spec")), o.mapping(workload.get("status"))
    if kind == "StatefulSet":
        rolling = o.mapping(o.mapping(spec.get("updateStrategy")).get("rollingUpdate"))
        partition = o.integer(rolling.get("partition"))
        wanted = o.integer(spec.get("replicas"), 1) - partition
        if o.integer(status.get("updatedReplicas")) < wanted:
            return True
        return partition == 0 and status.get("currentRevision") != status.get("updateRevision")
    if kind == "DaemonSet":
        desired = o.integer(status.get("desiredNumberScheduled"))
        return o.integer(status.get("updatedNumberScheduled")) < desired
    updated = o.integer(status.get("updatedReplicas"))
    if o.integer(status.get("replicas")) > updated:
        return True
    if updated < o.integer(spec.get("replicas"), 1) and _missing_copy_updating(
        workload, pods, replica_sets
    ):
        return True
    progressing = o.condition(workload, "Progressing")
    return progressing is not None and progressing.get("reason") != _COMPLETE


def _missing_copy_updating(
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]],
) -> bool:
    """Whether a Deployment's updated copies fewer than desired are an update under way: unless
    its controller says why a copy is missing (`failed_create`: a quota reached) and no copy of
    an older template is still there. Progressing `NewReplicaSetAvailable` does not say it: a
    Recreate Deployment keeps it while its old copies terminate and before its new ReplicaSet
    is made (recreate.go `rolloutRecreate`, progress.go `isCompleteDeployment` comparing 0
    with 0; kubernetes#115538), and those copies, terminating, are counted nowhere in its
    status (the ReplicaSet counts only active pods)."""
    if not failed_create(deployment):
        return True
    return bool(_older_copies(deployment, pods, replica_sets))


def _older_copies(
    deployment: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]],
) -> list[Mapping[str, Any]]:
    """A Deployment's pods not finished (terminating ones included) that no ReplicaSet of its
    current template controls (deployment_util.go `FindNewReplicaSet`, `EqualIgnoreHash`):
    every such pod where no such ReplicaSet exists yet."""
    new = _new_replica_sets(deployment, replica_sets)
    return [
        p for p in pods if not o.is_terminated(p) and not any(o.controlled_by(p, r) for r in new)
    ]


def _new_replica_sets(
    deployment: Mapping[str, Any], replica_sets: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The ReplicaSets whose template is the Deployment's but for the hash label
    (deployment_util.go `FindNewReplicaSet`, `EqualIgnoreHash`)."""
    current = _plain(o.pod_template(deployment))
    return [r for r in replica_sets if _plain(o.pod_template(r)) == current]


def failed_create(workload: Mapping[str, Any]) -> str:
    """The cluster's words for a copy a Deployment's controller could not make, or "": its
    `ReplicaFailure` condition (`FailedCreate: pods "web-…" is forbidden: exceeded quota: …`),
    which the ReplicaSet controller writes on a failed create (replica_set.go
    `manageReplicas`/`calculateStatus`) and the Deployment controller copies
    (progress.go `syncRolloutStatus`, `getReplicaFailures`)."""
    failure = o.condition(workload, "ReplicaFailure")
    if failure is None or failure.get("status") != "True":
        return ""
    reason, message = str(failure.get("reason") or ""), str(failure.get("message") or "")
    return ": ".join(part for part in (reason, message) if part)


def update_pods(
    workload: Mapping[str, Any],
    kind: str,
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]],
) -> list[Mapping[str, Any]]:
    """The pods of the update under way, made from the workload's current template, as its
    controller tells them: a Deployment's new ReplicaSet's (the one whose template is the
    Deployment's but for the hash label, deployment_util.go `FindNewReplicaSet`,
    `EqualIgnoreHash`; `replica_sets`: the Deployment's own); a StatefulSet's at its
    `updateRevision` (their `controller-revision-hash` label, stateful_set_utils.go
    `getPodRevision`); a DaemonSet's at its template generation (their `pod-template-generation`
    label against its `deprecated.daemonset.template.generation` annotation,
    daemon/util/daemonset_util.go `IsPodUpdated`). An old copy that crash-loops while someone
    else's update replaces it says nothing of that update where the controller replaces it
    first: a Deployment's (rolling.go `cleanupUnhealthyReplicas` scales it down first), a
    DaemonSet's (daemon/update.go `rollingUpdate` replaces an unavailable old copy at once), a
    StatefulSet's with `podManagementPolicy: Parallel` (stateful_set_control.go
    `updateStatefulSet` deletes the highest copy not at the update revision). Every other
    StatefulSet (OrderedReady, the default) waits on each copy not Running and Ready, whatever
    its revision, before it replaces any (`processReplica`; kubernetes#67250): every pod is its
    update's there. Where they cannot be told (no such ReplicaSet, revision or generation),
    every pod."""
    if kind == "StatefulSet":
        revision = o.mapping(workload.get("status")).get("updateRevision")
        parallel = o.mapping(workload.get("spec")).get("podManagementPolicy") == _PARALLEL
        if not revision or not parallel:
            return list(pods)
        return [p for p in pods if o.labels_of(p).get(REVISION_HASH) == revision]
    if kind == "DaemonSet":
        generation = o.annotations_of(workload).get(TEMPLATE_GENERATION)
        if not generation:
            return list(pods)
        return [p for p in pods if o.labels_of(p).get(POD_TEMPLATE_GENERATION) == generation]
    new = _new_replica_sets(workload, replica_sets)
    if not new:
        return list(pods)
    return [p for p in pods if any(o.controlled_by(p, r) for r in new)]


def own_update(
    workload: Mapping[str, Any],
    kind: str,
    pods: Sequence[Mapping[str, Any]],
    replica_sets: Sequence[Mapping[str, Any]],
    latest: PendingRestart | None,
) -> bool:
    """Whether the update under way is refresh's `latest` restart: for a Deployment, its copies
    that stay on an older template differ from it by that restart alone (`replica_sets`: the
    Deployment's own); for a StatefulSet or DaemonSet, its template carries that restart. False
    without one, or where it cannot be told (no copy on an older template to compare, or a copy
    whose ReplicaSet is not the Deployment's)."""
    if latest is None:
        return False
    if kind != "Deployment":
        return _carries(o.pod_template(workload), latest)
    current = _plain(o.pod_template(workload))
    older: list[dict[str, Any]] = []
    for pod in o.remaining(pods):
        owner = next((r for r in replica_sets if o.controlled_by(pod, r)), None)
        if owner is None:
            return False
        template = _plain(o.pod_template(owner))
        if template != current:
            older.append(template)
    return bool(older) and all(_restart_of(template, current, latest) for template in older)


def carried_restart(workload: Mapping[str, Any]) -> PendingRestart | None:
    """Refresh's latest restart that no verified record has closed (`latest_restart`), where
    the workload's template still carries it, or None. Until a record closes it, the template
    is that restart's: its pods are moving to (or stopped on the way to) the digests it aimed
    at, not to the ones recorded before it."""
    latest = latest_restart(o.annotations_of(workload))
    if latest is None or not _carries(o.pod_template(workload), latest):
        return None
    return latest


def _carries(template: Mapping[str, Any], latest: PendingRestart) -> bool:
    """Whether `template` carries refresh's `latest` restart: its restartedAt stamp, or (`--mode
    pin`) each of its containers pinned to the digest the restart aimed at."""
    if _stamp(template) == latest.stamp:
        return True
    spec = o.pod_spec(template)
    every = [*o.init_containers(spec), *o.containers(spec)]
    images = {str(c.get("name")): c.get("image") for c in every}
    return bool(latest.target) and all(
        _digest(images.get(name)) == digest for name, digest in latest.target.items()
    )


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


def _restart_of(old: Mapping[str, Any], new: Mapping[str, Any], latest: PendingRestart) -> bool:
    """Whether `new` is `old` changed only as refresh's `latest` restart changed it: the
    restartedAt annotation set to its stamp, and images pinned (`_pinned_alike`) to the digests
    it aimed at. Another stamp (`kubectl rollout restart`'s) or another pin is someone else's."""
    if _stamp(old) != _stamp(new) and _stamp(new) != latest.stamp:
        return False
    before, after = _plain(old, restart=True), _plain(new, restart=True)
    for field in _CONTAINER_LISTS:
        earlier = {
            c.get("name"): c.get("image") for c in _entries(o.mapping(before.get("spec")), field)
        }
        for container in _entries(o.mapping(after.get("spec")), field):
            name, image = container.get("name"), container.get("image")
            aimed = latest.target.get(str(name))
            if aimed and _pinned_alike(earlier.get(name), image) and _digest(image) == aimed:
                container["image"] = earlier.get(name)
    return bool(before == after)


def _stamp(template: Mapping[str, Any]) -> object:
    """The template's restartedAt annotation, or None."""
    return o.mapping(o.mapping(template.get("metadata")).get("annotations")).get(RESTARTED_AT)


def _digest(image: object) -> str | None:
    """The digest an image names, or None (no digest, or no image reference)."""
    if not isinstance(image, str):
        return None
    try:
        return parse_image(image).digest
    except ImageReferenceError:
        return None


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
