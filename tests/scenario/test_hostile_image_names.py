"""Hostile names: an image reference the kubelet would refuse is that image's finding, never a
registry look-up nor a login sent anywhere; one bad image or one bad cluster address never
sinks the rest of a many-namespace or many-cluster run.

The attack (issue 44): a `dockerconfigjson` login for `*.corp.example`, and images whose text
puts a `#` after a loopback registry, so a string-built URL dials loopback with the fragment
cut off. distribution/reference's grammar (regexp.go) refuses both names, as the kubelet does
(InvalidImageName, pkg/kubelet/images/image_manager.go); the login matches by keyring.go's
rule over the parsed host and port only. Every server here is on loopback.
"""

import copy
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.scenario.conftest import CREDENTIALS
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.registry import Registry, served_from
from tests.support.scenarios import (
    NAMESPACE,
    container,
    deployment,
    docker_config,
    healthy,
    pod_for,
)

Obj = dict[str, Any]


class _Echo(ThreadingHTTPServer):
    """A plain-HTTP registry stand-in that asks for a Basic login and records every request's
    path and Authorization header: whatever a client would send a registry."""

    def __init__(self, host: str) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.heard: list[tuple[str, str | None]] = []
        super().__init__((host, 0), self._handler())
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.heard.append((self.path, self.headers.get("Authorization")))
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="registry"')
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:
                self.do_GET()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def echoes() -> Iterator[tuple[_Echo, _Echo]]:
    v4, v6 = _Echo("127.0.0.1"), _Echo("::1")
    yield v4, v6
    for echo in (v4, v6):
        echo.shutdown()
        echo.server_close()


def _in(objects: list[Obj], namespace: str) -> list[Obj]:
    moved = []
    for obj in copy.deepcopy(objects):
        if obj["metadata"].get("namespace") == NAMESPACE:
            obj["metadata"]["namespace"] = namespace
            moved.append(obj)
    return moved


def _doctor(kubeconfig: Path, *args: str) -> CliResult:
    """doctor with the registries asked (no --no-registry), as an operator runs it."""
    return run_cli(
        "doctor", "--kubeconfig", str(kubeconfig), "--request-timeout", "2", *CREDENTIALS, *args
    )


def _findings(report: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["code"] == code]


def _unchecked(result: CliResult, image: str) -> list[tuple[str, str, str]]:
    """Status, headline and remedy of each image-unchecked finding about `image`."""
    return [
        (f["status"], f["headline"], f["remedy"])
        for f in _findings(result.json(), "image-pull.image-unchecked")
        if image in f["headline"]
    ]


def test_a_hash_after_a_loopback_registry_is_an_invalid_name_and_no_login_leaves(
    fake_api: FakeApiServer, kubeconfig: Path, echoes: tuple[_Echo, _Echo]
) -> None:
    v4, v6 = echoes
    images = (
        f"[::1]:{v6.port}#.corp.example/team/app:1",
        f"localhost:{v4.port}#.corp.example/team/app:1",
    )
    # The namespace holds the login and the workload alone: no other image to look up.
    fake_api.add(docker_config("*.corp.example"))
    fake_api.add(deployment("hostile", [container(f"c{i}", x) for i, x in enumerate(images)]))
    result = _doctor(kubeconfig, "-o", "json")
    assert (v4.heard, v6.heard) == ([], []), "a registry look-up left for a hostile name"
    assert result.exit_code == 2, result.stderr
    invalid = _findings(result.json(), "image-pull.invalid-name")
    assert [(f["status"], f["details"]) for f in invalid] == [
        (
            "fail",
            [
                f'InvalidImageName: Failed to apply default image tag "{image}": couldn\'t '
                f'parse image reference "{image}": invalid reference format'
            ],
        )
        for image in images
    ]
    assert invalid[0]["headline"] == (
        f"The image name '{images[0]}' of the workload 'hostile' isn't valid, so its "
        "programs can't start."
    )


