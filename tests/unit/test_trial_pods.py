"""The trial pods made from a training job's pod, and their command run as a kubelet would run it
(a local process with the container's env; a temp folder standing in for the dataset volume;
rank 0 listening on loopback only)."""

import re
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.support.fake_kubelet import image_bin
from truegreen.trial.outcomes import Level, Outcome
from truegreen.trial.pods import (
    TRIAL_LABEL,
    TRIAL_RUN_LABEL,
    TrialSettings,
    new_run_id,
    trial_name,
    trial_pod,
)
from truegreen.trial.readback import TrialPod, pod_findings
from truegreen.trial.run import LEFTOVER_GRACE, left_over

SETTINGS = TrialSettings(run="r7k2", deadline_seconds=300, shm_need_mib=2048)

JOB_POD: dict[str, Any] = {
    "metadata": {
        "name": "truegreen-trial-llama",
        "labels": {"app": "llama", "kueue.x-k8s.io/queue-name": "gpu"},
        "ownerReferences": [{"kind": "Job", "name": "llama", "uid": "u-1", "controller": True}],
    },
    "spec": {
        "priorityClassName": "training",
        "serviceAccountName": "trainer",
        "runtimeClassName": "nvidia",
        "nodeSelector": {"gpu": "h200"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "imagePullSecrets": [{"name": "ghcr"}],
        "restartPolicy": "OnFailure",
        "initContainers": [{"name": "fetch", "image": "busybox"}],
        "containers": [
            {"name": "log-shipper", "image": "fluent-bit"},
            {
                "name": "trainer",
                "image": "ghcr.io/acme/train:2.11",
                "command": ["torchrun"],
                "args": ["train.py"],
                "env": [
                    {"name": "WANDB_KEY", "valueFrom": {"secretKeyRef": {"name": "w", "key": "k"}}}
                ],
                "resources": {"limits": {"nvidia.com/gpu": "8", "memory": "512Gi"}},
                "livenessProbe": {"httpGet": {"port": 8080}},
                "volumeMounts": [
                    {"name": "dataset", "mountPath": "/data"},
                    {"name": "shm", "mountPath": "/dev/shm"},
                ],
            },
        ],
        "volumes": [
            {"name": "dataset", "persistentVolumeClaim": {"claimName": "imagenet"}},
            {"name": "shm", "emptyDir": {"medium": "Memory"}},
        ],
    },
}


def _env(pod: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"] if "value" in e}


def test_the_trial_pod_keeps_the_job_s_placement_and_runs_the_probe() -> None:
    pod = trial_pod("llama", JOB_POD, SETTINGS)
    assert pod["metadata"]["name"] == "truegreen-trial-llama-r7k2-0"
    assert pod["metadata"]["labels"] == {
        "app": "llama",
        "kueue.x-k8s.io/queue-name": "gpu",
        TRIAL_LABEL: "true",
        TRIAL_RUN_LABEL: "r7k2",
    }
    assert "ownerReferences" not in pod["metadata"]
    spec = pod["spec"]
    for kept in ("priorityClassName", "serviceAccountName", "runtimeClassName", "nodeSelector"):
        assert spec[kept] == JOB_POD["spec"][kept]
    assert spec["tolerations"] == JOB_POD["spec"]["tolerations"]
    assert spec["imagePullSecrets"] == [{"name": "ghcr"}]
    assert spec["initContainers"] == [{"name": "fetch", "image": "busybox"}]
    assert (spec["restartPolicy"], spec["activeDeadlineSeconds"]) == ("Never", 300)
    [trainer] = spec["containers"]
    assert trainer["name"] == "trainer", "the GPU container, not the first"
    assert trainer["image"] == "ghcr.io/acme/train:2.11"
    assert trainer["resources"] == {"limits": {"nvidia.com/gpu": "8", "memory": "512Gi"}}
    assert trainer["command"][:2] == ["sh", "-c"]
    assert "command -v python3" in trainer["command"][2]
    assert "probe_schema" in trainer["command"][4], "probe.py"
    assert '"runtime":"sh"' in trainer["command"][5], "probe.sh"
    assert "args" not in trainer
    assert "livenessProbe" not in trainer
    assert trainer["env"][0] == JOB_POD["spec"]["containers"][1]["env"][0], "references kept"
    assert _env(pod) == {
        "TRUEGREEN_PROBE_GPUS": "8",
        "TRUEGREEN_PROBE_SHM_NEED_MIB": "2048",
        "TRUEGREEN_PROBE_DATA": "/data",
        "TRUEGREEN_PROBE_READ_MIB": "64",
        "TRUEGREEN_PROBE_RANK": "0",
        "TRUEGREEN_PROBE_WORLD": "1",
        "TRUEGREEN_PROBE_MASTER_ADDR": "127.0.0.1",
        "TRUEGREEN_PROBE_MASTER_PORT": "29500",
        "TRUEGREEN_PROBE_INIT_TIMEOUT_S": "10",
    }, "the run's time is told at its create (truegreen.trial.run `_timed`)"


def test_a_pod_in_the_machine_s_ipc_namespace_is_tried_there() -> None:
    """`hostIPC` is kept: the probe measures the machine's own /dev/shm, which the job's pods
    get there (doctor's `workloads.no-shared-memory` says nothing of them), and the trial's
    shm outcome is of that size, not of a 64 MiB pod one."""
    job_pod = {**JOB_POD, "spec": {**JOB_POD["spec"], "hostIPC": True}}
    assert trial_pod("llama", job_pod, SETTINGS)["spec"]["hostIPC"] is True


def test_the_dataset_is_mounted_read_only() -> None:
    spec = trial_pod("llama", JOB_POD, SETTINGS)["spec"]
    assert spec["volumes"] == JOB_POD["spec"]["volumes"], "the volumes are the job's"
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "dataset", "mountPath": "/data", "readOnly": True},
        {"name": "shm", "mountPath": "/dev/shm"},
    ]
    assert JOB_POD["spec"]["volumes"][0]["persistentVolumeClaim"] == {"claimName": "imagenet"}


