"""A whole trial over HTTP: truegreen's own client creates the trial pods in the fake API server,
whose kubelet (tests/support/fake_kubelet.py) runs the probe as a local process; the trial
reads the Events, the statuses and the log back, and deletes the pods on every path."""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_apiserver import FakeApiServer
from tests.support.fake_kubelet import FakeKubelet
from truegreen.cluster import Kind
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings
from truegreen.trial.outcomes import Level, Outcome
from truegreen.trial.pods import TRIAL_LABEL, TrialSettings, trial_pod
from truegreen.trial.readback import TrialFinding, TrialRun, pod_findings
from truegreen.trial.run import run_trial

NAMESPACE = "train"
JOB_POD: dict[str, Any] = {
    "metadata": {"name": "llama", "labels": {"app": "llama"}},
    "spec": {
        "containers": [
            {
                "name": "trainer",
                "image": "ghcr.io/acme/train:2.11",
                "command": ["torchrun", "train.py"],
                "resources": {"limits": {"nvidia.com/gpu": "1"}},
                "volumeMounts": [{"name": "dataset", "mountPath": "/data"}],
            }
        ],
        "volumes": [{"name": "dataset", "persistentVolumeClaim": {"claimName": "imagenet"}}],
    },
}


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeApiServer]:
    server = FakeApiServer()
    server.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    server.admission.allow_creates = True
    with server:
        yield server


def _dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "imagenet"
    folder.mkdir()
    (folder / "shard-0.bin").write_bytes(b"d" * (4 << 20))
    return folder


def _trial(
    fake: FakeApiServer,
    tmp_path: Path,
    *,
    world: int = 1,
    timeout: float = 30,
    init_timeout: int = 3,
    sleep: Callable[[float], None] | None = None,
) -> TrialRun:
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
    settings = TrialSettings(
        run="t1",
        deadline_seconds=60,
        rendezvous_port=_free_port(),
        read_mib=2,
        init_timeout_seconds=init_timeout,
    )

    def make(master: str) -> list[dict[str, Any]]:
        return [
            trial_pod("llama", JOB_POD, settings, rank=r, world=world, master=master)
            for r in range(world)
        ]

    with LiveCluster.connect(ConnectionSettings(kubeconfig=kubeconfig, request_timeout=5)) as c:
        if sleep is None:
            return run_trial(c, NAMESPACE, make, timeout_seconds=timeout, sleep=_short_sleep)
        return run_trial(c, NAMESPACE, make, timeout_seconds=timeout, sleep=sleep)


def _short_sleep(seconds: float) -> None:
    import time

    time.sleep(min(seconds, 0.05))


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _levels(run: TrialRun) -> list[dict[Outcome, Level]]:
    return [{f.outcome: f.level for f in pod_findings(p)} for p in run.pods]


def _trial_pods_left(fake: FakeApiServer) -> list[str]:
    return [p["metadata"]["name"] for p in fake.list_objects("Pod", NAMESPACE)]


