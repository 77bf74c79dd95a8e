"""Which extended resources and device classes are GPUs: one notion for doctor's counts and
the trial's pods."""

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

GPU_RESOURCE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu", "gpu.intel.com/")
"""The extended resources that are GPUs or slices of one (NVIDIA's device plugin: `nvidia.com/
gpu`, and `nvidia.com/mig-<profile>` under the mixed MIG strategy; AMD's and Intel's plugins)."""

GPU_DEVICE_CLASSES = frozenset({"gpu.nvidia.com", "mig.nvidia.com", "gpu.amd.com", "gpu.intel.com"})
"""The DeviceClasses the GPU drivers for dynamic resource allocation install, whose devices
are GPUs or slices of one: NVIDIA's (NVIDIA/k8s-dra-driver-gpu, deployments/helm/
nvidia-dra-driver-gpu/templates: `gpu.nvidia.com`, `mig.nvidia.com`), AMD's (`gpu.amd.com`)
and Intel's (intel/intel-resource-drivers-for-kubernetes, `gpu.intel.com`)."""


def is_gpu_resource(name: str) -> bool:
    """A GPU or a slice of one."""
    return name.startswith(GPU_RESOURCE_PREFIXES)


def is_gpu_class(name: str, device_class: Mapping[str, Any] | None) -> bool:
    """A DeviceClass whose devices are GPUs: one a GPU driver installs, or one that stands for
    a GPU extended resource (its `spec.extendedResourceName`, resource.k8s.io/v1: a pod asking
    for that resource is given the class's devices)."""
    spec = device_class.get("spec") if device_class is not None else None
    extended = spec.get("extendedResourceName") if isinstance(spec, Mapping) else None
    return name in GPU_DEVICE_CLASSES or (isinstance(extended, str) and is_gpu_resource(extended))


class ClaimedGpus(Struct, frozen=True):
    """The GPUs one request of a pod's device claim asks for (dynamic resource allocation):
    a container that names the claim (and the request, or none) in its `resources.claims` gets
    them."""

    claim: str
    """The entry of the pod's `spec.resourceClaims` (its `name`)."""
    request: str
    """The request's name in the claim; '' when the claim itself could not be read."""
    at_least: int
    """How many GPUs it gives, or the fewest it may give where `exact` is False."""
    exact: bool = True
    """False where the number is not fixed ahead: every GPU of a kind on the machine
    (`allocationMode: All`), one of alternatives of different sizes (`firstAvailable`), or a
    claim that could not be read."""