@pytest.mark.parametrize(
    ("volume", "mount", "named"),
    [
        ({}, {}, "prepare,cache-sync"),
        ({}, {"readOnly": True}, None),
        ({"readOnly": True}, {}, None),
    ],
    ids=["writable", "mount-read-only", "volume-read-only"],
)
def test_the_job_s_init_containers_and_sidecars_mount_its_claims_read_only(
    volume: dict[str, Any], mount: dict[str, Any], named: str | None
) -> None:
    """Every container of the trial pod mounts the job's claims read-only, the job's own init
    containers and native sidecars too; those the job lets write there (neither the mount nor
    the volume read-only: pkg/kubelet/kubelet_pods.go makeMounts) are named on the pod, and a
    template's own naming is never taken."""
    job = msgspec.json.decode(msgspec.json.encode(JOB_POD))
    job["metadata"]["annotations"] = {"truegreen.io/trial-read-only": "trainer"}
    job["spec"]["volumes"][0]["persistentVolumeClaim"].update(volume)
    data = {"name": "dataset", "mountPath": "/data", **mount}
    job["spec"]["initContainers"] = [
        {"name": "prepare", "image": "busybox", "volumeMounts": [data]},
        {"name": "fetch", "image": "busybox"},
        {
            "name": "cache-sync",
            "image": "busybox",
            "restartPolicy": "Always",
            "volumeMounts": [data, {"name": "shm", "mountPath": "/dev/shm"}],
        },
    ]
    pod = trial_pod("llama", job, SETTINGS)
    prepare, fetch, sidecar = pod["spec"]["initContainers"]
    assert prepare["volumeMounts"] == [{**data, "readOnly": True}]
    assert fetch == {"name": "fetch", "image": "busybox"}
    assert sidecar["volumeMounts"] == [
        {**data, "readOnly": True},
        {"name": "shm", "mountPath": "/dev/shm"},
    ]
    assert pod["spec"]["volumes"] == job["spec"]["volumes"]
    assert pod["metadata"]["annotations"].get("truegreen.io/trial-read-only") == named


