"""What a list gives is what the server sent, less what nothing reads: every object's
managedFields and a machine's images are skipped while decoding; every other field, null or
odd values included, comes through as sent. Kinds with more at their top level than
metadata, spec and status come whole."""

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.hostile import Answer, Received, ScriptedApi
from truegreen.cluster import Kind, Listed
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings

MANAGED = [
    {
        "manager": "kubelet",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-11-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {"f:phase": {}}},
        "subresource": "status",
    }
]
POD = {
    "metadata": {
        "name": "web-7c9f-abcde",
        "generateName": "web-7c9f-",
        "namespace": "train",
        "uid": "0b7a",
        "resourceVersion": "42",
        "generation": 1,
        "creationTimestamp": "2026-11-01T00:00:00Z",
        "deletionTimestamp": "2026-11-02T00:00:00Z",
        "deletionGracePeriodSeconds": 30,
        "labels": {"app": "web"},
        "annotations": {"note": "kept"},
        "ownerReferences": [{"kind": "ReplicaSet", "name": "web-7c9f", "uid": "9"}],
        "finalizers": ["example.com/hold"],
        "selfLink": "/api/v1/namespaces/train/pods/web-7c9f-abcde",
        "managedFields": MANAGED,
    },
    "spec": {"nodeName": "m1", "containers": [{"name": "web", "image": "web:1"}]},
    "status": {"phase": "Running", "startTime": None},
}
ODD_POD = {"metadata": "not an object", "status": 3}
NODE = {
    "metadata": {"name": "m1", "labels": {"zone": "a"}, "managedFields": MANAGED},
    "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
    "status": {
        "allocatable": {"cpu": "8"},
        "capacity": {"cpu": "8"},
        "conditions": [{"type": "Ready", "status": "True"}],
        "nodeInfo": {"kubeletVersion": "v1.35.0", "osImage": "Ubuntu 24.04.2 LTS"},
        "images": [{"names": ["web@sha256:00", "web:1"], "sizeBytes": 1}],
    },
}
ACCOUNT = {
    "metadata": {"name": "default", "managedFields": MANAGED},
    "secrets": [{"name": "token"}],
    "imagePullSecrets": [{"name": "regcred"}],
}


def _list(*items: dict[str, Any]) -> Answer:
    body = json.dumps({"kind": "List", "metadata": {}, "items": list(items)}).encode()
    return 200, {"Content-Type": "application/json"}, body


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[tuple[list[Answer], Path]]:
    answers: list[Answer] = []

    def answer(_: Received, index: int) -> Answer:
        return answers[index]

    with ScriptedApi(answer) as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "c", "cluster": {"server": server.url}}],
                    "users": [{"name": "u", "user": {"token": "t0ken"}}],
                    "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                    "current-context": "x",
                }
            )
        )
        yield answers, kubeconfig


def _without(obj: dict[str, Any], *path: str) -> dict[str, Any]:
    trimmed = copy.deepcopy(obj)
    *parents, last = path
    where = trimmed
    for key in parents:
        where = where[key]
    del where[last]
    return trimmed


def _listed(kubeconfig: Path, kind: Kind) -> list[dict[str, Any]]:
    with LiveCluster.connect(ConnectionSettings(kubeconfig, request_timeout=5)) as cluster:
        read = cluster.list(kind, namespace="train" if kind.namespaced else None)
    assert isinstance(read, Listed), read
    return [dict(item) for item in read.items]


def test_a_listed_object_is_as_sent_less_its_managed_fields(
    scripted: tuple[list[Answer], Path],
) -> None:
    answers, kubeconfig = scripted
    answers.append(_list(POD, ODD_POD))
    assert len(POD["metadata"]) == 15, "precondition: every ObjectMeta field is sent"  # type: ignore[arg-type]
    assert _listed(kubeconfig, Kind.POD) == [
        {"kind": "Pod", "apiVersion": "v1", **_without(POD, "metadata", "managedFields")},
        {"kind": "Pod", "apiVersion": "v1", **ODD_POD},
    ]


def test_a_listed_machine_is_what_the_fit_reads_of_it(
    scripted: tuple[list[Answer], Path],
) -> None:
    """Nothing else of a machine is read: images, nodeInfo but its kubelet's version, and
    managedFields are skipped while decoding (and so never redacted, held or saved in a
    snapshot). Capacity is read: a GPU machine's device plugin shows in it; so are its
    conditions: a machine that is down is evidence; and its kubelet's version: from 1.35 the
    kubelet checks a pod's logins before starting it from an image the machine holds."""
    answers, kubeconfig = scripted
    answers.append(_list(NODE))
    expected = {
        "metadata": {"name": "m1", "labels": {"zone": "a"}},
        "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "8"},
            "allocatable": {"cpu": "8"},
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"kubeletVersion": "v1.35.0"},
        },
    }
    assert _listed(kubeconfig, Kind.NODE) == [{"kind": "Node", "apiVersion": "v1", **expected}]


def test_a_kind_with_more_at_its_top_level_comes_whole(
    scripted: tuple[list[Answer], Path],
) -> None:
    answers, kubeconfig = scripted
    answers.append(_list(ACCOUNT))
    assert _listed(kubeconfig, Kind.SERVICE_ACCOUNT) == [
        {"kind": "ServiceAccount", "apiVersion": "v1", **ACCOUNT}
    ]


def _kubelet_condition(kind: str, reason: str, message: str, beat: str) -> dict[str, str]:
    """A machine condition as the kubelet writes it (pkg/kubelet/nodestatus/setters.go)."""
    return {
        "type": kind,
        "status": "False",
        "lastHeartbeatTime": beat,
        "lastTransitionTime": "2026-11-30T08:00:00Z",
        "reason": reason,
        "message": message,
    }


def test_a_machine_s_conditions_are_read_without_their_heartbeats(
    scripted: tuple[list[Answer], Path],
) -> None:
    """Each condition's heartbeat (rewritten on every status update) is skipped; the words every
    healthy kubelet writes are one string however many machines say them; a malformed
    `conditions` is kept as it came, for the checks to judge."""
    answers, kubeconfig = scripted
    machines = [
        {
            "metadata": {"name": f"m{i}"},
            "status": {
                "conditions": [
                    _kubelet_condition(
                        "MemoryPressure",
                        "KubeletHasSufficientMemory",
                        "kubelet has sufficient memory available",
                        f"2026-12-05T08:0{i}:00Z",
                    )
                ]
            },
        }
        for i in range(2)
    ]
    odd = {"metadata": {"name": "odd"}, "status": {"conditions": {"Ready": "True"}}}
    answers.append(_list(*machines, odd))
    first, second, kept = _listed(kubeconfig, Kind.NODE)
    assert first["status"]["conditions"] == [
        {
            "type": "MemoryPressure",
            "status": "False",
            "lastTransitionTime": "2026-11-30T08:00:00Z",
            "reason": "KubeletHasSufficientMemory",
            "message": "kubelet has sufficient memory available",
        }
    ]
    [one], [other] = first["status"]["conditions"], second["status"]["conditions"]
    assert one["message"] is other["message"], "one string for the same words"
    assert kept["status"] == {"conditions": {"Ready": "True"}}
