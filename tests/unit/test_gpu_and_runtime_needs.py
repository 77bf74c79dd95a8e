"""GPU machines and what training programs need beyond resources, value by value."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from truegreen.cluster import Kind
from truegreen.doctor.checks.workloads.runtime_needs import shared_memory_needs
from truegreen.doctor.knowledge.gpu_supply import (
    STARTUP_TIME,
    Supply,
    gpu_problems,
    gpu_software_pods,
    missing_gpu_resources,
    offered_gpu_resources,
    pod_state,
)
from truegreen.doctor.knowledge.training import PodSet, TrainingJob


def _node(
    name: str, labels: dict[str, str], capacity: dict[str, str], allocatable: dict[str, str]
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": capacity, "allocatable": allocatable},
    }


def test_a_gpu_machine_is_known_by_its_labels_or_its_capacity() -> None:
    nodes = [
        _node("plain", {}, {"cpu": "8"}, {"cpu": "8"}),
        _node("labelled", {"nvidia.com/gpu.present": "true"}, {}, {}),
        _node("nfd", {"feature.node.kubernetes.io/pci-10de.present": "true"}, {}, {}),
        _node("gke", {"cloud.google.com/gke-accelerator": "nvidia-l4"}, {}, {}),
        _node("registered", {}, {"nvidia.com/gpu": "8"}, {"nvidia.com/gpu": "0"}),
        _node(
            "healthy",
            {"nvidia.com/gpu.present": "true"},
            {"nvidia.com/gpu": "8"},
            {"nvidia.com/gpu": "8"},
        ),
        _node("false", {"nvidia.com/gpu.present": "false"}, {}, {}),
    ]
    assert [(p.machine, p.supply, p.signal) for p in gpu_problems(nodes)] == [
        ("gke", Supply.NOT_RUNNING, "cloud.google.com/gke-accelerator=nvidia-l4"),
        ("labelled", Supply.NOT_RUNNING, "nvidia.com/gpu.present=true"),
        ("nfd", Supply.NOT_RUNNING, "feature.node.kubernetes.io/pci-10de.present=true"),
        ("registered", Supply.NOT_RUNNING, "capacity nvidia.com/gpu"),
    ]


CLUSTER_AUTOSCALER_GPU_LABELS = (
    ("cloud.google.com/gke-accelerator", "nvidia-tesla-t4"),
    ("kubernetes.azure.com/accelerator", "nvidia"),
    ("accelerator", "nvidia"),
    ("k8s.amazonaws.com/accelerator", "nvidia-a10g"),
    ("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB"),
    ("baidu/nvidia_name", "nTeslaV100"),
    ("cloud.tencent.com/tke-accelerator", "nvidia-tesla-t4"),
    ("cluster-api/accelerator", "nvidia-tesla-a100"),
    ("cloud.digitalocean.com/gpu-node", "true"),
    ("hcloud/gpu-node", "true"),
    ("node.kubernetes.ovhcloud.com/gpu", "true"),
    ("k8s.scw.cloud/gpu", "nvidia"),
    ("civo.com/gpu-node", "true"),
    ("bke.bizflycloud.vn/gpu-node", "true"),
    ("cloud.brightbox.com/gpu-node", "true"),
    ("cherryservers.com/gpu", "true"),
    ("magnum.openstack.org/gpu", "true"),
)
"""The GPULabel of every cluster-autoscaler cloud provider that names one
(cloudprovider/<name>/*_cloud_provider.go; azure's legacyGPULabel `accelerator`, which
azure_template.go writes as `nvidia`), with a value each writes or could: the key alone makes a
GPU machine (utils/gpu/gpu.go NodeHasGpu)."""


@pytest.mark.parametrize(("key", "value"), CLUSTER_AUTOSCALER_GPU_LABELS)
def test_every_cloud_s_autoscaler_gpu_label_makes_a_gpu_machine(key: str, value: str) -> None:
    (problem,) = gpu_problems([_node("gpu", {key: value}, {"cpu": "8"}, {"cpu": "8"})])
    assert (problem.supply, problem.signal) == (Supply.NOT_RUNNING, f"{key}={value}")


def test_the_bare_accelerator_key_is_a_gpu_machine_only_for_nvidia() -> None:
    """`accelerator` is azure's legacy label and cloudstack's; any operator may use so plain a
    key for something else (the tests' own machines say `accelerator: gpu`)."""
    assert gpu_problems([_node("tpu", {"accelerator": "tpu-v4"}, {}, {})]) == []


def test_fewer_offered_than_held_is_unhealthy_by_capacity_or_by_the_count_label() -> None:
    nodes = [
        _node("a", {}, {"nvidia.com/gpu": "8"}, {"nvidia.com/gpu": "6"}),
        _node("b", {"nvidia.com/gpu.count": "8"}, {"nvidia.com/gpu": "4"}, {"nvidia.com/gpu": "4"}),
        _node("c", {}, {"nvidia.com/mig-1g.10gb": "7"}, {"nvidia.com/mig-1g.10gb": "7"}),
    ]
    assert [(p.machine, p.supply, p.offered, p.expected) for p in gpu_problems(nodes)] == [
        ("a", Supply.UNHEALTHY, 6, 8),
        ("b", Supply.UNHEALTHY, 4, 8),
    ]
    assert offered_gpu_resources(nodes) == ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb"]
    assert missing_gpu_resources(["nvidia.com/gpu", "cpu"], nodes[2:]) == ["nvidia.com/gpu"]


def test_a_machine_that_has_just_joined_is_still_starting_its_gpu_software() -> None:
    """cluster-autoscaler counts a GPU-labelled machine without GPUs as not started for
    `--max-node-startup-time` (15 minutes by default) after its creation
    (clusterstate.go `updateReadinessStats`); unhealthy GPUs, or a device plugin that has
    registered its GPUs in capacity (devicemanager `GetCapacity`) and offers none, are never a
    start."""
    now = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    assert timedelta(minutes=15) == STARTUP_TIME

    def joined(
        name: str, ago: timedelta, allocatable: dict[str, str], capacity: str = "0"
    ) -> dict[str, Any]:
        node = _node(name, {"nvidia.com/gpu.count": "4"}, {"nvidia.com/gpu": capacity}, allocatable)
        node["metadata"]["creationTimestamp"] = (now - ago).strftime("%Y-%m-%dT%H:%M:%SZ")
        return node

    nodes = [
        joined("new", timedelta(minutes=14, seconds=59), {}),
        joined("at-limit", timedelta(minutes=15), {}),
        joined("old", timedelta(hours=3), {}),
        joined("new-unhealthy", timedelta(minutes=1), {"nvidia.com/gpu": "2"}, capacity="4"),
        joined("new-plugin-stopped", timedelta(minutes=1), {}, capacity="4"),
        joined("in-the-future", -timedelta(minutes=20), {}),
        _node("unknown-age", {"nvidia.com/gpu.present": "true"}, {}, {}),
    ]
    problems = gpu_problems(nodes)
    assert [(p.machine, p.supply, p.starting(now)) for p in problems] == [
        ("at-limit", Supply.NOT_RUNNING, False),
        ("in-the-future", Supply.NOT_RUNNING, False),
        ("new", Supply.NOT_RUNNING, True),
        ("new-plugin-stopped", Supply.NOT_RUNNING, False),
        ("new-unhealthy", Supply.UNHEALTHY, False),
        ("old", Supply.NOT_RUNNING, False),
        ("unknown-age", Supply.NOT_RUNNING, False),
    ]
    assert problems[2].joined == now - timedelta(minutes=14, seconds=59)


def test_the_gpu_software_pods_and_their_state() -> None:
    pods: list[dict[str, Any]] = [
        {
            "metadata": {"name": "nvidia-device-plugin-daemonset-x"},
            "status": {
                "phase": "Running",
                "containerStatuses": [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
            },
        },
        {"metadata": {"name": "nvidia-operator-validator-y"}, "status": {"phase": "Pending"}},
        {"metadata": {"name": "web-1"}, "status": {"phase": "Running"}},
        {
            "metadata": {"name": "nvidia-driver-daemonset-z"},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]},
        },
    ]
    found = gpu_software_pods(pods)
    assert [pod_state(p) for p in found] == ["CrashLoopBackOff", "Pending", "Running, not ready"]


def _job(
    container: dict[str, Any],
    *,
    pods: int = 1,
    together: bool = False,
    volumes: list[Any] | None = None,
) -> TrainingJob:
    template = {"spec": {"containers": [container], "volumes": volumes or []}}
    return TrainingJob(Kind.JOB, "j", None, (PodSet("worker", pods, template),), together)


@pytest.mark.parametrize(
    ("container", "signal"),
    [
        ({"name": "t", "resources": {"limits": {"nvidia.com/gpu": "4"}}}, "4 GPUs"),
        (
            {"name": "t", "command": ["torchrun", "--nproc-per-node=1", "train.py"]},
            "torchrun in its command",
        ),
        (
            {"name": "t", "command": ["python", "-m", "torch.distributed.run", "x.py"]},
            "torch.distributed.run in its command",
        ),
        (
            {"name": "t", "args": ["/usr/local/bin/deepspeed", "train.py"]},
            "deepspeed in its command",
        ),
        (
            {"name": "t", "command": ["bash", "-c"], "args": ["accelerate launch train.py"]},
            "accelerate launch in its command",
        ),
        (
            {"name": "t", "env": [{"name": "WORLD_SIZE", "value": "4"}]},
            "WORLD_SIZE in its settings",
        ),
    ],
)
def test_what_makes_a_program_need_shared_memory(container: dict[str, Any], signal: str) -> None:
    (need,) = shared_memory_needs(_job(container))
    assert need.signal == signal


def test_one_gpu_alone_or_memory_backed_shared_memory_needs_nothing() -> None:
    one = {"name": "t", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    assert shared_memory_needs(_job(one)) == []
    (ranks,) = shared_memory_needs(_job(one, pods=4, together=True))
    assert ranks.signal == "one of 4 programs run together"
    mounted = {**one, "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm/"}]}
    memory = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    assert shared_memory_needs(_job(mounted, pods=4, together=True, volumes=memory)) == []
    on_disk = [{"name": "dshm", "emptyDir": {}}]
    assert shared_memory_needs(_job(mounted, pods=4, together=True, volumes=on_disk)) != []
    bad = {"name": "t", "resources": {"limits": {"nvidia.com/gpu": "lots"}}}
    assert shared_memory_needs(_job(bad)) == []
