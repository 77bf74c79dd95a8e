"""VolumeBinding for a claim that waits for its first pod (kubernetes pkg/scheduler/framework/
plugins/volumebinding/binder.go `FindPodVolumes`: `findMatchingVolumes`, then
`checkVolumeProvisions`), through the scheduling rules as the capacity check runs them: which
machines each such claim refuses the job's pods, in what words, and when the rule is unknown.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tests.support.plain_words import jargon_in
from truegreen.cluster import CantRead, GetRead, Got, Kind, Listed, ReadFailure
from truegreen.doctor.checks.capacity.filters.framework import Exclusion, JobPodSet
from truegreen.doctor.checks.capacity.filters.rules import Rules, scheduling_rules
from truegreen.kubectl import Kubectl

NS = "train"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
Obj = dict[str, Any]


def _nodes() -> list[Obj]:
    """Machines a and b in zone z1, c in zone z2."""
    return [
        {"kind": "Node", "metadata": {"name": n, "labels": {HOST: n, ZONE: z}}, "spec": {}}
        for n, z in (("a", "z1"), ("b", "z1"), ("c", "z2"))
    ]


def _set(claims: Sequence[str]) -> JobPodSet:
    volumes = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    return JobPodSet("worker", {"volumes": volumes}, {"job-name": "run"})


def _rules(
    claims: Mapping[str, GetRead],
    storage_types: Mapping[str, GetRead],
    made_volumes: Sequence[Obj] | CantRead | None,
) -> Rules:
    listed = Listed(tuple(made_volumes)) if isinstance(made_volumes, Sequence) else made_volumes
    rules = scheduling_rules(
        [_set(list(claims))],
        namespace=NS,
        namespace_labels={"team": "ml"},
        nodes=_nodes(),
        pods=Listed(()),
        claims=claims,
        volumes={},
        drivers={},
        devices=None,
        kubectl=Kubectl(),
        storage_types=storage_types,
        made_volumes=listed,
    )
    for exclusion in rules.exclusions:
        for text in (exclusion.reason, exclusion.todo):
            assert not jargon_in(text), f"jargon {jargon_in(text)} in {text!r}"
    return rules


_BIND = "volumebinding: node(s) didn't find available persistent volumes to bind"


def _waiting_claim(
    name: str = "scratch", storage_type: str = "local", size: str = "100Gi", **annotations: str
) -> Got:
    """A claim not bound yet, of `storage_type`, as the API server stores one (Pending)."""
    return Got(
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": NS, "annotations": dict(annotations)},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": storage_type,
                "resources": {"requests": {"storage": size}},
            },
            "status": {"phase": "Pending"},
        }
    )


def _storage_type(
    name: str = "local",
    provisioner: str = "kubernetes.io/no-provisioner",
    mode: str = "WaitForFirstConsumer",
    zones: Sequence[str] = (),
    terms: Sequence[Obj] = (),
) -> Got:
    """A StorageClass; `zones` its one `allowedTopologies` term, or `terms` all of them."""
    spec: Obj = {
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if zones:
        terms = [{"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}]
    if terms:
        spec["allowedTopologies"] = list(terms)
    return Got(spec)


def _free_volume(
    name: str,
    machine: str,
    size: str = "100Gi",
    storage_type: str = "local",
    phase: str = "Available",
) -> Obj:
    """A local volume made in advance for `machine` (its node affinity names it)."""
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_type,
            "local": {"path": "/mnt/disks/ssd0"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": HOST, "operator": "In", "values": [machine]}]}
                    ]
                }
            },
        },
        "status": {"phase": phase},
    }


def _waits(claim: Got, storage_type: Got, volumes: Sequence[Obj] | CantRead | None) -> Rules:
    return _rules(
        {str(claim.obj["metadata"]["name"]): claim},
        {str(storage_type.obj["metadata"]["name"]): storage_type},
        volumes,
    )


def test_a_waiting_claim_keeps_the_job_where_a_free_volume_made_in_advance_reaches() -> None:
    """binder.go `findMatchingVolumes`: the only free volume that fits is on b; the class
    makes none (`kubernetes.io/no-provisioner`, checkVolumeProvisions), so a and c are
    refused, with the scheduler's bind conflict."""
    rules = _waits(_waiting_claim(), _storage_type(), [_free_volume("pv-b", "b")])
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "c"),
            "can't reach free storage made in advance for its volume 'scratch'",
            "run the training job where free storage of type 'local' fits its volume "
            "'scratch' (b), or ask your cluster admin for such storage on the machines it can "
            "use",
            "PersistentVolumeClaim scratch: not bound, storageclass local (provisioner "
            "kubernetes.io/no-provisioner, WaitForFirstConsumer): no Available "
            f"PersistentVolume that fits it has a node affinity admitting a, c ({_BIND})",
        ),
    )
    assert rules.failed == ()