def test_a_healthy_pod_pulls_reads_its_dataset_and_is_deleted(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    fake.kubelet = FakeKubelet(fake, {"imagenet": _dataset(tmp_path)})
    run = _trial(fake, tmp_path)
    assert run.refused is None
    assert [p.pod for p in run.pods] == ["truegreen-trial-llama-t1-0"]
    assert _levels(run) == [
        {
            Outcome.IMAGE_PULLED: Level.OK,
            Outcome.NO_GPU_LIBRARY: Level.UNKNOWN,
            Outcome.SHM_ENOUGH: Level.OK,
            Outcome.DATA_READ: Level.OK,
        }
    ]
    assert _trial_pods_left(fake) == []
    assert run.not_deleted == ()


def test_a_slow_pull_is_a_warning_with_the_kubelet_s_time_and_size(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    fake.kubelet = FakeKubelet(
        fake,
        {"imagenet": _dataset(tmp_path)},
        pull=("19m41.2s", "19m58.004s"),
        image_bytes=17_179_869_184,
    )
    [pod] = _trial(fake, tmp_path).pods
    [slow] = [f for f in pod_findings(pod) if f.outcome is Outcome.IMAGE_PULL_SLOW]
    assert (slow.level, slow.value, slow.size_bytes) == (
        Level.WARNING,
        19 * 60.0 + 58.004,
        17_179_869_184,
    )


def test_two_workers_reach_rank_0_and_both_are_deleted(fake: FakeApiServer, tmp_path: Path) -> None:
    fake.kubelet = FakeKubelet(fake, {"imagenet": _dataset(tmp_path)})
    run = _trial(fake, tmp_path, world=2)
    assert [p.pod for p in run.pods] == [
        "truegreen-trial-llama-t1-0",
        "truegreen-trial-llama-t1-1",
    ]
    assert [levels[Outcome.WORKERS_REACHED] for levels in _levels(run)] == [Level.OK, Level.OK]
    started = fake.kubelet.started
    assert started["truegreen-trial-llama-t1-0"]["TRUEGREEN_PROBE_MASTER_ADDR"] == "127.0.0.1", (
        "rank 0 hosts the rendezvous: it is told loopback"
    )
    assert started["truegreen-trial-llama-t1-1"]["TRUEGREEN_PROBE_MASTER_ADDR"] == "127.0.0.1", (
        "the worker is given the address the server shows for rank 0"
    )
    assert _trial_pods_left(fake) == []


def test_a_worker_that_cannot_reach_rank_0(fake: FakeApiServer, tmp_path: Path) -> None:
    # The pods are given 127.0.0.2 while rank 0 listens on 127.0.0.1 only.
    fake.kubelet = FakeKubelet(fake, {"imagenet": _dataset(tmp_path)}, pod_ip="127.0.0.2")
    run = _trial(fake, tmp_path, world=2, init_timeout=2)
    rank0, worker = (pod_findings(p) for p in run.pods)
    assert [f for f in rank0 if f.outcome is Outcome.WORKERS_MISSING] == [
        TrialFinding(Outcome.WORKERS_MISSING, Level.FAIL, run.pods[0].pod, "", 0.0, 1.0)
    ]
    [unreachable] = [f for f in worker if f.outcome is Outcome.RANK0_UNREACHABLE]
    assert unreachable.words.startswith("127.0.0.2:")
    assert unreachable.words.endswith("ConnectionRefusedError: [Errno 111] Connection refused")


def test_a_container_that_cannot_start_keeps_the_kubelet_s_words(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    fake.kubelet = FakeKubelet(
        fake,
        start_failure=("Failed", 'Error: secret "wandb" not found', "CreateContainerConfigError"),
    )
    run = _trial(fake, tmp_path, timeout=1)
    [pod] = run.pods
    # The waiting container's message is the Event's (kuberuntime_container.go
    # startContainer records "Error: %v" and returns the same words): said once.
    assert [(f.outcome, f.words) for f in pod_findings(pod) if f.level is Level.FAIL] == [
        (Outcome.NOT_STARTED, 'Error: secret "wandb" not found'),
    ]
    assert _trial_pods_left(fake) == []


def test_still_pulling_when_the_time_runs_out(fake: FakeApiServer, tmp_path: Path) -> None:
    fake.kubelet = FakeKubelet(fake, stall=True)
    [pod] = _trial(fake, tmp_path, timeout=1).pods
    assert pod.ended_by_timeout is True
    assert [f.outcome for f in pod_findings(pod)] == [Outcome.STILL_PULLING]
    assert _trial_pods_left(fake) == []


def test_a_refused_create_is_the_gate_s_answer(fake: FakeApiServer, tmp_path: Path) -> None:
    fake.admission.allow_creates = False
    run = _trial(fake, tmp_path)
    assert run.pods == ()
    assert run.refused is not None
    assert run.refused.server_message.startswith('pods is forbidden: User "')
    assert run.not_deleted == ()
    assert [r.method for r in fake.log if r.method == "DELETE"] == [], "nothing was stored"


def test_ctrl_c_during_the_wait_deletes_the_pods(fake: FakeApiServer, tmp_path: Path) -> None:
    fake.kubelet = FakeKubelet(fake, stall=True)

    def interrupted(_: float) -> None:
        assert _trial_pods_left(fake) == ["truegreen-trial-llama-t1-0"], "precondition"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _trial(fake, tmp_path, sleep=interrupted)
    assert _trial_pods_left(fake) == []


def test_an_interrupted_run_s_pods_are_removed_by_the_next(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    fake.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "truegreen-trial-llama-old-0",
                "namespace": NAMESPACE,
                "labels": {TRIAL_LABEL: "true"},
                # Its own deadline long past: no live run owns it.
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {
                "containers": [{"name": "trainer", "image": "x"}],
                "activeDeadlineSeconds": 330,
            },
        }
    )
    fake.kubelet = FakeKubelet(fake, {"imagenet": _dataset(tmp_path)})
    run = _trial(fake, tmp_path)
    assert run.removed_leftovers == ("truegreen-trial-llama-old-0",)
    assert _trial_pods_left(fake) == []
    assert fake.get_object("Pod", "truegreen-trial-llama-old-0", NAMESPACE) is None
    assert Kind.POD.spec.name == "Pod"
