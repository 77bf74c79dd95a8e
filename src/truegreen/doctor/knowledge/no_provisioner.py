"""Classes that make no volume for a claim, or make volumes only in some places, and the claims
that wait for their first pod.

A StorageClass whose provisioner is `kubernetes.io/no-provisioner` (the class of local volumes)
makes no volume for a claim; under `WaitForFirstConsumer` kube-scheduler binds such a claim to
an existing volume or refuses every machine (pkg/scheduler/framework/plugins/volumebinding/
binder.go `checkVolumeProvisions`: `provisioner == volume.NotSupportedProvisioner`). A class
that makes volumes makes them only on a machine its `allowedTopologies` admit (same function:
`MatchTopologySelectorTerms`). Which free volume would bind a claim is knowledge/made_volumes.py.
Everything here is pure.
"""

from collections.abc import Mapping
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject

NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""component-helpers storage/volume `NotSupportedProvisioner`."""


def makes_no_volumes(storage_type: Mapping[str, Any]) -> bool:
    """A class that waits for the first pod and makes no volume: only one made in advance can
    bind its claims. (An empty provisioner, which binder.go treats alike, is refused by the
    API server's validation of a StorageClass, so no class holds one.)"""
    return (
        storage_type.get("volumeBindingMode") == "WaitForFirstConsumer"
        and storage_type.get("provisioner") == NO_PROVISIONER
    )


def waits_for_first_pod(claim: KubeObject, storage_type: Mapping[str, Any] | None) -> bool:
    """A claim not bound yet, naming no volume of its own (`spec.volumeName`, which the PV
    controller binds as it is, and the scheduler takes as one to bind at once), of a class
    that waits for the first pod: kube-scheduler binds it on the machine where it places that
    pod (volumebinding/binder.go `GetPodVolumeClaims`: `unboundClaimsDelayBinding`)."""
    spec = o.mapping(claim.get("spec"))
    return (
        storage_type is not None
        and storage_type.get("volumeBindingMode") == "WaitForFirstConsumer"
        and not spec.get("volumeName")
        and o.mapping(claim.get("status")).get("phase") != "Bound"
    )


def awaits_made_volume(claim: KubeObject, storage_type: Mapping[str, Any] | None) -> bool:
    """A claim that waits for its first pod, of a class that makes no volumes: only a free
    volume made in advance can bind it."""
    return (
        storage_type is not None
        and makes_no_volumes(storage_type)
        and waits_for_first_pod(claim, storage_type)
    )


def limits_places(storage_type: Mapping[str, Any]) -> bool:
    """The class makes volumes only where its `allowedTopologies` say."""
    return bool(o.sequence(storage_type.get("allowedTopologies")))


def makes_volumes_on(storage_type: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether the class makes a volume for a pod placed on a machine of these labels
    (binder.go `checkVolumeProvisions`): not where it makes none; else where its
    `allowedTopologies` admit (pkg/apis/core/v1/helper `MatchTopologySelectorTerms`: no term
    admits every machine; a term admits one that has each of its expressions' keys with one of
    the values; an empty term, or one with an expression of no values, which
    `TopologySelectorRequirementsAsSelector` cannot build, admits none)."""
    if storage_type.get("provisioner") == NO_PROVISIONER:
        return False
    terms = [o.mapping(t) for t in o.sequence(storage_type.get("allowedTopologies"))]
    if not terms:
        return True
    return any(_term_admits(term, labels) for term in terms)


def _term_admits(term: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    expressions = [o.mapping(e) for e in o.sequence(term.get("matchLabelExpressions"))]
    if not expressions:
        return False
    for expression in expressions:
        values = {str(v) for v in o.sequence(expression.get("values"))}
        key = str(expression.get("key"))
        if not values or key not in labels or str(labels[key]) not in values:
            return False
    return True
