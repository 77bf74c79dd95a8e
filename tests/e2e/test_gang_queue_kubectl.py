"""kubectl is the oracle for the remedies' commands about KAI's queues and for a gated pod: the
fake serves KAI's cluster-scoped Queues beside Volcano's (one resource name, two groups, told
apart by the group), and a pod created with a scheduling gate reads back as the API server
stores it (`PodScheduled` False, `SchedulingGated`)."""

import json
from pathlib import Path

import pytest

from tests.support import gang_objects as gang
from tests.support.fake_apiserver import FakeApiServer
from tests.support.kubectl import kubectl

pytestmark = pytest.mark.kubectl


def test_kubectl_lists_kai_queues_by_their_group_beside_volcano_s(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    fake_api.install(gang.KAI_GROUP, gang.VOLCANO_GROUP)
    fake_api.add(gang.kai_queue("default"), gang.kai_queue("team-a", parent="default"))
    fake_api.add(gang.volcano_queue("research", gpus=8))
    kai = kubectl(kubeconfig, "get", "queues.scheduling.run.ai", "-o", "name")
    assert kai.returncode == 0, kai.stderr
    assert kai.stdout.split() == [
        "queue.scheduling.run.ai/default",
        "queue.scheduling.run.ai/team-a",
    ]
    described = kubectl(kubeconfig, "describe", "queues.scheduling.run.ai", "team-a")
    assert described.returncode == 0, described.stderr
    assert "Parent Queue:  default" in described.stdout


def test_a_gated_pod_reads_back_scheduling_gated(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    fake_api.admission.allow_creates = True
    fake_api.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "train"}})
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gated", "namespace": "train"},
        "spec": {
            "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
            "containers": [{"name": "c", "image": "busybox"}],
        },
    }
    # --validate=false: the fake serves no OpenAPI document for kubectl to validate against.
    created = kubectl(kubeconfig, "create", "--validate=false", "-f", "-", stdin=json.dumps(pod))
    assert created.returncode == 0, created.stderr
    got = kubectl(kubeconfig, "-n", "train", "get", "pod", "gated", "-o", "json")
    assert got.returncode == 0, got.stderr
    [condition] = json.loads(got.stdout)["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "PodScheduled",
        "False",
        "SchedulingGated",
    )