def test_the_kubelet_s_own_message_for_an_invalid_name_is_quoted_where_a_pod_carries_it(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """A digest one hex digit too long, and a name far past reference.go's 255-character
    repository limit. The kubelet's pods carry its words (kubelet_pods.go: the waiting
    reason and message EnsureImageExists returned); doctor quotes those, not its own."""
    now = datetime.now(UTC)
    images = {
        "c20": "registry.example.com/app@sha256:" + "e" * 65,
        "c21": "registry.example.com/" + "a" * 5000 + ":1",
    }
    reasons = {
        "c20": "invalid checksum digest length",  # go-digest ErrDigestInvalidLength
        "c21": "repository name must not be more than 255 characters",  # ErrNameTooLong
    }
    said = {
        name: f'Failed to apply default image tag "{image}": couldn\'t parse image reference '
        f'"{image}": {reasons[name]}'
        for name, image in images.items()
    }
    workload = deployment("odd", [container(name, image) for name, image in images.items()])
    pod = pod_for(workload, now)
    pod["status"]["phase"] = "Pending"
    pod["status"]["containerStatuses"] = [
        {
            "name": name,
            "image": image,
            "imageID": "",
            "ready": False,
            "restartCount": 0,
            "state": {"waiting": {"reason": "InvalidImageName", "message": said[name]}},
        }
        for name, image in images.items()
    ]
    fake_api.add(workload, pod)
    result = _doctor(kubeconfig, "--no-registry", "-o", "json")
    assert result.exit_code == 2, result.stderr
    invalid = _findings(result.json(), "image-pull.invalid-name")
    assert [f["details"] for f in invalid] == [
        [f"InvalidImageName: {said[name]}"] for name in images
    ]


def test_one_invalid_image_in_one_namespace_leaves_the_others_reported(
    fake_api: FakeApiServer, kubeconfig: Path, tmp_path: Path, open_registry: Registry
) -> None:
    """Every namespace's images are in the real registry on loopback, named by the operator;
    one namespace also runs `evil[.example/x:1`, which the API server accepts."""
    host = open_registry.host
    open_registry.push_image("jobs-manager", "1.4", content="manager")
    open_registry.push_image("library/mysql", "8.0", content="mysql")
    open_registry.push_image("trainer", "2.1", content="trainer")
    now = datetime.now(UTC)
    for name in ("team-a", "team-b", "team-evil"):
        fake_api.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    served = served_from(healthy(now), host)
    fake_api.add(*served)  # train
    fake_api.add(*_in(served, "team-a"), *_in(served, "team-b"))
    evil = deployment("evil", [container("app", "evil[.example/x:1")])
    fake_api.add(*_in([*served, evil], "team-evil"))
    allow = ("--registry-allow", host)
    result = _doctor(kubeconfig, *allow, "-A", "-o", "json")
    assert result.exit_code == 2, result.stderr
    reports = {n["namespace"]: n["report"] for n in result.json()["namespaces"]}
    assert {name: r["verdict"] for name, r in reports.items()} == {
        "team-evil": "not-ready",
        "team-a": "ready",
        "team-b": "ready",
        "train": "ready",
    }
    assert reports["team-evil"]["headline"]["code"] == "image-pull.invalid-name"
    saved = run_cli(
        "snapshot",
        "--kubeconfig",
        str(kubeconfig),
        "-n",
        "team-evil",
        *allow,
        *CREDENTIALS,
        "--output-directory",
        str(tmp_path / "snap"),
    )
    assert saved.exit_code == 0, saved.stderr
    offline = run_cli("doctor", "--snapshot", str(tmp_path / "snap"), *CREDENTIALS, "-o", "json")
    assert offline.json()["headline"]["code"] == "image-pull.invalid-name"


def test_a_context_whose_server_is_not_an_address_is_that_context_s_failure_line(
    fake_api: FakeApiServer, tmp_path: Path
) -> None:
    fake_api.add(*healthy(datetime.now(UTC)))
    config = yaml.safe_load(
        fake_api.write_kubeconfig(tmp_path / "k", namespace="train").read_text()
    )
    config["clusters"].append({"name": "bad", "cluster": {"server": "https://[::1"}})
    config["contexts"] = [
        {"name": "good", "context": {"cluster": "fake", "user": "fake", "namespace": "train"}},
        {"name": "bad", "context": {"cluster": "bad", "user": "fake", "namespace": "train"}},
    ]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    result = _doctor(kubeconfig, "--no-registry", "--contexts", "good,bad", "-o", "json")
    assert result.exit_code == 3, result.stderr
    by_context = {c["context"]: c for c in result.json()["clusters"]}
    assert by_context["good"]["verdict"] == "ready"
    assert [n["namespace"] for n in by_context["good"]["namespaces"]] == ["train"]
    assert by_context["bad"]["failure"] == {
        "code": "setup-failed",
        "text": f"the server address 'https://[::1' of cluster 'bad' in kubeconfig {kubeconfig} "
        "is not usable: host must be a URL or a host:port pair",  # kubectl's words
        "remedy": "correct the server address in the file's clusters section",
    }
    text = _doctor(kubeconfig, "--no-registry", "--contexts", "good,bad", "--no-color")
    assert (text.exit_code, text.stderr) == (3, "")
    lines = text.stdout.splitlines()
    assert lines[0].startswith("? COULD NOT CHECK  bad   -      the server address "), lines
    assert lines[1] == "✓ READY            good  train  Ready: training can run.", lines
    # The bad context never reached a namespace: it is counted among the clusters alone.
    assert lines[-1] == (
        "2 clusters (1 could not be checked), 1 namespace: 0 not ready, 0 could not be checked, "
        "1 ready."
    )


def test_an_unnamed_registry_on_the_machines_own_address_is_not_asked_and_says_so(
    fake_api: FakeApiServer, kubeconfig: Path, echoes: tuple[_Echo, _Echo]
) -> None:
    v4, _ = echoes
    image = f"localhost:{v4.port}/team/app:1"
    fake_api.add(docker_config("*.corp.example"))
    fake_api.add(deployment("local", [container("app", image)]))
    result = _doctor(kubeconfig, "-o", "json")
    assert v4.heard == []
    unchecked = _unchecked(result, image)
    assert unchecked == [
        (
            "unknown",
            f"Couldn't check whether the image {image} is in its registry: a registry on the "
            "machines' own address can't be asked from here.",
            f"Check the image from a machine of the cluster; if localhost:{v4.port} on this "
            f"computer is the one the machines use, name it with --registry-allow "
            f"localhost:{v4.port}.",
        )
    ]
    named = _doctor(kubeconfig, "--registry-allow", f"localhost:{v4.port}", "-o", "json")
    assert [path for path, _ in v4.heard] == ["/v2/team/app/manifests/1"]
    assert named.exit_code == 2, named.stderr  # asked: it wants a login the pods lack


def test_an_unnamed_registry_on_a_private_network_is_not_asked_and_says_so(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """An image naming 10.255.255.1 would lead the operator's computer into its own network:
    unnamed, doctor refuses the address before dialling (the policy's unit tests watch the
    dialler) and says how to name it."""
    image = "10.255.255.1:5000/team/app:1"
    fake_api.add(docker_config("*.corp.example"))
    fake_api.add(deployment("inside", [container("app", image)]))
    result = _doctor(kubeconfig, "-o", "json")
    unchecked = _unchecked(result, image)
    assert unchecked == [
        (
            "unknown",
            f"Couldn't check whether the image {image} is in its registry: 10.255.255.1:5000 is "
            "on a private network, which doctor asks only when told to.",
            "If this computer reaches 10.255.255.1:5000 as the machines do, name it with "
            "--registry-allow 10.255.255.1:5000; else check the image from a machine of the "
            "cluster.",
        )
    ]
