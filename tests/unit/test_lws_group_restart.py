"""`truegreen lint` on a LeaderWorkerSet whose group is recreated by any container's restart: a
liveness or startup probe on a sidecar or a metrics exporter kills the group's training.

sigs.k8s.io/lws pkg/controllers/pod_controller.go handleRestartPolicy deletes the group's leader
pod (foreground: its worker StatefulSet goes too) once pkg/utils/pod/pod_utils.go
ContainerRestarted finds a restartCount above 0 in any entry of InitContainerStatuses (native
sidecars are reported there) or ContainerStatuses, under restartPolicy RecreateGroupOnPodRestart,
the `+kubebuilder:default` of api/leaderworkerset/v1 leaderworkerset_types.go. The objects are
shaped as that API type declares them (leaderWorkerTemplate.leaderTemplate, workerTemplate,
restartPolicy); the shared ones serve tests/unit/test_lint_group_restart.py too.
"""

import json
from pathlib import Path
from typing import Any

from tests.support.cli import run_cli

Obj = dict[str, Any]
RESTART = "restart-probe-on-keep-running"
LIVE: Obj = {"httpGet": {"path": "/api/v1/health", "port": 2020}}
TRAINER: Obj = {
    "name": "trainer",
    "image": "registry.example.com/train:1",
    "command": ["torchrun", "--nnodes=4", "--nproc-per-node=8", "train.py"],
    "resources": {"limits": {"nvidia.com/gpu": 8}},
}


def shipper(**probes: Obj) -> Obj:
    """A log shipper as a native sidecar (an init container with restartPolicy Always)."""
    return {
        "name": "log-shipper",
        "image": "fluent/fluent-bit:3.0",
        "restartPolicy": "Always",
        "ports": [{"containerPort": 2020, "name": "http"}],
        **probes,
    }


def exporter(**probes: Obj) -> Obj:
    """A metrics exporter beside the trainer: a main container that serves a port."""
    return {
        "name": "dcgm-exporter",
        "image": "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04",
        "ports": [{"containerPort": 9400, "name": "metrics"}],
        "readinessProbe": {"httpGet": {"path": "/health", "port": "metrics"}},
        **probes,
    }


def lws(
    worker: list[Obj],
    *,
    init: list[Obj] | None = None,
    leader: list[Obj] | None = None,
    annotations: dict[str, str] | None = None,
    **template: object,
) -> Obj:
    """A LeaderWorkerSet of groups of 4 with these worker containers (and a leader template)."""
    spec: Obj = {"containers": worker}
    if init:
        spec["initContainers"] = init
    group: Obj = {"size": 4, "workerTemplate": {"spec": spec}, **template}
    if leader is not None:
        group["leaderTemplate"] = {"spec": {"containers": leader}}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm-train", "annotations": annotations or {}},
        "spec": {"replicas": 1, "leaderWorkerTemplate": group},
    }


def test_lint_reports_the_group_s_probes_as_errors(tmp_path: Path) -> None:
    """The whole command: the group's work is looked for in every template of the set, with
    the Services of the same folder that route to its containers."""
    obj = lws([TRAINER, exporter(livenessProbe=LIVE)], init=[shipper(livenessProbe=LIVE)])
    (tmp_path / "lws.json").write_text(json.dumps(obj))
    result = run_cli("lint", str(tmp_path), "-o", "json")
    found = [(f["rule"], f["severity"], f["container"]) for f in result.json()["findings"]]
    assert found == [
        ("restart-probe-on-keep-running", "error", "dcgm-exporter"),
        ("restart-probe-on-keep-running", "error", "log-shipper"),
    ]
    assert result.exit_code == 2


def test_a_routed_gpu_leader_keeps_no_work_for_the_workers_probes(tmp_path: Path) -> None:
    """The leader serves on 8000 through a Service (its one container: FindPort resolves the
    number there), so its GPUs say nothing of training, and the workers' exporter probe kills
    no training."""
    gpu = {"name": "vllm", "image": "vllm", "resources": {"limits": {"nvidia.com/gpu": 8}}}
    obj = lws([exporter(livenessProbe=LIVE)], leader=[gpu])
    obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"] = {"labels": {"r": "lead"}}
    (tmp_path / "lws.json").write_text(json.dumps(obj))

    def found() -> list[tuple[str, str]]:
        findings = run_cli("lint", str(tmp_path), "-o", "json").json()["findings"]
        return [(f["role"], f["container"]) for f in findings if f["rule"] == RESTART]

    assert found() == [("worker", "dcgm-exporter")], "precondition: GPUs and no port"
    service: Obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}
    service["spec"] = {"selector": {"r": "lead"}, "ports": [{"port": 80, "targetPort": 8000}]}
    (tmp_path / "service.json").write_text(json.dumps(service))
    assert found() == []
