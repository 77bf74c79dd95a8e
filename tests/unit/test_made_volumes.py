"""Which free volume a claim of a class that makes none would bind, value by value against
component-helpers storage/volume pv_helpers.go `FindMatchingVolume` (its checks in its order,
node affinity on a machine tried) and pkg/scheduler/framework/plugins/volumebinding/binder.go
`findMatchingVolumes` (claims smallest first, a volume taken once); and where a class makes a
volume (`checkVolumeProvisions`)."""

import copy
from typing import Any

import pytest

from tests.support.filter_objects import local_class, local_volume, waiting_claim
from truegreen.doctor.knowledge.made_volumes import Match, free_volumes, why_not
from truegreen.doctor.knowledge.no_provisioner import (
    awaits_made_volume,
    limits_places,
    makes_no_volumes,
    makes_volumes_on,
    waits_for_first_pod,
)

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


GPU_1 = {"kubernetes.io/hostname": "gpu-1"}
CPU_1 = {"kubernetes.io/hostname": "cpu-1"}


def test_on_a_machine_a_volume_must_reach_it_after_its_class_and_before_its_access_modes() -> None:
    """FindMatchingVolume's `CheckNodeAffinity` comes after the class and before the access
    modes; without a machine (the storage check) node affinity is left out."""
    unreached = "node affinity does not admit the machine"
    assert why_not(CLAIM, local_volume("v"), GPU_1) == ""
    assert why_not(CLAIM, local_volume("v"), CPU_1) == unreached
    assert why_not(CLAIM, local_volume("v"), None) == ""
    other_class = local_volume("v", storage_class="standard")
    assert why_not(CLAIM, other_class, CPU_1) == "storageClassName standard"
    shared = local_volume("v", modes=("ReadOnlyMany",))
    assert why_not(CLAIM, shared, CPU_1) == unreached
    anywhere = local_volume("v")
    del anywhere["spec"]["nodeAffinity"]
    assert why_not(CLAIM, anywhere, CPU_1) == ""


def test_a_volume_made_for_the_claim_that_does_not_reach_the_machine_leaves_it_none() -> None:
    """FindMatchingVolume returns no match at all when the volume bound to the claim does not
    reach the machine, whatever other volume would fit."""
    made = local_volume("made", claim="data", phase="Pending")
    free = local_volume("free", machine="cpu-1")
    assert free_volumes([CLAIM], [made, free], GPU_1) == [
        Match("data", "made", (("free", "node affinity does not admit the machine"),))
    ]
    assert free_volumes([CLAIM], [made, free], CPU_1) == [
        Match("data", None, (("made", "node affinity does not admit the machine"),))
    ]
    assert free_volumes([CLAIM], [free], CPU_1) == [Match("data", "free")]


@pytest.mark.parametrize(
    ("allowed", "labels", "makes"),
    [
        (None, {}, True),
        ([{"matchLabelExpressions": [{"key": "zone", "values": ["b"]}]}], {"zone": "b"}, True),
        ([{"matchLabelExpressions": [{"key": "zone", "values": ["b"]}]}], {"zone": "a"}, False),
        ([{"matchLabelExpressions": [{"key": "zone", "values": ["b"]}]}], {}, False),
        # any term; every expression of a term
        (
            [
                {"matchLabelExpressions": [{"key": "zone", "values": ["b"]}]},
                {
                    "matchLabelExpressions": [
                        {"key": "zone", "values": ["a"]},
                        {"key": "rack", "values": ["r1", "r2"]},
                    ]
                },
            ],
            {"zone": "a", "rack": "r2"},
            True,
        ),
        (
            [
                {
                    "matchLabelExpressions": [
                        {"key": "zone", "values": ["a"]},
                        {"key": "rack", "values": ["r1"]},
                    ]
                }
            ],
            {"zone": "a", "rack": "r2"},
            False,
        ),
        # an empty term, or an expression of no values, admits none
        ([{}], {"zone": "a"}, False),
        ([{"matchLabelExpressions": [{"key": "zone", "values": []}]}], {"zone": "a"}, False),
    ],
)
def test_a_class_makes_volumes_where_its_allowed_topologies_admit(
    allowed: list[dict[str, Any]] | None, labels: dict[str, str], makes: bool
) -> None:
    """binder.go `checkVolumeProvisions`: `MatchTopologySelectorTerms` on the machine's
    labels."""
    storage_type: dict[str, Any] = {
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    if allowed is not None:
        storage_type["allowedTopologies"] = allowed
    assert makes_volumes_on(storage_type, labels) is makes
    assert limits_places(storage_type) is (allowed is not None)


def test_a_class_that_makes_none_makes_none_anywhere() -> None:
    assert not makes_volumes_on(local_class(), {})
    assert waits_for_first_pod(CLAIM, {**local_class(), "provisioner": "ebs.csi.aws.com"})
    assert not waits_for_first_pod(CLAIM, {**local_class(), "volumeBindingMode": "Immediate"})
