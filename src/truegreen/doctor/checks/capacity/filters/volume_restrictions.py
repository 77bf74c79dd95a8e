"""VolumeRestrictions (pkg/scheduler/framework/plugins/volumerestrictions/
volume_restrictions.go): a ReadWriteOncePod claim in use by another pod, and one pod of the job
at a time.
"""

from collections.abc import Sequence
from typing import Final

from truegreen.cluster import CantRead
from truegreen.doctor.checks.capacity.filters.cycle import Cycle, claim_uses, users_of
from truegreen.doctor.checks.capacity.filters.framework import (
    Exclusion,
    Found,
    JobPodSet,
)
from truegreen.doctor.checks.capacity.placement import Apart


def one_program(claim: str, sets_using: Sequence[JobPodSet], cluster: Cycle, found: Found) -> None:
    """A ReadWriteOncePod claim: no pod may use it while a placed pod does, and of the job's own
    pods only one at a time."""
    holders = users_of(claim, cluster)
    if holders:
        for pod_set in sets_using:
            found.exclude(
                Exclusion(
                    pod_set.name,
                    tuple(sorted(cluster.labels)),
                    f"its volume '{claim}' may be used by one program at a time, and "
                    f"'{holders[0].name}' uses it",
                    f"let '{holders[0].name}' finish, or give the training job a volume of its own",
                    f"PersistentVolumeClaim {claim} is ReadWriteOncePod and used by pod "
                    f"{holders[0].name} (volumerestrictions)",
                    everywhere=True,
                )
            )
        return
    single = tuple((m, "") for m in sorted(cluster.labels))
    words = f"can't use the volume '{claim}' while another of its programs does"
    for index, pod_set in enumerate(sets_using):
        for other in sets_using[index:]:
            found.rule(
                pod_set.name,
                Apart(pod_set.name, other.name, single, words),
                f"give each program of the training job a volume of its own instead of '{claim}'",
                f"PersistentVolumeClaim {claim} is ReadWriteOncePod: one pod of "
                f"{pod_set.name}, {other.name} at a time",
            )


NAME: Final = "VolumeRestrictions"
READS_PODS: Final = True


def filter(cycle: Cycle, found: Found) -> None:
    """The job's ReadWriteOncePod claims."""
    for use in claim_uses(cycle, found):
        if not isinstance(use.volume, CantRead) and "ReadWriteOncePod" in use.modes:
            one_program(use.claim, use.sets, cycle, found)
