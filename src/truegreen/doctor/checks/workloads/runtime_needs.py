"""What a training job's programs need from their container beyond resources: shared memory.

A container's /dev/shm is the runtime's default of 64 MiB (containerd and CRI-O, Docker's
`--shm-size` default) unless the pod mounts a memory-backed emptyDir there, or runs in the
machine's IPC namespace (`hostIPC: true`), which gives it the machine's own /dev/shm.
PyTorch's DataLoader workers and NCCL move tensors through /dev/shm, and fail with `bus error`
once it is full (kubeflow/pipelines#6880, #9893; pytorch/pytorch#2244): a program with several
GPUs, or one rank of a distributed run (with GPUs or without), needs it. Everything here is
pure.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.doctor.knowledge.training import PodSet, TrainingJob
from truegreen.gpu_resources import is_gpu_resource
from truegreen.quantity import QuantityError, Resources

SHM_PATH = "/dev/shm"
_LAUNCHERS = re.compile(
    r"(^|[\s/])(torchrun|deepspeed|mpirun|horovodrun|accelerate\s+launch)\b"
    r"|torch\.distributed\.(run|launch)"
)
"""Launchers of distributed runs, in a container's command or args."""
_DISTRIBUTED_ENV = frozenset({"WORLD_SIZE", "MASTER_ADDR", "RANK", "LOCAL_RANK"})


class SharedMemoryNeed(Struct, frozen=True):
    """A pod set whose programs need a memory-backed /dev/shm and do not have one."""

    pod_set: str
    container: str
    signal: str
    """What makes it need one: `4 GPUs`, `torchrun in its command`, `WORLD_SIZE in its env`."""


def _gpus(container: Mapping[str, Any]) -> int:
    resources = o.mapping(container.get("resources"))
    try:
        amounts = Resources.parse(o.mapping(resources.get("limits"))).max_with(
            Resources.parse(o.mapping(resources.get("requests")))
        )
    except QuantityError:
        return 0
    return sum(amount for name, amount in amounts.amounts if is_gpu_resource(name))


def _memory_shm(spec: Mapping[str, Any], container: Mapping[str, Any]) -> bool:
    memory_volumes = {
        str(o.mapping(v).get("name"))
        for v in o.sequence(spec.get("volumes"))
        if o.mapping(o.mapping(v).get("emptyDir")).get("medium") == "Memory"
    }
    return any(
        str(o.mapping(m).get("name")) in memory_volumes
        and str(o.mapping(m).get("mountPath")).rstrip("/") == SHM_PATH
        for m in o.sequence(container.get("volumeMounts"))
    )


def _signal(job: TrainingJob, container: Mapping[str, Any]) -> str:
    gpus = _gpus(container)
    if gpus > 1:
        return f"{gpus} GPUs"
    words = " ".join(
        str(w) for w in [*o.sequence(container.get("command")), *o.sequence(container.get("args"))]
    )
    launcher = _LAUNCHERS.search(words)
    if launcher is not None:
        return f"{launcher.group(0).strip().split('/')[-1]} in its command"
    env = {str(o.mapping(e).get("name")) for e in o.sequence(container.get("env"))}
    distributed = sorted(env & _DISTRIBUTED_ENV)
    if distributed:
        return f"{distributed[0]} in its settings"
    # A pod of several run together is one rank of a distributed run, GPUs or not: its
    # operator sets WORLD_SIZE and MASTER_ADDR in each (kubeflow/training-operator
    # pkg/controller.v1/pytorch/envvar.go `setPodEnv`), which its template does not show, and
    # its DataLoader workers hand their batches over through /dev/shm all the same.
    if job.together and job.pods > 1:
        return f"one of {job.pods} programs run together"
    return ""


def shared_memory_needs(job: TrainingJob) -> list[SharedMemoryNeed]:
    """Each pod set's first container that needs a memory-backed /dev/shm and lacks one."""
    needs = []
    for pod_set in job.pod_sets:
        need = _pod_set_need(job, pod_set)
        if need is not None:
            needs.append(need)
    return needs


def _pod_set_need(job: TrainingJob, pod_set: PodSet) -> SharedMemoryNeed | None:
    spec = pod_set.spec
    # In the machine's IPC namespace the runtime mounts the machine's own /dev/shm, not a
    # 64 MiB tmpfs of the pod's (containerd internal/cri/server/container_create.go
    # `linuxContainerMounts` and podsandbox/sandbox_run_linux.go `setupSandboxFiles`:
    # NamespaceMode_NODE; CRI-O server/sandbox_run_linux.go `setupSandboxShm`: hostIPC).
    if spec.get("hostIPC") is True:
        return None
    containers: Sequence[Mapping[str, Any]] = o.containers(spec)
    for container in containers:
        signal = _signal(job, container)
        if signal and not _memory_shm(spec, container):
            return SharedMemoryNeed(pod_set.name, str(container.get("name") or ""), signal)
    return None


SHM_FIX = (
    "volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}] and, in the "
    "container, volumeMounts: [{name: dshm, mountPath: /dev/shm}]"
)
"""The pod template lines that give a container a memory-backed /dev/shm."""
