"""Which Kueue the cluster serves: the kinds of the version of kueue.x-k8s.io doctor reads
(apis/kueue/v1beta2 and v1beta1). Apart from Kueue's model (knowledge/kueue.py), which only a
cluster that serves Kueue needs."""

from collections.abc import Sequence

from msgspec import Struct

from truegreen.cluster import Kind

GROUP = "kueue.x-k8s.io"


class KueueKinds(Struct, frozen=True):
    """The kinds of one served version of kueue.x-k8s.io."""

    local_queue: Kind
    cluster_queue: Kind
    resource_flavor: Kind
    cohort: Kind
    workload: Kind
    admission_check: Kind


V1BETA2 = KueueKinds(
    Kind.LOCAL_QUEUE,
    Kind.CLUSTER_QUEUE,
    Kind.RESOURCE_FLAVOR,
    Kind.COHORT,
    Kind.WORKLOAD,
    Kind.ADMISSION_CHECK,
)


V1BETA1 = KueueKinds(
    Kind.LOCAL_QUEUE_V1BETA1,
    Kind.CLUSTER_QUEUE_V1BETA1,
    Kind.RESOURCE_FLAVOR_V1BETA1,
    Kind.COHORT_V1BETA1,
    Kind.WORKLOAD_V1BETA1,
    Kind.ADMISSION_CHECK_V1BETA1,
)


def kinds_served(versions: Sequence[str]) -> KueueKinds | None:
    """The version doctor reads, of those discovery lists for kueue.x-k8s.io: v1beta2 where it
    is served (Kueue's storage version since v0.15), else v1beta1; None: Kueue is not installed."""
    if V1BETA2.local_queue.spec.version in versions:
        return V1BETA2
    if V1BETA1.local_queue.spec.version in versions:
        return V1BETA1
    return None
