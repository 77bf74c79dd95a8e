"""Objects the scheduler's filters read, in the shapes real clusters hold them.

Each builder names the upstream file or documentation page whose shape it follows.
"""

import copy
from datetime import datetime, timedelta
from typing import Any

from tests.support.scenarios import NAMESPACE, REGISTRY, Obj, container, node, ts

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
DRIVER = "gpu.example.com"
"""kubernetes-sigs/dra-example-driver's driver and DeviceClass name."""


def zoned_node(name: str, zone: str, cpu: str, memory: str, gpus: int = 0) -> Obj:
    """A machine with its zone label, as cloud providers' node controllers set it
    (staging/src/k8s.io/api/core/v1/well_known_labels.go `LabelTopologyZone`)."""
    machine = node(name, cpu, memory, gpus)
    machine["metadata"]["labels"][ZONE] = zone
    return machine


def ranks_job(
    name: str,
    now: datetime,
    *,
    ranks: int,
    gpus: int,
    cpu: str = "2",
    memory: str = "8Gi",
    age: timedelta = timedelta(minutes=2),
    **pod_spec: Any,
) -> Obj:
    """An Indexed Job of `ranks` pods at once, as the API server stores it: its template
    labelled with the Job's name (pkg/registry/batch/job/strategy.go `generateSelector` adds
    `batch.kubernetes.io/job-name` and `job-name`; website content/en/examples/application/
    job/indexed-job.yaml). `pod_spec` adds to the pod spec (affinity, volumes, claims)."""
    labels = {"batch.kubernetes.io/job-name": name, "job-name": name}
    trainer = container(
        "trainer",
        f"{REGISTRY}/trainer:2.1",
        cpu=cpu,
        memory=memory,
        extra={"nvidia.com/gpu": str(gpus)} if gpus else None,
    )
    claims = [{"name": c["name"]} for c in pod_spec.get("resourceClaims", [])]
    if claims:
        trainer["resources"]["claims"] = claims
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now - age)},
        "spec": {
            "completions": ranks,
            "parallelism": ranks,
            "completionMode": "Indexed",
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "imagePullSecrets": [{"name": "regcred"}],
                    "containers": [trainer],
                    **copy.deepcopy(pod_spec),
                },
            },
        },
        "status": {"active": 0},
    }


def one_per_machine(job_name: str) -> Obj:
    """Required anti-affinity against the job's own pods on the hostname: one trainer per
    machine (website content/en/docs/concepts/scheduling-eviction/assign-pod-node.md, "an
    example of a pod that uses pod anti-affinity", with the Job's own label)."""
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"job-name": job_name}},
                    "topologyKey": HOSTNAME,
                }
            ]
        }
    }


def running_pod(
    name: str,
    node_name: str,
    now: datetime,
    *,
    labels: dict[str, str] | None = None,
    namespace: str = NAMESPACE,
    cpu: str = "500m",
    memory: str = "1Gi",
    **spec: Any,
) -> Obj:
    """A running pod of a StatefulSet on `node_name` (`spec` adds to its pod spec)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels or {}),
            "creationTimestamp": ts(now - timedelta(hours=1)),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": name.rsplit("-", 1)[0],
                    "uid": f"uid-{name}",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": node_name,
            "containers": [container("main", "busybox:1.36", cpu=cpu, memory=memory)],
            **copy.deepcopy(spec),
        },
        "status": {"phase": "Running"},
    }


def claim_volume(claim: str) -> list[Obj]:
    """A pod's `volumes` mounting `claim`."""
    return [{"name": claim, "persistentVolumeClaim": {"claimName": claim}}]


def bound_claim(name: str, volume: str, modes: tuple[str, ...], storage_class: str = "gp3") -> Obj:
    """A claim the PV controller bound (pkg/controller/volume/persistentvolume: spec.volumeName
    set, status.phase Bound, status.accessModes and capacity copied from the volume)."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "accessModes": list(modes),
            "resources": {"requests": {"storage": "100Gi"}},
            "storageClassName": storage_class,
            "volumeMode": "Filesystem",
            "volumeName": volume,
        },
        "status": {"phase": "Bound", "accessModes": list(modes), "capacity": {"storage": "100Gi"}},
    }


def zonal_volume(name: str, claim: str, zone: str, modes: tuple[str, ...]) -> Obj:
    """A PersistentVolume the EBS CSI driver provisioned in one zone: its node affinity on the
    zone (kubernetes-sigs/aws-ebs-csi-driver pkg/driver/controller.go `newCreateVolumeResponse`
    accessible topology; website content/en/docs/concepts/storage/persistent-volumes.md
    "Node Affinity")."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "annotations": {"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com"},
        },
        "spec": {
            "accessModes": list(modes),
            "capacity": {"storage": "100Gi"},
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": NAMESPACE, "name": claim},
            "csi": {"driver": "ebs.csi.aws.com", "fsType": "ext4", "volumeHandle": f"vol-{name}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                    ]
                }
            },
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": "gp3",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Bound"},
    }