def test_workers_are_kept_apart_and_given_rank_0_s_address() -> None:
    worker = trial_pod(
        "llama", JOB_POD, SETTINGS, rank=1, world=2, master="10.4.0.7", separate_machines=True
    )
    assert worker["metadata"]["name"] == "truegreen-trial-llama-r7k2-1"
    assert worker["spec"]["affinity"]["podAntiAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {TRIAL_RUN_LABEL: "r7k2"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
    env = _env(worker)
    assert (env["TRUEGREEN_PROBE_RANK"], env["TRUEGREEN_PROBE_WORLD"]) == ("1", "2")
    assert env["TRUEGREEN_PROBE_MASTER_ADDR"] == "10.4.0.7"
    together = trial_pod("llama", JOB_POD, SETTINGS, rank=1, world=2, master="10.4.0.7")
    assert "affinity" not in together["spec"]


def test_rank_0_listens_longer_than_a_worker_tries() -> None:
    """A worker starts once its machine has the image, maybe long after rank 0: rank 0 waits
    `listen_seconds`; a worker, created once rank 0 runs, tries `init_timeout_seconds`."""
    settings = msgspec.structs.replace(SETTINGS, listen_seconds=290, init_timeout_seconds=10)
    rank0 = trial_pod("llama", JOB_POD, settings, world=2)
    worker = trial_pod("llama", JOB_POD, settings, rank=1, world=2, master="10.4.0.7")
    assert _env(rank0)["TRUEGREEN_PROBE_INIT_TIMEOUT_S"] == "290"
    assert _env(worker)["TRUEGREEN_PROBE_INIT_TIMEOUT_S"] == "10"


def test_a_job_pinned_to_a_machine_is_tried_on_that_machine() -> None:
    """A template's `spec.nodeName` binds its pods without the scheduler: the named machine's
    kubelet admits or rejects them (kubernetes pkg/kubelet/lifecycle/predicate.go
    `predicateAdmitHandler.Admit`). The trial pod keeps it; its workers then share that one
    machine, as the job's pods do, so none is kept apart from rank 0."""
    pinned = {**JOB_POD, "spec": {**JOB_POD["spec"], "nodeName": "gpu-node-07"}}
    pod = trial_pod("llama", pinned, SETTINGS)
    assert pod["spec"]["nodeName"] == "gpu-node-07"
    worker = trial_pod(
        "llama", pinned, SETTINGS, rank=1, world=2, master="10.4.0.7", separate_machines=True
    )
    assert worker["spec"]["nodeName"] == "gpu-node-07"
    assert "affinity" not in worker["spec"], "kept apart from rank 0 on the one machine named"


@pytest.mark.parametrize(
    ("resources", "gpus"),
    [
        ({"limits": {"nvidia.com/mig-3g.40gb": "1", "cpu": "8"}}, 1),
        ({"requests": {"gpu.intel.com/i915": "2"}, "limits": {"gpu.intel.com/i915": "2"}}, 2),
        ({"limits": {"amd.com/gpu": "4"}}, 4),
        ({"limits": {"nvidia.com/mig-1g.10gb": "2", "nvidia.com/mig-2g.20gb": "1"}}, 3),
        ({"limits": {"example.com/gpu-like": "1", "cpu": "1"}}, 0),
    ],
)
def test_the_trainer_is_the_container_asking_for_any_gpu_resource(
    resources: dict[str, Any], gpus: int
) -> None:
    """A GPU is what doctor counts as one (truegreen.gpu_resources): `nvidia.com/gpu`, the MIG
    slices of NVIDIA's device plugin under its mixed strategy (`nvidia.com/mig-<profile>`),
    AMD's and Intel's. A log shipper listed first is not the trainer."""
    job_pod = {
        "metadata": {"name": "llama"},
        "spec": {
            "containers": [
                {"name": "log-shipper", "image": "fluent/fluent-bit:3.0"},
                {"name": "trainer", "image": "ghcr.io/acme/train:2.11", "resources": resources},
            ]
        },
    }
    [container] = trial_pod("llama", job_pod, SETTINGS)["spec"]["containers"]
    assert container["name"] == ("trainer" if gpus else "log-shipper")
    assert _env({"spec": {"containers": [container]}})["TRUEGREEN_PROBE_GPUS"] == str(gpus)


def test_no_controller_of_the_job_selects_the_trial_pod() -> None:
    """A controller adopts the orphan pods its selector matches: the Job controller
    (pkg/controller/job/job_controller.go getPodsForJob -> ClaimPods, then counts their
    completions, or deletes them while suspended), a ReplicaSet (`pod-template-hash`), JobSet,
    the training operator, KubeRay and LeaderWorkerSet by their own labels. The trial pod
    carries none of the keys those controllers stamp, nor any its job's own selector names;
    the rest (what other pods' affinity and spreading may match) is kept."""
    uid = "8d2c1f6e-0000-4000-8000-000000000001"
    stamped = {
        "batch.kubernetes.io/controller-uid": uid,
        "controller-uid": uid,
        "batch.kubernetes.io/job-name": "llama",
        "job-name": "llama",
        "batch.kubernetes.io/job-completion-index": "0",
        "pod-template-hash": "5d8f7c9b4",
        "controller-revision-hash": "llama-7c9",
        "statefulset.kubernetes.io/pod-name": "llama-0",
        "apps.kubernetes.io/pod-index": "0",
        "jobset.sigs.k8s.io/jobset-name": "llama",
        "training.kubeflow.org/job-name": "llama",
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer",
        "ray.io/cluster": "llama",
        "leaderworkerset.sigs.k8s.io/name": "llama",
    }
    labels = {**JOB_POD["metadata"]["labels"], "team": "nlp", **stamped}
    job_pod = {**JOB_POD, "metadata": {**JOB_POD["metadata"], "labels": labels}}
    settings = TrialSettings(run="r7k2", deadline_seconds=300, selector_keys=("team",))
    assert trial_pod("llama", job_pod, settings)["metadata"]["labels"] == {
        "app": "llama",
        "kueue.x-k8s.io/queue-name": "gpu",
        TRIAL_LABEL: "true",
        TRIAL_RUN_LABEL: "r7k2",
    }


def test_each_run_s_id_is_its_own() -> None:
    """Two runs in the same second (two operators, CI and a person) never share an id: their
    pods' names and their anti-affinity stay apart. 32 random bits, lower-case hex, so the
    name stays one DNS label (RFC 1123)."""
    ids = [new_run_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids), ids[:3]
    name = trial_name("a" * 80, ids[0], 1)
    assert len(name) == 63
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name), name


