"""A rollout simulator for the fake API server: the Deployment controller and kubelet, in brief.

When a Deployment's pod template changes, its pods are replaced by new ones whose imageID is the
digest the real registry serves for the image now (or a crash loop, a pull failure, a passed
progress deadline, or nothing at all, per Deployment). An annotation-only change is simply
observed (status.observedGeneration catches up), as the real controller does.

As on a real cluster (kubernetes/kubectl#1628, kubernetes/kubernetes#110171), the replaced pods
do not vanish when the Deployment reports complete: they stay Terminating for their grace
period (metadata.deletionTimestamp and deletionGracePeriodSeconds set, still phase Running,
still reporting the OLD imageID) while the Deployment's status counts only the pods that are
not terminating (pkg/controller/deployment/sync.go calculateStatus sums the ReplicaSets' active
pods). The status itself may lag the pods: the controller writes it a few reads later. Both
are measured in reads a client makes, never in wall-clock time, so tests stay deterministic.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support.fake_apiserver import FakeApiServer

Obj = dict[str, Any]
BEHAVIOURS = ("ok", "old-image", "crash", "pull-fail", "deadline", "stall")
GRACE_SECONDS = 30
"""terminationGracePeriodSeconds' default (pkg/apis/core/v1/defaults.go)."""
_POD_READ = re.compile(r"^/api/v1/(?:namespaces/(?P<ns>[^/]+)/)?pods(?:/[^/]+)?$")
_DEPLOYMENT_READ = re.compile(r"^/apis/apps/v1/namespaces/(?P<ns>[^/]+)/deployments(?:/[^/]+)?$")


@dataclass
class _Leaving:
    """Replaced pods still Terminating: listed by `reads` more pod reads, then gone."""

    namespace: str
    names: list[str]
    reads: int


@dataclass
class _LateStatus:
    """A status the controller has computed but not yet written: `reads` more reads of the
    Deployment still see the old one."""

    namespace: str
    name: str
    status: Obj
    reads: int


