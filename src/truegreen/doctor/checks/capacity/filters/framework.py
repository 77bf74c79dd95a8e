"""What the scheduler's filters ask of a job's placement, in the words findings use.

Shared by the pod and volume rules (doctor/checks/capacity/filters/rules.py) and the device rules
(doctor/checks/capacity/filters/dynamic_resources.py, device_room.py):
machines a rule takes away from a pod set, rules between pods, rules doctor could not evaluate,
and the reads they needed that failed.
"""

from collections.abc import Collection, Mapping
from typing import Any, Final

from msgspec import Struct

from truegreen.cluster import CantRead, Kind
from truegreen.doctor.checks.capacity.placement import Rule
from truegreen.quantity import Resources


class JobPodSet(Struct, frozen=True):
    """A pod set of the judged job, to be placed: its name, pod spec and pod labels."""

    name: str
    spec: Mapping[str, Any]
    labels: Mapping[str, str]


class Blocker(Struct, frozen=True):
    """A running pod whose presence refuses a machine to a pod set: its host port, or pod
    anti-affinity (its own, or the set's against it). NodePorts and InterPodAffinity refuse
    such a machine as `Unschedulable`, not UnschedulableAndUnresolvable, so preemption tries
    it (framework/preemption/preemption.go `nodesWherePreemptionMightHelp`): removing the
    lower-priority pods from that very machine and filtering again
    (defaultpreemption `SelectVictimsOnNode`) gives it back when they were all the reason."""

    machine: str
    """The machine refused."""
    namespace: str
    pod: str
    on: str
    """The machine the pod runs on (another one of the refused machine's zone, for a rule
    over zones: preempting on the refused machine does not remove it)."""
    priority: int
    words: str
    """What it does to the job, in plain words: `holds port 9400/TCP`."""


class Exclusion(Struct, frozen=True):
    """Machines a rule takes away from a pod set, in plain words."""

    group: str
    machines: tuple[str, ...]
    reason: str
    """After the count of machines: `can't reach its volume 'datasets'`; or, `everywhere`,
    on its own: `its volume 'x' may be used by one program at a time, and 'p' uses it`."""
    todo: str
    """The step that gives the pod set its machines back, in plain words."""
    detail: str
    """The same in Kubernetes terms, for --verbose."""
    everywhere: bool = False
    """Every machine is refused, for a reason that is not the machines'."""
    measured: bool = True
    """A rule of the scheduler itself; False for one doctor infers (a volume's attachment)."""
    blockers: tuple[Blocker, ...] = ()
    """The running pods that cause it, per machine refused, where the scheduler's preemption
    may resolve it (none: it never does)."""

    def preempted(self, machine: str, priority: int) -> tuple[Blocker, ...] | None:
        """The pods whose preemption for a pod of `priority` gives `machine` back, all on that
        machine and of a lower priority; None when preemption does not give it back (or the
        machine is not refused)."""
        if machine not in self.machines:
            return ()
        there = tuple(b for b in self.blockers if b.machine == machine)
        if not there or any(b.on != machine or b.priority >= priority for b in there):
            return None
        return there


class Wait(Struct, frozen=True):
    """A volume the job mounts that running training jobs use, and that one program may use at
    a time: every machine refuses the job until they finish, a wait, never a machine missing."""

    claim: str
    jobs: tuple[str, ...]
    detail: str


NEW_SNAPSHOT: Final = (
    "Take a new snapshot of the space (`truegreen snapshot`), or run doctor against the live "
    "cluster"
)
"""What to do about a rule a snapshot cannot answer because it was made before truegreen kept
what the rule reads (the other namespaces' pods on the machines: `ClusterUsage.rule_pods`)."""


class Unchecked(Struct, frozen=True):
    """A rule doctor could not evaluate, and why, in plain words."""

    rule: str
    """`the training job's rule about which programs it must stay apart from`."""
    why: str
    todo: str
    detail: str


class FailedRead(Struct, frozen=True):
    """A read a rule needed that could not look."""

    kind: Kind
    cant: CantRead
    everywhere: bool = False
    """The read covered every namespace."""
    listed: bool = False
    """A kind mostly got by name was listed whole (every PersistentVolume)."""


class DeviceRoom(Struct, frozen=True):
    """Devices as resources: what each pod asks, what each machine has and has in use."""

    requests: tuple[tuple[str, Resources], ...] = ()
    """Per pod set, each pod's devices (`gpu.example.com devices`: 2)."""
    machines: tuple[tuple[str, Resources, Resources], ...] = ()
    """Per machine: the devices there, and those already allocated."""
    offered: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per kind of device the pods ask for, the machines that have such devices, free or not."""
    holders: tuple[tuple[str, frozenset[str], Resources], ...] = ()
    """Per machine, of the devices allocated there: those whose claims are reserved for pods of
    the namespace alone, with the names of those pods (the devices come back once they are
    done)."""
    classes: tuple[tuple[str, str], ...] = ()
    """Per kind of device the pods ask for, the DeviceClass its requests name."""

    def of(self, group: str) -> Resources:
        """The devices each pod of `group` asks for."""
        return dict(self.requests).get(group, Resources())

    def held_by(self, machine: str, pods: Collection[str]) -> Resources:
        """The devices allocated on `machine` that come back once the pods named `pods` are done:
        those of claims reserved for none but them (pkg/controller/resourceclaim/controller.go
        `syncClaim` drops a done pod's reservation and clears the allocation of a claim no pod
        reserves any more)."""
        return sum(
            (
                held
                for name, reserved, held in self.holders
                if name == machine and reserved.issubset(pods)
            ),
            Resources(),
        )

    def on(self, machine: str) -> tuple[Resources, Resources]:
        """The devices on `machine`, and those in use."""
        for name, there, used in self.machines:
            if name == machine:
                return there, used
        return Resources(), Resources()


class Found:
    """What the rules found so far: built up by each rule, then frozen into `Rules`."""

    def __init__(self) -> None:
        self.exclusions: list[Exclusion] = []
        self.waits: list[Wait] = []
        self.rules: dict[str, list[Rule]] = {}
        self.todos: dict[str, str] = {}
        self.unchecked: list[Unchecked] = []
        self.failed: list[FailedRead] = []
        self.details: list[str] = []
        self.devices = DeviceRoom()

    def rule(self, group: str, rule: Rule, todo: str, detail: str) -> None:
        """Pod set `group` carries `rule`; `todo` makes room under it."""
        self.rules.setdefault(group, []).append(rule)
        self.todos.setdefault(rule.words, todo)
        self.details.append(detail)

    def exclude(self, exclusion: Exclusion) -> None:
        """A rule takes machines away (nothing when it takes none)."""
        if exclusion.machines:
            self.exclusions.append(exclusion)
            self.details.append(exclusion.detail)

    def wait(self, wait: Wait) -> None:
        """Every machine refuses the job until running training jobs finish (each said once)."""
        if wait not in self.waits:
            self.waits.append(wait)
            self.details.append(wait.detail)

    def uncheck(self, unchecked: Unchecked) -> None:
        """A rule doctor could not evaluate (each said once)."""
        if unchecked not in self.unchecked:
            self.unchecked.append(unchecked)
            self.details.append(unchecked.detail)

    def fail(self, failed: FailedRead) -> None:
        """A read a rule needed failed (each said once)."""
        if failed not in self.failed:
            self.failed.append(failed)
