"""Opted-in Deployments for refresh, as the tests, the fuzzer and the benchmark install them."""

from typing import Any

Obj = dict[str, Any]
NAMESPACE = "train"


def deployment(
    name: str,
    *containers: Obj,
    annotations: dict[str, str] | None = None,
    pull_secret: str | None = "regcred",
) -> Obj:
    """A settled Deployment labelled for refresh, in `train`, one replica."""
    pod_spec: Obj = {"containers": list(containers)}
    if pull_secret:
        pod_spec["imagePullSecrets"] = [{"name": pull_secret}]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {"truegreen.io/refresh": "enabled"},
            "annotations": annotations or {},
            "generation": 1,
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
        },
        "status": {
            "observedGeneration": 1,
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
        },
    }


def container(name: str, image: str, policy: str | None = "Always") -> Obj:
    """A container; `Always` pulls, so a restart can take a moved tag."""
    return {"name": name, "image": image, **({"imagePullPolicy": policy} if policy else {})}


def statefulset(
    name: str, *containers: Obj, replicas: int = 1, pull_secret: str | None = "regcred"
) -> Obj:
    """A StatefulSet labelled for refresh, in `train`, with its RollingUpdate as the API server
    stores it (apps/v1 defaults.go `SetDefaults_StatefulSet`: partition 0). The rollout
    simulator's `settle` stores it with its pods and status."""
    workload = _pod_owner("StatefulSet", name, containers, pull_secret)
    workload["spec"] |= {
        "replicas": replicas,
        "serviceName": name,
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
    }
    return workload


def daemonset(name: str, *containers: Obj, pull_secret: str | None = "regcred") -> Obj:
    """A DaemonSet labelled for refresh, in `train`, with its RollingUpdate as the API server
    stores it (apps/v1 defaults.go `SetDefaults_DaemonSet`: maxUnavailable 1, maxSurge 0)."""
    workload = _pod_owner("DaemonSet", name, containers, pull_secret)
    workload["spec"]["updateStrategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    return workload


def _pod_owner(kind: str, name: str, containers: tuple[Obj, ...], pull_secret: str | None) -> Obj:
    pod_spec: Obj = {"containers": list(containers) or [container("app", "registry.example/app:1")]}
    if pull_secret:
        pod_spec["imagePullSecrets"] = [{"name": pull_secret}]
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {"truegreen.io/refresh": "enabled"},
            "annotations": {},
            "generation": 1,
        },
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
        },
    }


def complete_but_unavailable(replica_set: str, since: str) -> list[dict[str, str]]:
    """A Deployment's conditions once its last rollout completed and a copy is no longer
    available: Available False `MinimumReplicasUnavailable`, and Progressing still True
    `NewReplicaSetAvailable`, which progress.go `syncRolloutStatus` keeps until another
    rollout starts (deployment/util `NewRSAvailableReason`, `MinimumReplicasUnavailable`)."""
    return [
        {
            "type": "Available",
            "status": "False",
            "reason": "MinimumReplicasUnavailable",
            "message": "Deployment does not have minimum availability.",
            "lastTransitionTime": since,
        },
        {
            "type": "Progressing",
            "status": "True",
            "reason": "NewReplicaSetAvailable",
            "message": f'ReplicaSet "{replica_set}" has successfully progressed.',
            "lastTransitionTime": since,
        },
    ]
