"""Training environments for scenario tests: a healthy namespace and the ways it breaks.

Objects are built relative to `now` so that ages (how long a pod has waited) are real for the
live doctor, which reads the clock, and for snapshots, which carry their capture time.
"""

import base64
import copy
import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

Obj = dict[str, Any]
NAMESPACE = "train"
REGISTRY = "registry.example.com"
PULL_SECRET_VALUE = "pull-s3cret-VALUE-4f1d"
BACKEND_SECRET_VALUE = "backend-s3cret-VALUE-9c2e"


def ts(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def image_id(image: str) -> str:
    """The imageID a kubelet reports for a pulled image: repository@digest (fixed per image)."""
    repository = image.rsplit(":", 1)[0]
    return f"{repository}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def container_id(pod: str, container: str, restart: int = 0) -> str:
    """The containerID a kubelet reports for one instance of a container (fixed per instance)."""
    digest = hashlib.sha256(f"{pod}/{container}/{restart}".encode()).hexdigest()
    return f"containerd://{digest}"


def node(name: str, cpu: str, memory: str, gpus: int = 0, **spec: Any) -> Obj:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    labels = {"kubernetes.io/hostname": name, **({"accelerator": "gpu"} if gpus else {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            # capacity is larger than allocatable, as on real machines; fit must use allocatable
            "capacity": {**allocatable, "cpu": str(int(cpu) + 1)},
            "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def container(
    name: str,
    image: str,
    *,
    cpu: str = "500m",
    memory: str = "1Gi",
    port: int | None = None,
    readiness: bool = True,
    extra: dict[str, str] | None = None,
) -> Obj:
    # An extended resource is asked for in limits as well: the API server refuses a request of
    # one without an equal limit (pkg/apis/core/validation ValidateResourceRequirements).
    resources: Obj = {"requests": {"cpu": cpu, "memory": memory, **(extra or {})}}
    if extra:
        resources["limits"] = dict(extra)
    spec: Obj = {"name": name, "image": image, "resources": resources}
    if port is not None:
        spec["ports"] = [{"containerPort": port, "name": "http"}]
        if readiness:
            spec["readinessProbe"] = {"tcpSocket": {"port": port}, "initialDelaySeconds": 10}
    return spec


def deployment(
    name: str, containers: list[Obj], *, claims: tuple[str, ...] = (), **annotations: str
) -> Obj:
    pod_spec: Obj = {"containers": containers, "imagePullSecrets": [{"name": "regcred"}]}
    if claims:
        pod_spec["volumes"] = [
            {"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "generation": 3,
            "annotations": dict(annotations),
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
        },
        "status": {
            "observedGeneration": 3,
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            ],
        },
    }


def running_containers(pod: str, containers: list[Obj], started: str) -> list[Obj]:
    """Each container's status as the kubelet writes it once the container runs: ready, the
    image it pulled (`imageID`), its runtime's id (pkg/kubelet/kubelet_pods.go
    `convertToAPIContainerStatuses`)."""
    return [
        {
            "name": c["name"],
            "image": c["image"],
            "imageID": image_id(c["image"]),
            "ready": True,
            "restartCount": 0,
            "containerID": container_id(pod, c["name"]),
            "state": {"running": {"startedAt": started}},
        }
        for c in containers
    ]


def pod_for(
    workload: Obj,
    now: datetime,
    *,
    suffix: str = "abc12",
    node_name: str = "cpu-1",
    age: timedelta = timedelta(hours=2),
) -> Obj:
    template = workload["spec"]["template"]
    spec = copy.deepcopy(template["spec"])
    spec["nodeName"] = node_name
    spec.setdefault("serviceAccountName", "default")
    started = ts(now - age)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{workload['metadata']['name']}-{suffix}",
            "namespace": NAMESPACE,
            "labels": dict(template["metadata"]["labels"]),
            "creationTimestamp": started,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{workload['metadata']['name']}-rs",
                    "uid": f"uid-{workload['metadata']['name']}-rs",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True", "lastTransitionTime": started},
            ],
            "containerStatuses": running_containers(
                f"{workload['metadata']['name']}-{suffix}", spec["containers"], started
            ),
        },
    }


