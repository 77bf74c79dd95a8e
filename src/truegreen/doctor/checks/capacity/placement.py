"""Placing every pod of a training job on the machines' free room at once.

kube-scheduler places one pod at a time, and a distributed job starts only when all of its pods
run: a job of four 8-GPU workers on one free 8-GPU machine has room for one rank, and the
others wait forever. So the job is placed whole: its pods, largest first, each on the first
machine (by name) where it fits and its rules allow it (first-fit decreasing), the room each
takes counted before the next. Where first-fit decreasing places every pod, a placement exists
for certain; where it does not, another placement might still exist (packing is a hard
problem), unless a pod fits on no machine alone, the job asks for more of a resource than all
the machines have free together, or more pods must be kept apart than there are places to keep
them in: `Placement.proven` says which.

The rules between pods (`Apart`, `Near`, `Spread`, from doctor/checks/capacity/filters/rules.py) are
the scheduler's filters that change as pods are placed: each pod placed counts for the next, as
kube-scheduler's PreFilter state counts a pod it has just assumed (pkg/scheduler/framework/plugins/
interpodaffinity and podtopologyspread, `AddPod`).
"""

from collections.abc import Iterable, Mapping, Sequence

from msgspec import Struct

from truegreen.doctor.knowledge.fit import MachineRoom, Shortfall, closest, shortfalls
from truegreen.doctor.knowledge.last_answer import LastAnswer
from truegreen.quantity import PODS, Resources

_ANY = 1 << 62
"""No limit from a rule."""


class Apart(Struct, frozen=True):
    """A pod of `first` and a pod of `second` never share a domain (the machines with one value
    of a topology key): required anti-affinity, checked both ways as the scheduler checks the
    new pod's terms and the placed pods' terms. `first == second`: at most one per domain. A
    machine without the key is in no domain and takes any number."""

    first: str
    second: str
    domains: tuple[tuple[str, str], ...]
    """(machine, domain) for the machines that have the topology key."""
    words: str
    """What the rule asks, after `the next`: `may not share a machine with another of its
    programs`."""
    measured: bool = True
    """A rule of the scheduler itself; False for one doctor infers (a volume's attachment)."""


class Near(Struct, frozen=True):
    """Pods of `group` run only in domains that already hold a pod of `members`, per term
    (required pod affinity: every term's key must be on the machine, and every term's domain
    must hold a matching pod). `may_start`: no matching pod runs yet and the group matches its
    own terms, so its first pod may start a domain anywhere (interpodaffinity/filtering.go
    `satisfyPodAffinity`)."""

    group: str
    terms: tuple[tuple[tuple[tuple[str, str], ...], frozenset[str]], ...]
    """Per term: (machine, domain) pairs for the machines with its key, and the domains that
    already hold a matching pod."""
    members: frozenset[str]
    """The job's pod sets whose pods match every term."""
    may_start: bool
    words: str
    measured: bool = True


class Spread(Struct, frozen=True):
    """Pods of `group` may not make the matching pods' count in one domain more than
    `max_skew` above the least-filled domain (topology spread with `whenUnsatisfiable:
    DoNotSchedule`, podtopologyspread/filtering.go `Filter`): `existing + self - minimum <=
    maxSkew`, the minimum taken as 0 while fewer than `min_domains` domains are eligible."""

    group: str
    values: tuple[tuple[str, str], ...]
    """(machine, domain) for every machine with the key; a machine without it is refused."""
    eligible: frozenset[str]
    """The machines whose pods are counted (the constraint's node inclusion policies)."""
    counts: tuple[tuple[str, int], ...]
    """Per eligible domain, the matching pods already there."""
    max_skew: int
    min_domains: int
    members: frozenset[str]
    """The job's pod sets whose pods the constraint's selector matches."""
    words: str
    measured: bool = True


Rule = Apart | Near | Spread


class PodGroup(Struct, frozen=True):
    """Identical pods of one pod set, to be placed."""

    name: str
    count: int
    requests: Resources
    machines: tuple[str, ...]
    """The machines its rules allow, in the order they are tried."""
    per_machine: int | None = None
    """At most this many on one machine; None: any."""
    rules: tuple[Rule, ...] = ()
    """Rules between pods that this set brings (each rule is carried by one set only)."""


class Unplaced(Struct, frozen=True):
    """The first pod that found no room, and how close it came."""

    group: str
    requests: Resources
    machine: str
    """The machine that missed it by the least, of those that could hold it when empty (of
    all it may use when none could); the first with room that a rule refused, when one did;
    "" when its rules allow none."""
    missing: tuple[Shortfall, ...]
    most_free: tuple[str, int] = ("", 0)
    """Of the first resource it lacks there, the machine with the most left free once the
    pods before it were placed, and how much."""
    rule: str = ""
    """What the rule that refused it asks (`Rule.words`), when a machine had room for it but a
    rule between pods said no; "" when room was what it lacked."""
    measured: bool = True
    """False when that rule is one doctor infers."""


