"""Objects shaped like a real cluster's, generated from a seed, for the doctor benchmark.

Shapes follow what kube-apiserver sends for the core types (k8s.io/api core/v1, apps/v1 and
batch/v1 types.go): every server-set field (uid, resourceVersion, creationTimestamp,
generateName, managedFields), the kubelet's full status (five conditions, hostIPs/podIPs,
containerStatuses with containerID and started), a node's images list, nodeInfo, addresses
and capacity. managedFields entries are derived from the object itself as the server's
structured-merge-diff does (`f:` for fields, `k:{...}` for list items keyed by name, type,
containerPort or ip; `.` for a map that is itself owned), so they keep their real share of a
pod: about 40 %. List items carry no kind/apiVersion (kubernetes/kubernetes#3030).

Sizes, compact JSON as the server sends it: a pod about 6 KB, a node about 5 KB.
"""

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support.scenarios import NAMESPACE, REGISTRY, healthy

Obj = dict[str, Any]

_CREATED = datetime(2026, 10, 1, tzinfo=UTC)
_LIST_KEYS = ("name", "type", "mountPath", "ip", "uid", "devicePath")


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _suffix(rng: random.Random, length: int = 5) -> str:
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(length))


def _item_key(item: Obj) -> str | None:
    """The key structured-merge-diff gives a list item: its merge key, as compact JSON."""
    if "containerPort" in item:
        return json.dumps(
            {"containerPort": item["containerPort"], "protocol": item.get("protocol", "TCP")},
            separators=(",", ":"),
        )
    for key in _LIST_KEYS:
        if key in item:
            return json.dumps({key: item[key]}, separators=(",", ":"))
    return None


def field_set(value: Any, root: bool = True) -> Obj:
    """The fieldsV1 set a manager owns for `value` (a map, a keyed list or a leaf)."""
    if isinstance(value, dict):
        owned: Obj = {} if root else {".": {}}
        for key, child in value.items():
            owned[f"f:{key}"] = field_set(child, root=False)
        return owned
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        keys = [_item_key(v) for v in value]
        if all(keys):
            owned = {".": {}}
            for key, child in zip(keys, value, strict=True):
                owned[f"k:{key}"] = field_set(child, root=False)
            return owned
    return {}


def _managed(manager: str, api_version: str, when: str, owned: Obj, status: bool = False) -> Obj:
    entry: Obj = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": when,
        "fieldsType": "FieldsV1",
        "fieldsV1": field_set(owned),
    }
    if status:
        entry["subresource"] = "status"
    return entry


def _container(rng: random.Random, app: str, index: int, image: str) -> Obj:
    port = 8080 + index
    return {
        "name": f"{app.split('-', maxsplit=1)[0]}-{index}" if index else app,
        "image": image,
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "env": [
            {"name": f"APP_SETTING_{e}", "value": f"value-{rng.randint(0, 10**6)}"}
            for e in range(2)
        ],
        "resources": {
            "limits": {"memory": f"{rng.choice((512, 1024, 2048))}Mi"},
            "requests": {
                "cpu": f"{rng.choice((50, 100, 250, 500))}m",
                "memory": f"{rng.choice((64, 128, 256, 512))}Mi",
            },
        },
        "readinessProbe": {
            "httpGet": {"path": "/ready", "port": port, "scheme": "HTTP"},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }


def _pod_spec_defaults(containers: list[Obj], volumes: list[Obj]) -> Obj:
    """A pod template's spec with the defaults the API server fills in."""
    return {
        "volumes": volumes,
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
    }


class AppShape:
    """One application: its Deployment's pod template, shared by all its replicas."""

    def __init__(self, rng: random.Random, name: str, namespace: str) -> None:
        self.name = name
        self.namespace = namespace
        self.template_hash = _suffix(rng, 10)
        self.replica_set_uid = _uid(rng)
        tag = f"{rng.randint(1, 40)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}"
        images = [f"{REGISTRY}/team/{name}:{tag}"]
        if rng.random() < 0.25:
            images.append(f"{REGISTRY}/platform/log-shipper:2.{rng.randint(0, 9)}")
        self.containers = [_container(rng, name, i, image) for i, image in enumerate(images)]
        self.image_ids = {
            c["image"]: f"{c['image'].rsplit(':', 1)[0]}@sha256:{rng.getrandbits(256):064x}"
            for c in self.containers
        }
        self.volumes = [
            {"name": "config", "configMap": {"name": f"{name}-config", "defaultMode": 420}}
        ]
        self.labels = {"app": name, "app.kubernetes.io/part-of": namespace}


def _api_access_volume(rng: random.Random) -> Obj:
    """The service-account token volume admission adds to every pod."""
    return {
        "name": f"kube-api-access-{_suffix(rng)}",
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
            "defaultMode": 420,
        },
    }


