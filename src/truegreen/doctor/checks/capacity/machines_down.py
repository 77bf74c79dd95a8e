"""Every machine that offers the job's devices is down: bringing them back is the remedy.

When the only machines with a resource the job asks for (`nvidia.com/gpu`, or devices of dynamic
resource allocation its pods claim) are not ready or can't be reached (their kubelet's `Ready`
condition not True, or the node lifecycle controller's `node.kubernetes.io/not-ready` /
`unreachable` taints: pkg/controller/nodelifecycle), no setting of the job and no taint or
reservation elsewhere changes anything: the scheduler's other reasons (a control plane reserved
by its own taint, a CPU machine without the device) are true and beside the point. Everything
here is pure.
"""

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.container_resources import is_extended
from truegreen.doctor.knowledge.taints import MachineState, system_taint
from truegreen.quantity import QuantityError, parse_quantity

_DOWN_STATES = frozenset({MachineState.NOT_READY, MachineState.UNREACHABLE})


class DownSupply(Struct, frozen=True):
    """A resource the job asks for that only machines which are down offer."""

    resource: str
    machines: tuple[str, ...]
    states: tuple[str, ...]
    """Per machine, what its conditions say (`Ready=Unknown: Kubelet stopped posting node
    status.`)."""


def _offers(machine: Mapping[str, Any], resource: str) -> bool:
    value = o.mapping(o.mapping(machine.get("status")).get("allocatable")).get(resource)
    try:
        return value is not None and parse_quantity(str(value)) > 0
    except QuantityError:
        return False


def machine_down(machine: Mapping[str, Any]) -> str | None:
    """Why the machine is down, in its controllers' words; None when it is up."""
    ready = o.condition(machine, "Ready")
    if ready is not None and ready.get("status") != "True":
        message = str(ready.get("message") or ready.get("reason") or "")
        return f"Ready={ready.get('status')}: {message}".rstrip(": ")
    for taint in o.sequence(o.mapping(machine.get("spec")).get("taints")):
        known = system_taint(str(o.mapping(taint).get("key") or ""))
        if known is not None and known.state in _DOWN_STATES:
            return f"taint {o.mapping(taint).get('key')}:{o.mapping(taint).get('effect')}"
    return None


def down_supply(
    machines: Sequence[KubeObject],
    requested: frozenset[str],
    devices: Mapping[str, Collection[str]],
) -> DownSupply | None:
    """The first extended resource the job asks for, then the first kind of device it claims
    (`devices`: the machines whose ResourceSlices have such devices, by kind), whose every
    offering machine is down, while some other machine is up; None when each has a machine that
    is up, when none offers it (no such device: another finding), or when every machine is down
    (no machine may run anything: the placement says so). A machine that is down keeps its
    ResourceSlices: the kubelet plugin that would delete them is down with it."""
    if all(machine_down(m) is not None for m in machines):
        return None
    wanted = [
        *((r, [m for m in machines if _offers(m, r)]) for r in sorted(requested) if is_extended(r)),
        *((r, [m for m in machines if o.name_of(m) in devices[r]]) for r in sorted(devices)),
    ]
    for resource, offering in wanted:
        why = [machine_down(m) for m in offering]
        if offering and all(w is not None for w in why):
            return DownSupply(
                resource,
                tuple(o.name_of(m) for m in offering),
                tuple(f"{o.name_of(m)}: {w}" for m, w in zip(offering, why, strict=True)),
            )
    return None