class Placement(Struct, frozen=True):
    """Where the pods went: how many of each group, on which machines."""

    wanted: int
    placed: int
    on: tuple[tuple[str, str, int], ...]
    """(group, machine, how many), in the order placed."""
    unplaced: Unplaced | None = None
    proven: bool = True
    """True when the answer is certain: every pod placed, or a pod that fits nowhere alone,
    or more asked than all the allowed machines have free, or more pods to keep apart than
    there are domains."""

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


class _Rules:
    """The rules of one placement and what the pods placed so far count for them."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules = list(rules)
        # Per rule, per (term, domain): the pod sets this placement has put pods in.
        self._present: list[dict[tuple[int, str], set[str]]] = [{} for _ in self.rules]
        self._domains: list[list[dict[str, str]]] = [
            [dict(rule.domains)]
            if isinstance(rule, Apart)
            else [dict(pairs) for pairs, _ in rule.terms]
            if isinstance(rule, Near)
            else [dict(rule.values)]
            for rule in self.rules
        ]
        self._counts: list[dict[str, int]] = [
            dict(rule.counts) if isinstance(rule, Spread) else {} for rule in self.rules
        ]

    def involve(self, group: str) -> bool:
        """Whether any rule limits where `group`'s pods go."""
        return any(self._limits(rule, group) for rule in self.rules)

    def follows_others(self, group: str) -> bool:
        """`group` must run near pods of other sets: those go first."""
        return any(
            isinstance(rule, Near) and rule.group == group and group not in rule.members
            for rule in self.rules
        )

    @staticmethod
    def _limits(rule: Rule, group: str) -> bool:
        if isinstance(rule, Apart):
            return group in (rule.first, rule.second)
        return rule.group == group

    def cap(self, group: str, machine: str) -> tuple[int, Rule | None]:
        """How many more pods of `group` the rules let onto `machine` now, and the first rule
        that lets none."""
        most = _ANY
        for index, rule in enumerate(self.rules):
            if not self._limits(rule, group):
                continue
            allowed = self._cap(index, rule, group, machine)
            if allowed <= 0:
                return 0, rule
            most = min(most, allowed)
        return most, None

    def _cap(self, index: int, rule: Rule, group: str, machine: str) -> int:
        if isinstance(rule, Apart):
            domain = self._domains[index][0].get(machine)
            if domain is None:
                return _ANY
            here = self._present[index].get((0, domain), set())
            if rule.first == rule.second:
                return 0 if group in here else 1
            other = rule.second if group == rule.first else rule.first
            return 0 if other in here else _ANY
        if isinstance(rule, Near):
            return self._near_cap(index, rule, machine)
        return self._spread_cap(index, rule, group, machine)

    def _near_cap(self, index: int, rule: Near, machine: str) -> int:
        placed = self._present[index]
        matched = True
        for term, (_, present) in enumerate(rule.terms):
            domain = self._domains[index][term].get(machine)
            if domain is None:
                return 0  # every term's key must be on the machine
            if domain not in present and (term, domain) not in placed:
                matched = False
        if matched:
            return _ANY
        nothing_yet = not placed and not any(present for _, present in rule.terms)
        return _ANY if rule.may_start and nothing_yet else 0

    def _spread_cap(self, index: int, rule: Spread, group: str, machine: str) -> int:
        domain = self._domains[index][0].get(machine)
        if domain is None:
            return 0  # a machine without the key is refused
        counts = self._counts[index]
        least = min(counts.values()) if len(counts) >= max(rule.min_domains, 1) else 0
        here = counts.get(domain, 0)
        if group in rule.members:
            return rule.max_skew + least - here
        return _ANY if here - least <= rule.max_skew else 0

    def record(self, group: str, machine: str, count: int) -> None:
        """`count` pods of `group` were placed on `machine`."""
        for index, rule in enumerate(self.rules):
            if isinstance(rule, Spread):
                if group in rule.members and machine in rule.eligible:
                    domain = self._domains[index][0].get(machine)
                    if domain is not None:
                        self._counts[index][domain] = self._counts[index].get(domain, 0) + count
                continue
            if isinstance(rule, Apart) and group not in (rule.first, rule.second):
                continue
            if isinstance(rule, Near) and group not in rule.members:
                continue
            for term, domains in enumerate(self._domains[index]):
                domain = domains.get(machine)
                if domain is not None:
                    self._present[index].setdefault((term, domain), set()).add(group)


def place(groups: Sequence[PodGroup], rooms: Mapping[str, MachineRoom]) -> Placement:
    """Every pod of `groups` placed on `rooms` together, by first-fit decreasing, within the
    rules the groups carry."""
    free = dict(rooms)
    totals = _totals(rooms)
    rules = _Rules(rule for group in groups for rule in group.rules)
    wanted = sum(g.count for g in groups)
    placed = 0
    on: dict[tuple[str, str], int] = {}
    unplaced: Unplaced | None = None
    ordered = sorted(groups, key=lambda g: (rules.follows_others(g.name), *_size(g, totals)))
    for group in ordered:
        left, refused = _place_group(group, free, rules, on)
        placed += group.count - left
        if left and unplaced is None:
            unplaced = _unplaced(group, free, refused)
    return Placement(
        wanted,
        placed,
        tuple((group, machine, count) for (group, machine), count in on.items()),
        unplaced,
        proven=_proven(groups, rooms, placed == wanted),
    )


