"""NVIDIA's DRA driver (NVIDIA/k8s-dra-driver-gpu) objects, as the API server stores them.

- The DeviceClass `gpu.nvidia.com`: deployments/helm/nvidia-dra-driver-gpu/templates/
  deviceclass-gpu.yaml (its selector, and `extendedResourceName: nvidia.com/gpu` at
  resource.k8s.io/v1).
- The ResourceSlice its kubelet plugin publishes per machine: cmd/gpu-kubelet-plugin/
  deviceinfo.go `GpuInfo.GetDevice` (device `gpu-<minor>`; attributes type, uuid, productName,
  brand, architecture, cudaComputeCapability, driverVersion and cudaDriverVersion as versions,
  pcieBusID; capacity memory, a BinarySI quantity of the GPU's bytes), one pool per machine
  named after it, `nodeName` set (staging/src/k8s.io/api/resource/v1/types.go ResourceSliceSpec;
  the slice name is the kubelet plugin helper's `<node>-<driver>-<random>`).
"""

import copy
from typing import Final

from tests.support.scenarios import Obj

NVIDIA: Final = "gpu.nvidia.com"
CLASS_SELECTOR: Final = (
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
)


class Gpu:
    """What the plugin reads from NVML for one model (values as nvidia-smi reports them)."""

    def __init__(self, product: str, architecture: str, compute: str, memory: str) -> None:
        self.product = product
        self.architecture = architecture
        self.compute = compute
        self.memory = memory


H200: Final = Gpu("NVIDIA H200", "Hopper", "9.0.0", "143771Mi")
A100: Final = Gpu("NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", "80Gi")


def nvidia_class() -> Obj:
    """The DeviceClass the chart installs."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": NVIDIA},
        "spec": {
            "selectors": [{"cel": {"expression": CLASS_SELECTOR}}],
            "extendedResourceName": "nvidia.com/gpu",
        },
    }


def nvidia_slice(node_name: str, gpu: Gpu, devices: int) -> Obj:
    """The ResourceSlice of one machine with `devices` GPUs of one model."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{NVIDIA}-5qz9w"},
        "spec": {
            "driver": NVIDIA,
            "nodeName": node_name,
            "pool": {"generation": 1, "name": node_name, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{minor}",
                    "attributes": {
                        "type": {"string": "gpu"},
                        "uuid": {"string": f"GPU-4c2e9f1a-{node_name}-{minor:04d}"},
                        "productName": {"string": gpu.product},
                        "brand": {"string": "Nvidia"},
                        "architecture": {"string": gpu.architecture},
                        "cudaComputeCapability": {"version": gpu.compute},
                        "driverVersion": {"version": "570.133.20"},
                        "cudaDriverVersion": {"version": "12.8.0"},
                        "pcieBusID": {"string": f"0000:{0x18 + minor:02x}:00.0"},
                    },
                    "capacity": {"memory": {"value": gpu.memory}},
                }
                for minor in range(devices)
            ],
        },
    }


def nvidia_template(name: str, namespace: str, *selectors: str, count: int = 1) -> Obj:
    """A ResourceClaimTemplate asking for `count` GPUs of the class, narrowed by the request's
    own selectors (website content/en/docs/concepts/scheduling-eviction/
    dynamic-resource-allocation.md, "ResourceClaims and ResourceClaimTemplates": `exactly` with
    `deviceClassName`, `selectors[].cel.expression`, `allocationMode`, `count`)."""
    exactly: Obj = {"deviceClassName": NVIDIA, "allocationMode": "ExactCount", "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
    }


def nvidia_allocated(name: str, namespace: str, node_name: str, devices: list[str]) -> Obj:
    """A claim of another program that the scheduler allocated NVIDIA GPUs on `node_name`
    (status.allocation, pkg/scheduler/framework/plugins/dynamicresources)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": NVIDIA}}]}
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": NVIDIA, "pool": node_name, "device": d}
                        for d in devices
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node_name]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": f"{name}-pod", "uid": f"uid-{name}"}],
        },
    }


def nvidia_alternatives(name: str, namespace: str, *alternatives: tuple[str, str, int]) -> Obj:
    """A ResourceClaimTemplate whose one request lists alternatives (name, selector, count) in
    order of preference (website content/en/docs/concepts/scheduling-eviction/
    dynamic-resource-allocation.md, "Prioritized list": `firstAvailable` subrequests, each
    with `deviceClassName`, `selectors` and `count`)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "firstAvailable": [
                                {
                                    "name": alternative,
                                    "deviceClassName": NVIDIA,
                                    "selectors": [{"cel": {"expression": expression}}],
                                    "allocationMode": "ExactCount",
                                    "count": count,
                                }
                                for alternative, expression, count in alternatives
                            ],
                        }
                    ]
                }
            }
        },
    }


def nvidia_pod_claim(pod: Obj, template: Obj, node_name: str, devices: list[str]) -> Obj:
    """The claim the resourceclaim controller generated for `pod` from `template`, allocated
    NVIDIA GPUs `devices` on `node_name` and reserved for the pod by kube-scheduler; `pod` gets
    its `status.resourceClaimStatuses` entry (the pod needs a `metadata.uid`).

    kubernetes pkg/controller/resourceclaim/controller.go `handleClaim` (name `<pod>-<claim>-`
    and 5 random characters, the pod as controlling owner, annotation
    `resource.kubernetes.io/pod-claim-name`, the template's spec), and the DynamicResources
    plugin (pkg/scheduler/framework/plugins/dynamicresources: `status.allocation` with its
    `nodeSelector` on `metadata.name`, `status.reservedFor` the pod by name and uid, the
    `resource.kubernetes.io/delete-protection` finalizer)."""
    pod_name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    claim = nvidia_allocated(
        f"{pod_name}-gpu-7k2lp", pod["metadata"]["namespace"], node_name, devices
    )
    claim["metadata"].update(
        {
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "finalizers": ["resource.kubernetes.io/delete-protection"],
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod_name,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
    )
    claim["spec"] = copy.deepcopy(template["spec"]["spec"])
    claim["status"]["reservedFor"] = [{"resource": "pods", "name": pod_name, "uid": uid}]
    pod["status"]["resourceClaimStatuses"] = [
        {"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}
    ]
    return claim
