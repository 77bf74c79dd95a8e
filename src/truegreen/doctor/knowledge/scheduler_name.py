"""Which scheduler places a pod, and which pods run now. A pod is placed by the scheduler its
`spec.schedulerName` names, the cluster's own where it names none; a pod of another name is
placed by that scheduler alone (kubernetes/kubernetes pkg/scheduler/profile/profile.go
`frameworkForPod`). What such a scheduler keeps is knowledge/gangs.py, which only a job whose
pods name one needs."""

from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_SCHEDULER = "default-scheduler"
"""The name the API server defaults `spec.schedulerName` to (pkg/apis/core/v1/defaults.go via
`v1.DefaultSchedulerName`): the cluster's own scheduler."""

RUNNING_PODS = {"status.phase": "Running"}
"""The field selector of the pods that run now (pods accept `status.phase`): an autoscaler's or
a scheduler's own pod is looked for among them."""


def schedulers_named(specs: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The schedulers other than the cluster's own that the pod specs name, in order."""
    names = (str(spec.get("schedulerName") or DEFAULT_SCHEDULER) for spec in specs)
    return tuple(dict.fromkeys(n for n in names if n != DEFAULT_SCHEDULER))
