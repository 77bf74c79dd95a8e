"""Whether each GPU machine's GPUs can be used: its labels say it has GPUs, its allocatable says
how many the device plugin offers.

A machine's GPUs reach the scheduler only through the device plugin, which advertises them in
the machine's `capacity` and `allocatable` and takes unhealthy devices out of `allocatable`
(kubelet pkg/kubelet/cm/devicemanager: healthy devices only). So a GPU machine whose allocatable
has no GPU has its GPU software not running (the driver, the container toolkit or the device
plugin), and one with fewer allocatable than its capacity has unhealthy GPUs. A machine is a GPU
machine by the labels the GPU operator, GPU feature discovery, Node Feature Discovery and the
clouds put on it.

A machine that has just joined offers no GPU until its GPU software is installed and running,
which takes minutes (the GPU operator builds or loads the driver on the machine first).
cluster-autoscaler counts such a machine as not started yet rather than unready for
`--max-node-startup-time` after its creation (processors/customresources/gpu_processor.go
`FilterOutNodesWithUnreadyResources` marks it unready with reason ResourceUnready;
clusterstate/clusterstate.go `updateReadinessStats` counts an unready node younger than the
startup time as NotStarted; config/flags/flags.go gives the flag its default of 15 minutes).
Everything here is pure.
"""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.knowledge.last_answer import LastAnswer
from truegreen.gpu_resources import is_gpu_resource
from truegreen.quantity import QuantityError, Resources

GPU_LABELS: tuple[tuple[str, str | None], ...] = (
    # NVIDIA GPU feature discovery (k8s-device-plugin docs/gpu-feature-discovery) and the GPU
    # operator, which deploys its components where this is true.
    ("nvidia.com/gpu.present", "true"),
    ("nvidia.com/gpu.count", None),
    # Node Feature Discovery: a PCI device of NVIDIA's vendor id 10de.
    ("feature.node.kubernetes.io/pci-10de.present", "true"),
    # Karpenter on AWS: the instance type's GPU count (karpenter-provider-aws
    # LabelInstanceGPUCount).
    ("karpenter.k8s.aws/instance-gpu-count", None),
    # cluster-autoscaler's GPU label of each cloud: a machine that carries it has GPUs, whether
    # or not its drivers are installed (utils/gpu/gpu.go NodeHasGpu: the key alone, any value;
    # processors/customresources/gpu_processor.go FilterOutNodesWithUnreadyResources then
    # counts one that offers none as not ready). Each is its cloudprovider/<name>/ GPULabel:
    # gce (GKE's accelerator node pools; equinixmetal, huaweicloud and kubemark use it too),
    ("cloud.google.com/gke-accelerator", None),
    # azure (AKS's GPU node pools),
    ("kubernetes.azure.com/accelerator", None),
    # and azure's legacyGPULabel, which azure_template.go writes as `nvidia` beside it
    # (cloudstack's GPULabel is the same bare key; any other value of so plain a key is not
    # taken as a GPU machine);
    ("accelerator", "nvidia"),
    # aws (aws_cloud_provider.go; its value the GPU type, `nvidia-a10g`),
    ("k8s.amazonaws.com/accelerator", None),
    # alicloud, baiducloud, tencentcloud, clusterapi,
    ("aliyun.accelerator/nvidia_name", None),
    ("baidu/nvidia_name", None),
    ("cloud.tencent.com/tke-accelerator", None),
    ("cluster-api/accelerator", None),
    # digitalocean, hetzner, ovhcloud, scaleway, civo, bizflycloud, brightbox, cherryservers,
    # magnum.
    ("cloud.digitalocean.com/gpu-node", None),
    ("hcloud/gpu-node", None),
    ("node.kubernetes.ovhcloud.com/gpu", None),
    ("k8s.scw.cloud/gpu", None),
    ("civo.com/gpu-node", None),
    ("bke.bizflycloud.vn/gpu-node", None),
    ("cloud.brightbox.com/gpu-node", None),
    ("cherryservers.com/gpu", None),
    ("magnum.openstack.org/gpu", None),
)
"""Labels that make a machine a GPU machine: (key, value), None for any value."""

STARTUP_TIME = timedelta(minutes=15)
"""How long after joining a GPU machine without usable GPUs is still starting: cluster-autoscaler's
`--max-node-startup-time` default."""

_COUNT_LABELS = ("nvidia.com/gpu.count", "karpenter.k8s.aws/instance-gpu-count")
"""Labels that say how many GPUs the machine holds."""


class Supply(StrEnum):
    """How a GPU machine's GPUs stand."""

    NOT_RUNNING = "not-running"
    """None offered: the GPU software (driver, toolkit, device plugin) is not running."""
    UNHEALTHY = "unhealthy"
    """Fewer offered than it has: some GPUs are unhealthy."""


