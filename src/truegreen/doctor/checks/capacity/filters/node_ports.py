"""NodePorts (pkg/scheduler/framework/plugins/nodeports/node_ports.go): a pod that asks for a
port on its machine (a container's `hostPort`) runs only where no pod already holds that port
for the same protocol and address, and two of the job's pods that ask for the same port never
share a machine.

A conflict is framework.HostPortInfo's `CheckConflict` (pkg/scheduler/framework/types.go): the
same port and protocol, and the same address or either one binding every address (an empty
`hostIP` is 0.0.0.0, an empty protocol TCP). The ports come from the regular containers and the
sidecars (init containers with `restartPolicy: Always`), for the incoming pod and the pods
already placed alike: kubernetes PR #132040 (1.34, backported to 1.33) made `getContainerPorts`
and NodeInfo's used ports count the sidecars, which run as long as the pod; a plain init
container has ended before the pod runs and holds nothing. A `hostPort` of 0 holds nothing, and
under `hostNetwork` the API server sets each port's `hostPort` to its `containerPort` when none
is given, init containers' too (pkg/apis/core/v1/defaults.go `SetDefaults_PodSpec`,
`defaultHostNetworkPorts`), which a job's template has not been through yet.

The ports held are those of every pod on a machine, of any namespace, as NodeInfo.UsedPorts
sums them (terminating ones too: they hold their ports until they are gone): the namespace's
pods, and the other namespaces' pods the capacity fold keeps for their host ports. Where those
were not read, a job that asks for a host port has the rule unchecked, never a fit.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.doctor.checks.capacity.filters.cycle import Cycle, Placed
from truegreen.doctor.checks.capacity.filters.framework import (
    NEW_SNAPSHOT,
    Blocker,
    Exclusion,
    Found,
    Unchecked,
)
from truegreen.doctor.checks.capacity.placement import Apart

NAME: Final = "NodePorts"
READS_PODS: Final = True
EVERY_ADDRESS: Final = "0.0.0.0"


class HostPort(Struct, frozen=True):
    """A port a pod holds on its machine."""

    address: str
    protocol: str
    port: int

    def __str__(self) -> str:
        return f"{self.port}/{self.protocol}"


def host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """The ports a pod spec holds on its machine, each once: its regular containers' and its
    sidecars'."""
    host_network = spec.get("hostNetwork") is True
    held: list[HostPort] = []
    sidecars = [c for c in o.init_containers(spec) if o.is_sidecar(c)]
    for container in [*o.containers(spec), *sidecars]:
        for port in (o.mapping(p) for p in o.sequence(container.get("ports"))):
            number = o.integer(port.get("hostPort"))
            if not number and host_network:
                number = o.integer(port.get("containerPort"))
            if number > 0:
                address = str(port.get("hostIP") or EVERY_ADDRESS)
                held.append(HostPort(address, str(port.get("protocol") or "TCP"), number))
    return tuple(dict.fromkeys(held))


def conflict(one: HostPort, other: HostPort) -> bool:
    """Whether the two ports cannot be held on one machine at once."""
    return (
        one.port == other.port
        and one.protocol == other.protocol
        and (one.address == other.address or EVERY_ADDRESS in (one.address, other.address))
    )


def _shared(wanted: Sequence[HostPort], held: Sequence[HostPort]) -> list[HostPort]:
    """The ports of `wanted` that conflict with one of `held`."""
    return [w for w in wanted if any(conflict(w, h) for h in held)]


def _holders(cycle: Cycle, wanted: Sequence[HostPort]) -> dict[str, list[Placed]]:
    """Per machine, the pods there, of any namespace read, that hold a port `wanted` needs."""
    holders: dict[str, list[Placed]] = {}
    for pod in cycle.on_machines():
        if pod.machine in cycle.labels and _shared(wanted, host_ports(pod.spec)):
            holders.setdefault(pod.machine, []).append(pod)
    return holders


def filter(cycle: Cycle, found: Found) -> None:
    """The machines whose pods hold a port a pod set needs, and one pod per machine for the pod
    sets that need the same port."""
    wanted = {pod_set.name: host_ports(pod_set.spec) for pod_set in cycle.sets}
    machines = tuple((m, m) for m in sorted(cycle.labels))
    for index, pod_set in enumerate(cycle.sets):
        ports = wanted[pod_set.name]
        if not ports:
            continue
        holders = _holders(cycle, ports)
        named = ", ".join(str(p) for p in ports)
        if cycle.elsewhere is None:
            found.uncheck(
                Unchecked(
                    "the rule that two programs may not hold one port on a machine",
                    "the snapshot holds no programs of other spaces, which may hold the ports "
                    "it needs (a snapshot made before truegreen kept them)",
                    NEW_SNAPSHOT,
                    f"NodePorts: {pod_set.name} asks for hostPort {named}; other namespaces' "
                    "pods are not in the snapshot (its capacity fold has no rule_pods)",
                )
            )
        found.exclude(
            Exclusion(
                pod_set.name,
                tuple(sorted(holders)),
                f"already running a program that holds a port it needs ({named})",
                "stop the programs that hold the port when they are done, or give the training "
                "job's programs another port in its settings",
                f"NodePorts: {pod_set.name} asks for hostPort {named}; held on "
                + "; ".join(
                    f"{machine} by {', '.join(p.named(cycle.namespace) for p in pods)}"
                    for machine, pods in sorted(holders.items())
                ),
                # NodePorts' Filter refuses as Unschedulable: preemption may free the ports.
                blockers=tuple(
                    Blocker(
                        machine,
                        p.namespace or cycle.namespace,
                        p.name,
                        p.machine,
                        p.priority,
                        "holds port "
                        + ", ".join(str(h) for h in _shared(ports, host_ports(p.spec))),
                    )
                    for machine, pods in sorted(holders.items())
                    for p in pods
                ),
            )
        )
        for other in cycle.sets[index:]:
            shared = _shared(ports, wanted[other.name])
            if not shared:
                continue
            both = ", ".join(str(p) for p in shared)
            words = (
                f"may not share a machine with another of its programs (each holds port {both})"
                if other.name == pod_set.name
                else f"may not share a machine with the programs of '{other.name}' (both hold "
                f"port {both})"
            )
            found.rule(
                pod_set.name,
                Apart(pod_set.name, other.name, machines, words),
                "give the training job's programs different ports, or run them on more machines",
                f"NodePorts: {pod_set.name} and {other.name} both ask for hostPort {both}",
            )
