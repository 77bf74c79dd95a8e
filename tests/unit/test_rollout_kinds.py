"""Rollout status of StatefulSets and DaemonSets by kubectl's own rules: kubernetes/kubectl
pkg/polymorphichelpers/rollout_status.go, `StatefulSetStatusViewer` and
`DaemonSetStatusViewer` (read at kubectl dee3483a)."""

from typing import Any

import pytest

from truegreen.rollout import RolloutStatus, rollout_status


def _sts(update_strategy: dict[str, Any], **status: Any) -> dict[str, Any]:
    return {
        "kind": "StatefulSet",
        "metadata": {"name": "db", "generation": 2},
        "spec": {"replicas": 3, "updateStrategy": update_strategy},
        "status": {"observedGeneration": 2, "readyReplicas": 3, **status},
    }


ROLLING = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
"""What the API server stores for a StatefulSet's RollingUpdate (apps/v1 defaults.go)."""


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        # observedGeneration 0 is "not observed" whatever the generation.
        (
            {**_sts(ROLLING, updatedReplicas=3), "status": {"updatedReplicas": 3}},
            RolloutStatus(False, progress="waiting for the update to be picked up"),
        ),
        (
            _sts(ROLLING, readyReplicas=2, updatedReplicas=3),
            RolloutStatus(False, progress="2 of 3 copies ready"),
        ),
        # rollingUpdate set: the partition decides, whatever the revisions say.
        (
            _sts(ROLLING, updatedReplicas=2, updateRevision="b", currentRevision="a"),
            RolloutStatus(False, progress="2 of 3 copies updated"),
        ),
        (
            _sts(ROLLING, updatedReplicas=3, updateRevision="b", currentRevision="a"),
            RolloutStatus(True),
        ),
        (
            _sts({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, updatedReplicas=1),
            RolloutStatus(True),
        ),
        (
            _sts({"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}, updatedReplicas=1),
            RolloutStatus(False, progress="1 of 2 copies updated"),
        ),
        # rollingUpdate unset: the revisions decide.
        (
            _sts(
                {"type": "RollingUpdate"},
                updatedReplicas=3,
                updateRevision="b",
                currentRevision="a",
            ),
            RolloutStatus(False, progress="copies still moving to the new version"),
        ),
        (
            _sts({}, updatedReplicas=1, updateRevision="b", currentRevision="b"),
            RolloutStatus(True),
        ),
    ],
)
def test_a_statefulset_rolls_out_by_kubectls_rules(
    workload: dict[str, Any], expected: RolloutStatus
) -> None:
    assert rollout_status(workload) == expected


def _ds(**status: Any) -> dict[str, Any]:
    return {
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "generation": 3},
        "spec": {"updateStrategy": {"type": "RollingUpdate"}},
        "status": {"observedGeneration": 3, "desiredNumberScheduled": 2, **status},
    }


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        (
            {**_ds(), "status": {"observedGeneration": 2}},
            RolloutStatus(False, progress="waiting for the update to be picked up"),
        ),
        (
            _ds(updatedNumberScheduled=1, numberAvailable=2),
            RolloutStatus(False, progress="1 of 2 copies updated"),
        ),
        (
            _ds(updatedNumberScheduled=2, numberAvailable=1),
            RolloutStatus(False, progress="1 of 2 copies available"),
        ),
        (_ds(updatedNumberScheduled=2, numberAvailable=2), RolloutStatus(True)),
    ],
)
def test_a_daemonset_rolls_out_by_kubectls_rules(
    workload: dict[str, Any], expected: RolloutStatus
) -> None:
    assert rollout_status(workload) == expected


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        (
            {**_sts({"type": "OnDelete"}, readyReplicas=1), "status": {"readyReplicas": 3}},
            RolloutStatus(False, progress="waiting for the update to be picked up", ruled=False),
        ),
        (
            _sts({"type": "OnDelete"}, readyReplicas=1, updateRevision="b", currentRevision="a"),
            RolloutStatus(False, progress="1 of 3 copies ready", ruled=False),
        ),
        # Copies on the old revision are OnDelete's design: only a missing copy counts.
        (
            _sts({"type": "OnDelete"}, updateRevision="b", currentRevision="a"),
            RolloutStatus(True, ruled=False),
        ),
        (
            {
                **_ds(numberAvailable=2),
                "spec": {"updateStrategy": {"type": "OnDelete"}},
                "status": {"observedGeneration": 2, "desiredNumberScheduled": 2},
            },
            RolloutStatus(False, progress="waiting for the update to be picked up", ruled=False),
        ),
        (
            {**_ds(numberAvailable=1), "spec": {"updateStrategy": {"type": "OnDelete"}}},
            RolloutStatus(False, progress="1 of 2 copies available", ruled=False),
        ),
        (
            {**_ds(numberAvailable=2), "spec": {"updateStrategy": {"type": "OnDelete"}}},
            RolloutStatus(True, ruled=False),
        ),
    ],
    ids=["sts-unobserved", "sts-short", "sts-whole", "ds-unobserved", "ds-short", "ds-whole"],
)
def test_on_delete_has_no_kubectl_rules_and_is_judged_by_the_controllers_counts(
    workload: dict[str, Any], expected: RolloutStatus
) -> None:
    """kubectl answers "rollout status is only available for RollingUpdate strategy type" for
    OnDelete (rollout_status.go): no rules (`ruled` False), and done only while every copy its
    controller counts is there: stateful_set_control.go `computeReplicaStatus` (readyReplicas
    against spec.replicas), daemon_controller.go `updateDaemonSetStatus` (numberAvailable
    against desiredNumberScheduled)."""
    assert rollout_status(workload) == expected