def test_a_trial_pod_is_left_over_only_once_its_own_deadline_passed() -> None:
    """Another run's pod is left over once its deadline (creationTimestamp, the API server's
    clock, plus activeDeadlineSeconds) and two minutes for clock skew have passed, or once the
    kubelet ended it at its deadline (`DeadlineExceeded`, pkg/kubelet/active_deadline.go);
    never a pod that shows neither."""
    created = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    pod: dict[str, Any] = {
        "metadata": {"creationTimestamp": "2026-12-01T12:00:00Z"},
        "spec": {"activeDeadlineSeconds": 330},
        "status": {"phase": "Running"},
    }
    edge = created + timedelta(seconds=330) + LEFTOVER_GRACE
    assert left_over(pod, edge + timedelta(seconds=1)) is True
    assert left_over(pod, edge) is False
    assert left_over(pod, created + timedelta(seconds=5)) is False, "a live run's pod"
    ended = {**pod, "status": {"phase": "Failed", "reason": "DeadlineExceeded"}}
    assert left_over(ended, created + timedelta(seconds=340)) is True
    assert left_over({**pod, "spec": {}}, edge + timedelta(days=1)) is False, "no deadline"
    assert left_over({**pod, "metadata": {}}, edge + timedelta(days=1)) is False
    assert left_over({**pod, "spec": {"activeDeadlineSeconds": True}}, edge) is False


def test_a_long_job_name_still_fits_one_dns_label() -> None:
    name = trial_name("a" * 80, "r7k2", 12)
    assert len(name) == 63
    assert name.endswith("-r7k2-12")