def training_job(
    name: str,
    now: datetime,
    *,
    gpus: int = 1,
    cpu: str = "4",
    memory: str = "16Gi",
    age: timedelta = timedelta(hours=3),
    finished: bool = True,
) -> Obj:
    conditions = [{"type": "Complete", "status": "True"}] if finished else []
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE, "creationTimestamp": ts(now - age)},
        "spec": {
            "template": {
                "metadata": {"labels": {"job-name": name}},
                "spec": {
                    "restartPolicy": "Never",
                    "imagePullSecrets": [{"name": "regcred"}],
                    "containers": [
                        container(
                            "trainer",
                            f"{REGISTRY}/trainer:2.1",
                            cpu=cpu,
                            memory=memory,
                            extra={"nvidia.com/gpu": str(gpus)} if gpus else None,
                        )
                    ],
                    "volumes": [
                        {"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}
                    ],
                },
            }
        },
        "status": {"conditions": conditions, **({"succeeded": 1} if finished else {"active": 1})},
    }


def job_pod(
    job: Obj,
    now: datetime,
    *,
    suffix: str,
    node_name: str | None,
    phase: str = "Running",
    age: timedelta = timedelta(minutes=30),
    scheduler_said: bool = True,
) -> Obj:
    """A pod the Job controller made; unscheduled (`node_name` None), with the scheduler's
    Unschedulable condition unless `scheduler_said` is False (no scheduler has looked yet)."""
    spec = copy.deepcopy(job["spec"]["template"]["spec"])
    if node_name:
        spec["nodeName"] = node_name
    conditions: list[Obj] = []
    if node_name is None and scheduler_said:
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                # As kube-scheduler writes it (schedule_one.go FitError, then the
                # preemption plugin's own verdict).
                "message": (
                    "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 "
                    "nodes are available: 2 No preemption victims found for incoming pod."
                ),
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job['metadata']['name']}-{suffix}",
            "namespace": NAMESPACE,
            "labels": {"job-name": job["metadata"]["name"]},
            "creationTimestamp": ts(now - age),
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job["metadata"]["name"],
                    "uid": f"uid-{job['metadata']['name']}",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {"phase": phase, "conditions": conditions},
    }


def docker_config(*hosts: str) -> Obj:
    auths = {host: {"auth": b64(f"robot:{PULL_SECRET_VALUE}")} for host in hosts}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": "regcred", "namespace": NAMESPACE},
        "data": {".dockerconfigjson": b64(json.dumps({"auths": auths}))},
    }


def healthy(now: datetime) -> list[Obj]:
    """A namespace that can run training: everything measured green."""
    manager = deployment(
        "jobs-manager",
        [container("api", f"{REGISTRY}/jobs-manager:1.4", port=8080)],
        claims=("datasets",),
        **{"truegreen.io/keep-running": "api"},
    )
    database = deployment(
        "mysql", [container("mysql", "mysql:8.0", port=3306, cpu="1", memory="2Gi")]
    )
    return [
        node("cpu-1", "8", "32Gi"),
        node("gpu-1", "16", "64Gi", gpus=2),
        manager,
        pod_for(manager, now),
        database,
        pod_for(database, now, suffix="def34"),
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": NAMESPACE},
        },
        docker_config(REGISTRY),
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": "backend-credentials", "namespace": NAMESPACE},
            "data": {"username": b64("trainer"), "password": b64(BACKEND_SECRET_VALUE)},
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "datasets", "namespace": NAMESPACE},
            "spec": {"storageClassName": "standard", "accessModes": ["ReadWriteMany"]},
            "status": {"phase": "Bound"},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "standard"},
            "provisioner": "example.com/nfs",
            "volumeBindingMode": "Immediate",
        },
        training_job("train-001", now),
    ]


def _without(objects: list[Obj], kind: str, name: str) -> list[Obj]:
    kept = [o for o in objects if not (o["kind"] == kind and o["metadata"]["name"] == name)]
    assert len(kept) == len(objects) - 1, f"{kind}/{name} not in the scenario"
    return kept


