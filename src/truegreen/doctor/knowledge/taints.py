"""The taints a controller puts on a machine, and what each says about the machine.

A taint that a controller owns is not a reservation: it says what is wrong with the machine,
and the controller takes it off when that is over (and puts it back when someone removes it by
hand). Removing one places work on a machine that is down, starving or leaving, so no remedy here
ever removes one; each says what to do about the machine instead.

Sources: k8s.io/api core/v1 well_known_taints.go (the node lifecycle controller's taints, by
TaintNodesByCondition and TaintBasedEvictions), k8s.io/cloud-provider api/well_known_taints.go,
kubernetes/autoscaler cluster-autoscaler/utils/taints/taints.go, and Karpenter's
pkg/apis/v1/taints.go (v1.0 on) and pkg/apis/v1beta1/taints.go (v0.32 to v0.37, whose only
taint is the disruption one).
"""

from collections.abc import Sequence
from enum import StrEnum

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.container_resources import is_extended
from truegreen.gpu_resources import is_gpu_resource


class MachineState(StrEnum):
    """What a controller's taint says about a machine."""

    NOT_READY = "not-ready"
    UNREACHABLE = "unreachable"
    CLOSED = "closed"
    MEMORY_PRESSURE = "memory-pressure"
    DISK_PRESSURE = "disk-pressure"
    PID_PRESSURE = "pid-pressure"
    NO_NETWORK = "no-network"
    OUT_OF_SERVICE = "out-of-service"
    STARTING = "starting"
    SHUT_DOWN = "shut-down"
    LEAVING = "leaving"
    """Being removed by an autoscaler (cluster-autoscaler, Karpenter)."""


class SystemTaint(Struct, frozen=True):
    """A controller's taint: the state it marks, and plain words for it."""

    state: MachineState
    one: str
    """Words for one machine in this state, after its name: `is not ready`."""
    many: str
    """The same for several: `are not ready`."""
    todo: str
    """What to do about it: `{names}` is filled with the machines' names, `{check}` with the
    command that shows the machine's state (a closed machine's remedy, with its command, is
    the capacity check's own)."""


_DOWN = (
    "look at {names} ({check} shows why it is not ready) and bring it back or replace it; the "
    "cluster lets work onto it again by itself once it is ready"
)
_PRESSURE = (
    "free {what} on {names} ({check} shows what uses it); the cluster lets new work onto it "
    "again by itself once the pressure is over"
)

_KARPENTER_REMOVING = SystemTaint(
    MachineState.LEAVING,
    "is being removed by Karpenter",
    "are being removed by Karpenter",
    "wait: Karpenter adds a machine for waiting work when its limits allow",
)

SYSTEM_TAINTS: dict[str, SystemTaint] = {
    "node.kubernetes.io/not-ready": SystemTaint(
        MachineState.NOT_READY, "is not ready", "are not ready", _DOWN
    ),
    "node.kubernetes.io/unreachable": SystemTaint(
        MachineState.UNREACHABLE, "can't be reached", "can't be reached", _DOWN
    ),
    "node.kubernetes.io/unschedulable": SystemTaint(
        MachineState.CLOSED,
        "is closed to new work",
        "are closed to new work",
        "ask whoever closed {names} whether the maintenance is done (an administrator closes "
        "machines on purpose)",
    ),
    "node.kubernetes.io/memory-pressure": SystemTaint(
        MachineState.MEMORY_PRESSURE,
        "is short of memory",
        "are short of memory",
        _PRESSURE.replace("{what}", "memory"),
    ),
    "node.kubernetes.io/disk-pressure": SystemTaint(
        MachineState.DISK_PRESSURE,
        "is short of disk space",
        "are short of disk space",
        _PRESSURE.replace("{what}", "disk space"),
    ),
    "node.kubernetes.io/pid-pressure": SystemTaint(
        MachineState.PID_PRESSURE,
        "is running out of process slots",
        "are running out of process slots",
        _PRESSURE.replace("{what}", "process slots"),
    ),
    "node.kubernetes.io/network-unavailable": SystemTaint(
        MachineState.NO_NETWORK,
        "has no network set up",
        "have no network set up",
        "check the cluster's network add-on on {names} ({check}); the cluster lets work onto it "
        "once its network is up",
    ),
    "node.kubernetes.io/out-of-service": SystemTaint(
        MachineState.OUT_OF_SERVICE,
        "was taken out of service",
        "were taken out of service",
        "ask your cluster admin whether {names} comes back (it was taken out of service on "
        "purpose)",
    ),
    "node.cloudprovider.kubernetes.io/uninitialized": SystemTaint(
        MachineState.STARTING,
        "is still starting",
        "are still starting",
        "wait for {names} to finish starting; if it stays like this, check the cloud's "
        "controller ({check})",
    ),
    "node.cloudprovider.kubernetes.io/shutdown": SystemTaint(
        MachineState.SHUT_DOWN,
        "is shut down",
        "are shut down",
        "start {names} again in the cloud, or replace it",
    ),
    "ToBeDeletedByClusterAutoscaler": SystemTaint(
        MachineState.LEAVING,
        "is being removed by the autoscaler",
        "are being removed by the autoscaler",
        "wait: the autoscaler adds a machine for waiting work when it can",
    ),
    "karpenter.sh/disrupted": _KARPENTER_REMOVING,
    # Karpenter v0.32 to v0.37 (its v1beta1 API) marks the same with
    # `karpenter.sh/disruption=disrupting:NoSchedule` (pkg/apis/v1beta1/taints.go
    # DisruptionTaintKey, DisruptionNoScheduleTaint); v1.0 renamed it `karpenter.sh/disrupted`.
    "karpenter.sh/disruption": _KARPENTER_REMOVING,
    "karpenter.sh/unregistered": SystemTaint(
        MachineState.STARTING,
        "is still joining the cluster",
        "are still joining the cluster",
        "wait for {names} to join; if it stays like this, look at Karpenter's log",
    ),
}
"""Every controller-owned taint that keeps new work off a machine (NoSchedule or NoExecute)."""


def system_taint(key: str) -> SystemTaint | None:
    """What a taint says about its machine when a controller owns it; None for any other."""
    return SYSTEM_TAINTS.get(key)


def reserves_resource(key: str, nodes: Sequence[KubeObject]) -> bool:
    """Whether a taint keyed `key` keeps machines for the work that asks for the extended
    resource of that name (`nvidia.com/gpu`): a GPU resource, or one a machine reports.

    That is the reservation Kubernetes advises for special hardware (website
    concepts/scheduling-eviction/taint-and-toleration.md, "Nodes with Special Hardware": taint
    the machines with the extended resource's name), which GKE puts on every GPU node pool
    itself and the ExtendedResourceToleration admission plugin is built on
    (plugin/pkg/admission/extendedresourcetoleration/admission.go `Admit`: a toleration for
    each extended resource a pod requests, so only such pods pass). Lifting it lets every other
    program onto those machines, so no remedy ever does; a machine whose GPU software is down
    reports no GPUs yet keeps its GPU taint, hence the GPU names without a machine's report."""
    if not is_extended(key):
        return False
    return is_gpu_resource(key) or any(
        key in o.mapping(o.mapping(node.get("status")).get(part))
        for node in nodes
        for part in ("allocatable", "capacity")
    )