def _running(pod: dict[str, Any], image: Path, **extra: str) -> subprocess.Popen[str]:
    """The container's command started as a local process, with its literal env and the
    image's PATH (`image`, tests/support/fake_kubelet.py image_bin)."""
    container = pod["spec"]["containers"][0]
    return subprocess.Popen(
        container["command"],
        env={"PATH": str(image), **_env(pod), **extra},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run_as_kubelet(
    pod: dict[str, Any], volumes: dict[str, Path], image: Path, **extra: str
) -> str:
    """The container's command as a local process: its literal env, each mount path replaced
    by the folder standing in for the volume."""
    env = {**_env(pod), **extra}
    for mount_path, folder in volumes.items():
        env = {k: v.replace(mount_path, str(folder)) for k, v in env.items()}
    with _running(pod, image, **env) as process:
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out


def test_the_pod_s_command_runs_probe_py_where_the_image_has_python_else_probe_sh(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "shard-0.bin").write_bytes(b"d" * (1 << 20))
    settings = TrialSettings(run="r7k2", deadline_seconds=30, read_mib=1)
    pod = trial_pod("llama", JOB_POD, settings)
    python = image_bin(tmp_path / "python-image", sys.executable)
    log = _run_as_kubelet(pod, {"/data": data}, python)
    assert '"runtime":"python"' in log
    found = pod_findings(TrialPod(pod="truegreen-trial-llama-r7k2-0", log=log))
    levels = {f.outcome: f.level for f in found}
    assert levels[Outcome.NO_GPU_LIBRARY] is Level.UNKNOWN
    assert levels[Outcome.DATA_READ] is Level.OK
    shell_only = image_bin(tmp_path / "shell-image", None)
    log = _run_as_kubelet(pod, {"/data": data}, shell_only)
    assert '"runtime":"sh"' in log
    levels = {f.outcome: f.level for f in pod_findings(TrialPod(pod="p", log=log))}
    assert levels[Outcome.NO_GPU_LIBRARY] is Level.UNKNOWN
    assert levels[Outcome.DATA_READ] is Level.OK


def test_two_trial_pods_reach_each_other_on_loopback(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = TrialSettings(run="r7k2", deadline_seconds=30, rendezvous_port=port)
    rank0 = trial_pod("llama", JOB_POD, settings, rank=0, world=2, master="127.0.0.1")
    worker = trial_pod("llama", JOB_POD, settings, rank=1, world=2, master="127.0.0.1")
    loopback = {"TRUEGREEN_PROBE_BIND": "127.0.0.1", "TRUEGREEN_PROBE_TCP_MIB": "2"}
    image = image_bin(tmp_path / "image", sys.executable)
    with _running(worker, image, **loopback) as second:
        first = _run_as_kubelet(rank0, {"/data": tmp_path}, image, **loopback)
        worker_log, _ = second.communicate(timeout=60)
    reached = [
        f
        for log in (first, worker_log)
        for f in pod_findings(TrialPod(pod="p", log=log))
        if f.outcome is Outcome.WORKERS_REACHED
    ]
    assert len(reached) == 2, (first, worker_log)


def test_rank_0_is_told_loopback_and_a_worker_rank_0_s_address_never_the_job_s() -> None:
    """A job's trainer often states MASTER_ADDR as its pod 0's name under a headless service
    (`<job>-0.<service>`); rank 0 of the trial hosts the rendezvous itself and must reach its
    own store, never the job's (torch/distributed/rendezvous.py `_tcp_rendezvous_handler`:
    rank 0's TCPStore client connects to the init method's host)."""
    [trainer] = [c for c in JOB_POD["spec"]["containers"] if c["name"] == "trainer"]
    job_env = [{"name": "MASTER_ADDR", "value": "llama-0.llama.train.svc"}]
    job = {
        **JOB_POD,
        "spec": {**JOB_POD["spec"], "containers": [{**trainer, "env": job_env}]},
    }
    rank0 = _env(trial_pod("llama", job, SETTINGS, rank=0, world=2, master=""))
    worker = _env(trial_pod("llama", job, SETTINGS, rank=1, world=2, master="10.4.0.17"))
    assert rank0["TRUEGREEN_PROBE_MASTER_ADDR"] == "127.0.0.1"
    assert worker["TRUEGREEN_PROBE_MASTER_ADDR"] == "10.4.0.17"
    assert rank0["MASTER_ADDR"] == worker["MASTER_ADDR"] == "llama-0.llama.train.svc"
