"""VolumeBinding (pkg/scheduler/framework/plugins/volumebinding/binder.go `FindPodVolumes`):
a claim being deleted (volume_binding.go `GetPodVolumeClaims`); a bound claim's PersistentVolume
node affinity (`checkBoundClaims`, component-helpers/storage/volume `CheckNodeAffinity`: the
machine's labels only); a claim that waits for its first pod, bound where that pod is placed
(`findMatchingVolumes`, then `checkVolumeProvisions`); and the walk over the job's claims that
the volume rules share.
"""

from collections.abc import Mapping, Sequence
from typing import Final, Literal

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, Kind, KubeObject, ReadFailure
from truegreen.doctor.checks.capacity.filters.cycle import (
    ClaimUse,
    Cycle,
    claim_uses,
    domain_words,
)
from truegreen.doctor.checks.capacity.filters.framework import (
    Exclusion,
    FailedRead,
    Found,
    JobPodSet,
)
from truegreen.doctor.knowledge.fit import volume_reaches
from truegreen.doctor.knowledge.no_provisioner import (
    NO_PROVISIONER,
    makes_volumes_on,
    waits_for_first_pod,
)
from truegreen.quantity import QuantityError


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
    refused = tuple(
        sorted(m for m, labels in cluster.labels.items() if not volume_reaches(volume.obj, labels))
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


_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
"""The annotation the scheduler puts on a claim whose class it has asked for a volume, naming
the machine it is made for (component-helpers storage/volume `AnnSelectedNode`)."""

_BIND_CONFLICT: Final = "volumebinding: node(s) didn't find available persistent volumes to bind"
"""binder.go `ErrReasonBindConflict`: every refusal of a claim that waits for its first pod."""

_Why = Literal["elsewhere", "none", "places"]
"""Why a machine can't bind a waiting claim: its volume is being made for another machine; no
free volume made in advance reaches it and the class makes none; or the class makes none
there."""


class _Waiting(Struct, frozen=True):
    """A claim the job mounts that waits for its first pod, with its class."""

    claim: KubeObject
    storage_type: KubeObject

    @property
    def name(self) -> str:
        return o.name_of(self.claim)

    @property
    def selected(self) -> str | None:
        """The machine a volume is already being made for, if any."""
        machine = o.annotations_of(self.claim).get(_SELECTED_NODE)
        return None if machine is None else str(machine)


def _waiting(use: ClaimUse, cycle: Cycle, found: Found) -> _Waiting | None:
    """The claim, with its class, when it waits for its first pod; None for any other (a class
    measured absent is the storage check's finding, and the scheduler takes such a claim as
    one to bind at once). A class that could not be read goes to `found`: whether the claim
    waits, and where it can be bound, are not known."""
    if use.volume is not None or o.is_terminating(use.obj):
        return None
    named = o.mapping(use.obj.get("spec")).get("storageClassName")
    read = cycle.storage_types.get(str(named)) if named else None
    if isinstance(read, CantRead):
        if not read.is_measurement:
            found.fail(FailedRead(Kind.STORAGE_CLASS, read))
        return None
    if read is None or not waits_for_first_pod(use.obj, read.obj):
        return None
    return _Waiting(use.obj, read.obj)


def _refusal(
    machine: str,
    labels: Mapping[str, str],
    waiting: Sequence[_Waiting],
    volumes: Sequence[KubeObject] | None,
) -> tuple[_Waiting, _Why] | None:
    """Why FindPodVolumes refuses the machine to a pod that mounts the `waiting` claims; None
    when it binds them all. A claim whose volume is being made for another machine refuses it
    first; the others are matched to free volumes that reach the machine (`findMatchingVolumes`;
    `volumes` None: none needs one, its class makes volumes everywhere), and those left must
    have their volume made there (`checkVolumeProvisions`). QuantityError on a size that is not
    a quantity."""
    for claim in waiting:
        if claim.selected is not None and claim.selected != machine:
            return claim, "elsewhere"
    to_match = [c for c in waiting if c.selected is None]
    to_make = [c for c in waiting if c.selected is not None]
    if volumes is None:
        to_make += to_match
    elif to_match:
        # Imported on use: only a claim that may need a volume made in advance looks for one
        # (doctor's start-up on a small namespace, bench/imports.py).
        from truegreen.doctor.knowledge.made_volumes import free_volumes

        matches = free_volumes([c.claim for c in to_match], volumes, labels)
        to_make += [c for c, m in zip(to_match, matches, strict=True) if m.volume is None]
    for claim in to_make:
        if not makes_volumes_on(claim.storage_type, labels):
            makes_none = claim.storage_type.get("provisioner") == NO_PROVISIONER
            return claim, "none" if makes_none else "places"
    return None


def _places(storage_type: KubeObject) -> tuple[str, str]:
    """Where the class makes volumes (its `allowedTopologies`), in plain words (`zone
    us-east-1b`) and as written."""
    words, written = [], []
    for term in (o.mapping(t) for t in o.sequence(storage_type.get("allowedTopologies"))):
        expressions = [o.mapping(e) for e in o.sequence(term.get("matchLabelExpressions"))]
        parts = [
            (str(e.get("key")), sorted(str(v) for v in o.sequence(e.get("values"))))
            for e in expressions
        ]
        words.append(" and ".join(f"{domain_words(k)} {' or '.join(v)}" for k, v in parts))
        written.append(", ".join(f"{k} in ({','.join(v)})" for k, v in parts))
    return " or ".join(words), "; ".join(written)


def _exclusion(
    pod_set: JobPodSet, claim: _Waiting, why: _Why, refused: tuple[str, ...], cycle: Cycle
) -> Exclusion:
    """The machines a waiting claim refuses the pod set, for one reason, in words."""
    name = claim.name
    storage_type = o.name_of(claim.storage_type)
    reach = sorted(set(cycle.labels) - set(refused))
    listed = f" ({', '.join(reach)})" if reach else ""
    machines = ", ".join(refused)
    if why == "elsewhere":
        return Exclusion(
            pod_set.name,
            refused,
            f"can't use its volume '{name}', which is being made for {claim.selected}",
            f"run the training job on {claim.selected}, where its volume '{name}' is being made",
            f"PersistentVolumeClaim {name}: not bound, {_SELECTED_NODE}={claim.selected}: "
            f"{machines} refused ({_BIND_CONFLICT})",
        )
    provisioner = claim.storage_type.get("provisioner")
    waits = f"storageclass {storage_type} (provisioner {provisioner}, WaitForFirstConsumer)"
    if why == "none":
        return Exclusion(
            pod_set.name,
            refused,
            f"can't reach free storage made in advance for its volume '{name}'",
            f"run the training job where free storage of type '{storage_type}' fits its volume "
            f"'{name}'{listed}, or ask your cluster admin for such storage on the machines it "
            "can use",
            f"PersistentVolumeClaim {name}: not bound, {waits}: no Available PersistentVolume "
            f"that fits it has a node affinity admitting {machines} ({_BIND_CONFLICT})",
        )
    words, written = _places(claim.storage_type)
    return Exclusion(
        pod_set.name,
        refused,
        f"can't have its volume '{name}' made there (its storage type makes volumes only in "
        f"{words})",
        f"run the training job in {words}, where its volume '{name}' can be made{listed}, or "
        f"give the volume '{name}' a storage type that makes volumes where the job can run",
        f"PersistentVolumeClaim {name}: not bound, {waits}, allowedTopologies {written}: "
        f"{machines} outside them, and no Available PersistentVolume that fits it admits them "
        f"({_BIND_CONFLICT})",
    )


def _first_pod(pod_set: JobPodSet, waiting: Sequence[_Waiting], cycle: Cycle, found: Found) -> None:
    """The machines where the pod set's claims that wait for their first pod can't be bound.
    Where a free volume made in advance must be looked for (a claim's class makes none, or
    not everywhere) and the volumes could not be listed, the rule is unknown, never a fit."""
    if not waiting:
        return
    needed = any(
        c.selected is None and not makes_volumes_on(c.storage_type, labels)
        for c in waiting
        for labels in cycle.labels.values()
    )
    volumes = None
    if needed:
        read = cycle.made_volumes or CantRead(
            ReadFailure.NOT_CAPTURED, "persistentvolumes not listed"
        )
        if isinstance(read, CantRead):
            found.fail(FailedRead(Kind.PERSISTENT_VOLUME, read, listed=True))
            return
        volumes = read.items
    refused: dict[tuple[str, _Why], tuple[_Waiting, list[str]]] = {}
    for machine, labels in sorted(cycle.labels.items()):
        try:
            refusal = _refusal(machine, labels, waiting, volumes)
        except QuantityError as error:
            cant = CantRead(ReadFailure.MALFORMED, f"a volume's size is not a quantity: {error}")
            found.fail(FailedRead(Kind.PERSISTENT_VOLUME, cant, listed=True))
            return
        if refusal is not None:
            claim, why = refusal
            refused.setdefault((claim.name, why), (claim, []))[1].append(machine)
    for (_, why), (claim, machines) in refused.items():
        found.exclude(_exclusion(pod_set, claim, why, tuple(machines), cycle))


NAME: Final = "VolumeBinding"
READS_PODS: Final = True


def filter(cycle: Cycle, found: Found) -> None:
    """Where each claim the job mounts lets its pods run: bound, where its volume reaches;
    waiting for its first pod, where it can be bound."""
    uses = claim_uses(cycle, found)
    waiting = {use.claim: _waiting(use, cycle, found) for use in uses}
    for pod_set in cycle.sets:
        mine = [use for use in uses if pod_set in use.sets]
        for use in mine:
            if not _being_deleted(pod_set, use.claim, use.obj, cycle, found):
                _volume_affinity(pod_set, use.claim, use.volume, use.obj, cycle, found)
        _first_pod(pod_set, [w for u in mine if (w := waiting[u.claim]) is not None], cycle, found)
