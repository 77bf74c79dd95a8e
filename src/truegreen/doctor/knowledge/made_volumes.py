"""Claims only a volume made in advance can take: which free PersistentVolume each would bind.

A StorageClass whose provisioner is `kubernetes.io/no-provisioner` (the class of local volumes)
makes no volume for a claim (which claims wait on one: knowledge/no_provisioner.py). Under
`WaitForFirstConsumer`, kube-scheduler binds such a claim when it places the first pod that
mounts it, to an existing volume, or refuses every machine:
pkg/scheduler/framework/plugins/volumebinding/binder.go `FindPodVolumes` looks for a volume
(`findMatchingVolumes`, claims smallest first, a volume taken by one claim is not offered to the
next), then asks the class to provision the rest (`checkVolumeProvisions`: `provisioner ==
volume.NotSupportedProvisioner` → not satisfied, "node(s) didn't find available persistent
volumes to bind"). Which volume matches a claim is component-helpers storage/volume
pv_helpers.go `FindMatchingVolume`.

The scheduler matches on the machine it tries, where a volume's node affinity must admit it
(`CheckNodeAffinity`): given a machine's labels, so does this (the capacity check's
VolumeBinding filter, per machine); without, any volume that matches the claim is a candidate,
on whatever machine it lives (the storage check: is there one at all). Everything here is pure.
"""

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.fit import volume_reaches
from truegreen.quantity import parse_quantity

_BETA_CLASS: Final = "volume.beta.kubernetes.io/storage-class"
"""The annotation that named a class before `storageClassName` (GetPersistentVolumeClass)."""
_FILESYSTEM: Final = "Filesystem"


def _storage(resources: Mapping[str, Any]) -> Decimal:
    """An amount of storage; 0 where none is stated (the zero Quantity FindMatchingVolume
    compares), QuantityError where it is not a quantity."""
    value = resources.get("storage")
    return Decimal(0) if value is None else parse_quantity(str(value))


def _volume_class(volume: KubeObject) -> str:
    """GetPersistentVolumeClass: the beta annotation first, then `storageClassName`."""
    beta = o.annotations_of(volume).get(_BETA_CLASS)
    return str(
        beta if beta is not None else o.mapping(volume.get("spec")).get("storageClassName") or ""
    )


def _bound_to(volume: KubeObject, claim: KubeObject) -> bool:
    """IsVolumeBoundToClaim: the volume's claimRef names the claim (and its uid, if it says one)."""
    ref = o.mapping(o.mapping(volume.get("spec")).get("claimRef"))
    if not ref:
        return False
    if ref.get("name") != o.name_of(claim) or ref.get("namespace") != o.namespace_of(claim):
        return False
    return not ref.get("uid") or ref.get("uid") == o.uid_of(claim)


def _selected(claim_spec: Mapping[str, Any], volume: KubeObject) -> bool:
    """The claim's `selector` against the volume's labels: none stated takes every volume, and
    so does an empty one (LabelSelectorAsSelector of `{}` is Everything)."""
    selector = claim_spec.get("selector")
    if not isinstance(selector, Mapping):
        return True
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return True
    return o.selector_matches(selector, o.labels_of(volume))


_UNREACHED: Final = "node affinity does not admit the machine"


