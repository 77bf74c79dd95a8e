"""A rollout simulator for the fake API server: the Deployment controller and kubelet, in brief.

When a Deployment's pod template changes, its pods are replaced by new ones whose imageID is the
digest the real registry serves for the image now (or a crash loop, a pull failure, a passed
progress deadline, or nothing at all, per Deployment). An annotation-only change is simply
observed (status.observedGeneration catches up), as the real controller does.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from tests.support.fake_apiserver import FakeApiServer

Obj = dict[str, Any]
BEHAVIOURS = ("ok", "old-image", "crash", "pull-fail", "deadline", "stall")


class RolloutSimulator:
    """Attach with `RolloutSimulator(server, digest_for)`; set `behaviour[name]` per Deployment."""

    def __init__(self, server: FakeApiServer, digest_for: Callable[[str], str]) -> None:
        self.server = server
        self.digest_for = digest_for
        self.behaviour: dict[str, str] = {}
        self.rollouts: dict[str, int] = {}
        self._templates: dict[str, str] = {}
        server.patch_hooks.append(self._on_patch)

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

    def roll_out(self, deployment: Obj, behaviour: str) -> None:
        """Replace the Deployment's pods as its new template says, with `behaviour`."""
        assert behaviour in BEHAVIOURS, behaviour
        if behaviour == "stall":
            return
        namespace = deployment["metadata"]["namespace"]
        name = deployment["metadata"]["name"]
        replicas = deployment["spec"].get("replicas", 1)
        generation = deployment["metadata"]["generation"]
        template = deployment["spec"]["template"]
        old_ids = {
            s["name"]: s.get("imageID")
            for pod in pods_of(self.server, deployment)
            for s in pod["status"].get("containerStatuses", [])
        }
        for pod in pods_of(self.server, deployment):
            self.server.delete_object("Pod", pod["metadata"]["name"], namespace)
        for index in range(replicas):
            pod = self.make_pod(deployment, f"{name}-g{generation}-{index}", behaviour)
            # old-image: a node kept its cached image, so the restart changed nothing
            if behaviour == "old-image":
                for reported in pod["status"]["containerStatuses"]:
                    reported["imageID"] = old_ids.get(reported["name"], reported.get("imageID"))
            self.server.add(pod)
        status: Obj = {
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas if behaviour in ("ok", "old-image") else 0,
            "availableReplicas": replicas if behaviour in ("ok", "old-image") else 0,
            "conditions": [
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
            ],
        }
        if behaviour == "deadline":
            status["updatedReplicas"] = 0
            status["conditions"] = [
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}
            ]
        stored = self.server.get_object("Deployment", name, namespace)
        assert stored is not None
        stored["status"] = status
        self.server.update_object(stored)
        del template

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


def pods_of(server: FakeApiServer, deployment: Obj) -> list[Obj]:
    labels = deployment["spec"]["selector"]["matchLabels"]
    return [
        pod
        for pod in server.list_objects("Pod", deployment["metadata"]["namespace"])
        if all(pod["metadata"].get("labels", {}).get(k) == v for k, v in labels.items())
    ]
