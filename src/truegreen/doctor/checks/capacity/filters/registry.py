"""The scheduler's filter plugins: NODE_FILTERS judge a pod spec against one machine alone,
FILTERS the job's pods against the cluster's state, each in the order it runs (kube-scheduler
lists its plugins in one registry, `pkg/scheduler/framework/plugins/registry.go`).

Adding a filter is one module (its NAME, READS_PODS and `filter(cycle, found)`; or, for one
machine alone, NAME and `exclusion(node, spec)`) and one line here.
"""

from collections.abc import Mapping
from typing import Any, Protocol

from truegreen.cluster import KubeObject
from truegreen.doctor.checks.capacity.filters import (
    dynamic_resources,
    inter_pod_affinity,
    node_affinity,
    node_ports,
    node_unschedulable,
    pod_topology_spread,
    taint_toleration,
    volume_attachment,
    volume_binding,
    volume_restrictions,
    volume_zone,
)
from truegreen.doctor.checks.capacity.filters.cycle import Cycle
from truegreen.doctor.checks.capacity.filters.framework import Found


class NodeFilter(Protocol):
    """One filter plugin of a pod spec against one machine alone."""

    @property
    def NAME(self) -> str:  # noqa: N802 -- a module constant satisfies it
        """kube-scheduler's name for the plugin."""
        ...

    def exclusion(self, node: KubeObject, spec: Mapping[str, Any]) -> str | None:
        """Why the plugin refuses `node` for the pod spec; None when it may run there."""
        ...


class Filter(Protocol):
    """One filter plugin: the constraints it puts on placing the job's pods go to `found`."""

    @property
    def NAME(self) -> str:  # noqa: N802 -- a module constant satisfies it
        """kube-scheduler's name for the plugin (or the controller it follows)."""
        ...

    @property
    def READS_PODS(self) -> bool:  # noqa: N802 -- a module constant satisfies it
        """It needs the namespace's pods: skipped, as unknown, when they could not be read."""
        ...

    def filter(self, cycle: Cycle, found: Found) -> None:
        """Record the machines it takes away, the rules between pods, what it could not
        judge."""
        ...


NODE_FILTERS: tuple[NodeFilter, ...] = (node_unschedulable, taint_toleration, node_affinity)
"""In kube-scheduler's order: the first that refuses a machine names the reason."""

FILTERS: tuple[Filter, ...] = (
    node_ports,
    inter_pod_affinity,
    pod_topology_spread,
    volume_binding,
    volume_zone,
    volume_restrictions,
    volume_attachment,
    dynamic_resources,
)
