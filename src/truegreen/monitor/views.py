"""What the watch cache keeps of each object where a cluster's worth of them would not fit.

A machine's full object (its image list, addresses, attached volumes) runs to tens of kilobytes;
the capacity check reads only its name, labels, creation, scheduling switches, capacity and
allocatable resources, and conditions (doctor/knowledge/fit.py, gpu_supply.py,
checks/capacity/machines_down.py and kubelet_admission.py). Pods across the cluster are kept
as the capacity fold's own view (doctor/knowledge/usage.py `CheckedPodView`). Objects of the
training namespace are kept whole: there are few.
"""

from typing import Any

import msgspec

from truegreen.cluster.kinds import Kind


class _NodeMetadata(msgspec.Struct, omit_defaults=True, rename="camel"):
    name: str = ""
    uid: str | None = None
    labels: dict[str, str] | None = None
    creation_timestamp: str | None = None
    """A GPU machine that has just joined is still starting its GPU software (gpu_supply.py)."""


class _NodeSpec(msgspec.Struct, omit_defaults=True, rename="camel"):
    unschedulable: bool | None = None
    taints: list[dict[str, Any]] | None = None
    provider_id: str | None = msgspec.field(default=None, name="providerID")


class _NodeInfo(msgspec.Struct, omit_defaults=True, rename="camel"):
    kubelet_version: str | None = None
    """From 1.35 the kubelet checks a pod's logins before starting it from an image the
    machine holds (doctor/knowledge/pull_verification.py), as doctor's image-pull check reads."""


class _NodeStatus(msgspec.Struct, omit_defaults=True, rename="camel"):
    capacity: dict[str, Any] | None = None
    """Beside allocatable: the device plugin's unhealthy GPUs are in capacity only
    (devicemanager `GetCapacity`), which doctor/knowledge/gpu_supply.py reads."""
    allocatable: dict[str, Any] | None = None
    conditions: list[dict[str, Any]] | None = None
    """`Ready` (a machine down) and the pressures its kubelet admits by (a handful each)."""
    node_info: _NodeInfo | None = None


class NodeView(msgspec.Struct, omit_defaults=True, rename="camel"):
    """A machine as the capacity check reads it: name, labels, creation, cordon, taints and
    providerID, capacity, allocatable and conditions; and its kubelet's version, as the
    image-pull check reads it."""

    kind: str = ""
    api_version: str = ""
    metadata: _NodeMetadata = msgspec.field(default_factory=_NodeMetadata)
    spec: _NodeSpec = msgspec.field(default_factory=_NodeSpec)
    status: _NodeStatus = msgspec.field(default_factory=_NodeStatus)


LIST_VIEWS: dict[Kind, type[Any]] = {Kind.NODE: NodeView}
"""Kinds listed cluster-wide whose objects the cache keeps as a view."""