class GpuProblem(Struct, frozen=True):
    """One GPU machine whose GPUs cannot all be used."""

    machine: str
    supply: Supply
    resource: str
    """The GPU resource it should offer (`nvidia.com/gpu`)."""
    offered: int
    expected: int
    """What it has: its capacity, or the count its labels give when that is more."""
    signal: str
    """The label (or capacity) that says it is a GPU machine."""
    joined: datetime | None
    """When the machine joined the cluster (its creation); None when not written."""
    registered: bool = False
    """The device plugin has registered the resource with the kubelet: it is in the machine's
    capacity (devicemanager `GetCapacity`), whatever is allocatable now."""

    def starting(self, now: datetime) -> bool:
        """No GPU is offered yet on a machine that joined less than `STARTUP_TIME` ago and whose
        device plugin has never registered: its GPU software is still being installed, not
        down. A resource in capacity with none allocatable is the kubelet's word that the
        plugin ran and stopped, or that every device is unhealthy; a creation in the future
        (clocks apart) is no age."""
        if self.supply is not Supply.NOT_RUNNING or self.registered or self.joined is None:
            return False
        return timedelta(0) <= now - self.joined < STARTUP_TIME


def _signal(labels: Mapping[str, Any]) -> str:
    for key, value in GPU_LABELS:
        if key in labels and (value is None or str(labels[key]).lower() == value):
            return f"{key}={labels[key]}"
    return ""


def _amounts(node: KubeObject, part: str) -> Resources:
    values = o.mapping(o.mapping(node.get("status")).get(part))
    try:
        return Resources.parse({k: v for k, v in values.items() if is_gpu_resource(str(k))})
    except QuantityError:
        return Resources()


def allocatable_gpus(node: KubeObject) -> int:
    """The GPUs a machine offers pods (`status.allocatable`, every GPU resource)."""
    return sum(amount for _, amount in _amounts(node, "allocatable").amounts)


def _label_count(labels: Mapping[str, Any]) -> int:
    for key in _COUNT_LABELS:
        value = labels.get(key)
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return 0


def gpu_problems(nodes: Sequence[KubeObject]) -> list[GpuProblem]:
    """Every GPU machine whose GPUs cannot all be used, by its name.

    The last machine list's answer is kept (doctor/knowledge/last_answer.py): every namespace of a
    run over many asks about the same one, twice."""
    return list(_last_problems(nodes))


def _gpu_problems(nodes: Sequence[KubeObject]) -> tuple[GpuProblem, ...]:
    problems = []
    for node in nodes:
        labels = o.labels_of(node)
        capacity = _amounts(node, "capacity")
        allocatable = _amounts(node, "allocatable")
        signal = _signal(labels) or (
            f"capacity {', '.join(sorted(capacity.names))}" if capacity.names else ""
        )
        if not signal:
            continue
        name = o.name_of(node)
        joined = o.created_at(node)
        counted = _label_count(labels)
        if not allocatable.names:
            resource = min(capacity.names, default="nvidia.com/gpu")
            expected = max(capacity.get(resource), counted)
            registered = capacity.get(resource) > 0
            problems.append(
                GpuProblem(
                    name, Supply.NOT_RUNNING, resource, 0, expected, signal, joined, registered
                )
            )
            continue
        for resource in sorted(capacity.names | allocatable.names):
            offered = allocatable.get(resource)
            expected = capacity.get(resource)
            if resource == "nvidia.com/gpu":
                expected = max(expected, counted)
            if offered < expected:
                problems.append(
                    GpuProblem(name, Supply.UNHEALTHY, resource, offered, expected, signal, joined)
                )
    return tuple(sorted(problems, key=lambda p: p.machine))


_last_problems = LastAnswer(_gpu_problems)


def offered_gpu_resources(nodes: Iterable[KubeObject]) -> list[str]:
    """The GPU resources the machines offer, by name (`nvidia.com/mig-1g.10gb`)."""
    names: set[str] = set()
    for node in nodes:
        names |= _amounts(node, "allocatable").names
    return sorted(names)


def missing_gpu_resources(requested: Iterable[str], nodes: Sequence[KubeObject]) -> list[str]:
    """The GPU resources the job asks for that no machine offers at all."""
    offered = set(offered_gpu_resources(nodes))
    return sorted({r for r in requested if is_gpu_resource(r) and r not in offered})


_GPU_SOFTWARE = ("device-plugin", "operator-validator", "driver", "container-toolkit", "dcgm")
"""Words in the names of the pods that make a machine's GPUs usable (the GPU operator's
DaemonSets: nvidia-driver-daemonset, nvidia-container-toolkit-daemonset, nvidia-device-plugin-
daemonset, nvidia-operator-validator; the standalone nvidia-device-plugin)."""


def gpu_software_pods(pods: Iterable[KubeObject]) -> list[KubeObject]:
    """The pods on a machine that run its GPU software, by their names."""
    return [p for p in pods if any(word in o.name_of(p) for word in _GPU_SOFTWARE)]


def pod_state(pod: KubeObject) -> str:
    """`Running`, `CrashLoopBackOff`, `Init:0/1`-like: the state `kubectl get pods` would show
    first (a waiting container's reason, else the phase)."""
    for status in o.container_statuses(pod):
        waiting = o.mapping(o.mapping(status.get("state")).get("waiting"))
        if waiting.get("reason"):
            return str(waiting["reason"])
    ready = o.condition(pod, "Ready")
    if o.phase(pod) == "Running" and ready is not None and ready.get("status") != "True":
        return "Running, not ready"
    return o.phase(pod)
