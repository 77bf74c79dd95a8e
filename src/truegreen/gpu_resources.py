"""Which extended resources are GPUs: one notion for doctor's counts and the trial's pods."""

GPU_RESOURCE_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu", "gpu.intel.com/")
"""The extended resources that are GPUs or slices of one (NVIDIA's device plugin: `nvidia.com/
gpu`, and `nvidia.com/mig-<profile>` under the mixed MIG strategy; AMD's and Intel's plugins)."""


def is_gpu_resource(name: str) -> bool:
    """A GPU or a slice of one."""
    return name.startswith(GPU_RESOURCE_PREFIXES)
