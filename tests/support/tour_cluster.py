"""A fake cluster to try truegreen on without a cluster, one scene at a time (`make tour`).

    python -m tests.support.tour_cluster                 # lists the scenes (exit 0)
    python -m tests.support.tour_cluster SCENE [FOLDER]  # serves one

Starts the fake API server over TLS with its own CA (and, for `refresh-fails`, a real
docker-registry) on loopback, loads the scene, writes FOLDER/kubeconfig (FOLDER: a new temporary
folder when not given, removed at the end), prints `ready`, the kubeconfig's path and the
commands to try, and serves until SIGTERM or SIGINT (exit 0). An unknown scene is exit 64.
`examples/terminal-tour.sh` plays the operator's screens from the same scenes.
"""

import base64
import copy
import json
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.support.auth_echo import make_pki, write_plugin
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.refresh_kit import container, deployment
from tests.support.registry import Registry, registry_binary, start_registry
from tests.support.rollout import RolloutSimulator
from tests.support.scenarios import (
    NAMESPACE,
    cordoned_machines,
    find,
    gpu_held_by_notebook,
    healthy,
    job_too_large,
)

PASSWORD = "tour-registry-password"


def _kubeconfig(server: FakeApiServer, folder: Path, namespace: str | None = None) -> Path:
    """FOLDER/kubeconfig for the scene's server, trusting the scene's own CA (logins are sent
    only over TLS, as client-go sends them)."""
    return server.write_kubeconfig(
        folder / "kubeconfig", namespace=namespace, certificate_authority=folder / "pki" / "ca.crt"
    )


def _login_refused(server: FakeApiServer, folder: Path) -> list[Callable[[], None]]:
    """Every request answered 401, as a cluster answers a revoked token."""
    server.add(*healthy(datetime.now(UTC)))
    server.inject(Fault.UNAUTHORIZED, r".")
    _kubeconfig(server, folder, namespace="train")
    return []


def _login_plugin_fails(server: FakeApiServer, folder: Path) -> list[Callable[[], None]]:
    """The login plugin (named `aws`, as EKS's is) fails the way an expired SSO session does."""
    server.add(*healthy(datetime.now(UTC)))
    plugin = write_plugin(folder / "bin", name="aws")
    plugin.plan(
        {
            "stderr": "Error when retrieving token from sso: Token has expired and refresh "
            "failed\n",
            "exit": 255,
        }
    )
    config = yaml.safe_load(_kubeconfig(server, folder).read_text())
    config["users"] = [
        {
            "name": "eks",
            "user": {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": str(plugin.path),
                    "args": ["eks", "get-token", "--cluster-name", "train"],
                    "interactiveMode": "Never",
                }
            },
        }
    ]
    config["contexts"][0]["context"]["user"] = "eks"
    config["contexts"][0]["context"]["namespace"] = "train"
    (folder / "kubeconfig").write_text(yaml.safe_dump(config))
    return []


def _loaded(objects: Callable[[datetime], list[dict[str, Any]]]) -> Any:
    def scene(server: FakeApiServer, folder: Path) -> list[Callable[[], None]]:
        server.add(*objects(datetime.now(UTC)))
        _kubeconfig(server, folder, namespace="train")
        return []

    return scene


def _slow_machines(server: FakeApiServer, folder: Path) -> list[Callable[[], None]]:
    """A healthy namespace whose list of machines takes three seconds to arrive."""
    server.add(*healthy(datetime.now(UTC)))
    server.inject(Fault.DELAY, r"^/api/v1/nodes$", delay=3.0)
    _kubeconfig(server, folder, namespace="train")
    return []


def _refresh_fails(server: FakeApiServer, folder: Path) -> list[Callable[[], None]]:
    """`train/api` runs `stable` v1; the tag has moved to v2, whose copies crash on start. Its
    one copy holds the machine's GPU, so it is replaced with `strategy: Recreate`: the old copy
    stops before the new one starts, and only the crashing copy is left."""
    binary = registry_binary()
    if binary is None:
        raise SystemExit("the refresh scene needs docker-registry (Debian package)")
    registry: Registry = start_registry(
        binary, folder / "registry", username="robot", password=PASSWORD
    )
    image = f"{registry.host}/team/api:stable"
    newest = {image: registry.push_image("team/api", "stable", content="v1")}
    server.add(*healthy(datetime.now(UTC)))
    login = base64.b64encode(f"robot:{PASSWORD}".encode()).decode()
    # the healthy namespace's own registry login, and the tour registry's
    auths = {host: {"auth": login} for host in ("registry.example.com", registry.host)}
    docker_config = json.dumps({"auths": auths})
    server.add(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": "regcred", "namespace": "train"},
            "data": {".dockerconfigjson": base64.b64encode(docker_config.encode()).decode()},
        }
    )
    simulator = RolloutSimulator(server, lambda ref: newest.get(ref, "sha256:" + "0" * 64))
    api = deployment("api", container("server", image))
    api["spec"]["strategy"] = {"type": "Recreate"}
    server.add(api)
    stored = server.get_object("Deployment", "api", "train")
    assert stored is not None
    simulator.remember(stored)
    server.add(simulator.make_pod(stored, "api-0"))
    newest[image] = registry.push_image("team/api", "stable", content="v2")
    simulator.behaviour["api"] = "crash"
    # a second per look at the rollout, so that a person sees refresh waiting on it
    server.inject(Fault.DELAY, r"^/apis/apps/v1/namespaces/train/deployments/api$", delay=1.0)
    _kubeconfig(server, folder, namespace="train")
    return [registry.stop]