def find(objects: list[Obj], kind: str, name: str) -> Obj:
    """The object of `kind` named `name` among `objects`."""
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def missing_pull_credentials(now: datetime) -> list[Obj]:
    """The pods name `regcred`, which does not exist: the kubelet leaves it out and pulls
    without a login (pkg/kubelet/kubelet_pods.go getPullSecretsForPod), which only the registry
    can say works; not asked, doctor warns."""
    return _without(healthy(now), "Secret", "regcred")


def damaged_pull_credentials(now: datetime) -> list[Obj]:
    """`regcred` holds no docker config (not JSON): the kubelet reads none of it and fails every
    pull of the pods that name it (pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring
    returns the error), whatever the registry would say: a measured failure unasked."""
    objects = healthy(now)
    find(objects, "Secret", "regcred")["data"] = {".dockerconfigjson": b64("not json")}
    return objects


def unbound_dataset_volume(now: datetime) -> list[Obj]:
    objects = healthy(now)
    find(objects, "PersistentVolumeClaim", "datasets")["status"] = {"phase": "Pending"}
    return objects


def held_by_running_job(now: datetime) -> list[Obj]:
    """train-002 runs on gpu-1 with both GPUs; train-003's pod waits for a machine."""
    objects = healthy(now)
    running = training_job("train-002", now, gpus=2, age=timedelta(hours=1), finished=False)
    waiting = training_job("train-003", now, gpus=2, age=timedelta(minutes=20), finished=False)
    objects += [
        running,
        job_pod(running, now, suffix="x1", node_name="gpu-1"),
        waiting,
        job_pod(
            waiting, now, suffix="y1", node_name=None, phase="Pending", age=timedelta(minutes=20)
        ),
    ]
    return objects


def job_too_large(now: datetime) -> list[Obj]:
    """The newest training job asks for 4 GPUs; the largest machine has 2."""
    objects = healthy(now)
    objects.append(training_job("train-002", now, gpus=4, age=timedelta(minutes=5)))
    return objects


def crash_looping_manager(now: datetime) -> list[Obj]:
    objects = healthy(now)
    pod = find(objects, "Pod", "jobs-manager-abc12")
    pod["status"]["conditions"][1]["status"] = "False"
    pod["status"]["containerStatuses"][0] = {
        "name": "api",
        "image": f"{REGISTRY}/jobs-manager:1.4",
        "imageID": image_id(f"{REGISTRY}/jobs-manager:1.4"),
        "ready": False,
        "restartCount": 7,
        "state": {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": "back-off 5m0s restarting failed container",
            }
        },
        "lastState": {
            "terminated": {
                "reason": "Error",
                "exitCode": 1,
                "containerID": container_id("jobs-manager-abc12", "api", restart=7),
            }
        },
    }
    return objects


def cordoned_machines(now: datetime) -> list[Obj]:
    """Both machines closed to new work (`kubectl cordon`): no training job may start."""
    objects = healthy(now)
    for name in ("cpu-1", "gpu-1"):
        find(objects, "Node", name)["spec"]["unschedulable"] = True
    return objects


def gpu_held_by_notebook(now: datetime) -> list[Obj]:
    """A notebook in another namespace holds both GPUs of gpu-1, the only GPU machine."""
    objects = healthy(now)
    notebook = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "notebook-alice-0",
            "namespace": "research",
            "creationTimestamp": ts(now - timedelta(days=2)),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": "notebook-alice",
                    "uid": "uid-notebook-alice",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": "gpu-1",
            "containers": [
                container(
                    "notebook",
                    "jupyter/base:4",
                    cpu="2",
                    memory="8Gi",
                    extra={"nvidia.com/gpu": "2"},
                )
            ],
        },
        "status": {"phase": "Running"},
    }
    return [*objects, notebook]


SCENARIOS: dict[str, Callable[[datetime], list[Obj]]] = {
    "healthy": healthy,
    "missing-pull-credentials": missing_pull_credentials,
    "damaged-pull-credentials": damaged_pull_credentials,
    "unbound-dataset-volume": unbound_dataset_volume,
    "held-by-running-job": held_by_running_job,
    "job-too-large": job_too_large,
    "crash-looping-manager": crash_looping_manager,
    "cordoned-machines": cordoned_machines,
    "gpu-held-by-notebook": gpu_held_by_notebook,
}