def pod(
    rng: random.Random,
    *,
    name: str,
    namespace: str,
    labels: Obj,
    owner: Obj,
    spec: Obj,
    node: str,
    host_ip: str,
    image_ids: dict[str, str],
    started: datetime,
    phase: str = "Running",
) -> Obj:
    """One pod as the server sends it: server-set metadata, managedFields, kubelet status."""
    api_access = _api_access_volume(rng)
    containers = [
        {
            **c,
            "volumeMounts": [
                *c.get("volumeMounts", []),
                {
                    "name": api_access["name"],
                    "readOnly": True,
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                },
            ],
        }
        for c in spec["containers"]
    ]
    full_spec = {
        **spec,
        "volumes": [*spec.get("volumes", []), api_access],
        "containers": containers,
        "nodeName": node,
        "tolerations": [
            {
                "key": f"node.kubernetes.io/{t}",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
            for t in ("not-ready", "unreachable")
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    when = _ts(started)
    ready = "True" if phase == "Running" else "False"
    ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    done = phase == "Succeeded"
    status = {
        "phase": phase,
        "conditions": [
            {"type": kind, "status": value, "lastProbeTime": None, "lastTransitionTime": when}
            for kind, value in (
                ("PodReadyToStartContainers", "False" if done else "True"),
                ("Initialized", "True"),
                ("Ready", ready),
                ("ContainersReady", ready),
                ("PodScheduled", "True"),
            )
        ],
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": when,
        "containerStatuses": [
            {
                "name": c["name"],
                "state": (
                    {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": when,
                            "finishedAt": when,
                            "containerID": f"containerd://{rng.getrandbits(256):064x}",
                        }
                    }
                    if done
                    else {"running": {"startedAt": when}}
                ),
                "lastState": {},
                "ready": not done,
                "restartCount": 0,
                "image": c["image"],
                "imageID": image_ids[c["image"]],
                "containerID": f"containerd://{rng.getrandbits(256):064x}",
                "started": not done,
            }
            for c in containers
        ],
        "qosClass": "Burstable",
    }
    metadata: Obj = {
        "name": name,
        "generateName": name[: name.rfind("-") + 1],
        "namespace": namespace,
        "uid": _uid(rng),
        "resourceVersion": str(rng.randint(10**6, 10**8)),
        "creationTimestamp": when,
        "labels": labels,
        "ownerReferences": [owner],
    }
    metadata["managedFields"] = [
        _managed(
            "kube-controller-manager",
            "v1",
            when,
            {
                "metadata": {
                    "generateName": None,
                    "labels": labels,
                    "ownerReferences": [owner],
                },
                "spec": spec,
            },
        ),
        _managed("kubelet", "v1", when, {"status": status}, status=True),
    ]
    return {"metadata": metadata, "spec": full_spec, "status": status}


def replica_pod(rng: random.Random, app: AppShape, node: str, host_ip: str) -> Obj:
    """A pod of `app`'s current ReplicaSet."""
    replica_set = f"{app.name}-{app.template_hash}"
    return pod(
        rng,
        name=f"{replica_set}-{_suffix(rng)}",
        namespace=app.namespace,
        labels={**app.labels, "pod-template-hash": app.template_hash},
        owner={
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": replica_set,
            "uid": app.replica_set_uid,
            "controller": True,
            "blockOwnerDeletion": True,
        },
        spec=_pod_spec_defaults(app.containers, app.volumes),
        node=node,
        host_ip=host_ip,
        image_ids=app.image_ids,
        started=_CREATED + timedelta(minutes=rng.randint(0, 40000)),
    )


def node(rng: random.Random, index: int, gpus: int = 0) -> Obj:
    """One machine as the server sends it: labels, annotations, images, nodeInfo, addresses."""
    name = f"ip-10-0-{index // 250}-{index % 250}.ec2.internal"
    zone = f"us-east-1{'abc'[index % 3]}"
    instance = "p4d.24xlarge" if gpus else "m5.8xlarge"
    ip = f"10.0.{index // 250}.{index % 250}"
    allocatable = {
        "cpu": "31750m",
        "ephemeral-storage": "95491281146",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": "127046860Ki",
        "pods": "110",
        **({"nvidia.com/gpu": str(gpus)} if gpus else {}),
    }
    capacity = {**allocatable, "cpu": "32", "ephemeral-storage": "104845292Ki"}
    capacity["memory"] = "130929356Ki"
    now = _ts(_CREATED + timedelta(days=30))
    conditions = [
        {
            "type": kind,
            "status": value,
            "lastHeartbeatTime": now,
            "lastTransitionTime": _ts(_CREATED),
            "reason": reason,
            "message": message,
        }
        for kind, value, reason, message in (
            (
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            (
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        )
    ]
    images = [
        {
            "names": [
                f"{REGISTRY}/team/app-{i}@sha256:{rng.getrandbits(256):064x}",
                f"{REGISTRY}/team/app-{i}:{rng.randint(1, 40)}.{rng.randint(0, 9)}",
            ],
            "sizeBytes": rng.randint(10**7, 2 * 10**9),
        }
        for i in rng.sample(range(400), 6)
    ]
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": instance,
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": "us-east-1",
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": zone,
        "eks.amazonaws.com/nodegroup": "gpu" if gpus else "general",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
    }
    instance_id = f"i-{rng.getrandbits(68):017x}"
    annotations = {
        "alpha.kubernetes.io/provided-node-ip": ip,
        "csi.volume.kubernetes.io/nodeid": json.dumps({"ebs.csi.aws.com": instance_id}),
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    cidr = f"10.{100 + index // 250}.{index % 250}.0/24"
    spec = {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"aws:///{zone}/{instance_id}"}
    status = {
        "capacity": capacity,
        "allocatable": allocatable,
        "conditions": conditions,
        "addresses": [
            {"type": "InternalIP", "address": ip},
            {"type": "InternalDNS", "address": name},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": f"{rng.getrandbits(128):032x}",
            "systemUUID": _uid(rng),
            "bootID": _uid(rng),
            "kernelVersion": "5.10.225-213.878.amzn2.x86_64",
            "osImage": "Amazon Linux 2",
            "containerRuntimeVersion": "containerd://1.7.22",
            "kubeletVersion": "v1.31.2-eks-94953ac",
            "kubeProxyVersion": "v1.31.2-eks-94953ac",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
        "images": images,
    }
    when = _ts(_CREATED)
    metadata: Obj = {
        "name": name,
        "uid": _uid(rng),
        "resourceVersion": str(rng.randint(10**6, 10**8)),
        "creationTimestamp": when,
        "labels": labels,
        "annotations": annotations,
    }
    metadata["managedFields"] = [
        _managed(
            "kubelet", "v1", when, {"metadata": {"annotations": annotations, "labels": labels}}
        ),
        _managed(
            "kube-controller-manager", "v1", when, {"spec": {"podCIDR": None, "podCIDRs": None}}
        ),
        _managed(
            "kubelet",
            "v1",
            now,
            {"status": {k: v for k, v in status.items() if k != "images"} | {"images": None}},
            status=True,
        ),
    ]
    return {"metadata": metadata, "spec": spec, "status": status}


def deployment(rng: random.Random, app: AppShape, replicas: int, annotations: Obj) -> Obj:
    """A Deployment as the server sends it, all replicas available."""
    when = _ts(_CREATED)
    spec = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": app.name}},
        "template": {
            "metadata": {"labels": dict(app.labels), "creationTimestamp": None},
            "spec": _pod_spec_defaults(app.containers, app.volumes),
        },
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
        },
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    }
    status = {
        "observedGeneration": 3,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "lastUpdateTime": when,
                "lastTransitionTime": when,
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
            },
            {
                "type": "Progressing",
                "status": "True",
                "lastUpdateTime": when,
                "lastTransitionTime": when,
                "reason": "NewReplicaSetAvailable",
                "message": f'ReplicaSet "{app.name}-{app.template_hash}" has successfully progressed.',
            },
        ],
    }
    metadata: Obj = {
        "name": app.name,
        "namespace": app.namespace,
        "uid": _uid(rng),
        "resourceVersion": str(rng.randint(10**6, 10**8)),
        "generation": 3,
        "creationTimestamp": when,
        "labels": dict(app.labels),
        "annotations": {"deployment.kubernetes.io/revision": "3", **annotations},
    }
    metadata["managedFields"] = [
        _managed(
            "kubectl-client-side-apply",
            "apps/v1",
            when,
            {"metadata": {"labels": app.labels}, "spec": spec},
        ),
        _managed("kube-controller-manager", "apps/v1", when, {"status": status}, status=True),
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }


def training_job(rng: random.Random, name: str, namespace: str, finished_at: datetime) -> Obj:
    """A finished training Job as the server sends it (Complete, one pod succeeded)."""
    controller_uid = _uid(rng)
    labels = {
        "batch.kubernetes.io/controller-uid": controller_uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": controller_uid,
        "job-name": name,
    }
    trainer = {
        "name": "trainer",
        "image": f"{REGISTRY}/trainer:2.1",
        "resources": {"requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }
    template_spec = {
        **_pod_spec_defaults(
            [trainer], [{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}]
        ),
        "restartPolicy": "Never",
        "imagePullSecrets": [{"name": "regcred"}],
    }
    created = _ts(finished_at - timedelta(hours=3))
    done = _ts(finished_at)
    spec = {
        "parallelism": 1,
        "completions": 1,
        "backoffLimit": 6,
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": controller_uid}},
        "manualSelector": False,
        "template": {
            "metadata": {"labels": labels, "creationTimestamp": None},
            "spec": template_spec,
        },
        "completionMode": "NonIndexed",
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
    }
    status = {
        "conditions": [
            {
                "type": kind,
                "status": "True",
                "lastProbeTime": done,
                "lastTransitionTime": done,
                "reason": reason,
                "message": message,
            }
            for kind, reason, message in (
                (
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                ),
                ("Complete", "CompletionsReached", "Reached expected number of succeeded pods"),
            )
        ],
        "startTime": created,
        "completionTime": done,
        "succeeded": 1,
        "terminating": 0,
        "uncountedTerminatedPods": {},
        "ready": 0,
    }
    metadata: Obj = {
        "name": name,
        "namespace": namespace,
        "uid": controller_uid,
        "resourceVersion": str(rng.randint(10**6, 10**8)),
        "generation": 1,
        "creationTimestamp": created,
        "labels": {k: v for k, v in labels.items() if "controller-uid" in k or k == "job-name"},
        "annotations": {"batch.kubernetes.io/job-tracking": ""},
    }
    metadata["managedFields"] = [
        _managed("kubectl-create", "batch/v1", created, {"spec": spec}),
        _managed("kube-controller-manager", "batch/v1", done, {"status": status}, status=True),
    ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }


def nodes(pods: int, seed: int = 7) -> list[Obj]:
    """The cluster's machines: one per 30 pods, at least three; every tenth holds 8 GPUs."""
    rng = random.Random(seed * 7919)
    return [node(rng, m, gpus=8 if m % 10 == 0 else 0) for m in range(max(3, pods // 30))]


def training_namespace(pods: int, machines: list[Obj], seed: int = 7) -> list[Obj]:
    """The namespace doctor checks, healthy, with `pods` pods (at least three): the jobs
    manager, its database, workers, and one finished training Job's succeeded pod."""
    rng = random.Random(seed)
    kept = ("ServiceAccount", "Secret", "PersistentVolumeClaim", "StorageClass")
    objects = [o for o in healthy(_CREATED + timedelta(days=30)) if o["kind"] in kept]
    names = [m["metadata"]["name"] for m in machines]
    ips = [m["status"]["addresses"][0]["address"] for m in machines]
    apps: list[tuple[AppShape, int, Obj]] = []
    for name, replicas, extra in (
        ("jobs-manager", 1, {"truegreen.io/keep-running": "jobs-manager"}),
        ("mysql", 1, {}),
        ("worker", max(0, pods - 3), {}),
    ):
        if not replicas:
            continue
        app = AppShape(rng, name, NAMESPACE)
        for c in app.containers:
            c["image"] = f"{REGISTRY}/{name}:1.{len(c['name'])}"
        app.image_ids = {
            c["image"]: f"{c['image'].rsplit(':', 1)[0]}@sha256:{rng.getrandbits(256):064x}"
            for c in app.containers
        }
        if name == "jobs-manager":
            app.volumes.append(
                {"name": "datasets", "persistentVolumeClaim": {"claimName": "datasets"}}
            )
        apps.append((app, replicas, extra))
    for app, replicas, extra in apps:
        workload = deployment(rng, app, replicas, extra)
        workload["spec"]["template"]["spec"]["imagePullSecrets"] = [{"name": "regcred"}]
        objects.append(workload)
        for r in range(replicas):
            m = (len(objects) + r) % len(names)
            made = replica_pod(rng, app, names[m], ips[m])
            made["spec"]["imagePullSecrets"] = [{"name": "regcred"}]
            objects.append({"apiVersion": "v1", "kind": "Pod", **made})
    job = training_job(rng, "train-run-7", NAMESPACE, _CREATED + timedelta(days=29))
    objects.append(job)
    template = job["spec"]["template"]
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            **pod(
                rng,
                name=f"train-run-7-{_suffix(rng)}",
                namespace=NAMESPACE,
                labels=template["metadata"]["labels"],
                owner={
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train-run-7",
                    "uid": job["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                },
                spec=template["spec"],
                node=names[0],
                host_ip=ips[0],
                image_ids={
                    "registry.example.com/trainer:2.1": f"{REGISTRY}/trainer@sha256:{rng.getrandbits(256):064x}"
                },
                started=_CREATED + timedelta(days=29) - timedelta(hours=3),
                phase="Succeeded",
            ),
        }
    )
    return objects


def _sibling(rng: random.Random, first: Obj, node: str, host_ip: str) -> Obj:
    """Another replica of `first`'s ReplicaSet: its own name, uid, machine, addresses and
    container IDs; the rest shared (the bytes are what counts, and they are the same size)."""
    ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    meta, status = first["metadata"], first["status"]
    created, kubelet = meta["managedFields"]
    owned = kubelet["fieldsV1"]["f:status"]
    podips: Obj = {".": {}, f'k:{{"ip":"{ip}"}}': {".": {}, "f:ip": {}}}
    return {
        "metadata": {
            **meta,
            "name": f"{meta['generateName']}{_suffix(rng)}",
            "uid": _uid(rng),
            "resourceVersion": str(rng.randint(10**6, 10**8)),
            "managedFields": [
                created,
                {**kubelet, "fieldsV1": {"f:status": {**owned, "f:podIPs": podips}}},
            ],
        },
        "spec": {**first["spec"], "nodeName": node},
        "status": {
            **status,
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "containerStatuses": [
                {**c, "containerID": f"containerd://{rng.getrandbits(256):064x}"}
                for c in status["containerStatuses"]
            ],
        },
    }


def other_pods(count: int, machines: list[Obj], seed: int = 7) -> Iterator[Obj]:
    """`count` running pods of the rest of the cluster: apps of 1-20 replicas in 200
    namespaces, spread over the machines. List items: no kind, no apiVersion."""
    rng = random.Random(seed * 31)
    names = [m["metadata"]["name"] for m in machines]
    ips = [m["status"]["addresses"][0]["address"] for m in machines]
    made = 0
    app_index = 0
    while made < count:
        namespace = f"team-{app_index % 200:03d}"
        app = AppShape(rng, f"svc-{app_index:05d}", namespace)
        app_index += 1
        m = rng.randrange(len(names))
        first = replica_pod(rng, app, names[m], ips[m])
        yield first
        made += 1
        for _ in range(min(rng.randint(0, 19), count - made)):
            m = rng.randrange(len(names))
            yield _sibling(rng, first, names[m], ips[m])
            made += 1
