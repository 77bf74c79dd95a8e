"""Training jobs of every common kind, and the pods their controllers create, as real clusters
hold them. Each builder names the upstream file whose shape it follows; labels and owner
references are the ones those controllers set on the pods they create.
"""

import copy
from datetime import datetime, timedelta
from typing import Any

from tests.support.scenarios import NAMESPACE, REGISTRY, Obj, container, ts

ALL_GROUPS = (
    "jobset.x-k8s.io",
    "trainer.kubeflow.org",
    "kubeflow.org",
    "ray.io",
    "leaderworkerset.x-k8s.io",
)


def gpu_container(name: str, gpus: int, *, cpu: str = "8", memory: str = "64Gi") -> Obj:
    return container(
        name, f"{REGISTRY}/trainer:2.1", cpu=cpu, memory=memory, extra={"nvidia.com/gpu": str(gpus)}
    )


def _template(labels: dict[str, str], *containers: Obj, **spec: Any) -> Obj:
    return {
        "metadata": {"labels": labels},
        "spec": {"imagePullSecrets": [{"name": "regcred"}], "containers": list(containers), **spec},
    }


def indexed_job(name: str, now: datetime, *, ranks: int, gpus: int, age: timedelta) -> Obj:
    """An Indexed Job of `ranks` pods run at once, as the Kubernetes docs' "Indexed Job for
    Parallel Processing with Static Work Assignment" (website content/en/examples/application/
    job/indexed-job.yaml) and torchrun's one-pod-per-rank use of it."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now - age)},
        "spec": {
            "completions": ranks,
            "parallelism": ranks,
            "completionMode": "Indexed",
            "template": _template(
                {"job-name": name}, gpu_container("trainer", gpus), restartPolicy="Never"
            ),
        },
        "status": {"active": 0},
    }


def pytorch_job(name: str, now: datetime, *, workers: int, gpus: int, age: timedelta) -> Obj:
    """A PyTorchJob of one Master and `workers` Workers (kubeflow/training-operator
    examples/pytorch/simple.yaml; pkg/apis/kubeflow.org/v1/pytorch_types.go)."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now - age)},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {
                    "replicas": 1,
                    "restartPolicy": "OnFailure",
                    "template": _template({}, gpu_container("pytorch", gpus)),
                },
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "OnFailure",
                    "template": _template({}, gpu_container("pytorch", gpus)),
                },
            }
        },
        "status": {
            "conditions": [
                {"type": "Created", "status": "True", "reason": "PyTorchJobCreated"},
                {"type": "Running", "status": "True", "reason": "PyTorchJobRunning"},
            ]
        },
    }


def init_pytorch(master: str) -> Obj:
    """The init container the training operator appends to a PyTorchJob's Worker pods when the
    job has a Master, from its default template (kubeflow/training-operator v1.9
    pkg/controller.v1/pytorch/initcontainer.go `initContainerTemplate`, image alpine:3.10 and
    100 tries from pkg/config/config.go), as the API server stores it."""
    return {
        "name": "init-pytorch",
        "image": "alpine:3.10",
        "imagePullPolicy": "IfNotPresent",
        "resources": {
            "limits": {"cpu": "100m", "memory": "20Mi"},
            "requests": {"cpu": "50m", "memory": "10Mi"},
        },
        "command": [
            "sh",
            "-c",
            f"err=1;for i in $(seq 100); do if nslookup {master}; then err=0 && break; fi;"
            "echo waiting for master; sleep 2; done; exit $err",
        ],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def pytorch_pod(job: Obj, role: str, index: int, now: datetime, *, node_name: str | None) -> Obj:
    """A pod the training operator made for a PyTorchJob: owned by the job itself, labelled
    with its name and replica type (training-operator pkg/controller.v1/common/pod.go,
    pkg/apis/kubeflow.org/v1/common_types.go `ReplicaTypeLabel`); a Worker's of a job with a
    Master with the operator's `init_pytorch` appended (initcontainer.go setInitContainer)."""
    name = job["metadata"]["name"]
    replicas = job["spec"]["pytorchReplicaSpecs"]
    spec = copy.deepcopy(replicas[role]["template"]["spec"])
    if role == "Worker" and "Master" in replicas:
        spec["initContainers"] = [*spec.get("initContainers", []), init_pytorch(f"{name}-master-0")]
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-{role.lower()}-{index}",
            "namespace": NAMESPACE,
            "creationTimestamp": ts(now - timedelta(minutes=30)),
            "labels": {
                "training.kubeflow.org/job-name": name,
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-type": role.lower(),
                "training.kubeflow.org/replica-index": str(index),
            },
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "PyTorchJob",
                    "name": name,
                    "uid": f"uid-{name}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
        "status": {
            "phase": "Running" if node_name else "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True" if node_name else "False"}],
        },
    }


