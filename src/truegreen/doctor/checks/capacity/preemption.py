"""Preemption and nominated pods, as kube-scheduler treats them, for a whole training job.

Ground truth, kubernetes/kubernetes pkg/scheduler:
- framework/plugins/defaultpreemption/default_preemption.go: a pod may preempt unless its
  `preemptionPolicy` is `Never` (PodEligibleToPreemptOthers); on a machine it may take back the
  room of pods of a strictly lower priority only (SelectVictimsOnNode removes them all, then
  gives back as many as still let it fit, highest priority first, those whose
  PodDisruptionBudget would be broken first).
- framework/preemption/preemption.go `nodesWherePreemptionMightHelp`: every machine the pod
  failed as `Unschedulable` is a candidate, only UnschedulableAndUnresolvable ones are not (a
  taint, node affinity, the pod's own required pod affinity, a volume's zone: removing pods
  does not change them). Lack of room is Unschedulable, and so are a host port a running pod
  holds (NodePorts `Filter`) and pod anti-affinity, the job's against a running pod or a
  running pod's against the job (interpodaffinity/filtering.go `Filter`:
  `satisfyPodAntiAffinity`, `satisfyExistingPodsAntiAffinity`): SelectVictimsOnNode filters
  the machine again with its lower-priority pods removed (NodeInfo's used ports and
  InterPodAffinity's `RemovePod` forget them), so such a machine comes back when those pods,
  on it and of a lower priority, were all that refused it (filters/framework.py `Blocker`). Of
  the candidates the scheduler prefers the one breaking the fewest disruption budgets, then
  the lowest victims' priority. A budget is a preference, never a refusal: it preempts through
  one when no machine avoids it.
- framework/runtime/framework.go addNominatedPods: a pod nominated for a machine
  (status.nominatedNodeName, not bound yet) whose priority is the same or higher counts against
  that machine while another pod is filtered, so its promised room is not room for this job.
Everything here is pure.
"""

from collections.abc import Iterable, Mapping, Sequence

from msgspec import Struct

from truegreen.cluster import CantRead
from truegreen.doctor.knowledge.fit import MachineRoom
from truegreen.doctor.knowledge.stored_pod import SYSTEM_PRIORITY, PriorityLevel
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.doctor.knowledge.usage import ClusterUsage, Holder
from truegreen.quantity import PODS, Resources

VICTIMS_NAMED = 3


def priorities_matter(usage: ClusterUsage | CantRead, job: TrainingJob | None) -> bool:
    """Whether the job's priority can change its verdict, so the PriorityClasses are worth
    reading: the job names a class, some pod is nominated for a machine (its priority against
    the job's decides whether its room counts), or some pod holds room at a user-defined
    priority other than 0. Otherwise every pod but the system's is of priority 0, as the job is
    with no class named (only a `globalDefault` class created after every running pod could
    make it otherwise). Not when the pods could not be summed: nothing is compared then."""
    if isinstance(usage, CantRead):
        return False
    named = job is not None and any(s.spec.get("priorityClassName") for s in job.pod_sets)
    return (
        named
        or usage.any_nominated
        or any(p != 0 and p <= SYSTEM_PRIORITY for p in usage.priorities())
    )


def job_level(levels: Iterable[PriorityLevel]) -> PriorityLevel:
    """The job's priority as one: its lowest pod set's (the job gets room only if every set
    does), preempting only if every set may."""
    found = list(levels)
    if not found:
        return PriorityLevel(0, "", True)
    lowest = min(found, key=lambda level: level.value)
    return PriorityLevel(
        lowest.value,
        lowest.class_name,
        all(level.preempts for level in found),
        any(level.missing for level in found),
    )


def with_nominated(
    rooms: Mapping[str, MachineRoom],
    usage: ClusterUsage,
    priority: int | None,
    own: Mapping[str, tuple[Resources, int]],
) -> Mapping[str, MachineRoom]:
    """Each machine's room with the pods nominated for it of `priority` or above counted (all
    of them when the priority is not known), less the job's own nominated pods (`own`, per
    machine): that room is promised to them."""
    if not own and not usage.any_nominated:
        # Most clusters: nothing is nominated. The very rooms, so that what is computed from
        # them stays known for the next namespace (doctor/knowledge/last_answer.py).
        return rooms
    counted = {}
    for name, room in rooms.items():
        promised, pods = usage.nominated_to(name, priority)
        mine, my_pods = own.get(name, (Resources(), 0))
        counted[name] = MachineRoom(
            room.name,
            room.allocatable,
            room.max_pods,
            room.requested + promised - mine,
            room.pod_count + pods - my_pods,
        )
    return counted


def after_preemption(
    rooms: Mapping[str, MachineRoom], usage: ClusterUsage, priority: int
) -> dict[str, MachineRoom]:
    """Each machine's room once every pod of a priority below `priority` is gone from it: all
    that preemption can take back for a pod of `priority`."""
    return {name: room.without(*usage.held_below(name, priority)) for name, room in rooms.items()}


class Victim(Struct, frozen=True):
    """A pod that preemption would stop for the job, and the room it gives back."""

    machine: str
    holder: Holder
    gives: Resources
    """Of what the job lacks on that machine, what this pod holds."""
    blocks: str = ""
    """For a pod stopped for its port or its anti-affinity rather than its room, what it does
    to the job (`holds port 9400/TCP`)."""


def victims(
    rooms: Mapping[str, MachineRoom],
    placed: Sequence[tuple[str, str, int]],
    requests: Mapping[str, Resources],
    usage: ClusterUsage,
    priority: int,
) -> list[Victim]:
    """The largest pods of a lower priority on the machines the job is placed on once they
    are gone, of what it lacks there now (`rooms`: the room before preemption; `placed`:
    (pod set, machine, count); `requests`: per pod set). Largest first, at most
    VICTIMS_NAMED; the kept holders are the largest of each priority, so none is missed."""
    needs: dict[str, Resources] = {}
    for group, machine, count in placed:
        needs[machine] = needs.get(machine, Resources()) + requests[group] * count
    found: list[Victim] = []
    for machine, need in needs.items():
        room = rooms[machine]
        free = room.allocatable - room.requested
        short = [r for r, amount in need.amounts if r != PODS and amount > free.get(r)]
        for holder in usage.holders.get(machine, []):
            gives = Resources.of({r: holder.requested.get(r, 0) for r in short})
            if holder.priority < priority and not gives.is_zero:
                found.append(Victim(machine, holder, gives))
    # Devices first (the scarce room), then the rest by name: the same order every run.
    order = sorted({n for v in found for n in v.gives.names}, key=lambda r: ("/" not in r, r))
    found.sort(key=lambda v: (*(-v.gives.get(r) for r in order), v.holder.namespace, v.holder.pod))
    return found[:VICTIMS_NAMED]
