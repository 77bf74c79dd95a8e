"""The volume claims a pod spec or a StatefulSet brings, named as their controllers name them."""

from typing import Any

import pytest

from truegreen import kubeobjects as o


def _statefulset(**spec: Any) -> dict[str, Any]:
    return {
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}},
                {"metadata": {"name": "logs"}},
            ],
            **spec,
        },
    }


@pytest.mark.parametrize(
    ("spec", "claims"),
    [
        (
            {"replicas": 2},
            {
                "data-db-0": "db-0",
                "logs-db-0": "db-0",
                "data-db-1": "db-1",
                "logs-db-1": "db-1",
            },
        ),
        # spec.ordinals.start: the copies are start..start+replicas-1
        # (pkg/controller/statefulset/stateful_set_utils.go getStartOrdinal, getEndOrdinal).
        (
            {"replicas": 2, "ordinals": {"start": 5}},
            {
                "data-db-5": "db-5",
                "logs-db-5": "db-5",
                "data-db-6": "db-6",
                "logs-db-6": "db-6",
            },
        ),
        # The API defaults replicas to 1 (pkg/apis/apps/v1/defaults.go SetDefaults_StatefulSet).
        ({}, {"data-db-0": "db-0", "logs-db-0": "db-0"}),
        ({"replicas": 0}, {}),
    ],
)
def test_statefulset_claims_name_each_copys_claims(
    spec: dict[str, Any], claims: dict[str, str]
) -> None:
    assert o.statefulset_claims(_statefulset(**spec)) == claims


SCRATCH = {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast-nvme"}


def _pod(name: str, phase: str, **meta: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "uid": f"uid-{name}", **meta},
        "spec": {
            "volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": SCRATCH}}},
                {"name": "cache", "emptyDir": {}},
            ]
        },
        "status": {"phase": phase},
    }


def test_ephemeral_claims_are_the_volumes_claim_templates() -> None:
    spec = _pod("w0", "Pending")["spec"]
    assert o.ephemeral_claims(spec) == [("scratch", SCRATCH)]
    assert o.claim_names(spec) == ["datasets"]


def test_an_ephemeral_claim_is_named_after_its_pod_and_volume() -> None:
    """component-helpers storage/ephemeral VolumeClaimName: `<pod>-<volume>`."""
    assert o.ephemeral_claim_names(_pod("train-w0", "Pending")) == ["train-w0-scratch"]


def test_only_waiting_pods_wait_for_their_ephemeral_claims() -> None:
    waiting = _pod("w0", "Pending")
    pods = [
        waiting,
        _pod("w1", "Running"),
        _pod("w2", "Succeeded"),
        _pod("w3", "Pending", deletionTimestamp="2026-01-01T00:00:00Z"),
    ]
    assert o.waiting_ephemeral_claims(pods) == {"w0-scratch": waiting}


@pytest.mark.parametrize(
    ("refs", "controlled"),
    [
        ([{"kind": "Pod", "name": "w0", "uid": "uid-w0", "controller": True}], True),
        # metav1.IsControlledBy: only the reference marked controller counts, and by uid.
        ([{"kind": "Pod", "name": "w0", "uid": "uid-w0"}], False),
        ([{"kind": "Pod", "name": "w0", "uid": "uid-old-w0", "controller": True}], False),
        ([], False),
    ],
)
def test_a_claim_is_its_pods_when_the_pod_controls_it(
    refs: list[dict[str, Any]], controlled: bool
) -> None:
    claim = {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "w0-scratch", "ownerReferences": refs},
    }
    assert o.controlled_by(claim, _pod("w0", "Pending")) is controlled