def jobset(name: str, now: datetime, *, workers: int, gpus: int, age: timedelta) -> Obj:
    """A JobSet of a driver and `workers` one-pod worker Jobs (kubernetes-sigs/jobset
    examples/simple/paralleljobs.yaml; api/jobset/v1alpha2/jobset_types.go)."""

    def replicated(rname: str, replicas: int, gpu_count: int) -> Obj:
        return {
            "name": rname,
            "replicas": replicas,
            "template": {
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "backoffLimit": 0,
                    "template": _template(
                        {}, gpu_container(rname, gpu_count), restartPolicy="Never"
                    ),
                }
            },
        }

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now - age)},
        "spec": {
            "replicatedJobs": [replicated("driver", 1, 0), replicated("workers", workers, gpus)]
        },
    }


def cluster_training_runtime() -> Obj:
    """Kubeflow Trainer's torch-distributed runtime (kubeflow/trainer manifests/base/runtimes/
    torch_distributed.yaml): one replicated job `node`, labelled as the trainer step."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch-distributed"},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {
                                    "labels": {
                                        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
                                    }
                                },
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "image": "pytorch/pytorch:2.7.1-cuda12.6-"
                                                    "cudnn9-runtime",
                                                }
                                            ]
                                        }
                                    }
                                },
                            },
                        }
                    ]
                }
            },
        },
    }


def train_job(name: str, now: datetime, *, nodes: int, gpus: int, age: timedelta) -> Obj:
    """A TrainJob on the torch-distributed runtime (kubeflow/trainer examples/pytorch/
    image-classification; pkg/apis/trainer/v1alpha1/trainjob_types.go)."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now - age)},
        "spec": {
            "runtimeRef": {
                "name": "torch-distributed",
                "apiGroup": "trainer.kubeflow.org",
                "kind": "ClusterTrainingRuntime",
            },
            "trainer": {
                "image": f"{REGISTRY}/trainer:2.1",
                "numNodes": nodes,
                "resourcesPerNode": {
                    "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": str(gpus)},
                    "limits": {"nvidia.com/gpu": str(gpus)},
                },
            },
        },
    }


def ray_job(name: str, now: datetime, *, workers: int, gpus: int, age: timedelta) -> Obj:
    """A RayJob with a head and one GPU worker group (ray-project/kuberay ray-operator/config/
    samples/ray-job.sample.yaml; apis/ray/v1/rayjob_types.go)."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now - age)},
        "spec": {
            "entrypoint": "python /home/ray/samples/sample_code.py",
            "rayClusterSpec": {
                "rayVersion": "2.46.0",
                "headGroupSpec": {
                    "rayStartParams": {},
                    "template": _template({}, container("ray-head", "rayproject/ray:2.46.0")),
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "gpu-group",
                        "replicas": workers,
                        "minReplicas": 1,
                        "maxReplicas": 8,
                        "rayStartParams": {},
                        "template": _template({}, gpu_container("ray-worker", gpus)),
                    }
                ],
            },
        },
        "status": {
            "rayClusterName": f"{name}-raycluster-x7k2p",
            "jobDeploymentStatus": "Initializing",
        },
    }


def ray_cluster(
    name: str, now: datetime, *, replicas: int, min_replicas: int, max_replicas: int, gpus: int
) -> Obj:
    """A RayCluster with a head and one GPU worker group (ray-project/kuberay ray-operator/
    config/samples/ray-cluster.sample.yaml; apis/ray/v1/raycluster_types.go WorkerGroupSpec)."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now)},
        "spec": {
            "rayVersion": "2.46.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": _template({}, container("ray-head", f"{REGISTRY}/ray:2.46.0")),
            },
            "workerGroupSpecs": [
                {
                    "groupName": "gpu-group",
                    "replicas": replicas,
                    "minReplicas": min_replicas,
                    "maxReplicas": max_replicas,
                    "numOfHosts": 1,
                    "rayStartParams": {},
                    "template": _template({}, gpu_container("ray-worker", gpus)),
                }
            ],
        },
    }


def leader_worker_set(name: str, now: datetime, *, size: int, gpus: int, age: timedelta) -> Obj:
    """A LeaderWorkerSet of one group of `size` pods (kubernetes-sigs/lws docs/examples/sample/
    lws.yaml; api/leaderworkerset/v1/leaderworkerset_types.go)."""
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now - age)},
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": size,
                "workerTemplate": _template({}, gpu_container("worker", gpus)),
            },
        },
    }


def training_runtime() -> Obj:
    """The torch-distributed runtime as a namespaced TrainingRuntime (the same spec; a TrainJob
    names it with `runtimeRef.kind: TrainingRuntime`)."""
    runtime = cluster_training_runtime()
    runtime["kind"] = "TrainingRuntime"
    runtime["metadata"] = {"name": "torch-local", "namespace": NAMESPACE}
    return runtime


def every_training_read(now: datetime) -> list[Obj]:
    """Objects that make doctor read every training kind's list and both kinds of runtime: a
    TrainJob on a cluster-wide runtime and one on the namespace's own (install ALL_GROUPS)."""
    local = train_job("on-local-runtime", now, nodes=1, gpus=1, age=timedelta(hours=2))
    local["spec"]["runtimeRef"] = {"name": "torch-local", "kind": "TrainingRuntime"}
    local["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    cluster = train_job("on-cluster-runtime", now, nodes=1, gpus=1, age=timedelta(hours=3))
    cluster["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    return [cluster_training_runtime(), training_runtime(), local, cluster]
