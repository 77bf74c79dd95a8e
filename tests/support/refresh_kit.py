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
