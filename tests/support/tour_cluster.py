"""A fake cluster for the terminal tour (`examples/terminal-tour.sh`), one scene at a time.

    python -m tests.support.tour_cluster SCENE FOLDER

Starts the fake API server over TLS with its own CA (and, for `refresh-fails`, a real
docker-registry) on loopback, loads the scene, writes FOLDER/kubeconfig, prints `ready` and
serves until SIGTERM or SIGINT.
Scenes are the ones the issue asks the tour to show.
"""

import base64
import json
import signal
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.support.auth_echo import make_pki, write_plugin
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.refresh_kit import container, deployment
from tests.support.registry import Registry, registry_binary, start_registry
from tests.support.rollout import RolloutSimulator
from tests.support.scenarios import cordoned_machines, gpu_held_by_notebook, healthy

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


SCENES = {
    "login-refused": _login_refused,
    "login-plugin-fails": _login_plugin_fails,
    "cordoned": _loaded(cordoned_machines),
    "gpu-held-by-notebook": _loaded(gpu_held_by_notebook),
    "refresh-fails": _refresh_fails,
    "slow-machines": _slow_machines,
}


def main(argv: list[str]) -> int:
    """Serve one scene until SIGTERM or SIGINT; 64 on a bad scene name."""
    if len(argv) != 2 or argv[0] not in SCENES:
        print(f"usage: python -m tests.support.tour_cluster {{{','.join(SCENES)}}} FOLDER")
        return 64
    folder = Path(argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    pki = make_pki(folder / "pki")
    server = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    try:
        cleanups = SCENES[argv[0]](server, folder)
        try:
            print("ready", flush=True)
            stop.wait()
        finally:
            for cleanup in cleanups:
                cleanup()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
