"""kube-scheduler's DynamicResources filter plugin (pkg/scheduler/framework/plugins/
dynamicresources): the resource claims a pod spec names, and the devices a job's claims ask for
as room on each machine, counted in device_room.py.
"""

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.checks.capacity.filters.cycle import Cycle
from truegreen.doctor.checks.capacity.filters.framework import DeviceRoom, Found, JobPodSet
from truegreen.doctor.environment import DeviceReads
from truegreen.kubectl import Kubectl


def claim_refs(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A pod spec's `resourceClaims` entries."""
    return [o.mapping(c) for c in o.sequence(spec.get("resourceClaims"))]


def template_names(specs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The claim templates the pod specs name."""
    names = [str(c.get("resourceClaimTemplateName") or "") for s in specs for c in claim_refs(s)]
    return list(dict.fromkeys(n for n in names if n))


def device_rules(
    sets: Sequence[JobPodSet],
    namespace: str,
    nodes: Sequence[KubeObject],
    reads: DeviceReads | None,
    kubectl: Kubectl,
    found: Found,
    pods: Mapping[str, str] = MappingProxyType({}),
) -> DeviceRoom:
    """The devices the job's pod sets ask for, as room per machine (device_room.py); what cannot
    be evaluated goes to `found`. `pods`: the uid of each of the namespace's pods on a machine, by
    name (the devices reserved for them alone are theirs)."""
    if not any(claim_refs(s.spec) for s in sets):
        return DeviceRoom()
    # Imported on use: only a job that claims devices runs it (doctor's start-up on a small
    # namespace, bench/imports.py).
    from truegreen.doctor.checks.capacity.filters.device_room import device_room

    return device_room(sets, namespace, nodes, reads, kubectl, found, pods)


NAME: Final = "DynamicResources"
READS_PODS: Final = False


def filter(cycle: Cycle, found: Found) -> None:
    """The devices the job's pods claim, as room per machine (pkg/scheduler/framework/plugins/
    dynamicresources); what cannot be evaluated goes to `found`."""
    pods = {p.name: p.uid for p in cycle.placed or ()}
    found.devices = device_rules(
        cycle.sets, cycle.namespace, cycle.nodes, cycle.devices, cycle.kubectl, found, pods
    )
