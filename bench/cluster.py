"""Deterministic synthetic clusters for benchmarks: realistic pods (~4-5 KB each) at any scale."""

import copy
import random
from datetime import UTC, datetime
from typing import Any

from tests.support.scenarios import healthy

Obj = dict[str, Any]


def _pod(rng: random.Random, index: int, namespace: str, node: str) -> Obj:
    app = f"app-{index % 97}"
    containers = []
    for c in range(rng.choice((1, 2, 2, 3))):
        containers.append(
            {
                "name": f"c{c}",
                "image": f"registry.example.com/team/{app}:{rng.randint(1, 40)}.{rng.randint(0, 9)}",
                "ports": [{"name": "http", "containerPort": 8080 + c}],
                "env": [
                    {"name": f"SETTING_{e}", "value": f"value-{rng.randint(0, 10**6)}"}
                    for e in range(8)
                ],
                "resources": {
                    "requests": {
                        "cpu": f"{rng.choice((50, 100, 250, 500))}m",
                        "memory": f"{rng.choice((64, 128, 256, 512))}Mi",
                    },
                    "limits": {"memory": "1Gi"},
                },
                "readinessProbe": {
                    "httpGet": {"path": "/ready", "port": 8080 + c},
                    "periodSeconds": 10,
                },
                "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{app}-{index:06d}",
            "namespace": namespace,
            "labels": {
                "app": app,
                "tier": rng.choice(("web", "worker", "batch")),
                "pod-template-hash": f"{rng.getrandbits(32):08x}",
            },
            "annotations": {"checksum/config": f"{rng.getrandbits(128):032x}"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-rs",
                    "uid": f"{rng.getrandbits(64):016x}",
                    "controller": True,
                }
            ],
            "creationTimestamp": "2026-11-01T00:00:00Z",
        },
        "spec": {
            "nodeName": node,
            "serviceAccountName": "default",
            "containers": containers,
            "volumes": [{"name": "config", "configMap": {"name": f"{app}-config"}}],
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
        "status": {
            "phase": "Running",
            "podIP": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-11-01T00:00:10Z"}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "name": c["name"],
                    "ready": True,
                    "restartCount": 0,
                    "image": c["image"],
                    "imageID": f"{c['image']}@sha256:{rng.getrandbits(256):064x}",
                    "state": {"running": {"startedAt": "2026-11-01T00:00:09Z"}},
                }
                for c in containers
            ],
        },
    }


def synthetic_cluster(pods: int, seed: int = 7) -> list[Obj]:
    """The healthy training namespace plus `pods` pods on pods/30 machines in 200 namespaces."""
    rng = random.Random(seed)
    now = datetime.now(UTC)
    objects = [o for o in healthy(now) if o["kind"] != "Node"]
    machines = max(3, pods // 30)
    for m in range(machines):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"node-{m:04d}",
                    "labels": {"kubernetes.io/hostname": f"node-{m:04d}"},
                },
                "spec": {},
                "status": {
                    "allocatable": {
                        "cpu": "32",
                        "memory": "128Gi",
                        "pods": "110",
                        **({"nvidia.com/gpu": "4"} if m % 10 == 0 else {}),
                    }
                },
            }
        )
    for index in range(pods):
        objects.append(_pod(rng, index, f"ns-{index % 200:03d}", f"node-{index % machines:04d}"))
    return [copy.deepcopy(o) for o in objects]
