"""Placing every pod of a training job on the machines' free room at once.

kube-scheduler places one pod at a time, and a distributed job starts only when all of its pods
run: a job of four 8-GPU workers on one free 8-GPU machine has room for one rank, and the
others wait forever. So the job is placed whole: its pods, largest first, each on the first
machine (by name) where it fits and its rules allow it (first-fit decreasing), the room each
takes counted before the next. Where first-fit decreasing places every pod, a placement exists
for certain; where it does not, another placement might still exist (packing is a hard
problem), unless a pod fits on no machine alone or the job asks for more of a resource than
all the machines have free together: `Placement.proven` says which.
"""

from collections.abc import Mapping, Sequence

from msgspec import Struct

from truegreen.doctor.fit import MachineRoom, Shortfall, closest, shortfalls
from truegreen.quantity import PODS, Resources


class PodGroup(Struct, frozen=True):
    """Identical pods of one pod set, to be placed."""

    name: str
    count: int
    requests: Resources
    machines: tuple[str, ...]
    """The machines its rules allow, in the order they are tried."""
    per_machine: int | None = None
    """At most this many on one machine (required anti-affinity between them); None: any."""


class Unplaced(Struct, frozen=True):
    """The first pod that found no room, and how close it came."""

    group: str
    requests: Resources
    machine: str
    """The machine that missed it by the least, of those that could hold it when empty (of
    all it may use when none could); "" when its rules allow none."""
    missing: tuple[Shortfall, ...]
    most_free: tuple[str, int] = ("", 0)
    """Of the first resource it lacks there, the machine with the most left free once the
    pods before it were placed, and how much."""


class Placement(Struct, frozen=True):
    """Where the pods went: how many of each group, on which machines."""

    wanted: int
    placed: int
    on: tuple[tuple[str, str, int], ...]
    """(group, machine, how many), in the order placed."""
    unplaced: Unplaced | None = None
    proven: bool = True
    """True when the answer is certain: every pod placed, or a pod that fits nowhere alone,
    or more asked than all the allowed machines have free."""

    @property
    def whole(self) -> bool:
        """Every pod found room."""
        return self.placed == self.wanted


def _how_many(room: MachineRoom, requests: Resources) -> int:
    """How many pods asking `requests` fit in `room`'s free room (NodeResourcesFit per pod)."""
    fits = room.max_pods - room.pod_count
    for resource, amount in requests.amounts:
        if amount <= 0:
            continue
        free = room.allocatable.get(resource) - room.requested.get(resource)
        fits = min(fits, free // amount)
    return max(fits, 0)


def _size(group: PodGroup, totals: Resources) -> tuple[float, str]:
    """A pod's share of the cluster's allocatable, its largest resource first: the order of
    first-fit decreasing. Ties go by name, so a placement is the same every run."""
    shares = [
        amount / max(totals.get(resource), 1)
        for resource, amount in group.requests.amounts
        if resource != PODS
    ]
    return (-max(shares, default=0.0), group.name)


def place(groups: Sequence[PodGroup], rooms: Mapping[str, MachineRoom]) -> Placement:
    """Every pod of `groups` placed on `rooms` together, by first-fit decreasing."""
    free = dict(rooms)
    totals = Resources()
    for machine_room in rooms.values():
        totals += machine_room.allocatable
    wanted = sum(g.count for g in groups)
    placed = 0
    on: list[tuple[str, str, int]] = []
    unplaced: Unplaced | None = None
    for group in sorted(groups, key=lambda g: _size(g, totals)):
        left = group.count
        for machine in group.machines:
            if left == 0:
                break
            room = free.get(machine)
            if room is None:
                continue
            count = min(left, _how_many(room, group.requests))
            if group.per_machine is not None:
                count = min(count, group.per_machine)
            if count <= 0:
                continue
            free[machine] = MachineRoom(
                room.name,
                room.allocatable,
                room.max_pods,
                room.requested + group.requests * count,
                room.pod_count + count,
            )
            on.append((group.name, machine, count))
            left -= count
        placed += group.count - left
        if left and unplaced is None:
            allowed = [free[m] for m in group.machines if m in free]
            # Of the machines that could hold it were they empty, the one closest to it now.
            hostable = [r for r in allowed if not shortfalls(group.requests, r.emptied())]
            near = closest(group.requests, hostable or allowed)
            missing = tuple(near[1]) if near else ()
            unplaced = Unplaced(
                group.name,
                group.requests,
                near[0].name if near else "",
                missing,
                _most_free(allowed, missing),
            )
    return Placement(
        wanted, placed, tuple(on), unplaced, proven=_proven(groups, rooms, placed == wanted)
    )


def _most_free(rooms: Sequence[MachineRoom], missing: Sequence[Shortfall]) -> tuple[str, int]:
    """The machine with the most of the first resource short left free, and how much."""
    short = next((s.resource for s in missing if s.resource != PODS), None)
    if short is None or not rooms:
        return ("", 0)
    room = max(rooms, key=lambda r: (r.allocatable.get(short) - r.requested.get(short), r.name))
    return room.name, max(room.allocatable.get(short) - room.requested.get(short), 0)


def _proven(groups: Sequence[PodGroup], rooms: Mapping[str, MachineRoom], whole: bool) -> bool:
    """Whether a failed placement is certain: some pod fits no allowed machine even alone, or
    the job asks more of a resource than its allowed machines have free in all."""
    if whole:
        return True
    for group in groups:
        allowed = [rooms[m] for m in group.machines if m in rooms]
        if group.count and not any(not shortfalls(group.requests, r) for r in allowed):
            return True
    machines = {m for g in groups for m in g.machines if m in rooms}
    free = Resources()
    for machine in machines:
        free += rooms[machine].allocatable - rooms[machine].requested
    asked = Resources()
    for group in groups:
        asked += group.requests * group.count
    return any(amount > free.get(resource) for resource, amount in asked.amounts)
