"""Shared fixtures: a fake Kubernetes API server over real HTTP, and a kubeconfig for it."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer
from tests.support.registry import Registry, TokenFront, running_registry

REGISTRY_PASSWORD = "reg-s3cret-PASSWORD-77a1"


@pytest.fixture(autouse=True)
def _kubectl_cache_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test's kubectl keeps its discovery cache apart (KUBECACHEDIR): kubectl keys that
    cache by host and port, so a fake API server on a port an earlier test's server used would
    be answered from the other server's kinds."""
    monkeypatch.setenv("KUBECACHEDIR", str(tmp_path_factory.mktemp("kubectl-cache")))


@pytest.fixture(autouse=True)
def _truegreen_memory_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test's doctor keeps what servers served apart (XDG_CACHE_HOME,
    cluster/discovery_memory.py): a fake API server on a port an earlier test's server used
    would otherwise be guessed from the other server's groups, and no test writes to the home
    folder of whoever runs the suite."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


PROXY_VARIABLES = tuple(
    name
    for base in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY")
    for name in (base, base.lower())
)


@pytest.fixture(autouse=True)
def _no_proxy_of_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test goes through a proxy its runner's environment names: truegreen honours
    HTTPS_PROXY and its kin for clusters and registries, and a test's made-up registry names
    would reach the runner's proxy. Tests of the proxies set their own."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    """A started, empty fake API server; stopped after the test."""
    with FakeApiServer() as server:
        yield server


@pytest.fixture
def kubeconfig(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    """A kubeconfig whose current context points at `fake_api`, namespace `train`."""
    return fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A real docker-registry with basic auth (user `robot`); shared by the session."""
    with running_registry(
        tmp_path_factory.mktemp("registry"), username="robot", password=REGISTRY_PASSWORD
    ) as running:
        yield running


@pytest.fixture(scope="session")
def open_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A real docker-registry without auth, for anonymous pulls and behind the token front."""
    with running_registry(tmp_path_factory.mktemp("open-registry")) as running:
        yield running


@pytest.fixture
def token_registry(open_registry: Registry) -> Iterator[TokenFront]:
    """The open registry behind a bearer-token challenge (user `robot`)."""
    front = TokenFront(open_registry, "robot", REGISTRY_PASSWORD)
    yield front
    front.stop()
