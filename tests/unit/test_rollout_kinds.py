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
