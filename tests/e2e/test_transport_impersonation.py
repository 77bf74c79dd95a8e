"""Every request to the API server acts as the connection says, the way client-go's
impersonating round tripper wraps every request (transport/round_trippers.go): a retry after
throttling, a resend with a refreshed credential and a watch carry the same headers, and so do
refresh's writes; a registry is never told whom truegreen acts as.

What the headers must say is pinned against kubectl in tests/e2e/test_kubeconfig_kubectl.py;
here the fake API server records every header line each request carried (`heard`).
"""

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REGISTRY_PASSWORD
from tests.support import hostile
from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault, HeardRequest
from tests.support.hostile import HostileServer
from tests.support.refresh_kit import container, deployment
from tests.support.registry import Registry
from tests.support.rollout import RolloutSimulator
from truegreen.cluster import Kind, Listed
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings
from truegreen.cluster.watch import ListedAt, WatchStream
from truegreen.images import parse_image
from truegreen.refresh.registry import PullCredentials, RegistryClient, Resolved

ACTING = [
    ("impersonate-user", "jane"),
    ("impersonate-uid", "42"),
    ("impersonate-group", "ops"),
    ("impersonate-group", "auditors"),
    ("impersonate-extra-scopes", "view"),
]


def _acting(heard: HeardRequest) -> list[tuple[str, str]]:
    return [(name, value) for name, value in heard.headers if name.startswith("impersonate-")]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> hostile.ServerCertificate:
    folder = tmp_path_factory.mktemp("pki")
    return hostile.issue(folder, hostile.make_authority(folder), "api", "IP:127.0.0.1")


def test_retries_a_refreshed_login_and_watches_all_act_as_the_kubeconfig_says(
    tmp_path: Path, certificate: hostile.ServerCertificate
) -> None:
    token = tmp_path / "token"
    token.write_text("old\n")
    user: dict[str, Any] = {
        "tokenFile": str(token),
        "as": "jane",
        "as-uid": "42",
        "as-groups": ["ops", "auditors"],
        "as-user-extra": {"scopes": ["view"]},
    }
    with FakeApiServer() as api:
        api.start((certificate.cert, certificate.key))
        api.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "t"}})
        config = {
            "clusters": [
                {
                    "name": "c",
                    "cluster": {"server": api.url, "certificate-authority": str(certificate.ca)},
                }
            ],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "t"}}],
            "current-context": "x",
        }
        (tmp_path / "kc").write_text(yaml.safe_dump(config))
        api.inject(Fault.TOO_MANY_REQUESTS, r"/pods$", count=1)  # sent again after Retry-After
        api.inject(Fault.UNAUTHORIZED, r"/deployments$", count=1)  # sent again, new token
        settings = ConnectionSettings(kubeconfig=tmp_path / "kc", request_timeout=5.0)
        with LiveCluster.connect(settings) as cluster:
            pods = cluster.list_at(Kind.POD, namespace="t")
            token.write_text("new\n")
            deployments = cluster.list(Kind.DEPLOYMENT, namespace="t")
            assert isinstance(pods, ListedAt)
            assert isinstance(deployments, Listed)
            stream = cluster.watch(
                Kind.POD, namespace="t", resource_version=pods.resource_version, timeout_seconds=1
            )
            assert isinstance(stream, WatchStream)
            with stream:
                list(stream)
        heard = list(api.heard)
    paths = [(r.path, r.all("authorization")) for r in heard]
    assert paths == [
        ("/api/v1/namespaces/t/pods", ["Bearer old"]),
        ("/api/v1/namespaces/t/pods", ["Bearer old"]),
        ("/apis/apps/v1/namespaces/t/deployments", ["Bearer old"]),
        ("/apis/apps/v1/namespaces/t/deployments", ["Bearer new"]),
        ("/api/v1/namespaces/t/pods", ["Bearer new"]),
    ], "precondition: a retry, a resend with a fresh login, and a watch"
    assert [_acting(r) for r in heard] == [ACTING] * 5


def _regcred(host: str) -> dict[str, Any]:
    auth = base64.b64encode(f"robot:{REGISTRY_PASSWORD}".encode()).decode()
    config = json.dumps({"auths": {host: {"auth": auth}}}).encode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": "regcred", "namespace": "train"},
        "data": {".dockerconfigjson": base64.b64encode(config).decode()},
    }


def test_refresh_s_writes_act_as_asked_and_the_registry_is_never_told(
    fake_api: FakeApiServer, kubeconfig: Path, registry: Registry
) -> None:
    sent_to_registry: list[bytes] = []
    port = int(registry.host.rsplit(":", 1)[1])
    with HostileServer(hostile.relay_to(port, sent_to_registry)) as relay:
        host = f"127.0.0.1:{relay.port}"  # the registry, reached through a recording relay
        secret = _regcred(host)
        logins = PullCredentials.from_docker_configs(
            [(".dockerconfigjson", secret["data"][".dockerconfigjson"])]
        )
        client = RegistryClient()

        def digest_for(image: str) -> str:
            reference = parse_image(image)
            found = client.lookup_each(reference, logins.applying_to(reference))
            assert isinstance(found, Resolved), found
            return found.digest

        simulator = RolloutSimulator(fake_api, digest_for)
        fake_api.add(secret)
        registry.push_image("r/acting", "stable", content="v1")
        workload = deployment("acting", container("runner", f"{host}/r/acting:stable"))
        fake_api.add(workload)
        stored = fake_api.get_object("Deployment", "acting", "train")
        assert stored is not None
        simulator.remember(stored)
        fake_api.add(simulator.make_pod(stored, "acting-0"))
        tick = ("refresh", "--kubeconfig", str(kubeconfig), "-o", "json", "--rollout-timeout", "5")
        assert run_cli(*tick).exit_code == 0  # records v1
        registry.push_image("r/acting", "stable", content="v2")
        since = len(fake_api.heard)
        acting = ("--as", "jane", "--as-uid", "42", "--as-group", "ops")
        result = run_cli(*tick, *acting, "--as-group", "auditors")
        client.close()
    assert result.json()["workloads"][0]["outcome"] == "restarted", result.stdout
    heard = fake_api.heard[since:]
    writes = [r for r in heard if r.method in ("PATCH", "POST")]
    assert len(writes) >= 3, "precondition: the attempt, the restart and the record"
    assert {tuple(_acting(r)) for r in heard} == {tuple(ACTING[:4])}
    assert sent_to_registry, "precondition: the tick looked the tag up through the relay"
    lines = b"".join(sent_to_registry).split(b"\r\n")
    assert [line for line in lines if line.lower().startswith(b"impersonate")] == []
