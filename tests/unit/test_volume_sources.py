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
