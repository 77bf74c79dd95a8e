"""A deterministic corpus of Kubernetes manifests for lint benchmarks, and labelled incidents.

`corpus(directory, files, seed)` writes realistic Deployments (with their Services),
StatefulSets and Jobs, about a third of them with a probe problem. `INCIDENTS` are the labelled
cases of the catch-rate table: what truegreen must find, and what Checkov is asked.
"""

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]


def _container(rng: random.Random, name: str, port: int | None, **probes: Obj) -> Obj:
    container: Obj = {
        "name": name,
        "image": f"registry.example.com/team/{name}:{rng.randint(1, 30)}.{rng.randint(0, 9)}",
        "env": [{"name": f"SETTING_{i}", "value": str(rng.randint(0, 999))} for i in range(4)],
        "resources": {
            "requests": {"cpu": f"{rng.choice((100, 250, 500))}m", "memory": "256Mi"},
            "limits": {"memory": "1Gi"},
        },
        "securityContext": {"runAsNonRoot": True, "readOnlyRootFilesystem": True},
    }
    if port is not None:
        container["ports"] = [{"name": "http", "containerPort": port}]
    container.update(probes)
    return container


def _template(name: str, containers: list[Obj], **spec: Any) -> Obj:
    return {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": containers, **spec},
    }


def _workload(kind: str, name: str, template: Obj, annotations: Obj | None = None) -> Obj:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    spec: Obj = {"template": template}
    if kind != "Job":
        spec.update(replicas=2, selector={"matchLabels": {"app": name}})
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": "apps", "annotations": annotations or {}},
        "spec": spec,
    }


def _service(name: str, port: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "apps"},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": port}]},
    }


READY = {"readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5}}
ALIVE = {"livenessProbe": {"httpGet": {"path": "/alive", "port": "http"}, "periodSeconds": 20}}


def _documents(rng: random.Random, index: int) -> list[Obj]:
    name = f"svc-{index:05d}"
    port = 8000 + index % 1000
    roll = rng.random()
    if roll < 0.45:  # a healthy web service
        container = _container(rng, name, port, **READY, **ALIVE)
        return [_workload("Deployment", name, _template(name, [container])), _service(name, port)]
    if roll < 0.6:  # a web service without a readiness probe
        container = _container(rng, name, port, **ALIVE)
        return [_workload("Deployment", name, _template(name, [container])), _service(name, port)]
    if roll < 0.7:  # a keep-running runner with a liveness probe that kills its work
        container = _container(rng, name, port, **READY, **ALIVE)
        annotations = {"truegreen.io/keep-running": name}
        return [_workload("Deployment", name, _template(name, [container]), annotations)]
    if roll < 0.8:  # a probe on a named port the container does not declare
        probe = {"readinessProbe": {"tcpSocket": {"port": "metrics"}}}
        container = _container(rng, name, port, **probe)
        return [_workload("StatefulSet", name, _template(name, [container])), _service(name, port)]
    # a batch job: no probes, and none needed
    container = _container(rng, name, None)
    return [_workload("Job", name, _template(name, [container], restartPolicy="Never"))]


def corpus(directory: Path, files: int = 5000, seed: int = 11) -> int:
    """Write `files` manifest files under `directory`; returns how many objects they hold."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    objects = 0
    for index in range(files):
        documents = _documents(rng, index)
        objects += len(documents)
        path = directory / f"{index // 500:02d}" / f"app-{index:05d}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return objects


@dataclass(frozen=True)
class Incident:
    """One labelled case: the manifest, the truegreen rule that names the problem (None when
    there is none to find), and the Checkov check that names it (None: Checkov has none)."""

    name: str
    documents: list[Obj]
    truegreen_rule: str | None
    checkov_check: str | None = None


def _incidents() -> list[Incident]:
    rng = random.Random(3)
    no_ready = _container(rng, "api", 8080, **ALIVE)
    keeper = _container(rng, "runner", 8080, **READY, **ALIVE)
    named = _container(rng, "web", 8080, readinessProbe={"tcpSocket": {"port": "metrics"}})
    off = _container(
        rng,
        "worker",
        8080,
        readinessProbe={"httpGet": {"path": "/ready", "port": 8080}},
    )
    off["env"].append({"name": "DISABLE_HTTP", "value": "1"})
    batch = _container(rng, "train", None)
    return [
        Incident(
            "missing readiness, no Service",
            [_workload("Deployment", "api", _template("api", [no_ready]))],
            "readiness-missing",
            "CKV_K8S_9",
        ),
        Incident(
            "restart probe on a keep-running container",
            [
                _workload(
                    "Deployment",
                    "runner",
                    _template("runner", [keeper]),
                    {"truegreen.io/keep-running": "runner"},
                )
            ],
            "restart-probe-on-keep-running",
        ),
        Incident(
            "undeclared named port",
            [_workload("Deployment", "web", _template("web", [named]))],
            "probe-port-undeclared",
        ),
        Incident(
            "probe on a disabled server",
            [
                _workload(
                    "Deployment",
                    "worker",
                    _template("worker", [off]),
                    {"truegreen.io/disabled-by": "8080=DISABLE_HTTP"},
                )
            ],
            "probe-targets-disabled-server",
        ),
        Incident(
            "batch job without probes (nothing to find)",
            [_workload("Job", "train", _template("train", [batch], restartPolicy="Never"))],
            None,
        ),
    ]


INCIDENTS = _incidents()
