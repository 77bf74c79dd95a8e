"""A ReadWriteOnce volume attached to another machine: not a scheduler filter but the
attach-detach controller's Multi-Attach refusal (pkg/controller/volume/attachdetach,
pkg/volume/util `IsMultiAttachAllowed`): the pods are placed and then hang, so it is inferred.
"""

from collections.abc import Mapping, Sequence
from typing import Final

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, GetRead, Got, Kind, KubeObject
from truegreen.doctor.checks.capacity.filters.cycle import Cycle, claim_uses, users_of
from truegreen.doctor.checks.capacity.filters.framework import (
    Exclusion,
    FailedRead,
    Found,
    JobPodSet,
)
from truegreen.doctor.checks.capacity.placement import Near

SHARED_ACCESS = frozenset({"ReadWriteMany", "ReadOnlyMany"})


_NOT_ATTACHED = ("nfs", "hostPath", "local", "cephfs", "glusterfs")
"""Volume sources the attach-detach controller never attaches (no attachable plugin)."""


def _one_machine_modes(modes: frozenset[str]) -> bool:
    """ReadWriteOnce without a shared mode: attached to one machine at a time
    (pkg/volume/util IsMultiAttachAllowed)."""
    return "ReadWriteOnce" in modes and not modes & SHARED_ACCESS


def _modes(volume: KubeObject) -> frozenset[str]:
    return frozenset(str(m) for m in o.sequence(o.mapping(volume.get("spec")).get("accessModes")))


def _csi_driver(volume: KubeObject) -> str:
    return str(o.mapping(o.mapping(volume.get("spec")).get("csi")).get("driver") or "")


def driver_to_ask(volume: KubeObject) -> str | None:
    """The CSI driver whose CSIDriver object decides whether `volume` is attached at all, for
    a volume of a CSI driver attached to one machine at a time if it is; None for any other."""
    return (_csi_driver(volume) or None) if _one_machine_modes(_modes(volume)) else None


def attached(volume: Got | None, drivers: Mapping[str, GetRead]) -> bool | CantRead:
    """Whether the attach-detach controller attaches the volume (an unread one is assumed to
    be: most single-machine volumes are disks); the CSIDriver's read when it could not look.

    A CSI volume is attached unless its driver's CSIDriver says attachRequired: false, and a
    driver without one is attached (pkg/volume/csi/csi_plugin.go CanAttach, skipAttach:
    "Don't skip attach if CSIDriver does not exist"); the controller never attaches a volume
    without an attachable plugin (attachdetach/util ProcessPodVolumes)."""
    if volume is None:
        return True
    if any(source in o.mapping(volume.obj.get("spec")) for source in _NOT_ATTACHED):
        return False
    read = drivers.get(_csi_driver(volume.obj))
    if isinstance(read, CantRead):
        return True if read.is_measurement else read
    if isinstance(read, Got):
        return o.mapping(read.obj.get("spec")).get("attachRequired") is not False
    return True


def one_machine(claim: str, sets_using: Sequence[JobPodSet], cluster: Cycle, found: Found) -> None:
    """A volume attached to one machine at a time: every pod that mounts it must run where it
    is attached, and all of the job's pods that mount it on one machine. Inferred: the
    scheduler places the pods, and the ones elsewhere then wait on Multi-Attach."""
    machines = sorted({p.machine for p in users_of(claim, cluster)})
    if machines:
        for pod_set in sets_using:
            found.exclude(
                Exclusion(
                    pod_set.name,
                    tuple(sorted(m for m in cluster.labels if m not in machines)),
                    f"can't attach its volume '{claim}', which is attached to "
                    f"{', '.join(machines)} and can be attached to one machine at a time",
                    f"run the training job on {', '.join(machines)}, or keep its data on "
                    "storage many machines can use at once",
                    f"PersistentVolumeClaim {claim}: ReadWriteOnce, in use on "
                    f"{', '.join(machines)} (attach-detach Multi-Attach)",
                    measured=False,
                )
            )
        return
    names = frozenset(s.name for s in sets_using)
    words = (
        f"must run on the machine its other programs use the volume '{claim}' on (it can be "
        "attached to one machine at a time)"
    )
    for pod_set in sets_using:
        found.rule(
            pod_set.name,
            Near(
                pod_set.name,
                ((tuple((m, m) for m in sorted(cluster.labels)), frozenset()),),
                names,
                True,
                words,
                measured=False,
            ),
            f"make room on one machine for every program that uses '{claim}', or keep its data "
            "on storage many machines can use at once",
            f"PersistentVolumeClaim {claim}: ReadWriteOnce: its pods on one node "
            "(attach-detach Multi-Attach)",
        )


NAME: Final = "VolumeAttachment"
READS_PODS: Final = True


def filter(cycle: Cycle, found: Found) -> None:
    """The job's ReadWriteOnce volumes that are attached to one machine at a time (the
    volume's own access modes decide: IsMultiAttachAllowed)."""
    for use in claim_uses(cycle, found):
        if isinstance(use.volume, CantRead):
            continue  # its volume does not exist: every machine is refused already
        modes = use.modes if use.volume is None else _modes(use.volume.obj)
        if not _one_machine_modes(modes):
            continue
        attaches = attached(use.volume, cycle.drivers)
        if isinstance(attaches, CantRead):
            # Whether it is attached at all is not known, so neither is whether it keeps the
            # job on one machine: an unknown, never a guessed Multi-Attach.
            found.fail(FailedRead(Kind.CSI_DRIVER, attaches))
        elif attaches:
            one_machine(use.claim, use.sets, cycle, found)