def _moved(objects: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """The scenario's namespaced objects, moved to `namespace` (the machines and storage types
    are the cluster's, added once)."""
    moved = []
    for obj in copy.deepcopy(objects):
        if obj["metadata"].get("namespace") == NAMESPACE:
            obj["metadata"]["namespace"] = namespace
            moved.append(obj)
    return moved


def _image_not_found(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scenario with its jobs-manager's image failing to download: the registry says there
    is no such image. The message is the container runtime's error as the kubelet passes it on
    in ErrImagePull (containerd `core/remotes/docker/resolver.go`, "failed to resolve
    reference"; kubernetes `pkg/kubelet/images/image_manager.go`)."""
    image = "registry.example.com/jobs-manager:1.4"
    pod = find(objects, "Pod", "jobs-manager-abc12")
    pod["status"]["conditions"][1]["status"] = "False"
    pod["status"]["containerStatuses"][0].update(
        {
            "ready": False,
            "state": {
                "waiting": {
                    "reason": "ErrImagePull",
                    "message": f'failed to pull and unpack image "{image}": failed to resolve '
                    f'reference "{image}": {image}: not found',
                }
            },
        }
    )
    return objects


FLEET = ("ready-team", "big-model", "broken-image")
"""The fleet scene's namespaces: one ready, one whose training job can't fit on any machine,
one whose workload can't download its image."""


def _fleet(server: FakeApiServer, folder: Path) -> list[Callable[[], None]]:
    now = datetime.now(UTC)
    server.add(*(obj for obj in healthy(now) if "namespace" not in obj["metadata"]))
    for namespace, objects in zip(
        FLEET, (healthy(now), job_too_large(now), _image_not_found(healthy(now))), strict=True
    ):
        server.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        server.add(*_moved(objects, namespace))
    _kubeconfig(server, folder, namespace=FLEET[0])
    return []


@dataclass(frozen=True)
class Scene:
    """One scene: how it is set up, what it shows, and the doctor command to try first."""

    load: Callable[[FakeApiServer, Path], list[Callable[[], None]]]
    shows: str
    doctor: str = "truegreen doctor"


# The scenes' registry.example.com is no real registry: --no-registry leaves the look-ups out,
# so that a namespace with nothing wrong reads ready rather than "couldn't connect".
SCENES = {
    "fleet": Scene(
        _fleet,
        f"three namespaces: {FLEET[0]} ready, {FLEET[1]} with a job no machine fits, "
        f"{FLEET[2]} with an image that can't be downloaded",
        "truegreen doctor -A --no-registry",
    ),
    "login-refused": Scene(_login_refused, "every request refused: a revoked login"),
    "login-plugin-fails": Scene(
        _login_plugin_fails, "the login plugin (aws) fails as an expired SSO session does"
    ),
    "cordoned": Scene(_loaded(cordoned_machines), "both machines closed to new work"),
    "gpu-held-by-notebook": Scene(
        _loaded(gpu_held_by_notebook), "a notebook in another namespace holds the only GPUs"
    ),
    "refresh-fails": Scene(
        _refresh_fails, "an image tag moved to a version that crashes (needs docker-registry)"
    ),
    "slow-machines": Scene(_slow_machines, "the list of machines takes three seconds"),
}


def _listing() -> str:
    width = max(len(name) for name in SCENES)
    lines = [f"  {name:<{width}}  {scene.shows}" for name, scene in SCENES.items()]
    return "\n".join(["scenes (make tour SCENE=NAME):", *lines])


def _try(scene: Scene, kubeconfig: Path) -> str:
    """What to type in another terminal, with this checkout's truegreen."""
    program = Path(sys.executable).parent / "truegreen"
    prefix = f"{program.parent}/" if program.exists() else ""
    commands = [
        scene.doctor,
        "truegreen snapshot",
        "truegreen refresh",
        f"{scene.doctor.replace(' -A', '')} --watch",
    ]
    return "\n".join(
        [
            f"kubeconfig: {kubeconfig}",
            "try, in another terminal (Ctrl-C here stops the cluster):",
            f"  export KUBECONFIG={kubeconfig}",
            *(f"  {prefix}{command}" for command in commands),
        ]
    )


def main(argv: list[str]) -> int:
    """List the scenes (no argument), or serve one until SIGTERM or SIGINT; 64 on a bad
    scene name."""
    if not argv:
        print(_listing())
        return 0
    if len(argv) > 2 or argv[0] not in SCENES:
        print(f"usage: python -m tests.support.tour_cluster [SCENE [FOLDER]]\n{_listing()}")
        return 64
    scene = SCENES[argv[0]]
    folder = Path(argv[1]) if len(argv) == 2 else Path(tempfile.mkdtemp(prefix="truegreen-tour-"))
    folder.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    pki = make_pki(folder / "pki")
    server = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    try:
        cleanups = scene.load(server, folder)
        try:
            print("ready", flush=True)
            print(_try(scene, folder / "kubeconfig"), flush=True)
            stop.wait()
        finally:
            for cleanup in cleanups:
                cleanup()
    finally:
        server.stop()
        if len(argv) == 1:
            shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
