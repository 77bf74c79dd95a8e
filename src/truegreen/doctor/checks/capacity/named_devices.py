"""The devices of dynamic resource allocation that a pod set naming its machine claims.

Only kube-scheduler's DynamicResources plugin allocates a claim, and it never sees a pod that
names its machine. The resourceclaim controller creates such a pod's claim from its template as
for any pod (kubernetes pkg/controller/resourceclaim/controller.go `handleClaim`), but for a pod
that names its machine it only reserves a claim that is already allocated (`syncPod`: "reserve
claim for pod"); the kubelet does not start a pod whose claims are not reserved for it
(pkg/kubelet/cm/dra/manager.go `prepareResources`: "is not allowed to use ResourceClaim") and
looks again from time to time (website content/en/docs/concepts/scheduling-eviction/
dynamic-resource-allocation.md, "Pre-scheduled Pods": "this only works if those were allocated
by the scheduler for some other pod"). So such a pod starts only when each of its claims is a
shared one (`resourceClaimName`) allocated where its machine is (`status.allocation
.nodeSelector`; none: everywhere). A claim from a template never is; a shared claim missing,
being deleted, allocated for other machines, or not allocated while no pod the scheduler places
names it, never will be. A shared claim not allocated that such a pod names too is allocated on
whichever machine the scheduler picks for it: not judged. Pure, but for the findings' words.
"""

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind, KubeObject
from truegreen.doctor.checks.capacity.filters.device_room import unserved
from truegreen.doctor.checks.capacity.filters.dynamic_resources import claim_refs
from truegreen.doctor.checks.capacity.filters.framework import FailedRead, Found, Unchecked
from truegreen.doctor.checks.capacity.kubelet_admission import Admission, Outcome
from truegreen.doctor.checks.capacity.shape import Group
from truegreen.doctor.environment import DeviceReads
from truegreen.doctor.knowledge.fit import matches_node_selector
from truegreen.kubectl import Kubectl

_HOSTNAME = "kubernetes.io/hostname"


def shared_claims(spec: Mapping[str, Any]) -> list[str]:
    """The shared claims (`resourceClaimName`) a pod spec names."""
    return [str(c.get("resourceClaimName")) for c in claim_refs(spec) if c.get("resourceClaimName")]


def with_claims(
    answer: Admission,
    group: Group,
    reads: DeviceReads | None,
    nodes: Sequence[KubeObject],
    namespace: str,
    scheduled: Collection[str],
    kubectl: Kubectl,
    found: Found,
) -> Admission:
    """The kubelet's answer for a named pod set once its device claims are judged: an admitted
    set whose claims nobody allocates where its machine is is never started; what can't be
    judged goes to `found`. `scheduled`: the shared claims the job's scheduled pod sets name."""
    refs = claim_refs(group.spec)
    if answer.outcome is not Outcome.ADMITTED or not refs:
        return answer
    if reads is None or not reads.served:
        found.uncheck(unserved(kubectl))
        return answer
    if any(r.get("resourceClaimTemplateName") for r in refs):
        return _never(
            answer, nodes, "the devices it claims", f"{group.name}: a claim from a template"
        )
    if isinstance(reads.claims, CantRead):
        found.fail(FailedRead(Kind.RESOURCE_CLAIM, reads.claims, everywhere=True))
        return answer
    claims = {o.name_of(c): c for c in reads.claims.items if o.namespace_of(c) == namespace}
    for name in shared_claims(group.spec):
        refused = _shared(answer, name, claims.get(name), nodes, scheduled, kubectl, found)
        if refused is not None:
            return refused
    return answer


def _shared(
    answer: Admission,
    name: str,
    claim: KubeObject | None,
    nodes: Sequence[KubeObject],
    scheduled: Collection[str],
    kubectl: Kubectl,
    found: Found,
) -> Admission | None:
    """The refusal a shared claim makes; None when the pod may use it (or it is not judged)."""
    if claim is None:
        return _turned(
            answer,
            f"never starts it: its device claim '{name}' doesn't exist",
            f"ResourceClaim {name} not found",
            f"Create the device claim '{name}', or point the training job at one that exists",
        )
    if o.is_terminating(claim):
        return _turned(
            answer,
            f"never starts it: its device claim '{name}' is being deleted",
            f"ResourceClaim {name} is being deleted",
            f"Create the device claim '{name}' again once its deletion is done, or point the "
            "training job at another one",
        )
    allocation = o.mapping(o.mapping(claim.get("status")).get("allocation"))
    if not allocation:
        if name in scheduled:
            found.uncheck(
                Unchecked(
                    "whether the machines have the devices the training job asks for",
                    f"programs that name their machine share the device claim '{name}' with "
                    "programs the cluster places, which get its devices wherever they run",
                    "Check where the devices of the claim go with "
                    + kubectl.here("get", "resourceclaim", name, "-o", "yaml"),
                    f"ResourceClaim {name}: not allocated; named by pods with spec.nodeName "
                    f"({answer.group}) and by pods the scheduler places",
                )
            )
            return None
        return _never(
            answer, nodes, f"the devices of its device claim '{name}'", f"ResourceClaim {name}"
        )
    terms = [
        o.mapping(t)
        for t in o.sequence(o.mapping(allocation.get("nodeSelector")).get("nodeSelectorTerms"))
    ]
    if not terms or any(
        o.name_of(n) == answer.machine and matches_node_selector(terms, n) for n in nodes
    ):
        return None
    where = sorted(o.name_of(n) for n in nodes if matches_node_selector(terms, n))
    machines = ", ".join(where) or "no machine"
    return _turned(
        answer,
        f"can't use its device claim '{name}', whose devices are on {machines}",
        f"ResourceClaim {name}: allocated; allocation.nodeSelector leaves out {answer.machine}",
        f"Name the machine the devices of '{name}' are on ({machines}) in the job's settings, "
        "or take the machine's name out so that the cluster places it there",
    )


def _never(answer: Admission, nodes: Sequence[KubeObject], what: str, detail: str) -> Admission:
    """A claim nobody allocates for a pod that names its machine. The step keeps the pod on its
    machine through the scheduler, by the machine's hostname label (the website's "Pre-scheduled
    Pods": "create the Pod with a node selector that exactly matches the desired node")."""
    labels = next((o.labels_of(n) for n in nodes if o.name_of(n) == answer.machine), {})
    hostname = labels.get(_HOSTNAME, answer.machine)
    return _turned(
        answer,
        f"never starts it: {what} are given out only to programs the cluster places on a machine "
        "itself",
        f"{detail}: not allocated, and no scheduler allocates it for a pod with spec.nodeName; "
        f"the kubelet on {answer.machine} does not start the pod until it is",
        f"Take the machine's name out of the job's settings (`spec.nodeName` of its program "
        f"template) and keep it on {answer.machine} with `nodeSelector: {{{_HOSTNAME}: "
        f"{hostname}}}` instead, so that the cluster gives out the devices it claims",
    )


def _turned(answer: Admission, words: str, detail: str, todo: str) -> Admission:
    return replace(
        answer, outcome=Outcome.UNCLAIMED, words=words, detail=detail, todo=todo, room=None
    )