@pytest.mark.parametrize(
    "volume",
    [
        _free_volume("pv-b", "b", size="50Gi"),
        _free_volume("pv-b", "b", storage_type="other"),
        _free_volume("pv-b", "b", phase="Released"),
    ],
    ids=["too-small", "another-type", "not-available"],
)
def test_a_volume_that_does_not_fit_the_waiting_claim_leaves_no_machine(volume: Obj) -> None:
    rules = _waits(_waiting_claim(), _storage_type(), [volume])
    assert [(e.machines, e.reason) for e in rules.exclusions] == [
        (("a", "b", "c"), "can't reach free storage made in advance for its volume 'scratch'")
    ]
    assert "fits its volume 'scratch', or ask" in rules.exclusions[0].todo


def test_a_class_that_makes_volumes_only_in_some_zones_keeps_the_job_there() -> None:
    """checkVolumeProvisions: `allowedTopologies` must admit the machine's labels; a free
    volume of the class that reaches another machine still binds there."""
    storage_type = _storage_type("ebs", "ebs.csi.aws.com", zones=["z2"])
    rules = _waits(_waiting_claim(storage_type="ebs"), storage_type, [])
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b"),
            "can't have its volume 'scratch' made there (its storage type makes volumes only in "
            "zone z2)",
            "run the training job in zone z2, where its volume 'scratch' can be made (c), or "
            "give the volume 'scratch' a storage type that makes volumes where the job can run",
            "PersistentVolumeClaim scratch: not bound, storageclass ebs (provisioner "
            "ebs.csi.aws.com, WaitForFirstConsumer), allowedTopologies "
            f"{ZONE} in (z2): a, b outside them, and no Available PersistentVolume that fits it "
            f"admits them ({_BIND})",
        ),
    )
    free = _waits(
        _waiting_claim(storage_type="ebs"),
        storage_type,
        [_free_volume("pv-a", "a", storage_type="ebs")],
    )
    assert [e.machines for e in free.exclusions] == [("b",)]


def test_a_class_with_two_zone_terms_makes_volumes_in_either() -> None:
    storage_type = _storage_type(
        "ebs",
        "ebs.csi.aws.com",
        terms=[
            {"matchLabelExpressions": [{"key": ZONE, "values": ["z1"]}]},
            {"matchLabelExpressions": [{"key": HOST, "values": ["c"]}]},
        ],
    )
    rules = _waits(_waiting_claim(storage_type="ebs"), storage_type, [])
    assert rules.exclusions == ()
    one = _storage_type(
        "ebs",
        "ebs.csi.aws.com",
        terms=[
            {
                "matchLabelExpressions": [
                    {"key": ZONE, "values": ["z1"]},
                    {"key": HOST, "values": ["a", "c"]},
                ]
            }
        ],
    )
    both = _waits(_waiting_claim(storage_type="ebs"), one, [])
    assert [(e.machines, e.reason) for e in both.exclusions] == [
        (
            ("b", "c"),
            "can't have its volume 'scratch' made there (its storage type makes volumes only in "
            "zone z1 and machine a or c)",
        )
    ]
    assert (
        f"allowedTopologies {ZONE} in (z1), {HOST} in (a,c): b, c outside"
        in both.exclusions[0].detail
    )


def test_a_class_that_makes_volumes_everywhere_refuses_no_machine_and_lists_none() -> None:
    storage_type = _storage_type("ebs", "ebs.csi.aws.com")
    rules = _waits(_waiting_claim(storage_type="ebs"), storage_type, None)
    assert (rules.exclusions, rules.failed) == ((), ())