def local_class() -> Obj:
    """The Kubernetes docs' StorageClass for local volumes (website content/en/docs/concepts/
    storage/storage-classes.md "Local"): no provisioner, so nothing is ever made for a claim
    of it, and binding waits for the first pod."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local-storage"},
        "provisioner": "kubernetes.io/no-provisioner",
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def local_volume(
    name: str,
    size: str = "1Ti",
    *,
    phase: str = "Available",
    storage_class: str = "local-storage",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    claim: str | None = None,
    machine: str = "gpu-1",
) -> Obj:
    """A local PersistentVolume as the docs make one (website content/en/docs/concepts/
    storage/volumes.md "local": capacity, Filesystem, a path, node affinity on one machine,
    `machine`); `claim` fills `claimRef` as the PV controller does when it binds one."""
    term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [machine]}]}
    volume: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": size},
            "volumeMode": "Filesystem",
            "accessModes": list(modes),
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": storage_class,
            "local": {"path": "/mnt/disks/ssd1"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
        "status": {"phase": phase},
    }
    if claim is not None:
        volume["spec"]["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "namespace": NAMESPACE,
            "name": claim,
        }
    return volume


def waiting_claim(name: str, storage_class: str, size: str = "100Gi") -> Obj:
    """A claim not bound yet, as the API server stores it before the first pod that mounts it
    is placed (status.phase Pending, no volumeName)."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": size}},
            "storageClassName": storage_class,
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }


def device_class(expression: str = f"device.driver == '{DRIVER}'") -> Obj:
    """dra-example-driver's DeviceClass (deployments/helm/dra-example-driver/templates/
    deviceclass.yaml)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def gpu_slice(node_name: str, devices: int) -> Obj:
    """The ResourceSlice dra-example-driver's kubelet plugin publishes for its machine: one
    pool named after the node, `nodeName` set, one device per GPU with its attributes and
    memory (cmd/dra-example-kubeletplugin; staging/src/k8s.io/api/resource/v1/types.go)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}-x7k2p"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"generation": 1, "name": node_name, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{index}",
                    "attributes": {
                        "driverVersion": {"version": "1.0.0"},
                        "index": {"int": index},
                        "model": {"string": "LATEST-GPU-MODEL"},
                        "uuid": {"string": f"gpu-{node_name}-{index}"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for index in range(devices)
            ],
        },
    }


def claim_template(name: str, count: int = 1) -> Obj:
    """A ResourceClaimTemplate asking for `count` devices of the class (website content/en/
    examples/dra/resourceclaimtemplate.yaml, at resource.k8s.io/v1)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": DRIVER,
                                "allocationMode": "ExactCount",
                                "count": count,
                            },
                        }
                    ]
                }
            }
        },
    }


def allocated_claim(name: str, namespace: str, node_name: str, devices: list[str]) -> Obj:
    """A claim the scheduler allocated on `node_name` (status.allocation: the devices, and a
    node selector on that node's name; pkg/scheduler/framework/plugins/dynamicresources)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": node_name, "device": d}
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


def claims_from_template(template: str) -> dict[str, Any]:
    """Pod spec fields that give each pod a claim from `template`, used by its container (the
    website's dra-example-job.yaml)."""
    return {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}]}


def every_filter_read(now: datetime) -> list[Obj]:
    """Objects that make doctor read every filter's objects: the newest training job mounts a
    bound claim (its PersistentVolume is read, and, ReadWriteOnce of the EBS CSI driver, that
    driver's CSIDriver) and a claim waiting for a local volume made in advance (every volume is
    listed; a free one fits it), claims a device from a template (the device objects are read)
    and runs on a named container runtime (its RuntimeClass is read: the GPU operator's
    `nvidia`, handler `nvidia`)."""
    volume = zonal_volume("pvc-0a1b2c", "checkpoints", "", ("ReadWriteOnce",))
    del volume["spec"]["nodeAffinity"]
    job = ranks_job(
        "filtered",
        now,
        ranks=1,
        gpus=0,
        age=timedelta(seconds=30),
        volumes=[*claim_volume("checkpoints"), *claim_volume("scratch-local")],
        **claims_from_template("one-gpu"),
    )
    job["spec"]["template"]["spec"]["runtimeClassName"] = "nvidia"
    return [
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "nvidia"},
            "handler": "nvidia",
        },
        bound_claim("checkpoints", "pvc-0a1b2c", ("ReadWriteOnce",)),
        volume,
        waiting_claim("scratch-local", "local-storage"),
        local_class(),
        local_volume("local-gpu-1"),
        # As the aws-ebs-csi-driver chart installs it (charts/aws-ebs-csi-driver/templates/
        # csidriver.yaml): EBS volumes are attached.
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "ebs.csi.aws.com"},
            "spec": {"attachRequired": True, "podInfoOnMount": False},
        },
        device_class(),
        gpu_slice("gpu-1", 2),
        claim_template("one-gpu"),
        job,
    ]
