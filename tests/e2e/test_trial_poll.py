"""The trial reads its pods first soon, then less often: a probe that ends in a fraction of a
second is seen at once (bench/trial_bench.py measures what that saves), a long image pull is
read about once a second. Through truegreen's real client against the fake API server and its
trial kubelet, with the waits recorded."""

import time
from pathlib import Path
from typing import Any

from tests.support.fake_apiserver import FakeApiServer
from tests.support.fake_kubelet import FakeKubelet
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings
from truegreen.trial.run import run_trial


def _pod(master: str) -> list[dict[str, Any]]:
    del master  # one pod: nobody to tell rank 0's address
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "truegreen-trial-x-0e20-0",
                "labels": {"truegreen.io/trial": "true"},
            },
            "spec": {"containers": [{"name": "trainer", "image": "python:3.12"}]},
        }
    ]


def test_the_waits_between_reads_double_from_a_tenth_of_a_second_to_one(tmp_path: Path) -> None:
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    with FakeApiServer() as server:
        server.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "train"}})
        server.admission.allow_creates = True
        server.kubelet = FakeKubelet(server, stall=True)  # never ends: every wait is taken
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        with LiveCluster.connect(ConnectionSettings(kubeconfig, request_timeout=5)) as cluster:
            run = run_trial(cluster, "train", _pod, timeout_seconds=4.5, sleep=wait)
    assert run.refused is None, run.refused
    assert [pod.ended_by_timeout for pod in run.pods] == [True], "precondition: it ran out"
    assert waits[:5] == [0.1, 0.2, 0.4, 0.8, 1.0], waits
    assert max(waits) == 1.0, "then once a second (the last wait is cut to the deadline)"