def test_a_claim_whose_volume_is_being_made_for_a_machine_refuses_the_others() -> None:
    """The scheduler annotated the claim with the machine it asked a volume for
    (`volume.kubernetes.io/selected-node`): only that machine can bind it."""
    storage_type = _storage_type("ebs", "ebs.csi.aws.com")
    claim = _waiting_claim(storage_type="ebs", **{"volume.kubernetes.io/selected-node": "c"})
    rules = _waits(claim, storage_type, None)
    assert rules.exclusions == (
        Exclusion(
            "worker",
            ("a", "b"),
            "can't use its volume 'scratch', which is being made for c",
            "run the training job on c, where its volume 'scratch' is being made",
            "PersistentVolumeClaim scratch: not bound, volume.kubernetes.io/selected-node=c: "
            f"a, b refused ({_BIND})",
        ),
    )


def test_a_claim_being_made_for_a_machine_where_its_class_makes_none_refuses_it_too() -> None:
    storage_type = _storage_type("ebs", "ebs.csi.aws.com", zones=["z2"])
    claim = _waiting_claim(storage_type="ebs", **{"volume.kubernetes.io/selected-node": "a"})
    rules = _waits(claim, storage_type, [])
    assert [(e.machines, e.reason.split(" (")[0]) for e in rules.exclusions] == [
        (("a",), "can't have its volume 'scratch' made there"),
        (("b", "c"), "can't use its volume 'scratch', which is being made for a"),
    ]


@pytest.mark.parametrize(
    ("volumes", "failure"),
    [
        (None, ReadFailure.NOT_CAPTURED),
        (
            CantRead(ReadFailure.FORBIDDEN, "list persistentvolumes: forbidden"),
            ReadFailure.FORBIDDEN,
        ),
    ],
    ids=["not-listed", "refused"],
)
def test_free_volumes_that_could_not_be_listed_leave_the_rule_unknown(
    volumes: CantRead | None, failure: ReadFailure
) -> None:
    rules = _waits(_waiting_claim(), _storage_type(), volumes)
    assert rules.exclusions == ()
    assert [(f.kind, f.cant.failure, f.listed) for f in rules.failed] == [
        (Kind.PERSISTENT_VOLUME, failure, True)
    ]


def test_a_volume_size_that_is_not_a_quantity_leaves_the_rule_unknown() -> None:
    rules = _waits(_waiting_claim(), _storage_type(), [_free_volume("pv-b", "b", size="lots")])
    assert rules.exclusions == ()
    assert [(f.kind, f.cant.failure) for f in rules.failed] == [
        (Kind.PERSISTENT_VOLUME, ReadFailure.MALFORMED)
    ]
    assert "a volume's size is not a quantity" in rules.failed[0].cant.reason


def test_a_class_that_could_not_be_read_leaves_the_claim_unknown() -> None:
    cant = CantRead(ReadFailure.FORBIDDEN, "get storageclasses/local: forbidden")
    rules = _rules({"scratch": _waiting_claim()}, {"local": cant}, [])
    assert rules.exclusions == ()
    assert [(f.kind, f.cant) for f in rules.failed] == [(Kind.STORAGE_CLASS, cant)]


def test_a_class_measured_absent_or_binding_at_once_is_not_a_waiting_claim() -> None:
    absent = CantRead(ReadFailure.NOT_FOUND, "get storageclasses/local: not found")
    for storage_types in (
        {"local": absent},
        {"local": _storage_type(mode="Immediate")},
        {},
    ):
        rules = _rules({"scratch": _waiting_claim()}, storage_types, [])
        assert (rules.exclusions, rules.failed) == ((), ()), storage_types


def test_two_waiting_claims_each_need_their_own_free_volume() -> None:
    """findMatchingVolumes gives each claim a volume no later claim is offered, smallest claim
    first: the one free volume, on b, goes to 'one', and leaves b short for 'two'; a and c have
    none for 'one', the first claim found short."""
    one, two = _waiting_claim("one", size="10Gi"), _waiting_claim("two", size="20Gi")
    rules = _rules(
        {"one": one, "two": two},
        {"local": _storage_type()},
        [_free_volume("pv-b", "b", size="100Gi")],
    )
    assert [(e.machines, e.reason) for e in rules.exclusions] == [
        (("a", "c"), "can't reach free storage made in advance for its volume 'one'"),
        (("b",), "can't reach free storage made in advance for its volume 'two'"),
    ]