def _place_group(
    group: PodGroup,
    free: dict[str, MachineRoom],
    rules: _Rules,
    on: dict[tuple[str, str], int],
) -> tuple[int, tuple[str, Rule] | None]:
    """Place what fits of `group`, in passes over its machines while a pass places any (a
    rule may open a machine passed over once a pod lands elsewhere); the pods left, and the
    first machine with room that a rule refused."""
    left = group.count
    refused: tuple[str, Rule] | None = None
    # Each pass that goes on places a pod at least: at most one pass per pod.
    for _ in range(group.count if rules.involve(group.name) else 1):
        before = left
        for machine in group.machines:
            if left == 0:
                break
            room = free.get(machine)
            if room is None:
                continue
            fit = min(left, _how_many(room, group.requests))
            if group.per_machine is not None:
                fit = min(fit, group.per_machine - on.get((group.name, machine), 0))
            if fit <= 0:
                continue
            cap, rule = rules.cap(group.name, machine)
            count = min(fit, cap)
            if count <= 0:
                if refused is None and rule is not None:
                    refused = (machine, rule)
                continue
            free[machine] = MachineRoom(
                room.name,
                room.allocatable,
                room.max_pods,
                room.requested + group.requests * count,
                room.pod_count + count,
            )
            on[(group.name, machine)] = on.get((group.name, machine), 0) + count
            rules.record(group.name, machine, count)
            left -= count
        if left == before or not left:
            break  # a pass placed none (no later one will), or all are placed
    return left, refused


def _unplaced(
    group: PodGroup, free: Mapping[str, MachineRoom], refused: tuple[str, Rule] | None
) -> Unplaced:
    """Why the first pod of `group` left over found no place: a rule, or room."""
    if refused is not None:
        machine, rule = refused
        return Unplaced(
            group.name, group.requests, machine, (), rule=rule.words, measured=rule.measured
        )
    allowed = [free[m] for m in group.machines if m in free]
    # Of the machines that could hold it were they empty, the one closest to it now.
    hostable = [r for r in allowed if not shortfalls(group.requests, r.emptied())]
    near = closest(group.requests, hostable or allowed)
    missing = tuple(near[1]) if near else ()
    return Unplaced(
        group.name,
        group.requests,
        near[0].name if near else "",
        missing,
        _most_free(allowed, missing),
    )


def _total_allocatable(rooms: Mapping[str, MachineRoom]) -> Resources:
    totals = Resources()
    for machine_room in rooms.values():
        totals += machine_room.allocatable
    return totals


_totals = LastAnswer(_total_allocatable)
"""What every machine can hold in all, for the last machines (doctor/knowledge/last_answer.py): the
namespaces of a run over many place their jobs on the same ones."""


def _most_free(rooms: Sequence[MachineRoom], missing: Sequence[Shortfall]) -> tuple[str, int]:
    """The machine with the most of the first resource short left free, and how much."""
    short = next((s.resource for s in missing if s.resource != PODS), None)
    if short is None or not rooms:
        return ("", 0)
    room = max(rooms, key=lambda r: (r.allocatable.get(short) - r.requested.get(short), r.name))
    return room.name, max(room.allocatable.get(short) - room.requested.get(short), 0)


def _proven(groups: Sequence[PodGroup], rooms: Mapping[str, MachineRoom], whole: bool) -> bool:
    """Whether a failed placement is certain: some pod fits no allowed machine even alone, the
    job asks more of a resource than its allowed machines have free in all, or a set must keep
    more pods apart than its allowed machines make domains."""
    if whole:
        return True
    for group in groups:
        allowed = [rooms[m] for m in group.machines if m in rooms]
        if group.count and not any(not shortfalls(group.requests, r) for r in allowed):
            return True
        if _more_than_domains(group, groups, rooms):
            return True
    machines = {m for g in groups for m in g.machines if m in rooms}
    free = Resources()
    for machine in machines:
        free += rooms[machine].allocatable - rooms[machine].requested
    asked = Resources()
    for group in groups:
        asked += group.requests * group.count
    return any(amount > free.get(resource) for resource, amount in asked.amounts)


def _more_than_domains(
    group: PodGroup, groups: Sequence[PodGroup], rooms: Mapping[str, MachineRoom]
) -> bool:
    """`group` keeps its own pods one per domain (a scheduler rule) and has more pods than the
    machines that could hold one now make domains, each of those having the key."""
    hosts = [m for m in group.machines if m in rooms and not shortfalls(group.requests, rooms[m])]
    for rule in (r for g in groups for r in g.rules):
        if not (isinstance(rule, Apart) and rule.first == rule.second == group.name):
            continue
        domains = dict(rule.domains)
        if not rule.measured or any(m not in domains for m in hosts):
            continue
        if group.count > len({domains[m] for m in hosts}):
            return True
    return False
