"""VolumeRestrictions (pkg/scheduler/framework/plugins/volumerestrictions/
volume_restrictions.go): a ReadWriteOncePod claim in use by another pod, and one pod of the job
at a time.
"""

from collections.abc import Sequence
from typing import Final

from msgspec.structs import replace

from truegreen.cluster import CantRead
from truegreen.doctor.checks.capacity.filters.cycle import Cycle, Placed, claim_uses, users_of
from truegreen.doctor.checks.capacity.filters.framework import (
    Exclusion,
    Found,
    JobPodSet,
    Wait,
)
from truegreen.doctor.checks.capacity.placement import Apart


def _held(claim: str, holders: Sequence[Placed], cluster: Cycle) -> Exclusion | Wait:
    """What a claim in use does to every machine. Filter answers Unschedulable: the pod waits
    for the holders to go. Running training jobs go when they finish: a wait. A pod of no
    training job does not go by itself, and the judged job's own pod, while the job waits for
    the rest of its pods, never goes first: no machine is left."""
    own = [h for h in holders if h.name in cluster.own]
    other = [h for h in holders if h.name not in cluster.own and h.job is None]
    detail = f"PersistentVolumeClaim {claim} is ReadWriteOncePod and used by pod "
    everywhere = tuple(sorted(cluster.labels))
    if own:
        return Exclusion(
            "",
            everywhere,
            f"its volume '{claim}' may be used by one program at a time, and its own program "
            f"'{own[0].name}' uses it",
            "give each program of the training job a volume of its own",
            f"{detail}{own[0].name} of the job itself (volumerestrictions)",
            everywhere=True,
        )
    if other:
        return Exclusion(
            "",
            everywhere,
            f"its volume '{claim}' may be used by one program at a time, and "
            f"'{other[0].name}' uses it",
            f"let '{other[0].name}' finish, or give the training job a volume of its own",
            f"{detail}{other[0].name} (volumerestrictions)",
            everywhere=True,
        )
    jobs = tuple(dict.fromkeys(str(h.job) for h in holders))
    return Wait(
        claim,
        jobs,
        f"{detail}{holders[0].name} of training job {jobs[0]} (volumerestrictions: "
        "Unschedulable until it finishes)",
    )


def one_program(claim: str, sets_using: Sequence[JobPodSet], cluster: Cycle, found: Found) -> None:
    """A ReadWriteOncePod claim: no pod may use it while a placed pod does, and of the job's own
    pods only one at a time."""
    holders = users_of(claim, cluster)
    if holders:
        held = _held(claim, holders, cluster)
        if isinstance(held, Wait):
            found.wait(held)
            return
        for pod_set in sets_using:
            found.exclude(replace(held, group=pod_set.name))
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
