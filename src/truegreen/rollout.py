"""Rollout status by kubectl's rules (polymorphichelpers/rollout_status.go)."""

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject

_RULED = ("Deployment", "StatefulSet", "DaemonSet")


class RolloutStatus(Struct, frozen=True):
    """kubectl's `rollout status` answer: done, in progress (with why), or stuck."""

    done: bool
    stuck: bool = False
    progress: str = ""
    ruled: bool = True
    """False for an update strategy kubectl has no rules for (OnDelete: "rollout status is only
    available for RollingUpdate strategy type"): there is no rollout to judge, and `done` says
    only that every copy the controller keeps is there and ready, by its own counts."""


def rollout_status(workload: KubeObject, kind: str | None = None) -> RolloutStatus:
    """Rollout status by the rules of kubectl's polymorphichelpers/rollout_status.go.

    `kind` is what the caller read the object as (refresh reads Deployments) and wins over the
    object's own. A kind with no rules is a bug, never "rolled out".
    """
    kind = kind or workload.get("kind")
    if kind not in _RULED:
        raise o.KindMissingError(f"no rollout rules for kind {kind!r} ({o.name_of(workload)})")
    meta = o.mapping(workload.get("metadata"))
    spec, status = o.mapping(workload.get("spec")), o.mapping(workload.get("status"))
    generation, observed = (
        o.integer(meta.get("generation")),
        o.integer(status.get("observedGeneration")),
    )
    if kind == "Deployment":
        if generation > observed:
            return RolloutStatus(False, progress="waiting for the update to be picked up")
        progressing = o.condition(workload, "Progressing")
        if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
            return RolloutStatus(False, stuck=True, progress="exceeded its progress deadline")
        replicas = o.integer(spec.get("replicas"), 1)
        updated = o.integer(status.get("updatedReplicas"))
        if updated < replicas:
            return RolloutStatus(False, progress=f"{updated} of {replicas} copies updated")
        if o.integer(status.get("replicas")) > updated:
            old = o.integer(status.get("replicas")) - updated
            return RolloutStatus(False, progress=f"{old} old copies still stopping")
        if o.integer(status.get("availableReplicas")) < updated:
            available = o.integer(status.get("availableReplicas"))
            return RolloutStatus(
                False, progress=f"{available} of {updated} updated copies available"
            )
        return RolloutStatus(True)
    strategy = o.mapping(spec.get("updateStrategy")).get("type", "RollingUpdate")
    if strategy != "RollingUpdate":
        return _copies_kept(kind, generation, observed, spec, status)
    if kind == "StatefulSet":
        if observed == 0 or generation > observed:
            return RolloutStatus(False, progress="waiting for the update to be picked up")
        replicas = o.integer(spec.get("replicas"), 1)
        ready = o.integer(status.get("readyReplicas"))
        if ready < replicas:
            return RolloutStatus(False, progress=f"{ready} of {replicas} copies ready")
        # kubectl checks the partition whenever rollingUpdate is set (the API server always
        # sets it, with partition 0, for RollingUpdate: apps/v1 defaults.go), and compares the
        # revisions only when it is not.
        update_strategy = o.mapping(spec.get("updateStrategy"))
        if "rollingUpdate" in update_strategy:
            rolling = o.mapping(update_strategy.get("rollingUpdate"))
            if "partition" in rolling:
                wanted = replicas - o.integer(rolling.get("partition"))
                updated = o.integer(status.get("updatedReplicas"))
                if updated < wanted:
                    return RolloutStatus(False, progress=f"{updated} of {wanted} copies updated")
            return RolloutStatus(True)
        if status.get("updateRevision") != status.get("currentRevision"):
            return RolloutStatus(False, progress="copies still moving to the new version")
        return RolloutStatus(True)
    # A DaemonSet: the only kind left.
    if generation > observed:
        return RolloutStatus(False, progress="waiting for the update to be picked up")
    desired = o.integer(status.get("desiredNumberScheduled"))
    updated = o.integer(status.get("updatedNumberScheduled"))
    if updated < desired:
        return RolloutStatus(False, progress=f"{updated} of {desired} copies updated")
    available = o.integer(status.get("numberAvailable"))
    if available < desired:
        return RolloutStatus(False, progress=f"{available} of {desired} copies available")
    return RolloutStatus(True)


def _copies_kept(
    kind: str, generation: int, observed: int, spec: Mapping[str, Any], status: Mapping[str, Any]
) -> RolloutStatus:
    """OnDelete, which kubectl declines to judge: the controller still makes every missing copy
    and counts them, stateful_set_control.go `computeReplicaStatus` (readyReplicas against
    spec.replicas) and daemon_controller.go `updateDaemonSetStatus` (numberAvailable against
    desiredNumberScheduled). Copies on an older revision are OnDelete's design, not counted."""
    if generation > observed or (kind == "StatefulSet" and observed == 0):
        return RolloutStatus(False, progress="waiting for the update to be picked up", ruled=False)
    if kind == "StatefulSet":
        wanted, have, word = o.integer(spec.get("replicas"), 1), "readyReplicas", "ready"
    else:
        wanted, have, word = (
            o.integer(status.get("desiredNumberScheduled")),
            "numberAvailable",
            "available",
        )
    count = o.integer(status.get(have))
    if count < wanted:
        return RolloutStatus(False, progress=f"{count} of {wanted} copies {word}", ruled=False)
    return RolloutStatus(True, ruled=False)