def why_not(claim: KubeObject, volume: KubeObject, machine: Mapping[str, str] | None = None) -> str:
    """Why FindMatchingVolume would not give `volume` to `claim`, in the order it looks; ""
    when it would. `machine`: the labels of the machine tried, whose node affinity test comes
    after the deletion (the volume made for the claim) or after the class (any other); None
    leaves node affinity out. QuantityError on a size that is not a quantity."""
    spec, wanted = o.mapping(volume.get("spec")), o.mapping(claim.get("spec"))
    ref = o.mapping(spec.get("claimRef"))
    bound_here = _bound_to(volume, claim)
    status = str(o.mapping(volume.get("status")).get("phase") or "Pending")
    if ref and not bound_here:
        return f"{status}, bound to {ref.get('namespace')}/{ref.get('name')}"
    capacity, requests = o.mapping(spec.get("capacity")), _requests(wanted)
    if _storage(capacity) < _storage(requests):
        return f"capacity {capacity.get('storage') or 0} < {requests.get('storage') or 0}"
    mode = str(spec.get("volumeMode") or _FILESYSTEM)
    if mode != str(wanted.get("volumeMode") or _FILESYSTEM):
        return f"volumeMode {mode}"
    if o.mapping(volume.get("metadata")).get("deletionTimestamp"):
        return "being deleted"
    reaches = machine is None or volume_reaches(volume, machine)
    if bound_here:
        # Made for this claim: whatever else it says, it is the one, where it reaches.
        return "" if reaches else _UNREACHED
    if status != "Available":
        return status
    if not _selected(wanted, volume):
        return "labels not selected by the claim"
    kind = _volume_class(volume)
    if kind != str(wanted.get("storageClassName") or ""):
        return f"storageClassName {kind or '(none)'}"
    if not reaches:
        return _UNREACHED
    modes = [str(m) for m in o.sequence(spec.get("accessModes"))]
    lacking = [str(m) for m in o.sequence(wanted.get("accessModes")) if m not in modes]
    if lacking:
        return f"accessModes {', '.join(modes) or '(none)'} lack {', '.join(lacking)}"
    return ""


def _requests(claim_spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return o.mapping(o.mapping(claim_spec.get("resources")).get("requests"))


def _claim_class(claim: KubeObject) -> str:
    return str(o.mapping(claim.get("spec")).get("storageClassName") or "")


def _capacity(volume: KubeObject) -> Decimal:
    return _storage(o.mapping(o.mapping(volume.get("spec")).get("capacity")))


class Match(Struct, frozen=True):
    """What became of one claim: the volume it would bind, or none and why each volume of its
    class (or made for it) would not do."""

    claim: str
    volume: str | None
    refused: tuple[tuple[str, str], ...] = ()
    """(volume, why), by name: the volumes of the claim's class, and any made for it."""


def free_volumes(
    claims: Sequence[KubeObject],
    volumes: Sequence[KubeObject],
    machine: Mapping[str, str] | None = None,
) -> list[Match]:
    """The volume each claim would bind, as the scheduler matches a pod's claims: smallest
    claim first, each taking the smallest volume that fits, which no later claim is offered
    (binder.go `findMatchingVolumes`, `byPVCSize`; FindMatchingVolume's smallest match, or the
    volume made for the claim, and none when that one does not reach the machine). `machine`:
    the labels of the machine tried (None: node affinity left out). In the claims' order.
    QuantityError on a size that is not a quantity."""
    taken: dict[str, str] = {}
    found: dict[str, Match] = {}
    for claim in sorted(claims, key=lambda c: _storage(_requests(o.mapping(c.get("spec"))))):
        name = o.name_of(claim)
        fits: list[KubeObject] = []
        refused = []
        for volume in sorted(volumes, key=o.name_of):
            made_for_it = _bound_to(volume, claim)
            if not made_for_it and _volume_class(volume) != _claim_class(claim):
                continue
            why = why_not(claim, volume, machine) or (
                f"taken by the claim {taken[o.name_of(volume)]}"
                if o.name_of(volume) in taken
                else ""
            )
            if why:
                refused.append((o.name_of(volume), why))
                if made_for_it and why == _UNREACHED:
                    fits = []  # FindMatchingVolume returns no match at all
                    break
            elif made_for_it:
                fits = [volume]
                break
            else:
                fits.append(volume)
        chosen = min(fits, key=_capacity, default=None)
        if chosen is not None:
            taken[o.name_of(chosen)] = name
        found[name] = Match(name, None if chosen is None else o.name_of(chosen), tuple(refused))
    return [found[o.name_of(c)] for c in claims]
