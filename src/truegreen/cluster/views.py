"""List items as every reader hands them on: as sent, less what nothing reads.

The live cluster decodes each page of a list, and a snapshot each saved list, into these views:
managedFields (and of a machine, all but what the fit reads) are skipped while decoding, never
built, and both readers answer with the same objects whatever else the bytes carried.
"""

import sys
from typing import Any

import msgspec

from truegreen.cluster.kinds import Kind, stamp
from truegreen.cluster.reads import KubeObject

# A value that is not an object where one belongs is kept as it came (checks judge it).
_NotAnObject = list[Any] | str | int | float | bool | None | msgspec.UnsetType
# A value that is not a list where one belongs, likewise.
_NotAList = dict[str, Any] | str | int | float | bool | None | msgspec.UnsetType


class _Metadata(msgspec.Struct, rename="camel"):
    """ObjectMeta as sent, less managedFields (about 40 % of a pod's bytes; nothing reads it).
    The fields of k8s.io/apimachinery/pkg/apis/meta/v1/types.go ObjectMeta."""

    name: Any = msgspec.UNSET
    generate_name: Any = msgspec.UNSET
    namespace: Any = msgspec.UNSET
    self_link: Any = msgspec.UNSET
    uid: Any = msgspec.UNSET
    resource_version: Any = msgspec.UNSET
    generation: Any = msgspec.UNSET
    creation_timestamp: Any = msgspec.UNSET
    deletion_timestamp: Any = msgspec.UNSET
    deletion_grace_period_seconds: Any = msgspec.UNSET
    labels: Any = msgspec.UNSET
    annotations: Any = msgspec.UNSET
    owner_references: Any = msgspec.UNSET
    finalizers: Any = msgspec.UNSET


class _Item(msgspec.Struct, rename="camel"):
    """An object whose top level is apiVersion, kind, metadata, spec and status."""

    api_version: Any = msgspec.UNSET
    kind: Any = msgspec.UNSET
    metadata: _Metadata | _NotAnObject = msgspec.UNSET
    spec: Any = msgspec.UNSET
    status: Any = msgspec.UNSET


# A machine is read for the fit, its conditions and its kubelet's version (doctor/knowledge/
# usage.py FIT_FIELDS): a real one is 5-15 KB of JSON, and every field kept is also walked by
# the redaction of each read.
class _MachineMetadata(msgspec.Struct):
    name: Any = msgspec.UNSET
    labels: Any = msgspec.UNSET
    creation_timestamp: Any = msgspec.field(default=msgspec.UNSET, name="creationTimestamp")
    """When the machine joined: a GPU machine that has just joined is still starting its GPU
    software (doctor/knowledge/gpu_supply.py)."""


class _MachineSpec(msgspec.Struct):
    unschedulable: Any = msgspec.UNSET
    taints: Any = msgspec.UNSET
    provider_id: Any = msgspec.field(default=msgspec.UNSET, name="providerID")
    """Which cloud the machine runs on (doctor/knowledge/stored_pod.py names it when the provider of
    the control plane is not known)."""


class _MachineCondition(msgspec.Struct, rename="camel"):
    """A machine's condition as doctor reads it: type, status, reason, message and when it last
    changed. The kubelet's `lastHeartbeatTime` (rewritten on every status update, different on
    every machine) is skipped: nothing reads it, and at 3,000 machines it is megabytes."""

    type: Any = msgspec.UNSET
    status: Any = msgspec.UNSET
    reason: Any = msgspec.UNSET
    message: Any = msgspec.UNSET
    last_transition_time: Any = msgspec.UNSET

    def __post_init__(self) -> None:
        # Every healthy machine's kubelet says the same words ("kubelet has sufficient memory
        # available"): one string for all of them, not one per machine.
        for name in ("type", "status", "reason", "message"):
            value = getattr(self, name)
            if isinstance(value, str):
                setattr(self, name, sys.intern(value))


class _MachineInfo(msgspec.Struct):
    """Of a machine's nodeInfo, its kubelet's version alone: from 1.35 a kubelet checks a pod's
    logins before starting it from an image the machine holds
    (doctor/knowledge/pull_verification.py)."""

    kubelet_version: Any = msgspec.field(default=msgspec.UNSET, name="kubeletVersion")

    def __post_init__(self) -> None:
        # The machines of a cluster run a version or two: one string for each, not per machine.
        if isinstance(self.kubelet_version, str):
            self.kubelet_version = sys.intern(self.kubelet_version)


class _MachineStatus(msgspec.Struct):
    capacity: Any = msgspec.UNSET
    allocatable: Any = msgspec.UNSET
    conditions: list[_MachineCondition | _NotAnObject] | _NotAList = msgspec.UNSET
    """Its kubelet's and the node lifecycle controller's word on it: a machine that is down is
    evidence (doctor/knowledge/reports.py)."""
    node_info: _MachineInfo | _NotAnObject = msgspec.field(default=msgspec.UNSET, name="nodeInfo")


class _Node(msgspec.Struct, rename="camel"):
    """A machine as doctor reads it: name, labels, creation, unschedulable, taints, providerID,
    capacity (a GPU machine's device plugin shows in it), allocatable, conditions, and its
    kubelet's version."""

    api_version: Any = msgspec.UNSET
    kind: Any = msgspec.UNSET
    metadata: _MachineMetadata | _NotAnObject = msgspec.UNSET
    spec: _MachineSpec | _NotAnObject = msgspec.UNSET
    status: _MachineStatus | _NotAnObject = msgspec.UNSET


def _plain(view: Any) -> Any:
    """A decoded view as the mapping it came from (only the fields that were sent), and a list
    of views as a list of those; any other value as it is (the values inside are plain)."""
    if isinstance(view, list):
        return [_plain(item) for item in view]
    if not isinstance(view, msgspec.Struct):
        return view
    names = view.__struct_encode_fields__
    return {
        names[at]: _plain(value)
        for at, value in enumerate(msgspec.structs.astuple(view))
        if value is not msgspec.UNSET
    }


_ITEM_VIEWS: dict[Kind, type[_Item | _Node]] = {
    **dict.fromkeys(
        (
            Kind.POD,
            Kind.DEPLOYMENT,
            Kind.STATEFUL_SET,
            Kind.DAEMON_SET,
            Kind.REPLICA_SET,
            Kind.JOB,
            Kind.LIMIT_RANGE,
            Kind.PERSISTENT_VOLUME_CLAIM,
        ),
        _Item,
    ),
    Kind.NODE: _Node,
}
"""Kinds whose objects have nothing at the top level but apiVersion, kind, metadata, spec and
status; any other kind (a Secret's data, a ServiceAccount's secrets) is decoded whole."""


def item_view(kind: Kind) -> type[Any]:
    """What one list item of `kind` is decoded into: its view, or the whole object."""
    return _ITEM_VIEWS.get(kind, dict[str, Any])


def item_list(kind: Kind) -> Any:
    """The type of a whole list of `kind`, decoded item by item as `item_view(kind)`."""
    return list[item_view(kind)]  # type: ignore[misc]


def as_object(item: Any, kind: Kind) -> KubeObject:
    """A decoded list item (`item_view(kind)`) as the object every check reads, stamped."""
    return stamp(_plain(item), kind)
