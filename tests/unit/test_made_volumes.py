"""Which free volume a claim of a class that makes none would bind, value by value against
component-helpers storage/volume pv_helpers.go `FindMatchingVolume` (its checks in its order)
and pkg/scheduler/framework/plugins/volumebinding/binder.go `findMatchingVolumes` (claims
smallest first, a volume taken once)."""

import copy
from typing import Any

import pytest

from tests.support.filter_objects import local_class, local_volume, waiting_claim
from truegreen.doctor.knowledge.made_volumes import Match, free_volumes, why_not
from truegreen.doctor.knowledge.no_provisioner import awaits_made_volume, makes_no_volumes

CLAIM = waiting_claim("data", "local-storage", "500Gi")


def _with(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    changed["spec"].update(spec)
    return changed


def test_only_a_class_that_waits_and_makes_none_needs_a_made_volume() -> None:
    assert makes_no_volumes(local_class())
    assert not makes_no_volumes({**local_class(), "volumeBindingMode": "Immediate"})
    assert not makes_no_volumes({**local_class(), "provisioner": "ebs.csi.aws.com"})
    assert awaits_made_volume(CLAIM, local_class())
    assert not awaits_made_volume(CLAIM, None)
    assert not awaits_made_volume(_with(CLAIM, volumeName="pv-1"), local_class())
    assert not awaits_made_volume({**CLAIM, "status": {"phase": "Bound"}}, local_class())


@pytest.mark.parametrize(
    ("volume", "why"),
    [
        (local_volume("v", claim="other", phase="Bound"), "Bound, bound to train/other"),
        (local_volume("v", "100Gi"), "capacity 100Gi < 500Gi"),
        (_with(local_volume("v"), volumeMode="Block"), "volumeMode Block"),
        (
            {**local_volume("v"), "metadata": {"name": "v", "deletionTimestamp": "2026-01-01"}},
            "being deleted",
        ),
        (local_volume("v", phase="Released"), "Released"),
        (local_volume("v", storage_class="standard"), "storageClassName standard"),
        (local_volume("v", modes=("ReadOnlyMany",)), "accessModes ReadOnlyMany lack ReadWriteOnce"),
        (local_volume("v"), ""),
        # made for this claim: taken whatever its phase or class
        (local_volume("v", claim="data", phase="Pending", storage_class="x"), ""),
    ],
    ids=[
        "other-claim",
        "small",
        "mode",
        "deleted",
        "not-available",
        "class",
        "access",
        "fits",
        "made-for-it",
    ],
)
def test_why_a_volume_is_not_taken(volume: dict[str, Any], why: str) -> None:
    assert why_not(CLAIM, volume) == why


def test_a_claim_ref_with_another_uid_is_another_claim() -> None:
    volume = local_volume("v", claim="data", phase="Bound")
    volume["spec"]["claimRef"]["uid"] = "old-uid"
    claim = copy.deepcopy(CLAIM)
    claim["metadata"]["uid"] = "new-uid"
    assert why_not(claim, volume) == "Bound, bound to train/data"


def test_the_claims_selector_and_the_beta_class_annotation_are_read() -> None:
    chosen = _with(CLAIM, selector={"matchLabels": {"disk": "nvme"}})
    volume = local_volume("v")
    assert why_not(chosen, volume) == "labels not selected by the claim"
    volume["metadata"]["labels"] = {"disk": "nvme"}
    assert why_not(chosen, volume) == ""
    assert why_not(_with(CLAIM, selector={}), local_volume("v")) == ""
    beta = local_volume("v", storage_class="")
    beta["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "local-storage"}
    assert why_not(CLAIM, beta) == ""


def test_claims_take_the_smallest_fitting_volume_smallest_claim_first() -> None:
    small = waiting_claim("small", "local-storage", "100Gi")
    volumes = [local_volume("big", "2Ti"), local_volume("mid", "600Gi")]
    assert free_volumes([CLAIM, small], volumes) == [
        Match("data", "big", (("mid", "taken by the claim small"),)),
        Match("small", "mid"),
    ]
