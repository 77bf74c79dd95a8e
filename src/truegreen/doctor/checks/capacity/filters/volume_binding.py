"""VolumeBinding (pkg/scheduler/framework/plugins/volumebinding/binder.go `checkBoundClaims`,
component-helpers/storage/volume `CheckNodeAffinity`: the machine's labels only): a claim being
deleted (volume_binding.go `GetPodVolumeClaims`), a bound claim's PersistentVolume node
affinity; and the walk over the job's claims that the volume
rules share.
"""

from typing import Final

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, KubeObject
from truegreen.doctor.checks.capacity.filters.cycle import Cycle, claim_uses
from truegreen.doctor.checks.capacity.filters.framework import (
    Exclusion,
    Found,
    JobPodSet,
)
from truegreen.doctor.knowledge.fit import matches_node_selector


def _volume_affinity(
    pod_set: JobPodSet,
    claim: str,
    volume: Got | CantRead | None,
    claim_obj: KubeObject,
    cluster: Cycle,
    found: Found,
) -> None:
    """A bound claim's PersistentVolume node affinity, against each machine's labels."""
    name = str(o.mapping(claim_obj.get("spec")).get("volumeName") or "")
    if isinstance(volume, CantRead):
        # checkBoundClaims: a bound volume that is not there fails every machine.
        found.exclude(
            Exclusion(
                pod_set.name,
                tuple(sorted(cluster.labels)),
                f"its volume '{claim}' is tied to storage that doesn't exist",
                f"recreate the volume '{claim}' for the training job's data",
                f"PersistentVolumeClaim {claim}: bound to PersistentVolume {name}, not found "
                "(volumebinding: pvc(s) bound to non-existent pv(s))",
                everywhere=True,
            )
        )
        return
    if volume is None:
        return
    required = o.mapping(
        o.mapping(o.mapping(volume.obj.get("spec")).get("nodeAffinity")).get("required")
    )
    if "nodeSelectorTerms" not in required:
        return
    terms = [o.mapping(t) for t in o.sequence(required.get("nodeSelectorTerms"))]
    refused = tuple(
        sorted(
            m
            for m, labels in cluster.labels.items()
            if not matches_node_selector(terms, {"metadata": {"labels": labels}})
        )
    )
    reach = sorted(set(cluster.labels) - set(refused))
    found.exclude(
        Exclusion(
            pod_set.name,
            refused,
            f"can't reach its volume '{claim}'",
            f"run the training job where its volume '{claim}' can be used"
            + (f" ({', '.join(reach)})" if reach else "")
            + ", or keep its data on storage the job's machines can reach",
            f"PersistentVolume {name} (claim {claim}): node affinity refuses {', '.join(refused)}",
        )
    )


def _being_deleted(
    pod_set: JobPodSet, claim: str, claim_obj: KubeObject, cluster: Cycle, found: Found
) -> bool:
    """A claim being deleted refuses every machine (volume_binding.go `GetPodVolumeClaims`:
    `persistentvolumeclaim %q is being deleted`, UnschedulableAndUnresolvable)."""
    if not o.is_terminating(claim_obj):
        return False
    found.exclude(
        Exclusion(
            pod_set.name,
            tuple(sorted(cluster.labels)),
            f"its volume '{claim}' is being deleted",
            f"create the volume '{claim}' again once its deletion is done, or give the training "
            "job another volume",
            f'PersistentVolumeClaim {claim}: persistentvolumeclaim "{claim}" is being deleted '
            "(volumebinding)",
            everywhere=True,
        )
    )
    return True


NAME: Final = "VolumeBinding"
READS_PODS: Final = True


def filter(cycle: Cycle, found: Found) -> None:
    """Where each bound claim the job mounts lets its pods run."""
    for use in claim_uses(cycle, found):
        for pod_set in use.sets:
            if _being_deleted(pod_set, use.claim, use.obj, cycle, found):
                continue
            _volume_affinity(pod_set, use.claim, use.volume, use.obj, cycle, found)
