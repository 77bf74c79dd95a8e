"""Classes that make no volume for a claim, and the claims only a volume made in advance can bind.

A StorageClass whose provisioner is `kubernetes.io/no-provisioner` (the class of local volumes)
makes no volume for a claim; under `WaitForFirstConsumer` kube-scheduler binds such a claim to
an existing volume or refuses every machine (pkg/scheduler/framework/plugins/volumebinding/
binder.go `checkVolumeProvisions`: `provisioner == volume.NotSupportedProvisioner`). Which free
volume would bind it is knowledge/made_volumes.py. Everything here is pure.
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


def awaits_made_volume(claim: KubeObject, storage_type: Mapping[str, Any] | None) -> bool:
    """A claim not bound yet, naming no volume of its own (`spec.volumeName`, which the PV
    controller binds as it is), of a class that makes no volumes: only a free volume made in
    advance can bind it."""
    spec = o.mapping(claim.get("spec"))
    return (
        storage_type is not None
        and makes_no_volumes(storage_type)
        and not spec.get("volumeName")
        and o.mapping(claim.get("status")).get("phase") != "Bound"
    )
