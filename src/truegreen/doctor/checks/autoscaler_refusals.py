"""Why an autoscaler could add no machine, from its own words, and what the operator can do
about it, in plain words: shared by the checks that meet those words, on a pod
(cluster-autoscaler's `NotTriggerScaleUp`, its status's backoff, Karpenter's refusals: the
capacity check) and on a start check that asked for machines (a ProvisioningRequest's
`Failed` words that Kueue quotes: the queue check). Everything here is pure.
"""

import re

from msgspec import Struct

from truegreen.doctor.knowledge.reports import quoted
from truegreen.patterns import LazyPattern


class CannotAdd(Struct, frozen=True):
    """Why an autoscaler added no machine, and what the operator can do about it, in plain
    words."""

    why: str
    todo: str


_LIMITS = "Raise the machine groups' limits, or free room"
_NO_SCALE_UP = (
    (
        LazyPattern(
            r"placeholder-cannot-be-fulfilled|cannot provision any more instances|OutOfResource"
            r"|QUOTA_EXCEEDED|RESOURCE_POOL_EXHAUSTED|STOCKOUT",
            re.I,
        ),
        CannotAdd(
            "the cloud gave its machine group no more machines (no capacity or quota left there)",
            "Ask your cloud admin for more quota or capacity for that machine group, or give the "
            "job a group of another kind or zone",
        ),
    ),
    (
        LazyPattern(
            r"InsufficientCapacity|InsufficientInstanceCapacity|insufficient capacity", re.I
        ),
        CannotAdd(
            "the cloud has no machine of that kind to give right now",
            "Try again later, or give the job a machine group of another kind or zone",
        ),
    ),
    (
        LazyPattern(r"max node group size reached"),
        CannotAdd("its machine groups are at their largest", _LIMITS),
    ),
    (
        LazyPattern(r"max total nodes in cluster reached"),
        CannotAdd(
            "the cluster is at its largest",
            "Raise the autoscaler's limit on the cluster's size, or free room",
        ),
    ),
    (
        LazyPattern(r"wouldn't fit if a new node is added|Insufficient"),
        CannotAdd(
            "it would not fit a new machine either",
            "Ask for less, or add a machine group whose machines are big enough",
        ),
    ),
    (
        LazyPattern(r"volume node affinity conflict"),
        CannotAdd(
            "its storage is tied to a zone where no machine group can add a machine",
            "Give the job storage in a zone where machines can be added, or add a machine group "
            "in the storage's zone",
        ),
    ),
    (
        LazyPattern(r"node affinity/selector|didn't match"),
        CannotAdd(
            "no machine group matches its placement rules",
            "Loosen the job's rules for which machines it may run on, or add a machine group "
            "that matches them",
        ),
    ),
    (
        LazyPattern(r"untolerated taint|had taint"),
        CannotAdd(
            "the machine groups are reserved for other work",
            "Let the job onto those machines (a toleration in its settings), or add a machine "
            "group for it",
        ),
    ),
    (
        LazyPattern(r"backoff|failed scale-up", re.IGNORECASE),
        CannotAdd(
            "adding machines failed a moment ago, and the autoscaler waits before it tries again",
            "Find out why adding failed (the cloud's quota, capacity or permissions), then wait "
            "for the autoscaler's next try",
        ),
    ),
    (
        LazyPattern(r"incompatible with nodepool|no instance type"),
        CannotAdd(
            "no machine pool can make a machine for it",
            "Loosen the job's requirements, or widen what a machine pool may make",
        ),
    ),
    (
        LazyPattern(r"limit", re.IGNORECASE),
        CannotAdd("a machine pool has reached its limit", _LIMITS),
    ),
)


# cluster-autoscaler's cluster-wide caps, its own flags (core/scaleup/orchestrator
# skippedreasons.go MaxResourceLimitReached: "max cluster %s limit reached", the resources
# joined by ", "; resourcemanager names cores `cpu` and memory `memory`, GPUs by type).
_CLUSTER_LIMIT = LazyPattern(r"max cluster (?P<resources>.{1,200}?) limit reached")
_CLUSTER_LIMIT_FLAGS = {"cpu": "--cores-total", "memory": "--memory-total"}
"""The flag that sets each cap; any other resource is a GPU type's (`--gpu-total`)."""


def _cluster_limit(message: str) -> CannotAdd | None:
    """The cluster-wide cap, where any machine group names it: it stops every group whose
    machines would hold the resource, so raising a group's own limit does not help."""
    found = _CLUSTER_LIMIT.search(message)
    if found is None:
        return None
    resources = [quoted(r, 60) for r in found["resources"].split(", ") if r.strip()][:4]
    flags = list(dict.fromkeys(_CLUSTER_LIMIT_FLAGS.get(r, "--gpu-total") for r in resources))
    which = _listed(resources)
    limits, are = ("limits", "are") if len(resources) > 1 else ("limit", "is")
    settings = f"{_listed(flags)} setting{'s' if len(flags) > 1 else ''}"
    return CannotAdd(
        f"the autoscaler's {limits} on the whole cluster's {which} {are} reached",
        f"Raise the autoscaler's {limits} on the whole cluster's {which} (its {settings}), or "
        "free room",
    )


def _listed(words: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return " and ".join(filter(None, (", ".join(words[:-1]), words[-1])))


def plain_refusal(message: str) -> CannotAdd | None:
    """The autoscaler's reason in plain words: its cluster-wide cap where it names one, else
    the first rule that matches; None for words no rule names."""
    capped = _cluster_limit(message)
    if capped is not None:
        return capped
    for pattern, words in _NO_SCALE_UP:
        if pattern.search(message):
            return words
    return None