class RolloutSimulator:
    """Attach with `RolloutSimulator(server, digest_for)`; set `behaviour[name]` per Deployment.

    `terminating_reads`: how many pod reads (lists or gets in the namespace) still see the
    replaced pods Terminating after the rollout; 0 removes them at once.
    `status_lag_reads`: how many reads of the Deployment still see its old status after a
    restart (the controller has not caught up yet); 0 writes it at once.
    """

    def __init__(
        self,
        server: FakeApiServer,
        digest_for: Callable[[str], str],
        *,
        terminating_reads: int = 2,
        status_lag_reads: int = 0,
    ) -> None:
        self.server = server
        self.digest_for = digest_for
        self.behaviour: dict[str, str] = {}
        self.rollouts: dict[str, int] = {}
        self.terminating_reads = terminating_reads
        self.status_lag_reads = status_lag_reads
        self._templates: dict[str, str] = {}
        self._leaving: list[_Leaving] = []
        self._late: list[_LateStatus] = []
        self._lock = threading.Lock()
        server.patch_hooks.append(self._on_patch)
        server.request_hooks.append(self._on_request)

    def remember(self, deployment: Obj) -> None:
        """Note a Deployment's current template (call after loading a scenario)."""
        self._templates[self._key(deployment)] = json.dumps(
            deployment["spec"]["template"], sort_keys=True
        )

    @staticmethod
    def _key(deployment: Obj) -> str:
        return f"{deployment['metadata'].get('namespace', '')}/{deployment['metadata']['name']}"

    def _on_patch(self, server: FakeApiServer, plural: str, obj: Obj) -> None:
        if plural != "deployments":
            return
        key = self._key(obj)
        template = json.dumps(obj["spec"]["template"], sort_keys=True)
        if self._templates.get(key) == template:
            # Like the controller: status is written only when it changes.
            generation = obj["metadata"]["generation"]
            if obj.get("status", {}).get("observedGeneration") != generation:
                observed = copy.deepcopy(obj)
                observed.setdefault("status", {})["observedGeneration"] = generation
                server.update_object(observed)
            return
        self._templates[key] = template
        self.rollouts[obj["metadata"]["name"]] = self.rollouts.get(obj["metadata"]["name"], 0) + 1
        self.roll_out(obj, self.behaviour.get(obj["metadata"]["name"], "ok"))

    def _on_request(self, server: FakeApiServer, method: str, path: str) -> None:
        """Between a client's reads: terminating pods finish, a late status lands."""
        if method != "GET":
            return
        pods, deployments = _POD_READ.match(path), _DEPLOYMENT_READ.match(path)
        with self._lock:
            if pods is not None:
                for leaving in list(self._leaving):
                    if pods["ns"] not in (None, leaving.namespace):
                        continue
                    if leaving.reads > 0:
                        leaving.reads -= 1
                        continue
                    for name in leaving.names:
                        server.delete_object("Pod", name, leaving.namespace)
                    self._leaving.remove(leaving)
            if deployments is not None:
                for late in list(self._late):
                    if deployments["ns"] != late.namespace:
                        continue
                    if late.reads > 0:
                        late.reads -= 1
                        continue
                    self._write_status(late.namespace, late.name, late.status)
                    self._late.remove(late)

    def finish_terminating(self) -> None:
        """Every terminating pod's grace period ends now: they are gone."""
        with self._lock:
            for leaving in self._leaving:
                for name in leaving.names:
                    self.server.delete_object("Pod", name, leaving.namespace)
            self._leaving.clear()

    def roll_out(self, deployment: Obj, behaviour: str) -> None:
        """Replace the Deployment's pods as its new template says, with `behaviour`."""
        assert behaviour in BEHAVIOURS, behaviour
        if behaviour == "stall":
            return
        namespace = deployment["metadata"]["namespace"]
        name = deployment["metadata"]["name"]
        replicas = deployment["spec"].get("replicas", 1)
        generation = deployment["metadata"]["generation"]
        current = [p for p in pods_of(self.server, deployment) if not _terminating(p)]
        old_ids = {
            s["name"]: s.get("imageID")
            for pod in current
            for s in pod["status"].get("containerStatuses", [])
        }
        self._terminate(namespace, current)
        for index in range(replicas):
            pod = self.make_pod(deployment, f"{name}-g{generation}-{index}", behaviour)
            # old-image: a node kept its cached image, so the restart changed nothing
            if behaviour == "old-image":
                for reported in pod["status"]["containerStatuses"]:
                    reported["imageID"] = old_ids.get(reported["name"], reported.get("imageID"))
            self.server.add(pod)
        healthy = behaviour in ("ok", "old-image")
        # Counts of the pods that are not terminating; the replaced ones are not among them.
        status: Obj = {
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas if healthy else 0,
            "availableReplicas": replicas if healthy else 0,
            "unavailableReplicas": 0 if healthy else replicas,
            "conditions": [
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
            ],
        }
        if behaviour == "deadline":
            status["updatedReplicas"] = 0
            status["conditions"] = [
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}
            ]
        if self.status_lag_reads > 0:
            with self._lock:
                self._late.append(_LateStatus(namespace, name, status, self.status_lag_reads))
            return
        self._write_status(namespace, name, status)

    def _terminate(self, namespace: str, pods: list[Obj]) -> None:
        """Delete `pods` gracefully: Terminating for a while, or gone at once."""
        if self.terminating_reads <= 0:
            for pod in pods:
                self.server.delete_object("Pod", pod["metadata"]["name"], namespace)
            return
        until = datetime.now(UTC) + timedelta(seconds=GRACE_SECONDS)
        for pod in pods:
            # registry/rest/delete.go BeforeDelete: the grace period's end, and its length.
            pod["metadata"]["deletionTimestamp"] = until.strftime("%Y-%m-%dT%H:%M:%SZ")
            pod["metadata"]["deletionGracePeriodSeconds"] = GRACE_SECONDS
            self.server.update_object(pod)
        if pods:
            with self._lock:
                names = [p["metadata"]["name"] for p in pods]
                self._leaving.append(_Leaving(namespace, names, self.terminating_reads))

    def _write_status(self, namespace: str, name: str, status: Obj) -> None:
        stored = self.server.get_object("Deployment", name, namespace)
        assert stored is not None
        stored["status"] = status
        self.server.update_object(stored)

    def make_pod(self, deployment: Obj, pod_name: str, behaviour: str = "ok") -> Obj:
        """A pod of the Deployment's current template, running (or failing) as `behaviour` says."""
        template = deployment["spec"]["template"]
        spec = copy.deepcopy(template["spec"])
        spec["nodeName"] = "node-1"
        statuses = []
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            image = container["image"]
            status: Obj = {"name": container["name"], "image": image, "restartCount": 0}
            if behaviour == "pull-fail":
                status["state"] = {"waiting": {"reason": "ImagePullBackOff"}}
            else:
                status["imageID"] = (
                    f"{image.split('@')[0].rsplit(':', 1)[0]}@{self.digest_for(image)}"
                )
                if behaviour == "crash":
                    status["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
                    status["restartCount"] = 3
                else:
                    status["state"] = {"running": {}}
            statuses.append(status)
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod_name,
                "namespace": deployment["metadata"]["namespace"],
                "labels": dict(template["metadata"].get("labels", {})),
                "annotations": dict(template["metadata"].get("annotations", {})),
            },
            "spec": spec,
            "status": {"phase": "Running", "containerStatuses": statuses},
        }


def _terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def pods_of(server: FakeApiServer, deployment: Obj) -> list[Obj]:
    """Every pod the Deployment's selector matches, terminating ones included."""
    labels = deployment["spec"]["selector"]["matchLabels"]
    return [
        pod
        for pod in server.list_objects("Pod", deployment["metadata"]["namespace"])
        if all(pod["metadata"].get("labels", {}).get(k) == v for k, v in labels.items())
    ]
